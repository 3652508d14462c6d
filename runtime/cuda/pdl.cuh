/* pdl.cuh: programmatic dependent launch (sm_90), for the generated CUDA of
 * a mapping with `tune cuda.pdl 1` (dp-lower_gpu includes it then).  The
 * elementwise and matrix-vector kernels are launched with DP_LAUNCH(k, grid,
 * block, 1)(args...) (cuda/launch.cuh), which lets the GPU start a kernel's
 * blocks while the kernel before it works; each such kernel calls dp_pdl_wait() before
 * it reads anything the kernels before it wrote (a matrix-vector kernel
 * first loads its weights, or asks them into L2, which nothing writes).  On a
 * GPU before sm_90 the launch is an ordinary one.  The kernel library's
 * decode attention (attndec.cuh) waits and prefetches with the same two. */
#ifndef DPRT_PDL_CUH
#define DPRT_PDL_CUH

/* Waits until the kernels before this one in the stream have finished and
 * their writes are visible (at once where the launch was an ordinary one),
 * then lets the kernel after this one start its blocks: they run up to
 * their own wait (a GEMV loads its weights) while this one works.  The
 * kernel after waits for this one to finish all the same, so it reads
 * only finished results; and only one kernel runs ahead. */
static __device__ __forceinline__ void
dp_pdl_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	cudaGridDependencySynchronize();
	cudaTriggerProgrammaticLaunchCompletion();
#endif
}

/* Lets the kernel after this one start its blocks now (launched with
 * programmatic dependent launch, they run up to their own wait, which
 * still waits for this kernel to finish); nothing before sm_90. */
static __device__ __forceinline__ void
dp_pdl_trigger(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	cudaTriggerProgrammaticLaunchCompletion();
#endif
}

/* Asks the line at p into L2 (a kernel's weights, which nothing before it
 * writes, before its wait). */
static __device__ __forceinline__ void
dp_pdl_prefetch(const void *p)
{
	asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

#endif
