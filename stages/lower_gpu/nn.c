/* nn.c: convolution, pooling, batched matrix products and attention on the
 * device.  (None yet: these ops stay on the cpu, see formats/ops.h.) */
#include "gpu.h"

int
isnn(const Fn *fn, const Op *op)
{
	(void)fn;
	(void)op;
	return 0;
}

int
emit_nn(Gpu *g, int i)
{
	dp_seterr(g->err, "op %d (%s): the cuda target has no kernel for this op", i,
	          dp_op_name[g->fn->op[i].kind]);
	return -1;
}

int
nnplan(Gpu *g)
{
	(void)g;
	return 0;
}
