/* gemm_avx512.c: the AVX-512 micro-kernel: an 8×32 tile in 16 zmm
 * accumulators (two vectors of B and eight broadcasts of A a step).  Built
 * for any x86-64 (a function-level target); gemm.c calls it only when the
 * CPU reports AVX-512F (dprt_isa). */
#include "gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("avx512f,avx2,fma")))
static void
kernel_avx512(int64_t kc, const float *a, const float *b, int64_t ldb, float *ab)
{
	__m512 c[8][2], b0, b1, ai;
	int64_t k;
	int i;

	for (i = 0; i < 8; i++)
		c[i][0] = c[i][1] = _mm512_setzero_ps();
	for (k = 0; k < kc; k++) {
		b0 = _mm512_loadu_ps(b);
		b1 = _mm512_loadu_ps(b + 16);
		for (i = 0; i < 8; i++) {
			ai = _mm512_set1_ps(a[i]);
			c[i][0] = _mm512_fmadd_ps(ai, b0, c[i][0]);
			c[i][1] = _mm512_fmadd_ps(ai, b1, c[i][1]);
		}
		a += 8;
		b += ldb;
	}
	for (i = 0; i < 8; i++) {
		_mm512_store_ps(ab + i * 32, c[i][0]);
		_mm512_store_ps(ab + i * 32 + 16, c[i][1]);
	}
}

/* The same, step k of B at b + off[k]. */
__attribute__((target("avx512f,avx2,fma")))
static void
kernel_avx512_ind(int64_t kc, const float *a, const float *b, const int64_t *off, float *ab)
{
	__m512 c[8][2], b0, b1, ai;
	int64_t k;
	int i;

	for (i = 0; i < 8; i++)
		c[i][0] = c[i][1] = _mm512_setzero_ps();
	for (k = 0; k < kc; k++) {
		const float *bk = b + off[k];
		b0 = _mm512_loadu_ps(bk);
		b1 = _mm512_loadu_ps(bk + 16);
		for (i = 0; i < 8; i++) {
			ai = _mm512_set1_ps(a[i]);
			c[i][0] = _mm512_fmadd_ps(ai, b0, c[i][0]);
			c[i][1] = _mm512_fmadd_ps(ai, b1, c[i][1]);
		}
		a += 8;
	}
	for (i = 0; i < 8; i++) {
		_mm512_store_ps(ab + i * 32, c[i][0]);
		_mm512_store_ps(ab + i * 32 + 16, c[i][1]);
	}
}

/* The same, row i of A read in place at ar[i] (step k at ar[i][k]). */
__attribute__((target("avx512f,avx2,fma")))
static void
kernel_avx512_rows(int64_t kc, const float *const *ar, const float *b, int64_t ldb, float *ab)
{
	__m512 c[8][2], b0, b1, ai;
	const float *r[8];
	int64_t k;
	int i;

	for (i = 0; i < 8; i++) {
		c[i][0] = c[i][1] = _mm512_setzero_ps();
		r[i] = ar[i];
	}
	for (k = 0; k < kc; k++) {
		b0 = _mm512_loadu_ps(b);
		b1 = _mm512_loadu_ps(b + 16);
		for (i = 0; i < 8; i++) {
			ai = _mm512_set1_ps(r[i][k]);
			c[i][0] = _mm512_fmadd_ps(ai, b0, c[i][0]);
			c[i][1] = _mm512_fmadd_ps(ai, b1, c[i][1]);
		}
		b += ldb;
	}
	for (i = 0; i < 8; i++) {
		_mm512_store_ps(ab + i * 32, c[i][0]);
		_mm512_store_ps(ab + i * 32 + 16, c[i][1]);
	}
}

const dprt_kern dprt_kern_avx512 = { 8, 32, kernel_avx512, kernel_avx512_ind, kernel_avx512_rows };
#endif
