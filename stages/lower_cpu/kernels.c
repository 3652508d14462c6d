/* kernels.c: one emitter per op kind: the C statements (runtime calls from
 * dprt.h) that run one op of the host schedule, in a table by op kind. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

void
cints(Ctx *c, const int64_t *v, int n)
{
	Str t = {0};
	uint64_t h;
	int i;

	str_ints(&t, v, n);
	if (2 * (c->kn + 1) > c->kcap) {   /* grow: rehash */
		int cap = c->kcap ? 2 * c->kcap : 256, j;
		char **kt = dp_alloc(c->fn->arena, (size_t)cap, sizeof *kt);
		int *ki = dp_alloc(c->fn->arena, (size_t)cap, sizeof *ki);
		for (i = 0; i < c->kcap; i++) {
			if (!c->kint[i])
				continue;
			h = dp_hash(c->kint[i], strlen(c->kint[i]), 0);
			for (j = (int)(h % (uint64_t)cap); kt[j]; j = (j + 1) % cap)
				;
			kt[j] = c->kint[i], ki[j] = c->kid[i];
		}
		c->kint = kt, c->kid = ki, c->kcap = cap;
	}
	h = dp_hash(t.p, t.n, 0);
	for (i = (int)(h % (uint64_t)c->kcap); c->kint[i]; i = (i + 1) % c->kcap)
		if (strcmp(c->kint[i], t.p) == 0)
			break;
	if (!c->kint[i]) {
		c->kint[i] = dp_strdup(c->fn->arena, t.p);
		c->kid[i] = c->kn++;
		str_printf(c->top, "static const int64_t dpk%d[] = %s;\n", c->kid[i], t.p);
	}
	str_printf(c->body, "dpk%d", c->kid[i]);
	str_free(&t);
}

static const char *const dprt_dtype[] = {
	"DPRT_U8", "DPRT_I8", "DPRT_I16", "DPRT_I32", "DPRT_I64", "DPRT_F16",
	"DPRT_F32", "DPRT_F64", "DPRT_BOOL", "DPRT_BF16",
};
_Static_assert(sizeof dprt_dtype / sizeof *dprt_dtype == DP_NDTYPE,
               "dprt_dtype[] must follow DP_DTYPES");

/* The runtime's name of a dtype: "DPRT_F32". */
const char *
dprt_enum(int dtype)
{
	if (dtype < 0 || dtype >= DP_NDTYPE)
		dp_die("bad dtype %d", dtype);
	return dprt_dtype[dtype];
}

/* A matrix operand of dprt_sgemm: a pointer expression and element strides. */
typedef struct Mat {
	char p[256];
	int64_t rs, cs;
} Mat;

/* Fails unless every operand and result of op is f32: the cpu target's
 * arithmetic kernels are f32 only for now. */
static int
needf32(Ctx *c, const Op *op, int i)
{
	int k;

	for (k = 0; k < op->nin + op->nout; k++) {
		int v = k < op->nin ? op->in[k] : op->out[k - op->nin];
		int dt = ty(c, v)->dtype;
		if (dt != DP_F32) {
			dp_seterr(c->err, "op %d (%s): the cpu target has no kernel for %s "
			          "tensors (only f32)", i, dp_op_name[op->kind], dp_dtype_name[dt]);
			return -1;
		}
	}
	return 0;
}

/* A dense copy (a reshape into an output buffer, a host-to-host copy). */
static int
k_memcpy(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0];

	if (c->plan->h[y].kind == H_VIEW)
		return 0;   /* a view: no code */
	str_printf(c->body, "\tmemcpy(v%d, v%d, %lld);\n", V(c, y), V(c, x),
	           (long long)c->plan->h[y].bytes);
	return 0;
}

static int
k_none(Ctx *c, const Op *op, int i)
{
	return 0;   /* inputs and constants: named in the buffer plan */
}

static int
k_cast(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0];

	str_printf(c->body, "\tdprt_cast(v%d, %s, v%d, %s, %lld);\n", V(c, y),
	           dprt_dtype[ty(c, y)->dtype], V(c, x), dprt_dtype[ty(c, x)->dtype],
	           (long long)dp_numel(ty(c, y)));
	return 0;
}

/* A per-channel table of normalize as a file-scope array; n = 1 is
 * repeated for every channel. */
static void
chantable(Ctx *c, int y, const char *what, const Attr *a, int64_t C)
{
	int64_t k;

	str_printf(c->top, "static const float v%d_%s[%lld] = {", y, what, (long long)C);
	for (k = 0; k < C; k++) {
		str_put(c->top, k ? ", " : "");
		str_float(c->top, a->floats[a->n == 1 ? 0 : k]);
	}
	str_put(c->top, "};\n");
}

static int
k_normalize(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0];
	const Type *tx = ty(c, x);
	const Attr *mean = dp_attr(op, "mean"), *std = dp_attr(op, "std");
	int ax = normdim(dp_geti(op, "axis", -1), tx->rank);
	int64_t C = tx->rank ? tx->dim[ax] : 1;

	if ((tx->dtype != DP_U8 && tx->dtype != DP_F32) || ty(c, y)->dtype != DP_F32) {
		dp_seterr(c->err, "op %d (normalize): the cpu target has no kernel for %s "
		          "to %s (only u8 or f32 to f32)", i, dp_dtype_name[tx->dtype],
		          dp_dtype_name[ty(c, y)->dtype]);
		return -1;
	}
	if (!mean || !std || mean->kind != A_FLOATS || std->kind != A_FLOATS ||
	    (mean->n != C && mean->n != 1) || (std->n != C && std->n != 1))
		dp_die("op %d: normalize tables do not match %lld channels", i, (long long)C);
	chantable(c, y, "mean", mean, C);
	chantable(c, y, "std", std, C);
	str_printf(c->body, "\tdprt_normalize(v%d, v%d, %s, %lld, %lld, %lld, ", V(c, y),
	           V(c, x), dprt_dtype[tx->dtype], (long long)prod(tx, 0, ax), (long long)C,
	           (long long)prod(tx, tx->rank ? ax + 1 : 0, tx->rank));
	str_float(c->body, dp_getf(op, "scale", 1));
	str_printf(c->body, ", v%d_mean, v%d_std);\n", y, y);
	return 0;
}

static int
k_permute(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0];
	const Type *tx = ty(c, x);
	const Attr *a = dp_attr(op, "dims");
	int64_t perm[DP_MAXRANK];
	int k;

	if (c->plan->h[y].kind == H_VIEW)
		return 0;   /* a transpose read through matmul strides */
	if (tx->rank < 2)
		return k_memcpy(c, op, i);
	for (k = 0; k < tx->rank; k++)
		perm[k] = a->ints[k];   /* legalized: dims >= 0 */
	str_printf(c->body, "\tdprt_permute(v%d, v%d, %d, %d, ", V(c, y),
	           V(c, x), dp_dtype_size[tx->dtype], tx->rank);
	cints(c, tx->dim, tx->rank);
	str_put(c->body, ", ");
	cints(c, perm, tx->rank);
	str_put(c->body, ");\n");
	return 0;
}

/* argmax and softmax: x viewed as [outer, n, inner] around dim. */
static int
k_reduce(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0];
	const Type *tx = ty(c, x);
	int d = normdim(dp_geti(op, "dim", 0), tx->rank);
	int64_t n = tx->rank ? tx->dim[d] : 1;

	if (tx->dtype != DP_F32) {
		dp_seterr(c->err, "op %d (%s): the cpu target has no kernel for %s tensors "
		          "(only f32)", i, dp_op_name[op->kind], dp_dtype_name[tx->dtype]);
		return -1;
	}
	str_printf(c->body, "\t%s(v%d, v%d, %lld, %lld, %lld);\n",
	           op->kind == Oargmax ? "dprt_argmax_f32" : "dprt_softmax_f32", V(c, y),
	           V(c, x), (long long)prod(tx, 0, d), (long long)n,
	           (long long)prod(tx, tx->rank ? d + 1 : 0, tx->rank));
	return 0;
}

/* aten.add and aten.mul with broadcasting; axes that are contiguous in
 * both operands are merged so that the loop nest is as flat as it can be. */
static int
k_binary(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], a = op->in[0], b = op->in[1];
	const Type *to = ty(c, y);
	int64_t d[DP_MAXRANK], sa[DP_MAXRANK], sb[DP_MAXRANK], ta[DP_MAXRANK], tb[DP_MAXRANK];
	int r = 0, k;

	if (to->dtype != DP_F32)
		return emit_nn(c, op, i);   /* nn.c: integer dtypes */
	dp_bstrides(ty(c, a), to, ta);
	dp_bstrides(ty(c, b), to, tb);
	for (k = 0; k < to->rank; k++) {
		if (to->dim[k] == 1)
			continue;
		if (r > 0 && sa[r - 1] == ta[k] * to->dim[k] && sb[r - 1] == tb[k] * to->dim[k]) {
			d[r - 1] *= to->dim[k];
			sa[r - 1] = ta[k];
			sb[r - 1] = tb[k];
			continue;
		}
		d[r] = to->dim[k];
		sa[r] = ta[k];
		sb[r] = tb[k];
		r++;
	}
	if (r == 0) {   /* a single element */
		d[0] = 1;
		sa[0] = sb[0] = 0;
		r = 1;
	}
	str_printf(c->body, "\tdprt_binary_f32(%s, v%d, v%d, ",
	           op->kind == Aadd ? "DPRT_ADD" : "DPRT_MUL", V(c, y), V(c, a));
	cints(c, sa, r);
	str_printf(c->body, ", v%d, ", V(c, b));
	cints(c, sb, r);
	str_printf(c->body, ", %d, ", r);
	cints(c, d, r);
	str_put(c->body, ", ");
	str_float(c->body, op->kind == Aadd ? dp_getf(op, "alpha", 1) : 1);
	str_put(c->body, ");\n");
	return 0;
}

/* Value v read as an R x C matrix: dense, or the transposed view of a
 * dense C x R matrix (see plan.c). */
static Mat
matrix(Ctx *c, int v, int64_t R, int64_t C)
{
	Mat m;

	snprintf(m.p, sizeof m.p, "v%d", V(c, v));
	if (c->plan->h[v].kind == H_VIEW && c->plan->h[v].trans) {
		m.rs = 1;
		m.cs = R;
	} else {
		m.rs = C;
		m.cs = 1;
	}
	return m;
}

/* Strides that broadcast bias t (rank 0..2) over an M x N result. */
static Mat
bias(Ctx *c, int v)
{
	const Type *t = ty(c, v);
	Mat m;

	snprintf(m.p, sizeof m.p, "v%d", V(c, v));
	m.rs = m.cs = 0;
	if (t->rank >= 1)
		m.cs = t->dim[t->rank - 1] == 1 ? 0 : 1;
	if (t->rank == 2)
		m.rs = t->dim[0] == 1 ? 0 : t->dim[1];
	if (t->rank > 2)
		dp_die("bias of rank %d", t->rank);
	return m;
}

/* One dprt_sgemm call: y = alpha*A*B + beta*C0 (C0 NULL when c0 is). */
static void
sgemm(Ctx *c, const char *ind, int64_t M, int64_t N, int64_t K, double alpha,
      const Mat *a, const Mat *b, double beta, const Mat *c0, const char *y, int64_t ldc)
{
	Str *s = c->body;

	str_printf(s, "%sdprt_sgemm(%lld, %lld, %lld, ", ind, (long long)M, (long long)N,
	           (long long)K);
	str_float(s, alpha);
	str_printf(s, ", %s, %lld, %lld, %s, %lld, %lld, ", a->p, (long long)a->rs,
	           (long long)a->cs, b->p, (long long)b->rs, (long long)b->cs);
	str_float(s, c0 ? beta : 0);
	if (c0)
		str_printf(s, ", %s, %lld, %lld", c0->p, (long long)c0->rs, (long long)c0->cs);
	else
		str_put(s, ", NULL, 0, 0");
	str_printf(s, ", %s, %lld);\n", y, (long long)ldc);
}

/* aten.linear: y[..., N] = x[..., K] W^T + b, W being N x K. */
static int
k_linear(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0], w = op->in[1];
	const Type *tx = ty(c, x), *tw = ty(c, w);
	int64_t N = tw->dim[0], K = tw->dim[1], M = K ? dp_numel(tx) / K : 0;
	char dst[32];
	Mat a, wm, b, c0;

	if (needf32(c, op, i) != 0)
		return -1;
	if (op->nin < 2 || op->nin > 3 || tw->rank != 2)
		dp_die("op %d: malformed aten.linear", i);
	if (tx->rank == 2) {
		a = matrix(c, x, M, K);
	} else {   /* [..., K] as (numel/K) x K */
		a = (Mat){.rs = K, .cs = 1};
		snprintf(a.p, sizeof a.p, "v%d", V(c, x));
	}
	wm = matrix(c, w, N, K);
	b = wm;
	b.rs = wm.cs;   /* B = W^T */
	b.cs = wm.rs;
	if (op->nin == 3)
		c0 = bias(c, op->in[2]);
	snprintf(dst, sizeof dst, "v%d", V(c, y));
	sgemm(c, "\t", M, N, K, 1, &a, &b, 1, op->nin == 3 ? &c0 : NULL, dst, N);
	return 0;
}

/* aten.addmm: y = beta*self + alpha*mat1*mat2; aten.mm: y = mat1*mat2. */
static int
k_mm(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], k0 = op->kind == Aaddmm;
	const Type *ta = ty(c, op->in[k0]), *tb = ty(c, op->in[k0 + 1]);
	int64_t M = ta->dim[0], K = ta->dim[1], N = tb->dim[1];
	double beta = k0 ? dp_getf(op, "beta", 1) : 0;
	char dst[32];
	Mat a, b, c0;

	if (needf32(c, op, i) != 0)
		return -1;
	a = matrix(c, op->in[k0], M, K);
	b = matrix(c, op->in[k0 + 1], K, N);
	if (k0 && beta != 0)
		c0 = bias(c, op->in[0]);
	snprintf(dst, sizeof dst, "v%d", V(c, y));
	sgemm(c, "\t", M, N, K, k0 ? dp_getf(op, "alpha", 1) : 1, &a, &b, beta,
	      k0 && beta != 0 ? &c0 : NULL, dst, N);
	return 0;
}

static Emitter *const emitters[DP_NOP] = {
	[Oinput] = k_none,
	[Oconst] = k_none,
	[Ocopy] = k_memcpy,
	[Ocast] = k_cast,
	[Onormalize] = k_normalize,
	[Oargmax] = k_reduce,
	[Osoftmax] = k_reduce,
	[Aadd] = k_binary,
	[Amul] = k_binary,
	[Alinear] = k_linear,
	[Aaddmm] = k_mm,
	[Amm] = k_mm,
	[Aview] = k_memcpy,
	[Obound] = k_memcpy,   /* a view: its operand 1, the length, is read by no code */
	[Apermute] = k_permute,
	[Oresize] = k_resize,
	[Ocrop] = k_crop,
	[Otopk] = k_topk,
	[Otokenize] = k_tokenize,
	[Oassign] = k_assign,
	[Odetokenize] = k_detokenize,
};

/* Appends op i's comment and statements to the schedule. */
int
emit_op(Ctx *c, int i)
{
	const Op *op = &c->fn->op[i];

	str_put(c->body, "\t/* ");
	op_text(c->body, c->fn, op);
	str_put(c->body, " */\n");
	if (emitters[op->kind] == NULL ||
	    (op->kind == Alinear && c->fuse && (c->fuse[i].act || nn_prep(c->fn, op) > 0 ||
	                                        dp_attr(op, "wt") || dp_attr(op, "res"))))
		return emit_nn(c, op, i);   /* nn.c: the NN_OPS (a fused linear), or the error */
	return emitters[op->kind](c, op, i);
}

/* Whether the cpu target has a kernel for op kind: what dp-lower_cpu
 * --supports lists, checked against ops.h's devices by tests/ops.t. */
int
cpu_supports(int kind)
{
	return emitters[kind] != NULL || nn_emitter(kind) != NULL;
}
