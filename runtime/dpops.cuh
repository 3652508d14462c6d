/* dpops.cuh: small CUDA kernels of ops that are not elementwise (scans),
 * included by the CUDA that dp-lower_gpu writes when a program needs one
 * (nvcc -I runtime).  Each is the cpu runtime's loop (runtime/elem.c), one
 * thread per row. */
#ifndef DPOPS_CUH
#define DPOPS_CUH

#include <stdint.h>

/* Inclusive prefix sums along the middle axis of x viewed as [outer, n,
 * inner]: one thread per (outer, inner) row, summed in A (double for f32,
 * as PyTorch's cpu kernel; i64 in uint64_t, wrapping). */
template <typename T, typename A>
static __global__ void __launch_bounds__(256)
dps_cumsum(const T *__restrict__ x, T *__restrict__ y, long long rows, long long n,
           long long inner)
{
	long long r = blockIdx.x * 256LL + threadIdx.x;

	if (r >= rows)
		return;
	long long base = r / inner * n * inner + r % inner;
	A s = 0;
	for (long long j = 0; j < n; j++) {
		s += (A)x[base + j * inner];
		y[base + j * inner] = (T)s;
	}
}

#endif
