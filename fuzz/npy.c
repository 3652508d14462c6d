/* npy.c: libFuzzer harness of the runtime's .npy reader (dprt_npy_load,
 * dprt_npy_read, and dprt_npy_load_mem on the bytes themselves, as .npz
 * members are read) on a memory file: any bytes give a tensor or an error,
 * the same from the file and from memory; a file that loads reads back the
 * same with its own dtype and shape, and reading against a fixed expected
 * type never writes past its buffer. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dprt.h"
#include "fuzz.h"

static int fd = -1;
static char path[64];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_help(*argc, *argv, "the runtime's .npy reader");
	fd = fuzz_memfile("npy", path, sizeof path);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	int dtype, rank;
	int64_t dim[DPRT_MAXRANK];
	void *p;
	static const int64_t want[2] = { 2, 3 };
	float dst[6];

	fuzz_fill(fd, data, size);
	dprt_npy_read(path, DPRT_F32, 2, want, dst, err, sizeof err);
	int mdtype, mrank, mrc;
	int64_t mdim[DPRT_MAXRANK];
	void *m = NULL;
	mrc = dprt_npy_load_mem(data, size, "mem", &mdtype, &mrank, mdim, &m, err, sizeof err);
	if (dprt_npy_load(path, &dtype, &rank, dim, &p, err, sizeof err) != mrc) {
		fprintf(stderr, "the file and memory readers disagree\n");
		abort();
	}
	if (mrc == 0) {
		int64_t n = 1;
		for (int i = 0; i < rank; i++)
			n *= dim[i];
		if (mdtype != dtype || mrank != rank || memcmp(mdim, dim, sizeof *dim * (size_t)rank) ||
		    memcmp(m, p, (size_t)n * (size_t)dprt_dtype_size[dtype])) {
			fprintf(stderr, "the file and memory readers read different tensors\n");
			abort();
		}
	}
	free(m);
	if (mrc == 0) {
		if (dtype < 0 || dtype >= DPRT_NDTYPE || rank < 0 || rank > DPRT_MAXRANK)
			abort();
		int64_t n = 1;
		for (int i = 0; i < rank; i++)
			n *= dim[i];
		size_t nb = (size_t)n * (size_t)dprt_dtype_size[dtype];
		void *q = malloc(nb ? nb : 1);
		if (dprt_npy_read(path, dtype, rank, dim, q, err, sizeof err) || memcmp(p, q, nb)) {
			fprintf(stderr, "load succeeded but read failed: %s\n", err);
			abort();
		}
		free(q);
		free(p);
	}
	return 0;
}
