/* dpint.h: internals shared by the IR library's files (not for stages). */
#ifndef DPINT_H
#define DPINT_H

#include "dpir.h"

typedef struct Spec {      /* one entry of an op's attribute schema */
	char key[32];
	int klen;
	int kind;          /* A_* */
	int optional;
	int hasdef;        /* optional with a default (key:kind=def); else absent means none */
	double def;        /* default of an optional int/float */
} Spec;

int dp_spec(int kind, int i, Spec *s);
int dp_check_attrs(const Op *op, Err *err);
void dp_fix_attrs(Fn *fn, int op);
/* Helpers of the shape rules (infer.c): a dtype is floating point; axis d
 * normalized for rank r (-1 when out of range); errors naming the op and its
 * operand types; numpy broadcasting; equal dtypes; a float operand. */
int dp_isfloat(int dt);
int dp_axis(int64_t d, int r);
int dp_failt(Err *err, const Op *op, const char *msg, const Type *a, const Type *b);
int dp_bcast(Err *err, const Op *op, const Type *a, const Type *b, Type *out);
int dp_samedt(Err *err, const Op *op, const Type *a, const Type *b);
int dp_needfloat(Err *err, const Op *op, const Type *t);

/* Shape rules of the neural-network ops (rules.c); -2 when kind is not one. */
int dp_rule_nn(const Fn *fn, const Op *op, Type *out, Err *err);
/* Shape rules of the image ops (image.c), into out[0..nout-1]; -2 when kind
 * is not one.  dp_rule_dyninput checks an input op's type of unknown size. */
int dp_rule_image(const Fn *fn, const Op *op, Type *out, Err *err);
int dp_rule_dyninput(const Op *op, const Type *t, Err *err);

#endif
