/* dpscalar.h: the scalar formula of every elementwise op, written once for
 * the cpu runtime (runtime/elem.c), the C that lower_cpu writes and the CUDA
 * that lower_gpu writes (both include this header).
 *
 * formats/ops.h names each elementwise op's formula: dps_NAME(v, a, b) for
 * a unary op on f32 (a, b: the parameters the row names, clamp's bounds;
 * the others ignore them), dps_NAME_i64 too for the Funaryn form (integer
 * bounds: a rounded up, b down), dps_NAME(u, v, al) for a binary op on f32
 * (al: aten.add/sub's alpha), dps_NAME_i64 too for the Fbinaryn form.  The forms are PyTorch's CPU kernels'.
 * Products go through DPS_MUL so that nvcc does not contract them into an
 * fma the cpu does not compute. */
#ifndef DPSCALAR_H
#define DPSCALAR_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define DP_HD __host__ __device__
#else
#define DP_HD
#endif
#ifdef __CUDA_ARCH__
#define DPS_MUL(x, y) __fmul_rn(x, y)
#else
#define DPS_MUL(x, y) ((x) * (y))
#endif

#define DPS_U(name, expr) \
	static inline DP_HD float dps_##name(float v, float a, float b) \
	{ (void)a; (void)b; return (expr); }
#define DPS_UI(name, expr) \
	static inline DP_HD int64_t dps_##name##_i64(int64_t v, int64_t a, int64_t b) \
	{ (void)a; (void)b; return (expr); }

/* ---- unary ---- */
DPS_U(rsqrt, 1.0f / sqrtf(v))
DPS_U(sqrt, sqrtf(v))
DPS_U(exp, expf(v))
DPS_U(expm1, expm1f(v))
DPS_U(log, logf(v))
DPS_U(log1p, log1pf(v))
DPS_U(cos, cosf(v))
DPS_U(sin, sinf(v))
DPS_U(reciprocal, 1.0f / v)
DPS_U(sigmoid, 1.0f / (1.0f + expf(-v)))
DPS_U(tanh, tanhf(v))
DPS_U(silu, v / (1.0f + expf(-v)))
DPS_U(gelu, DPS_MUL(DPS_MUL(v, 0.5f), 1.0f + erff(DPS_MUL(v, 0.70710678118654752f))))
/* 0.5·v·(1 + tanh(√(2/π)·(v + 0.044715·v³))) */
DPS_U(gelu_tanh, DPS_MUL(DPS_MUL(0.5f, v), 1.0f + tanhf(DPS_MUL(0.7978845608028654f,
      v + DPS_MUL(DPS_MUL(DPS_MUL(0.044715f, v), v), v)))))
DPS_U(hardswish, DPS_MUL(v, fminf(fmaxf(v + 3.0f, 0.0f), 6.0f)) / 6.0f)
DPS_U(hardsigmoid, fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) / 6.0f)
DPS_U(acos, acosf(v))
DPS_U(acosh, acoshf(v))
DPS_U(asin, asinf(v))
DPS_U(asinh, asinhf(v))
DPS_U(atan, atanf(v))
DPS_U(atanh, atanhf(v))
/* x·tanh(softplus(x)), as PyTorch computes it: x·tanh(log1p(eˣ)) */
DPS_U(mish, DPS_MUL(v, tanhf(log1pf(expf(v)))))
/* log(1 + e^(βx))/β, x itself where βx > threshold (a: β, b: the threshold),
 * as PyTorch's cpu kernel */
DPS_U(softplus, DPS_MUL(v, a) > b ? v : log1pf(expf(DPS_MUL(v, a))) / a)
/* value b where x <= threshold a (NaN stays), as PyTorch's threshold */
DPS_U(threshold, v <= a ? b : v)
/* 0 inside [−λ, λ] (a: λ), else x; softshrink moves the rest λ toward 0 */
DPS_U(hardshrink, v >= -a && v <= a ? 0.0f : v)
DPS_U(softshrink, v > a ? v - a : v < -a ? v + a : DPS_MUL(v, 0.0f))
DPS_U(frac, v - truncf(v))
/* log(z / (1 − z)), z = x clamped to [eps, 1 − eps] where eps (a) >= 0 */
DPS_U(logit, logf((a >= 0.0f ? fminf(fmaxf(v, a), 1.0f - a) : v) /
                  (1.0f - (a >= 0.0f ? fminf(fmaxf(v, a), 1.0f - a) : v))))
DPS_U(ceil, ceilf(v))
DPS_U(cosh, coshf(v))
DPS_U(erf, erff(v))
DPS_U(floor, floorf(v))
DPS_U(log10, log10f(v))
DPS_U(log2, log2f(v))
DPS_U(round, rintf(v))                             /* halves to even */
DPS_U(sign, v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v) /* ±0 and NaN stay */
DPS_U(sinh, sinhf(v))
DPS_U(tan, tanf(v))
DPS_U(trunc, truncf(v))
DPS_U(leaky_relu, v > 0.0f ? v : DPS_MUL(v, a))    /* a: the negative slope */
DPS_U(neg, -v)
DPS_U(abs, fabsf(v))
DPS_U(relu, v < 0.0f ? 0.0f : v)                   /* NaN stays */
/* clamp to [a, b]: NaN stays; a > b gives b everywhere (torch.clamp's rule) */
DPS_U(clamp, v < a ? (a > b ? b : a) : v > b ? b : v)
/* integers wrap (two's complement), as PyTorch's do */
DPS_UI(neg, (int64_t)(0 - (uint64_t)v))
DPS_UI(abs, v < 0 ? (int64_t)(0 - (uint64_t)v) : v)
DPS_UI(relu, v < 0 ? 0 : v)
DPS_UI(clamp, v < a ? (a > b ? b : a) : v > b ? b : v)

/* ---- binary ---- */
#define DPS_B(name, expr) \
	static inline DP_HD float dps_##name(float u, float v, float al) \
	{ (void)al; return (expr); }
DPS_B(add, al == 1.0f ? u + v : u + DPS_MUL(al, v))
DPS_B(sub, al == 1.0f ? u - v : u - DPS_MUL(al, v))
DPS_B(mul, DPS_MUL(u, v))
DPS_B(div, u / v)
DPS_B(pow, powf(u, v))
DPS_B(fmod, fmodf(u, v))
/* Python's %: the sign of the divisor (PyTorch's float remainder) */
static inline DP_HD float
dps_remainder(float u, float v, float al)
{
	float m = fmodf(u, v);

	(void)al;
	return m != 0.0f && ((v < 0.0f) != (m < 0.0f)) ? m + v : m;
}
/* torch.div's rounding modes: floor as PyTorch's div_floor_floating (the
 * quotient of u less its fmod remainder, one less where that remainder's
 * sign is not the divisor's, then floored and corrected where it is half
 * way; a zero quotient keeps the sign of u/v), trunc of the quotient */
static inline DP_HD float
dps_div_floor(float u, float v, float al)
{
	float m, d, f;

	(void)al;
	if (v == 0.0f)
		return u / v;
	m = fmodf(u, v);
	d = (u - m) / v;
	if (m != 0.0f && (v < 0.0f) != (m < 0.0f))
		d -= 1.0f;
	if (d == 0.0f)
		return copysignf(0.0f, u / v);
	f = floorf(d);
	return d - f > 0.5f ? f + 1.0f : f;
}
DPS_B(div_trunc, truncf(u / v))
DPS_B(maximum, u != u || u > v ? u : v)            /* NaN wins */
DPS_B(minimum, u != u || u < v ? u : v)
DPS_B(atan2, atan2f(u, v))
DPS_B(hypot, hypotf(u, v))
DPS_B(copysign, copysignf(u, v))
/* the integer forms of the Fbinaryn formulas (C's % truncates, as fmod) */
#define DPS_BI(name, expr) \
	static inline DP_HD int64_t dps_##name##_i64(int64_t u, int64_t v, int64_t al) \
	{ (void)al; return (expr); }
DPS_BI(fmod, v == 0 ? 0 : v == -1 ? 0 : u % v)
DPS_BI(remainder, v == 0 || v == -1 ? 0 : (u % v != 0 && ((u % v < 0) != (v < 0))) ? u % v + v : u % v)
/* integers: a division by 0 gives 0 (PyTorch raises); by -1 the negation, wrapping */
DPS_BI(div_floor, v == 0 ? 0 : v == -1 ? (int64_t)(0 - (uint64_t)u) :
       u / v - (u % v != 0 && (u < 0) != (v < 0)))
DPS_BI(div_trunc, v == 0 ? 0 : v == -1 ? (int64_t)(0 - (uint64_t)u) : u / v)
DPS_BI(maximum, u > v ? u : v)
DPS_BI(minimum, u < v ? u : v)

/* ---- random numbers (aten.rand, aten.randn; formats/ops.md, "Random
 * numbers") ----
 * Counter-based: element i of an op with attributes seed and stream is a
 * function of (seed, stream, i) alone, the same on the cpu and on cuda.
 * SplitMix64 (Steele, Lea and Flood, 2014; runtime/sample.c's generator):
 * the op's key is SplitMix64's output number stream+1 from the state seed,
 * element i's 64 bits its output number i+1 from the state key.  The
 * finalizer is a bijection of 64-bit words and the states key + (i+1)·γ
 * differ for distinct i (γ odd), so the bits of distinct elements differ. */
#define DPS_GAMMA 0x9E3779B97F4A7C15ull
static inline DP_HD uint64_t
dps_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}
static inline DP_HD uint64_t
dps_rbits(int64_t seed, int64_t stream, int64_t i)
{
	uint64_t key = dps_mix64((uint64_t)seed + ((uint64_t)stream + 1) * DPS_GAMMA);
	return dps_mix64(key + ((uint64_t)i + 1) * DPS_GAMMA);
}
/* uniform in [0, 1): the top 24 bits (f32) or 53 bits (f64), exactly */
static inline DP_HD float
dps_rand_f32(int64_t seed, int64_t stream, int64_t i)
{
	return (float)(dps_rbits(seed, stream, i) >> 40) * 0x1p-24f;
}
static inline DP_HD double
dps_rand_f64(int64_t seed, int64_t stream, int64_t i)
{
	return (double)(dps_rbits(seed, stream, i) >> 11) * 0x1p-53;
}
/* standard normal, Box-Muller in f64 from one 64-bit draw: u1 in (0, 1]
 * from the high 32 bits, u2 in [0, 1) from the low ones;
 * sqrt(-2 log u1)·cos(2π u2), so |x| <= 6.67.  cuda's log and cos differ
 * from the C library's by an ulp of f64 at most: the values agree but
 * where the f64 result falls within an ulp of an f32 rounding boundary. */
static inline DP_HD double
dps_randn_f64(int64_t seed, int64_t stream, int64_t i)
{
	uint64_t b = dps_rbits(seed, stream, i);
	double u1 = (double)((b >> 32) + 1) * 0x1p-32, u2 = (double)(b & 0xffffffffu) * 0x1p-32;

	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
static inline DP_HD float
dps_randn_f32(int64_t seed, int64_t stream, int64_t i)
{
	return (float)dps_randn_f64(seed, stream, i);
}

#undef DPS_U
#undef DPS_UI
#undef DPS_B
#undef DPS_BI
/* ---- scans (runtime/elem.c's dprt_scan, dpops.cuh's dps_scan) ---- */

/* log(exp(s) + exp(v)) in double, the larger taken out (aten.logcumsumexp's
 * step): two equal infinities give it back, a NaN stays NaN. */
static inline DP_HD double
dps_logaddexp(double s, double v)
{
	double lo = s < v ? s : v, hi = s < v ? v : s;

	if (s != s || v != v)
		return s + v;
	if (lo == hi && isinf(lo))
		return lo;
	return hi + log1p(exp(lo - hi));
}

#endif
