/* regex.c: the regular expressions of tokenizer.json's Split
 * pre-tokenizers as the tokenizers library compiles them (Oniguruma 6.9,
 * its default syntax, UTF-8), matched over code points with Oniguruma's
 * leftmost-first backtracking semantics.
 *
 * A pattern is parsed to a tree, the tree compiled to a program, and the
 * program run by a backtracking machine whose stack is on the heap.  A
 * repeat of one code point (\p{L}+, [^\s]{1,3}) is one instruction with
 * one stack entry however far it runs; other loops push an entry per
 * iteration.  Lookarounds and atomic groups run as nested machines over
 * the same stack: C recursion per nesting level of the pattern, never per
 * code point.
 *
 * Not supported, with an error naming the construct: back-references,
 * subexpression calls, conditionals, absent groups, \K \X \y \Y \C- \M-,
 * scripts and binary properties other than a few, POSIX brackets other
 * than digit, space, word, xdigit, ascii, blank, cntrl, punct, and
 * look-behind of unbounded length.  Known differences, none in a
 * tokenizer's pattern: case folding is simple (one code point to one), so
 * Oniguruma's multi-character folds (ß against "ss") are not applied; a
 * counted repeat {n,m} of a body that can match empty does not stop at an
 * empty turn as Oniguruma's may; and Oniguruma's optimizer bugs (no match
 * for (?<=a)\z on "ba", \R* taking nothing, a bracket inverting an empty
 * set matching nothing) are not copied.  Differential tests against
 * Oniguruma 6.9.8 found nothing else. */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dprtint.h"

#define NOLIM UINT32_MAX	/* no upper bound */
#define NONE SIZE_MAX		/* no end wanted */
#define MAXREP 100000		/* Oniguruma's largest repeat count */
#define MAXDEPTH 200		/* nesting of groups, classes and repeats */
#define MAXPROG (1u << 20)	/* instructions */

enum { Ficase = 1, Fdotall = 2, Fext = 4 };		/* pattern options */
enum { Mgreedy, Mlazy, Mposs };				/* repeat modes */
enum { Lneg = 1, Lbehind = 2 };				/* lookaround kinds */
enum { Abol, Aeol, Abos, Aeos, Aeosnl, Aword, Anword, Asearch };

/* general-category masks */
#define CM(x) (1u << DPRT_UC_##x)
#define CM_L (CM(Lu) | CM(Ll) | CM(Lt) | CM(Lm) | CM(Lo))
#define CM_M (CM(Mn) | CM(Mc) | CM(Me))
#define CM_N (CM(Nd) | CM(Nl) | CM(No))
#define CM_P (CM(Pc) | CM(Pd) | CM(Ps) | CM(Pe) | CM(Pi) | CM(Pf) | CM(Po))
#define CM_S (CM(Sm) | CM(Sc) | CM(Sk) | CM(So))
#define CM_Z (CM(Zs) | CM(Zl) | CM(Zp))
#define CM_C (CM(Cc) | CM(Cf) | CM(Cs) | CM(Co) | CM(Cn))
#define CM_WORD (CM_L | CM_M | CM(Nd) | CM(Nl) | CM(Pc))

/* Oniguruma's Word beyond L, M, Nd, Nl, Pc (Other_Alphabetic symbols),
 * and what its bare \w, \W and \b add (Latin-1 superscripts, fractions) */
static const uint32_t word_so[][2] = {
	{0x24B6, 0x24E9}, {0x1F130, 0x1F149}, {0x1F150, 0x1F169}, {0x1F170, 0x1F189}
};
static const uint32_t word_bare[][2] = {
	{0xB2, 0xB3}, {0xB9, 0xB9}, {0xBC, 0xBE}, {0x24B6, 0x24E9},
	{0x1F130, 0x1F149}, {0x1F150, 0x1F169}, {0x1F170, 0x1F189}
};
static const uint32_t hexr[][2] = { {'0', '9'}, {'A', 'F'}, {'a', 'f'} };

/* ---- the compiled form ---- */

/* A set of code points: the union of categories, White_Space, ranges and
 * child sets, or (inter) the intersection of the children; neg inverts.
 * Code points past 0x10FFFF belong to no category and no range. */
typedef struct Cnode {
	uint8_t inter, neg, space;
	uint32_t mask;
	uint32_t r0, nr;	/* ranges rng[r0..r0+nr), sorted, disjoint */
	uint32_t k0, nk;	/* children u32[k0..k0+nk) */
} Cnode;

/* A class as an instruction tests it: the set root, under (?i) also the
 * code points whose fold is in u32[e0..e0+ne) (sorted), then neg. */
typedef struct Cls {
	uint32_t bits[8];	/* the answer for 0..255 */
	uint32_t root, e0, ne;
	uint8_t neg;
} Cls;

enum {
	Ochar,		/* a: the code point */
	Ocharf,		/* a: a fold; matches what folds to it */
	Oany,		/* anything but \n */
	Oall,		/* anything */
	Ocls,		/* a: class */
	Orpt,		/* fl: mode, a..b times the one-code-point test at pc+1 */
	Osplit,		/* try a, on failure b; c: the split's number */
	Ojmp,		/* a */
	Omark,		/* reg a = pos */
	Onull,		/* to b when pos == reg a (a loop's empty turn) */
	Oassert,	/* a: A* */
	Olook,		/* fl: L*, body at pc+1, then a; look-behind widths b..c */
	Oatom,		/* body at pc+1 (its first match), then a */
	Osucc		/* the end of the program or of a body */
};

typedef struct Ins {
	uint8_t op, fl;
	uint32_t a, b, c;
} Ins;

struct dprt_re {
	Ins *prog;
	Cls *cls;
	Cnode *cn;
	uint32_t (*rng)[2];
	uint32_t *u32;
	uint32_t nprog, ncls, ncn, nrng, nu32, nreg, nsplit;
};

/* ---- parsing ---- */

enum { Xchar, Xany, Xcls, Xcat, Xalt, Xrep, Xlook, Xatom, Xassert };

typedef struct Node {
	uint8_t kind, fl;	/* fl: Ficase (char), Fdotall (any), mode (rep), L* (look) */
	uint32_t c;		/* code point, class, assertion */
	uint32_t min, max;	/* repeat counts */
	uint32_t lo, hi;	/* fewest and most code points matched (hi NOLIM: unbounded) */
	int kid, last, next;	/* first and last child, next sibling: -1 none */
} Node;

typedef struct P {
	dprt_re *re;
	uint32_t *s;		/* the pattern's code points */
	size_t n, i;
	const char *pat;
	char *err;
	size_t errn;
	int bad;		/* an error is reported */
	Node *nd;
	uint32_t nnd;
	uint32_t cap[7];	/* capacities: nd, prog, cls, cn, rng, u32, fold */
	uint32_t (*fold)[2];	/* (fold(c), c) for every c != fold(c), sorted */
	uint32_t nfold;
} P;

/* A set being built: the union's parts before they are stored. */
typedef struct Ub {
	uint32_t mask;
	uint8_t space;
	uint32_t (*r)[2];
	uint32_t nr, cr;
	uint32_t *k;
	uint32_t nk, ck;
} Ub;

static int
fail(P *p, size_t at, const char *fmt, ...)
{
	char msg[160];
	size_t len = strlen(p->pat), show = len;
	va_list ap;

	if (p->bad)
		return -1;
	p->bad = 1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (len > 60) {		/* a long pattern shows its start, whole code points */
		show = 50;
		while (show > 0 && ((unsigned char)p->pat[show] & 0xC0) == 0x80)
			show--;
	}
	return dprt_errf(p->err, p->errn, "regex '%.*s%s': %s at offset %zu", (int)show, p->pat,
	                 show < len ? "..." : "", msg, at);
}

static int
oom(P *p)
{
	if (!p->bad)
		dprt_errf(p->err, p->errn, "regex: out of memory");
	p->bad = 1;
	return -1;
}

/* Room for n + 1 elements of size sz in *a (capacity *cap); 0 or -1. */
static int
grow(void *a, uint32_t *cap, uint32_t n, size_t sz)
{
	void *q;
	uint32_t c;

	if (n < *cap)
		return 0;
	if (n >= MAXPROG * 4u)
		return -1;
	c = *cap ? *cap * 2 : 16;
	if ((q = realloc(*(void **)a, c * sz)) == NULL)
		return -1;
	*(void **)a = q;
	*cap = c;
	return 0;
}

static int
more(P *p)
{
	return p->i < p->n;
}

static uint32_t
peek(P *p, size_t k)
{
	return p->i + k < p->n ? p->s[p->i + k] : 0;
}

static int
newnode(P *p, int kind)
{
	Node *x;

	if (grow(&p->nd, &p->cap[0], p->nnd, sizeof *p->nd) < 0)
		return oom(p);
	x = &p->nd[p->nnd];
	memset(x, 0, sizeof *x);
	x->kind = (uint8_t)kind;
	x->kid = x->last = x->next = -1;
	x->lo = x->hi = 1;
	return (int)p->nnd++;
}

static void
addkid(P *p, int parent, int k)
{
	if (p->nd[parent].last < 0)
		p->nd[parent].kid = k;
	else
		p->nd[p->nd[parent].last].next = k;
	p->nd[parent].last = k;
}

static uint32_t
sat_add(uint32_t a, uint32_t b)
{
	return a > NOLIM - b ? NOLIM : a + b;
}

static uint32_t
sat_mul(uint32_t a, uint32_t b)
{
	if (a == 0 || b == 0)
		return 0;
	return a > NOLIM / b ? NOLIM : a * b;
}

/* The widths of node k from its children's. */
static void
width(P *p, int k)
{
	Node *x = &p->nd[k];
	int j;

	switch (x->kind) {
	case Xcat:
		x->lo = x->hi = 0;
		for (j = x->kid; j >= 0; j = p->nd[j].next) {
			x->lo = sat_add(x->lo, p->nd[j].lo);
			x->hi = sat_add(x->hi, p->nd[j].hi);
		}
		break;
	case Xalt:
		x->lo = NOLIM, x->hi = 0;
		for (j = x->kid; j >= 0; j = p->nd[j].next) {
			x->lo = p->nd[j].lo < x->lo ? p->nd[j].lo : x->lo;
			x->hi = p->nd[j].hi > x->hi ? p->nd[j].hi : x->hi;
		}
		break;
	case Xrep:
		x->lo = sat_mul(p->nd[x->kid].lo, x->min);
		x->hi = x->max == NOLIM && p->nd[x->kid].hi > 0 ? NOLIM : sat_mul(p->nd[x->kid].hi, x->max);
		break;
	case Xatom:
		x->lo = p->nd[x->kid].lo, x->hi = p->nd[x->kid].hi;
		break;
	case Xlook: case Xassert:
		x->lo = x->hi = 0;
		break;
	}
}

/* ---- sets ---- */

static int
rngcmp(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int
ub_range(P *p, Ub *u, uint32_t lo, uint32_t hi)
{
	if (grow(&u->r, &u->cr, u->nr, sizeof *u->r) < 0)
		return oom(p);
	u->r[u->nr][0] = lo;
	u->r[u->nr++][1] = hi;
	return 0;
}

static int
ub_kid(P *p, Ub *u, uint32_t k)
{
	if (grow(&u->k, &u->ck, u->nk, sizeof *u->k) < 0)
		return oom(p);
	u->k[u->nk++] = k;
	return 0;
}

static void
ub_free(Ub *u)
{
	free(u->r);
	free(u->k);
	memset(u, 0, sizeof *u);
}

/* Stores union u (ranges sorted and merged) as a set; its index or -1. */
static int
ub_store(P *p, Ub *u, int inter)
{
	dprt_re *re = p->re;
	Cnode *c;
	uint32_t i, m = 0;

	if (grow(&re->cn, &p->cap[3], re->ncn, sizeof *re->cn) < 0)
		return oom(p);
	if (u->nr > 0)
		qsort(u->r, u->nr, sizeof *u->r, rngcmp);
	for (i = 0; i < u->nr; i++) {
		if (m > 0 && (u->r[i][0] <= u->r[m - 1][1] || u->r[i][0] - 1 == u->r[m - 1][1])) {
			if (u->r[i][1] > u->r[m - 1][1])
				u->r[m - 1][1] = u->r[i][1];
		} else {
			u->r[m][0] = u->r[i][0], u->r[m][1] = u->r[i][1];
			m++;
		}
	}
	c = &re->cn[re->ncn];
	memset(c, 0, sizeof *c);
	c->inter = (uint8_t)inter;
	c->mask = u->mask;
	c->space = u->space;
	c->r0 = re->nrng, c->nr = m;
	c->k0 = re->nu32, c->nk = u->nk;
	for (i = 0; i < m; i++) {
		if (grow(&re->rng, &p->cap[4], re->nrng, sizeof *re->rng) < 0)
			return oom(p);
		re->rng[re->nrng][0] = u->r[i][0];
		re->rng[re->nrng++][1] = u->r[i][1];
	}
	for (i = 0; i < u->nk; i++) {
		if (grow(&re->u32, &p->cap[5], re->nu32, sizeof *re->u32) < 0)
			return oom(p);
		re->u32[re->nu32++] = u->k[i];
	}
	return (int)re->ncn++;
}

/* A set of categories, White_Space and fixed ranges, inverted by neg. */
static int
mkset(P *p, uint32_t mask, int space, const uint32_t (*r)[2], size_t nr, int neg)
{
	Ub u = {0};
	size_t i;
	int k = 0;

	u.mask = mask;
	u.space = (uint8_t)space;
	for (i = 0; i < nr && k == 0; i++)
		k = ub_range(p, &u, r[i][0], r[i][1]);
	if (k == 0 && (k = ub_store(p, &u, 0)) >= 0)
		p->re->cn[k].neg = (uint8_t)neg;
	ub_free(&u);
	return k;
}

static int
inranges(const uint32_t (*r)[2], uint32_t n, uint32_t c)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t m = (lo + hi) / 2;
		if (c < r[m][0])
			hi = m;
		else if (c > r[m][1])
			lo = m + 1;
		else
			return 1;
	}
	return 0;
}

static int
incat(uint32_t mask, uint32_t c)
{
	return c <= 0x10FFFF && (mask >> dprt_ucat(c) & 1);
}

static int
ceval(const dprt_re *re, uint32_t k, uint32_t c)
{
	const Cnode *x = &re->cn[k];
	uint32_t i;
	int r;

	if (x->inter) {
		for (r = 1, i = 0; i < x->nk && r; i++)
			r = ceval(re, re->u32[x->k0 + i], c);
	} else {
		r = (x->mask && incat(x->mask, c)) || (x->space && dprt_uspace(c)) ||
		    (x->nr && inranges(re->rng + x->r0, x->nr, c));
		for (i = 0; i < x->nk && !r; i++)
			r = ceval(re, re->u32[x->k0 + i], c);
	}
	return r ^ x->neg;
}

static int
infolds(const dprt_re *re, const Cls *k, uint32_t c)
{
	const uint32_t *e = re->u32 + k->e0;
	uint32_t lo = 0, hi = k->ne, f = dprt_ufold(c);

	while (lo < hi) {
		uint32_t m = (lo + hi) / 2;
		if (e[m] == f)
			return 1;
		if (e[m] < f)
			lo = m + 1;
		else
			hi = m;
	}
	return 0;
}

static int
clsmatch(const dprt_re *re, const Cls *k, uint32_t c)
{
	if (c < 256)
		return k->bits[c >> 5] >> (c & 31) & 1;
	return (ceval(re, k->root, c) || (k->ne && infolds(re, k, c))) ^ k->neg;
}

/* The table of code points that fold to another, made on first use. */
static int
folds(P *p)
{
	uint32_t c, f;

	if (p->fold)
		return 0;
	for (c = 0; c < 0x20000; c++) {	/* simple folds end at U+1E921 */
		if ((f = dprt_ufold(c)) == c)
			continue;
		if (grow(&p->fold, &p->cap[6], p->nfold, sizeof *p->fold) < 0)
			return oom(p);
		p->fold[p->nfold][0] = f;
		p->fold[p->nfold++][1] = c;
	}
	if (p->fold == NULL && (p->fold = malloc(sizeof *p->fold)) == NULL)
		return oom(p);
	qsort(p->fold, p->nfold, sizeof *p->fold, rngcmp);
	return 0;
}

/* Whether some other code point folds as c does. */
static int
hascase(P *p, uint32_t c)
{
	uint32_t lo = 0, hi = p->nfold, f = dprt_ufold(c);

	if (f != c)
		return 1;
	while (lo < hi) {
		uint32_t m = (lo + hi) / 2;
		if (p->fold[m][0] == f)
			return 1;
		if (p->fold[m][0] < f)
			lo = m + 1;
		else
			hi = m;
	}
	return 0;
}

/* A class over set root, inverted by neg, closed under case folding when
 * icase (as Oniguruma folds a bracket class before inverting it). */
static int
mkcls(P *p, int root, int neg, int icase)
{
	dprt_re *re = p->re;
	Cls *k;
	uint32_t c, i, e0, n;

	if (root < 0)
		return -1;
	if (grow(&re->cls, &p->cap[2], re->ncls, sizeof *re->cls) < 0)
		return oom(p);
	k = &re->cls[re->ncls];
	memset(k, 0, sizeof *k);
	k->root = (uint32_t)root;
	k->neg = (uint8_t)neg;
	if (icase) {
		if (folds(p) < 0)
			return -1;
		e0 = re->nu32;
		for (i = 0; i < p->nfold; i++) {
			if (!ceval(re, (uint32_t)root, p->fold[i][0]) &&
			    !ceval(re, (uint32_t)root, p->fold[i][1]))
				continue;
			if (re->nu32 > e0 && re->u32[re->nu32 - 1] == p->fold[i][0])
				continue;
			if (grow(&re->u32, &p->cap[5], re->nu32, sizeof *re->u32) < 0)
				return oom(p);
			re->u32[re->nu32++] = p->fold[i][0];
		}
		k = &re->cls[re->ncls];
		k->e0 = e0;
		k->ne = re->nu32 - e0;
	}
	for (c = 0; c < 256; c++) {
		n = (ceval(re, k->root, c) || (k->ne && infolds(re, k, c))) ^ k->neg;
		k->bits[c >> 5] |= n << (c & 31);
	}
	return (int)re->ncls++;
}

/* ---- escapes and properties ---- */

static const uint32_t ascii_r[][2] = { {0, 0x7F} }, tab_r[][2] = { {'\t', '\t'} };

/* The properties by name (lowercase, without ' ', '-', '_'): general
 * categories, then those with White_Space or ranges. */
static const struct { const char *name; uint32_t mask; } cats[] = {
	{"l", CM_L}, {"letter", CM_L}, {"lc", CM(Lu) | CM(Ll) | CM(Lt)},
	{"casedletter", CM(Lu) | CM(Ll) | CM(Lt)},
	{"lu", CM(Lu)}, {"uppercaseletter", CM(Lu)}, {"ll", CM(Ll)}, {"lowercaseletter", CM(Ll)},
	{"lt", CM(Lt)}, {"titlecaseletter", CM(Lt)}, {"lm", CM(Lm)}, {"modifierletter", CM(Lm)},
	{"lo", CM(Lo)}, {"otherletter", CM(Lo)},
	{"m", CM_M}, {"mark", CM_M}, {"combiningmark", CM_M}, {"mn", CM(Mn)},
	{"nonspacingmark", CM(Mn)}, {"mc", CM(Mc)}, {"spacingmark", CM(Mc)}, {"me", CM(Me)},
	{"enclosingmark", CM(Me)},
	{"n", CM_N}, {"number", CM_N}, {"nd", CM(Nd)}, {"decimalnumber", CM(Nd)}, {"digit", CM(Nd)},
	{"nl", CM(Nl)}, {"letternumber", CM(Nl)}, {"no", CM(No)}, {"othernumber", CM(No)},
	{"p", CM_P}, {"punctuation", CM_P}, {"punct", CM_P}, {"pc", CM(Pc)},
	{"connectorpunctuation", CM(Pc)}, {"pd", CM(Pd)}, {"dashpunctuation", CM(Pd)},
	{"ps", CM(Ps)}, {"openpunctuation", CM(Ps)}, {"pe", CM(Pe)}, {"closepunctuation", CM(Pe)},
	{"pi", CM(Pi)}, {"initialpunctuation", CM(Pi)}, {"pf", CM(Pf)},
	{"finalpunctuation", CM(Pf)}, {"po", CM(Po)}, {"otherpunctuation", CM(Po)},
	{"s", CM_S}, {"symbol", CM_S}, {"sm", CM(Sm)}, {"mathsymbol", CM(Sm)}, {"sc", CM(Sc)},
	{"currencysymbol", CM(Sc)}, {"sk", CM(Sk)}, {"modifiersymbol", CM(Sk)}, {"so", CM(So)},
	{"othersymbol", CM(So)},
	{"z", CM_Z}, {"separator", CM_Z}, {"zs", CM(Zs)}, {"spaceseparator", CM(Zs)},
	{"zl", CM(Zl)}, {"lineseparator", CM(Zl)}, {"zp", CM(Zp)}, {"paragraphseparator", CM(Zp)},
	{"c", CM_C}, {"other", CM_C}, {"cc", CM(Cc)}, {"control", CM(Cc)}, {"cntrl", CM(Cc)},
	{"cf", CM(Cf)}, {"format", CM(Cf)}, {"cs", CM(Cs)}, {"surrogate", CM(Cs)},
	{"co", CM(Co)}, {"privateuse", CM(Co)}, {"cn", CM(Cn)}, {"unassigned", CM(Cn)},
	{"any", ~0u}, {"assigned", ~0u & ~CM(Cn)},
};
static const struct {
	const char *name;
	uint32_t mask;
	uint8_t space, nr;
	const uint32_t (*r)[2];
} props[] = {
	{"word", CM_WORD, 0, 4, word_so},
	{"space", 0, 1, 0, NULL}, {"whitespace", 0, 1, 0, NULL}, {"wspace", 0, 1, 0, NULL},
	{"xdigit", 0, 0, 3, hexr}, {"asciihexdigit", 0, 0, 3, hexr},
	{"ascii", 0, 0, 1, ascii_r}, {"blank", CM(Zs), 0, 1, tab_r},
};

/* The set of property or POSIX bracket name s[0..n) (Oniguruma ignores
 * case, spaces, '-' and '_'), or -2 when unknown. */
static int
property(P *p, const uint32_t *s, size_t n, int neg)
{
	char name[40];
	size_t i, m = 0;

	for (i = 0; i < n; i++) {
		uint32_t c = s[i];
		if (c == ' ' || c == '-' || c == '_')
			continue;
		if (c >= 0x80 || m + 1 >= sizeof name)
			return -2;
		name[m++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	name[m] = 0;
	for (i = 0; i < sizeof cats / sizeof *cats; i++)
		if (strcmp(name, cats[i].name) == 0)
			return mkset(p, cats[i].mask, 0, NULL, 0, neg);
	for (i = 0; i < sizeof props / sizeof *props; i++)
		if (strcmp(name, props[i].name) == 0)
			return mkset(p, props[i].mask, props[i].space, props[i].r, props[i].nr, neg);
	return -2;
}

/* What an escape stands for. */
enum { Echar, Eset, Eassert, Enode };

typedef struct Esc {
	int kind;
	uint32_t c;	/* Echar: code point; Eassert: A* */
	int k;		/* Eset: set; Enode: tree node */
} Esc;

static int
hexval(uint32_t c)
{
	if (c >= '0' && c <= '9')
		return (int)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (int)(c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (int)(c - 'A' + 10);
	return -1;
}

/* Up to max digits of base (1 to 16) into *v; how many were read. */
static int
digits(P *p, int base, int max, uint32_t *v)
{
	int n = 0, d;

	*v = 0;
	while (n < max && more(p) && (d = hexval(peek(p, 0))) >= 0 && d < base) {
		if (*v > 0x7FFFFFF)
			return -1;
		*v = *v * (uint32_t)base + (uint32_t)d;
		p->i++, n++;
	}
	return n;
}

/* \xHH past 0x7F is a byte of UTF-8 (Oniguruma's reading): the lead v
 * and the \xHH continuation bytes after it into one code point *v. */
static int
utf8esc(P *p, size_t at, uint32_t *v)
{
	uint32_t b;
	int need = *v >= 0xF0 ? 3 : *v >= 0xE0 ? 2 : 1;

	if (*v < 0xC2 || *v > 0xF4)
		return fail(p, at, "invalid code point value");
	*v &= 0x7Fu >> need;
	while (need-- > 0) {
		if (peek(p, 0) != '\\' || peek(p, 1) != 'x')
			return fail(p, at, "too short multibyte code string");
		p->i += 2;
		if (digits(p, 16, 2, &b) <= 0 || (b & 0xC0) != 0x80)
			return fail(p, at, "invalid code point value");
		*v = *v << 6 | (b & 0x3F);
	}
	return 0;
}

static int node_any(P *p, int dotall);
static int node_newline(P *p);

/* The escape after a backslash at p->i - 1 (incls: inside brackets). */
static int
escape(P *p, int incls, Esc *e)
{
	size_t at = p->i - 1, j;
	uint32_t c, v;
	int neg, n;

	if (!more(p))
		return fail(p, at, "end pattern at escape");
	c = p->s[p->i++];
	e->kind = Echar;
	switch (c) {
	case 't': e->c = '\t'; return 0;
	case 'n': e->c = '\n'; return 0;
	case 'r': e->c = '\r'; return 0;
	case 'f': e->c = '\f'; return 0;
	case 'v': e->c = '\v'; return 0;
	case 'a': e->c = 7; return 0;
	case 'e': e->c = 0x1B; return 0;
	case 'x':
		if (peek(p, 0) == '{') {
			p->i++;
			if ((n = digits(p, 16, 8, &v)) <= 0 || peek(p, 0) != '}')
				return fail(p, at, "invalid code point value");
			p->i++;
		} else if ((n = digits(p, 16, 2, &v)) <= 0)
			return fail(p, at, "invalid code point value");
		else if (v >= 0x80 && utf8esc(p, at, &v) < 0)
			return -1;
		break;
	case 'u':
		if ((n = digits(p, 16, 4, &v)) != 4)
			return fail(p, at, "too short digits in \\u");
		break;
	case 'o':
		if (peek(p, 0) != '{')
			goto literal;
		p->i++;
		if ((n = digits(p, 8, 11, &v)) <= 0 || peek(p, 0) != '}')
			return fail(p, at, "invalid code point value");
		p->i++;
		break;
	case '0':
		digits(p, 8, 2, &v);
		break;
	case 'c':
		if (!more(p))
			return fail(p, at, "end pattern at control");
		v = p->s[p->i++];
		v = v == '?' ? 0x7F : v & 0x1F;
		break;
	case 'w': case 'W':
		e->kind = Eset;
		e->k = incls ? mkset(p, CM_WORD, 0, word_so, 4, c == 'W')
		             : mkset(p, CM_WORD, 0, word_bare, 7, c == 'W');
		return e->k < 0 ? -1 : 0;
	case 'd': case 'D':
		e->kind = Eset;
		e->k = mkset(p, CM(Nd), 0, NULL, 0, c == 'D');
		return e->k < 0 ? -1 : 0;
	case 's': case 'S':
		e->kind = Eset;
		e->k = mkset(p, 0, 1, NULL, 0, c == 'S');
		return e->k < 0 ? -1 : 0;
	case 'h': case 'H':
		e->kind = Eset;
		e->k = mkset(p, 0, 0, hexr, 3, c == 'H');
		return e->k < 0 ? -1 : 0;
	case 'p': case 'P':
		if (peek(p, 0) != '{')
			goto literal;
		neg = c == 'P';
		p->i++;
		if (peek(p, 0) == '^')
			neg ^= 1, p->i++;
		for (j = p->i; j < p->n && p->s[j] != '}'; j++)
			;
		if (j == p->n)
			return fail(p, at, "invalid character property name");
		e->kind = Eset;
		e->k = property(p, p->s + p->i, j - p->i, neg);
		if (e->k == -2) {
			char name[64];
			size_t m = 0, q;
			for (q = p->i; q < j && m + 5 < sizeof name; q++)
				m += (size_t)snprintf(name + m, sizeof name - m, "%c",
				                      p->s[q] < 0x80 ? (char)p->s[q] : '?');
			return fail(p, at, "invalid or unsupported character property name {%s}", name);
		}
		p->i = j + 1;
		return e->k < 0 ? -1 : 0;
	case 'b':
		if (incls) {
			e->c = 8;
			return 0;
		}
		e->kind = Eassert, e->c = Aword;
		return 0;
	case 'B': case 'A': case 'z': case 'Z': case 'G':
		if (incls)
			return fail(p, at, "invalid escape \\%c in char-class", (char)c);
		e->kind = Eassert;
		e->c = c == 'B' ? Anword : c == 'A' ? Abos : c == 'z' ? Aeos : c == 'Z' ? Aeosnl : Asearch;
		return 0;
	case 'R': case 'N': case 'O':
		if (incls)
			return fail(p, at, "invalid escape \\%c in char-class", (char)c);
		e->kind = Enode;
		e->k = c == 'R' ? node_newline(p) : node_any(p, c == 'O');
		return e->k < 0 ? -1 : 0;
	case 'K': case 'X': case 'y': case 'Y': case 'k': case 'g': case 'C': case 'M':
		return fail(p, at, "unsupported escape \\%c", (char)c);
	case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9':
		return fail(p, at, "back-references are not supported");
	default:
	literal:
		e->c = c;	/* Oniguruma takes other escaped letters as themselves */
		return 0;
	}
	if (v > 0x10FFFF)
		return fail(p, at, "code point value past U+10FFFF");
	e->c = v;
	return 0;
}

static int
node_any(P *p, int dotall)
{
	int k = newnode(p, Xany);

	if (k >= 0)
		p->nd[k].fl = dotall ? Fdotall : 0;
	return k;
}

static int
node_char(P *p, uint32_t c, int fl)
{
	int k = newnode(p, Xchar);

	if (k >= 0) {
		p->nd[k].c = c;
		p->nd[k].fl = fl & Ficase;
	}
	return k;
}

/* \R: (?>\r\n|[\n\v\f\r\x85\u2028\u2029]) */
static int
node_newline(P *p)
{
	static const uint32_t r[][2] = { {'\n', '\r'}, {0x85, 0x85}, {0x2028, 0x2029} };
	int a = newnode(p, Xatom), alt = newnode(p, Xalt), cat = newnode(p, Xcat);
	int cr = node_char(p, '\r', 0), lf = node_char(p, '\n', 0), set = newnode(p, Xcls), k;

	if (a < 0 || alt < 0 || cat < 0 || cr < 0 || lf < 0 || set < 0 ||
	    (k = mkcls(p, mkset(p, 0, 0, r, 3, 0), 0, 0)) < 0)
		return -1;
	p->nd[set].c = (uint32_t)k;
	addkid(p, cat, cr), addkid(p, cat, lf), width(p, cat);
	addkid(p, alt, cat), addkid(p, alt, set), width(p, alt);
	addkid(p, a, alt), width(p, a);
	return a;
}

/* ---- brackets ---- */

static int bracket(P *p, int depth, int *neg);

/* Adds set k to union u: merged when plain, else as a child. */
static int
ub_set(P *p, Ub *u, int k)
{
	Cnode *x = &p->re->cn[k];
	uint32_t i;

	if (x->inter || x->neg || x->nk)
		return ub_kid(p, u, (uint32_t)k);
	u->mask |= x->mask;
	u->space |= x->space;
	for (i = 0; i < x->nr; i++)
		if (ub_range(p, u, p->re->rng[x->r0 + i][0], p->re->rng[x->r0 + i][1]) < 0)
			return -1;
	return 0;
}

/* A POSIX bracket [:name:] or [:^name:] at p->i: its set, -2 when the
 * text is not one. */
static int
posix(P *p)
{
	size_t j = p->i + 2, at = p->i;
	int neg = 0, k;

	if (peek(p, 0) != '[' || peek(p, 1) != ':')
		return -2;
	if (j < p->n && p->s[j] == '^')
		neg = 1, j++;
	while (j < p->n && ((p->s[j] | 32) >= 'a' && (p->s[j] | 32) <= 'z'))
		j++;
	if (j + 1 >= p->n || p->s[j] != ':' || p->s[j + 1] != ']')
		return -2;
	k = property(p, p->s + at + 2 + neg, j - at - 2 - (size_t)neg, neg);
	if (k == -2)
		return fail(p, at, "invalid or unsupported POSIX bracket type");
	p->i = j + 2;
	return k;
}

/* One member code point of a class at p->i (a literal or an escaped
 * character); Eset for a set. */
static int
clsatom(P *p, Esc *e)
{
	uint32_t c = p->s[p->i++];

	if (c == '\\')
		return escape(p, 1, e);
	e->kind = Echar;
	e->c = c;
	return 0;
}

/* The class after '[': its positive set; *neg whether it is inverted. */
static int
bracket(P *p, int depth, int *neg)
{
	size_t at = p->i - 1, j;
	Ub u = {0}, ops = {0};
	Esc e, hi;
	int k, first = 1, r = -1;

	if (depth > MAXDEPTH)
		return fail(p, at, "nesting too deep");
	*neg = 0;
	if (peek(p, 0) == '^')
		*neg = 1, p->i++;
	for (;;) {
		if (!more(p)) {
			fail(p, at, "premature end of char-class");
			goto out;
		}
		if (peek(p, 0) == ']') {
			/* ']' first is itself when another ']' follows */
			for (j = p->i + 1; first && j < p->n && p->s[j] != ']'; j += p->s[j] == '\\' ? 2 : 1)
				;
			if (!first)
				break;
			if (j >= p->n) {
				fail(p, at, "empty char-class");
				goto out;
			}
		}
		first = 0;
		if (peek(p, 0) == '&' && peek(p, 1) == '&') {
			p->i += 2;
			if ((k = ub_store(p, &u, 0)) < 0 || ub_kid(p, &ops, (uint32_t)k) < 0)
				goto out;
			ub_free(&u);
			continue;
		}
		if (peek(p, 0) == '[') {
			int nneg;
			if ((k = posix(p)) == -1)
				goto out;
			if (k == -2) {
				p->i++;
				if ((k = bracket(p, depth + 1, &nneg)) < 0)
					goto out;
				p->re->cn[k].neg ^= (uint8_t)nneg;
			}
			if (ub_set(p, &u, k) < 0)
				goto out;
			if (peek(p, 0) == '-' && peek(p, 1) != ']')
				p->i++, k = ub_range(p, &u, '-', '-');	/* '-' after a set is itself */
			if (k < 0)
				goto out;
			continue;
		}
		j = p->i;
		if (clsatom(p, &e) < 0)
			goto out;
		if (e.kind == Eset) {
			if (peek(p, 0) == '-' && p->i + 1 < p->n && peek(p, 1) != ']') {
				fail(p, j, "unmatched range specifier in char-class");
				goto out;
			}
			if (ub_set(p, &u, e.k) < 0)
				goto out;
			continue;
		}
		if (peek(p, 0) == '-' && p->i + 1 < p->n && peek(p, 1) != ']') {
			p->i++;
			if (peek(p, 0) == '[') {
				fail(p, j, "char-class value at end of range");
				goto out;
			}
			if (clsatom(p, &hi) < 0)
				goto out;
			if (hi.kind != Echar) {
				fail(p, j, "char-class value at end of range");
				goto out;
			}
			if (hi.c < e.c) {
				fail(p, j, "empty range in char class");
				goto out;
			}
			if (ub_range(p, &u, e.c, hi.c) < 0)
				goto out;
		} else if (ub_range(p, &u, e.c, e.c) < 0)
			goto out;
	}
	p->i++;		/* ']' */
	if ((k = ub_store(p, &u, 0)) < 0)
		goto out;
	if (ops.nk == 0) {
		r = k;
		goto out;
	}
	if (ub_kid(p, &ops, (uint32_t)k) < 0)
		goto out;
	r = ub_store(p, &ops, 1);
out:
	ub_free(&u);
	ub_free(&ops);
	return r;
}

/* ---- the tree ---- */

static int alt(P *p, int fl, int depth);

/* Options [imx]*(-[imx]*)? at p->i, applied to *fl; the character after
 * them, or 0 when they are not options. */
static uint32_t
options(P *p, int *fl)
{
	int on = 1;
	uint32_t c;

	for (; more(p); p->i++) {
		c = p->s[p->i];
		if (c == '-' && on)
			on = 0;
		else if (c == 'i' || c == 'm' || c == 'x') {
			int f = c == 'i' ? Ficase : c == 'm' ? Fdotall : Fext;
			*fl = on ? *fl | f : *fl & ~f;
		} else
			return c == ')' || c == ':' ? c : 0;
	}
	return 0;
}

/* The group after '(' at `at`: its node, -2 for a comment. */
static int
group(P *p, int fl, int depth, size_t at)
{
	int k, body, kind = -1, lf = 0, nfl = fl;
	uint32_t c;

	if (depth >= MAXDEPTH)
		return fail(p, at, "nesting too deep");
	if (peek(p, 0) == '?') {
		p->i++;
		c = peek(p, 0);
		if (c == ':')
			p->i++;
		else if (c == '=' || c == '!')
			p->i++, kind = Xlook, lf = c == '!' ? Lneg : 0;
		else if (c == '<' && (peek(p, 1) == '=' || peek(p, 1) == '!'))
			kind = Xlook, lf = Lbehind | (peek(p, 1) == '!' ? Lneg : 0), p->i += 2;
		else if (c == '>')
			p->i++, kind = Xatom;
		else if (c == '#') {
			while (more(p) && peek(p, 0) != ')')
				p->i++;
			if (!more(p))
				return fail(p, at, "end pattern in group");
			p->i++;
			return -2;
		} else if (c == '<' || c == '\'') {	/* a named group: captures are not kept */
			uint32_t close = c == '<' ? '>' : '\'';
			for (p->i++; more(p) && peek(p, 0) != close; p->i++)
				;
			if (!more(p))
				return fail(p, at, "invalid group name");
			p->i++;
		} else if (options(p, &nfl) == ':')
			p->i++;
		else if (!more(p))
			return fail(p, at, "end pattern in group");
		else
			return fail(p, at, "undefined or unsupported group option '%c'",
			            peek(p, 0) < 0x80 ? (char)peek(p, 0) : '?');
	}
	if ((body = alt(p, nfl, depth + 1)) < 0)
		return -1;
	if (!more(p) || peek(p, 0) != ')')
		return fail(p, at, "end pattern with unmatched parenthesis");
	p->i++;
	if (kind < 0)
		return body;
	if ((k = newnode(p, kind)) < 0)
		return -1;
	p->nd[k].kid = p->nd[k].last = body;
	p->nd[k].fl = (uint8_t)lf;
	width(p, k);
	if ((lf & Lbehind) && p->nd[body].hi == NOLIM)
		return fail(p, at, "look-behind of unbounded length is not supported");
	return k;
}

/* Skips what stands for nothing: comments (?#...) and, under (?x),
 * white space and # to the end of the line. */
static void
ignorable(P *p, int fl)
{
	size_t j;

	while (more(p)) {
		uint32_t c = peek(p, 0);
		if ((fl & Fext) && (c == ' ' || (c >= '\t' && c <= '\r')))
			p->i++;
		else if ((fl & Fext) && c == '#')
			while (more(p) && peek(p, 0) != '\n')
				p->i++;
		else if (c == '(' && peek(p, 1) == '?' && peek(p, 2) == '#') {
			for (j = p->i + 3; j < p->n && p->s[j] != ')'; j++)
				;
			if (j == p->n)
				return;	/* group() reports it */
			p->i = j + 1;
		} else
			return;
	}
}

/* Whether p->i starts an interval {n}, {n,}, {n,m}, {,m}: its bounds,
 * with p->i past it; else p->i is unchanged.  -1 on a bad count. */
static int
interval(P *p, uint32_t *min, uint32_t *max)
{
	size_t at = p->i, j = p->i + 1;
	uint32_t v[2] = {0, NOLIM};
	int nd[2] = {0, 0}, comma = 0, d;

	for (; j < p->n; j++) {
		if (p->s[j] == ',' && !comma)
			comma = 1;
		else if ((d = hexval(p->s[j])) >= 0 && d < 10) {
			if (nd[comma]++ == 0)
				v[comma] = 0;
			if (v[comma] > MAXREP)
				return fail(p, at, "too big number for repeat range");
			v[comma] = v[comma] * 10 + (uint32_t)d;
		} else
			break;
	}
	if (j >= p->n || p->s[j] != '}' || (nd[0] == 0 && nd[1] == 0))
		return 0;
	if (v[0] > MAXREP || (v[1] != NOLIM && v[1] > MAXREP))
		return fail(p, at, "too big number for repeat range");
	*min = v[0];
	*max = comma ? v[1] : v[0];
	p->i = j + 1;
	return 1;
}

/* The quantifiers after node a. */
static int
quant(P *p, int a, int fl, int depth)
{
	uint32_t c, min, max;
	int k, mode, r;
	size_t at;

	for (;;) {
		ignorable(p, fl);
		if (!more(p))
			break;
		at = p->i;
		c = peek(p, 0);
		mode = Mgreedy;
		if (c == '?' || c == '*' || c == '+') {
			p->i++;
			min = c == '+', max = c == '?' ? 1 : NOLIM;
			if (peek(p, 0) == '?')
				mode = Mlazy, p->i++;
			else if (peek(p, 0) == '+')
				mode = Mposs, p->i++;
		} else if (c == '{' && (r = interval(p, &min, &max)) != 0) {
			if (r < 0)
				return -1;
			if (min > max) {	/* Oniguruma: {n,m} with n > m is possessive {m,n} */
				uint32_t t = min;
				min = max, max = t, mode = Mposs;
			} else if (min != max && peek(p, 0) == '?')
				mode = Mlazy, p->i++;
		} else
			break;
		if (p->nd[a].kind == Xassert || p->nd[a].kind == Xlook)
			return fail(p, at, "target of repeat operator is invalid");
		if (++depth > MAXDEPTH)
			return fail(p, at, "nesting too deep");
		if ((k = newnode(p, Xrep)) < 0)
			return -1;
		p->nd[k].kid = p->nd[k].last = a;
		p->nd[k].min = min, p->nd[k].max = max;
		p->nd[k].fl = (uint8_t)mode;
		width(p, k);
		a = k;
	}
	return a;
}

/* One atom at p->i, with its quantifiers; -2 for nothing (a comment). */
static int
atom(P *p, int fl, int depth)
{
	size_t at = p->i;
	uint32_t c = p->s[p->i++], mn, mx;
	int k = -1, neg;
	Esc e;

	switch (c) {
	case '(':
		k = group(p, fl, depth, at);
		break;
	case '[':
		if ((k = bracket(p, depth + 1, &neg)) < 0 || (k = mkcls(p, k, neg, fl & Ficase)) < 0)
			return -1;
		neg = k;
		if ((k = newnode(p, Xcls)) >= 0)
			p->nd[k].c = (uint32_t)neg;
		break;
	case '.':
		k = node_any(p, fl & Fdotall);
		break;
	case '^': case '$':
		if ((k = newnode(p, Xassert)) >= 0)
			p->nd[k].c = c == '^' ? Abol : Aeol, width(p, k);
		break;
	case '*': case '+': case '?':
		return fail(p, at, "target of repeat operator is not specified");
	case '{':
		p->i--;
		if ((k = interval(p, &mn, &mx)) != 0)
			return k < 0 ? -1 : fail(p, at, "target of repeat operator is not specified");
		p->i++;
		k = node_char(p, c, fl);
		break;
	case '\\':
		if (escape(p, 0, &e) < 0)
			return -1;
		if (e.kind == Echar)
			k = node_char(p, e.c, fl);
		else if (e.kind == Enode)
			k = e.k;
		else if (e.kind == Eassert) {
			if ((k = newnode(p, Xassert)) >= 0)
				p->nd[k].c = e.c, width(p, k);
		} else {
			if ((neg = mkcls(p, e.k, 0, 0)) < 0)
				return -1;
			if ((k = newnode(p, Xcls)) >= 0)
				p->nd[k].c = (uint32_t)neg;
		}
		break;
	default:
		k = node_char(p, c, fl);
		break;
	}
	if (k < 0)
		return k;
	return quant(p, k, fl, depth);
}

/* A sequence, up to '|', ')' or the end. */
static int
seq(P *p, int fl, int depth)
{
	int s = newnode(p, Xcat), k, nfl;
	size_t at;

	if (s < 0)
		return -1;
	for (;;) {
		uint32_t c;
		ignorable(p, fl);
		if (!more(p))
			break;
		c = peek(p, 0);
		if (c == '|' || c == ')')
			break;
		if (c == '(' && peek(p, 1) == '?') {
			/* (?imx-imx) applies to the rest of the group, '|' included */
			at = p->i;
			p->i += 2;
			nfl = fl;
			if (options(p, &nfl) == ')') {
				p->i++;
				if ((k = alt(p, nfl, depth + 1)) < 0)
					return -1;
				addkid(p, s, k);
				break;
			}
			p->i = at;
		}
		if ((k = atom(p, fl, depth)) == -1)
			return -1;
		if (k >= 0)
			addkid(p, s, k);
	}
	width(p, s);
	return s;
}

static int
alt(P *p, int fl, int depth)
{
	int a, k;

	if (depth > MAXDEPTH)
		return fail(p, p->i, "nesting too deep");
	if ((k = seq(p, fl, depth)) < 0)
		return -1;
	if (!more(p) || peek(p, 0) != '|')
		return k;
	if ((a = newnode(p, Xalt)) < 0)
		return -1;
	addkid(p, a, k);
	while (more(p) && peek(p, 0) == '|') {
		p->i++;
		if ((k = seq(p, fl, depth)) < 0)
			return -1;
		addkid(p, a, k);
	}
	width(p, a);
	return a;
}

/* ---- compiling ---- */

static int
ins(P *p, int op, int fl, uint32_t a, uint32_t b)
{
	dprt_re *re = p->re;
	Ins *x;

	if (re->nprog >= MAXPROG)
		return fail(p, 0, "pattern too large (repeat counts)");
	if (grow(&re->prog, &p->cap[1], re->nprog, sizeof *re->prog) < 0)
		return oom(p);
	x = &re->prog[re->nprog];
	x->op = (uint8_t)op, x->fl = (uint8_t)fl;
	x->a = a, x->b = b, x->c = op == Osplit ? re->nsplit++ : 0;
	return (int)re->nprog++;
}

static int
single(const Node *x)
{
	return x->kind == Xchar || x->kind == Xany || x->kind == Xcls;
}

static int emit(P *p, int k);

/* A loop over node k (max NOLIM): the kid repeated, an empty turn ends it. */
static int
loop(P *p, int k, int mode)
{
	int top, body, reg = -1;

	if ((top = ins(p, Osplit, 0, 0, 0)) < 0)
		return -1;
	body = (int)p->re->nprog;
	if (p->nd[k].lo == 0) {
		reg = (int)p->re->nreg++;
		if (ins(p, Omark, 0, (uint32_t)reg, 0) < 0)
			return -1;
	}
	if (emit(p, k) < 0)
		return -1;
	if (reg >= 0 && ins(p, Onull, 0, (uint32_t)reg, 0) < 0)
		return -1;
	if (ins(p, Ojmp, 0, (uint32_t)top, 0) < 0)
		return -1;
	if (reg >= 0)
		p->re->prog[p->re->nprog - 2].b = p->re->nprog;
	p->re->prog[top].a = mode == Mlazy ? p->re->nprog : (uint32_t)body;
	p->re->prog[top].b = mode == Mlazy ? (uint32_t)body : p->re->nprog;
	return 0;
}

static int
emit_rep(P *p, const Node *x)
{
	const Node *kid = &p->nd[x->kid];
	uint32_t i, head = NOLIM;
	int s, mode = x->fl;

	if (kid->hi == 0)	/* repeats of what is always empty are it, or nothing */
		return x->min > 0 ? emit(p, x->kid) : 0;
	if (single(kid)) {
		if ((s = ins(p, Orpt, mode, x->min, x->max)) < 0)
			return -1;
		return emit(p, x->kid);
	}
	if (mode == Mposs) {	/* (?>x*) */
		Node g = *x;
		if ((s = ins(p, Oatom, 0, 0, 0)) < 0)
			return -1;
		g.fl = Mgreedy;
		if (emit_rep(p, &g) < 0 || ins(p, Osucc, 0, 0, 0) < 0)
			return -1;
		p->re->prog[s].a = p->re->nprog;
		return 0;
	}
	for (i = 0; i < x->min; i++)
		if (emit(p, x->kid) < 0)
			return -1;
	if (x->max == NOLIM)
		return loop(p, x->kid, mode);
	/* x? nested max - min times; the splits' exits chained through
	 * their own fields until the end is known */
	for (i = x->min; i < x->max; i++) {
		if ((s = ins(p, Osplit, 0, 0, 0)) < 0)
			return -1;
		if (mode == Mlazy)
			p->re->prog[s].a = head, p->re->prog[s].b = (uint32_t)s + 1;
		else
			p->re->prog[s].a = (uint32_t)s + 1, p->re->prog[s].b = head;
		head = (uint32_t)s;
		if (emit(p, x->kid) < 0)
			return -1;
	}
	while (head != NOLIM) {
		Ins *in = &p->re->prog[head];
		uint32_t next = mode == Mlazy ? in->a : in->b;
		if (mode == Mlazy)
			in->a = p->re->nprog;
		else
			in->b = p->re->nprog;
		head = next;
	}
	return 0;
}

static int
emit(P *p, int k)
{
	const Node *x = &p->nd[k];
	int s, j, n;
	uint32_t head = NOLIM;

	switch (x->kind) {
	case Xchar:
		if ((x->fl & Ficase) && (folds(p) < 0 || hascase(p, x->c)))
			return ins(p, Ocharf, 0, dprt_ufold(x->c), 0);
		return ins(p, Ochar, 0, x->c, 0);
	case Xany:
		return ins(p, x->fl & Fdotall ? Oall : Oany, 0, 0, 0);
	case Xcls:
		return ins(p, Ocls, 0, x->c, 0);
	case Xassert:
		return ins(p, Oassert, 0, x->c, 0);
	case Xcat:
		for (j = x->kid; j >= 0; j = p->nd[j].next)
			if (emit(p, j) < 0)
				return -1;
		return 0;
	case Xalt:
		/* split to each but the last; their ends chained through Ojmp.a */
		for (j = x->kid; j >= 0; j = p->nd[j].next) {
			s = -1;
			if (p->nd[j].next >= 0 && (s = ins(p, Osplit, 0, 0, 0)) < 0)
				return -1;
			if (s >= 0)
				p->re->prog[s].a = (uint32_t)s + 1;
			if (emit(p, j) < 0)
				return -1;
			if (s >= 0) {
				if ((n = ins(p, Ojmp, 0, head, 0)) < 0)
					return -1;
				head = (uint32_t)n;
				p->re->prog[s].b = p->re->nprog;
			}
		}
		while (head != NOLIM) {
			uint32_t next = p->re->prog[head].a;
			p->re->prog[head].a = p->re->nprog;
			head = next;
		}
		return 0;
	case Xrep:
		return emit_rep(p, x);
	case Xlook: case Xatom:
		if ((s = ins(p, x->kind == Xlook ? Olook : Oatom, x->fl, 0, 0)) < 0)
			return -1;
		if (x->kind == Xlook) {
			p->re->prog[s].b = p->nd[x->kid].lo;
			p->re->prog[s].c = p->nd[x->kid].hi;
		}
		if (emit(p, x->kid) < 0 || ins(p, Osucc, 0, 0, 0) < 0)
			return -1;
		p->re->prog[s].a = p->re->nprog;
		return 0;
	}
	return 0;
}

dprt_re *
dprt_re_new(const char *pat, char *err, size_t errn)
{
	const unsigned char *u = (const unsigned char *)pat;
	size_t len = strlen(pat), i = 0;
	P p = {0};
	int root;

	p.pat = pat, p.err = err, p.errn = errn;
	if ((p.re = calloc(1, sizeof *p.re)) == NULL || (p.s = malloc((len + 1) * sizeof *p.s)) == NULL) {
		oom(&p);
		goto bad;
	}
	/* the pattern's code points */
	while (i < len) {
		uint32_t c = u[i], need = c < 0x80 ? 0 : c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1, k;
		static const uint32_t min[] = {0, 0x80, 0x800, 0x10000};
		size_t at = i++;
		if ((c >= 0x80 && c < 0xC2) || c > 0xF4) {
			fail(&p, at, "invalid UTF-8");
			goto bad;
		}
		c &= 0x7F >> need;	/* the lead's payload (and a 0 bit) */
		for (k = 0; k < need; k++, i++) {
			if (i >= len || (u[i] & 0xC0) != 0x80) {
				fail(&p, at, "invalid UTF-8");
				goto bad;
			}
			c = c << 6 | (u[i] & 0x3F);
		}
		if (c < min[need] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
			fail(&p, at, "invalid UTF-8");
			goto bad;
		}
		p.s[p.n++] = c;
	}
	if ((root = alt(&p, 0, 0)) < 0)
		goto bad;
	if (more(&p)) {
		fail(&p, p.i, "unmatched close parenthesis");
		goto bad;
	}
	if (emit(&p, root) < 0 || ins(&p, Osucc, 0, 0, 0) < 0 || p.bad)
		goto bad;
	free(p.s);
	free(p.nd);
	free(p.fold);
	return p.re;
bad:
	free(p.s);
	free(p.nd);
	free(p.fold);
	dprt_re_free(p.re);
	return NULL;
}

void
dprt_re_free(dprt_re *re)
{
	if (re == NULL)
		return;
	free(re->prog);
	free(re->cls);
	free(re->cn);
	free(re->rng);
	free(re->u32);
	free(re);
}

/* ---- matching ---- */

enum { Balt, Breg, Brpt, Blazy };	/* backtrack entries */

typedef struct Bt {
	uint32_t kind, pc;
	size_t a, b;	/* Balt: pos; Breg: old value; Brpt: fewest, current end; Blazy: pos, count */
} Bt;

typedef struct Vm {
	const dprt_re *re;
	const uint32_t *cp;
	size_t n, from;
	Bt *stk, *own;		/* own: stk when it is on the heap */
	size_t top, cap;
	size_t *reg;
	uint64_t *memo;		/* splits taken: bit split * (n - from + 1) + pos - from */
	size_t steps;		/* backtracks, until memo is made */
	size_t total;		/* backtracks from this start, against MAXBACK */
	int depth;		/* of nested runs */
} Vm;

/* After this many backtracks in one search, a program without empty-turn
 * checks notes each split it takes at each position: a second arrival
 * there can only follow a failed first (no path comes back to a split
 * without consuming), so it fails at once, and the search is linear in
 * splits times positions, not exponential.  Only the outermost run notes:
 * a nested body's first success is its answer, not a failure. */
#define MEMO_AFTER 20000
/* Oniguruma's retry limit in a match: a search that backtracks more from
 * one start fails (a pattern that is exponential on this text). */
#define MAXBACK 10000000

static void
memo_make(Vm *vm)
{
	size_t bits = (size_t)vm->re->nsplit * (vm->n - vm->from + 1);

	if (vm->re->nreg == 0 && vm->re->nsplit > 0 && bits / vm->re->nsplit == vm->n - vm->from + 1)
		vm->memo = calloc(bits / 64 + 1, sizeof *vm->memo);
	vm->steps = 0;	/* on failure, try again later */
}

static int
push(Vm *vm, uint32_t kind, uint32_t pc, size_t a, size_t b)
{
	Bt *q;

	if (vm->top == vm->cap) {
		size_t c = vm->cap * 2;
		if (c > SIZE_MAX / sizeof *q || (q = realloc(vm->own, c * sizeof *q)) == NULL)
			return -1;
		if (vm->own == NULL)
			memcpy(q, vm->stk, vm->top * sizeof *q);
		vm->stk = vm->own = q;
		vm->cap = c;
	}
	q = &vm->stk[vm->top++];
	q->kind = kind, q->pc = pc, q->a = a, q->b = b;
	return 0;
}

static int
test(const dprt_re *re, const Ins *in, uint32_t c)
{
	switch (in->op) {
	case Ochar: return c == in->a;
	case Ocharf: return c == in->a || dprt_ufold(c) == in->a;
	case Oany: return c != '\n';
	case Oall: return 1;
	default: return clsmatch(re, &re->cls[in->a], c);
	}
}

static int
isword(uint32_t c)
{
	if (c < 0x80)
		return (c | 32) - 'a' < 26 || c - '0' < 10 || c == '_';
	return incat(CM_WORD, c) || inranges(word_bare, 7, c);
}

static int
anchor(const Vm *vm, uint32_t kind, size_t pos)
{
	const uint32_t *cp = vm->cp;
	size_t n = vm->n;

	switch (kind) {
	case Abol: return pos == 0 || (cp[pos - 1] == '\n' && pos < n);
	case Aeol: return pos == n || cp[pos] == '\n';
	case Abos: return pos == 0;
	case Aeos: return pos == n;
	case Aeosnl: return pos == n || (pos + 1 == n && cp[pos] == '\n');
	case Asearch: return pos == vm->from;
	default:
		return ((pos > 0 && isword(cp[pos - 1])) != (pos < n && isword(cp[pos]))) == (kind == Aword);
	}
}

/* Runs the program from pc at pos: 1 when it reaches an Osucc (at want,
 * unless NONE) with the position in *end, 0 when it cannot, -1 when out
 * of memory, -3 past MAXBACK.  The stack is as it was on return. */
static int
run(Vm *vm, uint32_t pc, size_t pos, size_t want, size_t *end)
{
	const Ins *prog = vm->re->prog, *in;
	const uint32_t *cp = vm->cp;
	size_t n = vm->n, base = vm->top, k, lim, e, len;
	Bt *b;
	int r;

	for (;;) {
		in = &prog[pc];
		switch (in->op) {
		case Ochar:
			if (pos < n && cp[pos] == in->a) {
				pos++, pc++;
				continue;
			}
			goto fail;
		case Ocharf: case Oany: case Oall: case Ocls:
			if (pos < n && test(vm->re, in, cp[pos])) {
				pos++, pc++;
				continue;
			}
			goto fail;
		case Orpt:
			lim = n - pos;
			if (in->fl == Mlazy)
				lim = lim < in->a ? lim : in->a;
			else if (in->b != NOLIM && in->b < lim)
				lim = in->b;
			for (k = 0; k < lim && test(vm->re, in + 1, cp[pos + k]); k++)
				;
			if (k < in->a)
				goto fail;
			if (in->fl == Mlazy) {
				if (k < in->b && push(vm, Blazy, pc, pos + k, k) < 0)
					return -1;
			} else if (in->fl == Mgreedy && k > in->a && push(vm, Brpt, pc + 2, pos + in->a, pos + k) < 0)
				return -1;
			pos += k, pc += 2;
			continue;
		case Osplit:
			if (vm->memo && vm->depth == 0) {
				size_t bit = in->c * (vm->n - vm->from + 1) + (pos - vm->from);
				if (vm->memo[bit / 64] >> (bit % 64) & 1)
					goto fail;
				vm->memo[bit / 64] |= (uint64_t)1 << (bit % 64);
			}
			if (push(vm, Balt, in->b, pos, 0) < 0)
				return -1;
			pc = in->a;
			continue;
		case Ojmp:
			pc = in->a;
			continue;
		case Omark:
			if (push(vm, Breg, in->a, vm->reg[in->a], 0) < 0)
				return -1;
			vm->reg[in->a] = pos;
			pc++;
			continue;
		case Onull:
			pc = pos == vm->reg[in->a] ? in->b : pc + 1;
			continue;
		case Oassert:
			if (!anchor(vm, in->a, pos))
				goto fail;
			pc++;
			continue;
		case Olook:
			r = 0;
			vm->depth++;
			if (!(in->fl & Lbehind))
				r = run(vm, pc + 1, pos, NONE, &e);
			else
				for (len = in->b; r == 0 && len <= in->c && len <= pos; len++)
					r = run(vm, pc + 1, pos - len, pos, &e);
			vm->depth--;
			if (r < 0)
				return r;
			if (r == !(in->fl & Lneg)) {
				pc = in->a;
				continue;
			}
			goto fail;
		case Oatom:
			vm->depth++;
			r = run(vm, pc + 1, pos, NONE, &e);
			vm->depth--;
			if (r < 0)
				return r;
			if (r == 0)
				goto fail;
			pos = e, pc = in->a;
			continue;
		case Osucc:
			if (want != NONE && pos != want)
				goto fail;
			*end = pos;
			vm->top = base;
			return 1;
		}
	fail:
		if (++vm->total > MAXBACK)
			return -3;
		if (++vm->steps > MEMO_AFTER && vm->memo == NULL && vm->depth == 0)
			memo_make(vm);
		for (;;) {
			if (vm->top == base)
				return 0;
			b = &vm->stk[vm->top - 1];
			if (b->kind == Balt) {
				pc = b->pc, pos = b->a;
				vm->top--;
				break;
			}
			if (b->kind == Breg) {
				vm->reg[b->pc] = b->a;
				vm->top--;
				continue;
			}
			if (b->kind == Brpt) {	/* one code point fewer */
				pc = b->pc, pos = --b->b;
				if (b->b == b->a)
					vm->top--;
				break;
			}
			/* Blazy: one code point more */
			in = &prog[b->pc];
			pos = b->a;
			if (pos < n && test(vm->re, in + 1, cp[pos])) {
				pc = b->pc + 2, pos++;
				if (++b->b == in->b)
					vm->top--;
				else
					b->a = pos;
				break;
			}
			vm->top--;
		}
	}
}

ptrdiff_t
dprt_re_find(const dprt_re *re, const uint32_t *cp, size_t n, size_t i, size_t *start)
{
	Bt stk[64];
	size_t reg[16], end = 0, s;
	Vm vm = {0};
	int r = 0;

	vm.re = re, vm.cp = cp, vm.n = n, vm.from = i;
	vm.stk = stk, vm.cap = sizeof stk / sizeof *stk;
	vm.reg = reg;
	if (re->nreg > 16 && (vm.reg = malloc(re->nreg * sizeof *vm.reg)) == NULL)
		return -2;
	for (s = i; s <= n; s++) {
		vm.total = 0;
		if ((r = run(&vm, 0, s, NONE, &end)) != 0)
			break;
	}
	free(vm.own);
	free(vm.memo);
	if (vm.reg != reg)
		free(vm.reg);
	if (r < 0)
		return r == -3 ? -3 : -2;
	if (r == 0)
		return -1;
	*start = s;
	return (ptrdiff_t)end;
}
