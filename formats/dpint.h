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
/* Shape rules of the neural-network ops (rules.c); -2 when kind is not one. */
int dp_rule_nn(const Fn *fn, const Op *op, Type *out, Err *err);

#endif
