/* conv.c: 2-D convolution on the device, with the batch norm, residual add
 * and relu or clamp that nnplan folded into it (a Chain): the plan of each (tiles,
 * split K, packed weights) and the calls of the kernel library that runs
 * it (runtime/cuda/conv.cu, whose comment explains the method: an
 * implicit GEMM on the tensor cores in 3xTF32 or TF32, or a direct loop,
 * picked at run time by DPRT_CUDA_CONV).  The program's .cu holds one
 * constant dprt_conv per convolution and a call per run; init packs the
 * constant weights once on the device into rows of K rounded up to 16,
 * with the batch norm folded in: w' = w·a, b' = (cb - mean)·a + beta,
 * a = gamma / sqrt(var + eps).  Weights computed at run time are read
 * where they are, unfolded.
 *
 * Split K: where the tiles alone would leave the GPU idle (the late layers
 * at batch 1: few pixels, long K) K is split among up to 32 blocks whose
 * partial tiles a second kernel sums in the order of the splits (or, with
 * DPRT_CUDA_SPLITK=cluster on sm_90 and later, those split 16 ways at most,
 * the blocks of a thread-block cluster through distributed shared memory,
 * the same bits). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"

enum {
	BM = 64, BN = 64, BK = 16,   /* the GEMM tile (runtime/cuda/conv.cu's) */
	SMS = GPU_SMS,     /* streaming multiprocessors (gpu.h) */
	CTAS = 2 * SMS,    /* split K until about this many blocks run */
	MINKT = 2,         /* ... keeping at least this many BK slices per block
	                      while the blocks are fewer than the SMs, one more
	                      once they are not (two slices then cost more in
	                      partial tiles than they save: ResNet-50) */
	MAXSPLIT = 32,     /* ... into this many splits at most (the thresholds
	                      measured: bench/RESULTS.md; a tuning database
	                      overrides them per shape) */
	MAXCLUSTER = 16,   /* splits a cluster can sum (Hopper's largest,
	                      non-portable); more take the sum kernel */
};

/* The name of chain ch's relu or clamp (a tuning key's, a comment's). */
static const char *
actname(const Fn *fn, const Chain *ch)
{
	return ch->relu >= 0 && fn->op[ch->relu].kind == Aclamp ? "clamp" : "relu";
}

/* The geometry and method of convolution op i. */
typedef struct Cfg {
	long long N, C, H, W, O, OH, OW, k[2], s[2], p[2], d[2], G;
	long long K, lda, np, split, kchunk;
	int packed, direct;
	int tuned;         /* the split from the tuning database: its line, else 0 */
} Cfg;

static void
cfg(const Gpu *g, int i, Cfg *c)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	const Type *x = &fn->val[op->in[0]].t, *w = &fn->val[op->in[1]].t, *y = &fn->val[op->out[0]].t;
	int64_t s[2], p[2], d[2];
	long long tiles, nkt;

	memset(c, 0, sizeof *c);
	c->N = x->dim[0], c->C = x->dim[1], c->H = x->dim[2], c->W = x->dim[3];
	c->O = y->dim[1], c->OH = y->dim[2], c->OW = y->dim[3];
	c->k[0] = w->dim[2], c->k[1] = w->dim[3];
	dp_pair(op, "stride", 1, s);
	dp_pair(op, "padding", 0, p);
	dp_pair(op, "dilation", 1, d);
	for (int j = 0; j < 2; j++)
		c->s[j] = s[j], c->p[j] = p[j], c->d[j] = d[j];
	c->G = dp_geti(op, "groups", 1);
	c->K = c->C / c->G * c->k[0] * c->k[1];
	c->np = c->N * c->OH * c->OW;
	c->packed = gpu_isconst(g, op->in[1]);
	c->lda = c->packed ? (c->K + BK - 1) / BK * BK : c->K;
	c->direct = c->C == c->G;   /* depthwise: K is the window alone */
	tiles = (c->O / c->G + BM - 1) / BM * ((c->np + BN - 1) / BN) * c->G;
	nkt = (c->K + BK - 1) / BK;
	c->split = 1;
	while (c->split < MAXSPLIT && tiles * c->split < CTAS &&
	       nkt / (2 * c->split) >= MINKT + (tiles * c->split >= SMS))
		c->split *= 2;
	if (!c->direct) {   /* a measured choice over the heuristic */
		const Chain *ch = g->fold && g->fold[i] >= 0 ? &g->nn->chain[g->fold[i]] : NULL;
		int bias = op->nin == 3 || (ch && ch->bn >= 0), add = ch && ch->add >= 0;
		int relu = ch && ch->relu >= 0;
		char key[256], heur[24], epi[32];
		snprintf(heur, sizeof heur, "%lld", c->split);
		snprintf(epi, sizeof epi, "%s%s%s%s%s", bias ? "bias" : "", bias && (add || relu) ? "+" : "",
		         add ? "add" : "", add && relu ? "+" : "", relu ? actname(fn, ch) : "");
		snprintf(key, sizeof key, "%lldx%lldx%lldx%lld %lldx%lldx%lld s%lldx%lld p%lldx%lld "
		         "d%lldx%lld g%lld f32 %s %s", c->N, c->C, c->H, c->W, c->O, c->k[0], c->k[1],
		         c->s[0], c->s[1], c->p[0], c->p[1], c->d[0], c->d[1], c->G,
		         g->prec ? g->prec : "fp32", epi[0] ? epi : "none");
		c->split = atoi(tune_get(g, TUNE_CONV, i, key, heur, 0, &c->tuned));
	}
	c->kchunk = (nkt + c->split - 1) / c->split * BK;
	c->split = c->kchunk > 0 ? (c->K + c->kchunk - 1) / c->kchunk : 1;   /* none empty */
	if (c->direct || c->split < 1)
		c->split = 1;
}

int64_t
convws(const Gpu *g, int i)
{
	const Type *x = &g->fn->val[g->fn->op[i].in[0]].t;
	Cfg c;

	if (x->rank != 4 || x->dtype != DP_F32)
		return 0;
	cfg(g, i, &c);
	return c.split > 1 ? 4 * c.split * c.O * c.np : 0;
}

/* The device address of constant v, for init. */
static void
wconst(Gpu *g, Str *s, int v)
{
	int b = gbase(g, v);

	if (g->h[b].kind != G_WEIGHT)
		dp_die("conv: value %d is not in the device weights", v);
	str_printf(s, "(const float *)(g->weights + %lld)", (long long)g->h[b].off);
}

/* Init's packing of the weights of chain c into woff (and bout). */
static void
packinit(Gpu *g, const Chain *ch, int64_t woff, int64_t boff)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[ch->conv], *bn = ch->bn >= 0 ? &fn->op[ch->bn] : NULL;
	Str *s = &g->init;
	int k;

	str_printf(s, "\t/* op %d (%s)", ch->conv, dp_op_name[op->kind]);
	if (bn)
		str_printf(s, " and op %d (%s) folded", ch->bn, dp_op_name[bn->kind]);
	str_printf(s, ": the weights packed */\n"
	              "\tif (dprt_cuda_convpack(g, &conv%d, (float *)(g->weights + %lld), ",
	           ch->conv, (long long)woff);
	if (bn)
		str_printf(s, "(float *)(g->weights + %lld),\n\t\t", (long long)boff);
	else
		str_put(s, "NULL,\n\t\t");
	wconst(g, s, op->in[1]);
	str_put(s, ", ");
	if (op->nin == 3)
		wconst(g, s, op->in[2]);
	else
		str_put(s, "NULL");
	for (k = 1; k < 5; k++) {
		str_put(s, k == 3 ? ",\n\t\t" : ", ");
		if (bn)
			wconst(g, s, bn->in[k]);
		else
			str_put(s, "NULL");
	}
	str_put(s, ", ");
	str_float(s, bn ? dp_getf(bn, "eps", 1e-5) : 0);
	str_put(s, ", err, errn) != 0) {\n\t\tdprt_cuda_close(g);\n\t\treturn -1;\n\t}\n");
}

/* The dprt_conv of chain c. */
static void
constants(Gpu *g, const Chain *ch, const Cfg *c)
{
	const Fn *fn = g->fn;
	Str *s = &g->host;

	str_put(s, "\n");
	opcomment(s, fn, ch->conv, "");
	if (ch->bn >= 0)
		opcomment(s, fn, ch->bn, "");
	if (ch->add >= 0)
		opcomment(s, fn, ch->add, "");
	if (ch->relu >= 0)
		opcomment(s, fn, ch->relu, "");
	str_printf(s, "static const dprt_conv conv%d = {\n"
	              "\t%d,   /* op */\n"
	              "\t%lld, %lld, %lld, %lld, %lld,   /* N, C, H, W, groups */\n"
	              "\t%lld, %lld, %lld, %lld, %lld,   /* O, OH, OW, KH, KW */\n"
	              "\t%lld, %lld, %lld, %lld, %lld, %lld,   /* stride, padding, dilation */\n"
	              "\t%lld, %d, %d,   /* weight rows, packed, direct */\n"
	              "\t%lld, %lld,   /* split K: blocks, K each (of %lld)",
	           ch->conv, ch->conv, c->N, c->C, c->H, c->W, c->G, c->O, c->OH, c->OW,
	           c->k[0], c->k[1], c->s[0], c->s[1], c->p[0], c->p[1], c->d[0], c->d[1],
	           c->lda, c->packed, c->direct, c->split, c->kchunk, c->K);
	if (c->tuned)
		str_printf(s, "; tuning database line %d", c->tuned);
	str_printf(s, " */\n\t%d,   /* %s */\n\t", ch->relu >= 0, actname(fn, ch));
	str_float(s, ch->ca);
	str_put(s, ", ");
	str_float(s, ch->cr);
	str_put(s, ",   /* y = ca·conv + cr·res */\n\t");
	str_float(s, ch->lo);
	str_put(s, ", ");
	str_float(s, ch->hi);
	str_put(s, ",   /* the relu's or clamp's bounds */\n};\n");
}

/* The library call of chain ch, run at its last op i. */
int
emit_conv(Gpu *g, const Chain *ch, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[ch->conv];
	const Type *tx = &fn->val[op->in[0]].t;
	int y = fn->op[i].out[0];
	int64_t woff = -1, boff = -1;
	long long big = 2147483647LL;
	Str *r = g->rec;
	Cfg c;

	if (gpu_needf32(g, ch->conv) != 0)
		return -1;
	if (tx->rank != 4)
		dp_die("conv: rank %d", tx->rank);
	cfg(g, ch->conv, &c);
	opcomment(r, fn, ch->conv, "\t");
	if (ch->bn >= 0)
		opcomment(r, fn, ch->bn, "\t");
	if (ch->add >= 0)
		opcomment(r, fn, ch->add, "\t");
	if (ch->relu >= 0)
		opcomment(r, fn, ch->relu, "\t");
	if (c.np * c.O == 0)
		return 0;
	if (c.N * c.C * c.H * c.W > big || c.np * c.O > big || c.O * c.lda > big ||
	    c.split * c.O * c.np > big || (c.np + BN - 1) / BN > big ||
	    (c.O / c.G + BM - 1) / BM > 65535 || c.G * c.split > 65535) {
		dp_seterr(g->err, "op %d (%s): too large for the cuda kernel", ch->conv,
		          dp_op_name[op->kind]);
		return -1;
	}
	constants(g, ch, &c);
	if (c.packed) {
		woff = wreserve(g, 4 * c.O * c.lda);
		if (ch->bn >= 0)
			boff = wreserve(g, 4 * c.O);
		packinit(g, ch, woff, boff);
	}
	if (c.split > 1 && g->nn->ws < 0)
		g->nn->ws = wreserve(g, g->nn->wsmax);
	if (c.split > 1 && c.split <= MAXCLUSTER)   /* the clustered form where asked for and
	                                               init found it runs */
		str_printf(&g->init, "\t/* op %d: with DPRT_CUDA_SPLITK=cluster, split K summed in "
		                     "clusters of %lld blocks, where they run */\n"
		                     "\tif (g->cluster && !dprt_cuda_convcl_ok(&conv%d))\n"
		                     "\t\tg->cluster = 0;\n", ch->conv, c.split, ch->conv);

	str_printf(r, "\tif (dprt_cuda_conv(g, &conv%d, v%d,\n\t                   ", ch->conv,
	           gV(g, gbase(g, op->in[0])));
	if (c.packed)
		str_printf(r, "(const float *)(g->weights + %lld)", (long long)woff);
	else
		str_printf(r, "v%d", gV(g, gbase(g, op->in[1])));
	str_put(r, ", ");   /* the bias */
	if (ch->bn >= 0)
		str_printf(r, "(const float *)(g->weights + %lld)", (long long)boff);
	else if (op->nin == 3)
		str_printf(r, "v%d", gV(g, gbase(g, op->in[2])));
	else
		str_put(r, "NULL");
	str_put(r, ",\n\t                   ");   /* the residual */
	if (ch->add >= 0)
		str_printf(r, "v%d /* res */", gV(g, gbase(g, ch->res)));
	else
		str_put(r, "NULL");
	str_printf(r, ", v%d, ", gV(g, y));
	if (c.split > 1)
		str_printf(r, "(float *)(g->weights + %lld)", (long long)g->nn->ws);
	else
		str_put(r, "NULL");
	str_put(r, ", err, errn) != 0)\n\t\treturn -1;\n");
	g->nkern++;
	return 0;
}
