/* reduce.cuh: device helpers of the row kernels that dp-lower_gpu generates
 * (stages/lower_gpu/reduce.c), included by a program's .cu where they are
 * used. */
#ifndef DPRT_REDUCE_CUH
#define DPRT_REDUCE_CUH

/* Whether candidate (v, j) beats (bv, bi) for argmax: a NaN beats any
 * number, then the larger value, then the smaller index; j < 0 is no
 * candidate. */
static __device__ __forceinline__ int
better(float v, int j, float bv, int bi)
{
	if (j < 0)
		return 0;
	if (bi < 0)
		return 1;
	if (v != v || bv != bv)
		return v != v && (bv == bv || j < bi);
	return v > bv || (v == bv && j < bi);
}

/* The sum of v over the warp, in every lane (the same bits in each). */
template <typename T> static __device__ __forceinline__ T
wsum(T v)
{
	for (int s = 16; s > 0; s /= 2)
		v += __shfl_xor_sync(0xffffffffu, v, s);
	return v;
}

/* The sum of v over the block (all of its threads call it), in every
 * thread. */
template <typename T> static __device__ __forceinline__ T
bsum(T v)
{
	__shared__ T part[32];
	int lane = threadIdx.x % 32;

	v = wsum(v);
	__syncthreads();   /* the partials of a previous call are read */
	if (lane == 0)
		part[threadIdx.x / 32] = v;
	__syncthreads();
	return wsum(lane < (int)blockDim.x / 32 ? part[lane] : (T)0);
}

#endif
