/* shapes.main.c: runs shapes.ir through its typed C API (shapes.h). */
#include <stdlib.h>

#include "check.h"
#include "shapes.h"

int
main(void)
{
	const float x[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, -20, 30}, c[3] = {1, 2, -1};
	float y[6], sq[6], relu[6], xo[6], y2[6], scaled[6];
	/* x + 2b = [[21,-38,63],[24,-35,66]]; permuted [[21,24],[-38,-35],[63,66]];
	 * viewed as [3,2]: [[21,-38],[63,24],[-35,66]], times c by rows */
	const float wy[6] = {21, 24, -38, -35, 63, 66};
	const float wsq[6] = {441, 576, 1444, 1225, 3969, 4356};
	const float wrelu[6] = {21, 24, 0, 0, 63, 66};
	const float wscaled[6] = {21, -38, 126, 48, 35, -66};
	shapes *m = shapes_create();

	if (m == NULL || shapes_run(m, x, b, c, y, sq, relu, xo, y2, scaled) != 0) {
		fprintf(stderr, "run: %s\n", shapes_error(m));
		return 1;
	}
	checkf("y", y, wy, 6);
	checkf("sq", sq, wsq, 6);
	checkf("relu", relu, wrelu, 6);
	checkf("x", xo, x, 6);
	checkf("y2", y2, wy, 6);
	checkf("scaled", scaled, wscaled, 6);
	shapes_destroy(m);
	return nbad != 0;
}
