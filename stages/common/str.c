/* str.c: a growable text buffer and C-literal helpers for code generators. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi.h"

static void
grow(Str *s, size_t extra)
{
	size_t need;

	if (extra > (size_t)-1 / 2 - s->n)
		dp_die("text buffer overflow");
	need = s->n + extra + 1;
	if (need <= s->cap)
		return;
	s->cap = s->cap ? s->cap : 256;
	while (s->cap < need)
		s->cap *= 2;
	s->p = realloc(s->p, s->cap);
	if (s->p == NULL)
		dp_die("out of memory (%zu bytes of generated text)", s->cap);
}

/* Appends the first n bytes of t. */
void
str_putn(Str *s, const char *t, size_t n)
{
	grow(s, n);
	memcpy(s->p + s->n, t, n);
	s->n += n;
	s->p[s->n] = '\0';
}

/* Appends t. */
void
str_put(Str *s, const char *t)
{
	str_putn(s, t, strlen(t));
}

/* Appends printf-formatted text. */
void
str_printf(Str *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		dp_die("vsnprintf failed on \"%s\"", fmt);
	grow(s, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(s->p + s->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	s->n += (size_t)n;
}

/* Frees the buffer and makes it empty again. */
void
str_free(Str *s)
{
	free(s->p);
	s->p = NULL;
	s->n = s->cap = 0;
}

/* Appends t as a C string literal; bytes outside printable ASCII become
 * octal escapes so that the output is plain ASCII. */
void
str_cstring(Str *s, const char *t)
{
	const unsigned char *u;

	str_put(s, "\"");
	for (u = (const unsigned char *)t; *u; u++) {
		if (*u == '"' || *u == '\\')
			str_printf(s, "\\%c", *u);
		else if (*u < 0x20 || *u >= 0x7f || *u == '?')
			str_printf(s, "\\%03o", *u);   /* '?' too: no trigraphs */
		else
			str_putn(s, (const char *)u, 1);
	}
	str_put(s, "\"");
}

/* Appends t for use inside a C comment: the comment cannot be closed early
 * and non-ASCII bytes are shown as '?'. */
void
str_comment(Str *s, const char *t)
{
	for (; *t; t++) {
		if (t[0] == '*' && t[1] == '/')
			str_put(s, "* ");
		else if ((unsigned char)*t < 0x20 || (unsigned char)*t >= 0x7f)
			str_put(s, "?");
		else
			str_putn(s, t, 1);
	}
}

/* Appends a float literal that converts back to exactly (float)f. */
void
str_float(Str *s, double f)
{
	char buf[64];
	float x = (float)f;

	if (isnan(x)) {
		str_put(s, "NAN");
		return;
	}
	if (isinf(x)) {
		str_put(s, x < 0 ? "(-INFINITY)" : "INFINITY");
		return;
	}
	snprintf(buf, sizeof buf, "%.9g", (double)x);
	if (strtof(buf, NULL) != x)   /* %.9g always round-trips a float */
		dp_die("float literal %s does not round-trip", buf);
	if (!strpbrk(buf, ".en"))
		strcat(buf, ".0");
	str_printf(s, "%sf", buf);
}

/* Appends a brace-enclosed list of integers. */
void
str_ints(Str *s, const int64_t *v, int n)
{
	int i;

	if (n == 0) {
		str_put(s, "{0}");
		return;
	}
	str_put(s, "{");
	for (i = 0; i < n; i++)
		str_printf(s, "%s%lld", i ? ", " : "", (long long)v[i]);
	str_put(s, "}");
}

void
str_i64(Str *s, double v)
{
	if (v < -9.2e18)
		str_put(s, "INT64_MIN");
	else if (v > 9.2e18)
		str_put(s, "INT64_MAX");
	else
		str_printf(s, "%lldLL", (long long)v);
}
