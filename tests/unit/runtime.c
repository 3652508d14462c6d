/* runtime.c: TAP tests of the runtime: kernels against double-precision
 * references, casts, .npy I/O and its error text, and the dprt_main CLI. */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dprt.h"
#include "dpir.h"	/* only the DP_DTYPES list, to check the numbering */
#include "tap.h"

static char dir[256];	/* scratch folder for files */

/* Checks a string result; prints both on mismatch. */
static void
okstr(const char *got, const char *want, const char *name)
{
	if (!ok(strcmp(got, want) == 0, "%s", name))
		printf("#   got:  '%s'\n#   want: '%s'\n", got, want);
}

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static float
frnd(void)	/* uniform in [-1, 1) */
{
	return (float)((double)rnd() / 2147483648.0 - 1.0);
}

static char *
path(const char *name)
{
	static char buf[8][512];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
	return buf[i];
}

static void
writefile(const char *p, const void *data, size_t n)
{
	FILE *f = fopen(p, "wb");

	if (!f || fwrite(data, 1, n, f) != n) {
		printf("Bail out! cannot write %s\n", p);
		exit(1);
	}
	fclose(f);
}

/* ---- independent decoders (no runtime code) ---- */

static double
f16val(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	double v;

	if (e == 31)
		v = m ? NAN : INFINITY;
	else if (e == 0)
		v = ldexp(m, -24);
	else
		v = ldexp(1024 + m, e - 25);
	return h & 0x8000 ? -v : v;
}

static double
bf16val(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* Element i of x as a double, for any dtype. */
static double
getd(int dt, const void *x, int64_t i)
{
	switch (dt) {
	case DPRT_U8: return ((const uint8_t *)x)[i];
	case DPRT_I8: return ((const int8_t *)x)[i];
	case DPRT_I16: return ((const int16_t *)x)[i];
	case DPRT_I32: return ((const int32_t *)x)[i];
	case DPRT_I64: return (double)((const int64_t *)x)[i];
	case DPRT_F16: return f16val(((const uint16_t *)x)[i]);
	case DPRT_F32: return ((const float *)x)[i];
	case DPRT_F64: return ((const double *)x)[i];
	case DPRT_BOOL: return ((const uint8_t *)x)[i];
	case DPRT_BF16: return bf16val(((const uint16_t *)x)[i]);
	}
	return NAN;
}

/* ---- tables ---- */

static void
test_tables(void)
{
#define N1(e, n, s, p) n,
#define S1(e, n, s, p) s,
	static const char *const names[] = { DP_DTYPES(N1) };
	static const int sizes[] = { DP_DTYPES(S1) };
	dprt_io io = { "x", DPRT_F32, 4, { 1, 32, 32, 3 } };
	dprt_io big = { "x", DPRT_I64, 3, { 1LL << 30, 1LL << 30, 1LL << 30 } };
	dprt_io neg = { "x", DPRT_U8, 2, { 2, -1 } };
	char buf[64];
	int i, same;

	same = (int)DP_NDTYPE == (int)DPRT_NDTYPE;
	for (i = 0; same && i < DPRT_NDTYPE; i++)
		same = strcmp(names[i], dprt_dtype_name[i]) == 0 && sizes[i] == dprt_dtype_size[i];
	ok(same, "dtype tables match the IR's DP_DTYPES");
	ok(dprt_io_bytes(&io) == 12288, "io_bytes f32[1,32,32,3] = 12288");
	ok(dprt_io_bytes(&big) == 0, "io_bytes overflow gives 0");
	ok(dprt_io_bytes(&neg) == 0, "io_bytes negative dim gives 0");
	okstr(dprt_shape_str(buf, sizeof buf, 4, io.dim), "[1,32,32,3]", "shape_str rank 4");
	okstr(dprt_shape_str(buf, sizeof buf, 0, io.dim), "[]", "shape_str rank 0");
}

/* ---- sgemm ---- */

enum { BNONE, BFULL, BROW, BCOL };

/* One GEMM against a double reference: ta/tb store A/B transposed; c0 mode;
 * C has 3 columns of padding that must stay untouched. */
static void
gemm1(int64_t M, int64_t N, int64_t K, int ta, int tb, int cstride, float alpha,
      float beta, int bias)
{
	static const char *bn[] = { "none", "full", "row", "col" };
	int64_t rsa, csa, rsb, csb, rs0 = 0, cs0 = 0, ldc = N + 3, i, j, k;
	float *A, *B, *C0, *C;
	double s, me = 0, mr = 0;
	int pad = 1;

	A = malloc(sizeof *A * (size_t)(M * K * cstride + 1));
	B = malloc(sizeof *B * (size_t)(K * N + 1));
	C0 = malloc(sizeof *C0 * (size_t)(M * N + 1));
	C = malloc(sizeof *C * (size_t)(M * ldc + 1));
	for (i = 0; i < M * K * cstride; i++)
		A[i] = frnd();
	for (i = 0; i < K * N; i++)
		B[i] = frnd();
	for (i = 0; i < M * N; i++)
		C0[i] = frnd();
	for (i = 0; i < M * ldc; i++)
		C[i] = 1234.5f;
	/* A is M×K, stored [M,K] (or [K,M] when ta), every cstride-th float */
	rsa = (ta ? 1 : K) * cstride;
	csa = (ta ? M : 1) * cstride;
	rsb = tb ? 1 : N;
	csb = tb ? K : 1;
	if (bias == BFULL)
		rs0 = N, cs0 = 1;
	else if (bias == BROW)
		rs0 = 0, cs0 = 1;
	else if (bias == BCOL)
		rs0 = 1, cs0 = 0;
	dprt_sgemm(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta,
	           bias == BNONE ? NULL : C0, rs0, cs0, C, ldc);
	for (i = 0; i < M; i++) {
		for (j = 0; j < N; j++) {
			s = 0;
			for (k = 0; k < K; k++)
				s += (double)A[i * rsa + k * csa] * B[k * rsb + j * csb];
			s *= alpha;
			if (bias != BNONE)
				s += (double)beta * C0[i * rs0 + j * cs0];
			me = fmax(me, fabs(s - C[i * ldc + j]));
			if (C[i * ldc + j] != C[i * ldc + j])
				me = INFINITY;
			mr = fmax(mr, fabs(s));
		}
		for (j = N; j < ldc; j++)
			pad &= C[i * ldc + j] == 1234.5f;
	}
	if (!ok(me <= 1e-5 * (mr > 0 ? mr : 1) && pad,
	        "sgemm M=%lld N=%lld K=%lld%s%s%s alpha=%g beta=%g c0=%s",
	        (long long)M, (long long)N, (long long)K, ta ? " A^T" : "",
	        tb ? " B^T" : "", cstride > 1 ? " A-strided" : "", alpha, beta, bn[bias]))
		printf("#   max|err| %g max|ref| %g padding %s\n", me, mr, pad ? "kept" : "overwritten");
	free(A);
	free(B);
	free(C0);
	free(C);
}

static void
test_gemm(void)
{
	gemm1(1, 1, 1, 0, 0, 1, 1, 0, BNONE);
	gemm1(7, 5, 3, 0, 0, 1, 1, 0, BNONE);
	gemm1(13, 17, 19, 1, 0, 1, 1, 1, BROW);
	gemm1(6, 8, 256, 0, 1, 1, 1, 1, BFULL);
	gemm1(64, 64, 64, 1, 1, 1, 0.5f, 2, BFULL);
	gemm1(100, 33, 300, 0, 0, 1, 1, 1, BCOL);	/* K > KC */
	gemm1(130, 1030, 20, 0, 1, 1, 1, 1, BROW);	/* M > MC, N > NC */
	gemm1(121, 9, 513, 1, 0, 1, -1.5f, 0.25f, BFULL);
	gemm1(1, 512, 3072, 0, 1, 1, 1, 1, BROW);	/* matrix-vector, weight [N,K] */
	gemm1(1, 512, 3072, 0, 0, 1, 1, 1, BROW);	/* matrix-vector, B [K,N] */
	gemm1(1, 37, 1000, 0, 1, 2, 1, 0, BNONE);	/* strided row */
	gemm1(1, 10, 7, 0, 1, 1, 2, 1, BFULL);
	gemm1(37, 1, 1000, 0, 1, 1, 1, 1, BFULL);	/* one column */
	gemm1(37, 1, 1000, 1, 0, 1, 1, 1, BROW);
	gemm1(2, 3, 0, 0, 0, 1, 1, 3, BFULL);		/* K = 0 */
	gemm1(3, 4, 5, 0, 0, 1, 1, 0, BFULL);		/* beta 0 ignores C0 */
	gemm1(50, 70, 2000, 0, 1, 1, 1, 1, BROW);
	gemm1(8, 100, 777, 0, 1, 1, 0.5f, 1, BCOL);	/* few rows, weight [N,K] */
	gemm1(32, 65, 70, 0, 1, 1, 1, -1, BFULL);
	gemm1(33, 65, 70, 0, 1, 1, 1, 1, BROW);
	gemm1(5, 3, 2, 0, 1, 2, 1, 1, BROW);
}

/* ---- permute ---- */

static void
perm1(int rank, const int64_t *dim, const int64_t *perm, int es)
{
	int64_t n, i, k, xs[8], ys[8], yd[8], idx, rem, xo;
	unsigned char *x, *y;
	char d[64], p[64];
	int good, a;

	n = 1;
	for (a = rank - 1; a >= 0; a--) {
		xs[a] = n;
		n *= dim[a];
	}
	for (a = 0; a < rank; a++)
		yd[a] = dim[perm[a]];
	k = 1;
	for (a = rank - 1; a >= 0; a--) {
		ys[a] = k;
		k *= yd[a];
	}
	x = calloc((size_t)(n * es) + 1, 1);
	y = calloc((size_t)(n * es) + 1, 1);
	for (i = 0; i < n * es; i++)
		x[i] = (unsigned char)rnd();
	dprt_permute(y, x, es, rank, dim, perm);
	good = 1;
	for (idx = 0; idx < n && good; idx++) {
		rem = idx;
		xo = 0;
		for (a = 0; a < rank; a++) {
			xo += rem / ys[a] * xs[perm[a]];
			rem %= ys[a];
		}
		good = memcmp(y + idx * es, x + xo * es, (size_t)es) == 0;
	}
	dprt_shape_str(d, sizeof d, rank, dim);
	dprt_shape_str(p, sizeof p, rank, perm);
	ok(good, "permute %s by %s, %d-byte elements", d, p, es);
	free(x);
	free(y);
}

/* dprt_memcpy: sizes around its 2 MiB threshold and its 1 MiB chunks, no
 * pool and a pool of 3, copied into a larger buffer whose bytes past n
 * stay as they were. */
static void
test_memcpy(void)
{
	static const int64_t sizes[] = { 0, 1, 1000, (2 << 20) - 1, 2 << 20, (2 << 20) + 1,
	                                 (5 << 20) + 12345 };
	int64_t max = (5 << 20) + 12345 + 64, i;
	unsigned char *x = malloc((size_t)max), *y = malloc((size_t)max);
	dprt_pool *pool = NULL;
	char err[200];
	int p, k;

	if (!x || !y || dprt_pool_create(&pool, 3, err, sizeof err) != 0) {
		ok(0, "memcpy: buffers and a pool of 3");
		free(x), free(y);
		return;
	}
	for (i = 0; i < max; i++)
		x[i] = (unsigned char)(i * 2654435761u >> 13);
	for (p = 0; p < 2; p++)
		for (k = 0; k < (int)(sizeof sizes / sizeof *sizes); k++) {
			int64_t n = sizes[k];
			int good = 1;

			memset(y, 0xa5, (size_t)max);
			if (p)
				dprt_pool_enter(pool);
			dprt_memcpy(y, x, n);
			if (p)
				dprt_pool_leave(pool);
			for (i = 0; i < max && good; i++)
				good = y[i] == (i < n ? x[i] : 0xa5);
			ok(good, "dprt_memcpy of %lld bytes%s: those bytes, nothing past them",
			   (long long)n, p ? " on a pool of 3" : "");
		}
	dprt_pool_destroy(pool);
	free(x), free(y);
}

static void
test_permute(void)
{
	static const struct { int rank; int64_t dim[6], perm[6]; int es; } t[] = {
		{ 4, { 1, 32, 32, 3 }, { 0, 3, 1, 2 }, 4 },
		{ 4, { 1, 3, 32, 32 }, { 0, 2, 3, 1 }, 4 },
		{ 2, { 37, 53 }, { 1, 0 }, 4 },
		{ 2, { 37, 53 }, { 0, 1 }, 8 },
		{ 3, { 5, 6, 7 }, { 2, 0, 1 }, 1 },
		{ 3, { 5, 6, 7 }, { 1, 0, 2 }, 2 },
		{ 5, { 2, 3, 1, 4, 5 }, { 4, 2, 0, 3, 1 }, 8 },
		{ 4, { 3, 4, 5, 6 }, { 3, 2, 1, 0 }, 3 },
		{ 3, { 2, 40, 17 }, { 0, 2, 1 }, 12 },
		{ 6, { 2, 2, 3, 2, 3, 2 }, { 5, 1, 3, 0, 4, 2 }, 4 },
		{ 1, { 9 }, { 0 }, 4 },
		{ 3, { 4, 0, 5 }, { 2, 1, 0 }, 4 },
	};
	size_t i;

	for (i = 0; i < sizeof t / sizeof *t; i++)
		perm1(t[i].rank, t[i].dim, t[i].perm, t[i].es);
}

/* ---- softmax, argmax ---- */

static void
test_softmax(void)
{
	static const struct { int64_t o, n, in; float off; } t[] = {
		{ 2, 10, 1, 0 }, { 3, 7, 5, 0 }, { 1, 1000, 1, 0 }, { 2, 4, 300, 0 },
		{ 1, 5, 1, 1000 }, { 2, 6, 3, -1000 },
	};
	float x[4000], y[4000];
	double m, s, e, me;
	int64_t o, k, i, n;
	size_t c;

	for (c = 0; c < sizeof t / sizeof *t; c++) {
		n = t[c].o * t[c].n * t[c].in;
		for (i = 0; i < n; i++)
			x[i] = 8 * frnd() + t[c].off;
		dprt_softmax_f32(y, x, t[c].o, t[c].n, t[c].in);
		me = 0;
		for (o = 0; o < t[c].o; o++)
			for (i = 0; i < t[c].in; i++) {
				m = -INFINITY;
				for (k = 0; k < t[c].n; k++)
					m = fmax(m, x[(o * t[c].n + k) * t[c].in + i]);
				s = 0;
				for (k = 0; k < t[c].n; k++)
					s += exp(x[(o * t[c].n + k) * t[c].in + i] - m);
				for (k = 0; k < t[c].n; k++) {
					int64_t j = (o * t[c].n + k) * t[c].in + i;
					e = fabs(exp(x[j] - m) / s - y[j]);
					me = y[j] == y[j] ? fmax(me, e) : INFINITY;
				}
			}
		ok(me <= 1e-6, "softmax [%lld,%lld,%lld] values around %g (max|err| %.2g)",
		   (long long)t[c].o, (long long)t[c].n, (long long)t[c].in, t[c].off, me);
	}
	x[0] = 1, x[1] = NAN, x[2] = 3;
	dprt_softmax_f32(y, x, 1, 3, 1);
	ok(isnan(y[0]) && isnan(y[1]) && isnan(y[2]), "softmax of a row with NaN is NaN");
}

static void
test_argmax(void)
{
	float a[] = { 1, 5, 2, 5, -1 };			/* tie: first */
	float b[] = { -3, -2, -7 };
	float c[] = { 1, NAN, 9, NAN };			/* first NaN */
	/* [2, 3, 2]: along the middle axis */
	float d[] = { 1, 9, 4, 9, 4, 2,   -1, -1, -1, -5, -1, 7 };
	int64_t y[8];

	dprt_argmax_f32(y, a, 1, 5, 1);
	ok(y[0] == 1, "argmax tie picks the first (got %lld)", (long long)y[0]);
	dprt_argmax_f32(y, b, 1, 3, 1);
	ok(y[0] == 1, "argmax of negatives");
	dprt_argmax_f32(y, c, 1, 4, 1);
	ok(y[0] == 1, "argmax NaN counts as the maximum");
	dprt_argmax_f32(y, d, 2, 3, 2);
	ok(y[0] == 1 && y[1] == 0 && y[2] == 0 && y[3] == 2,
	   "argmax [2,3,2] middle axis (got %lld %lld %lld %lld)", (long long)y[0],
	   (long long)y[1], (long long)y[2], (long long)y[3]);
	dprt_argmax_f32(y, a, 5, 1, 1);
	ok(y[0] == 0 && y[4] == 0, "argmax over a size-1 axis");
}

/* ---- binary, normalize, relu ---- */

static void
bin1(int op, float alpha, int rank, const int64_t *dim, const int64_t *adim,
     const int64_t *bdim, const char *name)
{
	int64_t sa[8], sb[8], n, na, nb, i, r, ia, ib, rem, s;
	float a[512], b[512], y[512];
	double av, bv, ref, me;
	int k;

	n = na = nb = 1;
	for (k = rank - 1; k >= 0; k--) {
		sa[k] = adim[k] == 1 ? 0 : na;
		sb[k] = bdim[k] == 1 ? 0 : nb;
		na *= adim[k];
		nb *= bdim[k];
		n *= dim[k];
	}
	for (i = 0; i < na; i++)
		a[i] = frnd();
	for (i = 0; i < nb; i++)
		b[i] = frnd() + (op == DPRT_DIV ? 3 : 0);
	dprt_binary_f32(op, y, a, sa, b, sb, rank, dim, alpha);
	me = 0;
	for (i = 0; i < n; i++) {
		rem = i;
		ia = ib = 0;
		for (k = rank - 1; k >= 0; k--) {
			r = rem % dim[k];
			rem /= dim[k];
			s = r;
			ia += s * sa[k];
			ib += s * sb[k];
		}
		av = a[ia];
		bv = b[ib];
		ref = op == DPRT_ADD ? av + alpha * bv : op == DPRT_SUB ? av - bv :
		      op == DPRT_MUL ? av * bv : av / bv;
		me = fmax(me, fabs(ref - y[i]));
	}
	ok(me <= 1e-6, "binary %s (max|err| %.2g)", name, me);
}

static void
test_binary(void)
{
	int64_t d234[] = { 2, 3, 4 }, d131[] = { 1, 3, 1 }, d111[] = { 1, 1, 1 };
	int64_t d114[] = { 1, 1, 4 }, d8[] = { 5, 1, 8 }, d81[] = { 5, 7, 1 };
	int64_t d78[] = { 1, 7, 8 }, d578[] = { 5, 7, 8 }, d1[] = { 1 };

	bin1(DPRT_ADD, 1, 3, d234, d234, d234, "add contiguous [2,3,4]");
	bin1(DPRT_ADD, 0.5f, 3, d234, d234, d131, "add alpha=0.5 [2,3,4] + [1,3,1]");
	bin1(DPRT_SUB, 1, 3, d234, d131, d234, "sub [1,3,1] - [2,3,4]");
	bin1(DPRT_MUL, 1, 3, d234, d234, d111, "mul by a broadcast scalar");
	bin1(DPRT_DIV, 1, 3, d234, d234, d114, "div by a row [1,1,4]");
	bin1(DPRT_MUL, 1, 3, d578, d81, d78, "mul [5,7,1] * [1,7,8] outer");
	bin1(DPRT_ADD, 2, 3, d578, d8, d578, "add [5,1,8] + [5,7,8], alpha 2");
	bin1(DPRT_SUB, 1, 1, d1, d1, d1, "sub one element");
	bin1(DPRT_DIV, 1, 0, d1, d1, d1, "div rank 0");
}

static void
test_normalize(void)
{
	static const float mean[3] = { 0.485f, 0.456f, 0.406f };
	static const float sd[3] = { 0.229f, 0.224f, 0.225f };
	uint8_t u[2 * 3 * 5];
	float f[2 * 3 * 5], y[2 * 3 * 5];
	double me, ref;
	int i, c;

	for (i = 0; i < 30; i++) {
		u[i] = (uint8_t)rnd();
		f[i] = 255 * frnd();
	}
	/* NHWC: [10 pixels, 3 channels, inner 1] */
	dprt_normalize(y, u, DPRT_U8, 10, 3, 1, 1.0f / 255, mean, sd);
	me = 0;
	for (i = 0; i < 30; i++) {
		c = i % 3;
		ref = (u[i] / 255.0 - mean[c]) / sd[c];
		me = fmax(me, fabs(ref - y[i]));
	}
	ok(me <= 1e-5, "normalize u8 channels-last (max|err| %.2g)", me);
	/* NCHW: [2, 3 channels, 5] */
	dprt_normalize(y, f, DPRT_F32, 2, 3, 5, 0.5f, mean, sd);
	me = 0;
	for (i = 0; i < 30; i++) {
		c = i / 5 % 3;
		ref = (f[i] * 0.5 - mean[c]) / sd[c];
		me = fmax(me, fabs(ref - y[i]) / fmax(1, fabs(ref)));
	}
	ok(me <= 1e-6, "normalize f32 channels-first (max rel err %.2g)", me);
}

static void
test_relu(void)
{
	float x[7] = { -1, 2, 0, -0.0f, NAN, INFINITY, -INFINITY }, y[7];

	dprt_relu_f32(y, x, 7);
	ok(y[0] == 0 && y[1] == 2 && y[2] == 0 && y[3] == 0 && isnan(y[4]) &&
	   y[5] == INFINITY && y[6] == 0, "relu clamps negatives, keeps NaN and inf");
}

/* ---- casts ---- */

/* The correctly rounded f16 of x, by search over every finite f16. */
static uint16_t
f16ref(double x)
{
	uint16_t lo, hi, mid, sign;
	double dl, dh;

	if (x != x)
		return 0x7e00;
	sign = signbit(x) ? 0x8000 : 0;
	x = fabs(x);
	if (x >= 65520)
		return sign | 0x7c00;
	lo = 0;
	hi = 0x7bff;
	while (hi - lo > 1) {	/* f16val(lo) <= x < f16val(hi) */
		mid = (uint16_t)((lo + hi) / 2);
		if (f16val(mid) <= x)
			lo = mid;
		else
			hi = mid;
	}
	if (x >= f16val(hi))
		lo = hi;
	if (lo == 0x7bff && x > 65504)
		hi = 0x7c00, dh = 65536;	/* the overflow threshold acts as a neighbour */
	else if (lo != hi)
		dh = f16val(hi);
	else
		return sign | lo;
	dl = x - f16val(lo);
	dh -= x;
	if (dl < dh || (dl == dh && !(lo & 1)))
		return sign | lo;
	return sign | hi;
}

static void
test_cast(void)
{
	static const struct { float f; uint16_t h; } kh[] = {
		{ 1.0f, 0x3c00 }, { -2.0f, 0xc000 }, { 65504.0f, 0x7bff },
		{ 65519.0f, 0x7bff }, { 65520.0f, 0x7c00 }, { 0x1p-24f, 0x0001 },
		{ 0x1p-25f, 0x0000 }, { 0x1.8p-25f, 0x0001 }, { 0x1p-14f, 0x0400 },
		{ 1.0f + 0x1p-11f, 0x3c00 }, { 1.0f + 0x3p-11f, 0x3c02 },
		{ -0.0f, 0x8000 }, { 0.333333343f, 0x3555 }, { INFINITY, 0x7c00 },
		{ 1e10f, 0x7c00 }, { 0x1.ffcp-15f, 0x0400 }, { 0x1.ff8p-15f, 0x03ff },
	};
	static const struct { uint32_t f; uint16_t h; } kb[] = {
		{ 0x3f800000, 0x3f80 }, { 0x3f808000, 0x3f80 }, { 0x3f818000, 0x3f82 },
		{ 0x3f808001, 0x3f81 }, { 0x7f7fffff, 0x7f80 }, { 0xc0490fdb, 0xc049 },
		{ 0x00000001, 0x0000 }, { 0x80000000, 0x8000 },
	};
	static const int vals[] = { 0, 1, 2, 5, 100, 127 };
	unsigned char src[64], mid[64];
	uint16_t h, h2;
	float f;
	double d, dh;
	int64_t i64;
	int i, j, k, good, bad, s, dt;
	uint32_t u;
	char note[128];

	for (good = 1, i = 0; i < (int)(sizeof kh / sizeof *kh); i++) {
		dprt_cast(&h, DPRT_F16, &kh[i].f, DPRT_F32, 1);
		if (h != kh[i].h) {
			printf("# f16(%a) = 0x%04x, want 0x%04x\n", kh[i].f, h, kh[i].h);
			good = 0;
		}
	}
	ok(good, "f32 -> f16 known values (1.0 = 0x3c00, ties to even, subnormals, overflow)");
	f = NAN;
	dprt_cast(&h, DPRT_F16, &f, DPRT_F32, 1);
	ok((h & 0x7c00) == 0x7c00 && (h & 0x3ff), "f32 NaN -> f16 NaN");
	for (good = 1, i = 0; i < (int)(sizeof kb / sizeof *kb); i++) {
		memcpy(&f, &kb[i].f, 4);
		dprt_cast(&h, DPRT_BF16, &f, DPRT_F32, 1);
		if (h != kb[i].h) {
			printf("# bf16(0x%08x) = 0x%04x, want 0x%04x\n", kb[i].f, h, kb[i].h);
			good = 0;
		}
	}
	ok(good, "f32 -> bf16 known values (ties to even, overflow)");
	u = 0x7fc00001;
	memcpy(&f, &u, 4);
	dprt_cast(&h, DPRT_BF16, &f, DPRT_F32, 1);
	ok((h & 0x7f80) == 0x7f80 && (h & 0x7f), "f32 NaN -> bf16 NaN");

	/* every f16: decodes exactly and round-trips */
	for (bad = 0, k = 0; k < 65536; k++) {
		h = (uint16_t)k;
		dprt_cast(&f, DPRT_F32, &h, DPRT_F16, 1);
		dprt_cast(&h2, DPRT_F16, &f, DPRT_F32, 1);
		d = f16val(h);
		if (d == d) {
			if ((double)f != d || h2 != h || !signbit(f) != !signbit(d))
				bad++;
		} else if (f == f || (h2 & 0x7c00) != 0x7c00 || !(h2 & 0x3ff)) {
			bad++;
		}
	}
	ok(bad == 0, "all 65536 f16 values decode exactly and round-trip (%d bad)", bad);
	for (bad = 0, k = 0; k < 65536; k++) {
		h = (uint16_t)k;
		dprt_cast(&f, DPRT_F32, &h, DPRT_BF16, 1);
		dprt_cast(&h2, DPRT_BF16, &f, DPRT_F32, 1);
		d = bf16val(h);
		if (d == d ? (double)f != d || h2 != h : f == f)
			bad++;
	}
	ok(bad == 0, "all 65536 bf16 values decode exactly and round-trip (%d bad)", bad);
	/* random floats in and around the f16 range against a search */
	for (bad = 0, k = 0; k < 200000; k++) {
		u = (rnd() & 0x80000000u) | (0x30000000u + rnd() % 0x18000000u);
		memcpy(&f, &u, 4);
		dprt_cast(&h, DPRT_F16, &f, DPRT_F32, 1);
		if (h != f16ref(f) && bad++ < 3)
			printf("# f16(%a) = 0x%04x, want 0x%04x\n", f, h, f16ref(f));
	}
	ok(bad == 0, "200000 random f32 -> f16 match a correctly rounded search");
	for (bad = 0, k = 0; k < 200000; k++) {
		u = rnd() ^ rnd() << 7;
		memcpy(&f, &u, 4);
		if (f != f)
			continue;
		dprt_cast(&h, DPRT_BF16, &f, DPRT_F32, 1);
		h2 = (uint16_t)(u >> 16);	/* truncated; h2+1 the next one up */
		if ((h2 & 0x7fff) >= 0x7f7f)	/* next one up is inf */
			continue;
		d = fabs((double)f) - fabs(bf16val(h2));
		dh = fabs(bf16val((uint16_t)(h2 + 1))) - fabs((double)f);
		s = d < dh || (d == dh && !(h2 & 1)) ? 0 : 1;
		if (h != (uint16_t)(h2 + s))
			bad++;
	}
	ok(bad == 0, "200000 random f32 -> bf16 round to the nearer neighbour, ties even");
	/* f64 sources round once: 1 + 2^-11 + 2^-40 is just above a tie */
	d = 1.0 + 0x1p-11 + 0x1p-40;
	dprt_cast(&h, DPRT_F16, &d, DPRT_F64, 1);
	ok(h == 0x3c01, "f64 -> f16 without double rounding (0x%04x)", h);
	d = 1.0 + 0x1p-8 + 0x1p-30;
	dprt_cast(&h, DPRT_BF16, &d, DPRT_F64, 1);
	ok(h == 0x3f81, "f64 -> bf16 without double rounding (0x%04x)", h);
	i64 = (1LL << 40) + (1LL << 32) + 1;		/* bf16: just above a tie */
	dprt_cast(&h, DPRT_BF16, &i64, DPRT_I64, 1);
	ok(h == 0x5381, "i64 -> bf16 rounds once (0x%04x)", h);

	/* float -> integer: truncation and the defined out-of-range cases */
	{
		float fs[] = { 2.7f, -2.7f, NAN, 1e20f, -1e20f, -1.0f, 300.0f };
		int32_t i32[7];
		int64_t i64s[7];
		uint8_t u8[7], b[7];
		dprt_cast(i32, DPRT_I32, fs, DPRT_F32, 2);
		dprt_cast(i64s, DPRT_I64, fs, DPRT_F32, 5);
		dprt_cast(u8, DPRT_U8, fs, DPRT_F32, 7);
		dprt_cast(b, DPRT_BOOL, fs, DPRT_F32, 7);
		ok(i32[0] == 2 && i32[1] == -2, "f32 -> i32 truncates toward zero");
		ok(i64s[2] == 0 && i64s[3] == INT64_MAX && i64s[4] == INT64_MIN,
		   "f32 -> i64: NaN is 0, out of range saturates");
		ok(u8[5] == 255 && u8[6] == 44, "f32 -> u8 wraps like PyTorch (-1 -> 255, 300 -> 44)");
		fs[1] = 0;
		dprt_cast(b, DPRT_BOOL, fs, DPRT_F32, 3);
		ok(b[0] == 1 && b[1] == 0 && b[2] == 1, "f32 -> bool is nonzero, NaN true");
	}
	{
		uint8_t bsrc[2] = { 2, 0 };
		float fo[2];
		dprt_cast(fo, DPRT_F32, bsrc, DPRT_BOOL, 2);
		ok(fo[0] == 1 && fo[1] == 0, "bool byte 2 -> f32 reads as 1");
	}
	/* all 100 pairs on values every dtype holds */
	for (bad = 0, i = 0; i < DPRT_NDTYPE; i++)
		for (j = 0; j < DPRT_NDTYPE; j++) {
			int nv = i == DPRT_BOOL || j == DPRT_BOOL ? 2 : 6;
			double want[6];
			for (k = 0; k < nv; k++) {
				d = vals[k];
				want[k] = d;
				dprt_cast(src + k * dprt_dtype_size[i], i, &d, DPRT_F64, 1);
			}
			dprt_cast(mid, j, src, i, nv);
			for (k = 0; k < nv; k++)
				if (getd(j, mid, k) != want[k] || getd(i, src, k) != want[k]) {
					snprintf(note, sizeof note, "%s -> %s of %d gave %g",
					         dprt_dtype_name[i], dprt_dtype_name[j], vals[k],
					         getd(j, mid, k));
					if (bad++ < 3)
						printf("# %s\n", note);
				}
		}
	ok(bad == 0, "cast between all 100 dtype pairs keeps small integers");
	{
		int16_t s16 = 300;
		int8_t s8;
		int8_t m5 = -5;
		dt = DPRT_I8;
		dprt_cast(&s8, dt, &s16, DPRT_I16, 1);
		dprt_cast(&f, DPRT_F32, &m5, DPRT_I8, 1);
		ok(s8 == 44 && f == -5.0f, "i16 -> i8 wraps, i8 -> f32 keeps the sign");
	}
}

/* ---- .npy ---- */

static void
test_npy_roundtrip(void)
{
	unsigned char buf[256], back[256];
	int64_t dim[8] = { 2, 3 }, d1[1] = { 5 }, dz[2] = { 0, 3 }, ldim[8];
	static const char u8dict[] = "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }";
	char err[256], hdr[129];
	int dt, good, rank, ldt;
	void *data;
	FILE *f;
	int i;

	for (i = 0; i < (int)sizeof buf; i++)
		buf[i] = (unsigned char)rnd();
	for (dt = 0; dt < DPRT_NDTYPE; dt++) {
		if (dt == DPRT_BOOL)
			for (i = 0; i < 6; i++)
				buf[i] &= 1;
		good = dprt_npy_write(path("rt.npy"), dt, 2, dim, buf, err, sizeof err) == 0;
		memset(back, 0, sizeof back);
		good = good && dprt_npy_read(path("rt.npy"), dt, 2, dim, back, err, sizeof err) == 0;
		good = good && memcmp(buf, back, (size_t)(6 * dprt_dtype_size[dt])) == 0;
		good = good && dprt_npy_load(path("rt.npy"), &ldt, &rank, ldim, &data, err, sizeof err) == 0;
		good = good && ldt == dt && rank == 2 && ldim[0] == 2 && ldim[1] == 3 &&
		       memcmp(data, buf, (size_t)(6 * dprt_dtype_size[dt])) == 0;
		free(good ? data : NULL);
		if (!ok(good, "npy write/read/load round trip %s[2,3]", dprt_dtype_name[dt]))
			printf("#   %s\n", err);
	}
	good = dprt_npy_write(path("r0.npy"), DPRT_F64, 0, dim, buf, err, sizeof err) == 0 &&
	       dprt_npy_read(path("r0.npy"), DPRT_F64, 0, dim, back, err, sizeof err) == 0 &&
	       memcmp(buf, back, 8) == 0;
	ok(good, "npy round trip of a rank-0 f64");
	good = dprt_npy_write(path("r1.npy"), DPRT_I32, 1, d1, buf, err, sizeof err) == 0 &&
	       dprt_npy_read(path("r1.npy"), DPRT_I32, 1, d1, back, err, sizeof err) == 0;
	ok(good, "npy round trip of i32[5]");
	good = dprt_npy_write(path("rz.npy"), DPRT_F32, 2, dz, buf, err, sizeof err) == 0 &&
	       dprt_npy_read(path("rz.npy"), DPRT_F32, 2, dz, back, err, sizeof err) == 0;
	ok(good, "npy round trip of an empty f32[0,3]");

	/* the exact bytes numpy writes for f32[1,10] */
	dim[0] = 1, dim[1] = 10;
	dprt_npy_write(path("h.npy"), DPRT_F32, 2, dim, buf, err, sizeof err);
	f = fopen(path("h.npy"), "rb");
	memset(hdr, 0, sizeof hdr);
	good = f && fread(hdr, 1, 128, f) == 128;
	if (f)
		fclose(f);
	good = good && memcmp(hdr, "\x93NUMPY\x01\x00\x76\x00", 10) == 0 &&
	       memcmp(hdr + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 10), }", 60) == 0 &&
	       hdr[70] == ' ' && hdr[127] == '\n';
	ok(good, "npy header is numpy's, padded to 128 bytes with a newline");
	dprt_npy_write(path("h1.npy"), DPRT_U8, 1, d1, buf, err, sizeof err);
	f = fopen(path("h1.npy"), "rb");
	good = f && fread(hdr, 1, 128, f) == 128;
	if (f)
		fclose(f);
	ok(good && memcmp(hdr + 10, u8dict, strlen(u8dict)) == 0 && hdr[10 + strlen(u8dict)] == ' ',
	   "npy header of u8[5] says (5,)");
}

/* Writes an npy by hand: version v, dict text, then n data bytes. */
static void
handmade(const char *name, int v, const char *dict, const void *data, size_t n)
{
	unsigned char b[1024];
	size_t dl = strlen(dict), hl = v == 1 ? 10 : 12;

	memcpy(b, "\x93NUMPY", 6);
	b[6] = (unsigned char)v;
	b[7] = 0;
	b[8] = (unsigned char)(dl & 255);
	b[9] = (unsigned char)(dl >> 8);
	b[10] = b[11] = 0;
	memcpy(b + hl, dict, dl);
	memcpy(b + hl + dl, data, n);
	writefile(path(name), b, hl + dl + n);
}

/* Reads name expecting failure with message "<path>: want". */
static void
npyerr(const char *name, int dt, int rank, const int64_t *dim, const char *want,
       const char *what)
{
	char err[512], full[512];
	unsigned char dst[4096];

	err[0] = 0;
	snprintf(full, sizeof full, "%s: %s", path(name), want);
	if (dprt_npy_read(path(name), dt, rank, dim, dst, err, sizeof err) == 0)
		snprintf(err, sizeof err, "(read succeeded)");
	okstr(err, full, what);
}

static void
test_npy_errors(void)
{
	int64_t d4[4] = { 1, 32, 32, 3 }, d2[2] = { 2, 2 };
	float v[4] = { 1, 2, 3, 4 }, w[4];
	uint32_t be[2] = { 0x0000803f, 0x00000040 };	/* 1.0f, 2.0f big-endian */
	unsigned char good[256], bytes[256];
	char err[256];
	int64_t d1[1] = { 2 }, ldim[8];
	int i, n, rc, crashfree, rank, dt;
	void *data;
	FILE *f;

	npyerr("none.npy", DPRT_U8, 4, d4, "cannot open: No such file or directory",
	       "npy error: missing file");
	writefile(path("magic.npy"), "PK\x03\x04 this is a zip", 18);
	npyerr("magic.npy", DPRT_U8, 4, d4, "not an .npy file (bad magic)", "npy error: bad magic");
	writefile(path("short.npy"), "\x93NUMPY\x01", 7);
	npyerr("short.npy", DPRT_U8, 4, d4, "truncated header", "npy error: truncated before the header length");
	handmade("trunc.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n", v, 10);
	npyerr("trunc.npy", DPRT_F32, 2, d2, "truncated: 10 of 16 data bytes", "npy error: truncated data");
	handmade("fort.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }\n", v, 16);
	npyerr("fort.npy", DPRT_F32, 2, d2, "fortran_order is True; only C order is supported",
	       "npy error: fortran_order True");
	handmade("f64.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 32, 32, 3), }\n", v, 16);
	npyerr("f64.npy", DPRT_U8, 4, d4, "dtype is f64, expected u8", "npy error: wrong dtype");
	handmade("rank3.npy", 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 32, 32), }\n", v, 16);
	npyerr("rank3.npy", DPRT_U8, 4, d4, "shape is [1,32,32], expected [1,32,32,3]", "npy error: wrong shape");
	npyerr("rank3.npy", DPRT_U8, 3, (int64_t[]){ 1, 32, 31 },
	       "shape is [1,32,32], expected [1,32,31]", "npy error: wrong dimension");
	handmade("c8.npy", 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }\n", v, 16);
	npyerr("c8.npy", DPRT_F32, 1, d1, "unsupported dtype '<c8'", "npy error: unsupported dtype");
	handmade("junk.npy", 1, "descr: f4\n", v, 16);
	npyerr("junk.npy", DPRT_F32, 1, d1, "bad header: expected '{'", "npy error: header not a dict");
	handmade("noshape.npy", 1, "{'descr': '<f4', 'fortran_order': False}\n", v, 16);
	npyerr("noshape.npy", DPRT_F32, 1, d1, "bad header: no 'shape' key", "npy error: missing key");
	handmade("v4.npy", 4, "{}", v, 0);
	npyerr("v4.npy", DPRT_F32, 1, d1, "unsupported .npy format version 4.0", "npy error: unknown version");
	handmade("huge.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }\n", v, 0);
	npyerr("huge.npy", DPRT_F32, 1, d1, "shape is too large", "npy error: size overflow");
	handmade("r9.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }\n", v, 0);
	npyerr("r9.npy", DPRT_F32, 1, d1, "rank exceeds the maximum of 8", "npy error: rank 9");
	handmade("key.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n", v, 8);
	npyerr("key.npy", DPRT_F32, 1, d1, "bad header: unknown key 'x'", "npy error: unknown key");

	/* accepted variants: versions 2.0 and 3.0, Python 2 longs, double
	 * quotes, no trailing comma, big-endian data */
	handmade("v2.npy", 2, "{\"descr\": \"<f4\", \"shape\": (2L, 2L), \"fortran_order\": False}", v, 16);
	rc = dprt_npy_read(path("v2.npy"), DPRT_F32, 2, d2, w, err, sizeof err);
	ok(rc == 0 && memcmp(v, w, 16) == 0, "npy version 2.0, double quotes, 2L, keys in any order");
	handmade("v3.npy", 3, "{'descr':'<f4','fortran_order':False,'shape':(2,)}\n", v, 8);
	rc = dprt_npy_read(path("v3.npy"), DPRT_F32, 1, d1, w, err, sizeof err);
	ok(rc == 0 && w[0] == 1 && w[1] == 2, "npy version 3.0 without spaces");
	handmade("be.npy", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", be, 8);
	rc = dprt_npy_read(path("be.npy"), DPRT_F32, 1, d1, w, err, sizeof err);
	ok(rc == 0 && w[0] == 1 && w[1] == 2, "npy big-endian f4 is byte-swapped");
	handmade("scalar.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n", v, 4);
	rc = dprt_npy_load(path("scalar.npy"), &dt, &rank, ldim, &data, err, sizeof err);
	ok(rc == 0 && dt == DPRT_F32 && rank == 0 && *(float *)data == 1, "npy load of shape ()");
	if (rc == 0)
		free(data);

	/* fuzz: every truncation and 3000 random byte flips of a valid file
	 * either read or fail with a message; none may crash */
	dprt_npy_write(path("fz.npy"), DPRT_F32, 2, d2, v, err, sizeof err);
	f = fopen(path("fz.npy"), "rb");
	n = f ? (int)fread(good, 1, sizeof good, f) : 0;
	if (f)
		fclose(f);
	crashfree = n == 128 + 16;
	for (i = 0; i < n; i++) {
		writefile(path("fz2.npy"), good, (size_t)i);
		err[0] = 0;
		rc = dprt_npy_read(path("fz2.npy"), DPRT_F32, 2, d2, w, err, sizeof err);
		crashfree &= rc == -1 && err[0];
	}
	ok(crashfree, "npy: every truncation of a valid file is an error");
	for (crashfree = 1, i = 0; i < 3000; i++) {
		memcpy(bytes, good, (size_t)n);
		bytes[rnd() % 80] = (unsigned char)rnd();
		if (i % 3 == 0)
			bytes[rnd() % 80] = "(),: '{}0123456789L"[rnd() % 19];
		writefile(path("fz2.npy"), bytes, (size_t)n);
		err[0] = 0;
		rc = dprt_npy_read(path("fz2.npy"), DPRT_F32, 2, d2, w, err, sizeof err);
		crashfree &= rc == 0 || (rc == -1 && err[0]);
		rc = dprt_npy_load(path("fz2.npy"), &dt, &rank, ldim, &data, err, sizeof err);
		if (rc == 0)
			free(data);
	}
	ok(crashfree, "npy: 3000 corrupted headers read or fail cleanly");

	/* writes: no file left behind on failure, no temporaries on success */
	snprintf(err, sizeof err, "x");
	rc = dprt_npy_write(path("nodir/x.npy"), DPRT_F32, 1, d1, v, err, sizeof err);
	{
		char want[512];
		snprintf(want, sizeof want, "%s: cannot create: No such file or directory",
		         path("nodir/x.npy"));
		okstr(err, want, "npy write into a missing folder fails clearly");
	}
}

/* ---- dprt_main ---- */

static int ninit, nfini, nrun, failrun, ninbuf;
static float toybuf[6];   /* the program's own buffer for x (dprt_prog's inbuf) */

static int
toyinit(void **state, const unsigned char *weights, char *err, size_t errn)
{
	ninit++;
	*state = &ninit;
	return 0;
}

static void
toyfini(void *state)
{
	nfini += state == &ninit;
}

/* y = x + 1, idx = argmax(x), big = 0..9 */
static int
toyrun(void *state, const unsigned char *weights, void *arena, const void *const *in,
       void *const *out, char *err, size_t errn)
{
	const float *x = in[0];
	float *y = out[0], *big = out[2];
	int64_t *idx = out[1];
	int i;

	nrun++;
	ninbuf += x == toybuf;
	if (failrun) {
		snprintf(err, errn, "boom");
		return -1;
	}
	if ((uintptr_t)arena % 64)
		return snprintf(err, errn, "arena misaligned"), -1;
	memset(arena, 0, 64);
	for (i = 0; i < 6; i++)
		y[i] = x[i] + 1;
	dprt_argmax_f32(idx, x, 1, 6, 1);
	for (i = 0; i < 10; i++)
		big[i] = (float)i / 2;
	return 0;
}

static const dprt_io toyin[] = { { "x", DPRT_F32, 2, { 2, 3 } } };
static const dprt_io toyout[] = {
	{ "y", DPRT_F32, 2, { 2, 3 } }, { "idx", DPRT_I64, 1, { 1 } },
	{ "big", DPRT_F32, 2, { 1, 10 } },
};
/* where x may be written after init (as a cuda program's page-locked
 * staging): toybuf, for the state init made */
static void *
toyinbuf(void *state, int k)
{
	return k == 0 && state == &ninit ? toybuf : NULL;
}

static const dprt_prog toy = { "toy", 1, 3, toyin, toyout, 0, toyinit, toyfini, toyrun, NULL, NULL,
                                NULL, NULL, NULL, 0, NULL, NULL, toyinbuf };

/* Runs dprt_main with the given arguments (NULL-terminated), capturing
 * stdout and stderr into out and err. */
static int
cli(char *out, size_t on, char *err, size_t en, ...)
{
	char *argv[16];
	int argc, rc, o1, o2, fo, fe;
	va_list ap;
	ssize_t n;

	argv[0] = "toy";
	va_start(ap, en);
	for (argc = 1; argc < 15 && (argv[argc] = va_arg(ap, char *)); argc++)
		;
	va_end(ap);
	fflush(stdout);
	fflush(stderr);
	fo = open(path("stdout"), O_RDWR | O_CREAT | O_TRUNC, 0666);
	fe = open(path("stderr"), O_RDWR | O_CREAT | O_TRUNC, 0666);
	o1 = dup(1);
	o2 = dup(2);
	dup2(fo, 1);
	dup2(fe, 2);
	rc = dprt_main(&toy, argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(o1, 1);
	dup2(o2, 2);
	close(o1);
	close(o2);
	n = pread(fo, out, on - 1, 0);
	out[n > 0 ? n : 0] = 0;
	n = pread(fe, err, en - 1, 0);
	err[n > 0 ? n : 0] = 0;
	close(fo);
	close(fe);
	return rc;
}

static void
test_main(void)
{
	char out[2048], err[2048], want[1024], inarg[600], outarg[600];
	float x[6] = { 1, 7, 3, 7, -2, 0 }, y[6];
	double x64[6] = { 1, 7, 3, 7, -2, 0 };
	int64_t d23[2] = { 2, 3 }, d32[2] = { 3, 2 };
	int rc, good;
	DIR *dp;
	struct dirent *de;

	dprt_npy_write(path("x.npy"), DPRT_F32, 2, d23, x, err, sizeof err);
	dprt_npy_write(path("x64.npy"), DPRT_F64, 2, d23, x64, err, sizeof err);
	dprt_npy_write(path("x32.npy"), DPRT_F32, 2, d32, x, err, sizeof err);
	snprintf(inarg, sizeof inarg, "x=%s", path("x.npy"));
	snprintf(outarg, sizeof outarg, "y=%s", path("y.npy"));

	rc = cli(out, sizeof out, err, sizeof err, NULL);
	ok(rc == 1, "cli: no arguments fails");
	okstr(err, "toy: missing --in x (f32[2,3])\n", "cli: missing input names it with its type");
	rc = cli(out, sizeof out, err, sizeof err, "--in", "z=a.npy", NULL);
	okstr(err, "toy: no input named 'z' (see --help)\n", "cli: unknown input name");
	rc = cli(out, sizeof out, err, sizeof err, "--in", inarg, "--frob", NULL);
	okstr(err, "toy: unknown argument '--frob' (see --help)\n", "cli: unknown option");
	rc = cli(out, sizeof out, err, sizeof err, "--in", inarg, "--in", inarg, NULL);
	okstr(err, "toy: --in x given twice\n", "cli: input given twice");
	rc = cli(out, sizeof out, err, sizeof err, "--help", NULL);
	ok(rc == 0 && strstr(out, "  x  f32[2,3]\n") && strstr(out, "  idx  i64[1]\n"),
	   "cli: --help lists inputs and outputs with their types");
	snprintf(inarg, sizeof inarg, "x=%s", path("x64.npy"));
	rc = cli(out, sizeof out, err, sizeof err, "--in", inarg, NULL);
	snprintf(want, sizeof want, "toy: %s: dtype is f64, expected f32\n", path("x64.npy"));
	okstr(err, want, "cli: input of the wrong dtype");
	snprintf(inarg, sizeof inarg, "x=%s", path("x32.npy"));
	rc = cli(out, sizeof out, err, sizeof err, "--in", inarg, NULL);
	snprintf(want, sizeof want, "toy: %s: shape is [3,2], expected [2,3]\n", path("x32.npy"));
	okstr(err, want, "cli: input of the wrong shape");

	snprintf(inarg, sizeof inarg, "x=%s", path("x.npy"));
	ninit = nfini = nrun = ninbuf = 0;
	rc = cli(out, sizeof out, err, sizeof err, "--in", inarg, "--out", outarg, NULL);
	good = rc == 0 && dprt_npy_read(path("y.npy"), DPRT_F32, 2, d23, y, err, sizeof err) == 0 &&
	       y[0] == 2 && y[1] == 8 && y[5] == 1;
	ok(good && ninit == 1 && nfini == 1 && nrun == 1, "cli: runs once, writes --out, init/fini once each");
	ok(ninbuf == 1 && memcmp(toybuf, x, sizeof toybuf) == 0,
	   "cli: --in read into the program's input buffer (inbuf), which the run reads");
	okstr(out, "idx = [1]\nbig: f32[1,10] = [0, 0.5, 1, 1.5, 2, 2.5, ...]\n",
	      "cli: other outputs printed one line each");
	nrun = 0;
	rc = cli(out, sizeof out, err, sizeof err, "--in", inarg, "--bench", "5",
	         "--out", "idx=/dev/null/x", NULL);
	snprintf(want, sizeof want, "toy: /dev/null/x: cannot create: Not a directory\n");
	okstr(err, want, "cli: an unwritable --out fails clearly");
	nrun = 0;
	rc = cli(out, sizeof out, err, sizeof err, "--in", inarg, "--bench", "5", "--out", outarg, NULL);
	ok(rc == 0 && nrun == 6 && strncmp(strstr(out, "bench: ") ? strstr(out, "bench: ") : "",
	   "bench: 5 runs, median ", 22) == 0, "cli: --bench 5 runs 1 + 5 times and reports");
	rc = cli(out, sizeof out, err, sizeof err, "--in", inarg, "--bench", "0", NULL);
	okstr(err, "toy: --bench needs a count from 1 to 100000000, got '0'\n", "cli: bad --bench");
	unlink(path("y.npy"));
	failrun = 1;
	rc = cli(out, sizeof out, err, sizeof err, "--in", inarg, "--out", outarg, NULL);
	failrun = 0;
	ok(rc == 1 && strcmp(err, "toy: boom\n") == 0 && access(path("y.npy"), F_OK) != 0,
	   "cli: a failing run reports its message and writes nothing");
	good = 1;
	dp = opendir(dir);
	while (dp && (de = readdir(dp)))
		if (strstr(de->d_name, ".tmp"))
			good = 0;
	if (dp)
		closedir(dp);
	ok(dp && good, "no temporary files left behind");
}

static void
cleanup(void)
{
	DIR *dp = opendir(dir);
	struct dirent *de;

	while (dp && (de = readdir(dp)))
		if (de->d_name[0] != '.')
			unlink(path(de->d_name));
	if (dp)
		closedir(dp);
	rmdir(dir);
}

int
main(int argc, char **argv)
{
	if (argc > 1) {
		int help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
		fputs("usage: test-runtime\nRuns the runtime library's unit tests (tests/runtime.t), printing TAP.\n", help ? stdout : stderr);
		return !help;
	}
	const char *t = getenv("TMPDIR");

	snprintf(dir, sizeof dir, "%s/dprt-test-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		printf("Bail out! cannot make a scratch folder in %s\n", t && *t ? t : "/tmp");
		return 1;
	}
	test_tables();
	test_gemm();
	test_memcpy();
	test_permute();
	test_softmax();
	test_argmax();
	test_binary();
	test_normalize();
	test_relu();
	test_cast();
	test_npy_roundtrip();
	test_npy_errors();
	test_main();
	cleanup();
	printf("1..%d\n", ntest);
	return nfail != 0;
}
