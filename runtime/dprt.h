/* dprt.h: the DevProc runtime: program descriptors, CPU kernels, .npy I/O,
 * timing and the generic command-line driver of generated executables. */
#ifndef DPRT_H
#define DPRT_H

#include <stddef.h>
#include <stdint.h>

/* dtype codes: the same numbering as the IR's (formats/dpir.h). */
enum {
	DPRT_U8, DPRT_I8, DPRT_I16, DPRT_I32, DPRT_I64, DPRT_F16, DPRT_F32,
	DPRT_F64, DPRT_BOOL, DPRT_BF16, DPRT_NDTYPE
};
extern const char *const dprt_dtype_name[DPRT_NDTYPE]; /* "u8", "f32", ... */
extern const int dprt_dtype_size[DPRT_NDTYPE];

#define DPRT_MAXRANK 8
#define DPRT_DYN (-1)      /* a size known only at run time (an image input) */

/* A named graph input or output of a program.  An input with DPRT_DYN
 * sizes (u8[?,?,C]) is an image of any size: its in[] entry points at a
 * dprt_image, not at the pixels. */
typedef struct dprt_io {
	const char *name;
	int dtype;
	int rank;
	int64_t dim[DPRT_MAXRANK];
} dprt_io;

/* An image of any size: h × w × c u8 pixels, dense HWC (RGB for c = 3). */
typedef struct dprt_image {
	const uint8_t *data;
	int64_t h, w, c;
} dprt_image;

/*
 * A compiled program, emitted by lower_cpu.  run() executes the whole
 * schedule once: in[i] points at input i (laid out as the io says, C order),
 * out[i] at room for output i; arena is arena_bytes of scratch (64-byte
 * aligned) holding the static buffer plan.  Returns 0, or -1 with a message
 * in err[0..errn-1].  The CUDA side, when present, lives in state made by
 * init() and freed by fini() (both NULL for CPU-only programs).
 */
/* An entry point of a program with several (formats/dp.md, "Entries"):
 * run takes the program's in[] and out[] arrays (as dprt_prog's run), of
 * which it reads the inputs in[0..nin-1] and writes the outputs
 * out[0..nout-1] (indices into the program's); the others may be NULL. */
typedef struct dprt_entry {
	const char *name;
	int (*run)(void *state, const unsigned char *weights, void *arena,
	           const void *const *in, void *const *out, char *err, size_t errn);
	int nin;
	const int *in;
	int nout;
	const int *out;
} dprt_entry;

typedef struct dprt_prog {
	const char *name;
	int nin, nout;
	const dprt_io *in, *out;
	size_t arena_bytes;
	int (*init)(void **state, const unsigned char *weights, char *err, size_t errn);
	void (*fini)(void *state);
	int (*run)(void *state, const unsigned char *weights, void *arena,
	           const void *const *in, void *const *out, char *err, size_t errn);
	const struct dprt_blob *blob;	/* the weight blob, or NULL (no constants) */
	const unsigned char *textout;	/* per output, 1 for UTF-8 text (NUL-padded,
					   from detokenize); NULL: none */
	/* Fills the arena's prepared-weight region (packed, batch norm folded
	 * in) from the weights once, before the first run; NULL when there is
	 * none.  That region is never reused by the buffer plan, so the arena is
	 * kept from run to run. */
	void (*prep)(void *arena, const unsigned char *weights);
	/* Sets the state the program keeps from run to run (buffers the model
	 * mutates, in the arena) to its initial value; NULL when it has none. */
	void (*reset)(void *arena, const unsigned char *weights);
	/* The generation loop the pipeline declares ("IN=OUT,key=value...", the
	 * spec of --generate), or NULL. */
	const char *generate;
	/* Entry points sharing the weights and the state (0 and NULL for a
	 * program of one; run is then entry[0]'s). */
	int nentry;
	const dprt_entry *entry;
	/* Per output, 1 + the index of the output receiving its row count when
	 * its leading size is known only at run time (dim[0] is then its bound,
	 * the room its buffer has; formats/ops.md, "Bounded sizes"), else 0;
	 * NULL: none. */
	const int *outlen;
	/* Where input k may be written, after init, so that run reads it
	 * without copying it (the page-locked buffer a cuda program sends it
	 * to the device from), or NULL; NULL: no such input. */
	void *(*inbuf)(void *state, int k);
} dprt_prog;

/* ---- Weights (weights.c, safetensors.c) ---- */

/* One constant of a program: its place in the weight blob and, for the
 * parameters and persistent buffers of a model, its state-dict name (the
 * name a .safetensors checkpoint gives it). */
typedef struct dprt_tensor {
	const char *name;	/* NULL for other constants (lifted tensors, scalars) */
	int64_t off, nbytes;	/* byte offset in the blob, size */
	int dtype, rank;
	int64_t dim[DPRT_MAXRANK];
} dprt_tensor;

/* A program's weight blob as dp-link linked it: its header (to check a
 * file against), the blob itself when embedded, and its constants. */
typedef struct dprt_blob {
	const char *file;		/* the name it was built as ("weights.bin") */
	uint64_t size;			/* bytes */
	const unsigned char *head;	/* its 64-byte header (formats/weights.md) */
	const unsigned char *data;	/* the embedded blob, or NULL when linked apart */
	int ntensor;
	const dprt_tensor *tensor;	/* every constant, in blob order */
} dprt_blob;

/* The weights of one program instance, once loaded. */
typedef struct dprt_weights dprt_weights;

/*
 * Loads the weights of a program whose blob is b (NULL: it has none) from
 * files[0..nfiles-1]: none, the embedded blob; a weight blob (DPWB), mapped
 * read-only where it lies, pages read as they are touched, after checking
 * its header (size, content hash) against b's; .safetensors files, whose
 * tensors are copied in by name (the other constants then come from the
 * blob file given too, or the embedded one).  *w is NULL for programs
 * without constants.  0, or -1 with a message naming the file and tensor.
 */
int dprt_weights_load(const dprt_blob *b, const char *const *files, int nfiles,
                      dprt_weights **w, char *err, size_t errn);
/* The base address of the loaded blob (NULL for w == NULL). */
const unsigned char *dprt_weights_base(const dprt_weights *w);
void dprt_weights_free(dprt_weights *w);

/* The generic executable: NAME --in x=file.npy --out y=file.npy [--bench N]
 * [--weights FILE ...] [--help].  Returns the process exit status. */
int dprt_main(const dprt_prog *p, int argc, char **argv);

/* Decodes an image file into malloc'd RGB pixels (img->c = 3; the caller
 * frees img->data).  0, or -1 with a message in err. */
typedef int dprt_decode_fn(const char *path, dprt_image *img, char *err, size_t errn);
/* dprt_main for programs with image inputs: such an input reads a PNG or
 * JPEG file through decode, or a u8 [H,W,C] .npy file. */
int dprt_main_image(const dprt_prog *p, dprt_decode_fn *decode, int argc, char **argv);
/* decode.c: PNG (libpng) and JPEG (libjpeg, islow IDCT) files to RGB as
 * PIL's Image.open(f).convert("RGB") decodes them: palette and gray expand,
 * alpha is dropped, 16-bit samples keep their high byte, no gamma
 * correction; CMYK JPEGs are refused.  Programs calling it link -lpng
 * -ljpeg. */
int dprt_image_read(const char *path, dprt_image *img, char *err, size_t errn);

/* Byte size of an io (element count × dtype size); 0 on overflow. */
size_t dprt_io_bytes(const dprt_io *io);

/* .npy files (format 1.0/2.0/3.0, C order, little-endian).  read checks the
 * dtype and shape against the expected ones and fills dst.  0, or -1 with a
 * message in err. */
int dprt_npy_read(const char *path, int dtype, int rank, const int64_t *dim,
                  void *dst, char *err, size_t errn);
int dprt_npy_write(const char *path, int dtype, int rank, const int64_t *dim,
                   const void *src, char *err, size_t errn);

/* Reads any .npy file this runtime supports, whatever its dtype and shape:
 * sets *dtype, *rank, dim[0..*rank-1] (dim has room for DPRT_MAXRANK) and
 * *data (malloc'd, at least 1 byte; the caller frees it).  0, or -1 with a
 * message in err. */
int dprt_npy_load(const char *path, int *dtype, int *rank, int64_t *dim,
                  void **data, char *err, size_t errn);
/* The same for an .npy file's bytes in memory (an .npz member, say); name
 * is what error messages call it. */
int dprt_npy_load_mem(const void *buf, size_t len, const char *name, int *dtype,
                      int *rank, int64_t *dim, void **data, char *err, size_t errn);

/* Writes "[1,32,32,3]" (or "[]" for rank 0) into buf; returns buf. */
char *dprt_shape_str(char *buf, size_t n, int rank, const int64_t *dim);

/* Monotonic clock in seconds. */
double dprt_now(void);

/* Tracing (runtime/trace.c; the executables' --trace and --profile): while
 * dprt_tracing is set, the host code marks the end of each cpu op (its
 * span runs from the mark before) and the CUDA runtime adds each cuda op's
 * kernel time (dev 1; ts, dur in seconds of dprt_now's clock). */
extern int dprt_tracing;
void dprt_trace_op(int op, const char *name);
void dprt_trace_add(int op, const char *name, int dev, double ts, double dur);
#define DPRT_TRACE_OP(op, name) \
	do { if (dprt_tracing) dprt_trace_op((op), (name)); } while (0)

/* ---- CPU kernels.  Sizes are element counts; all tensors are dense C order
 * unless strides are passed.  None allocates or fails. ---- */

/* dst[i] = (dst dtype) src[i], for any pair of dtypes (C conversion rules;
 * float → integer truncates toward zero). */
void dprt_cast(void *dst, int dtype_dst, const void *src, int dtype_src, int64_t n);

/* One f16 or bf16 value (as its bit pattern) to f32 and back; the narrowing
 * direction rounds to nearest even, overflows to infinity and keeps NaN. */
float dprt_f16_to_f32(uint16_t h);
uint16_t dprt_f32_to_f16(float f);
float dprt_bf16_to_f32(uint16_t h);
uint16_t dprt_f32_to_bf16(float f);

/* y[o,c,i] = (x[o,c,i] * scale - mean[c]) / std[c], x viewed as
 * [outer, C, inner]; x is u8 or f32, y is f32. */
void dprt_normalize(float *y, const void *x, int dtype_x, int64_t outer, int64_t C,
                    int64_t inner, float scale, const float *mean, const float *std);

/* Permutes a dense tensor: y's axis i is x's axis perm[i]; dim is x's shape. */
void dprt_permute(void *y, const void *x, int elemsize, int rank,
                  const int64_t *dim, const int64_t *perm);

/* Index of the first maximum along the middle axis of x viewed as
 * [outer, n, inner]; y is [outer, inner].  NaN counts as the maximum. */
void dprt_argmax_f32(int64_t *y, const float *x, int64_t outer, int64_t n, int64_t inner);

/* Softmax along the middle axis of x viewed as [outer, n, inner]. */
void dprt_softmax_f32(float *y, const float *x, int64_t outer, int64_t n, int64_t inner);

/* The k largest along the middle axis of x viewed as [outer, n, inner], in
 * descending order (NaN above every number, ties by lower index): values
 * into y and their indices into idx, both [outer, k, inner]. */
void dprt_topk_f32(float *y, int64_t *idx, const float *x, int64_t outer, int64_t n,
                   int64_t inner, int64_t k);

/* ---- Images (image.c) ---- */

/*
 * Resizes the image x (c channels) as PIL's Image.resize with BILINEAR
 * (a triangle filter widened by the downscale factor, 22-bit fixed-point
 * weights, rounding to u8 after the horizontal pass and after the vertical
 * one), then crops the centre ch × cw window (torchvision's CenterCrop
 * offsets) into y [ch, cw, c].  size[0..nsize-1] as resize's (see
 * dp_resize_size).  Only the window's pixels are computed.  Allocates its
 * scratch; 0, or -1 with a message (what names the image) in err on a bad
 * size, a window larger than the resized image or no memory.
 */
int dprt_resize_u8(uint8_t *y, const dprt_image *x, const int64_t *size, int nsize,
                   int64_t ch, int64_t cw, const char *what, char *err, size_t errn);
/* The size resize(size=...) gives an h × w image (formats' dp_resize_size). */
void dprt_resize_size(int64_t h, int64_t w, const int64_t *size, int nsize, int64_t *oh,
                      int64_t *ow);
/* The offset of a centred window of n in m (m ≥ n): torchvision's
 * int(round((m - n) / 2)), halves to even. */
int64_t dprt_center(int64_t m, int64_t n);

/* Elementwise binary op with broadcasting: y[idx] = a[idx·sa] op b[idx·sb]
 * over the output shape dim[0..rank-1]; sa/sb are element strides (0 on
 * broadcast axes).  For DPRT_ADD: y = a + alpha·b. */
enum { DPRT_ADD, DPRT_SUB, DPRT_MUL, DPRT_DIV };
void dprt_binary_f32(int op, float *y, const float *a, const int64_t *sa,
                     const float *b, const int64_t *sb, int rank,
                     const int64_t *dim, float alpha);

void dprt_relu_f32(float *y, const float *x, int64_t n);

/*
 * C = alpha·A·B + beta·C0, blocked and vectorizable.  A is M×K with element
 * strides (rsa, csa), B is K×N with (rsb, csb), so transposes are free.  C0
 * (may be NULL, then beta is ignored) has strides (rs0, cs0): rs0 = 0 makes
 * it a broadcast row such as a bias.  C is dense M×N with row stride ldc.
 * C may not alias A, B or C0.
 */
void dprt_sgemm(int64_t M, int64_t N, int64_t K, float alpha,
                const float *A, int64_t rsa, int64_t csa,
                const float *B, int64_t rsb, int64_t csb,
                float beta, const float *C0, int64_t rs0, int64_t cs0,
                float *C, int64_t ldc);

/* ---- Neural-network kernels (elem.c: elementwise, data movement, fills;
 * nn.c: reductions, norms, pooling, convolution, attention).  Tensors are
 * dense C order unless element strides are passed; shapes are element
 * counts.  Only dprt_gather can fail (on an index out of range). ---- */

/* Unary ops on n dense elements (y may be x).  DPRT_CLAMP clamps to
 * [lo, hi] (±infinity for no bound; NaN stays NaN); the others ignore lo, hi.
 * GELU is the erf form, GELU_TANH the tanh approximation. */
enum {
	DPRT_RSQRT, DPRT_SQRT, DPRT_EXP, DPRT_LOG, DPRT_COS, DPRT_SIN, DPRT_NEG,
	DPRT_ABS, DPRT_RECIP, DPRT_SIGMOID, DPRT_TANH, DPRT_SILU, DPRT_GELU,
	DPRT_GELU_TANH, DPRT_HARDSWISH, DPRT_HARDSIGMOID, DPRT_CLAMP, DPRT_RELU
};
void dprt_unary_f32(int op, float *y, const float *x, int64_t n, float lo, float hi);
/* DPRT_NEG, DPRT_ABS, DPRT_CLAMP and DPRT_RELU on i64. */
void dprt_unary_i64(int op, int64_t *y, const int64_t *x, int64_t n, int64_t lo, int64_t hi);

/* Binary ops beyond dprt_binary_f32's (the numbering continues it). */
enum {
	DPRT_POW = DPRT_DIV + 1, DPRT_EQ, DPRT_NE, DPRT_LT, DPRT_LE, DPRT_GT, DPRT_GE,
	DPRT_AND, DPRT_OR, DPRT_XOR
};
/*
 * y[idx] = a[idx·sa] op b[idx·sb] over the shape dim[0..rank-1] (element
 * strides, 0 on broadcast axes; y dense).  a and b have dtype dtype:
 * DPRT_ADD/SUB/MUL (y = a op alpha·b for ADD and SUB) on f32, i64, i32;
 * DIV and POW on f32; comparisons EQ..GE on f32, i64, i32, bool, u8, giving
 * bool (0/1 bytes).  Logical AND/OR/XOR go through dprt_logical.
 */
void dprt_binary(int op, int dtype, void *y, const void *a, const int64_t *sa,
                 const void *b, const int64_t *sb, int rank, const int64_t *dim,
                 double alpha);
/* y[idx] = f(a[idx·sa], b[idx·sb], al) on f32 (strides as above): the
 * binary ops with no kernel of their own, f a formula of dpscalar.h. */
void dprt_map2_f32(float (*f)(float, float, float), float *y, const float *a,
                   const int64_t *sa, const float *b, const int64_t *sb, int rank,
                   const int64_t *dim, float al);
/* The same on i64 (f a dps_NAME_i64 formula). */
void dprt_map2_i64(int64_t (*f)(int64_t, int64_t, int64_t), int64_t *y, const int64_t *a,
                   const int64_t *sa, const int64_t *b, const int64_t *sb, int rank,
                   const int64_t *dim);
/* y = (a != 0) op (b != 0) as bool, a and b of any dtypes (strides as above). */
void dprt_logical(int op, uint8_t *y, const void *a, int dtype_a, const int64_t *sa,
                  const void *b, int dtype_b, const int64_t *sb, int rank,
                  const int64_t *dim);
/* y = !x as bool, x of any dtype. */
void dprt_not(uint8_t *y, const void *x, int dtype, int64_t n);
/* y = c ? a : b elementwise with broadcasting (c bool; a, b, y of es bytes). */
void dprt_where(void *y, int es, const uint8_t *c, const int64_t *sc, const void *a,
                const int64_t *sa, const void *b, const int64_t *sb, int rank,
                const int64_t *dim);

/* Copies the shape dim[0..rank-1] of es-byte elements from x (element
 * strides sx, 0 to broadcast) to y (strides sy): slices, expand, cat. */
void dprt_copy(void *y, const int64_t *sy, const void *x, const int64_t *sx, int es,
               int rank, const int64_t *dim);
/* memcpy(y, x, n) on the pool's threads where n is large (a program's
 * outputs and inputs through the cuda staging: one core copies about 13
 * GB/s, a 823 MB logits tensor 63 ms). */
void dprt_memcpy(void *y, const void *x, int64_t n);
/* y[i] = v (converted to dtype) for n elements. */
void dprt_fill(void *y, int dtype, double v, int64_t n);
/* y[i] = start + i·step, computed in f64 then converted to dtype. */
void dprt_arange(void *y, int dtype, double start, double step, int64_t n);
/* Gathers along the middle axis of x viewed as [outer, n, inner] (es-byte
 * elements): y[o, j, i] = x[o, idx[j], i] for j < m; idx is i64 or i32, a
 * negative index counts from the end.  0, or -1 with a message in err when
 * an index is out of range (what names the op). */
int dprt_gather(void *y, const void *x, int es, int64_t outer, int64_t n, int64_t inner,
                const void *idx, int dtype_idx, int64_t m, const char *what,
                char *err, size_t errn);
/* index_write: y viewed as [outer, n, inner] and src as [outer, m,
 * inner] (es-byte elements): y[o, idx[j], i] = src[o, j, i], j in order
 * (of duplicate indices the last wins); an index outside [0, n) writes
 * nothing. */
void dprt_index_write(void *y, const void *src, int es, int64_t outer, int64_t n,
                      int64_t inner, const int64_t *idx, int64_t m);

/* Inclusive scans along the middle axis of x viewed as [outer, n, inner]:
 * mode 0 sums, 1 products, 2 (f32 only) logs of sums of exponentials
 * (dpscalar.h's dps_logaddexp); dtype DPRT_F32 (in f64, as PyTorch's cpu
 * kernel) or DPRT_I64 (wrapping). */
void dprt_scan(int dtype, int mode, void *y, const void *x, int64_t outer, int64_t n,
                 int64_t inner);
/* A stable sort along the middle axis of x viewed as [outer, n, inner]
 * (dtype DPRT_F32, DPRT_I64 or DPRT_I32): ascending, or descending, NaN
 * above every number, equal keys in index order; the values into y, their
 * indices into idx (i64).  -1 with a message in err when out of memory. */
int dprt_sort(int dtype, void *y, int64_t *idx, const void *x, int64_t outer, int64_t n,
              int64_t inner, int descending, char *err, size_t errn);
/* torch.gather: y[c] = x[c with c[d] = idx[c]] over the shape idim[0..rank-1]
 * of idx (i64 or i32, negative from the end), x dense of shape xdim,
 * es-byte elements.  0, or -1 with a message in err when an index is out
 * of range (what names the op). */
int dprt_gather_dim(void *y, const void *x, int es, int rank, const int64_t *xdim,
                    const int64_t *idim, int d, const void *idx, int dtype_idx,
                    const char *what, char *err, size_t errn);

/* Reductions: y[k] = op over r of x[k·kst + r·rst], the kept axes kdim
 * [0..nk-1] (y dense in that shape) and the reduced axes rdim[0..nr-1].
 * DPRT_SUM on f32 (f64 accumulator), i64, i32; DPRT_MEAN on f32; DPRT_ANY
 * on any dtype giving bool. */
enum { DPRT_SUM, DPRT_MEAN, DPRT_ANY };
void dprt_reduce(int op, int dtype, void *y, const void *x, int nk, const int64_t *kdim,
                 const int64_t *kst, int nr, const int64_t *rdim, const int64_t *rst);

/* Inference batch norm over x viewed as [N, C, inner]: with a = w/√(var+eps)
 * and b' = b - mean·a per channel, y = x·a + b'. */
void dprt_batchnorm_f32(float *y, const float *x, const float *w, const float *b,
                        const float *mean, const float *var, float eps, int64_t N,
                        int64_t C, int64_t inner);
/* Layer norm over the last n elements of x viewed as [outer, n]: w and b
 * (n each) may be NULL.  Moments in f64. */
void dprt_layernorm_f32(float *y, const float *x, const float *w, const float *b,
                        int64_t outer, int64_t n, float eps);
/* RMS norm: y = x · 1/√(mean(x²) + eps) · w over rows of n (w may be NULL). */
void dprt_rmsnorm_f32(float *y, const float *x, const float *w, int64_t outer, int64_t n,
                      float eps);

/* 2-D pooling over x viewed as [NC, H, W] into y [NC, OH, OW].  k, s, p, d
 * are (h, w) pairs: kernel, stride, padding, dilation.  Max pooling
 * propagates NaN; average pooling divides by divisor when it is nonzero,
 * else by the window's size (padding counted when count_pad). */
void dprt_maxpool2d_f32(float *y, const float *x, int64_t NC, int64_t H, int64_t W,
                        int64_t OH, int64_t OW, const int64_t *k, const int64_t *s,
                        const int64_t *p, const int64_t *d);
void dprt_avgpool2d_f32(float *y, const float *x, int64_t NC, int64_t H, int64_t W,
                        int64_t OH, int64_t OW, const int64_t *k, const int64_t *s,
                        const int64_t *p, int count_pad, int64_t divisor);
/* Adaptive average pooling: window [⌊i·H/OH⌋, ⌈(i+1)·H/OH⌉) (and along W). */
void dprt_adaptive_avgpool2d_f32(float *y, const float *x, int64_t NC, int64_t H,
                                 int64_t W, int64_t OH, int64_t OW);

/*
 * 2-D convolution, x [N, C, H, W], weight [O, C/groups, k0, k1], bias [O]
 * or NULL, y [N, O, OH, OW]; s, p, d are (h, w) stride, padding, dilation.
 * Depthwise (groups == C) runs directly; otherwise im2col into scratch and
 * dprt_sgemm per image and group.  scratch holds
 * dprt_conv2d_scratch(...) floats (0 for 1x1, stride 1, no padding).
 */
void dprt_conv2d_f32(float *y, const float *x, const float *w, const float *bias,
                     int64_t N, int64_t C, int64_t H, int64_t W, int64_t O, int64_t OH,
                     int64_t OW, int64_t groups, const int64_t *k, const int64_t *s,
                     const int64_t *p, const int64_t *d, float *scratch);
int64_t dprt_conv2d_scratch(int64_t C, int64_t OH, int64_t OW, int64_t groups,
                            const int64_t *k, const int64_t *s, const int64_t *p);

/*
 * Scaled dot-product attention per batch b < B: y[b] = softmax(scale·q[b]·
 * k[b]ᵀ + mask) · v[b], q [B, L, E], k [B, S, E], v [B, S, Ev], y [B, L, Ev].
 * causal masks j > i.  mask (NULL for none) is bool (false masks) or f32
 * (added); its element at batch b, row i, column j lies at offset
 * Σ bidx[t]·mbst[t] + i·msl + j·mss, bidx being b's index in the batch
 * shape bdim[0..nb-1].  A row with every score masked gives zeros.  No
 * score matrix is kept (an online softmax over blocks of keys).  scratch:
 * dprt_sdpa_scratch_floats(B, S, E) floats where k is transposed once for
 * every block of query rows (each block of rows transposes its own keys
 * where it is NULL or that count is 0); the results are the same bits
 * either way.
 */
size_t dprt_sdpa_scratch_floats(int64_t B, int64_t S, int64_t E);
void dprt_sdpa_f32(float *y, const float *q, const float *k, const float *v, int64_t B,
                   int64_t L, int64_t S, int64_t E, int64_t Ev, float scale, int causal,
                   const void *mask, int dtype_mask, int nb, const int64_t *bdim,
                   const int64_t *mbst, int64_t msl, int64_t mss, float *scratch);
/* The same with q, k, v, y read and written in place through strides:
 * st holds, for y, q, k, v in turn, nb + 1 element strides: those of the
 * batch dims bdim, then the row stride (the last dim is contiguous); B is
 * the product of bdim.  NULL: dense, as dprt_sdpa_f32.  scratch as there. */
void dprt_sdpa_strided_f32(float *y, const float *q, const float *k, const float *v, int64_t B,
                           int64_t L, int64_t S, int64_t E, int64_t Ev, float scale, int causal,
                           const void *mask, int dtype_mask, int nb, const int64_t *bdim,
                           const int64_t *mbst, int64_t msl, int64_t mss, const int64_t *st,
                           float *scratch);

/* ---- Text (tokenize.c): BPE tokenizers from a Hugging Face
 * tokenizer.json (byte-level as GPT-2's, Llama-3's, Qwen2's;
 * SentencePiece-converted as Llama-2's, Mistral's), giving the ids and
 * text of the `tokenizers` library ---- */
typedef struct dprt_tokenizer dprt_tokenizer;

/* Reads tokenizer.json at path (or the n bytes of json; what names it in
 * messages).  0, or -1 with a message: a file with a model or a component
 * DevProc does not read says which. */
int dprt_tok_load(const char *path, dprt_tokenizer **t, char *err, size_t errn);
int dprt_tok_parse(const char *json, size_t n, const char *what, dprt_tokenizer **t,
                   char *err, size_t errn);
void dprt_tok_free(dprt_tokenizer *t);
/* Encodes the UTF-8 text[0..n-1] as encode(text, add_special_tokens=special)
 * .ids: ids[0..cap-1] get the first ids; returns how many there are (more
 * than cap: call again with room), -1 when out of memory, -2 when a
 * pre-tokenizer's or normalizer's regex backtracks past Oniguruma's limit
 * on this text (as the library's fails).  A byte that is not valid UTF-8
 * stands for itself. */
int64_t dprt_tok_encode(const dprt_tokenizer *t, const char *text, size_t n, int special,
                        int64_t *ids, int64_t cap);
/* Decodes ids[0..n-1] as decode(ids, skip_special_tokens=skip): UTF-8 text
 * (invalid sequences as U+FFFD; unknown ids dropped) into buf[0..cap-1], no
 * NUL; returns its length (more than cap: call again), -1 when out of
 * memory. */
int64_t dprt_tok_decode(const dprt_tokenizer *t, const int64_t *ids, int64_t n, int skip,
                        char *buf, int64_t cap);
/* The id of a token given as its text (an added token's content or a
 * vocabulary entry as the file writes it), or -1; the number of ids. */
int64_t dprt_tok_id(const dprt_tokenizer *t, const char *token);
int64_t dprt_tok_size(const dprt_tokenizer *t);

/* The tokenize op: the text's ids (add_special_tokens = special) into
 * ids[0..length-1], the rest pad; json[0..jsonn-1] is the tokenizer.json,
 * parsed once per process and kept.  0, or -1 with a message when the text
 * has more than length tokens or the tokenizer does not load. */
int dprt_tokenize(int64_t *ids, int64_t length, int64_t pad, int special,
                  const dprt_image *text, const uint8_t *json, int64_t jsonn,
                  char *err, size_t errn);
/* The detokenize op: the text of ids[0..n-1] (i64 or i32; skip: without
 * the special tokens) into y[0..bytes-1], NUL-padded.  0, or -1 with a
 * message when it is longer than bytes. */
int dprt_detokenize(uint8_t *y, int64_t bytes, int skip, const void *ids, int dtype_ids,
                    int64_t n, const uint8_t *json, int64_t jsonn, char *err, size_t errn);

/* ---- Threads (pool.c) ----
 * A pool is made once per program instance; dprt_pool_enter makes it the
 * pool of the calling thread's kernels until dprt_pool_leave.  Results do
 * not depend on the thread count: every kernel splits its work into tasks
 * whose arithmetic is fixed, so outputs are bitwise equal at any count. */
#define DPRT_MAXTHREADS 1024
typedef struct dprt_pool dprt_pool;
/* n threads (the caller counts as one); n = 0: dprt_default_threads.  Checks
 * the CPU feature request too (dprt_cpu_init).  0, or -1 with err. */
int dprt_pool_create(dprt_pool **p, int n, char *err, size_t errn);
void dprt_pool_destroy(dprt_pool *p);
/* A pool of n threads replaces *p (kept when this fails: n not from 1 to
 * DPRT_MAXTHREADS, or a thread that does not start).  0, or -1 with err. */
int dprt_pool_resize(dprt_pool **p, int n, char *err, size_t errn);
int dprt_pool_threads(const dprt_pool *p);
/* Runs prep(arena, w), a program's once-per-instance preparation of its
 * weights, with p entered: layers that oneDNN runs (DPRT_DNNL, below) make
 * their primitives there, and p owns them (freed by dprt_pool_destroy). */
void dprt_pool_prep(dprt_pool *p, void (*prep)(void *, const unsigned char *), void *arena,
                    const unsigned char *w);
/* -1 when p is already entered (an instance run from two threads at once). */
int dprt_pool_enter(dprt_pool *p);
void dprt_pool_leave(dprt_pool *p);
/* The calling thread's last call on instance inst refused with msg (a
 * static string) because another thread runs it: kept per thread, so that
 * the refusal writes nothing the running thread owns (its error buffer).
 * msg NULL forgets such a refusal of inst.  dprt_refused: the message of
 * this thread's refusal on inst, or NULL. */
void dprt_refuse(const void *inst, const char *msg);
const char *dprt_refused(const void *inst);
/* The cores this process may run on (sched_getaffinity). */
int dprt_ncores(void);
/* DPRT_THREADS when set (an error when it is not a count), else dprt_ncores(). */
int dprt_default_threads(int *n, char *err, size_t errn);
/* "4" to 4; an error "WHAT needs a thread count from 1 to 1024, got 'x'". */
int dprt_parse_threads(const char *s, int *n, const char *what, char *err, size_t errn);
/* Runs fn(arg, t) for t < ntask on the current pool (serially without one,
 * or inside a task); returns when all are done. */
void dprt_parallel(int64_t ntask, void (*fn)(void *arg, int64_t t), void *arg);
/* Threads of the current pool (1 inside a task or without one). */
int dprt_threads(void);

/* SIMD kernels chosen once per process from CPUID: DPRT_ISA=generic, avx2
 * or avx512 asks for one; a request the CPU cannot run is an error. */
enum { DPRT_ISA_GENERIC, DPRT_ISA_AVX2, DPRT_ISA_AVX512, DPRT_NISA };
int dprt_cpu_init(char *err, size_t errn);
int dprt_isa(void);
const char *dprt_isa_name(void);

/* ---- oneDNN (dnnl.c) ----
 * Where configure found oneDNN's header and the process can load
 * libdnnl.so.2, the convolutions and linear layers whose weights an instance
 * prepares once run on oneDNN (its packed weights, our fused epilogue as
 * post-ops); every other layer, and every layer where oneDNN is absent, on
 * our kernels.  DPRT_DNNL picks: unset, "auto" or "1": the mapping measured
 * fastest (bench/RESULTS.md); "0" or "none": our kernels only; or a comma
 * list of "conv" (not depthwise; 3×3 stride 1 directly), "dw" (depthwise,
 * but for one image between blocked activations: our kernel won there),
 * "dw1" (that one too), "wino" (3×3 stride-1 convolutions through oneDNN's
 * Winograd, as auto does), "pw" (1×1 convolutions of one image between
 * blocks of 16: without it, and with AVX-512, our blocked kernel), "linear"
 * (more than 32 rows), "gemm" (other matrix products of 2^24 multiply-adds
 * or more, through oneDNN's sgemm).  DPRT_ISA=generic keeps oneDNN out too.  Outputs match our kernels'
 * within rounding (1e-6 relative on the test models), not bitwise. */

/* ---- Convolution with prepared weights (conv.c) ----
 * x [N, C, H, W] to y [N, O, OH, OW]; the epilogue after the bias: + res
 * (same shape as y, or NULL), then act. */
enum {
	DPRT_ACT_NONE, DPRT_ACT_RELU, DPRT_ACT_CLAMP, DPRT_ACT_HARDSWISH, DPRT_ACT_SILU,
	DPRT_ACT_GELU, DPRT_ACT_GELU_TANH
};
typedef struct dprt_conv {
	int64_t N, C, H, W, O, OH, OW, groups;
	int64_t k[2], s[2], p[2], d[2];
	int act;
	float lo, hi;           /* DPRT_ACT_CLAMP's bounds */
	int res;                /* 1: dprt_conv_run is given res (a fused residual add) */
	int lay;                /* DPRT_LAY_X: x blocked; DPRT_LAY_Y: y and res blocked */
} dprt_conv;
/* The blocked activation layout that lower_cpu keeps between convolution-
 * family ops: [N][⌈C/B⌉][H][W][B], the padding channels 0, B =
 * dprt_conv_block() (16 or 8: what oneDNN's kernels for this CPU read);
 * its buffers are sized for B = 16.  Where dprt_conv_block() is 0 (oneDNN
 * absent, or not running the convolutions: DPRT_DNNL) a "blocked" buffer
 * holds the plain [N, C, H, W] layout, so that one program runs either way. */
enum { DPRT_LAY_X = 1, DPRT_LAY_Y = 2 };
int dprt_conv_block(void);
/* Max pooling (as dprt_maxpool2d_f32) of blocked x [N, C, H, W] into
 * blocked y [N, C, OH, OW]. */
void dprt_maxpool2d_blk_f32(float *y, const float *x, int64_t N, int64_t C, int64_t H,
                            int64_t W, int64_t OH, int64_t OW, const int64_t *k,
                            const int64_t *s, const int64_t *p, const int64_t *d);
/* The mean over H and W of blocked x [N, C, H, W] into plain y [N, C]. */
void dprt_gap_blk_f32(float *y, const float *x, int64_t N, int64_t C, int64_t H, int64_t W);
/* Floats of the prepared weights / the scratch of one convolution. */
int64_t dprt_conv_prep_floats(const dprt_conv *cv);
int64_t dprt_conv_scratch_floats(const dprt_conv *cv);
/* Packs w [O, C/groups, k0, k1] and the bias (NULL: 0) for the kernels of
 * this CPU, with the inference batch norm (bnw, bnb, bnm, bnv, eps; bnw
 * NULL: none) folded in: w·a and (bias - mean)·a + b, a = bnw/√(bnv+eps). */
void dprt_conv_prep(const dprt_conv *cv, float *prep, const float *w, const float *bias,
                    const float *bnw, const float *bnb, const float *bnm, const float *bnv,
                    float eps);
void dprt_conv_run(const dprt_conv *cv, float *y, const float *x, const float *prep,
                   const float *res, float *scratch);

/* A linear layer with its activation fused: y [M, N] = act(x [M, K] · wᵀ +
 * bias), w [N, K], bias [N] or NULL (gemm.c). */
void dprt_linear_f32(float *y, const float *x, const float *w, const float *bias, int64_t M,
                     int64_t N, int64_t K, int act);
/* The same with w packed once (at init) by dprt_linear_prep into prep
 * (dprt_linear_prep_floats floats): the same bits as dprt_linear_f32. */
int64_t dprt_linear_prep_floats(int64_t N, int64_t K);
void dprt_linear_prep(float *prep, const float *w, int64_t N, int64_t K);
void dprt_linear_packed_f32(float *y, const float *x, const float *w, const float *prep,
                            const float *bias, int64_t M, int64_t N, int64_t K, int act);
/* Both in one, more general: y [M, N] = act(x [M, K]·W + bias + res), W =
 * wᵀ for w [N, K], or w itself for w [K, N] when wt (an addmm's weight);
 * res [M, N] or NULL; prep packed by dprt_linear_prep_ex (same wt), or
 * NULL (unpacked). */
void dprt_linear_prep_ex(float *prep, const float *w, int64_t N, int64_t K, int wt);
void dprt_linear_ex_f32(float *y, const float *x, const float *w, const float *prep,
                        const float *bias, const float *res, int64_t M, int64_t N, int64_t K,
                        int act, int wt);

/* ---- Generation (sample.c; formats/dp.md, "Generation") ---- */

/* How the next token is chosen from a row of logits. */
typedef struct dprt_sampling {
	double temperature;	/* <= 0: greedy (the first largest logit) */
	int64_t top_k;		/* keep the k most likely; 0: all */
	double top_p;		/* then the smallest prefix reaching p; 1: all */
	uint64_t seed;		/* SplitMix64's initial state */
} dprt_sampling;
/* SplitMix64: the next 64 random bits of *state. */
uint64_t dprt_rng_next(uint64_t *state);
size_t dprt_sample_work_bytes(int64_t n);
/* The next token from logits[0..n-1]; work holds dprt_sample_work_bytes(n). */
int64_t dprt_sample(const float *logits, int64_t n, const dprt_sampling *s, uint64_t *rng,
                    void *work);
/* A generation loop: ids[0..n-1] the prompt in the program's token input
 * (room for len), logits its output: rows of vocab floats, one per position
 * (rows > 1) or the last position's only.  With a positions input (pos not
 * NULL: a program keeping a KV cache as state), ids and pos hold len tokens
 * and their positions per run, the prompt is prompt[0..n-1] (fed len at a
 * time), then each new token alone at the next position. */
typedef struct dprt_generation {
	dprt_sampling s;
	int64_t max_tokens;	/* at most this many new tokens */
	int64_t end;		/* the end token (given out, then stop); -1: none */
	int64_t *ids;
	int64_t len, n;
	const float *logits;
	int64_t vocab, rows;
	int64_t *pos;		/* the positions input, or NULL */
	const int64_t *prompt;	/* with pos: the prompt's tokens */
	int posin;		/* dprt_genspec: the index of pos=NAME's input, or -1 */
	/* prefill=ENTRY: the entry taking the prompt plen tokens a run, through
	 * its inputs pids and ppos and its logits plogits (rows of vocab, plen
	 * of them), run by prefill(ctx); dprt_genspec sets prefill (the entry's
	 * index, else -1), pin, pposin and plout (its io indices) and plen. */
	int prefill, pin, pposin, plout;
	int64_t plen, *pids, *ppos;
	const float *plogits;
	int (*prefill_run)(void *ctx);
} dprt_generation;
/* Runs run(ctx), chooses a token from the last position's logits, gives it
 * to token(ctx, tok) and appends it to ids, until max_tokens, the end token
 * or a full sequence; *ngen is the count given out.  0, or the first
 * nonzero result of run or token, or -1 with a message in err. */
/* Parses a generation spec, "IN=OUT,key=value..." (formats/dp.md,
 * "Generation"; prompt=P sets n, else 0) against p's inputs and outputs:
 * fills g but for ids and logits, *in and *out the indices of IN and OUT.
 * 0, or -1 with a message in err. */
struct dprt_prog;
int dprt_genspec(const struct dprt_prog *p, const char *spec, dprt_generation *g, int *in,
                 int *out, char *err, size_t errn);
int dprt_generate(const dprt_generation *g, int (*run)(void *ctx),
                  int (*token)(void *ctx, int64_t tok), void *ctx, int64_t *ngen,
                  char *err, size_t errn);

#endif
