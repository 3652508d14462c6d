/* reduce.c: the kernels of ops that read whole rows, each a kernel of its
 * own: argmax and softmax along one axis (a warp per row); sum, mean and
 * any over any axes; layer and RMS norms over the trailing axes (a warp
 * per row, or a block for long rows).  Sums of f32 accumulate in f64, as
 * the cpu runtime's do (runtime/nn.c), so the two agree to the last bit or
 * nearly; variances take two passes. */
#include <stdio.h>
#include <string.h>

#include "gpu.h"
#include "nn.h"   /* gpu_isconst */

enum { BLOCK = 256, WARPS = BLOCK / 32, WIDE = 4096, REGROW = 1024, RMS_CHUNK = 8 };
enum { HELPERS = 1 };   /* Gpu.helpers: runtime/cuda/reduce.cuh included */

/* The device helpers (runtime/cuda/reduce.cuh): better, the order of
 * argmax candidates (a NaN beats any number, then the larger value, then
 * the smaller index, so the first maximum wins); wsum and bsum, sums over
 * a warp and over a block, every thread getting the same total. */
static void
helpers(Gpu *g)
{
	if (g->helpers & HELPERS)
		return;
	g->helpers |= HELPERS;
	str_put(&g->kern, "\n#include \"cuda/reduce.cuh\"   /* better, wsum, bsum */\n");
}

/* Appends the element offset, with strides st, of the element at linear
 * index idx of a dense tensor of the n dims dim (none of them 1). */
static void
gpu_offexpr(Str *e, const char *idx, int n, const int64_t *dim, const int64_t *st)
{
	int64_t ds[DP_MAXRANK], m = 1;
	int k;

	for (k = n - 1; k >= 0; k--) {
		ds[k] = m;
		m *= dim[k];
	}
	for (k = 0; k < n; k++) {
		str_put(e, k ? " + " : "");
		if (ds[k] == 1)
			str_printf(e, "%s", idx);
		else
			str_printf(e, "%s / %lld", idx, (long long)ds[k]);
		if (k > 0)
			str_printf(e, " %% %lld", (long long)dim[k]);
		if (st[k] != 1)
			str_printf(e, " * %lld", (long long)st[k]);
	}
	if (n == 0)
		str_put(e, "0");
}

/* Appends an axis (n, s) to a list of axes, merged into the previous one
 * where that one steps over exactly this one. */
static void
addaxis(int64_t *dim, int64_t *st, int *n, int64_t d, int64_t s)
{
	if (*n > 0 && st[*n - 1] == s * d) {
		dim[*n - 1] *= d;
		st[*n - 1] = s;
		return;
	}
	dim[*n] = d;
	st[(*n)++] = s;
}

/* The storage type of a dtype (f16, bf16 as their bits). */
static const char *
stype(int dt)
{
	const char *c = dtype_c(dt);

	return c ? c : "uint16_t";
}

/* The first lines of a row kernel: o the row (or output element) of this
 * warp (w = 32) or block (w = BLOCK), lane the thread's place in it. */
static void
rowhead(const Gpu *g, Str *s, int w, int64_t rows)
{
	if (g->pdl)   /* launched early, as the elementwise kernels (kern.c, rowlaunch) */
		str_put(s, "\tdp_pdl_wait();   /* the kernels before: done, their writes seen */\n");
	if (w == 32)
		str_printf(s, "\tlong long o = blockIdx.x * %dLL + threadIdx.x / 32;\n"
		              "\tint lane = threadIdx.x %% 32;\n\n"
		              "\tif (o >= %lldLL)\n\t\treturn;\n", WARPS, (long long)rows);
	else
		str_put(s, "\tlong long o = blockIdx.x;\n\tint lane = threadIdx.x;\n\n");
}

/* The launch of a row kernel over rows rows, nt threads a block (BLOCK
 * where w = 32); its operands are already written into args. */
static int
rowlaunch(Gpu *g, const char *kname, int w, int64_t rows, const char *args, int nt)
{
	int64_t nb = w == 32 ? (rows + WARPS - 1) / WARPS : rows;

	if (nb > 2147483647) {
		dp_seterr(g->err, "%s: %lld rows are more than one launch can have", kname,
		          (long long)rows);
		return -1;
	}
	if (rows > 0) {
		str_printf(g->rec, "\tDP_LAUNCH(%s, %lld, %d, %d)(%s);\n", kname, (long long)nb,
		           nt, g->pdl, args);
		launched(g, kname);
	}
	g->nkern++;
	return 0;
}

/* aten.sum, aten.mean, aten.any over the axes of dim (all when empty):
 * the kept axes index the output, the reduced ones a sum, both merged into
 * as few axes as they can be.  Where the innermost reduced axis is
 * contiguous a warp (or a block, for long sums) reads it; else each thread
 * sums one output, its neighbours reading the neighbouring elements. */
static int
reduction(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	int x = op->in[0], y = op->out[0], k, nk = 0, nr = 0, w;
	const Type *tx = ty(g, x);
	const Attr *d = dp_attr(op, "dim");
	int red[DP_MAXRANK] = {0}, dt = tx->dtype, any = op->kind == Aany;
	int64_t xs[DP_MAXRANK], kd[DP_MAXRANK], ks[DP_MAXRANK], rd[DP_MAXRANK], rs[DP_MAXRANK];
	int64_t nout = 1, cnt = 1, m = 1;
	const char *acc, *name = op->kind == Asum ? "sum" : op->kind == Amean ? "mean" : "any";
	char kname[64], args[64];
	Str *s = &g->kern;

	if ((op->kind == Asum && dt != DP_F32 && dt != DP_I64 && dt != DP_I32) ||
	    (op->kind == Amean && dt != DP_F32)) {
		dp_seterr(g->err, "op %d (%s): the cuda target has no kernel for %s tensors (only %s)",
		          i, dp_op_name[op->kind], dp_dtype_name[dt],
		          op->kind == Asum ? "f32, i64, i32" : "f32");
		return -1;
	}
	for (k = 0; k < tx->rank; k++)
		red[k] = d == NULL || d->n == 0;
	for (k = 0; d && k < d->n; k++)
		red[normdim(d->ints[k], tx->rank)] = 1;
	for (k = tx->rank - 1; k >= 0; k--) {
		xs[k] = m;
		m *= tx->dim[k];
	}
	for (k = 0; k < tx->rank; k++) {
		if (tx->dim[k] == 1)
			continue;
		if (red[k]) {
			addaxis(rd, rs, &nr, tx->dim[k], xs[k]);
			cnt *= tx->dim[k];
		} else {
			addaxis(kd, ks, &nk, tx->dim[k], xs[k]);
			nout *= tx->dim[k];
		}
	}
	acc = any ? "int" : dt == DP_F32 ? "double" : "unsigned long long";
	w = nr > 0 && rs[nr - 1] == 1 ? cnt > WIDE ? BLOCK : 32 : 1;
	if (w > 1)
		helpers(g);
	snprintf(kname, sizeof kname, "k%d_%s", y, name);
	str_put(s, "\n");
	opcomment(s, fn, i, "");
	str_printf(s, "/* %lld outputs, each over %lld elements: %s */\n", (long long)nout,
	           (long long)cnt, w == 32 ? "a warp each" : w > 1 ? "a block each" :
	           "a thread each, in order");
	str_printf(s, "static __global__ void __launch_bounds__(%d)\n%s(const %s *__restrict__ x, "
	              "%s *__restrict__ y)\n{\n", BLOCK, kname, stype(dt),
	           any ? "uint8_t" : dtype_c(dt));
	if (w > 1)
		rowhead(g, s, w, nout);
	else
		str_printf(s, "\tlong long o = blockIdx.x * %dLL + threadIdx.x;\n\n"
		              "\tif (o >= %lldLL)\n\t\treturn;\n", BLOCK, (long long)nout);
	str_printf(s, "\tconst %s *xo = x + ", stype(dt));
	gpu_offexpr(s, "o", nk, kd, ks);
	str_printf(s, ";\n\t%s a = 0;\n\n", acc);
	if (w > 1)
		str_printf(s, "\tfor (long long j = lane; j < %lldLL; j += %d)\n", (long long)cnt, w);
	else
		str_printf(s, "\tfor (long long j = 0; j < %lldLL; j++)\n", (long long)cnt);
	str_put(s, any ? "\t\ta |= " : "\t\ta += ");
	if (any && (dt == DP_F16 || dt == DP_BF16))
		str_put(s, "(xo[");
	else if (any)
		str_put(s, "xo[");
	else
		str_printf(s, "(%s)%sxo[", acc, dt == DP_I32 ? "(long long)" : "");
	gpu_offexpr(s, "j", nr, rd, rs);
	str_put(s, any && (dt == DP_F16 || dt == DP_BF16) ? "] & 0x7fff) != 0;\n" :
	           any ? "] != 0;\n" : "];\n");
	if (w == 32)
		str_put(s, any ? "\ta = __any_sync(0xffffffffu, a);\n" : "\ta = wsum(a);\n");
	else if (w > 1)
		str_put(s, any ? "\ta = __syncthreads_or(a);\n" : "\ta = bsum(a);\n");
	if (w > 1)
		str_put(s, "\tif (lane == 0)\n\t");
	if (any)
		str_put(s, "\ty[o] = (uint8_t)(a != 0);\n}\n");
	else if (op->kind == Amean)
		str_printf(s, "\ty[o] = (float)(a / %lld.0);\n}\n", (long long)cnt);
	else
		str_printf(s, "\ty[o] = (%s)a;\n}\n", dtype_c(dt));

	opcomment(g->rec, fn, i, "\t");
	snprintf(args, sizeof args, "v%d, v%d", gV(g, gbase(g, x)), gV(g, y));
	if (w > 1)
		return rowlaunch(g, kname, w, nout, args, BLOCK);
	if (nout > 0) {
		str_printf(g->rec, "\tDP_LAUNCH(%s, %lld, %d, 0)(%s);\n", kname,
		           (long long)((nout + BLOCK - 1) / BLOCK), BLOCK, args);
		launched(g, kname);
	}
	g->nkern++;
	return 0;
}

/* Whether value v can be an operand of a folded add of result type t: f32
 * in memory (an arena buffer, a weight, or a reshape of one, such as the
 * view of a 2-D product's result that GPT-2's addmm is read through: that
 * reshape becomes a view, inmemory), of t's shape. */
static int
addable(Gpu *g, int v, const Type *t)
{
	const Type *tv = ty(g, v);
	int k;

	if (tv->dtype != DP_F32 || tv->rank != t->rank)
		return 0;
	for (k = 0; k < t->rank; k++)
		if (tv->dim[k] != t->dim[k])
			return 0;
	return inmemory(g, v);
}

void
gaddnorm(Gpu *g)
{
	const Fn *fn = g->fn;
	int i, j, k, u;

	g->addnorm = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *g->addnorm);
	for (i = 0; i < fn->nop; i++)
		g->addnorm[i] = -1;
	for (u = 0; u < fn->nop; u++) {
		const Op *ln = &fn->op[u], *op;
		int x = ln->in[0], ok;
		if (ln->kind != Alayernorm || ln->dev != DEV_CUDA || ln->nin < 1)
			continue;
		i = fn->val[x].def;
		if (i < 0 || i >= u)
			continue;
		op = &fn->op[i];
		if (op->kind != Aadd || op->dev != DEV_CUDA || op->part != ln->part || op->nin != 2 ||
		    op->nout != 1 || dp_getf(op, "alpha", 1) != 1 || g->h[x].kind != G_ARENA ||
		    ty(g, x)->dtype != DP_F32 || (g->fold && g->fold[i] >= 0) || g->relu[i] >= 0 ||
		    !addable(g, op->in[0], ty(g, x)) || !addable(g, op->in[1], ty(g, x)))
			continue;
		/* the sum is written where the norm runs: nothing reads it before */
		ok = 1;
		for (j = i + 1; j < u && ok; j++)
			for (k = 0; k < fn->op[j].nin; k++)
				if (fn->op[j].in[k] == x)
					ok = 0;
		if (ok)
			g->addnorm[i] = u;
	}
}

/* The one reader of v's op when v has exactly one, on the device in op's
 * partition; else -1. */
static int
only(const Gpu *g, int v)
{
	const Fn *fn = g->fn;
	int u = g->user[v];

	if (g->nuse[v] != 1 || u < 0 || fn->op[u].dev != DEV_CUDA ||
	    fn->op[u].part != fn->op[fn->val[v].def].part || fn->op[u].nout != 1 ||
	    (g->fold && g->fold[u] >= 0) || g->epimm[u] >= 0 || g->epi[u] >= 0)
		return -1;
	return u;
}

/* Whether v is an f32 constant on the device of n elements (1: a scalar). */
static int
isconstn(const Gpu *g, int v, int64_t n)
{
	const Type *t = ty(g, v);

	return gpu_isconst(g, v) && t->dtype == DP_F32 && dp_numel(t) == n &&
	       (n == 1 || (t->rank == 1 && t->dim[0] == n));
}

void
grms(Gpu *g)
{
	const Fn *fn = g->fn;
	int i;

	g->rms = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *g->rms);
	for (i = 0; i < fn->nop; i++)
		g->rms[i] = -1;
	for (i = 0; i < fn->nop; i++) {   /* p = pow(x, c) -> mean -> add eps -> rsqrt -> mul x -> mul w */
		const Op *p = &fn->op[i], *m, *a, *r, *nm, *y;
		int x = p->in[0], k, mi, ai, ri, ni, yi;
		const Type *tx = ty(g, x);
		const Attr *d;
		int64_t n = tx->rank ? tx->dim[tx->rank - 1] : 0;
		if (p->kind != Apow || p->dev != DEV_CUDA || tx->dtype != DP_F32 || n < 1 ||
		    !dp_type_eq(ty(g, p->out[0]), tx) || !isconstn(g, p->in[1], 1) ||
		    (mi = only(g, p->out[0])) < 0)
			continue;
		m = &fn->op[mi];
		d = dp_attr(m, "dim");
		if (m->kind != Amean || !dp_geti(m, "keepdim", 0) || !d || d->n != 1 ||
		    normdim(d->ints[0], tx->rank) != tx->rank - 1 || (ai = only(g, m->out[0])) < 0)
			continue;
		a = &fn->op[ai];
		if (a->kind != Aadd || a->in[0] != m->out[0] || !isconstn(g, a->in[1], 1) ||
		    dp_getf(a, "alpha", 1) != 1 || (ri = only(g, a->out[0])) < 0)
			continue;
		r = &fn->op[ri];
		if (r->kind != Arsqrt || (ni = only(g, r->out[0])) < 0)
			continue;
		nm = &fn->op[ni];
		if (nm->kind != Amul || dp_other(nm, r->out[0]) != x || (yi = only(g, nm->out[0])) < 0)
			continue;
		y = &fn->op[yi];
		k = dp_other(y, nm->out[0]);
		if (y->kind != Amul || !isconstn(g, k, n) || !dp_type_eq(ty(g, y->out[0]), tx))
			continue;
		g->rms[yi] = i;
	}
}

/* The expression of binary op u's formula on operands a (u's operand 0)
 * and b, as kern.c writes it (alpha its third argument). */
static void
formula2(Str *s, const Op *u, const char *a, const char *b)
{
	str_printf(s, "dps_%s(%s, %s, ", dp_op_formula[u->kind], a, b);
	str_float(s, dp_getf(u, "alpha", 1));
	str_put(s, ")");
}

/* The ops of RMS norm i (g->rms: its last mul): pow, mean, add eps,
 * rsqrt, mul x, mul w; its input x and weight w. */
typedef struct Rms {
	const Op *p, *m, *a, *r, *nm, *y;
	int x, w;
} Rms;

static Rms
rmsops(const Gpu *g, int i)
{
	const Fn *fn = g->fn;
	Rms o;

	o.p = &fn->op[g->rms[i]];
	o.m = &fn->op[g->user[o.p->out[0]]];
	o.a = &fn->op[g->user[o.m->out[0]]];
	o.r = &fn->op[g->user[o.a->out[0]]];
	o.nm = &fn->op[g->user[o.r->out[0]]];
	o.y = &fn->op[i];
	o.x = o.p->in[0];
	o.w = dp_other(o.y, o.nm->out[0]);
	return o;
}

/* Into s: pow(xe, the exponent ce) of RMS norm i as a value of type st
 * (double, or float), x·x where the exponent is 2 (powf otherwise). */
static void
rmssq(const Gpu *g, int i, const char *xe, const char *ce, const char *st, Str *s)
{
	Rms o = rmsops(g, i);

	str_printf(s, "(%s)(%s == 2.0f ? dps_mul(%s, %s, 1.0f) : ", st, ce, xe, xe);
	formula2(s, o.p, xe, ce);
	str_put(s, ")");
}

/* Into s: r = rsqrt(mean + eps) of RMS norm i from its f64 sum of n
 * (sum, an expression) and eps (epse, an expression), each op's formula. */
static void
rmsr(const Gpu *g, int i, const char *sum, const char *epse, int64_t n, Str *s)
{
	Rms o = rmsops(g, i);
	char args[160], f[32];
	double fp[2];
	Str e = {0};

	snprintf(args, sizeof args, "(float)(%s / %lld.0)", sum, (long long)n);
	formula2(&e, o.a, args, epse);
	dp_formula(o.r, f, sizeof f, fp);
	str_printf(s, "dps_%s(%s, ", f, e.p);
	str_float(s, fp[0]);
	str_put(s, ", ");
	str_float(s, fp[1]);
	str_put(s, ")");
	str_free(&e);
}

/* Into s: the result's element of RMS norm i from x's element xe, w's we
 * and r (re), each op's formula in its operands' order. */
static void
rmsy(const Gpu *g, int i, const char *xe, const char *we, const char *re, Str *s)
{
	Rms o = rmsops(g, i);
	Str e = {0};

	formula2(&e, o.nm, o.nm->in[0] == o.x ? xe : re, o.nm->in[0] == o.x ? re : xe);
	formula2(s, o.y, o.y->in[0] == o.w ? we : e.p, o.y->in[0] == o.w ? e.p : we);
	str_free(&e);
}

/* An RMS norm written out (grms) as one row kernel at its last mul i: a
 * block per row sums pow(x, c) in f64, then r = rsqrt(mean + eps) and
 * y = w·(x·r), each op's formula in its operands' order: the separate
 * kernels' results but for the order of the f64 sum (the mean's kernel
 * sums rows up to WIDE long by a warp) and x·x for pow(x, 2) (the
 * exponent read at run time; powf where it is not 2).  Rows of n floats,
 * n a multiple of 4 up to 4096 (a Llama's 768): n/4 threads (rounded up to
 * a warp), each one 16-byte load of x and of w kept in registers between
 * the sum and the result; else BLOCK threads striding over the row.
 * A norm of one row whose readers are all products reading it as their
 * rows (a decode step's q/k/v, gate/up and output head) is held back
 * (1): its GEMV kernel may compute it (mm.c, rms_take), else rms_flush
 * puts it where it would have been. */
int
emit_rms(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	Rms o = rmsops(g, i);
	int x = o.x, w = o.w, v = o.y->out[0], wd, nt, c, k, j, nlin = 0;
	const Type *tx = ty(g, x);
	int64_t n = tx->dim[tx->rank - 1], rows = dp_numel(tx) / n;
	char kname[64], args[160], xe[16], we[16];
	Str ks = {0}, rs = {0}, *s = &ks, *rec = g->rec;
	int rc, v4 = n % 4 == 0 && n <= 4 * 1024;

	helpers(g);
	g->scalar = 1;
	wd = BLOCK;   /* a block per row: with a warp per row each norm took 13.4 us
	                 (H200, eager --profile; bench/RESULTS.md), its lanes' powf in turn */
	nt = v4 ? (int)((n / 4 + 31) / 32 * 32) : BLOCK;
	snprintf(kname, sizeof kname, "k%d_rms", v);
	str_put(s, "\n/* 6 ops, an RMS norm, in one row kernel: */\n");
	opcomment(s, fn, (int)(o.p - fn->op), "");
	opcomment(s, fn, (int)(o.m - fn->op), "");
	opcomment(s, fn, (int)(o.a - fn->op), "");
	opcomment(s, fn, (int)(o.r - fn->op), "");
	opcomment(s, fn, (int)(o.nm - fn->op), "");
	opcomment(s, fn, i, "");
	str_printf(s, "/* %lld rows of %lld: a block each%s */\n", (long long)rows, (long long)n,
	           v4 ? ", a thread per 4 elements (16-byte loads, held in registers)" : "");
	str_printf(s, "static __global__ void __launch_bounds__(%d)\n%s(const float *__restrict__ x, "
	              "const float *__restrict__ c, const float *__restrict__ eps, "
	              "const float *__restrict__ w, float *__restrict__ y)\n{\n", nt, kname);
	rowhead(g, s, wd, rows);
	str_printf(s, "\tconst float *xr = x + o * %lldLL;\n\tfloat *yr = y + o * %lldLL;\n"
	              "\tconst float cc = c[0];\n\tdouble a = 0;\n\tfloat r;\n\n",
	           (long long)n, (long long)n);
	if (v4) {
		str_printf(s, "\tfloat4 xv = {0.0f, 0.0f, 0.0f, 0.0f}, wv = xv, yv;\n\n"
		              "\tif (lane < %lld) {\n"
		              "\t\txv = ((const float4 *)xr)[lane];\n"
		              "\t\twv = ((const float4 *)w)[lane];\n"
		              "\t\ta = ", (long long)(n / 4));
		for (c = 0; c < 4; c++) {
			snprintf(xe, sizeof xe, "xv.%c", "xyzw"[c]);
			str_put(s, c ? " +\n\t\t    " : "");
			rmssq(g, i, xe, "cc", "double", s);
		}
		str_put(s, ";\n\t}\n");
	} else {
		str_printf(s, "\tfor (long long j = lane; j < %lldLL; j += %d)\n\t\ta += ",
		           (long long)n, wd);
		rmssq(g, i, "xr[j]", "cc", "double", s);
		str_put(s, ";\n");
	}
	str_printf(s, "\ta = %s(a);\n\tr = ", wd == 32 ? "wsum" : "bsum");
	rmsr(g, i, "a", "eps[0]", n, s);
	str_put(s, ";\n");
	if (v4) {
		for (c = 0; c < 4; c++) {
			snprintf(xe, sizeof xe, "xv.%c", "xyzw"[c]);
			snprintf(we, sizeof we, "wv.%c", "xyzw"[c]);
			str_printf(s, "\tyv.%c = ", "xyzw"[c]);
			rmsy(g, i, xe, we, "r", s);
			str_put(s, ";\n");
		}
		str_printf(s, "\tif (lane < %lld)\n\t\t((float4 *)yr)[lane] = yv;\n}\n",
		           (long long)(n / 4));
	} else {
		str_printf(s, "\tfor (long long j = lane; j < %lldLL; j += %d)\n\t\tyr[j] = ",
		           (long long)n, wd);
		rmsy(g, i, "xr[j]", "w[j]", "r", s);
		str_put(s, ";\n}\n");
	}

	g->rec = &rs;
	opcomment(g->rec, fn, (int)(o.p - fn->op), "\t");
	opcomment(g->rec, fn, i, "\t");
	snprintf(args, sizeof args, "v%d, v%d, v%d, v%d, v%d", gV(g, gbase(g, x)),
	         gV(g, gbase(g, o.p->in[1])), gV(g, gbase(g, o.a->in[1])), gV(g, gbase(g, w)),
	         gV(g, v));
	rc = rowlaunch(g, kname, wd, rows, args, nt);
	g->rec = rec;
	if (rc != 0) {
		str_free(&ks);
		str_free(&rs);
		return -1;
	}
	for (k = 0; k < fn->nop; k++)   /* its readers: products of its rows alone */
		for (j = 0; j < fn->op[k].nin; j++)
			if (fn->op[k].in[j] == v)
				nlin += fn->op[k].kind == Alinear && j == 0 ? 1 : 1000;
	if (g->gemvnorm && rows == 1 && n % 8 == 0 && nlin == g->nuse[v] && gbase(g, v) == v) {
		str_printf(&rs, "\tDPRT_CUDA_MARK(g, %d, \"%s\");\n", i, dp_op_name[o.y->kind]);
		rms_flush(g);
		g->rmsp = i;
		g->rmsat = g->rec->n;
		g->rmskern = ks;
		g->rmsrec = rs;
		g->nkern--;   /* counted again where rms_flush launches it */
		return 1;
	}
	str_put(&g->kern, ks.p);
	str_put(g->rec, rs.p ? rs.p : "");
	str_free(&ks);
	str_free(&rs);
	return 0;
}

/* The RMS norm held back by emit_rms, if any, where it would have been:
 * its launch into the schedule at the place it was held, its kernel into
 * the file. */
void
rms_flush(Gpu *g)
{
	Str t = {0};

	if (g->rmsp < 0)
		return;
	str_putn(&t, g->rec->p, g->rmsat);
	str_put(&t, g->rmsrec.p ? g->rmsrec.p : "");
	str_put(&t, g->rec->p ? g->rec->p + g->rmsat : "");
	str_free(g->rec);
	*g->rec = t;
	str_put(&g->kern, g->rmskern.p);
	g->nkern++;
	rms_drop(g);
}

/* Forgets the RMS norm held back (its GEMV computes it: one kernel less). */
void
rms_drop(Gpu *g)
{
	if (g->rmsp < 0)
		return;
	str_free(&g->rmskern);
	str_free(&g->rmsrec);
	g->rmsp = -1;
}

/* For the GEMV kernel of product p computing RMS norm i in its prologue
 * (mm.c): the norm's input, exponent, eps and weight, and into s the
 * prologue's statements (each lane's f64 sum of x's n elements in turn,
 * the warp's sum, rn = rsqrt(mean + eps); pre: the exponent and eps were
 * loaded before, as cc and ce), and rmsy's expression of one
 * normalized element from xe, we (the norm's weight, nw) and rn. */
void
rms_operands(const Gpu *g, int i, int *x, int *c, int *eps, int *w)
{
	Rms o = rmsops(g, i);

	*x = gbase(g, o.x);
	*c = gbase(g, o.p->in[1]);
	*eps = gbase(g, o.a->in[1]);
	*w = gbase(g, o.w);
}

/* A lane loads RMS_CHUNK of its 16-byte pieces of the row at once, then
 * sums them in the same order: a loop that summed each piece as it loaded
 * it waited on every load in turn (its exponent test a branch in the
 * body, nothing could be hoisted), 1.7 us of a decode step's norm GEMV of
 * 768 on the H200 (bench/RESULTS.md).  The sums are f64, but f32 where the
 * products are in 16 bits (tune cuda.precision bf16 or f16): the
 * normalized row is rounded to 16 bits before the product, so the f32
 * sum's error (a lane's terms in turn, then the warp's tree: about 30
 * roundings, a few 1e-6 relative at a row of 768) stays far below that
 * rounding's step (2^-8 in bf16, 2^-11 in f16); f64's adds and
 * shuffles cost 1.8% of the ~100M Llama's bf16 decode step on an H100,
 * with the same logits (bench/RESULTS.md). */
void
rms_prologue(const Gpu *g, int i, int64_t n, int pre, Str *s)
{
	int64_t nq = n / 4, per = (nq + 31) / 32;
	int ch = per < RMS_CHUNK ? (int)per : RMS_CHUNK, two;
	const char *st = g->prec16 ? "float" : "double";

	if (!pre)
		str_put(s, "\tconst float cc = nc[0];\n");
	str_printf(s, "\t%s ss = 0;\n\tfloat rn;\n\n"
	              "\tfor (int j0 = 0; j0 < %lld; j0 += %d) {   /* the RMS norm of a's row */\n"
	              "\t\tfloat4 xv[%d];\n\n"
	              "#pragma unroll\n"
	              "\t\tfor (int u = 0; u < %d; u++)   /* the chunk's loads at once */\n"
	              "\t\t\tif (j0 + lane + 32 * u < %lld)\n"
	              "\t\t\t\txv[u] = __ldg((const float4 *)a + j0 + lane + 32 * u);\n",
	           st, (long long)nq, 32 * ch, ch, ch, (long long)nq);
	for (two = 1; two >= 0; two--) {   /* the exponent 2 (x·x), else powf: the test once */
		str_put(s, two ? "\t\tif (cc == 2.0f) {\n" : "\t\t} else {\n");
		str_printf(s, "#pragma unroll\n"
		              "\t\t\tfor (int u = 0; u < %d; u++)\n"
		              "\t\t\t\tif (j0 + lane + 32 * u < %lld)\n"
		              "\t\t\t\t\tss += ", ch, (long long)nq);
		for (int c = 0; c < 4; c++) {
			char xe[16];
			snprintf(xe, sizeof xe, "xv[u].%c", "xyzw"[c]);
			str_put(s, c ? " +\n\t\t\t\t\t      " : "");
			rmssq(g, i, xe, "cc", st, s);
		}
		str_put(s, ";\n");
	}
	str_put(s, "\t\t}\n\t}\n\tfor (int s = 16; s > 0; s /= 2)\n"
	           "\t\tss += __shfl_xor_sync(0xffffffffu, ss, s);\n\trn = ");
	rmsr(g, i, "ss", pre ? "ce" : "neps[0]", n, s);
	str_put(s, ";\n");
}

void
rms_elem(const Gpu *g, int i, const char *xe, const char *we, Str *s)
{
	rmsy(g, i, xe, we, "rn", s);
}

/* The norms' statistics once their sums are in sq (and the layer norm's
 * mean in m): the reduction red (wsum, a warp's; bsum, a block's) of sq,
 * then the layer norm's scale r and shift bias, or the RMS norm's r. */
static void
lnstat(const Op *op, int64_t n, const char *red, Str *s)
{
	str_printf(s, "\tsq = %s(sq);\n\tr = (float)(1.0 / sqrt(sq / %lld.0 + (double)", red,
	           (long long)n);
	str_float(s, dp_getf(op, "eps", 1e-5));
	str_put(s, "));\n\tbias = __fmul_rn(-r, (float)m);\n");
}

static void
rmsstat(const Op *op, int64_t n, const char *red, Str *s)
{
	/* rms_norm's default eps is f32's machine epsilon, as in PyTorch */
	str_printf(s, "\tsq = %s(sq);\n\tr = 1.0f / sqrtf((float)(sq / %lld.0) + ", red,
	           (long long)n);
	str_float(s, dp_getf(op, "eps", 1.1920928955078125e-07));
	str_put(s, ");\n");
}

/* The layer norm's weight and bias applied to its element in u. */
static void
lnaffine(int hasw, int hasb, const char *u, Str *s)
{
	if (hasw)
		str_printf(s, "\t\t%s = __fmul_rn(%s, w[j]);\n", u, u);
	if (hasb)
		str_printf(s, "\t\t%s += b[j];\n", u);
}

/* The store of norm's element j, val: into its row yr, or where x3 (the
 * row's 3xTF32 split of a product's A, x3split) into the split s3r when
 * the launch passed one. */
static void
nstore(Str *s, int64_t x3, const char *ind, const char *val)
{
	if (x3)
		str_printf(s, "%sif (s3r)\n%s\tdp_x3at(s3r + j, %lld, %s);\n%selse\n%s\t", ind, ind,
		           (long long)x3, val, ind, ind);
	else
		str_put(s, ind);
	str_printf(s, "yr[j] = %s;\n", val);
}

/* norm's body for rows of at most REGROW elements, a warp each: the row is
 * loaded once into registers (lane l holds elements l, l + 32, ...: the
 * loads all in flight together) and the statistics and the result are
 * computed from there, where the loops over memory waited on each load in
 * turn three times (ViT-B/16's 768: 11.5 us a norm on the H200,
 * bench/RESULTS.md).  The sums run in the same order as those loops', so
 * the bits are theirs. */
static void
normregs(const Op *op, int ln, int64_t n, int add, int hasw, int hasb, int64_t x3, Str *s)
{
	int npl = (int)((n + 31) / 32);
	char in[48], skip[48];

	in[0] = skip[0] = 0;
	if (n % 32) {   /* the guards of a row that is not whole rounds of 32 */
		snprintf(in, sizeof in, "if (lane + 32 * k < %lld)\n\t\t\t", (long long)n);
		snprintf(skip, sizeof skip, "\t\tif (j >= %lld)\n\t\t\tcontinue;\n", (long long)n);
	}
	str_printf(s, "\tfloat v[%d];\n", npl);
	str_put(s, ln ? "\tdouble sum = 0, sq = 0, m;\n\tfloat r, bias;\n\n"
	              : "\tdouble sq = 0;\n\tfloat r;\n\n");
	str_printf(s, "#pragma unroll\n\tfor (int k = 0; k < %d; k++) {   /* the row, into registers */\n"
	              "\t\tint j = lane + 32 * k;\n\n\t\tv[k] = 0.0f;\n", npl);
	str_put(s, skip);
	if (add)
		str_put(s, "\t\tfloat t = dps_add(ar[j], br[j], 1.0f);\n\n"
		           "\t\txr[j] = t;\n\t\tv[k] = t;\n");
	else
		str_put(s, "\t\tv[k] = xr[j];\n");
	str_put(s, "\t}\n");
	if (ln) {
		str_printf(s, "#pragma unroll\n\tfor (int k = 0; k < %d; k++)\n\t\t%ssum += v[k];\n"
		              "\tm = wsum(sum) / %lld.0;\n"
		              "#pragma unroll\n\tfor (int k = 0; k < %d; k++) {\n"
		              "\t\tdouble d = v[k] - m;\n\n\t\t%ssq += __dmul_rn(d, d);\n\t}\n", npl, in,
		           (long long)n, npl, in);
		lnstat(op, n, "wsum", s);
		str_printf(s, "#pragma unroll\n\tfor (int k = 0; k < %d; k++) {\n"
		              "\t\tint j = lane + 32 * k;\n\t\tfloat u;\n\n%s"
		              "\t\tu = __fmul_rn(v[k], r) + bias;\n", npl, skip);
		lnaffine(hasw, hasb, "u", s);
		nstore(s, x3, "\t\t", "u");
		str_put(s, "\t}\n}\n");
	} else {
		str_printf(s, "#pragma unroll\n\tfor (int k = 0; k < %d; k++)\n"
		              "\t\t%ssq += (double)__fmul_rn(v[k], v[k]);\n", npl, in);
		rmsstat(op, n, "wsum", s);
		str_printf(s, "#pragma unroll\n\tfor (int k = 0; k < %d; k++) {\n"
		              "\t\tint j = lane + 32 * k;\n\n%s", npl, skip);
		nstore(s, x3, "\t\t", hasw ? "__fmul_rn(__fmul_rn(v[k], r), w[j])" : "__fmul_rn(v[k], r)");
		str_put(s, "\t}\n}\n");
	}
}

/* aten.layer_norm and aten.rms_norm over the trailing n elements of each
 * row, as runtime/nn.c computes them: the statistics in f64 (layer norm's
 * variance in a second pass around the mean), the result in f32. */
static int
norm(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	int x = op->in[0], y = op->out[0], ln = op->kind == Alayernorm, k, w;
	const Type *tx = ty(g, x);
	const Attr *ns = dp_attr(op, "normalized_shape");
	int64_t n = prod(tx, tx->rank - (ns ? ns->n : 0), tx->rank), rows;
	int hasw = op->nin > 1, hasb = ln && op->nin > 2;
	int add = fn->val[x].def >= 0 && g->addnorm[fn->val[x].def] == i ? fn->val[x].def : -1;
	char kname[64];
	const char *red;
	Str *s = &g->kern, args = {0};
	int rc, prod;
	int64_t x3;

	for (k = 0; k < op->nin; k++)
		if (ty(g, op->in[k])->dtype != DP_F32) {
			dp_seterr(g->err, "op %d (%s): the cuda target has no kernel for %s tensors "
			          "(only f32)", i, dp_op_name[op->kind],
			          dp_dtype_name[ty(g, op->in[k])->dtype]);
			return -1;
		}
	rows = n ? dp_numel(tx) / n : 0;
	w = n > WIDE ? BLOCK : 32;
	red = w == 32 ? "wsum" : "bsum";
	helpers(g);
	snprintf(kname, sizeof kname, "k%d_%s", y, ln ? "layer_norm" : "rms_norm");
	str_put(s, "\n");
	if (add >= 0)
		opcomment(s, fn, add, "");
	opcomment(s, fn, i, "");
	str_printf(s, "/* %lld rows of %lld: %s%s */\n", (long long)rows, (long long)n,
	           w == 32 ? "a warp each" : "a block each",
	           add >= 0 ? "; the residual add x = a + b written in the first pass" : "");
	/* the split written here only where the kernel's blocks fill the GPU:
	 * three times the stores from a few SMs cost more than the split kernel
	 * (ViT-B/16 at batch 1, 25 blocks: the norm 4.2 -> 12.9 us, its
	 * product 3.2 us faster; bench/RESULTS.md) */
	x3 = (w == 32 ? (rows + WARPS - 1) / WARPS : rows) >= GPU_SMS ?
	     x3split(g, i, y, n, &prod) : 0;   /* K the row: its dims the last */
	if (x3 > 0)
		str_printf(s, "/* its result written as the 3xTF32 split of op %d's A "
		              "(cuda/tf32.cuh) */\n", prod);
	g->x3put |= x3 > 0;
	str_printf(s, "static __global__ void __launch_bounds__(%d)\n%s(", BLOCK, kname);
	if (add >= 0) {
		g->scalar = 1;   /* dps_add, as the add's own kernel computes it */
		str_put(s, "const float *__restrict__ a, const float *__restrict__ b2, "
		           "float *__restrict__ x, ");
	} else {
		str_put(s, "const float *__restrict__ x, ");
	}
	if (hasw)
		str_put(s, "const float *__restrict__ w, ");
	if (hasb)
		str_put(s, "const float *__restrict__ b, ");
	str_printf(s, "float *__restrict__ y%s)\n{\n", x3 ? ", float *__restrict__ s3" : "");
	rowhead(g, s, w, rows);
	str_printf(s, "\t%sfloat *xr = x + o * %lldLL;\n\tfloat *yr = y + o * %lldLL;\n",
	           add >= 0 ? "" : "const ", (long long)n, (long long)n);
	if (x3)
		str_printf(s, "\tfloat *s3r = s3 ? s3 + o * %lldLL : NULL;\n", (long long)(3 * n));
	if (add >= 0)
		str_printf(s, "\tconst float *ar = a + o * %lldLL, *br = b2 + o * %lldLL;\n",
		           (long long)n, (long long)n);
	if (w == 32 && n <= REGROW) {
		normregs(op, ln, n, add >= 0, hasw, hasb, x3, s);
	} else if (ln) {
		str_printf(s, "\tdouble sum = 0, sq = 0, m;\n\tfloat r, bias;\n\n"
		              "\tfor (int j = lane; j < %lld; j += %d)%s\n"
		              "\tm = %s(sum) / %lld.0;\n"
		              "\tfor (int j = lane; j < %lld; j += %d) {\n"
		              "\t\tdouble d = xr[j] - m;\n\t\tsq += __dmul_rn(d, d);\n\t}\n", (long long)n, w,
		           add >= 0 ? " {\n\t\tfloat t = dps_add(ar[j], br[j], 1.0f);\n\n"
		                      "\t\txr[j] = t;   /* read back by this thread below */\n"
		                      "\t\tsum += t;\n\t}" : "\n\t\tsum += xr[j];",
		           red, (long long)n, (long long)n, w);
		lnstat(op, n, red, s);
		str_printf(s, "\tfor (int j = lane; j < %lld; j += %d) {\n"
		              "\t\tfloat v = __fmul_rn(xr[j], r) + bias;\n", (long long)n, w);
		lnaffine(hasw, hasb, "v", s);
		nstore(s, x3, "\t\t", "v");
		str_put(s, "\t}\n}\n");
	} else {
		str_printf(s, "\tdouble sq = 0;\n\tfloat r;\n\n"
		              "\tfor (int j = lane; j < %lld; j += %d)\n"
		              "\t\tsq += (double)__fmul_rn(xr[j], xr[j]);\n", (long long)n, w);
		rmsstat(op, n, red, s);
		str_printf(s, "\tfor (int j = lane; j < %lld; j += %d) {\n", (long long)n, w);
		nstore(s, x3, "\t\t",
		       hasw ? "__fmul_rn(__fmul_rn(xr[j], r), w[j])" : "__fmul_rn(xr[j], r)");
		str_put(s, "\t}\n}\n");
	}
	if (n > 2147483647)
		dp_die("op %d: a row of %lld elements", i, (long long)n);

	if (add >= 0) {
		opcomment(g->rec, fn, add, "\t");
		str_printf(&args, "v%d, v%d, ", gV(g, gbase(g, fn->op[add].in[0])),
		           gV(g, gbase(g, fn->op[add].in[1])));
	}
	opcomment(g->rec, fn, i, "\t");
	str_printf(&args, "v%d, ", gV(g, gbase(g, x)));
	for (k = 1; k < op->nin; k++)
		str_printf(&args, "v%d, ", gV(g, gbase(g, op->in[k])));
	str_printf(&args, "v%d", gV(g, y));
	if (x3)   /* none where the products go to cuBLAS in fp32 */
		str_put(&args, ", g->x3off ? NULL : (float *)g->s3");
	rc = rowlaunch(g, kname, w, rows, args.p, BLOCK);
	str_free(&args);
	return rc;
}

/* argmax or softmax along one axis: one warp per row of x viewed as
 * [outer, n, inner]. */
static int
rowop(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	int x = op->in[0], y = op->out[0];
	const Type *tx = ty(g, x);
	int d = normdim(dp_geti(op, "dim", 0), tx->rank);
	int64_t n = tx->rank ? tx->dim[d] : 1, inner = prod(tx, tx->rank ? d + 1 : 0, tx->rank);
	int64_t rows = prod(tx, 0, d) * inner;
	int am = op->kind == Oargmax;
	char kname[64];
	Str *s = &g->kern;

	if (tx->dtype != DP_F32) {
		dp_seterr(g->err, "op %d (%s): the cuda target has no kernel for %s tensors "
		          "(only f32)", i, dp_op_name[op->kind], dp_dtype_name[tx->dtype]);
		return -1;
	}
	if (n > 2147483647)
		dp_die("op %d: a row of %lld elements", i, (long long)n);
	if (am)
		helpers(g);
	snprintf(kname, sizeof kname, "k%d_%s", y, dp_op_name[op->kind]);
	str_put(s, "\n");
	opcomment(s, fn, i, "");
	str_printf(s, "/* one warp per row: %lld rows of %lld, stride %lld */\n", (long long)rows,
	           (long long)n, (long long)inner);
	str_printf(s, "static __global__ void __launch_bounds__(%d)\n%s(const float *__restrict__ x, "
	              "%s *__restrict__ y)\n{\n", BLOCK, kname, am ? "int64_t" : "float");
	str_printf(s, "\tlong long row = blockIdx.x * %dLL + threadIdx.x / 32;\n"
	              "\tint lane = threadIdx.x %% 32;\n\n"
	              "\tif (row >= %lldLL)\n\t\treturn;\n"
	              "\tlong long base = row / %lldLL * %lldLL + row %% %lldLL;\n"
	              "\tconst float *xr = x + base;\n", WARPS, (long long)rows,
	           (long long)inner, (long long)(n * inner), (long long)inner);
	if (am) {
		str_printf(s, "\tfloat bv = 0.0f;\n\tint bi = -1;\n\n"
		              "\tfor (int j = lane; j < %lld; j += 32) {\n"
		              "\t\tfloat v = xr[(long long)j * %lld];\n"
		              "\t\tif (better(v, j, bv, bi)) {\n\t\t\tbv = v;\n\t\t\tbi = j;\n\t\t}\n\t}\n"
		              "\tfor (int s = 16; s > 0; s /= 2) {\n"
		              "\t\tfloat ov = __shfl_down_sync(0xffffffffu, bv, s);\n"
		              "\t\tint oi = __shfl_down_sync(0xffffffffu, bi, s);\n"
		              "\t\tif (better(ov, oi, bv, bi)) {\n\t\t\tbv = ov;\n\t\t\tbi = oi;\n\t\t}\n\t}\n"
		              "\tif (lane == 0)\n\t\ty[row] = bi < 0 ? 0 : bi;\n}\n",
		           (long long)n, (long long)inner);
	} else {
		str_printf(s, "\tfloat *yr = y + base, mx = -INFINITY, r;\n\tint nan = 0;\n"
		              "\tdouble sum = 0;\n\n"
		              "\tfor (int j = lane; j < %lld; j += 32) {\n"
		              "\t\tfloat v = xr[(long long)j * %lld];\n"
		              "\t\tmx = v > mx ? v : mx;\n\t\tnan |= v != v;\n\t}\n"
		              "\tfor (int s = 16; s > 0; s /= 2) {\n"
		              "\t\tmx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, s));\n"
		              "\t\tnan |= __shfl_xor_sync(0xffffffffu, nan, s);\n\t}\n"
		              "\tif (nan)\n\t\tmx = NAN;   /* a NaN makes the whole row NaN */\n"
		              "\tfor (int j = lane; j < %lld; j += 32)\n"
		              "\t\tsum += expf(xr[(long long)j * %lld] - mx);\n"
		              "\tfor (int s = 16; s > 0; s /= 2)\n"
		              "\t\tsum += __shfl_xor_sync(0xffffffffu, sum, s);\n"
		              "\tr = (float)(1.0 / sum);\n"
		              "\tfor (int j = lane; j < %lld; j += 32)\n"
		              "\t\tyr[(long long)j * %lld] = expf(xr[(long long)j * %lld] - mx) * r;\n}\n",
		           (long long)n, (long long)inner, (long long)n, (long long)inner,
		           (long long)n, (long long)inner, (long long)inner);
	}
	opcomment(g->rec, fn, i, "\t");
	g->wonly[y] = rows > 0;   /* written, never read (emit.c, copyout) */
	if (rows > 0) {
		str_printf(g->rec, "\tDP_LAUNCH(%s, %lld, %d, 0)(v%d, v%d);\n", kname,
		           (long long)((rows + WARPS - 1) / WARPS), BLOCK,
		           gV(g, gbase(g, x)), gV(g, y));
		launched(g, kname);
	}
	g->nkern++;
	return 0;
}

/* Whether emit_reduce computes op: a kernel of its own reading whole rows. */
int
isreduce(const Fn *fn, const Op *op)
{
	switch (op->kind) {
	case Oargmax: case Osoftmax: case Asum: case Amean: case Aany:
	case Alayernorm: case Armsnorm:
		return op->dev == DEV_CUDA;
	}
	return 0;
}

int
emit_reduce(Gpu *g, int i)
{
	switch (g->fn->op[i].kind) {
	case Oargmax: case Osoftmax:
		return rowop(g, i);
	case Asum: case Amean: case Aany:
		return reduction(g, i);
	}
	return norm(g, i);
}
