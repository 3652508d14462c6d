/* half.cu: 16-bit floating point for `tune cuda.precision bf16|f16`
 * (formats/target.md, "Precision"): the device memory of the 16-bit copies
 * of weights and of a product's operands, the conversions from fp32 into
 * them, and the rounding of fp32 values to the nearest 16-bit value kept in
 * fp32 (a bf16 or f16 number widened back, exactly), on g's stream.  Every
 * conversion rounds to nearest, ties to even (__float2bfloat16_rn,
 * __float2half_rn), as PyTorch's .to(torch.bfloat16) does. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "dprt_cuda.h"

enum { THREADS = 256, MAXBLOCKS = 2048 };

template <int F16> static __device__ __forceinline__ unsigned short
bits16(float x)
{
	if (F16)
		return __half_as_ushort(__float2half_rn(x));
	return __bfloat16_as_ushort(__float2bfloat16_rn(x));
}

template <int F16> static __device__ __forceinline__ float
wide(unsigned short h)
{
	if (F16)
		return __half2float(__ushort_as_half(h));
	return __bfloat162float(__ushort_as_bfloat16(h));
}

/* y[i] = x[i] rounded to 16 bits, widened (ROUND) or kept in 16 bits;
 * four at a time where VEC (n a multiple of 4, both 16-byte aligned). */
template <int F16, int ROUND, int VEC> static __global__ void __launch_bounds__(THREADS)
conv16(void *y, const float *__restrict__ x, long long n)
{
	long long i = blockIdx.x * (long long)THREADS + threadIdx.x;
	long long step = (long long)gridDim.x * THREADS;

	if (VEC) {
		for (; i < n / 4; i += step) {
			float4 v = ((const float4 *)x)[i];
			unsigned short h0 = bits16<F16>(v.x), h1 = bits16<F16>(v.y);
			unsigned short h2 = bits16<F16>(v.z), h3 = bits16<F16>(v.w);
			if (ROUND) {
				((float4 *)y)[i] = make_float4(wide<F16>(h0), wide<F16>(h1), wide<F16>(h2),
				                               wide<F16>(h3));
			} else {
				uint2 u = make_uint2(h0 | (unsigned)h1 << 16, h2 | (unsigned)h3 << 16);
				((uint2 *)y)[i] = u;
			}
		}
	} else {
		for (; i < n; i += step) {
			unsigned short h = bits16<F16>(x[i]);
			if (ROUND)
				((float *)y)[i] = wide<F16>(h);
			else
				((unsigned short *)y)[i] = h;
		}
	}
}

static int
conv(dprt_cuda *g, int round, void *y, const float *x, int64_t n, char *err, size_t errn)
{
	int vec = n % 4 == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)y % (round ? 16 : 8) == 0;
	long long per = vec ? n / 4 : n;
	long long blocks = (per + THREADS - 1) / THREADS;
	int f16 = g->prec16 == DPRT_F16;

	if (n <= 0)
		return 0;
	if (blocks > MAXBLOCKS)
		blocks = MAXBLOCKS;
#define LAUNCH(F, R, V) conv16<F, R, V><<<(unsigned)blocks, THREADS, 0, g->stream>>>(y, x, n)
	if (f16 && round)
		vec ? LAUNCH(1, 1, 1) : LAUNCH(1, 1, 0);
	else if (f16)
		vec ? LAUNCH(1, 0, 1) : LAUNCH(1, 0, 0);
	else if (round)
		vec ? LAUNCH(0, 1, 1) : LAUNCH(0, 1, 0);
	else
		vec ? LAUNCH(0, 0, 1) : LAUNCH(0, 0, 0);
#undef LAUNCH
	return dprt_cuda_launched(round ? "round16" : "to16", err, errn);
}

extern "C" int
dprt_cuda_half(dprt_cuda *g, int prec16, size_t wbytes, size_t sbytes, char *err, size_t errn)
{
	g->prec16 = prec16;
	if (wbytes && dprt_cuda_ok(cudaMalloc((void **)&g->w16, wbytes), "cudaMalloc", err, errn) != 0)
		return -1;
	if (sbytes && dprt_cuda_ok(cudaMalloc((void **)&g->s16, sbytes), "cudaMalloc", err, errn) != 0)
		return -1;
	return 0;
}

extern "C" int
dprt_cuda_to16(dprt_cuda *g, void *y, const float *x, int64_t n, char *err, size_t errn)
{
	return conv(g, 0, y, x, n, err, errn);
}

extern "C" int
dprt_cuda_round16(dprt_cuda *g, float *y, const float *x, int64_t n, char *err, size_t errn)
{
	return conv(g, 1, y, x, n, err, errn);
}
