/* edge.main.c: runs edge.ir through its typed C API (edge.h).  The blob
 * holds c = [1,2,3] (see lower.t). */
#include <stdlib.h>

#include "check.h"
#include "edge.h"

int
main(void)
{
	const float v[3] = {1, 2, 3}, a3[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
	float c[3], vr[3], vm[4], mv[4], t[3];
	/* v·a3[b]: [0+4+12, 1+6+15], [6+16+30, 7+18+33]; rows of a3 viewed as
	 * [2,2,3] dotted with c: 0+2+6, 3+8+15, 6+14+24, 9+20+33 */
	const float wvm[4] = {16, 22, 52, 58}, wmv[4] = {8, 26, 44, 62};
	edge *m = edge_create();

	if (m == NULL || edge_run(m, v, a3, c, vr, vm, mv, t) != 0) {
		fprintf(stderr, "run: %s\n", edge_error(m));
		return 1;
	}
	checkf("c", c, v, 3);
	checkf("vr", vr, v, 3);
	checkf("vm", vm, wvm, 4);
	checkf("mv", mv, wmv, 4);
	checkf("t", t, v, 3);
	edge_destroy(m);
	return nbad != 0;
}
