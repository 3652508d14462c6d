/* import.h: private interface of the import stage (.dp parser, .pt2 reader,
 * ATen op table, weight blob). */
#ifndef IMPORT_H
#define IMPORT_H

#include <setjmp.h>
#include <stdint.h>

#include "dpir.h"

typedef struct Pos {
	int line, col;     /* 1-based; col counts bytes */
} Pos;

/* The .dp source, kept for error messages with the offending line. */
typedef struct Src {
	const char *path;  /* as given on the command line */
	const char *dir;   /* its folder with a trailing '/', or "" */
	char *text;
	size_t len;
} Src;

/* The weight blob being built (formats/weights.md). */
typedef struct Stored {    /* one distinct tensor in the blob */
	uint64_t hash;
	int64_t off, n;    /* file offset and length in bytes */
	const char *name;  /* the state-dict name it is stored for, or NULL */
	const char *p;     /* its bytes: in a mapped archive, or owned */
	int own;           /* p is the blob's to free */
} Stored;

typedef struct Blob {
	size_t len;        /* the file's size so far, a multiple of 64 */
	Stored *t;         /* in offset order */
	int nt, capt;
	char *room;        /* blob_room's buffer */
	size_t roomcap;
	unsigned char head[64];   /* the header, once blob_finish made it */
} Blob;

typedef struct Model Model;

typedef struct Const {     /* a const op already emitted, for reuse */
	int64_t off, n;    /* its bytes in the blob */
	Type t;
	int val;
} Const;

/* The state of one import run. */
typedef struct Imp {
	Fn *fn;
	Src *src;
	Blob blob;
	Model **model;     /* archives read so far, in first-use order */
	int nmodel;
	Const *konst;      /* const ops emitted so far */
	int nkonst, capkonst;
	struct Textfile *text;   /* tokenizer files read so far (text.c) */
	int ntext;
	int64_t seed;      /* the model call being inlined's seed= (0) */
	int64_t nrandom;   /* random ops made so far: the next one's stream */
} Imp;

/* A file a text op read (tokenize's file=): a dependency like an archive. */
typedef struct Textfile {
	char *path;        /* as written in the .dp */
	char *file;        /* as opened */
	char hash[17];
	int val;           /* its u8 const */
} Textfile;

/* A model("file.pt2", args...) call as parsed. */
typedef struct Call {
	const char *path;  /* as written in the .dp */
	Pos at;            /* the op name */
	Pos pathat;        /* the string */
	const int *arg;    /* value ids of the arguments */
	const Pos *argat;
	const char *const *argname; /* their names in the .dp */
	int narg;
	int nres;          /* names on the left-hand side */
	Pos resat;         /* the first of them */
} Call;

/* util.c.  errat and errfile report and exit 1; when imp_bail is set (an
 * in-process caller: the fuzz harnesses) they longjmp there instead, and the
 * caller frees the run with imp_free: every allocation of a run is owned by
 * the Imp (its function's arena, its blob, its archives). */
extern jmp_buf *imp_bail;
_Noreturn void errat(const Src *s, Pos p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
_Noreturn void errfile(const char *file, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const char *suggest(const char *word, const char *const *cand, int n);
void *xrealloc(void *p, size_t n, size_t size);
void *agrow(Arena *a, void *arr, int *cap, int n, size_t size);
char *xstrdup(const char *s);
char *strfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *typestr(const Type *t);

/* run.c */
void imp_run(Imp *imp, const char *name, const char *dep, const char *wname);
void imp_free(Imp *imp);

/* dp.c */
void parse(Imp *imp);

/* pt2.c */
typedef struct Graph Graph; /* a model graph being inlined */
int pt2_call(Imp *imp, const Call *c, int *res, int maxres);
void pt2_deps(Imp *imp);
/* text.c: the u8 const holding the tokenizer.json at path (relative to the
 * .dp), checked as a tokenizer DevProc reads; at is the path's position. */
int text_file(Imp *imp, const char *path, Pos at);
void text_free(Imp *imp);
/* The const op of a tensor of type t in the blob (pt2.c). */
int imp_const(Imp *imp, const void *bytes, const Type *t);
char *pt2_depfile(Imp *imp, const char *target);
void pt2_free(Imp *imp);
int g_value(Graph *g, const char *name, const char *node);
int g_scalar(Graph *g, double v, int dtype);
int g_filled(Graph *g, const Type *t, double v);
void g_unused(Graph *g, const char *name, const char *what);
void g_result(Graph *g, const char *name, int v);
int g_type(Graph *g, const char *name, Type *t);
int g_complex(Graph *g, const char *name);
enum { PT2_FLOAT = 7, PT2_COMPLEX64 = 10 };   /* torch.export's ScalarType */
void g_bind(Graph *g, const char *name, int v);
void g_writeback(Graph *g, const char *name, int old, int v);
void g_define(Graph *g, const char *name, int v, const char *what);
void g_symset(Graph *g, const char *name, int64_t v);
int g_symunbacked(Graph *g, const char *name);
int g_symget(Graph *g, const char *name, int64_t *v);
struct json_t *g_meta(Graph *g, const char *name);
int g_hint(struct json_t *s, int64_t *v);
int symnode(struct json_t *nd);
_Noreturn void g_err(Graph *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
Imp *g_imp(Graph *g);

/* aten.c (the conversion) and atab.c (the table) */
enum {                      /* Aten.flags */
	F_INPLACE = 1,      /* mutates its first argument */
	F_MULTI = 2,        /* results after the first exist but must be unused (unless
	                       its hook computes them: H_VARMEAN, H_LOGSIGMOID) */
	F_LIST = 4,         /* one result, a list of tensors (H_SPLIT) */
	F_OUT = 8,          /* an out= variant: its "out" argument names the result too */
	F_RESVIEW = 16,     /* a result after the first the archive records in another shape
	                       of its elements (PyTorch's fake aten.lstm: h_n and c_n as
	                       [layers, directions, batch, hidden]): viewed to it */
};
enum {                      /* Aten.hook: what aten.c does beyond the schema */
	H_NONE, H_IDENTITY, H_UNSQUEEZE, H_SQUEEZE, H_INDEX, H_ARANGE, H_FULL,
	H_FLOATDEF, H_NEW, H_TOCOPY, H_TYPEAS, H_LAYERNORM, H_RSUB, H_BOOL, H_SPLIT,
	H_OUTSIZE,          /* output_size from the result's type (upsampling) */
	H_DIFF,             /* flags: which of prepend, append are given */
	H_CLAMPT,           /* flags: which of the min, max tensors are given */
	H_INDEXPUT,         /* the index tensors as operands after the values */
	H_BATCHNORM,        /* training: batch statistics (aten.batch_norm_no_stats) */
	H_SYM,              /* a size, stride... of a static tensor: an int, no op */
	H_RESIZE,           /* resize_ to the same element count: aten.view */
	H_EMBBAG,           /* no per-sample weights, padding_idx -1 or None */
	H_RANDOM,           /* seed and stream: the model call's seed, the op's number */
	H_CVIEW,            /* view_as_real/complex: an aten.view to the result's size */
	H_ITEM,             /* _local_scalar_dense: its symbolic result names the value */
	H_FFT,              /* torch.fft's rfft, irfft...: dims, norm and sizes as the _fft ops' */
	H_ASSHAPE,          /* view_as, reshape_as: to the other operand's sizes */
	H_CAT,              /* cat: 1-D empty operands left out, as PyTorch skips them */
	H_SQUARE,           /* x·x */
	H_POWINT,           /* an integer tensor to a power n >= 0: aten.mul by squaring */
	H_MESHGRID,         /* one aten.expand of a view per tensor (ij or xy) */
	H_CONVPAD,          /* padding 'valid' or 'same' (odd totals: aten.pad first) */
	H_WEIGHTNORM,       /* v·(g / aten.linalg_vector_norm of v over the other dims) */
	H_REAL,             /* real, imag: aten.select of the (re, im) axis */
	H_REVERSE,          /* numpy_T: aten.permute reversing the dims */
	H_DTYPEIN,          /* a dtype argument: the input cast to it first */
	H_DIVMODE,          /* div with rounding_mode floor or trunc */
	H_CONV,             /* convolution: transposed false and its output_padding left out */
	H_STD,              /* std: the square root of aten.var */
	H_VARMEAN,          /* var_mean, std_mean: aten.var (its square root), and aten.mean */
	H_LOGSUMEXP,        /* log Σ exp(x − m) + m, m the max (0 where infinite) */
	H_GLU,              /* the first half times the sigmoid of the second */
	H_PIXSHUF,          /* pixel_(un)shuffle: a view, a permute, a view */
	H_TRI,              /* triu, tril: where(col − row >= / <= diagonal, x, 0) */
	H_NANTONUM,         /* nan_to_num: NaN, +inf, −inf replaced */
	H_LERP,             /* start + weight·(end − start), PyTorch's two forms */
	H_LOGADDEXP,        /* max + log1p(exp(−|a − b|)) */
	H_PRELU,            /* x where x > 0, else weight·x */
	H_PRELUCH,          /* aten.prelu: its weight shaped per channel, then H_PRELU */
	H_CELU,             /* elu with input_scale 1/alpha */
	H_INDEXFILL,        /* index_copy of the value expanded */
	H_ADDMV,            /* beta·self + alpha·(mat·vec) */
	H_BUCKETIZE,        /* bucketize, searchsorted (1-D boundaries): a compare, summed */
	H_LOGSIGMOID,       /* min(x, 0) − log1p(exp(−|x|)), and the buffer exp(−|x|) */
	H_UPND,             /* 1-D, 3-D upsampling: the 2-D one of views, per pair of axes */
	H_ADAPTMAX,         /* adaptive max pool: the max of each window, along H then W */
	H_IM2COL,           /* im2col (unfold): a strided slice of x padded per kernel tap */
};
typedef struct Aten {
	const char *target;  /* without "torch.ops." */
	int kind;            /* IR op, or -1 for nodes that import drops */
	const char *args;    /* argument schema (see atab.c) */
	int flags;           /* F_* */
	int hook;            /* H_* */
} Aten;
const Aten *aten_lookup(const char *target);
int aten_count(void);
const Aten *aten_entry(int i);
struct json_t;
void aten_node(Graph *g, struct json_t *node);

/* weights.c */
void blob_init(Blob *b);
char *blob_room(Blob *b, size_t n);
int64_t blob_commit(Blob *b, size_t n, char hash[17]);
int64_t blob_commit_as(Blob *b, size_t n, char hash[17], const char *name);
int64_t blob_ref(Blob *b, const char *p, size_t n, uint64_t h, char hash[17], const char *name);
uint64_t blob_finish(Blob *b);
int blob_write(const Blob *b, const char *path, Err *err);
void blob_free(Blob *b);
void tobytes(double v, int dtype, void *out);

#endif
