/* weights.c: a program instance's weights: the blob embedded in the
 * executable, a blob file mapped where it lies (pages read as they are
 * touched), or tensors taken by name from .safetensors checkpoints. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dprtint.h"

enum { HEAD = 64 };

struct dprt_weights {
	const unsigned char *base;	/* the blob the program reads */
	void *map;			/* a mapping to unmap, or NULL */
	size_t mapn;
};

/* Reads a little-endian integer of n bytes. */
static uint64_t
le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

/* Maps the weight blob at path after checking it is the one b describes;
 * writable (copy on write) when tensors are to be copied over it. */
static int
mapblob(const dprt_blob *b, const char *path, int writable, void **map, char *err,
        size_t errn)
{
	unsigned char head[HEAD];
	struct stat st;
	ssize_t n;
	void *p;
	int fd;

	if ((fd = open(path, O_RDONLY)) < 0)
		return dprt_errf(err, errn, "%s: cannot open: %s", path, strerror(errno));
	n = read(fd, head, HEAD);
	if (fstat(fd, &st) < 0 || n < 0) {
		dprt_errf(err, errn, "%s: cannot read: %s", path, strerror(errno));
		goto fail;
	}
	if (n < 8 || memcmp(head, "DPWB", 4) != 0) {
		dprt_errf(err, errn, "%s: not a DevProc weight blob", path);
		goto fail;
	}
	if (le(head + 4, 2) != le(b->head + 4, 2)) {
		dprt_errf(err, errn, "%s: a weight blob of format version %u, but the program "
		          "reads version %u", path, (unsigned)le(head + 4, 2),
		          (unsigned)le(b->head + 4, 2));
		goto fail;
	}
	if ((uint64_t)st.st_size != b->size || n < HEAD || le(head + 16, 8) != b->size) {
		dprt_errf(err, errn, "%s: a weight blob of %lld bytes, but the program was built "
		          "with one of %llu (%s of another build?)", path, (long long)st.st_size,
		          (unsigned long long)b->size, b->file);
		goto fail;
	}
	if (memcmp(head, b->head, HEAD) != 0) {
		dprt_errf(err, errn, "%s: not the weight blob the program was built with (its "
		          "content hash differs from that of %s)", path, b->file);
		goto fail;
	}
	p = mmap(NULL, b->size, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		dprt_errf(err, errn, "%s: cannot map %llu bytes: %s", path,
		          (unsigned long long)b->size, strerror(errno));
		goto fail;
	}
	close(fd);
	*map = p;
	return 0;
fail:
	close(fd);
	return -1;
}

/* Whether the file at path starts as a weight blob does. */
static int
isblob(const char *path)
{
	char m[4] = {0};
	FILE *f = fopen(path, "rb");

	if (f == NULL)
		return 0;
	if (fread(m, 1, 4, f) != 4)
		m[0] = 0;
	fclose(f);
	return memcmp(m, "DPWB", 4) == 0;
}

int
dprt_weights_load(const dprt_blob *b, const char *const *files, int nfiles,
                  dprt_weights **wp, char *err, size_t errn)
{
	dprt_weights *w;
	const char *blobfile = NULL;
	const char **st;
	int i, nst = 0;

	*wp = NULL;
	if (b == NULL) {
		if (nfiles > 0)
			return dprt_errf(err, errn, "%s: the program has no weights", files[0]);
		return 0;
	}
	st = calloc((size_t)nfiles + 1, sizeof *st);
	w = calloc(1, sizeof *w);
	if (st == NULL || w == NULL) {
		free(st);
		free(w);
		return dprt_errf(err, errn, "out of memory");
	}
	for (i = 0; i < nfiles; i++) {
		if (!isblob(files[i])) {
			st[nst++] = files[i];
		} else if (blobfile) {
			dprt_errf(err, errn, "%s: a second weight blob (%s is the first)", files[i],
			          blobfile);
			goto fail;
		} else {
			blobfile = files[i];
		}
	}
	if (blobfile) {
		if (mapblob(b, blobfile, nst > 0, &w->map, err, errn) != 0)
			goto fail;
		w->mapn = b->size;
		w->base = w->map;
	} else if (b->data) {
		w->base = b->data;
	} else if (nst == 0) {
		dprt_errf(err, errn, "the program was linked without its weights: give its weight "
		          "blob (%s) or .safetensors files", b->file);
		goto fail;
	}
	if (nst > 0 && dprt_st_fill(b, st, nst, w->base, &w->map, &w->mapn, err, errn) != 0)
		goto fail;
	if (nst > 0)
		w->base = w->map;
	free(st);
	*wp = w;
	return 0;
fail:
	free(st);
	dprt_weights_free(w);
	return -1;
}

const unsigned char *
dprt_weights_base(const dprt_weights *w)
{
	return w ? w->base : NULL;
}

void
dprt_weights_free(dprt_weights *w)
{
	if (w == NULL)
		return;
	if (w->map)
		munmap(w->map, w->mapn);
	free(w);
}
