/* util.c: error reporting with a source caret, "did you mean", allocation. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

static void
caret(const Src *s, Pos p)
{
	if (!s || !s->text || p.line <= 0)
		return;
	const char *l = s->text, *end = s->text + s->len;
	for (int i = 1; i < p.line && l < end; i++) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		if (!nl)
			return;
		l = nl + 1;
	}
	const char *e = memchr(l, '\n', (size_t)(end - l));
	if (!e)
		e = end;
	if (e > l && e[-1] == '\r')
		e--;
	fprintf(stderr, "  %.*s\n  ", (int)(e - l), l);
	for (int i = 1; i < p.col && l + i - 1 < e; i++)
		fputc(l[i - 1] == '\t' ? '\t' : ' ', stderr);
	fputs("^\n", stderr);
}

jmp_buf *imp_bail;

/* Ends the run after an error has been reported: exit 1, or a longjmp to
 * imp_bail for an in-process caller. */
static _Noreturn void
bail(void)
{
	if (imp_bail)
		longjmp(*imp_bail, 1);
	exit(1);
}

/* Reports "FILE:line:col: import: msg", shows the line with a caret under
 * the column, and exits 1.  No output file exists yet when it is called. */
_Noreturn void
errat(const Src *s, Pos p, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s:%d:%d: import: ", s->path, p.line, p.col);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	caret(s, p);
	bail();
}

/* Reports "FILE: import: msg" (for binary inputs) and exits 1. */
_Noreturn void
errfile(const char *file, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: import: ", file);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	bail();
}

static int
dist(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return 1000;
	int d[65];
	for (size_t j = 0; j <= lb; j++)
		d[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = d[0];
		d[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = d[j];
			int v = diag + (a[i - 1] != b[j - 1]);
			if (d[j] + 1 < v)
				v = d[j] + 1;
			if (d[j - 1] + 1 < v)
				v = d[j - 1] + 1;
			d[j] = v;
			diag = up;
		}
	}
	return d[lb];
}

/* The candidate closest to word by edit distance, or NULL when none is
 * close (at most 2 edits, and fewer than half the word's length). */
const char *
suggest(const char *word, const char *const *cand, int n)
{
	const char *best = NULL;
	int bd = 3, lim = (int)strlen(word) / 2 + 1;
	for (int i = 0; i < n; i++) {
		if (!cand[i])
			continue;
		int d = dist(word, cand[i]);
		if (d < bd && d <= lim) {
			bd = d;
			best = cand[i];
		}
	}
	return best;
}

/* realloc of n elements of size bytes; aborts on overflow or exhaustion. */
void *
xrealloc(void *p, size_t n, size_t size)
{
	if (size && n > (size_t)-1 / size)
		dp_die("allocation size overflows (%zu x %zu)", n, size);
	p = realloc(p, n * size > 0 ? n * size : 1);
	if (!p) {
		fprintf(stderr, "import: out of memory (%zu bytes)\n", n * size);
		exit(1);
	}
	return p;
}

/* Returns arr, an array in arena a of *cap elements of size bytes, grown
 * (doubling) to hold element n. */
void *
agrow(Arena *a, void *arr, int *cap, int n, size_t size)
{
	if (n < *cap)
		return arr;
	if (*cap > (1 << 28))
		dp_die("array of %d elements overflows", *cap);
	int nc = *cap ? 2 * *cap : 16;
	while (nc <= n)
		nc *= 2;
	void *p = dp_alloc(a, (size_t)nc, size);
	if (*cap)
		memcpy(p, arr, (size_t)*cap * size);
	*cap = nc;
	return p;
}

/* strdup that exits on exhaustion. */
char *
xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xrealloc(NULL, n, 1), s, n);
}

/* printf into fresh malloc'd memory. */
char *
strfmt(const char *fmt, ...)
{
	va_list ap;
	char c;
	va_start(ap, fmt);
	int n = vsnprintf(&c, 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		dp_die("bad format '%s'", fmt);
	char *s = xrealloc(NULL, (size_t)n + 1, 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* "f32[1,512]" for messages, in a rotating static buffer (4 live at once). */
char *
typestr(const Type *t)
{
	static char buf[4][160];
	static int k;
	k = (k + 1) % 4;
	return dp_type_str(t, 0, buf[k], sizeof buf[k]);
}
