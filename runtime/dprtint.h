/* dprtint.h: runtime internals shared between the runtime's own files. */
#ifndef DPRTINT_H
#define DPRTINT_H

#include <stdarg.h>
#include <stdio.h>
#include "dprt.h"

#define DPRT_HIDDEN __attribute__((visibility("hidden")))

/* Formats a message into err[0..errn-1] (when errn > 0); returns -1. */
DPRT_HIDDEN int dprt_errf(char *err, size_t errn, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Element count of a shape into *n; 0, or -1 on a negative dim or overflow. */
DPRT_HIDDEN int dprt_numel(int rank, const int64_t *dim, int64_t *n);

/* Writes a .npy file to a fresh temporary beside path (its name into tmp,
 * which has room for tmpn bytes); the caller renames or unlinks it.  0, or
 * -1 with a message in err (and no file left behind). */
DPRT_HIDDEN int dprt_npy_write_tmp(const char *path, char *tmp, size_t tmpn,
                                   int dtype, int rank, const int64_t *dim,
                                   const void *src, char *err, size_t errn);

/* safetensors.c: one tensor of a .safetensors header. */
typedef struct dprt_st_tensor {
	const char *name;
	const char *dtname;	/* the file's dtype name ("F32") */
	int dtype;		/* DPRT_ code, or -1 for a dtype DevProc lacks */
	int rank;
	int64_t dim[DPRT_MAXRANK];
	uint64_t off, nbytes;	/* from the file's start */
} dprt_st_tensor;

/* A parsed .safetensors header (the names point into root). */
typedef struct dprt_st {
	int n;
	dprt_st_tensor *t;
	uint64_t data;		/* offset of the data section */
	void *root;		/* the JSON header (jansson) */
} dprt_st;

/* Parses the header in buf[0..n-1] of a file of size bytes (what names it);
 * checks every entry (dtype known, sizes, offsets inside the data).  0, or
 * -1 with a message naming the file and the tensor. */
DPRT_HIDDEN int dprt_st_parse(const unsigned char *buf, size_t n, uint64_t size,
                              const char *what, dprt_st *st, char *err, size_t errn);
DPRT_HIDDEN void dprt_st_free(dprt_st *st);
/* Fills blob b's named constants from the checkpoints files[0..n-1] (see
 * weights.c). */
DPRT_HIDDEN int dprt_st_fill(const dprt_blob *b, const char *const *files, int n,
                             const unsigned char *src, void **map, size_t *mapn, char *err,
                             size_t errn);

/* ucat.c: the Unicode character data the tokenizers read (its tables,
 * ucattab.h, written by tools/gen_unicode.py from Python's unicodedata).  Code points past
 * 0x10FFFF (tokenize.c's stand-ins for bytes that are not UTF-8) are
 * unassigned: category Cn, no space, folding and normalization to
 * themselves. */
enum {	/* general categories */
	DPRT_UC_Cn, DPRT_UC_Lu, DPRT_UC_Ll, DPRT_UC_Lt, DPRT_UC_Lm, DPRT_UC_Lo,
	DPRT_UC_Mn, DPRT_UC_Mc, DPRT_UC_Me, DPRT_UC_Nd, DPRT_UC_Nl, DPRT_UC_No,
	DPRT_UC_Pc, DPRT_UC_Pd, DPRT_UC_Ps, DPRT_UC_Pe, DPRT_UC_Pi, DPRT_UC_Pf,
	DPRT_UC_Po, DPRT_UC_Sm, DPRT_UC_Sc, DPRT_UC_Sk, DPRT_UC_So, DPRT_UC_Zs,
	DPRT_UC_Zl, DPRT_UC_Zp, DPRT_UC_Cc, DPRT_UC_Cf, DPRT_UC_Cs, DPRT_UC_Co
};
DPRT_HIDDEN int dprt_ucat(uint32_t c);
/* whether c is a letter (L*), a number (N*), White_Space */
DPRT_HIDDEN int dprt_uletter(uint32_t c);
DPRT_HIDDEN int dprt_unumber(uint32_t c);
DPRT_HIDDEN int dprt_uspace(uint32_t c);
/* simple case folding (CaseFolding.txt's C and S rows), c itself if none */
DPRT_HIDDEN uint32_t dprt_ufold(uint32_t c);
/* the full lowercase mapping of c (SpecialCasing's unconditional rows,
 * as Python's str.lower of c alone) into out[0..2]: its length, 1 to 3 */
DPRT_HIDDEN int dprt_ulower(uint32_t c, uint32_t out[3]);
/* cp[0..n-1] in a normalization form: a malloc'd array (at least one
 * element allocated), its length in *m; NULL when out of memory */
enum { DPRT_NFC, DPRT_NFD, DPRT_NFKC, DPRT_NFKD };
DPRT_HIDDEN uint32_t *dprt_unorm(int form, const uint32_t *cp, size_t n, size_t *m);

/* regex.c: the regular expressions of tokenizer.json's Split
 * pre-tokenizers (Oniguruma syntax, as the tokenizers library reads them),
 * matched over code points with leftmost-first (backtracking) semantics. */
typedef struct dprt_re dprt_re;
/* Compiles the UTF-8 pattern pat; NULL with a message naming what in the
 * pattern is wrong or not supported. */
DPRT_HIDDEN dprt_re *dprt_re_new(const char *pat, char *err, size_t errn);
DPRT_HIDDEN void dprt_re_free(dprt_re *re);
/* The first match at or after cp[i] in cp[0..n-1] (lookarounds see the
 * whole of cp): its start in *start, its end returned; -1 when there is
 * none, -2 when out of memory, -3 when it backtracks more than
 * Oniguruma's limit (10^7 from one start) and gives up, as Oniguruma does.
 * Reentrant: re is only read. */
DPRT_HIDDEN ptrdiff_t dprt_re_find(const dprt_re *re, const uint32_t *cp, size_t n, size_t i,
                                   size_t *start);
/* trace.c: a traced run: start (events cleared, the clock marked), mark
 * (before each run), stop; the events as Chrome/Perfetto trace JSON into
 * path, or summed per op (mean over runs) into f. */
DPRT_HIDDEN void dprt_trace_start(void);
DPRT_HIDDEN void dprt_trace_mark(void);
DPRT_HIDDEN void dprt_trace_stop(void);
DPRT_HIDDEN int dprt_trace_write(const char *path, const char *prog, char *err, size_t errn);
DPRT_HIDDEN void dprt_trace_profile(FILE *f, long runs);

/* pool.c: the current pool's oneDNN state slot (NULL without a pool), and
 * whether the current pool is inside dprt_pool_prep (an instance's weights
 * being prepared once). */
DPRT_HIDDEN void **dprt_pool_dnnl_slot(void);
DPRT_HIDDEN int dprt_pool_prepping(void);
/* Whether the calling thread is running a task (or is a pool worker). */
DPRT_HIDDEN int dprt_pool_intask(void);
/* dnnl.c: oneDNN's convolution and linear layers (see there).  The preps
 * return 1 when oneDNN takes the layer (its prep area then holds oneDNN's
 * state), else 0; the runs 1 when done, 0 when the layer is ours, -1 when
 * it failed (a linear layer then runs unpacked). */
DPRT_HIDDEN extern void (*dprt_gomp_parallel)(void (*)(void *), void *, unsigned, unsigned);
DPRT_HIDDEN int dprt_dnnl_policy(void);
DPRT_HIDDEN int dprt_dnnl_pw(int64_t N);
DPRT_HIDDEN int dprt_dnnl_available(void);
DPRT_HIDDEN int dprt_dnnl_conv_prep(const dprt_conv *cv, float *prep, const float *w,
                                    const float *bias, const float *bnw, const float *bnb,
                                    const float *bnm, const float *bnv, float eps);
DPRT_HIDDEN int dprt_dnnl_conv_run(const dprt_conv *cv, float *y, const float *x,
                                   const float *prep, const float *res);
DPRT_HIDDEN int dprt_dnnl_linear_prep(float *prep, const float *w, int64_t N, int64_t K);
DPRT_HIDDEN int dprt_dnnl_linear_run(float *y, const float *x, const float *w,
                                     const float *prep, const float *bias, const float *res,
                                     int64_t M, int64_t N, int64_t K, int act, int wt);
/* C [M, N] (rows ldc apart) = A·B + bias (per column, or NULL) through
 * oneDNN's sgemm when it is loaded, DPRT_DNNL has "gemm" and the product is
 * large (M·N·K >= 2^24): 1 done, 0 not taken, -1 failed. */
DPRT_HIDDEN int dprt_dnnl_sgemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t rsa,
                                int64_t csa, const float *B, int64_t rsb, int64_t csb,
                                const float *bias, float *C, int64_t ldc);
DPRT_HIDDEN void dprt_dnnl_free(void *ctx);
/* The index of the io named name (n bytes, not terminated) among nio, or -1
 * (sample.c). */
DPRT_HIDDEN int dprt_findio(const dprt_io *io, int nio, const char *name, size_t n);

#endif
