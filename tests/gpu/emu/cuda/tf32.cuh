/* cuda/tf32.cuh for the emulator: found before runtime/cuda/tf32.cuh, as
 * pdl.cuh is.  The same parts of a value as the real header (tf32 rounding
 * to nearest, ties away, of the 10-bit mantissa; a remainder where the
 * part is finite), in host code. */
#ifndef DPRT_TF32_CUH
#define DPRT_TF32_CUH

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

static inline float
x3lo(float x, float h)
{
	return isfinite(h) ? tf32(x - h) : 0.0f;
}

template <typename I>
static inline void
dp_x3at(float *__restrict__ d, I K, float v)
{
	float h = tf32(v);

	d[0] = h;
	d[K] = h;
	d[2 * K] = x3lo(v, h);
}

template <typename I>
static inline void
dp_x3put(float *__restrict__ s3, I K, I i, float v)
{
	I r = i / K;

	dp_x3at(s3 + (long long)r * 3 * K + (i - r * K), K, v);
}

#endif
