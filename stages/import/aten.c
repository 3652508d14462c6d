/* aten.c: the ATen targets import understands, their argument schemas and
 * defaults, and the conversion of one graph node into one IR op. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "import.h"

/*
 * Argument schemas: space-separated "name:kind[=default][>irkey]", in the
 * ATen schema's order.  Kinds:
 *   T   tensor operand          T?  optional tensor operand (may be omitted
 *                                   or None; only at the end)
 *   S   tensor operand, or a Python scalar that becomes a rank-0 const of
 *       the first operand's dtype
 *   i f is   int, float, int list attribute (default: the ATen default,
 *       set explicitly when the node omits the argument)
 *   0   must be omitted, None or False (a variant import does not support)
 * The attribute is named irkey in the IR, else name.  Nodes omit arguments
 * equal to their schema default, so every optional one needs its default.
 */
static const Aten aten[] = {
	{ "aten.linear.default", Alinear, "input:T weight:T bias:T?", 0 },
	{ "aten.relu.default", Arelu, "self:T", 0 },
	{ "aten.relu_.default", Arelu, "self:T", 1 },
	{ "aten.permute.default", Apermute, "self:T dims:is", 0 },
	{ "aten.addmm.default", Aaddmm, "self:T mat1:T mat2:T beta:f=1 alpha:f=1", 0 },
	{ "aten.add.Tensor", Aadd, "self:T other:S alpha:f=1", 0 },
	{ "aten.add_.Tensor", Aadd, "self:T other:S alpha:f=1", 1 },
	{ "aten.mul.Tensor", Amul, "self:T other:S", 0 },
	{ "aten.mul_.Tensor", Amul, "self:T other:S", 1 },
	{ "aten.mm.default", Amm, "self:T mat2:T", 0 },
	{ "aten.matmul.default", Amatmul, "self:T other:T", 0 },
	{ "aten.view.default", Aview, "self:T size:is", 0 },
	{ "aten.reshape.default", Areshape, "self:T shape:is", 0 },
	{ "aten.t.default", At, "self:T", 0 },
	{ "aten.flatten.using_ints", Oflatten, "self:T start_dim:i=0>start end_dim:i=-1>end", 0 },
	{ "aten.softmax.int", Osoftmax, "self:T dim:i dtype:0", 0 },
	{ "aten._softmax.default", Osoftmax, "self:T dim:i half_to_float:0", 0 },
	/* checks of static metadata: nothing to do at run time */
	{ "aten._assert_tensor_metadata.default", -1, "", 0 },
};

/* The entry for target (without "torch.ops."), or NULL. */
const Aten *
aten_lookup(const char *target)
{
	for (size_t i = 0; i < sizeof aten / sizeof aten[0]; i++)
		if (strcmp(aten[i].target, target) == 0)
			return &aten[i];
	return NULL;
}

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
				memcpy(f->key, f->name, sizeof f->name);
			return 1;
		}
		s += n;
	}
}

typedef struct Ctx {
	Graph *g;
	const char *node, *target;
} Ctx;

static _Noreturn void __attribute__((format(printf, 2, 3)))
bad(const Ctx *c, const char *fmt, ...)
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

/* A scalar argument as a rank-0 const of dtype like. */
static int
scalar(const Ctx *c, const char *name, json_t *arg, int like)
{
	json_t *v;
	double x;
	int isint = 1;
	if ((v = json_object_get(arg, "as_int")) && json_is_integer(v))
		x = (double)json_integer_value(v);
	else if ((v = json_object_get(arg, "as_bool")) && json_is_boolean(v))
		x = json_is_true(v);
	else if ((v = json_object_get(arg, "as_float")) && number(v, &x))
		isint = 0;
	else
		bad(c, "argument '%s' is a %s, not a tensor or a number", name, unionkey(arg));
	if (like < 0)
		bad(c, "argument '%s' is a number but the op has no tensor operand before it", name);
	if ((!isint && !isfloat(like)) || (like == DP_BOOL && x != 0 && x != 1))
		bad(c, "a %s scalar with a %s tensor needs type promotion, which import does not do",
		    isint ? "int" : "float", dp_dtype_name[like]);
	return g_scalar(c->g, x, like);
}

/* Converts node (one entry of graph.nodes) into an IR op and binds its
 * result to the node's output name. */
void
aten_node(Graph *g, json_t *node)
{
	Ctx c = { g, json_string_value(json_object_get(node, "name")), NULL };
	const char *t = json_string_value(json_object_get(node, "target"));
	c.target = strncmp(t, "torch.ops.", 10) == 0 ? t + 10 : t;
	const Aten *a = aten_lookup(c.target);
	if (!a)
		dp_die("unsupported op %s got past the check", c.target);
	if (a->kind < 0)
		return;
	Imp *imp = g_imp(g);
	Fn *fn = imp->fn;
	json_t *args = json_object_get(node, "inputs");
	size_t nargs = json_array_size(args);
	char *used = xrealloc(NULL, nargs + 1, 1);
	memset(used, 0, nargs + 1);
	int in[16], nin = 0, like = -1;
	struct { const Field *f; json_t *v; } at[16];
	Field fs[16];
	int nat = 0;

	Field f;
	for (int i = 0; field(a->args, i, &f); i++) {
		if (i >= 16)
			dp_die("ATen schema too long: %s", a->target);
		fs[i] = f;
		json_t *arg = NULL;
		for (size_t j = 0; j < nargs; j++) {
			json_t *e = json_array_get(args, j);
			const char *n = json_string_value(json_object_get(e, "name"));
			if (n && strcmp(n, f.name) == 0) {
				arg = json_object_get(e, "arg");
				used[j] = 1;
				break;
			}
		}
		int none = !arg || json_object_get(arg, "as_none");
		if (f.kind[0] == 'T' || f.kind[0] == 'S') {
			if (none) {
				if (f.kind[1] == '?')
					continue;
				bad(&c, "missing tensor argument '%s'", f.name);
			}
			const char *tn = json_string_value(json_object_get(json_object_get(arg, "as_tensor"), "name"));
			if (tn)
				in[nin] = g_value(g, tn, c.node);
			else if (f.kind[0] == 'S')
				in[nin] = scalar(&c, f.name, arg, like);
			else
				bad(&c, "argument '%s' is a %s, not a tensor", f.name, unionkey(arg));
			if (like < 0)
				like = fn->val[in[nin]].t.dtype;
			nin++;
		} else if (f.kind[0] == '0') {
			if (!none && !json_is_false(json_object_get(arg, "as_bool")))
				bad(&c, "argument '%s' = %s is not supported", f.name, unionkey(arg));
		} else {
			if (none && !f.def)
				bad(&c, "missing argument '%s'", f.name);
			fs[i].def = none ? f.def : NULL;
			at[nat].f = &fs[i];
			at[nat++].v = none ? NULL : arg;
		}
	}
	for (size_t j = 0; j < nargs; j++)
		if (!used[j])
			bad(&c, "unexpected argument '%s'",
			    json_string_value(json_object_get(json_array_get(args, j), "name")));
	free(used);

	int op = dp_addop(fn, a->kind, in, nin);
	for (int i = 0; i < nat; i++) {
		const Field *fp = at[i].f;
		json_t *v = at[i].v, *x;
		double d;
		if (fp->def) {
			d = strtod(fp->def, NULL);
			if (fp->kind[0] == 'i')
				dp_seti(fn, op, fp->key, (int64_t)d);
			else
				dp_setf(fn, op, fp->key, d);
		} else if (strcmp(fp->kind, "is") == 0) {
			x = json_object_get(v, "as_ints");
			if (!json_is_array(x))
				bad(&c, "argument '%s' is a %s, not an int list", fp->name, unionkey(v));
			size_t n = json_array_size(x);
			int64_t *iv = dp_alloc(fn->arena, n + 1, sizeof *iv);
			for (size_t k = 0; k < n; k++) {
				if (!json_is_integer(json_array_get(x, k)))
					bad(&c, "argument '%s' has a symbolic entry; DevProc needs static shapes", fp->name);
				iv[k] = json_integer_value(json_array_get(x, k));
			}
			dp_setints(fn, op, fp->key, iv, (int)n);
		} else if (fp->kind[0] == 'i') {
			if ((x = json_object_get(v, "as_int")) && json_is_integer(x))
				dp_seti(fn, op, fp->key, json_integer_value(x));
			else if ((x = json_object_get(v, "as_bool")) && json_is_boolean(x))
				dp_seti(fn, op, fp->key, json_is_true(x));
			else
				bad(&c, "argument '%s' is a %s, not an int", fp->name, unionkey(v));
		} else {
			if ((x = json_object_get(v, "as_float")) && number(x, &d))
				dp_setf(fn, op, fp->key, d);
			else if ((x = json_object_get(v, "as_int")) && json_is_integer(x))
				dp_setf(fn, op, fp->key, (double)json_integer_value(x));
			else
				bad(&c, "argument '%s' is a %s, not a number", fp->name, unionkey(v));
		}
	}
	Err err = { 0 };
	if (dp_infer(fn, op, &err))
		bad(&c, "%s", err.msg);
	int res = fn->op[op].out[0];
	json_t *out = json_array_get(json_object_get(node, "outputs"), 0);
	const char *on = json_string_value(json_object_get(json_object_get(out, "as_tensor"), "name"));
	Type want;
	if (!g_type(g, on, &want))
		bad(&c, "the archive gives no type for its result '%s'", on);
	Type *got = &fn->val[res].t;
	if (got->dtype != want.dtype || got->rank != want.rank ||
	    memcmp(got->dim, want.dim, (size_t)want.rank * sizeof want.dim[0]) != 0)
		bad(&c, "import computes %s but the archive says %s", typestr(got), typestr(&want));
	g_bind(g, on, res);
	if (a->inplace) {
		/* later uses of the mutated tensor see the result */
		json_t *self = json_object_get(json_array_get(args, 0), "arg");
		const char *sn = json_string_value(json_object_get(json_object_get(self, "as_tensor"), "name"));
		if (sn)
			g_bind(g, sn, res);
	}
}
