/* nn.c: emitters of the neural-network ops (NN_OPS in ops.h): the runtime
 * calls (elem.c, nn.c in runtime/) that run one op, with every shape,
 * stride and attribute folded into constants. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lower.h"

/* The error for an operand dtype this target has no kernel for. */
static int
nokernel(Ctx *c, const Op *op, int i, int dtype, const char *have)
{
	dp_seterr(c->err, "op %d (%s): the cpu target has no kernel for %s tensors (only %s)",
	          i, dp_op_name[op->kind], dp_dtype_name[dtype], have);
	return -1;
}

/* Fails unless every operand and result of op is f32. */
static int
needf32(Ctx *c, const Op *op, int i)
{
	int k;

	for (k = 0; k < op->nin + op->nout; k++) {
		int v = k < op->nin ? op->in[k] : op->out[k - op->nin];
		if (ty(c, v)->dtype != DP_F32)
			return nokernel(c, op, i, ty(c, v)->dtype, "f32");
	}
	return 0;
}

/* Appends the name of a table of v[0..n-1] (cints). */
static void
ints(Ctx *c, const int64_t *v, int n)
{
	cints(c, v, n);
}

/* Appends a double literal that reads back as v. */
static void
dbl(Ctx *c, double v)
{
	char buf[64];

	if (isnan(v)) {
		str_put(c->body, "NAN");
		return;
	}
	if (isinf(v)) {
		str_put(c->body, v < 0 ? "(-INFINITY)" : "INFINITY");
		return;
	}
	snprintf(buf, sizeof buf, "%.17g", v);
	if (!strpbrk(buf, ".en"))
		strcat(buf, ".0");
	str_put(c->body, buf);
}

/* Dense element strides of shape t. */
static void
dstrides(const Type *t, int64_t *s)
{
	int64_t m = 1;
	int i;

	for (i = t->rank - 1; i >= 0; i--) {
		s[i] = m;
		m *= t->dim[i];
	}
}

/* The arena scratch of op i, as a float pointer expression. */
static void
scratchp(Ctx *c, int i)
{
	str_printf(c->body, "(float *)((unsigned char *)arena + %lld)",
	           (long long)c->plan->scratch[i]);
}

/* The output shape as a loop nest: rank and dims (a scalar is [1]). */
static int
shape(const Type *t, int64_t *dim)
{
	if (t->rank == 0) {
		dim[0] = 1;
		return 1;
	}
	memcpy(dim, t->dim, (size_t)t->rank * sizeof *dim);
	return t->rank;
}

/* ---- elementwise ---- */

/* The runtime's enum of a binary op with a dprt_binary/dprt_logical
 * kernel ("DPRT_ADD": its formula's name in capitals), or NULL. */
static const char *
binname(int kind, char *buf, size_t n)
{
	static const char *const rt[] = { "add", "sub", "mul", "div", "pow", "eq", "ne", "lt",
	                                  "le", "gt", "ge", "and", "or", "xor" };
	const char *f = dp_op_formula[kind];
	size_t k;

	for (k = 0; k < sizeof rt / sizeof *rt; k++)
		if (strcmp(rt[k], f) == 0)
			break;
	if (k == sizeof rt / sizeof *rt)
		return NULL;
	snprintf(buf, n, "DPRT_");
	for (k = 0; f[k] && k + 6 < n; k++)
		buf[5 + k] = (char)(f[k] - 'a' + 'A');
	buf[5 + k] = 0;
	return buf;
}

/* A binary f32 op with no runtime kernel of its own: dprt_map2_f32 over
 * its formula from runtime/dpscalar.h (sa, sb: broadcast strides);
 * dprt_map2_i64 over dps_NAME_i64 for the Fbinaryn form on i64. */
static int
k_map2(Ctx *c, const Op *op, int i, const int64_t *sa, const int64_t *sb, int r,
       const int64_t *dim)
{
	char f[32];
	double p[2];
	int i64 = ty(c, op->in[0])->dtype == DP_I64 && dp_op_form[op->kind] == Fbinaryn;

	if (!i64 && needf32(c, op, i) != 0)
		return -1;
	dp_formula(op, f, sizeof f, p);
	c->scalar = 1;
	str_printf(c->body, "\tdprt_map2_%s(dps_%s%s, v%d, v%d, ", i64 ? "i64" : "f32", f,
	           i64 ? "_i64" : "", V(c, op->out[0]), V(c, op->in[0]));
	ints(c, sa, r);
	str_printf(c->body, ", v%d, ", V(c, op->in[1]));
	ints(c, sb, r);
	str_printf(c->body, ", %d, ", r);
	ints(c, dim, r);
	if (!i64) {
		str_put(c->body, ", ");
		str_float(c->body, dp_getf(op, "alpha", 1));
	}
	str_put(c->body, ");\n");
	return 0;
}

/* Broadcasting binary ops: arithmetic, comparisons, logic. */
static int
k_binary(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], a = op->in[0], b = op->in[1], r, form = dp_op_form[op->kind];
	const Type *to = ty(c, y), *ta = ty(c, a), *tb = ty(c, b);
	int64_t sa[DP_MAXRANK], sb[DP_MAXRANK], dim[DP_MAXRANK];
	int dt = ta->dtype, arith = op->kind == Aadd || op->kind == Asub || op->kind == Amul;
	char nb[32];
	const char *name = binname(op->kind, nb, sizeof nb);

	if (dp_numel(to) == 0)
		return 0;
	dp_bstrides(ta, to, sa);
	dp_bstrides(tb, to, sb);
	r = shape(to, dim);
	if (to->rank == 0)
		sa[0] = sb[0] = 0;
	if (!name)
		return k_map2(c, op, i, sa, sb, r, dim);
	if (form == Flogic) {   /* any dtypes */
		str_printf(c->body, "\tdprt_logical(%s, v%d, v%d, %s, ", name, V(c, y), V(c, a),
		           dprt_enum(dt));
		ints(c, sa, r);
		str_printf(c->body, ", v%d, %s, ", V(c, b), dprt_enum(tb->dtype));
		ints(c, sb, r);
		str_printf(c->body, ", %d, ", r);
		ints(c, dim, r);
		str_put(c->body, ");\n");
		return 0;
	}
	if (arith && dt != DP_F32 && dt != DP_I64 && dt != DP_I32)
		return nokernel(c, op, i, dt, "f32, i64, i32");
	if (form == Fbinary && !arith && dt != DP_F32)
		return nokernel(c, op, i, dt, "f32");
	if (form == Fcompare && dt != DP_F32 && dt != DP_I64 && dt != DP_I32 && dt != DP_BOOL &&
	    dt != DP_U8)
		return nokernel(c, op, i, dt, "f32, i64, i32, bool, u8");
	str_printf(c->body, "\tdprt_binary(%s, %s, v%d, v%d, ", name, dprt_enum(dt), V(c, y),
	           V(c, a));
	ints(c, sa, r);
	str_printf(c->body, ", v%d, ", V(c, b));
	ints(c, sb, r);
	str_printf(c->body, ", %d, ", r);
	ints(c, dim, r);
	str_put(c->body, ", ");
	dbl(c, op->kind == Aadd || op->kind == Asub ? dp_getf(op, "alpha", 1) : 1);
	str_put(c->body, ");\n");
	return 0;
}

static int
k_where(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], r, k;
	const Type *to = ty(c, y);
	int64_t s[3][DP_MAXRANK], dim[DP_MAXRANK];

	if (dp_numel(to) == 0)
		return 0;
	for (k = 0; k < 3; k++) {
		dp_bstrides(ty(c, op->in[k]), to, s[k]);
		if (to->rank == 0)
			s[k][0] = 0;
	}
	r = shape(to, dim);
	str_printf(c->body, "\tdprt_where(v%d, %d", V(c, y), dp_dtype_size[to->dtype]);
	for (k = 0; k < 3; k++) {
		str_printf(c->body, ", v%d, ", V(c, op->in[k]));
		ints(c, s[k], r);
	}
	str_printf(c->body, ", %d, ", r);
	ints(c, dim, r);
	str_put(c->body, ");\n");
	return 0;
}

/* A unary op: a loop over its n dense elements calling its formula from
 * runtime/dpscalar.h (dps_NAME_i64 on i64 for the Funaryn form);
 * logical_not of any dtype through dprt_not. */
static int
k_unary(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0];
	int dt = ty(c, x)->dtype;
	int64_t n = dp_numel(ty(c, y));
	char f[32];
	double p[2];

	if (op->kind == Anot) {
		str_printf(c->body, "\tdprt_not(v%d, v%d, %s, %lld);\n", V(c, y), V(c, x),
		           dprt_enum(dt), (long long)n);
		return 0;
	}
	dp_formula(op, f, sizeof f, p);
	c->scalar = 1;
	if (dt == DP_I64 && dp_op_form[op->kind] == Funaryn) {
		str_printf(c->body, "\tfor (int64_t j = 0; j < %lld; j++)\n\t\tv%d[j] = dps_%s_i64(v%d[j], ",
		           (long long)n, V(c, y), f, V(c, x));
		str_i64(c->body, ceil(p[0]));   /* bounds rounded inwards */
		str_put(c->body, ", ");
		str_i64(c->body, floor(p[1]));
		str_put(c->body, ");\n");
		return 0;
	}
	if (needf32(c, op, i) != 0)
		return -1;
	if (n >= 32768) {   /* large: dprt_unary_f32 (the same formulas) on the pool */
		static const char *const fs[] = { "rsqrt", "sqrt", "exp", "log", "cos", "sin", "neg",
			"abs", "reciprocal", "sigmoid", "tanh", "silu", "gelu", "gelu_tanh", "hardswish",
			"hardsigmoid", "clamp", "relu", NULL };
		static const char *const es[] = { "RSQRT", "SQRT", "EXP", "LOG", "COS", "SIN", "NEG",
			"ABS", "RECIP", "SIGMOID", "TANH", "SILU", "GELU", "GELU_TANH", "HARDSWISH",
			"HARDSIGMOID", "CLAMP", "RELU" };
		int k;
		for (k = 0; fs[k] && strcmp(fs[k], f) != 0; k++)
			;
		if (fs[k]) {
			str_printf(c->body, "\tdprt_unary_f32(DPRT_%s, v%d, v%d, %lld, ", es[k], V(c, y),
			           V(c, x), (long long)n);
			str_float(c->body, p[0]);
			str_put(c->body, ", ");
			str_float(c->body, p[1]);
			str_put(c->body, ");\n");
			return 0;
		}
	}
	str_printf(c->body, "\tfor (int64_t j = 0; j < %lld; j++)\n\t\tv%d[j] = dps_%s(v%d[j], ",
	           (long long)n, V(c, y), f, V(c, x));
	str_float(c->body, p[0]);
	str_put(c->body, ", ");
	str_float(c->body, p[1]);
	str_put(c->body, ");\n");
	return 0;
}

/* ---- data movement ---- */

/* One dprt_copy call: shape dim (rank r), y + yoff with strides ys, x +
 * xoff with strides xs. */
static void
copy(Ctx *c, int y, int64_t yoff, const int64_t *ys, int x, int64_t xoff,
     const int64_t *xs, int es, int r, const int64_t *dim)
{
	int64_t one = 1;

	if (r == 0) {
		r = 1;
		dim = ys = xs = &one;
	}
	str_printf(c->body, "\tdprt_copy(v%d + %lld, ", V(c, y), (long long)yoff);
	ints(c, ys, r);
	str_printf(c->body, ", v%d + %lld, ", V(c, x), (long long)xoff);
	ints(c, xs, r);
	str_printf(c->body, ", %d, %d, ", es, r);
	ints(c, dim, r);
	str_put(c->body, ");\n");
}

static int
k_movement(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0], k, j;
	const Type *tx = ty(c, x), *to = ty(c, y);
	int es = dp_dtype_size[to->dtype], r = tx->rank;
	int64_t xs[DP_MAXRANK], ys[DP_MAXRANK], s2[DP_MAXRANK], d2[DP_MAXRANK];

	if (dp_numel(to) == 0)
		return 0;
	dstrides(tx, xs);
	dstrides(to, ys);
	switch (op->kind) {
	case Aexpand:
		dp_bstrides(tx, to, s2);
		copy(c, y, 0, ys, x, 0, s2, es, to->rank, to->dim);
		return 0;
	case Aclone:
		copy(c, y, 0, ys, x, 0, xs, es, r, to->dim);
		return 0;
	case Aslice: {
		int d = normdim(dp_geti(op, "dim", 0), r);
		int64_t n = tx->dim[d], s = dp_geti(op, "start", 0), step = dp_geti(op, "step", 1);
		if (s < 0)
			s = s < -n ? 0 : s + n;
		if (s > n)
			s = n;
		memcpy(s2, xs, sizeof xs);
		s2[d] *= step;
		copy(c, y, 0, ys, x, s * xs[d], s2, es, r, to->dim);
		return 0;
	}
	case Aselect: {
		int d = normdim(dp_geti(op, "dim", 0), r);
		int64_t ix = dp_geti(op, "index", 0);
		if (ix < 0)
			ix += tx->dim[d];
		for (k = j = 0; k < r; k++)
			if (k != d)
				s2[j++] = xs[k];
		copy(c, y, 0, ys, x, ix * xs[d], s2, es, to->rank, to->dim);
		return 0;
	}
	case Acat:
	case Astack: {
		int stack = op->kind == Astack, d = normdim(dp_geti(op, "dim", 0), to->rank);
		int64_t at = 0;
		for (k = 0; k < to->rank; k++)   /* y's strides seen from an operand */
			if (!stack || k != d)
				s2[k - (stack && k > d)] = ys[k];
		for (k = 0; k < op->nin; k++) {
			const Type *tk = ty(c, op->in[k]);
			if (dp_numel(tk) > 0) {
				dstrides(tk, d2);
				copy(c, y, at * ys[d], stack ? s2 : ys, op->in[k], 0, d2, es, tk->rank,
				     tk->dim);
			}
			at += stack ? 1 : tk->dim[d];
		}
		return 0;
	}
	}
	dp_die("k_movement: op kind %d", op->kind);
}

/* aten.index (one index tensor along dim) and aten.embedding. */
static int
k_gather(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0], ix = op->in[1];
	const Type *tx = ty(c, x);
	int d = op->kind == Aindex ? normdim(dp_geti(op, "dim", 0), tx->rank) : 0;

	if (dp_numel(ty(c, y)) == 0)
		return 0;
	str_printf(c->body, "\tif (dprt_gather(v%d, v%d, %d, %lld, %lld, %lld, v%d, %s, %lld, ",
	           V(c, y), V(c, x), dp_dtype_size[tx->dtype], (long long)prod(tx, 0, d),
	           (long long)tx->dim[d], (long long)prod(tx, d + 1, tx->rank), V(c, ix),
	           dprt_enum(ty(c, ix)->dtype), (long long)dp_numel(ty(c, ix)));
	str_printf(c->body, "\"op %d (%s)\", err, errn) != 0)\n\t\treturn -1;\n", i,
	           dp_op_name[op->kind]);
	return 0;
}

/* index_write: operand 0's bytes first (none to copy where the result is
 * them: a state written in place, plan.c), then src's slices. */
static int
k_indexwrite(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0];
	const Type *tx = ty(c, x);
	int d = normdim(dp_geti(op, "dim", 0), tx->rank);
	int64_t nb = dp_nbytes(tx);

	if (nb == 0)
		return 0;
	str_printf(c->body, "\tif ((const void *)v%d != (const void *)v%d)\n"
	                    "\t\tmemcpy(v%d, v%d, %lld);\n", V(c, y), V(c, x), V(c, y), V(c, x),
	           (long long)nb);
	str_printf(c->body, "\tdprt_index_write(v%d, v%d, %d, %lld, %lld, %lld, v%d, %lld);\n",
	           V(c, y), V(c, op->in[2]), dp_dtype_size[tx->dtype], (long long)prod(tx, 0, d),
	           (long long)tx->dim[d], (long long)prod(tx, d + 1, tx->rank), V(c, op->in[1]),
	           (long long)ty(c, op->in[1])->dim[0]);
	return 0;
}

/* ---- sources ---- */

static int
k_source(Ctx *c, const Op *op, int i)
{
	int y = op->out[0];
	const Type *to = ty(c, y);
	int64_t n = dp_numel(to);

	if (n == 0)
		return 0;
	if (op->kind == Aarange) {
		str_printf(c->body, "\tdprt_arange(v%d, %s, ", V(c, y), dprt_enum(to->dtype));
		dbl(c, dp_getf(op, "start", 0));
		str_put(c->body, ", ");
		dbl(c, dp_getf(op, "step", 1));
		str_printf(c->body, ", %lld);\n", (long long)n);
		return 0;
	}
	if (op->kind == Arand || op->kind == Arandn) {   /* runtime/dpscalar.h */
		int f64 = to->dtype == DP_F64;
		c->scalar = 1;
		str_printf(c->body, "\tfor (int64_t j = 0; j < %lld; j++)\n\t\tv%d[j] = ", (long long)n,
		           V(c, y));
		if (to->dtype == DP_I64)
			str_put(c->body, "(int64_t)dps_rbits(");
		else
			str_printf(c->body, "dps_rand%s_%s(", op->kind == Arandn ? "n" : "",
			           f64 ? "f64" : "f32");
		str_printf(c->body, "(int64_t)%lluULL, (int64_t)%lluULL, j);\n",
		           (unsigned long long)dp_geti(op, "seed", 0),
		           (unsigned long long)dp_geti(op, "stream", 0));
		return 0;
	}
	str_printf(c->body, "\tdprt_fill(v%d, %s, ", V(c, y), dprt_enum(to->dtype));
	dbl(c, dp_getf(op, "value", 0));
	str_printf(c->body, ", %lld);\n", (long long)n);
	return 0;
}

/* ---- reductions ---- */

static int k_gap(Ctx *c, const Op *op, int i);

static int
k_reduce(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0], k, nk = 0, nr = 0;
	const Type *tx = ty(c, x);
	const Attr *d = dp_attr(op, "dim");
	int red[DP_MAXRANK] = { 0 }, dt = tx->dtype;
	int64_t xs[DP_MAXRANK], kd[DP_MAXRANK], ks[DP_MAXRANK], rd[DP_MAXRANK], rs[DP_MAXRANK];
	const char *what = op->kind == Asum ? "DPRT_SUM" : op->kind == Amean ? "DPRT_MEAN" : "DPRT_ANY";

	if (op->kind == Asum && dt != DP_F32 && dt != DP_I64 && dt != DP_I32)
		return nokernel(c, op, i, dt, "f32, i64, i32");
	if (op->kind == Amean && dt != DP_F32)
		return nokernel(c, op, i, dt, "f32");
	if (dp_numel(ty(c, y)) == 0)
		return 0;
	if (c->blk[x])   /* a global average of a blocked value */
		return k_gap(c, op, i);
	for (k = 0; k < tx->rank; k++)
		red[k] = d->n == 0;
	for (k = 0; k < d->n; k++)
		red[normdim(d->ints[k], tx->rank)] = 1;
	dstrides(tx, xs);
	for (k = 0; k < tx->rank; k++) {
		if (tx->dim[k] == 1)
			continue;
		if (red[k]) {
			rd[nr] = tx->dim[k];
			rs[nr++] = xs[k];
		} else {
			kd[nk] = tx->dim[k];
			ks[nk++] = xs[k];
		}
	}
	str_printf(c->body, "\tdprt_reduce(%s, %s, v%d, v%d, %d, ", what, dprt_enum(dt), V(c, y),
	           V(c, x), nk);
	ints(c, kd, nk);
	str_put(c->body, ", ");
	ints(c, ks, nk);
	str_printf(c->body, ", %d, ", nr);
	ints(c, rd, nr);
	str_put(c->body, ", ");
	ints(c, rs, nr);
	str_put(c->body, ");\n");
	return 0;
}

/* ---- norms ---- */

static int
k_norm(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0];
	const Type *tx = ty(c, x);

	if (needf32(c, op, i) != 0)
		return -1;
	if (dp_numel(tx) == 0)
		return 0;
	if (op->kind == Abatchnorm) {
		str_printf(c->body, "\tdprt_batchnorm_f32(v%d, v%d, v%d, v%d, v%d, v%d, ", V(c, y),
		           V(c, x), V(c, op->in[1]), V(c, op->in[2]), V(c, op->in[3]),
		           V(c, op->in[4]));
		str_float(c->body, dp_getf(op, "eps", 1e-5));
		str_printf(c->body, ", %lld, %lld, %lld);\n", (long long)tx->dim[0],
		           (long long)tx->dim[1], (long long)prod(tx, 2, tx->rank));
		return 0;
	}
	int64_t n = prod(tx, tx->rank - dp_attr(op, "normalized_shape")->n, tx->rank);
	if (op->kind == Alayernorm) {
		str_printf(c->body, "\tdprt_layernorm_f32(v%d, v%d, ", V(c, y), V(c, x));
		for (int k = 1; k < 3; k++) {
			if (op->nin > k)
				str_printf(c->body, "v%d, ", V(c, op->in[k]));
			else
				str_put(c->body, "NULL, ");
		}
	} else {
		str_printf(c->body, "\tdprt_rmsnorm_f32(v%d, v%d, ", V(c, y), V(c, x));
		if (op->nin > 1)
			str_printf(c->body, "v%d, ", V(c, op->in[1]));
		else
			str_put(c->body, "NULL, ");
	}
	str_printf(c->body, "%lld, %lld, ", (long long)(dp_numel(tx) / n), (long long)n);
	/* rms_norm's default eps is f32's machine epsilon, as in PyTorch */
	str_float(c->body, dp_getf(op, "eps", op->kind == Armsnorm ? 1.1920928955078125e-07 : 1e-5));
	str_put(c->body, ");\n");
	return 0;
}

/* ---- pooling and convolution ---- */

/* The global average pool of a blocked 4-D value (adaptive_avg_pool2d to
 * 1×1, or the mean over H and W) into a plain [N, C]. */
static int
k_gap(Ctx *c, const Op *op, int i)
{
	const Type *tx = ty(c, op->in[0]);

	str_printf(c->body, "\tdprt_gap_blk_f32(v%d, v%d, %lld, %lld, %lld, %lld);\n",
	           V(c, op->out[0]), V(c, op->in[0]), (long long)tx->dim[0], (long long)tx->dim[1],
	           (long long)tx->dim[2], (long long)tx->dim[3]);
	return 0;
}

static int
k_pool(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0];
	const Type *tx = ty(c, x), *to = ty(c, y);
	int r = tx->rank;
	int64_t k[2], s[2], p[2], d[2], NC = prod(tx, 0, r - 2);

	if (needf32(c, op, i) != 0)
		return -1;
	if (dp_numel(to) == 0)
		return 0;
	if (c->blk[x] && op->kind == Aadaptavg)
		return k_gap(c, op, i);
	if (op->kind == Aadaptavg) {
		str_printf(c->body, "\tdprt_adaptive_avgpool2d_f32(v%d, v%d, %lld, %lld, %lld, %lld, "
		           "%lld);\n", V(c, y), V(c, x), (long long)NC, (long long)tx->dim[r - 2],
		           (long long)tx->dim[r - 1], (long long)to->dim[r - 2],
		           (long long)to->dim[r - 1]);
		return 0;
	}
	if (dp_poolwin(op, k, s, p, d) != 0) {
		dp_seterr(c->err, "op %d (%s): its window is not legalized (run dp-legalize)", i,
		          dp_op_name[op->kind]);
		return -1;
	}
	if (c->blk[x])   /* a max pool between blocked values (nn_layout) */
		str_printf(c->body, "\tdprt_maxpool2d_blk_f32(v%d, v%d, %lld, %lld, %lld, %lld, "
		           "%lld, %lld, ", V(c, y), V(c, x), (long long)tx->dim[0],
		           (long long)tx->dim[1], (long long)tx->dim[2], (long long)tx->dim[3],
		           (long long)to->dim[2], (long long)to->dim[3]);
	else
		str_printf(c->body, "\tdprt_%s_f32(v%d, v%d, %lld, %lld, %lld, %lld, %lld, ",
		           op->kind == Amaxpool ? "maxpool2d" : "avgpool2d", V(c, y), V(c, x),
		           (long long)NC, (long long)tx->dim[r - 2], (long long)tx->dim[r - 1],
		           (long long)to->dim[r - 2], (long long)to->dim[r - 1]);
	ints(c, k, 2);
	str_put(c->body, ", ");
	ints(c, s, 2);
	str_put(c->body, ", ");
	ints(c, p, 2);
	if (op->kind == Amaxpool) {
		str_put(c->body, ", ");
		ints(c, d, 2);
		str_put(c->body, ");\n");
	} else
		str_printf(c->body, ", %d, %lld);\n", (int)dp_geti(op, "count_include_pad", 1),
		           (long long)dp_geti(op, "divisor_override", 0));
	return 0;
}

/* Convolution geometry: kernel, stride, padding, dilation, groups. */
static void
convgeom(const Fn *fn, const Op *op, int64_t k[2], int64_t s[2], int64_t p[2], int64_t d[2])
{
	const Type *w = &fn->val[op->in[1]].t;

	k[0] = w->dim[2];
	k[1] = w->dim[3];
	dp_pair(op, "stride", 1, s);
	dp_pair(op, "padding", 0, p);
	dp_pair(op, "dilation", 1, d);
}

/* Whether op runs as a depthwise convolution, as runtime/conv.c decides. */
static int
depthwise(int64_t C, int64_t O, int64_t g)
{
	return g == C && g > 1 && O % C == 0;
}

/* Floats of scratch, as runtime/conv.c's dprt_conv_scratch_floats: K
 * offsets (int64), the padded input split into s0×s1 phases (of every image
 * when groups is 1), 32 of slack. */
static int64_t
convscratch(const Fn *fn, const Op *op, int lay)
{
	const Type *x = &fn->val[op->in[0]].t, *y = &fn->val[op->out[0]].t;
	int64_t k[2], s[2], p[2], d[2], g = dp_geti(op, "groups", 1), C = x->dim[1];
	int64_t Hq, Wq, n = 0;

	convgeom(fn, op, k, s, p, d);
	if (!depthwise(C, y->dim[1], g) &&
	    !(k[0] == 1 && k[1] == 1 && s[0] == 1 && s[1] == 1 && p[0] == 0 && p[1] == 0)) {
		Hq = (x->dim[2] + 2 * p[0] + s[0] - 1) / s[0];
		Wq = (x->dim[3] + 2 * p[1] + s[1] - 1) / s[1];
		n = 2 * (C / g * k[0] * k[1]) + (g == 1 ? x->dim[0] : 1) * C / g * s[0] * s[1] *
		    Hq * Wq + 32;
	}
	/* plain copies of blocked operands, 16-float aligned (with res) */
	n = (n + 15) / 16 * 16;
	if (lay & 1)
		n += (dp_numel(x) + 15) / 16 * 16;
	if (lay & 2)
		n += 2 * ((dp_numel(y) + 15) / 16 * 16);
	return n;
}

/* The layout bits of a convolution (dprt_conv's lay). */
static int
convlay(const char *blk, const Op *op)
{
	return (blk[op->in[0]] ? 1 : 0) | (blk[op->out[0]] ? 2 : 0);
}

/* Floats of a linear layer's weights packed at init (runtime/gemm.c's
 * dprt_linear_prep_floats), or 0: a constant f32 weight [N, K] and more
 * rows than gemm.c's dot-product path takes (32). */
static int64_t
linearprep(const Fn *fn, const Op *op)
{
	const Op *d;
	int64_t N, K;
	int nin = dp_geti(op, "res", 0) ? op->nin - 1 : op->nin, wt = (int)dp_geti(op, "wt", 0);

	if (op->kind != Alinear || op->dev != DEV_CPU || op->nout != 1 || nin < 2 ||
	    nin > 3 || fn->val[op->in[1]].t.rank != 2 ||
	    fn->val[op->out[0]].t.dtype != DP_F32 || fn->val[op->in[0]].t.dtype != DP_F32 ||
	    fn->val[op->in[1]].t.dtype != DP_F32)
		return 0;
	if (nin == 3 && (fn->val[op->in[2]].t.rank != 1 || fn->val[op->in[2]].t.dtype != DP_F32))
		return 0;
	d = &fn->op[fn->val[op->in[1]].def];
	if (d->kind != Oconst || d->dev != DEV_CPU || dp_geti(d, "state", 0) ||
	    dp_istranspose(fn, &fn->op[fn->val[op->in[0]].def]))
		return 0;
	N = fn->val[op->in[1]].t.dim[wt ? 1 : 0];
	K = fn->val[op->in[1]].t.dim[wt ? 0 : 1];
	if (N <= 0 || K <= 0 || dp_numel(&fn->val[op->in[0]].t) / K <= 32)
		return 0;
	return (N + 31) * K;
}

/* Bytes of prepared weights, as runtime/conv.c's dprt_conv_prep_floats:
 * per group ⌈Og/mr⌉·mr rows of K packed (bounded by Og + 7), then the bias;
 * depthwise: the [O, k0·k1] weights and the bias. */
int64_t
nn_prep(const Fn *fn, const Op *op)
{
	const Type *x, *w, *y;
	int64_t g, K;

	if (op->kind == Alinear)
		return 4 * linearprep(fn, op);
	if (op->kind != Aconv || fn->val[op->in[0]].t.rank != 4 || fn->val[op->in[1]].t.rank != 4 ||
	    fn->val[op->out[0]].t.dtype != DP_F32 || dp_numel(&fn->val[op->out[0]].t) == 0)
		return 0;
	x = &fn->val[op->in[0]].t;
	w = &fn->val[op->in[1]].t;
	y = &fn->val[op->out[0]].t;
	g = dp_geti(op, "groups", 1);
	K = w->dim[1] * w->dim[2] * w->dim[3];
	if (depthwise(x->dim[1], y->dim[1], g))
		return 4 * (y->dim[1] * w->dim[2] * w->dim[3] + y->dim[1]);
	return 4 * (g * ((y->dim[1] / g + 7) * K) + y->dim[1]);
}

/* A weight operand of the preparation: a pointer into the weight blob when
 * it is a constant (then prepared once in NAME_prep), else its value. */
static void
prepoperand(Ctx *c, Str *s, int v, int inprep)
{
	const Home *h = &c->plan->h[v];

	if (inprep)
		str_printf(s, "(const float *)(W + %lld)", (long long)h->idx);
	else
		str_printf(s, "v%d", V(c, v));
}

static const char *const actname[] = {
	"DPRT_ACT_NONE", "DPRT_ACT_RELU", "DPRT_ACT_CLAMP", "DPRT_ACT_HARDSWISH", "DPRT_ACT_SILU",
	"DPRT_ACT_GELU", "DPRT_ACT_GELU_TANH",
};

/* aten.linear with its activation fused (nn_fuse), or with a constant
 * weight packed at init (linearprep): one dprt_linear_f32 or
 * dprt_linear_packed_f32. */
static int
k_linear_act(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0], w = op->in[1];
	int wt = (int)dp_geti(op, "wt", 0), res = (int)dp_geti(op, "res", 0);
	const Type *tw = ty(c, w);
	int64_t N = tw->dim[wt ? 1 : 0], K = tw->dim[wt ? 0 : 1], M = K ? dp_numel(ty(c, x)) / K : 0;
	int packed = linearprep(c->fn, op) > 0 && c->plan->h[w].kind == H_CONST;

	if (needf32(c, op, i) != 0)
		return -1;
	if (dp_numel(ty(c, y)) == 0)
		return 0;
	if (wt || res) {   /* an addmm's weight [K, N], or a residual */
		if (packed) {
			str_printf(c->prep, "\tdprt_linear_prep_ex((float *)((unsigned char *)arena + "
			           "%lld), ", (long long)c->prepoff[i]);
			prepoperand(c, c->prep, w, 1);
			str_printf(c->prep, ", %lld, %lld, %d);\n", (long long)N, (long long)K, wt);
		}
		str_printf(c->body, "\tdprt_linear_ex_f32(v%d, v%d, v%d, ", V(c, y), V(c, x), V(c, w));
		if (packed)
			str_printf(c->body, "(const float *)((unsigned char *)arena + %lld), ",
			           (long long)c->prepoff[i]);
		else
			str_put(c->body, "NULL, ");
		if ((res ? op->nin - 1 : op->nin) == 3)
			str_printf(c->body, "v%d, ", V(c, op->in[2]));
		else
			str_put(c->body, "NULL, ");
		if (res)
			str_printf(c->body, "v%d, ", V(c, op->in[res]));
		else
			str_put(c->body, "NULL, ");
		str_printf(c->body, "%lld, %lld, %lld, %s, %d);\n", (long long)M, (long long)N,
		           (long long)K, actname[c->fuse[i].act], wt);
		return 0;
	}
	if (packed) {
		str_printf(c->prep, "\tdprt_linear_prep((float *)((unsigned char *)arena + %lld), ",
		           (long long)c->prepoff[i]);
		prepoperand(c, c->prep, w, 1);
		str_printf(c->prep, ", %lld, %lld);\n", (long long)N, (long long)K);
		str_printf(c->body, "\tdprt_linear_packed_f32(v%d, v%d, v%d, (const float *)"
		           "((unsigned char *)arena + %lld), ", V(c, y), V(c, x), V(c, w),
		           (long long)c->prepoff[i]);
	} else {
		str_printf(c->body, "\tdprt_linear_f32(v%d, v%d, v%d, ", V(c, y), V(c, x), V(c, w));
	}
	if (op->nin == 3)
		str_printf(c->body, "v%d, ", V(c, op->in[2]));
	else
		str_put(c->body, "NULL, ");
	str_printf(c->body, "%lld, %lld, %lld, %s);\n", (long long)M, (long long)N, (long long)K,
	           actname[c->fuse[i].act]);
	return 0;
}

static int
k_conv(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0], j, inprep = 1;
	const Type *tx = ty(c, x), *to = ty(c, y);
	const Fuse *f = &c->fuse[i];
	int64_t k[2], s[2], p[2], d[2];
	int lay = convlay(c->blk, op);
	Str *ps;

	if (needf32(c, op, i) != 0)
		return -1;
	if (dp_numel(to) == 0)
		return 0;
	convgeom(c->fn, op, k, s, p, d);
	/* the descriptor */
	str_printf(c->top, "static const dprt_conv conv%d = {%lld, %lld, %lld, %lld, %lld, %lld, "
	           "%lld, %lld, {%lld, %lld}, {%lld, %lld}, {%lld, %lld}, {%lld, %lld}, %s, ", i,
	           (long long)tx->dim[0], (long long)tx->dim[1], (long long)tx->dim[2],
	           (long long)tx->dim[3], (long long)to->dim[1], (long long)to->dim[2],
	           (long long)to->dim[3], (long long)dp_geti(op, "groups", 1), (long long)k[0],
	           (long long)k[1], (long long)s[0], (long long)s[1], (long long)p[0],
	           (long long)p[1], (long long)d[0], (long long)d[1], actname[f->act]);
	str_float(c->top, f->lo);
	str_put(c->top, ", ");
	str_float(c->top, f->hi);
	str_printf(c->top, ", %d, %d};\n", f->res ? 1 : 0, lay);   /* .res, .lay */
	/* the preparation: once per instance when every operand is a constant */
	for (j = 1; j < f->nconv; j++)
		inprep &= c->plan->h[op->in[j]].kind == H_CONST;
	for (j = 0; f->bn && j < 4; j++)
		inprep &= c->plan->h[op->in[f->bn + j]].kind == H_CONST;
	ps = inprep ? c->prep : c->body;
	str_printf(ps, "\tdprt_conv_prep(&conv%d, (float *)((unsigned char *)arena + %lld), ", i,
	           (long long)c->prepoff[i]);
	prepoperand(c, ps, op->in[1], inprep);
	str_put(ps, ", ");
	if (f->nconv == 3)
		prepoperand(c, ps, op->in[2], inprep);
	else
		str_put(ps, "NULL");
	for (j = 0; j < 4; j++) {
		str_put(ps, ", ");
		if (f->bn)
			prepoperand(c, ps, op->in[f->bn + j], inprep);
		else
			str_put(ps, "NULL");
	}
	str_put(ps, ", ");
	str_float(ps, f->bn ? f->eps : 0);
	str_put(ps, ");\n");
	/* the run */
	str_printf(c->body, "\tdprt_conv_run(&conv%d, v%d, v%d, (const float *)((unsigned char *)"
	           "arena + %lld), ", i, V(c, y), V(c, x), (long long)c->prepoff[i]);
	if (f->res)
		str_printf(c->body, "v%d, ", V(c, op->in[f->res]));
	else
		str_put(c->body, "NULL, ");
	if (convscratch(c->fn, op, lay) > 0)
		scratchp(c, i);
	else
		str_put(c->body, "NULL");
	str_put(c->body, ");\n");
	return 0;
}

/* ---- matrices and attention ---- */

static int
k_bmm(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], a = op->in[0], b = op->in[1];
	const Type *ta = ty(c, a), *tb = ty(c, b);
	long long B = ta->dim[0], M = ta->dim[1], K = ta->dim[2], N = tb->dim[2];

	if (needf32(c, op, i) != 0)
		return -1;
	if (B * M * N == 0)
		return 0;
	str_printf(c->body, "\tfor (int64_t b = 0; b < %lld; b++)\n"
	           "\t\tdprt_sgemm(%lld, %lld, %lld, 1.0f, v%d + b * %lld, %lld, 1, v%d + b * %lld, "
	           "%lld, 1, 0.0f, NULL, 0, 0, v%d + b * %lld, %lld);\n", B, M, N, K, V(c, a),
	           M * K, K, V(c, b), K * N, N, V(c, y), M * N, N);
	return 0;
}

/* Attention op's q type as the kernel sees it (*lq where xf_sdpa set its
 * dims: operands read in place through strides), and its L, S, E, Ev. */
static const Type *
sdpa_geom(const Fn *fn, const Op *op, Type *lq, int64_t *L, int64_t *S, int64_t *E, int64_t *Ev)
{
	const Type *tq = &fn->val[op->in[0]].t;
	const Attr *xd = dp_attr(op, "xdims");
	int r;

	if (xd && dp_attr(op, "xst") && dp_attr(op, "xoff")) {
		*lq = *tq;
		lq->rank = (uint8_t)(xd->n - 2);
		memcpy(lq->dim, xd->ints, (size_t)lq->rank * sizeof *lq->dim);
		r = lq->rank;
		*L = lq->dim[r - 2], *E = lq->dim[r - 1], *S = xd->ints[r], *Ev = xd->ints[r + 1];
		return lq;
	}
	r = tq->rank;
	*L = tq->dim[r - 2], *E = tq->dim[r - 1];
	*S = fn->val[op->in[1]].t.dim[r - 2], *Ev = fn->val[op->in[2]].t.dim[r - 1];
	return tq;
}

/* Floats of scratch, as runtime/nn.c's dprt_sdpa_scratch_floats: the keys
 * transposed in blocks of 64, for head sizes up to 256. */
static int64_t
sdpascratch(const Fn *fn, const Op *op)
{
	int64_t L, S, E, Ev;
	Type lq;
	const Type *tq = sdpa_geom(fn, op, &lq, &L, &S, &E, &Ev);

	return E > 256 ? 0 : prod(tq, 0, tq->rank - 2) * ((S + 63) / 64 * 64) * E;
}

static int
k_sdpa(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], q = op->in[0], k = op->in[1], v = op->in[2], r, j;
	const Type *tq;
	int64_t L, S, E, Ev, ms[DP_MAXRANK] = { 0 }, zero = 0;
	const Attr *sc = dp_attr(op, "scale"), *xd = dp_attr(op, "xdims");
	const Attr *xs = dp_attr(op, "xst"), *xo = dp_attr(op, "xoff");
	Type scores, lq;

	for (j = 0; j < 3; j++)
		if (ty(c, op->in[j])->dtype != DP_F32 || ty(c, y)->dtype != DP_F32)
			return nokernel(c, op, i, ty(c, op->in[j])->dtype, "f32");
	if (dp_numel(ty(c, y)) == 0)
		return 0;
	tq = sdpa_geom(c->fn, op, &lq, &L, &S, &E, &Ev);
	r = tq->rank;
	if (!(xd && xs && xo))
		for (j = 0; j < r - 2; j++)
			if (ty(c, k)->dim[j] != tq->dim[j] || ty(c, v)->dim[j] != tq->dim[j]) {
				dp_seterr(c->err, "op %d (%s): keys or values broadcast over the batch "
				          "with no strides (internal)", i, dp_op_name[op->kind]);
				return -1;
			}
	scores = *tq;
	scores.dim[r - 1] = S;
	if (op->nin == 4)
		dp_bstrides(ty(c, op->in[3]), &scores, ms);
	if (xd && xs && xo)
		str_printf(c->body, "\tdprt_sdpa_strided_f32(v%d + %lld, v%d + %lld, v%d + %lld, "
		           "v%d + %lld, %lld, %lld, %lld, %lld, %lld, ", V(c, y), (long long)xo->ints[0],
		           V(c, q), (long long)xo->ints[1], V(c, k), (long long)xo->ints[2], V(c, v),
		           (long long)xo->ints[3], (long long)prod(tq, 0, r - 2), (long long)L,
		           (long long)S, (long long)E, (long long)Ev);
	else
		str_printf(c->body, "\tdprt_sdpa_f32(v%d, v%d, v%d, v%d, %lld, %lld, %lld, %lld, "
		           "%lld, ", V(c, y), V(c, q), V(c, k), V(c, v), (long long)prod(tq, 0, r - 2),
		           (long long)L, (long long)S, (long long)E, (long long)Ev);
	str_float(c->body, sc ? sc->f : 1.0 / sqrt((double)E));
	str_printf(c->body, ", %d,\n\t\t", (int)dp_geti(op, "is_causal", 0));
	if (op->nin == 4)
		str_printf(c->body, "v%d, %s, ", V(c, op->in[3]), dprt_enum(ty(c, op->in[3])->dtype));
	else
		str_put(c->body, "NULL, DPRT_BOOL, ");
	str_printf(c->body, "%d, ", r - 2);
	ints(c, r > 2 ? tq->dim : &zero, r > 2 ? r - 2 : 1);
	str_put(c->body, ", ");
	ints(c, r > 2 ? ms : &zero, r > 2 ? r - 2 : 1);
	str_printf(c->body, ", %lld, %lld, ", (long long)ms[r - 2], (long long)ms[r - 1]);
	if (xd && xs && xo) {
		ints(c, xs->ints, xs->n);
		str_put(c->body, ", ");
	}
	if (sdpascratch(c->fn, op) > 0)
		scratchp(c, i);
	else
		str_put(c->body, "NULL");
	str_put(c->body, ");\n");
	return 0;
}

/* ---- dispatch ---- */

/* Bytes of arena scratch op needs while it runs (0 for none). */
int64_t
nn_scratch(const Fn *fn, const Op *op, const char *blk)
{
	switch (op->kind) {
	case Aconv:
		if (fn->val[op->in[0]].t.rank != 4 || fn->val[op->in[1]].t.rank != 4)
			return 0;
		return 4 * convscratch(fn, op, convlay(blk, op));
	case Asdpa:
		if (fn->val[op->out[0]].t.dtype != DP_F32 || dp_numel(&fn->val[op->out[0]].t) == 0)
			return 0;
		return 4 * sdpascratch(fn, op);
	}
	return 0;
}

/* The emitter of an op of NN_OPS (by its form for the elementwise ones), or
 * NULL when the cpu target has none. */
Emitter *
nn_emitter(int kind)
{
	switch (dp_op_form[kind]) {
	case Funary: case Funaryn:
		return k_unary;
	case Fbinary: case Fbinaryn: case Fcompare:
		return k_binary;
	case Flogic:
		return kind == Anot ? k_unary : k_binary;
	case Fwhere:
		return k_where;
	}
	switch (kind) {
	case Aexpand: case Aclone: case Acat: case Astack: case Aslice: case Aselect:
		return k_movement;
	case Aindex: case Aembedding:
		return k_gather;
	case Oindexwrite:
		return k_indexwrite;
	case Agather:
		return k_gatherdim;
	case Acumsum: case Acumprod: case Alogcumsumexp:
		return k_scan;
	case Asort:
		return k_sort;
	case Aarange: case Afull: case Afulllike: case Ascalar: case Arand: case Arandn:
		return k_source;
	case Amean: case Asum: case Aany:
		return k_reduce;
	case Abatchnorm: case Alayernorm: case Armsnorm:
		return k_norm;
	case Amaxpool: case Aavgpool: case Aadaptavg:
		return k_pool;
	case Aconv:
		return k_conv;
	case Abmm:
		return k_bmm;
	case Asdpa:
		return k_sdpa;
	}
	return NULL;
}

/* Appends the statements of op i, an op of NN_OPS (or aten.add/aten.mul
 * on integers); fails for ops the cpu target has no kernel for. */
int
emit_nn(Ctx *c, const Op *op, int i)
{
	Emitter *e = nn_emitter(op->kind);

	if (op->kind == Alinear)   /* with its activation fused (nn_fuse), or packed */
		return k_linear_act(c, op, i);
	if (e)
		return e(c, op, i);
	dp_seterr(c->err, "op %d (%s): the cpu target has no kernel for this op", i,
	          dp_op_name[op->kind]);
	return -1;
}

/* ---- fusion ---- */

/* The one op reading v after op i (nuse[v] == 1), or -1 (also when that
 * op is already fused into a convolution: gone). */
int
reader(const Fn *fn, const int *nuse, const int *gone, int v, int i)
{
	int j, k;

	if (nuse[v] != 1)
		return -1;
	for (j = i + 1; j < fn->nop; j++)
		for (k = 0; k < fn->op[j].nin; k++)
			if (fn->op[j].in[k] == v)
				return gone[j] ? -1 : j;
	return -1;
}

/* Whether v is a constant of the cpu. */
int
isconst(const Fn *fn, int v)
{
	const Op *d = &fn->op[fn->val[v].def];

	return d->kind == Oconst && d->dev == DEV_CPU && fn->val[v].t.dtype == DP_F32;
}

int
sametype(const Type *a, const Type *b)
{
	return a->dtype == b->dtype && a->rank == b->rank &&
	       memcmp(a->dim, b->dim, (size_t)a->rank * sizeof *a->dim) == 0;
}

/* The activation code of op (0: not one a kernel epilogue applies). */
/* Whether op adds a residual to cur that an epilogue can take: a cpu
 * aten.add of two distinct operands of one type, alpha 1, its result of
 * cur's type. */
int
resadd(const Fn *fn, const Op *op, int cur)
{
	return op->kind == Aadd && op->nin == 2 && op->nout == 1 && op->dev == DEV_CPU &&
	       dp_getf(op, "alpha", 1) == 1 && op->in[0] != op->in[1] &&
	       sametype(&fn->val[op->in[0]].t, &fn->val[op->in[1]].t) &&
	       sametype(&fn->val[op->out[0]].t, &fn->val[cur].t);
}

int
actof(const Op *op, double *lo, double *hi)
{
	const char *appr;

	switch (op->kind) {
	case Arelu: return 1;
	case Aclamp:
		*lo = dp_getf(op, "min", -INFINITY);
		*hi = dp_getf(op, "max", INFINITY);
		return 2;
	case Ahardswish: return 3;
	case Asilu: return 4;
	case Agelu:
		appr = dp_gets(op, "approximate");
		return appr && strcmp(appr, "tanh") == 0 ? 6 : 5;
	}
	return 0;
}

Fuse *
nn_fuse(Fn *fn)
{
	Fuse *fu = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *fu), *nf;
	int *nuse = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *nuse);
	int *gone = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *gone);
	int *at = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *at);
	int *orphan = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *orphan);
	char *moved = dp_alloc(fn->arena, (size_t)fn->nop + 1, 1);
	int i, j, k, n;

	for (i = 0; i < fn->nop; i++)
		for (k = 0; k < fn->op[i].nin; k++)
			nuse[fn->op[i].in[k]]++;
	for (i = 0; i < fn->nout; i++)
		nuse[fn->out[i].val] += 2;   /* a graph output is never fused away */
	for (i = 0; i < fn->nval; i++)
		orphan[i] = -1;
	xf_gelu(fn, nuse, gone, orphan);   /* the transformer rewrites (xf.c) */
	for (i = 0; i < fn->nop; i++) {
		Op *op = &fn->op[i];
		Fuse f = { .nconv = op->nin };
		int cur, last = i, *in, nin;

		if (moved[i] || gone[i])
			continue;   /* a fused op, already done */
		xf_addmm(fn, i);
		if (op->kind == Alinear && xf_linear(fn, nuse, gone, orphan, moved, fu, i))
			continue;
		xf_sdpa(fn, nuse, gone, orphan, i);
		if (op->kind != Aconv || op->dev != DEV_CPU || op->nout != 1 ||
		    fn->val[op->in[0]].t.rank != 4 || fn->val[op->in[1]].t.rank != 4 ||
		    fn->val[op->out[0]].t.dtype != DP_F32 || fn->val[op->in[0]].t.dtype != DP_F32) {
			fu[i] = f;
			continue;
		}
		cur = op->out[0];
		in = dp_alloc(fn->arena, (size_t)op->nin + 5, sizeof *in);
		memcpy(in, op->in, (size_t)op->nin * sizeof *in);
		nin = op->nin;
		j = reader(fn, nuse, gone, cur, last);
		if (j >= 0 && fn->op[j].kind == Abatchnorm && fn->op[j].in[0] == cur &&
		    fn->op[j].nin == 5 && fn->op[j].nout == 1 && fn->op[j].dev == DEV_CPU &&
		    isconst(fn, fn->op[j].in[1]) && isconst(fn, fn->op[j].in[2]) &&
		    isconst(fn, fn->op[j].in[3]) && isconst(fn, fn->op[j].in[4])) {
			f.bn = nin;
			f.eps = dp_getf(&fn->op[j], "eps", 1e-5);
			for (k = 1; k < 5; k++)
				in[nin++] = fn->op[j].in[k];
			orphan[cur] = 1;
			gone[j] = 1;
			cur = fn->op[j].out[0];
			last = j;
			j = reader(fn, nuse, gone, cur, last);
		}
		if (j >= 0 && resadd(fn, &fn->op[j], cur)) {
			f.res = nin;
			in[nin++] = fn->op[j].in[fn->op[j].in[0] == cur];
			orphan[cur] = 1;
			gone[j] = 1;
			cur = fn->op[j].out[0];
			last = j;
			j = reader(fn, nuse, gone, cur, last);
		}
		if (j >= 0 && fn->op[j].nin == 1 && fn->op[j].nout == 1 && fn->op[j].dev == DEV_CPU &&
		    sametype(&fn->val[fn->op[j].out[0]].t, &fn->val[cur].t)) {
			f.act = actof(&fn->op[j], &f.lo, &f.hi);
			if (f.act) {
				orphan[cur] = 1;
				gone[j] = 1;
				cur = fn->op[j].out[0];
				last = j;
			}
		}
		if (last == i) {
			fu[i] = f;
			continue;
		}
		orphan[op->out[0]] = 1;
		op->in = in;
		op->nin = nin;
		op->out[0] = cur;
		fu[last] = f;
		fn->op[last] = *op;   /* the convolution runs where its last fused op did */
		gone[last] = 0;
		moved[last] = 1;
		gone[i] = 1;
		for (k = 0; k < fn->nval; k++)
			if (orphan[k] == 1)
				orphan[k] = 2 + last;
	}
	/* compact: the kept ops in order, their results' def renumbered */
	nf = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *nf);
	for (i = n = 0; i < fn->nop; i++) {
		at[i] = n;
		if (gone[i])
			continue;
		nf[n] = fu[i];
		fn->op[n++] = fn->op[i];
	}
	fn->nop = n;
	for (i = 0; i < n; i++)
		for (k = 0; k < fn->op[i].nout; k++)
			fn->val[fn->op[i].out[k]].def = i;
	for (k = 0; k < fn->nval; k++)   /* fused away: never placed */
		if (orphan[k] >= 2)
			fn->val[k].def = at[orphan[k] - 2];
	return nf;
}

/* ---- the blocked layout ---- */

int64_t
nn_blkbytes(const Type *t)
{
	return t->dim[0] * ((t->dim[1] + 15) / 16 * 16) * t->dim[2] * t->dim[3] *
	       dp_dtype_size[t->dtype];
}

static int
f32rank4(const Fn *fn, int v)
{
	const Type *t = &fn->val[v].t;

	return t->dtype == DP_F32 && t->rank == 4 && dp_numel(t) > 0;
}

/* Whether op is a fused convolution the runtime's dprt_conv_run takes. */
static int
lconv(const Fn *fn, const Op *op)
{
	return op->kind == Aconv && op->dev == DEV_CPU && op->nout == 1 &&
	       f32rank4(fn, op->in[0]) && fn->val[op->in[1]].t.rank == 4 && f32rank4(fn, op->out[0]);
}

static int
lmaxpool(const Fn *fn, const Op *op)
{
	int64_t k[2], s[2], p[2], d[2];

	return op->kind == Amaxpool && op->dev == DEV_CPU && op->nout == 1 &&
	       f32rank4(fn, op->in[0]) && f32rank4(fn, op->out[0]) &&
	       dp_poolwin(op, k, s, p, d) == 0;
}

/* A global average pool of a 4-D value: to [N, C, 1, 1] or [N, C]. */
static int
lgap(const Fn *fn, const Op *op)
{
	const Type *x = &fn->val[op->in[0]].t, *y;
	const Attr *d;
	int k, red = 0;

	if (op->dev != DEV_CPU || op->nout != 1 || op->nin != 1 || !f32rank4(fn, op->in[0]))
		return 0;
	y = &fn->val[op->out[0]].t;
	if (y->dtype != DP_F32 || dp_numel(y) != x->dim[0] * x->dim[1])
		return 0;
	if (op->kind == Aadaptavg)
		return y->rank == 4;
	if (op->kind != Amean || !(d = dp_attr(op, "dim")) || d->n != 2)
		return 0;
	for (k = 0; k < 2; k++) {
		int64_t a = d->ints[k] < 0 ? d->ints[k] + 4 : d->ints[k];
		red |= a == 2 ? 1 : a == 3 ? 2 : 4;
	}
	return red == 3;
}

char *
nn_layout(Fn *fn, const Fuse *fu)
{
	char *b = dp_alloc(fn->arena, (size_t)fn->nval + 1, 1);
	int i, k, changed;

	for (i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		if (lconv(fn, op) || lmaxpool(fn, op))
			b[op->out[0]] = 1;
	}
	for (i = 0; i < fn->nout; i++)
		b[fn->out[i].val] = 0;
	for (i = 0; i < fn->nop; i++) {   /* every reader must take it */
		const Op *op = &fn->op[i];
		int conv = lconv(fn, op), pool = lmaxpool(fn, op) || lgap(fn, op);
		for (k = 0; k < op->nin; k++)
			if (!((conv && (k == 0 || (fu[i].res && k == fu[i].res))) || (pool && k == 0)))
				b[op->in[k]] = 0;
	}
	do {   /* a residual like its result, a pool's input like its result */
		changed = 0;
		for (i = 0; i < fn->nop; i++) {
			const Op *op = &fn->op[i];
			int u = -1, y = op->out[0];
			if (lconv(fn, op) && fu[i].res)
				u = op->in[fu[i].res];
			else if (lmaxpool(fn, op))
				u = op->in[0];
			if (u >= 0 && b[u] != b[y]) {
				b[u] = b[y] = 0;
				changed = 1;
			}
		}
	} while (changed);
	return b;
}
