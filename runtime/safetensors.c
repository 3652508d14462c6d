/* safetensors.c: Hugging Face .safetensors files (an 8-byte little-endian
 * header size, a JSON header naming each tensor's dtype, shape and byte
 * range, then the data), read with jansson; filling a program's weight blob
 * from them by tensor name. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS, MAP_NORESERVE */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "dprtint.h"

enum { MAXHEAD = 100 << 20 };	/* the format's own limit on the header */

/* The dtype names of the format, by DPRT_ code. */
static const char *const stname[DPRT_NDTYPE] = {
	[DPRT_U8] = "U8", [DPRT_I8] = "I8", [DPRT_I16] = "I16", [DPRT_I32] = "I32",
	[DPRT_I64] = "I64", [DPRT_F16] = "F16", [DPRT_F32] = "F32", [DPRT_F64] = "F64",
	[DPRT_BOOL] = "BOOL", [DPRT_BF16] = "BF16",
};
/* Other dtypes of the format: readable headers, tensors DevProc cannot use. */
static const struct { const char *name; int size; } other[] = {
	{"U16", 2}, {"U32", 4}, {"U64", 8}, {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"F8_E8M0", 1},
	{"F4", 1}, {"F6_E2M3", 1}, {"F6_E3M2", 1}, {"C64", 8}, {NULL, 0}
};

static int
dtypeof(const char *s, int *size)
{
	int i;

	for (i = 0; i < DPRT_NDTYPE; i++)
		if (strcmp(s, stname[i]) == 0) {
			*size = dprt_dtype_size[i];
			return i;
		}
	for (i = 0; other[i].name; i++)
		if (strcmp(s, other[i].name) == 0) {
			*size = other[i].size;
			return -1;
		}
	*size = 0;
	return -2;
}

/* Reads one header entry into t (name already set). */
static int
entry(const char *what, json_t *e, dprt_st_tensor *t, uint64_t ndata, char *err, size_t errn)
{
	json_t *dt = json_object_get(e, "dtype"), *sh = json_object_get(e, "shape");
	json_t *off = json_object_get(e, "data_offsets"), *x;
	int64_t n = 1;
	json_int_t b, end;
	size_t i;
	int es;

	if (!json_is_object(e) || !json_is_string(dt) || !json_is_array(sh) ||
	    !json_is_array(off) || json_array_size(off) != 2)
		return dprt_errf(err, errn, "%s: tensor '%s' needs a dtype, a shape and two "
		                 "data_offsets", what, t->name);
	t->dtname = json_string_value(dt);
	t->dtype = dtypeof(t->dtname, &es);
	if (t->dtype == -2)
		return dprt_errf(err, errn, "%s: tensor '%s' has an unknown dtype '%s'", what,
		                 t->name, t->dtname);
	if (json_array_size(sh) > DPRT_MAXRANK)
		return dprt_errf(err, errn, "%s: tensor '%s' has rank %zu (at most %d)", what,
		                 t->name, json_array_size(sh), DPRT_MAXRANK);
	t->rank = (int)json_array_size(sh);
	json_array_foreach(sh, i, x) {
		if (!json_is_integer(x) || json_integer_value(x) < 0)
			return dprt_errf(err, errn, "%s: tensor '%s' has a size that is not a "
			                 "natural number", what, t->name);
		t->dim[i] = json_integer_value(x);
		if (t->dim[i] > 0 && n > INT64_MAX / t->dim[i])
			return dprt_errf(err, errn, "%s: tensor '%s' is too large", what, t->name);
		n *= t->dim[i];
	}
	b = json_integer_value(json_array_get(off, 0));
	end = json_integer_value(json_array_get(off, 1));
	if (!json_is_integer(json_array_get(off, 0)) || !json_is_integer(json_array_get(off, 1)) ||
	    b < 0 || end < b)
		return dprt_errf(err, errn, "%s: tensor '%s' has bad data_offsets", what, t->name);
	if ((uint64_t)end > ndata)
		return dprt_errf(err, errn, "%s: tensor '%s' ends at byte %lld of the data, but "
		                 "the file holds %llu (truncated?)", what, t->name, (long long)end,
		                 (unsigned long long)ndata);
	if (n > INT64_MAX / es || (int64_t)(end - b) != n * es)
		return dprt_errf(err, errn, "%s: tensor '%s' (%s, %lld elements) spans %lld bytes",
		                 what, t->name, t->dtname, (long long)n, (long long)(end - b));
	t->off = (uint64_t)b;
	t->nbytes = (uint64_t)(end - b);
	return 0;
}

/*
 * Parses the header of a .safetensors file: buf holds its first n bytes
 * (at least the 8-byte size and the JSON), size is the whole file's size.
 * On success st lists the tensors (offsets relative to the file's start)
 * and must be freed with dprt_st_free.  what names the file in messages.
 */
int
dprt_st_parse(const unsigned char *buf, size_t n, uint64_t size, const char *what,
              dprt_st *st, char *err, size_t errn)
{
	json_error_t je;
	const char *key;
	json_t *root, *e;
	uint64_t hn = 0;
	int i;

	memset(st, 0, sizeof *st);
	if (n < 8 || size < 8)
		return dprt_errf(err, errn, "%s: too short for a .safetensors file", what);
	for (i = 7; i >= 0; i--)
		hn = hn << 8 | buf[i];
	if (hn > MAXHEAD || hn > size - 8)
		return dprt_errf(err, errn, "%s: a header of %llu bytes in a file of %llu "
		                 "(not a .safetensors file, or truncated)", what,
		                 (unsigned long long)hn, (unsigned long long)size);
	if (hn > n - 8)
		return dprt_errf(err, errn, "%s: internal error: header not read", what);
	root = json_loadb((const char *)buf + 8, (size_t)hn, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL || !json_is_object(root)) {
		json_decref(root);
		return dprt_errf(err, errn, "%s: the header is not a JSON object%s%s", what,
		                 root ? "" : ": ", root ? "" : je.text);
	}
	st->root = root;
	st->data = 8 + hn;
	st->t = calloc(json_object_size(root) + 1, sizeof *st->t);
	if (st->t == NULL) {
		dprt_st_free(st);
		return dprt_errf(err, errn, "out of memory");
	}
	json_object_foreach(root, key, e) {
		dprt_st_tensor *t = &st->t[st->n];
		if (strcmp(key, "__metadata__") == 0)
			continue;
		t->name = key;
		if (entry(what, e, t, size - st->data, err, errn) != 0) {
			dprt_st_free(st);
			return -1;
		}
		t->off += st->data;
		st->n++;
	}
	return 0;
}

void
dprt_st_free(dprt_st *st)
{
	free(st->t);
	json_decref(st->root);
	memset(st, 0, sizeof *st);
}

/* The tensor named name in st, or NULL. */
static const dprt_st_tensor *
find(const dprt_st *st, const char *name)
{
	int i;

	for (i = 0; i < st->n; i++)
		if (strcmp(st->t[i].name, name) == 0)
			return &st->t[i];
	return NULL;
}

/* One opened checkpoint: its header and its mapping. */
typedef struct File {
	const char *path;
	dprt_st st;
	const unsigned char *map;
	size_t mapn;
} File;

static int
openst(File *f, char *err, size_t errn)
{
	unsigned char head[8];
	struct stat sb;
	void *p;
	int fd;

	if ((fd = open(f->path, O_RDONLY)) < 0)
		return dprt_errf(err, errn, "%s: cannot open: %s", f->path, strerror(errno));
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return dprt_errf(err, errn, "%s: not a regular file", f->path);
	}
	if (read(fd, head, 8) != 8) {
		close(fd);
		return dprt_errf(err, errn, "%s: neither a weight blob nor a .safetensors file",
		                 f->path);
	}
	p = sb.st_size > 0 ? mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0)
	                   : MAP_FAILED;
	close(fd);
	if (p == MAP_FAILED)
		return dprt_errf(err, errn, "%s: cannot map: %s", f->path, strerror(errno));
	f->map = p;
	f->mapn = (size_t)sb.st_size;
	return dprt_st_parse(f->map, f->mapn, f->mapn, f->path, &f->st, err, errn);
}

static char *
shapestr(char *buf, size_t n, int dtype, int rank, const int64_t *dim, const char *dtname)
{
	char s[200];

	snprintf(buf, n, "%s%s", dtype >= 0 ? dprt_dtype_name[dtype] : dtname,
	         dprt_shape_str(s, sizeof s, rank, dim));
	return buf;
}

/*
 * Fills the weights of blob b: every named constant from the checkpoints
 * files[0..n-1] (an f16 or bf16 tensor widened exactly to the f32 the
 * program was built with; other dtypes must be the program's), the others
 * from src (a blob mapped copy-on-write in *map,
 * or the embedded blob; NULL when there is none).  Without *map, allocates
 * b->size bytes of fresh mapping into *map and *mapn.
 */
int
dprt_st_fill(const dprt_blob *b, const char *const *files, int n, const unsigned char *src,
             void **map, size_t *mapn, char *err, size_t errn)
{
	File *f = calloc((size_t)n, sizeof *f);
	unsigned char *dst;
	char t1[256], t2[256];
	int i, k, rc = -1, widen;

	if (f == NULL)
		return dprt_errf(err, errn, "out of memory");
	for (i = 0; i < n; i++) {
		f[i].path = files[i];
		if (openst(&f[i], err, errn) != 0)
			goto done;
	}
	if (*map == NULL) {
		void *p = mmap(NULL, b->size ? b->size : 1, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED) {
			dprt_errf(err, errn, "out of memory (weights of %llu bytes)",
			          (unsigned long long)b->size);
			goto done;
		}
		*map = p;
		*mapn = b->size ? b->size : 1;
		if (src)
			memcpy(p, src, b->size);
	}
	dst = *map;
	for (k = 0; k < b->ntensor; k++) {
		const dprt_tensor *t = &b->tensor[k];
		const dprt_st_tensor *s = NULL;
		if (t->name == NULL) {
			if (src == NULL) {
				dprt_errf(err, errn, "the program has constants that no checkpoint names "
				          "(%s%s at offset %lld): give its weight blob (%s) too",
				          dprt_dtype_name[t->dtype],
				          dprt_shape_str(t1, sizeof t1, t->rank, t->dim),
				          (long long)t->off, b->file);
				goto done;
			}
			continue;
		}
		for (i = 0; i < n && s == NULL; i++)
			s = find(&f[i].st, t->name);
		if (s == NULL) {
			dprt_errf(err, errn, "tensor '%s' is in none of the checkpoints (%s%s)",
			          t->name, files[0], n > 1 ? " ..." : "");
			goto done;
		}
		i--;
		widen = t->dtype == DPRT_F32 && (s->dtype == DPRT_F16 || s->dtype == DPRT_BF16);
		if ((s->dtype != t->dtype && !widen) || s->rank != t->rank ||
		    memcmp(s->dim, t->dim, sizeof *t->dim * (size_t)t->rank) != 0) {
			dprt_errf(err, errn, "%s: tensor '%s' is %s, but the program was built with %s",
			          files[i], t->name,
			          shapestr(t1, sizeof t1, s->dtype, s->rank, s->dim, s->dtname),
			          shapestr(t2, sizeof t2, t->dtype, t->rank, t->dim, NULL));
			goto done;
		}
		if ((int64_t)s->nbytes * (widen ? 2 : 1) != t->nbytes || t->off < 0 ||
		    (uint64_t)(t->off + t->nbytes) > b->size) {
			dprt_errf(err, errn, "internal error: tensor '%s' does not fit", t->name);
			goto done;
		}
		if (widen) {   /* f16 and bf16 checkpoints of an f32 model: exact */
			const unsigned char *q = f[i].map + s->off;   /* not aligned */
			uint64_t e;
			for (e = 0; e < s->nbytes / 2; e++) {
				uint16_t h = (uint16_t)(q[2 * e] | q[2 * e + 1] << 8);
				float v = s->dtype == DPRT_F16 ? dprt_f16_to_f32(h) : dprt_bf16_to_f32(h);
				memcpy(dst + t->off + 4 * e, &v, 4);
			}
		} else
			memcpy(dst + t->off, f[i].map + s->off, s->nbytes);
	}
	rc = 0;
done:
	for (i = 0; i < n; i++) {
		dprt_st_free(&f[i].st);
		if (f[i].map)
			munmap((void *)f[i].map, f[i].mapn);
	}
	free(f);
	return rc;
}
