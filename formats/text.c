/* text.c: the text IR: printing DPIR as text and parsing it back (spec:
 * formats/text.md).  parse(print(fn)) == fn for canonical IR. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dpir.h"
#include "dpint.h"

/* ---- printing ---- */

/* Shortest text that reads back as the same double, always float-looking. */
static void
fmtf(char *buf, size_t n, double v)
{
	if (isnan(v)) {
		snprintf(buf, n, "nan");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, n, v < 0 ? "-inf" : "inf");
		return;
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, n, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (!strpbrk(buf, ".e"))
		strncat(buf, ".0", n - strlen(buf) - 1);
}

static void
pstring(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void
pattr(FILE *f, const Attr *a)
{
	char b[40];
	fprintf(f, "%s=", a->key);
	switch (a->kind) {
	case A_INT: fprintf(f, "%lld", (long long)a->i); break;
	case A_FLOAT: fmtf(b, sizeof b, a->f); fputs(b, f); break;
	case A_STR: pstring(f, a->s); break;
	case A_INTS:
		fputc('[', f);
		for (int i = 0; i < a->n; i++)
			fprintf(f, "%s%lld", i ? ", " : "", (long long)a->ints[i]);
		fputc(']', f);
		break;
	case A_FLOATS:
		fputc('[', f);
		for (int i = 0; i < a->n; i++) {
			fmtf(b, sizeof b, a->floats[i]);
			fprintf(f, "%s%s", i ? ", " : "", b);
		}
		fputc(']', f);
		break;
	}
}

int
dp_print(FILE *f, const Fn *fn)
{
	char tb[200];
	fprintf(f, "dpir %d.%d %s %s\n", DP_MAJOR, DP_MINOR, fn->name, fn->stage);
	for (int i = 0; i < fn->ndep; i++) {
		fputs("dep ", f);
		pstring(f, fn->dep[i].path);
		fputc(' ', f);
		pstring(f, fn->dep[i].hash);
		fputc('\n', f);
	}
	if (fn->weights) {
		fputs("weights ", f);
		pstring(f, fn->weights);
		fputc(' ', f);
		pstring(f, fn->whash ? fn->whash : "");
		fprintf(f, " %lld\n", (long long)fn->wsize);
	}
	for (int i = 0; i < fn->npart; i++)
		fprintf(f, "part %d @%s\n", i, dp_dev_name[fn->part[i].dev]);
	for (int i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		for (int k = 0; k < op->nout; k++)
			fprintf(f, "%s%%%d", k ? ", " : "", op->out[k]);
		fprintf(f, " = %s", dp_op_name[op->kind]);
		for (int k = 0; k < op->nin; k++)
			fprintf(f, "%s%%%d", k ? ", " : " ", op->in[k]);
		if (op->nattr) {
			fputs(" {", f);
			for (int k = 0; k < op->nattr; k++) {
				if (k)
					fputs(", ", f);
				pattr(f, &op->attr[k]);
			}
			fputc('}', f);
		}
		fputs(" :", f);
		for (int k = 0; k < op->nout; k++)
			fprintf(f, "%s %s", k ? "," : "", dp_type_str(&fn->val[op->out[k]].t, 1, tb, sizeof tb));
		if (op->part >= 0)
			fprintf(f, " part=%d", op->part);
		if (op->rule) {
			fputs(" rule=", f);
			pstring(f, op->rule);
		}
		fputc('\n', f);
	}
	fputs("return", f);
	for (int k = 0; k < fn->nout; k++)
		fprintf(f, "%s %s=%%%d", k ? "," : "", fn->out[k].name, fn->out[k].val);
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

/* ---- parsing ---- */

enum { Tend, Teol, Tident, Tint, Tfloat, Tstr, Tval, Tpunct };

typedef struct Lex {
	const char *p, *end, *bol;
	int line;
	/* the current token */
	int t;
	const char *s;     /* start */
	size_t n;          /* length */
	int tline, tcol;
	int64_t i;
	double f;
	char *str;         /* decoded string (arena) */
	Arena *a;
	Err *err;
} Lex;

static int
lerr(Lex *L, const char *msg, const char *arg)
{
	if (arg)
		dp_seterr_at(L->err, L->tline, L->tcol, msg, arg);
	else
		dp_seterr_at(L->err, L->tline, L->tcol, "%s", msg);
	return -1;
}

static int
identch(int c)
{
	return isalnum(c) || c == '_' || c == '.';
}

/* Reads the next token into L.  -1 on a lexical error. */
static int
next(Lex *L)
{
	while (L->p < L->end && (*L->p == ' ' || *L->p == '\t' || *L->p == '\r'))
		L->p++;
	if (L->p < L->end && *L->p == '#')
		while (L->p < L->end && *L->p != '\n')
			L->p++;
	L->s = L->p;
	L->tline = L->line;
	L->tcol = (int)(L->p - L->bol) + 1;
	if (L->p >= L->end) {
		L->t = Tend;
		return 0;
	}
	char c = *L->p;
	if (c == '\n') {
		L->p++;
		L->line++;
		L->bol = L->p;
		L->t = Teol;
		return 0;
	}
	if (c == '%') {
		L->p++;
		if (L->p >= L->end || !isdigit((unsigned char)*L->p))
			return lerr(L, "expected a value number after '%'", NULL);
		/* digits up to L->end: the text need not end in a NUL */
		for (L->i = 0; L->p < L->end && isdigit((unsigned char)*L->p); L->p++) {
			L->i = L->i * 10 + (*L->p - '0');
			if (L->i > (1 << 26))
				return lerr(L, "value number too large", NULL);
		}
		L->t = Tval;
		return 0;
	}
	if (c == '"') {
		L->p++;
		/* a string ends on its line: room for the rest of the line */
		const char *eol = memchr(L->p, '\n', (size_t)(L->end - L->p));
		char *out = dp_alloc(L->a, (size_t)((eol ? eol : L->end) - L->p) + 1, 1);
		size_t k = 0;
		for (;;) {
			if (L->p >= L->end || *L->p == '\n')
				return lerr(L, "unterminated string", NULL);
			char d = *L->p++;
			if (d == '"')
				break;
			if (d == '\\') {
				if (L->p >= L->end)
					return lerr(L, "unterminated string", NULL);
				d = *L->p++;
				if (d == 'n')
					d = '\n';
				else if (d == 'x') {
					if (L->end - L->p < 2 || !isxdigit((unsigned char)L->p[0]) ||
					    !isxdigit((unsigned char)L->p[1]))
						return lerr(L, "bad \\x escape in string", NULL);
					char hx[3] = { L->p[0], L->p[1], 0 };
					d = (char)strtol(hx, NULL, 16);
					L->p += 2;
					if (!d)
						return lerr(L, "NUL byte in string", NULL);
				} else if (d != '"' && d != '\\')
					return lerr(L, "unknown escape in string", NULL);
			}
			out[k++] = d;
		}
		out[k] = 0;
		L->str = out;
		L->t = Tstr;
		return 0;
	}
	if (isdigit((unsigned char)c) || ((c == '-' || c == '+') && L->p + 1 < L->end &&
	                                  (isdigit((unsigned char)L->p[1]) || L->p[1] == 'i'))) {
		const char *q = L->p;
		if (*q == '-' || *q == '+')
			q++;
		if (L->end - q >= 3 && memcmp(q, "inf", 3) == 0 && (q + 3 >= L->end || !identch(q[3]))) {
			L->f = *L->p == '-' ? -INFINITY : INFINITY;
			L->p = q + 3;
			L->t = Tfloat;
			return 0;
		}
		while (q < L->end && (isalnum((unsigned char)*q) || *q == '.' ||
		                      ((*q == '-' || *q == '+') && (q[-1] == 'e' || q[-1] == 'E'))))
			q++;
		char num[64];
		if ((size_t)(q - L->p) >= sizeof num)
			return lerr(L, "number too long", NULL);
		memcpy(num, L->p, q - L->p);
		num[q - L->p] = 0;
		char *e;
		errno = 0;
		if (strpbrk(num, ".eE")) {
			L->f = strtod(num, &e);
			L->t = Tfloat;
		} else {
			L->i = strtoll(num, &e, 10);
			L->t = Tint;
		}
		/* strtod sets ERANGE for subnormals too, which print and read
		 * back exactly: only an overflow is an error */
		if (*e || (errno && (L->t == Tint || isinf(L->f))))
			return lerr(L, "bad number '%s'", num);
		L->p = q;
		return 0;
	}
	if (isalpha((unsigned char)c) || c == '_') {
		while (L->p < L->end && identch((unsigned char)*L->p))
			L->p++;
		L->n = (size_t)(L->p - L->s);
		L->t = Tident;   /* nan and inf too: they are names as well (numword) */
		return 0;
	}
	if (strchr("=,:{}[]@?<", c)) {
		L->p++;
		L->t = Tpunct;
		return 0;
	}
	char cs[8];
	if (isprint((unsigned char)c))
		snprintf(cs, sizeof cs, "'%c'", c);
	else
		snprintf(cs, sizeof cs, "0x%02x", (unsigned char)c);
	return lerr(L, "unexpected character %s", cs);
}

static int
ispunct_(Lex *L, char c)
{
	return L->t == Tpunct && *L->s == c;
}

static int
isword(Lex *L, const char *w)
{
	return L->t == Tident && L->n == strlen(w) && memcmp(L->s, w, L->n) == 0;
}

static int
expect(Lex *L, char c)
{
	if (!ispunct_(L, c)) {
		char cs[2] = { c, 0 };
		return lerr(L, "expected '%s'", cs);
	}
	return next(L);
}

static char *
ident(Lex *L)
{
	return dp_strndup(L->a, L->s, L->n);
}

/* type: DTYPE '[' dims ']' '@' DEV */
static int
ptype(Lex *L, Type *t)
{
	memset(t, 0, sizeof *t);
	if (L->t != Tident)
		return lerr(L, "expected a type such as f32[1,10]", NULL);
	char *name = ident(L);
	int dt = dp_dtype_lookup(name);
	if (dt < 0)
		return lerr(L, "unknown dtype '%s'", name);
	t->dtype = (uint8_t)dt;
	if (next(L) || expect(L, '['))
		return -1;
	while (!ispunct_(L, ']')) {
		if (t->rank && expect(L, ','))
			return -1;
		if (t->rank == 0 && ispunct_(L, '<')) {   /* "<=B": a bounded leading size */
			if (next(L) || expect(L, '='))
				return -1;
			if (L->t != Tint || L->i < 1)
				return lerr(L, "expected a bound (a positive integer) after '<='", NULL);
			t->bnd = 1;
		}
		if ((L->t != Tint || L->i < 0) && !ispunct_(L, '?'))
			return lerr(L, "expected a size (a non-negative integer or ?)", NULL);
		if (t->rank == DP_MAXRANK)
			return lerr(L, "rank exceeds 8", NULL);
		t->dim[t->rank++] = L->t == Tint ? L->i : DP_DYN;
		if (next(L))
			return -1;
	}
	if (next(L) || expect(L, '@'))
		return -1;
	if (L->t != Tident)
		return lerr(L, "expected a device after '@'", NULL);
	char *dev = ident(L);
	int d = dp_dev_lookup(dev);
	if (d < 0)
		return lerr(L, "unknown device '%s'", dev);
	t->dev = (uint8_t)d;
	return next(L);
}

/* Where a number is expected, the words nan and inf are floats; elsewhere
 * they are names like any other ("return nan=%3" is a valid output). */
static void
numword(Lex *L)
{
	if (L->t == Tident && L->n == 3 && memcmp(L->s, "nan", 3) == 0) {
		L->f = NAN;
		L->t = Tfloat;
	} else if (L->t == Tident && L->n == 3 && memcmp(L->s, "inf", 3) == 0) {
		L->f = INFINITY;
		L->t = Tfloat;
	}
}

/* attribute value into op opi of fn */
static int
pvalue(Lex *L, Fn *fn, int opi, const char *key)
{
	numword(L);
	if (L->t == Tint)
		dp_seti(fn, opi, key, L->i);
	else if (L->t == Tfloat)
		dp_setf(fn, opi, key, L->f);
	else if (L->t == Tstr)
		dp_sets(fn, opi, key, L->str);
	else if (ispunct_(L, '[')) {
		int n = 0, cap = 0, flt = 0;
		double *fv = NULL;   /* in the arena, as the attribute will be */
		int64_t *iv = NULL;
		if (next(L))
			return -1;
		while (!ispunct_(L, ']')) {
			if (n && expect(L, ','))
				return -1;
			numword(L);
			if (L->t != Tint && L->t != Tfloat)
				return lerr(L, "expected a number in the list", NULL);
			if (n == cap) {
				int nc = cap ? 2 * cap : 8;
				double *nf = dp_alloc(L->a, (size_t)nc, sizeof *nf);
				int64_t *ni = dp_alloc(L->a, (size_t)nc, sizeof *ni);
				if (n) {
					memcpy(nf, fv, (size_t)n * sizeof *fv);
					memcpy(ni, iv, (size_t)n * sizeof *iv);
				}
				fv = nf;
				iv = ni;
				cap = nc;
			}
			if (L->t == Tfloat)
				flt = 1;
			fv[n] = L->t == Tfloat ? L->f : (double)L->i;
			iv[n] = L->t == Tint ? L->i : 0;
			n++;
			if (next(L))
				return -1;
		}
		if (flt)
			dp_setfloats(fn, opi, key, fv, n);
		else
			dp_setints(fn, opi, key, iv, n);
		return next(L);
	} else
		return lerr(L, "expected an attribute value", NULL);
	return next(L);
}

/* Text value number -> value id: a hash table, so that memory follows the
 * numbers used, not the largest ("%67108863 = ..." in a 30-byte file). */
typedef struct Name {
	int64_t num;
	int id;            /* -1: an empty slot */
	int line;
} Name;

typedef struct Names {
	Name *tab;
	size_t cap, n;     /* cap: a power of two, or 0 */
} Names;

/* The slot of num: its entry, or the empty slot where it goes. */
static Name *
nslot(const Names *nm, int64_t num)
{
	size_t h = (size_t)((uint64_t)num * 0x9e3779b97f4a7c15ULL) & (nm->cap - 1);
	while (nm->tab[h].id >= 0 && nm->tab[h].num != num)
		h = (h + 1) & (nm->cap - 1);
	return &nm->tab[h];
}

static int
lookupval(Lex *L, Names *nm)
{
	Name *e = nm->cap ? nslot(nm, L->i) : NULL;
	if (!e || e->id < 0) {
		char b[24];
		snprintf(b, sizeof b, "%%%lld", (long long)L->i);
		return lerr(L, "%s is not defined", b), -1;
	}
	return e->id;
}

static int
defval(Lex *L, Names *nm, int64_t num, int id, int line, int col)
{
	if (2 * (nm->n + 1) > nm->cap) {
		Names big = { malloc((nm->cap ? 2 * nm->cap : 64) * sizeof *big.tab), nm->cap ? 2 * nm->cap : 64, nm->n };
		if (!big.tab) {
			dp_seterr_at(L->err, line, col, "out of memory");
			return -1;
		}
		for (size_t i = 0; i < big.cap; i++)
			big.tab[i].id = -1;
		for (size_t i = 0; i < nm->cap; i++)
			if (nm->tab[i].id >= 0)
				*nslot(&big, nm->tab[i].num) = nm->tab[i];
		free(nm->tab);
		*nm = big;
	}
	Name *e = nslot(nm, num);
	if (e->id >= 0) {
		char b[64];
		snprintf(b, sizeof b, "%%%lld is defined twice (first on line %d)", (long long)num, e->line);
		dp_seterr_at(L->err, line, col, "%s", b);
		return -1;
	}
	*e = (Name){ num, id, line };
	nm->n++;
	return 0;
}

/* One op line, starting at its first result. */
static int
pop(Lex *L, Fn *fn, Names *nm)
{
	int64_t res[64];
	int rescol[64];
	int nres = 0, line = L->tline, col = L->tcol;
	for (;;) {
		if (L->t != Tval)
			return lerr(L, "expected a result such as %3", NULL);
		if (nres == 64)
			return lerr(L, "too many results", NULL);
		rescol[nres] = L->tcol;
		res[nres++] = L->i;
		if (next(L))
			return -1;
		if (!ispunct_(L, ','))
			break;
		if (next(L))
			return -1;
	}
	if (expect(L, '='))
		return -1;
	if (L->t != Tident)
		return lerr(L, "expected an op name", NULL);
	char *name = ident(L);
	int kind = dp_op_lookup(name);
	if (kind < 0)
		return lerr(L, "unknown op '%s'", name);
	if (next(L))
		return -1;
	int in[256], nin = 0;
	while (L->t == Tval) {
		if (nin == 256)
			return lerr(L, "too many operands", NULL);
		int v = lookupval(L, nm);
		if (v < 0)
			return -1;
		in[nin++] = v;
		if (next(L))
			return -1;
		if (!ispunct_(L, ','))
			break;
		if (next(L))
			return -1;
	}
	int opi = dp_addop(fn, kind, in, nin);
	fn->op[opi].line = line;
	fn->op[opi].col = col;
	if (ispunct_(L, '{')) {
		if (next(L))
			return -1;
		while (!ispunct_(L, '}')) {
			if (fn->op[opi].nattr && expect(L, ','))
				return -1;
			if (L->t != Tident)
				return lerr(L, "expected an attribute name", NULL);
			char *key = ident(L);
			if (dp_attr(&fn->op[opi], key))
				return lerr(L, "attribute '%s' given twice", key);
			if (next(L) || expect(L, '=') || pvalue(L, fn, opi, key))
				return -1;
		}
		if (next(L))
			return -1;
	}
	if (expect(L, ':'))
		return -1;
	for (int k = 0; k < nres; k++) {
		Type t;
		if (k && expect(L, ','))
			return -1;
		if (ptype(L, &t))
			return -1;
		int v = dp_addout(fn, opi, t);
		if (defval(L, nm, res[k], v, line, rescol[k]))
			return -1;
	}
	Op *op = &fn->op[opi];
	op->dev = fn->val[op->out[0]].t.dev;
	while (L->t == Tident) {
		if (isword(L, "part")) {
			if (next(L) || expect(L, '='))
				return -1;
			if (L->t != Tint || L->i < 0 || L->i > (1 << 20))
				return lerr(L, "expected a partition number", NULL);
			fn->op[opi].part = (int)L->i;
		} else if (isword(L, "rule")) {
			if (next(L) || expect(L, '='))
				return -1;
			if (L->t != Tstr)
				return lerr(L, "expected a string after rule=", NULL);
			fn->op[opi].rule = L->str;
		} else
			return lerr(L, "unexpected '%s' after the type", ident(L));
		if (next(L))
			return -1;
	}
	dp_fix_attrs(fn, opi);
	return 0;
}

static int
endline(Lex *L)
{
	if (L->t != Teol && L->t != Tend)
		return lerr(L, "unexpected text at the end of the line", NULL);
	return next(L);
}

static int
parse(Lex *L, Fn *fn, Names *nm)
{
	while (L->t == Teol)
		if (next(L))
			return -1;
	if (!isword(L, "dpir"))
		return lerr(L, "text IR must start with 'dpir MAJOR.MINOR NAME STAGE'", NULL);
	if (next(L))
		return -1;
	if (L->t != Tfloat && L->t != Tint)
		return lerr(L, "expected a version such as 1.0", NULL);
	long major = 0;   /* the digits before the '.', within the token */
	for (const char *c = L->s; c < L->p && isdigit((unsigned char)*c) && major < 100000000; c++)
		major = major * 10 + (*c - '0');
	if (major != DP_MAJOR) {
		char b[64];
		snprintf(b, sizeof b, "%ld.x", major);
		return lerr(L, "text IR version %s is not readable by this tool", b);
	}
	if (next(L))
		return -1;
	if (L->t != Tident)
		return lerr(L, "expected the function name", NULL);
	fn->name = ident(L);
	if (next(L))
		return -1;
	if (L->t != Tident)
		return lerr(L, "expected the producing stage", NULL);
	fn->stage = ident(L);
	if (next(L) || endline(L))
		return -1;
	int sawreturn = 0;
	while (L->t != Tend) {
		if (L->t == Teol) {
			if (next(L))
				return -1;
			continue;
		}
		if (sawreturn)
			return lerr(L, "nothing may follow 'return'", NULL);
		if (isword(L, "dep")) {
			if (next(L))
				return -1;
			if (L->t != Tstr)
				return lerr(L, "expected the dependency's path as a string", NULL);
			char *p = L->str;
			if (next(L))
				return -1;
			if (L->t != Tstr)
				return lerr(L, "expected the dependency's hash as a string", NULL);
			dp_adddep(fn, p, L->str);
			if (next(L))
				return -1;
		} else if (isword(L, "weights")) {
			if (next(L))
				return -1;
			if (L->t != Tstr)
				return lerr(L, "expected the weight file's name as a string", NULL);
			fn->weights = L->str;
			if (next(L))
				return -1;
			if (L->t != Tstr)
				return lerr(L, "expected the weight file's hash as a string", NULL);
			fn->whash = L->str;
			if (next(L))
				return -1;
			if (L->t != Tint || L->i < 0)
				return lerr(L, "expected the weight file's size", NULL);
			fn->wsize = L->i;
			if (next(L))
				return -1;
		} else if (isword(L, "part")) {
			if (next(L))
				return -1;
			if (L->t != Tint || L->i != fn->npart)
				return lerr(L, "partitions must be numbered 0, 1, ... in order", NULL);
			if (next(L) || expect(L, '@'))
				return -1;
			int d = L->t == Tident ? dp_dev_lookup(ident(L)) : -1;
			if (d < 0)
				return lerr(L, "expected a device", NULL);
			dp_addpart(fn, d);
			if (next(L))
				return -1;
		} else if (isword(L, "return")) {
			sawreturn = 1;
			if (next(L))
				return -1;
			while (L->t == Tident) {
				char *name = ident(L);
				if (next(L) || expect(L, '='))
					return -1;
				if (L->t != Tval)
					return lerr(L, "expected a value such as %3", NULL);
				int v = lookupval(L, nm);
				if (v < 0)
					return -1;
				dp_addport(fn, name, v);
				if (next(L))
					return -1;
				if (!ispunct_(L, ','))
					break;
				if (next(L))
					return -1;
			}
		} else if (L->t == Tval) {
			if (pop(L, fn, nm))
				return -1;
		} else
			return lerr(L, "expected an op line, 'dep', 'weights', 'part' or 'return'", NULL);
		if (endline(L))
			return -1;
	}
	if (!sawreturn)
		return lerr(L, "missing 'return' line", NULL);
	return 0;
}

static int
parse_text(const char *text, size_t len, Fn **out, Err *err, int verify)
{
	Fn *fn = dp_new("", "");
	Names nm = { 0 };
	Lex L = { .p = text, .end = text + len, .bol = text, .line = 1, .a = fn->arena, .err = err };
	int rc = next(&L) || parse(&L, fn, &nm) || (verify && dp_verify(fn, err)) ? -1 : 0;
	free(nm.tab);
	if (rc) {
		dp_free(fn);
		return -1;
	}
	*out = fn;
	return 0;
}

int
dp_parse(const char *text, size_t len, Fn **out, Err *err)
{
	return parse_text(text, len, out, err, 1);
}

int
dp_parse_raw(const char *text, size_t len, Fn **out, Err *err)
{
	return parse_text(text, len, out, err, 0);
}
