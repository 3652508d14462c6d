/* attn.c: aten.scaled_dot_product_attention on the device as one kernel in
 * the manner of flash attention: scores and softmax are never stored.  A
 * block of 4 warps takes 4 query rows of one batch entry (one row a warp)
 * and walks the keys 32 at a time: the block stages a slice of K and V in
 * shared memory, lane j scores key j, the warp takes the running maximum
 * and rescales what it has (online softmax: o·e^(m-m'), l·e^(m-m')), then
 * adds p_j·v_j to the row's outputs, spread over the lanes.  Causal
 * attention (key j > query i masked, as runtime/nn.c) stops at the block's
 * last row; a boolean mask drops keys, an additive one adds to the scores;
 * a row with every key masked gives zeros, as on the cpu.  Exact fp32. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nn.h"

enum { SMEM = 48 * 1024 };   /* bytes of static shared memory a block may use */

static const char kernel[] =
"\n/* ---- attention (stages/lower_gpu/attn.c explains the method) ---- */\n"
"template <class P>\n"
"static __global__ void __launch_bounds__(128)\n"
"nn_sdpa(const float *__restrict__ q, const float *__restrict__ k, const float *__restrict__ v,\n"
"        const void *__restrict__ mask, float *__restrict__ y)\n"
"{\n"
"\tconstexpr int NO = (P::EV + 31) / 32;   /* outputs per lane */\n"
"\t__shared__ float qs[4][P::E], ks[32][P::E + 1], vs[32][P::EV];\n"
"\tint lane = threadIdx.x & 31, warp = threadIdx.x >> 5, b = blockIdx.y;\n"
"\tint i = blockIdx.x * 4 + warp;   /* this warp's query row */\n"
"\tint send = P::CAUSAL ? min(P::S, (int)blockIdx.x * 4 + 4) : P::S;   /* keys the block sees */\n"
"\tconst float *kb = k + (long long)b * P::S * P::E, *vb = v + (long long)b * P::S * P::EV;\n"
"\tlong long mo = P::MASK ? P::mbase(b) + (long long)i * P::MSL : 0;\n"
"\tfloat m = -INFINITY, l = 0.0f, o[NO];\n"
"\n"
"\tfor (int d = 0; d < NO; d++)\n"
"\t\to[d] = 0.0f;\n"
"\tif (i < P::L)\n"
"\t\tfor (int e = lane; e < P::E; e += 32)\n"
"\t\t\tqs[warp][e] = q[((long long)b * P::L + i) * P::E + e];\n"
"\tfor (int s0 = 0; s0 < send; s0 += 32) {\n"
"\t\t__syncthreads();   /* the last slice is used */\n"
"\t\tfor (int t = threadIdx.x; t < 32 * P::E; t += 128) {\n"
"\t\t\tint r = t / P::E, e = t % P::E;\n"
"\t\t\tks[r][e] = s0 + r < P::S ? kb[(s0 + r) * P::E + e] : 0.0f;\n"
"\t\t}\n"
"\t\tfor (int t = threadIdx.x; t < 32 * P::EV; t += 128) {\n"
"\t\t\tint r = t / P::EV, e = t % P::EV;\n"
"\t\t\tvs[r][e] = s0 + r < P::S ? vb[(s0 + r) * P::EV + e] : 0.0f;\n"
"\t\t}\n"
"\t\t__syncthreads();\n"
"\t\tif (i >= P::L)\n"
"\t\t\tcontinue;\n"
"\t\tint j = s0 + lane;\n"
"\t\tfloat sc = 0.0f, mt, mn, corr, p, ps;\n"
"\t\tbool keep = j < P::S && !(P::CAUSAL && j > i);\n"
"\n"
"\t\tfor (int e = 0; e < P::E; e++)\n"
"\t\t\tsc = fmaf(qs[warp][e], ks[lane][e], sc);\n"
"\t\tsc *= P::SCALE;\n"
"\t\tif (P::MASK == 1 && keep)\n"
"\t\t\tkeep = ((const unsigned char *)mask)[mo + (long long)j * P::MSS] != 0;\n"
"\t\tif (P::MASK == 2 && keep)\n"
"\t\t\tsc += ((const float *)mask)[mo + (long long)j * P::MSS];\n"
"\t\tif (!keep)\n"
"\t\t\tsc = -INFINITY;\n"
"\t\tmt = sc;\n"
"\t\tfor (int d = 16; d > 0; d >>= 1)\n"
"\t\t\tmt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, d));\n"
"\t\tmn = fmaxf(m, mt);\n"
"\t\tif (mn == -INFINITY)\n"
"\t\t\tcontinue;   /* every key so far masked (the whole warp) */\n"
"\t\tcorr = expf(m - mn);\n"
"\t\tp = sc == -INFINITY ? 0.0f : expf(sc - mn);\n"
"\t\tps = p;\n"
"\t\tfor (int d = 16; d > 0; d >>= 1)\n"
"\t\t\tps += __shfl_xor_sync(0xffffffffu, ps, d);\n"
"\t\tl = l * corr + ps;\n"
"\t\tfor (int d = 0; d < NO; d++)\n"
"\t\t\to[d] *= corr;\n"
"#pragma unroll 8\n"
"\t\tfor (int t = 0; t < 32; t++) {\n"
"\t\t\tfloat pt = __shfl_sync(0xffffffffu, p, t);\n"
"\t\t\tfor (int d = 0; d < NO; d++)\n"
"\t\t\t\tif (lane + 32 * d < P::EV)\n"
"\t\t\t\t\to[d] = fmaf(pt, vs[t][lane + 32 * d], o[d]);\n"
"\t\t}\n"
"\t\tm = mn;\n"
"\t}\n"
"\tif (i < P::L)\n"
"\t\tfor (int d = 0; d < NO; d++)\n"
"\t\t\tif (lane + 32 * d < P::EV)\n"
"\t\t\t\ty[((long long)b * P::L + i) * P::EV + lane + 32 * d] = l > 0.0f ? o[d] / l : 0.0f;\n"
"}\n";

int
emit_sdpa(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	const Type *tq = &fn->val[op->in[0]].t, *tk = &fn->val[op->in[1]].t;
	const Type *tv = &fn->val[op->in[2]].t, *tm = op->nin == 4 ? &fn->val[op->in[3]].t : NULL;
	const Attr *sc = dp_attr(op, "scale");
	int r = tq->rank, y = op->out[0], mask = 0, k;
	long long L, S, E, EV, B = 1;
	int64_t ms[DP_MAXRANK] = {0};
	Str *s = &g->kern;
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
	if (!(g->nn->done & N_ATTN)) {
		g->nn->done |= N_ATTN;
		str_put(s, kernel);
	}
	str_put(s, "\n");
	opcomment(s, fn, i, "");
	str_printf(s, "struct Attn%d {\n"
	              "\tstatic constexpr int L = %lld, S = %lld, E = %lld, EV = %lld;\n"
	              "\tstatic constexpr int CAUSAL = %d, MASK = %d;   /* 1 bool, 2 added */\n"
	              "\tstatic constexpr long long MSL = %lld, MSS = %lld;   /* mask strides */\n"
	              "\tstatic constexpr float SCALE = ",
	           i, L, S, E, EV, (int)dp_geti(op, "is_causal", 0), mask,
	           (long long)ms[r - 2], (long long)ms[r - 1]);
	str_float(s, sc ? sc->f : 1.0 / sqrt((double)E));
	str_put(s, ";\n\n\t/* the mask's offset for batch entry b */\n"
	           "\tstatic __device__ long long\n\tmbase(int b)\n\t{\n\t\tlong long o = 0;\n\n"
	           "\t\t(void)b;\n");
	for (k = r - 3; k >= 0 && mask; k--) {
		if (ms[k])
			str_printf(s, "\t\to += b %% %lld * %lldLL;\n", (long long)tq->dim[k],
			           (long long)ms[k]);
		str_printf(s, "\t\tb /= %lld;\n", (long long)tq->dim[k]);
	}
	str_put(s, "\t\treturn o;\n\t}\n};\n");
	str_printf(g->rec, "\tnn_sdpa<Attn%d><<<dim3(%lld, %lld), 128, 0, g->stream>>>(v%d, v%d, "
	                   "v%d, ", i, (L + 3) / 4, B, gV(g, gbase(g, op->in[0])),
	           gV(g, gbase(g, op->in[1])), gV(g, gbase(g, op->in[2])));
	if (tm)
		str_printf(g->rec, "v%d, ", gV(g, gbase(g, op->in[3])));
	else
		str_put(g->rec, "NULL, ");
	str_printf(g->rec, "v%d);\n", gV(g, y));
	str_printf(g->rec, "\tif (dprt_cuda_launched(\"nn_sdpa<Attn%d>\", err, errn) != 0)\n"
	                   "\t\treturn -1;\n", i);
	g->nkern++;
	return 0;
}
