/* nn.c: the neural-network ops on the device: which ops they are, the plan
 * that folds a convolution's batch norm, residual add and relu or clamp into its
 * kernel (nnplan), and the dispatch of their emitters; here too the
 * kernels of pooling (one thread per output, the cpu's window rules) and
 * of batched matrix products (aten.bmm, aten.matmul with broadcast batch
 * axes: a shared-memory tiled kernel, exact fp32).  Convolutions are in
 * conv.c, attention in attn.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nn.h"

enum { BLOCK = 256 };   /* threads per block of the pooling kernels */

int
isnn(const Fn *fn, const Op *op)
{
	(void)fn;
	switch (op->kind) {
	case Aconv: case Amaxpool: case Aavgpool: case Aadaptavg: case Abmm: case Asdpa:
		return 1;
	}
	return 0;
}

/* Whether v is a constant on the device (uploaded at init), maybe through
 * reshapes: what init can read before any partition has run. */
int
gpu_isconst(const Gpu *g, int v)
{
	const Fn *fn = g->fn;

	for (;;) {
		int d = fn->val[v].def;
		const Op *op = &fn->op[d];
		if (op->dev != DEV_CUDA)
			return 0;
		if (op->kind == Oconst || g->x[d].kind == X_UPLOAD)
			return !dp_geti(op, "state", 0);   /* state changes after init */
		if (!dp_isreshape(fn, op))
			return 0;
		v = op->in[0];
	}
}

/* The one reader of op t's result when it may join t's kernel: same
 * partition, on the device, f32, in no other chain; else -1. */
static int
next(const Gpu *g, int t)
{
	const Fn *fn = g->fn;
	int v = fn->op[t].out[0], u = g->user[v];

	if (g->nuse[v] != 1 || u < 0 || g->fold[u] >= 0 || fn->op[u].dev != DEV_CUDA ||
	    fn->op[u].part != fn->op[t].part || fn->op[u].nout != 1 ||
	    !dp_type_eq(ty(g, fn->op[u].out[0]), ty(g, v)) || ty(g, v)->dtype != DP_F32)
		return -1;
	return u;
}

/* Convolution i and what its kernel can compute after it: conv [-> batch
 * norm with constant statistics, when the weights are constants too, as
 * init folds it into them] [-> add of a same-shape tensor] [-> relu, or
 * clamp to constant bounds: ReLU6, hardtanh]. */
static void
chain(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	Chain c = {.conv = i, .bn = -1, .add = -1, .relu = -1, .res = -1, .ca = 1, .cr = 1,
	           .lo = 0, .hi = INFINITY};
	int t = i, u, k;

	if (gpu_isconst(g, op->in[1]) && (op->nin < 3 || gpu_isconst(g, op->in[2])) &&
	    (u = next(g, t)) >= 0 && fn->op[u].kind == Abatchnorm) {
		for (k = 1; k < 5 && gpu_isconst(g, fn->op[u].in[k]); k++)
			;
		if (k == 5) {
			c.bn = u;
			t = u;
		}
	}
	if ((u = next(g, t)) >= 0 && fn->op[u].kind == Aadd) {
		int v = fn->op[t].out[0], first = fn->op[u].in[0] == v;
		int other = fn->op[u].in[first ? 1 : 0];
		double alpha = dp_getf(&fn->op[u], "alpha", 1);
		if (other != v && dp_type_eq(ty(g, other), ty(g, v))) {
			c.add = u;
			c.res = other;
			c.ca = first ? 1 : alpha;
			c.cr = first ? alpha : 1;
			t = u;
		}
	}
	if ((u = next(g, t)) >= 0 && (fn->op[u].kind == Arelu || fn->op[u].kind == Aclamp)) {
		c.relu = u;
		if (fn->op[u].kind == Aclamp) {
			c.lo = dp_getf(&fn->op[u], "min", -INFINITY);
			c.hi = dp_getf(&fn->op[u], "max", INFINITY);
		}
		t = u;
	}
	g->fold[i] = t;
	if (c.bn >= 0)
		g->fold[c.bn] = t;
	if (c.add >= 0)
		g->fold[c.add] = t;
	if (c.relu >= 0)
		g->fold[c.relu] = t;
	g->nn->chain[t] = c;
}

/* Finds the chains and the split-K workspace they need. */
int
nnplan(Gpu *g)
{
	Fn *fn = g->fn;
	Nn *nn = dp_alloc(fn->arena, 1, sizeof *nn);
	int i;

	g->nn = nn;
	nn->ws = -1;
	g->fold = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *g->fold);
	nn->chain = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *nn->chain);
	for (i = 0; i < fn->nop; i++) {
		g->fold[i] = -1;
		nn->chain[i].conv = -1;
	}
	for (i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		int64_t ws;
		if (op->kind != Aconv || op->dev != DEV_CUDA)
			continue;
		chain(g, i);
		if ((ws = convws(g, i)) > nn->wsmax)
			nn->wsmax = ws;
	}
	return 0;
}

/* The op that names the kernel run at op i: the convolution of the chain
 * ending at i, else i. */
int
nnhead(const Gpu *g, int i)
{
	if (g->nn && g->fold && g->fold[i] == i && g->nn->chain[i].conv >= 0)
		return g->nn->chain[i].conv;
	return i;
}

/* Device weight space after the plan's. */
int64_t
wreserve(Gpu *g, int64_t bytes)
{
	int64_t off = g->wbytes;

	g->wbytes += (bytes + 255) / 256 * 256;
	return off;
}

/* ---- pooling ---- */

/* The f32 check of op i's operands and result. */
int
gpu_needf32(Gpu *g, int i)
{
	const Op *op = &g->fn->op[i];
	int k;

	for (k = 0; k < op->nin + op->nout; k++) {
		int v = k < op->nin ? op->in[k] : op->out[k - op->nin];
		if (ty(g, v)->dtype != DP_F32) {
			dp_seterr(g->err, "op %d (%s): the cuda target has no kernel for %s tensors "
			          "(only f32)", i, dp_op_name[op->kind], dp_dtype_name[ty(g, v)->dtype]);
			return -1;
		}
	}
	return 0;
}

static int
pool(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	const Type *tx = ty(g, op->in[0]), *to = ty(g, op->out[0]);
	int r = tx->rank, y = op->out[0];
	long long H = tx->dim[r - 2], W = tx->dim[r - 1], OH = to->dim[r - 2], OW = to->dim[r - 1];
	long long n = dp_numel(to);
	int64_t k[2], s[2], p[2], d[2];
	Str *o = &g->kern;
	char name[64];

	if (gpu_needf32(g, i) != 0)
		return -1;
	opcomment(g->rec, fn, i, "\t");
	if (n == 0)
		return 0;
	if (op->kind != Aadaptavg && dp_poolwin(op, k, s, p, d) != 0) {
		dp_seterr(g->err, "op %d (%s): its window is not legalized (run dp-legalize)", i,
		          dp_op_name[op->kind]);
		return -1;
	}
	snprintf(name, sizeof name, "k%d_%s", y, op->kind == Amaxpool ? "maxpool" :
	         op->kind == Aavgpool ? "avgpool" : "adaptavg");
	str_put(o, "\n");
	opcomment(o, fn, i, "");
	str_printf(o, "/* one thread per output; windows as runtime/nn.c clips them */\n"
	              "static __global__ void __launch_bounds__(%d)\n%s(const float *__restrict__ x, "
	              "float *__restrict__ y)\n{\n"
	              "\tlong long i = blockIdx.x * %dLL + threadIdx.x;\n\n"
	              "\tif (i >= %lldLL)\n\t\treturn;\n"
	              "\tint ow = (int)(i %% %lld), oh = (int)(i / %lld %% %lld);\n"
	              "\tconst float *xc = x + i / %lld * %lldLL;\n",
	           BLOCK, name, BLOCK, n, OW, OW, OH, OH * OW, H * W);
	switch (op->kind) {
	case Amaxpool:
		str_printf(o, "\tint h0 = oh * %lld - %lld, h1 = min(h0 + %lld, %lld);\n"
		              "\tint w0 = ow * %lld - %lld, w1 = min(w0 + %lld, %lld);\n"
		              "\tfloat m = -INFINITY;\n\n"
		              "\twhile (h0 < 0)\n\t\th0 += %lld;\n\twhile (w0 < 0)\n\t\tw0 += %lld;\n"
		              "\tfor (int ih = h0; ih < h1; ih += %lld)\n"
		              "\t\tfor (int iw = w0; iw < w1; iw += %lld) {\n"
		              "\t\t\tfloat v = xc[ih * %lld + iw];\n"
		              "\t\t\tif (v > m || v != v)\n\t\t\t\tm = v;\n\t\t}\n\ty[i] = m;\n}\n",
		           (long long)s[0], (long long)p[0], (long long)((k[0] - 1) * d[0] + 1), H,
		           (long long)s[1], (long long)p[1], (long long)((k[1] - 1) * d[1] + 1), W,
		           (long long)d[0], (long long)d[1], (long long)d[0], (long long)d[1], W);
		break;
	case Aavgpool: {
		long long div = dp_geti(op, "divisor_override", 0);
		int pad = (int)dp_geti(op, "count_include_pad", 1);
		char dv[32];   /* the divisor, where known before clipping */
		if (div)
			snprintf(dv, sizeof dv, "%lld", div);
		else
			snprintf(dv, sizeof dv, "%s", "(h1 - h0) * (w1 - w0)");
		str_printf(o, "\tint h0 = oh * %lld - %lld, w0 = ow * %lld - %lld;\n"
		              "\tint h1 = min(h0 + %lld, %lld), w1 = min(w0 + %lld, %lld);\n"
		              "\tint div = %s;\n\tfloat sum = 0.0f;\n\n"
		              "\th0 = max(h0, 0);\n\tw0 = max(w0, 0);\n"
		              "\th1 = min(h1, %lld);\n\tw1 = min(w1, %lld);\n"
		              "\tif (h0 >= h1 || w0 >= w1) {\n\t\ty[i] = 0.0f;\n\t\treturn;\n\t}\n"
		              "\tfor (int ih = h0; ih < h1; ih++)\n"
		              "\t\tfor (int iw = w0; iw < w1; iw++)\n"
		              "\t\t\tsum += xc[ih * %lld + iw];\n",
		           (long long)s[0], (long long)p[0], (long long)s[1], (long long)p[1],
		           (long long)k[0], H + p[0], (long long)k[1], W + p[1], dv,
		           H, W, W);
		if (!div && !pad)
			str_put(o, "\tdiv = (h1 - h0) * (w1 - w0);\n");
		str_put(o, "\ty[i] = sum / (float)div;\n}\n");
		break;
	}
	default:   /* adaptive */
		str_printf(o, "\tint h0 = oh * %lld / %lld, h1 = ((oh + 1) * %lld + %lld) / %lld;\n"
		              "\tint w0 = ow * %lld / %lld, w1 = ((ow + 1) * %lld + %lld) / %lld;\n"
		              "\tfloat sum = 0.0f;\n\n"
		              "\tfor (int ih = h0; ih < h1; ih++)\n"
		              "\t\tfor (int iw = w0; iw < w1; iw++)\n"
		              "\t\t\tsum += xc[ih * %lld + iw];\n"
		              "\ty[i] = sum / (float)(h1 - h0) / (float)(w1 - w0);\n}\n",
		           H, OH, H, OH - 1, OH, W, OW, W, OW - 1, OW, W);
	}
	if (n / BLOCK + 1 > 2147483647LL || H * W > 2147483647LL) {
		dp_seterr(g->err, "op %d (%s): too large for the cuda kernel", i, dp_op_name[op->kind]);
		return -1;
	}
	str_printf(g->rec, "\tDP_LAUNCH(%s, %lld, %d, 0)(v%d, v%d);\n", name,
	           (n + BLOCK - 1) / BLOCK, BLOCK, gV(g, gbase(g, op->in[0])), gV(g, y));
	launched(g, name);
	g->nkern++;
	return 0;
}

/* ---- batched matrix products ---- */

/* aten.bmm: y[b] = a[b]·b[b] for a [B,M,K] and b [B,K,N] (dp-legalize
 * makes every torch.matmul such a bmm between views and expands), one 32x32
 * tile of y per block (16x16 threads, 2x2 each), 32-deep slices of a and b
 * through shared memory; fp32 FMAs in order of k. */
static int
bmm(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	const Type *ta = ty(g, op->in[0]), *tb = ty(g, op->in[1]);
	int y = op->out[0], nb = 1, k;
	int64_t B = ta->dim[0], M = ta->dim[1], K = ta->dim[2], N = tb->dim[2];
	int64_t bo[1] = { B }, sa[1] = { B == 1 ? 0 : M * K }, sb[1] = { B == 1 ? 0 : K * N };
	Str *o = &g->kern;
	char name[64];

	if (gpu_needf32(g, i) != 0)
		return -1;
	opcomment(g->rec, fn, i, "\t");
	if (B * M * N == 0)
		return 0;
	if (B > 65535 || (M + 31) / 32 > 65535 || B * M * N > 2147483647LL ||
	    dp_numel(ty(g, op->in[0])) > 2147483647LL || dp_numel(ty(g, op->in[1])) > 2147483647LL) {
		dp_seterr(g->err, "op %d (%s): too large for the cuda kernel", i, dp_op_name[op->kind]);
		return -1;
	}
	snprintf(name, sizeof name, "k%d_bmm", y);
	str_put(o, "\n");
	opcomment(o, fn, i, "");
	str_printf(o, "/* y[b] = a[b] b[b], %lld batches of M=%lld N=%lld K=%lld: 32x32 tiles */\n"
	              "static __global__ void __launch_bounds__(256)\n"
	              "%s(const float *__restrict__ a, const float *__restrict__ b, "
	              "float *__restrict__ y)\n{\n"
	              "\t__shared__ float as[32][33], bs[32][33];\n"
	              "\tint tx = threadIdx.x & 15, ty = threadIdx.x >> 4;\n"
	              "\tint m0 = blockIdx.y * 32, n0 = blockIdx.x * 32, r = blockIdx.z, ix;\n"
	              "\tfloat acc00 = 0.0f, acc01 = 0.0f, acc10 = 0.0f, acc11 = 0.0f;\n\n"
	              "\t(void)r;\n\t(void)ix;\n",
	           (long long)B, (long long)M, (long long)N, (long long)K, name);
	if (g->pdl)   /* launched early, as the elementwise kernels (kern.c) */
		str_put(o, "\tdp_pdl_wait();   /* the kernels before: done, their writes seen */\n");
	for (k = nb - 1; k >= 0; k--) {   /* the batch index into a's and b's offsets */
		str_printf(o, "\tix = r %% %lld;\n\tr /= %lld;\n", (long long)bo[k], (long long)bo[k]);
		if (sa[k])
			str_printf(o, "\ta += ix * %lldLL;\n", (long long)sa[k]);
		if (sb[k])
			str_printf(o, "\tb += ix * %lldLL;\n", (long long)sb[k]);
	}
	str_printf(o, "\ty += blockIdx.z * %lldLL;\n"
	              "\tfor (int k0 = 0; k0 < %lld; k0 += 32) {\n"
	              "\t\tfor (int e = threadIdx.x; e < 1024; e += 256) {\n"
	              "\t\t\tint u = e >> 5, q = e & 31;\n"
	              "\t\t\tas[u][q] = m0 + u < %lld && k0 + q < %lld ? a[(m0 + u) * %lld + k0 + q] : 0.0f;\n"
	              "\t\t\tbs[u][q] = k0 + u < %lld && n0 + q < %lld ? b[(k0 + u) * %lld + n0 + q] : 0.0f;\n"
	              "\t\t}\n\t\t__syncthreads();\n"
	              "#pragma unroll 8\n"
	              "\t\tfor (int k = 0; k < 32; k++) {\n"
	              "\t\t\tfloat a0 = as[ty][k], a1 = as[ty + 16][k], b0 = bs[k][tx], b1 = bs[k][tx + 16];\n"
	              "\t\t\tacc00 = fmaf(a0, b0, acc00);\n\t\t\tacc01 = fmaf(a0, b1, acc01);\n"
	              "\t\t\tacc10 = fmaf(a1, b0, acc10);\n\t\t\tacc11 = fmaf(a1, b1, acc11);\n"
	              "\t\t}\n\t\t__syncthreads();\n\t}\n",
	           (long long)(M * N), (long long)K, (long long)M, (long long)K, (long long)K,
	           (long long)K, (long long)N, (long long)N);
	str_printf(o, "\tif (m0 + ty < %lld && n0 + tx < %lld)\n\t\ty[(m0 + ty) * %lld + n0 + tx] = acc00;\n"
	              "\tif (m0 + ty < %lld && n0 + tx + 16 < %lld)\n\t\ty[(m0 + ty) * %lld + n0 + tx + 16] = acc01;\n"
	              "\tif (m0 + ty + 16 < %lld && n0 + tx < %lld)\n\t\ty[(m0 + ty + 16) * %lld + n0 + tx] = acc10;\n"
	              "\tif (m0 + ty + 16 < %lld && n0 + tx + 16 < %lld)\n\t\ty[(m0 + ty + 16) * %lld + n0 + tx + 16] = acc11;\n}\n",
	           (long long)M, (long long)N, (long long)N, (long long)M, (long long)N, (long long)N,
	           (long long)M, (long long)N, (long long)N, (long long)M, (long long)N, (long long)N);
	str_printf(g->rec, "\tDP_LAUNCH(%s, dim3(%lld, %lld, %lld), 256, %d)(v%d, v%d, v%d);\n",
	           name, (long long)((N + 31) / 32), (long long)((M + 31) / 32), (long long)B, g->pdl,
	           gV(g, gbase(g, op->in[0])), gV(g, gbase(g, op->in[1])), gV(g, y));
	launched(g, name);
	g->nkern++;
	return 0;
}

/* The kernels of op i. */
int
gpu_emit_nn(Gpu *g, int i)
{
	const Op *op = &g->fn->op[i];

	if (g->fold[i] == i)
		return emit_conv(g, &g->nn->chain[i], i);
	switch (op->kind) {
	case Amaxpool: case Aavgpool: case Aadaptavg:
		return pool(g, i);
	case Abmm:
		return bmm(g, i);
	case Asdpa:
		return emit_sdpa(g, i);
	}
	dp_seterr(g->err, "op %d (%s): the cuda target has no kernel for this op", i,
	          dp_op_name[op->kind]);
	return -1;
}
