/* pt2.c: libFuzzer harness of the .pt2 reader (the import stage in process,
 * on a memory file): any archive gives IR or one error at the model() call,
 * never a crash.  Its custom mutator mostly edits one entry of the zip and
 * rewrites the archive with correct CRC-32s, so that mutations reach the
 * JSON and tensor readers instead of stopping at the zip's checksums. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zip.h>

#include "import.h"
#include "fuzz.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max);

static int fd = -1;
static char dp[128];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_help(*argc, *argv, "the .pt2 reader");
	fd = fuzz_memfile("pt2", NULL, 0);
	/* the archive seeds take one f32[1,8] input and give one output */
	snprintf(dp, sizeof dp, "input x: f32[1,8]\ny = model(\"/proc/self/fd/%d\", x)\noutput y\n", fd);
	stderr = fopen("/dev/null", "w");  /* the stage's error reports */
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static jmp_buf jb;
	static Src src;   /* static: they outlive a longjmp with their values */
	static Imp imp;
	fuzz_fill(fd, data, size);
	src = (Src){ .path = "fuzz.dp", .dir = "", .text = dp, .len = strlen(dp) };
	imp = (Imp){ .src = &src };
	imp_bail = &jb;
	if (setjmp(jb) == 0)
		imp_run(&imp, "fuzz", "fuzz.dp", "weights.bin");
	imp_bail = NULL;
	imp_free(&imp);
	return 0;
}

/* ---- the mutator: unzip, mutate one entry, zip again (STORED) ---- */

enum { MAXENT = 64 };

typedef struct Ent {
	char name[256];
	uint8_t *data;
	size_t len;
} Ent;

static uint32_t
crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffff;
	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320 : c >> 1;
	}
	return ~c;
}

static void
put(uint8_t *p, uint32_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Reads the entries of the zip in data; their count, or -1. */
static int
unzip(const uint8_t *data, size_t size, Ent *e)
{
	zip_error_t ze;
	zip_error_init(&ze);
	zip_source_t *zs = zip_source_buffer_create(data, size, 0, &ze);
	zip_t *z = zs ? zip_open_from_source(zs, ZIP_RDONLY, &ze) : NULL;
	zip_error_fini(&ze);
	if (!z) {
		zip_source_free(zs);
		return -1;
	}
	zip_int64_t n = zip_get_num_entries(z, 0);
	int k = 0;
	for (zip_int64_t i = 0; i < n && k < MAXENT; i++) {
		zip_stat_t st;
		if (zip_stat_index(z, (zip_uint64_t)i, 0, &st) || st.size > size)
			continue;
		zip_file_t *f = zip_fopen_index(z, (zip_uint64_t)i, 0);
		if (!f)
			continue;
		e[k].data = malloc(st.size + 1);
		zip_int64_t r = zip_fread(f, e[k].data, st.size);
		zip_fclose(f);
		if (r < 0) {
			free(e[k].data);
			continue;
		}
		e[k].len = (size_t)r;
		snprintf(e[k].name, sizeof e[k].name, "%s", st.name);
		k++;
	}
	zip_discard(z);
	return k;
}

/* Writes the entries as a STORED zip into out (room for max bytes); its
 * length, or 0 when it does not fit. */
static size_t
rezip(const Ent *e, int n, uint8_t *out, size_t max)
{
	size_t off = 0, cd;
	uint32_t at[MAXENT];
	for (int i = 0; i < n; i++) {
		size_t nl = strlen(e[i].name);
		if (off + 30 + nl + e[i].len > max)
			return 0;
		uint8_t *h = out + off;
		memset(h, 0, 30);
		put(h, 0x04034b50, 4);
		put(h + 4, 20, 2);
		put(h + 14, crc32(e[i].data, e[i].len), 4);
		put(h + 18, (uint32_t)e[i].len, 4);
		put(h + 22, (uint32_t)e[i].len, 4);
		put(h + 26, (uint32_t)nl, 2);
		memcpy(h + 30, e[i].name, nl);
		memcpy(h + 30 + nl, e[i].data, e[i].len);
		at[i] = (uint32_t)off;
		off += 30 + nl + e[i].len;
	}
	cd = off;
	for (int i = 0; i < n; i++) {
		size_t nl = strlen(e[i].name);
		if (off + 46 + nl > max)
			return 0;
		uint8_t *h = out + off;
		memset(h, 0, 46);
		put(h, 0x02014b50, 4);
		put(h + 4, 20, 2);
		put(h + 6, 20, 2);
		put(h + 16, crc32(e[i].data, e[i].len), 4);
		put(h + 20, (uint32_t)e[i].len, 4);
		put(h + 24, (uint32_t)e[i].len, 4);
		put(h + 28, (uint32_t)nl, 2);
		put(h + 42, at[i], 4);
		memcpy(h + 46, e[i].name, nl);
		off += 46 + nl;
	}
	if (off + 22 > max)
		return 0;
	uint8_t *h = out + off;
	memset(h, 0, 22);
	put(h, 0x06054b50, 4);
	put(h + 8, (uint32_t)n, 2);
	put(h + 10, (uint32_t)n, 2);
	put(h + 12, (uint32_t)(off - cd), 4);
	put(h + 16, (uint32_t)cd, 4);
	return off + 22;
}

size_t
LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned seed)
{
	Ent e[MAXENT];
	srand(seed);
	int n = rand() % 8 ? unzip(data, size, e) : -1;  /* 1 in 8: raw bytes */
	if (n <= 0)
		return LLVMFuzzerMutate(data, size, max);
	int k = rand() % n;
	if (rand() % 2)   /* half the time the program itself */
		for (int i = 0; i < n; i++)
			if (strstr(e[i].name, "models/model.json"))
				k = i;
	int what = rand() % 16;
	if (what == 0) {  /* rename */
		size_t nl = strlen(e[k].name);
		nl = LLVMFuzzerMutate((uint8_t *)e[k].name, nl, sizeof e[k].name - 1);
		e[k].name[nl] = 0;
	} else if (what == 1 && n > 1) {  /* drop */
		free(e[k].data);
		e[k] = e[--n];
	} else {
		size_t room = e[k].len + 256 + (max > size ? max - size : 0);
		uint8_t *d = malloc(room);
		memcpy(d, e[k].data, e[k].len);
		e[k].len = LLVMFuzzerMutate(d, e[k].len, room);
		free(e[k].data);
		e[k].data = d;
	}
	size_t len = rezip(e, n, data, max);
	for (int i = 0; i < n; i++)
		free(e[i].data);
	return len ? len : LLVMFuzzerMutate(data, size, max);
}
