/* cuda/tf32.cuh for the emulator: found before runtime/cuda/tf32.cuh, as
 * pdl.cuh is.  tf32 rounding (to nearest, ties away, of the 10-bit
 * mantissa) in host code, then the runtime's own header for the parts of
 * a split, so that the emulated kernels store them as the GPU's do. */
#ifndef DPRT_TF32_HOST_CUH
#define DPRT_TF32_HOST_CUH

static inline float
tf32(float x)
{
	uint32_t u;

	memcpy(&u, &x, 4);
	if ((u & 0x7f800000u) != 0x7f800000u)   /* finite: round the 13 bits away */
		u = (u + 0x1000u) & 0xffffe000u;
	memcpy(&x, &u, 4);
	return x;
}

#define DP_TF32_HOST
#include "../../../../runtime/cuda/tf32.cuh"
#undef DP_TF32_HOST

#endif
