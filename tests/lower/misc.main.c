/* misc.main.c: runs misc.ir through its typed C API (misc.h). */
#include <stdlib.h>

#include "check.h"
#include "misc.h"

int
main(void)
{
	const uint8_t img[6] = {2, 4, 30, 8, 10, 12};
	float norm[6], idxf[3], sm[6], want[6];
	int64_t idx[3];
	/* img/2 = [[1,2,15],[4,5,6]]; minus [1,2,3], over [1,2,4] by channel */
	const float wnorm[6] = {0, 0, 3, 3, 1.5f, 0.75f};
	const int64_t widx[3] = {1, 1, 0};
	const float widxf[3] = {1, 1, 0};
	misc *m = misc_create();
	int r, k;

	if (m == NULL || misc_run(m, img, norm, idx, idxf, sm) != 0) {
		fprintf(stderr, "run: %s\n", misc_error(m));
		return 1;
	}
	for (r = 0; r < 2; r++) {
		float s = 0;
		for (k = 0; k < 3; k++)
			s += expf(wnorm[3 * r + k]);
		for (k = 0; k < 3; k++)
			want[3 * r + k] = expf(wnorm[3 * r + k]) / s;
	}
	checkf("norm", norm, wnorm, 6);
	checki("idx", idx, widx, 3);
	checkf("idxf", idxf, widxf, 3);
	checkf("sm", sm, want, 6);
	misc_destroy(m);
	return nbad != 0;
}
