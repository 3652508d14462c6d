/* mm.main.c: runs mm.ir through its typed C API (mm.h).  The blob holds
 * W = [[1,0,0],[0,1,0],[0,0,1],[1,1,1]], b = [1,2,3,4] and
 * m = [[[1,0],[0,1],[0,0]], [[1,1],[1,1],[1,1]]] (see lower.t). */
#include <stdlib.h>

#include "check.h"
#include "mm.h"

int
main(void)
{
	const float x[6] = {1, 2, 3, 4, 5, 6};
	const float bt[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
	const float v[3] = {1, 2, 3};
	float lin[8], mmo[8], addmm[8], fold[16], bcast[8], batched[8], vm[4], mv[4], dot;
	float lin3[16], xl[120], linp[160], linrelu[160], wlinp[160], wlinrelu[160];
	int64_t label[2];
	const float wlin[8] = {2, 4, 6, 10, 5, 7, 9, 19};
	const float wmm[8] = {1, 2, 3, 6, 4, 5, 6, 15};
	const float waddmm[8] = {2.5f, 5, 7.5f, 14, 8.5f, 11, 13.5f, 32};
	const float wfold[16] = {1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1, 3};
	const float wbcast[8] = {1, 2, 4, 5, 6, 6, 15, 15};
	const float wbatched[8] = {1, 0, 0, 1, 1, 1, 3, 3};
	const float wvm[4] = {1, 2, 3, 6}, wdot = 14;
	const int64_t wlabel[2] = {3, 3};
	mm *m = mm_create();

	for (int i = 0; i < 40; i++) {   /* W·x + b: x0+1, x1+2, x2+3, x0+x1+x2+4 */
		for (int j = 0; j < 3; j++) {
			xl[i * 3 + j] = (float)((i * 7 + j * 3) % 11) - 5;
			wlinp[i * 4 + j] = xl[i * 3 + j] + (float)(j + 1);
			wlinrelu[i * 4 + j] = xl[i * 3 + j] > 0 ? xl[i * 3 + j] : 0;
		}
		wlinp[i * 4 + 3] = xl[i * 3] + xl[i * 3 + 1] + xl[i * 3 + 2] + 4;
		wlinrelu[i * 4 + 3] = wlinp[i * 4 + 3] - 4 > 0 ? wlinp[i * 4 + 3] - 4 : 0;
	}
	if (m == NULL || mm_run(m, x, bt, v, xl, lin, mmo, addmm, fold, bcast, batched, vm, mv,
	                        &dot, label, lin3, linp, linrelu) != 0) {
		fprintf(stderr, "run: %s\n", mm_error(m));
		return 1;
	}
	checkf("lin", lin, wlin, 8);
	checkf("mm", mmo, wmm, 8);
	checkf("addmm", addmm, waddmm, 8);
	checkf("fold", fold, wfold, 16);
	checkf("bcast", bcast, wbcast, 8);
	checkf("batched", batched, wbatched, 8);
	checkf("vm", vm, wvm, 4);
	checkf("mv", mv, wvm, 4);
	checkf("dot", &dot, &wdot, 1);
	checki("label", label, wlabel, 2);
	checkf("lin3", lin3, wfold, 16);
	checkf("linp", linp, wlinp, 160);
	checkf("linrelu", linrelu, wlinrelu, 160);
	mm_destroy(m);
	return nbad != 0;
}
