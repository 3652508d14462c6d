/* app.c: a tiny C program that runs the classify pipeline through its
 * generated C API (classify.h, libclassify.a): prints the label of a
 * 32x32 RGB u8 image given as a .npy file. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "classify.h"

/* Reads n bytes of pixels from a version-1 .npy file (header, then data). */
static int
readnpy(const char *path, uint8_t *px, size_t n)
{
	unsigned char h[10];
	FILE *f = fopen(path, "rb");
	int ok = f && fread(h, 1, sizeof h, f) == sizeof h && !memcmp(h, "\x93NUMPY\x01", 7) &&
	         !fseek(f, 10L + (h[8] | h[9] << 8), SEEK_SET) && fread(px, 1, n, f) == n;
	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

int
main(int argc, char **argv)
{
	uint8_t image[1 * 32 * 32 * 3];
	int64_t label;
	float logits[10];
	if (argc != 2 || readnpy(argv[1], image, sizeof image)) {
		fprintf(stderr, "usage: app IMAGE.npy (u8, 1x32x32x3)\n");
		return 2;
	}
	classify *m = classify_create();
	if (m == NULL || classify_run(m, image, &label, logits) != 0) {
		fprintf(stderr, "app: %s\n", m ? classify_error(m) : "out of memory");
		classify_destroy(m);
		return 1;
	}
	printf("label %lld (logit %g)\n", (long long)label, logits[label]);
	classify_destroy(m);
	return 0;
}
