/* aten.c: the conversion of one graph node of a torch.export archive into
 * an IR op (or none), driven by the argument schemas of atab.c. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "import.h"

enum { MAXF = 24, MAXIN = 4096 };   /* schema fields; operands of one node (the IR reader's limit) */

typedef struct Field {     /* one parsed schema entry */
	char name[32], kind[4], key[32];
	const char *def;   /* text after '=', or NULL */
	int deflen;
} Field;

static int
field(const char *s, int i, Field *f)
{
	for (;;) {
		s += strspn(s, " ");
		if (!*s)
			return 0;
		size_t n = strcspn(s, " ");
		if (i-- == 0) {
			memset(f, 0, sizeof *f);
			size_t a = strcspn(s, ":");
			const char *k = s + a + 1;
			size_t b = strcspn(k, " =>");
			if (a >= sizeof f->name || a >= n || b >= sizeof f->kind)
				dp_die("bad ATen schema '%s'", s);
			memcpy(f->name, s, a);
			memcpy(f->kind, k, b);
			const char *p = k + b;
			if (*p == '=') {
				f->def = ++p;
				f->deflen = (int)strcspn(p, " >");
				p += f->deflen;
			}
			if (*p == '>') {
				size_t c = strcspn(++p, " ");
				if (c >= sizeof f->key)
					dp_die("bad ATen schema '%s'", s);
				memcpy(f->key, p, c);
			} else
				strcpy(f->key, f->name + (f->name[0] == '@'));
			return 1;
		}
		s += n;
	}
}

/* An attribute as parsed, before it is set on the op. */
typedef struct Av {
	const char *key;
	int kind;          /* A_INT, A_FLOAT, A_STR, A_INTS */
	int64_t i;
	double f;
	const char *s;
	int64_t *ints;
	int n;
	int isint;         /* a number the archive gave as an int (or bool) */
	int isbool;        /* ... as a bool */
} Av;

/* The node being converted. */
typedef struct Node {
	Graph *g;
	Fn *fn;
	const Aten *a;
	const char *node, *target;
	json_t *json;
	int in[MAXIN], nin;
	int slot[MAXF];    /* per schema field: its operand index, or -1 */
	int kind;          /* the IR op: the entry's, unless a hook changes it */
	Av av[MAXF];
	int nav;
} Node;

static _Noreturn void __attribute__((format(printf, 2, 3)))
bad(const Node *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	g_err(c->g, "node '%s' (%s): %s", c->node, c->target, msg);
}

static const char *
unionkey(json_t *u)
{
	const char *k = json_is_object(u) ? json_object_iter_key(json_object_iter(u)) : NULL;
	return k ? k : "?";
}

/* A JSON float: a number, or "inf", "-inf", "NaN" as strings. */
static int
number(json_t *v, double *out)
{
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return 1;
	}
	const char *s = json_string_value(v);
	if (!s)
		return 0;
	if (strcmp(s, "inf") == 0 || strcmp(s, "Infinity") == 0)
		*out = INFINITY;
	else if (strcmp(s, "-inf") == 0 || strcmp(s, "-Infinity") == 0)
		*out = -INFINITY;
	else if (strcmp(s, "NaN") == 0 || strcmp(s, "nan") == 0)
		*out = NAN;
	else
		return 0;
	return 1;
}

static int
isfloat(int dt)
{
	return dt == DP_F16 || dt == DP_F32 || dt == DP_F64 || dt == DP_BF16;
}

/* A Python number argument (as_int, as_bool, as_float): 0 when it is none. */
static int
pynumber(json_t *arg, double *x, int *isint, int *isbool)
{
	json_t *v;

	*isbool = 0;
	*isint = 1;
	if ((v = json_object_get(arg, "as_int")) && json_is_integer(v))
		*x = (double)json_integer_value(v);
	else if ((v = json_object_get(arg, "as_bool")) && json_is_boolean(v)) {
		*x = json_is_true(v);
		*isbool = 1;
	} else if ((v = json_object_get(arg, "as_float")) && number(v, x))
		*isint = 0;
	else
		return 0;
	return 1;
}

/* A scalar argument as a rank-0 const of dtype like. */
static int
scalar(const Node *c, const char *name, json_t *arg, int like)
{
	double x;
	int isint, isbool;

	if (!pynumber(arg, &x, &isint, &isbool))
		bad(c, "argument '%s' (%s) is neither a tensor nor a number", name, unionkey(arg));
	if (like < 0)
		bad(c, "argument '%s' is a number but the op has no tensor operand", name);
	if ((!isint && !isfloat(like)) || (like == DP_BOOL && x != 0 && x != 1))
		bad(c, "a %s scalar with a %s tensor, in an op that keeps the tensor's dtype (in "
		    "place, or a value written into it)", isint ? "int" : "float", dp_dtype_name[like]);
	static const double lo[DP_NDTYPE] = { [DP_U8] = 0, [DP_I8] = -128, [DP_I16] = -32768,
	                                      [DP_I32] = -2147483648.0, [DP_I64] = -9223372036854775808.0 };
	static const double hi[DP_NDTYPE] = { [DP_U8] = 256, [DP_I8] = 128, [DP_I16] = 32768,
	                                      [DP_I32] = 2147483648.0, [DP_I64] = 9223372036854775808.0 };
	if (hi[like] > 0 && !(x >= lo[like] && x < hi[like]))
		bad(c, "scalar %.17g does not fit a %s tensor", x, dp_dtype_name[like]);
	return g_scalar(c->g, x, like);
}

/* Op kind on in[0..n-1], its dtype attribute dt (or none), inferred: its
 * result, for a hook that computes the node in more than one op. */
static int
preop(Node *c, int kind, const int *in, int n, const char *dt)
{
	int op = dp_addop(c->fn, kind, in, n);
	Err err = { 0 };
	if (dt)
		dp_sets(c->fn, op, "dtype", dt);
	if (dp_infer(c->fn, op, &err))
		bad(c, "%s", err.msg);
	return c->fn->op[op].out[0];
}

static const char *
tensorname(json_t *arg)
{
	return json_string_value(json_object_get(json_object_get(arg, "as_tensor"), "name"));
}

/* The name of a symbolic scalar argument (as_sym_int, as_sym_float or
 * as_sym_bool naming a value), or NULL. */
static const char *
symname(json_t *arg)
{
	static const char *const keys[] = { "as_sym_int", "as_sym_float", "as_sym_bool" };
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		const char *n = json_string_value(json_object_get(json_object_get(arg, keys[i]), "as_name"));
		if (n)
			return n;
	}
	return NULL;
}

static Av *
newav(Node *c, const char *key, int kind)
{
	if (c->nav == MAXF)
		dp_die("too many attributes");
	Av *v = &c->av[c->nav++];
	memset(v, 0, sizeof *v);
	v->key = dp_strdup(c->fn->arena, key);   /* key may be a schema Field on the stack */
	v->kind = kind;
	return v;
}

/* An int-list attribute key of t's sizes. */
static void
sizesav(Node *c, const char *key, const Type *t)
{
	Av *v = newav(c, key, A_INTS);
	v->ints = dp_alloc(c->fn->arena, t->rank ? (size_t)t->rank : 1, sizeof *v->ints);
	for (int i = 0; i < t->rank; i++)
		v->ints[v->n++] = t->dim[i];
}

static Av *
findav(Node *c, const char *key)
{
	for (int i = 0; i < c->nav; i++)
		if (c->av[i].key && strcmp(c->av[i].key, key) == 0)
			return &c->av[i];
	return NULL;
}

static void
dropav(Node *c, const char *key)
{
	Av *v = findav(c, key);
	if (v)
		v->key = NULL;
}

/* An attribute from its schema default text. */
static void
fromdefault(Node *c, const Field *f)
{
	const char *d = f->def;
	if (strncmp(f->kind, "is", 2) == 0) {
		Av *v = newav(c, f->key, A_INTS);
		v->ints = dp_alloc(c->fn->arena, (size_t)f->deflen + 1, sizeof *v->ints);
		for (const char *p = d; p < d + f->deflen; p++) {
			v->ints[v->n++] = strtoll(p, (char **)&p, 10);
			if (*p != ',')
				break;
		}
	} else if (f->kind[0] == 'i') {
		Av *v = newav(c, f->key, A_INT);
		v->i = strtoll(d, NULL, 10);
		v->isint = 1;
	} else if (f->kind[0] == 's') {
		newav(c, f->key, A_STR)->s = dp_strndup(c->fn->arena, d, (size_t)f->deflen);
	} else {
		Av *v = newav(c, f->key, A_FLOAT);
		v->f = strtod(d, NULL);
		v->isint = strspn(d, "-0123456789") == (size_t)f->deflen;
	}
}

/* An attribute from the node's argument v (not none). */
static void
fromarg(Node *c, const Field *f, json_t *v)
{
	json_t *x;
	if (strncmp(f->kind, "is", 2) == 0) {
		Av *a = newav(c, f->key, A_INTS);
		if ((x = json_object_get(v, "as_int")) && json_is_integer(x)) {
			a->ints = dp_alloc(c->fn->arena, 1, sizeof *a->ints);
			a->ints[a->n++] = json_integer_value(x);
			return;
		}
		x = json_object_get(v, "as_ints");
		if (!json_is_array(x))
			bad(c, "argument '%s' (%s) is not an int list", f->name, unionkey(v));
		size_t n = json_array_size(x);
		if (n > DP_MAXRANK * 4)
			bad(c, "argument '%s' has %zu entries", f->name, n);
		a->ints = dp_alloc(c->fn->arena, n + 1, sizeof *a->ints);
		for (size_t k = 0; k < n; k++) {
			if (!json_is_integer(json_array_get(x, k)))
				bad(c, "argument '%s' has a symbolic entry; DevProc needs static shapes", f->name);
			a->ints[a->n++] = json_integer_value(json_array_get(x, k));
		}
	} else if (strncmp(f->kind, "dt", 2) == 0) {
		x = json_object_get(v, "as_scalar_type");
		int d = json_is_integer(x) && json_integer_value(x) >= 0 && json_integer_value(x) < 256
		        ? dp_dtype_from_pt2((int)json_integer_value(x)) : -1;
		if (!json_is_integer(x))
			bad(c, "argument '%s' (%s) is not a dtype", f->name, unionkey(v));
		if (d < 0 && json_integer_value(x) == PT2_COMPLEX64 && c->a->hook == H_TOCOPY) {
			newav(c, f->key, A_STR)->s = "complex64";   /* H_TOCOPY's */
			return;
		}
		if (d < 0)
			bad(c, "argument '%s': unsupported dtype (schema enum %lld)", f->name,
			    (long long)json_integer_value(x));
		newav(c, f->key, A_STR)->s = dp_dtype_name[d];
	} else if (f->kind[0] == 's') {
		x = json_object_get(v, "as_string");
		if (!json_is_string(x))
			bad(c, "argument '%s' (%s) is not a string", f->name, unionkey(v));
		newav(c, f->key, A_STR)->s = dp_strdup(c->fn->arena, json_string_value(x));
	} else if (f->kind[0] == 'i') {
		Av *a = newav(c, f->key, A_INT);
		a->isint = 1;
		if ((x = json_object_get(v, "as_int")) && json_is_integer(x))
			a->i = json_integer_value(x);
		else if ((x = json_object_get(v, "as_bool")) && json_is_boolean(x))
			a->i = json_is_true(x);
		else
			bad(c, "argument '%s' (%s) is not an int", f->name, unionkey(v));
	} else {
		Av *a = newav(c, f->key, A_FLOAT);
		if (!pynumber(v, &a->f, &a->isint, &a->isbool))
			bad(c, "argument '%s' (%s) is not a number", f->name, unionkey(v));
	}
}

/* Checks an argument of kind 0, dev or lay. */
static void
check(Node *c, const Field *f, json_t *arg, int none)
{
	json_t *x;
	double d;
	int isint, isbool;
	if (none)
		return;
	if (strcmp(f->kind, "0") == 0) {
		if (pynumber(arg, &d, &isint, &isbool) && d == 0)
			return;
		bad(c, "argument '%s' = %s is not supported", f->name, unionkey(arg));
	}
	if (strcmp(f->kind, "dev") == 0) {
		const char *t = json_string_value(json_object_get(json_object_get(arg, "as_device"), "type"));
		if (!t || (strcmp(t, "cpu") && strcmp(t, "cuda")))
			bad(c, "argument '%s': only cpu and cuda devices are supported, not %s", f->name,
			    t ? t : unionkey(arg));
		return;
	}
	if (strcmp(f->kind, "lay") == 0) {
		x = json_object_get(arg, "as_layout");
		if (!json_is_integer(x) || json_integer_value(x) != 7)
			bad(c, "argument '%s': only the strided layout is supported", f->name);
		return;
	}
}

/* The argument of node c named name, marking it used; NULL when omitted. */
static json_t *
argument(Node *c, const char *name, char *used)
{
	json_t *args = json_object_get(c->json, "inputs");
	for (size_t j = 0; j < json_array_size(args); j++) {
		json_t *e = json_array_get(args, j);
		const char *n = json_string_value(json_object_get(e, "name"));
		if (n && strcmp(n, name) == 0) {
			used[j] = 1;
			return json_object_get(e, "arg");
		}
	}
	return NULL;
}

static int
addin(Node *c, int v)
{
	if (c->nin == MAXIN)
		bad(c, "more than %d tensor operands", MAXIN);
	c->in[c->nin] = v;
	return c->nin++;
}

/* One SymInt or SymBool of an argument ({"as_name": N} or {"as_int": V}):
 * its integer (folded by import, or the export example's value). */
static int64_t
symof(Node *c, json_t *e)
{
	const char *n = json_string_value(json_object_get(e, "as_name"));
	json_t *x = json_object_get(e, "as_int");
	int64_t v;
	if (json_is_integer(x))
		return json_integer_value(x);
	if ((x = json_object_get(e, "as_bool")) && json_is_boolean(x))
		return json_is_true(x);
	if (n && !g_symget(c->g, n, &v) && g_symunbacked(c->g, n))
		bad(c, "a symbolic argument '%s' is the run-time length of a data-dependent result "
		    "(aten.nonzero, a boolean mask index), which DevProc keeps only as a bounded "
		    "leading size, not as a value (formats/ops.md, \"Bounded sizes\")", n);
	if (!n || !g_symget(c->g, n, &v))
		bad(c, "a symbolic argument '%s' has no value import knows", n ? n : "?");
	return v;
}

/* Rewrites a symbolic argument (as_sym_int, as_sym_ints, as_sym_bool; the
 * sizes of a dynamic-shape export, taken at its example) into the plain
 * int, int list or bool it stands for. */
static void
symargs(Node *c, json_t *v)
{
	json_t *x;
	if ((x = json_object_get(v, "as_sym_int"))) {
		json_object_set_new(v, "as_int", json_integer(symof(c, x)));
	} else if ((x = json_object_get(v, "as_sym_bool"))) {
		json_object_set_new(v, "as_bool", json_boolean(symof(c, x)));
	} else if ((x = json_object_get(v, "as_sym_ints")) && json_is_array(x)) {
		json_t *l = json_array();
		for (size_t k = 0; k < json_array_size(x); k++)
			json_array_append_new(l, json_integer(symof(c, json_array_get(x, k))));
		json_object_set_new(v, "as_ints", l);
	}
}

/* Python scalars of a higher kind than the tensors among an op's S
 * operands (a float beside an integer or bool tensor, an int beside a bool
 * one; also a float .item()): the op computes in PyTorch's result type, the
 * default dtype of that kind (f32, i64), so the tensors among the S
 * operands are cast to it (c10's result_type: dimensioned tensors win
 * within a kind, a scalar of a higher kind wins over them).  Only where the
 * S operands are the op's arithmetic (two or more of them); an in-place op
 * keeps its tensor's dtype.  Returns the dtype the scalars are made in. */
static int
scalarpromote(Node *c, const Field *fs, int nf, json_t **arg, const char *sym, int like)
{
	int ns = 0, to = like;

	for (int i = 0; i < nf; i++)
		ns += fs[i].kind[0] == 'S';
	if (ns < 2)
		return like;
	for (int i = 0; i < nf; i++) {
		int k = c->slot[i], isint, isbool;
		double x;
		if (fs[i].kind[0] != 'S' || k < 0)
			continue;
		if (c->in[k] == -2 && pynumber(arg[i], &x, &isint, &isbool)) {
			if (!isint && !isfloat(to))
				to = DP_F32;
			else if (isint && !isbool && to == DP_BOOL)
				to = DP_I64;
		} else if (sym[i]) {
			int dt = c->fn->val[c->in[k]].t.dtype;
			if (isfloat(dt) && !isfloat(to))
				to = DP_F32;
			else if (dt != DP_BOOL && to == DP_BOOL)
				to = DP_I64;
		}
	}
	if (to == like)
		return like;
	for (int i = 0; i < nf; i++) {
		int k = c->slot[i];
		if (fs[i].kind[0] == 'S' && k >= 0 && c->in[k] >= 0 && !sym[i] &&
		    c->fn->val[c->in[k]].t.dtype != to)
			c->in[k] = preop(c, Ocast, &c->in[k], 1, dp_dtype_name[to]);
	}
	return to;
}

/* Reads every argument of the node by the schema: operands (scalars made
 * consts), attributes (defaults filled in). */
static void
readargs(Node *c)
{
	json_t *args = json_object_get(c->json, "inputs"), *arg[MAXF];
	char *used = dp_alloc(c->fn->arena, json_array_size(args) + 1, 1);
	Field fs[MAXF];
	int nf, like = -1, tlike = -1;
	char sym[MAXF] = { 0 };   /* an S field given a symbolic scalar */

	for (nf = 0; field(c->a->args, nf, &fs[nf]); nf++)
		if (nf + 1 >= MAXF)
			dp_die("ATen schema too long: %s", c->a->target);
	for (int i = 0; i < nf; i++) {
		Field *f = &fs[i];
		json_t *v = f->name[0] == '@' ? NULL : argument(c, f->name, used);
		int64_t known;
		/* a value's .item() stays a rank-0 tensor; other symbols are folded */
		const char *item = v && f->kind[0] == 'S' && symname(v) &&
		                   !g_symget(c->g, symname(v), &known) ? symname(v) : NULL;
		if (v && !item)
			symargs(c, v);
		int none = !v || json_object_get(v, "as_none");
		const char *tn = v ? tensorname(v) : NULL;
		arg[i] = v;
		c->slot[i] = -1;
		switch (f->kind[0]) {
		case 'T': case 'S': case 'W':
			if (none) {
				if (f->kind[0] != 'W' && f->kind[1] != '?')
					bad(c, "missing tensor argument '%s'", f->name);
				if (f->kind[0] == 'W')
					c->slot[i] = addin(c, -1);   /* filled below */
				continue;
			}
			if (tn) {
				c->slot[i] = addin(c, g_value(c->g, tn, c->node));
				int dt = c->fn->val[c->in[c->slot[i]]].t.dtype;
				if (f->kind[0] == 'S' && like < 0)
					like = dt;
				if (f->kind[0] != 'S' && tlike < 0)
					tlike = dt;
			} else if (item) {
				/* a value's .item() (aten._local_scalar_dense): its rank-0 tensor */
				c->slot[i] = addin(c, g_value(c->g, item, c->node));
				sym[i] = 1;
			} else if (f->kind[0] == 'S')
				c->slot[i] = addin(c, -2);   /* a scalar, made below */
			else
				bad(c, "argument '%s' (%s) is not a tensor", f->name, unionkey(v));
			break;
		case 'L': {
			json_t *l = json_object_get(v, "as_tensors");
			if (!json_is_array(l))
				bad(c, "argument '%s' (%s) is not a list of tensors", f->name,
				    v ? unionkey(v) : "omitted");
			for (size_t k = 0; k < json_array_size(l); k++) {
				const char *n = json_string_value(json_object_get(json_array_get(l, k), "name"));
				if (!n)
					bad(c, "argument '%s': entry %zu is not a tensor", f->name, k);
				addin(c, g_value(c->g, n, c->node));
			}
			break;
		}
		case '0': case '-':
			check(c, f, v, none);
			break;
		default:
			if (strcmp(f->kind, "dev") == 0 || strcmp(f->kind, "lay") == 0) {
				check(c, f, v, none);
				break;
			}
			if (!none)
				fromarg(c, f, v);
			else if (f->def)
				fromdefault(c, f);
			else if (!strchr(f->kind, '?'))
				bad(c, "missing argument '%s'", f->name);
		}
	}
	for (size_t j = 0; j < json_array_size(args); j++)
		if (!used[j])
			bad(c, "unexpected argument '%s'",
			    json_string_value(json_object_get(json_array_get(args, j), "name")));
	if (like >= 0 && !(c->a->flags & F_INPLACE))
		like = scalarpromote(c, fs, nf, arg, sym, like);
	if (like < 0)
		like = tlike;
	for (int i = 0; i < nf; i++) {
		int k = c->slot[i];
		if (k < 0)
			continue;
		if (c->in[k] == -2)
			c->in[k] = scalar(c, fs[i].name, arg[i], like);
		else if (sym[i] && like >= 0 && c->fn->val[c->in[k]].t.dtype != like) {
			/* as a Python scalar: the tensor's dtype, a float not into integers */
			int from = c->fn->val[c->in[k]].t.dtype;
			if (isfloat(from) && !isfloat(like))
				bad(c, "a float .item() with a %s tensor, in an op that keeps the tensor's "
				    "dtype (in place, or a value written into it)", dp_dtype_name[like]);
			c->in[k] = preop(c, Ocast, &c->in[k], 1, dp_dtype_name[like]);
		}
		else if (c->in[k] == -1) {   /* W: a per-channel const */
			const Type *x = &c->fn->val[c->in[0]].t;
			Type t = { .dtype = x->dtype, .dev = DEV_CPU, .rank = 1 };
			if (x->rank < 2)
				bad(c, "input must be [N,C,...], got %s", typestr(x));
			t.dim[0] = x->dim[1];
			c->in[k] = g_filled(c->g, &t, strtod(fs[i].def ? fs[i].def : "0", NULL));
		}
	}
}

/* ---- what the schema cannot say ---- */

static int
normdim(const Node *c, int64_t d, int rank)
{
	if (d < 0)
		d += rank;
	if (d < 0 || d >= (rank ? rank : 1))
		bad(c, "dim %lld is out of range for rank %d", (long long)d, rank);
	return (int)d;
}

/* unsqueeze and squeeze as aten.view with the computed size. */
static void
viewsize(Node *c)
{
	const Type *x = &c->fn->val[c->in[0]].t;
	Av *d = findav(c, "dim");
	int64_t *size = dp_alloc(c->fn->arena, DP_MAXRANK + 1, sizeof *size);
	int n = 0, drop[DP_MAXRANK] = { 0 };

	if (c->a->hook == H_UNSQUEEZE) {
		int at = normdim(c, d->i, x->rank + 1);
		if (x->rank + 1 > DP_MAXRANK)
			bad(c, "the result would have rank %d (at most %d)", x->rank + 1, DP_MAXRANK);
		for (int i = 0; i <= x->rank; i++) {
			if (i == at)
				size[n++] = 1;
			if (i < x->rank)
				size[n++] = x->dim[i];
		}
	} else {
		for (int i = 0; i < x->rank; i++)
			drop[i] = !d && x->dim[i] == 1;
		for (int k = 0; d && k < d->n; k++) {
			int a = normdim(c, d->ints[k], x->rank);
			drop[a] = x->rank > 0 && x->dim[a] == 1;
		}
		for (int i = 0; i < x->rank; i++)
			if (!drop[i])
				size[n++] = x->dim[i];
	}
	dropav(c, "dim");
	Av *s = newav(c, "size", A_INTS);
	s->ints = size;
	s->n = n;
}

/* An op of kind on operands in[0..n-1] with an int attribute key = v (key
 * NULL: none) and a second key2 = v2 (NULL: none); its first result. */
static int
addop(Node *c, int kind, const int *in, int n, const char *key, int64_t v, const char *key2,
      int64_t v2)
{
	int op = dp_addop(c->fn, kind, in, n);
	Err err = { 0 };
	if (key)
		dp_seti(c->fn, op, key, v);
	if (key2)
		dp_seti(c->fn, op, key2, v2);
	if (dp_infer(c->fn, op, &err))
		bad(c, "%s", err.msg);
	return c->fn->op[op].out[0];
}

/* x[mask], a boolean mask of rank k over x's dims dim..dim+k-1: the
 * coordinates of its true elements (aten.nonzero, a bounded size), one
 * aten.select of them per dim as the index tensors. */
static void
maskindex(Node *c, int dim)
{
	int m = c->in[1], nz, k;
	const Type *x = &c->fn->val[c->in[0]].t, *t = &c->fn->val[m].t;
	if (c->nin != 2)
		bad(c, "a boolean mask index with other index tensors is not supported");
	if (t->rank < 1 || dim + t->rank > x->rank ||
	    memcmp(t->dim, x->dim + dim, (size_t)t->rank * sizeof t->dim[0]) != 0)
		bad(c, "the boolean mask %s does not match the dims it indexes of %s", typestr(t),
		    typestr(x));
	if (t->rank > 4)
		bad(c, "a boolean mask of rank %d (at most 4)", t->rank);
	nz = addop(c, Anonzero, &m, 1, NULL, 0, NULL, 0);
	c->nin = 1;
	for (k = 0; k < t->rank && k < 4; k++)
		addin(c, addop(c, Aselect, &nz, 1, "dim", 1, "index", k));
}

/* index.Tensor: the index tensors at adjacent positions from dim on (one:
 * aten.index; several: aten.index_n, which dp-legalize flattens); with put
 * (index_put), they follow the input and the values. */
static void
index1(Node *c, int put)
{
	json_t *l = NULL, *arg = NULL, *args = json_object_get(c->json, "inputs");
	for (size_t j = 0; j < json_array_size(args); j++) {
		const char *n = json_string_value(json_object_get(json_array_get(args, j), "name"));
		if (n && strcmp(n, "indices") == 0)
			arg = json_object_get(json_array_get(args, j), "arg");
	}
	if (!(l = json_object_get(arg, "as_optional_tensors")) && !(l = json_object_get(arg, "as_tensors")))
		bad(c, "argument 'indices' (%s) is not a list of tensors", arg ? unionkey(arg) : "omitted");
	int dim = -1;
	for (size_t k = 0; k < json_array_size(l); k++) {
		json_t *e = json_array_get(l, k);
		const char *n = tensorname(e);
		if (!n)
			n = json_string_value(json_object_get(e, "name"));
		if (!n)
			continue;
		if (dim >= 0 && dim + c->nin - 1 - put != (int)k)
			bad(c, "index tensors separated by a slice are not supported");
		if (dim < 0)
			dim = (int)k;
		addin(c, g_value(c->g, n, c->node));
	}
	if (dim < 0)
		bad(c, "no index tensor");
	if (c->nin > 5 + put)
		bad(c, "more than 4 index tensors");
	if (!put && c->fn->val[c->in[1]].t.dtype == DP_BOOL)
		maskindex(c, dim);
	if (c->nin > 2 && !put)
		c->kind = Aindexn;
	newav(c, "dim", A_INT)->i = dim;
}

/* A dtype attribute defaulting to name when the node gives none. */
static void
dtypedef(Node *c, const char *name)
{
	if (!findav(c, "dtype"))
		newav(c, "dtype", A_STR)->s = name;
}

/* The result bound to operand k: no op at all. */
static void
identity(Node *c, int k)
{
	json_t *out = json_array_get(json_object_get(c->json, "outputs"), 0);
	const char *on = tensorname(out);
	Type want, *got = &c->fn->val[c->in[k]].t;
	if (!g_type(c->g, on, &want))
		bad(c, "the archive gives no type for its result '%s'", on);
	if (got->dtype != want.dtype || got->rank != want.rank || got->bnd != want.bnd ||
	    memcmp(got->dim, want.dim, (size_t)want.rank * sizeof want.dim[0]) != 0)
		bad(c, "import computes %s but the archive says %s", typestr(got), typestr(&want));
	char what[160];
	snprintf(what, sizeof what, "node '%.64s' (%.64s)", c->node, c->target);
	g_define(c->g, on, c->in[k], what);
}

/* aten.sym_size, sym_numel, sym_stride, sym_storage_offset,
 * sym_is_contiguous of a tensor of static type: the int they stand for
 * (strides and offset from the archive's metadata of the tensor), bound to
 * the result's name for the nodes that take it as an argument. */
static void
sym(Node *c)
{
	json_t *out = json_array_get(json_object_get(c->json, "outputs"), 0), *o;
	const char *on = NULL;
	const Type *x = &c->fn->val[c->in[0]].t;
	const char *xn = tensorname(json_object_get(json_array_get(json_object_get(c->json,
	                                                                           "inputs"), 0), "arg"));
	json_t *meta = xn ? g_meta(c->g, xn) : NULL, *st = json_object_get(meta, "strides");
	Av *dv = findav(c, "dim");
	int64_t v = 0, s[DP_MAXRANK], e = 1;
	int d = dv ? normdim(c, dv->i, x->rank) : 0;

	if (!out || json_object_get(out, "as_none"))
		return;   /* its value unused (folded by the export) */
	if ((o = json_object_get(out, "as_sym_int")) || (o = json_object_get(out, "as_sym_bool")))
		on = json_string_value(json_object_get(o, "as_name"));
	if (!on)
		bad(c, "its result is not a named SymInt or SymBool");
	if (x->bnd && (c->a->target[9] == 'n' || (strcmp(c->a->target, "aten.sym_size.int") == 0 && d == 0)))
		return;   /* a run-time length: no value import knows (symof says so) */
	for (int i = x->rank - 1; i >= 0; i--) {   /* the strides, dense unless the archive says */
		s[i] = e;
		e *= x->dim[i];
	}
	for (int i = 0; i < x->rank && json_array_size(st) == x->rank; i++) {
		if (!g_hint(json_array_get(st, (size_t)i), &s[i]))
			bad(c, "a stride of '%s' is symbolic with no example value", xn);
	}
	switch (c->kind == Aclone ? c->a->target[9] : 0) {
	case 's':   /* sym_size, sym_stride, sym_storage_offset */
		if (strcmp(c->a->target, "aten.sym_size.int") == 0)
			v = x->rank ? x->dim[d] : 1;
		else if (strcmp(c->a->target, "aten.sym_stride.int") == 0)
			v = x->rank ? s[d] : 1;
		else {
			json_t *so = json_object_get(meta, "storage_offset");
			if (so && !g_hint(so, &v))
				bad(c, "the storage offset of '%s' is symbolic with no example value", xn);
		}
		break;
	case 'n':
		v = dp_numel(x);
		break;
	case 'i':   /* sym_is_contiguous: the strides are the dense ones */
		v = 1;
		e = 1;
		for (int i = x->rank - 1; i >= 0; i--) {
			if (x->dim[i] != 1 && s[i] != e)
				v = 0;
			e *= x->dim[i];
		}
		break;
	}
	g_symset(c->g, on, v);
}


/* The node's attributes onto op. */
static void
setavs(Node *c, int op)
{
	for (int i = 0; i < c->nav; i++) {
		const Av *v = &c->av[i];
		if (!v->key)
			continue;
		switch (v->kind) {
		case A_INT: dp_seti(c->fn, op, v->key, v->i); break;
		case A_FLOAT: dp_setf(c->fn, op, v->key, v->f); break;
		case A_STR: dp_sets(c->fn, op, v->key, v->s); break;
		default: dp_setints(c->fn, op, v->key, v->ints, v->n); break;
		}
	}
}

/* The node's result k (0: the first) as value v, for hooks that compute
 * the node in several ops; nothing where the graph does not read it. */
static void
defout(Node *c, int k, int v)
{
	const char *on = tensorname(json_array_get(json_object_get(c->json, "outputs"), (size_t)k));
	char what[160];

	if (!on)
		return;
	snprintf(what, sizeof what, "node '%.64s' (%.64s)", c->node, c->target);
	if (k)
		g_result(c->g, on, v);
	else
		g_define(c->g, on, v, what);
}

/* Op op's types inferred (an error is the node's): its result. */
static int
midend(Node *c, int op)
{
	Err err = { 0 };
	if (dp_infer(c->fn, op, &err))
		bad(c, "%s", err.msg);
	return c->fn->op[op].out[0];
}

/* An op of kind on in[0..n-1] with the node's attributes (withav) or
 * none, inferred: its result (for hooks that compute the node in several
 * ops). */
static int
midop(Node *c, int kind, const int *in, int n, int withav)
{
	int op = dp_addop(c->fn, kind, in, n);

	if (withav)
		setavs(c, op);
	return midend(c, op);
}

/* log1p(exp(−|t|)): the term logaddexp and log_sigmoid add to the larger
 * operand (at most log 2, never overflowing); *e (where given) gets
 * exp(−|t|). */
static int
midsoftterm(Node *c, int t, int *e)
{
	t = midop(c, Aabs, &t, 1, 0);
	t = midop(c, Aneg, &t, 1, 0);
	t = midop(c, Aexp, &t, 1, 0);
	if (e)
		*e = t;
	return midop(c, Alog1p, &t, 1, 0);
}

/* The scale factors an upsampling node was given (its scale_factors list,
 * or its scales / scales_d, scales_h, scales_w numbers), into sf[0..n-1]
 * (0 where none): PyTorch then takes a source position's scale from them,
 * not from the sizes. */
static void
scalesof(Node *c, double *sf, int n)
{
	json_t *args = json_object_get(c->json, "inputs");
	static const char *const one[3][3] = { { "scales" }, { "scales_h", "scales_w" },
	                                       { "scales_d", "scales_h", "scales_w" } };

	for (int k = 0; k < n; k++)
		sf[k] = 0;
	for (size_t j = 0; j < json_array_size(args); j++) {
		json_t *e = json_array_get(args, j), *a = json_object_get(e, "arg"), *l;
		const char *name = json_string_value(json_object_get(e, "name"));
		double v;
		int isint, isbool;
		if (!name || !a)
			continue;
		if (strcmp(name, "scale_factors") == 0 && json_is_array(l = json_object_get(a, "as_floats")))
			for (int k = 0; k < n && (size_t)k < json_array_size(l); k++)
				sf[k] = json_is_number(json_array_get(l, k)) ? json_number_value(json_array_get(l, k)) : 0;
		for (int k = 0; k < n && n <= 3; k++)
			if (strcmp(name, one[n - 1][k]) == 0 && pynumber(a, &v, &isint, &isbool))
				sf[k] = v;
	}
}

/* x [N, C, H, W] resampled to [N, C, oh, ow] by op kind (nearest,
 * bilinear with align_corners al), with the scale factors sh, sw given (0:
 * none). */
static int
midup(Node *c, int kind, int x, int64_t oh, int64_t ow, int al, double sh, double sw)
{
	int op = dp_addop(c->fn, kind, &x, 1);
	int64_t sz[2] = { oh, ow };
	dp_setints(c->fn, op, "output_size", sz, 2);
	if (kind != Aupnearest)
		dp_seti(c->fn, op, "align_corners", al);
	if (sh > 0)
		dp_setf(c->fn, op, "scale_h", sh);
	if (sw > 0)
		dp_setf(c->fn, op, "scale_w", sw);
	return midend(c, op);
}

/* aten.arange(n) in i64. */
static int
midarange(Node *c, int64_t n)
{
	int op = dp_addop(c->fn, Aarange, NULL, 0);
	dp_setf(c->fn, op, "start", 0);
	dp_setf(c->fn, op, "end", (double)n);
	dp_setf(c->fn, op, "step", 1);
	dp_sets(c->fn, op, "dtype", "i64");
	return midend(c, op);
}

/* x as an op of kind with the int-list attribute key v[0..n-1]
 * (aten.view's size, aten.permute's dims), inferred: its result. */
static int
midints(Node *c, int kind, int x, const char *key, const int64_t *v, int n)
{
	int op = dp_addop(c->fn, kind, &x, 1);
	dp_setints(c->fn, op, key, v, n);
	return midend(c, op);
}

static int
midview(Node *c, int x, const int64_t *size, int n)
{
	return midints(c, Aview, x, "size", size, n);
}

static int
midpermute(Node *c, int x, const int64_t *dims, int n)
{
	return midints(c, Apermute, x, "dims", dims, n);
}

/* Whether operand k of the node is complex in the archive (f32 [..., 2]
 * in the IR). */
static int
argcomplex(Node *c, int k)
{
	json_t *ins = json_object_get(c->json, "inputs");
	return g_complex(c->g, tensorname(json_object_get(json_array_get(ins, (size_t)k), "arg")));
}

/* Real x as a complex value: f32 [..., 2] of x and zeros (aten.stack). */
static int
midcomplex(Node *c, int x)
{
	int op, in[2];

	if (c->fn->val[x].t.rank >= DP_MAXRANK)
		bad(c, "a complex value of rank %d: at most %d", c->fn->val[x].t.rank + 1,
		    DP_MAXRANK - 1);
	if (c->fn->val[x].t.dtype != DP_F32)
		x = preop(c, Ocast, &x, 1, "f32");
	op = dp_addop(c->fn, Afulllike, &x, 1);
	dp_setf(c->fn, op, "value", 0);
	in[0] = x, in[1] = midend(c, op);
	op = dp_addop(c->fn, Astack, in, 2);
	dp_seti(c->fn, op, "dim", c->fn->val[x].t.rank);
	return midend(c, op);
}

/* x[start:end:step] along d (aten.slice). */
static int
midslicest(Node *c, int x, int d, int64_t start, int64_t end, int64_t step)
{
	int op = dp_addop(c->fn, Aslice, &x, 1);
	dp_seti(c->fn, op, "dim", d);
	dp_seti(c->fn, op, "start", start);
	dp_seti(c->fn, op, "end", end);
	if (step != 1)
		dp_seti(c->fn, op, "step", step);
	return midend(c, op);
}

static int
midslice(Node *c, int x, int d, int64_t start, int64_t end)
{
	return midslicest(c, x, d, start, end, 1);
}

/* Applies the entry's hook; returns 0 when the node needs no op. */
static int
hook(Node *c)
{
	Av *v;
	switch (c->a->hook) {
	case H_IDENTITY:
		identity(c, 0);
		return 0;
	case H_OUTSIZE: {
		/* given as scale factors: the sizes the archive's result has, and
		 * the factors, from which PyTorch takes the source positions */
		const char *on = tensorname(json_array_get(json_object_get(c->json, "outputs"), 0));
		Type t;
		double sf[2];
		scalesof(c, sf, 2);
		if (sf[0] > 0)
			newav(c, "scale_h", A_FLOAT)->f = sf[0];
		if (sf[1] > 0)
			newav(c, "scale_w", A_FLOAT)->f = sf[1];
		if (!findav(c, "output_size")) {
			if (!on || !g_type(c->g, on, &t) || t.rank < 2)
				bad(c, "needs output_size or a result of known shape");
			v = newav(c, "output_size", A_INTS);
			v->ints = dp_alloc(c->fn->arena, 2, sizeof *v->ints);
			v->ints[v->n++] = t.dim[t.rank - 2];
			v->ints[v->n++] = t.dim[t.rank - 1];
		}
		break;
	}
	case H_UNSQUEEZE:
	case H_SQUEEZE:
		viewsize(c);
		break;
	case H_INDEX:
		index1(c, 0);
		break;
	case H_INDEXPUT:   /* x, values, then the index tensors */
		index1(c, 1);
		break;
	case H_DIFF:   /* which of the optional prepend (field 3), append (4) are there */
		newav(c, "prepend", A_INT)->i = c->slot[3] >= 0;
		newav(c, "append", A_INT)->i = c->slot[4] >= 0;
		break;
	case H_CLAMPT:   /* which of the optional min (field 1), max (2) are there */
		newav(c, "has_min", A_INT)->i = c->slot[1] >= 0;
		newav(c, "has_max", A_INT)->i = c->slot[2] >= 0;
		break;
	case H_ARANGE: {
		int isint = 1;
		for (int i = 0; i < c->nav; i++)
			if (c->av[i].key && c->av[i].kind == A_FLOAT)
				isint &= c->av[i].isint;
		dtypedef(c, isint ? "i64" : "f32");
		break;
	}
	case H_FULL:
		v = findav(c, "value");
		dtypedef(c, v->isbool ? "bool" : v->isint ? "i64" : "f32");
		break;
	case H_FLOATDEF:
		dtypedef(c, "f32");
		break;
	case H_CVIEW: {   /* the archive's result type: complex as f32 [..., 2] */
		const char *on = tensorname(json_array_get(json_object_get(c->json, "outputs"), 0));
		Type t;
		if (!on || !g_type(c->g, on, &t))
			bad(c, "the archive gives no type for its result");
		sizesav(c, "size", &t);
		break;
	}
	case H_FFT: {   /* the _fft ops' attributes from torch.fft's arguments */
		int c2c = c->kind == Afftc2c, c2r = c->kind == Afftc2r;
		int inv = c2r || (c2c && strstr(c->target, "fft_ifft") != NULL);
		if (c2c && !argcomplex(c, 0))   /* ifft of a real input */
			c->in[0] = midcomplex(c, c->in[0]);
		const Type *x = &c->fn->val[c->in[0]].t;
		int r = x->rank - (c2r || c2c);
		Av *d = findav(c, "dim"), *n = findav(c, "n"), *sz = findav(c, "s"), *nm = findav(c, "norm");
		int64_t *dims = dp_alloc(c->fn->arena, DP_MAXRANK + 1, sizeof *dims), last;
		int nd = 0;
		const char *norm = nm ? nm->s : "backward";
		if (!d)   /* rfftn, irfftn without dim: the last len(s) dims, or all */
			for (int i = sz ? r - sz->n : 0; i < r; i++)
				dims[nd++] = i;
		else
			for (int i = 0; i < d->n && nd < DP_MAXRANK; i++)
				dims[nd++] = normdim(c, d->ints[i], r);
		if (nd == 0 || (sz && sz->n != nd))
			bad(c, "s and dim differ in length");
		if (n && nd != 1)
			bad(c, "n with several dims");
		last = dims[nd - 1];
		for (int i = 0; i < nd - (c2r ? 1 : 0); i++) {
			int64_t want = n ? n->i : sz ? sz->ints[i] : x->dim[dims[i]];
			if (want != x->dim[dims[i]])
				bad(c, "a signal size (%lld) other than the input's (%lld) along dim %lld: "
				    "padding or trimming is not supported", (long long)want,
				    (long long)x->dim[dims[i]], (long long)dims[i]);
		}
		if (c2r)   /* missing bins read as zeros, extra ones are not read (dp-legalize) */
			newav(c, "last_dim_size", A_INT)->i = n ? n->i : sz ? sz->ints[nd - 1]
			                                       : 2 * (x->dim[last] - 1);
		else if (c2c)
			newav(c, "forward", A_INT)->i = !inv;
		else
			newav(c, "onesided", A_INT)->i = strstr(c->target, "fft_fft") == NULL;
		if (strcmp(norm, "backward") && strcmp(norm, "ortho") && strcmp(norm, "forward"))
			bad(c, "norm must be backward, ortho or forward, not '%s'", norm);
		newav(c, "normalization", A_INT)->i = strcmp(norm, "ortho") == 0 ? 1 :
		                                      (strcmp(norm, "forward") == 0) == !inv ? 2 : 0;
		dropav(c, "n");
		dropav(c, "s");
		dropav(c, "norm");
		if (d)
			d->ints = dims, d->n = nd;
		else {
			d = newav(c, "dim", A_INTS);
			d->ints = dims;
			d->n = nd;
		}
		break;
	}
	case H_ITEM: {   /* .item(): the symbolic scalar names the value, viewed rank 0 */
		const char *on = symname(json_array_get(json_object_get(c->json, "outputs"), 0));
		int x = c->in[0];
		Type t = c->fn->val[x].t;
		if (!on)
			bad(c, "its result is not a symbolic scalar");
		if (dp_numel(&t) != 1)
			bad(c, "needs a tensor of one element, not %s", typestr(&t));
		if (t.rank) {
			int64_t none[1] = { 0 };
			int op = dp_addop(c->fn, Aview, &x, 1);
			dp_setints(c->fn, op, "size", none, 0);
			x = midend(c, op);
		}
		char what[160];
		snprintf(what, sizeof what, "node '%.64s' (%.64s)", c->node, c->target);
		g_define(c->g, on, x, what);
		return 0;
	}
	case H_STD:   /* √var, var with the node's dim, correction, keepdim */
		c->in[0] = midop(c, Avar, c->in, 1, 1);
		c->kind = Asqrt, c->nin = 1, c->nav = 0;
		break;
	case H_VARMEAN: {   /* (var or √var, mean): both results the graph reads */
		json_t *outs = json_object_get(c->json, "outputs");
		const char *on[2];
		int v[2], k;
		v[0] = midop(c, Avar, c->in, 1, 1);
		if (strstr(c->target, "std_mean"))
			v[0] = midop(c, Asqrt, v, 1, 0);
		dropav(c, "correction");
		if (!findav(c, "dim"))   /* (the default form: all of x) */
			newav(c, "dim", A_INTS)->n = 0;
		v[1] = midop(c, Amean, c->in, 1, 1);
		for (k = 0; k < 2; k++) {
			Type want;
			if (!(on[k] = tensorname(json_array_get(outs, (size_t)k))))
				continue;   /* a result the graph does not read */
			if (!g_type(c->g, on[k], &want) || !dp_type_eq(&c->fn->val[v[k]].t, &want))
				bad(c, "import computes %s for its result %d, not the archive's",
				    typestr(&c->fn->val[v[k]].t), k);
			defout(c, k, v[k]);
		}
		return 0;
	}
	case H_LOGSUMEXP: {   /* m = amax (kept dims), 0 where ±inf; log Σ exp(x − m) + m */
		const Type *x = &c->fn->val[c->in[0]].t;
		Av *keep = findav(c, "keepdim");
		int k = keep ? (int)keep->i : 0, in[3], m, e;
		if (!isfloat(x->dtype))
			bad(c, "logsumexp needs a float tensor, got %s", typestr(x));
		if (keep)
			keep->i = 1;
		m = midop(c, Aamax, c->in, 1, 1);
		in[0] = midop(c, Aisinf, &m, 1, 0);
		in[1] = g_scalar(c->g, 0, x->dtype);
		in[2] = m;
		m = midop(c, Awhere, in, 3, 0);
		in[0] = c->in[0], in[1] = m;
		e = midop(c, Asub, in, 2, 0);
		e = midop(c, Aexp, &e, 1, 0);
		if (keep)
			keep->i = k;
		e = midop(c, Asum, &e, 1, 1);
		e = midop(c, Alog, &e, 1, 0);
		if (!k)
			m = midview(c, m, c->fn->val[e].t.dim, c->fn->val[e].t.rank);
		c->kind = Aadd, c->in[0] = e, c->in[1] = m, c->nin = 2, c->nav = 0;
		break;
	}
	case H_GLU: {   /* a·σ(b), a and b the halves of x along dim */
		const Type *x = &c->fn->val[c->in[0]].t;
		int d = normdim(c, findav(c, "dim")->i, x->rank);
		int64_t h = x->dim[d] / 2;
		if (x->dim[d] % 2)
			bad(c, "glu halves dim %d, of odd size %lld", d, (long long)x->dim[d]);
		int a = midslice(c, c->in[0], d, 0, h), b = midslice(c, c->in[0], d, h, 2 * h);
		c->in[1] = midop(c, Asigmoid, &b, 1, 0);
		c->kind = Amul, c->in[0] = a, c->nin = 2, c->nav = 0;
		break;
	}
	case H_PIXSHUF: {   /* [.., C·r², H, W] <-> [.., C, H·r, W·r] through [.., C, r, r, H, W] */
		const Type *x = &c->fn->val[c->in[0]].t;
		Av *up = findav(c, "upscale_factor");
		int64_t r = up ? up->i : findav(c, "downscale_factor")->i, v[DP_MAXRANK], p[DP_MAXRANK];
		int b = x->rank - 3, y;
		if (x->rank < 3 || x->rank + 2 > DP_MAXRANK || r < 1 ||
		    (up ? x->dim[b] % (r * r) : x->dim[b + 1] % r || x->dim[b + 2] % r))
			bad(c, "pixel_%sshuffle by %lld does not fit %s", up ? "" : "un", (long long)r,
			    typestr(x));
		for (int i = 0; i < b; i++)
			v[i] = p[i] = x->dim[i], p[i] = i;
		if (up) {   /* [C, r, r, H, W] -> [C, H, r, W, r] */
			v[b] = x->dim[b] / (r * r), v[b + 1] = v[b + 2] = r;
			v[b + 3] = x->dim[b + 1], v[b + 4] = x->dim[b + 2];
			p[b] = b, p[b + 1] = b + 3, p[b + 2] = b + 1, p[b + 3] = b + 4, p[b + 4] = b + 2;
		} else {   /* [C, H', r, W', r] -> [C, r, r, H', W'] */
			v[b] = x->dim[b], v[b + 1] = x->dim[b + 1] / r, v[b + 2] = r;
			v[b + 3] = x->dim[b + 2] / r, v[b + 4] = r;
			p[b] = b, p[b + 1] = b + 2, p[b + 2] = b + 4, p[b + 3] = b + 1, p[b + 4] = b + 3;
		}
		y = midpermute(c, midview(c, c->in[0], v, b + 5), p, b + 5);
		c->in[0] = y, c->nav = 0;
		for (int i = 0; i < b; i++)
			v[i] = x->dim[i];
		if (up)
			v[b] = x->dim[b] / (r * r), v[b + 1] = x->dim[b + 1] * r, v[b + 2] = x->dim[b + 2] * r;
		else
			v[b] = x->dim[b] * r * r, v[b + 1] = x->dim[b + 1] / r, v[b + 2] = x->dim[b + 2] / r;
		sizesav(c, "size", &(Type){ .dtype = x->dtype, .rank = x->rank,
		                              .dim = { v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7] } });
		break;
	}
	case H_TRI: {   /* [.., R, C]: where(col − row >= diagonal (triu) / <= (tril), x, 0) */
		const Type *x = &c->fn->val[c->in[0]].t;
		int64_t R = x->rank >= 2 ? x->dim[x->rank - 2] : 0, C = x->rank >= 2 ? x->dim[x->rank - 1] : 0;
		int64_t rv[2] = { R, 1 }, cv[2] = { 1, C };
		int in[3];
		if (x->rank < 2)
			bad(c, "triu and tril take a matrix or a batch of them, got %s", typestr(x));
		in[0] = midview(c, midarange(c, C), cv, 2);
		in[1] = midview(c, midarange(c, R), rv, 2);
		in[0] = midop(c, Asub, in, 2, 0);
		in[1] = g_scalar(c->g, (double)findav(c, "diagonal")->i, DP_I64);
		in[0] = midop(c, strstr(c->target, "triu") ? Age : Ale, in, 2, 0);
		c->in[1] = c->in[0], c->in[0] = in[0];
		c->in[2] = g_scalar(c->g, 0, x->dtype);
		c->nin = 3, c->nav = 0;
		break;
	}
	case H_NANTONUM: {   /* NaN -> nan (0), +inf -> posinf, -inf -> neginf (the dtype's max) */
		const Type *x = &c->fn->val[c->in[0]].t;
		double big = x->dtype == DP_F64 ? DBL_MAX : x->dtype == DP_F16 ? 65504.0 :
		             x->dtype == DP_BF16 ? 3.3895313892515355e38 : FLT_MAX;
		Av *nan = findav(c, "nan"), *pi = findav(c, "posinf"), *ni = findav(c, "neginf");
		double vals[3] = { nan ? nan->f : 0, pi ? pi->f : big, ni ? ni->f : -big };
		int y = c->in[0], in[3];
		if (!isfloat(x->dtype)) {   /* integers have none */
			identity(c, 0);
			return 0;
		}
		for (int k = 0; k < 3; k++) {
			in[0] = y;
			if (k == 0) {
				in[0] = midop(c, Aisnan, in, 1, 0);
			} else {
				in[1] = g_scalar(c->g, k == 1 ? INFINITY : -INFINITY, x->dtype);
				in[0] = midop(c, Aeq, in, 2, 0);
			}
			in[1] = g_scalar(c->g, vals[k], x->dtype);
			in[2] = y;
			if (k < 2)
				y = midop(c, Awhere, in, 3, 0);
			else
				c->in[0] = in[0], c->in[1] = in[1], c->in[2] = in[2];
		}
		c->nin = 3, c->nav = 0;
		break;
	}
	case H_LERP: {   /* |w| < 0.5 ? start + w·(end − start) : end − (end − start)·(1 − w) */
		int st = c->in[0], en = c->in[1], w = c->in[2], in[3], d, lo, hi;
		const Type *tw = &c->fn->val[w].t;
		in[0] = en, in[1] = st;
		d = midop(c, Asub, in, 2, 0);
		in[0] = w, in[1] = d;
		in[1] = midop(c, Amul, in, 2, 0), in[0] = st;
		lo = midop(c, Aadd, in, 2, 0);
		in[0] = g_scalar(c->g, 1, tw->dtype), in[1] = w;
		in[1] = midop(c, Asub, in, 2, 0), in[0] = d;
		in[1] = midop(c, Amul, in, 2, 0), in[0] = en;
		hi = midop(c, Asub, in, 2, 0);
		in[0] = midop(c, Aabs, &w, 1, 0), in[1] = g_scalar(c->g, 0.5, tw->dtype);
		c->in[0] = midop(c, Alt, in, 2, 0), c->in[1] = lo, c->in[2] = hi;
		c->kind = Awhere, c->nin = 3, c->nav = 0;
		break;
	}
	case H_LOGADDEXP: {   /* a where a is ±inf and equals b; else max + log1p(exp(−|a − b|)) */
		int a = c->in[0], b = c->in[1], in[3], t;
		in[0] = a, in[1] = b;
		t = midsoftterm(c, midop(c, Asub, in, 2, 0), NULL);
		in[1] = midop(c, Amaximum, in, 2, 0), in[0] = t;
		in[2] = midop(c, Aadd, in, 2, 0);   /* (the operands' order as PyTorch's m + ...) */
		in[0] = a, in[1] = b;
		t = midop(c, Aeq, in, 2, 0);
		in[0] = midop(c, Aisinf, &a, 1, 0), in[1] = t;
		c->in[0] = midop(c, Aand, in, 2, 0), c->in[1] = a, c->in[2] = in[2];
		c->kind = Awhere, c->nin = 3, c->nav = 0;
		break;
	}
	case H_PRELUCH: {   /* aten.prelu: a weight of one element, or one per
			     * channel (dim 1) viewed to broadcast as nn.PReLU's kernel
			     * takes it */
		const Type *xt = &c->fn->val[c->in[0]].t, *wt = &c->fn->val[c->in[1]].t;
		if (dp_numel(wt) != 1 && xt->rank >= 2) {
			int64_t v[DP_MAXRANK];
			int d;
			if (wt->rank != 1 || wt->dim[0] != xt->dim[1])
				bad(c, "prelu needs one weight or one per channel (%lld), got %s",
				    (long long)xt->dim[1], typestr(wt));
			for (d = 0; d < xt->rank; d++)
				v[d] = d == 1 ? xt->dim[1] : 1;
			c->in[1] = midview(c, c->in[1], v, xt->rank);
		}
	}
		/* fall through */
	case H_PRELU: {   /* x where x > 0, else weight·x (nn.PReLU's kernel: the
			   * weight already shaped to broadcast); a NaN stays */
		int x = c->in[0], in[2];
		in[0] = x, in[1] = g_scalar(c->g, 0, c->fn->val[x].t.dtype);
		int gt = midop(c, Agt, in, 2, 0);
		in[0] = c->in[1], in[1] = x;
		c->in[2] = midop(c, Amul, in, 2, 0);
		c->in[0] = gt, c->in[1] = x;
		c->kind = Awhere, c->nin = 3, c->nav = 0;
		break;
	}
	case H_ADDMV: {   /* beta·self + alpha·(mat·vec); beta 0: self not read, as PyTorch */
		double b = findav(c, "beta")->f, a = findav(c, "alpha")->f;
		int dt = c->fn->val[c->in[1]].t.dtype, in[2], y;
		y = midop(c, Amatmul, c->in + 1, 2, 0);
		if (a != 1)
			in[0] = g_scalar(c->g, a, dt), in[1] = y, y = midop(c, Amul, in, 2, 0);
		if (b != 0) {
			in[0] = c->in[0];
			if (b != 1)
				in[1] = g_scalar(c->g, b, dt), in[0] = midop(c, Amul, in, 2, 0);
			in[1] = y, y = midop(c, Aadd, in, 2, 0);
		}
		defout(c, 0, y);
		return 0;
	}
	case H_BUCKETIZE: {   /* per element of x, how many boundaries are not at or
			       * above it (right: not above it), as PyTorch's binary search
			       * counts them, so that a NaN is past every boundary: the
			       * compare of x viewed [..., 1] with the boundaries, negated,
			       * summed in i64 (out_int32: then i32) */
		int sx = strstr(c->target, "searchsorted") != NULL;   /* (sorted_sequence, self) */
		int x = c->in[sx], bd = c->in[!sx], in[2], y, k;
		Av *r = findav(c, "right"), *o32 = findav(c, "out_int32"), *side = findav(c, "side");
		const Type *tx = &c->fn->val[x].t;
		int64_t v[DP_MAXRANK], last;
		if (c->fn->val[bd].t.rank != 1)
			bad(c, "supports 1-D boundaries (a sorted sequence of rank 1), got %s",
			    typestr(&c->fn->val[bd].t));
		if (tx->rank + 1 > DP_MAXRANK)
			bad(c, "input rank %d is too high", tx->rank);
		for (k = 0; k < tx->rank; k++)
			v[k] = tx->dim[k];
		v[k] = 1;
		in[0] = bd, in[1] = midview(c, x, v, tx->rank + 1);
		y = midop(c, (r && r->i) || (side && side->s && !strcmp(side->s, "right")) ? Agt : Age,
		          in, 2, 0);
		y = midop(c, Anot, &y, 1, 0);
		y = preop(c, Ocast, &y, 1, "i64");
		last = tx->rank;
		y = midints(c, Asum, y, "dim", &last, 1);
		if (o32 && o32->i)
			y = preop(c, Ocast, &y, 1, "i32");
		defout(c, 0, y);
		return 0;
	}
	case H_INDEXFILL: {   /* index_copy of value, x's shape but the index's length along dim */
		const Type *x = &c->fn->val[c->in[0]].t, *ix = &c->fn->val[c->in[1]].t;
		Av *dim = findav(c, "dim"), *val = findav(c, "value");
		int d = normdim(c, dim ? dim->i : 0, x->rank);
		int64_t v[DP_MAXRANK];
		if (ix->rank > 1)
			bad(c, "needs an index of rank 0 or 1, got %s", typestr(ix));
		for (int k = 0; k < x->rank; k++)
			v[k] = k == d ? (ix->rank ? ix->dim[0] : 1) : x->dim[k];
		c->in[2] = midints(c, Aexpand, g_scalar(c->g, val->f, x->dtype), "size", v, x->rank);
		c->nin = 3;
		dropav(c, "value");
		break;
	}
	case H_CELU:   /* elu(x, alpha, scale 1, input scale 1/alpha), as PyTorch computes it */
		newav(c, "input_scale", A_FLOAT)->f = 1.0 / findav(c, "alpha")->f;
		break;
	case H_LOGSIGMOID: {   /* min(x, 0) − log1p(exp(−|x|)), PyTorch's cpu kernel; its
				* second result (the backward's buffer) exp(−|x|) */
		int x = c->in[0], in[2], e;
		if (!isfloat(c->fn->val[x].t.dtype))
			bad(c, "log_sigmoid needs a float tensor, got %s", typestr(&c->fn->val[x].t));
		in[0] = x, in[1] = g_scalar(c->g, 0, c->fn->val[x].t.dtype);
		in[0] = midop(c, Aminimum, in, 2, 0);
		in[1] = midsoftterm(c, x, &e);
		defout(c, 0, midop(c, Asub, in, 2, 0));
		defout(c, 1, e);
		return 0;
	}
	case H_UPND: {   /* [N, C, L] as [N, C, 1, L]; [N, C, D, H, W] over (H, W) as [N, C·D, H, W], then over D as [N, C, D, OH·OW] */
		const char *on = tensorname(json_array_get(json_object_get(c->json, "outputs"), 0));
		const Type *x = &c->fn->val[c->in[0]].t;
		Av *al = findav(c, "align_corners");
		Type t;
		int64_t v[4];
		int y;
		if (!on || !g_type(c->g, on, &t) || t.rank != x->rank || (x->rank != 3 && x->rank != 5))
			bad(c, "needs a [N, C, L] or [N, C, D, H, W] input and a result of known shape");
		double sf[3];
		scalesof(c, sf, x->rank - 2);
		if (x->rank == 3) {
			v[0] = x->dim[0], v[1] = x->dim[1], v[2] = 1, v[3] = x->dim[2];
			y = midup(c, c->kind, midview(c, c->in[0], v, 4), 1, t.dim[2], al ? (int)al->i : 0,
			          0, sf[0]);
		} else {
			v[0] = x->dim[0], v[1] = x->dim[1] * x->dim[2], v[2] = x->dim[3], v[3] = x->dim[4];
			y = midup(c, c->kind, midview(c, c->in[0], v, 4), t.dim[3], t.dim[4],
			          al ? (int)al->i : 0, sf[1], sf[2]);
			v[0] = x->dim[0], v[1] = x->dim[1], v[2] = x->dim[2], v[3] = t.dim[3] * t.dim[4];
			y = midup(c, c->kind, midview(c, y, v, 4), t.dim[2], v[3], al ? (int)al->i : 0,
			          sf[0], 0);
		}
		c->kind = Aview, c->in[0] = y, c->nin = 1, c->nav = 0;
		sizesav(c, "size", &t);
		break;
	}
	case H_ADAPTMAX: {   /* [.., H, W] -> [.., oh, ow]: window i of n along a dim is
	                      [⌊i·n/o⌋, ⌈(i + 1)·n/o⌉), its max (aten.amax), concatenated */
		const Type *x = &c->fn->val[c->in[0]].t;
		Av *os = findav(c, "output_size");
		int y = c->in[0], r = x->rank;
		if ((r != 3 && r != 4) || os->n != 2 || os->ints[0] < 1 || os->ints[1] < 1)
			bad(c, "adaptive_max_pool2d takes [N,]C,H,W and 2 output sizes");
		int64_t o[2] = { os->ints[0], os->ints[1] };
		for (int a = 0; a < 2; a++) {
			int d = r - 2 + a, *parts = dp_alloc(c->fn->arena, (size_t)o[a], sizeof *parts);
			int64_t n = c->fn->val[y].t.dim[d], dims[1] = { d };
			for (int64_t i = 0; i < o[a]; i++) {
				int64_t lo = i * n / o[a], hi = ((i + 1) * n + o[a] - 1) / o[a];
				int op = dp_addop(c->fn, Aamax, (int[]){ midslice(c, y, d, lo, hi) }, 1);
				dp_setints(c->fn, op, "dim", dims, 1);
				dp_seti(c->fn, op, "keepdim", 1);
				parts[i] = midend(c, op);
			}
			if (o[a] > 1) {
				int op = dp_addop(c->fn, Acat, parts, (int)o[a]);
				dp_seti(c->fn, op, "dim", d);
				y = midend(c, op);
			} else {
				y = parts[0];
			}
		}
		c->in[0] = y, c->nin = 1, c->nav = 0;
		sizesav(c, "size", &c->fn->val[y].t);
		break;
	}
	case H_IM2COL: {   /* [N,]C,H,W -> [N,]C·kh·kw, L: per tap (i, j) x padded, sliced
	                      from (i·dh, j·dw) by the stride; stacked after C */
		const Type *x = &c->fn->val[c->in[0]].t;
		int64_t k[2], dl[2], pd[2], st[2], v[DP_MAXRANK];
		const char *keys[4] = { "kernel_size", "dilation", "padding", "stride" };
		int64_t *vals[4] = { k, dl, pd, st };
		int r = x->rank, y = c->in[0], b = r - 3;
		if (r != 3 && r != 4)
			bad(c, "im2col takes [N,]C,H,W, got %s", typestr(x));
		for (int q = 0; q < 4; q++) {
			Av *a = findav(c, keys[q]);
			if (!a || a->n < 1 || a->n > 2)
				bad(c, "%s needs 1 or 2 values", keys[q]);
			vals[q][0] = a->ints[0], vals[q][1] = a->ints[a->n - 1];
		}
		int64_t H = x->dim[r - 2], W = x->dim[r - 1];
		int64_t oh = (H + 2 * pd[0] - dl[0] * (k[0] - 1) - 1) / st[0] + 1;
		int64_t ow = (W + 2 * pd[1] - dl[1] * (k[1] - 1) - 1) / st[1] + 1;
		if (k[0] < 1 || k[1] < 1 || st[0] < 1 || st[1] < 1 || dl[0] < 1 || dl[1] < 1 || oh < 1 || ow < 1)
			bad(c, "im2col's window does not fit %s", typestr(x));
		if (pd[0] || pd[1]) {   /* aten.constant_pad_nd of (W, H) */
			int64_t p4[4] = { pd[1], pd[1], pd[0], pd[0] };
			int op = dp_addop(c->fn, Apad, &y, 1);
			dp_setints(c->fn, op, "pad", p4, 4);
			y = midend(c, op);
		}
		int *taps = dp_alloc(c->fn->arena, (size_t)(k[0] * k[1]), sizeof *taps);
		for (int64_t i = 0; i < k[0]; i++)
			for (int64_t j = 0; j < k[1]; j++) {
				int t = midslicest(c, y, r - 2, i * dl[0], i * dl[0] + (oh - 1) * st[0] + 1, st[0]);
				t = midslicest(c, t, r - 1, j * dl[1], j * dl[1] + (ow - 1) * st[1] + 1, st[1]);
				for (int q = 0, p = 0; q < r; q++) {   /* [.., C, 1, oh, ow] */
					v[p++] = c->fn->val[t].t.dim[q];
					if (q == b)
						v[p++] = 1;
				}
				taps[i * k[1] + j] = midview(c, t, v, r + 1);
			}
		if (k[0] * k[1] > 1) {
			int op = dp_addop(c->fn, Acat, taps, (int)(k[0] * k[1]));
			dp_seti(c->fn, op, "dim", b + 1);
			y = midend(c, op);
		} else {
			y = taps[0];
		}
		Type t = c->fn->val[y].t;   /* [.., C, kh·kw, oh, ow] -> [.., C·kh·kw, oh·ow] */
		t.rank = r - 1;
		t.dim[b] = x->dim[b] * k[0] * k[1], t.dim[b + 1] = oh * ow;
		c->in[0] = y, c->nin = 1, c->nav = 0;
		sizesav(c, "size", &t);
		break;
	}
	case H_CONV:
		if ((v = findav(c, "transposed")) && v->i == 0) {
			int n = 0;
			for (int k = 0; k < c->nav; k++)
				if (strcmp(c->av[k].key, "transposed") && strcmp(c->av[k].key, "output_padding"))
					c->av[n++] = c->av[k];
			c->nav = n;
		}
		break;
	case H_POWINT: {   /* an integer base to a literal power n >= 0 (core ATen's square):
			  * products by squaring, wrapping as PyTorch's integers do */
		int dt = c->fn->val[c->in[0]].t.dtype, isint, isbool, x = c->in[0], acc = -1;
		json_t *ins = json_object_get(c->json, "inputs");
		double e = -1;
		if (isfloat(dt) || dt == DP_BOOL || c->fn->val[c->in[1]].t.dtype != dt)
			break;
		for (size_t j = 0; j < json_array_size(ins); j++) {
			json_t *a = json_array_get(ins, j);
			const char *nm = json_string_value(json_object_get(a, "name"));
			if (nm && strcmp(nm, "exponent") == 0 &&
			    !pynumber(json_object_get(a, "arg"), &e, &isint, &isbool))
				e = -1;
		}
		if (e < 0 || e != (double)(int64_t)e || e > 1e18)
			bad(c, "an integer tensor to the power %g: only powers 0, 1, 2... are supported", e);
		if (e == 0) {
			int op = dp_addop(c->fn, Afulllike, &x, 1);
			dp_setf(c->fn, op, "value", 1);
			acc = midend(c, op);
		}
		for (int64_t n = (int64_t)e; n > 0; n >>= 1) {
			int in[2] = { acc, x };
			if (n & 1)
				acc = acc < 0 ? x : midop(c, Amul, in, 2, 0);
			if (n > 1) {
				in[0] = in[1] = x;
				x = midop(c, Amul, in, 2, 0);
			}
		}
		c->in[0] = acc;
		identity(c, 0);
		return 0;
	}
	case H_SQUARE:
		c->in[1] = c->in[0];
		c->nin = 2;
		break;
	case H_REAL: {   /* the (re, im) axis of a complex value; a real one is its own real part */
		int im = strstr(c->target, "imag") != NULL;
		if (!argcomplex(c, 0)) {
			if (im)
				bad(c, "imag of a real tensor");
			identity(c, 0);
			return 0;
		}
		newav(c, "dim", A_INT)->i = c->fn->val[c->in[0]].t.rank - 1;
		newav(c, "index", A_INT)->i = im;
		break;
	}
	case H_WEIGHTNORM: {   /* v·(g / ‖v‖₂ over every dim but dim; dim −1: all) */
		const Type *t = &c->fn->val[c->in[0]].t;
		int64_t d = findav(c, "dim")->i, dims[DP_MAXRANK];
		int n = 0, op, in[2];
		if (d != -1)
			d = normdim(c, d, t->rank);
		for (int i = 0; i < t->rank; i++)
			if (i != d)
				dims[n++] = i;
		op = dp_addop(c->fn, Avecnorm, &c->in[0], 1);
		dp_setints(c->fn, op, "dim", dims, n);
		dp_seti(c->fn, op, "keepdim", 1);
		in[0] = c->in[1], in[1] = midend(c, op);
		c->in[1] = midop(c, Adiv, in, 2, 0);
		dropav(c, "dim");
		break;
	}
	case H_CONVPAD: {   /* padding 'valid' (none) or 'same' (stride 1: the output as large
			 * as the input; an odd total's extra element on the far side, as
			 * PyTorch pads it) */
		const Type *w = &c->fn->val[c->in[1]].t;
		int ns = w->rank - 2;
		Av *p = findav(c, "padding"), *st = findav(c, "stride"), *dl = findav(c, "dilation");
		int same = p && strcmp(p->s, "same") == 0, odd = 0;
		int64_t *pad = dp_alloc(c->fn->arena, (size_t)(ns > 0 ? ns : 1), sizeof *pad);
		int64_t extra[2 * DP_MAXRANK] = { 0 };
		if (p && !same && strcmp(p->s, "valid") != 0)
			bad(c, "padding must be 'valid' or 'same', not '%s'", p->s);
		if (ns < 1 || ns > 3)
			bad(c, "needs a weight of rank 3 to 5, not %s", typestr(w));
		for (int i = 0; i < ns; i++) {
			int64_t s = st && st->n ? st->ints[st->n == 1 ? 0 : i < st->n ? i : st->n - 1] : 1;
			int64_t dd = dl && dl->n ? dl->ints[dl->n == 1 ? 0 : i < dl->n ? i : dl->n - 1] : 1;
			int64_t total = dd * (w->dim[2 + i] - 1);
			if (same && s != 1)
				bad(c, "padding 'same' needs stride 1");
			pad[i] = same ? total / 2 : 0;
			if (same && total % 2) {   /* aten.pad's list: the last dim first */
				extra[2 * (ns - 1 - i) + 1] = 1;
				odd = 1;
			}
		}
		if (odd) {
			int op = dp_addop(c->fn, Apad, &c->in[0], 1);
			dp_setints(c->fn, op, "pad", extra, 2 * ns);
			c->in[0] = midend(c, op);
		}
		dropav(c, "padding");
		p = newav(c, "padding", A_INTS);
		p->ints = pad;
		p->n = ns;
		break;
	}
	case H_CAT: {   /* PyTorch's cat skips 1-D tensors of 0 elements whatever
			 * the others' rank (an empty cache's first update) */
		int n = 0;
		for (int k = 0; k < c->nin; k++) {
			const Type *u = &c->fn->val[c->in[k]].t;
			if (u->rank != 1 || u->dim[0] != 0)
				c->in[n++] = c->in[k];
		}
		if (n > 0)
			c->nin = n;
		break;
	}
	case H_ASSHAPE:
		sizesav(c, c->kind == Aview ? "size" : "shape", &c->fn->val[c->in[1]].t);
		c->nin = 1;
		break;
	case H_REVERSE: {
		int r = c->fn->val[c->in[0]].t.rank;
		v = newav(c, "dims", A_INTS);
		v->ints = dp_alloc(c->fn->arena, r ? (size_t)r : 1, sizeof *v->ints);
		for (int i = r - 1; i >= 0; i--)
			v->ints[v->n++] = i;
		break;
	}
	case H_DTYPEIN:   /* cumsum, sum, mean, softmax (x, ..., dtype): of x cast to dtype
			   * (another integer than i64: the op's i64 result cast back to it) */
		if ((v = findav(c, "dtype"))) {
			int dt = dp_dtype_lookup(v->s);
			const char *name = v->s;
			if (dt < 0 || (!isfloat(dt) && dt != DP_I64 && (dt == DP_BOOL ||
			    (c->kind != Acumsum && c->kind != Asum))))
				bad(c, "dtype %s: only a float dtype or i64 is supported", v->s);
			if (dt != c->fn->val[c->in[0]].t.dtype)
				c->in[0] = preop(c, Ocast, &c->in[0], 1, name);
			dropav(c, "dtype");
			if (!isfloat(dt) && dt != DP_I64) {
				int y = midop(c, c->kind, c->in, c->nin, 1);
				c->in[0] = preop(c, Ocast, &y, 1, name);
				identity(c, 0);
				return 0;
			}
		}
		break;
	case H_DIVMODE:   /* floor or trunc of the quotient (integers exactly) */
		if (!(v = findav(c, "rounding_mode")))
			break;
		if (strcmp(v->s, "floor") != 0 && strcmp(v->s, "trunc") != 0)
			bad(c, "rounding_mode must be 'floor', 'trunc' or None, not '%s'", v->s);
		c->kind = v->s[0] == 'f' ? Adivfloor : Adivtrunc;
		dropav(c, "rounding_mode");
		break;
	case H_RANDOM:   /* formats/ops.md, "Random numbers" */
		dtypedef(c, c->a->kind == Arandperm ? "i64" : "f32");
		newav(c, "seed", A_INT)->i = g_imp(c->g)->seed;
		newav(c, "stream", A_INT)->i = g_imp(c->g)->nrandom++;
		break;
	case H_NEW:
		dtypedef(c, dp_dtype_name[c->fn->val[c->in[0]].t.dtype]);
		c->nin = 0;
		break;
	case H_TOCOPY:
		v = findav(c, "dtype");
		if (v && strcmp(v->s, "complex64") == 0) {   /* a complex value (f32 [..., 2]) */
			if (!argcomplex(c, 0))
				c->in[0] = midcomplex(c, c->in[0]);
			identity(c, 0);
			return 0;
		}
		if (!v || dp_dtype_lookup(v->s) == c->fn->val[c->in[0]].t.dtype) {
			identity(c, 0);
			return 0;
		}
		break;
	case H_TYPEAS:
		if (c->fn->val[c->in[1]].t.dtype == c->fn->val[c->in[0]].t.dtype) {
			identity(c, 0);
			return 0;
		}
		newav(c, "dtype", A_STR)->s = dp_dtype_name[c->fn->val[c->in[1]].t.dtype];
		c->nin = 1;
		break;
	case H_LAYERNORM:
		/* a bias without a weight: the weight becomes ones */
		if (c->slot[2] < 0 && c->slot[3] >= 0) {
			Type t = c->fn->val[c->in[0]].t, x = t;
			v = findav(c, "normalized_shape");
			if (v->n < 1 || v->n > x.rank)
				bad(c, "normalized_shape does not fit the input %s", typestr(&x));
			t.rank = (uint8_t)v->n;
			for (int i = 0; i < t.rank; i++)
				if ((t.dim[i] = v->ints[i]) != x.dim[x.rank - v->n + i])
					bad(c, "normalized_shape is not the input's trailing shape: %s", typestr(&x));
			t.dev = DEV_CPU;
			c->in[2] = c->in[1];
			c->in[1] = g_filled(c->g, &t, 1);
			c->nin = 3;
		}
		break;
	case H_RSUB: {
		int t = c->in[0];
		c->in[0] = c->in[1];
		c->in[1] = t;
		break;
	}
	case H_BATCHNORM:
		/* training: the batch's statistics (running ones, if any, unused:
		 * their update is not part of an inference program) */
		v = findav(c, "training");
		if (v && v->i) {
			c->kind = Abnstats;
			c->nin = 3;
		} else if (c->kind == Abnstats || c->nin != 5) {
			bad(c, "inference batch norm needs running_mean and running_var");
		}
		dropav(c, "training");
		break;
	case H_RESIZE: {
		const Type *x = &c->fn->val[c->in[0]].t;
		int64_t n = 1;
		v = findav(c, "size");
		for (int i = 0; i < v->n; i++)
			n *= v->ints[i];
		if (n != dp_numel(x))
			bad(c, "resize_ of %s to %lld elements: only a resize that keeps the element "
			    "count (a reshape) is supported", typestr(x), (long long)n);
		break;
	}
	case H_EMBBAG:
		if (c->nin != 3)
			bad(c, "per_sample_weights are not supported");
		if ((v = findav(c, "padding_idx")) && v->i != -1)
			bad(c, "padding_idx %lld is not supported (only -1 or None)", (long long)v->i);
		dropav(c, "padding_idx");
		break;
	case H_SYM:
		sym(c);
		return 0;
	case H_BOOL:
		for (int i = 0; i < c->nin; i++)
			if (c->fn->val[c->in[i]].t.dtype != DP_BOOL)
				bad(c, "bitwise ops are supported on bool tensors only, not %s",
				    dp_dtype_name[c->fn->val[c->in[i]].t.dtype]);
		break;
	}
	return 1;
}

/* Adds op kind on operands in[0..nin-1] with the node's attributes, checks
 * its result against the archive's type for name on and binds it. */
static int
emit(Node *c, int kind, const int *in, int nin, const char *on, const char *what)
{
	Fn *fn = c->fn;
	int op = dp_addop(fn, kind, in, nin);
	setavs(c, op);
	Err err = { 0 };
	if (dp_infer(fn, op, &err))
		bad(c, "%s", err.msg);
	int res = fn->op[op].out[0];
	Type want;
	if (!on || !g_type(c->g, on, &want))
		bad(c, "the archive gives no type for its result '%s'", on ? on : "?");
	Type *got = &fn->val[res].t;
	if (got->dtype != want.dtype || got->rank != want.rank || got->bnd != want.bnd ||
	    memcmp(got->dim, want.dim, (size_t)want.rank * sizeof want.dim[0]) != 0)
		bad(c, "import computes %s but the archive says %s", typestr(got), typestr(&want));
	g_define(c->g, on, res, what);
	return res;
}

/* split, split_with_sizes, chunk, unbind: one aten.slice (aten.select for
 * unbind) per entry of the result list. */
static void
split(Node *c, const char *what)
{
	json_t *l = json_object_get(json_array_get(json_object_get(c->json, "outputs"), 0), "as_tensors");
	const Type *x = &c->fn->val[c->in[0]].t;
	int d = normdim(c, findav(c, "dim")->i, x->rank);
	int64_t n = x->rank ? x->dim[d] : 1, at = 0, size = 1;
	size_t cnt = json_array_size(l);
	Av *ss = findav(c, "split_sizes"), *s1 = findav(c, "split_size"), *ch = findav(c, "chunks");
	Av *ix = findav(c, "indices"), *sec = findav(c, "sections");
	const int64_t *sizes = ss ? ss->ints : NULL;   /* in the arena: outlives c->av */
	const int64_t *idx = ix ? ix->ints : NULL;
	int64_t nsec = sec ? sec->i : 0;

	if (ss && (size_t)ss->n != cnt)
		bad(c, "%d split sizes for %zu results", ss->n, cnt);
	if (ix && (size_t)ix->n + 1 != cnt)
		bad(c, "%d split indices for %zu results", ix->n, cnt);
	if ((s1 && s1->i < 1) || (ch && ch->i < 1) || (sec && nsec < 1))
		bad(c, "the split size must be positive");
	if (s1)
		size = s1->i;
	if (ch)
		size = n / ch->i + (n % ch->i != 0);
	for (size_t k = 0; k < cnt; k++) {
		const char *on = json_string_value(json_object_get(json_array_get(l, k), "name"));
		c->nav = 0;
		newav(c, "dim", A_INT)->i = d;
		if (c->a->kind == Aselect)
			newav(c, "index", A_INT)->i = (int64_t)k;
		else if (idx || sec) {   /* tensor_split: [idx[k-1], idx[k]) clamped; or sections */
			int64_t lo, hi;
			if (idx) {
				lo = k ? idx[k - 1] : 0, hi = k + 1 < cnt ? idx[k] : n;
				lo = lo < 0 ? lo + n : lo, hi = hi < 0 ? hi + n : hi;
				lo = lo < 0 ? 0 : lo > n ? n : lo, hi = hi < lo ? lo : hi > n ? n : hi;
			} else {
				int64_t q = n / nsec, r = n % nsec, kk = (int64_t)k;
				lo = kk * q + (kk < r ? kk : r), hi = lo + q + (kk < r);
			}
			newav(c, "start", A_INT)->i = lo;
			newav(c, "end", A_INT)->i = hi;
		} else {
			if (sizes)
				size = sizes[k];
			if (size < 0 || at > n)
				bad(c, "the split sizes do not fit dimension %d of size %lld", d, (long long)n);
			int64_t end = size < n - at ? at + size : n;
			newav(c, "start", A_INT)->i = at;
			newav(c, "end", A_INT)->i = end;
			at = end;
		}
		emit(c, c->a->kind, c->in, 1, on, what);
	}
}

/* aten.meshgrid of 1-D (or 0-D) tensors: result k is tensor k viewed with
 * its length at axis k (indexing 'xy': the first two axes swapped) and
 * expanded to every tensor's length. */
static void
meshgrid(Node *c, const char *what)
{
	json_t *l = json_object_get(json_array_get(json_object_get(c->json, "outputs"), 0), "as_tensors");
	Av *ix = findav(c, "indexing");
	int xy = ix && strcmp(ix->s, "xy") == 0, n = c->nin;
	int64_t *full = dp_alloc(c->fn->arena, DP_MAXRANK, sizeof *full), v[DP_MAXRANK];

	if (ix && !xy && strcmp(ix->s, "ij") != 0)
		bad(c, "indexing must be 'ij' or 'xy', not '%s'", ix->s);
	if (n < 1 || n > DP_MAXRANK || (size_t)n != json_array_size(l))
		bad(c, "%d tensors for %zu results (1 to %d)", n, json_array_size(l), DP_MAXRANK);
	for (int k = 0; k < n; k++) {
		const Type *t = &c->fn->val[c->in[k]].t;
		int at = xy && n > 1 && k < 2 ? 1 - k : k;
		if (t->rank > 1)
			bad(c, "needs tensors of rank 0 or 1, not %s", typestr(t));
		full[at] = t->rank ? t->dim[0] : 1;
	}
	int *in = dp_alloc(c->fn->arena, (size_t)n, sizeof *in);
	memcpy(in, c->in, (size_t)n * sizeof *in);
	for (int k = 0; k < n; k++) {
		const char *on = json_string_value(json_object_get(json_array_get(l, (size_t)k), "name"));
		int at = xy && n > 1 && k < 2 ? 1 - k : k, x;
		for (int i = 0; i < n; i++)
			v[i] = i == at ? full[at] : 1;
		x = midview(c, in[k], v, n);
		c->nav = 0;
		Av *a = newav(c, "size", A_INTS);
		a->ints = full;
		a->n = n;
		emit(c, Aexpand, &x, 1, on, what);
	}
}

/* Complex operands (formats/ops.md, "Complex values"): f32 [..., 2] in the
 * IR.  The ops that take them: view_as_real, clone and its aliases, abs
 * and angle (aten.complex_abs, aten.complex_angle), mul (by a complex:
 * aten.complex_mul; by a real, which gets a trailing axis of 1, and div by
 * a real: the real op), add and sub of two complex values, _fft_c2r;
 * any other op with a complex operand is an error, as are angle and
 * _fft_c2r of a real one and _fft_r2c of a complex one. */
static void
complexargs(Node *c)
{
	json_t *ins = json_object_get(c->json, "inputs");
	int cx[2] = { 0, 0 }, any = 0;

	for (size_t i = 0; i < json_array_size(ins); i++) {
		json_t *arg = json_object_get(json_array_get(ins, i), "arg");
		json_t *l = json_object_get(arg, "as_tensors");
		int is = g_complex(c->g, tensorname(arg));
		for (size_t j = 0; j < json_array_size(l); j++)
			is |= g_complex(c->g, json_string_value(json_object_get(json_array_get(l, j), "name")));
		any |= is;
		if (i < 2)
			cx[i] = is;
	}
	if (c->kind == Afftc2r || c->kind == Acangle) {
		if (!cx[0])
			bad(c, "needs a complex operand");
		return;
	}
	if (c->kind == Afftc2c)   /* (the inverses of torch.fft take real ones too) */
		return;
	if (!any)
		return;
	if (c->a->hook == H_IDENTITY || (c->a->hook == H_CVIEW && strstr(c->target, "_real")))
		return;
	switch (c->kind) {
	case Aabs:
		c->kind = Acabs;
		return;
	case Afftr2c:   /* torch.fft's fft, fft2, fftn of a complex input */
		if (cx[0] && strstr(c->target, "fft_fft")) {
			c->kind = Afftc2c;
			return;
		}
		break;
	case Aselect:
		if (c->a->hook == H_REAL)
			return;
		/* fall through */
	case Aslice:
		if (cx[0]) {   /* a dim from the end counts the complex dims */
			Av *d = findav(c, "dim");
			if (d && d->i < 0)
				d->i += c->fn->val[c->in[0]].t.rank - 1;
			return;
		}
		break;
	case Aadd: case Asub:
		if (cx[0] && cx[1] && c->nin == 2)
			return;
		break;
	case Amul: case Adiv:
		if (c->nin != 2 || (c->kind == Adiv && cx[1]))
			break;
		if (cx[0] && cx[1]) {
			c->kind = Acmul;
			return;
		}
		for (int i = 0; i < 2; i++)
			if (!cx[i]) {   /* the real operand gets a trailing axis of 1 */
				Type t = c->fn->val[c->in[i]].t;
				int64_t size[DP_MAXRANK];
				for (int j = 0; j < t.rank; j++)
					size[j] = t.dim[j];
				size[t.rank] = 1;
				int op = dp_addop(c->fn, Aview, &c->in[i], 1);
				dp_setints(c->fn, op, "size", size, t.rank + 1);
				Err err = { 0 };
				if (t.rank == DP_MAXRANK || dp_infer(c->fn, op, &err))
					bad(c, "cannot broadcast a real operand of %s over complex values",
					    typestr(&t));
				c->in[i] = c->fn->op[op].out[0];
			}
		return;
	}
	bad(c, "complex operands are supported by view_as_real, abs, angle, mul, div by a real, "
	    "add, sub and _fft_c2r only");
}

/* PyTorch's promotion of two dtypes (torch.promote_types): bool gives way
 * to anything, integers to floats; f16 with bf16 is f32; u8 with i8 is i16;
 * otherwise the wider. */
static int
promotetypes(int a, int b)
{
	static const int8_t rank[DP_NDTYPE] = {   /* width within a kind */
		[DP_U8] = 1, [DP_I8] = 1, [DP_I16] = 2, [DP_I32] = 3, [DP_I64] = 4,
		[DP_F16] = 1, [DP_BF16] = 1, [DP_F32] = 2, [DP_F64] = 3,
	};
	if (a == b || b == DP_BOOL)
		return a;
	if (a == DP_BOOL)
		return b;
	if (isfloat(a) != isfloat(b))
		return isfloat(a) ? a : b;
	if (rank[a] == rank[b])   /* f16 and bf16; u8 and i8 */
		return isfloat(a) ? DP_F32 : DP_I16;
	if (a == DP_U8 || b == DP_U8)   /* u8 with a wider signed integer */
		return a == DP_U8 ? b : a;
	return rank[a] > rank[b] ? a : b;
}

/* The dtype PyTorch computes an elementwise op of tensors a and b in
 * (c10's result_type): a rank-0 operand beside a dimensioned one counts
 * only where it is of a higher kind (a float beside integers, or anything
 * beside bool), as Python scalars do. */
static int
resulttype(const Type *a, const Type *b)
{
	if ((a->rank == 0) == (b->rank == 0))
		return promotetypes(a->dtype, b->dtype);
	int d = a->rank ? a->dtype : b->dtype, z = a->rank ? b->dtype : a->dtype;
	if (isfloat(d) || (d != DP_BOOL && !isfloat(z)))
		return d;
	return promotetypes(d, z);
}

/* Elementwise ops of two tensors of different dtypes (an i32 arange times
 * f32 slopes, f32 to the power of integers...): each operand cast to the
 * dtype PyTorch computes in, as its type promotion does. */
static void
promote(Node *c)
{
	int f = dp_op_form[c->kind], k0 = f == Fwhere ? 1 : 0;
	if (!(f == Fbinary || f == Fbinaryn || f == Fcompare || f == Fwhere) || c->nin != k0 + 2)
		return;
	const Type *a = &c->fn->val[c->in[k0]].t, *b = &c->fn->val[c->in[k0 + 1]].t;
	if (a->dtype == b->dtype)
		return;
	int dt = resulttype(a, b);
	for (int k = k0; k < k0 + 2; k++)
		if (c->fn->val[c->in[k]].t.dtype != dt)
			c->in[k] = preop(c, Ocast, &c->in[k], 1, dp_dtype_name[dt]);
}

/* Converts node (one entry of graph.nodes) into an IR op and binds its
 * result to the node's output name (its other results, which must be
 * unused, to an error). */
void
aten_node(Graph *g, json_t *node)
{
	Node c = { .g = g, .json = node };
	c.node = json_string_value(json_object_get(node, "name"));
	const char *t = json_string_value(json_object_get(node, "target"));
	c.target = strncmp(t, "torch.ops.", 10) == 0 ? t + 10 : t;
	c.a = aten_lookup(c.target);
	if (!c.a && symnode(node))
		return;   /* sizes arithmetic: read at its example values */
	if (!c.a)
		dp_die("unsupported op %s got past the check", c.target);
	if (c.a->kind < 0)
		return;
	c.fn = g_imp(g)->fn;
	c.kind = c.a->kind;
	char what[160];
	snprintf(what, sizeof what, "node '%.64s' (%.64s)", c.node, c.target);

	readargs(&c);
	json_t *outs = json_object_get(node, "outputs");
	int nres = dp_op_nout[c.kind];   /* the results the IR op computes */
	for (size_t k = (size_t)nres; k < json_array_size(outs); k++) {
		const char *n = tensorname(json_array_get(outs, k));
		if (n)
			g_unused(g, n, what);
	}
	complexargs(&c);
	promote(&c);
	if (c.a->hook == H_SPLIT) {
		split(&c, what);
		return;
	}
	if (c.a->hook == H_MESHGRID) {
		meshgrid(&c, what);
		return;
	}
	if (!hook(&c))
		return;

	int res = emit(&c, c.kind, c.in, c.nin, tensorname(json_array_get(outs, 0)), what);
	int oi = c.fn->nop - 1;
	for (int k = 1; k < nres; k++) {   /* a tuple's other results (getitem k) */
		const char *on = tensorname(json_array_get(outs, (size_t)k));
		Type want;
		int v = c.fn->op[oi].out[k];
		if (!on)
			continue;   /* as_none: a result the graph does not use */
		if (g_type(g, on, &want) && (c.a->flags & F_RESVIEW) &&
		    want.dtype == c.fn->val[v].t.dtype && !dp_type_eq(&c.fn->val[v].t, &want) &&
		    dp_numel(&want) == dp_numel(&c.fn->val[v].t)) {
			v = midview(&c, v, want.dim, want.rank);
		}
		if (!g_type(g, on, &want) || !dp_type_eq(&c.fn->val[v].t, &want))
			bad(&c, "import computes %s for its result %d, not the archive's",
			    typestr(&c.fn->val[v].t), k);
		g_define(g, on, v, what);
	}
	if (c.a->flags & F_OUT) {   /* out=: that tensor is the result now */
		json_t *args = json_object_get(node, "inputs");
		for (size_t j = 0; j < json_array_size(args); j++) {
			json_t *e = json_array_get(args, j);
			const char *on = tensorname(json_object_get(e, "arg"));
			const char *an = json_string_value(json_object_get(e, "name"));
			if (on && an && strcmp(an, "out") == 0)
				g_bind(g, on, res);
		}
	}
	if (c.a->flags & F_INPLACE) {
		/* later uses of the mutated tensor see the result */
		json_t *self = json_object_get(json_array_get(json_object_get(node, "inputs"), 0), "arg");
		const char *sn = tensorname(self);
		if (sn) {
			int old = c.in[0];
			g_bind(g, sn, res);
			g_writeback(g, sn, old, res);   /* a view's base sees the write */
		}
	}
}
