/* scan.c: emitters of the ops that run along one axis: the scans
 * (aten.cumsum, cumprod, logcumsumexp) and torch.gather (aten.gather). */
#include "lower.h"

/* aten.cumsum, aten.cumprod: f32 or i64 (dp-legalize casts integers and
 * bool to i64); aten.logcumsumexp: f32. */
int
k_scan(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0];
	const Type *tx = ty(c, x);
	int d = tx->rank ? normdim(dp_geti(op, "dim", 0), tx->rank) : 0;

	if (tx->dtype != ty(c, y)->dtype || (tx->dtype != DP_F32 && tx->dtype != DP_I64)) {
		dp_seterr(c->err, "op %d (%s): the cpu target has no kernel for %s to %s (f32 or "
		          "i64; dp-legalize casts integers)", i, dp_op_name[op->kind],
		          dp_dtype_name[tx->dtype], dp_dtype_name[ty(c, y)->dtype]);
		return -1;
	}
	if (dp_numel(tx) == 0)
		return 0;
	str_printf(c->body, "\tdprt_scan(%s, %d, v%d, v%d, %lld, %lld, %lld);\n",
	           dprt_enum(tx->dtype), op->kind == Alogcumsumexp ? 2 : op->kind == Acumprod,
	           V(c, y), V(c, x), (long long)prod(tx, 0, d),
	           (long long)(tx->rank ? tx->dim[d] : 1), (long long)prod(tx, tx->rank ? d + 1 : 0,
	                                                                    tx->rank));
	return 0;
}

static void
dims(Ctx *c, const Type *t)
{
	static const int64_t one[1] = { 1 };

	cints(c, t->rank ? t->dim : one, t->rank ? t->rank : 1);
}

/* aten.gather: any dtype, i64 or i32 indices. */
int
k_gatherdim(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0], ix = op->in[1];
	const Type *tx = ty(c, x), *ti = ty(c, ix);

	if (dp_numel(ti) == 0)
		return 0;
	str_printf(c->body, "\tif (dprt_gather_dim(v%d, v%d, %d, %d, ", V(c, y), V(c, x),
	           dp_dtype_size[tx->dtype], tx->rank ? tx->rank : 1);
	dims(c, tx);
	str_put(c->body, ", ");
	dims(c, ti);
	str_printf(c->body, ", %d, v%d, %s, \"op %d (%s)\", err, errn) != 0)\n\t\treturn -1;\n",
	           tx->rank ? normdim(dp_geti(op, "dim", 0), tx->rank) : 0, V(c, ix),
	           dprt_enum(ti->dtype), i, dp_op_name[op->kind]);
	return 0;
}

/* aten.sort: f32, i64 or i32, stable; values and i64 indices. */
int
k_sort(Ctx *c, const Op *op, int i)
{
	int x = op->in[0];
	const Type *tx = ty(c, x);
	int d = tx->rank ? normdim(dp_geti(op, "dim", -1), tx->rank) : 0;

	if (tx->dtype != DP_F32 && tx->dtype != DP_I64 && tx->dtype != DP_I32) {
		dp_seterr(c->err, "op %d (%s): the cpu target has no kernel for %s (f32, i64 or i32)",
		          i, dp_op_name[op->kind], dp_dtype_name[tx->dtype]);
		return -1;
	}
	if (dp_numel(tx) == 0)
		return 0;
	str_printf(c->body, "\tif (dprt_sort(%s, v%d, v%d, v%d, %lld, %lld, %lld, %d, err, errn) != 0)\n"
	           "\t\treturn -1;\n", dprt_enum(tx->dtype), V(c, op->out[0]), V(c, op->out[1]),
	           V(c, x), (long long)prod(tx, 0, d), (long long)(tx->rank ? tx->dim[d] : 1),
	           (long long)prod(tx, tx->rank ? d + 1 : 0, tx->rank),
	           dp_geti(op, "descending", 0) != 0);
	return 0;
}
