/* mm.c: matrix products on the GPU (aten.linear, aten.addmm, aten.mm) with
 * their bias and a folded relu.  Few rows (batch 1 is a matrix-vector
 * product, bound by reading the weights once): a generated kernel, one warp
 * per output column, 16-byte loads, bias and relu in its epilogue.  Many
 * rows with a bias per output column and nothing else after the product (a
 * transformer's linear layers): cuBLASLt with the bias in its epilogue, one
 * kernel.  Other products of many rows: cuBLAS (fp32, or TF32 where the
 * mapping says so), then one epilogue kernel for bias and relu.  In 16-bit
 * precision (mm16 below) the same paths read 16-bit operands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "nn.h"   /* gpu_isconst */

enum {
	GEMV_ROWS = 8,     /* at most this many rows take the generated kernel */
	WARPS = GV_WARPS,  /* warps per block of the GEMV kernel */
	REGW = 16,         /* 16-byte loads of weights a lane of it holds at most */
	BLOCK = 128,       /* threads per block of the other kernels */
};

/* How a GEMV kernel loads its weights (b): each element is read once a run,
 * so evict-first in L2 (ld.global.cs).  A decode step streams weights of
 * several times L2's size; loaded as other data (__ldg) they pushed out the
 * KV cache and the activations the next kernels read
 * (on the H200 the ~100M Llama's decode 216.1 -> 212.7 us/token in bf16,
 * 227.4 -> 215.7 in fp32, bench/RESULTS.md).  Weights that fit stay in L2
 * all the same: evict-first lines go first only where something must. */
#define WLOAD "__ldcs"

/* An operand read as a matrix: the value holding its memory and element
 * strides. */
typedef struct Mat {
	int v;
	int64_t rs, cs;
} Mat;

/* Value v as an R x C matrix: dense, or a transposed view of a dense C x R. */
static Mat
gpu_matrix(Gpu *g, int v, int64_t R, int64_t C)
{
	Mat m = {.v = gbase(g, v), .rs = C, .cs = 1};

	if (g->h[v].kind == G_VIEW && g->h[v].trans) {
		m.rs = 1;
		m.cs = R;
	}
	return m;
}

/* Strides that broadcast bias v (rank 0..2) over an M x N result. */
static Mat
gpu_bias(Gpu *g, int v)
{
	const Type *t = ty(g, v);
	Mat m = {.v = gbase(g, v)};

	if (t->rank >= 1)
		m.cs = t->dim[t->rank - 1] == 1 ? 0 : 1;
	if (t->rank == 2)
		m.rs = t->dim[0] == 1 ? 0 : t->dim[1];
	if (t->rank > 2)
		dp_die("bias of rank %d", t->rank);
	return m;
}

/* One product: y = relu?(alpha·A·B + beta·C0). */
typedef struct MM {
	int i;             /* the op */
	int y;             /* the value written (the relu's when folded) */
	int64_t M, N, K;
	double alpha, beta;
	Mat a, b, c0;
	int hasc0, relu;
	int round16;       /* the result rounded to 16 bits (tune cuda.precision bf16|f16) */
	int64_t yh;        /* GEMV of one product: 1 + the staging offset where it also
	                      writes y, for the host (GHome.mirror); else 0 */
	int epi;           /* the add or mul folded after all that (plan.c, gepilogue), or -1 */
	int eo;            /* its other operand in memory (e[m,n]), y's shape */
	int esilu;         /* 1 + the silu op when that operand is silu(e) (SwiGLU's
	                      gate), computed here; else 0 */
	int ekind;         /* the op: Aadd or Amul */
	int gate;          /* 1 + the weight of SwiGLU's gate product, computed in the same
	                      warp as this (up) product for its epilogue's silu; else 0 */
	int ng;            /* products in the kernel: > 1 for a group of siblings (ggroup) */
	int gb[4], gy[4];  /* a group's weights and results, in column order */
	int64_t gn[4];     /* their columns */
	int efirst;        /* 1: the product is the op's operand 1 (e is operand 0) */
	int norm;          /* the RMS norm of a (its last mul) the GEMV computes first, reading
	                      the norm's input as a (emit_rms held it back), or -1 */
	int epre;          /* 1: the GEMV kernel read each column's bias and the epilogue's
	                      operand early (gvloopreg), as c<acc> and e<acc> */
	int cw;            /* columns a warp of the GEMV kernel takes (gvcols): 1, or
	                      with one row 2 or 4, its accumulators acc0, acc1... */
	int pf;            /* k where the GEMV kernel takes DP_PF<k> (pf, pfn: the next
	                      GEMV's weights, which its blocks ask into L2), or -1 */
	const Gtail *tail; /* the GEMV kernel's tail (gvwrap), or NULL */
	char name[64];     /* kernel name */
} MM;

/* A GEMV kernel held (g->gvh) until kflush knows the small kernels after
 * it: the product as emit_mm found it, before any kernel was written. */
typedef struct Gvheld {
	MM p;
	int way;           /* WGEMVS or WGEMV (mmway), or -1 for mm16's */
	int cw;            /* its warps' columns (gvcols) */
} Gvheld;

/* The epilogue of element (m, n) of accumulator acc, into y. */
static void
epilogue(Str *s, const MM *p, const char *ind, const char *m, const char *n, const char *acc,
         const char *dst)
{
	str_printf(s, "%sr = ", ind);
	if (p->alpha != 1) {
		str_float(s, p->alpha);
		str_put(s, " * ");
	}
	str_put(s, acc);
	if (p->hasc0) {
		str_put(s, " + ");
		if (p->beta != 1) {
			str_float(s, p->beta);
			str_put(s, " * ");
		}
		str_put(s, p->epre ? "c" : "c0[");
		if (p->epre)
			str_put(s, acc);
		else if (p->c0.rs)
			str_printf(s, "%s * %lld%s", m, (long long)p->c0.rs, p->c0.cs ? " + " : "");
		if (!p->epre && p->c0.cs)
			str_printf(s, "%s%s", n, p->c0.cs == 1 ? "" : "");
		if (!p->epre && p->c0.cs > 1)
			str_printf(s, " * %lld", (long long)p->c0.cs);
		if (!p->epre && !p->c0.rs && !p->c0.cs)
			str_put(s, "0");
		if (!p->epre)
			str_put(s, "]");
	}
	str_put(s, ";\n");
	if (p->relu)
		str_printf(s, "%sr = r < 0.0f ? 0.0f : r;   /* relu, NaN stays */\n", ind);
	if (p->round16)
		str_printf(s, "%sr = dp_r16(r);   /* rounded to 16 bits */\n", ind);
	if (p->epi >= 0) {   /* as the op's own kernel computes it (kern.c) */
		char ex[96];
		if (p->gate)   /* the gate's product, as its own kernel rounds it */
			str_printf(s, "%sg%s = %sg%s%s;\n", ind, acc, p->round16 ? "dp_r16(" : "", acc,
			           p->round16 ? ")" : "");
		if (p->gate)
			snprintf(ex, sizeof ex, "dps_silu(g%s, 0.0f, 0.0f)", acc);
		else if (p->epre)
			snprintf(ex, sizeof ex, p->esilu ? "dps_silu(e%s, 0.0f, 0.0f)" : "e%s", acc);
		else
			snprintf(ex, sizeof ex, p->esilu ? "dps_silu(e[%s * %lld + %s], 0.0f, 0.0f)" :
			         "e[%s * %lld + %s]", m, (long long)p->N, n);
		str_printf(s, "%sr = dps_%s(%s, %s, 1.0f);   /* %%%d */\n", ind,
		           p->epi >= 0 && p->ekind == Amul ? "mul" : "add", p->efirst ? ex : "r",
		           p->efirst ? "r" : ex, p->y);
	}
	str_printf(s, "%s%s = r;\n", ind, dst);
}

static void
params(const Gpu *g, Str *s, const MM *p, int ab)
{
	str_printf(s, "static __global__ void __launch_bounds__(%d)\n%s(", BLOCK, p->name);
	if (ab)
		str_put(s, "const float *__restrict__ a, const float *__restrict__ b, ");
	if (p->hasc0)
		str_put(s, "const float *__restrict__ c0, ");
	str_printf(s, "float *__restrict__ y)\n{\n");
	kwait(g, s);
}

/* The last parameters of a GEMV kernel that asks the next GEMV's weights
 * into L2 (p->pf, pfask). */
#define PFPARAMS ", const char *__restrict__ pf, unsigned pfn"

/* One parameter of a GEMV kernel: its declaration into sig, its name into
 * nm (a tail's kernel passes them on to its body, gvwrap). */
static void
gvpar(Str *sig, Str *nm, const char *decl, const char *name)
{
	str_printf(sig, "%s%s%s", sig->n ? ", " : "", decl, name);
	str_printf(nm, "%s%s", nm->n ? ", " : "", name);
}

/* The signature and first lines of the GEMV kernels (b of type bt): n the
 * column, lane the warp's lane; in a group of sibling products (p->ng > 1,
 * one row each) the column picks its product's weights b and result y.
 * With a tail (p->tail) this is the body gvwrap's kernel calls for the
 * unit u its warp takes, yq the block's shared copy of the columns from n;
 * sig and nm receive the parameters. */
static void
gvhead(Str *s, const MM *p, const char *bt, Str *sig, Str *nm)
{
	int64_t m, at = 0;
	int j;
	char d[64], n[16];

	gvpar(sig, nm, "const float *__restrict__ ", "a");
	if (p->norm >= 0) {
		gvpar(sig, nm, "const float *__restrict__ ", "nc");
		gvpar(sig, nm, "const float *__restrict__ ", "neps");
		gvpar(sig, nm, "const float *__restrict__ ", "nw");
	}
	snprintf(d, sizeof d, "const %s *__restrict__ ", bt);
	for (j = 0; p->ng > 1 && j < p->ng; j++) {
		snprintf(n, sizeof n, "b%d", j);
		gvpar(sig, nm, d, n);
	}
	for (j = 0; p->ng > 1 && j < p->ng; j++) {
		snprintf(n, sizeof n, "y%d", j);
		gvpar(sig, nm, "float *__restrict__ ", n);
	}
	if (p->ng <= 1) {
		gvpar(sig, nm, d, "b");
		if (p->gate)
			gvpar(sig, nm, d, "bg");
		if (p->hasc0)
			gvpar(sig, nm, "const float *__restrict__ ", "c0");
		if (p->epi >= 0 && !p->gate)
			gvpar(sig, nm, "const float *__restrict__ ", "e");
		gvpar(sig, nm, "float *__restrict__ ", "y");
		if (p->yh)
			gvpar(sig, nm, "float *__restrict__ ", "yh");
	}
	if (p->pf >= 0) {
		gvpar(sig, nm, "const char *__restrict__ ", "pf");
		gvpar(sig, nm, "unsigned ", "pfn");
	}
	/* a kernel whose lanes hold their weights (p->epre) names its blocks an
	 * SM (2, so up to 255 registers): with no such bound ptxas kept it
	 * under 64 registers and put each load of a back beside its sums, so
	 * that a lane waited on several trips to memory in turn, not one */
	if (p->tail)
		str_printf(s, "static __device__ __forceinline__ void\n%s_body(%s, "
		              "float *__restrict__ ys, int u)\n{\n", p->name, sig->p);
	else if (p->epre)
		str_printf(s, "static __global__ void __launch_bounds__(%d, 2)\n%s(%s)\n{\n",
		           WARPS * 32, p->name, sig->p);
	else
		str_printf(s, "static __global__ void __launch_bounds__(%d)\n%s(%s)\n{\n", WARPS * 32,
		           p->name, sig->p);
	if (p->tail && p->cw > 1)
		str_printf(s, "\tint n = u * %d, lane = threadIdx.x %% 32;   /* columns n..n+%d */\n"
		              "\tfloat *yq = ys + n;   /* the block's copy of them */\n", p->cw,
		           p->cw - 1);
	else if (p->tail)
		str_printf(s, "\tint n = u, lane = threadIdx.x %% 32;\n"
		              "\tfloat *yq = ys + n;   /* the block's copy of column n */\n");
	else if (p->cw > 1)
		str_printf(s, "\tint n = (blockIdx.x * %d + threadIdx.x / 32) * %d, "
		              "lane = threadIdx.x %% 32;   /* columns n..n+%d */\n", WARPS,
		           p->cw, p->cw - 1);
	else
		str_printf(s, "\tint n = blockIdx.x * %d + threadIdx.x / 32, lane = threadIdx.x %% 32;\n",
		           WARPS);
	str_put(s, "\tfloat r");
	for (m = 0; m < (p->cw > 1 ? p->cw : p->M); m++)
		str_printf(s, p->gate ? ", acc%lld = 0.0f, gacc%lld = 0.0f" : ", acc%lld = 0.0f",
		           (long long)m, (long long)m);
	if (p->ng <= 1) {
		str_printf(s, ";\n\n\tif (n >= %lld)\n\t\treturn;\n", (long long)p->N);
		return;
	}
	str_printf(s, ";\n\tconst %s *__restrict__ b;\n\tfloat *__restrict__ y;\n\n\t", bt);
	for (j = 0; j < p->ng; j++) {
		str_printf(s, "if (n < %lld) {   /* %%%d */\n\t\tn -= %lld;\n\t\tb = b%d;\n"
		              "\t\ty = y%d;\n\t} else ", (long long)(at + p->gn[j]), p->gy[j],
		           (long long)at, j, j);
		at += p->gn[j];
	}
	str_put(s, "{\n\t\treturn;\n\t}\n");
}

/* The loop of a GEMV kernel over k for the product of weights b (named by
 * b) into accumulators acc (named by acc): each lane's sums in k order. */
static void
gvloop32(Str *s, const MM *p, int vec, const char *b, const char *acc)
{
	int64_t m;

	if (vec) {
		str_printf(s, "\tconst float4 *%sn = (const float4 *)(%s + (long long)n * %lld);\n"
		              "#pragma unroll 4\n"
		              "\tfor (int k = lane; k < %lld; k += 32) {\n"
		              "\t\tfloat4 w = " WLOAD "(%sn + k), x;\n", b, b, (long long)p->b.cs,
		           (long long)(p->K / 4), b);
		for (m = 0; m < p->M; m++)
			str_printf(s, "\t\tx = __ldg((const float4 *)(a + %lld) + k);\n"
			              "\t\t%s%lld = fmaf(w.x, x.x, %s%lld);\n"
			              "\t\t%s%lld = fmaf(w.y, x.y, %s%lld);\n"
			              "\t\t%s%lld = fmaf(w.z, x.z, %s%lld);\n"
			              "\t\t%s%lld = fmaf(w.w, x.w, %s%lld);\n",
			           (long long)(m * p->a.rs), acc, (long long)m, acc, (long long)m, acc,
			           (long long)m, acc, (long long)m, acc, (long long)m, acc, (long long)m,
			           acc, (long long)m, acc, (long long)m);
	} else {
		str_printf(s, "\tconst float *%sn = %s + (long long)n * %lld;\n"
		              "#pragma unroll 4\n"
		              "\tfor (long long k = lane; k < %lldLL; k += 32) {\n"
		              "\t\tfloat w = " WLOAD "(%sn + k);\n", b, b, (long long)p->b.cs,
		           (long long)p->K, b);
		for (m = 0; m < p->M; m++)
			str_printf(s, "\t\t%s%lld = fmaf(w, __ldg(a + %lld + k * %lld), %s%lld);\n",
			           acc, (long long)m, (long long)(m * p->a.rs), (long long)p->a.cs, acc,
			           (long long)m);
	}
	str_put(s, "\t}\n");
}

/* gvloop32 for weights in 16 bits, the inputs rounded to 16 bits as read. */
static void
gvloop16(Str *s, const MM *p, int vec, const char *b, const char *acc)
{
	static const char *const lane[8] = { "w0.x, dp_r16(x.x)", "w0.y, dp_r16(x.y)",
	                                     "w1.x, dp_r16(x.z)", "w1.y, dp_r16(x.w)",
	                                     "w2.x, dp_r16(z.x)", "w2.y, dp_r16(z.y)",
	                                     "w3.x, dp_r16(z.z)", "w3.y, dp_r16(z.w)" };
	int64_t m;
	int j;

	if (vec) {
		str_printf(s, "\tconst uint4 *%sn = (const uint4 *)(%s + (long long)n * %lld);\n"
		              "#pragma unroll 4\n"
		              "\tfor (int k = lane; k < %lld; k += 32) {\n"
		              "\t\tuint4 u = " WLOAD "(%sn + k);\n"
		              "\t\tfloat2 w0 = dp_w162(u.x), w1 = dp_w162(u.y), w2 = dp_w162(u.z), "
		              "w3 = dp_w162(u.w);\n"
		              "\t\tfloat4 x, z;\n", b, b, (long long)p->b.cs, (long long)(p->K / 8), b);
		for (m = 0; m < p->M; m++) {
			str_printf(s, "\t\tx = __ldg((const float4 *)(a + %lld) + 2 * k);\n"
			              "\t\tz = __ldg((const float4 *)(a + %lld) + 2 * k + 1);\n",
			           (long long)(m * p->a.rs), (long long)(m * p->a.rs));
			for (j = 0; j < 8; j++)
				str_printf(s, "\t\t%s%lld = fmaf(%s, %s%lld);\n", acc, (long long)m, lane[j],
				           acc, (long long)m);
		}
	} else {
		str_printf(s, "\tconst unsigned short *%sn = (const unsigned short *)%s + (long long)n * "
		              "%lld;\n"
		              "#pragma unroll 4\n"
		              "\tfor (long long k = lane; k < %lldLL; k += 32) {\n"
		              "\t\tfloat w = dp_w162(" WLOAD "(%sn + k)).x;\n", b, b, (long long)p->b.cs,
		           (long long)p->K, b);
		for (m = 0; m < p->M; m++)
			str_printf(s, "\t\t%s%lld = fmaf(w, dp_r16(__ldg(a + %lld + k * %lld)), %s%lld);\n",
			           acc, (long long)m, (long long)(m * p->a.rs), (long long)p->a.cs, acc,
			           (long long)m);
	}
	str_put(s, "\t}\n");
}

/* For gvloopreg (p->epre): each column's bias (e 0) or epilogue operand (e
 * 1) loaded into c<acc> or e<acc>, for the epilogue after the sums. */
static void
gvearly(Str *s, const MM *p, int e)
{
	for (int j = 0; j < p->cw; j++) {
		if (e)
			str_printf(s, "\tconst float eacc%d = e[n + %d];\n", j, j);
		else if (p->c0.cs)
			str_printf(s, "\tconst float cacc%d = c0[(n + %d) * %lld];\n", j, j,
			           (long long)p->c0.cs);
		else
			str_printf(s, "\tconst float cacc%d = c0[0];\n", j);
	}
}

/* Whether v's bytes (through views and transposes) are a constant that
 * nothing in a run writes: weights, not a state (whose bytes are weights
 * too, G_WEIGHT, but an index_write may write them), so that a kernel may
 * read them before its wait. */
static int
wconst(const Gpu *g, int v)
{
	return gpu_isconst(g, gbase(g, v));
}

/* With tune cuda.gemv.l2 (and programmatic dependent launch), each block
 * of a GEMV kernel of one row that holds its weights (p->pf) asks its
 * share of the next GEMV's weights into L2, before its wait and its own
 * weights' loads, by the copy engine: they then stream from memory while
 * this kernel and those between run.  A kernel's own loads start only as
 * it arrives, which the registers of the kernels still running can hold
 * back (the q/k/v GEMV's blocks arrived over 3 us in a decode step), and
 * in the meantime the GEMVs before it load theirs from the same memory.
 * Off by default: slower in fp32 on the H200 (bench/RESULTS.md). */
static void
pfask(Str *s)
{
	str_put(s, "\tif (threadIdx.x == 0 && pfn != 0) {   /* the next GEMV's weights into L2: "
	           "this block's share */\n"
	           "\t\tunsigned sh = (pfn / gridDim.x + 16) & ~15u, o = blockIdx.x * sh;\n\n"
	           "\t\tif (o < pfn)\n\t\t\tdp_pdl_l2(pf + o, pfn - o < sh ? pfn - o : sh);\n\t}\n");
}

/* The constant weights of GEMV p as one range of bytes for the kernel
 * before it to ask into L2, "ADDRESS, BYTES" in buf: their span where
 * they lie together (within a quarter of their bytes, as the 16-bit
 * copies do, made in schedule order), else the largest; 16-byte aligned,
 * whole 16 bytes, at most g->pfmax (tune cuda.gemv.l2).  0 where there is
 * none such. */
static int
pfrange(const Gpu *g, const MM *p, char *buf, size_t bn)
{
	int w[6], n = 0, j;
	int64_t lo = INT64_MAX, hi = 0, sum = 0, bo = 0, bb = 0;

	if (p->ng > 1)
		for (j = 0; j < p->ng; j++)
			w[n++] = p->gb[j];
	else
		w[n++] = p->b.v;
	if (p->gate)
		w[n++] = p->gate - 1;
	for (j = 0; j < n; j++) {
		int v = gbase(g, w[j]);
		int64_t off, bytes;
		if (!wconst(g, v) || g->h[v].kind != G_WEIGHT)
			return 0;
		if (p->round16) {
			if (g->h16 == NULL || g->h16[v] == 0)
				return 0;
			off = g->h16[v] - 1, bytes = g->h[v].bytes / 2;
		} else {
			off = g->h[v].off, bytes = g->h[v].bytes;
		}
		lo = off < lo ? off : lo;
		hi = off + bytes > hi ? off + bytes : hi;
		sum += bytes;
		if (bytes > bb)
			bo = off, bb = bytes;
	}
	if (hi - lo <= sum + sum / 4)
		bo = lo, bb = hi - lo;
	bb = (bb > g->pfmax ? 0 : bb) / 16 * 16;
	if (bb == 0 || bo % 16 != 0)
		return 0;
	snprintf(buf, bn, "(const char *)(g->%s + %lld), %lldu", p->round16 ? "w16" : "weights",
	         (long long)bo, (long long)bb);
	return 1;
}

/* After GEMV p's launch: the kernel before it that asks for the next
 * GEMV's weights (g->pfwant) asks for p's; p's own asks for the next's. */
static void
pfnext(Gpu *g, const MM *p)
{
	char r[128];

	if (g->pfwant >= 0) {
		if (!pfrange(g, p, r, sizeof r))
			snprintf(r, sizeof r, "NULL, 0u");
		str_printf(&g->pfdefs, "#define DP_PF%d %s   /* %s's weights */\n", g->pfwant, r,
		           p->name);
		g->pfwant = -1;
	}
	if (p->pf >= 0)
		g->pfwant = p->pf;
}

/* The last GEMV kernel that asks for the next GEMV's weights: none after it. */
void
mm_pfend(Gpu *g)
{
	if (g->pfwant >= 0)
		str_printf(&g->pfdefs, "#define DP_PF%d NULL, 0u   /* no GEMV after it */\n",
		           g->pfwant);
	g->pfwant = -1;
	if (g->pfdefs.n)
		str_put(&g->pfdefs, "\n");
}

/* The loop of a GEMV kernel of one row whose lanes hold all their weights
 * at once (regok): the weights of each lane's KW steps loaded first (b's
 * and the gate's bg), before the wait (with tune cuda.pdl 1 they load while
 * the kernels before finish, nothing before writes them); then where a is
 * an RMS norm's input x (p->norm) the norm's r from the whole row
 * (rms_prologue: each warp on its own, no block barrier), and each step
 * normalizes its elements of x as the norm's kernel does (rms_elem); the
 * sums as gvloop32/gvloop16 make them, in the same order (h16: weights in
 * 16 bits, inputs rounded).  A warp takes p->cw columns, each with its
 * weights wp<j> (gp<j>) and sums acc<j> (gacc<j>); the norm's weight and
 * constants, and the bias, load before the wait too where they are
 * constants (gvearly). */
static void
gvloopreg(Gpu *g, Str *s, const MM *p, int h16)
{
	int per = h16 ? 8 : 4, kw = (int)((p->K / per + 31) / 32), c, t, j, gt, pre = 0, bc;
	int nx, nc, ne, nw;
	const char *wt = h16 ? "uint4" : "float4";
	char xe[32], we[32], wn[2][4][16], an[2][4][16];   /* per column: its weights, its sum */

	/* the weights before the wait only where they are constants: a b that
	 * a kernel before computes (x times a computed matrix's transpose) is
	 * read after it, as anything else such a kernel writes (with tune
	 * cuda.pdl 1 several kernels before may still be running) */
	if (p->pf >= 0)
		pfask(s);
	bc = wconst(g, p->b.v) && (!p->gate || wconst(g, p->gate - 1));
	for (j = 0; p->ng > 1 && j < p->ng; j++)   /* siblings: their weights */
		bc = bc && wconst(g, p->gb[j]);
	if (!bc)
		kwait(g, s);
	if (p->norm >= 0) {   /* the norm's exponent, eps and weight, where they are
	                       * constants: loaded before the wait, with the weights */
		rms_operands(g, p->norm, &nx, &nc, &ne, &nw);
		pre = wconst(g, nc) && wconst(g, ne) && wconst(g, nw);
	}

	for (j = 0; j < p->cw; j++) {
		snprintf(wn[0][j], sizeof wn[0][j], p->cw > 1 ? "wp%d" : "wp", j);
		snprintf(wn[1][j], sizeof wn[1][j], p->cw > 1 ? "gp%d" : "gp", j);
		snprintf(an[0][j], sizeof an[0][j], "acc%d", j);
		snprintf(an[1][j], sizeof an[1][j], "gacc%d", j);
	}
	str_printf(s, "\tconst %s *bn = (const %s *)(b + (long long)n * %lld);\n", wt, wt,
	           (long long)p->b.cs);
	if (p->gate)
		str_printf(s, "\tconst %s *bgn = (const %s *)(bg + (long long)n * %lld);\n", wt, wt,
		           (long long)p->b.cs);
	str_printf(s, "\t%s", wt);
	for (gt = 0; gt <= (p->gate != 0); gt++)
		for (j = 0; j < p->cw; j++)
			str_printf(s, "%s %s[%d]", gt || j ? "," : "", wn[gt][j], kw);
	str_put(s, ";\n");
	for (t = 0; pre && t < per / 4; t++)
		str_printf(s, "%s gw%d[%d]%s", t ? "," : "\tfloat4", t, kw, t + 1 < per / 4 ? "" : ";\n");
	if (pre)
		str_put(s, "\tconst float cc = nc[0], ce = neps[0];\n");
	str_printf(s, "\n#pragma unroll\n\tfor (int t = 0; t < %d; t++) {   /* the weights first */\n"
	              "\t\tint k = lane + 32 * t;\n\n\t\tif (k < %lld) {\n", kw,
	           (long long)(p->K / per));
	for (gt = 0; gt <= (p->gate != 0); gt++)
		for (j = 0; j < p->cw; j++) {
			if (j)
				str_printf(s, "\t\t\t%s[t] = " WLOAD "(%s + %lld + k);\n", wn[gt][j],
				           gt ? "bgn" : "bn", (long long)(j * p->b.cs / per));
			else
				str_printf(s, "\t\t\t%s[t] = " WLOAD "(%s + k);\n", wn[gt][j], gt ? "bgn" : "bn");
		}
	for (t = 0; pre && t < per / 4; t++)   /* the norm's weight */
		str_printf(s, "\t\t\tgw%d[t] = __ldg((const float4 *)nw + %d * k%s);\n", t, per / 4,
		           t ? " + 1" : "");
	str_put(s, "\t\t}\n\t}\n");
	if (p->hasc0 && wconst(g, p->c0.v))   /* the bias, a constant */
		gvearly(s, p, 0);
	if (bc)
		kwait(g, s);   /* the weights are loading; a is the kernel before's */
	if (p->hasc0 && !wconst(g, p->c0.v))
		gvearly(s, p, 0);
	if (p->epi >= 0 && !p->gate)   /* the epilogue's operand, with the row */
		gvearly(s, p, 1);
	if (p->norm >= 0)
		rms_prologue(g, p->norm, p->K, pre, s);
	/* the lane's pieces of a, all asked for before the first is used: one
	 * trip to memory (written inside the sums' loop, the compiler kept
	 * them there, several trips in turn: 3 us of the down projection's
	 * GEMV of K = 2048 on the H200, bench/RESULTS.md) */
	str_printf(s, "\tfloat4 xr[%d][%d];\n\n#pragma unroll\n"
	              "\tfor (int t = 0; t < %d; t++) {   /* a's pieces at once */\n"
	              "\t\tint k = lane + 32 * t;\n\n\t\tif (k < %lld) {\n",
	           kw, per / 4, kw, (long long)(p->K / per));
	for (t = 0; t < per / 4; t++)
		str_printf(s, "\t\t\txr[t][%d] = __ldg((const float4 *)a + %d * k%s);\n", t, per / 4,
		           t ? " + 1" : "");
	str_put(s, "\t\t}\n\t}\n");
	str_printf(s, "#pragma unroll\n\tfor (int t = 0; t < %d; t++) {\n"
	              "\t\tint k = lane + 32 * t;\n\n\t\tif (k >= %lld)\n\t\t\tbreak;\n",
	           kw, (long long)(p->K / per));
	for (t = 0; t < per / 4; t++) {
		str_printf(s, "\t\tfloat4 x%d = xr[t][%d]", t, t);
		if (pre)
			str_printf(s, ", g%d = gw%d[t]", t, t);
		else if (p->norm >= 0)
			str_printf(s, ", g%d = __ldg((const float4 *)nw + %d * k%s)", t, per / 4,
			           t ? " + 1" : "");
		str_put(s, ";\n");
		for (c = 0; c < 4 && p->norm >= 0; c++) {
			snprintf(xe, sizeof xe, "x%d.%c", t, "xyzw"[c]);
			snprintf(we, sizeof we, "g%d.%c", t, "xyzw"[c]);
			str_printf(s, "\t\t%s = ", xe);
			rms_elem(g, p->norm, xe, we, s);
			str_put(s, ";\n");
		}
	}
	for (j = 0; j < p->cw; j++)
		for (gt = 0; gt <= (p->gate != 0); gt++) {
			const char *acc = an[gt][j], *w = wn[gt][j];
			if (h16) {
				str_printf(s, "\t\t{\n\t\t\tfloat2 w0 = dp_w162(%s[t].x), w1 = dp_w162(%s[t].y), "
				              "w2 = dp_w162(%s[t].z), w3 = dp_w162(%s[t].w);\n\n", w, w, w, w);
				for (c = 0; c < 8; c++)
					str_printf(s, "\t\t\t%s = fmaf(w%d.%c, dp_r16(x%d.%c), %s);\n", acc, c / 2,
					           "xy"[c % 2], c / 4, "xyzw"[c % 4], acc);
				str_put(s, "\t\t}\n");
			} else {
				for (c = 0; c < 4; c++)
					str_printf(s, "\t\t%s = fmaf(%s[t].%c, x0.%c, %s);\n", acc, w, "xyzw"[c],
					           "xyzw"[c], acc);
			}
		}
	str_put(s, "\t}\n");
}

/* Whether a GEMV kernel's lanes hold all their weights at once (gvloopreg):
 * one row, 16-byte loads, at most REGW loads of weights a lane (64
 * registers).  A norm's GEMV must (the norm's input is read only then).
 * per: the weights a 16-byte load. */
static int
regok(const MM *p, int vec, int per)
{
	int64_t kw = (p->K / per + 31) / 32;

	return p->norm >= 0 || (p->M == 1 && vec && kw * p->cw * (p->gate ? 2 : 1) <= REGW);
}

/* The columns a warp of a GEMV kernel of one row takes (p->cw): 4 or 2
 * where its lanes can hold their weights (REGW) and that leaves at least
 * g->gvwarps warps (tune cuda.gemv.warps, 512 by default), the columns of
 * each product a multiple of it; else 1.
 * A norm's sums, and the row's loads, are then a warp's once for them all:
 * a wide product (the output head) is bound by those instructions. */
static int
gvcols(const Gpu *g, const MM *p, int vec, int per)
{
	int64_t kw = (p->K / per + 31) / 32, cols = 0;
	int cw, j, ok;

	if (p->M != 1 || !vec)
		return 1;
	for (j = 0; j < p->ng; j++)
		cols += p->gn[j];
	if (p->ng <= 1)
		cols = p->N;
	for (cw = 4; cw > 1; cw /= 2) {
		ok = kw * cw * (p->gate ? 2 : 1) <= REGW && cols / cw >= g->gvwarps;
		for (j = 0; ok && j < (p->ng > 1 ? p->ng : 1); j++)
			ok = (p->ng > 1 ? p->gn[j] : p->N) % cw == 0;
		if (ok)
			return cw;
	}
	return 1;
}

/* The warp's sums of a GEMV kernel's accumulators (and the gate's). */
static void
gvsum(Str *s, const MM *p)
{
	int64_t m;

	str_put(s, "\tfor (int s = 16; s > 0; s /= 2) {\n");
	for (m = 0; m < (p->cw > 1 ? p->cw : p->M); m++) {
		str_printf(s, "\t\tacc%lld += __shfl_xor_sync(0xffffffffu, acc%lld, s);\n",
		           (long long)m, (long long)m);
		if (p->gate)
			str_printf(s, "\t\tgacc%lld += __shfl_xor_sync(0xffffffffu, gacc%lld, s);\n",
			           (long long)m, (long long)m);
	}
	str_put(s, "\t}\n");
}

/* The epilogues of a GEMV kernel's sums into y, by lane 0: each row m's,
 * or where a warp takes p->cw columns, each column's. */
static void
gvout(Str *s, const MM *p)
{
	char mm[32], nn[32], acc[32], dst[64];
	int64_t m;

	for (m = 0; m < (p->cw > 1 ? p->cw : p->M); m++) {
		snprintf(mm, sizeof mm, "%lld", p->cw > 1 ? 0LL : (long long)m);
		snprintf(nn, sizeof nn, p->cw > 1 ? "(n + %lld)" : "n", (long long)m);
		snprintf(acc, sizeof acc, "acc%lld", (long long)m);
		if (p->cw > 1)
			snprintf(dst, sizeof dst, "y[n + %lld]", (long long)m);
		else
			snprintf(dst, sizeof dst, "y[%lld + n]", (long long)(m * p->N));
		epilogue(s, p, "\t", mm, nn, acc, dst);
		if (p->yh)   /* and into the staging, for the host */
			str_printf(s, "\tyh%s = r;\n", dst + 1);
		if (p->tail)   /* and into the block's copy, for its tail */
			str_printf(s, "\tyq[%lld] = r;\n", (long long)m);
	}
}

/* With tune cuda.pdl 1, the start of a GEMV kernel whose lanes cannot
 * hold all their weights (regok): its warp's rows of the weights (and the
 * gate's) asked into L2, a line of 128 bytes a lane, while the kernels
 * before it finish; then the wait.  esize: the weights' bytes an element. */
static void
gvwait(const Gpu *g, Str *s, const MM *p, int esize)
{
	if (!g->pdl)
		return;
	str_printf(s, "\tfor (int o = lane * 128; o < %lld; o += 32 * 128) {   /* weights into L2 */\n"
	              "\t\tdp_pdl_prefetch((const char *)(b + (long long)n * %lld) + o);\n",
	           (long long)(p->K * esize), (long long)p->b.cs);
	if (p->gate)
		str_printf(s, "\t\tdp_pdl_prefetch((const char *)(bg + (long long)n * %lld) + o);\n",
		           (long long)p->b.cs);
	str_put(s, "\t}\n");
	kwait(g, s);
}

/* Where the host also reads the result of GEMV kernel p of one product,
 * and the schedule asks for it (GHome.mirror, emit.c), p writes it into the
 * staging too (p->yh), so that no copy follows it. */
static void
gvmirror(Gpu *g, MM *p)
{
	GHome *h = &g->h[p->y];

	if (p->ng <= 1 && h->mirror) {
		p->yh = h->mirror;
		h->mirrored = 1;
	}
}

/* Marks the results of GEMV kernel p as written by it and read by nothing
 * in it (emit.c's copyout may put them in the page-locked staging). */
static void
gvwonly(Gpu *g, const MM *p)
{
	int j;

	if (p->ng > 1)
		for (j = 0; j < p->ng; j++)
			g->wonly[p->gy[j]] = 1;
	else
		g->wonly[p->y] = 1;
}

/* Whether a GEMV kernel loads its operands 16 bytes at a time, per of
 * the weights a load. */
static int
gvvec(const MM *p, int per)
{
	return p->K % per == 0 && p->b.cs % per == 0 && p->a.cs == 1 && p->a.rs % 4 == 0;
}

/* A table of a tail's as a device array. */
static void
gvtable(Str *s, const char *type, const char *name, const char *what, const void *v, int n,
        int uns)
{
	str_printf(s, "static __device__ const %s %s[%d] = {   /* %s */", type, name, n, what);
	for (int j = 0; j < n; j++)
		if (uns)
			str_printf(s, "%s%uu", j % 12 ? ", " : j ? ",\n\t" : "\n\t", ((const unsigned *)v)[j]);
		else
			str_printf(s, "%s%d", j % 16 ? ", " : j ? ",\n\t" : "\n\t", ((const int *)v)[j]);
	str_put(s, "\n};\n");
}

/* With a tail (p->tail, Gtail): the kernel around the body gvhead began
 * (sig, nm its parameters).  Each warp takes the unit the tables give its
 * place, the results of its columns also into the block's shared copy ys;
 * then, the block's sums done, its threads compute the block's elements
 * of the tail's kernels, which read those results from ys.  Frees sig
 * and nm. */
static void
gvwrap(Gpu *g, const MM *p, Str *sig, Str *nm)
{
	const Gtail *t = p->tail;
	Str *s = &g->kern;
	int64_t cols = p->N;
	char nb[96];

	if (t) {
		if (p->ng > 1)
			for (int j = cols = 0; j < p->ng; j++)
				cols += p->gn[j];
		snprintf(nb, sizeof nb, "%s_slot", p->name);
		gvtable(s, "int", nb, "each warp's unit", t->slot, t->nblocks * WARPS, 0);
		snprintf(nb, sizeof nb, "%s_off", p->name);
		gvtable(s, "int", nb, "each block's first element", t->off, t->nblocks + 1, 0);
		snprintf(nb, sizeof nb, "%s_ent", p->name);
		gvtable(s, "unsigned", nb, "the elements: kernel << 28 | index", t->ent, t->nent, 1);
		str_put(s, t->fns.p ? t->fns.p : "");
		str_printf(s, "/* the GEMV's blocks, then each block's elements of the kernels after "
		              "it, which read its columns from ys */\n"
		              "static __global__ void __launch_bounds__(%d%s)\n%s(%s%s)\n{\n"
		              "\t__shared__ float ys[%lld];\n"
		              "\tconst int u = %s_slot[blockIdx.x * %d + threadIdx.x / 32];\n\n"
		              "\tif (u >= 0)\n\t\t%s_body(%s, ys, u);\n",
		           WARPS * 32, p->epre ? ", 2" : "", p->name, sig->p, t->params.p,
		           (long long)cols, p->name, WARPS, p->name, nm->p);
		kwait(g, s);
		str_printf(s, "\t__syncthreads();\n"
		              "\tfor (int e = %s_off[blockIdx.x] + threadIdx.x; e < %s_off[blockIdx.x + 1]; "
		              "e += %d) {\n"
		              "\t\tconst unsigned t = %s_ent[e];\n"
		              "\t\tconst int i = (int)(t & 0xfffffffu);\n\n"
		              "\t\tswitch (t >> 28) {\n%s\t\t}\n\t}\n}\n",
		           p->name, p->name, WARPS * 32, p->name, t->calls.p);
	}
	str_free(sig);
	str_free(nm);
}

/* The GEMV kernel: one warp per column n, lanes across k, all M rows at
 * once; B's column n is contiguous in k (a weight stored [N, K]). */
static void
gemv(Gpu *g, MM *p)
{
	Str *s = &g->kern, sig = {0}, nm = {0};
	int vec = gvvec(p, 4);

	p->cw = gvcols(g, p, vec, 4);

	str_printf(s, "/* y[m,n] = %s(sum_k a[m,k] b[k,n]%s), M=%lld N=%lld K=%lld: one warp per "
	              "column n, %s */\n", p->relu ? "relu" : "", p->hasc0 ? " + c0[m,n]" : "",
	           (long long)p->M, (long long)p->N, (long long)p->K,
	           vec ? "16-byte loads" : "4-byte loads");
	if (p->ng > 1)
		str_printf(s, "/* %d sibling products of a in one kernel, their columns in turn */\n",
		           p->ng);
	if (p->norm >= 0)
		str_printf(s, "/* a is the input of RMS norm %%%d, computed first in each warp */\n",
		           g->fn->op[p->norm].out[0]);
	p->epre = regok(p, vec, 4);
	p->pf = g->pdl && g->pfmax > 0 && p->epre && p->M == 1 ? g->npf++ : -1;
	gvmirror(g, p);
	gvhead(s, p, "float", &sig, &nm);
	if (p->epre) {
		gvloopreg(g, s, p, 0);
	} else {
		gvwait(g, s, p, 4);
		gvloop32(s, p, vec, "b", "acc");
		if (p->gate)   /* SwiGLU's gate, the same sums as its own kernel's */
			gvloop32(s, p, vec, "bg", "gacc");
	}
	gvsum(s, p);
	str_put(s, "\tif (lane != 0)\n\t\treturn;\n");
	gvout(s, p);
	str_put(s, "}\n");
	gvwrap(g, p, &sig, &nm);
	gvwonly(g, p);
}

/* Any strides, few rows: one thread per column n, all M rows. */
static void
small(Gpu *g, const MM *p)
{
	Str *s = &g->kern;
	int64_t m;

	str_printf(s, "/* y[m,n] = %s(sum_k a[m,k] b[k,n]%s), M=%lld N=%lld K=%lld: one thread "
	              "per column n */\n", p->relu ? "relu" : "", p->hasc0 ? " + c0[m,n]" : "",
	           (long long)p->M, (long long)p->N, (long long)p->K);
	params(g, s, p, 1);
	str_printf(s, "\tlong long n = blockIdx.x * %dLL + threadIdx.x;\n\tfloat r", BLOCK);
	for (m = 0; m < p->M; m++)
		str_printf(s, ", acc%lld = 0.0f", (long long)m);
	str_printf(s, ";\n\n\tif (n >= %lldLL)\n\t\treturn;\n"
	              "\tfor (long long k = 0; k < %lldLL; k++) {\n"
	              "\t\tfloat w = b[k * %lld + n * %lld];\n", (long long)p->N, (long long)p->K,
	           (long long)p->b.rs, (long long)p->b.cs);
	for (m = 0; m < p->M; m++)
		str_printf(s, "\t\tacc%lld = fmaf(a[%lldLL + k * %lld], w, acc%lld);\n", (long long)m,
		           (long long)(m * p->a.rs), (long long)p->a.cs, (long long)m);
	str_put(s, "\t}\n");
	for (m = 0; m < p->M; m++) {
		char mm[32], acc[32], dst[64];
		snprintf(mm, sizeof mm, "%lld", (long long)m);
		snprintf(acc, sizeof acc, "acc%lld", (long long)m);
		snprintf(dst, sizeof dst, "y[%lldLL + n]", (long long)(m * p->N));
		epilogue(s, p, "\t", mm, "n", acc, dst);
	}
	str_put(s, "}\n");
}

/* Any strides, any rows: one thread per element (strides cuBLAS cannot
 * take; rare). */
static void
naive(Gpu *g, const MM *p)
{
	Str *s = &g->kern;

	str_printf(s, "/* y[m,n] = %s(sum_k a[m,k] b[k,n]%s), M=%lld N=%lld K=%lld: one thread "
	              "per element */\n", p->relu ? "relu" : "", p->hasc0 ? " + c0[m,n]" : "",
	           (long long)p->M, (long long)p->N, (long long)p->K);
	params(g, s, p, 1);
	str_printf(s, "\tfor (long long i = blockIdx.x * %dLL + threadIdx.x; i < %lldLL; "
	              "i += (long long)gridDim.x * %d) {\n"
	              "\t\tlong long m = i / %lld, n = i %% %lld;\n\t\tfloat r, acc = 0.0f;\n\n"
	              "\t\tfor (long long k = 0; k < %lldLL; k++)\n"
	              "\t\t\tacc = fmaf(a[m * %lld + k * %lld], b[k * %lld + n * %lld], acc);\n",
	           BLOCK, (long long)(p->M * p->N), BLOCK, (long long)p->N, (long long)p->N,
	           (long long)p->K, (long long)p->a.rs, (long long)p->a.cs, (long long)p->b.rs,
	           (long long)p->b.cs);
	epilogue(s, p, "\t\t", "m", "n", "acc", "y[i]");
	str_put(s, "\t}\n}\n");
}

/* The bias and relu after cuBLAS: y = relu?(y + beta·c0), in place; alpha
 * was applied by cuBLAS. */
static void
after(Gpu *g, const MM *p)
{
	Str *s = &g->kern;
	MM q = *p;
	char m[64], n[64];

	q.alpha = 1;
	str_printf(s, "/* y[m,n] = %s(y[m,n]%s), M=%lld N=%lld, after cublasSgemm */\n",
	           p->relu ? "relu" : "", p->hasc0 ? " + c0[m,n]" : "", (long long)p->M,
	           (long long)p->N);
	params(g, s, &q, 0);
	snprintf(m, sizeof m, "(i / %lld)", (long long)p->N);
	snprintf(n, sizeof n, "(i %% %lld)", (long long)p->N);
	str_printf(s, "\tfor (long long i = blockIdx.x * %dLL + threadIdx.x; i < %lldLL; "
	              "i += (long long)gridDim.x * %d) {\n\t\tfloat r;\n\n",
	           BLOCK, (long long)(p->M * p->N), BLOCK);
	epilogue(s, &q, "\t\t", m, n, "y[i]", "y[i]");
	str_put(s, "\t}\n}\n");
}

/* Whether cuBLAS takes the strides (one unit stride, a wide enough other). */
static int
blasok(const Mat *m, int64_t R, int64_t C)
{
	return (m->cs == 1 && m->rs >= (C > 1 ? C : 1)) || (m->rs == 1 && m->cs >= (R > 1 ? R : 1));
}

static int64_t
grid(int64_t n, int64_t per)
{
	int64_t b = (n + per - 1) / per;

	return b > (1 << 20) ? (1 << 20) : b < 1 ? 1 : b;
}

/* A GEMV launch's first arguments: a, or where the kernel computes the RMS
 * norm that is a (p->norm), the norm's input, exponent, eps and weight. */
static void
aargs(Gpu *g, const MM *p)
{
	int x, c, e, w;

	if (p->norm < 0) {
		str_printf(g->rec, "v%d", gV(g, p->a.v));
		return;
	}
	rms_operands(g, p->norm, &x, &c, &e, &w);
	str_printf(g->rec, "v%d, v%d, v%d, v%d", gV(g, x), gV(g, c), gV(g, e), gV(g, w));
}

/* A GEMV kernel's blocks for cols columns, p->cw a warp (a tail's: its
 * own count). */
static int64_t
gvgrid(const MM *p, int64_t cols)
{
	return p->tail ? p->tail->nblocks : (cols / p->cw + WARPS - 1) / WARPS;
}

/* The end of a GEMV kernel's launch: the next GEMV's weights it asks into
 * L2 (p->pf), its tail's arguments; then the check. */
static void
gvend(Gpu *g, const MM *p)
{
	if (p->pf >= 0)
		str_printf(g->rec, ", DP_PF%d", p->pf);
	if (p->tail && p->tail->args.p)
		str_put(g->rec, p->tail->args.p);
	str_put(g->rec, ");\n");
	launched(g, p->name);
	pfnext(g, p);
}

static void
launch(Gpu *g, const MM *p, int64_t blocks, int threads, int ab)
{
	klaunch(g, p->name, (long long)blocks, threads);
	if (ab) {
		aargs(g, p);
		str_printf(g->rec, ", v%d, ", gV(g, p->b.v));
	}
	if (ab && p->gate)
		str_printf(g->rec, "v%d, ", gV(g, p->gate - 1));
	if (p->hasc0)
		str_printf(g->rec, "v%d, ", gV(g, p->c0.v));
	if (p->epi >= 0 && !p->gate)
		str_printf(g->rec, "v%d, ", gV(g, gbase(g, p->eo)));
	str_printf(g->rec, "v%d", gV(g, p->y));
	if (p->yh)
		str_printf(g->rec, ", (float *)(P + %lld)", (long long)(p->yh - 1));
	gvend(g, p);
}

/* 16-bit precision (tune cuda.precision bf16|f16; formats/target.md,
 * "Precision"): the weights are rounded to 16 bits at init (mm16_init) and
 * each product reads 16-bit copies of its operands: a weight's made once at
 * init, an activation's by the schedule just before the product, into the
 * scratch.  Sums in fp32; the result rounded to 16 bits. */

/* The device helpers of the 16-bit kernels, once in a program's .cu. */
static void
head16(Gpu *g)
{
	int bf = g->prec16 == 1;

	str_printf(&g->kern, "\n#include <%s>\n\n"
	                     "typedef %s dp_h16;   /* tune cuda.precision %s */\n\n"
	                     "/* x rounded to the nearest %s (ties to even), kept in fp32 */\n"
	                     "static __device__ __forceinline__ __attribute__((unused)) float\n"
	                     "dp_r16(float x)\n{\n"
	                     "\treturn %s(%s(x));\n}\n\n"
	                     "/* the two 16-bit numbers of u (the low half first), widened */\n"
	                     "static __device__ __forceinline__ __attribute__((unused)) float2\n"
	                     "dp_w162(unsigned u)\n{\n"
	                     "\t%s h;\n\n\tmemcpy(&h, &u, sizeof h);\n\treturn %s(h);\n}\n",
	           bf ? "cuda_bf16.h" : "cuda_fp16.h", bf ? "__nv_bfloat16" : "__half",
	           bf ? "bf16" : "f16", bf ? "bf16" : "f16",
	           bf ? "__bfloat162float" : "__half2float",
	           bf ? "__float2bfloat16_rn" : "__float2half_rn",
	           bf ? "__nv_bfloat162" : "__half2", bf ? "__bfloat1622float2" : "__half22float2");
}

/* The 16-bit copy of base value v into buf (an expression of the
 * schedule): a weight's, made at init (once per weight); else converted
 * now into the scratch at *soff, which moves past it. */
static void
half16(Gpu *g, int v, int64_t *soff, char *buf, size_t bn)
{
	const GHome *h = &g->h[v];
	int64_t n = h->bytes / 4, off;

	if (h->kind == G_WEIGHT) {
		if (g->h16[v] == 0) {
			off = (g->w16 + 255) / 256 * 256;
			g->w16 = off + 2 * n;
			g->h16[v] = off + 1;
			str_printf(&g->init, "\tif (dprt_cuda_to16(g, g->w16 + %lld, (const float *)(g->weights "
			                     "+ %lld), %lld, err, errn) != 0) {\n"
			                     "\t\tdprt_cuda_close(g);\n\t\treturn -1;\n\t}\n",
			           (long long)off, (long long)h->off, (long long)n);
		}
		snprintf(buf, bn, "g->w16 + %lld", (long long)(g->h16[v] - 1));
		return;
	}
	off = *soff;
	*soff = off + (2 * n + 255) / 256 * 256;
	if (*soff > g->s16)
		g->s16 = *soff;
	snprintf(buf, bn, "g->s16 + %lld", (long long)off);
	if (off == 0 && g->s16rec == g->rec && g->s16v == v + 1)
		return;   /* there since the product before */
	if (off == 0) {
		g->s16rec = g->rec;
		g->s16v = v + 1;
	}
	str_printf(g->rec, "\tif (dprt_cuda_to16(g, g->s16 + %lld, v%d, %lld, err, errn) != 0)\n"
	                   "\t\treturn -1;\n", (long long)off, gV(g, v), (long long)n);
}

/* The GEMV kernel of 16-bit weights: as gemv, the weights read 8 at a time
 * (16 bytes), the inputs rounded to 16 bits as read. */
static void
gemv16(Gpu *g, MM *p)
{
	Str *s = &g->kern, sig = {0}, nm = {0};
	int vec = gvvec(p, 8);

	p->cw = gvcols(g, p, vec, 8);

	str_printf(s, "/* y[m,n] = %s(sum_k a[m,k] b[k,n]%s), M=%lld N=%lld K=%lld: one warp per "
	              "column n, b in 16 bits (%s), a rounded to 16 bits, fp32 sums, y rounded */\n",
	           p->relu ? "relu" : "", p->hasc0 ? " + c0[m,n]" : "", (long long)p->M,
	           (long long)p->N, (long long)p->K, vec ? "16-byte loads" : "2-byte loads");
	if (p->ng > 1)
		str_printf(s, "/* %d sibling products of a in one kernel, their columns in turn */\n",
		           p->ng);
	if (p->norm >= 0)
		str_printf(s, "/* a is the input of RMS norm %%%d, computed first in each warp */\n",
		           g->fn->op[p->norm].out[0]);
	p->epre = regok(p, vec, 8);
	p->pf = g->pdl && g->pfmax > 0 && p->epre && p->M == 1 ? g->npf++ : -1;
	gvmirror(g, p);
	gvhead(s, p, "dp_h16", &sig, &nm);
	if (p->epre) {
		gvloopreg(g, s, p, 1);
	} else {
		gvwait(g, s, p, 2);
		gvloop16(s, p, vec, "b", "acc");
		if (p->gate)   /* SwiGLU's gate, the same sums as its own kernel's */
			gvloop16(s, p, vec, "bg", "gacc");
	}
	gvsum(s, p);
	str_put(s, "\tif (lane != 0)\n\t\treturn;\n");
	gvout(s, p);
	str_put(s, "}\n");
	gvwrap(g, p, &sig, &nm);
	gvwonly(g, p);
}

/* Product p in 16 bits: few rows, the GEMV kernel of 16-bit weights; else
 * cuBLASLt on the tensor cores (the bias vector in its epilogue), then the
 * result rounded, by the epilogue kernel where there is one.  1, or 0 where
 * cuBLAS cannot take the strides (the product stays fp32). */
static int
mm16(Gpu *g, MM *p)
{
	char a[64], b[64];
	int64_t soff = 0;
	int bias;

	if (p->M > GEMV_ROWS && (!blasok(&p->a, p->M, p->K) || !blasok(&p->b, p->K, p->N)))
		return 0;
	if (p->M <= GEMV_ROWS && (p->b.rs != 1 || p->a.cs != 1) &&
	    (!blasok(&p->a, p->M, p->K) || !blasok(&p->b, p->K, p->N)))
		return 0;
	if (g->h16 == NULL) {
		g->h16 = dp_alloc(g->fn->arena, (size_t)g->fn->nval, sizeof *g->h16);
		head16(g);
	}
	p->round16 = 1;
	if (p->M <= GEMV_ROWS && p->b.rs == 1 && p->a.cs == 1 && p->ng > 1) {   /* siblings */
		int64_t cols = 0;
		int j;
		str_put(&g->kern, "\n");
		gemv16(g, p);
		for (j = 0; j < p->ng; j++)
			cols += p->gn[j];
		klaunch(g, p->name, (long long)gvgrid(p, cols), WARPS * 32);
		aargs(g, p);
		for (j = 0; j < p->ng; j++) {
			soff = 0;
			half16(g, p->gb[j], &soff, b, sizeof b);
			str_printf(g->rec, ", (const dp_h16 *)(%s)", b);
		}
		for (j = 0; j < p->ng; j++)
			str_printf(g->rec, ", v%d", gV(g, p->gy[j]));
		gvend(g, p);
		return 1;
	}
	if (p->M <= GEMV_ROWS && p->b.rs == 1 && p->a.cs == 1) {
		half16(g, p->b.v, &soff, b, sizeof b);
		str_put(&g->kern, "\n");
		gemv16(g, p);
		klaunch(g, p->name, (long long)gvgrid(p, p->N), WARPS * 32);
		aargs(g, p);
		str_printf(g->rec, ", (const dp_h16 *)(%s), ", b);
		if (p->gate) {   /* the gate's weights, in 16 bits at init */
			soff = 0;
			half16(g, p->gate - 1, &soff, b, sizeof b);
			str_printf(g->rec, "(const dp_h16 *)(%s), ", b);
		}
		if (p->hasc0)
			str_printf(g->rec, "v%d, ", gV(g, p->c0.v));
		if (p->epi >= 0 && !p->gate)
			str_printf(g->rec, "v%d, ", gV(g, gbase(g, p->eo)));
		str_printf(g->rec, "v%d", gV(g, p->y));
		if (p->yh)
			str_printf(g->rec, ", (float *)(P + %lld)", (long long)(p->yh - 1));
		gvend(g, p);
		return 1;
	}
	g->blas = 1;
	half16(g, p->a.v, &soff, a, sizeof a);
	half16(g, p->b.v, &soff, b, sizeof b);
	bias = p->hasc0 && !p->relu && p->beta == 1 && p->c0.rs == 0 && p->c0.cs == 1;
	str_printf(g->rec, "\tif (dprt_cublaslt_16(g, %lld, %lld, %lld, ", (long long)p->M,
	           (long long)p->N, (long long)p->K);
	str_float(g->rec, p->alpha);
	str_printf(g->rec, ", %s, %lld, %lld, %s, %lld, %lld, ", a, (long long)p->a.rs,
	           (long long)p->a.cs, b, (long long)p->b.rs, (long long)p->b.cs);
	if (bias)
		str_printf(g->rec, "v%d, ", gV(g, p->c0.v));
	else
		str_put(g->rec, "NULL, ");
	str_printf(g->rec, "v%d, %lld, err, errn) != 0)\n\t\treturn -1;\n", gV(g, p->y),
	           (long long)p->N);
	str_put(&g->kern, "\n");
	if (!bias && (p->hasc0 || p->relu)) {
		strcat(p->name, "_epilogue");
		after(g, p);
		launch(g, p, grid(p->M * p->N, BLOCK), BLOCK, 0);
	} else {
		str_printf(&g->kern, "/* cublasLtMatmul in 16 bits%s, then the result rounded "
		                     "(runtime/cuda/blas.c, half.cu) */\n",
		           bias ? " with the bias in its epilogue" : "");
		str_printf(g->rec, "\tif (dprt_cuda_round16(g, v%d, v%d, %lld, err, errn) != 0)\n"
		                   "\t\treturn -1;\n", gV(g, p->y), gV(g, p->y),
		           (long long)(p->M * p->N));
	}
	return 1;
}

void
mm16_init(Gpu *g, Str *s)
{
	const Fn *fn = g->fn;
	int i;

	str_printf(s, "\t/* 16 bits (tune cuda.precision %s): the 16-bit copies of the products' "
	              "weights\n\t * and operands; each fp32 parameter of the model (a constant with "
	              "a state-dict\n\t * name) rounded to %s, as by PyTorch's model.to() */\n"
	              "\tif (dprt_cuda_half(g, %s, %lld, %lld, err, errn) != 0",
	           g->prec16 == 1 ? "bf16" : "f16", g->prec16 == 1 ? "bf16" : "f16",
	           g->prec16 == 1 ? "DPRT_BF16" : "DPRT_F16", (long long)g->w16, (long long)g->s16);
	for (i = 0; i < fn->nop; i++) {   /* as init (emit.c) finds the constants */
		const Op *op = &fn->op[i], *c;
		const GHome *h = op->nout == 1 ? &g->h[op->out[0]] : NULL;
		if (h == NULL || h->kind != G_WEIGHT || h->bytes == 0 ||
		    fn->val[op->out[0]].t.dtype != DP_F32)
			continue;
		c = op->kind == Oconst ? op : &fn->op[g->x[i].src];
		if (dp_gets(c, "param") == NULL)
			continue;
		str_printf(s, " ||\n\t    dprt_cuda_round16(g, (float *)(g->weights + %lld), "
		              "(const float *)(g->weights + %lld), %lld, err, errn) != 0",
		           (long long)h->off, (long long)h->off, (long long)(h->bytes / 4));
	}
	str_put(s, ") {\n\t\tdprt_cuda_close(g);\n\t\treturn -1;\n\t}\n");
}

/* 3xTF32 through cuBLASLt (runtime/cuda/blas.c, dprt_cublaslt_x3): fp32
 * products on the tensor cores, three times the work at TF32's speed.  The
 * large ones take it by default (tune cuda.mm.x3 auto): at least X3_ROWS
 * rows and X3_MACS multiply-adds, N and K multiples of 4 (rows of 16
 * bytes), where cuBLAS's fp32 product on the SIMT units is up to twice as
 * slow (ViT-B/16's products at 197 and 6304 rows, bench/RESULTS.md).  At
 * 128 rows (GPT-2's prefill) and with 50257 columns (its logits) it
 * measured slower: the split of A and three times the passes over B cost
 * more than they gain. */
enum { X3_ROWS = 192 };
#define X3_MACS (1LL << 26)

/* The product's call of dprt_cublaslt_x3: B (a constant) split at init
 * into the splits' block (g->w3), once per constant and layout; A split at
 * each call into the scratch, or (dprt_cublaslt_x3s, g->x3s) by the kernel
 * before, which computes A; both sized here. */
static void
x3emit(Gpu *g, const MM *p, int bias)
{
	int b = p->b.v, bt = p->b.rs == 1, split = g->x3s && g->x3s[p->i];
	int64_t off;

	if (g->h3 == NULL)
		g->h3 = dp_alloc(g->fn->arena, (size_t)g->fn->nval, sizeof *g->h3);
	/* h3: the split's offset (a multiple of 256) | 2·bt | 1 */
	if (g->h3[b] == 0 || (g->h3[b] >> 1 & 1) != bt) {
		off = g->w3;
		g->w3 += (12 * p->K * p->N + 255) / 256 * 256;
		g->h3[b] = off | bt << 1 | 1;
		str_printf(&g->init, "\t/* op %d: its constant operand split for 3xTF32 */\n"
		                     "\tif (dprt_cuda_x3weight(g, %lld, (const float *)(g->weights + %lld), "
		                     "%lld, %lld, %lld, %lld,\n\t\terr, errn) != 0) {\n"
		                     "\t\tdprt_cuda_close(g);\n\t\treturn -1;\n\t}\n",
		           p->i, (long long)off, (long long)g->h[b].off, (long long)p->K,
		           (long long)p->N, (long long)p->b.rs, (long long)p->b.cs);
	}
	off = g->h3[b] & ~(int64_t)255;
	if (12 * p->M * p->K > g->s3)
		g->s3 = 12 * p->M * p->K;
	g->blas = 1;
	str_printf(g->rec, "\tif (dprt_cublaslt_x3%s(g, %lld, %lld, %lld, ", split ? "s" : "",
	           (long long)p->M, (long long)p->N, (long long)p->K);
	str_float(g->rec, p->alpha);
	str_printf(g->rec, ", v%d, %lld, v%d, %lld, %lld, %lld,\n\t                     ",
	           gV(g, p->a.v), (long long)p->a.rs, gV(g, b), (long long)p->b.rs,
	           (long long)p->b.cs, (long long)off);
	if (bias)
		str_printf(g->rec, "v%d", gV(g, p->c0.v));
	else
		str_put(g->rec, "NULL");
	str_printf(g->rec, ", v%d, %lld, err, errn) != 0)\n\t\treturn -1;\n", gV(g, p->y),
	           (long long)p->N);
	str_printf(&g->kern, "/* 3xTF32 through cuBLASLt%s (runtime/cuda/blas.c)%s */\n",
	           bias ? " with the bias in its epilogue" : "",
	           split ? ", A split by the kernel that computes it" : "");
}

/* Product op i as p: its shapes and operands and what is folded into it.
 * 0, or -1 where the cuda target has no kernel for it (with g->err set
 * where report). */
static int
mmget(Gpu *g, int i, MM *p, int report)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	int k;

	*p = (MM){.i = i, .alpha = 1, .beta = 1, .epi = g->epi[i], .norm = -1, .cw = 1, .pf = -1};
	for (k = 0; k < op->nin + op->nout; k++) {
		int v = k < op->nin ? op->in[k] : op->out[k - op->nin];
		if (ty(g, v)->dtype != DP_F32) {
			if (report)
				dp_seterr(g->err, "op %d (%s): the cuda target has no kernel for %s "
				          "tensors (only f32)", i, dp_op_name[op->kind],
				          dp_dtype_name[ty(g, v)->dtype]);
			return -1;
		}
	}
	p->relu = g->relu[i] >= 0;
	p->y = p->relu ? fn->op[g->relu[i]].out[0] : op->out[0];
	if (p->epi >= 0) {   /* an add or mul after the product (plan.c, gepilogue) */
		const Op *u = &fn->op[p->epi];
		int o = u->in[u->in[0] == op->out[0]], od = fn->val[o].def;
		p->ekind = u->kind;
		p->efirst = u->in[1] == op->out[0];
		p->esilu = fn->op[od].kind == Asilu && g->h[o].kind == G_INLINE ? od + 1 : 0;
		p->eo = p->esilu ? fn->op[od].in[0] : o;
		p->y = u->out[0];
		if (g->gate[i] >= 0)   /* SwiGLU's gate summed here too (plan.c) */
			p->gate = 1 + gbase(g, fn->op[g->gate[i]].in[1]);
	}
	if (op->kind == Alinear) {   /* y[..., N] = x[..., K] W^T + b, W being N x K */
		const Type *tx = ty(g, op->in[0]), *tw = ty(g, op->in[1]);
		Mat w;
		p->N = tw->dim[0];
		p->K = tw->dim[1];
		p->M = p->K ? dp_numel(tx) / p->K : 0;
		if (tx->rank == 2)
			p->a = gpu_matrix(g, op->in[0], p->M, p->K);
		else
			p->a = (Mat){.v = gbase(g, op->in[0]), .rs = p->K, .cs = 1};
		w = gpu_matrix(g, op->in[1], p->N, p->K);
		p->b = (Mat){.v = w.v, .rs = w.cs, .cs = w.rs};   /* B = W^T */
		if ((p->hasc0 = op->nin == 3))
			p->c0 = gpu_bias(g, op->in[2]);
	} else {   /* addmm: beta·self + alpha·m1·m2; mm: m1·m2 */
		int k0 = op->kind == Aaddmm;
		const Type *ta = ty(g, op->in[k0]), *tb = ty(g, op->in[k0 + 1]);
		p->M = ta->dim[0];
		p->K = ta->dim[1];
		p->N = tb->dim[1];
		p->a = gpu_matrix(g, op->in[k0], p->M, p->K);
		p->b = gpu_matrix(g, op->in[k0 + 1], p->K, p->N);
		if (k0) {
			p->alpha = dp_getf(op, "alpha", 1);
			p->beta = dp_getf(op, "beta", 1);
			if ((p->hasc0 = p->beta != 0))
				p->c0 = gpu_bias(g, op->in[0]);
		}
	}
	snprintf(p->name, sizeof p->name, "k%d_%s", p->y,
	         op->kind == Alinear ? "linear" : op->kind == Aaddmm ? "addmm" : "mm");
	p->ng = 1;
	if (g->group[i] == i) {   /* with its siblings (plan.c, ggroup) */
		p->ng = 0;
		for (k = i; k < fn->nop && p->ng < 4; k++)
			if (g->group[k] == i) {
				p->gb[p->ng] = gbase(g, fn->op[k].in[1]);
				p->gy[p->ng] = fn->op[k].out[0];
				p->gn[p->ng++] = ty(g, fn->op[k].in[1])->dim[0];
			}
	}
	return 0;
}

/* The ways a product runs (mmway). */
enum {
	WGEMVS,            /* our GEMV kernel with its siblings */
	WGEMV,             /* our GEMV kernel */
	WSMALL,            /* a few rows: small() */
	WX3BIAS,           /* 3xTF32 through cuBLASLt, the bias in its epilogue */
	WLT,               /* cuBLASLt, or the kernel library's tensor-core product */
	WX3,               /* 3xTF32 through cuBLASLt, no bias */
	WSGEMM,            /* cuBLAS in fp32 (an epilogue kernel after it) */
	WNAIVE,            /* a plain kernel */
};

/* How product p runs where 16-bit precision's mm16 does not take it, a
 * tuning database's choice (*algo, its line *line) over the heuristic's; site: the op whose tunable tune_get records, or -1
 * to ask without recording it.  *tcp: whether the kernel library's
 * tensor-core product could take it. */
static int
mmway(const Gpu *g, const MM *p, int site, const char **algo, int *line, int *tcp)
{
	int gv, lt, tc, x3, x3big;

	*algo = "";
	*line = 0;
	gv = p->M <= GEMV_ROWS && p->b.rs == 1 && p->a.cs == 1;
	lt = blasok(&p->a, p->M, p->K) && blasok(&p->b, p->K, p->N) && p->K > 0 && p->hasc0 &&
	     !p->relu && p->beta == 1 && p->c0.rs == 0 && p->c0.cs == 1;
	/* the kernel library's tensor-core product (gemm.cu), a tuning
	 * database's choice: more than 8 rows of A by rows, B by rows or by
	 * columns, sizes it takes (measured slower than cuBLASLt at batch 1 on
	 * the H100, bench/RESULTS.md: the heuristic's only with tune cuda.mm.tc 1) */
	tc = lt && p->M > GEMV_ROWS && p->a.cs == 1 && p->a.rs >= p->K &&
	     ((p->b.rs == 1 && p->b.cs >= p->K) || (p->b.cs == 1 && p->b.rs >= p->N)) &&
	     (p->M + 63) / 64 <= 65535 && p->M <= INT32_MAX && p->N <= INT32_MAX &&
	     p->K <= INT32_MAX;
	/* 3xTF32 through cuBLASLt: fp32, A by rows, B a dense constant, a bias
	 * vector or nothing added */
	x3 = !g->prec16 && !(g->prec && strcmp(g->prec, "tf32") == 0) && p->M > GEMV_ROWS &&
	     p->K > 0 && p->K <= INT32_MAX / 3 && p->a.cs == 1 && p->a.rs >= p->K &&
	     blasok(&p->a, p->M, p->K) && !p->relu && (lt || !p->hasc0) && gpu_isconst(g, p->b.v) &&
	     ((p->b.rs == 1 && p->b.cs == p->K) || (p->b.cs == 1 && p->b.rs == p->N));
	x3big = x3 && (g->mmx3 == 1 ||
	               (g->mmx3 < 0 && p->M >= X3_ROWS && p->M * p->N * p->K >= X3_MACS &&
	                p->N % 4 == 0 && p->K % 4 == 0));
	*tcp = tc;
	if (!g->prec16 && lt && (gv || p->M > GEMV_ROWS)) {
		/* a tunable: cuBLASLt's algorithms, our GEMV, our tensor-core product, 3xTF32 */
		char key[160];
		snprintf(key, sizeof key, "%lldx%lldx%lld %c%c f32 %s bias", (long long)p->M,
		         (long long)p->N, (long long)p->K, p->a.cs == 1 ? 'n' : 't',
		         p->b.cs == 1 ? 'n' : 't', g->prec ? g->prec : "fp32");
		*algo = tune_get(g, TUNE_MM, site, key,
		                 gv ? "gemv" : tc && g->mmtc ? "tc" : x3big ? "x3" : "0",
		                 (gv ? TUNE_GEMV : 0) | (tc ? TUNE_TC : 0) | (x3 ? TUNE_X3 : 0), line);
	}
	if (gv && (!**algo || strcmp(*algo, "gemv") == 0))
		return p->ng > 1 ? WGEMVS : WGEMV;
	if (p->M <= GEMV_ROWS && !**algo)
		return WSMALL;
	if (lt && x3 && strcmp(*algo, "x3") == 0)
		return WX3BIAS;
	if (lt)
		return WLT;
	if (x3big && !p->hasc0)
		return WX3;
	if (blasok(&p->a, p->M, p->K) && blasok(&p->b, p->K, p->N) && p->K > 0)
		return WSGEMM;
	return WNAIVE;
}

/* Where product op i takes 3xTF32 through cuBLASLt reading its A as dense
 * rows, the bytes of value v (v < 0: any A), its K: the kernel that
 * computes v may then write A's split itself (kern.c; x3emit then calls
 * dprt_cublaslt_x3s).  Else 0. */
int64_t
mm_x3reads(Gpu *g, int i, int v)
{
	MM p;
	const char *algo;
	int line, tc, w, k = g->fn->op[i].kind;

	if ((k != Alinear && k != Aaddmm && k != Amm) || g->prec16 || mmget(g, i, &p, 0) != 0)
		return 0;
	w = mmway(g, &p, -1, &algo, &line, &tc);
	return (w == WX3BIAS || w == WX3) && (v < 0 || p.a.v == gbase(g, v)) && p.a.rs == p.K &&
	       p.M * p.N > 0 ? p.K : 0;
}

/* A matrix product and what is folded into it. */
/* GEMV siblings p: their kernel and launch. */
static void
gvsiblings(Gpu *g, MM *p)
{
	int64_t cols = 0;
	int k;

	gemv(g, p);
	for (k = 0; k < p->ng; k++)
		cols += p->gn[k];
	klaunch(g, p->name, (long long)gvgrid(p, cols), WARPS * 32);
	aargs(g, p);
	for (k = 0; k < p->ng; k++)
		str_printf(g->rec, ", v%d", gV(g, p->gb[k]));
	for (k = 0; k < p->ng; k++)
		str_printf(g->rec, ", v%d", gV(g, p->gy[k]));
	gvend(g, p);
}

/* Whether product p, which takes way, is a GEMV kernel of one row that
 * waits (g->gvh) for the kernels after it, which may be its tail: not
 * where it asks the next GEMV's weights into L2, nor writes the staging,
 * nor has more than 8192 columns. */
static int
gvholdable(const Gpu *g, const MM *p, int way)
{
	int64_t cols = p->ng > 1 ? 0 : p->N;

	for (int j = 0; p->ng > 1 && j < p->ng; j++)
		cols += p->gn[j];
	/* (its results' copy in shared memory: 32 KiB at most) */
	if (!g->gvtail || p->M != 1 || p->K <= 0 || g->pfmax > 0 || cols > 8192 ||
	    (p->ng <= 1 && g->h[p->y].mirror))
		return 0;
	if (g->prec16)
		return p->b.rs == 1 && p->a.cs == 1;
	return way == WGEMV || way == WGEMVS;
}

int64_t
gvh_unit(const Gpu *g, int v, int64_t col)
{
	const Gvheld *h = g->gvh;
	int64_t at = 0;

	if (h->p.ng <= 1)
		return v == gbase(g, h->p.y) ? col / h->cw : -1;
	for (int j = 0; j < h->p.ng; at += h->p.gn[j++])
		if (v == gbase(g, h->p.gy[j]))
			return (at + col) / h->cw;
	return -1;
}

int64_t
gvh_yoff(const Gpu *g, int v)
{
	const Gvheld *h = g->gvh;
	int64_t at = 0;

	for (int j = 0; h->p.ng > 1 && j < h->p.ng; at += h->p.gn[j++])
		if (v == gbase(g, h->p.gy[j]))
			return at;
	return 0;
}

int64_t
gvh_units(const Gpu *g)
{
	const Gvheld *h = g->gvh;
	int64_t cols = h->p.ng > 1 ? 0 : h->p.N;

	for (int j = 0; h->p.ng > 1 && j < h->p.ng; j++)
		cols += h->p.gn[j];
	return cols / h->cw;
}

int
gvh_touches(const Gpu *g, int v, int reads)
{
	const MM *p = &g->gvh->p;
	int x, c, e, w, j;

	for (j = 0; p->ng > 1 && j < p->ng; j++)
		if (goverlap(g, v, p->gy[j]) || (reads && goverlap(g, v, p->gb[j])))
			return 1;
	if (goverlap(g, v, p->y))
		return 1;
	if (!reads)
		return 0;
	if ((p->norm < 0 && goverlap(g, v, p->a.v)) || goverlap(g, v, p->b.v) ||
	    (p->gate && goverlap(g, v, p->gate - 1)) || (p->hasc0 && goverlap(g, v, p->c0.v)) ||
	    (p->epi >= 0 && goverlap(g, v, gbase(g, p->eo))))
		return 1;
	if (p->norm >= 0) {
		rms_operands(g, p->norm, &x, &c, &e, &w);
		return goverlap(g, v, x) || goverlap(g, v, c) || goverlap(g, v, e) ||
		       goverlap(g, v, w);
	}
	return 0;
}

int
gvh_held(const Gpu *g, int i)
{
	return g->gvh && g->gvh->p.i == i;
}

void
gvh_emit(Gpu *g, Gtail *t)
{
	Gvheld *h = g->gvh;
	MM p;

	if (h == NULL)
		return;
	p = h->p;
	p.tail = t;
	g->gvh = NULL;
	if (h->way < 0)
		mm16(g, &p);
	else if (h->way == WGEMVS)
		gvsiblings(g, &p);
	else {
		gemv(g, &p);
		launch(g, &p, gvgrid(&p, p.N), WARPS * 32, 1);
	}
	free(h);
	gmark(g, p.i);
}

int
emit_mm(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	MM p;
	int k, way, tc, line;
	const char *algo;   /* the tunable's choice, where it is one */
	size_t rec0 = g->rec->n;   /* the schedule before this product's comments */

	if (mmget(g, i, &p, 1) != 0)
		return -1;
	if (p.epi >= 0)
		g->scalar = 1;

	str_put(&g->kern, "\n");
	opcomment(&g->kern, fn, i, "");
	if (p.relu)
		opcomment(&g->kern, fn, g->relu[i], "");
	if (p.gate) {
		opcomment(&g->kern, fn, g->gate[i], "");
		opcomment(g->rec, fn, g->gate[i], "\t");
	}
	if (p.esilu)
		opcomment(&g->kern, fn, p.esilu - 1, "");
	if (p.epi >= 0)
		opcomment(&g->kern, fn, p.epi, "");
	for (k = i + 1; p.ng > 1 && k < fn->nop; k++)
		if (g->group[k] == i) {
			opcomment(&g->kern, fn, k, "");
			opcomment(g->rec, fn, k, "\t");
		}
	opcomment(g->rec, fn, i, "\t");
	if (p.relu)
		opcomment(g->rec, fn, g->relu[i], "\t");
	if (p.epi >= 0)
		opcomment(g->rec, fn, p.epi, "\t");
	if (p.M * p.N == 0) {
		str_put(&g->kern, "/* an empty product: nothing to compute */\n");
		return 0;
	}
	way = mmway(g, &p, i, &algo, &line, &tc);
	if (line)
		str_printf(&g->kern, "/* algo=%s: tuning database line %d */\n", algo, line);
	if (g->rmsp >= 0 && p.a.v == gbase(g, fn->op[g->rmsp].out[0])) {
		/* the RMS norm that is a, held back (emit_rms): computed here where
		 * this is the GEMV kernel of one row that reads it, alone, and
		 * nothing ran since; else its own kernel, where it was */
		int v = fn->op[g->rmsp].out[0], h16 = g->prec16 && p.K > 0, per = h16 ? 8 : 4;
		int path = h16 ? p.M <= GEMV_ROWS && p.b.rs == 1 && p.a.cs == 1 :
		                 way == WGEMV || way == WGEMVS;
		if (path && p.M == 1 && p.K % per == 0 && p.b.cs % per == 0 &&
		    (p.K / per + 31) / 32 <= 8 && rec0 == g->rmsat &&
		    g->nuse[v] == (p.ng > 1 ? p.ng : 1 + (p.gate != 0))) {
			p.norm = g->rmsp;
			rms_drop(g);
		} else {
			rms_flush(g);
		}
	}
	if ((p.epi >= 0 || p.ng > 1) && way != WGEMV && way != WGEMVS)
		dp_die("op %d: an epilogue or siblings for a product that takes no GEMV kernel", i);
	if (gvholdable(g, &p, way)) {   /* written once the kernels after it are known */
		Gvheld *h = calloc(1, sizeof *h);
		int per = g->prec16 ? 8 : 4;
		if (h == NULL)
			dp_die("out of memory");
		h->p = p;
		h->way = g->prec16 ? -1 : way;
		h->cw = gvcols(g, &p, gvvec(&p, per), per);
		g->gvh = h;
		g->nkern++;
		return 0;
	}
	if (g->prec16 && p.K > 0 && mm16(g, &p)) {
		/* 16 bits (tune cuda.precision bf16|f16) */
	} else if (way == WGEMVS) {   /* siblings */
		gvsiblings(g, &p);
	} else if (way == WGEMV) {
		gemv(g, &p);
		launch(g, &p, gvgrid(&p, p.N), WARPS * 32, 1);
	} else if (way == WSMALL) {
		small(g, &p);
		launch(g, &p, grid(p.N, BLOCK), BLOCK, 1);
	} else if (way == WX3BIAS) {
		x3emit(g, &p, 1);
	} else if (way == WLT) {   /* cuBLASLt, or the kernel library's tensor-core product (algo=tc) */
		int ours = tc && strcmp(algo, "tc") == 0;
		g->blas = 1;   /* (cuBLASLt for DPRT_CUDA_MM=lt too) */
		if (atoi(algo) > 0)   /* the heuristic's result algo, for the next call */
			str_printf(g->rec, "\tg->ltalgo = %d;\n", atoi(algo));
		str_printf(g->rec, "\tif (%s(g, %lld, %lld, %lld, ",
		           ours ? "dprt_cuda_gemm" : "dprt_cublaslt_bias", (long long)p.M,
		           (long long)p.N, (long long)p.K);
		str_float(g->rec, p.alpha);
		str_printf(g->rec, ", v%d, %lld, %lld, v%d, %lld, %lld, v%d, v%d, %lld, err, errn) != 0)\n"
		                   "\t\treturn -1;\n", gV(g, p.a.v), (long long)p.a.rs,
		           (long long)p.a.cs, gV(g, p.b.v), (long long)p.b.rs, (long long)p.b.cs,
		           gV(g, p.c0.v), gV(g, p.y), (long long)p.N);
		if (ours)
			str_put(&g->kern, "/* the kernel library's tensor-core product with the bias "
			                  "in its epilogue (runtime/cuda/gemm.cu) */\n");
		else if (atoi(algo) > 0)
			str_printf(&g->kern, "/* cublasLtMatmul with the bias in its epilogue, the "
			                     "heuristic's algorithm %d (runtime/cuda/blas.c) */\n",
			           atoi(algo));
		else
			str_put(&g->kern, "/* cublasLtMatmul with the bias in its epilogue "
			                  "(runtime/cuda/blas.c) */\n");
	} else if (way == WX3) {
		x3emit(g, &p, 0);
	} else if (way == WSGEMM) {
		g->blas = 1;
		str_printf(g->rec, "\tif (dprt_cublas_sgemm(g, %lld, %lld, %lld, ", (long long)p.M,
		           (long long)p.N, (long long)p.K);
		str_float(g->rec, p.alpha);
		str_printf(g->rec, ", v%d, %lld, %lld, v%d, %lld, %lld, v%d, %lld, err, errn) != 0)\n"
		                   "\t\treturn -1;\n", gV(g, p.a.v), (long long)p.a.rs,
		           (long long)p.a.cs, gV(g, p.b.v), (long long)p.b.rs, (long long)p.b.cs,
		           gV(g, p.y), (long long)p.N);
		if (p.hasc0 || p.relu) {
			strcat(p.name, "_epilogue");
			after(g, &p);
			launch(g, &p, grid(p.M * p.N, BLOCK), BLOCK, 0);
		} else {
			str_put(&g->kern, "/* cublasSgemm alone (runtime/cuda/blas.c) */\n");
		}
	} else {
		naive(g, &p);
		launch(g, &p, grid(p.M * p.N, BLOCK), BLOCK, 1);
	}
	g->nkern++;
	return 0;
}
