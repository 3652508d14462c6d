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

/* A named graph input or output of a program. */
typedef struct dprt_io {
	const char *name;
	int dtype;
	int rank;
	int64_t dim[DPRT_MAXRANK];
} dprt_io;

/*
 * A compiled program, emitted by lower_cpu.  run() executes the whole
 * schedule once: in[i] points at input i (laid out as the io says, C order),
 * out[i] at room for output i; arena is arena_bytes of scratch (64-byte
 * aligned) holding the static buffer plan.  Returns 0, or -1 with a message
 * in err[0..errn-1].  The CUDA side, when present, lives in state made by
 * init() and freed by fini() (both NULL for CPU-only programs).
 */
typedef struct dprt_prog {
	const char *name;
	int nin, nout;
	const dprt_io *in, *out;
	size_t arena_bytes;
	int (*init)(void **state, char *err, size_t errn);
	void (*fini)(void *state);
	int (*run)(void *state, void *arena, const void *const *in,
	           void *const *out, char *err, size_t errn);
} dprt_prog;

/* The generic executable: NAME --in x=file.npy --out y=file.npy [--bench N]
 * [--help].  Returns the process exit status. */
int dprt_main(const dprt_prog *p, int argc, char **argv);

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

/* Writes "[1,32,32,3]" (or "[]" for rank 0) into buf; returns buf. */
char *dprt_shape_str(char *buf, size_t n, int rank, const int64_t *dim);

/* Monotonic clock in seconds. */
double dprt_now(void);

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

#endif
