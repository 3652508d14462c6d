/* legalize.h: private interfaces of the legalize stage: the builder that
 * copies IR op by op into a new function (build.c) and the rewrite table
 * (rules.c). */
#ifndef LEGALIZE_H
#define LEGALIZE_H

#include "dpir.h"

/* The state of one legalization: ops of in are copied into out, in order,
 * or replaced by the ops their rewrite rule emits. */
typedef struct Lz {
	const Fn *in;
	Fn *out;
	int *map;          /* per value of in: its value in out */
	int at;            /* the op of in being rewritten */
	Err *err;
	int *drop, ndrop;  /* ops of out a rewrite read past (lz_dropdead) */
} Lz;

/* build.c */
/* The type of out value v. */
const Type *lz_type(const Lz *z, int v);
/* Appends op kind on out values in[0..n-1]; set its attributes with the
 * dp_set* calls, then lz_end gives its result.  Returns the op index. */
int lz_begin(Lz *z, int kind, const int *in, int n);
/* Infers op's result types; its first result, or -1 with z->err set. */
int lz_end(Lz *z, int op);
/* Shorthands: one op on operands, no attributes; its first result or -1. */
int lz_op1(Lz *z, int kind, int x);
int lz_op2(Lz *z, int kind, int a, int b);
/* aten.view of x to size[0..n-1]. */
int lz_view(Lz *z, int x, const int64_t *size, int n);
/* aten.permute of x by dims[0..n-1]. */
int lz_permute(Lz *z, int x, const int64_t *dims, int n);
/* aten.slice of x along dim: [start, end) by step. */
int lz_slice(Lz *z, int x, int dim, int64_t start, int64_t end, int64_t step);
/* aten.cat of xs[0..n-1] along dim; of more than LZ_CATMAX, a cat of cats
 * of at most LZ_CATMAX each (a kernel reads each operand through a
 * parameter of its own: lower_gpu keeps a kernel's reads bounded). */
enum { LZ_CATMAX = 256 };
int lz_cat(Lz *z, const int *xs, int n, int dim);
/* x cast to dtype (x itself when it has that dtype already, or x < 0). */
int lz_cast(Lz *z, int x, int dtype);
/* aten.arange(n) in i64: 0, 1, ..., n - 1. */
int lz_arange(Lz *z, int64_t n);
/* A rank-0 tensor of value v in dtype. */
int lz_scalar(Lz *z, double v, int dtype);
/* aten.expand of x to size[0..n-1]. */
int lz_expand(Lz *z, int x, const int64_t *size, int n);
/* Copies op (attributes, result types) with its operands mapped. */
int lz_copy(Lz *z, const Op *op);
/* Marks op k of out as read past: lz_dropdead drops it where nothing
 * reads its result. */
void lz_readpast(Lz *z, int k);
/* Drops the ops marked by lz_readpast whose results nothing reads (and the
 * marked ops only they read), renumbering the values. */
void lz_dropdead(Lz *z);
/* An error about the op being rewritten: "op N (NAME): message". */
int lz_fail(Lz *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* rules.c */
/* Rewrites op (an op of z->in) into z->out: maps its results.  0 or -1. */
int rewrite(Lz *z, const Op *op);
/* Prints the rewrite table (dp-legalize --rules). */
void print_rules(FILE *f);

/* more.c: rewrites of the table in rules.c */
int r_topk(Lz *z, const Op *op);
int r_prod(Lz *z, const Op *op);
int r_bnstats(Lz *z, const Op *op);
int r_cdist(Lz *z, const Op *op);
int r_histc(Lz *z, const Op *op);
int r_groupedmm(Lz *z, const Op *op);
int r_pdist(Lz *z, const Op *op);
int r_maskscat(Lz *z, const Op *op);
int r_embbag(Lz *z, const Op *op);
int r_col2im(Lz *z, const Op *op);
int r_gridsamp(Lz *z, const Op *op);

/* attn.c */
int r_sdpa(Lz *z, const Op *op);
/* rnn.c */
int r_rnn(Lz *z, const Op *op);
int r_rnncell(Lz *z, const Op *op);

#endif
