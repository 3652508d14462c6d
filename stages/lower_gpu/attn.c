/* attn.c: aten.scaled_dot_product_attention on the device: one call of the
 * kernel library's attention (runtime/cuda/attn.cu: one kernel in the
 * manner of flash attention, scores and softmax never stored; causal,
 * boolean and additive masks as runtime/nn.c), with a constant dprt_sdpa
 * of the op's shapes, scale and mask strides, and the strides of q, k, v
 * and y where they are windows that gplan left in place (no copy
 * kernels), or where the keys and values have a batch dim of 1 that every
 * query head of a group reads (grouped heads, dp-legalize: stride 0).
 * Where its result is read only by a 3xTF32 product as its A, the call
 * leaves A's split for it (dprt_cuda_sdpa3). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"

enum {
	SMEM = 48 * 1024,   /* bytes of shared memory a block may use */
	MAXB = 6,          /* batch axes (DPRT_SDPA_MAXB of runtime/dprt_cuda.h) */
};

/* q, k and v where gplan made them windows of larger tensors, and y where
 * it is one that attention writes (GHome.strided): their batch and row
 * strides in the dprt_sdpa, q's, k's and v's offsets (elements) in off[3];
 * dense ones all 0. */
static int
windows(Gpu *g, const Op *op, Str *s, int64_t *off)
{
	const Fn *fn = g->fn;
	int64_t str[4][DP_MAXRANK] = {{0}}, o;
	int k, j, r = fn->val[op->in[0]].t.rank, any = 0;

	for (k = 0; k < 4; k++) {
		int v = k < 3 ? op->in[k] : op->out[0];
		const Type *t = &fn->val[v].t;
		if (k < 3)
			off[k] = 0;
		for (j = 0; j < r - 2; j++)   /* a batch dim of 1 under a longer one: stride 0 */
			any |= t->dim[j] != fn->val[op->in[0]].t.dim[j];
		if (!(g->h[v].kind == G_VIEW && g->h[v].strided)) {
			for (j = r - 1; j >= 0; j--)
				str[k][j] = j == r - 1 ? 1 : str[k][j + 1] * t->dim[j + 1];
			continue;
		}
		if (gviewlayout(g, v, str[k], k < 3 ? &off[k] : &o) != 0 || str[k][r - 1] != 1) {
			dp_seterr(g->err, "op %d (%s): operand %d is a window with no strides (internal)",
			          (int)(op - fn->op), dp_op_name[op->kind], k);
			return -1;
		}
		any = 1;
	}
	if (!any)
		return 0;
	for (k = 0; k < 4; k++)   /* grouped heads read the same rows for each of the group */
		for (j = 0; j < r - 2; j++)
			if (fn->val[k < 3 ? op->in[k] : op->out[0]].t.dim[j] == 1)
				str[k][j] = 0;
	str_put(s, "\t/* q, k, v read in place: strides over the batch axes, then rows */\n");
	for (k = 0; k < 4; k++) {
		if (k == 3) {
			str_printf(s, "\t%lld, %lld, %lld,\n", (long long)str[0][r - 2],
			           (long long)str[1][r - 2], (long long)str[2][r - 2]);
			str_put(s, "\t/* y written in place: the same */\n");
		}
		str_put(s, "\t{");
		for (j = 0; j < r - 2; j++)
			str_printf(s, "%s%lld", j ? ", " : "", (long long)str[k][j]);
		str_put(s, "},\n");
	}
	str_printf(s, "\t%lld,\n", (long long)str[3][r - 2]);
	return 0;
}

int
emit_sdpa(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	const Type *tq = &fn->val[op->in[0]].t, *tk = &fn->val[op->in[1]].t;
	const Type *tv = &fn->val[op->in[2]].t, *tm = op->nin == 4 ? &fn->val[op->in[3]].t : NULL;
	const Attr *sc = dp_attr(op, "scale");
	int r = tq->rank, y = op->out[0], mask = 0, k, split, line, causal, prod;
	int64_t x3;
	char key[160];
	long long L, S, E, EV, B = 1;
	int64_t ms[DP_MAXRANK] = {0}, off[3];
	Str *s = &g->host;
	Type scores;

	for (k = 0; k < 3; k++)
		if (fn->val[op->in[k]].t.dtype != DP_F32 || fn->val[y].t.dtype != DP_F32) {
			dp_seterr(g->err, "op %d (%s): the cuda target has no kernel for %s tensors "
			          "(only f32)", i, dp_op_name[op->kind],
			          dp_dtype_name[fn->val[op->in[k]].t.dtype]);
			return -1;
		}
	L = tq->dim[r - 2], E = tq->dim[r - 1], S = tk->dim[r - 2], EV = tv->dim[r - 1];
	for (k = 0; k < r - 2; k++)
		B *= tq->dim[k];
	opcomment(g->rec, fn, i, "\t");
	if (B * L * EV == 0)
		return 0;
	if (tm) {
		mask = tm->dtype == DP_BOOL ? 1 : 2;
		scores = *tq;
		scores.dim[r - 1] = S;
		dp_bstrides(tm, &scores, ms);
	}
	if (4 * (4 * E + 32 * (E + 1) + 32 * EV) > SMEM || E < 1 || (L + 3) / 4 > 2147483647LL ||
	    B > 65535 || B * L * E > 2147483647LL || B * S * E > 2147483647LL ||
	    B * S * EV > 2147483647LL) {
		dp_seterr(g->err, "op %d (%s): the cuda kernel takes head sizes up to about 150 "
		          "(here %lld and %lld) and at most 65535 batch entries", i,
		          dp_op_name[op->kind], E, EV);
		return -1;
	}
	if (r - 2 > MAXB) {
		dp_seterr(g->err, "op %d (%s): the cuda kernel takes at most %d batch axes", i,
		          dp_op_name[op->kind], MAXB);
		return -1;
	}
	causal = (int)dp_geti(op, "is_causal", 0);
	snprintf(key, sizeof key, "%lldx%lldx%lldx%lldx%lld f32 %s", B, L, S, E, EV,
	         causal && mask == 1 ? "causal+bool" : causal && mask == 2 ? "causal+add" :
	         causal ? "causal" : mask == 1 ? "bool" : mask == 2 ? "add" : "none");
	split = atoi(tune_get(g, TUNE_ATTN, i, key, "0", 0, &line));
	str_put(s, "\n");
	opcomment(s, fn, i, "");
	str_printf(s, "static const dprt_sdpa attn%d = {\n"
	              "\t%d,   /* op */\n"
	              "\t%lld, %lld, %lld, %lld, %lld,   /* B, L, S, E, EV */\n"
	              "\t%d, %d,   /* causal, mask (1 bool, 2 added) */\n"
	              "\t%lld, %lld,   /* mask strides over L, S */\n"
	              "\t%d,   /* batch axes: sizes, mask strides */\n\t{",
	           i, i, B, L, S, E, EV, (int)dp_geti(op, "is_causal", 0), mask,
	           (long long)ms[r - 2], (long long)ms[r - 1], r - 2);
	for (k = 0; k < r - 2; k++)
		str_printf(s, "%s%lld", k ? ", " : "", (long long)tq->dim[k]);
	str_put(s, "},\n\t{");
	for (k = 0; k < r - 2; k++)
		str_printf(s, "%s%lld", k ? ", " : "", (long long)(mask ? ms[k] : 0));
	str_put(s, "},\n\t");
	str_float(s, sc ? sc->f : 1.0 / sqrt((double)E));
	str_put(s, ",   /* scale */\n");
	if (split > 0)
		g->blas = 1;   /* its workspace holds the chunks' partial rows */
	str_printf(s, "\t%d,   /* chunks of keys (0: as many as fill the GPU)", split);
	if (line)
		str_printf(s, "; tuning database line %d", line);
	str_put(s, " */\n");
	if (windows(g, op, s, off) != 0)
		return -1;
	str_put(s, "};\n");
	/* where y's bytes are the A of a 3xTF32 product that may take its
	 * split from here (x3split), the call that leaves the split */
	x3 = x3split(g, i, gbase(g, y), 0, &prod);
	if (x3)
		str_printf(s, "/* its result the A of op %d, split for 3xTF32 */\n", prod);
	str_printf(g->rec, "\tif (dprt_cuda_sdpa%s(g, &attn%d, v%d + %lld, v%d + %lld, v%d + %lld, ",
	           x3 ? "3" : "", i, gV(g, gbase(g, op->in[0])), (long long)off[0],
	           gV(g, gbase(g, op->in[1])), (long long)off[1], gV(g, gbase(g, op->in[2])),
	           (long long)off[2]);
	if (tm)
		str_printf(g->rec, "v%d, ", gV(g, gbase(g, op->in[3])));
	else
		str_put(g->rec, "NULL, ");
	str_printf(g->rec, "v%d, ", gV(g, gbase(g, y)));
	if (x3)
		str_printf(g->rec, "%lld, ", (long long)x3);
	str_put(g->rec, "err, errn) != 0)\n\t\treturn -1;\n");
	g->nkern++;
	return 0;
}
