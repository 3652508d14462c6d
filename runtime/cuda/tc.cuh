/* tc.cuh: the pieces of the kernel library's tensor-core products
 * (conv.cu's implicit GEMM, gemm.cu's matrix product): TF32 rounding, the
 * mma.sync m16n8k8 tile product, and the cp.async copies that fill their
 * rings of shared memory.  Each includer gets its own static copies. */
#ifndef DPRT_TC_CUH
#define DPRT_TC_CUH

/* x rounded to tf32 (10-bit mantissa, to nearest, ties away) */
static __device__ __forceinline__ float
tf32(float x)
{
	unsigned r;
	asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
	return __uint_as_float(r);
}

/* d += a·b on a 16x8x8 tile: a row-major 16x8, b column-major 8x8 */
static __device__ __forceinline__ void
mma(float *d, const unsigned *a, const unsigned *b)
{
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
	             "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
	             : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
	             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* cp.async: n of the 16 (or 4) bytes at src into shared dst, zeros after */
static __device__ __forceinline__ void
cp16(float *dst, const float *src, int n)
{
	unsigned d = (unsigned)__cvta_generic_to_shared(dst);
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(d), "l"(src), "r"(n) : "memory");
}

static __device__ __forceinline__ void
cp4(float *dst, const float *src, int n)
{
	unsigned d = (unsigned)__cvta_generic_to_shared(dst);
	asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" :: "r"(d), "l"(src), "r"(n) : "memory");
}

static __device__ __forceinline__ void
commit(void)
{
	asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* until at most N groups of this thread's copies are in flight */
template <int N>
static __device__ __forceinline__ void
waitcp(void)
{
	asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}

#endif
