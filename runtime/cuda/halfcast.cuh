/* halfcast.cuh: casts to and from f16 and bf16 in the generated kernels,
 * which move those numbers as their bits (uint16_t).  The same bits as the
 * cpu's runtime/cast.c: f16/bf16 widen to f32 exactly; any value narrows
 * with one rounding to nearest even (from f64 through f32 rounded to odd,
 * from i64 through f64 rounded to odd), NaN stays a quiet NaN.  Integer
 * arithmetic and exact conversions only, but the f16 subnormal branch,
 * whose FP add rounds (nvcc keeps subnormals: no --use_fast_math). */
#ifndef DPRT_HALFCAST_CUH
#define DPRT_HALFCAST_CUH

static __device__ __forceinline__ float
dp_bf16_f32(uint16_t h)
{
	return __uint_as_float((uint32_t)h << 16);
}

static __device__ __forceinline__ uint16_t
dp_f32_bf16(float f)
{
	uint32_t x = __float_as_uint(f);

	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)(x >> 16 | 0x40);
	x += 0x7fffu + ((x >> 16) & 1u);
	return (uint16_t)(x >> 16);
}

static __device__ __forceinline__ float
dp_f16_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;

	if (exp == 0)   /* zero or subnormal: mant · 2^-24, exact */
		return __uint_as_float(__float_as_uint((float)mant * 0x1p-24f) | sign);
	if (exp == 31)   /* inf or NaN, payload kept */
		return __uint_as_float(sign | 0x7f800000u | mant << 13);
	return __uint_as_float(sign | (exp + 112) << 23 | mant << 13);
}

static __device__ __forceinline__ uint16_t
dp_f32_f16(float f)
{
	const uint32_t magic = (127 - 15 + 23 - 10 + 1) << 23;
	uint32_t x = __float_as_uint(f), sign = x & 0x80000000u, o;

	x ^= sign;
	if (x >= (127u + 16) << 23)   /* >= 65536, inf or NaN */
		o = x > 0x7f800000u ? 0x7e00 : 0x7c00;
	else if (x < 113u << 23)   /* below 2^-14: the FP add rounds the 10 kept bits */
		o = __float_as_uint(__fadd_rn(__uint_as_float(x), __uint_as_float(magic))) - magic;
	else
		o = (x + ((uint32_t)(15 - 127) << 23) + 0xfffu + ((x >> 13) & 1u)) >> 13;
	return (uint16_t)(o | sign >> 16);
}

/* f64 to f32 rounded to odd: truncated, the last bit set where inexact. */
static __device__ __forceinline__ float
dp_f64_f32odd(double d)
{
	float f = __double2float_rz(d);

	if (d != d || (double)f == d)
		return f;
	return __uint_as_float(__float_as_uint(f) | 1u);
}

/* i64 to f64 rounded to odd (exact below 2^53). */
static __device__ __forceinline__ double
dp_i64_f64odd(int64_t v)
{
	uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	int e = 0, sticky = 0;

	while (m >> 53) {
		sticky |= (int)(m & 1);
		m >>= 1;
		e++;
	}
	double d = ldexp((double)(m | (uint64_t)sticky), e);
	return v < 0 ? -d : d;
}

#endif
