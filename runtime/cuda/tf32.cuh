/* tf32.cuh: TF32 rounding and the parts of an fp32 value that 3xTF32
 * multiplies, for the kernel library (tc.cuh, gemm.cu's split of A) and
 * for the generated kernels that write a 3xTF32 product's A already split
 * (dp-lower_gpu, kern.c: a GELU before a linear layer).  Each includer
 * gets its own static copies. */
#ifndef DPRT_TF32_CUH
#define DPRT_TF32_CUH

/* x rounded to tf32 (10-bit mantissa, to nearest, ties away); the host
 * emulator (tests/gpu/emu/cuda/tf32.cuh) brings its own, DP_TF32_HOST */
#ifndef DP_TF32_HOST
static __device__ __forceinline__ float
tf32(float x)
{
	unsigned r;
	asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
	return __uint_as_float(r);
}
#endif

/* The remainder of x past its tf32 part h, itself in tf32; none where h is
 * not finite (inf - inf would make it NaN). */
static __device__ __forceinline__ float
x3lo(float x, float h)
{
	return isfinite(h) ? tf32(x - h) : 0.0f;
}

/* v as 3xTF32's parts of an element of A whose row's split is [hi | hi |
 * lo], 3K floats, as dprt_cublaslt_x3 multiplies it (runtime/cuda/blas.c):
 * at d, d + K and d + 2K. */
template <typename I>
static __device__ __forceinline__ void
dp_x3at(float *__restrict__ d, I K, float v)
{
	float h = tf32(v);

	d[0] = h;
	d[K] = h;
	d[2 * K] = x3lo(v, h);
}

/* Element i of an M x K matrix A (rows of K, dense) so, in the split s3. */
template <typename I>
static __device__ __forceinline__ void
dp_x3put(float *__restrict__ s3, I K, I i, float v)
{
	I r = i / K;

	dp_x3at(s3 + (long long)r * 3 * K + (i - r * K), K, v);
}

#endif
