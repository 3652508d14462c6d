/* elem.c: elementwise kernels of the neural-network ops (unary math,
 * broadcasting arithmetic, comparisons, logic, where) and data movement
 * (strided copies, fills, arange, gathers). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "dprtint.h"
#include "dpscalar.h"
#include "gemm.h"

/* ---- strided loop nests ---- */

enum { MAXOPS = 4 };	/* operands of one nest: y and up to three inputs */

/* A loop nest over a shape with per-operand element strides; axes of size
 * 1 are dropped and neighbours merged where every operand allows it. */
typedef struct Nest {
	int r, nops;
	int64_t n[DPRT_MAXRANK];
	int64_t s[MAXOPS][DPRT_MAXRANK];
	int64_t total;
} Nest;

static void
nest(Nest *t, int rank, const int64_t *dim, int nops, const int64_t *const *st)
{
	int i, k, merge;

	t->r = 0;
	t->nops = nops;
	t->total = 1;
	for (i = 0; i < rank; i++) {
		t->total *= dim[i];
		if (dim[i] == 1)
			continue;
		merge = t->r > 0;
		for (k = 0; k < nops && merge; k++)
			merge = t->s[k][t->r - 1] == st[k][i] * dim[i];
		if (merge) {
			t->n[t->r - 1] *= dim[i];
			for (k = 0; k < nops; k++)
				t->s[k][t->r - 1] = st[k][i];
			continue;
		}
		t->n[t->r] = dim[i];
		for (k = 0; k < nops; k++)
			t->s[k][t->r] = st[k][i];
		t->r++;
	}
	if (t->r == 0) {	/* one element */
		t->n[0] = 1;
		for (k = 0; k < nops; k++)
			t->s[k][0] = 0;
		t->r = 1;
	}
}

/* Calls row(ctx, off, n, st) for each innermost row of the nest: off[k] is
 * operand k's element offset, st[k] its stride along the row. */
typedef void Rowfn(void *ctx, const int64_t *off, int64_t n, const int64_t *st);

static void
walk(const Nest *t, Rowfn *row, void *ctx)
{
	int64_t idx[DPRT_MAXRANK] = { 0 }, off[MAXOPS], st[MAXOPS], done;
	int k, a, r = t->r;

	if (t->total <= 0)
		return;
	for (k = 0; k < t->nops; k++)
		st[k] = t->s[k][r - 1];
	for (done = 0; done < t->total; done += t->n[r - 1]) {
		for (k = 0; k < t->nops; k++) {
			off[k] = 0;
			for (a = 0; a < r - 1; a++)
				off[k] += idx[a] * t->s[k][a];
		}
		row(ctx, off, t->n[r - 1], st);
		for (a = r - 2; a >= 0 && ++idx[a] == t->n[a]; a--)
			idx[a] = 0;
	}
}

/* walk on the thread pool: tasks of whole rows (or pieces of the one row)
 * of at least CHUNK elements.  Elementwise work only: any split gives the
 * same bits. */
enum { CHUNK = 16384 };

typedef struct Pwalk {
	const Nest *t;
	Rowfn *row;
	void *ctx;
	int64_t per;            /* rows per task, or (one row) elements per task */
} Pwalk;

static void
pwalk_task(void *arg, int64_t task)
{
	const Pwalk *p = arg;
	const Nest *t = p->t;
	int64_t idx[DPRT_MAXRANK], off[MAXOPS], st[MAXOPS], q, row, end, nrow;
	int k, a, r = t->r;

	for (k = 0; k < t->nops; k++)
		st[k] = t->s[k][r - 1];
	if (r == 1) {   /* pieces of the one row */
		int64_t lo = task * p->per, n = t->n[0] - lo < p->per ? t->n[0] - lo : p->per;
		for (k = 0; k < t->nops; k++)
			off[k] = lo * st[k];
		p->row(p->ctx, off, n, st);
		return;
	}
	nrow = t->total / t->n[r - 1];
	row = task * p->per;
	end = row + p->per < nrow ? row + p->per : nrow;
	for (q = row, a = r - 2; a >= 0; a--) {   /* the row's index */
		idx[a] = q % t->n[a];
		q /= t->n[a];
	}
	for (; row < end; row++) {
		for (k = 0; k < t->nops; k++) {
			off[k] = 0;
			for (a = 0; a < r - 1; a++)
				off[k] += idx[a] * t->s[k][a];
		}
		p->row(p->ctx, off, t->n[r - 1], st);
		for (a = r - 2; a >= 0 && ++idx[a] == t->n[a]; a--)
			idx[a] = 0;
	}
}

static void
pwalk(const Nest *t, Rowfn *row, void *ctx)
{
	Pwalk p = { t, row, ctx, 0 };
	int64_t len = t->n[t->r - 1], nrow;

	if (t->total < 2 * CHUNK || dprt_threads() == 1) {
		walk(t, row, ctx);
		return;
	}
	if (t->r == 1) {
		p.per = CHUNK;
		dprt_parallel((len + CHUNK - 1) / CHUNK, pwalk_task, &p);
		return;
	}
	nrow = t->total / len;
	p.per = (CHUNK + len - 1) / len;
	dprt_parallel((nrow + p.per - 1) / p.per, pwalk_task, &p);
}

/* Dense strides of the shape dim. */
static void
dense(int rank, const int64_t *dim, int64_t *st)
{
	int64_t m = 1;
	int i;

	for (i = rank - 1; i >= 0; i--) {
		st[i] = m;
		m *= dim[i];
	}
}

/* ---- unary ---- */

typedef struct Un {
	int op;
	float *y;
	const float *x;
	int64_t n;
	float lo, hi;
} Un;

static void unary_f32(int op, float *y, const float *x, int64_t n, float lo, float hi);

static void
unary_task(void *arg, int64_t t)
{
	const Un *u = arg;
	int64_t lo = t * CHUNK, n = u->n - lo < CHUNK ? u->n - lo : CHUNK;

	unary_f32(u->op, u->y + lo, u->x + lo, n, u->lo, u->hi);
}

/* Unary f32 op (see dprt.h): the formulas of dpscalar.h; pieces of CHUNK
 * elements on the pool. */
void
dprt_unary_f32(int op, float *y, const float *x, int64_t n, float lo, float hi)
{
	Un u = { op, y, x, n, lo, hi };

	if (n < 2 * CHUNK || dprt_threads() == 1)
		unary_f32(op, y, x, n, lo, hi);
	else
		dprt_parallel((n + CHUNK - 1) / CHUNK, unary_task, &u);
}

/* tanh and GELU's tanh form, vectorized (gemm.h's polynomials): tanhf
 * per element was most of GPT-2's elementwise time. */
static inline __attribute__((always_inline)) void
tanh_body(float *restrict y, const float *restrict x, int64_t n, int gelu)
{
	int64_t i;

	if (gelu)
		for (i = 0; i < n; i++)
			y[i] = dprt_gelu_tanh_poly(x[i]);
	else
		for (i = 0; i < n; i++)
			y[i] = dprt_tanh_poly(x[i]);
}

static void
tanh_generic(float *y, const float *x, int64_t n, int gelu)
{
	tanh_body(y, x, n, gelu);
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma")))
static void
tanh_avx2(float *y, const float *x, int64_t n, int gelu)
{
	tanh_body(y, x, n, gelu);
}

__attribute__((target("avx512f,avx2,fma")))
static void
tanh_avx512(float *y, const float *x, int64_t n, int gelu)
{
	tanh_body(y, x, n, gelu);
}
#endif

static void
tanh_loop(float *y, const float *x, int64_t n, int gelu)
{
	if (y == x) {   /* in place: through a block on the stack (restrict) */
		_Alignas(64) float t[256];
		int64_t i, m;
		for (i = 0; i < n; i += m) {
			m = n - i < 256 ? n - i : 256;
			tanh_loop(t, x + i, m, gelu);
			memcpy(y + i, t, sizeof *t * (size_t)m);
		}
		return;
	}
#if defined(__x86_64__)
	if (dprt_isa() == DPRT_ISA_AVX512) {
		tanh_avx512(y, x, n, gelu);
		return;
	}
	if (dprt_isa() == DPRT_ISA_AVX2) {
		tanh_avx2(y, x, n, gelu);
		return;
	}
#endif
	tanh_generic(y, x, n, gelu);
}

static void
unary_f32(int op, float *y, const float *x, int64_t n, float lo, float hi)
{
	int64_t i;

	if (op == DPRT_TANH || op == DPRT_GELU_TANH) {
		tanh_loop(y, x, n, op == DPRT_GELU_TANH);
		return;
	}

#define U(F) for (i = 0; i < n; i++) y[i] = dps_##F(x[i], lo, hi); break;
	switch (op) {
	case DPRT_RSQRT: U(rsqrt)
	case DPRT_SQRT: U(sqrt)
	case DPRT_EXP: U(exp)
	case DPRT_LOG: U(log)
	case DPRT_COS: U(cos)
	case DPRT_SIN: U(sin)
	case DPRT_NEG: U(neg)
	case DPRT_ABS: U(abs)
	case DPRT_RECIP: U(reciprocal)
	case DPRT_SIGMOID: U(sigmoid)
	case DPRT_TANH: U(tanh)
	case DPRT_SILU: U(silu)
	case DPRT_GELU: U(gelu)
	case DPRT_GELU_TANH: U(gelu_tanh)
	case DPRT_HARDSWISH: U(hardswish)
	case DPRT_HARDSIGMOID: U(hardsigmoid)
	case DPRT_CLAMP: U(clamp)
	case DPRT_RELU: U(relu)
	default: break;
	}
#undef U
}

/* Unary i64 op: NEG, ABS, CLAMP, RELU. */
void
dprt_unary_i64(int op, int64_t *y, const int64_t *x, int64_t n, int64_t lo, int64_t hi)
{
	int64_t i;

#define U(F) for (i = 0; i < n; i++) y[i] = dps_##F##_i64(x[i], lo, hi); break;
	switch (op) {
	case DPRT_NEG: U(neg)
	case DPRT_ABS: U(abs)
	case DPRT_CLAMP: U(clamp)
	case DPRT_RELU: U(relu)
	default: break;
	}
#undef U
}

/* ---- binary ---- */

typedef struct Bin {
	int op;
	char *y;
	const char *a, *b;
	double alpha;
} Bin;

/* One row: T the operand type, O the result type, E the expression of u, v. */
#define ROW(T, O, E) { \
	O *y = (O *)c->y + off[0]; \
	const T *a = (const T *)c->a + off[1], *b = (const T *)c->b + off[2]; \
	int64_t i, sa = st[1], sb = st[2]; \
	if (sa == 1 && sb == 1) \
		for (i = 0; i < n; i++) { T u = a[i], v = b[i]; y[i] = (O)(E); } \
	else if (sa == 1 && sb == 0) { \
		T v = b[0]; \
		for (i = 0; i < n; i++) { T u = a[i]; y[i] = (O)(E); } \
	} else if (sa == 0 && sb == 1) { \
		T u = a[0]; \
		for (i = 0; i < n; i++) { T v = b[i]; y[i] = (O)(E); } \
	} else \
		for (i = 0; i < n; i++) { T u = a[i * sa], v = b[i * sb]; y[i] = (O)(E); } \
	}

#define CMPS(T) \
	case DPRT_EQ: ROW(T, uint8_t, u == v) break; \
	case DPRT_NE: ROW(T, uint8_t, u != v) break; \
	case DPRT_LT: ROW(T, uint8_t, u < v) break; \
	case DPRT_LE: ROW(T, uint8_t, u <= v) break; \
	case DPRT_GT: ROW(T, uint8_t, u > v) break; \
	case DPRT_GE: ROW(T, uint8_t, u >= v) break;

static void
row_f32(void *ctx, const int64_t *off, int64_t n, const int64_t *st)
{
	Bin *c = ctx;
	float al = (float)c->alpha;

	switch (c->op) {
	case DPRT_ADD:
		if (al == 1.0f)
			ROW(float, float, dps_add(u, v, 1.0f))
		else
			ROW(float, float, dps_add(u, v, al))
		break;
	case DPRT_SUB:
		if (al == 1.0f)
			ROW(float, float, dps_sub(u, v, 1.0f))
		else
			ROW(float, float, dps_sub(u, v, al))
		break;
	case DPRT_MUL: ROW(float, float, dps_mul(u, v, 1.0f)) break;
	case DPRT_DIV: ROW(float, float, dps_div(u, v, 1.0f)) break;
	case DPRT_POW:
		/* a scalar exponent PyTorch special-cases (pow_tensor_scalar):
		 * its products, and vectorized (powf per element was most of
		 * an RMS norm's time) */
		if (st[2] == 0 && ((const float *)c->b)[off[2]] == 2.0f)
			ROW(float, float, ((void)v, u * u))
		else if (st[2] == 0 && ((const float *)c->b)[off[2]] == 3.0f)
			ROW(float, float, ((void)v, u * u * u))
		else if (st[2] == 0 && ((const float *)c->b)[off[2]] == 0.5f)
			ROW(float, float, ((void)v, sqrtf(u)))
		else
			ROW(float, float, dps_pow(u, v, 1.0f))
		break;
	CMPS(float)
	default: break;
	}
}

/* Integer arithmetic wraps (two's complement), as PyTorch's does. */
#define IROWS(T, U) \
	case DPRT_ADD: ROW(T, T, (T)((U)u + (U)al * (U)v)) break; \
	case DPRT_SUB: ROW(T, T, (T)((U)u - (U)al * (U)v)) break; \
	case DPRT_MUL: ROW(T, T, (T)((U)u * (U)v)) break;

static void
row_i64(void *ctx, const int64_t *off, int64_t n, const int64_t *st)
{
	Bin *c = ctx;
	int64_t al = (int64_t)c->alpha;

	switch (c->op) {
	IROWS(int64_t, uint64_t)
	CMPS(int64_t)
	default: break;
	}
}

static void
row_i32(void *ctx, const int64_t *off, int64_t n, const int64_t *st)
{
	Bin *c = ctx;
	int32_t al = (int32_t)c->alpha;

	switch (c->op) {
	IROWS(int32_t, uint32_t)
	CMPS(int32_t)
	default: break;
	}
}

static void
row_u8(void *ctx, const int64_t *off, int64_t n, const int64_t *st)
{
	Bin *c = ctx;

	switch (c->op) {
	CMPS(uint8_t)
	default: break;
	}
}

/* Broadcasting binary op on any supported dtype (see dprt.h). */
void
dprt_binary(int op, int dtype, void *y, const void *a, const int64_t *sa,
            const void *b, const int64_t *sb, int rank, const int64_t *dim, double alpha)
{
	int64_t sy[DPRT_MAXRANK];
	const int64_t *st[3] = { sy, sa, sb };
	Bin c = { op, y, a, b, alpha };
	Nest t;

	dense(rank, dim, sy);
	nest(&t, rank, dim, 3, st);
	switch (dtype) {
	case DPRT_F32: pwalk(&t, row_f32, &c); break;
	case DPRT_I64: pwalk(&t, row_i64, &c); break;
	case DPRT_I32: pwalk(&t, row_i32, &c); break;
	case DPRT_BOOL: case DPRT_U8: pwalk(&t, row_u8, &c); break;
	default: break;
	}
}

typedef struct Map2 {
	float (*f)(float, float, float);
	float *y;
	const float *a, *b;
	float al;
} Map2;

static void
row_map2(void *ctx, const int64_t *off, int64_t n, const int64_t *st)
{
	Map2 *c = ctx;
	float *y = c->y + off[0];
	const float *a = c->a + off[1], *b = c->b + off[2];
	int64_t i;

	for (i = 0; i < n; i++)
		y[i] = c->f(a[i * st[1]], b[i * st[2]], c->al);
}

/* Broadcasting binary f32 op through a formula (see dprt.h). */
void
dprt_map2_f32(float (*f)(float, float, float), float *y, const float *a,
              const int64_t *sa, const float *b, const int64_t *sb, int rank,
              const int64_t *dim, float al)
{
	int64_t sy[DPRT_MAXRANK];
	const int64_t *st[3] = { sy, sa, sb };
	Map2 c = { f, y, a, b, al };
	Nest t;

	dense(rank, dim, sy);
	nest(&t, rank, dim, 3, st);
	pwalk(&t, row_map2, &c);
}

typedef struct Map2i {
	int64_t (*f)(int64_t, int64_t, int64_t);
	int64_t *y;
	const int64_t *a, *b;
} Map2i;

static void
row_map2i(void *ctx, const int64_t *off, int64_t n, const int64_t *st)
{
	Map2i *c = ctx;
	int64_t *y = c->y + off[0], i;
	const int64_t *a = c->a + off[1], *b = c->b + off[2];

	for (i = 0; i < n; i++)
		y[i] = c->f(a[i * st[1]], b[i * st[2]], 0);
}

/* Broadcasting binary i64 op through a formula (see dprt.h). */
void
dprt_map2_i64(int64_t (*f)(int64_t, int64_t, int64_t), int64_t *y, const int64_t *a,
              const int64_t *sa, const int64_t *b, const int64_t *sb, int rank,
              const int64_t *dim)
{
	int64_t sy[DPRT_MAXRANK];
	const int64_t *st[3] = { sy, sa, sb };
	Map2i c = { f, y, a, b };
	Nest t;

	dense(rank, dim, sy);
	nest(&t, rank, dim, 3, st);
	pwalk(&t, row_map2i, &c);
}

/* Whether element i of x (dtype dt) is nonzero. */
static int
truth(const void *x, int dt, int64_t i)
{
	switch (dt) {
	case DPRT_U8: case DPRT_I8: case DPRT_BOOL: return ((const uint8_t *)x)[i] != 0;
	case DPRT_I16: case DPRT_F16: case DPRT_BF16:
		return (((const uint16_t *)x)[i] & (dt == DPRT_I16 ? 0xffff : 0x7fff)) != 0;
	case DPRT_I32: return ((const int32_t *)x)[i] != 0;
	case DPRT_I64: return ((const int64_t *)x)[i] != 0;
	case DPRT_F32: return ((const float *)x)[i] != 0;
	case DPRT_F64: return ((const double *)x)[i] != 0;
	}
	return 0;
}

typedef struct Logic {
	int op, da, db;
	uint8_t *y;
	const void *a, *b;
} Logic;

static void
row_logic(void *ctx, const int64_t *off, int64_t n, const int64_t *st)
{
	Logic *c = ctx;
	int64_t i;

	for (i = 0; i < n; i++) {
		int u = truth(c->a, c->da, off[1] + i * st[1]);
		int v = truth(c->b, c->db, off[2] + i * st[2]);
		c->y[off[0] + i] = (uint8_t)(c->op == DPRT_AND ? u && v : c->op == DPRT_OR ? u || v : u != v);
	}
}

/* Logical AND/OR/XOR of any two dtypes, as bool. */
void
dprt_logical(int op, uint8_t *y, const void *a, int dtype_a, const int64_t *sa,
             const void *b, int dtype_b, const int64_t *sb, int rank, const int64_t *dim)
{
	int64_t sy[DPRT_MAXRANK];
	const int64_t *st[3] = { sy, sa, sb };
	Logic c = { op, dtype_a, dtype_b, y, a, b };
	Nest t;

	dense(rank, dim, sy);
	nest(&t, rank, dim, 3, st);
	pwalk(&t, row_logic, &c);
}

/* Logical not of any dtype, as bool. */
void
dprt_not(uint8_t *y, const void *x, int dtype, int64_t n)
{
	int64_t i;

	for (i = 0; i < n; i++)
		y[i] = (uint8_t)!truth(x, dtype, i);
}

/* ---- where and copies: elements moved as es bytes ---- */

typedef struct Move {
	int es;
	char *y;
	const uint8_t *c;
	const char *a, *b;
} Move;

static void
row_where(void *ctx, const int64_t *off, int64_t n, const int64_t *st)
{
	Move *m = ctx;
	int64_t i;
	int es = m->es;

#define W(ES) \
	for (i = 0; i < n; i++) \
		memcpy(m->y + (off[0] + i) * (ES), m->c[off[1] + i * st[1]] \
		       ? m->a + (off[2] + i * st[2]) * (ES) : m->b + (off[3] + i * st[3]) * (ES), (ES)); \
	break;
	switch (es) {
	case 1: W(1)
	case 2: W(2)
	case 4: W(4)
	case 8: W(8)
	default: W(es)
	}
#undef W
}

/* y = c ? a : b with broadcasting. */
void
dprt_where(void *y, int es, const uint8_t *c, const int64_t *sc, const void *a,
           const int64_t *sa, const void *b, const int64_t *sb, int rank, const int64_t *dim)
{
	int64_t sy[DPRT_MAXRANK];
	const int64_t *st[4] = { sy, sc, sa, sb };
	Move m = { es, y, c, a, b };
	Nest t;

	dense(rank, dim, sy);
	nest(&t, rank, dim, 4, st);
	pwalk(&t, row_where, &m);
}

static void
row_copy(void *ctx, const int64_t *off, int64_t n, const int64_t *st)
{
	Move *m = ctx;
	int64_t i;
	int es = m->es;
	char *y = m->y + off[0] * es;
	const char *x = m->a + off[1] * es;

	if (st[0] == 1 && st[1] == 1) {
		memcpy(y, x, (size_t)(n * es));
		return;
	}
#define C(ES) \
	for (i = 0; i < n; i++) \
		memcpy(y + i * st[0] * (ES), x + i * st[1] * (ES), (ES)); \
	break;
	switch (es) {
	case 1: C(1)
	case 2: C(2)
	case 4: C(4)
	case 8: C(8)
	default: C(es)
	}
#undef C
}

/* Strided copy of the shape dim (see dprt.h). */
void
dprt_copy(void *y, const int64_t *sy, const void *x, const int64_t *sx, int es, int rank,
          const int64_t *dim)
{
	const int64_t *st[2] = { sy, sx };
	Move m = { es, y, NULL, x, NULL };
	Nest t;

	nest(&t, rank, dim, 2, st);
	pwalk(&t, row_copy, &m);
}

/* dprt_memcpy's chunks: 256 KiB, enough to keep a core streaming (a KV
 * cache's 1.5 MB update is six of them). */
enum { MEMCPY_CHUNK = 1 << 18 };

typedef struct Memcpy {
	unsigned char *y;
	const unsigned char *x;
	int64_t n;
} Memcpy;

static void
memcpy_task(void *arg, int64_t t)
{
	const Memcpy *m = arg;
	int64_t off = t * MEMCPY_CHUNK, k = m->n - off < MEMCPY_CHUNK ? m->n - off : MEMCPY_CHUNK;

	memcpy(m->y + off, m->x + off, (size_t)k);
}

/* memcpy in chunks of MEMCPY_CHUNK over the pool (see dprt.h). */
void
dprt_memcpy(void *y, const void *x, int64_t n)
{
	Memcpy m = { y, x, n };

	if (n < 2 * MEMCPY_CHUNK) {
		if (n > 0)
			memcpy(y, x, (size_t)n);
		return;
	}
	dprt_parallel((n + MEMCPY_CHUNK - 1) / MEMCPY_CHUNK, memcpy_task, &m);
}

/* ---- fills ---- */

/* One value v converted to dtype into *y (through f32 for the narrow
 * floats, through i64 for integers; bool is v != 0). */
static void
put(void *y, int dtype, double v)
{
	float f = (float)v;
	int64_t i = v > -9.2e18 && v < 9.2e18 ? (int64_t)v : 0;

	switch (dtype) {
	case DPRT_F64: memcpy(y, &v, sizeof v); break;
	case DPRT_F32: memcpy(y, &f, sizeof f); break;
	case DPRT_F16: case DPRT_BF16: dprt_cast(y, dtype, &f, DPRT_F32, 1); break;
	case DPRT_BOOL: *(uint8_t *)y = v != 0; break;
	default: dprt_cast(y, dtype, &i, DPRT_I64, 1); break;
	}
}

/* Fills n elements with v. */
void
dprt_fill(void *y, int dtype, double v, int64_t n)
{
	int es = dprt_dtype_size[dtype];
	int64_t i;

	if (n <= 0)
		return;
	put(y, dtype, v);
	for (i = 1; i < n; i++)
		memcpy((char *)y + i * es, y, (size_t)es);
}

/* y[i] = start + i·step. */
void
dprt_arange(void *y, int dtype, double start, double step, int64_t n)
{
	int es = dprt_dtype_size[dtype];
	int64_t i;

	for (i = 0; i < n; i++)
		put((char *)y + i * es, dtype, start + step * (double)i);
}

/* ---- gathers ---- */

/* Gathers rows along the middle axis (see dprt.h). */
/* A large gather's rows in pieces of about GATHER_CHUNK bytes over the
 * pool (a KV cache rewritten row by row every step). */
enum { GATHER_CHUNK = 1 << 17 };

typedef struct Gather {
	void *y;
	const void *x, *idx;
	int dtype_idx;
	int64_t outer, n, m;
	size_t row;
	int64_t per;            /* rows per task */
} Gather;

static void
gather_task(void *arg, int64_t t)
{
	const Gather *g = arg;
	int64_t r, r1 = (t + 1) * g->per < g->outer * g->m ? (t + 1) * g->per : g->outer * g->m;

	for (r = t * g->per; r < r1; r++) {
		int64_t o = r / g->m, j = r % g->m;
		int64_t ix = g->dtype_idx == DPRT_I32 ? ((const int32_t *)g->idx)[j] :
		             ((const int64_t *)g->idx)[j];
		if (ix < 0)
			ix += g->n;
		memcpy((char *)g->y + r * g->row, (const char *)g->x + (o * g->n + ix) * g->row, g->row);
	}
}

int
dprt_gather(void *y, const void *x, int es, int64_t outer, int64_t n, int64_t inner,
            const void *idx, int dtype_idx, int64_t m, const char *what, char *err,
            size_t errn)
{
	int64_t o, j, ix;
	size_t row = (size_t)(inner * es);

	for (j = 0; j < m; j++) {
		ix = dtype_idx == DPRT_I32 ? ((const int32_t *)idx)[j] : ((const int64_t *)idx)[j];
		if (ix < -n || ix >= n)
			return dprt_errf(err, errn, "%s: index %lld is out of range for a dimension "
			                 "of size %lld", what, (long long)ix, (long long)n);
	}
	if ((int64_t)row * outer * m >= 2 * GATHER_CHUNK && dprt_threads() > 1) {
		Gather g = { y, x, idx, dtype_idx, outer, n, m, row,
		             GATHER_CHUNK / (int64_t)row > 0 ? GATHER_CHUNK / (int64_t)row : 1 };
		dprt_parallel((outer * m + g.per - 1) / g.per, gather_task, &g);
		return 0;
	}
	for (o = 0; o < outer; o++)
		for (j = 0; j < m; j++) {
			ix = dtype_idx == DPRT_I32 ? ((const int32_t *)idx)[j] : ((const int64_t *)idx)[j];
			if (ix < 0)
				ix += n;
			memcpy((char *)y + (o * m + j) * row, (const char *)x + (o * n + ix) * row, row);
		}
	return 0;
}

/* Writes src's slices at their indices along the middle axis (see dprt.h). */
void
dprt_index_write(void *y, const void *src, int es, int64_t outer, int64_t n, int64_t inner,
                 const int64_t *idx, int64_t m)
{
	size_t row = (size_t)(inner * es);
	int64_t o, j;

	for (j = 0; j < m; j++) {
		if (idx[j] < 0 || idx[j] >= n)
			continue;
		for (o = 0; o < outer; o++)
			memcpy((char *)y + (o * n + idx[j]) * row, (const char *)src + (o * m + j) * row,
			       row);
	}
}

/* ---- scans and gathers along one axis ---- */

/* Inclusive prefix sums (mode 0), products (1) or, f32 only, logs of
 * sums of exponentials (2) along the middle axis of [outer, n, inner]. */
void
dprt_scan(int dtype, int mode, void *y, const void *x, int64_t outer, int64_t n,
            int64_t inner)
{
	int64_t o, i, j;

	for (o = 0; o < outer; o++)
		for (i = 0; i < inner; i++) {
			int64_t b = o * n * inner + i;
			if (dtype == DPRT_F32) {
				const float *xs = x;
				float *ys = y;
				double s = mode == 2 ? -INFINITY : mode;   /* PyTorch's cpu accumulator */
				for (j = 0; j < n; j++) {
					double v = xs[b + j * inner];
					s = mode == 0 ? s + v : mode == 1 ? s * v : dps_logaddexp(s, v);
					ys[b + j * inner] = (float)s;
				}
			} else {
				const int64_t *xs = x;
				int64_t *ys = y;
				uint64_t s = (uint64_t)mode;   /* wraps */
				for (j = 0; j < n; j++) {
					uint64_t v = (uint64_t)xs[b + j * inner];
					s = mode ? s * v : s + v;
					ys[b + j * inner] = (int64_t)s;
				}
			}
		}
}

/* The key of element i of x in dprt_sort's order as an unsigned integer:
 * f32 bits made monotonic (−0 as +0, every NaN above +inf), integers with
 * the sign bit flipped; complemented for descending. */
static uint64_t
sortkey(int dtype, const void *x, int64_t i, int desc)
{
	uint64_t k;

	if (dtype == DPRT_F32) {
		float v = ((const float *)x)[i];
		uint32_t u;
		if (v == 0)
			v = 0;
		memcpy(&u, &v, 4);
		k = isnan(v) ? 0xffffffffu : (u >> 31) ? ~u : u | 0x80000000u;
	} else {
		int64_t v = dtype == DPRT_I64 ? ((const int64_t *)x)[i] : ((const int32_t *)x)[i];
		k = (uint64_t)v ^ 0x8000000000000000u;
	}
	return desc ? ~k : k;
}

struct sortjob {
	int dtype, desc, failed;
	void *y;
	int64_t *idx;
	const void *x;
	int64_t n, inner, rows, ntask;
};

/* Rows [t·rows/ntask, (t+1)·rows/ntask) of a dprt_sort: a bottom-up merge
 * sort of each row's (key, index) pairs, which keeps equal keys in index
 * order. */
static void
sorttask(void *arg, int64_t t)
{
	struct sortjob *j = arg;
	int64_t n = j->n, inner = j->inner, r, w, lo, k;
	size_t es = j->dtype == DPRT_I32 || j->dtype == DPRT_F32 ? 4 : 8;
	struct kv { uint64_t k; int64_t i; } *buf = malloc((size_t)(2 * n + 1) * sizeof *buf), *a, *b;

	if (!buf) {
		__atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
		return;
	}
	for (r = t * j->rows / j->ntask; r < (t + 1) * j->rows / j->ntask; r++) {
		int64_t base = r / inner * n * inner + r % inner;
		const char *row = (const char *)j->x + (size_t)base * es;
		a = buf;
		b = buf + n;
		for (k = 0; k < n; k++) {
			a[k].k = sortkey(j->dtype, row, k * inner, j->desc);
			a[k].i = k;
		}
		for (w = 1; w < n; w *= 2) {   /* runs of w merged into runs of 2w */
			for (lo = 0; lo < n; lo += 2 * w) {
				int64_t m = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
				int64_t p = lo, q = m, o = lo;
				while (p < m && q < hi)   /* the right run first only when smaller */
					b[o++] = a[q].k < a[p].k ? a[q++] : a[p++];
				while (p < m)
					b[o++] = a[p++];
				while (q < hi)
					b[o++] = a[q++];
			}
			struct kv *sw = a;
			a = b;
			b = sw;
		}
		for (k = 0; k < n; k++) {
			j->idx[base + k * inner] = a[k].i;
			memcpy((char *)j->y + (size_t)(base + k * inner) * es,
			       row + (size_t)(a[k].i * inner) * es, es);
		}
	}
	free(buf);
}

/* dprt_sort (see dprt.h): the rows split among the pool's threads. */
int
dprt_sort(int dtype, void *y, int64_t *idx, const void *x, int64_t outer, int64_t n,
          int64_t inner, int descending, char *err, size_t errn)
{
	struct sortjob j = { dtype, descending, 0, y, idx, x, n, inner, outer * inner, 1 };

	j.ntask = dprt_threads() < j.rows ? dprt_threads() : j.rows;
	if (j.ntask < 1)
		return 0;
	dprt_parallel(j.ntask, sorttask, &j);
	if (j.failed)
		return dprt_errf(err, errn, "sort: out of memory (rows of %lld)", (long long)n);
	return 0;
}

/* torch.gather along axis d (see dprt.h). */
int
dprt_gather_dim(void *y, const void *x, int es, int rank, const int64_t *xdim,
                const int64_t *idim, int d, const void *idx, int dtype_idx, const char *what,
                char *err, size_t errn)
{
	int64_t n = 1, k, ix, xs[DPRT_MAXRANK], c[DPRT_MAXRANK] = { 0 }, off;
	int a;

	dense(rank, xdim, xs);
	for (a = 0; a < rank; a++)
		n *= idim[a];
	for (k = 0; k < n; k++) {
		ix = dtype_idx == DPRT_I32 ? ((const int32_t *)idx)[k] : ((const int64_t *)idx)[k];
		if (ix < -xdim[d] || ix >= xdim[d])
			return dprt_errf(err, errn, "%s: index %lld is out of range for a dimension "
			                 "of size %lld", what, (long long)ix, (long long)xdim[d]);
		if (ix < 0)
			ix += xdim[d];
		for (off = 0, a = 0; a < rank; a++)
			off += (a == d ? ix : c[a]) * xs[a];
		memcpy((char *)y + k * es, (const char *)x + off * es, (size_t)es);
		for (a = rank - 1; a >= 0 && ++c[a] == idim[a]; a--)
			c[a] = 0;
	}
	return 0;
}
