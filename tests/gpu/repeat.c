/* repeat.c: a driver of the classify program's C API (built for the cuda
 * target) for tests/gpu.t: runs it 20 times on one image (the first run
 * eager, the second captured into a CUDA graph, the rest replayed), checks
 * that every run gives the first run's bytes, then 3 runs more from the
 * image written into classify_input_buffer (read in place: the same
 * bytes), and writes the last run's outputs.  Where the program cannot
 * run (no GPU) it prints classify_error's message and exits 3.
 * usage: repeat IMAGE.npy LABEL.npy LOGITS.npy */
#include <stdio.h>
#include <string.h>

#include "classify.h"
#include "dprt.h"

int
main(int argc, char **argv)
{
	static const int64_t idim[4] = {1, 32, 32, 3}, ldim[1] = {1}, odim[2] = {1, 10};
	uint8_t img[3072];
	int64_t label, label0 = -1;
	float logits[10], logits0[10];
	char err[512];
	classify *m;
	int r, bad = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: repeat IMAGE.npy LABEL.npy LOGITS.npy\n");
		return 2;
	}
	if (dprt_npy_read(argv[1], DPRT_U8, 4, idim, img, err, sizeof err) != 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if ((m = classify_create()) == NULL) {
		fprintf(stderr, "out of memory\n");
		return 2;
	}
	for (r = 0; r < 20; r++) {
		memset(logits, 0xff, sizeof logits);   /* NaN: unwritten shows */
		label = -7;
		if (classify_run(m, img, &label, logits) != 0) {
			fprintf(stderr, "run %d: %s\n", r, classify_error(m));
			classify_destroy(m);
			return 3;
		}
		if (r == 0) {
			label0 = label;
			memcpy(logits0, logits, sizeof logits);
		} else if (label != label0 || memcmp(logits, logits0, sizeof logits) != 0) {
			fprintf(stderr, "run %d differs from run 0 (label %lld, want %lld)\n", r,
			        (long long)label, (long long)label0);
			bad = 1;
		}
	}
	/* the input written into classify_input_buffer: read in place, the
	 * same outputs; an output has none */
	uint8_t *in = classify_input_buffer(m, 0);
	if (in == NULL || classify_input_buffer(m, 1) != NULL || classify_input_buffer(m, -1) != NULL) {
		fprintf(stderr, "classify_input_buffer: %p for the image, %s for 1 and -1\n", (void *)in,
		        classify_input_buffer(m, 1) || classify_input_buffer(m, -1) ? "not NULL" : "NULL");
		bad = 1;
	}
	for (r = 0; in && r < 3; r++) {
		memcpy(in, img, sizeof img);
		memset(logits, 0xff, sizeof logits);
		label = -7;
		if (classify_run(m, in, &label, logits) != 0) {
			fprintf(stderr, "run from the input buffer: %s\n", classify_error(m));
			bad = 1;
			break;
		}
		if (label != label0 || memcmp(logits, logits0, sizeof logits) != 0) {
			fprintf(stderr, "run %d from the input buffer differs from run 0\n", r);
			bad = 1;
		}
	}
	classify_destroy(m);
	if (dprt_npy_write(argv[2], DPRT_I64, 1, ldim, &label, err, sizeof err) != 0 ||
	    dprt_npy_write(argv[3], DPRT_F32, 2, odim, logits, err, sizeof err) != 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	return bad;
}
