/* build.c: the builder of the legalized function: ops appended with their
 * result types inferred by the shared rules, and ops copied unchanged. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
	if (n > LZ_CATMAX) {   /* a cat of cats of at most LZ_CATMAX each */
		int m = (n + LZ_CATMAX - 1) / LZ_CATMAX, *ys = dp_alloc(z->out->arena, (size_t)m, sizeof *ys);
		for (i = 0; i < m; i++)
			ys[i] = lz_cat(z, xs + i * LZ_CATMAX, i + 1 < m ? LZ_CATMAX : n - i * LZ_CATMAX, dim);
		return lz_cat(z, ys, m, dim);
	}
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

void
lz_readpast(Lz *z, int k)
{
	int *d = dp_alloc(z->out->arena, (size_t)z->ndrop + 1, sizeof *d);

	if (z->ndrop)
		memcpy(d, z->drop, (size_t)z->ndrop * sizeof *d);
	d[z->ndrop++] = k;
	z->drop = d;
}

void
lz_dropdead(Lz *z)
{
	Fn *fn = z->out;
	int *use = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *use);
	int *map = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *map);
	char *mark = dp_alloc(fn->arena, (size_t)fn->nop + 1, 1);
	char *dead = dp_alloc(fn->arena, (size_t)fn->nop + 1, 1);
	int i, k, n = 0, nv = 0, any = 0;

	for (i = 0; i < z->ndrop; i++)
		mark[z->drop[i]] = 1;
	for (i = 0; i < fn->nop; i++)
		for (k = 0; k < fn->op[i].nin; k++)
			use[fn->op[i].in[k]]++;
	for (i = 0; i < fn->nout; i++)
		use[fn->out[i].val]++;
	for (i = fn->nop - 1; i >= 0; i--) {   /* readers first: whole chains go */
		const Op *op = &fn->op[i];
		if (!mark[i] || op->nout != 1 || use[op->out[0]] != 0)
			continue;
		dead[i] = 1, any = 1;
		for (k = 0; k < op->nin; k++)
			use[op->in[k]]--;
	}
	if (!any)
		return;
	for (i = 0; i < fn->nval; i++)   /* a value no op defines stays (the verifier's) */
		map[i] = fn->val[i].def < 0 ? 0 : -1;
	for (i = 0; i < fn->nop; i++)   /* the values that stay, in their order */
		if (!dead[i])
			for (k = 0; k < fn->op[i].nout; k++)
				map[fn->op[i].out[k]] = 0;
	for (i = 0; i < fn->nval; i++)
		if (map[i] == 0) {
			fn->val[nv] = fn->val[i];
			map[i] = nv++;
		}
	for (i = 0; i < fn->nop; i++) {
		Op *op = &fn->op[i];
		if (dead[i])
			continue;
		for (k = 0; k < op->nin; k++)
			op->in[k] = map[op->in[k]];
		for (k = 0; k < op->nout; k++) {
			op->out[k] = map[op->out[k]];
			fn->val[op->out[k]].def = n;
		}
		fn->op[n++] = *op;
	}
	fn->nop = n;
	fn->nval = nv;
	for (i = 0; i < fn->nout; i++)
		fn->out[i].val = map[fn->out[i].val];
}
