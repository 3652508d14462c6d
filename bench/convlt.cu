/* convlt.cu: a TF32 convolution (NCHW, batch N) as cuBLASLt products, timed
 * shape by shape: the question is whether cuBLASLt's tensor-core products
 * (wgmma on sm_90) beat conv.cu's implicit GEMM (mma.sync) at batch 32,
 * where ResNet-18 and -50 in TF32 trail cuDNN under torch.compile 2x.
 *
 * Per image, y[o][p] = sum_k w[o][k]·x̂[k][p] + b[o] (+ res[o][p]), relu:
 *   - row:  cuBLASLt with every matrix in row order (CUBLASLT_ORDER_ROW),
 *           the bias along D's rows (the channels) by CUBLASLT_EPILOGUE_
 *           RELU_BIAS, the residual as C (beta 1), the N images a strided
 *           batch with the weights' stride 0.  x̂ is x itself for a 1x1
 *           window of stride 1, else an im2col copy made first;
 *   - ones: column order (D^T = x̂^T·w^T), the bias as a row of ones in
 *           x̂ and a column of w (so an im2col copy always), relu by
 *           CUBLASLT_EPILOGUE_RELU.
 * Each: the best of cuBLASLt's first 8 heuristic algorithms (the first's
 * time too), and the im2col copy's time alone.  Time: CUDA events, the
 * median of 20 after 5.
 *
 *   nvcc -O3 -arch=sm_90 bench/convlt.cu -lcublasLt -lcublas -o convlt && ./convlt [N]
 *
 * Prints a line per shape and the sums; bench/RESULTS.md has the figures
 * (2026-12-06, H100, cuBLASLt of CUDA 13): cuBLASLt's heuristic refuses
 * row order for these products ("the requested functionality is not
 * supported"), and the column-order products with their im2col copies took
 * 1.9x (ResNet-50's shapes) and 2.9x (ResNet-18's) cuDNN's NCHW time, so
 * conv.cu's implicit GEMM stays the convolutions' method. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <cublasLt.h>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "convlt: %s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define LK(x) ((x) == CUBLAS_STATUS_SUCCESS)

struct Shape { const char *net; int C, H, O, k, s, res; };

static const Shape shapes[] = {
	/* ResNet-50 (torchvision: the stride on the 3x3), input 224 */
	{"r50", 3, 224, 64, 7, 2, 0},
	{"r50", 64, 56, 64, 1, 1, 0}, {"r50", 64, 56, 64, 3, 1, 0}, {"r50", 64, 56, 256, 1, 1, 1},
	{"r50", 256, 56, 64, 1, 1, 0},
	{"r50", 256, 56, 128, 1, 1, 0}, {"r50", 128, 56, 128, 3, 2, 0}, {"r50", 256, 56, 512, 1, 2, 0},
	{"r50", 128, 28, 512, 1, 1, 1}, {"r50", 512, 28, 128, 1, 1, 0}, {"r50", 128, 28, 128, 3, 1, 0},
	{"r50", 512, 28, 256, 1, 1, 0}, {"r50", 256, 28, 256, 3, 2, 0}, {"r50", 512, 28, 1024, 1, 2, 0},
	{"r50", 256, 14, 1024, 1, 1, 1}, {"r50", 1024, 14, 256, 1, 1, 0}, {"r50", 256, 14, 256, 3, 1, 0},
	{"r50", 1024, 14, 512, 1, 1, 0}, {"r50", 512, 14, 512, 3, 2, 0}, {"r50", 1024, 14, 2048, 1, 2, 0},
	{"r50", 512, 7, 2048, 1, 1, 1}, {"r50", 2048, 7, 512, 1, 1, 0}, {"r50", 512, 7, 512, 3, 1, 0},
	/* ResNet-18 */
	{"r18", 64, 56, 64, 3, 1, 1}, {"r18", 64, 56, 128, 3, 2, 0}, {"r18", 128, 28, 128, 3, 1, 1},
	{"r18", 128, 28, 256, 3, 2, 0}, {"r18", 256, 14, 256, 3, 1, 1}, {"r18", 256, 14, 512, 3, 2, 0},
	{"r18", 512, 7, 512, 3, 1, 1}, {"r18", 64, 56, 128, 1, 2, 0},
};

/* x̂[n][k][p] (k < K; with ones, row K all ones and rows up to KP zeros) */
__global__ void
im2col(const float *x, float *xh, int N, int C, int H, int W, int k, int s, int pad, int OH, int OW,
       int K, int KP, int ones)
{
	long long P = (long long)OH * OW, tot = (long long)N * KP * P;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < tot;
	     i += (long long)gridDim.x * blockDim.x) {
		long long p = i % P, kk = i / P % KP, n = i / P / KP;
		float v = 0.0f;
		if (kk < K) {
			int c = (int)(kk / (k * k)), r = (int)(kk / k % k), q = (int)(kk % k);
			int oh = (int)(p / OW), ow = (int)(p % OW), ih = oh * s - pad + r, iw = ow * s - pad + q;
			if (ih >= 0 && ih < H && iw >= 0 && iw < W)
				v = x[((n * C + c) * H + ih) * (long long)W + iw];
		} else if (ones && kk == K) {
			v = 1.0f;
		}
		xh[i] = v;
	}
}

static float
median(float *t, int n)
{
	std::sort(t, t + n);
	return t[n / 2];
}

typedef void (*Fn)(void *);

static float
timeit(Fn f, void *a)
{
	cudaEvent_t e0, e1;
	float t[20];
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	for (int i = 0; i < 5; i++)
		f(a);
	for (int i = 0; i < 20; i++) {
		CK(cudaEventRecord(e0));
		f(a);
		CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&t[i], e0, e1));
	}
	CK(cudaGetLastError());
	return median(t, 20) * 1000.0f;
}

struct Lt {
	cublasLtHandle_t h;
	cublasLtMatmulDesc_t d;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulAlgo_t algo;
	const void *A, *B, *C;
	void *D;
	void *ws;
	float beta;
};

static void
ltrun(void *p)
{
	Lt *l = (Lt *)p;
	float one = 1.0f;
	cublasStatus_t s = cublasLtMatmul(l->h, l->d, &one, l->A, l->la, l->B, l->lb, &l->beta, l->C,
	                                  l->lc, l->D, l->lc, &l->algo, l->ws, 32 << 20, 0);
	if (s != CUBLAS_STATUS_SUCCESS) {
		fprintf(stderr, "convlt: cublasLtMatmul: %s\n", cublasGetStatusString(s));
		exit(1);
	}
}

struct Ic { const float *x; float *xh; int N, C, H, k, s, pad, OH, K, KP, ones; };

static void
icrun(void *p)
{
	Ic *c = (Ic *)p;
	im2col<<<4096, 256>>>(c->x, c->xh, c->N, c->C, c->H, c->H, c->k, c->s, c->pad, c->OH, c->OH,
	                      c->K, c->KP, c->ones);
}

static void
layout(cublasLtMatrixLayout_t *l, int rows, int cols, long long ld, int row, int N, long long bs)
{
	cublasLtOrder_t o = row ? CUBLASLT_ORDER_ROW : CUBLASLT_ORDER_COL;
	if (!LK(cublasLtMatrixLayoutCreate(l, CUDA_R_32F, rows, cols, ld)) ||
	    !LK(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_ORDER, &o, sizeof o)) ||
	    !LK(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &N, sizeof N)) ||
	    !LK(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &bs,
	                                         sizeof bs))) {
		fprintf(stderr, "convlt: layout\n");
		exit(1);
	}
}

/* the best of the heuristic's first 8 algorithms; *first: the first's time;
 * -1 where none */
static float
ltbest(Lt *l, float *first)
{
	cublasLtMatmulPreference_t pref;
	cublasLtMatmulHeuristicResult_t res[8];
	int n = 0;
	size_t ws = 32 << 20;
	float best = -1;

	cublasLtMatmulPreferenceCreate(&pref);
	cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
	cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(l->h, l->d, l->la, l->lb, l->lc, l->lc, pref, 8,
	                                                  res, &n);
	cublasLtMatmulPreferenceDestroy(pref);
	*first = -1;
	if (s != CUBLAS_STATUS_SUCCESS || n == 0) {
		fprintf(stderr, "convlt: heuristic: %s, %d\n", cublasGetStatusString(s), n);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		l->algo = res[i].algo;
		float t = timeit(ltrun, l);
		if (i == 0)
			*first = t;
		if (best < 0 || t < best)
			best = t;
	}
	return best;
}

int
main(int argc, char **argv)
{
	int N = argc > 1 ? atoi(argv[1]) : 32;
	cublasLtHandle_t h;
	float *x, *xh, *w, *b, *r, *y;
	void *ws;
	size_t big = (size_t)1 << 30;   /* floats: 4 GiB for x̂ at most */
	double sum[2][3] = {{0}};

	if (!LK(cublasLtCreate(&h)))
		return 1;
	CK(cudaMalloc(&x, (size_t)N * 256 * 56 * 56 * 4 * 2));
	CK(cudaMalloc(&xh, big * 4));
	CK(cudaMalloc(&w, 2048 * 4608 * 4 + 64));
	CK(cudaMalloc(&b, 2048 * 4));
	CK(cudaMalloc(&r, (size_t)N * 256 * 56 * 56 * 4 * 2));
	CK(cudaMalloc(&y, (size_t)N * 256 * 56 * 56 * 4 * 2));
	CK(cudaMalloc(&ws, 32 << 20));
	CK(cudaMemset(x, 0, (size_t)N * 256 * 56 * 56 * 4 * 2));
	CK(cudaMemset(w, 0, 2048 * 4608 * 4));
	CK(cudaMemset(r, 0, (size_t)N * 256 * 56 * 56 * 4 * 2));
	printf("batch %d; us: row (first algorithm / best of 8, the im2col included), ones (the same), "
	       "im2col alone; TFLOPS of the best\n", N);
	for (const Shape &S : shapes) {
		int pad = S.k / 2, OH = (S.H + 2 * pad - S.k) / S.s + 1, K = S.C * S.k * S.k;
		int KP = (K + 1 + 15) / 16 * 16;   /* ones: a row of ones past K */
		long long P = (long long)OH * OH;
		int direct = S.k == 1 && S.s == 1;
		double flop = 2.0 * N * S.O * P * K;
		float trow = -1, trow1 = -1, tones = -1, tones1 = -1, tic = 0, tic1 = 0;
		Ic ic = {x, xh, N, S.C, S.H, S.k, S.s, pad, OH, K, K, 0};

		if ((long long)N * KP * P > (long long)big) {
			printf("%s %d->%d k%d s%d: too big\n", S.net, S.C, S.O, S.k, S.s);
			continue;
		}
		if (!direct)
			tic = timeit(icrun, &ic);
		/* row order: D (O x P) = w (O x K) · x̂ (K x P) + b, batch N */
		{
			Lt l = {};
			cublasOperation_t nn = CUBLAS_OP_N;
			cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_RELU_BIAS;
			l.h = h;
			cublasLtMatmulDescCreate(&l.d, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F);
			cublasLtMatmulDescSetAttribute(l.d, CUBLASLT_MATMUL_DESC_TRANSA, &nn, sizeof nn);
			cublasLtMatmulDescSetAttribute(l.d, CUBLASLT_MATMUL_DESC_TRANSB, &nn, sizeof nn);
			cublasLtMatmulDescSetAttribute(l.d, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
			cublasLtMatmulDescSetAttribute(l.d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &b, sizeof b);
			layout(&l.la, S.O, K, K, 1, N, 0);
			layout(&l.lb, K, (int)P, P, 1, N, (long long)(direct ? S.C * P : (long long)K * P));
			layout(&l.lc, S.O, (int)P, P, 1, N, (long long)S.O * P);
			l.A = w, l.B = direct ? x : xh, l.C = r, l.D = y, l.ws = ws, l.beta = S.res ? 1.0f : 0.0f;
			trow = ltbest(&l, &trow1);
			cublasLtMatrixLayoutDestroy(l.la);
			cublasLtMatrixLayoutDestroy(l.lb);
			cublasLtMatrixLayoutDestroy(l.lc);
			cublasLtMatmulDescDestroy(l.d);
		}
		/* column order, the bias by a row of ones: D^T (P x O) = x̂^T (P x KP) · w^T (KP x O) */
		{
			Lt l = {};
			cublasOperation_t nn = CUBLAS_OP_N;
			cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_RELU;
			Ic io = {x, xh, N, S.C, S.H, S.k, S.s, pad, OH, K, KP, 1};
			tic1 = timeit(icrun, &io);
			l.h = h;
			cublasLtMatmulDescCreate(&l.d, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F);
			cublasLtMatmulDescSetAttribute(l.d, CUBLASLT_MATMUL_DESC_TRANSA, &nn, sizeof nn);
			cublasLtMatmulDescSetAttribute(l.d, CUBLASLT_MATMUL_DESC_TRANSB, &nn, sizeof nn);
			cublasLtMatmulDescSetAttribute(l.d, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
			layout(&l.la, (int)P, KP, P, 0, N, (long long)KP * P);
			layout(&l.lb, KP, S.O, KP, 0, N, 0);
			layout(&l.lc, (int)P, S.O, P, 0, N, (long long)S.O * P);
			l.A = xh, l.B = w, l.C = r, l.D = y, l.ws = ws, l.beta = S.res ? 1.0f : 0.0f;
			tones = ltbest(&l, &tones1);
			cublasLtMatrixLayoutDestroy(l.la);
			cublasLtMatrixLayoutDestroy(l.lb);
			cublasLtMatrixLayoutDestroy(l.lc);
			cublasLtMatmulDescDestroy(l.d);
		}
		if (trow >= 0)
			trow += tic, trow1 += tic;
		if (tones >= 0)
			tones += tic1, tones1 += tic1;
		printf("%s %4d->%4d k%d s%d %3dx%-3d  row %8.1f / %8.1f  ones %8.1f / %8.1f  im2col %7.1f  "
		       "%6.1f TFLOPS\n", S.net, S.C, S.O, S.k, S.s, OH, OH, trow1, trow, tones1, tones,
		       direct ? 0.0f : tic, flop / (trow > 0 ? trow : tones) / 1e6);
		int ni = S.net[1] == '5' ? 0 : 1;
		sum[ni][0] += trow, sum[ni][1] += tones, sum[ni][2] += direct ? 0 : tic;
	}
	printf("sums (each distinct shape once): r50 row %.1f ones %.1f im2col %.1f; "
	       "r18 row %.1f ones %.1f im2col %.1f\n", sum[0][0], sum[0][1], sum[0][2], sum[1][0],
	       sum[1][1], sum[1][2]);
	return 0;
}
