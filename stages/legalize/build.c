/* build.c: the builder of the legalized function: ops appended with their
 * result types inferred by the shared rules, and ops copied unchanged. */
#include <stdarg.h>
#include <stdio.h>

#include "legalize.h"

const Type *
lz_type(const Lz *z, int v)
{
	return &z->out->val[v].t;
}

int
lz_begin(Lz *z, int kind, const int *in, int n)
{
	int k = dp_addop(z->out, kind, in, n);
	const Op *src = &z->in->op[z->at];

	z->out->op[k].line = src->line;
	z->out->op[k].col = src->col;
	return k;
}

int
lz_end(Lz *z, int op)
{
	Err e = {0};

	if (dp_infer(z->out, op, &e) != 0)
		return lz_fail(z, "%s", e.msg);
	return z->out->op[op].out[0];
}

int
lz_op1(Lz *z, int kind, int x)
{
	return x < 0 ? -1 : lz_end(z, lz_begin(z, kind, &x, 1));
}

int
lz_op2(Lz *z, int kind, int a, int b)
{
	int in[2] = { a, b };

	return a < 0 || b < 0 ? -1 : lz_end(z, lz_begin(z, kind, in, 2));
}

int
lz_view(Lz *z, int x, const int64_t *size, int n)
{
	int k;

	if (x < 0)
		return -1;
	k = lz_begin(z, Aview, &x, 1);
	dp_setints(z->out, k, "size", size, n);
	return lz_end(z, k);
}

int
lz_permute(Lz *z, int x, const int64_t *dims, int n)
{
	int k;

	if (x < 0)
		return -1;
	k = lz_begin(z, Apermute, &x, 1);
	dp_setints(z->out, k, "dims", dims, n);
	return lz_end(z, k);
}

int
lz_slice(Lz *z, int x, int dim, int64_t start, int64_t end, int64_t step)
{
	int k;

	if (x < 0)
		return -1;
	k = lz_begin(z, Aslice, &x, 1);
	dp_seti(z->out, k, "dim", dim);
	dp_seti(z->out, k, "start", start);
	dp_seti(z->out, k, "end", end);
	dp_seti(z->out, k, "step", step);
	return lz_end(z, k);
}

int
lz_cat(Lz *z, const int *xs, int n, int dim)
{
	int k, i;

	for (i = 0; i < n; i++)
		if (xs[i] < 0)
			return -1;
	if (n == 1)
		return xs[0];
	k = lz_begin(z, Acat, xs, n);
	dp_seti(z->out, k, "dim", dim);
	return lz_end(z, k);
}

int
lz_scalar(Lz *z, double v, int dtype)
{
	int k = lz_begin(z, Ascalar, NULL, 0);

	dp_setf(z->out, k, "value", v);
	dp_sets(z->out, k, "dtype", dp_dtype_name[dtype]);
	return lz_end(z, k);
}

int
lz_expand(Lz *z, int x, const int64_t *size, int n)
{
	int k;

	if (x < 0)
		return -1;
	k = lz_begin(z, Aexpand, &x, 1);
	dp_setints(z->out, k, "size", size, n);
	return lz_end(z, k);
}

int
lz_copy(Lz *z, const Op *op)
{
	int in[64], *pin = in, j, k;

	if (op->nin > 64)
		pin = dp_alloc(z->out->arena, (size_t)op->nin, sizeof *pin);
	for (j = 0; j < op->nin; j++)
		pin[j] = z->map[op->in[j]];
	k = lz_begin(z, op->kind, pin, op->nin);
	for (j = 0; j < op->nattr; j++) {
		const Attr *a = &op->attr[j];
		switch (a->kind) {
		case A_INT: dp_seti(z->out, k, a->key, a->i); break;
		case A_FLOAT: dp_setf(z->out, k, a->key, a->f); break;
		case A_STR: dp_sets(z->out, k, a->key, a->s); break;
		case A_INTS: dp_setints(z->out, k, a->key, a->ints, a->n); break;
		case A_FLOATS: dp_setfloats(z->out, k, a->key, a->floats, a->n); break;
		}
	}
	z->out->op[k].dev = op->dev;
	z->out->op[k].part = op->part;
	z->out->op[k].rule = op->rule;
	for (j = 0; j < op->nout; j++)
		z->map[op->out[j]] = dp_addout(z->out, k, z->in->val[op->out[j]].t);
	return 0;
}

int
lz_fail(Lz *z, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	const Op *op = &z->in->op[z->at];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (op->line)
		dp_seterr_at(z->err, op->line, op->col, "op %d (%s): %s", z->at,
		             dp_op_name[op->kind], msg);
	else
		dp_seterr(z->err, "op %d (%s): %s", z->at, dp_op_name[op->kind], msg);
	return -1;
}
