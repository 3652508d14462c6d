/* bound.c: bounded sizes: which ops carry a leading size known only at run
 * time (aten.nonzero's row count) and which refuse it (formats/ops.md,
 * "Bounded sizes"). */
#include <stdio.h>
#include <string.h>

#include "dpint.h"

int
dp_bndlen(const Fn *fn, int v)
{
	for (;;) {
		if (v < 0 || v >= fn->nval || !fn->val[v].t.bnd)
			return -1;
		int d = fn->val[v].def, k;
		if (d < 0 || d >= fn->nop)
			return -1;
		const Op *op = &fn->op[d];
		if (op->kind == Anonzero)
			return op->nout > 1 ? op->out[1] : -1;
		if (op->kind == Obound)
			return op->in[1];
		for (k = 0; k < op->nin && !fn->val[op->in[k]].t.bnd; k++)
			;
		if (k == op->nin)
			return -1;
		v = op->in[k];
	}
}

/* v without the copies that moved it between devices. */
static int
uncopied(const Fn *fn, int v)
{
	while (v >= 0 && v < fn->nval && fn->val[v].def >= 0 && fn->val[v].def < fn->nop &&
	       fn->op[fn->val[v].def].kind == Ocopy)
		v = fn->op[fn->val[v].def].in[0];
	return v;
}

/* The refusal: the op, the operand and why. */
static int
refuse(const Fn *fn, const Op *op, int k, const char *why, Err *err)
{
	char x[128];
	dp_seterr(err, "%s: operand %d (%s) has a leading size known only at run time (at most "
	          "%lld rows, from aten.nonzero or a boolean mask index), and %s; DevProc keeps "
	          "that length through elementwise ops, row gathers and views or reductions of the "
	          "other dims only (formats/ops.md, \"Bounded sizes\")", dp_op_name[op->kind], k,
	          dp_type_str(&fn->val[op->in[k]].t, 0, x, sizeof x),
	          (long long)fn->val[op->in[k]].t.dim[0], why);
	return -1;
}

/* Whether dims attribute key of op (an int or a list) names only dims
 * other than 0 of a rank-r operand, at least one. */
static int
notrows(const Op *op, const char *key, int r)
{
	const Attr *a = dp_attr(op, key);
	if (!a)
		return 0;
	if (a->kind == A_INT)
		return dp_axis(a->i, r) > 0;
	if (a->kind != A_INTS || a->n == 0)
		return 0;
	for (int i = 0; i < a->n; i++)
		if (dp_axis(a->ints[i], r) <= 0)
			return 0;
	return 1;
}

/* Elementwise (broadcasting): each bounded operand's rows are the
 * result's rows; an operand of the result's rank but not bounded
 * broadcasts along them (a leading size of 1). */
static int
elementwise(const Fn *fn, const Op *op, const Type *out, int64_t b, Err *err)
{
	for (int k = 0; k < op->nin; k++) {
		const Type *t = &fn->val[op->in[k]].t;
		if (t->bnd && (t->rank != out->rank || out->dim[0] != b))
			return refuse(fn, op, k, "it would be broadcast across its rows", err);
		if (!t->bnd && t->rank == out->rank && t->rank > 0 && t->dim[0] != 1) {
			for (int j = 0; j < op->nin; j++)
				if (fn->val[op->in[j]].t.bnd)
					return refuse(fn, op, j, "another operand has a static leading size "
					              "the run-time length need not equal", err);
		}
	}
	return 0;
}

/* Whether op keeps the rows of its bounded operand(s) as the result's
 * leading size: 1 yes, 0 no (why says why), -1 an error already set. */
static int
keeps(const Fn *fn, const Op *op, const Type *out, int k, int64_t b, const char **why, Err *err)
{
	const Type *x = &fn->val[op->in[k]].t;
	int form = dp_op_form[op->kind], cls = dp_op_class[op->kind];

	*why = "this op would need the run-time length";
	if (form == Fcopy || form == Fcast || form == Funary || form == Funaryn ||
	    form == Fbinary || form == Fbinaryn || form == Fcompare || form == Flogic ||
	    form == Fwhere || cls == Kelem)
		return elementwise(fn, op, out, b, err) ? -1 : 1;
	if (out->rank < 1 || out->dim[0] != b) {
		*why = form == Freduce ? "a reduction over its rows would need the run-time length" :
		       cls == Kshape ? "this reshaping would merge or move its rows" : *why;
		return 0;
	}
	switch (op->kind) {
	case Aview: case Areshape: case Oreshape: case Oflatten: case Aunflatten:
	case Aclone: case Aexpand:
		*why = "this reshaping would merge or move its rows";
		return x->rank >= 1;
	case Apermute: case Opermute: {
		const Attr *a = dp_attr(op, "dims");
		*why = "the permutation moves its rows";
		return a && a->n > 0 && dp_axis(a->ints[0], x->rank) == 0;
	}
	case Aslice: case Aselect:
		*why = "it slices or selects along its rows";
		return notrows(op, "dim", x->rank);
	case Aembedding:   /* rows of the weight by a bounded index */
		*why = "it gathers along its rows";
		return k == 1;
	case Aindex: case Aindexn:
		/* rows gathered by a bounded index at dim 0, or a bounded x's rows kept */
		*why = "it gathers along its rows";
		if (k == 0)
			return dp_geti(op, "dim", 0) > 0;
		return dp_geti(op, "dim", 0) == 0 && !fn->val[op->in[0]].t.bnd;
	}
	if (form == Freduce) {
		*why = "a reduction over its rows would need the run-time length";
		return notrows(op, "dim", x->rank);
	}
	return 0;
}

int
dp_bound_rule(const Fn *fn, const Op *op, Type *out, Err *err)
{
	int n = dp_op_nout[op->kind], first = -1, len = -1;
	int64_t b = 0;

	if ((op->kind == Oinput || op->kind == Oconst) && op->nout == 1 &&
	    fn->val[op->out[0]].t.bnd) {
		dp_seterr(err, "%s: its sizes are static; a bounded one (<=) is made by aten.nonzero "
		          "alone", dp_op_name[op->kind]);
		return -1;
	}
	for (int i = 0; i < n; i++)
		out[i].bnd = 0;
	if (op->kind == Anonzero || op->kind == Obound) {
		if (op->kind == Obound && fn->val[op->in[0]].t.bnd)
			return refuse(fn, op, 0, "it is bounded already", err);
		out[0].bnd = 1;
		return 0;
	}
	for (int k = 0; k < op->nin; k++) {
		const Type *t = &fn->val[op->in[k]].t;
		if (!t->bnd)
			continue;
		int l = dp_bndlen(fn, op->in[k]);
		if (first < 0) {
			first = k;
			len = l;
			b = t->dim[0];
		} else if (l != len || t->dim[0] != b) {
			return refuse(fn, op, k, "its length need not be that of the other bounded "
			              "operand (they come from different aten.nonzero or mask indexes)", err);
		}
	}
	if (first < 0)
		return 0;
	if (n != 1)
		return refuse(fn, op, first, "this op has several results", err);
	for (int k = first; k < op->nin; k++) {
		const char *why;
		if (!fn->val[op->in[k]].t.bnd)
			continue;
		int r = keeps(fn, op, out, k, b, &why, err);
		if (r < 0)
			return -1;
		if (!r)
			return refuse(fn, op, k, why, err);
	}
	out[0].bnd = 1;
	return 0;
}

int
dp_bound_ports(const Fn *fn, Err *err)
{
	for (int k = 0; k < fn->nout; k++) {
		const Port *p = &fn->out[k];
		if (!fn->val[p->val].t.bnd)
			continue;
		int len = dp_bndlen(fn, uncopied(fn, p->val));
		const Port *q = k + 1 < fn->nout ? &fn->out[k + 1] : NULL;
		size_t nl = strlen(p->name);
		if (!q || strncmp(q->name, p->name, nl) != 0 || strcmp(q->name + nl, "_n") != 0 ||
		    len < 0 || uncopied(fn, q->val) != uncopied(fn, len)) {
			dp_seterr(err, "output '%s' has a leading size known only at run time: the "
			          "next output must be its length, '%s_n'", p->name, p->name);
			return -1;
		}
	}
	return 0;
}
