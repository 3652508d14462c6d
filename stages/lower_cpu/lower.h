/* lower.h: private interfaces of the lower_cpu stage (buffer plan, kernel
 * emitters, file emitter). */
#ifndef LOWER_H
#define LOWER_H

#include "capi.h"
#include "dpir.h"

/* Where a value lives at run time. */
enum {
	H_NONE,            /* not planned yet */
	H_IN,              /* the caller's input buffer in[idx] */
	H_OUT,             /* the caller's output buffer out[idx] */
	H_CONST,           /* NAME_weights + idx (a byte offset) */
	H_ARENA,           /* arena + idx (a byte offset, 64-byte aligned) */
	H_VIEW,            /* the bytes of value base (no code, no copy) */
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
	int64_t arena;     /* arena size in bytes, a multiple of 64 */
} Plan;

/* plan.c: computes the static buffer plan of fn (memory owned by fn's
 * arena).  0, or -1 with err set. */
int plan(Fn *fn, Plan *p, Err *err);
/* Whether op kind k only reinterprets its operand's bytes (a reshape). */
int isreshape(const Fn *fn, const Op *op);
/* Whether op is a 2-D transpose (aten.t, or permute with dims [1,0]). */
int istranspose(const Fn *fn, const Op *op);

/* State of the code emitter for one function. */
typedef struct Ctx {
	Fn *fn;
	const Plan *plan;
	Str *top;          /* file-scope tables (normalize constants) */
	Str *body;         /* the schedule inside run() */
	char *used;        /* per value: named by generated code */
	Err *err;
} Ctx;

/* kernels.c: appends the statements of op i to c->body (a comment with
 * the op's text form first).  0, or -1 with c->err set when the cpu target
 * has no kernel for it. */
int emit_op(Ctx *c, int i);
/* The runtime's name of a dtype: "DPRT_F32". */
const char *dprt_enum(int dtype);
/* Appends the op's text form: "%5 = aten.linear %4, %1, %2 : f32[1,512]". */
void op_text(Str *s, const Fn *fn, const Op *op);

/* emit.c: the whole C file for fn (host schedule, prog descriptor, typed
 * API) into *out.  src is the input's base name, for the header comment.
 * 0, or -1 with err set. */
int emit_file(Fn *fn, const char *src, const char *dst, Str *out, Err *err);

#endif
