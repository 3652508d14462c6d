/* optext.c: the one-line text form of an op, for comments in generated
 * code (the same text `devproc dump` prints, without placement). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi.h"

/* Appends f as the text IR prints it: the shortest form that reads back
 * to the same double, with a '.' or an exponent. */
static void
shortest(Str *s, double f)
{
	char buf[64];
	int prec;

	if (isnan(f) || isinf(f)) {
		str_put(s, isnan(f) ? "nan" : f < 0 ? "-inf" : "inf");
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, f);
		if (strtod(buf, NULL) == f)
			break;
	}
	snprintf(buf, sizeof buf, "%.*g", prec, f);
	if (!strpbrk(buf, ".e"))
		strcat(buf, ".0");
	str_put(s, buf);
}

/* Appends the text form of op: results, name, operands, attributes, type. */
void
op_text(Str *s, const Fn *fn, const Op *op)
{
	char buf[160];
	int k, j;

	for (k = 0; k < op->nout; k++)
		str_printf(s, "%s%%%d", k ? ", " : "", op->out[k]);
	str_printf(s, " = %s", dp_op_name[op->kind]);
	for (k = 0; k < op->nin; k++)
		str_printf(s, "%s %%%d", k ? "," : "", op->in[k]);
	for (k = 0, j = 0; k < op->nattr; k++) {
		const Attr *a = &op->attr[k];
		str_printf(s, "%s%s=", j++ ? ", " : " {", a->key);
		switch (a->kind) {
		case A_INT: str_printf(s, "%lld", (long long)a->i); break;
		case A_FLOAT: shortest(s, a->f); break;
		case A_STR:
			str_put(s, "\"");
			str_comment(s, a->s);
			str_put(s, "\"");
			break;
		case A_INTS: case A_FLOATS: {
			int e;
			str_put(s, "[");
			for (e = 0; e < a->n; e++) {
				str_put(s, e ? ", " : "");
				if (a->kind == A_INTS)
					str_printf(s, "%lld", (long long)a->ints[e]);
				else
					shortest(s, a->floats[e]);
			}
			str_put(s, "]");
			break;
		}
		}
	}
	if (j)
		str_put(s, "}");
	for (k = 0; k < op->nout; k++)
		str_printf(s, "%s%s", k ? ", " : " : ",
		           dp_type_str(&fn->val[op->out[k]].t, 0, buf, sizeof buf));
}
