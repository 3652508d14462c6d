/* rules.c: shape/dtype rules of the neural-network ops (NN_OPS in ops.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpir.h"
#include "dpint.h"

#define NAME dp_op_name[op->kind]

static int
isint(int dt)
{
	return dt == DP_U8 || dt == DP_I8 || dt == DP_I16 || dt == DP_I32 || dt == DP_I64;
}

static int
fail(Err *err, const Op *op, const char *msg)
{
	dp_seterr(err, "%s: %s", NAME, msg);
	return -1;
}

/* Numpy broadcasting of a and b into out (dtype from a). */
/* A per-spatial-axis list attribute (1 or 2 entries; empty gives def). */
static int
pair(Err *err, const Op *op, const char *key, int64_t def, int64_t out[2])
{
	const Attr *a = dp_attr(op, key);
	if (a && a->n > 2) {
		dp_seterr(err, "%s: %s needs 1 or 2 values, got %d", NAME, key, a->n);
		return -1;
	}
	dp_pair(op, key, def, out);
	return 0;
}

/* Output size of a sliding window over n (pooling/convolution rule). */
static int64_t
window(int64_t n, int64_t k, int64_t s, int64_t p, int64_t d, int ceil)
{
	/* PyTorch's: the quotient rounded down (ceil_mode: up), so that a
	 * window larger than the padded input still gives one output in
	 * ceil_mode; the last window must start inside the input or its left
	 * padding */
	int64_t span = n + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0);
	int64_t o = (span >= 0 ? span / s : -((-span + s - 1) / s)) + 1;
	if (ceil && (o - 1) * s >= n + p)
		o--;
	return o > 0 ? o : 0;
}

static int ntuple(Err *err, const Op *op, const char *key, int64_t def, int n, int64_t *out);

/* 1-D, 2-D and 3-D convolution: the window rule over the last rank - 2
 * dims (dp-legalize makes 1-D and 3-D ones 2-D). */
static int
conv(const Fn *fn, const Op *op, Type *out, Err *err)
{
	if (op->nin != 2 && op->nin != 3)
		return fail(err, op, "takes 2 or 3 operands (input, weight[, bias])");
	const Type *x = &fn->val[op->in[0]].t, *w = &fn->val[op->in[1]].t;
	if (dp_samedt(err, op, x, w) || dp_needfloat(err, op, x))
		return -1;
	if (x->rank < 3 || x->rank > 5 || w->rank != x->rank)
		return dp_failt(err, op, "only 1-D, 2-D and 3-D convolution (rank-3, -4 or -5 input "
		                "and weight alike) is supported", x, w);
	int n = x->rank - 2, tr = dp_geti(op, "transposed", 0) != 0;
	int64_t g = dp_geti(op, "groups", 1), st[3], pd[3], dl[3], op3[3];
	if (ntuple(err, op, "stride", 1, n, st) || ntuple(err, op, "padding", 0, n, pd) ||
	    ntuple(err, op, "dilation", 1, n, dl) || ntuple(err, op, "output_padding", 0, n, op3))
		return -1;
	if (tr ? g < 1 || x->dim[1] % g || w->dim[0] != x->dim[1] :
	    g < 1 || x->dim[1] % g || w->dim[0] % g || w->dim[1] * g != x->dim[1])
		return dp_failt(err, op, "channels do not match the weight and groups", x, w);
	for (int i = 0; i < n; i++)
		if (st[i] < 1 || dl[i] < 1 || pd[i] < 0 || op3[i] < 0 ||
		    (op3[i] && op3[i] >= st[i] && op3[i] >= dl[i]))
			return fail(err, op, "stride and dilation must be >= 1, padding >= 0, output "
			            "padding below the stride or the dilation");
	if (op->nin == 3) {
		const Type *b = &fn->val[op->in[2]].t;
		if (dp_samedt(err, op, x, b))
			return -1;
		if (b->rank != 1 || (!tr && b->dim[0] != w->dim[0]))
			return dp_failt(err, op, "bias does not match the weight", b, w);
	}
	*out = *x;
	out->dim[1] = tr ? w->dim[1] * g : w->dim[0];
	for (int i = 0; i < n; i++) {
		out->dim[2 + i] = tr ? (x->dim[2 + i] - 1) * st[i] - 2 * pd[i] +
		                       dl[i] * (w->dim[2 + i] - 1) + op3[i] + 1 :
		                  window(x->dim[2 + i], w->dim[2 + i], st[i], pd[i], dl[i], 0);
		if (out->dim[2 + i] < 1)
			return dp_failt(err, op, tr ? "the padding is larger than the transposed "
			                "convolution's output" : "the kernel is larger than the padded input",
			                x, w);
	}
	if (tr && op->nin == 3 && fn->val[op->in[2]].t.dim[0] != out->dim[1])
		return dp_failt(err, op, "bias does not match the output channels",
		                &fn->val[op->in[2]].t, w);
	return 0;
}

static int
pool(const Op *op, const Type *x, Type *out, Err *err)
{
	if (dp_needfloat(err, op, x))
		return -1;
	if (x->rank != 3 && x->rank != 4)
		return dp_failt(err, op, "input must be [N,]C,H,W", x, NULL);
	int64_t k[2], st[2], pd[2], dl[2];
	if (pair(err, op, "kernel_size", 1, k) || pair(err, op, "padding", 0, pd) ||
	    pair(err, op, "dilation", 1, dl))
		return -1;
	const Attr *s = dp_attr(op, "stride");
	if (s && s->n == 0) {
		st[0] = k[0];
		st[1] = k[1];
	} else if (pair(err, op, "stride", 1, st))
		return -1;
	for (int i = 0; i < 2; i++) {
		if (k[i] < 1 || st[i] < 1 || dl[i] < 1 || pd[i] < 0)
			return fail(err, op, "kernel, stride, dilation must be >= 1, padding >= 0");
		if (pd[i] * 2 > k[i])
			return fail(err, op, "padding must be at most half the kernel size");
	}
	int h = x->rank - 2;
	*out = *x;
	for (int i = 0; i < 2; i++) {
		out->dim[h + i] = window(x->dim[h + i], k[i], st[i], pd[i], dl[i],
		                         (int)dp_geti(op, "ceil_mode", 0));
		if (out->dim[h + i] < 1)
			return dp_failt(err, op, "the window is larger than the padded input", x, NULL);
	}
	return 0;
}

/* The n values of a 1-D or 3-D pooling attribute (one value: n times;
 * none: def, or the kernel for a stride). */
static int
ntuple(Err *err, const Op *op, const char *key, int64_t def, int n, int64_t *out)
{
	const Attr *a = dp_attr(op, key);

	if (a && a->n != 0 && a->n != 1 && a->n != n) {
		dp_seterr(err, "%s: %s needs 1 or %d values, got %d", NAME, key, n, a->n);
		return -1;
	}
	for (int i = 0; i < n; i++)
		out[i] = !a || a->n == 0 ? def : a->ints[a->n == 1 ? 0 : i];
	return 0;
}

/* 1-D and 3-D pooling (composites): the window rule over the last n dims
 * of a rank n + 1 or n + 2 input. */
static int
pooln(const Op *op, const Type *x, int n, Type *out, Err *err)
{
	int64_t k[3], st[3], pd[3], dl[3];
	int adapt = op->kind == Aadaptavg1 || op->kind == Aadaptavg3, h = x->rank - n;

	if (dp_needfloat(err, op, x))
		return -1;
	if (x->rank != n + 1 && x->rank != n + 2)
		return dp_failt(err, op, n == 1 ? "input must be [N,]C,L" : "input must be [N,]C,D,H,W",
		                x, NULL);
	*out = *x;
	if (adapt) {
		const Attr *o = dp_attr(op, "output_size");
		if (o->n != n)
			return fail(err, op, n == 1 ? "output_size needs 1 value" : "output_size needs 3 values");
		for (int i = 0; i < n; i++) {
			if (o->ints[i] < 1)
				return fail(err, op, "output_size must be positive");
			out->dim[h + i] = o->ints[i];
		}
		return 0;
	}
	if (ntuple(err, op, "kernel_size", 1, n, k) || ntuple(err, op, "padding", 0, n, pd) ||
	    ntuple(err, op, "dilation", 1, n, dl) || ntuple(err, op, "stride", 0, n, st))
		return -1;
	if (dp_attr(op, "divisor_override"))
		return fail(err, op, "divisor_override is not supported");
	for (int i = 0; i < n; i++) {
		if (st[i] == 0)
			st[i] = k[i];
		if (k[i] < 1 || st[i] < 1 || dl[i] < 1 || pd[i] < 0)
			return fail(err, op, "kernel, stride, dilation must be >= 1, padding >= 0");
		if (pd[i] * 2 > k[i])
			return fail(err, op, "padding must be at most half the kernel size");
		out->dim[h + i] = window(x->dim[h + i], k[i], st[i], pd[i], dl[i],
		                         (int)dp_geti(op, "ceil_mode", 0));
		if (out->dim[h + i] < 1)
			return dp_failt(err, op, "the window is larger than the padded input", x, NULL);
	}
	return 0;
}

/* Reduction over dims (empty: all) of x. */
static int
reduce(const Op *op, const Type *x, Type *out, Err *err)
{
	const Attr *d = dp_attr(op, "dim");
	int keep = (int)dp_geti(op, "keepdim", 0), red[DP_MAXRANK] = { 0 };
	if (d->n == 0)
		for (int i = 0; i < x->rank; i++)
			red[i] = 1;
	for (int i = 0; i < d->n; i++) {
		int a = dp_axis(d->ints[i], x->rank ? x->rank : 1);
		if (a < 0)
			return fail(err, op, "dim is out of range");
		if (red[a]++)
			return fail(err, op, "dim repeats an axis");
	}
	*out = *x;
	int r = 0;
	for (int i = 0; i < x->rank; i++) {
		if (!red[i])
			out->dim[r++] = x->dim[i];
		else if (keep)
			out->dim[r++] = 1;
	}
	out->rank = (uint8_t)r;
	return 0;
}

/* normalized_shape must equal x's trailing dims; weight/bias that shape. */
static int
lnorm(const Fn *fn, const Op *op, Type *out, Err *err, int maxin)
{
	if (op->nin < 1 || op->nin > maxin)
		return fail(err, op, maxin == 3 ? "takes 1 to 3 operands (input[, weight[, bias]])"
		                                 : "takes 1 or 2 operands (input[, weight])");
	const Type *x = &fn->val[op->in[0]].t;
	const Attr *ns = dp_attr(op, "normalized_shape");
	if (dp_needfloat(err, op, x))
		return -1;
	if (ns->n < 1 || ns->n > x->rank)
		return dp_failt(err, op, "normalized_shape does not fit the input", x, NULL);
	for (int i = 0; i < ns->n; i++)
		if (ns->ints[i] != x->dim[x->rank - ns->n + i])
			return dp_failt(err, op, "normalized_shape is not the input's trailing shape", x, NULL);
	for (int k = 1; k < op->nin; k++) {
		const Type *w = &fn->val[op->in[k]].t;
		if (dp_samedt(err, op, x, w))
			return -1;
		int okshape = w->rank == ns->n;
		for (int i = 0; okshape && i < ns->n; i++)
			okshape = w->dim[i] == ns->ints[i];
		if (!okshape)
			return dp_failt(err, op, "weight/bias must have the normalized shape", w, NULL);
	}
	*out = *x;
	return 0;
}

static int
sdpa(const Fn *fn, const Op *op, Type *out, Err *err)
{
	if (op->nin != 3 && op->nin != 4)
		return fail(err, op, "takes 3 or 4 operands (query, key, value[, mask])");
	const Type *q = &fn->val[op->in[0]].t, *k = &fn->val[op->in[1]].t, *v = &fn->val[op->in[2]].t;
	if (dp_samedt(err, op, q, k) || dp_samedt(err, op, q, v) || dp_needfloat(err, op, q))
		return -1;
	if (q->rank < 2 || k->rank != q->rank || v->rank != q->rank)
		return dp_failt(err, op, "query, key and value must have the same rank >= 2", q, k);
	int r = q->rank, gqa = (int)dp_geti(op, "enable_gqa", 0);
	/* a key's or value's batch dim of 1 is read for every query batch
	 * entry (grouped heads, dp-legalize); with enable_gqa the heads (dim
	 * -3) of the query are groups of as many heads of the key and value */
	if (gqa && (r < 3 || k->dim[r - 3] != v->dim[r - 3] || k->dim[r - 3] < 1 ||
	            q->dim[r - 3] % k->dim[r - 3] != 0))
		return dp_failt(err, op, "enable_gqa: the query's heads (dim -3) must be a multiple "
		                "of the key's and value's, which must be equal", q, k);
	for (int i = 0; i < r - 2; i++) {
		if (gqa && i == r - 3)
			continue;
		if ((k->dim[i] != q->dim[i] && k->dim[i] != 1) ||
		    (v->dim[i] != q->dim[i] && v->dim[i] != 1))
			return dp_failt(err, op, "batch dimensions differ (a key's or value's must be the "
			                "query's or 1; grouped heads: enable_gqa)", q, k);
	}
	if (k->dim[r - 1] != q->dim[r - 1])
		return dp_failt(err, op, "query and key embeddings differ", q, k);
	if (v->dim[r - 2] != k->dim[r - 2])
		return dp_failt(err, op, "key and value lengths differ", k, v);
	*out = *q;
	out->dim[r - 1] = v->dim[r - 1];
	if (op->nin == 4) {
		const Type *m = &fn->val[op->in[3]].t;
		Type scores = *q, b;
		scores.dim[r - 1] = k->dim[r - 2];
		if (m->dtype != DP_BOOL && m->dtype != q->dtype)
			return dp_failt(err, op, "the mask must be bool or the query's dtype", m, NULL);
		if (dp_bcast(err, op, m, &scores, &b))
			return -1;
		if (b.rank != scores.rank || memcmp(b.dim, scores.dim, r * sizeof *b.dim))
			return dp_failt(err, op, "the mask does not broadcast to the scores", m, &scores);
	}
	if (dp_geti(op, "is_causal", 0) && op->nin == 4)
		return fail(err, op, "is_causal and an explicit mask cannot be combined");
	return 0;
}

static int
dtypeattr(Err *err, const Op *op, const char *key, int def)
{
	const char *s = dp_gets(op, key);
	if (!s)
		return def;
	int d = dp_dtype_lookup(s);
	if (d < 0)
		dp_seterr(err, "%s: unknown dtype '%s'", NAME, s);
	return d;
}

/* The rules of the elementwise forms: a unary op keeps its operand's type
 * (Funary: floats only; Funaryn: any number), a comparison broadcasts two
 * operands of one dtype into bool, logic takes any dtypes into bool.  -2
 * for the other forms. */
static int
elemrule(const Op *op, const Type *const *t, Type *out, Err *err)
{
	switch (dp_op_form[op->kind]) {
	case Funary:
		if (op->kind == Agelu) {
			const char *a = dp_gets(op, "approximate");
			if (a && strcmp(a, "none") && strcmp(a, "tanh"))
				return fail(err, op, "approximate must be \"none\" or \"tanh\"");
		}
		if (dp_needfloat(err, op, t[0]))
			return -1;
		*out = *t[0];
		return 0;
	case Funaryn:
		if (!dp_isfloat(t[0]->dtype) && !isint(t[0]->dtype))
			return dp_failt(err, op, "needs a number", t[0], NULL);
		*out = *t[0];
		return 0;
	case Fbinary:   /* aten.add and aten.mul (any number) are infer.c's */
		if (dp_samedt(err, op, t[0], t[1]) || dp_bcast(err, op, t[0], t[1], out))
			return -1;
		if (op->kind != Asub && dp_needfloat(err, op, t[0]))
			return -1;
		return 0;
	case Fbinaryn:
		if (dp_samedt(err, op, t[0], t[1]) || dp_bcast(err, op, t[0], t[1], out))
			return -1;
		if (!dp_isfloat(t[0]->dtype) && !isint(t[0]->dtype))
			return dp_failt(err, op, "needs a number", t[0], NULL);
		return 0;
	case Fcompare:
		if (dp_samedt(err, op, t[0], t[1]) || dp_bcast(err, op, t[0], t[1], out))
			return -1;
		out->dtype = DP_BOOL;
		return 0;
	case Flogic:
		if (op->nin == 1)
			*out = *t[0];
		else if (dp_bcast(err, op, t[0], t[1], out))
			return -1;
		out->dtype = DP_BOOL;
		return 0;
	}
	return -2;
}

/* Whether the list attribute key of op (absent: empty) names distinct axes
 * of rank r; their mask into *m. */
static int
axes(Err *err, const Op *op, const char *key, int r, unsigned *m)
{
	const Attr *a = dp_attr(op, key);

	*m = 0;
	for (int i = 0; a && i < a->n; i++) {
		int d = dp_axis(a->ints[i], r);
		if (d < 0 || (*m >> d & 1)) {
			dp_seterr(err, "%s: %s has a repeated or out-of-range axis", NAME, key);
			return -1;
		}
		*m |= 1u << d;
	}
	return 0;
}

/* The reduction of t over the axes of mask m (all when m is 0). */
static void
reduced(const Type *t, unsigned m, int keep, Type *out)
{
	*out = *t;
	out->rank = 0;
	for (int i = 0; i < t->rank; i++) {
		if (!m || (m >> i & 1)) {
			if (keep)
				out->dim[out->rank++] = 1;
		} else
			out->dim[out->rank++] = t->dim[i];
	}
}

/* The rules of the scan, gather and composite ops; -2 for the others. */
static int
morerule(const Op *op, const Type *const *t, Type *out, Err *err)
{
	unsigned m;
	int d;

	switch (op->kind) {
	case Acumsum: case Acumprod: case Alogcumsumexp:
		if ((d = dp_axis(dp_geti(op, "dim", 0), t[0]->rank)) < 0)
			return fail(err, op, "dim is out of range");
		if (op->kind == Alogcumsumexp && !dp_isfloat(t[0]->dtype))
			return dp_failt(err, op, "x must be a float", t[0], NULL);
		*out = *t[0];
		if (!dp_isfloat(t[0]->dtype))   /* integers and bool scan in i64 */
			out->dtype = DP_I64;
		return 0;
	case Agather:
		if (t[1]->dtype != DP_I64 && t[1]->dtype != DP_I32)
			return dp_failt(err, op, "index must be i64 or i32", t[1], NULL);
		if (t[1]->rank != t[0]->rank || dp_axis(dp_geti(op, "dim", 0), t[0]->rank) < 0)
			return dp_failt(err, op, "index must have the input's rank, dim in range", t[0],
			                t[1]);
		*out = *t[1];
		out->dtype = t[0]->dtype;
		return 0;
	case Aunflatten: {
		const Attr *s = dp_attr(op, "sizes");
		int64_t n = 1, inf = -1;
		if ((d = dp_axis(dp_geti(op, "dim", 0), t[0]->rank)) < 0)
			return fail(err, op, "dim is out of range");
		if (t[0]->rank - 1 + s->n > DP_MAXRANK || s->n < 1)
			return fail(err, op, "bad sizes");
		for (int i = 0; i < s->n; i++)
			if (s->ints[i] == -1 && inf < 0)
				inf = i;
			else if (s->ints[i] < 0)
				return fail(err, op, "bad sizes");
			else
				n *= s->ints[i];
		if (inf >= 0 ? n == 0 || t[0]->dim[d] % n : n != t[0]->dim[d])
			return dp_failt(err, op, "sizes do not multiply to the dim's size", t[0], NULL);
		*out = *t[0];
		out->rank = (uint8_t)(t[0]->rank - 1 + s->n);
		for (int i = 0; i < s->n; i++)
			out->dim[d + i] = s->ints[i] == -1 && i == inf ? t[0]->dim[d] / n : s->ints[i];
		for (int i = d + 1; i < t[0]->rank; i++)
			out->dim[i - 1 + s->n] = t[0]->dim[i];
		return 0;
	}
	case Aexpandas: {
		Type b;
		if (dp_bcast(err, op, t[0], t[1], &b))
			return -1;
		if (b.rank != t[1]->rank || memcmp(b.dim, t[1]->dim, sizeof b.dim[0] * b.rank))
			return dp_failt(err, op, "does not expand to the other's shape", t[0], t[1]);
		*out = *t[1];
		out->dtype = t[0]->dtype;
		return 0;
	}
	case Aaddcmul: case Aaddcdiv: {
		Type ab;
		if (dp_samedt(err, op, t[0], t[1]) || dp_samedt(err, op, t[1], t[2]) ||
		    dp_needfloat(err, op, t[0]) || dp_bcast(err, op, t[1], t[2], &ab) ||
		    dp_bcast(err, op, t[0], &ab, out))
			return -1;
		return 0;
	}
	case Amaskfill:
		if (op->nin != 2 && op->nin != 3)
			return fail(err, op, "takes 2 or 3 operands (self, mask[, value])");
		if (t[1]->dtype != DP_BOOL)
			return dp_failt(err, op, "the mask must be bool", t[1], NULL);
		if ((op->nin == 3) == (dp_attr(op, "value") != NULL))
			return fail(err, op, "needs a value: an attribute or a rank-0 operand");
		if (op->nin == 3 && (t[2]->rank != 0 || t[2]->dtype != t[0]->dtype))
			return dp_failt(err, op, "the value must be rank 0, the input's dtype", t[2], NULL);
		if (dp_bcast(err, op, t[0], t[1], out))
			return -1;
		if (out->rank != t[0]->rank || memcmp(out->dim, t[0]->dim, sizeof out->dim[0] * out->rank))
			return dp_failt(err, op, "the mask does not broadcast to the input", t[0], t[1]);
		return 0;
	case Afill:
		if (op->nin != 1 && op->nin != 2)
			return fail(err, op, "takes 1 or 2 operands (self[, value])");
		if ((op->nin == 2) == (dp_attr(op, "value") != NULL))
			return fail(err, op, "needs a value: an attribute or a rank-0 operand");
		if (op->nin == 2 && (t[1]->rank != 0 || t[1]->dtype != t[0]->dtype))
			return dp_failt(err, op, "the value must be rank 0, the input's dtype", t[1], NULL);
		*out = *t[0];
		return 0;
	case Aflip: case Aroll: case Aisnan: case Aisinf:
		if ((op->kind == Aflip && axes(err, op, "dims", t[0]->rank, &m)) ||
		    (op->kind == Aroll && dp_attr(op, "dims") && dp_attr(op, "dims")->n > 0 &&
		     dp_attr(op, "dims")->n != dp_attr(op, "shifts")->n))
			return op->kind == Aflip ? -1 : fail(err, op, "shifts and dims differ in length");
		if (op->kind == Aroll && axes(err, op, "dims", t[0]->rank, &m))
			return -1;
		if ((op->kind == Aisnan || op->kind == Aisinf) && dp_needfloat(err, op, t[0]))
			return -1;
		*out = *t[0];
		if (op->kind == Aisnan || op->kind == Aisinf)
			out->dtype = DP_BOOL;
		return 0;
	case Avecnorm: case Avar:
		if (dp_needfloat(err, op, t[0]) || axes(err, op, "dim", t[0]->rank, &m))
			return -1;
		reduced(t[0], m, (int)dp_geti(op, "keepdim", 0), out);
		return 0;
	case Agroupnorm: {
		int64_t g = dp_geti(op, "num_groups", 1);
		if (op->nin < 1 || op->nin > 3)
			return fail(err, op, "takes 1 to 3 operands (input[, weight[, bias]])");
		if (dp_needfloat(err, op, t[0]))
			return -1;
		if (t[0]->rank < 2 || g < 1 || t[0]->dim[1] % g)
			return dp_failt(err, op, "input must be [N,C,...] with C a multiple of num_groups",
			                t[0], NULL);
		for (int i = 1; i < op->nin; i++)
			if (dp_samedt(err, op, t[0], t[i]) || t[i]->rank != 1 ||
			    t[i]->dim[0] != t[0]->dim[1])
				return dp_failt(err, op, "weight and bias must be [C]", t[i], NULL);
		*out = *t[0];
		return 0;
	}
	case Apad: {
		const Attr *p = dp_attr(op, "pad");
		if (p->n % 2 || p->n / 2 > t[0]->rank)
			return fail(err, op, "pad needs 2 values per padded dim, at most 2 per dim");
		*out = *t[0];
		for (int i = 0; i < p->n / 2; i++) {
			int a = t[0]->rank - 1 - i;
			int64_t n = t[0]->dim[a] + p->ints[2 * i] + p->ints[2 * i + 1];
			if (n < 0 || p->ints[2 * i] < -t[0]->dim[a] || p->ints[2 * i + 1] < -t[0]->dim[a])
				return fail(err, op, "negative padding larger than the dim");
			out->dim[a] = n;
		}
		return 0;
	}
	case Adiff: {
		int64_t n = dp_geti(op, "n", 1), len;
		int np = op->nin > 1 && dp_geti(op, "prepend", 0), na = op->nin > 1 && dp_geti(op, "append", 0);
		if ((d = dp_axis(dp_geti(op, "dim", -1), t[0]->rank)) < 0)
			return fail(err, op, "dim is out of range");
		if (n < 0)
			return fail(err, op, "n must be >= 0");
		if (op->nin != 1 + np + na)
			return fail(err, op, "the prepend and append flags do not match the operands");
		len = t[0]->dim[d];
		for (int i = 1; i < op->nin; i++) {
			if (dp_samedt(err, op, t[0], t[i]))
				return -1;
			if (t[i]->rank != t[0]->rank)
				return dp_failt(err, op, "prepend and append need the input's rank", t[i], NULL);
			for (int k = 0; k < t[0]->rank; k++)
				if (k != d && t[i]->dim[k] != t[0]->dim[k])
					return dp_failt(err, op, "prepend and append need the input's sizes "
					                "but along dim", t[0], t[i]);
			len += t[i]->dim[d];
		}
		*out = *t[0];
		out->dim[d] = len > n ? len - n : 0;
		if (t[0]->dtype == DP_BOOL && n > 0)
			return fail(err, op, "bool is not supported");
		return 0;
	}
	case Aslicescat: case Aselscat: case Acopyto:
		if (dp_samedt(err, op, t[0], t[1]) && op->kind != Acopyto)
			return -1;
		*out = *t[0];
		return 0;
	case Alogsoftmax:
		if ((d = dp_axis(dp_geti(op, "dim", 0), t[0]->rank)) < 0)
			return fail(err, op, "dim is out of range");
		if (dp_needfloat(err, op, t[0]))
			return -1;
		*out = *t[0];
		return 0;
	case Aelu:
		if (dp_needfloat(err, op, t[0]))
			return -1;
		*out = *t[0];
		return 0;
	case Aeinsum: {
		char lab[3][DP_MAXRANK + 1];
		int64_t size[128] = { 0 };
		if (op->nin < 1 || op->nin > 2)
			return fail(err, op, "takes 1 or 2 operands");
		if (dp_einsum(dp_gets(op, "equation"), op->nin, lab) != 0)
			return fail(err, op, "equation must be like \"bij,bjk->bik\" (letters, one or two "
			            "operands, an explicit output, no ellipsis or repeated letter)");
		for (int i = 0; i < op->nin; i++) {
			if (i && dp_samedt(err, op, t[0], t[i]))
				return -1;
			if ((int)strlen(lab[i]) != t[i]->rank)
				return dp_failt(err, op, "the equation does not match the operands' ranks",
				                t[i], NULL);
			for (int k = 0; lab[i][k]; k++) {
				int64_t *z = &size[(unsigned char)lab[i][k]];
				if (*z > 1 && t[i]->dim[k] != 1 && t[i]->dim[k] != *z)
					return dp_failt(err, op, "a letter's sizes differ", t[0], t[i]);
				if (*z <= 1)
					*z = t[i]->dim[k];
			}
		}
		if (dp_needfloat(err, op, t[0]))
			return -1;
		*out = *t[0];
		out->rank = (uint8_t)strlen(lab[2]);
		for (int k = 0; lab[2][k]; k++)
			out->dim[k] = size[(unsigned char)lab[2][k]];
		return 0;
	}
	case Aargmaxc: case Aargmin: {
		const Attr *a = dp_attr(op, "dim");
		int keep = (int)dp_geti(op, "keepdim", 0);
		if (a && (d = dp_axis(a->i, t[0]->rank)) < 0)
			return fail(err, op, "dim is out of range");
		if (dp_numel(t[0]) == 0)
			return fail(err, op, "the input is empty");
		reduced(t[0], a ? 1u << d : 0, keep, out);
		out->dtype = DP_I64;
		return 0;
	}
	case Aindexn: {
		Type s = *t[1];
		int k = op->nin - 1;
		if (op->nin < 2 || op->nin > 5)
			return fail(err, op, "takes the input and 1 to 4 index tensors");
		d = dp_axis(dp_geti(op, "dim", 0), t[0]->rank);
		if (d < 0 || d + k > t[0]->rank)
			return fail(err, op, "the indexed dims are out of range");
		for (int i = 1; i < op->nin; i++) {
			if (t[i]->dtype != DP_I64 && t[i]->dtype != DP_I32)
				return dp_failt(err, op, "indices must be i64 or i32", t[i], NULL);
			if (i > 1 && dp_bcast(err, op, &s, t[i], &s))
				return -1;
		}
		if (t[0]->rank - k + s.rank > DP_MAXRANK)
			return fail(err, op, "result rank too large");
		*out = *t[0];
		out->rank = (uint8_t)(t[0]->rank - k + s.rank);
		for (int i = 0; i < s.rank; i++)
			out->dim[d + i] = s.dim[i];
		for (int i = d + k; i < t[0]->rank; i++)
			out->dim[i - k + s.rank] = t[0]->dim[i];
		return 0;
	}
	case Aamax: case Aamin:
		if (axes(err, op, "dim", t[0]->rank, &m))
			return -1;
		if (dp_numel(t[0]) == 0)
			return fail(err, op, "the input is empty");
		if (!dp_isfloat(t[0]->dtype) && !isint(t[0]->dtype))
			return dp_failt(err, op, "needs a number", t[0], NULL);
		reduced(t[0], m, (int)dp_geti(op, "keepdim", 0), out);
		return 0;
	case Aindexput: {
		int k = op->nin - 2;
		if (op->nin < 3 || op->nin > 6)
			return fail(err, op, "takes the input, the values and 1 to 4 index tensors");
		d = dp_axis(dp_geti(op, "dim", 0), t[0]->rank);
		if (d < 0 || d + k > t[0]->rank)
			return fail(err, op, "the indexed dims are out of range");
		for (int i = 2; i < op->nin; i++)
			if (t[i]->dtype != DP_I64 && t[i]->dtype != DP_I32)
				return dp_failt(err, op, "indices must be i64 or i32 (a bool mask is not "
				                "supported)", t[i], NULL);
		*out = *t[0];
		return 0;
	}
	case Asort: case Atopk: {
		int64_t k = op->kind == Atopk ? dp_geti(op, "k", 0) : 0;
		if ((d = dp_axis(dp_geti(op, "dim", -1), t[0]->rank)) < 0 && t[0]->rank > 0)
			return fail(err, op, "dim is out of range");
		if (!dp_isfloat(t[0]->dtype) && !isint(t[0]->dtype))
			return dp_failt(err, op, "needs a number", t[0], NULL);
		out[0] = *t[0];
		if (op->kind == Atopk) {
			int64_t n = t[0]->rank ? t[0]->dim[d] : 1;
			if (k < 0 || k > n)
				return fail(err, op, "k is not from 0 to the size of dim");
			if (t[0]->rank)
				out[0].dim[d] = k;
		}
		out[1] = out[0];
		out[1].dtype = DP_I64;
		return 0;
	}
	case Aprod:
		if (axes(err, op, "dim", t[0]->rank, &m))
			return -1;
		if (!dp_isfloat(t[0]->dtype) && !isint(t[0]->dtype) && t[0]->dtype != DP_BOOL)
			return dp_failt(err, op, "needs a number", t[0], NULL);
		reduced(t[0], m, (int)dp_geti(op, "keepdim", 0), out);
		if (!dp_isfloat(t[0]->dtype))   /* integers and bool multiply in i64 */
			out->dtype = DP_I64;
		return 0;
	case Abnstats:
		if (op->nin != 3)
			return fail(err, op, "takes the input, a weight and a bias");
		if (dp_needfloat(err, op, t[0]))
			return -1;
		if (t[0]->rank < 2)
			return dp_failt(err, op, "input must be [N,C,...]", t[0], NULL);
		for (int k = 1; k < 3; k++)
			if (dp_samedt(err, op, t[0], t[k]) || t[k]->rank != 1 || t[k]->dim[0] != t[0]->dim[1])
				return dp_failt(err, op, "weight and bias must be [C]", t[k], t[0]);
		*out = *t[0];
		return 0;
	case Acdist:
		if (dp_needfloat(err, op, t[0]) || dp_samedt(err, op, t[0], t[1]))
			return -1;
		if (t[0]->rank < 2 || t[0]->rank != t[1]->rank ||
		    t[0]->dim[t[0]->rank - 1] != t[1]->dim[t[1]->rank - 1])
			return dp_failt(err, op, "needs [...,P,M] and [...,R,M]", t[0], t[1]);
		for (int i = 0; i < t[0]->rank - 2; i++)
			if (t[0]->dim[i] != t[1]->dim[i])
				return dp_failt(err, op, "the batch dims must be equal (broadcasting is not "
				                "supported)", t[0], t[1]);
		if (dp_getf(op, "p", 2) < 0)
			return fail(err, op, "p must be non-negative");
		*out = *t[0];
		out->dim[out->rank - 1] = t[1]->dim[t[1]->rank - 2];
		return 0;
	case Ahistc: {   /* [bins] counts, x's dtype */
		double lo = dp_getf(op, "min", 0), hi = dp_getf(op, "max", 0);
		if (dp_needfloat(err, op, t[0]))
			return -1;
		if (dp_geti(op, "bins", 100) < 1)
			return fail(err, op, "bins must be positive");
		if (!(lo < hi))
			return fail(err, op, "needs min < max (min = max, the data's own range, is not "
			            "supported)");
		*out = *t[0];
		out->rank = 1;
		out->dim[0] = dp_geti(op, "bins", 100);
		return 0;
	}
	case Agroupedmm:   /* a [M,K], b [G,K,N], offsets [G]: [M,N] */
		if (dp_needfloat(err, op, t[0]) || dp_samedt(err, op, t[0], t[1]))
			return -1;
		if (t[0]->rank != 2 || t[1]->rank != 3 || t[0]->dim[1] != t[1]->dim[1])
			return dp_failt(err, op, "needs a [M,K] and b [G,K,N]", t[0], t[1]);
		if (t[2]->rank != 1 || t[2]->dim[0] != t[1]->dim[0] || !isint(t[2]->dtype))
			return dp_failt(err, op, "needs integer offsets [G], one per group of b", t[2], NULL);
		*out = *t[0];
		out->dim[1] = t[1]->dim[2];
		return 0;
	case Apdist:
		if (dp_needfloat(err, op, t[0]))
			return -1;
		if (t[0]->rank != 2)
			return dp_failt(err, op, "needs [N,M]", t[0], NULL);
		if (dp_getf(op, "p", 2) < 0)
			return fail(err, op, "p must be non-negative");
		*out = *t[0];
		out->rank = 1;
		out->dim[0] = t[0]->dim[0] * (t[0]->dim[0] - 1) / 2;
		return 0;
	case Amaskscat: {
		Type b;
		if (t[1]->dtype != DP_BOOL)
			return dp_failt(err, op, "mask must be bool", t[1], NULL);
		if (dp_samedt(err, op, t[0], t[2]) || dp_bcast(err, op, t[0], t[1], &b))
			return -1;
		if (b.rank != t[0]->rank || memcmp(b.dim, t[0]->dim, sizeof b.dim[0] * b.rank))
			return dp_failt(err, op, "mask must broadcast to the input's shape", t[0], t[1]);
		*out = *t[0];
		return 0;
	}
	case Aembbag: {
		int64_t mode = dp_geti(op, "mode", 0), last = dp_geti(op, "include_last_offset", 0);
		if (dp_needfloat(err, op, t[0]) || t[0]->rank != 2)
			return dp_failt(err, op, "weight must be a float [V,D]", t[0], NULL);
		for (int k = 1; k < 3; k++)
			if ((t[k]->dtype != DP_I64 && t[k]->dtype != DP_I32) || t[k]->rank != 1)
				return dp_failt(err, op, "indices and offsets must be i64 or i32 vectors", t[k],
				                NULL);
		if (mode < 0 || mode > 2)
			return fail(err, op, "mode must be 0 (sum), 1 (mean) or 2 (max)");
		if (t[2]->dim[0] - (last != 0) < 0)
			return fail(err, op, "include_last_offset needs an offset");
		*out = *t[0];
		out->dim[0] = t[2]->dim[0] - (last != 0);
		return 0;
	}
	case Acol2im: {
		const Attr *o = dp_attr(op, "output_size");
		int64_t k[2], dl[2], pd[2], st[2], n[2], L = 1;
		int b = t[0]->rank == 3;
		if (pair(err, op, "kernel_size", 1, k) || pair(err, op, "dilation", 1, dl) ||
		    pair(err, op, "padding", 0, pd) || pair(err, op, "stride", 1, st))
			return -1;
		if (dp_needfloat(err, op, t[0]))
			return -1;
		if (!o || o->n != 2 || (t[0]->rank != 2 && t[0]->rank != 3))
			return dp_failt(err, op, "needs [N,]C*kh*kw,L and 2 output sizes", t[0], NULL);
		for (int i = 0; i < 2; i++) {
			if (k[i] < 1 || dl[i] < 1 || st[i] < 1 || pd[i] < 0)
				return fail(err, op, "bad kernel_size, dilation, padding or stride");
			n[i] = window(o->ints[i], k[i], st[i], pd[i], dl[i], 0);
			L *= n[i];
		}
		if (t[0]->dim[b] % (k[0] * k[1]) || t[0]->dim[b + 1] != L)
			return dp_failt(err, op, "the input's dims do not fit the kernel and the blocks",
			                t[0], NULL);
		*out = *t[0];
		out->rank = (uint8_t)(3 + b);
		if (b)
			out->dim[0] = t[0]->dim[0];
		out->dim[b] = t[0]->dim[b] / (k[0] * k[1]);
		out->dim[b + 1] = o->ints[0];
		out->dim[b + 2] = o->ints[1];
		return 0;
	}
	case Agridsamp:
		if (dp_needfloat(err, op, t[0]) || dp_samedt(err, op, t[0], t[1]))
			return -1;
		if (t[0]->rank != 4 || t[1]->rank != 4 || t[1]->dim[0] != t[0]->dim[0] ||
		    t[1]->dim[3] != 2)
			return dp_failt(err, op, "needs x[N,C,H,W] and grid[N,H',W',2]", t[0], t[1]);
		if (dp_geti(op, "interpolation_mode", 0) < 0 || dp_geti(op, "interpolation_mode", 0) > 1)
			return fail(err, op, "interpolation_mode must be 0 (bilinear) or 1 (nearest); "
			            "bicubic is not supported");
		if (dp_geti(op, "padding_mode", 0) < 0 || dp_geti(op, "padding_mode", 0) > 2)
			return fail(err, op, "padding_mode must be 0 (zeros), 1 (border) or 2 (reflection)");
		*out = *t[0];
		out->dim[2] = t[1]->dim[1];
		out->dim[3] = t[1]->dim[2];
		return 0;
	case Aindexcopy:
	case Oindexwrite:
		if ((d = dp_axis(dp_geti(op, "dim", 0), t[0]->rank)) < 0)
			return fail(err, op, "dim is out of range");
		if ((t[1]->dtype != DP_I64 && t[1]->dtype != DP_I32) || t[1]->rank > 1)
			return dp_failt(err, op, "index must be an i64 or i32 vector", t[1], NULL);
		if (op->kind == Oindexwrite && (t[1]->dtype != DP_I64 || t[1]->rank != 1))
			return dp_failt(err, op, "index must be an i64 vector", t[1], NULL);
		if (dp_samedt(err, op, t[0], t[2]))
			return -1;
		if (t[2]->rank != t[0]->rank)
			return dp_failt(err, op, "source must have the input's rank", t[0], t[2]);
		for (int i = 0; i < t[0]->rank; i++)
			if (t[2]->dim[i] != (i == d ? (t[1]->rank ? t[1]->dim[0] : 1) : t[0]->dim[i]))
				return dp_failt(err, op, "source must be the input's shape with the index's "
				                "length along dim", t[0], t[2]);
		*out = *t[0];
		return 0;
	case Ascatter: {
		const char *red = dp_gets(op, "reduce");
		if ((d = dp_axis(dp_geti(op, "dim", 0), t[0]->rank)) < 0)
			return fail(err, op, "dim is out of range");
		if (t[1]->dtype != DP_I64 && t[1]->dtype != DP_I32)
			return dp_failt(err, op, "index must be i64 or i32", t[1], NULL);
		if (t[1]->rank != t[0]->rank || (t[2]->rank != 0 && t[2]->rank != t[0]->rank))
			return dp_failt(err, op, "index and src must have the input's rank", t[1], t[2]);
		if (dp_samedt(err, op, t[0], t[2]))
			return -1;
		for (int i = 0; i < t[0]->rank; i++)
			if ((i != d && t[1]->dim[i] != t[0]->dim[i]) ||
			    (t[2]->rank && t[2]->dim[i] < t[1]->dim[i]))
				return dp_failt(err, op, "index must be the input's shape but along dim (a "
				                "smaller one is not supported), src at least the index's",
				                t[1], t[2]);
		if (red && strcmp(red, "sum") && strcmp(red, "mean") && strcmp(red, "amax") &&
		    strcmp(red, "amin"))
			return fail(err, op, "reduce must be sum, mean, amax or amin (prod is not "
			            "supported)");
		if (red && strcmp(red, "sum") && dp_needfloat(err, op, t[0]))
			return -1;
		*out = *t[0];
		return 0;
	}
	case Afftr2c: case Afftc2r: case Afftc2c: {   /* complex values: f32 [..., 2] (re, im) */
		const Attr *a = dp_attr(op, "dim");
		int c2c = op->kind == Afftc2c, c2r = op->kind == Afftc2r, r = t[0]->rank - (c2r || c2c), last;
		if (t[0]->dtype != DP_F32)
			return dp_failt(err, op, "needs f32", t[0], NULL);
		if ((c2r || c2c) && (r < 1 || t[0]->dim[r] != 2))
			return dp_failt(err, op, "needs a complex value: f32 [..., 2]", t[0], NULL);
		if (!a || a->n == 0 || axes(err, op, "dim", r, &m))
			return a && a->n ? -1 : fail(err, op, "needs at least one dim");
		if (!c2r && r + 1 > DP_MAXRANK)
			return fail(err, op, "rank exceeds 8");
		d = dp_geti(op, "normalization", 0);
		if (d < 0 || d > 2)
			return fail(err, op, "normalization must be 0 (none), 1 (1/√n) or 2 (1/n)");
		last = dp_axis(a->ints[a->n - 1], r);
		*out = *t[0];
		if (c2c)
			return 0;
		if (c2r) {
			int64_t n = dp_geti(op, "last_dim_size", 0);
			if (n < 1)
				return fail(err, op, "last_dim_size must be positive");
			out->rank = (uint8_t)r;
			out->dim[last] = n;
		} else {
			if (dp_geti(op, "onesided", 1))
				out->dim[last] = out->dim[last] / 2 + 1;
			out->dim[out->rank++] = 2;
		}
		return 0;
	}
	case Anonzeros:
		if (t[0]->rank < 1 || dp_numel(t[0]) < 1)
			return dp_failt(err, op, "needs a tensor of rank 1 or more, not empty", t[0], NULL);
		if (dp_geti(op, "size", 0) < 0)
			return fail(err, op, "size must be >= 0");
		memset(out, 0, sizeof *out);
		out->dtype = DP_I64;
		out->rank = 2;
		out->dim[0] = dp_geti(op, "size", 0);
		out->dim[1] = t[0]->rank;
		return 0;
	case Anonzero:   /* [numel, rank] bounded (dp_bound_rule), and the count */
		if (t[0]->rank < 1 || dp_numel(t[0]) < 1)
			return dp_failt(err, op, "needs a tensor of rank 1 or more, not empty", t[0], NULL);
		memset(out, 0, 2 * sizeof *out);
		out[0].dtype = out[1].dtype = DP_I64;
		out[0].rank = 2;
		out[0].dim[0] = dp_numel(t[0]);
		out[0].dim[1] = t[0]->rank;
		return 0;
	case Obound:   /* x's bytes, its leading size bounded (dp_bound_rule) */
		if (t[0]->rank < 1 || t[0]->dim[0] < 1)
			return dp_failt(err, op, "needs a tensor of rank 1 or more with rows", t[0], NULL);
		if (t[1]->dtype != DP_I64 || t[1]->rank != 0)
			return dp_failt(err, op, "its length must be i64[]", t[1], NULL);
		*out = *t[0];
		return 0;
	case Acmul: case Acabs: case Acangle: {
		for (int i = 0; i < op->nin; i++)
			if (t[i]->dtype != DP_F32 || t[i]->rank < 1 || t[i]->dim[t[i]->rank - 1] != 2)
				return dp_failt(err, op, "needs complex values: f32 [..., 2]", t[i], NULL);
		if (op->kind == Acmul)
			return dp_bcast(err, op, t[0], t[1], out);
		*out = *t[0];
		out->rank--;
		return 0;
	}
	case Amaxdim: case Amindim:
		if ((d = dp_axis(dp_geti(op, "dim", 0), t[0]->rank)) < 0)
			return fail(err, op, "dim is out of range");
		if (t[0]->rank > 0 && t[0]->dim[d] == 0)
			return fail(err, op, "the reduced dim is empty");
		if (!dp_isfloat(t[0]->dtype) && !isint(t[0]->dtype))
			return dp_failt(err, op, "needs a number", t[0], NULL);
		reduced(t[0], t[0]->rank ? 1u << d : 0, (int)dp_geti(op, "keepdim", 0), out);
		return 0;
	case Adiagonal: {
		int a = dp_axis(dp_geti(op, "dim1", 0), t[0]->rank);
		int b = dp_axis(dp_geti(op, "dim2", 1), t[0]->rank);
		int64_t o = dp_geti(op, "offset", 0), n;
		if (a < 0 || b < 0 || a == b)
			return fail(err, op, "dim1 and dim2 must be two different dims in range");
		n = o >= 0 ? t[0]->dim[b] - o : t[0]->dim[a] + o;
		n = n < 0 ? 0 : n;
		n = o >= 0 ? (t[0]->dim[a] < n ? t[0]->dim[a] : n) : (t[0]->dim[b] < n ? t[0]->dim[b] : n);
		*out = *t[0];
		out->rank = 0;
		for (int i = 0; i < t[0]->rank; i++)
			if (i != a && i != b)
				out->dim[out->rank++] = t[0]->dim[i];
		out->dim[out->rank++] = n;
		return 0;
	}
	case Amaxpool1: case Aavgpool1: case Aadaptavg1:
		return pooln(op, t[0], 1, out, err);
	case Amaxpool3: case Aavgpool3: case Aadaptavg3:
		return pooln(op, t[0], 3, out, err);
	case Aclampt: {
		int lo = (int)dp_geti(op, "has_min", 0), hi = (int)dp_geti(op, "has_max", 0);
		if (op->nin != 1 + lo + hi || op->nin == 1)
			return fail(err, op, "takes the input and a min tensor, a max tensor or both");
		*out = *t[0];
		for (int i = 1; i < op->nin; i++)
			if (dp_samedt(err, op, t[0], t[i]) || dp_bcast(err, op, out, t[i], out))
				return -1;
		if (!dp_isfloat(t[0]->dtype) && !isint(t[0]->dtype))
			return dp_failt(err, op, "needs a number", t[0], NULL);
		return 0;
	}
	case Aall:
		if (axes(err, op, "dim", t[0]->rank, &m))
			return -1;
		reduced(t[0], m, (int)dp_geti(op, "keepdim", 0), out);
		out->dtype = DP_BOOL;
		return 0;
	case Aupbilinear:
	case Aupbicubic:
		if (dp_needfloat(err, op, t[0]))
			return -1;
		/* fall through */
	case Aupnearest: {
		const Attr *s = dp_attr(op, "output_size");
		if (t[0]->rank != 4 || s->n != 2 || s->ints[0] < 1 || s->ints[1] < 1)
			return dp_failt(err, op, "input must be [N,C,H,W], output_size 2 sizes >= 1", t[0],
			                NULL);
		*out = *t[0];
		out->dim[2] = s->ints[0];
		out->dim[3] = s->ints[1];
		return 0;
	}
	case Arepeatil: {   /* each element repeats times in a row, along dim or flat */
		int64_t r = dp_geti(op, "repeats", 1);
		if (r < 0)
			return fail(err, op, "repeats must be >= 0");
		*out = *t[0];
		if (!dp_attr(op, "dim")) {
			out->rank = 1;
			out->dim[0] = dp_numel(t[0]) * r;
			return 0;
		}
		if ((d = dp_axis(dp_geti(op, "dim", 0), t[0]->rank)) < 0 || t[0]->rank == 0)
			return fail(err, op, "dim is out of range");
		out->dim[d] *= r;
		return 0;
	}
	case Aunfold: {   /* windows of size along dimension, step apart, as a new last dim */
		int64_t sz = dp_geti(op, "size", 1), st = dp_geti(op, "step", 1), n;
		int r = t[0]->rank;
		if ((d = dp_axis(dp_geti(op, "dimension", 0), r ? r : 1)) < 0 || r >= DP_MAXRANK)
			return fail(err, op, "dimension is out of range");
		n = r ? t[0]->dim[d] : 1;
		if (sz < 0 || st < 1 || sz > n)
			return dp_failt(err, op, "needs 0 <= size <= the dimension's length, step >= 1",
			                t[0], NULL);
		*out = *t[0];
		if (r)
			out->dim[d] = (n - sz) / st + 1;
		out->dim[r] = sz;
		out->rank = (uint8_t)(r + 1);
		return 0;
	}
	case Arepeat: {
		const Attr *r = dp_attr(op, "repeats");
		if (r->n < t[0]->rank || r->n > DP_MAXRANK)
			return fail(err, op, "repeats must have at least the input's rank");
		*out = *t[0];
		out->rank = (uint8_t)r->n;
		for (int i = 0; i < r->n; i++) {
			int j = i - (r->n - t[0]->rank);
			if (r->ints[i] < 0)
				return fail(err, op, "repeats must be >= 0");
			out->dim[i] = (j >= 0 ? t[0]->dim[j] : 1) * r->ints[i];
		}
		return 0;
	}
	case Aasstrided: {
		const Attr *sz = dp_attr(op, "size"), *st = dp_attr(op, "stride");
		if (sz->n != st->n || sz->n > DP_MAXRANK)
			return fail(err, op, "size and stride differ in length");
		*out = *t[0];
		out->rank = (uint8_t)sz->n;
		for (int i = 0; i < sz->n; i++) {
			if (sz->ints[i] < 0 || st->ints[i] < 0)
				return fail(err, op, "sizes and strides must be >= 0");
			out->dim[i] = sz->ints[i];
		}
		return 0;
	}
	}
	return -2;
}

/* Splits an einsum equation "ab,bc->ac" of n operands into its letters:
 * lab[0..n-1] the operands', lab[2] the output's.  Letters only, each at
 * most once per operand and in the output, every output letter in an
 * operand; 0, or -1 for anything else. */
int
dp_einsum(const char *eq, int n, char lab[3][DP_MAXRANK + 1])
{
	const char *p = eq;
	int i, k;

	if (!eq)
		return -1;
	memset(lab, 0, 3 * sizeof *lab);
	for (i = 0; i < 3; i++) {
		char *l = lab[i == n ? 2 : i];
		while (*p == ' ')
			p++;
		for (k = 0; (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == ' '; p++) {
			if (*p == ' ')
				continue;
			if (k == DP_MAXRANK || strchr(l, *p))
				return -1;
			l[k++] = *p;
		}
		if (i == n)
			break;
		if (i + 1 < n ? *p != ',' : strncmp(p, "->", 2) != 0)
			return -1;
		p += i + 1 < n ? 1 : 2;
	}
	if (i != n || *p)
		return -1;
	for (k = 0; lab[2][k]; k++)
		if (!strchr(lab[0], lab[2][k]) && (n < 2 || !strchr(lab[1], lab[2][k])))
			return -1;
	return 0;
}

/* The scalar formula of an elementwise op (see ops.h): its name into
 * name[0..n-1] and its parameters into p[0..1] (0 when it takes none).
 * aten.gelu with approximate="tanh" is the formula gelu_tanh. */
void
dp_formula(const Op *op, char *name, size_t n, double p[2])
{
	const char *f = dp_op_formula[op->kind], *a = dp_gets(op, "approximate");
	size_t len = strcspn(f, " ");
	int k = 0;

	p[0] = p[1] = 0;
	snprintf(name, n, "%.*s%s", (int)len, f,
	         op->kind == Agelu && a && strcmp(a, "tanh") == 0 ? "_tanh" : "");
	for (f += len; *f == ' ' && k < 2; k++) {
		char key[32];
		size_t kl = strcspn(++f, "=");
		const Attr *at;
		snprintf(key, sizeof key, "%.*s", (int)kl, f);
		f += kl + 1;
		p[k] = strtod(f, NULL);
		f += strcspn(f, " ");
		if ((at = dp_attr(op, key)) != NULL)
			p[k] = at->kind == A_INT ? (double)at->i : at->f;
	}
}

/* A recurrent layer's geometry (ops.h, RNN_OPS) from its operands: the
 * gates G, state tensors, layers, directions, parameters a layer and
 * direction, sizes.  0, or -1 with err set. */
int
dp_rnn(const Fn *fn, const Op *op, DpRnn *r, Err *err)
{
	const Type *x = &fn->val[op->in[0]].t;
	int cell = op->kind == Alstmcell || op->kind == Agrucell, np;
	int lstm = op->kind == Alstm || op->kind == Alstmcell;

	memset(r, 0, sizeof *r);
	r->G = lstm ? 4 : op->kind == Agru || op->kind == Agrucell ? 3 : 1;
	r->nh = lstm ? 2 : 1;
	r->L = cell ? 1 : (int)dp_geti(op, "num_layers", 1);
	r->D = !cell && dp_geti(op, "bidirectional", 0) ? 2 : 1;
	r->bias = cell ? op->nin == 1 + r->nh + 4 : dp_geti(op, "has_biases", 1) != 0;
	np = op->nin - 1 - r->nh;
	if (r->L < 1 || np < 2 || np % (r->L * r->D))
		return fail(err, op, "takes the input, the state and 2 to 5 parameters a layer and "
		            "direction");
	r->per = np / (r->L * r->D);
	if (cell ? np != 2 && np != 4 : r->per != (r->bias ? 4 : 2) + (r->per & 1) ||
	    ((r->per & 1) && !lstm))
		return fail(err, op, cell ? "takes the input, the state, w_ih, w_hh and both biases "
		            "or neither" : "the parameters do not match has_biases and num_layers "
		            "(a projection is an LSTM's only)");
	r->proj = !cell && (r->per & 1);
	const Type *whh = &fn->val[op->in[1 + r->nh + 1]].t;
	if (whh->rank != 2 || whh->dim[0] % r->G)
		return dp_failt(err, op, "w_hh must be [gates·hidden, hidden]", whh, NULL);
	r->H = whh->dim[0] / r->G;
	r->Hout = whh->dim[1];
	if (cell ? x->rank != 2 : x->rank != 3)
		return dp_failt(err, op, cell ? "input must be [batch, features]" :
		                "input must be [seq, batch, features] (batch first: [batch, seq, "
		                "features])", x, NULL);
	r->first = !cell && dp_geti(op, "batch_first", 0);
	r->T = cell ? 1 : x->dim[r->first ? 1 : 0];
	r->B = x->dim[cell ? 0 : r->first ? 0 : 1];
	r->I = x->dim[x->rank - 1];
	if (!r->proj && r->Hout != r->H)
		return dp_failt(err, op, "w_hh must be [gates·hidden, hidden]", whh, NULL);
	return 0;
}

/* Operand k of a recurrent op: w_ih (k 0), w_hh (1), b_ih (2), b_hh (3),
 * w_hr (4) of layer l, direction d; -1 where it has none. */
int
dp_rnnarg(const DpRnn *r, int l, int d, int k)
{
	int base = 1 + r->nh + (l * r->D + d) * r->per;

	if (k >= 2 && k <= 3 && !r->bias)
		return -1;
	if (k == 4)
		return r->proj ? base + r->per - 1 : -1;
	return base + k;
}

static int
rnnrule(const Fn *fn, const Op *op, Type *out, Err *err)
{
	const Type *x = &fn->val[op->in[0]].t;
	int cell = op->kind == Alstmcell || op->kind == Agrucell;
	DpRnn r;

	if (dp_rnn(fn, op, &r, err) || dp_needfloat(err, op, x))
		return -1;
	for (int i = 1; i < op->nin; i++)
		if (dp_samedt(err, op, x, &fn->val[op->in[i]].t))
			return -1;
	for (int k = 0; k < r.nh; k++) {   /* h0 [L·D, B, Hout], c0 [L·D, B, H]; a cell's [B, H] */
		const Type *h = &fn->val[op->in[1 + k]].t;
		int64_t n = k ? r.H : r.Hout;
		if (cell ? h->rank != 2 || h->dim[0] != r.B || h->dim[1] != n :
		    h->rank != 3 || h->dim[0] != r.L * r.D || h->dim[1] != r.B || h->dim[2] != n)
			return dp_failt(err, op, cell ? "the state must be [batch, hidden]" :
			                "the state must be [layers·directions, batch, hidden]", h, x);
	}
	for (int l = 0; l < r.L; l++)
		for (int d = 0; d < r.D; d++)
			for (int k = 0; k < 5; k++) {
				int a = dp_rnnarg(&r, l, d, k);
				int64_t want[2] = { r.G * r.H, k == 1 ? r.Hout : l ? r.D * r.Hout : r.I };
				if (k == 4)
					want[0] = r.Hout, want[1] = r.H;
				if (a < 0)
					continue;
				const Type *w = &fn->val[op->in[a]].t;
				if (k == 2 || k == 3 ? w->rank != 1 || w->dim[0] != want[0] :
				    w->rank != 2 || w->dim[0] != want[0] || w->dim[1] != want[1])
					return dp_failt(err, op, k == 0 ? "w_ih does not match the input" :
					                k == 1 ? "w_hh does not match the hidden size" :
					                k == 4 ? "w_hr does not match the sizes" :
					                "a bias does not match the gates", w, x);
			}
	for (int k = 0; k < dp_op_nout[op->kind]; k++) {
		out[k] = *x;
		if (cell) {
			out[k].dim[1] = r.H;
		} else if (k == 0) {
			out[k].dim[2] = r.D * r.Hout;
		} else {
			out[k].dim[0] = r.L * r.D, out[k].dim[1] = r.B, out[k].dim[2] = k == 1 ? r.Hout : r.H;
		}
	}
	return 0;
}

int
dp_rule_nn(const Fn *fn, const Op *op, Type *out, Err *err)
{
	const Type *t[5] = { 0 };
	for (int i = 0; i < op->nin && i < 5; i++)
		t[i] = &fn->val[op->in[i]].t;
	int rc = elemrule(op, t, out, err);
	if (rc == -2)
		rc = morerule(op, t, out, err);
	if (rc != -2)
		return rc;
	switch (op->kind) {
	case Aconv:
		return conv(fn, op, out, err);
	case Alstm: case Agru: case Arnntanh: case Arnnrelu: case Alstmcell: case Agrucell:
		return rnnrule(fn, op, out, err);
	case Abatchnorm: {
		const Type *x = t[0];
		if (dp_needfloat(err, op, x))
			return -1;
		if (x->rank < 2)
			return dp_failt(err, op, "input must be [N,C,...]", x, NULL);
		for (int k = 1; k < 5; k++)
			if (dp_samedt(err, op, x, t[k]) || t[k]->rank != 1 || t[k]->dim[0] != x->dim[1])
				return dp_failt(err, op, "weight, bias, mean and var must be [C]", t[k], x);
		*out = *x;
		return 0;
	}
	case Alayernorm:
		return lnorm(fn, op, out, err, 3);
	case Armsnorm:
		return lnorm(fn, op, out, err, 2);
	case Amaxpool:
	case Aavgpool:
		return pool(op, t[0], out, err);
	case Aadaptavg: {
		const Attr *o = dp_attr(op, "output_size");
		if (dp_needfloat(err, op, t[0]))
			return -1;
		if (o->n != 2 || o->ints[0] < 1 || o->ints[1] < 1)
			return fail(err, op, "output_size needs 2 positive values");
		if (t[0]->rank != 3 && t[0]->rank != 4)
			return dp_failt(err, op, "input must be [N,]C,H,W", t[0], NULL);
		*out = *t[0];
		out->dim[out->rank - 2] = o->ints[0];
		out->dim[out->rank - 1] = o->ints[1];
		return 0;
	}
	case Amean:
		if (dp_needfloat(err, op, t[0]))
			return -1;
		/* fall through */
	case Asum:
		return reduce(op, t[0], out, err);
	case Aany:
		if (reduce(op, t[0], out, err))
			return -1;
		out->dtype = DP_BOOL;
		return 0;
	case Atranspose: {
		int a = dp_axis(dp_geti(op, "dim0", 0), t[0]->rank), b = dp_axis(dp_geti(op, "dim1", 0), t[0]->rank);
		if (a < 0 || b < 0)
			return fail(err, op, "dim0/dim1 out of range");
		*out = *t[0];
		out->dim[a] = t[0]->dim[b];
		out->dim[b] = t[0]->dim[a];
		return 0;
	}
	case Aexpand: {
		const Attr *s = dp_attr(op, "size");
		if (s->n < t[0]->rank || s->n > DP_MAXRANK)
			return dp_failt(err, op, "size has fewer dims than the input", t[0], NULL);
		*out = *t[0];
		out->rank = (uint8_t)s->n;
		for (int i = 0; i < s->n; i++) {
			int j = i - (s->n - t[0]->rank);
			int64_t have = j >= 0 ? t[0]->dim[j] : 1, want = s->ints[i];
			if (want == -1 && j >= 0)
				want = have;
			if (want < 0 || (have != 1 && have != want))
				return dp_failt(err, op, "cannot expand to the given size", t[0], NULL);
			out->dim[i] = want;
		}
		return 0;
	}
	case Aclone:
		*out = *t[0];
		return 0;
	case Acat:
	case Astack: {
		if (op->nin < 1)
			return fail(err, op, "needs at least one operand");
		int stack = op->kind == Astack, r = t[0]->rank + stack;
		int d = dp_axis(dp_geti(op, "dim", 0), r ? r : 1);
		if (d < 0 || r > DP_MAXRANK)
			return fail(err, op, "dim is out of range");
		int64_t total = 0;
		for (int k = 0; k < op->nin; k++) {
			const Type *u = &fn->val[op->in[k]].t;
			if (dp_samedt(err, op, t[0], u))
				return -1;
			if (u->rank != t[0]->rank)
				return dp_failt(err, op, "operands differ in rank", t[0], u);
			for (int i = 0; i < u->rank; i++)
				if (u->dim[i] != t[0]->dim[i] && (stack || i != d))
					return dp_failt(err, op, "operands differ in shape", t[0], u);
			total += stack ? 1 : u->dim[d];
		}
		*out = *t[0];
		out->rank = (uint8_t)r;
		if (stack) {
			for (int i = r - 1; i > d; i--)
				out->dim[i] = t[0]->dim[i - 1];
		}
		out->dim[d] = total;
		return 0;
	}
	case Aslice: {
		int d = dp_axis(dp_geti(op, "dim", 0), t[0]->rank);
		if (d < 0)
			return fail(err, op, "dim is out of range");
		int64_t n = t[0]->dim[d], s = dp_geti(op, "start", 0), e = dp_geti(op, "end", n);
		int64_t step = dp_geti(op, "step", 1);
		if (step < 1)
			return fail(err, op, "step must be >= 1");
		if (s < 0)
			s = s < -n ? 0 : s + n;
		if (e < 0)
			e = e < -n ? 0 : e + n;
		if (s > n)
			s = n;
		if (e > n)
			e = n;
		*out = *t[0];
		out->dim[d] = e > s ? (e - s + step - 1) / step : 0;
		return 0;
	}
	case Aselect: {
		int d = dp_axis(dp_geti(op, "dim", 0), t[0]->rank);
		if (d < 0)
			return fail(err, op, "dim is out of range");
		int64_t i = dp_geti(op, "index", 0), n = t[0]->dim[d];
		if (i < -n || i >= n)
			return fail(err, op, "index is out of range");
		*out = *t[0];
		for (int k = d; k + 1 < t[0]->rank; k++)
			out->dim[k] = t[0]->dim[k + 1];
		out->rank--;
		return 0;
	}
	case Aindex:
	case Aembedding: {
		const Type *x = t[0], *ix = t[1];
		int d = op->kind == Aindex ? dp_axis(dp_geti(op, "dim", 0), x->rank) : 0;
		if (op->kind == Aembedding && x->rank != 2)
			return dp_failt(err, op, "weight must be 2-D", x, NULL);
		if (d < 0)
			return fail(err, op, "dim is out of range");
		if (ix->dtype != DP_I64 && ix->dtype != DP_I32)
			return dp_failt(err, op, "indices must be i64 or i32", ix, NULL);
		int r = x->rank - 1 + ix->rank;
		if (r > DP_MAXRANK)
			return dp_failt(err, op, "result rank too large", x, ix);
		*out = *x;
		out->rank = (uint8_t)r;
		int k = 0;
		for (int i = 0; i < d; i++)
			out->dim[k++] = x->dim[i];
		for (int i = 0; i < ix->rank; i++)
			out->dim[k++] = ix->dim[i];
		for (int i = d + 1; i < x->rank; i++)
			out->dim[k++] = x->dim[i];
		return 0;
	}
	case Abmm:
		if (dp_samedt(err, op, t[0], t[1]) || dp_needfloat(err, op, t[0]))
			return -1;
		if (t[0]->rank != 3 || t[1]->rank != 3 || t[0]->dim[0] != t[1]->dim[0] ||
		    t[0]->dim[2] != t[1]->dim[1])
			return dp_failt(err, op, "operands must be [B,M,K] and [B,K,N]", t[0], t[1]);
		*out = *t[0];
		out->dim[2] = t[1]->dim[2];
		return 0;
	case Awhere: {
		Type ab;
		if (t[0]->dtype != DP_BOOL)
			return dp_failt(err, op, "the condition must be bool", t[0], NULL);
		if (dp_samedt(err, op, t[1], t[2]) || dp_bcast(err, op, t[1], t[2], &ab) ||
		    dp_bcast(err, op, t[0], &ab, out))
			return -1;
		out->dtype = t[1]->dtype;
		return 0;
	}
	case Asdpa:
		return sdpa(fn, op, out, err);
	case Aarange: {
		double s = dp_getf(op, "start", 0), e = dp_getf(op, "end", 0), st = dp_getf(op, "step", 1);
		int d = dtypeattr(err, op, "dtype", DP_I64);
		if (d < 0)
			return -1;
		if (st == 0 || !isfinite(s) || !isfinite(e) || !isfinite(st))
			return fail(err, op, "start, end and step must be finite and step nonzero");
		double n = ceil((e - s) / st);
		if (n > 1e15)
			return fail(err, op, "too many elements");
		memset(out, 0, sizeof *out);
		out->dtype = (uint8_t)d;
		out->rank = 1;
		out->dim[0] = n > 0 ? (int64_t)n : 0;
		return 0;
	}
	case Afull:
	case Arand:
	case Arandn:
	case Ascalar: {
		int d = dtypeattr(err, op, "dtype", DP_F32);
		if (d < 0)
			return -1;
		/* an integer aten.rand (dp-legalize's randperm keys): 64 random bits */
		if ((op->kind == Arand || op->kind == Arandn) && d != DP_F32 && d != DP_F64 &&
		    (op->kind == Arandn || d != DP_I64))
			return fail(err, op, "dtype must be f32 or f64");
		memset(out, 0, sizeof *out);
		out->dtype = (uint8_t)d;
		if (op->kind != Ascalar) {
			const Attr *s = dp_attr(op, "size");
			if (s->n > DP_MAXRANK)
				return fail(err, op, "rank exceeds 8");
			out->rank = (uint8_t)s->n;
			for (int i = 0; i < s->n; i++) {
				if (s->ints[i] < 0)
					return fail(err, op, "sizes must be >= 0");
				out->dim[i] = s->ints[i];
			}
		}
		return 0;
	}
	case Arandperm: {
		int d = dtypeattr(err, op, "dtype", DP_I64);
		if (d < 0)
			return -1;
		if (d != DP_I64 && d != DP_I32 && d != DP_F32 && d != DP_F64)
			return fail(err, op, "dtype must be i64, i32, f32 or f64");
		if (dp_geti(op, "n", 0) < 0)
			return fail(err, op, "n must be >= 0");
		memset(out, 0, sizeof *out);
		out->dtype = (uint8_t)d;
		out->rank = 1;
		out->dim[0] = dp_geti(op, "n", 0);
		return 0;
	}
	case Afulllike: {
		int d = dtypeattr(err, op, "dtype", t[0]->dtype);
		if (d < 0)
			return -1;
		*out = *t[0];
		out->dtype = (uint8_t)d;
		return 0;
	}
	}
	return -2;
}
