/* mm.c: matrix products on the GPU (aten.linear, aten.addmm, aten.mm) with
 * their bias and a folded relu.  Few rows (batch 1 is a matrix-vector
 * product, bound by reading the weights once): a generated kernel, one warp
 * per output column, 16-byte loads, bias and relu in its epilogue.  Many
 * rows with a bias per output column and nothing else after the product (a
 * transformer's linear layers): cuBLASLt with the bias in its epilogue, one
 * kernel.  Other products of many rows: cuBLAS (fp32, or TF32 where the
 * mapping says so), then one epilogue kernel for bias and relu. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

enum {
	GEMV_ROWS = 8,     /* at most this many rows take the generated kernel */
	WARPS = 4,         /* warps per block of the GEMV kernel */
	BLOCK = 128,       /* threads per block of the other kernels */
};

/* An operand read as a matrix: the value holding its memory and element
 * strides. */
typedef struct Mat {
	int v;
	int64_t rs, cs;
} Mat;

/* Value v as an R x C matrix: dense, or a transposed view of a dense C x R. */
static Mat
gpu_matrix(Gpu *g, int v, int64_t R, int64_t C)
{
	Mat m = {.v = gbase(g, v), .rs = C, .cs = 1};

	if (g->h[v].kind == G_VIEW && g->h[v].trans) {
		m.rs = 1;
		m.cs = R;
	}
	return m;
}

/* Strides that broadcast bias v (rank 0..2) over an M x N result. */
static Mat
gpu_bias(Gpu *g, int v)
{
	const Type *t = ty(g, v);
	Mat m = {.v = gbase(g, v)};

	if (t->rank >= 1)
		m.cs = t->dim[t->rank - 1] == 1 ? 0 : 1;
	if (t->rank == 2)
		m.rs = t->dim[0] == 1 ? 0 : t->dim[1];
	if (t->rank > 2)
		dp_die("bias of rank %d", t->rank);
	return m;
}

/* One product: y = relu?(alpha·A·B + beta·C0). */
typedef struct MM {
	int i;             /* the op */
	int y;             /* the value written (the relu's when folded) */
	int64_t M, N, K;
	double alpha, beta;
	Mat a, b, c0;
	int hasc0, relu;
	char name[64];     /* kernel name */
} MM;

/* The epilogue of element (m, n) of accumulator acc, into y. */
static void
epilogue(Str *s, const MM *p, const char *ind, const char *m, const char *n, const char *acc,
         const char *dst)
{
	str_printf(s, "%sr = ", ind);
	if (p->alpha != 1) {
		str_float(s, p->alpha);
		str_put(s, " * ");
	}
	str_put(s, acc);
	if (p->hasc0) {
		str_put(s, " + ");
		if (p->beta != 1) {
			str_float(s, p->beta);
			str_put(s, " * ");
		}
		str_put(s, "c0[");
		if (p->c0.rs)
			str_printf(s, "%s * %lld%s", m, (long long)p->c0.rs, p->c0.cs ? " + " : "");
		if (p->c0.cs)
			str_printf(s, "%s%s", n, p->c0.cs == 1 ? "" : "");
		if (p->c0.cs > 1)
			str_printf(s, " * %lld", (long long)p->c0.cs);
		if (!p->c0.rs && !p->c0.cs)
			str_put(s, "0");
		str_put(s, "]");
	}
	str_put(s, ";\n");
	if (p->relu)
		str_printf(s, "%sr = r < 0.0f ? 0.0f : r;   /* relu, NaN stays */\n", ind);
	str_printf(s, "%s%s = r;\n", ind, dst);
}

static void
params(Str *s, const MM *p, int ab)
{
	str_printf(s, "static __global__ void __launch_bounds__(%d)\n%s(", BLOCK, p->name);
	if (ab)
		str_put(s, "const float *__restrict__ a, const float *__restrict__ b, ");
	if (p->hasc0)
		str_put(s, "const float *__restrict__ c0, ");
	str_printf(s, "float *__restrict__ y)\n{\n");
}

/* The GEMV kernel: one warp per column n, lanes across k, all M rows at
 * once; B's column n is contiguous in k (a weight stored [N, K]). */
static void
gemv(Gpu *g, const MM *p)
{
	Str *s = &g->kern;
	int vec = p->K % 4 == 0 && p->b.cs % 4 == 0 && p->a.cs == 1 && p->a.rs % 4 == 0;
	int64_t m;

	str_printf(s, "/* y[m,n] = %s(sum_k a[m,k] b[k,n]%s), M=%lld N=%lld K=%lld: one warp per "
	              "column n, %s */\n", p->relu ? "relu" : "", p->hasc0 ? " + c0[m,n]" : "",
	           (long long)p->M, (long long)p->N, (long long)p->K,
	           vec ? "16-byte loads" : "4-byte loads");
	str_printf(s, "static __global__ void __launch_bounds__(%d)\n%s(", WARPS * 32, p->name);
	str_put(s, "const float *__restrict__ a, const float *__restrict__ b, ");
	if (p->hasc0)
		str_put(s, "const float *__restrict__ c0, ");
	str_printf(s, "float *__restrict__ y)\n{\n"
	              "\tint n = blockIdx.x * %d + threadIdx.x / 32, lane = threadIdx.x %% 32;\n"
	              "\tfloat r", WARPS);
	for (m = 0; m < p->M; m++)
		str_printf(s, ", acc%lld = 0.0f", (long long)m);
	str_printf(s, ";\n\n\tif (n >= %lld)\n\t\treturn;\n", (long long)p->N);
	if (vec) {
		str_printf(s, "\tconst float4 *bn = (const float4 *)(b + (long long)n * %lld);\n"
		              "#pragma unroll 4\n"
		              "\tfor (int k = lane; k < %lld; k += 32) {\n"
		              "\t\tfloat4 w = __ldg(bn + k), x;\n", (long long)p->b.cs,
		           (long long)(p->K / 4));
		for (m = 0; m < p->M; m++)
			str_printf(s, "\t\tx = __ldg((const float4 *)(a + %lld) + k);\n"
			              "\t\tacc%lld = fmaf(w.x, x.x, acc%lld);\n"
			              "\t\tacc%lld = fmaf(w.y, x.y, acc%lld);\n"
			              "\t\tacc%lld = fmaf(w.z, x.z, acc%lld);\n"
			              "\t\tacc%lld = fmaf(w.w, x.w, acc%lld);\n",
			           (long long)(m * p->a.rs), (long long)m, (long long)m, (long long)m,
			           (long long)m, (long long)m, (long long)m, (long long)m, (long long)m);
	} else {
		str_printf(s, "\tconst float *bn = b + (long long)n * %lld;\n"
		              "#pragma unroll 4\n"
		              "\tfor (long long k = lane; k < %lldLL; k += 32) {\n"
		              "\t\tfloat w = __ldg(bn + k);\n", (long long)p->b.cs, (long long)p->K);
		for (m = 0; m < p->M; m++)
			str_printf(s, "\t\tacc%lld = fmaf(w, __ldg(a + %lld + k * %lld), acc%lld);\n",
			           (long long)m, (long long)(m * p->a.rs), (long long)p->a.cs,
			           (long long)m);
	}
	str_put(s, "\t}\n\tfor (int s = 16; s > 0; s /= 2) {\n");
	for (m = 0; m < p->M; m++)
		str_printf(s, "\t\tacc%lld += __shfl_xor_sync(0xffffffffu, acc%lld, s);\n",
		           (long long)m, (long long)m);
	str_put(s, "\t}\n\tif (lane != 0)\n\t\treturn;\n");
	for (m = 0; m < p->M; m++) {
		char mm[32], acc[32], dst[64];
		snprintf(mm, sizeof mm, "%lld", (long long)m);
		snprintf(acc, sizeof acc, "acc%lld", (long long)m);
		snprintf(dst, sizeof dst, "y[%lld + n]", (long long)(m * p->N));
		epilogue(s, p, "\t", mm, "n", acc, dst);
	}
	str_put(s, "}\n");
}

/* Any strides, few rows: one thread per column n, all M rows. */
static void
small(Gpu *g, const MM *p)
{
	Str *s = &g->kern;
	int64_t m;

	str_printf(s, "/* y[m,n] = %s(sum_k a[m,k] b[k,n]%s), M=%lld N=%lld K=%lld: one thread "
	              "per column n */\n", p->relu ? "relu" : "", p->hasc0 ? " + c0[m,n]" : "",
	           (long long)p->M, (long long)p->N, (long long)p->K);
	params(s, p, 1);
	str_printf(s, "\tlong long n = blockIdx.x * %dLL + threadIdx.x;\n\tfloat r", BLOCK);
	for (m = 0; m < p->M; m++)
		str_printf(s, ", acc%lld = 0.0f", (long long)m);
	str_printf(s, ";\n\n\tif (n >= %lldLL)\n\t\treturn;\n"
	              "\tfor (long long k = 0; k < %lldLL; k++) {\n"
	              "\t\tfloat w = b[k * %lld + n * %lld];\n", (long long)p->N, (long long)p->K,
	           (long long)p->b.rs, (long long)p->b.cs);
	for (m = 0; m < p->M; m++)
		str_printf(s, "\t\tacc%lld = fmaf(a[%lldLL + k * %lld], w, acc%lld);\n", (long long)m,
		           (long long)(m * p->a.rs), (long long)p->a.cs, (long long)m);
	str_put(s, "\t}\n");
	for (m = 0; m < p->M; m++) {
		char mm[32], acc[32], dst[64];
		snprintf(mm, sizeof mm, "%lld", (long long)m);
		snprintf(acc, sizeof acc, "acc%lld", (long long)m);
		snprintf(dst, sizeof dst, "y[%lldLL + n]", (long long)(m * p->N));
		epilogue(s, p, "\t", mm, "n", acc, dst);
	}
	str_put(s, "}\n");
}

/* Any strides, any rows: one thread per element (strides cuBLAS cannot
 * take; rare). */
static void
naive(Gpu *g, const MM *p)
{
	Str *s = &g->kern;

	str_printf(s, "/* y[m,n] = %s(sum_k a[m,k] b[k,n]%s), M=%lld N=%lld K=%lld: one thread "
	              "per element */\n", p->relu ? "relu" : "", p->hasc0 ? " + c0[m,n]" : "",
	           (long long)p->M, (long long)p->N, (long long)p->K);
	params(s, p, 1);
	str_printf(s, "\tfor (long long i = blockIdx.x * %dLL + threadIdx.x; i < %lldLL; "
	              "i += (long long)gridDim.x * %d) {\n"
	              "\t\tlong long m = i / %lld, n = i %% %lld;\n\t\tfloat r, acc = 0.0f;\n\n"
	              "\t\tfor (long long k = 0; k < %lldLL; k++)\n"
	              "\t\t\tacc = fmaf(a[m * %lld + k * %lld], b[k * %lld + n * %lld], acc);\n",
	           BLOCK, (long long)(p->M * p->N), BLOCK, (long long)p->N, (long long)p->N,
	           (long long)p->K, (long long)p->a.rs, (long long)p->a.cs, (long long)p->b.rs,
	           (long long)p->b.cs);
	epilogue(s, p, "\t\t", "m", "n", "acc", "y[i]");
	str_put(s, "\t}\n}\n");
}

/* The bias and relu after cuBLAS: y = relu?(y + beta·c0), in place; alpha
 * was applied by cuBLAS. */
static void
after(Gpu *g, const MM *p)
{
	Str *s = &g->kern;
	MM q = *p;
	char m[64], n[64];

	q.alpha = 1;
	str_printf(s, "/* y[m,n] = %s(y[m,n]%s), M=%lld N=%lld, after cublasSgemm */\n",
	           p->relu ? "relu" : "", p->hasc0 ? " + c0[m,n]" : "", (long long)p->M,
	           (long long)p->N);
	params(s, &q, 0);
	snprintf(m, sizeof m, "(i / %lld)", (long long)p->N);
	snprintf(n, sizeof n, "(i %% %lld)", (long long)p->N);
	str_printf(s, "\tfor (long long i = blockIdx.x * %dLL + threadIdx.x; i < %lldLL; "
	              "i += (long long)gridDim.x * %d) {\n\t\tfloat r;\n\n",
	           BLOCK, (long long)(p->M * p->N), BLOCK);
	epilogue(s, &q, "\t\t", m, n, "y[i]", "y[i]");
	str_put(s, "\t}\n}\n");
}

/* Whether cuBLAS takes the strides (one unit stride, a wide enough other). */
static int
blasok(const Mat *m, int64_t R, int64_t C)
{
	return (m->cs == 1 && m->rs >= (C > 1 ? C : 1)) || (m->rs == 1 && m->cs >= (R > 1 ? R : 1));
}

static int64_t
grid(int64_t n, int64_t per)
{
	int64_t b = (n + per - 1) / per;

	return b > (1 << 20) ? (1 << 20) : b < 1 ? 1 : b;
}

static void
launch(Gpu *g, const MM *p, int64_t blocks, int threads, int ab)
{
	str_printf(g->rec, "\t%s<<<%lld, %d, 0, g->stream>>>(", p->name, (long long)blocks, threads);
	if (ab)
		str_printf(g->rec, "v%d, v%d, ", gV(g, p->a.v), gV(g, p->b.v));
	if (p->hasc0)
		str_printf(g->rec, "v%d, ", gV(g, p->c0.v));
	str_printf(g->rec, "v%d);\n", gV(g, p->y));
	launched(g, p->name);
}

/* A matrix product and what is folded into it. */
int
emit_mm(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	MM p = {.i = i, .alpha = 1, .beta = 1};
	int k, gv, lt, line = 0;
	const char *algo = "";   /* the tunable's choice, where it is one */

	for (k = 0; k < op->nin + op->nout; k++) {
		int v = k < op->nin ? op->in[k] : op->out[k - op->nin];
		if (ty(g, v)->dtype != DP_F32) {
			dp_seterr(g->err, "op %d (%s): the cuda target has no kernel for %s tensors "
			          "(only f32)", i, dp_op_name[op->kind], dp_dtype_name[ty(g, v)->dtype]);
			return -1;
		}
	}
	p.relu = g->relu[i] >= 0;
	p.y = p.relu ? fn->op[g->relu[i]].out[0] : op->out[0];
	if (op->kind == Alinear) {   /* y[..., N] = x[..., K] W^T + b, W being N x K */
		const Type *tx = ty(g, op->in[0]), *tw = ty(g, op->in[1]);
		Mat w;
		p.N = tw->dim[0];
		p.K = tw->dim[1];
		p.M = p.K ? dp_numel(tx) / p.K : 0;
		if (tx->rank == 2)
			p.a = gpu_matrix(g, op->in[0], p.M, p.K);
		else
			p.a = (Mat){.v = gbase(g, op->in[0]), .rs = p.K, .cs = 1};
		w = gpu_matrix(g, op->in[1], p.N, p.K);
		p.b = (Mat){.v = w.v, .rs = w.cs, .cs = w.rs};   /* B = W^T */
		if ((p.hasc0 = op->nin == 3))
			p.c0 = gpu_bias(g, op->in[2]);
	} else {   /* addmm: beta·self + alpha·m1·m2; mm: m1·m2 */
		int k0 = op->kind == Aaddmm;
		const Type *ta = ty(g, op->in[k0]), *tb = ty(g, op->in[k0 + 1]);
		p.M = ta->dim[0];
		p.K = ta->dim[1];
		p.N = tb->dim[1];
		p.a = gpu_matrix(g, op->in[k0], p.M, p.K);
		p.b = gpu_matrix(g, op->in[k0 + 1], p.K, p.N);
		if (k0) {
			p.alpha = dp_getf(op, "alpha", 1);
			p.beta = dp_getf(op, "beta", 1);
			if ((p.hasc0 = p.beta != 0))
				p.c0 = gpu_bias(g, op->in[0]);
		}
	}
	snprintf(p.name, sizeof p.name, "k%d_%s", p.y,
	         op->kind == Alinear ? "linear" : op->kind == Aaddmm ? "addmm" : "mm");

	str_put(&g->kern, "\n");
	opcomment(&g->kern, fn, i, "");
	if (p.relu)
		opcomment(&g->kern, fn, g->relu[i], "");
	opcomment(g->rec, fn, i, "\t");
	if (p.relu)
		opcomment(g->rec, fn, g->relu[i], "\t");
	if (p.M * p.N == 0) {
		str_put(&g->kern, "/* an empty product: nothing to compute */\n");
		return 0;
	}
	gv = p.M <= GEMV_ROWS && p.b.rs == 1 && p.a.cs == 1;
	lt = blasok(&p.a, p.M, p.K) && blasok(&p.b, p.K, p.N) && p.K > 0 && p.hasc0 && !p.relu &&
	     p.beta == 1 && p.c0.rs == 0 && p.c0.cs == 1;
	if (lt && (gv || p.M > GEMV_ROWS)) {   /* a tunable: cuBLASLt's algorithms, our GEMV */
		char key[160];
		snprintf(key, sizeof key, "%lldx%lldx%lld %c%c f32 %s bias", (long long)p.M,
		         (long long)p.N, (long long)p.K, p.a.cs == 1 ? 'n' : 't',
		         p.b.cs == 1 ? 'n' : 't', g->prec ? g->prec : "fp32");
		algo = tune_get(g, TUNE_MM, i, key, gv ? "gemv" : "0", gv, &line);
	}
	if (line)
		str_printf(&g->kern, "/* algo=%s: tuning database line %d */\n", algo, line);
	if (gv && (!*algo || strcmp(algo, "gemv") == 0)) {
		gemv(g, &p);
		launch(g, &p, (p.N + WARPS - 1) / WARPS, WARPS * 32, 1);
	} else if (p.M <= GEMV_ROWS && !*algo) {
		small(g, &p);
		launch(g, &p, grid(p.N, BLOCK), BLOCK, 1);
	} else if (lt) {
		g->blas = 1;
		if (atoi(algo) > 0)   /* the heuristic's result algo, for the next call */
			str_printf(g->rec, "\tg->ltalgo = %d;\n", atoi(algo));
		str_printf(g->rec, "\tif (dprt_cublaslt_bias(g, %lld, %lld, %lld, ", (long long)p.M,
		           (long long)p.N, (long long)p.K);
		str_float(g->rec, p.alpha);
		str_printf(g->rec, ", v%d, %lld, %lld, v%d, %lld, %lld, v%d, v%d, %lld, err, errn) != 0)\n"
		                   "\t\treturn -1;\n", gV(g, p.a.v), (long long)p.a.rs,
		           (long long)p.a.cs, gV(g, p.b.v), (long long)p.b.rs, (long long)p.b.cs,
		           gV(g, p.c0.v), gV(g, p.y), (long long)p.N);
		if (atoi(algo) > 0)
			str_printf(&g->kern, "/* cublasLtMatmul with the bias in its epilogue, the "
			                     "heuristic's algorithm %d (runtime/cuda/blas.c) */\n",
			           atoi(algo));
		else
			str_put(&g->kern, "/* cublasLtMatmul with the bias in its epilogue "
			                  "(runtime/cuda/blas.c) */\n");
	} else if (blasok(&p.a, p.M, p.K) && blasok(&p.b, p.K, p.N) && p.K > 0) {
		g->blas = 1;
		str_printf(g->rec, "\tif (dprt_cublas_sgemm(g, %lld, %lld, %lld, ", (long long)p.M,
		           (long long)p.N, (long long)p.K);
		str_float(g->rec, p.alpha);
		str_printf(g->rec, ", v%d, %lld, %lld, v%d, %lld, %lld, v%d, %lld, err, errn) != 0)\n"
		                   "\t\treturn -1;\n", gV(g, p.a.v), (long long)p.a.rs,
		           (long long)p.a.cs, gV(g, p.b.v), (long long)p.b.rs, (long long)p.b.cs,
		           gV(g, p.y), (long long)p.N);
		if (p.hasc0 || p.relu) {
			strcat(p.name, "_epilogue");
			after(g, &p);
			launch(g, &p, grid(p.M * p.N, BLOCK), BLOCK, 0);
		} else {
			str_put(&g->kern, "/* cublasSgemm alone (runtime/cuda/blas.c) */\n");
		}
	} else {
		naive(g, &p);
		launch(g, &p, grid(p.M * p.N, BLOCK), BLOCK, 1);
	}
	g->nkern++;
	return 0;
}
