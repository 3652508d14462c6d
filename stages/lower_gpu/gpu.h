/* gpu.h: private interfaces of the lower_gpu stage: the device buffer plan
 * and fusion decisions (plan.c), kernel emitters (kern.c, mm.c) and the
 * .cu file (emit.c). */
#ifndef GPU_H
#define GPU_H

#include "capi.h"
#include "dpir.h"
#include "xfer.h"

/* Streaming multiprocessors of an H100 SXM: the GPU the heuristics that
 * want blocks to fill it assume (a tuning database measures the real one). */
enum { GPU_SMS = 132 };
/* The operands an elementwise kernel's ops read from memory, at most, and
 * its ops (plan.c stops fusing there; kern.c's kernels take each read as a
 * parameter, MAXPARAM of them, 8 bytes each, within CUDA's parameter
 * space, and name at most 1024 ops). */
enum { GPU_MAXREAD = 256, GPU_MAXOPS = 768 };

/* Where a value lives on the device. */
enum {
	G_HOST,            /* a cpu value: not on the device */
	G_WEIGHT,          /* device weights + off (uploaded at init) */
	G_ARENA,           /* device arena + off (256-byte aligned) */
	G_VIEW,            /* the bytes of value base: a reshape, or (trans) a
	                      2-D transpose read through matmul strides */
	G_INLINE,          /* no memory: computed inside the kernel of its one
	                      reader (a fused chain, or a matmul's folded relu) */
};

typedef struct GHome {
	int kind;          /* G_* */
	int64_t off;       /* G_WEIGHT, G_ARENA: byte offset */
	int base;          /* G_VIEW: the viewed value */
	int trans;         /* G_VIEW: a transpose */
	int strided;       /* G_VIEW: 1 a window (view, permute, slice, select)
	                      that only attention reads, through strides; 2
	                      attention's result, a window of base (whose
	                      views and permutes it is) that attention writes
	                      through strides (gviewlayout) */
	int wrby;          /* G_ARENA: 1 + the attention op that writes it
	                      (strided 2): no kernel of its own; else 0 */
	int64_t bytes;
	int last;          /* op position of its last reader (see Gpu.exec) */
	int64_t pin;       /* G_ARENA: 1 + the byte offset in the page-locked
	                      staging where its kernel writes it instead, its
	                      device->host copy left out (emit.c, copyout); else 0 */
	int64_t mirror;    /* G_ARENA, read on the device and by the host: 1 + the
	                      byte offset in the staging where its kernel may write
	                      it too (emit.c, mirrors); else 0 */
	int mirrored;      /* its kernel does (a GEMV of one product, mm.c): no copy */
} GHome;

/* The state of the stage for one function. */
typedef struct Gpu {
	Fn *fn;
	Err *err;
	Xfer *x;           /* per op: its transfer kind (xfer.h) */
	int64_t pinned;    /* bytes of page-locked staging */
	int nev;           /* events of the device->host copies in pieces (xfer.h) */
	GHome *h;          /* per value */
	int *nuse;         /* per value: readers, ports counted */
	int *user;         /* per value: its last reading op, or -1 */
	int *exec;         /* per op: the op whose kernel does its work (itself,
	                      or for an inlined op the op reading its result) */
	int *relu;         /* per op: the relu folded into a matmul, or -1 */
	int *epi;          /* per op: for a GEMV, the add or mul folded into its
	                      epilogue (gepilogue); for a gate summed in its
	                      sibling's kernel (gate below), its silu; or -1 */
	int *epimm;        /* per op: for that add or mul, its GEMV, or -1 */
	int *gate;         /* per op: for a GEMV whose epilogue multiplies by silu of
	                      a sibling product (SwiGLU's gate), that product, its
	                      sums made in the same warp; -1 elsewhere */
	int *group;        /* per op: for a one-row product run with the other
	                      products of its input in one GEMV kernel (ggroup),
	                      the group's first (itself for the first); else -1 */
	int *rms;          /* per op: for the last mul of an RMS norm written out
	                      (grms), its pow; -1 elsewhere */
	int *addnorm;      /* per op: for an add, the layer norm whose kernel does
	                      it (gaddnorm), or -1 */
	int *cpart;        /* per partition: its index among cuda partitions, or -1 */
	int ncpart;
	int64_t arena;     /* bytes of device arena */
	int64_t wbytes;    /* bytes of device weights */
	int blas;          /* whether cuBLAS is called */
	int nkern;
	Str kern;          /* file scope, the device half: constant tables,
	                      helpers, kernels */
	Str host;          /* file scope, the host half: the library calls'
	                      descriptions (dprt_conv, dprt_sdpa) */
	Str *rec;          /* the statements of the schedule of the partition
	                      being emitted */
	char *used;        /* per value: named by that schedule */
	int helpers;       /* device helpers needed (H_* bits in kern.c) */
	int faults;        /* a kernel may record an index out of range
	                      (runtime/cuda/fault.cuh) */
	int scalar;        /* whether kernels call runtime/dpscalar.h's formulas */
	int ops;           /* whether the code launches runtime/dpops.cuh's kernels */
	int *fold;         /* per op, in a convolution's chain (the convolution
	                      and the batch norm, residual add and relu folded
	                      into its kernel): the chain's last op, where that
	                      kernel runs; -1 elsewhere (nnplan) */
	struct Nn *nn;     /* nn.c's state (nn.h) */
	const char *arch;  /* the GPU generation (sm_90), with -t */
	struct Tunedb *db; /* the tuning database and the sites met, or NULL:
	                      no mapping (tune.c) */
	const char *prec;  /* the mapping's precision (fp32, tf32), in keys */
	int attninplace;   /* tune cuda.attn.inplace 1: attention reads and writes
	                      through strides (plan.c) */
	int pdl;           /* tune cuda.pdl 1: the elementwise and matrix-vector
	                      kernels launched with programmatic dependent launch */
	int pdlearly;      /* tune cuda.pdl 1 (not late): they let the kernel after
	                      start at their first line, before their wait (cuda/pdl.cuh) */
	int mmtc;          /* tune cuda.mm.tc 1: a product the tensor-core kernel takes
	                      takes it, where no database entry says otherwise */
	int mmx3;          /* tune cuda.mm.x3: 1 every product 3xTF32 through cuBLASLt
	                      can take takes it, 0 none, -1 (auto, the default) the
	                      large ones in fp32 (mm.c) */
	int64_t w3, s3;    /* bytes of its constants' splits and of its operand
	                      scratch (mm.c) */
	int64_t *h3;       /* per value: its split's byte offset in the splits
	                      | 2·(by rows) | 1, or 0 (mm.c) */
	int x3fuse;        /* tune cuda.mm.x3split 1 (the default): the kernel computing
	                      a 3xTF32 product's A may write its split (x3split) */
	int x3put;         /* a kernel writes such a split (cuda/tf32.cuh) */
	int halfcast;      /* a kernel casts to or from f16, bf16 (cuda/halfcast.cuh) */
	char *x3s;         /* per op, or NULL: 1 for a 3xTF32 product whose A's split
	                      the kernel computing A wrote (kern.c, x3split) */
	int gemvnorm;      /* tune cuda.gemv.norm 1 (the default): the GEMV kernel
	                      reading an RMS norm of one row computes it (mm.c) */
	int rmsp;          /* the RMS norm held back for its GEMV (its last mul), or -1 */
	size_t rmsat;      /* where its launch goes in g->rec if no GEMV takes it */
	Str rmskern, rmsrec; /* its kernel and launch, held back */
	Str init;          /* statements NAME_gpu_init runs once the constants
	                      are on the device (packing convolution weights) */
	Str pfdefs;        /* the host half's DP_PF<k>: what GEMV kernel k asks
	                      into L2 for the GEMV after it (mm.c, pfnext) */
	int npf;           /* the GEMV kernels that take such an argument so far */
	int pfwant;        /* the last of them, until the GEMV after it is known, or -1 */
	int64_t pfmax;     /* tune cuda.gemv.l2 MIB: those weights' bytes at most (0: none asked) */
	int gvwarps;       /* tune cuda.gemv.warps N (512 the default): the warps a GEMV kernel
	                      of one row keeps at least where its warps take several
	                      columns each (mm.c, gvcols) */
	char *wonly;       /* per value: 1 where the one generated kernel computing
	                      it writes it and reads it not (a GEMV, a fused
	                      chain's root), so that it may write it into the
	                      page-locked staging instead (emit.c, copyout) */
	int copyout;       /* tune cuda.copyout 1 (the default): such a result read
	                      only by the host written there by its kernel */
	int prec16;        /* 1 bf16, 2 f16 (tune cuda.precision), 0: fp32/tf32 */
	int64_t w16;       /* bytes of the 16-bit copies of weights (mm.c) */
	int64_t s16;       /* bytes of the 16-bit operand scratch (mm.c) */
	int64_t *h16;      /* per value: 1 + the byte offset of its 16-bit copy
	                      in the weight copies, or 0 */
	int s16v;          /* 1 + the value whose 16-bit copy starts the scratch
	                      in schedule s16rec (converted once for its products) */
	Str *s16rec;
	struct Kgroup *kg; /* small elementwise kernels held, to be launched as
	                      one (kern.c: khold, kflush), or NULL */
	struct Gvheld *gvh; /* a GEMV kernel of one row held until the small
	                      kernels after it are known (mm.c), or NULL */
	int gvtail;        /* tune cuda.gemv.tail 1 (the default): such kernels
	                      that read the GEMV's results only at columns one
	                      block computes run in that block (Gtail) */
} Gpu;

/* The warps of a block of the GEMV kernels (mm.c). */
enum { GV_WARPS = 4 };

/* A GEMV kernel's tail: small elementwise kernels held after a GEMV kernel
 * of one row (a decoder layer's rotary embedding and cache writes after
 * its q/k/v products) whose elements each read the GEMV's results only at
 * columns that one block of it computes, once its warps are permuted
 * among its blocks.  That block computes those elements after its sums,
 * reading the results from shared memory: one kernel, not two, and no
 * wait on the whole GEMV between.  kern.c finds it (kflush), mm.c writes
 * the kernel (gvh_emit). */
typedef struct Gtail {
	int nblocks;       /* the GEMV kernel's blocks */
	int *slot;         /* per warp of each block (nblocks·GV_WARPS): the
	                      unit (a warp's columns in the kernel unpermuted)
	                      it takes, or -1 */
	int *off;          /* per block, and one more: its first entry */
	unsigned *ent;     /* the elements, by block: member << 28 | index */
	int nent;
	Str fns;           /* the members' element functions */
	Str params;        /* the kernel's parameters for them, each after ", " */
	Str args;          /* their launch arguments, each after ", " */
	Str calls;         /* the switch's cases calling them */
} Gtail;

/* The passes, in the order emit_file runs them (each reads what the ones
 * before it decided, none calls a later one):
 *  1. guses (plan.c): the transfers (g->x) and each value's readers;
 *  2. nnplan (nn.c): the convolution chains (g->fold, g->nn);
 *  3. gplan (plan.c): fusion (which values are computed inside their
 *     reader's kernel), views, the device homes, the residual adds that
 *     a layer norm does (gaddnorm, reduce.c) and the offsets;
 *  4. the emitters, per op: emit_elem and emit_reduce (kern.c, reduce.c),
 *     emit_mm (mm.c), emit_nn (nn.c, then conv.c and attn.c), which call
 *     the helpers of the passes before them and the kernel library
 *     (runtime/cuda/); small elementwise kernels are held until kflush,
 *     and a GEMV kernel of one row before them (g->gvh), which kflush
 *     writes with the ones it can run as its tail (Gtail);
 *  5. emit_file (emit.c): the schedules, init and the entry points.
 * guses and gplan: 0, or -1 with g->err set. */
int guses(Gpu *g);
int gplan(Gpu *g);

/* Which adds the kernel of the layer norm reading them does (g->addnorm),
 * once the homes are known; called by gplan before the liveness, each such
 * add running where its norm runs. */
void gaddnorm(Gpu *g);
/* The RMS norms written out as ops (a Llama's: w·(x·rsqrt(mean(x^c) + eps))),
 * each computed by one row kernel (reduce.c, emit_rms) at its last mul:
 * g->rms; called by gplan before the homes. */
void grms(Gpu *g);
/* 0, 1 where the norm is held back for its GEMV (g->rmsp), -1 on error. */
int emit_rms(Gpu *g, int i);
void rms_flush(Gpu *g);
void rms_drop(Gpu *g);
void rms_operands(const Gpu *g, int i, int *x, int *c, int *eps, int *w);
void rms_prologue(const Gpu *g, int i, int64_t n, int pre, Str *s);
void rms_elem(const Gpu *g, int i, const char *xe, const char *we, Str *s);
/* The value whose memory v's bytes are (v itself unless a view). */
int gbase(const Gpu *g, int v);
/* Whether v's bytes are in device memory, a reshape to be computed inside
 * its reader's kernel made a view of the value it reshapes (plan.c). */
int inmemory(Gpu *g, int v);
/* For a strided view v (GHome.strided), or any value: its element strides
 * (str[rank]) and offset in the memory of gbase(g, v) (dense: the value
 * itself).  0, or -1 where no strides describe it (gplan made no such
 * view). */
int gviewlayout(const Gpu *g, int v, int64_t *str, int64_t *off);
/* Whether an elementwise kernel can compute op (so its operands may be
 * fused into it). */
int fusable(const Fn *fn, const Op *op);
int elemkind(int kind);
/* Whether the cuda target has a kernel for op kind (emit.c): what
 * dp-lower_gpu --supports lists, checked against ops.h by tests/ops.t. */
int gpu_supports(int kind);
int gpu_hasstate(const Fn *fn);
/* scan.c: the kernel of a scan op i (aten.cumsum). */
int isscan(int kind);
int emit_scan(Gpu *g, int i);
/* iwrite.c: the kernel of index_write op i (in place into a state where
 * dp_writesstate allows it: its result is then a view of the state). */
int emit_indexwrite(Gpu *g, int i);

/* kern.c: appends the kernel(s) of op i (a root of a fused chain, a
 * reduction) to g->kern and their launches to g->rec.  0, or -1 with
 * g->err set when the cuda target has no kernel for it. */
int emit_elem(Gpu *g, int i);
/* Small elementwise kernels (few blocks, emit_elem's and
 * emit_iwrite_chain's) are held so that the independent ones among those
 * in a row run as one launch: kflush launches those held (marked as the
 * last one's op); every other emitter calls it before its own code.
 * kdrop forgets them (on an error). */
void kflush(Gpu *g);
void kdrop(Gpu *g);
/* The DPRT_CUDA_MARK after op i's kernels (the event a trace reads). */
void gmark(Gpu *g, int i);
/* The kernel of index_write op i whose src is a fused chain, written into
 * y's bytes (kern.c). */
int emit_iwrite_chain(Gpu *g, int i, int y, int inplace);
int emit_reduce(Gpu *g, int i);
/* Where root op i's result v is the A of a 3xTF32 product that may take
 * its split from v's kernel (kern.c), that product (*prod, marked in
 * g->x3s) and A's columns K, which must be want unless want is 0; else 0
 * (*prod -1). */
int64_t x3split(Gpu *g, int i, int v, int64_t want, int *prod);
/* Whether emit_reduce computes op: a kernel of its own reading whole rows
 * or gathering (argmax, softmax, ...). */
int isreduce(const Fn *fn, const Op *op);
/* The type of value v. */
static inline const Type *
ty(const Gpu *g, int v)
{
	return &g->fn->val[v].t;
}
/* A dim of a rank-rank type, negative from the end (verified IR: in range). */
int normdim(int64_t d, int rank);
/* The product of t's dims from..to-1. */
int64_t prod(const Type *t, int from, int to);
/* The C type of a dtype on the device ("float", "uint8_t"...), NULL when
 * the cuda target cannot compute on it. */
const char *dtype_c(int dtype);
/* Marks v as named by the schedule and returns it (for "v%d"). */
int gV(Gpu *g, int v);
/* Appends the "/" "* op text *" "/" comment lines of op i to s, indented. */
void opcomment(Str *s, const Fn *fn, int i, const char *indent);
/* Appends the launch-check statement after a kernel launch. */
void launched(Gpu *g, const char *kname);
/* The start of kernel kname's launch on g->rec, its arguments to follow:
 * "\tNAME<<<blocks, threads, 0, g->stream>>>(", or with tune cuda.pdl 1 a
 * programmatic dependent launch (runtime/cuda/pdl.cuh), whose kernel must
 * call kwait's line before it reads what kernels before it wrote. */
void klaunch(Gpu *g, const char *kname, long long blocks, int threads);
void kwait(const Gpu *g, Str *s);

/* mm.c: a matrix product (aten.linear, aten.addmm, aten.mm) with its bias
 * and folded relu: a generated GEMV kernel for few rows, cuBLAS else. */
int emit_mm(Gpu *g, int i);
/* The GEMV kernel held (g->gvh): the unit of column col of its result v
 * (-1 where v is none of its results), their columns' offset in the
 * block's shared copy (gvh_yoff), its units, whether value v overlaps
 * what it writes (or reads, where reads), whether op i is its product;
 * gvh_emit writes it with tail t (NULL: none) and its mark, and lets it
 * go. */
int64_t gvh_unit(const Gpu *g, int v, int64_t col);
int64_t gvh_yoff(const Gpu *g, int v);
int64_t gvh_units(const Gpu *g);
int gvh_touches(const Gpu *g, int v, int reads);
int gvh_held(const Gpu *g, int i);
void gvh_emit(Gpu *g, Gtail *t);
/* Whether two values' memory overlaps (kern.c). */
int goverlap(const Gpu *g, int a, int b);
/* Where product op i takes 3xTF32 through cuBLASLt reading its A as dense
 * rows, the bytes of value v (v < 0: any A), its K (v's kernel may then
 * write A's split); else 0. */
int64_t mm_x3reads(Gpu *g, int i, int v);

/* mm.c, in 16-bit precision: the statements of NAME_gpu_init that allocate
 * the 16-bit copies and round the fp32 constants, before g->init's. */
void mm16_init(Gpu *g, Str *s);
void mm_pfend(Gpu *g);

/* nn.c: convolution, pooling, batched products and attention: whether op
 * is one of them on the device, and its kernels or library calls (as
 * emit_elem; for i the last op of a convolution's chain, the chain's one
 * kernel).  nnplan, called by gplan before the homes are decided, folds
 * what a convolution's epilogue computes (g->fold). */
int isnn(const Fn *fn, const Op *op);
int gpu_emit_nn(Gpu *g, int i);
int nnplan(Gpu *g);
/* The op that names the kernel run at op i (a convolution's chain ends at
 * its relu, say, but is the convolution's kernel). */
int nnhead(const Gpu *g, int i);

/* tune.c: reads the mapping map (-t), the candidates it declares and the
 * tuning database it names (`tune cuda.db FILE`) into g->db, for GPU
 * generation arch (NULL: the mapping's); appends the files read to dep.
 * 0, or -1 with g->err set. */
int tune_read(Gpu *g, const char *map, const char *arch, Str *dep);
/* The tunables (formats/tune.md). */
enum { TUNE_CONV, TUNE_MM, TUNE_ATTN };
/* The kernels of our own a product may take besides cuBLASLt's algorithms:
 * the generated GEMV (algo=gemv), the kernel library's tensor-core product
 * (algo=tc, runtime/cuda/gemm.cu), 3xTF32 through cuBLASLt (algo=x3,
 * runtime/cuda/blas.c). */
enum { TUNE_GEMV = 1, TUNE_TC = 2, TUNE_X3 = 4 };
/* The choice for op's tunable kind whose key, after the op and the arch,
 * is key ("1x128x7x7 128x3x3 s1x1 p1x1 d1x1 g1 f32 fp32 relu"): the value of
 * the database's last entry for it (its line in *line), else heur (*line
 * 0).  kernels: TUNE_GEMV, TUNE_TC and TUNE_X3 where a product may take
 * them (a database's algo=gemv, algo=tc or algo=x3 counts only there).
 * Records the site for --tunables. */
const char *tune_get(const Gpu *g, int kind, int op, const char *key, const char *heur,
                     int kernels, int *line);
/* The sites met, one a line: "OP\tKEY\tCHOICE\tHEURISTIC\tCANDIDATES". */
const char *tune_sites(const Gpu *g);

/* emit.c: the whole .cu file into *out. */
int gpu_emit_file(Gpu *g, const char *src, const char *dst, Str *out);

#endif
