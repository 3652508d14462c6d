/* scan.c: the ops that run along one axis with a kernel of
 * runtime/dpops.cuh: prefix sums, products and logs of sums of exponentials
 * (aten.cumsum, aten.cumprod, aten.logcumsumexp),
 * one thread per row, and
 * the stable sort (aten.sort), one thread per element. */
#include <stdio.h>

#include "gpu.h"

enum { BLOCK = 256 };   /* dpops.cuh's launch bound */

/* Whether emit_scan computes ops of kind k. */
int
isscan(int kind)
{
	return dp_op_form[kind] == Fscan || kind == Asort;
}

/* aten.sort: f32, i64 or i32. */
static int
emit_sort(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	int x = op->in[0];
	const Type *tx = ty(g, x);
	int d = tx->rank ? normdim(dp_geti(op, "dim", -1), tx->rank) : 0;
	int64_t n = tx->rank ? tx->dim[d] : 1, inner = prod(tx, tx->rank ? d + 1 : 0, tx->rank);
	int64_t rows = prod(tx, 0, d) * inner;
	const char *t = tx->dtype == DP_F32 ? "float" : tx->dtype == DP_I64 ? "int64_t" :
	                tx->dtype == DP_I32 ? "int32_t" : NULL;
	const char *tn = tx->dtype == DP_F32 ? "f32" : tx->dtype == DP_I64 ? "i64" : "i32";

	if (!t) {
		dp_seterr(g->err, "op %d (%s): the cuda target has no kernel for %s (f32, i64 or i32)",
		          i, dp_op_name[op->kind], dp_dtype_name[tx->dtype]);
		return -1;
	}
	g->ops = 1;
	opcomment(g->rec, fn, i, "\t");
	if (rows > 0 && n > 0) {
		str_printf(g->rec, "\tDP_LAUNCH(dps_sort_%s, %lld, %d, 0)(v%d, v%d, (int64_t *)v%d, "
		           "%lldLL, %lldLL, %lldLL, %d);\n", tn, (long long)((rows * n + BLOCK - 1) / BLOCK),
		           BLOCK, gV(g, gbase(g, x)), gV(g, op->out[0]), gV(g, op->out[1]), (long long)rows,
		           (long long)n, (long long)inner, dp_geti(op, "descending", 0) != 0);
		launched(g, "dps_sort");
	}
	g->nkern++;
	return 0;
}

int
emit_scan(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	int x = op->in[0], y = op->out[0];
	const Type *tx = ty(g, x);
	int d = tx->rank ? normdim(dp_geti(op, "dim", 0), tx->rank) : 0;
	int64_t n = tx->rank ? tx->dim[d] : 1, inner = prod(tx, tx->rank ? d + 1 : 0, tx->rank);
	int64_t rows = prod(tx, 0, d) * inner;
	int f32 = tx->dtype == DP_F32;

	if (op->kind == Asort)
		return emit_sort(g, i);
	if (tx->dtype != ty(g, y)->dtype || (!f32 && tx->dtype != DP_I64)) {
		dp_seterr(g->err, "op %d (%s): the cuda target has no kernel for %s to %s (f32 or "
		          "i64; dp-legalize casts integers)", i, dp_op_name[op->kind],
		          dp_dtype_name[tx->dtype], dp_dtype_name[ty(g, y)->dtype]);
		return -1;
	}
	g->ops = 1;
	opcomment(g->rec, fn, i, "\t");
	if (rows > 0 && n > 0) {
		const char *k = op->kind == Acumprod ? "dps_cumprod" :
		                op->kind == Alogcumsumexp ? "dps_logcumsumexp" : "dps_cumsum";
		str_printf(g->rec, "\tDP_LAUNCH(%s_%s, %lld, %d, 0)(v%d, v%d, %lldLL, "
		           "%lldLL, %lldLL);\n", k, f32 ? "f32" : "i64",
		           (long long)((rows + BLOCK - 1) / BLOCK), BLOCK, gV(g, gbase(g, x)), gV(g, y),
		           (long long)rows, (long long)n, (long long)inner);
		launched(g, k);
	}
	g->nkern++;
	return 0;
}
