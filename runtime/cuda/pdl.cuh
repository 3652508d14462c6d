/* pdl.cuh: programmatic dependent launch (sm_90), for the generated CUDA of
 * a mapping with `tune cuda.pdl 1` (dp-lower_gpu includes it then).  The
 * elementwise and matrix-vector kernels are launched with DP_LAUNCH(k, grid,
 * block, 1)(args...) (cuda/launch.cuh), which lets the GPU start a kernel's
 * blocks while the kernel before it works; each such kernel calls dp_pdl_wait() before
 * it reads anything the kernels before it wrote (a matrix-vector kernel
 * first loads its weights, or asks them into L2, which nothing writes).  On a
 * GPU before sm_90 the launch is an ordinary one.  The kernel library's
 * decode attention (attndec.cuh) waits and prefetches with the same two
 * (compiled once, without DP_PDL_EARLY). */
#ifndef DPRT_PDL_CUH
#define DPRT_PDL_CUH

/* Waits until the kernels before this one in the stream have finished and
 * their writes are visible (at once where the launch was an ordinary one;
 * griddepcontrol.wait waits for the whole grid before, not for its
 * trigger), and lets the kernel after this one start its blocks: they run
 * up to their own wait (a GEMV loads its weights) while this one works.
 * The kernel after waits for this one to finish all the same, so it reads
 * only finished results.
 * - DP_PDL_EARLY (the generated code of `tune cuda.pdl 1`, the default):
 *   the kernel after may start once this one's blocks have all started,
 *   before they wait, so that several kernels run ahead, each up to its
 *   wait.  A decode step's small kernels (a RoPE launch of 9 blocks, an
 *   attention of 12) then no longer start only as the one before them
 *   ends: 13% off a ~100M Llama's decode on the H200 (bench/RESULTS.md).
 *   Safe as long as every kernel so launched waits before it ends (each
 *   block that reads or writes anything does), which makes the waits a
 *   chain.
 * - otherwise (`tune cuda.pdl late`, and the kernel library): after the
 *   wait, so that one kernel runs ahead. */
static __device__ __forceinline__ void
dp_pdl_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#ifdef DP_PDL_EARLY
	cudaTriggerProgrammaticLaunchCompletion();
	cudaGridDependencySynchronize();
#else
	cudaGridDependencySynchronize();
	cudaTriggerProgrammaticLaunchCompletion();
#endif
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

/* Asks the n bytes at p into L2 (p and n multiples of 16), by the copy
 * engine, nothing waiting on it: a GEMV kernel's blocks ask for the next
 * GEMV's weights so, each its share, before their wait; nothing before
 * sm_90. */
static __device__ __forceinline__ void
dp_pdl_l2(const void *p, unsigned n)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(n) : "memory");
#endif
}

#endif
