/* blas.c: the runtime's use of cuBLAS: a handle per program instance on its
 * stream, and row-major strided GEMM mapped onto column-major cublasSgemm;
 * and cuBLASLt for products with a bias, added in the product's epilogue
 * (one kernel where cublasSgemm needs a second for the bias). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cublasLt.h>

#include "dprt_cuda.h"

enum { WORKSPACE = DPRT_BLAS_WORKSPACE };

/* One cuBLASLt product, as first called: its shape, operands' layout and
 * precision (the key), and what cuBLASLt made for it. */
struct dprt_ltplan {
	int64_t key[11];
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulAlgo_t algo;
};

static void
blasclose(dprt_cuda *g)
{
	int i;

	for (i = 0; i < g->nltplan; i++) {
		struct dprt_ltplan *p = &g->ltplan[i];
		cublasLtMatrixLayoutDestroy(p->la);
		cublasLtMatrixLayoutDestroy(p->lb);
		cublasLtMatrixLayoutDestroy(p->lc);
		cublasLtMatmulDescDestroy(p->desc);
	}
	free(g->ltplan);
	g->ltplan = NULL;
	g->nltplan = g->capltplan = 0;
	if (g->lt)
		cublasLtDestroy(g->lt);
	if (g->blas)
		cublasDestroy(g->blas);
	cudaFree(g->blasws);
	g->lt = NULL;
	g->blas = NULL;
	g->blasws = NULL;
}

static int
blasok(cublasStatus_t s, const char *call, char *err, size_t errn)
{
	if (s == CUBLAS_STATUS_SUCCESS)
		return 0;
	if (errn > 0)
		snprintf(err, errn, "cuda: %s: %s", call, cublasGetStatusString(s));
	return -1;
}

/* Creates the handle. */
int
dprt_cublas_open(dprt_cuda *g, char *err, size_t errn)
{
	cublasHandle_t h;
	cublasLtHandle_t lt;

	if (blasok(cublasCreate(&h), "cublasCreate", err, errn) != 0)
		return -1;
	g->blas = h;
	g->blasclose = blasclose;
	if (blasok(cublasLtCreate(&lt), "cublasLtCreate", err, errn) != 0)
		return -1;   /* the caller closes g */
	g->lt = lt;
	if (blasok(cublasSetStream(h, g->stream), "cublasSetStream", err, errn) != 0 ||
	    blasok(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode", err,
	           errn) != 0 ||
	    dprt_cuda_ok(cudaMalloc(&g->blasws, WORKSPACE), "cudaMalloc", err, errn) != 0 ||
	    blasok(cublasSetWorkspace(h, g->blasws, WORKSPACE), "cublasSetWorkspace", err,
	           errn) != 0)
		return -1;   /* the caller closes g */
	return 0;
}

/* The precision the target mapping chose (tune cuda.precision): where
 * DPRT_CUDA_CONV is not set, the convolutions' method; for TF32, cuBLAS's
 * products in TF32 on the tensor cores too (PyTorch's allow_tf32). */
int
dprt_cuda_precision(dprt_cuda *g, int conv, char *err, size_t errn)
{
	const char *env = getenv("DPRT_CUDA_CONV");

	if (env == NULL || *env == '\0')
		g->conv = conv;
	g->tf32 = conv == DPRT_CONV_TF32;
	if (g->blas && conv == DPRT_CONV_TF32)
		return blasok(cublasSetMathMode(g->blas, CUBLAS_TF32_TENSOR_OP_MATH),
		              "cublasSetMathMode", err, errn);
	return 0;
}

/* One operand in column-major terms: which op and which leading dimension
 * make the row-major R×C matrix with strides (rs, cs) appear transposed
 * (C×R), as cuBLAS computes C^T = B^T·A^T. */
static int
colmajor(int64_t R, int64_t C, int64_t rs, int64_t cs, cublasOperation_t *op, int64_t *ld)
{
	if (cs == 1 && rs >= (C > 1 ? C : 1)) {   /* row-major: C×R column-major */
		*op = CUBLAS_OP_N;
		*ld = rs > 0 ? rs : 1;
		return 0;
	}
	if (rs == 1 && cs >= (R > 1 ? R : 1)) {   /* column-major R×C: transpose */
		*op = CUBLAS_OP_T;
		*ld = cs > 0 ? cs : 1;
		return 0;
	}
	return -1;
}

/* C = alpha·A·B, row-major, through cublasSgemm. */
int
dprt_cublas_sgemm(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha,
                  const float *A, int64_t rsa, int64_t csa, const float *B, int64_t rsb,
                  int64_t csb, float *C, int64_t ldc, char *err, size_t errn)
{
	cublasOperation_t opa, opb;
	int64_t lda, ldb;
	const float beta = 0;

	if (colmajor(K, N, rsb, csb, &opb, &ldb) != 0 || colmajor(M, K, rsa, csa, &opa, &lda) != 0 ||
	    M > 2147483647 || N > 2147483647 || K > 2147483647 || lda > 2147483647 ||
	    ldb > 2147483647 || ldc > 2147483647) {
		if (errn > 0)
			snprintf(err, errn, "cuda: cublasSgemm: strides not supported");
		return -1;
	}
	return blasok(cublasSgemm(g->blas, opb, opa, (int)N, (int)M, (int)K, &alpha, B,
	                          (int)ldb, A, (int)lda, &beta, C, (int)ldc),
	              "cublasSgemm", err, errn);
}

/* The alignment of pointer p in bytes, up to 256 (what cuBLASLt's
 * heuristic assumes unless told less). */
static int64_t
align(const void *p)
{
	int64_t a = 256;

	while (a > 1 && (uintptr_t)p % a != 0)
		a /= 2;
	return a;
}

/* Tells the heuristic operand's alignment (a byte of key[9]): -1 on error. */
static int
prefalign(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t at, int64_t a,
          char *err, size_t errn)
{
	uint32_t v = (uint32_t)(a & 0xff ? a & 0xff : 256);

	return blasok(cublasLtMatmulPreferenceSetAttribute(pref, at, &v, sizeof v),
	              "cublasLtMatmulPreferenceSetAttribute", err, errn);
}

/* The plan of a cuBLASLt product with a bias epilogue, made on its first
 * call: C^T (N×M, column-major) = op(B^T)·op(A^T) + bias, the bias running
 * along C^T's rows (C's columns). */
static struct dprt_ltplan *
ltplan(dprt_cuda *g, const int64_t *key, char *err, size_t errn)
{
	struct dprt_ltplan *p;
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t res[16];   /* up to the one asked for (key[10]) */
	cublasOperation_t opa = (cublasOperation_t)key[3], opb = (cublasOperation_t)key[4];
	/* key[8]: the inputs' precision (0 fp32, 1 tf32, 2 bf16, 3 f16), 16: no bias */
	cublasLtEpilogue_t epi = key[8] & 16 ? CUBLASLT_EPILOGUE_DEFAULT : CUBLASLT_EPILOGUE_BIAS;
	cudaDataType_t in = (key[8] & 15) == 2 ? CUDA_R_16BF : (key[8] & 15) == 3 ? CUDA_R_16F :
	                    CUDA_R_32F;
	size_t ws = WORKSPACE;
	int i, nres = 0, rc;
	int64_t M = key[0], N = key[1], K = key[2];

	for (i = 0; i < g->nltplan; i++)
		if (memcmp(g->ltplan[i].key, key, sizeof g->ltplan[i].key) == 0)
			return &g->ltplan[i];
	if (g->nltplan == g->capltplan) {
		int cap = g->capltplan ? 2 * g->capltplan : 16;
		p = realloc(g->ltplan, cap * sizeof *p);
		if (p == NULL) {
			snprintf(err, errn, "cuda: out of memory");
			return NULL;
		}
		g->ltplan = p;
		g->capltplan = cap;
	}
	p = &g->ltplan[g->nltplan];
	memset(p, 0, sizeof *p);
	memcpy(p->key, key, sizeof p->key);
	/* cuBLAS's A is our B^T (N×K), its B our A^T (K×M) */
	rc = blasok(cublasLtMatmulDescCreate(&p->desc, (key[8] & 15) == 1 ? CUBLAS_COMPUTE_32F_FAST_TF32 :
	                                     CUBLAS_COMPUTE_32F, CUDA_R_32F),
	            "cublasLtMatmulDescCreate", err, errn);
	if (rc == 0 && (blasok(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA,
	                                                      &opb, sizeof opb),
	                       "cublasLtMatmulDescSetAttribute", err, errn) != 0 ||
	                blasok(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB,
	                                                      &opa, sizeof opa),
	                       "cublasLtMatmulDescSetAttribute", err, errn) != 0 ||
	                blasok(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
	                                                      &epi, sizeof epi),
	                       "cublasLtMatmulDescSetAttribute", err, errn) != 0))
		rc = -1;
	if (rc == 0 && (blasok(cublasLtMatrixLayoutCreate(&p->la, in,
	                                                  opb == CUBLAS_OP_N ? N : K,
	                                                  opb == CUBLAS_OP_N ? K : N, key[6]),
	                       "cublasLtMatrixLayoutCreate", err, errn) != 0 ||
	                blasok(cublasLtMatrixLayoutCreate(&p->lb, in,
	                                                  opa == CUBLAS_OP_N ? K : M,
	                                                  opa == CUBLAS_OP_N ? M : K, key[5]),
	                       "cublasLtMatrixLayoutCreate", err, errn) != 0 ||
	                blasok(cublasLtMatrixLayoutCreate(&p->lc, CUDA_R_32F, N, M, key[7]),
	                       "cublasLtMatrixLayoutCreate", err, errn) != 0))
		rc = -1;
	if (rc == 0 &&
	    (blasok(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate", err,
	            errn) != 0 ||
	     blasok(cublasLtMatmulPreferenceSetAttribute(pref,
	                                                 CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
	                                                 &ws, sizeof ws),
	            "cublasLtMatmulPreferenceSetAttribute", err, errn) != 0 ||
	     prefalign(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key[9] >> 24, err, errn) ||
	     prefalign(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key[9] >> 16, err, errn) ||
	     prefalign(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key[9] >> 8, err, errn) ||
	     prefalign(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key[9] >> 8, err, errn) ||
	     blasok(cublasLtMatmulAlgoGetHeuristic(g->lt, p->desc, p->la, p->lb, p->lc, p->lc, pref,
	                                           (int)key[10] + 1, res, &nres),
	            "cublasLtMatmulAlgoGetHeuristic", err, errn) != 0))
		rc = -1;
	if (rc == 0 && nres < 1) {
		snprintf(err, errn, "cuda: cublasLtMatmulAlgoGetHeuristic: no algorithm for "
		         "%lldx%lldx%lld", (long long)M, (long long)N, (long long)K);
		rc = -1;
	}
	if (pref)
		cublasLtMatmulPreferenceDestroy(pref);
	if (rc != 0) {
		if (p->la)
			cublasLtMatrixLayoutDestroy(p->la);
		if (p->lb)
			cublasLtMatrixLayoutDestroy(p->lb);
		if (p->lc)
			cublasLtMatrixLayoutDestroy(p->lc);
		if (p->desc)
			cublasLtMatmulDescDestroy(p->desc);
		return NULL;
	}
	p->algo = res[key[10] < nres ? key[10] : nres - 1].algo;   /* the last, where fewer */
	g->nltplan++;
	return p;
}

/* C = alpha·A·B (+ bias), row-major, through cublasLtMatmul, the inputs in
 * precision mode (key[8]). */
static int
ltmatmul(dprt_cuda *g, int mode, int64_t M, int64_t N, int64_t K, float alpha, const void *A,
         int64_t rsa, int64_t csa, const void *B, int64_t rsb, int64_t csb, const float *bias,
         float *C, int64_t ldc, char *err, size_t errn)
{
	cublasOperation_t opa, opb;
	int64_t lda, ldb, key[11], algo = g->ltalgo;
	struct dprt_ltplan *p;
	const float beta = 0;

	g->ltalgo = 0;   /* for this call only */
	if (colmajor(K, N, rsb, csb, &opb, &ldb) != 0 || colmajor(M, K, rsa, csa, &opa, &lda) != 0) {
		if (errn > 0)
			snprintf(err, errn, "cuda: cublasLtMatmul: strides not supported");
		return -1;
	}
	key[0] = M, key[1] = N, key[2] = K, key[3] = opa, key[4] = opb;
	key[5] = lda, key[6] = ldb, key[7] = ldc, key[8] = mode | (bias ? 0 : 16);
	key[10] = algo >= 0 && algo < 16 ? algo : 0;   /* the heuristic's result to take */
	/* operands' alignments, one byte each (256 as 0): cuBLAS's A (our B),
	 * its B (our A), C and the bias */
	key[9] = (align(B) & 0xff) << 24 | (align(A) & 0xff) << 16 | (align(C) & 0xff) << 8 |
	         (align(bias) & 0xff);
	if ((p = ltplan(g, key, err, errn)) == NULL)
		return -1;
	if (bias && blasok(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
	                                                  &bias, sizeof bias),
	                   "cublasLtMatmulDescSetAttribute", err, errn) != 0)
		return -1;
	return blasok(cublasLtMatmul(g->lt, p->desc, &alpha, B, p->la, A, p->lb, &beta, C, p->lc, C,
	                             p->lc, &p->algo, g->blasws, WORKSPACE, g->stream),
	              "cublasLtMatmul", err, errn);
}

/* C = alpha·A·B + bias, row-major, through cublasLtMatmul. */
int
dprt_cublaslt_bias(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha,
                   const float *A, int64_t rsa, int64_t csa, const float *B, int64_t rsb,
                   int64_t csb, const float *bias, float *C, int64_t ldc, char *err, size_t errn)
{
	return ltmatmul(g, g->tf32, M, N, K, alpha, A, rsa, csa, B, rsb, csb, bias, C, ldc, err,
	                errn);
}

/* The same with A and B in g->prec16's 16-bit format (bias may be NULL). */
int
dprt_cublaslt_16(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha, const void *A,
                 int64_t rsa, int64_t csa, const void *B, int64_t rsb, int64_t csb,
                 const float *bias, float *C, int64_t ldc, char *err, size_t errn)
{
	return ltmatmul(g, g->prec16 == DPRT_F16 ? 3 : 2, M, N, K, alpha, A, rsa, csa, B, rsb, csb,
	                bias, C, ldc, err, errn);
}

/* ---- 3xTF32 through cuBLASLt (dprt_cuda.h) ---- */

int
dprt_cuda_x3init(dprt_cuda *g, size_t wbytes, size_t sbytes, char *err, size_t errn)
{
	cudaError_t e = cudaSuccess;

	if (g->mmlt) {   /* DPRT_CUDA_MM=lt: no splits */
		g->x3off = 1;
		return 0;
	}
	if (wbytes)
		e = cudaMalloc((void **)&g->w3, wbytes);
	if (e == cudaSuccess && sbytes)
		e = cudaMalloc((void **)&g->s3, sbytes);
	if (e == cudaErrorMemoryAllocation) {   /* cuBLAS in fp32 instead */
		cudaGetLastError();
		cudaFree(g->w3);
		cudaFree(g->s3);
		g->w3 = g->s3 = NULL;
		g->x3off = 1;
		return 0;
	}
	return dprt_cuda_ok(e, "cudaMalloc", err, errn);
}

int
dprt_cuda_x3weight(dprt_cuda *g, size_t off, const float *B, int64_t K, int64_t N, int64_t rsb,
                   int64_t csb, char *err, size_t errn)
{
	float *B3 = (float *)(g->w3 + off);

	if (g->x3off)   /* no splits */
		return 0;
	if (rsb == 1 && csb == K)   /* N rows of K: each row's parts side by side */
		return dprt_cuda_split3(g, B3, B, N, K, K, 3 * K, K, 2, err, errn);
	if (csb == 1 && rsb == N)   /* K rows of N: the parts one below the other */
		return dprt_cuda_split3(g, B3, B, K, N, N, N, K * N, 2, err, errn);
	snprintf(err, errn, "cuda: 3xTF32: a %lldx%lld operand with strides %lld, %lld is not "
	         "dense", (long long)K, (long long)N, (long long)rsb, (long long)csb);
	return -1;
}

/* dprt_cublaslt_x3, and with split (dprt_cublaslt_x3s) A's split already in
 * g->s3, written by the kernel before. */
static int
x3(dprt_cuda *g, int split, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
   int64_t rsa, const float *B, int64_t rsb, int64_t csb, size_t off3, const float *bias,
   float *C, int64_t ldc, char *err, size_t errn)
{
	const float *B3 = (const float *)(g->w3 + off3);
	/* B3: a linear layer's weight (rsb 1) as N rows of [hi | lo | hi], 3K
	 * each; else hi, lo and hi stacked, 3K rows of N */
	int64_t rs3 = rsb == 1 ? 1 : N, cs3 = rsb == 1 ? 3 * K : 1;

	if (g->x3off)   /* DPRT_CUDA_MM=lt, or no memory: what the product is without this */
		return bias ? ltmatmul(g, 0, M, N, K, alpha, A, rsa, 1, B, rsb, csb, bias, C, ldc,
		                       err, errn) :
		              dprt_cublas_sgemm(g, M, N, K, alpha, A, rsa, 1, B, rsb, csb, C, ldc, err,
		                                errn);
	if (g->s3 == NULL || g->w3 == NULL) {
		snprintf(err, errn, "cuda: 3xTF32: no splits (dprt_cuda_x3init)");
		return -1;
	}
	if (!split && dprt_cuda_split3(g, (float *)g->s3, A, M, K, rsa, 3 * K, K, 4, err, errn) != 0)
		return -1;
	return ltmatmul(g, 1, M, N, 3 * K, alpha, g->s3, 3 * K, 1, B3, rs3, cs3, bias, C, ldc, err,
	                errn);
}

int
dprt_cublaslt_x3(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                 int64_t rsa, const float *B, int64_t rsb, int64_t csb, size_t off3,
                 const float *bias, float *C, int64_t ldc, char *err, size_t errn)
{
	return x3(g, 0, M, N, K, alpha, A, rsa, B, rsb, csb, off3, bias, C, ldc, err, errn);
}

int
dprt_cublaslt_x3s(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                  int64_t rsa, const float *B, int64_t rsb, int64_t csb, size_t off3,
                  const float *bias, float *C, int64_t ldc, char *err, size_t errn)
{
	return x3(g, 1, M, N, K, alpha, A, rsa, B, rsb, csb, off3, bias, C, ldc, err, errn);
}
