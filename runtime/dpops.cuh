/* dpops.cuh: small CUDA kernels of ops that are not elementwise (scans,
 * sorts, index_write), included by the CUDA that dp-lower_gpu writes when a
 * program needs one (nvcc -I runtime).  Each is the cpu runtime's loop
 * (runtime/elem.c), one thread per row or element. */
#ifndef DPOPS_CUH
#define DPOPS_CUH

#include <stdint.h>

#ifndef DP_HOST
#include "dpscalar.h"   /* dps_logaddexp */

/* Inclusive prefix sums (MODE 0), products (1) or logs of sums of
 * exponentials (2, f32: dpscalar.h's dps_logaddexp) along the middle axis
 * of x viewed as [outer, n, inner]: one thread per (outer, inner) row,
 * accumulated in A (double for f32, as PyTorch's cpu kernel; i64 in
 * uint64_t, wrapping), as runtime/elem.c's dprt_scan. */
template <typename T, typename A, int MODE>
static __device__ __forceinline__ void
dps_scan(const T *__restrict__ x, T *__restrict__ y, long long rows, long long n,
           long long inner)
{
	long long r = blockIdx.x * 256LL + threadIdx.x;

	if (r >= rows)
		return;
	long long base = r / inner * n * inner + r % inner;
	A s = MODE == 2 ? (A)-INFINITY : (A)MODE;
	for (long long j = 0; j < n; j++) {
		A v = (A)x[base + j * inner];
		if (MODE == 0)
			s += v;
		else if (MODE == 1)
			s *= v;
		else
			s = (A)dps_logaddexp((double)s, (double)v);
		y[base + j * inner] = (T)s;
	}
}

/* Whether a at index i comes before b at index j in a stable sort:
 * ascending or descending, NaN above every number, equal keys in index
 * order. */
template <typename T>
static __device__ __forceinline__ int
dps_before(T a, long long i, T b, long long j, int desc)
{
	bool an = a != a, bn = b != b;
	if (an || bn)
		return an && bn ? i < j : desc ? an : bn;
	if (a == b)
		return i < j;
	return desc ? a > b : a < b;
}

/* A stable sort along the middle axis of x viewed as [outer, n, inner]
 * (runtime/elem.c's dprt_sort): one thread per element, which counts the
 * elements of its row that come before it (n² comparisons per row) and
 * writes itself and its index at that rank. */
template <typename T>
static __device__ __forceinline__ void
dps_sort(const T *__restrict__ x, T *__restrict__ y, int64_t *__restrict__ idx, long long rows,
         long long n, long long inner, int desc)
{
	long long t = blockIdx.x * 256LL + threadIdx.x;

	if (t >= rows * n)
		return;
	long long r = t / n, i = t % n, rank = 0;
	long long base = r / inner * n * inner + r % inner;
	T v = x[base + i * inner];
	for (long long j = 0; j < n; j++)
		rank += dps_before(x[base + j * inner], j, v, i, desc);
	y[base + rank * inner] = v;
	idx[base + rank * inner] = i;
}

/* index_write: y[o, idx[m], i] = src[o, m, i] for y viewed as [outer, n,
 * inner] and src as [outer, M, inner], one thread per element of src; an
 * index outside [0, n) writes nothing and of duplicate indices the last
 * wins (as runtime/elem.c's dprt_index_write, which writes them in order).
 * T moves the elements' bits (float, or uint16_t for bf16). */
template <typename T>
static __device__ __forceinline__ void
dps_index_write(const int64_t *__restrict__ idx, const T *__restrict__ src, T *__restrict__ y,
                long long outer, long long M, long long n, long long inner)
{
	long long t = blockIdx.x * 256LL + threadIdx.x;

	if (t >= outer * M * inner)
		return;
	long long i = t % inner, m = t / inner % M, o = t / inner / M, p = idx[m];
	if (p < 0 || p >= n)
		return;
	for (long long k = m + 1; k < M; k++)
		if (idx[k] == p)
			return;   /* a later index writes this slice */
	y[(o * n + p) * inner + i] = src[t];
}

#endif   /* DP_HOST */

/* The kernels a program launches by name (DP_LAUNCH, cuda/launch.cuh):
 * one per element type, blocks of 256 threads.  index_write moves bytes:
 * _bN for elements of N bytes. */
#if defined(DP_HOST)   /* the host half: declarations */
#define DPS_KERNEL(name, params, body) extern "C" void name params;
#elif defined(DP_DEVICE)   /* the device half alone: found by name */
#define DPS_KERNEL(name, params, body) \
	extern "C" __global__ void __launch_bounds__(256) name params { body; }
#else   /* compiled whole: the program's own, as its other kernels */
#define DPS_KERNEL(name, params, body) \
	static __global__ void __launch_bounds__(256) name params { body; }
#endif
#define DPS_SCAN(name, s, T, A, MODE)                                                        \
	DPS_KERNEL(dps_##name##_##s, (const T *__restrict__ x, T *__restrict__ y, long long rows, \
	                              long long n, long long inner),                            \
	           (dps_scan<T, A, MODE>(x, y, rows, n, inner)))
#define DPS_SORT(s, T)                                                                         \
	DPS_KERNEL(dps_sort_##s, (const T *__restrict__ x, T *__restrict__ y,                    \
	                          int64_t *__restrict__ idx, long long rows, long long n,        \
	                          long long inner, int desc),                                    \
	           (dps_sort<T>(x, y, idx, rows, n, inner, desc)))
#define DPS_INDEX_WRITE(s, T)                                                                  \
	DPS_KERNEL(dps_index_write_##s, (const int64_t *__restrict__ idx, const T *__restrict__ src, \
	                                 T *__restrict__ y, long long outer, long long M,        \
	                                 long long n, long long inner),                          \
	           (dps_index_write<T>(idx, src, y, outer, M, n, inner)))
DPS_SCAN(cumsum, f32, float, double, 0)
DPS_SCAN(cumsum, i64, int64_t, uint64_t, 0)
DPS_SCAN(cumprod, f32, float, double, 1)
DPS_SCAN(cumprod, i64, int64_t, uint64_t, 1)
DPS_SCAN(logcumsumexp, f32, float, double, 2)
DPS_SORT(f32, float)
DPS_SORT(i64, int64_t)
DPS_SORT(i32, int32_t)
DPS_INDEX_WRITE(b8, int64_t)
DPS_INDEX_WRITE(b4, uint32_t)
DPS_INDEX_WRITE(b2, uint16_t)
DPS_INDEX_WRITE(b1, uint8_t)

#endif
