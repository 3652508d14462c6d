/* cast.c: dtype conversion between all ten dtypes, f16/bf16 rounded to nearest even. */
#include <string.h>
#include "dprtint.h"

/*
 * Rules.  Integer → integer and integer/float → float follow C (narrowing
 * integers wrap, as gcc and every two's-complement target do).  Float →
 * integer truncates toward zero; out-of-range values are made defined: NaN
 * gives 0, values beyond int64 saturate, then the int64 wraps into a narrower
 * type (so -1.0 → u8 gives 255, like PyTorch on x86).  Anything → bool is
 * "nonzero" (NaN is true); bool → anything reads any nonzero byte as 1.
 * f16 and bf16 are produced with a single rounding to nearest even: from f64
 * through f32 rounded to odd, which makes the second rounding exact.
 */

enum { CHUNK = 256 };	/* elements per staging buffer on the stack */

static inline uint32_t
fbits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static inline float
bitsf(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* f16 bits → f32, exact. */
float
dprt_f16_to_f32(uint16_t h)
{
	uint32_t sign, exp, mant;
	float f;

	sign = (uint32_t)(h & 0x8000) << 16;
	exp = (h >> 10) & 0x1f;
	mant = h & 0x3ff;
	if (exp == 0) {		/* zero or subnormal: mant · 2^-24 */
		f = (float)mant * 0x1p-24f;
		return bitsf(fbits(f) | sign);
	}
	if (exp == 31)		/* inf or NaN, payload kept */
		return bitsf(sign | 0x7f800000 | mant << 13);
	return bitsf(sign | (exp + 112) << 23 | mant << 13);
}

/* f32 → f16 bits, round to nearest even; assumes the default FP rounding
 * mode and no flush-to-zero (the subnormal branch uses an FP add). */
uint16_t
dprt_f32_to_f16(float f)
{
	const uint32_t magicu = (127 - 15 + 23 - 10 + 1) << 23;
	uint32_t x, sign, o;

	x = fbits(f);
	sign = x & 0x80000000u;
	x ^= sign;
	if (x >= (127 + 16) << 23) {		/* ≥ 65536, inf or NaN */
		o = x > 0x7f800000u ? 0x7e00 : 0x7c00;
	} else if (x < 113u << 23) {		/* below 2^-14: subnormal or 0 */
		/* adding 0.5 aligns the 10 kept bits at the bottom; the FP add
		 * does the rounding */
		o = fbits(bitsf(x) + bitsf(magicu)) - magicu;
	} else {
		o = x + ((uint32_t)(15 - 127) << 23) + 0xfff + ((x >> 13) & 1);
		o >>= 13;			/* may carry into inf: correct */
	}
	return (uint16_t)(o | sign >> 16);
}

/* bf16 bits → f32, exact. */
float
dprt_bf16_to_f32(uint16_t h)
{
	return bitsf((uint32_t)h << 16);
}

/* f32 → bf16 bits, round to nearest even; NaN stays a (quiet) NaN. */
uint16_t
dprt_f32_to_bf16(float f)
{
	uint32_t x;

	x = fbits(f);
	if ((x & 0x7fffffff) > 0x7f800000)
		return (uint16_t)(x >> 16 | 0x40);
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

/* f64 → f32 rounded to odd: truncate, then set the last bit if inexact. */
static inline float
f64_to_f32_odd(double d)
{
	float f;
	uint32_t u;

	f = (float)d;
	if (d != d || (double)f == d)
		return f;
	u = fbits(f);
	if ((f < 0 ? -(double)f : (double)f) > (d < 0 ? -d : d))
		u--;			/* rounded away from zero: step back */
	return bitsf(u | 1);
}

/* int64 → f64 rounded to odd (exact below 2^53). */
static inline double
i64_to_f64_odd(int64_t v)
{
	uint64_t m;
	int e, sticky, neg;
	double d;

	neg = v < 0;
	m = neg ? 0 - (uint64_t)v : (uint64_t)v;
	e = 0;
	sticky = 0;
	while (m >> 53) {
		sticky |= (int)(m & 1);
		m >>= 1;
		e++;
	}
	m |= (uint64_t)sticky;
	d = (double)m;
	while (e-- > 0)
		d *= 2;
	return neg ? -d : d;
}

/* Float → int64, truncating; NaN → 0, out of range saturates. */
static inline int64_t
f2i(double x)
{
	if (x != x)
		return 0;
	if (x >= 0x1p63)
		return INT64_MAX;
	if (x <= -0x1p63)
		return INT64_MIN;
	return (int64_t)x;
}

/*
 * The eight dtypes C has types for.  SRC(X): X(code, type, isfloat, isbool);
 * DST(X, ...): the same with kind 0 integer, 1 float, 2 bool.
 */
#define SRC(X) \
	X(DPRT_U8, uint8_t, 0, 0) X(DPRT_I8, int8_t, 0, 0) \
	X(DPRT_I16, int16_t, 0, 0) X(DPRT_I32, int32_t, 0, 0) \
	X(DPRT_I64, int64_t, 0, 0) X(DPRT_F32, float, 1, 0) \
	X(DPRT_F64, double, 1, 0) X(DPRT_BOOL, uint8_t, 0, 1)
#define DST(X, S, ST, SF, SB) \
	X(S, ST, SF, SB, DPRT_U8, uint8_t, 0) X(S, ST, SF, SB, DPRT_I8, int8_t, 0) \
	X(S, ST, SF, SB, DPRT_I16, int16_t, 0) X(S, ST, SF, SB, DPRT_I32, int32_t, 0) \
	X(S, ST, SF, SB, DPRT_I64, int64_t, 0) X(S, ST, SF, SB, DPRT_F32, float, 1) \
	X(S, ST, SF, SB, DPRT_F64, double, 1) X(S, ST, SF, SB, DPRT_BOOL, uint8_t, 2)

/* The conditions are constants, so each instance folds to one expression. */
#define CONV(DT, DK, SF, v) \
	((DK) == 2 ? (DT)((v) != 0) : \
	 (DK) == 1 || !(SF) ? (DT)(v) : (DT)(uint64_t)f2i((double)(v)))

#define CASE(S, ST, SF, SB, D, DT, DK) \
	case S * DPRT_NDTYPE + D: { \
		DT *d = dst; \
		const ST *s = src; \
		for (int64_t i = 0; i < n; i++) { \
			ST v = (SB) ? (ST)(s[i] != 0) : s[i]; \
			d[i] = CONV(DT, DK, SF, v); \
		} \
		break; \
	}
#define SRCCASES(S, ST, SF, SB) DST(CASE, S, ST, SF, SB)

/* Casts between the C-typed dtypes (not f16/bf16). */
static void
cast_native(void *dst, int dd, const void *src, int ds, int64_t n)
{
	switch (ds * DPRT_NDTYPE + dd) {
	SRC(SRCCASES)
	default:
		break;
	}
}

/* Any non-half dtype → f16/bf16, through f64 (exact for all but int64
 * beyond 2^53, which is rounded to odd) and f32 rounded to odd. */
static void
to_half(uint16_t *d, int dd, const void *src, int ds, int64_t n)
{
	double buf[CHUNK];
	const int64_t *s64;
	int64_t i, k, m;
	float f;

	for (i = 0; i < n; i += m) {
		m = n - i < CHUNK ? n - i : CHUNK;
		if (ds == DPRT_I64) {
			s64 = (const int64_t *)src + i;
			for (k = 0; k < m; k++)
				buf[k] = i64_to_f64_odd(s64[k]);
		} else {
			cast_native(buf, DPRT_F64,
			            (const char *)src + i * dprt_dtype_size[ds], ds, m);
		}
		for (k = 0; k < m; k++) {
			f = f64_to_f32_odd(buf[k]);
			d[i + k] = dd == DPRT_F16 ? dprt_f32_to_f16(f) : dprt_f32_to_bf16(f);
		}
	}
}

/* Converts n elements; see the rules above.  Same dtype copies (memmove). */
void
dprt_cast(void *dst, int dd, const void *src, int ds, int64_t n)
{
	float buf[CHUNK];
	const uint16_t *h;
	uint16_t *o;
	float *f;
	const float *sf;
	int64_t i, k, m;

	if (n <= 0 || ds < 0 || ds >= DPRT_NDTYPE || dd < 0 || dd >= DPRT_NDTYPE)
		return;
	if (ds == dd) {
		memmove(dst, src, (size_t)n * (size_t)dprt_dtype_size[ds]);
		return;
	}
	if (ds == DPRT_F16 || ds == DPRT_BF16) {
		h = src;
		if (dd == DPRT_F32) {
			f = dst;
			if (ds == DPRT_F16)
				for (i = 0; i < n; i++)
					f[i] = dprt_f16_to_f32(h[i]);
			else
				for (i = 0; i < n; i++)
					f[i] = dprt_bf16_to_f32(h[i]);
			return;
		}
		for (i = 0; i < n; i += m) {
			m = n - i < CHUNK ? n - i : CHUNK;
			dprt_cast(buf, DPRT_F32, h + i, ds, m);
			dprt_cast((char *)dst + i * dprt_dtype_size[dd], dd, buf,
			          DPRT_F32, m);
		}
		return;
	}
	if (dd == DPRT_F16 || dd == DPRT_BF16) {
		o = dst;
		if (ds != DPRT_F32) {
			to_half(o, dd, src, ds, n);
			return;
		}
		sf = src;
		if (dd == DPRT_F16)
			for (k = 0; k < n; k++)
				o[k] = dprt_f32_to_f16(sf[k]);
		else
			for (k = 0; k < n; k++)
				o[k] = dprt_f32_to_bf16(sf[k]);
		return;
	}
	cast_native(dst, dd, src, ds, n);
}
