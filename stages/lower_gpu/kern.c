/* kern.c: generated elementwise kernels.  A fused chain of elementwise,
 * shape, source and gather ops (normalize, arithmetic, comparisons, unary
 * math, casts, permutes, slices, concatenations, embeddings...) becomes one
 * kernel over the elements of its last result, each element computed from
 * the chain's inputs in memory by index arithmetic.  The arithmetic is the
 * cpu runtime's (runtime/elem.c), expression for expression; f32 products
 * go through __fmul_rn so that nvcc cannot contract them into an fma the
 * cpu does not compute. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

enum { BLOCK = 256, MAXPARAM = 2 * GPU_MAXREAD, MAXGRID = 1 << 20 };

static const char *const ctypes[DP_NDTYPE] = {
	[DP_U8] = "uint8_t", [DP_I8] = "int8_t", [DP_I16] = "int16_t", [DP_I32] = "int32_t",
	[DP_I64] = "int64_t", [DP_F32] = "float", [DP_F64] = "double", [DP_BOOL] = "uint8_t",
};

/* The C type of a dtype in kernels, or NULL (f16, bf16). */
const char *
dtype_c(int dtype)
{
	return dtype >= 0 && dtype < DP_NDTYPE ? ctypes[dtype] : NULL;
}

/* The type elements are moved as: f16 and bf16 are not computed on, but
 * shape ops, where and gathers move their bits. */
static const char *
stype(int dtype)
{
	return ctypes[dtype] ? ctypes[dtype] : "uint16_t";
}

/* Marks v as named by the schedule and returns it. */
int
gV(Gpu *g, int v)
{
	g->used[v] = 1;
	return v;
}

/* The op's text as a comment line. */
void
opcomment(Str *s, const Fn *fn, int i, const char *indent)
{
	str_printf(s, "%s/* ", indent);
	op_text(s, fn, &fn->op[i]);
	str_put(s, " */\n");
}

/* The check after a launch. */
void
launched(Gpu *g, const char *kname)
{
	str_printf(g->rec, "\tif (dprt_cuda_launched(\"%s\", err, errn) != 0)\n\t\treturn -1;\n",
	           kname);
}

void
klaunch(Gpu *g, const char *kname, long long blocks, int threads)
{
	str_printf(g->rec, "\tDP_LAUNCH(%s, %lld, %d, %d)(", kname, blocks, threads, g->pdl);
}

void
kwait(const Gpu *g, Str *s)
{
	if (g->pdl)
		str_put(s, "\tdp_pdl_wait();   /* the kernels before: done, their writes seen */\n");
}

/* A value a kernel computed, where and at which index: a value that plan.c
 * inlines into several readers (manyread) may be reached twice in one
 * kernel, through two of them. */
typedef struct Kcomp {
	int v, depth, scope;
	Str idx, out;   /* the index it was computed at, the expression of its element */
} Kcomp;

/* A name a statement of the kernel declares, in the block at depth with
 * serial scope. */
typedef struct Kdecl {
	char name[32];
	int depth, scope;
} Kdecl;

/* One kernel being generated. */
typedef struct Kern {
	Gpu *g;
	Str body;          /* statements computing one element */
	int depth;         /* nesting of the statements being written */
	int param[MAXPARAM]; /* values read from memory, in order */
	int np;
	int ops[1024];     /* ops computed, for the comment */
	int nops;
	int root;          /* the op whose result the kernel writes */
	const char *ity;   /* index type: "int" or "long long" */
	int scope[64];     /* the serial of the block open at each depth */
	int nscope;        /* blocks opened so far */
	Kcomp *comp;       /* the values computed, for a value read twice (manyread) */
	int ncomp, capcomp;
	int nagain;        /* values computed again in a scope of their own */
	Kdecl *decl;       /* the names declared so far (shadowing: elem) */
	int ndecl, capdecl;
	size_t lastline;   /* where the statement written last starts in body */
	int lastdepth, lastscope;
} Kern;

/* A dim of a rank-rank type, negative from the end. */
int
normdim(int64_t d, int rank)
{
	if (d < 0)
		d += rank;
	if (d < 0 || d >= (rank ? rank : 1))
		dp_die("dim %lld out of range for rank %d", (long long)d, rank);
	return (int)d;
}

/* The product of t's dims from..to-1. */
int64_t
prod(const Type *t, int from, int to)
{
	int64_t n = 1;
	int i;

	for (i = from; i < to; i++)
		n *= t->dim[i];
	return n;
}

/* Dense element strides of t. */
static void
dense(const Type *t, int64_t *s)
{
	int64_t st = 1;
	int i;

	for (i = t->rank - 1; i >= 0; i--) {
		s[i] = st;
		st *= t->dim[i];
	}
}

/* Appends to e the linear index, in a tensor with element strides s, of
 * the element at linear index idx of a dense tensor of type t:
 * sum over axes of (idx / dense stride % dim) * s. */
static void
remap(Str *e, const char *idx, const Type *t, const int64_t *s)
{
	int64_t ds[DP_MAXRANK];
	int k, first = 1;

	dense(t, ds);
	for (k = 0; k < t->rank; k++) {
		if (t->dim[k] == 1 || s[k] == 0)
			continue;
		str_put(e, first ? "" : " + ");
		first = 0;
		if (ds[k] == 1)
			str_printf(e, "%s", idx);
		else
			str_printf(e, "%s / %lld", idx, (long long)ds[k]);
		if (k > 0 && ds[k] * t->dim[k] < ds[0] * t->dim[0])
			str_printf(e, " %% %lld", (long long)t->dim[k]);
		if (s[k] != 1)
			str_printf(e, " * %lld", (long long)s[k]);
	}
	if (first)
		str_put(e, "0");
}

/* Whether s are t's own dense strides (the remap is the identity). */
static int
identity(const Type *t, const int64_t *s)
{
	int64_t ds[DP_MAXRANK];
	int k;

	dense(t, ds);
	for (k = 0; k < t->rank; k++)
		if (t->dim[k] != 1 && s[k] != ds[k])
			return 0;
	return 1;
}

/* Records the name the statement written last declares, if it declares
 * one ("TYPE NAME = ...": words before the name; an assignment has none). */
static void
declared(Kern *k)
{
	const char *p = k->body.p ? k->body.p + k->lastline : NULL, *eq, *n;
	size_t len;

	if (!p || k->lastline >= k->body.n)
		return;
	k->lastline = k->body.n;
	while (*p == '\t')
		p++;
	if (!(eq = strstr(p, " = ")) || memchr(p, '\n', (size_t)(eq - p)))
		return;
	for (n = eq; n > p && (isalnum((unsigned char)n[-1]) || n[-1] == '_'); n--)
		;
	len = (size_t)(eq - n);
	if (n == p || n[-1] != ' ' || len == 0 || len >= sizeof k->decl->name)
		return;   /* no type before the name: an assignment */
	if (k->ndecl == k->capdecl) {
		k->capdecl = k->capdecl ? 2 * k->capdecl : 64;
		k->decl = realloc(k->decl, (size_t)k->capdecl * sizeof *k->decl);
		if (k->decl == NULL)
			dp_die("out of memory");
	}
	Kdecl *d = &k->decl[k->ndecl++];
	memcpy(d->name, n, len);
	d->name[len] = 0;
	d->depth = k->lastdepth, d->scope = k->lastscope;
}

/* The body after the indentation of a new statement. */
static Str *
line(Kern *k)
{
	int d;

	declared(k);
	k->lastline = k->body.n;
	k->lastdepth = k->depth, k->lastscope = k->scope[k->depth];
	for (d = 0; d <= k->depth; d++)
		str_put(&k->body, "\t");
	return &k->body;
}

/* Whether text names the identifier name (a whole word of it). */
static int
names(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = text; (p = strstr(p, name)) != NULL; p++) {
		int before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
		int after = isalnum((unsigned char)p[n]) || p[n] == '_';
		if (!before && !after)
			return 1;
	}
	return 0;
}

/* A block of statements opened, and closed. */
static void
enter(Kern *k)
{
	if (++k->depth >= (int)(sizeof k->scope / sizeof *k->scope))
		dp_die("fused kernel nested too deep");
	k->scope[k->depth] = ++k->nscope;
}

static void
leave(Kern *k)
{
	k->depth--;
}

static void
kfree(Kern *k)
{
	int j;

	for (j = 0; j < k->ncomp; j++) {
		str_free(&k->comp[j].idx);
		str_free(&k->comp[j].out);
	}
	free(k->comp);
	free(k->decl);
	str_free(&k->body);
}

static int
param(Kern *k, int v)
{
	int p;

	for (p = 0; p < k->np; p++)
		if (k->param[p] == v)
			return p;
	if (k->np == MAXPARAM)
		dp_die("a fused kernel reads more than %d tensors", MAXPARAM);
	k->param[k->np] = v;
	return k->np++;
}

/* Fails unless dtype dt is among the bits of mask (1 << DP_*); have names
 * them for the message. */
static int
needdt(Kern *k, int i, int dt, unsigned mask, const char *have)
{
	if (mask >> dt & 1)
		return 0;
	dp_seterr(k->g->err, "op %d (%s): the cuda target has no kernel for %s tensors (only %s)",
	          i, dp_op_name[k->g->fn->op[i].kind], dp_dtype_name[dt], have);
	return -1;
}

#define M(d) (1u << (d))
enum {
	MF32 = M(DP_F32),
	MARITH = M(DP_F32) | M(DP_I64) | M(DP_I32),
	MCMP = M(DP_F32) | M(DP_I64) | M(DP_I32) | M(DP_BOOL) | M(DP_U8),
	MNUM = M(DP_U8) | M(DP_I8) | M(DP_I16) | M(DP_I32) | M(DP_I64) | M(DP_F32) | M(DP_F64) |
	       M(DP_BOOL),
	MANY = MNUM | M(DP_F16) | M(DP_BF16),
};

/* A per-channel table of normalize, as __constant__ memory. */
static void
gpu_chantable(Gpu *g, int y, const char *what, const Attr *a, int64_t C)
{
	int64_t c;

	str_printf(&g->kern, "static __constant__ float c%d_%s[%lld] = {", y, what, (long long)C);
	for (c = 0; c < C; c++) {
		str_put(&g->kern, c ? ", " : "");
		str_float(&g->kern, a->floats[a->n == 1 ? 0 : c]);
	}
	str_put(&g->kern, "};\n");
}

/* A C conversion of expression x from dtype s to dtype d, as PyTorch
 * converts (float -> integer truncates through int64; anything -> bool is
 * "nonzero"). */
static void
convert(Str *e, int d, int s, const char *x)
{
	int sf = s == DP_F32 || s == DP_F64, df = d == DP_F32 || d == DP_F64;

	if (d == DP_BOOL)
		str_printf(e, "(uint8_t)(%s != 0)", x);
	else if (s == DP_BOOL)
		str_printf(e, "(%s)(%s != 0)", ctypes[d], x);
	else if (sf && !df)
		str_printf(e, "(%s)(int64_t)(%s)", ctypes[d], x);
	else
		str_printf(e, "(%s)(%s)", ctypes[d], x);
}

/* Appends "x is nonzero" for an element x of dtype dt (f16 and bf16 by
 * their bits: -0 is zero, NaN is not, as runtime/elem.c's truth). */
static void
truth(Str *e, int dt, const char *x)
{
	if (dt == DP_F16 || dt == DP_BF16)
		str_printf(e, "(%s & 0x7fff) != 0", x);
	else
		str_printf(e, "%s != 0", x);
}

/* Appends a literal of value v converted to dtype dt as runtime/elem.c's
 * put() converts it: through f32 for f32, through int64 (0 beyond its
 * range) for integers, nonzero for bool. */
static int
literal(Str *e, int dt, double v)
{
	int64_t i = v > -9.2e18 && v < 9.2e18 ? (int64_t)v : 0;
	char buf[64];

	switch (dt) {
	case DP_F32:
		str_float(e, v);
		return 0;
	case DP_F64:
		if (isnan(v))
			str_put(e, "(double)NAN");
		else if (isinf(v))
			str_put(e, v < 0 ? "(-(double)INFINITY)" : "(double)INFINITY");
		else {
			snprintf(buf, sizeof buf, "%.17g", v);
			if (!strpbrk(buf, ".en"))
				strcat(buf, ".0");
			str_put(e, buf);
		}
		return 0;
	case DP_BOOL:
		str_printf(e, "(uint8_t)%d", v != 0);
		return 0;
	case DP_U8: case DP_I8: case DP_I16: case DP_I32: case DP_I64:
		str_printf(e, "(%s)%lldLL", ctypes[dt], (long long)i);
		return 0;
	}
	return -1;
}

static int elem(Kern *k, int v, const char *idx, Str *out);

/* The element of value x at the index idx of a dense tensor of type to,
 * x being read with element strides s from offset off: a variable named
 * after v and tag holds the index in x unless it is idx itself. */
static int
strided(Kern *k, int x, const Type *to, const int64_t *s, int64_t off, const char *idx,
        int v, const char *tag, Str *out)
{
	char var[64];
	Str e = {0};
	int rc;

	if (off == 0 && dp_numel(ty(k->g, x)) == dp_numel(to) && identity(to, s))
		return elem(k, x, idx, out);
	remap(&e, idx, to, s);
	if (off != 0)
		str_printf(&e, " + %lld", (long long)off);
	if (strcmp(e.p, "0") == 0) {   /* one element, broadcast */
		str_free(&e);
		return elem(k, x, "0", out);
	}
	snprintf(var, sizeof var, "i%d%s", v, tag);
	str_printf(line(k), "%s %s = %s;\n", k->ity, var, e.p);
	rc = elem(k, x, var, out);
	str_free(&e);
	return rc;
}

/* The element of operand a of op at the index of result type to
 * (broadcasting). */
static int
operand(Kern *k, int a, const Type *to, const char *idx, const char *tag, int v, Str *out)
{
	int64_t s[DP_MAXRANK];

	dp_bstrides(ty(k->g, a), to, s);
	return strided(k, a, to, s, 0, idx, v, tag, out);
}

/* y axis j of a permutation is x axis perm[j]. */
static int
permuted(Kern *k, int v, int x, const int64_t *perm, const char *idx, Str *out)
{
	const Type *tx = ty(k->g, x);
	int64_t xs[DP_MAXRANK], s[DP_MAXRANK];
	int j;

	dense(tx, xs);
	for (j = 0; j < tx->rank; j++)
		s[j] = xs[perm[j]];
	return strided(k, x, ty(k->g, v), s, 0, idx, v, "", out);
}

/* aten.slice and aten.select: the operand's element strides for the
 * result's axes (s) and the offset of the window's first element. */
static int64_t
windowof(const Gpu *g, const Op *op, int64_t *s)
{
	const Type *tx = ty(g, op->in[0]);
	int64_t xs[DP_MAXRANK], at;
	int d = normdim(dp_geti(op, "dim", 0), tx->rank), j, n;

	dense(tx, xs);
	if (op->kind == Aslice) {   /* start clipped as the shape rule clips it */
		int64_t len = tx->dim[d];
		at = dp_geti(op, "start", 0);
		if (at < 0)
			at = at < -len ? 0 : at + len;
		if (at > len)
			at = len;
		memcpy(s, xs, sizeof xs);
		s[d] *= dp_geti(op, "step", 1);
		return at * xs[d];
	}
	at = dp_geti(op, "index", 0);
	if (at < 0)
		at += tx->dim[d];
	for (j = n = 0; j < tx->rank; j++)
		if (j != d)
			s[n++] = xs[j];
	return at * xs[d];
}

/* aten.slice and aten.select: a strided window of the operand. */
static int
window(Kern *k, int v, const Op *op, const char *idx, Str *out)
{
	int64_t s[DP_MAXRANK], off = windowof(k->g, op, s);

	return strided(k, op->in[0], ty(k->g, v), s, off, idx, v, "", out);
}

/* aten.cat and aten.stack: the operand whose slab holds the element,
 * chosen by its position along dim; only that operand is read. */
static int
pieces(Kern *k, int v, const Op *op, int i, const char *idx)
{
	const Type *t = ty(k->g, v);
	int stack = op->kind == Astack, d, j, open = 0;
	int64_t D, inner, outer, at = 0;
	char var[64];
	Str *b;

	if (t->rank == 0) {
		dp_seterr(k->g->err, "op %d (%s): the cuda target has no kernel for scalar "
		          "operands", i, dp_op_name[op->kind]);
		return -1;
	}
	d = normdim(dp_geti(op, "dim", 0), t->rank);
	D = t->dim[d];
	inner = prod(t, d + 1, t->rank);
	outer = prod(t, 0, d);
	str_printf(line(k), "%s t%d = 0;\n", stype(t->dtype), v);
	b = line(k);
	str_printf(b, "%s p%d = %s", k->ity, v, idx);
	if (inner != 1)
		str_printf(b, " / %lld", (long long)inner);
	if (outer != 1)
		str_printf(b, " %% %lld", (long long)D);
	str_put(b, ";\n");
	for (j = 0; j < op->nin; j++) {
		int x = op->in[j];
		int64_t n = stack ? 1 : ty(k->g, x)->dim[d];
		Str e = {0};
		int rc;
		if (n == 0)
			continue;
		/* the operand's index: its outer block, then the offset within
		 * the slab, shifted back by the slabs before it */
		if (at + n < D)
			str_printf(line(k), "%sif (p%d < %lld) {\n", open ? "} else " : "", v,
			           (long long)(at + n));
		else
			str_printf(line(k), "%s{\n", open ? "} else " : "");
		open = 1;
		enter(k);
		snprintf(var, sizeof var, "i%d_%d", v, j);
		b = line(k);
		str_printf(b, "%s %s = ", k->ity, var);
		if (outer != 1)
			str_printf(b, "%s / %lld * %lld + ", idx, (long long)(D * inner),
			           (long long)(n * inner));
		str_printf(b, "%s", idx);
		if (outer != 1)
			str_printf(b, " %% %lld", (long long)(D * inner));
		if (at != 0)
			str_printf(b, " - %lld", (long long)(at * inner));
		str_put(b, ";\n");
		rc = elem(k, x, var, &e);
		if (rc == 0)
			str_printf(line(k), "t%d = %s;\n", v, e.p);
		str_free(&e);
		leave(k);
		if (rc != 0)
			return -1;
		at += n;
		if (at >= D)
			break;
	}
	if (open)
		str_put(line(k), "}\n");
	return 0;
}

/* The end of a gather, once j<v> holds the index read from the index
 * operand: t<v> is x's element at the linear index at (an expression of
 * j<v>), j<v> counted from the end when negative; 0 when it is out of
 * [0, n) (aten.embedding, aten.index, aten.gather). */
static int
gathered(Kern *k, int v, int x, int64_t n, const char *at)
{
	char var[64];
	Str e = {0};
	int rc;

	str_printf(line(k), "%s t%d = 0;\n\n", stype(ty(k->g, v)->dtype), v);
	str_printf(line(k), "if (j%d < 0)\n", v);
	enter(k);
	str_printf(line(k), "j%d += %lld;\n", v, (long long)n);
	leave(k);
	str_printf(line(k), "if (j%d >= 0 && j%d < %lld) {   /* else 0: out of range */\n", v, v,
	           (long long)n);
	enter(k);
	snprintf(var, sizeof var, "i%dx", v);
	str_printf(line(k), "%s %s = %s;\n", k->ity, var, at);
	rc = elem(k, x, var, &e);
	if (rc == 0)
		str_printf(line(k), "t%d = %s;\n", v, e.p);
	leave(k);
	str_put(line(k), "}\n");
	str_free(&e);
	return rc;
}

/* aten.embedding (rows of a matrix) and aten.index (slabs along dim): the
 * index operand is read first, then the gathered element.  An index out of
 * range gives 0 and is recorded (dprt_fault_at, runtime/cuda/fault.cuh):
 * the run then fails with the cpu's message. */
static int
gather(Kern *k, int v, const Op *op, int i, const char *idx)
{
	int x = op->in[0], ix = op->in[1], rc;
	const Type *tx = ty(k->g, x), *t = ty(k->g, v);
	int d = op->kind == Aindex ? normdim(dp_geti(op, "dim", 0), tx->rank) : 0;
	int64_t n = tx->dim[d], inner = prod(tx, d + 1, tx->rank), m = dp_numel(ty(k->g, ix));
	char var[64];
	Str a = {0}, at = {0}, *b;

	if (needdt(k, i, ty(k->g, ix)->dtype, M(DP_I32) | M(DP_I64), "i32, i64 indices") != 0)
		return -1;
	/* the position in the index tensor: the middle of [outer, m, inner] */
	snprintf(var, sizeof var, "i%dj", v);
	b = line(k);
	str_printf(b, "%s %s = %s", k->ity, var, idx);
	if (inner != 1)
		str_printf(b, " / %lld", (long long)inner);
	if (m * inner < dp_numel(t))
		str_printf(b, " %% %lld", (long long)m);
	str_put(b, ";\n");
	if (elem(k, ix, var, &a) != 0)
		goto fail;
	str_printf(line(k), "long long j%d = (long long)%s;\n", v, a.p);
	str_printf(line(k), "if (j%d < -%lldLL || j%d >= %lldLL)\n", v, (long long)n, v, (long long)n);
	str_printf(line(k), "\tdprt_fault_at(%d, %d, %s, j%d, %lldLL);\n", i, op->kind == Aindex,
	           var, v, (long long)n);
	k->g->faults = 1;
	if (m * inner < dp_numel(t))
		str_printf(&at, "%s / %lld * %lld + ", idx, (long long)(m * inner),
		           (long long)(n * inner));
	str_printf(&at, "(%s)j%d", k->ity, v);
	if (inner != 1)
		str_printf(&at, " * %lld + %s %% %lld", (long long)inner, idx, (long long)inner);
	rc = gathered(k, v, x, n, at.p);
	str_free(&a);
	str_free(&at);
	return rc;
fail:
	str_free(&a);
	return -1;
}

/* aten.arange, aten.full, aten.full_like, aten.scalar_tensor: computed
 * from the index, converted as runtime/elem.c's dprt_arange and dprt_fill
 * convert (arange in f64, as start + step·i). */
static int
source(Kern *k, int v, const Op *op, int i, const char *idx)
{
	const Type *t = ty(k->g, v);
	Str *b;

	if (needdt(k, i, t->dtype, MNUM, "u8, i8, i16, i32, i64, f32, f64, bool") != 0)
		return -1;
	if (op->kind == Arand || op->kind == Arandn) {   /* runtime/dpscalar.h, as the cpu */
		k->g->scalar = 1;
		b = line(k);
		str_printf(b, "%s t%d = ", ctypes[t->dtype], v);
		if (t->dtype == DP_I64)
			str_put(b, "(int64_t)dps_rbits(");
		else
			str_printf(b, "dps_rand%s_%s(", op->kind == Arandn ? "n" : "",
			           t->dtype == DP_F64 ? "f64" : "f32");
		str_printf(b, "(int64_t)%lluULL, (int64_t)%lluULL, (int64_t)(%s));\n",
		           (unsigned long long)dp_geti(op, "seed", 0),
		           (unsigned long long)dp_geti(op, "stream", 0), idx);
		return 0;
	}
	if (op->kind != Aarange) {
		b = line(k);
		str_printf(b, "%s t%d = ", ctypes[t->dtype], v);
		literal(b, t->dtype, dp_getf(op, "value", 0));
		str_put(b, ";\n");
		return 0;
	}
	b = line(k);
	str_printf(b, "double a%d = ", v);
	literal(b, DP_F64, dp_getf(op, "start", 0));
	str_put(b, " + __dmul_rn(");
	literal(b, DP_F64, dp_getf(op, "step", 1));
	str_printf(b, ", (double)%s);\n", idx);
	b = line(k);
	switch (t->dtype) {
	case DP_F32: case DP_F64:
		str_printf(b, "%s t%d = (%s)a%d;\n", ctypes[t->dtype], v, ctypes[t->dtype], v);
		break;
	case DP_BOOL:
		str_printf(b, "uint8_t t%d = (uint8_t)(a%d != 0);\n", v, v);
		break;
	default:
		str_printf(b, "%s t%d = (%s)(a%d > -9.2e18 && a%d < 9.2e18 ? (int64_t)a%d : 0);\n",
		           ctypes[t->dtype], v, ctypes[t->dtype], v, v, v);
	}
	return 0;
}

/* aten.gather along dim d: the index tensor has the result's shape; the
 * element at the result's coordinates c reads x at c with c[d] replaced by
 * the index (negative from the end; out of range gives 0, as gather's). */
static int
gatherdim(Kern *k, int v, const Op *op, int i, const char *idx)
{
	int x = op->in[0], ix = op->in[1], rc, a;
	const Type *tx = ty(k->g, x), *t = ty(k->g, v);
	int d = tx->rank ? normdim(dp_geti(op, "dim", 0), tx->rank) : 0;
	int64_t n = tx->rank ? tx->dim[d] : 1;
	Str ai = {0}, at = {0};

	if (needdt(k, i, ty(k->g, ix)->dtype, M(DP_I32) | M(DP_I64), "i32, i64 indices") != 0 ||
	    elem(k, ix, idx, &ai) != 0) {
		str_free(&ai);
		return -1;
	}
	str_printf(line(k), "long long j%d = (long long)%s;\n", v, ai.p);
	str_put(&at, "0");
	for (a = 0; a < t->rank; a++) {
		int64_t below = prod(t, a + 1, t->rank), xs = prod(tx, a + 1, tx->rank);
		if (a == d)
			str_printf(&at, " + (%s)j%d * %lld", k->ity, v, (long long)xs);
		else
			str_printf(&at, " + %s / %lld %% %lld * %lld", idx, (long long)below,
			           (long long)t->dim[a], (long long)xs);
	}
	rc = gathered(k, v, x, n, at.p);
	str_free(&ai);
	str_free(&at);
	return rc;
}

/* The binary ops: arithmetic, comparisons, logic (runtime/elem.c's). */
static int
binary(Kern *k, int v, const Op *op, int i, const char *idx)
{
	const Type *t = ty(k->g, v);
	int da = ty(k->g, op->in[0])->dtype, db = ty(k->g, op->in[1])->dtype, rc = -1;
	const char *c = ctypes[da], *u = da == DP_I64 ? "uint64_t" : "uint32_t", *cmp = NULL;
	double alpha = dp_getf(op, "alpha", 1);
	Str a = {0}, b = {0}, *s;

	static const char *const cmps[][2] = { { "eq", "==" }, { "ne", "!=" }, { "lt", "<" },
	                                       { "le", "<=" }, { "gt", ">" }, { "ge", ">=" } };
	const char *f = dp_op_formula[op->kind];
	int arith = op->kind == Aadd || op->kind == Asub || op->kind == Amul;

	switch (dp_op_form[op->kind]) {
	case Fbinary:
		rc = arith ? needdt(k, i, da, MARITH, "f32, i64, i32") : needdt(k, i, da, MF32, "f32");
		break;
	case Fbinaryn:
		rc = needdt(k, i, da, M(DP_F32) | M(DP_I64), "f32, i64");
		break;
	case Fcompare:
		for (size_t j = 0; j < sizeof cmps / sizeof *cmps; j++)
			if (strcmp(cmps[j][0], f) == 0)
				cmp = cmps[j][1];
		if (!cmp)
			dp_die("op %d (%s): no comparison %s", i, dp_op_name[op->kind], f);
		rc = needdt(k, i, da, MCMP, "f32, i64, i32, bool, u8");
		break;
	default:   /* logical: any dtypes */
		rc = needdt(k, i, da, MANY, "") || needdt(k, i, db, MANY, "");
	}
	if (rc == 0 && (operand(k, op->in[0], t, idx, "a", v, &a) != 0 ||
	                operand(k, op->in[1], t, idx, "b", v, &b) != 0))
		rc = -1;   /* (an operand the target cannot compute: its error) */
	if (rc != 0)
		goto done;
	s = line(k);
	str_printf(s, "%s t%d = ", stype(t->dtype), v);
	if ((dp_op_form[op->kind] == Fbinary || dp_op_form[op->kind] == Fbinaryn) &&
	    da == DP_F32) {   /* runtime/dpscalar.h */
		k->g->scalar = 1;
		str_printf(s, "dps_%s(%s, %s, ", f, a.p, b.p);
		str_float(s, alpha);
		str_put(s, ")");
	} else if (dp_op_form[op->kind] == Fbinaryn) {
		k->g->scalar = 1;
		str_printf(s, "dps_%s_i64(%s, %s, 0)", f, a.p, b.p);
	} else if (arith) {   /* integers wrap, alpha truncated */
		const char *sign = op->kind == Aadd ? "+" : op->kind == Asub ? "-" : "*";
		if (op->kind == Amul)
			str_printf(s, "(%s)((%s)%s * (%s)%s)", c, u, a.p, u, b.p);
		else
			str_printf(s, "(%s)((%s)%s %s (%s)%lldLL * (%s)%s)", c, u, a.p, sign, u,
			           (long long)(da == DP_I64 ? (int64_t)alpha : (int32_t)alpha), u,
			           b.p);
	} else if (dp_op_form[op->kind] == Flogic) {
		str_put(s, "(uint8_t)((");
		truth(s, da, a.p);
		str_put(s, op->kind == Aand ? ") && (" : op->kind == Aor ? ") || (" : ") != (");
		truth(s, db, b.p);
		str_put(s, "))");
	} else
		str_printf(s, "(uint8_t)(%s %s %s)", a.p, cmp, b.p);
	str_put(s, ";\n");
	rc = 0;
done:
	str_free(&a);
	str_free(&b);
	return rc;
}

/* The unary ops: logical_not of any dtype; the others call their formula
 * from runtime/dpscalar.h (the cpu's), on f32, or dps_NAME_i64 on i64 for
 * the Funaryn form (bounds rounded inwards, as lower_cpu rounds them). */
static int
unary(Kern *k, int v, const Op *op, int i, const char *idx)
{
	const Type *t = ty(k->g, v);
	int dt = ty(k->g, op->in[0])->dtype, num = dp_op_form[op->kind] == Funaryn;
	Str a = {0}, *s;
	char f[32];
	double p[2];
	int rc = -1;

	if (op->kind == Anot) {
		if (needdt(k, i, dt, MANY, "") != 0 || elem(k, op->in[0], idx, &a) != 0)
			goto done;
		s = line(k);
		str_printf(s, "uint8_t t%d = (uint8_t)!(", v);
		truth(s, dt, a.p);
		str_put(s, ");\n");
		rc = 0;
		goto done;
	}
	dp_formula(op, f, sizeof f, p);
	k->g->scalar = 1;
	if (dt == DP_I64 && num) {
		if (elem(k, op->in[0], idx, &a) != 0)
			goto done;
		s = line(k);
		str_printf(s, "int64_t t%d = dps_%s_i64(%s, ", v, f, a.p);
		str_i64(s, ceil(p[0]));
		str_put(s, ", ");
		str_i64(s, floor(p[1]));
		str_put(s, ");\n");
		rc = 0;
		goto done;
	}
	if (needdt(k, i, dt, MF32, num ? "f32, i64" : "f32") != 0 ||
	    needdt(k, i, t->dtype, MF32, "f32") != 0 || elem(k, op->in[0], idx, &a) != 0)
		goto done;
	s = line(k);
	str_printf(s, "float t%d = dps_%s(%s, ", v, f, a.p);
	str_float(s, p[0]);
	str_put(s, ", ");
	str_float(s, p[1]);
	str_put(s, ");\n");
	rc = 0;
done:
	str_free(&a);
	return rc;
}

/* aten.batch_norm in inference form: per channel (axis 1) scale and shift,
 * computed as runtime/nn.c's dprt_batchnorm_f32 computes them. */
static int
batchnorm(Kern *k, int v, const Op *op, int i, const char *idx)
{
	const Type *t = ty(k->g, v);
	int64_t C = t->rank > 1 ? t->dim[1] : 1, inner = prod(t, 2, t->rank);
	Str p[5] = {{0}}, *s;
	char cv[32];
	int j, rc = -1;

	for (j = 0; j < 5; j++)
		if (needdt(k, i, ty(k->g, op->in[j])->dtype, MF32, "f32") != 0)
			return -1;
	if (elem(k, op->in[0], idx, &p[0]) != 0)
		goto done;
	snprintf(cv, sizeof cv, "i%dc", v);
	s = line(k);
	str_printf(s, "%s %s = %s", k->ity, cv, idx);
	if (inner != 1)
		str_printf(s, " / %lld", (long long)inner);
	if (C * inner < dp_numel(t))
		str_printf(s, " %% %lld", (long long)C);
	str_put(s, ";\n");
	for (j = 1; j < 5; j++)   /* weight, bias, mean, var: [C] */
		if (elem(k, op->in[j], cv, &p[j]) != 0)
			goto done;
	s = line(k);
	str_printf(s, "float s%d = __fmul_rn(1.0f / sqrtf(%s + ", v, p[4].p);
	str_float(s, dp_getf(op, "eps", 1e-5));
	str_printf(s, "), %s);\n", p[1].p);
	str_printf(line(k), "float t%d = __fmul_rn(%s, s%d) + (%s - __fmul_rn(%s, s%d));\n", v,
	           p[0].p, v, p[2].p, p[3].p, v);
	rc = 0;
done:
	for (j = 0; j < 5; j++)
		str_free(&p[j]);
	return rc;
}

/* elem's statements for inlined value v at idx, in the block being
 * written; op v's listed once for the kernel's comment. */
static int
compute(Kern *k, int v, const char *idx, Str *out)
{
	Gpu *g = k->g;
	const Fn *fn = g->fn;
	int i = fn->val[v].def, j;
	const Op *op = &fn->op[i];
	const Type *t = ty(g, v);
	Str a = {0}, *s;
	int rc = -1;

	for (j = 0; j < k->nops && k->ops[j] != i; j++)
		;
	if (j == k->nops) {   /* (computed before: one comment) */
		if (k->nops == (int)(sizeof k->ops / sizeof *k->ops))
			dp_die("fused chain too long");
		k->ops[k->nops++] = i;
	}
	switch (op->kind) {
	case Aview: case Aclone: case Obound:
		return elem(k, op->in[0], idx, out);
	case Apermute: {   /* legalized: dims >= 0 */
		const Type *tx = ty(g, op->in[0]);
		if (tx->rank < 2)
			return elem(k, op->in[0], idx, out);
		return permuted(k, v, op->in[0], dp_attr(op, "dims")->ints, idx, out);
	}
	case Aexpand:
		return operand(k, op->in[0], t, idx, "", v, out);
	case Aslice: case Aselect:
		return window(k, v, op, idx, out);
	case Acat: case Astack:
		if (pieces(k, v, op, i, idx) != 0)
			goto done;
		break;
	case Aembedding: case Aindex:
		if (gather(k, v, op, i, idx) != 0)
			goto done;
		break;
	case Agather:
		if (gatherdim(k, v, op, i, idx) != 0)
			goto done;
		break;
	case Aarange: case Afull: case Afulllike: case Ascalar: case Arand: case Arandn:
		if (source(k, v, op, i, idx) != 0)
			goto done;
		break;
	case Onormalize: {
		const Type *tx = ty(g, op->in[0]);
		const Attr *mean = dp_attr(op, "mean"), *sd = dp_attr(op, "std");
		int ax = normdim(dp_geti(op, "axis", -1), tx->rank);
		int64_t C = tx->rank ? tx->dim[ax] : 1, inner = prod(tx, tx->rank ? ax + 1 : 0, tx->rank);
		Str c = {0};
		if ((tx->dtype != DP_U8 && tx->dtype != DP_F32) || t->dtype != DP_F32) {
			dp_seterr(g->err, "op %d (normalize): the cuda target has no kernel for %s "
			          "to %s (only u8 or f32 to f32)", i, dp_dtype_name[tx->dtype],
			          dp_dtype_name[t->dtype]);
			goto done;
		}
		if (!mean || !sd || mean->kind != A_FLOATS || sd->kind != A_FLOATS ||
		    (mean->n != C && mean->n != 1) || (sd->n != C && sd->n != 1))
			dp_die("op %d: normalize tables do not match %lld channels", i, (long long)C);
		gpu_chantable(g, v, "mean", mean, C);
		gpu_chantable(g, v, "std", sd, C);
		if (elem(k, op->in[0], idx, &a) != 0)
			goto done;
		if (C == 1)
			str_put(&c, "0");
		else if (inner == 1)
			str_printf(&c, "%s %% %lld", idx, (long long)C);
		else
			str_printf(&c, "%s / %lld %% %lld", idx, (long long)inner, (long long)C);
		s = line(k);
		str_printf(s, "float t%d = (__fmul_rn((float)%s, ", v, a.p);
		str_float(s, dp_getf(op, "scale", 1));
		str_printf(s, ") - c%d_mean[%s]) / c%d_std[%s];\n", v, c.p, v, c.p);
		str_free(&c);
		break;
	}
	case Abatchnorm:
		if (batchnorm(k, v, op, i, idx) != 0)
			goto done;
		break;
	case Awhere: {
		Str c = {0}, b = {0};
		int r = operand(k, op->in[0], t, idx, "c", v, &c) == 0 &&
		        operand(k, op->in[1], t, idx, "a", v, &a) == 0 &&
		        operand(k, op->in[2], t, idx, "b", v, &b) == 0;
		if (r)
			str_printf(line(k), "%s t%d = %s ? %s : %s;\n", stype(t->dtype), v, c.p, a.p,
			           b.p);
		str_free(&c);
		str_free(&b);
		if (!r)
			goto done;
		break;
	}
	case Ocast: {
		int sd = ty(g, op->in[0])->dtype, dd = t->dtype;
		if (elem(k, op->in[0], idx, &a) != 0)
			goto done;
		s = line(k);
		str_printf(s, "%s t%d = ", stype(dd), v);
		if (ctypes[sd] && ctypes[dd]) {
			convert(s, dd, sd, a.p);
		} else {   /* f16, bf16 (their bits): through f32, as runtime/cast.c */
			Str f = {0};
			g->halfcast = 1;
			if (!ctypes[sd])
				str_printf(&f, "dp_%s_f32(%s)", dp_dtype_name[sd], a.p);
			else if (sd == DP_F32)
				str_put(&f, a.p);
			else if (sd == DP_F64)
				str_printf(&f, "dp_f64_f32odd(%s)", a.p);
			else if (sd == DP_I64)
				str_printf(&f, "dp_f64_f32odd(dp_i64_f64odd(%s))", a.p);
			else if (sd == DP_BOOL)
				str_printf(&f, "(float)(%s != 0)", a.p);
			else   /* (exact in f64, rounded once to f32) */
				str_printf(&f, "__double2float_rn((double)%s)", a.p);
			if (!ctypes[dd])
				str_printf(s, "dp_f32_%s(%s)", dp_dtype_name[dd], f.p);
			else
				convert(s, dd, DP_F32, f.p);
			str_free(&f);
		}
		str_put(s, ";\n");
		break;
	}
	default:
		switch (dp_op_form[op->kind]) {
		case Funary: case Funaryn:
			if (unary(k, v, op, i, idx) != 0)
				goto done;
			break;
		case Fbinary: case Fbinaryn: case Fcompare:
			if (binary(k, v, op, i, idx) != 0)
				goto done;
			break;
		case Flogic:
			if ((op->nin == 1 ? unary : binary)(k, v, op, i, idx) != 0)
				goto done;
			break;
		default:
			dp_die("op %d (%s) inlined into a kernel", i, dp_op_name[op->kind]);
		}
	}
	str_printf(out, "t%d", v);
	rc = 0;
done:
	str_free(&a);
	return rc;
}

/* Emits the statements computing value v at linear index idx (a variable
 * or expression); *out receives an expression of its element.  The names
 * of those statements' variables are v's: where the kernel computed v
 * before at the same index, in a block still open, that element is read
 * again; where at another index, in the block being written, v is
 * computed again in a lambda of its own (its names then shadow the
 * others), its result a variable named after v and a count. */
static int
elem(Kern *k, int v, const char *idx, Str *out)
{
	Gpu *g = k->g;
	int j, clash = 0, rc;
	Str e = {0};

	if (g->h[v].kind != G_INLINE) {
		if (g->h[v].kind == G_VIEW && g->h[v].trans)
			dp_die("value %d: an elementwise kernel reads a transposed view", v);
		if (g->h[v].kind == G_HOST)
			dp_die("value %d: a kernel reads a host value", v);
		str_printf(out, "x%d[%s]", param(k, gbase(g, v)), idx);
		return 0;
	}
	declared(k);
	for (j = k->ncomp - 1; j >= 0; j--) {
		const Kcomp *c = &k->comp[j];
		int hidden = 0;
		if (c->v != v || c->depth > k->depth || k->scope[c->depth] != c->scope)
			continue;   /* another value's, or in a block closed since */
		/* a name it reads declared again in an open block inside its
		 * own (the same index variable's name for another index, as a
		 * value read at two places of a cat gets): that name is
		 * another variable here */
		for (int q = 0; q < k->ndecl && !hidden; q++) {
			const Kdecl *d = &k->decl[q];
			hidden = d->depth > c->depth && d->depth <= k->depth &&
			         k->scope[d->depth] == d->scope &&
			         (names(c->idx.p, d->name) || names(c->out.p, d->name));
		}
		if (hidden)
			continue;
		if (strcmp(c->idx.p, idx) == 0) {
			str_put(out, c->out.p);
			return 0;
		}
		clash |= c->depth == k->depth;
	}
	if (clash) {
		int n = k->nagain++;
		str_printf(line(k), "const auto u%d_%d = [&]() {\n", v, n);
		enter(k);
		rc = compute(k, v, idx, &e);
		if (rc == 0)
			str_printf(line(k), "return %s;\n", e.p);
		leave(k);
		str_put(line(k), "}();\n");
		str_free(&e);
		str_printf(&e, "u%d_%d", v, n);
	} else {
		rc = compute(k, v, idx, &e);
	}
	if (rc == 0) {
		Kcomp *c;
		if (k->ncomp == k->capcomp) {
			k->capcomp = k->capcomp ? 2 * k->capcomp : 64;
			k->comp = realloc(k->comp, (size_t)k->capcomp * sizeof *k->comp);
			if (k->comp == NULL)
				dp_die("out of memory");
		}
		c = &k->comp[k->ncomp++];
		memset(c, 0, sizeof *c);
		c->v = v, c->depth = k->depth, c->scope = k->scope[k->depth];
		str_put(&c->idx, idx);
		str_put(&c->out, e.p);
		str_put(out, e.p);
	}
	str_free(&e);
	return rc;
}

/* The most elements of any tensor the kernel computing v touches: its
 * index arithmetic must not overflow on any of them. */
static int64_t
span(const Gpu *g, int v)
{
	const Op *op = &g->fn->op[g->fn->val[v].def];
	int64_t n = dp_numel(ty(g, v)), m;
	int j;

	if (g->h[v].kind != G_INLINE)
		return n;
	for (j = 0; j < op->nin; j++)
		if ((m = span(g, op->in[j])) > n)
			n = m;
	return n;
}

static int
cmpint(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Kernel and launch geometry for n elements. */
static int64_t
blocks(int64_t n, int64_t per)
{
	int64_t b = (n + per - 1) / per;

	return b > MAXGRID ? MAXGRID : b;
}

/* Small elementwise kernels run as one launch.  A kernel of few blocks
 * (a decoder step's RoPE and cache writes) is held rather than launched;
 * the kernels held after it that neither read what it writes nor write
 * what it reads or writes join it, and kflush launches them as one kernel
 * whose blocks are theirs side by side, each block running its kernel's
 * body for its element.  A group of one is launched as it would have been. */
enum { GROUPMAX = 8, GROUPBLOCKS = 16 };

/* An elementwise kernel of at least UNROLLMIN elements takes UNROLL a
 * thread, BLOCK apart: one element a thread leaves a single load in flight
 * per thread, too few bytes to keep the memory busy (a GELU over 4.8M
 * floats ran at 1.6 TB/s).  Where all of a block's elements are in range
 * the UNROLL bodies run without a bounds check, so their loads issue
 * together.  UNROLLMIN 2^18, not 2^20: ViT-B/16's batch-1 GELU (605K
 * floats) made the model 0.6-1.1% faster on the H200 (bench/RESULTS.md).
 * Not measured below: there the grid would have 256 blocks or fewer, under
 * two an SM. */
enum { UNROLL = 4, UNROLLMIN = 1 << 18 };

typedef struct Kmember {
	char name[80];
	int op;            /* the op whose mark the launch is (its last) */
	long long blocks;
	long long loop;    /* a grid-stride loop over this many long long indices
	                      (too many for the grid or an int): runs alone */
	long long n;       /* elements, where kflush writes the bounds check */
	long long ne;      /* elements, for a GEMV's tail (ktail): n, or an
	                      index_write's, whose body checks them */
	int unroll;        /* UNROLL elements a thread (n of them): runs alone */
	int np, param[MAXPARAM]; /* the values read, as x0, x1... */
	int y;             /* the value written */
	int at;            /* the value whose element i the body computes (y, or an
	                      index_write's src) */
	int iw;            /* an index_write: y passed cast to its type */
	int inplace;       /* y is a state written in place (index_write) */
	long long x3k;     /* y is a 3xTF32 product's A of rows of x3k: written as its
	                      split into s3 where the launch passes one (x3split);
	                      runs alone */
	const char *ytype;
	Str head;          /* the comment lines above the kernel */
	Str body;          /* the statements for element i, from its bounds check
	                      unless n is set */
} Kmember;

typedef struct Kgroup {
	Kmember m[GROUPMAX];
	int n;
} Kgroup;

static void
kmfree(Kmember *m)
{
	str_free(&m->head);
	str_free(&m->body);
}

void
gmark(Gpu *g, int i)
{
	int h = nnhead(g, i);

	if (gvh_held(g, i))
		return;   /* the GEMV held: gvh_emit marks it */
	str_printf(g->rec, "\tDPRT_CUDA_MARK(g, %d, \"%s\");\n", h, dp_op_name[g->fn->op[h].kind]);
}

/* The memory of value v as a space and a byte range: the arena's bytes, or
 * (weights, a state, anything else) all of its base's. */
static void
region(const Gpu *g, int v, int *sp, int64_t *lo, int64_t *hi)
{
	int b = gbase(g, v);

	if (g->h[b].kind == G_ARENA) {
		*sp = -1, *lo = g->h[b].off, *hi = g->h[b].off + (g->h[b].bytes > 0 ? g->h[b].bytes : 1);
	} else {
		*sp = b, *lo = 0, *hi = 1;
	}
}

int
goverlap(const Gpu *g, int a, int b)
{
	int sa, sb;
	int64_t la, ha, lb, hb;

	region(g, a, &sa, &la, &ha);
	region(g, b, &sb, &lb, &hb);
	return sa == sb && la < hb && lb < ha;
}

/* Whether m may run beside the kernels held: no value one writes is read
 * or written by another. */
static int
independent(const Gpu *g, const Kmember *m)
{
	const Kgroup *kg = g->kg;
	int j, p;

	for (j = 0; j < kg->n; j++) {
		const Kmember *o = &kg->m[j];
		if (goverlap(g, m->y, o->y))
			return 0;
		for (p = 0; p < m->np; p++)
			if (goverlap(g, m->param[p], o->y))
				return 0;
		for (p = 0; p < o->np; p++)
			if (goverlap(g, o->param[p], m->y))
				return 0;
	}
	return 1;
}

/* The parameters of m, their names prefixed by pre; s3 the split's where
 * m writes one (a kernel's, not its element function's). */
static void
kparams(const Gpu *g, Str *s, const Kmember *m, const char *pre, int s3)
{
	for (int p = 0; p < m->np; p++)
		str_printf(s, "const %s *__restrict__ %sx%d, ", stype(ty(g, m->param[p])->dtype), pre, p);
	str_printf(s, "%s *__restrict__ %sy", m->ytype, pre);
	if (s3 && m->x3k)
		str_printf(s, ", float *__restrict__ %ss3", pre);
}

/* m's launch arguments. */
static void
kargs(Gpu *g, Str *s, const Kmember *m)
{
	for (int p = 0; p < m->np; p++)
		str_printf(s, "v%d, ", gV(g, m->param[p]));
	if (m->iw)
		str_printf(s, "(%s *)", m->ytype);
	str_printf(s, "v%d", gV(g, m->y));
	if (m->x3k)   /* none where the products go to cuBLAS in fp32 */
		str_put(s, ", g->x3off ? NULL : (float *)g->s3");
}

/* The statement storing val as m's element idx: into y, or as the split
 * of a 3xTF32 product's A (runtime/cuda/tf32.cuh) where the launch passed
 * s3. */
static void
kstore(Str *s, const Kmember *m, const char *ind, const char *idx, const char *val)
{
	if (m->x3k)
		str_printf(s, "%sif (s3)\n%s\tdp_x3put(s3, %lld, %s, %s);\n%selse\n%s\t", ind, ind,
		           m->x3k, idx, val, ind, ind);
	else
		str_put(s, ind);
	str_printf(s, "y[%s] = %s;\n", idx, val);
}

/* m's bounds check, where kflush writes it (m->n). */
static void
kcheck(Str *s, const Kmember *m)
{
	if (m->n)
		str_printf(s, "\tif (i >= %lld)\n\t\treturn;\n", m->n);
}

/* m's element function, its comment lines before it: NAME_at(i, ...)
 * computes and stores element i (a group's member, a GEMV's tail). */
static void
katfn(const Gpu *g, Str *s, const Kmember *m)
{
	str_put(s, m->head.p ? m->head.p : "");
	str_printf(s, "static __device__ __forceinline__ void\n%s_at(int i, ", m->name);
	kparams(g, s, m, "", 0);
	str_put(s, ")\n{\n");
	kcheck(s, m);
	str_put(s, m->body.p);
	str_put(s, "}\n\n");
}

/* The kernel of m, UNROLL elements a thread: its body a function giving
 * element i, called for i, i + BLOCK, ...  Where the block's elements are
 * all in range the UNROLL values are computed before any is stored, so
 * nothing orders one's loads after another's store. */
static void
kunrolled(Gpu *g, const Kmember *m)
{
	Str *s = &g->kern;
	Str a = {0};
	int u, p;
	char r[32];

	for (p = 0; p < m->np; p++)
		str_printf(&a, "x%d, ", p);
	str_printf(s, "static __device__ __forceinline__ %s\n%s_at(int i, ", m->ytype, m->name);
	kparams(g, s, m, "", 0);
	str_put(s, ")\n{\n");
	str_put(s, m->body.p);
	str_printf(s, "}\n\n/* %d elements a thread, %d apart */\n"
	              "static __global__ void __launch_bounds__(%d)\n%s(", UNROLL, BLOCK, BLOCK,
	           m->name);
	kparams(g, s, m, "", 1);
	str_put(s, ")\n{\n");
	kwait(g, s);
	str_printf(s, "\tint i = blockIdx.x * %d + threadIdx.x;\n\n"
	              "\tif (i + %d < %lld) {   /* all in range: the loads in flight together */\n"
	              "\t\t%s v[%d];\n\n", UNROLL * BLOCK, (UNROLL - 1) * BLOCK, m->n, m->ytype,
	           UNROLL);
	for (u = 0; u < UNROLL; u++)
		str_printf(s, "\t\tv[%d] = %s_at(i + %d, %sy);\n", u, m->name, u * BLOCK, a.p);
	for (u = 0; u < UNROLL; u++) {
		char idx[32], val[16];
		snprintf(idx, sizeof idx, "i + %d", u * BLOCK);
		snprintf(val, sizeof val, "v[%d]", u);
		kstore(s, m, "\t\t", idx, val);
	}
	if (!m->x3k) {
		str_printf(s, "\t\treturn;\n\t}\n\tfor (int u = 0; u < %d; u++)\n"
		              "\t\tif (i + u * %d < %lld)\n\t\t\ty[i + u * %d] = %s_at(i + u * %d, %sy);\n}\n",
		           UNROLL, BLOCK, m->n, BLOCK, m->name, BLOCK, a.p);
	} else {
		str_printf(s, "\t\treturn;\n\t}\n\tfor (int u = 0; u < %d; u++)\n"
		              "\t\tif (i + u * %d < %lld) {\n\t\t\t%s r = %s_at(i + u * %d, %sy);\n\n",
		           UNROLL, BLOCK, m->n, m->ytype, m->name, BLOCK, a.p);
		snprintf(r, sizeof r, "i + u * %d", BLOCK);
		kstore(s, m, "\t\t\t", r, "r");
		str_put(s, "\t\t}\n}\n");
	}
	str_free(&a);
}

/* A GEMV kernel's tail (Gtail): which of the kernels held after the GEMV
 * kernel held (g->gvh) its blocks can compute, each element in the one
 * block that computes every column of the GEMV's results it reads.  The
 * element reads are followed concretely, as elem and compute index them
 * (walk), for every element: a chain's reads are known at this stage. */
typedef struct Walk {
	const Gpu *g;
	int (*f)(void *u, int v, int64_t j);   /* each element of memory read */
	void *u;
} Walk;

/* remap's index as a number. */
static int64_t
remapi(int64_t i, const Type *t, const int64_t *s)
{
	int64_t ds[DP_MAXRANK], j = 0;

	dense(t, ds);
	for (int k = 0; k < t->rank; k++)
		if (t->dim[k] != 1 && s[k] != 0)
			j += i / ds[k] % t->dim[k] * s[k];
	return j;
}

static int walk(Walk *w, int v, int64_t i, int root);

/* operand's element read (broadcasting). */
static int
walkop(Walk *w, int a, const Type *to, int64_t i)
{
	int64_t s[DP_MAXRANK];

	dp_bstrides(ty(w->g, a), to, s);
	return walk(w, a, remapi(i, to, s), 0);
}

/* The elements of memory that element i of value v reads (v computed as
 * inlined where root): w->f for each; -1 where an op moves elements in a
 * way this does not follow (gathers, random sources, batch norm). */
static int
walk(Walk *w, int v, int64_t i, int root)
{
	const Gpu *g = w->g;
	const Op *op;
	const Type *t = ty(g, v), *tx;
	int64_t xs[DP_MAXRANK], s[DP_MAXRANK], at, D, inner, outer, p;
	int j, d;

	if (!root && g->h[v].kind != G_INLINE)
		return w->f(w->u, gbase(g, v), i);
	op = &g->fn->op[g->fn->val[v].def];
	switch (op->kind) {
	case Aview: case Aclone: case Obound: case Ocast: case Onormalize:
		return walk(w, op->in[0], i, 0);
	case Apermute:
		tx = ty(g, op->in[0]);
		if (tx->rank < 2)
			return walk(w, op->in[0], i, 0);
		dense(tx, xs);
		for (j = 0; j < tx->rank; j++)
			s[j] = xs[dp_attr(op, "dims")->ints[j]];
		return walk(w, op->in[0], remapi(i, t, s), 0);
	case Aexpand:
		return walkop(w, op->in[0], t, i);
	case Aslice: case Aselect:   /* as window */
		at = windowof(g, op, s);
		return walk(w, op->in[0], remapi(i, t, s) + at, 0);
	case Acat: case Astack:   /* as pieces */
		if (t->rank == 0)
			return -1;
		d = normdim(dp_geti(op, "dim", 0), t->rank);
		D = t->dim[d];
		inner = prod(t, d + 1, t->rank);
		outer = prod(t, 0, d);
		p = outer != 1 ? i / inner % D : i / inner;
		for (j = 0, at = 0; j < op->nin; j++) {
			int64_t nj = op->kind == Astack ? 1 : ty(g, op->in[j])->dim[d];
			if (nj == 0)
				continue;
			if (p < at + nj || at + nj >= D)
				return walk(w, op->in[j], (outer != 1 ? i / (D * inner) * (nj * inner) +
				                                        i % (D * inner) : i) - at * inner, 0);
			at += nj;
		}
		return 0;
	case Aarange: case Afull: case Afulllike: case Ascalar:
		return 0;
	case Awhere:
		return walkop(w, op->in[0], t, i) || walkop(w, op->in[1], t, i) ||
		       walkop(w, op->in[2], t, i) ? -1 : 0;
	default:
		switch (dp_op_form[op->kind]) {
		case Funary: case Funaryn:
			return walk(w, op->in[0], i, 0);
		case Flogic:
			if (op->nin == 1)
				return walk(w, op->in[0], i, 0);
			/* fall through */
		case Fbinary: case Fbinaryn: case Fcompare:
			return walkop(w, op->in[0], t, i) || walkop(w, op->in[1], t, i) ? -1 : 0;
		}
	}
	return -1;
}

/* What walk finds for one element: the first unit of the GEMV's results it
 * reads (-1: none so far), and the other units read with it, as pairs. */
typedef struct Tread {
	const Gpu *g;
	int64_t unit;
	int64_t *pair;
	int npair, cap;
} Tread;

static int
tread(void *u, int v, int64_t j)
{
	Tread *t = u;
	int64_t un = gvh_unit(t->g, v, j);

	if (un < 0 || un == t->unit)
		return 0;   /* (other memory, written before the GEMV) */
	if (t->unit < 0) {
		t->unit = un;
		return 0;
	}
	if (t->npair + 2 > t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->pair = realloc(t->pair, (size_t)t->cap * sizeof *t->pair);
		if (t->pair == NULL)
			dp_die("out of memory");
	}
	t->pair[t->npair++] = t->unit;
	t->pair[t->npair++] = un;
	return 0;
}

static int64_t
ufind(int64_t *up, int64_t u)
{
	while (up[u] != u)
		u = up[u] = up[up[u]];
	return u;
}

/* Whether the GEMV's blocks can compute member m, which reads its results
 * (and writes nothing it reads or writes): then each element's first unit
 * into eu[] and the units read together into *tr's pairs. */
static int
tmember(Gpu *g, const Kmember *m, int64_t *eu, Tread *tr)
{
	int reads = 0, p;

	if (m->loop || m->unroll || m->x3k || m->ne <= 0 || m->ne >= 1 << 28 ||
	    gvh_touches(g, m->y, 1))
		return 0;
	for (p = 0; p < m->np; p++) {
		if (gvh_unit(g, m->param[p], 0) >= 0)
			reads = 1;
		else if (gvh_touches(g, m->param[p], 0))
			return 0;   /* a result's bytes other than as the result */
	}
	if (!reads)
		return 0;
	for (int64_t i = 0; i < m->ne; i++) {
		Walk w = {.g = g, .f = tread, .u = tr};
		tr->unit = -1;
		if (walk(&w, m->at, i, 1) != 0)
			return 0;
		eu[i] = tr->unit;
	}
	return 1;
}

static void
tfree(Gtail *t)
{
	free(t->slot);
	free(t->off);
	free(t->ent);
	str_free(&t->fns);
	str_free(&t->params);
	str_free(&t->args);
	str_free(&t->calls);
}

/* The tail of the GEMV kernel held among the kernels held (kg), into *t,
 * take[j] set for the members it takes: their count (0: none, t empty). */
static int
ktail(Gpu *g, Kgroup *kg, Gtail *t, int *take)
{
	int64_t nu = gvh_units(g), *up, *eu[GROUPMAX] = {0}, *csz, *head, *nxt, *blk, total = 0;
	Tread tr = {.g = g};
	int j, r, nt = 0, nb = 0, fill = GV_WARPS, *cur;

	memset(t, 0, sizeof *t);
	if (!g->gvtail || nu <= 0)
		return 0;
	up = malloc((size_t)nu * 5 * sizeof *up);
	if (up == NULL)
		dp_die("out of memory");
	csz = up + nu, head = csz + nu, nxt = head + nu, blk = nxt + nu;
	for (int64_t u = 0; u < nu; u++)
		up[u] = u, csz[u] = 0, head[u] = -1;
	for (j = 0; j < kg->n; j++) {
		const Kmember *m = &kg->m[j];
		take[j] = 0;
		if ((eu[j] = malloc((size_t)(m->ne > 0 ? m->ne : 1) * sizeof **eu)) == NULL)
			dp_die("out of memory");
		tr.npair = 0;
		if (!tmember(g, m, eu[j], &tr) || total + m->ne > 32 * nu)
			continue;
		take[j] = 1;
		nt++;
		total += m->ne;
		for (int q = 0; q < tr.npair; q += 2) {   /* the units read together */
			int64_t a = ufind(up, tr.pair[q]), b = ufind(up, tr.pair[q + 1]);
			if (a != b)
				up[a > b ? a : b] = a < b ? a : b;
		}
	}
	free(tr.pair);
	for (int64_t u = nu - 1; u >= 0; u--) {   /* the components, units ascending */
		int64_t c = ufind(up, u);
		nxt[u] = head[c];
		head[c] = u;
		if (++csz[c] > GV_WARPS)
			nt = 0;   /* more than a block's warps read together: none */
	}
	if (nt == 0)
		goto none;
	/* each component in one block, in the order of its first unit: the
	 * warps as they were where nothing is read across them */
	t->slot = malloc((size_t)nu * GV_WARPS * sizeof *t->slot);
	if (t->slot == NULL)
		dp_die("out of memory");
	for (int64_t u = 0; u < nu; u++) {
		if (ufind(up, u) != u)
			continue;
		if (fill + csz[u] > GV_WARPS) {
			for (fill = 0; fill < GV_WARPS; fill++)
				t->slot[nb * GV_WARPS + fill] = -1;
			nb++;
			fill = 0;
		}
		for (int64_t v = head[u]; v >= 0; v = nxt[v]) {
			t->slot[(nb - 1) * GV_WARPS + fill++] = (int)v;
			blk[v] = nb - 1;
		}
	}
	t->nblocks = nb;
	/* the elements by block: where an element reads no result, any block */
	t->off = calloc((size_t)nb + 1, sizeof *t->off);
	cur = calloc((size_t)nb + 1, sizeof *cur);
	t->ent = malloc((size_t)total * sizeof *t->ent);
	if (t->off == NULL || cur == NULL || t->ent == NULL)
		dp_die("out of memory");
	for (j = 0, total = 0; j < kg->n; j++)
		for (int64_t i = 0; take[j] && i < kg->m[j].ne; i++)
			t->off[(eu[j][i] >= 0 ? blk[eu[j][i]] : total++ % nb) + 1]++;
	for (r = 0; r < nb; r++)
		t->off[r + 1] += t->off[r];
	for (j = 0, r = 0, total = 0; j < kg->n; j++) {
		if (!take[j])
			continue;
		for (int64_t i = 0; i < kg->m[j].ne; i++) {
			int64_t b = eu[j][i] >= 0 ? blk[eu[j][i]] : total++ % nb;
			t->ent[t->off[b] + cur[b]++] = (unsigned)r << 28 | (unsigned)i;
		}
		r++;
	}
	t->nent = t->off[nb];
	free(cur);
	/* the members' element functions, parameters, arguments and calls */
	for (j = 0, r = 0; j < kg->n; j++) {
		const Kmember *m = &kg->m[j];
		char pre[16];
		if (!take[j])
			continue;
		snprintf(pre, sizeof pre, "t%d", r);
		katfn(g, &t->fns, m);
		str_put(&t->params, ", ");
		kparams(g, &t->params, m, pre, 0);
		str_put(&t->args, ", ");
		kargs(g, &t->args, m);
		str_printf(&t->calls, "\t\tcase %d:\n\t\t\t%s_at(i, ", r, m->name);
		for (int p = 0; p < m->np; p++)
			if (gvh_unit(g, m->param[p], 0) >= 0)
				str_printf(&t->calls, "ys + %lld, ", (long long)gvh_yoff(g, m->param[p]));
			else
				str_printf(&t->calls, "%sx%d, ", pre, p);
		str_printf(&t->calls, "%sy);\n\t\t\tbreak;\n", pre);
		r++;
	}
none:
	for (j = 0; j < kg->n; j++)
		free(eu[j]);
	free(up);
	if (nt == 0)
		tfree(t);
	return nt;
}

/* Launches the kernels held: their code into g->kern, one launch into
 * g->rec, marked as the last one's op. */
void
kflush(Gpu *g)
{
	Kgroup *kg = g->kg;
	const char *kname;
	long long nb = 0;
	int j, inplace = 0;
	char gname[96];

	if (g->gvh) {   /* the GEMV kernel held first, with its tail */
		Gtail t;
		int take[GROUPMAX] = {0}, k = 0;
		if (kg && kg->n && ktail(g, kg, &t, take) > 0) {
			gvh_emit(g, &t);
			tfree(&t);
			for (j = 0; j < kg->n; j++)
				if (take[j])
					kmfree(&kg->m[j]);
				else
					kg->m[k++] = kg->m[j];
			kg->n = k;
		} else {
			gvh_emit(g, NULL);
		}
	}
	if (kg == NULL || kg->n == 0)
		return;
	str_put(&g->kern, "\n");
	if (kg->n == 1) {
		Kmember *m = &kg->m[0];
		str_put(&g->kern, m->head.p ? m->head.p : "");
		if (m->unroll) {
			kunrolled(g, m);
		} else {
			str_printf(&g->kern, "static __global__ void __launch_bounds__(%d)\n%s(", BLOCK,
			           m->name);
			kparams(g, &g->kern, m, "", 1);
			str_put(&g->kern, ")\n{\n");
			kwait(g, &g->kern);
			if (m->loop)
				str_printf(&g->kern, "\tfor (long long i = blockIdx.x * %dLL + threadIdx.x; "
				                     "i < %lldLL; i += (long long)gridDim.x * %d) {\n",
				           BLOCK, m->loop, BLOCK);
			else
				str_printf(&g->kern, "\tint i = blockIdx.x * %d + threadIdx.x;\n\n", BLOCK);
			kcheck(&g->kern, m);
			str_put(&g->kern, m->body.p);
			str_put(&g->kern, m->loop ? "\t}\n}\n" : "}\n");
		}
		kname = m->name;
		nb = m->blocks;
	} else {
		snprintf(gname, sizeof gname, "%s_group", kg->m[0].name);
		for (j = 0; j < kg->n; j++) {
			katfn(g, &g->kern, &kg->m[j]);
		}
		str_printf(&g->kern, "/* %d kernels in one launch, their blocks side by side: ", kg->n);
		for (j = 0; j < kg->n; j++)
			str_printf(&g->kern, "%s%s", j ? ", " : "", kg->m[j].name);
		str_printf(&g->kern, " */\nstatic __global__ void __launch_bounds__(%d)\n%s(", BLOCK,
		           gname);
		for (j = 0; j < kg->n; j++) {
			char pre[16];
			snprintf(pre, sizeof pre, "k%d", j);
			if (j)
				str_put(&g->kern, ", ");
			kparams(g, &g->kern, &kg->m[j], pre, 0);
		}
		str_put(&g->kern, ")\n{\n");
		kwait(g, &g->kern);
		str_put(&g->kern, "\tint b = blockIdx.x;\n\n");
		for (j = 0; j < kg->n; j++) {
			Kmember *m = &kg->m[j];
			int last = j == kg->n - 1;
			if (!last)
				str_printf(&g->kern, "\tif (b < %lld) {\n", m->blocks);
			str_printf(&g->kern, "%s%s_at(b * %d + threadIdx.x, ", last ? "\t" : "\t\t", m->name,
			           BLOCK);
			for (int p = 0; p < m->np; p++)
				str_printf(&g->kern, "k%dx%d, ", j, p);
			str_printf(&g->kern, "k%dy);\n", j);
			if (!last)
				str_printf(&g->kern, "\t\treturn;\n\t}\n\tb -= %lld;\n", m->blocks);
		}
		str_put(&g->kern, "}\n");
		kname = gname;
		for (j = 0; j < kg->n; j++)
			nb += kg->m[j].blocks;
	}
	klaunch(g, kname, nb, BLOCK);
	for (j = 0; j < kg->n; j++) {
		if (j)
			str_put(g->rec, ", ");
		kargs(g, g->rec, &kg->m[j]);
		inplace |= kg->m[j].inplace;
	}
	str_printf(g->rec, ");%s\n", inplace ? "   /* in place: the state's bytes */" : "");
	launched(g, kname);
	g->nkern++;
	gmark(g, kg->m[kg->n - 1].op);
	for (j = 0; j < kg->n; j++)
		kmfree(&kg->m[j]);
	kg->n = 0;
}

void
kdrop(Gpu *g)
{
	if (g->kg == NULL)
		return;
	for (int j = 0; j < g->kg->n; j++)
		kmfree(&g->kg->m[j]);
	g->kg->n = 0;
}

/* Holds kernel m (its strings now the group's), after launching the
 * kernels held where it cannot join them; a kernel of many blocks is
 * launched at once. */
static void
khold(Gpu *g, Kmember *m)
{
	if (g->kg == NULL)
		g->kg = dp_alloc(g->fn->arena, 1, sizeof *g->kg);
	if (g->kg->n == GROUPMAX || m->loop || m->unroll || m->x3k || !independent(g, m))
		kflush(g);
	g->kg->m[g->kg->n++] = *m;
	if (m->loop || m->unroll || m->x3k || m->blocks > GROUPBLOCKS)
		kflush(g);
}

/* Holds kernel m that k computes: k's reads are its parameters, and the
 * comments of k's ops go into the schedule where its launch will follow;
 * nothing where it has no elements (n). */
static void
kput(Gpu *g, const Kern *k, Kmember *m, int64_t n)
{
	m->np = k->np;
	memcpy(m->param, k->param, sizeof k->param);
	for (int j = 0; j < k->nops; j++)
		opcomment(g->rec, g->fn, k->ops[j], "\t");
	if (n > 0)
		khold(g, m);
	else
		kmfree(m);
}

/* Where the one reader of root op i's result v, through reshapes, is a
 * 3xTF32 product that reads v as its A (mm_x3reads) and no other such
 * product runs between them, so that none overwrites the scratch g->s3:
 * the kernel writes A's split there itself, and the product (*prod) takes
 * it (g->x3s) instead of splitting A in a kernel of its own (gemm.cu's
 * split3: a GELU's output read once more and written three times over).
 * Returns A's columns K (want where want is not 0), else 0. */
int64_t
x3split(Gpu *g, int i, int v, int64_t want, int *prod)
{
	const Fn *fn = g->fn;
	int u = v, j;
	int64_t K;

	*prod = -1;
	if (!g->x3fuse || ty(g, v)->dtype != DP_F32 || g->prec16)
		return 0;
	for (;;) {   /* the reader, past reshapes that are views of v */
		if (g->nuse[u] != 1 || g->user[u] < 0)
			return 0;
		j = g->user[u];
		if (fn->op[j].nout != 1 || g->h[fn->op[j].out[0]].kind != G_VIEW ||
		    gbase(g, fn->op[j].out[0]) != v)
			break;
		u = fn->op[j].out[0];
	}
	if (fn->op[j].part != fn->op[i].part || (K = mm_x3reads(g, j, v)) == 0 ||
	    (want && K != want))
		return 0;
	for (int k = i + 1; k < j; k++)
		if (fn->op[k].part == fn->op[i].part && mm_x3reads(g, k, -1))
			return 0;
	if (g->x3s == NULL)
		g->x3s = dp_alloc(fn->arena, (size_t)fn->nop, 1);
	g->x3s[j] = 1;
	*prod = j;
	return K;
}

/* The root of a fused chain: one kernel writing op i's result. */
int
emit_elem(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	int v = op->out[0], j, big;
	const Type *t = ty(g, v);
	int64_t n = dp_numel(t);
	Kern k = {.g = g, .root = i};
	Kmember m = {0};
	Str e = {0};
	const char *name = dp_op_name[op->kind];

	if (g->h[v].kind == G_VIEW || g->h[v].wrby)
		return 0;   /* a free view, or written by attention: no code */
	g->h[v].kind = G_INLINE;   /* so that elem computes it */
	/* a grid-stride loop over long long indices where the grid or an
	 * int index would not reach every element */
	big = n > (int64_t)MAXGRID * BLOCK || span(g, v) > 2147483647 - 2 * BLOCK;
	k.ity = big ? "long long" : "int";
	k.depth = big;
	j = elem(&k, v, "i", &e);
	g->h[v].kind = G_ARENA;
	if (j != 0) {
		kfree(&k);
		str_free(&e);
		return -1;
	}
	qsort(k.ops, (size_t)k.nops, sizeof *k.ops, cmpint);
	if (k.nops > 1)
		str_printf(&m.head, "/* %d ops fused into one kernel: */\n", k.nops);
	for (j = 0; j < k.nops; j++)
		opcomment(&m.head, fn, k.ops[j], "");
	snprintf(m.name, sizeof m.name, "k%d_%s", v, strncmp(name, "aten.", 5) ? name : name + 5);
	m.op = i, m.blocks = blocks(n, BLOCK), m.loop = big ? n : 0, m.y = m.at = v;
	m.ytype = stype(t->dtype);
	if (!big) {   /* n at most MAXGRID·BLOCK: i + 3·BLOCK fits an int */
		m.n = m.ne = n;
		if (n >= UNROLLMIN)
			m.unroll = 1, m.blocks = blocks(n, UNROLL * BLOCK);
	}
	str_put(&m.body, k.body.p ? k.body.p : "");
	if (!big && (m.x3k = x3split(g, i, v, 0, &j)) > 0)
		str_printf(&m.head, "/* its result written as the 3xTF32 split of op %d's A "
		                    "(cuda/tf32.cuh) */\n", j);
	if (m.unroll) {   /* kunrolled stores it */
		str_printf(&m.body, "\treturn %s;\n", e.p);
	} else if (m.x3k) {
		str_printf(&m.body, "\tfloat yv = %s;\n\n", e.p);
		kstore(&m.body, &m, "\t", "i", "yv");
	} else {
		str_printf(&m.body, "%sy[i] = %s;\n", big ? "\t\t" : "\t", e.p);
	}
	g->x3put |= m.x3k > 0;
	g->wonly[v] = !m.x3k;   /* y written, never read (emit.c, copyout) */
	kput(g, &k, &m, n);
	kfree(&k);
	str_free(&e);
	return 0;
}

/* index_write op i whose src (operand 2) is a fused chain (plan.c inlines
 * it there): one kernel over src's elements computing each as emit_elem
 * would and writing it at its index into y (the state's bytes when in
 * place), as dpops.cuh's dps_index_write does: a decoder's key after its
 * rotary embedding goes straight into the cache. */
int
emit_iwrite_chain(Gpu *g, int i, int y, int inplace)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	int src = op->in[2], j, ix;
	const Type *tx = ty(g, op->in[0]), *ts = ty(g, src);
	int d = normdim(dp_geti(op, "dim", 0), tx->rank);
	int64_t n = tx->dim[d], inner = prod(tx, d + 1, tx->rank), M = ts->dim[d];
	int64_t total = dp_numel(ts);
	Kern k = {.g = g, .root = i, .ity = "int"};
	Kmember m = {0};
	Str e = {0};

	ix = param(&k, gbase(g, op->in[1]));
	if (elem(&k, src, "i", &e) != 0) {
		kfree(&k);
		str_free(&e);
		return -1;
	}
	qsort(k.ops, (size_t)k.nops, sizeof *k.ops, cmpint);
	snprintf(m.name, sizeof m.name, "k%d_index_write", op->out[0]);
	str_printf(&m.head, "/* %d ops fused into one kernel, its result written at the index: */\n",
	           k.nops + 1);
	for (j = 0; j < k.nops; j++)
		opcomment(&m.head, fn, k.ops[j], "");
	opcomment(&m.head, fn, i, "");
	str_printf(&m.body, "\tif (i >= %lld)\n\t\treturn;\n"
	                    "\tlong long m = i / %lld %% %lld, p = x%d[m];\n"
	                    "\tif (p < 0 || p >= %lld)\n\t\treturn;   /* out of range: nothing */\n"
	                    "\tfor (long long q = m + 1; q < %lld; q++)\n"
	                    "\t\tif (x%d[q] == p)\n\t\t\treturn;   /* a later index writes here */\n",
	           (long long)total, (long long)inner, (long long)M, ix, (long long)n, (long long)M,
	           ix);
	str_put(&m.body, k.body.p ? k.body.p : "");
	str_printf(&m.body, "\ty[(i / %lld / %lld * %lld + p) * %lld + i %% %lld] = %s;\n",
	           (long long)inner, (long long)M, (long long)n, (long long)inner, (long long)inner,
	           e.p);
	m.op = i, m.blocks = blocks(total, BLOCK), m.y = y, m.at = src, m.iw = 1, m.inplace = inplace;
	m.ne = total;
	m.ytype = stype(tx->dtype);
	kput(g, &k, &m, total);
	kfree(&k);
	str_free(&e);
	return 0;
}
