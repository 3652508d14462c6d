/* dpir.h: the DevProc IR library: types, values, ops, functions; DPIR
 * reading/writing (msgpack), text IR printing/parsing, verification. */
#ifndef DPIR_H
#define DPIR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DP_MAJOR 1     /* bumped only on structural change; others rejected */
#define DP_MINOR 0
#define DP_MAXRANK 8
#define DP_MAXOUT 3    /* the most results a non-imported op has (aten.lstm) */
#define DP_DYN (-1)    /* a size known only at run time ("?"): see dp_isdyn */
#define DP_MAXBYTES ((int64_t)1 << 40) /* the largest tensor, in bytes: 1 TiB */
#define DP_MAXBYTES_TEXT "1 TiB"

/* dtypes: X(enum, text name, bytes per element, PyTorch schema enum) */
#define DP_DTYPES(X) \
	X(DP_U8, "u8", 1, 1) X(DP_I8, "i8", 1, 2) X(DP_I16, "i16", 2, 3) \
	X(DP_I32, "i32", 4, 4) X(DP_I64, "i64", 8, 5) X(DP_F16, "f16", 2, 6) \
	X(DP_F32, "f32", 4, 7) X(DP_F64, "f64", 8, 8) X(DP_BOOL, "bool", 1, 12) \
	X(DP_BF16, "bf16", 2, 13)

#define DP_ENUM1(e, ...) e,
enum { DP_DTYPES(DP_ENUM1) DP_NDTYPE };

enum { DEV_CPU, DEV_CUDA, DEV_N };          /* devices; text names "cpu", "cuda" */
enum { D_CPU = 1 << DEV_CPU, D_CUDA = 1 << DEV_CUDA };

#include "ops.h"
#define DP_ENUM7(e, ...) e,
enum { DP_OPS(DP_ENUM7) DP_NOP };
#define DP_ENUM2(e, n) e,
enum { DP_CLASSES(DP_ENUM2) DP_NCLASS };
enum { DP_FORMS(DP_ENUM2) DP_NFORM };

/* A tensor type; a rank-0 tensor is a scalar.  A graph input of an image of
 * any size has DP_DYN sizes (u8[?,?,C]), and one of text (u8[?]); no
 * other value has them.  A bounded type (bnd, text "i64[<=12,2]") has a
 * leading size known only at run time: dim[0] is its bound B, buffers are
 * sized by it, and the run-time length n <= B is a rank-0 i64 value of
 * the program (dp_bndlen; formats/ops.md, "Bounded sizes"). */
typedef struct Type {
	uint8_t dtype;
	uint8_t dev;
	uint8_t rank;
	uint8_t bnd;       /* dim[0] is a bound, the length known at run time */
	int64_t dim[DP_MAXRANK];
} Type;

enum { A_INT, A_FLOAT, A_STR, A_INTS, A_FLOATS };

typedef struct Attr {
	const char *key;
	int kind;          /* A_* */
	int n;             /* element count of A_INTS / A_FLOATS */
	int64_t i;
	double f;
	const char *s;
	int64_t *ints;
	double *floats;
} Attr;

typedef struct Op {
	int kind;          /* O* / A* from ops.h */
	int nin, nout, nattr;
	int *in, *out;     /* value ids */
	Attr *attr;        /* sorted by key */
	uint8_t dev;       /* device that runs it (DEV_*) */
	int part;          /* partition index; -1 before partition */
	const char *rule;  /* why place chose dev; NULL before place */
	int line, col;     /* position in text IR, 0 when not from text */
} Op;

typedef struct Val {
	Type t;
	int def;           /* index of the defining op */
} Val;

typedef struct Port {      /* a named graph output */
	const char *name;
	int val;
} Port;

typedef struct Dep {       /* a file the IR was made from, and its content hash */
	const char *path;  /* as the user wrote it, never made absolute */
	const char *hash;
} Dep;

typedef struct Part {      /* a device partition (after partition) */
	uint8_t dev;
} Part;

typedef struct Arena Arena;

typedef struct Fn {
	Arena *arena;      /* owns everything below */
	const char *name;  /* pipeline name: a C identifier */
	const char *stage; /* stage that produced it */
	const char *weights; /* weight blob file name (no directory), or NULL */
	const char *whash; /* its content hash (hex) */
	int64_t wsize;     /* its size in bytes */
	Val *val; int nval, capval;
	Op *op; int nop, capop;
	Port *out; int nout, capout;
	Dep *dep; int ndep, capdep;
	Part *part; int npart, cappart;
} Fn;

/* An error from library code: a message and, for text, a position. */
typedef struct Err {
	int line, col;     /* 0 when not known */
	char msg[768];
} Err;

/* Tables, indexed by the enums above. */
extern const char *const dp_dtype_name[DP_NDTYPE];
extern const int dp_dtype_size[DP_NDTYPE];
extern const int dp_dtype_pt2[DP_NDTYPE];
extern const char *const dp_dev_name[DEV_N];
extern const char *const dp_op_name[DP_NOP];
extern const int dp_op_nin[DP_NOP];
extern const int dp_op_nout[DP_NOP];
extern const int dp_op_class[DP_NOP];
extern const int dp_op_devs[DP_NOP];
extern const char *const dp_op_attrs[DP_NOP];
extern const char *const dp_class_name[DP_NCLASS];
extern const int dp_op_form[DP_NOP];            /* F* */
extern const char *const dp_op_formula[DP_NOP]; /* see ops.h; "" for none */
extern const char *const dp_form_name[DP_NFORM];

int dp_dtype_lookup(const char *name);     /* -1 if unknown */
int dp_dtype_from_pt2(int e);              /* -1 if unknown */
int dp_dev_lookup(const char *name);
int dp_op_lookup(const char *name);
int dp_class_lookup(const char *name);

/* Memory. dp_alloc returns zeroed memory owned by the arena; on exhaustion
 * it aborts with a message (allocation sizes are checked for overflow). */
Arena *dp_arena_new(void);
void dp_arena_free(Arena *a);
void *dp_alloc(Arena *a, size_t n, size_t size);
char *dp_strdup(Arena *a, const char *s);
char *dp_strndup(Arena *a, const char *s, size_t n);

/* Building IR.  Op and Val pointers stay valid only until the next call that
 * adds an op or value; keep indices. */
Fn *dp_new(const char *name, const char *stage);
void dp_free(Fn *fn);
int dp_addval(Fn *fn, Type t, int def);
/* Appends an op with inputs in[0..nin-1] and no results yet; returns its index. */
int dp_addop(Fn *fn, int kind, const int *in, int nin);
/* Adds a result of type t to op; returns the new value id. */
int dp_addout(Fn *fn, int op, Type t);
void dp_seti(Fn *fn, int op, const char *key, int64_t v);
void dp_setf(Fn *fn, int op, const char *key, double v);
void dp_sets(Fn *fn, int op, const char *key, const char *v);
void dp_setints(Fn *fn, int op, const char *key, const int64_t *v, int n);
void dp_setfloats(Fn *fn, int op, const char *key, const double *v, int n);
void dp_addport(Fn *fn, const char *name, int val);
void dp_adddep(Fn *fn, const char *path, const char *hash);
int dp_addpart(Fn *fn, int dev);           /* returns the partition index */

/* Computes the result types of op from its inputs and attributes (filling
 * optional attributes with their defaults) and adds the results, on the
 * device of the first input (cpu when none).  0, or -1 with err set. */
int dp_infer(Fn *fn, int op, Err *err);
/* The same shape/dtype rule, into out[0..nout-1] (room for DP_MAXOUT)
 * without touching fn. */
int dp_rule(const Fn *fn, const Op *op, Type *out, Err *err);

/* bound.c: bounded sizes (formats/ops.md, "Bounded sizes").  The value
 * holding the run-time length of bounded value v: the count of the
 * aten.nonzero or the bound op it comes from (through the ops that keep
 * it, and copies); -1 when v is not bounded. */
int dp_bndlen(const Fn *fn, int v);
/* How op's results carry a bounded operand's length: sets bnd on out[]
 * (computed by the op's shape rule), or fails naming the op when it would
 * need the length in a way DevProc does not implement. */
int dp_bound_rule(const Fn *fn, const Op *op, Type *out, Err *err);
/* Checks that each bounded graph output is followed by the output of its
 * run-time length (NAME then NAME_n).  0, or -1 with err set. */
int dp_bound_ports(const Fn *fn, Err *err);

/* Facts of (legalized) IR both lowerings plan by: whether op only
 * reinterprets its operand's bytes (a reshape), whether it swaps the axes
 * of a matrix, whether operand k of op is read as a matrix through strides
 * (a transposed view of it is then free). */
int dp_isreshape(const Fn *fn, const Op *op);
int dp_istranspose(const Fn *fn, const Op *op);
int dp_matuse(const Fn *fn, const Op *op, int k);
/* The operand of two-operand op that is not v (its first when both are). */
int dp_other(const Op *op, int v);
/* Whether index_write op writes into the bytes of a state in place (its
 * operand 0 is the state, or views of it, read by nothing else but the
 * state's assigns): the state's value, else -1 (the lowerings then copy
 * operand 0 first). */
int dp_writesstate(const Fn *fn, const Op *op);
/* A recurrent layer's geometry (ops.h, RNN_OPS): G gates, nh state tensors
 * (2 for an LSTM), L layers, D directions, per parameters a layer and
 * direction, whether it has biases and a projection (w_hr), batch first;
 * T steps, B batch, I input features, H hidden, Hout the state h's
 * (H, or the projection's).  dp_rnnarg: the operand of parameter k (w_ih,
 * w_hh, b_ih, b_hh, w_hr) of layer l and direction d, or -1. */
typedef struct DpRnn {
	int G, nh, L, D, per, bias, proj, first;
	int64_t T, B, I, H, Hout;
} DpRnn;
int dp_rnn(const Fn *fn, const Op *op, DpRnn *r, Err *err);
int dp_rnnarg(const DpRnn *r, int l, int d, int k);
/* A legalized pool's kernel, stride, padding, dilation pairs; -1 if absent. */
int dp_poolwin(const Op *op, int64_t k[2], int64_t s[2], int64_t p[2], int64_t d[2]);

/* The letters of an einsum equation of n (1 or 2) operands: lab[0..n-1]
 * the operands', lab[2] the output's; 0, or -1 when DevProc cannot take it. */
int dp_einsum(const char *eq, int n, char lab[3][DP_MAXRANK + 1]);

/* The scalar formula of an elementwise op (formats/ops.h): its name (for
 * runtime/dpscalar.h's dps_NAME) and its parameters a, b. */
void dp_formula(const Op *op, char *name, size_t n, double p[2]);

/* The size resize(size=...) gives an h x w image before its crop: [s]
 * scales the shorter side to s and the longer to trunc(s * long / short)
 * (torchvision's Resize(s)); [h, w] is exact.  The runtime's copy is
 * dprt_resize's. */
void dp_resize_size(int64_t h, int64_t w, const int64_t *size, int nsize, int64_t *oh,
                    int64_t *ow);

/* Attribute access: NULL / default when absent. */
const Attr *dp_attr(const Op *op, const char *key);
int64_t dp_geti(const Op *op, const char *key, int64_t def);
/* A per-spatial-axis (h, w) attribute of verified IR: 1 value for both, 2,
 * or none (an empty list too) for def. */
void dp_pair(const Op *op, const char *key, int64_t def, int64_t out[2]);
double dp_getf(const Op *op, const char *key, double def);
const char *dp_gets(const Op *op, const char *key);

/* Types.  A type with DP_DYN sizes has no static size: numel and nbytes
 * give 0 for it (nothing is planned for it; its memory is the caller's). */
int64_t dp_numel(const Type *t);               /* -1 when a product of sizes overflows */
int64_t dp_nbytes(const Type *t);              /* -1 on overflow or above DP_MAXBYTES */
int dp_isdyn(const Type *t);                   /* whether a size is DP_DYN */
int dp_istext(const Type *t);                  /* u8[?]: text of any length */
int dp_type_eq(const Type *a, const Type *b);  /* dtype, shape and device */
/* Element strides of t read at the index of shape out (numpy broadcasting:
 * axes aligned on the right, 0 where t's axis is 1 or missing). */
void dp_bstrides(const Type *t, const Type *out, int64_t *s);
/* Formats "f32[1,512] @cpu" into buf (with the device when dev is nonzero);
 * a DP_DYN size prints as "?". */
char *dp_type_str(const Type *t, int dev, char *buf, size_t n);

/* Checks SSA, attribute kinds, the shape/dtype rule of every op, device
 * legality (each op on a device that can run it; once partitioned, operands
 * on the op's device and outputs on the cpu: copies explicit) and the
 * outputs.  0, or -1 with err naming the op. */
int dp_verify(const Fn *fn, Err *err);

/* entry.c: a program's entry points (formats/dp.md, "Entries").  Fills
 * e[0..nop-1] with each op's entry, 1..n, n the count returned: an input's
 * from its "entry" attribute (numbered in order of first appearance, the
 * names into names[0..n-1] unless NULL), another op's from its operands',
 * one reading no entry's value from its readers'; 0 for constants (shared).
 * 0 (every e[i] 0) when no input names an entry; -1 with err when an op
 * reads two entries' values, is read by two, or an input or output belongs
 * to none. */
int dp_entries(const Fn *fn, int *e, const char **names, Err *err);

/* DPIR (msgpack).  Encoding canonicalizes nothing and is deterministic.
 * dp_read verifies after decoding; dp_write verifies before encoding and
 * writes only when the bytes differ from the file's (temp file + rename). */
int dp_encode(const Fn *fn, char **buf, size_t *len, Err *err); /* *buf from malloc */
int dp_decode(const char *buf, size_t len, Fn **fn, Err *err);
int dp_read(const char *path, Fn **fn, Err *err);
int dp_write(const char *path, const Fn *fn, Err *err);

/* Text IR. dp_parse verifies the result; errors carry line:col. */
int dp_print(FILE *f, const Fn *fn);
int dp_parse(const char *text, size_t len, Fn **fn, Err *err);
/* The same without verifying (for tools that test the verifier). */
int dp_parse_raw(const char *text, size_t len, Fn **fn, Err *err);

/* Renumbers values in definition order (op order, results in order) so that
 * printing and encoding are canonical.  Call before writing new IR. */
void dp_canon(Fn *fn);

/* Files. */
/* Reads a whole file into malloc'd memory (NUL-terminated). 0 or -1. */
int dp_slurp(const char *path, char **buf, size_t *len, Err *err);
/* Writes buf to path atomically (temp file in the same folder, fsync-free
 * rename), skipping the write when the file already holds these bytes. */
int dp_write_file(const char *path, const void *buf, size_t len, Err *err);
/* The same for the concatenation of segs (a NULL p: n zero bytes), which is
 * compared with the file in chunks and written without being joined. */
typedef struct DpSeg {
	const void *p;
	size_t n;
} DpSeg;
int dp_write_segs(const char *path, const DpSeg *segs, int nseg, Err *err);
/* 64-bit FNV-1a content hash, as 16 lowercase hex digits into out[17]. */
uint64_t dp_hash(const void *p, size_t n, uint64_t h);
#define DP_HASH_INIT 0xcbf29ce484222325ULL
void dp_hash_hex(uint64_t h, char out[17]);
/* The weight hash (formats/weights.md): 64 bits of tensor data hashed 32
 * bytes a step in four independent lanes, several GB/s where FNV-1a does
 * one byte a step; streamed through init/add/end, or all at once. */
typedef struct DpWhash {
	uint64_t v[4];     /* the lanes */
	uint64_t len;      /* bytes added */
	unsigned char buf[32];   /* a partial stripe */
	size_t nbuf;
} DpWhash;
void dp_whash_init(DpWhash *s);
void dp_whash_add(DpWhash *s, const void *p, size_t n);
uint64_t dp_whash_end(DpWhash *s);
uint64_t dp_whash(const void *p, size_t n);

/* Target mappings (formats/target.md): devices present, placement rules,
 * tunables. */
enum { R_DEFAULT, R_CLASS, R_OP };
typedef struct Rule {
	int what;          /* R_* */
	int key;           /* class or op kind */
	int dev;
	int line;          /* in the mapping file */
} Rule;

typedef struct Tune {
	char key[32];
	char val[128];
	int line, col;     /* of the value, in the mapping file */
} Tune;

typedef struct Target {
	char name[64];
	int devs;          /* D_* bits of the devices present */
	char arch[16];     /* cuda arch, e.g. sm_90 */
	Rule rule[256]; int nrule;
	Tune tune[32]; int ntune;
} Target;

/* Reads a mapping file; errors carry line:col. */
int dp_target_parse(const char *text, size_t len, Target *t, Err *err);
int dp_target_read(const char *path, Target *t, Err *err);
/* Chooses the device for an op kind: the last matching op rule, else the
 * last matching class rule, else the default; an op that cannot run on the
 * chosen device goes to the cpu.  why receives the reason, e.g.
 * "class matmul -> cuda (line 7)". */
int dp_target_place(const Target *t, const char *file, int kind, char *why, size_t n);
/* A tunable's value, or def. */
const char *dp_target_tune(const Target *t, const char *key, const char *def);
/* The line and column of the value dp_target_tune gives for key (the last
 * line naming it); 0 and 0 where the mapping has none. */
void dp_target_tune_at(const Target *t, const char *key, int *line, int *col);

/* Reporting for stage mains: prints "file:line:col: stage: msg" (or
 * "file: stage: msg" when err has no position) to stderr. */
void dp_report(const char *file, const char *stage, const Err *err);
void dp_seterr(Err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dp_seterr_at(Err *err, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Internal error: prints "internal error: file:line: msg" and aborts. */
#define dp_die(...) dp_die_at(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void dp_die_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
