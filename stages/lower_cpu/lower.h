/* lower.h: private interfaces of the lower_cpu stage (buffer plan, kernel
 * emitters, file emitter). */
#ifndef LOWER_H
#define LOWER_H

#include "capi.h"
#include "dpir.h"
#include "xfer.h"

/* Where a value lives at run time. */
enum {
	H_NONE,            /* not planned yet */
	H_IN,              /* the caller's input buffer in[idx] */
	H_OUT,             /* the caller's output buffer out[idx] */
	H_CONST,           /* NAME_weights + idx (a byte offset) */
	H_ARENA,           /* arena + idx (a byte offset, 64-byte aligned) */
	H_VIEW,            /* the bytes of value base (no code, no copy) */
	H_DEV,             /* on the device: never named by host code */
	H_PIN,             /* page-locked staging at byte offset idx, where a
	                      copy from the device lands (NAME_gpu_host) */
};

typedef struct Home {
	int kind;          /* H_* */
	int64_t idx;       /* io index, or byte offset */
	int base;          /* H_VIEW: the viewed value */
	int trans;         /* H_VIEW: a 2-D transpose of base (matmul operands only) */
	int ro;            /* read-only: an input or constant, or a view of one */
	int64_t bytes;     /* size in bytes */
	int last;          /* index of the last op reading it (through views too) */
} Home;

typedef struct Plan {
	Home *h;           /* per value */
	int *copy;         /* per port: copied into out[] right after its def */
	int *inidx;        /* per op: input index of an input op, else -1 */
	Xfer *x;           /* per op: its host<->device transfer (xfer.h) */
	int ncuda;         /* cuda partitions */
	int nev;           /* events of the device->host copies in pieces (xfer.h):
	                      the host waits for them through NAME_gpu_wait */
	int64_t *scratch;  /* per op: arena byte offset of its scratch (nn.c) */
	int64_t arena;     /* arena size in bytes, a multiple of 64 */
	const char *blk;   /* per value: blocked layout (nn_layout) */
} Plan;

/* plan.c: computes the static buffer plan of fn (memory owned by fn's
 * arena).  0, or -1 with err set. */
int plan(Fn *fn, const char *blk, Plan *p, Err *err);

/* A convolution fused with the ops after it (nn.c, nn_fuse): its operands
 * in[0..nconv-1] as before, then the batch norm's w, b, mean, var at
 * in[bn..bn+3] (bn 0: none), the residual at in[res] (0: none); act is a
 * DPRT_ACT_* with lo, hi for a clamp. */
typedef struct Fuse {
	int nconv, bn, res, act;
	double eps, lo, hi;
} Fuse;

/* State of the code emitter for one function. */
typedef struct Ctx {
	Fn *fn;
	const Plan *plan;
	Str *top;          /* file-scope tables (normalize constants) */
	Str *body;         /* the schedule inside run() */
	char *used;        /* per value: named by generated code */
	int scalar;        /* whether the code calls runtime/dpscalar.h's formulas */
	Err *err;
	Fuse *fuse;        /* per op (nn_fuse) */
	Str *prep;         /* NAME_prep(): weights prepared once per instance */
	int64_t *prepoff;  /* per op: arena byte offset of its prepared weights */
	const char *blk;   /* per value: in the blocked layout (nn_layout) */
	char **kint;       /* cints' lists by hash (open addressing), their names' numbers */
	int *kid, kcap, kn;
	Str *pieces;       /* the schedule's pieces, functions of their own (emit.c, cut) */
	int npiece, inpiece, piece;   /* pieces cut; ops in the one being written; their most */
} Ctx;

/* Appends the name of a file-scope `static const int64_t` array (c->top,
 * one per distinct list) holding v[0..n-1] ({0} when n is 0): the shape
 * and stride arguments of the runtime's calls.  Not compound literals: each
 * of those is an array on run()'s stack, and GCC's stack layout of a
 * schedule of thousands of ops (an unrolled recurrent layer) takes time
 * quadratic in their number. */
void cints(Ctx *c, const int64_t *v, int n);

typedef int Emitter(Ctx *c, const Op *op, int i);

/* kernels.c: appends the statements of op i to c->body (a comment with
 * the op's text form first).  0, or -1 with c->err set when the cpu target
 * has no kernel for it. */
/* Helpers of the emitters (kernels.c, nn.c). */

/* The type of value v. */
static inline const Type *
ty(const Ctx *c, int v)
{
	return &c->fn->val[v].t;
}

/* Marks v as named by the generated code and returns it, for "v%d". */
static inline int
V(Ctx *c, int v)
{
	c->used[v] = 1;
	return v;
}

/* The product of t's dims [from, to). */
static inline int64_t
prod(const Type *t, int from, int to)
{
	int64_t n = 1;

	for (int i = from; i < to; i++)
		n *= t->dim[i];
	return n;
}

/* Axis d normalized for rank (the verifier has checked it). */
static inline int
normdim(int64_t d, int rank)
{
	if (d < 0)
		d += rank;
	if (d < 0 || d >= (rank ? rank : 1))
		dp_die("dim %lld out of range for rank %d (verify should catch this)",
		       (long long)d, rank);
	return (int)d;
}

int emit_op(Ctx *c, int i);
/* The runtime's name of a dtype: "DPRT_F32". */
const char *dprt_enum(int dtype);

/* nn.c: the neural-network ops (NN_OPS in ops.h).  emit_nn appends op i's
 * statements like emit_op (whose fallback it is), failing for ops with no
 * cpu kernel; nn_scratch is the bytes of arena scratch op needs while it
 * runs (0 for none), which plan() reserves at plan->scratch[i]. */
int emit_nn(Ctx *c, const Op *op, int i);
Emitter *nn_emitter(int kind);
/* scan.c: the scans (aten.cumsum, cumprod, logcumsumexp), aten.gather. */
int k_scan(Ctx *c, const Op *op, int i);
int k_gatherdim(Ctx *c, const Op *op, int i);
int k_sort(Ctx *c, const Op *op, int i);
/* Whether the cpu target has a kernel for op kind (kernels.c). */
int cpu_supports(int kind);
int64_t nn_scratch(const Fn *fn, const Op *op, const char *blk);
/* Fuses each f32 convolution with a following batch norm (constant
 * parameters, folded into the weights when they are prepared), residual add
 * and activation, when each intermediate has no other reader: the op list
 * is rewritten (the fused ops are gone, the convolution takes their place
 * and result) and the table of fusions returned, per op.  nn_prep is the
 * bytes of prepared weights op keeps in the arena for good (0 for none). */
Fuse *nn_fuse(Fn *fn);
int64_t nn_prep(const Fn *fn, const Op *op);
/* The values (per value, 1) kept in runtime/dprt.h's blocked layout: the
 * 4-D f32 results of fused convolutions and max pools read only as the
 * input or residual of such ops or by a global average pool, with a
 * convolution's residual and result, and a pool's input and result, alike.
 * blkbytes is the bytes of a blocked value (channels padded to 16). */
char *nn_layout(Fn *fn, const Fuse *fu);
int64_t nn_blkbytes(const Type *t);
/* nn.c's fusion helpers: the one reader of v after op i (or -1), whether
 * v is a cpu f32 constant, whether two types are equal, an op's
 * activation (DPRT_ACT_*, 0 for none). */
int reader(const Fn *fn, const int *nuse, const int *gone, int v, int i);
int isconst(const Fn *fn, int v);
int sametype(const Type *a, const Type *b);
int actof(const Op *op, double *lo, double *hi);
/* Whether op adds a residual to cur that a fused epilogue can take. */
int resadd(const Fn *fn, const Op *op, int cur);
/* xf.c: nn_fuse's transformer rewrites (see there). */
void xf_gelu(Fn *fn, int *nuse, int *gone, int *orphan);
void xf_addmm(Fn *fn, int i);
int xf_linear(Fn *fn, const int *nuse, int *gone, int *orphan, char *moved, Fuse *fu, int i);
void xf_sdpa(Fn *fn, int *nuse, int *gone, int *orphan, int i);

/* image.c: the emitters of resize, center_crop and topk (as emit_op's). */
int k_resize(Ctx *c, const Op *op, int i);
int k_crop(Ctx *c, const Op *op, int i);
int k_topk(Ctx *c, const Op *op, int i);
int k_tokenize(Ctx *c, const Op *op, int i);
int k_detokenize(Ctx *c, const Op *op, int i);
int k_assign(Ctx *c, const Op *op, int i);

/* emit.c: the whole C file for fn (host schedule, prog descriptor, typed
 * API) into *out.  src is the input's base name, for the header comment.
 * 0, or -1 with err set. */
int emit_file(Fn *fn, const char *src, const char *dst, Str *out, Err *err);

#endif
