/* dprt_cuda.h: the CUDA side of the DevProc runtime (lib/libdprt_cuda.a):
 * one device, device memory from the static plan, page-locked staging for
 * transfers, one stream, and each cuda partition's schedule captured into a
 * CUDA graph; called by the code that dp-lower_gpu generates. */
#ifndef DPRT_CUDA_H
#define DPRT_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a program's CUDA side needs, as dp-lower_gpu planned it. */
typedef struct dprt_cuda_plan {
	size_t arena;      /* device bytes of the buffer plan */
	size_t weights;    /* device bytes of the constants used on cuda */
	size_t pinned;     /* page-locked host bytes of the transfer staging */
	int nparts;        /* cuda partitions: one CUDA graph each */
	int blas;          /* nonzero when the program calls cuBLAS (it opens it) */
	int nevents;       /* events of the device->host copies in pieces
	                      (dprt_cuda_record, dprt_cuda_wait) */
} dprt_cuda_plan;

typedef struct dprt_cuda dprt_cuda;

/* The convolution kernels a program runs, from the environment variable
 * DPRT_CUDA_CONV at dprt_cuda_open: "fp32" (the default) tensor cores in
 * 3xTF32, as accurate as fp32; "tf32" tensor cores in TF32 (10-bit
 * mantissas, PyTorch's default for convolutions, about 2-3x faster);
 * "direct" a plain fp32 loop per output (a slow reference). */
enum { DPRT_CONV_FP32, DPRT_CONV_TF32, DPRT_CONV_DIRECT };

/* A partition's schedule: enqueues all its work on g->stream (transfers,
 * kernels, library calls) without waiting.  0, or -1 with a message. */
typedef int dprt_cuda_rec(dprt_cuda *g, char *err, size_t errn);

struct dprt_cuda {
	cudaStream_t stream;     /* the one stream everything runs on */
	unsigned char *arena;    /* device: the buffer plan */
	unsigned char *weights;  /* device: the constants */
	unsigned char *pinned;   /* host, page-locked: transfer staging */
	struct cublasContext *blas; /* cuBLAS handle, or NULL */
	void *blasws;            /* device: cuBLAS workspace, or NULL */
	void (*blasclose)(dprt_cuda *g);
	struct cublasLtContext *lt; /* cuBLASLt handle (opened with cuBLAS), or NULL */
	struct dprt_ltplan *ltplan; /* cuBLASLt products seen: descriptors and algorithms */
	int nltplan, capltplan;
	int tf32;                /* products in TF32 (tune cuda.precision tf32) */
	int ltalgo;              /* the next cuBLASLt product takes its heuristic's
	                            algorithm this (a tuning database's algo=N), 0
	                            the first; reset by the call */
	int nparts;
	int graphs;              /* 0 when DPRT_CUDA_GRAPHS=0: always eager */
	int conv;                /* DPRT_CONV_*: DPRT_CUDA_CONV's convolution kernels */
	int convtile;            /* DPRT_CUDA_CONV_TILE: 64 or 128, 0 (unset): conv.cu picks */
	int convvec;             /* 0 with DPRT_CUDA_CONV_VEC=0: no 16-byte loads of x̂ */
	int convpdl;             /* which convolution kernels take programmatic dependent
	                            launch where g->pdl asks for it, DPRT_CUDA_CONV_PDL:
	                            4 (the default, sum) a split's sum, its GEMM letting
	                            it start at once; for timing, 0 none, 1 (dw) the
	                            depthwise kernel, 2 (nosplit) it and the implicit
	                            GEMM where K is not split, 3 (all) every one and the
	                            split's sum */
	int cluster;             /* 0 (the default, DPRT_CUDA_SPLITK=sum): a convolution's
	                            split K is summed by a second kernel; 1
	                            (DPRT_CUDA_SPLITK=cluster): within a cluster of blocks
	                            (sm_90+; init turns it off where it cannot run) */
	struct dprt_fault *fault; /* device: the first out-of-range index of a run, or
	                            NULL (dprt_cuda_faults) */
	volatile int *seen;      /* host, mapped: set by the device on a fault */
	int marks;               /* events being recorded (a traced run) */
	int nmark, capmark;      /* marks recorded, events made */
	cudaEvent_t *ev;         /* per mark: its event (ev[0]: the start) */
	cudaEvent_t *xev;        /* the plan's events (dprt_cuda_record), no timing */
	int nxev;
	int *markop;             /* per mark: the op */
	const char **markname;   /* per mark: its name */
	long *runs;              /* per partition: runs so far */
	cudaGraphExec_t *exec;   /* per partition: its captured schedule */
	int prec16;              /* DPRT_BF16 or DPRT_F16 (tune cuda.precision), or 0 */
	unsigned char *w16;      /* device: 16-bit copies of weights (dprt_cuda_half) */
	unsigned char *s16;      /* device: 16-bit copies of products' operands */
	unsigned char *w3;       /* device: the constants split for 3xTF32
	                            (dprt_cuda_x3init), or NULL */
	unsigned char *s3;       /* device: a product's operand split for 3xTF32
	                            (dprt_cublaslt_x3), or NULL */
	int mmlt;                /* 1 with DPRT_CUDA_MM=lt: the products dp-lower_gpu gave
	                            the kernel library's tensor-core product or 3xTF32
	                            through cuBLASLt go to cuBLAS in fp32 instead (to
	                            compare) */
	int x3off;               /* 1: 3xTF32's products on cuBLAS in fp32 (DPRT_CUDA_MM=lt,
	                            or its memory was not there: dprt_cuda_x3init) */
	unsigned *attnct;        /* device: the decode attention's counters per row
	                            (runtime/cuda/attndec.cuh), zero between calls;
	                            made by its first call, or NULL */
	int pdl;                 /* 1 (tune cuda.pdl 1 on a device that has it, set by the
	                            program's init): the decode attention is launched with
	                            programmatic dependent launch too, as the generated
	                            kernels are */
};

/* Opens the first visible CUDA device and makes the state of one program
 * instance: the device arena, the device weights, the pinned staging and
 * the stream (the caller adds cuBLAS: dprt_cublas_open).  Where there is no usable
 * device the error names it: "cuda: cudaGetDeviceCount: <why>: no CUDA
 * device ...".  0, or -1 with a message (and nothing left allocated). */
int dprt_cuda_open(dprt_cuda **g, const dprt_cuda_plan *p, char *err, size_t errn);

/* Frees everything dprt_cuda_open made (g may be NULL). */
void dprt_cuda_close(dprt_cuda *g);

/* 0 when e is cudaSuccess, else -1 with "cuda: CALL: <error string>". */
int dprt_cuda_ok(cudaError_t e, const char *call, char *err, size_t errn);

/* Checks the launch just made (cudaGetLastError): 0, or -1 with
 * "cuda: launch of KERNEL: <error string>". */
int dprt_cuda_launched(const char *kernel, char *err, size_t errn);

/* Copies n bytes of constants from host src to g->weights + off (at init,
 * synchronously). */
int dprt_cuda_upload(dprt_cuda *g, size_t off, const void *src, size_t n,
                     char *err, size_t errn);

/* Runs cuda partition part (0-based among the cuda partitions): the first
 * run calls rec directly; the second captures rec into a CUDA graph and
 * launches it; later runs launch the graph.  With sync set it then waits
 * for the stream, so that staged device->host copies are on the host, and
 * reports a fault a kernel recorded. */
int dprt_cuda_run(dprt_cuda *g, int part, dprt_cuda_rec *rec, int sync,
                  char *err, size_t errn);

/* Large device->host copies of program outputs go in pieces, each followed
 * by an event of the plan, so that the host copies a piece into the
 * caller's buffer while the next one comes over (dp-lower_gpu; the
 * program's own rules are in stages/common/xfer.h).  The partition records
 * a head event before its first piece; dprt_cuda_run_until runs it as
 * dprt_cuda_run does with sync set but waits only for that event, and the
 * host waits for each piece's with dprt_cuda_wait before copying it. */

/* Records event ev of the plan on g's stream: in a stream capture, an
 * external event-record node of the graph (cudaEventRecordExternal), so
 * that each replay records it; in an eager or traced run, at once.  0, or
 * -1 with a message. */
int dprt_cuda_record(dprt_cuda *g, int ev, char *err, size_t errn);

/* Waits until event ev of the plan is reached: 0, or -1 with "cuda:
 * cudaEventSynchronize: <error string>". */
int dprt_cuda_wait(dprt_cuda *g, int ev, char *err, size_t errn);

/* dprt_cuda_run with the wait for the stream replaced by one for event ev
 * (the partition's head): then reports a fault a kernel recorded. */
int dprt_cuda_run_until(dprt_cuda *g, int part, dprt_cuda_rec *rec, int ev,
                        char *err, size_t errn);

/* Tracing (runtime/trace.c): while the executable traces a run
 * (dprt_tracing), dprt_cuda_run runs each partition eagerly and records a
 * CUDA event after each op's kernels (DPRT_CUDA_MARK in the generated
 * schedule), then adds each op's kernel time to the trace on the "cuda
 * stream" track (dprt_trace_add, dev 1). */
extern int dprt_tracing;
double dprt_now(void);
void dprt_trace_add(int op, const char *name, int dev, double ts, double dur);
void dprt_cuda_mark(dprt_cuda *g, int op, const char *name);
#define DPRT_CUDA_MARK(g, op, name) \
	do { if ((g)->marks) dprt_cuda_mark((g), (op), (name)); } while (0)

/* Device-side errors: a kernel that meets an index out of range (an
 * embedding or index gather) records the first such (the smallest op, then
 * the smallest position in the index tensor, as the cpu meets them) in a
 * dprt_fault in device memory and sets a flag in mapped host memory;
 * dprt_cuda_run, when it waits for the stream (dprt_cuda_run_until, for its
 * event), reports it as the cpu does:
 * "op N (aten.embedding): index I is out of range for a dimension of
 * size S".  runtime/cuda/fault.cuh holds the device side. */
typedef struct dprt_fault {
	unsigned lock;     /* spin lock of the record */
	int op;            /* -1: none */
	int kind;          /* 0 aten.embedding, 1 aten.index */
	long long pos, index, size;
	int *seen;         /* device address of dprt_cuda.seen */
} dprt_fault;

/* At init, for a program with gathers on the device: allocates the fault
 * record and returns its device address (for the program's dp_fault). */
int dprt_cuda_faults(dprt_cuda *g, dprt_fault **dev, char *err, size_t errn);

/* The kernel library (the .cu files of runtime/cuda/, compiled once by make): the fixed
 * kernels that dp-lower_gpu's programs launch with their shapes, rather
 * than carrying them in each program's .cu. */

/* A 2-D convolution (NCHW, f32) with what dp-lower_gpu folded into its
 * epilogue, run by dprt_cuda_conv (runtime/cuda/conv.cu explains the
 * method): y = clamp?(ca·(conv(x, w) + b) + cr·res), b and res optional,
 * the clamp to [lo, hi] a relu's [0, inf] or a ReLU6's [0, 6]. */
typedef struct dprt_conv {
	int id;            /* the op, for messages ("conv ID") */
	int N, C, H, W, G; /* input, groups */
	int O, OH, OW, KH, KW;
	int SH, SW, PH, PW, DH, DW;
	int lda, packed;   /* weight rows of lda floats; packed at init
	                      (dprt_cuda_convpack: lda = K rounded up to 16) */
	int direct;        /* always the direct loop (depthwise) */
	int split, kchunk; /* K split among split blocks of kchunk each */
	int relu;          /* the clamp to [lo, hi] below */
	float ca, cr;
	float lo, hi;      /* relu: the bounds, as dpscalar.h's clamp (NaN
	                      stays; lo > hi gives hi) */
} dprt_conv;

/* Enqueues convolution c on g's stream by g->conv's method: the output
 * to y; ws is the split-K workspace (4·split·O·N·OH·OW bytes) where
 * c->split > 1.  0, or -1 with "cuda: launch of conv ID: <error>". */
int dprt_cuda_conv(dprt_cuda *g, const dprt_conv *c, const float *x, const float *w,
                   const float *b, const float *res, float *y, float *ws,
                   char *err, size_t errn);
/* At init: whether c's split K can be summed in a thread-block cluster on
 * this device (DPRT_CUDA_SPLITK=cluster). */
int dprt_cuda_convcl_ok(const dprt_conv *c);
/* At init, synchronously: c's weights w [O][K] into rows of c->lda floats
 * at wout (zeros past K), with the batch norm (gamma, beta, mean, var, eps;
 * gamma NULL: none) folded into them and into the bias bout (from the
 * convolution's bias cb, or none). */
int dprt_cuda_convpack(dprt_cuda *g, const dprt_conv *c, float *wout, float *bout,
                       const float *w, const float *cb, const float *gamma,
                       const float *beta, const float *mean, const float *var, float eps,
                       char *err, size_t errn);

enum { DPRT_SDPA_MAXB = 6 };   /* batch axes of attention */

/* Attention (runtime/cuda/attn.cu): y = softmax(q·kᵀ·scale + mask)·v over
 * B batch entries (q [L][E], k [S][E], v [S][EV], y [L][EV] each, dense or
 * strided), in fp32 (or TF32 after dprt_cuda_precision).  mask: 0 none, 1 bool (false drops the key), 2 added; its offset is
 * i·msl + j·mss plus, for batch entry b split over the batch axes bdim
 * (innermost last), the sum of each index times bstr. */
typedef struct dprt_sdpa {
	int id;            /* the op, for messages */
	int B, L, S, E, EV;
	int causal, mask;
	long long msl, mss;
	int nb;            /* batch axes */
	long long bdim[DPRT_SDPA_MAXB], bstr[DPRT_SDPA_MAXB];
	float scale;
	int split;         /* chunks of keys: 0 as many as fill the GPU, else at
	                      most this many (a tuning database's split=N) */
	/* q, k and v read through strides (windows of larger tensors, the
	 * pointers at their first element; the head's axis dense): each one's
	 * element strides over the batch axes, then between rows; a row
	 * stride of 0: dense [B][rows][E] */
	long long qbs[DPRT_SDPA_MAXB], kbs[DPRT_SDPA_MAXB], vbs[DPRT_SDPA_MAXB];
	long long qrs, krs, vrs;
	/* y written through strides likewise (a window of the tensor that its
	 * transpose and reshape make, written in place); a row stride of 0:
	 * dense */
	long long ybs[DPRT_SDPA_MAXB], yrs;
} dprt_sdpa;

int dprt_cuda_sdpa(dprt_cuda *g, const dprt_sdpa *a, const float *q, const float *k,
                   const float *v, const void *mask, float *y, char *err, size_t errn);
/* The same where y's bytes are the dense A (M x K, M·K the result's
 * elements) of the 3xTF32 product that follows (dprt_cublaslt_x3s): A's
 * split is left in g->s3, written by the attention kernel itself where it
 * can; where g->x3off, y alone. */
int dprt_cuda_sdpa3(dprt_cuda *g, const dprt_sdpa *a, const float *q, const float *k,
                    const float *v, const void *mask, float *y, int64_t K, char *err,
                    size_t errn);

/* cuBLAS (runtime/cuda/blas.c). */

/* Bytes of g->blasws: what cuBLAS asks for on Hopper; attention's chunks of
 * keys use it between products too (attn.cu). */
#define DPRT_BLAS_WORKSPACE (32 << 20)

/* Creates g's cuBLAS handle on g's stream, with a workspace of its own (so
 * that graph capture allocates nothing) and plain fp32 math (no TF32). */
int dprt_cublas_open(dprt_cuda *g, char *err, size_t errn);

/* At init, where the target mapping says `tune cuda.precision tf32`: the
 * convolutions in TF32 unless DPRT_CUDA_CONV says otherwise, and cuBLAS's
 * products in TF32 (CUBLAS_TF32_TENSOR_OP_MATH; PyTorch's allow_tf32). */
int dprt_cuda_precision(dprt_cuda *g, int conv, char *err, size_t errn);

/* C = alpha·A·B on g's stream: A is M×K with element strides (rsa, csa), B
 * is K×N with (rsb, csb), each with a unit stride on one axis; C is dense
 * M×N with row stride ldc.  0, or -1 with "cuda: cublasSgemm: <status>". */
int dprt_cublas_sgemm(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha,
                      const float *A, int64_t rsa, int64_t csa,
                      const float *B, int64_t rsb, int64_t csb,
                      float *C, int64_t ldc, char *err, size_t errn);

/* C = alpha·A·B + bias on g's stream through cuBLASLt, the bias (N floats,
 * one per column of C) added in the product's epilogue: A, B and C as for
 * dprt_cublas_sgemm.  fp32 (CUBLAS_COMPUTE_32F), or TF32 after
 * dprt_cuda_precision chose it.  The descriptors and the heuristic's
 * algorithm are made on a product's first call and kept in g.  0, or -1
 * with "cuda: cublasLtMatmul...: <status>". */
int dprt_cublaslt_bias(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha,
                       const float *A, int64_t rsa, int64_t csa,
                       const float *B, int64_t rsb, int64_t csb, const float *bias,
                       float *C, int64_t ldc, char *err, size_t errn);

/* The same product on the tensor cores (runtime/cuda/gemm.cu): 3xTF32 (as
 * accurate as fp32), or TF32 after dprt_cuda_precision chose it; launched
 * with programmatic dependent launch where g->pdl.  A by rows (csa 1,
 * rsa >= K), B by rows (csb 1) or by columns (rsb 1), C rows of ldc; M, N
 * and K below 2^31, M below 65535·64 (dp-lower_gpu asks for no other).
 * Where the environment has DPRT_CUDA_MM=lt, dprt_cublaslt_bias instead (to
 * compare).  0, or -1 with a message. */
int dprt_cuda_gemm(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha,
                   const float *A, int64_t rsa, int64_t csa,
                   const float *B, int64_t rsb, int64_t csb, const float *bias,
                   float *C, int64_t ldc, char *err, size_t errn);

/* fp32 products on the tensor cores through cuBLASLt (blas.c), 3xTF32: each
 * operand x as hi = tf32(x) plus lo = tf32(x - hi), and A·B as
 * hi(A)·hi(B) + hi(A)·lo(B) + lo(A)·hi(B), one TF32 product of K' = 3K,
 * [hi(A) | hi(A) | lo(A)] · [hi(B) ; lo(B) ; hi(B)]: about as accurate as
 * fp32 (the parts of each operand exact in tf32), at TF32's speed over
 * three times the work.  B is a constant, split once at init into g->w3; A
 * is split at each call into g->s3.  At init: allocates wbytes of g->w3 and
 * sbytes of g->s3; where the device has not the memory for them, the
 * products go to cuBLAS in fp32 instead, as with DPRT_CUDA_MM=lt (g->x3off
 * set): a program that fits without 3xTF32 still runs.  0, or -1 with a
 * message. */
int dprt_cuda_x3init(dprt_cuda *g, size_t wbytes, size_t sbytes, char *err, size_t errn);
/* At init: the split of constant B (K×N, strides rsb, csb: row-major, csb 1
 * and rsb N, or a linear layer's weight, rsb 1 and csb K) into g->w3 + off,
 * 3·K·N floats, as dprt_cublaslt_x3 reads it (nothing where g->x3off). */
int dprt_cuda_x3weight(dprt_cuda *g, size_t off, const float *B, int64_t K, int64_t N,
                       int64_t rsb, int64_t csb, char *err, size_t errn);
/* C = alpha·A·B (+ bias, NULL for none): A by rows (M×K, row stride rsa),
 * B and its split at g->w3 + off3 as dprt_cuda_x3weight took them, C rows
 * of ldc.  Where g->x3off, cuBLAS in fp32 on A and B instead.  0, or -1
 * with a message. */
int dprt_cublaslt_x3(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha,
                     const float *A, int64_t rsa, const float *B, int64_t rsb, int64_t csb,
                     size_t off3, const float *bias, float *C, int64_t ldc, char *err,
                     size_t errn);
/* The same where the kernel before wrote A's split into g->s3 itself
 * ([hi | hi | lo] rows of 3K, runtime/cuda/tf32.cuh's dp_x3put; it writes A
 * instead where g->x3off, as the launch tells it by passing no g->s3): no
 * split kernel. */
int dprt_cublaslt_x3s(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha,
                      const float *A, int64_t rsa, const float *B, int64_t rsb, int64_t csb,
                      size_t off3, const float *bias, float *C, int64_t ldc, char *err,
                      size_t errn);
/* Enqueues the 3xTF32 split of x (R rows of C floats, row stride ldx): part
 * j (0..2) of x[r][c] at y[r·ldy + j·ps + c], lo(x) where bit j of lomask
 * is set, else hi(x) (gemm.cu).  lomask is 2 ([hi | lo | hi], a weight's)
 * or 4 ([hi | hi | lo], an activation's); another gives -1 with a message. */
int dprt_cuda_split3(dprt_cuda *g, float *y, const float *x, int64_t R, int64_t C, int64_t ldx,
                     int64_t ldy, int64_t ps, int lomask, char *err, size_t errn);

/* 16-bit precision (runtime/cuda/half.cu; `tune cuda.precision bf16|f16`). */
enum { DPRT_BF16 = 1, DPRT_F16 = 2 };

/* At init: sets g->prec16 and allocates wbytes of 16-bit weight copies
 * (g->w16) and sbytes of operand scratch (g->s16).  0, or -1 with a
 * message (dprt_cuda_close frees them). */
int dprt_cuda_half(dprt_cuda *g, int prec16, size_t wbytes, size_t sbytes, char *err,
                   size_t errn);
/* Enqueues y[i] = x[i] in g->prec16's 16-bit format (rounded to nearest,
 * ties to even), i < n: y holds n 16-bit numbers. */
int dprt_cuda_to16(dprt_cuda *g, void *y, const float *x, int64_t n, char *err, size_t errn);
/* Enqueues y[i] = x[i] rounded to the nearest 16-bit number, kept in fp32
 * (y may be x). */
int dprt_cuda_round16(dprt_cuda *g, float *y, const float *x, int64_t n, char *err,
                      size_t errn);
/* C = alpha·A·B (+ bias) through cuBLASLt on the tensor cores: A and B in
 * g->prec16's 16-bit format with the strides of dprt_cublas_sgemm, fp32
 * accumulation, C fp32 (M×N, row stride ldc); bias NULL or N floats added
 * in the epilogue.  0, or -1 with "cuda: cublasLtMatmul...: <status>". */
int dprt_cublaslt_16(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha,
                     const void *A, int64_t rsa, int64_t csa,
                     const void *B, int64_t rsb, int64_t csb, const float *bias,
                     float *C, int64_t ldc, char *err, size_t errn);

#ifdef __cplusplus
}
#endif

#endif
