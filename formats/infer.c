/* infer.c: attribute schemas and the shape/dtype rule of every op. */
#include <stdlib.h>
#include <string.h>

#include "dpir.h"
#include "dpint.h"

/* ---- attribute schemas (the strings in ops.h) ---- */

/* Parses the i-th entry of an op's schema; 0 when there is none. */
int
dp_spec(int kind, int i, Spec *s)
{
	if (kind < 0 || kind >= DP_NOP)
		return 0;
	const char *p = dp_op_attrs[kind];
	for (;;) {
		while (*p == ' ')
			p++;
		if (!*p)
			return 0;
		const char *e = p + strcspn(p, " ");
		if (i-- == 0) {
			const char *c = memchr(p, ':', e - p);
			if (!c)
				dp_die("bad attribute schema for %s", dp_op_name[kind]);
			s->klen = c - p;
			memcpy(s->key, p, s->klen);
			s->key[s->klen] = 0;
			const char *eq = memchr(c, '=', e - c);
			const char *ke = eq ? eq : e;
			int opt = !eq && ke[-1] == '?';
			if (opt)
				ke--;
			if (ke - c - 1 == 1)
				s->kind = c[1] == 'i' ? A_INT : c[1] == 'f' ? A_FLOAT : A_STR;
			else
				s->kind = c[1] == 'i' ? A_INTS : A_FLOATS;
			s->optional = eq != NULL || opt;
			s->hasdef = eq != NULL;
			s->def = eq ? strtod(eq + 1, NULL) : 0;
			return 1;
		}
		p = e;
	}
}

static const char *const kindname[] = { "int", "float", "string", "int list", "float list" };

/* Checks op's attributes against its schema: all required present with the
 * right kind, no unknown keys. */
int
dp_check_attrs(const Op *op, Err *err)
{
	Spec s;
	for (int i = 0; dp_spec(op->kind, i, &s); i++) {
		const Attr *a = dp_attr(op, s.key);
		if (!a) {
			if (s.optional)
				continue;
			dp_seterr(err, "%s: missing attribute '%s'", dp_op_name[op->kind], s.key);
			return -1;
		}
		if (a->kind != s.kind) {
			dp_seterr(err, "%s: attribute '%s' must be a %s, not a %s", dp_op_name[op->kind],
			          s.key, kindname[s.kind], kindname[a->kind]);
			return -1;
		}
	}
	for (int j = 0; j < op->nattr; j++) {
		int known = 0;
		for (int i = 0; dp_spec(op->kind, i, &s); i++)
			if (strcmp(s.key, op->attr[j].key) == 0)
				known = 1;
		if (!known) {
			dp_seterr(err, "%s: unknown attribute '%s'", dp_op_name[op->kind], op->attr[j].key);
			return -1;
		}
	}
	return 0;
}

/* Converts int attributes where the schema wants floats (as hand-written text
 * and importers produce them) and fills optional attributes with defaults. */
void
dp_fix_attrs(Fn *fn, int opi)
{
	Spec s;
	for (int i = 0; dp_spec(fn->op[opi].kind, i, &s); i++) {
		const Attr *a = dp_attr(&fn->op[opi], s.key);
		if (!a) {
			if (!s.hasdef)
				continue;
			if (s.kind == A_INT)
				dp_seti(fn, opi, s.key, (int64_t)s.def);
			else if (s.kind == A_FLOAT)
				dp_setf(fn, opi, s.key, s.def);
			continue;
		}
		if (s.kind == A_FLOAT && a->kind == A_INT)
			dp_setf(fn, opi, s.key, (double)a->i);
		else if (s.kind == A_FLOATS && a->kind == A_INTS) {
			int n = a->n;
			double *v = dp_alloc(fn->arena, n ? n : 1, sizeof *v);
			for (int k = 0; k < n; k++)
				v[k] = (double)a->ints[k];
			dp_setfloats(fn, opi, s.key, v, n);
		}
	}
}

/* ---- shape rules ---- */

#define NAME dp_op_name[op->kind]

/* Normalizes axis d (may be negative) for rank r; -1 when out of range. */
static int
badaxis(Err *err, const Op *op, const char *what, int64_t d, int r)
{
	dp_seterr(err, "%s: %s %lld is out of range for rank %d", NAME, what, (long long)d, r);
	return -1;
}

/* ---- helpers shared with rules.c (declared in dpint.h) ---- */

int
dp_isfloat(int dt)
{
	return dt == DP_F32 || dt == DP_F64 || dt == DP_F16 || dt == DP_BF16;
}

int
dp_axis(int64_t d, int r)
{
	if (d < 0)
		d += r;
	return d >= 0 && d < r ? (int)d : -1;
}

int
dp_failt(Err *err, const Op *op, const char *msg, const Type *a, const Type *b)
{
	char x[128], y[128];
	dp_type_str(a, 0, x, sizeof x);
	if (b)
		dp_type_str(b, 0, y, sizeof y);
	dp_seterr(err, "%s: %s: %s%s%s", NAME, msg, x, b ? " and " : "", b ? y : "");
	return -1;
}

int
dp_bcast(Err *err, const Op *op, const Type *a, const Type *b, Type *out)
{
	int r = a->rank > b->rank ? a->rank : b->rank;
	*out = *a;
	out->rank = (uint8_t)r;
	for (int i = 0; i < r; i++) {
		int ia = i - (r - a->rank), ib = i - (r - b->rank);
		int64_t da = ia >= 0 ? a->dim[ia] : 1, db = ib >= 0 ? b->dim[ib] : 1;
		if (da != db && da != 1 && db != 1)
			return dp_failt(err, op, "shapes do not broadcast", a, b);
		out->dim[i] = da == 1 ? db : da;
	}
	return 0;
}

int
dp_samedt(Err *err, const Op *op, const Type *a, const Type *b)
{
	if (a->dtype == b->dtype)
		return 0;
	dp_seterr(err, "%s: operand dtypes differ: %s and %s", NAME, dp_dtype_name[a->dtype],
	          dp_dtype_name[b->dtype]);
	return -1;
}

int
dp_needfloat(Err *err, const Op *op, const Type *t)
{
	if (dp_isfloat(t->dtype))
		return 0;
	dp_seterr(err, "%s: needs a floating-point operand, got %s", NAME, dp_dtype_name[t->dtype]);
	return -1;
}

/* Result of reshaping t to shape[0..n-1] (one entry may be -1). */
static int
reshape(const Op *op, const Type *t, const int64_t *shape, int n, Type *out, Err *err)
{
	if (n > DP_MAXRANK) {
		dp_seterr(err, "%s: rank %d exceeds %d", NAME, n, DP_MAXRANK);
		return -1;
	}
	int64_t total = dp_numel(t), known = 1;
	int infer = -1;
	*out = *t;
	out->rank = (uint8_t)n;
	for (int i = 0; i < n; i++) {
		if (shape[i] == -1 && infer < 0) {
			infer = i;
			continue;
		}
		if (shape[i] < 0 || (shape[i] && known > INT64_MAX / shape[i])) {
			dp_seterr(err, "%s: bad size %lld in shape", NAME, (long long)shape[i]);
			return -1;
		}
		known *= shape[i];
		out->dim[i] = shape[i];
	}
	if (infer >= 0) {
		if (known == 0 || total % known) {
			dp_seterr(err, "%s: cannot infer -1: %lld elements into blocks of %lld", NAME,
			          (long long)total, (long long)known);
			return -1;
		}
		out->dim[infer] = total / known;
		known = total;
	}
	if (known != total) {
		char x[128];
		dp_seterr(err, "%s: cannot reshape %s (%lld elements) into %lld elements", NAME,
		          dp_type_str(t, 0, x, sizeof x), (long long)total, (long long)known);
		return -1;
	}
	return 0;
}

static int
permute(const Op *op, const Type *t, const Attr *dims, Type *out, Err *err)
{
	if (dims->n != t->rank) {
		dp_seterr(err, "%s: dims has %d entries for a rank-%d input", NAME, dims->n, t->rank);
		return -1;
	}
	int seen[DP_MAXRANK] = { 0 };
	*out = *t;
	for (int i = 0; i < t->rank; i++) {
		int d = dp_axis(dims->ints[i], t->rank);
		if (d < 0)
			return badaxis(err, op, "dim", dims->ints[i], t->rank);
		if (seen[d]++) {
			dp_seterr(err, "%s: dims repeats axis %d", NAME, d);
			return -1;
		}
		out->dim[i] = t->dim[d];
	}
	return 0;
}

/* Numpy broadcasting of a and b into out. */
static int
matmul(const Op *op, const Type *a, const Type *b, Type *out, Err *err)
{
	if (dp_samedt(err, op, a, b) || dp_needfloat(err, op, a))
		return -1;
	if (a->rank == 0 || b->rank == 0)
		return dp_failt(err, op, "operands must have rank >= 1", a, b);
	int64_t k1 = a->dim[a->rank - 1];
	int64_t k2 = b->rank == 1 ? b->dim[0] : b->dim[b->rank - 2];
	if (k1 != k2)
		return dp_failt(err, op, "inner dimensions differ", a, b);
	*out = *a;
	if (a->rank <= 2 && b->rank <= 2) {
		int r = 0;
		if (a->rank == 2)
			out->dim[r++] = a->dim[0];
		if (b->rank == 2)
			out->dim[r++] = b->dim[1];
		out->rank = (uint8_t)r;
		return 0;
	}
	/* batched: broadcast the batch dims */
	Type ba = *a, bb = *b, bo;
	ba.rank = a->rank >= 2 ? a->rank - 2 : 0;
	bb.rank = b->rank >= 2 ? b->rank - 2 : 0;
	if (dp_bcast(err, op, &ba, &bb, &bo))
		return -1;
	int r = bo.rank;
	if (r + 2 > DP_MAXRANK)
		return dp_failt(err, op, "result rank too large", a, b);
	*out = bo;
	if (a->rank >= 2)
		out->dim[r++] = a->dim[a->rank - 2];
	if (b->rank >= 2)
		out->dim[r++] = b->dim[b->rank - 1];
	out->rank = (uint8_t)r;
	return 0;
}

static int
rule(const Fn *fn, const Op *op, Type *out, Err *err)
{
	const Type *t[8];
	for (int i = 0; i < op->nin && i < 8; i++)
		t[i] = &fn->val[op->in[i]].t;
	if (dp_check_attrs(op, err))
		return -1;
	int nin = dp_op_nin[op->kind];
	if (nin >= 0 && op->nin != nin) {
		dp_seterr(err, "%s takes %d operand%s, got %d", NAME, nin, nin == 1 ? "" : "s", op->nin);
		return -1;
	}
	for (int i = 0; i < op->nin; i++)
		if (op->kind != Oresize && !(op->kind == Otokenize && i == 0) &&
		    dp_isdyn(&fn->val[op->in[i]].t)) {
			char x[128];
			dp_seterr(err, "%s: operand %d is %s of unknown size (%s): only %s takes it", NAME, i,
			          dp_istext(&fn->val[op->in[i]].t) ? "text" : "an image",
			          dp_type_str(&fn->val[op->in[i]].t, 0, x, sizeof x),
			          dp_istext(&fn->val[op->in[i]].t) ? "tokenize" : "resize");
			return -1;
		}
	const Attr *a;
	switch (op->kind) {
	case Oinput:
	case Oconst:
		if (op->nout != 1) {
			dp_seterr(err, "%s must have one result", NAME);
			return -1;
		}
		*out = fn->val[op->out[0]].t;
		if (dp_isdyn(out) && op->kind == Oconst) {
			dp_seterr(err, "const: sizes must be known");
			return -1;
		}
		if (dp_isdyn(out) && dp_rule_dyninput(op, out, err))
			return -1;
		if (dp_nbytes(out) < 0) {
			dp_seterr(err, "%s: tensor larger than " DP_MAXBYTES_TEXT, NAME);
			return -1;
		}
		if (op->kind == Oconst) {
			int64_t nb = dp_geti(op, "nbytes", -1), off = dp_geti(op, "offset", -1);
			if (nb != dp_nbytes(out)) {
				dp_seterr(err, "const: nbytes=%lld but the type needs %lld", (long long)nb,
				          (long long)dp_nbytes(out));
				return -1;
			}
			if (off < 0 || off % 64) {
				dp_seterr(err, "const: offset %lld is not a 64-byte-aligned file offset",
				          (long long)off);
				return -1;
			}
			if (fn->weights && fn->wsize >= 0 && off + nb > fn->wsize) {
				dp_seterr(err, "const: bytes [%lld, %lld) lie outside the %lld-byte weight blob",
				          (long long)off, (long long)(off + nb), (long long)fn->wsize);
				return -1;
			}
		} else if (!dp_gets(op, "name")[0]) {
			dp_seterr(err, "input: empty name");
			return -1;
		}
		return 0;
	case Ocopy: {
		int d = dp_dev_lookup(dp_gets(op, "to"));
		if (d < 0) {
			dp_seterr(err, "copy: unknown device '%s'", dp_gets(op, "to"));
			return -1;
		}
		if (d == t[0]->dev) {
			dp_seterr(err, "copy: operand is already on %s", dp_dev_name[d]);
			return -1;
		}
		*out = *t[0];
		out->dev = (uint8_t)d;
		return 0;
	}
	case Ocast: {
		int d = dp_dtype_lookup(dp_gets(op, "dtype"));
		if (d < 0) {
			dp_seterr(err, "cast: unknown dtype '%s'", dp_gets(op, "dtype"));
			return -1;
		}
		*out = *t[0];
		out->dtype = (uint8_t)d;
		break;
	}
	case Onormalize: {
		int ax = dp_axis(dp_geti(op, "axis", -1), t[0]->rank);
		if (ax < 0)
			return badaxis(err, op, "axis", dp_geti(op, "axis", -1), t[0]->rank);
		if (t[0]->dtype != DP_U8 && t[0]->dtype != DP_F32) {
			dp_seterr(err, "normalize: input must be u8 or f32, got %s", dp_dtype_name[t[0]->dtype]);
			return -1;
		}
		const Attr *m = dp_attr(op, "mean"), *s = dp_attr(op, "std");
		if (m->n != t[0]->dim[ax] || s->n != t[0]->dim[ax]) {
			dp_seterr(err, "normalize: mean and std need %lld values (axis %d), got %d and %d",
			          (long long)t[0]->dim[ax], ax, m->n, s->n);
			return -1;
		}
		for (int i = 0; i < s->n; i++)
			if (s->floats[i] == 0) {
				dp_seterr(err, "normalize: std[%d] is zero", i);
				return -1;
			}
		*out = *t[0];
		out->dtype = DP_F32;
		break;
	}
	case Opermute:
	case Apermute:
		if (permute(op, t[0], dp_attr(op, "dims"), out, err))
			return -1;
		break;
	case Oreshape:
	case Areshape:
	case Aview:
		a = dp_attr(op, op->kind == Aview ? "size" : "shape");
		if (reshape(op, t[0], a->ints, a->n, out, err))
			return -1;
		break;
	case Oflatten: {
		int r = t[0]->rank ? t[0]->rank : 1;
		int s = dp_axis(dp_geti(op, "start", 1), r), e = dp_axis(dp_geti(op, "end", -1), r);
		if (s < 0)
			return badaxis(err, op, "start", dp_geti(op, "start", 1), t[0]->rank);
		if (e < 0)
			return badaxis(err, op, "end", dp_geti(op, "end", -1), t[0]->rank);
		if (s > e) {
			dp_seterr(err, "flatten: start %d is after end %d", s, e);
			return -1;
		}
		*out = *t[0];
		if (t[0]->rank == 0) {
			out->rank = 1;
			out->dim[0] = 1;
			break;
		}
		int k = 0;
		for (int i = 0; i < s; i++)
			out->dim[k++] = t[0]->dim[i];
		int64_t n = 1;
		for (int i = s; i <= e; i++)
			n *= t[0]->dim[i];
		out->dim[k++] = n;
		for (int i = e + 1; i < t[0]->rank; i++)
			out->dim[k++] = t[0]->dim[i];
		out->rank = (uint8_t)k;
		break;
	}
	case Oargmax: {
		int d = dp_axis(dp_geti(op, "dim", 0), t[0]->rank);
		if (d < 0)
			return badaxis(err, op, "dim", dp_geti(op, "dim", 0), t[0]->rank);
		if (t[0]->dim[d] == 0) {
			dp_seterr(err, "argmax: dim %d is empty", d);
			return -1;
		}
		*out = *t[0];
		out->dtype = DP_I64;
		if (dp_geti(op, "keepdim", 0))
			out->dim[d] = 1;
		else {
			for (int i = d; i + 1 < t[0]->rank; i++)
				out->dim[i] = t[0]->dim[i + 1];
			out->rank--;
		}
		break;
	}
	case Osoftmax: {
		int d = dp_axis(dp_geti(op, "dim", 0), t[0]->rank);
		if (d < 0)
			return badaxis(err, op, "dim", dp_geti(op, "dim", 0), t[0]->rank);
		if (dp_needfloat(err, op, t[0]))
			return -1;
		*out = *t[0];
		break;
	}
	case Aadd:
	case Amul:
		if (dp_samedt(err, op, t[0], t[1]) || dp_bcast(err, op, t[0], t[1], out))
			return -1;
		break;
	case Arelu:
		*out = *t[0];
		break;
	case Alinear: {
		if (op->nin != 2 && op->nin != 3) {
			dp_seterr(err, "aten.linear takes 2 or 3 operands, got %d", op->nin);
			return -1;
		}
		const Type *x = t[0], *w = t[1];
		if (dp_samedt(err, op, x, w) || dp_needfloat(err, op, x))
			return -1;
		if (x->rank < 1 || w->rank != 2 || x->dim[x->rank - 1] != w->dim[1])
			return dp_failt(err, op, "input and weight do not match", x, w);
		if (op->nin == 3) {
			const Type *b = t[2];
			if (dp_samedt(err, op, x, b))
				return -1;
			if (b->rank != 1 || b->dim[0] != w->dim[0])
				return dp_failt(err, op, "bias does not match weight", b, w);
		}
		*out = *x;
		out->dim[x->rank - 1] = w->dim[0];
		break;
	}
	case Aaddmm:
	case Abaddbmm: {   /* beta·s + alpha·m1·m2, of matrices or of batches of them */
		const Type *s = t[0], *m1 = t[1], *m2 = t[2];
		int r = op->kind == Aaddmm ? 2 : 3;
		if (m1->rank != r || m2->rank != r || (r == 3 && m1->dim[0] != m2->dim[0]))
			return dp_failt(err, op, r == 2 ? "mat1 and mat2 must be 2-D" :
			                "batch1 and batch2 must be 3-D, of one batch", m1, m2);
		if (matmul(op, m1, m2, out, err) || dp_samedt(err, op, s, m1))
			return -1;
		Type bc;
		if (dp_bcast(err, op, s, out, &bc))
			return -1;
		bc.dev = out->dev;   /* placed but not partitioned: devices may differ */
		if (!dp_type_eq(&bc, out))
			return dp_failt(err, op, "self does not broadcast to the product", s, out);
		break;
	}
	case Amm:
		if (t[0]->rank != 2 || t[1]->rank != 2)
			return dp_failt(err, op, "operands must be 2-D", t[0], t[1]);
		/* fall through */
	case Amatmul:
		if (matmul(op, t[0], t[1], out, err))
			return -1;
		break;
	case At:
		if (t[0]->rank > 2) {
			dp_seterr(err, "aten.t: input has rank %d (at most 2)", t[0]->rank);
			return -1;
		}
		*out = *t[0];
		if (t[0]->rank == 2) {
			out->dim[0] = t[0]->dim[1];
			out->dim[1] = t[0]->dim[0];
		}
		break;
	default: {
		int rc = dp_rule_image(fn, op, out, err);
		if (rc == -2)
			rc = dp_rule_nn(fn, op, out, err);
		if (rc == -2)
			dp_die("no shape rule for op kind %d", op->kind);
		if (rc)
			return -1;
	}
	}
	for (int k = 0; k < dp_op_nout[op->kind]; k++) {
		out[k].dev = op->dev;
		if (dp_nbytes(&out[k]) < 0) {
			dp_seterr(err, "%s: result larger than " DP_MAXBYTES_TEXT, NAME);
			return -1;
		}
	}
	return 0;
}

/* The op's shape/dtype rule, then how its results carry a bounded
 * operand's length. */
int
dp_rule(const Fn *fn, const Op *op, Type *out, Err *err)
{
	if (rule(fn, op, out, err))
		return -1;
	return dp_bound_rule(fn, op, out, err);
}

int
dp_infer(Fn *fn, int opi, Err *err)
{
	Op *op = &fn->op[opi];
	if (op->kind == Oinput || op->kind == Oconst)
		dp_die("dp_infer on %s: give its type with dp_addout", dp_op_name[op->kind]);
	for (int i = 0; i < op->nin; i++)
		if (op->in[i] < 0 || op->in[i] >= fn->nval)
			dp_die("dp_infer: operand %d of %s is not a value", i, NAME);
	dp_fix_attrs(fn, opi);
	op = &fn->op[opi];
	if (op->kind == Ocopy)
		op->dev = (uint8_t)(dp_gets(op, "to") && dp_dev_lookup(dp_gets(op, "to")) >= 0
		                            ? dp_dev_lookup(dp_gets(op, "to")) : op->dev);
	Type out[DP_MAXOUT];
	if (dp_rule(fn, op, out, err))
		return -1;
	for (int k = 0; k < dp_op_nout[op->kind]; k++)
		dp_addout(fn, opi, out[k]);
	return 0;
}

/* ---- facts of legalized IR the lowerings share ---- */

static const Type *
intype(const Fn *fn, const Op *op, int k)
{
	return &fn->val[op->in[k]].t;
}

/* Whether op only reinterprets its operand's bytes: every tensor is dense
 * in C order, so a reshape of one is the same bytes.  Legalized IR has one
 * reshape, aten.view (dp-legalize rewrites the others into it). */
int
dp_other(const Op *op, int v)
{
	return op->in[0] == v ? op->in[1] : op->in[0];
}

int
dp_isreshape(const Fn *fn, const Op *op)
{
	(void)fn;
	return op->kind == Aview || op->kind == Obound;
}

/* Whether op swaps the two axes of a matrix: in legalized IR, aten.permute
 * [1, 0] (dims >= 0; dp-legalize rewrites aten.t, aten.transpose and the
 * pipeline's permute into it). */
int
dp_istranspose(const Fn *fn, const Op *op)
{
	const Attr *a = dp_attr(op, "dims");

	return op->kind == Apermute && intype(fn, op, 0)->rank == 2 && a && a->n == 2 &&
	       a->ints[0] == 1 && a->ints[1] == 0;
}

/* The readers of value v (ports counted; a graph output counts as one)
 * into *n, and the one reader into *who when there is exactly one (else
 * -1). */
static void
readers(const Fn *fn, int v, int *n, int *who)
{
	*n = 0;
	*who = -1;
	for (int i = 0; i < fn->nop; i++)
		for (int k = 0; k < fn->op[i].nin; k++)
			if (fn->op[i].in[k] == v) {
				++*n;
				*who = i;
			}
	for (int k = 0; k < fn->nout; k++)
		if (fn->out[k].val == v) {
			++*n;
			*who = -1;
		}
	if (*n != 1)
		*who = -1;
}

/* Whether index_write op writes into its operand 0's bytes in place: that
 * operand is a state (a const with state=1), or views of one each read by
 * nothing else, and every other reader of the state is an assign to it,
 * so that no op reads the state's old value after the write.  The state's
 * value, or -1. */
int
dp_writesstate(const Fn *fn, const Op *op)
{
	int v = op->in[0], n, who, me = (int)(op - fn->op);
	const Op *d;

	if (op->kind != Oindexwrite)
		return -1;
	for (;;) {   /* up the views, each read by the next alone */
		d = &fn->op[fn->val[v].def];
		if (d->kind == Oconst)
			break;
		readers(fn, v, &n, &who);
		if (!dp_isreshape(fn, d) || n != 1 || who != me)
			return -1;
		me = fn->val[v].def;
		v = d->in[0];
	}
	if (!dp_geti(d, "state", 0) || d->dev != op->dev)
		return -1;
	for (int i = 0; i < fn->nop; i++)   /* the state's other readers: its assigns */
		for (int k = 0; k < fn->op[i].nin; k++)
			if (fn->op[i].in[k] == v && i != me && !(fn->op[i].kind == Oassign && k == 0))
				return -1;
	for (int k = 0; k < fn->nout; k++)
		if (fn->out[k].val == v)
			return -1;
	return v;
}

/* The window of a legalized aten.max_pool2d or aten.avg_pool2d: kernel,
 * stride, padding and (max pooling; else 1) dilation as (h, w) pairs, as
 * dp-legalize writes them (it fills the defaults, an empty stride being the
 * kernel).  -1 when an attribute is not a pair: the IR was not legalized. */
int
dp_poolwin(const Op *op, int64_t k[2], int64_t s[2], int64_t p[2], int64_t d[2])
{
	static const char *const key[] = { "kernel_size", "stride", "padding", "dilation" };
	int64_t *out[] = { k, s, p, d };

	d[0] = d[1] = 1;
	for (int i = 0; i < (op->kind == Amaxpool ? 4 : 3); i++) {
		const Attr *a = dp_attr(op, key[i]);
		if (!a || a->n != 2)
			return -1;
		out[i][0] = a->ints[0];
		out[i][1] = a->ints[1];
	}
	return 0;
}

/* Whether operand k of op is read as a matrix through strides (a 2-D
 * product's operand), so that a transposed view of it costs nothing. */
int
dp_matuse(const Fn *fn, const Op *op, int k)
{
	switch (op->kind) {
	case Amm:
		return 1;
	case Aaddmm:
		return k >= 1;
	case Alinear:
		return k == 1 || (k == 0 && intype(fn, op, 0)->rank == 2);
	}
	return 0;
}
