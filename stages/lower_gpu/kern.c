/* kern.c: generated elementwise and reduction kernels.  A fused chain of
 * elementwise and shape ops (normalize, add, mul, relu, cast, permute,
 * reshape...) becomes one kernel over the elements of its last result,
 * each element computed from the chain's inputs in memory by index
 * arithmetic; argmax and softmax become one warp per row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

enum { BLOCK = 256, MAXPARAM = 64 };
enum { HBETTER = 1 };   /* device helpers (Gpu.helpers bits) */

static const char *const ctypes[DP_NDTYPE] = {
	[DP_U8] = "uint8_t", [DP_I8] = "int8_t", [DP_I16] = "int16_t", [DP_I32] = "int32_t",
	[DP_I64] = "int64_t", [DP_F32] = "float", [DP_F64] = "double", [DP_BOOL] = "uint8_t",
};

/* The C type of a dtype in kernels, or NULL (f16, bf16). */
const char *
dtype_c(int dtype)
{
	return dtype >= 0 && dtype < DP_NDTYPE ? ctypes[dtype] : NULL;
}

/* Marks v as named by the schedule and returns it. */
int
gV(Gpu *g, int v)
{
	g->used[v] = 1;
	return v;
}

/* The op's text as a comment line. */
void
opcomment(Str *s, const Fn *fn, int i, const char *indent)
{
	str_printf(s, "%s/* ", indent);
	op_text(s, fn, &fn->op[i]);
	str_put(s, " */\n");
}

/* The check after a launch. */
void
launched(Gpu *g, const char *kname)
{
	str_printf(g->rec, "\tif (dprt_cuda_launched(\"%s\", err, errn) != 0)\n\t\treturn -1;\n",
	           kname);
}

/* One kernel being generated. */
typedef struct Kern {
	Gpu *g;
	Str body;          /* statements computing one element */
	int param[MAXPARAM]; /* values read from memory, in order */
	int np;
	int ops[1024];     /* ops computed, for the comment */
	int nops;
	int root;          /* the op whose result the kernel writes */
	const char *ity;   /* index type: "int" or "long long" */
} Kern;

static const Type *
ty(const Gpu *g, int v)
{
	return &g->fn->val[v].t;
}

static int
normdim(int64_t d, int rank)
{
	if (d < 0)
		d += rank;
	if (d < 0 || d >= (rank ? rank : 1))
		dp_die("dim %lld out of range for rank %d", (long long)d, rank);
	return (int)d;
}

static int64_t
prod(const Type *t, int from, int to)
{
	int64_t n = 1;
	int i;

	for (i = from; i < to; i++)
		n *= t->dim[i];
	return n;
}

/* Dense element strides of t. */
static void
dense(const Type *t, int64_t *s)
{
	int64_t st = 1;
	int i;

	for (i = t->rank - 1; i >= 0; i--) {
		s[i] = st;
		st *= t->dim[i];
	}
}

/* Element strides of t read at the index of shape out (numpy broadcasting:
 * axes aligned on the right, 0 where t's axis is 1 or missing). */
static void
bstrides(const Type *t, const Type *out, int64_t *s)
{
	int off = out->rank - t->rank, i;
	int64_t st = 1;

	for (i = out->rank - 1; i >= 0; i--) {
		int k = i - off;
		s[i] = k < 0 || t->dim[k] == 1 ? 0 : st;
		if (k >= 0)
			st *= t->dim[k];
	}
}

/* Appends to e the linear index, in a tensor with element strides s, of
 * the element at linear index idx of a dense tensor of type t:
 * sum over axes of (idx / dense stride % dim) * s. */
static void
remap(Str *e, const char *idx, const Type *t, const int64_t *s)
{
	int64_t ds[DP_MAXRANK];
	int k, first = 1;

	dense(t, ds);
	for (k = 0; k < t->rank; k++) {
		if (t->dim[k] == 1 || s[k] == 0)
			continue;
		str_put(e, first ? "" : " + ");
		first = 0;
		if (ds[k] == 1)
			str_printf(e, "%s", idx);
		else
			str_printf(e, "%s / %lld", idx, (long long)ds[k]);
		if (k > 0 && ds[k] * t->dim[k] < ds[0] * t->dim[0])
			str_printf(e, " %% %lld", (long long)t->dim[k]);
		if (s[k] != 1)
			str_printf(e, " * %lld", (long long)s[k]);
	}
	if (first)
		str_put(e, "0");
}

/* Whether s are t's own dense strides (the remap is the identity). */
static int
identity(const Type *t, const int64_t *s)
{
	int64_t ds[DP_MAXRANK];
	int k;

	dense(t, ds);
	for (k = 0; k < t->rank; k++)
		if (t->dim[k] != 1 && s[k] != ds[k])
			return 0;
	return 1;
}

static int
param(Kern *k, int v)
{
	int p;

	for (p = 0; p < k->np; p++)
		if (k->param[p] == v)
			return p;
	if (k->np == MAXPARAM)
		dp_die("a fused kernel reads more than %d tensors", MAXPARAM);
	k->param[k->np] = v;
	return k->np++;
}

static int
needf32(Kern *k, const Op *op, int i)
{
	int j;

	for (j = 0; j < op->nin + op->nout; j++) {
		int v = j < op->nin ? op->in[j] : op->out[j - op->nin];
		int dt = ty(k->g, v)->dtype;
		if (dt != DP_F32) {
			dp_seterr(k->g->err, "op %d (%s): the cuda target has no kernel for %s "
			          "tensors (only f32)", i, dp_op_name[op->kind], dp_dtype_name[dt]);
			return -1;
		}
	}
	return 0;
}

/* A per-channel table of normalize, as __constant__ memory. */
static void
chantable(Gpu *g, int y, const char *what, const Attr *a, int64_t C)
{
	int64_t c;

	str_printf(&g->kern, "static __constant__ float c%d_%s[%lld] = {", y, what, (long long)C);
	for (c = 0; c < C; c++) {
		str_put(&g->kern, c ? ", " : "");
		str_float(&g->kern, a->floats[a->n == 1 ? 0 : c]);
	}
	str_put(&g->kern, "};\n");
}

/* A C conversion of expression x from dtype s to dtype d, as PyTorch
 * converts (float -> integer truncates through int64; anything -> bool is
 * "nonzero"). */
static void
convert(Str *e, int d, int s, const char *x)
{
	int sf = s == DP_F32 || s == DP_F64, df = d == DP_F32 || d == DP_F64;

	if (d == DP_BOOL)
		str_printf(e, "(uint8_t)(%s != 0)", x);
	else if (s == DP_BOOL)
		str_printf(e, "(%s)(%s != 0)", ctypes[d], x);
	else if (sf && !df)
		str_printf(e, "(%s)(int64_t)(%s)", ctypes[d], x);
	else
		str_printf(e, "(%s)(%s)", ctypes[d], x);
}

static int elem(Kern *k, int v, const char *idx, Str *out);

/* The element of operand a of op at the index of result type to. */
static int
operand(Kern *k, int a, const Type *to, const char *idx, const char *tag, int v, Str *out)
{
	int64_t s[DP_MAXRANK];
	char var[64];

	bstrides(ty(k->g, a), to, s);
	if (dp_numel(ty(k->g, a)) == dp_numel(to) && identity(to, s))
		return elem(k, a, idx, out);
	snprintf(var, sizeof var, "i%d%s", v, tag);
	str_printf(&k->body, "\t%s %s = ", k->ity, var);
	remap(&k->body, idx, to, s);
	str_put(&k->body, ";\n");
	return elem(k, a, var, out);
}

/* Emits the statements computing value v at linear index idx (a variable
 * or expression); *out receives an expression of its element. */
static int
elem(Kern *k, int v, const char *idx, Str *out)
{
	Gpu *g = k->g;
	const Fn *fn = g->fn;
	int i = fn->val[v].def;
	const Op *op = &fn->op[i];
	const Type *t = ty(g, v);
	Str a = {0}, b = {0};
	int rc = -1;

	if (g->h[v].kind != G_INLINE) {
		if (g->h[v].kind == G_VIEW && g->h[v].trans)
			dp_die("value %d: an elementwise kernel reads a transposed view", v);
		if (g->h[v].kind == G_HOST)
			dp_die("value %d: a kernel reads a host value", v);
		str_printf(out, "x%d[%s]", param(k, gbase(g, v)), idx);
		return 0;
	}
	if (k->nops == (int)(sizeof k->ops / sizeof *k->ops))
		dp_die("fused chain too long");
	k->ops[k->nops++] = i;
	switch (op->kind) {
	case Oreshape: case Oflatten: case Aview: case Areshape:
		return elem(k, op->in[0], idx, out);
	case At: case Opermute: case Apermute: {
		const Type *tx = ty(g, op->in[0]);
		const Attr *d = dp_attr(op, "dims");
		int64_t xs[DP_MAXRANK], s[DP_MAXRANK];
		char var[32];
		int j;
		if (tx->rank < 2)
			return elem(k, op->in[0], idx, out);
		dense(tx, xs);
		for (j = 0; j < tx->rank; j++)   /* y axis j is x axis perm[j] */
			s[j] = xs[op->kind == At ? 1 - j : normdim(d->ints[j], tx->rank)];
		if (identity(t, s))
			return elem(k, op->in[0], idx, out);
		str_printf(&k->body, "\t%s i%d = ", k->ity, v);
		remap(&k->body, idx, t, s);
		str_put(&k->body, ";\n");
		snprintf(var, sizeof var, "i%d", v);
		return elem(k, op->in[0], var, out);
	}
	case Onormalize: {
		const Type *tx = ty(g, op->in[0]);
		const Attr *mean = dp_attr(op, "mean"), *sd = dp_attr(op, "std");
		int ax = normdim(dp_geti(op, "axis", -1), tx->rank);
		int64_t C = tx->rank ? tx->dim[ax] : 1, inner = prod(tx, tx->rank ? ax + 1 : 0, tx->rank);
		if ((tx->dtype != DP_U8 && tx->dtype != DP_F32) || t->dtype != DP_F32) {
			dp_seterr(g->err, "op %d (normalize): the cuda target has no kernel for %s "
			          "to %s (only u8 or f32 to f32)", i, dp_dtype_name[tx->dtype],
			          dp_dtype_name[t->dtype]);
			goto done;
		}
		if (!mean || !sd || mean->kind != A_FLOATS || sd->kind != A_FLOATS ||
		    (mean->n != C && mean->n != 1) || (sd->n != C && sd->n != 1))
			dp_die("op %d: normalize tables do not match %lld channels", i, (long long)C);
		chantable(g, v, "mean", mean, C);
		chantable(g, v, "std", sd, C);
		if (elem(k, op->in[0], idx, &a) != 0)
			goto done;
		if (C == 1)
			str_put(&b, "0");
		else if (inner == 1)
			str_printf(&b, "%s %% %lld", idx, (long long)C);
		else
			str_printf(&b, "%s / %lld %% %lld", idx, (long long)inner, (long long)C);
		str_printf(&k->body, "\tfloat t%d = ((float)%s * ", v, a.p);
		str_float(&k->body, dp_getf(op, "scale", 1));
		str_printf(&k->body, " - c%d_mean[%s]) / c%d_std[%s];\n", v, b.p, v, b.p);
		break;
	}
	case Aadd: case Amul:
		if (needf32(k, op, i) != 0 ||
		    operand(k, op->in[0], t, idx, "a", v, &a) != 0 ||
		    operand(k, op->in[1], t, idx, "b", v, &b) != 0)
			goto done;
		str_printf(&k->body, "\tfloat t%d = %s %s ", v, a.p, op->kind == Aadd ? "+" : "*");
		if (op->kind == Aadd && dp_getf(op, "alpha", 1) != 1) {
			str_float(&k->body, dp_getf(op, "alpha", 1));
			str_put(&k->body, " * ");
		}
		str_printf(&k->body, "%s;\n", b.p);
		break;
	case Arelu:
		if (needf32(k, op, i) != 0 || elem(k, op->in[0], idx, &a) != 0)
			goto done;
		str_printf(&k->body, "\tfloat t%d = %s;\n", v, a.p);
		str_printf(&k->body, "\tt%d = t%d < 0.0f ? 0.0f : t%d;   /* NaN stays */\n", v, v, v);
		break;
	case Ocast: {
		int s = ty(g, op->in[0])->dtype;
		if (!ctypes[s] || !ctypes[t->dtype]) {
			dp_seterr(g->err, "op %d (cast): the cuda target has no kernel for %s to %s "
			          "(f16 and bf16 are cpu only)", i, dp_dtype_name[s],
			          dp_dtype_name[t->dtype]);
			goto done;
		}
		if (elem(k, op->in[0], idx, &a) != 0)
			goto done;
		str_printf(&k->body, "\t%s t%d = ", ctypes[t->dtype], v);
		convert(&k->body, t->dtype, s, a.p);
		str_put(&k->body, ";\n");
		break;
	}
	default:
		dp_die("op %d (%s) inlined into a kernel", i, dp_op_name[op->kind]);
	}
	str_printf(out, "t%d", v);
	rc = 0;
done:
	str_free(&a);
	str_free(&b);
	return rc;
}

static int
cmpint(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Kernel and launch geometry for n elements. */
static int64_t
blocks(int64_t n, int64_t per)
{
	int64_t b = (n + per - 1) / per;

	return b > (1 << 20) ? (1 << 20) : b;
}

/* The root of a fused chain: one kernel writing op i's result. */
int
emit_elem(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	int v = op->out[0], j, big;
	const Type *t = ty(g, v);
	int64_t n = dp_numel(t);
	Kern k = {.g = g, .root = i};
	Str e = {0};
	char kname[80];
	const char *name = dp_op_name[op->kind];

	if (g->h[v].kind == G_VIEW)
		return 0;   /* a free view: no code */
	if (!ctypes[t->dtype]) {
		dp_seterr(g->err, "op %d (%s): the cuda target has no kernel for %s tensors", i,
		          name, dp_dtype_name[t->dtype]);
		return -1;
	}
	big = n > 2147483647 - 2 * BLOCK;
	k.ity = big ? "long long" : "int";
	g->h[v].kind = G_INLINE;   /* so that elem computes it */
	j = elem(&k, v, "i", &e);
	g->h[v].kind = G_ARENA;
	if (j != 0) {
		str_free(&k.body);
		str_free(&e);
		return -1;
	}
	qsort(k.ops, (size_t)k.nops, sizeof *k.ops, cmpint);
	snprintf(kname, sizeof kname, "k%d_%s", v, strncmp(name, "aten.", 5) ? name : name + 5);

	str_put(&g->kern, "\n");
	if (k.nops > 1)
		str_printf(&g->kern, "/* %d ops fused into one kernel: */\n", k.nops);
	for (j = 0; j < k.nops; j++)
		opcomment(&g->kern, fn, k.ops[j], "");
	str_printf(&g->kern, "static __global__ void __launch_bounds__(%d)\n%s(", BLOCK, kname);
	for (j = 0; j < k.np; j++)
		str_printf(&g->kern, "const %s *__restrict__ x%d, ", ctypes[ty(g, k.param[j])->dtype], j);
	str_printf(&g->kern, "%s *__restrict__ y)\n{\n", ctypes[t->dtype]);
	if (big)
		str_printf(&g->kern, "\tfor (long long i = blockIdx.x * %dLL + threadIdx.x; i < %lldLL; "
		                     "i += (long long)gridDim.x * %d) {\n", BLOCK, (long long)n, BLOCK);
	else
		str_printf(&g->kern, "\tint i = blockIdx.x * %d + threadIdx.x;\n\n"
		                     "\tif (i >= %lld)\n\t\treturn;\n", BLOCK, (long long)n);
	str_put(&g->kern, k.body.p ? k.body.p : "");
	str_printf(&g->kern, "\ty[i] = %s;\n", e.p);
	if (big)
		str_put(&g->kern, "\t}\n");
	str_put(&g->kern, "}\n");

	for (j = 0; j < k.nops; j++)
		opcomment(g->rec, fn, k.ops[j], "\t");
	if (n > 0) {
		str_printf(g->rec, "\t%s<<<%lld, %d, 0, g->stream>>>(", kname,
		           (long long)blocks(n, BLOCK), BLOCK);
		for (j = 0; j < k.np; j++)
			str_printf(g->rec, "v%d, ", gV(g, k.param[j]));
		str_printf(g->rec, "v%d);\n", gV(g, v));
		launched(g, kname);
	}
	g->nkern++;
	str_free(&k.body);
	str_free(&e);
	return 0;
}

/* The helper that orders argmax candidates: a NaN beats any number, then
 * the larger value, then the smaller index (so the first maximum wins). */
static void
helpers(Gpu *g)
{
	if (g->helpers & HBETTER)
		return;
	g->helpers |= HBETTER;
	str_put(&g->kern,
	        "\n/* Whether candidate (v, j) beats (bv, bi) for argmax: a NaN beats any\n"
	        " * number, then the larger value, then the smaller index; j < 0 is no\n"
	        " * candidate. */\n"
	        "static __device__ __forceinline__ int\n"
	        "better(float v, int j, float bv, int bi)\n{\n"
	        "\tif (j < 0)\n\t\treturn 0;\n"
	        "\tif (bi < 0)\n\t\treturn 1;\n"
	        "\tif (v != v || bv != bv)\n"
	        "\t\treturn v != v && (bv == bv || j < bi);\n"
	        "\treturn v > bv || (v == bv && j < bi);\n}\n");
}

/* argmax or softmax along one axis: one warp per row of x viewed as
 * [outer, n, inner]. */
int
isreduce(const Fn *fn, const Op *op)
{
	return op->dev == DEV_CUDA && (op->kind == Oargmax || op->kind == Osoftmax);
}

int
emit_reduce(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	int x = op->in[0], y = op->out[0];
	const Type *tx = ty(g, x);
	int d = normdim(dp_geti(op, "dim", 0), tx->rank);
	int64_t n = tx->rank ? tx->dim[d] : 1, inner = prod(tx, tx->rank ? d + 1 : 0, tx->rank);
	int64_t rows = prod(tx, 0, d) * inner;
	int am = op->kind == Oargmax;
	char kname[64];
	Str *s = &g->kern;

	if (tx->dtype != DP_F32) {
		dp_seterr(g->err, "op %d (%s): the cuda target has no kernel for %s tensors "
		          "(only f32)", i, dp_op_name[op->kind], dp_dtype_name[tx->dtype]);
		return -1;
	}
	if (n > 2147483647)
		dp_die("op %d: a row of %lld elements", i, (long long)n);
	if (am)
		helpers(g);
	snprintf(kname, sizeof kname, "k%d_%s", y, dp_op_name[op->kind]);
	str_put(s, "\n");
	opcomment(s, fn, i, "");
	str_printf(s, "/* one warp per row: %lld rows of %lld, stride %lld */\n", (long long)rows,
	           (long long)n, (long long)inner);
	str_printf(s, "static __global__ void __launch_bounds__(%d)\n%s(const float *__restrict__ x, "
	              "%s *__restrict__ y)\n{\n", BLOCK, kname, am ? "int64_t" : "float");
	str_printf(s, "\tlong long row = blockIdx.x * %dLL + threadIdx.x / 32;\n"
	              "\tint lane = threadIdx.x %% 32;\n\n"
	              "\tif (row >= %lldLL)\n\t\treturn;\n"
	              "\tlong long base = row / %lldLL * %lldLL + row %% %lldLL;\n"
	              "\tconst float *xr = x + base;\n", BLOCK / 32, (long long)rows,
	           (long long)inner, (long long)(n * inner), (long long)inner);
	if (am) {
		str_printf(s, "\tfloat bv = 0.0f;\n\tint bi = -1;\n\n"
		              "\tfor (int j = lane; j < %lld; j += 32) {\n"
		              "\t\tfloat v = xr[(long long)j * %lld];\n"
		              "\t\tif (better(v, j, bv, bi)) {\n\t\t\tbv = v;\n\t\t\tbi = j;\n\t\t}\n\t}\n"
		              "\tfor (int s = 16; s > 0; s /= 2) {\n"
		              "\t\tfloat ov = __shfl_down_sync(0xffffffffu, bv, s);\n"
		              "\t\tint oi = __shfl_down_sync(0xffffffffu, bi, s);\n"
		              "\t\tif (better(ov, oi, bv, bi)) {\n\t\t\tbv = ov;\n\t\t\tbi = oi;\n\t\t}\n\t}\n"
		              "\tif (lane == 0)\n\t\ty[row] = bi < 0 ? 0 : bi;\n}\n",
		           (long long)n, (long long)inner);
	} else {
		str_printf(s, "\tfloat *yr = y + base, mx = -INFINITY, r;\n\tint nan = 0;\n"
		              "\tdouble sum = 0;\n\n"
		              "\tfor (int j = lane; j < %lld; j += 32) {\n"
		              "\t\tfloat v = xr[(long long)j * %lld];\n"
		              "\t\tmx = v > mx ? v : mx;\n\t\tnan |= v != v;\n\t}\n"
		              "\tfor (int s = 16; s > 0; s /= 2) {\n"
		              "\t\tmx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, s));\n"
		              "\t\tnan |= __shfl_xor_sync(0xffffffffu, nan, s);\n\t}\n"
		              "\tif (nan)\n\t\tmx = NAN;   /* a NaN makes the whole row NaN */\n"
		              "\tfor (int j = lane; j < %lld; j += 32)\n"
		              "\t\tsum += expf(xr[(long long)j * %lld] - mx);\n"
		              "\tfor (int s = 16; s > 0; s /= 2)\n"
		              "\t\tsum += __shfl_xor_sync(0xffffffffu, sum, s);\n"
		              "\tr = (float)(1.0 / sum);\n"
		              "\tfor (int j = lane; j < %lld; j += 32)\n"
		              "\t\tyr[(long long)j * %lld] = expf(xr[(long long)j * %lld] - mx) * r;\n}\n",
		           (long long)n, (long long)inner, (long long)n, (long long)inner,
		           (long long)n, (long long)inner, (long long)inner);
	}
	opcomment(g->rec, fn, i, "\t");
	if (rows > 0) {
		str_printf(g->rec, "\t%s<<<%lld, %d, 0, g->stream>>>(v%d, v%d);\n", kname,
		           (long long)((rows + BLOCK / 32 - 1) / (BLOCK / 32)), BLOCK,
		           gV(g, gbase(g, x)), gV(g, y));
		launched(g, kname);
	}
	g->nkern++;
	return 0;
}
