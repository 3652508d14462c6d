/* pix.main.c: runs pix.ir through its typed C API (pix.h). */
#include <string.h>

#include "check.h"
#include "pix.h"

static void
checku8(const char *what, const uint8_t *got, const uint8_t *want, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (got[i] != want[i]) {
			fprintf(stderr, "%s[%d] = %d, want %d\n", what, i, got[i], want[i]);
			nbad++;
		}
}

int
main(void)
{
	/* photo 2x4: the shorter side is already 2, so no filtering; the
	 * 2x2 crop of the 2x4 image starts at column round(1) = 1 */
	const uint8_t photo[8] = {0, 1, 2, 3, 10, 11, 12, 13};
	const uint8_t wsmall[4] = {1, 2, 11, 12};
	/* x[r][c] = 4r + c; crop rows round(1.5) = 2.., columns 1.. */
	const uint8_t wcrop[4] = {9, 10, 13, 14};
	/* 4 -> 2 columns: a triangle of half-width 2 centred at 1 and 3 gives
	 * weights 3/7, 3/7, 1/7 and 1/7, 3/7, 3/7: 4r + 5/7 and 4r + 16/7 */
	const uint8_t whalf[10] = {1, 2, 5, 6, 9, 10, 13, 14, 17, 18};
	const float s[12] = {1, 3, 3, NAN, 2, 3, 5, 4, 4, 4, -INFINITY, 6};
	const float wv[8] = {NAN, 3, 3, 3, 6, 5, 4, 4};
	const int64_t wi[8] = {3, 1, 2, 5, 5, 0, 1, 2};
	uint8_t x[20], small[4], crop[4], half[10];
	float v[8];
	int64_t idx[8];
	pix *m = pix_create();
	int k;

	for (k = 0; k < 20; k++)
		x[k] = (uint8_t)k;
	if (m == NULL || pix_run(m, photo, 2, 4, x, s, small, crop, half, v, idx) != 0) {
		fprintf(stderr, "run: %s\n", pix_error(m));
		return 1;
	}
	checku8("small", small, wsmall, 4);
	checku8("crop", crop, wcrop, 4);
	checku8("half", half, whalf, 10);
	checki("i", idx, wi, 8);
	if (!isnan(v[0])) {
		fprintf(stderr, "v[0] = %g, want nan\n", v[0]);
		nbad++;
	}
	checkf("v", v + 1, wv + 1, 7);
	/* an image of no pixels is an error naming the input */
	if (pix_run(m, photo, 0, 4, x, s, small, crop, half, v, idx) == 0 ||
	    strcmp(pix_error(m), "photo: bad image size 0x4x1") != 0) {
		fprintf(stderr, "empty image: got \"%s\"\n", pix_error(m));
		nbad++;
	}
	pix_destroy(m);
	return nbad != 0;
}
