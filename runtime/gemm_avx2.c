/* gemm_avx2.c: the AVX2+FMA micro-kernel: a 6×16 tile in 12 ymm
 * accumulators (two vectors of B and six broadcasts of A a step).  Built
 * for any x86-64 (a function-level target); gemm.c calls it only when the
 * CPU reports AVX2 and FMA (dprt_isa). */
#include "gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("avx2,fma")))
static void
kernel_avx2(int64_t kc, const float *a, const float *b, int64_t ldb, float *ab)
{
	__m256 c[6][2], b0, b1, ai;
	int64_t k;
	int i;

	for (i = 0; i < 6; i++)
		c[i][0] = c[i][1] = _mm256_setzero_ps();
	for (k = 0; k < kc; k++) {
		b0 = _mm256_loadu_ps(b);
		b1 = _mm256_loadu_ps(b + 8);
		for (i = 0; i < 6; i++) {
			ai = _mm256_broadcast_ss(a + i);
			c[i][0] = _mm256_fmadd_ps(ai, b0, c[i][0]);
			c[i][1] = _mm256_fmadd_ps(ai, b1, c[i][1]);
		}
		a += 6;
		b += ldb;
	}
	for (i = 0; i < 6; i++) {
		_mm256_store_ps(ab + i * 16, c[i][0]);
		_mm256_store_ps(ab + i * 16 + 8, c[i][1]);
	}
}

/* The same, step k of B at b + off[k]. */
__attribute__((target("avx2,fma")))
static void
kernel_avx2_ind(int64_t kc, const float *a, const float *b, const int64_t *off, float *ab)
{
	__m256 c[6][2], b0, b1, ai;
	int64_t k;
	int i;

	for (i = 0; i < 6; i++)
		c[i][0] = c[i][1] = _mm256_setzero_ps();
	for (k = 0; k < kc; k++) {
		const float *bk = b + off[k];
		b0 = _mm256_loadu_ps(bk);
		b1 = _mm256_loadu_ps(bk + 8);
		for (i = 0; i < 6; i++) {
			ai = _mm256_broadcast_ss(a + i);
			c[i][0] = _mm256_fmadd_ps(ai, b0, c[i][0]);
			c[i][1] = _mm256_fmadd_ps(ai, b1, c[i][1]);
		}
		a += 6;
	}
	for (i = 0; i < 6; i++) {
		_mm256_store_ps(ab + i * 16, c[i][0]);
		_mm256_store_ps(ab + i * 16 + 8, c[i][1]);
	}
}

/* The same, row i of A read in place at ar[i] (step k at ar[i][k]). */
__attribute__((target("avx2,fma")))
static void
kernel_avx2_rows(int64_t kc, const float *const *ar, const float *b, int64_t ldb, float *ab)
{
	__m256 c[6][2], b0, b1, ai;
	const float *r[6];
	int64_t k;
	int i;

	for (i = 0; i < 6; i++) {
		c[i][0] = c[i][1] = _mm256_setzero_ps();
		r[i] = ar[i];
	}
	for (k = 0; k < kc; k++) {
		b0 = _mm256_loadu_ps(b);
		b1 = _mm256_loadu_ps(b + 8);
		for (i = 0; i < 6; i++) {
			ai = _mm256_set1_ps(r[i][k]);
			c[i][0] = _mm256_fmadd_ps(ai, b0, c[i][0]);
			c[i][1] = _mm256_fmadd_ps(ai, b1, c[i][1]);
		}
		b += ldb;
	}
	for (i = 0; i < 6; i++) {
		_mm256_store_ps(ab + i * 16, c[i][0]);
		_mm256_store_ps(ab + i * 16 + 8, c[i][1]);
	}
}

const dprt_kern dprt_kern_avx2 = { 6, 16, kernel_avx2, kernel_avx2_ind, kernel_avx2_rows };
#endif
