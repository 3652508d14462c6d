/* fastdiv.cuh: division by a divisor known at launch (a shape), as a
 * multiply-high, an add and a shift instead of the ~20 instructions of an
 * integer division: q = (umulhi(n, m) + n) >> s with s = ceil(log2 d) and
 * m = floor(2^32·(2^s - d)/d) + 1, exact for 0 <= n < 2^31 and
 * 1 <= d < 2^31 (the kernels' indices are checked to fit an int). */
#ifndef DPRT_FASTDIV_CUH
#define DPRT_FASTDIV_CUH

struct dprt_div {
	unsigned d, m, s;
};

static inline dprt_div
dprt_mkdiv(long long d)
{
	dprt_div f;
	unsigned s = 0;

	while ((1ULL << s) < (unsigned long long)d)
		s++;
	f.d = (unsigned)d;
	f.s = s;
	f.m = (unsigned)(((1ULL << 32) * ((1ULL << s) - (unsigned long long)d)) /
	                 (unsigned long long)d + 1);
	return f;
}

/* n / f.d */
static __device__ __forceinline__ int
dprt_q(const dprt_div &f, int n)
{
	unsigned t = __umulhi((unsigned)n, f.m);

	return (int)((t + (unsigned)n) >> f.s);
}

/* n % f.d, given q = n / f.d */
static __device__ __forceinline__ int
dprt_r(const dprt_div &f, int n, int q)
{
	return n - q * (int)f.d;
}

#endif
