/* iwrite.c: index_write on the GPU (a KV cache's update): src's slices
 * written at their positions by runtime/dpops.cuh's dps_index_write, into
 * the state's own bytes where dp_writesstate says the write is in place
 * (the result is then a view of the state, plan.c), else into the result
 * after a copy of operand 0. */
#include <stdio.h>

#include "gpu.h"

enum { BLOCK = 256 };   /* dpops.cuh's launch bound */

int
emit_indexwrite(Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	int x = gbase(g, op->in[0]), y = gbase(g, op->out[0]), src = gbase(g, op->in[2]);
	const Type *tx = ty(g, op->in[0]);
	int d = normdim(dp_geti(op, "dim", 0), tx->rank), es = dp_dtype_size[tx->dtype];
	int64_t n = tx->dim[d], inner = prod(tx, d + 1, tx->rank), outer = prod(tx, 0, d);
	int64_t M = ty(g, op->in[1])->dim[0], total = outer * M * inner;
	const char *t = es == 8 ? "int64_t" : es == 4 ? "uint32_t" : es == 2 ? "uint16_t" : "uint8_t";

	g->ops = 1;
	opcomment(g->rec, fn, i, "\t");
	if (x != y && g->h[y].bytes > 0) {   /* not in place: operand 0 first, after */
		kflush(g);                   /* the kernels held, which may read it */
		str_printf(g->rec, "\tif (dprt_cuda_ok(cudaMemcpyAsync(v%d, v%d, %lld, "
		                   "cudaMemcpyDeviceToDevice, g->stream),\n"
		                   "\t                 \"cudaMemcpyAsync\", err, errn) != 0)\n"
		                   "\t\treturn -1;\n", gV(g, y), gV(g, x), (long long)g->h[y].bytes);
	}
	if (g->h[op->in[2]].kind == G_INLINE)   /* src a fused chain, computed there */
		return emit_iwrite_chain(g, i, y, x == y);   /* (held: kern.c) */
	if (total > 0) {
		str_printf(g->rec, "\tDP_LAUNCH(dps_index_write_b%d, %lld, %d, 0)((const int64_t *)"
		                   "v%d, (const %s *)v%d, (%s *)v%d, %lldLL, %lldLL, %lldLL, %lldLL);"
		                   "%s\n", es, (long long)((total + BLOCK - 1) / BLOCK), BLOCK,
		           gV(g, gbase(g, op->in[1])), t, gV(g, src), t, gV(g, y), (long long)outer,
		           (long long)M, (long long)n, (long long)inner,
		           x == y ? "   /* in place: the state's bytes */" : "");
		launched(g, "dps_index_write");
	}
	g->nkern++;
	return 0;
}
