/* dp.c: the .dp pipeline language (formats/dp.md): a lexer and a
 * recursive-descent parser that build IR as each statement is read. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "capi.h"
#include "import.h"

enum { TIDENT, TNUM, TSTR, TPUNCT, TNL, TEOF };

typedef struct Tok {
	int kind;
	Pos at;
	const char *s;     /* TIDENT, TSTR (unescaped), TPUNCT: the text */
	int isint;         /* TNUM */
	int64_t i;
	double f;
} Tok;

enum { VINT, VFLOAT, VSTR, VNAME, VLIST };

typedef struct Value {
	int kind;
	Pos at;
	int64_t i;
	double f;          /* VFLOAT, and VINT as a double */
	const char *s;     /* VSTR, VNAME */
	struct Value *e;   /* VLIST elements */
	int n;
} Value;

typedef struct Arg {
	const char *key;   /* NULL when positional */
	Pos keyat;
	Value v;
} Arg;

typedef struct Sym {       /* a named value of the pipeline */
	const char *name;
	int val;
	Pos at;
	const char *entry; /* the entry it belongs to, or NULL */
} Sym;

typedef struct Out {       /* an output statement, resolved at the end */
	const char *name;
	Pos at;
	const char *entry;
} Out;

typedef struct P {
	Imp *imp;
	const Src *src;
	Arena *a;
	Tok *tok;
	int ntok, captok, k;
	Sym *sym;
	int nsym, capsym;
	Out *out;
	int nout, capout;
	const char *name;  /* from a pipeline statement */
	Pos nameat;
	Tok *genin, *genout; /* from a generate statement: its IN and OUT */
	const char *genpos;  /* and its pos=NAME, or NULL */
	Pos genposat;
	Pos genat;
	Str genspec;       /* its keys, ",key=value..." */
	const char *genprefill; /* and its prefill=ENTRY, or NULL */
	Pos genprefillat;
	const char *genentry; /* the entry it is in */
	const char *entry; /* the entry statement being read, or NULL */
	const char **entries; /* the entries declared, in order */
	Pos *entryat;
	int nentry, capentry;
	const char **opentry; /* per op of fn: the entry whose model call made it */
	int nopentry, capopentry;
} P;

/* ---- lexer ---- */

static Tok *
newtok(P *p, int kind, Pos at)
{
	p->tok = agrow(p->a, p->tok, &p->captok, p->ntok, sizeof *p->tok);
	Tok *t = &p->tok[p->ntok++];
	memset(t, 0, sizeof *t);
	t->kind = kind;
	t->at = at;
	return t;
}

static int
isident(int c, int first)
{
	return c == '_' || isalpha(c) || (!first && isdigit(c));
}

static void
lex(P *p)
{
	const Src *s = p->src;
	const char *c = s->text, *end = s->text + s->len, *bol = c;
	int line = 1, depth = 0;
	while (c < end) {
		Pos at = { line, (int)(c - bol) + 1 };
		if (*c == '\n') {
			if (depth == 0)
				newtok(p, TNL, at);
			c++;
			line++;
			bol = c;
		} else if (*c == ' ' || *c == '\t' || *c == '\r') {
			c++;
		} else if (*c == '#') {
			while (c < end && *c != '\n')
				c++;
		} else if (isident((unsigned char)*c, 1)) {
			const char *b = c;
			while (c < end && isident((unsigned char)*c, 0))
				c++;
			newtok(p, TIDENT, at)->s = dp_strndup(p->a, b, (size_t)(c - b));
		} else if (isdigit((unsigned char)*c) || (*c == '.' && c + 1 < end && isdigit((unsigned char)c[1]))) {
			const char *b = c;
			int isint = 1;
			while (c < end && isdigit((unsigned char)*c))
				c++;
			if (c < end && *c == '.') {
				isint = 0;
				for (c++; c < end && isdigit((unsigned char)*c); c++)
					;
			}
			if (c < end && (*c == 'e' || *c == 'E')) {
				const char *e = c + 1;
				if (e < end && (*e == '+' || *e == '-'))
					e++;
				if (e < end && isdigit((unsigned char)*e)) {
					isint = 0;
					for (c = e; c < end && isdigit((unsigned char)*c); c++)
						;
				}
			}
			if (c < end && (isident((unsigned char)*c, 0) || *c == '.'))
				errat(s, at, "malformed number");
			char *txt = dp_strndup(p->a, b, (size_t)(c - b));
			Tok *t = newtok(p, TNUM, at);
			t->s = txt;
			t->isint = isint;
			errno = 0;
			if (isint) {
				t->i = strtoll(txt, NULL, 10);
				if (errno)
					errat(s, at, "integer %s is too large", txt);
				t->f = (double)t->i;
			} else {
				t->f = strtod(txt, NULL);
				if (!isfinite(t->f))   /* not errno: subnormals set it */
					errat(s, at, "number %s is out of range", txt);
			}
		} else if (*c == '"') {
			/* a string ends on its line: room for the rest of the line */
			const char *eol = memchr(c, '\n', (size_t)(end - c));
			char *buf = dp_alloc(p->a, (size_t)((eol ? eol : end) - c), 1);
			int n = 0;
			for (c++;; c++) {
				if (c >= end || *c == '\n')
					errat(s, at, "unterminated string");
				if (*c == '"')
					break;
				if (*c == '\\') {
					if (++c >= end || *c == '\n')
						errat(s, at, "unterminated string");
					switch (*c) {
					case 'n': buf[n++] = '\n'; break;
					case 't': buf[n++] = '\t'; break;
					case '\\': case '"': buf[n++] = *c; break;
					default:
						errat(s, (Pos){ line, (int)(c - bol) }, "unknown escape '\\%c' in string", *c);
					}
				} else
					buf[n++] = *c;
			}
			c++;
			newtok(p, TSTR, at)->s = buf;
		} else if (*c && strchr("()[],=:/-+?", *c)) {
			if (*c == '(' || *c == '[')
				depth++;
			else if ((*c == ')' || *c == ']') && depth > 0)
				depth--;
			newtok(p, TPUNCT, at)->s = dp_strndup(p->a, c, 1);
			c++;
		} else if (isprint((unsigned char)*c))
			errat(s, at, "unexpected character '%c'", *c);
		else
			errat(s, at, "unexpected byte 0x%02x", (unsigned char)*c);
	}
	Pos at = { line, (int)(c - bol) + 1 };
	if (p->ntok == 0 || p->tok[p->ntok - 1].kind != TNL)
		newtok(p, TNL, at);
	newtok(p, TEOF, at);
}

/* ---- parser helpers ---- */

static Tok *
peek(P *p)
{
	return &p->tok[p->k];
}

static Tok *
next(P *p)
{
	Tok *t = &p->tok[p->k];
	if (t->kind != TEOF)
		p->k++;
	return t;
}

static int
punct(Tok *t, int c)
{
	return t->kind == TPUNCT && t->s[0] == c;
}

static const char *
tokdesc(Tok *t)
{
	static char buf[96];
	switch (t->kind) {
	case TIDENT: snprintf(buf, sizeof buf, "'%.80s'", t->s); break;
	case TNUM: snprintf(buf, sizeof buf, "number %.80s", t->s); break;
	case TSTR: return "a string";
	case TPUNCT: snprintf(buf, sizeof buf, "'%s'", t->s); break;
	case TNL: return "end of line";
	default: return "end of file";
	}
	return buf;
}

static Tok *
expect(P *p, int c, const char *what)
{
	Tok *t = peek(p);
	if (!punct(t, c))
		errat(p->src, t->at, "expected %s, got %s", what, tokdesc(t));
	return next(p);
}

static Tok *
ident(P *p, const char *what)
{
	Tok *t = peek(p);
	if (t->kind != TIDENT)
		errat(p->src, t->at, "expected %s, got %s", what, tokdesc(t));
	return next(p);
}

static Sym *
lookup(P *p, const char *name)
{
	for (int i = 0; i < p->nsym; i++)
		if (strcmp(p->sym[i].name, name) == 0)
			return &p->sym[i];
	return NULL;
}

static _Noreturn void
undefined(P *p, const char *name, Pos at)
{
	const char **cand = dp_alloc(p->a, (size_t)p->nsym + 1, sizeof *cand);
	for (int i = 0; i < p->nsym; i++)
		cand[i] = p->sym[i].name;
	const char *s = suggest(name, cand, p->nsym);
	if (s)
		errat(p->src, at, "'%s' is not defined; did you mean '%s'?", name, s);
	errat(p->src, at, "'%s' is not defined", name);
}

static void
define(P *p, const char *name, Pos at, int val)
{
	Sym *s = lookup(p, name);
	if (s)
		errat(p->src, at, "redefinition of '%s' (first defined at %d:%d)", name, s->at.line, s->at.col);
	p->sym = agrow(p->a, p->sym, &p->capsym, p->nsym, sizeof *p->sym);
	p->sym[p->nsym++] = (Sym){ name, val, at, p->entry };
}

/* ---- values ---- */

static void
number(P *p, Value *v)
{
	Tok *t = peek(p);
	int neg = 0;
	v->at = t->at;
	if (punct(t, '-') || punct(t, '+')) {
		neg = t->s[0] == '-';
		next(p);
		t = peek(p);
	}
	if (t->kind != TNUM)
		errat(p->src, t->at, "expected a number, got %s", tokdesc(t));
	next(p);
	v->kind = t->isint ? VINT : VFLOAT;
	v->i = neg ? -t->i : t->i;
	v->f = neg ? -t->f : t->f;
}

static void
value(P *p, Value *v)
{
	Tok *t = peek(p);
	memset(v, 0, sizeof *v);
	v->at = t->at;
	if (t->kind == TSTR) {
		v->kind = VSTR;
		v->s = next(p)->s;
	} else if (t->kind == TIDENT) {
		v->kind = VNAME;
		v->s = next(p)->s;
	} else if (punct(t, '[')) {
		next(p);
		int cap = 0;
		v->kind = VLIST;
		while (!punct(peek(p), ']')) {
			v->e = agrow(p->a, v->e, &cap, v->n, sizeof *v->e);
			Tok *et = peek(p);
			if (et->kind != TNUM && !punct(et, '-') && !punct(et, '+'))
				errat(p->src, et->at, "expected a number in the list, got %s", tokdesc(et));
			value(p, &v->e[v->n++]);
			if (!punct(peek(p), ','))
				break;
			next(p);
		}
		expect(p, ']', "',' or ']'");
	} else if (t->kind == TNUM || punct(t, '-') || punct(t, '+')) {
		number(p, v);
		if (punct(peek(p), '/')) {
			Tok *slash = next(p);
			Value d;
			number(p, &d);
			if (d.f == 0)
				errat(p->src, slash->at, "division by zero");
			v->kind = VFLOAT;
			v->f = v->f / d.f;
		}
	} else
		errat(p->src, t->at, "expected a value, got %s", tokdesc(t));
}

/* ---- statements ---- */

static void
input(P *p)
{
	Tok *name = ident(p, "the input's name after 'input'");
	expect(p, ':', "':' and a type after the input's name");
	Tok *dt = ident(p, "a dtype (u8, f32, ...)");
	int d = dp_dtype_lookup(dt->s);
	if (d < 0) {
		const char *s = suggest(dt->s, dp_dtype_name, DP_NDTYPE);
		if (s)
			errat(p->src, dt->at, "unknown dtype '%s'; did you mean '%s'?", dt->s, s);
		errat(p->src, dt->at, "unknown dtype '%s' (u8 i8 i16 i32 i64 f16 f32 f64 bool bf16)", dt->s);
	}
	Type t = { .dtype = (uint8_t)d, .dev = DEV_CPU };
	expect(p, '[', "'[' and the input's shape");
	while (!punct(peek(p), ']')) {
		Tok *n = peek(p);
		if (!punct(n, '?') && (n->kind != TNUM || !n->isint || n->i <= 0))
			errat(p->src, n->at, "expected a positive integer size or ?, got %s", tokdesc(n));
		if (t.rank == DP_MAXRANK)
			errat(p->src, n->at, "rank exceeds %d", DP_MAXRANK);
		t.dim[t.rank++] = punct(n, '?') ? DP_DYN : n->i;
		next(p);
		if (!punct(peek(p), ','))
			break;
		next(p);
	}
	expect(p, ']', "',' or ']'");
	if (dp_isdyn(&t) && !(t.dtype == DP_U8 && t.rank == 1) &&
	    (t.dtype != DP_U8 || t.rank != 3 || t.dim[0] != DP_DYN ||
	     t.dim[1] != DP_DYN || t.dim[2] == DP_DYN || t.dim[2] > 4))
		errat(p->src, name->at, "input '%s': only an image has unknown sizes: u8[?,?,C] "
		      "with C from 1 to 4 (3 for RGB), or text: u8[?]", name->s);
	if (dp_nbytes(&t) < 0)
		errat(p->src, name->at, "input '%s' (%s) is larger than " DP_MAXBYTES_TEXT
		      ", the largest tensor DevProc handles", name->s, typestr(&t));
	Fn *fn = p->imp->fn;
	int op = dp_addop(fn, Oinput, NULL, 0);
	dp_sets(fn, op, "name", name->s);
	if (p->entry)
		dp_sets(fn, op, "entry", p->entry);
	int v = dp_addout(fn, op, t);
	define(p, name->s, name->at, v);
}

static void
output(P *p)
{
	for (;;) {
		Tok *name = ident(p, "an output's name after 'output'");
		for (int i = 0; i < p->nout; i++)
			if (strcmp(p->out[i].name, name->s) == 0)
				errat(p->src, name->at, "'%s' is already an output (at %d:%d)", name->s,
				      p->out[i].at.line, p->out[i].at.col);
		p->out = agrow(p->a, p->out, &p->capout, p->nout, sizeof *p->out);
		p->out[p->nout++] = (Out){ name->s, name->at, p->entry };
		if (!punct(peek(p), ','))
			break;
		next(p);
	}
}

/* Key and kind ("i", "f", "s", "is", "fs") of the i-th attribute of op
 * kind k, from the schema string in ops.h; 0 when there is none. */
static int
attrspec(int k, int i, char *key, size_t nkey, char *kind, int *optional)
{
	const char *s = dp_op_attrs[k];
	for (;;) {
		s += strspn(s, " ");
		if (!*s)
			return 0;
		size_t n = strcspn(s, " ");
		if (i-- == 0) {
			const char *c = memchr(s, ':', n);
			if (!c || (size_t)(c - s) >= nkey)
				dp_die("bad attribute schema for %s", dp_op_name[k]);
			memcpy(key, s, (size_t)(c - s));
			key[c - s] = 0;
			size_t kl = strcspn(c + 1, " =?");
			if (kl > 2)
				dp_die("bad attribute schema for %s", dp_op_name[k]);
			memcpy(kind, c + 1, kl);
			kind[kl] = 0;
			*optional = c[1 + kl] == '=' || c[1 + kl] == '?';
			return 1;
		}
		s += n;
	}
}

static int
pipelineop(const char *name)
{
	int k = dp_op_lookup(name);
	if (k < 0 || strchr(name, '.') || k == Oinput || k == Oconst || k == Ocopy || k == Oassign)
		return -1;
	return k;
}

static _Noreturn void
unknownop(P *p, Tok *t)
{
	const char *cand[DP_NOP + 1];
	int n = 0;
	for (int k = 0; k < DP_NOP; k++)
		if (pipelineop(dp_op_name[k]) >= 0)
			cand[n++] = dp_op_name[k];
	cand[n++] = "model";
	const char *s = suggest(t->s, cand, n);
	if (s)
		errat(p->src, t->at, "unknown op '%s'; did you mean '%s'?", t->s, s);
	errat(p->src, t->at, "unknown op '%s'", t->s);
}

static int
operand(P *p, const Value *v)
{
	if (v->kind != VNAME)
		errat(p->src, v->at, "expected the name of a value");
	Sym *s = lookup(p, v->s);
	if (!s)
		undefined(p, v->s, v->at);
	if (s->entry != p->entry)
		errat(p->src, v->at, "'%s' belongs to entry '%s'; entries share only the weights "
		      "and the state", v->s, s->entry);
	return s->val;
}

static void
setattr(P *p, int op, int k, const Arg *a, const char *kind)
{
	Fn *fn = p->imp->fn;
	const Value *v = &a->v;
	const char *on = dp_op_name[k];
	if (strcmp(kind, "i") == 0) {
		if (v->kind != VINT)
			errat(p->src, v->at, "%s: '%s' must be an integer", on, a->key);
		dp_seti(fn, op, a->key, v->i);
	} else if (strcmp(kind, "f") == 0) {
		if (v->kind != VINT && v->kind != VFLOAT)
			errat(p->src, v->at, "%s: '%s' must be a number", on, a->key);
		dp_setf(fn, op, a->key, v->f);
	} else if (strcmp(kind, "s") == 0) {
		if (v->kind != VSTR && v->kind != VNAME)
			errat(p->src, v->at, "%s: '%s' must be a name or a string", on, a->key);
		if (strcmp(a->key, "dtype") == 0 && dp_dtype_lookup(v->s) < 0) {
			const char *s = suggest(v->s, dp_dtype_name, DP_NDTYPE);
			if (s)
				errat(p->src, v->at, "unknown dtype '%s'; did you mean '%s'?", v->s, s);
			errat(p->src, v->at, "unknown dtype '%s' (u8 i8 i16 i32 i64 f16 f32 f64 bool bf16)", v->s);
		}
		dp_sets(fn, op, a->key, v->s);
	} else {
		int ints = strcmp(kind, "is") == 0;
		if (ints && v->kind == VINT) {   /* size=256: a list of one */
			dp_setints(fn, op, a->key, &v->i, 1);
			return;
		}
		if (v->kind != VLIST)
			errat(p->src, v->at, "%s: '%s' must be a list of %s", on, a->key, ints ? "integers" : "numbers");
		int64_t *iv = dp_alloc(fn->arena, (size_t)v->n + 1, sizeof *iv);
		double *fv = dp_alloc(fn->arena, (size_t)v->n + 1, sizeof *fv);
		for (int i = 0; i < v->n; i++) {
			if (ints && v->e[i].kind != VINT)
				errat(p->src, v->e[i].at, "%s: '%s' must be a list of integers", on, a->key);
			iv[i] = v->e[i].i;
			fv[i] = v->e[i].f;
		}
		if (ints)
			dp_setints(fn, op, a->key, iv, v->n);
		else
			dp_setfloats(fn, op, a->key, fv, v->n);
	}
}

/* A pipeline op: operands by position, attributes by keyword. */
static int
pipeop(P *p, int k, Tok *opt, Arg *arg, int narg, Pos resat, int nres)
{
	Fn *fn = p->imp->fn;
	const char *on = dp_op_name[k];
	int want = dp_op_nin[k], nin = 0, text = k == Otokenize || k == Odetokenize;
	int *in = dp_alloc(p->a, (size_t)narg + 2, sizeof *in);
	if (text)
		want = 1;   /* the tokenizer file's bytes come second */
	for (int i = 0; i < narg; i++) {
		if (arg[i].key)
			continue;
		if (want >= 0 && nin == want)
			errat(p->src, arg[i].v.at, "%s takes %d operand%s; attributes go by keyword (key=value)",
			      on, want, want == 1 ? "" : "s");
		in[nin++] = operand(p, &arg[i].v);
	}
	if (want >= 0 && nin < want)
		errat(p->src, opt->at, "%s takes %d operand%s, got %d", on, want, want == 1 ? "" : "s", nin);
	for (int i = 0; text && i < narg; i++)
		if (arg[i].key && strcmp(arg[i].key, "file") == 0) {
			if (arg[i].v.kind != VSTR && arg[i].v.kind != VNAME)
				errat(p->src, arg[i].v.at, "%s: 'file' must be the tokenizer.json's path "
				      "as a string", on);
			in[nin++] = text_file(p->imp, arg[i].v.s, arg[i].v.at);
		}
	if (text && nin < 2)
		errat(p->src, opt->at, "%s: missing argument 'file' (the tokenizer.json)", on);
	if (nres != dp_op_nout[k])
		errat(p->src, resat, "%s returns %d value%s, but %d name%s bound", on, dp_op_nout[k],
		      dp_op_nout[k] == 1 ? "" : "s", nres, nres == 1 ? " is" : "s are");
	int op = dp_addop(fn, k, in, nin);
	char key[32], kind[4], found[32];
	int optional;
	for (int i = 0; i < narg; i++) {
		if (!arg[i].key)
			continue;
		const char *keys[32];
		int nk = 0, hit = 0;
		for (int j = 0; attrspec(k, j, key, sizeof key, kind, &optional) && nk < 32; j++) {
			keys[nk++] = dp_strdup(p->a, key);
			if (strcmp(key, arg[i].key) == 0) {
				hit = 1;
				memcpy(found, kind, sizeof kind);
			}
		}
		if (!hit) {
			const char *s = suggest(arg[i].key, keys, nk);
			if (s)
				errat(p->src, arg[i].keyat, "%s has no argument '%s'; did you mean '%s'?", on, arg[i].key, s);
			errat(p->src, arg[i].keyat, "%s has no argument '%s'", on, arg[i].key);
		}
		if (dp_attr(&fn->op[op], arg[i].key))
			errat(p->src, arg[i].keyat, "%s: '%s' is given twice", on, arg[i].key);
		setattr(p, op, k, &arg[i], found);
	}
	for (int j = 0; attrspec(k, j, key, sizeof key, kind, &optional); j++)
		if (!optional && !dp_attr(&fn->op[op], key))
			errat(p->src, opt->at, "%s: missing argument '%s'", on, key);
	Err err = { 0 };
	if (dp_infer(fn, op, &err))
		errat(p->src, opt->at, "%s", err.msg);
	return op;
}

/* After a model call in an entry (its ops from first on): its parameters
 * and buffers are those of the other entries by state-dict name, stored
 * once in the blob where their bytes are equal (weights.c) and so one
 * const; a buffer one entry writes is state for every entry.  The same
 * name with another dtype or shape, or a state starting from other bytes,
 * is an error at the archive's path. */
static void
entryshare(P *p, int first, Pos at, const char *path)
{
	Fn *fn = p->imp->fn;
	int i, j;

	for (i = first; i < fn->nop; i++)   /* an assign makes its const state */
		if (fn->op[i].kind == Oassign && fn->op[fn->val[fn->op[i].in[0]].def].kind == Oconst)
			dp_seti(fn, fn->val[fn->op[i].in[0]].def, "state", 1);
	for (i = first; i < fn->nop; i++) {
		const Op *a = &fn->op[i];
		const char *na = a->kind == Oconst ? dp_gets(a, "param") : NULL;
		if (!na)
			continue;
		for (j = 0; j < first; j++) {
			const Op *b = &fn->op[j];
			const char *nb = b->kind == Oconst ? dp_gets(b, "param") : NULL;
			if (!nb || strcmp(na, nb) != 0 || j >= p->nopentry || !p->opentry[j] ||
			    p->opentry[j] == p->entry)
				continue;
			const Type *ta = &fn->val[a->out[0]].t, *tb = &fn->val[b->out[0]].t;
			if (ta->dtype != tb->dtype || ta->rank != tb->rank ||
			    memcmp(ta->dim, tb->dim, (size_t)ta->rank * sizeof *ta->dim) != 0)
				errat(p->src, at, "%s: '%s' is %s here but %s in entry '%s' (entries share "
				      "their weights and state by name)", path, na, typestr(ta), typestr(tb),
				      p->opentry[j]);
			if (dp_geti(a, "state", 0) || dp_geti(b, "state", 0)) {
				if (dp_geti(a, "offset", -1) != dp_geti(b, "offset", -1))
					errat(p->src, at, "%s: state '%s' starts from other bytes than in "
					      "entry '%s' (entries share one state)", path, na, p->opentry[j]);
			}
		}
	}
	for (i = p->nopentry; i < fn->nop; i++) {
		p->opentry = agrow(p->a, p->opentry, &p->capopentry, p->nopentry, sizeof *p->opentry);
		p->opentry[p->nopentry++] = p->entry;
	}
}

static void
modelcall(P *p, Tok *opt, Arg *arg, int narg, Tok **res, int nres)
{
	if (narg == 0 || arg[0].key || arg[0].v.kind != VSTR)
		errat(p->src, narg ? arg[0].v.at : opt->at,
		      "model: the first argument must be the archive's path as a string (model(\"net.pt2\", x))");
	int *in = dp_alloc(p->a, (size_t)narg, sizeof *in);
	Pos *inat = dp_alloc(p->a, (size_t)narg, sizeof *inat);
	const char **inname = dp_alloc(p->a, (size_t)narg, sizeof *inname);
	int nin = 0;
	p->imp->seed = 0;
	for (int i = 1; i < narg; i++) {
		if (arg[i].key && strcmp(arg[i].key, "seed") == 0) {   /* its random ops' seed */
			if (arg[i].v.kind != VINT)
				errat(p->src, arg[i].v.at, "model: seed must be an integer");
			p->imp->seed = arg[i].v.i;
			continue;
		}
		if (arg[i].key)
			errat(p->src, arg[i].keyat, "model has no argument '%s'", arg[i].key);
		inname[nin] = arg[i].v.s;
		inat[nin] = arg[i].v.at;
		in[nin++] = operand(p, &arg[i].v);
	}
	Call c = {
		.path = arg[0].v.s, .at = opt->at, .pathat = arg[0].v.at,
		.arg = in, .argat = inat, .argname = inname, .narg = nin,
		.nres = nres, .resat = res[0]->at,
	};
	int *out = dp_alloc(p->a, (size_t)nres, sizeof *out);
	int first = p->imp->fn->nop;
	pt2_call(p->imp, &c, out, nres);
	if (p->entry)
		entryshare(p, first, arg[0].v.at, arg[0].v.s);
	for (int i = 0; i < nres; i++)
		define(p, res[i]->s, res[i]->at, out[i]);
}

static void
assign(P *p)
{
	int nres = 0, cap = 0;
	Tok **res = NULL;
	for (;;) {
		Tok *t = ident(p, "a statement (input, output, or NAME = op(...))");
		if (lookup(p, t->s))
			define(p, t->s, t->at, 0); /* reports the redefinition */
		for (int i = 0; i < nres; i++)
			if (strcmp(res[i]->s, t->s) == 0)
				errat(p->src, t->at, "'%s' is bound twice", t->s);
		res = agrow(p->a, res, &cap, nres, sizeof *res);
		res[nres++] = t;
		if (!punct(peek(p), ','))
			break;
		next(p);
	}
	expect(p, '=', "'=' after the name");
	Tok *opt = ident(p, "an op name");
	int k = strcmp(opt->s, "model") == 0 ? -2 : pipelineop(opt->s);
	if (k == -1)
		unknownop(p, opt);
	expect(p, '(', "'(' after the op name");
	int narg = 0, capa = 0;
	Arg *arg = NULL;
	while (!punct(peek(p), ')')) {
		arg = agrow(p->a, arg, &capa, narg, sizeof *arg);
		Arg *a = &arg[narg++];
		memset(a, 0, sizeof *a);
		if (peek(p)->kind == TIDENT && punct(&p->tok[p->k + 1], '=')) {
			Tok *kt = next(p);
			next(p);
			a->key = kt->s;
			a->keyat = kt->at;
			for (int i = 0; i < narg - 1; i++)
				if (arg[i].key && strcmp(arg[i].key, a->key) == 0)
					errat(p->src, kt->at, "'%s' is given twice", a->key);
		} else if (narg > 1 && arg[narg - 2].key)
			errat(p->src, peek(p)->at, "positional argument after keyword arguments");
		value(p, &a->v);
		if (!punct(peek(p), ','))
			break;
		next(p);
	}
	expect(p, ')', "',' or ')'");
	if (k == -2)
		modelcall(p, opt, arg, narg, res, nres);
	else {
		int op = pipeop(p, k, opt, arg, narg, res[0]->at, nres);
		for (int i = 0; i < nres; i++)
			define(p, res[i]->s, res[i]->at, p->imp->fn->op[op].out[i]);
	}
}

/* generate IN, OUT, key=value...: the generation loop the executable and
 * NAME_generate run (formats/dp.md, "Generation"); checked once the
 * outputs are known, then kept as IN's input op's generate attribute. */
static void
generate(P *p, Tok *t)
{
	static const char *const keys[] = { "max_tokens", "end", "temperature", "top_k", "top_p", "seed",
	                                    "pos", "prefill" };
	if (p->genin)
		errat(p->src, t->at, "second generate statement (the first is at %d:%d)",
		      p->genat.line, p->genat.col);
	p->genat = t->at;
	p->genentry = p->entry;
	p->genin = ident(p, "the token input's name after 'generate'");
	expect(p, ',', "',' after the token input");
	p->genout = ident(p, "the logits output's name");
	while (punct(peek(p), ',')) {
		next(p);
		Tok *k = ident(p, "a key (max_tokens, end, temperature, top_k, top_p, seed, pos, prefill)");
		size_t j;
		for (j = 0; j < sizeof keys / sizeof *keys && strcmp(keys[j], k->s) != 0; j++)
			;
		if (j == sizeof keys / sizeof *keys)
			errat(p->src, k->at, "generate has no key '%s' (max_tokens, end, temperature, "
			      "top_k, top_p, seed, pos, prefill)", k->s);
		Str kk = { 0 };
		str_printf(&kk, ",%s=", k->s);
		int twice = p->genspec.p && strstr(p->genspec.p, kk.p);
		str_free(&kk);
		if (twice)
			errat(p->src, k->at, "generate: '%s' is given twice", k->s);
		expect(p, '=', "'=' after the key");
		Value v;
		value(p, &v);
		if (j == 6) {   /* pos=NAME: the positions input of a program with a KV cache */
			if (v.kind != VNAME)
				errat(p->src, v.at, "generate: pos names the positions input");
			p->genpos = v.s;
			p->genposat = v.at;
			str_printf(&p->genspec, ",pos=%s", v.s);
			continue;
		}
		if (j == 7) {   /* prefill=ENTRY: the entry that takes the prompt */
			if (v.kind != VNAME)
				errat(p->src, v.at, "generate: prefill names the entry that takes the prompt");
			p->genprefill = v.s;
			p->genprefillat = v.at;
			str_printf(&p->genspec, ",prefill=%s", v.s);
			continue;
		}
		double d = v.kind == VINT ? (double)v.i : v.f;
		int isint = v.kind == VINT, ok;
		if (v.kind != VINT && v.kind != VFLOAT)
			errat(p->src, v.at, "generate: %s needs a number", k->s);
		switch (j) {
		case 0: case 3: case 5: ok = isint && v.i >= 0; break;   /* max_tokens top_k seed */
		case 1: ok = isint && v.i >= -1; break;                   /* end; -1: none */
		case 2: ok = d >= 0 && d <= 1e6; break;                   /* temperature */
		default: ok = d > 0 && d <= 1; break;                     /* top_p */
		}
		if (!ok)
			errat(p->src, v.at, "generate: %s must be %s", k->s,
			      j == 1 ? "a token id, or -1 for none" : j == 2 ? "from 0 (greedy) to 1e6" :
			      j == 4 ? "above 0 and at most 1" : "an integer from 0");
		if (isint)
			str_printf(&p->genspec, ",%s=%lld", k->s, (long long)v.i);
		else {   /* the shortest of %.15g and %.17g that reads back as d */
			char b[32];
			snprintf(b, sizeof b, "%.15g", d);
			str_printf(&p->genspec, strtod(b, NULL) == d ? ",%s=%.15g" : ",%s=%.17g", k->s, d);
		}
	}
}

/* The index of value v among the inputs (out: the outputs) of entry e, and
 * the value at index k of entry f's into *w (-1 when f has fewer). */
static int
entryio(P *p, const char *e, int v, const char *f, int out, int *w)
{
	Fn *fn = p->imp->fn;
	int i, ke = 0, kf = 0, at = -1, want = -1;

	for (i = 0; i < (out ? p->nout : fn->nop); i++) {
		const char *en;
		int val;
		if (out) {
			en = p->out[i].entry;
			val = fn->out[i].val;
		} else {
			if (fn->op[i].kind != Oinput)
				continue;
			en = dp_gets(&fn->op[i], "entry");
			val = fn->op[i].out[0];
		}
		if (strcmp(en, e) == 0 && val == v)
			at = ke;
		ke += strcmp(en, e) == 0;
	}
	for (i = 0; i < (out ? p->nout : fn->nop); i++) {
		const char *en = out ? p->out[i].entry :
		                 fn->op[i].kind == Oinput ? dp_gets(&fn->op[i], "entry") : NULL;
		if (!en || strcmp(en, f) != 0)
			continue;
		if (kf++ == at)
			want = out ? fn->out[i].val : fn->op[i].out[0];
	}
	*w = want;
	return at;
}

/* generate's prefill=ENTRY: that entry takes the prompt, P tokens a run,
 * through its inputs and output at the places of the token input, the
 * positions input and the logits among the generating entry's (the same
 * module exported for P positions): i64[1,P], i64[P], f32[1,P,V]. */
static void
genprefill(P *p, int tin, int pin, int lout)
{
	Fn *fn = p->imp->fn;
	int i, t, q, l;

	for (i = 0; i < p->nentry && strcmp(p->entries[i], p->genprefill) != 0; i++)
		;
	if (i == p->nentry || strcmp(p->genprefill, p->genentry) == 0)
		errat(p->src, p->genprefillat, "generate: prefill=%s names no other entry", p->genprefill);
	entryio(p, p->genentry, tin, p->genprefill, 0, &t);
	entryio(p, p->genentry, pin, p->genprefill, 0, &q);
	entryio(p, p->genentry, lout, p->genprefill, 1, &l);
	const Type *tt = t >= 0 ? &fn->val[t].t : NULL, *tq = q >= 0 ? &fn->val[q].t : NULL;
	const Type *tl = l >= 0 ? &fn->val[l].t : NULL, *to = &fn->val[lout].t;
	if (!tt || !tq || !tl || tt->dtype != DP_I64 || tt->rank != 2 || tt->dim[0] != 1 ||
	    tq->dtype != DP_I64 || tq->rank != 1 || tq->dim[0] != tt->dim[1] ||
	    tl->dtype != DP_F32 || tl->rank != 3 || tl->dim[0] != 1 || tl->dim[1] != tt->dim[1] ||
	    tl->dim[2] != to->dim[to->rank - 1])
		errat(p->src, p->genprefillat, "generate: entry '%s' takes the prompt through its "
		      "inputs and output at the places of '%s', '%s' and '%s' in this entry: i64[1,P], "
		      "i64[P] and f32[1,P,%lld]", p->genprefill, p->genin->s, p->genpos, p->genout->s,
		      (long long)to->dim[to->rank - 1]);
}

/* Checks the generate statement against the inputs and outputs and records it. */
static void
genfinish(P *p)
{
	Fn *fn = p->imp->fn;
	Sym *in = lookup(p, p->genin->s);
	int i, op;
	if (!in || fn->op[fn->val[in->val].def].kind != Oinput || in->entry != p->genentry)
		errat(p->src, p->genin->at, "generate: '%s' is no input of the %s", p->genin->s,
		      p->genentry ? "entry" : "pipeline");
	const Type *ti = &fn->val[in->val].t;
	if (ti->dtype != DP_I64 || ti->rank != 2 || ti->dim[0] != 1)
		errat(p->src, p->genin->at, "generate: input '%s' is %s; the token input is i64[1,L]",
		      p->genin->s, typestr(ti));
	for (i = 0; i < fn->nout && strcmp(fn->out[i].name, p->genout->s) != 0; i++)
		;
	if (i == fn->nout || p->out[i].entry != p->genentry)
		errat(p->src, p->genout->at, "generate: '%s' is no output of the %s", p->genout->s,
		      p->genentry ? "entry" : "pipeline");
	const Type *to = &fn->val[fn->out[i].val].t;
	if (to->dtype != DP_F32 || !((to->rank == 3 && to->dim[0] == 1 && to->dim[1] == ti->dim[1]) ||
	    (to->rank == 2 && to->dim[0] == 1)))
		errat(p->src, p->genout->at, "generate: output '%s' is %s; the logits are f32[1,%lld,V] "
		      "(every position) or f32[1,V] (the last)", p->genout->s, typestr(to),
		      (long long)ti->dim[1]);
	if (p->genpos) {
		Sym *ps = lookup(p, p->genpos);
		if (!ps || fn->op[fn->val[ps->val].def].kind != Oinput || ps == in || ps->entry != in->entry)
			errat(p->src, p->genposat, "generate: pos=%s names no other input of the pipeline",
			      p->genpos);
		const Type *tp = &fn->val[ps->val].t;
		if (tp->dtype != DP_I64 || tp->rank != 1 || tp->dim[0] != ti->dim[1])
			errat(p->src, p->genposat, "generate: the positions input '%s' is %s, not i64[%lld] "
			      "(one per token of '%s')", p->genpos, typestr(tp), (long long)ti->dim[1],
			      p->genin->s);
	}
	if (p->genprefill && !p->genpos)
		errat(p->src, p->genprefillat, "generate: prefill= needs pos= (a model keeping a KV cache)");
	if (p->genprefill)
		genprefill(p, in->val, lookup(p, p->genpos)->val, fn->out[i].val);
	Str s = { 0 };
	str_printf(&s, "%s%s", p->genout->s, p->genspec.p ? p->genspec.p : "");
	op = fn->val[in->val].def;
	dp_sets(fn, op, "generate", s.p);
	str_free(&s);
	str_free(&p->genspec);
}

static Tok *
peek2(P *p)
{
	return p->tok[p->k].kind == TEOF ? &p->tok[p->k] : &p->tok[p->k + 1];
}

static Tok *
peek3(P *p)
{
	Tok *t = peek2(p);
	return t->kind == TEOF ? t : t + 1;
}

/* entry NAME: the statements that follow, to the next entry statement,
 * are the entry point NAME of the program (formats/dp.md, "Entries"). */
static void
entry(P *p, Tok *t)
{
	static const char *const taken[] = { "create", "create_with", "set_threads", "generate",
	                                     "reset", "error", "destroy", "options", "token_fn",
	                                     "run", "state", "prep", "inputs", "outputs", "prog",
	                                     "blob", "weights", "gen", "genrun", "gentoken",
	                                     "entries", "main" };
	Tok *n = ident(p, "the entry's name after 'entry'");
	if (!p->entry && (p->nsym || p->nout || p->genin))
		errat(p->src, t->at, "'entry' comes before the program's inputs, ops and outputs "
		      "(once there are entries, each statement belongs to one)");
	for (int i = 0; i < p->nentry; i++)
		if (strcmp(p->entries[i], n->s) == 0)
			errat(p->src, n->at, "second entry '%s' (the first is at %d:%d)", n->s,
			      p->entryat[i].line, p->entryat[i].col);
	for (size_t i = 0; i < sizeof taken / sizeof *taken; i++)
		if (strcmp(n->s, taken[i]) == 0 || strncmp(n->s, "gpu_", 4) == 0)
			errat(p->src, n->at, "entry '%s' would clash with a function of the C API; "
			      "choose another name", n->s);
	int cap = p->capentry;
	p->entries = agrow(p->a, p->entries, &p->capentry, p->nentry, sizeof *p->entries);
	p->entryat = agrow(p->a, p->entryat, &cap, p->nentry, sizeof *p->entryat);
	p->entries[p->nentry] = n->s;
	p->entryat[p->nentry++] = n->at;
	p->entry = n->s;
}

static void
statement(P *p)
{
	Tok *t = peek(p);
	if (t->kind == TIDENT && strcmp(t->s, "input") == 0) {
		next(p);
		input(p);
	} else if (t->kind == TIDENT && strcmp(t->s, "output") == 0) {
		next(p);
		output(p);
	} else if (t->kind == TIDENT && strcmp(t->s, "generate") == 0 &&
	           !punct(&p->tok[p->k + 1], '=') && !punct(&p->tok[p->k + 1], ',')) {
		next(p);
		generate(p, t);
	} else if (t->kind == TIDENT && strcmp(t->s, "entry") == 0 && peek2(p)->kind == TIDENT &&
	           peek3(p)->kind == TNL) {
		next(p);
		entry(p, t);
	} else if (t->kind == TIDENT && strcmp(t->s, "pipeline") == 0) {
		next(p);
		Tok *n = ident(p, "the pipeline's name after 'pipeline'");
		if (p->name)
			errat(p->src, t->at, "second pipeline statement (the first is at %d:%d)",
			      p->nameat.line, p->nameat.col);
		p->name = n->s;
		p->nameat = t->at;
	} else
		assign(p);
	Tok *e = peek(p);
	if (e->kind != TNL)
		errat(p->src, e->at, "expected end of line, got %s", tokdesc(e));
	next(p);
}

static int
iscident(const char *s)
{
	if (!isident((unsigned char)*s, 1))
		return 0;
	for (; *s; s++)
		if (!isident((unsigned char)*s, 0))
			return 0;
	return 1;
}

/* Whether s is a C keyword or a name that the headers generated code and
 * its users include declare (C11's math.h, stdlib.h, stdio.h, string.h,
 * stdint.h, stddef.h, and POSIX's strings.h and the like): the pipeline's
 * name becomes a C type and function prefix, and a type named like a
 * function of those headers stops the C compile.  The math functions are
 * named once: their float and long double forms (expf, expl) are the same
 * name and an f or an l. */
static int
reserved(const char *s)
{
	static const char *const math[] = {   /* C11 7.12 (and POSIX's), each also with f and l */
		"acos", "asin", "atan", "atan2", "cos", "sin", "tan", "acosh", "asinh", "atanh",
		"cosh", "sinh", "tanh", "exp", "exp2", "expm1", "frexp", "ilogb", "ldexp", "log",
		"log10", "log1p", "log2", "logb", "modf", "scalbn", "scalbln", "cbrt", "fabs",
		"hypot", "pow", "sqrt", "erf", "erfc", "lgamma", "tgamma", "ceil", "floor",
		"nearbyint", "rint", "lrint", "llrint", "round", "lround", "llround", "trunc", "fmod",
		"remainder", "remquo", "copysign", "nan", "nextafter", "nexttoward", "fdim", "fmax",
		"fmin", "fma", "j0", "j1", "jn", "y0", "y1", "yn", "gamma", "drem", "significand",
		"finite", "exp10", "pow10", "sincos", "scalb", "lgamma_r", "isinf", "isnan",
	};
	static const char *const names[] = {
		/* keywords */
		"auto", "break", "case", "char", "const", "continue", "default", "do", "double",
		"else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
		"register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
		"switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool",
		"true", "false", "asm", "typeof",
		/* math.h's macros and types */
		"fpclassify", "isfinite", "isnormal", "signbit", "isgreater", "isgreaterequal",
		"isless", "islessequal", "islessgreater", "isunordered", "float_t", "double_t",
		"signgam", "NAN", "INFINITY", "HUGE_VAL",
		/* stdlib.h */
		"atof", "atoi", "atol", "atoll", "strtod", "strtof", "strtold", "strtol", "strtoll",
		"strtoul", "strtoull", "rand", "srand", "random", "srandom", "drand48", "erand48",
		"lrand48", "nrand48", "mrand48", "jrand48", "srand48", "seed48", "aligned_alloc",
		"calloc", "free", "malloc", "realloc", "abort", "atexit", "at_quick_exit", "exit",
		"_Exit", "getenv", "setenv", "unsetenv", "putenv", "quick_exit", "system", "bsearch",
		"qsort", "abs", "labs", "llabs", "div", "ldiv", "lldiv", "div_t", "ldiv_t", "lldiv_t",
		"mblen", "mbtowc", "wctomb", "mbstowcs", "wcstombs", "mkstemp", "mkdtemp", "realpath",
		"posix_memalign",
		/* stdio.h */
		"remove", "rename", "tmpfile", "tmpnam", "fclose", "fflush", "fopen", "freopen",
		"setbuf", "setvbuf", "fprintf", "fscanf", "printf", "scanf", "snprintf", "sprintf",
		"sscanf", "vfprintf", "vfscanf", "vprintf", "vscanf", "vsnprintf", "vsprintf",
		"vsscanf", "fgetc", "fgets", "fputc", "fputs", "getc", "getchar", "gets", "putc",
		"putchar", "puts", "ungetc", "fread", "fwrite", "fgetpos", "fseek", "fseeko",
		"fsetpos", "ftell", "ftello", "rewind", "clearerr", "feof", "ferror", "perror",
		"fileno", "fdopen", "popen", "pclose", "getline", "getdelim", "dprintf", "FILE",
		"fpos_t", "stdin", "stdout", "stderr", "EOF", "BUFSIZ",
		/* string.h, strings.h */
		"memcpy", "memmove", "strcpy", "strncpy", "strcat", "strncat", "memcmp", "strcmp",
		"strcoll", "strncmp", "strxfrm", "memchr", "strchr", "strcspn", "strpbrk", "strrchr",
		"strspn", "strstr", "strtok", "strtok_r", "memset", "strerror", "strlen", "strdup",
		"strndup", "strnlen", "stpcpy", "stpncpy", "strsignal", "bcmp", "bcopy", "bzero",
		"ffs", "index", "rindex", "strcasecmp", "strncasecmp",
		/* stdint.h, stddef.h */
		"int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
		"uint64_t", "intptr_t", "uintptr_t", "intmax_t", "uintmax_t", "size_t", "ptrdiff_t",
		"wchar_t", "max_align_t", "offsetof", "NULL",
		/* what else a program's users often include: unistd.h, time.h, signal.h, errno.h */
		"main", "time", "clock", "signal", "raise", "errno", "assert", "read", "write", "open",
		"close", "link", "unlink", "select", "pipe", "fork", "sleep", "usleep", "access",
		"dup", "dup2", "lseek", "sync", "pause", "alarm", "kill", "wait",
		/* the generated NAME_run's own names (stages/common/capi.c), and the
		 * runtime's prefix (dprt_prog and dprt_blob are its types) */
		"m", "in", "out", "dprt",
	};
	size_t n = strlen(s);

	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strcmp(s, names[i]) == 0)
			return 1;
	for (size_t i = 0; i < sizeof math / sizeof *math; i++) {
		size_t k = strlen(math[i]);
		if (strncmp(s, math[i], k) == 0 &&
		    (n == k || (n == k + 1 && (s[k] == 'f' || s[k] == 'l'))))
			return 1;
	}
	return 0;
}

/* Parses imp->src into imp->fn: graph inputs, ops, inlined models, outputs;
 * sets the function's name.  Reports the first error and exits. */
void
parse(Imp *imp)
{
	P p = { .imp = imp, .src = imp->src, .a = imp->fn->arena };
	lex(&p);
	while (peek(&p)->kind != TEOF) {
		if (peek(&p)->kind == TNL)
			next(&p);
		else
			statement(&p);
	}
	Fn *fn = imp->fn;
	for (int i = 0; i < p.nout; i++) {
		Sym *s = lookup(&p, p.out[i].name);
		if (!s)
			errat(p.src, p.out[i].at, "output '%s' is never defined", p.out[i].name);
		if (s->entry != p.out[i].entry)
			errat(p.src, p.out[i].at, "'%s' belongs to entry '%s'; output it there", s->name,
			      s->entry);
		if (dp_isdyn(&fn->val[s->val].t))
			errat(p.src, p.out[i].at, "output '%s' is an image of unknown size; outputs "
			      "have static shapes (resize it)", p.out[i].name);
		dp_addport(fn, p.out[i].name, s->val);
		if (fn->val[s->val].t.bnd)   /* its run-time length follows it */
		{
			size_t n = strlen(p.out[i].name) + 3;
			char *ln = dp_alloc(fn->arena, n, 1);
			snprintf(ln, n, "%s_n", p.out[i].name);
			dp_addport(fn, ln, dp_bndlen(fn, s->val));
		}
	}
	if (p.nout == 0)
		errat(p.src, peek(&p)->at, "the pipeline has no outputs (add 'output NAME')");
	for (int i = 0; i < p.nentry; i++) {   /* each entry: inputs and outputs of its own */
		int nin = 0, nout = 0;
		for (int j = 0; j < p.nsym; j++)
			nin += p.sym[j].entry == p.entries[i] && fn->op[fn->val[p.sym[j].val].def].kind == Oinput;
		for (int j = 0; j < p.nout; j++)
			nout += p.out[j].entry == p.entries[i];
		if (!nin || !nout)
			errat(p.src, p.entryat[i], "entry '%s' has no %s", p.entries[i],
			      nin ? "outputs (add 'output NAME')" : "inputs");
	}
	if (p.genin)
		genfinish(&p);
	if (p.name) {
		if (reserved(p.name))
			errat(p.src, p.nameat, "pipeline name '%s' is a C keyword or C library name; "
			      "choose another", p.name);
		fn->name = dp_strdup(fn->arena, p.name);
	} else if (!iscident(fn->name))
		errfile(p.src->path, "pipeline name '%s' (from the file name) is not a C identifier; "
		        "add a 'pipeline NAME' statement", fn->name);
	else if (reserved(fn->name))
		errfile(p.src->path, "pipeline name '%s' (from the file name) is a C keyword or C "
		        "library name; add a 'pipeline NAME' statement", fn->name);
}
