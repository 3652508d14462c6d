/* safetensors.c: libFuzzer harness of the runtime's .safetensors reader
 * (dprt_st_parse) and of loading a program's weights from a checkpoint
 * (dprt_weights_load on a memory file): any bytes give a header or an
 * error; every tensor of a header that parses lies inside the file, with
 * as many bytes as its dtype and shape need; loading fills each named
 * tensor of a fixed blob or fails with a message. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dprtint.h"
#include "fuzz.h"

static int fd = -1;
static char path[64];

/* The blob of a program with three constants: a f32[2,3], b i64[4] and an
 * unnamed scalar. */
static const unsigned char head[64] = {'D', 'P', 'W', 'B', 1, 0, 1, 0, 3, 0, 0, 0, 0, 0, 0, 0,
                                       0, 1, 0, 0, 0, 0, 0, 0, 64};
static const unsigned char blobdata[256];
static const dprt_tensor tensors[] = {
	{"a", 64, 24, DPRT_F32, 2, {2, 3}},
	{"b", 128, 32, DPRT_I64, 1, {4}},
	{NULL, 192, 4, DPRT_F32, 0, {0}},
};
static const dprt_blob blob = {"weights.bin", 256, head, blobdata, 3, tensors};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_help(*argc, *argv, "the runtime's .safetensors reader");
	fd = fuzz_memfile("safetensors", path, sizeof path);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *files[1] = {path};
	dprt_weights *w;
	char err[512];
	dprt_st st;
	int i, k;

	if (dprt_st_parse(data, size, size, "fuzz", &st, err, sizeof err) == 0) {
		for (i = 0; i < st.n; i++) {
			const dprt_st_tensor *t = &st.t[i];
			int64_t n = 1;
			if (t->off < st.data || t->off > size || t->nbytes > size - t->off)
				abort();
			for (k = 0; k < t->rank; k++)
				n *= t->dim[k];
			if (t->dtype >= 0 && (uint64_t)n * (uint64_t)dprt_dtype_size[t->dtype] != t->nbytes)
				abort();
		}
		dprt_st_free(&st);
	} else if (err[0] == '\0') {
		abort();   /* a failure says why */
	}
	fuzz_fill(fd, data, size);
	if (dprt_weights_load(&blob, files, 1, &w, err, sizeof err) == 0) {
		const unsigned char *b = dprt_weights_base(w);
		volatile unsigned char sink = 0;
		for (i = 0; i < 256; i++)
			sink ^= b[i];
		(void)sink;
		dprt_weights_free(w);
	}
	return 0;
}
