/* blas.c: the runtime's use of cuBLAS: a handle per program instance on its
 * stream, and row-major strided GEMM mapped onto column-major cublasSgemm. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <cublas_v2.h>

#include "dprt_cuda.h"

enum { WORKSPACE = 32 << 20 };   /* bytes; what cuBLAS asks for on Hopper */

static void
blasclose(dprt_cuda *g)
{
	if (g->blas)
		cublasDestroy(g->blas);
	cudaFree(g->blasws);
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

	if (blasok(cublasCreate(&h), "cublasCreate", err, errn) != 0)
		return -1;
	g->blas = h;
	g->blasclose = blasclose;
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
