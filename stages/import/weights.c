/* weights.c: builds the weight blob (formats/weights.md): a 64-byte header,
 * then each distinct tensor once, at a 64-byte-aligned offset. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

enum { HDR = 64, ALIGN = 64, WB_MAJOR = 1, WB_MINOR = 1 };

/* An empty blob holding only room for the header. */
void
blob_init(Blob *b)
{
	memset(b, 0, sizeof *b);
	b->cap = 1 << 16;
	b->buf = xrealloc(NULL, b->cap, 1);
	memset(b->buf, 0, HDR);
	b->len = HDR;
}

/* Room for n bytes at the next free aligned offset; fill it, then call
 * blob_commit.  The pointer is valid until the next blob_room. */
char *
blob_room(Blob *b, size_t n)
{
	size_t pad = ALIGN - 1;
	if (n > (size_t)-1 - b->len - pad)
		dp_die("weight blob size overflows");
	size_t need = b->len + n + pad;
	if (need > b->cap) {
		size_t cap = b->cap;
		while (cap < need)
			cap = cap > (size_t)-1 / 2 ? need : cap * 2;
		b->buf = xrealloc(b->buf, cap, 1);
		b->cap = cap;
	}
	return b->buf + b->len;
}

/* Keeps the n bytes just written at blob_room unless the blob already holds
 * the same bytes; returns their file offset and puts their hash in hash. */
int64_t
blob_commit(Blob *b, size_t n, char hash[17])
{
	return blob_commit_as(b, n, hash, NULL);
}

/* blob_commit for the tensor of a state-dict name (NULL: an anonymous
 * constant): bytes are shared only between tensors of the same name, so
 * that a checkpoint can give each name its own values at run time. */
int64_t
blob_commit_as(Blob *b, size_t n, char hash[17], const char *name)
{
	const char *p = b->buf + b->len;
	uint64_t h = dp_hash(p, n, DP_HASH_INIT);
	dp_hash_hex(h, hash);
	for (int i = 0; i < b->nt; i++) {
		Stored *s = &b->t[i];
		if (s->hash == h && s->n == (int64_t)n && memcmp(b->buf + s->off, p, n) == 0 &&
		    (s->name == name || (s->name && name && strcmp(s->name, name) == 0)))
			return s->off;
	}
	int64_t off = (int64_t)b->len;
	if (n == 0)
		return off;
	if (b->nt == b->capt) {
		b->capt = b->capt ? 2 * b->capt : 64;
		b->t = xrealloc(b->t, (size_t)b->capt, sizeof *b->t);
	}
	b->t[b->nt++] = (Stored){ h, off, (int64_t)n, name };
	size_t end = b->len + n;
	size_t al = (end + ALIGN - 1) / ALIGN * ALIGN;
	memset(b->buf + end, 0, al - end);
	b->len = al;
	return off;
}

static void
put(char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (char)(v >> (8 * i));
}

/* Fills in the header; the blob is then b->buf[0..b->len). */
void
blob_finish(Blob *b)
{
	memset(b->buf, 0, HDR);
	memcpy(b->buf, "DPWB", 4);
	put(b->buf + 4, WB_MAJOR, 2);
	put(b->buf + 6, WB_MINOR, 2);
	put(b->buf + 8, (uint64_t)b->nt, 4);
	put(b->buf + 16, b->len, 8);
	put(b->buf + 24, HDR, 8);
	put(b->buf + 32, dp_hash(b->buf + HDR, b->len - HDR, DP_HASH_INIT), 8);
}

/* Frees the blob's memory. */
void
blob_free(Blob *b)
{
	free(b->buf);
	free(b->t);
	memset(b, 0, sizeof *b);
}

static uint32_t
f32bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

/* IEEE half from float, rounding to nearest even. */
static uint16_t
tohalf(float f)
{
	uint32_t x = f32bits(f);
	uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
	uint32_t ax = x & 0x7fffffff;
	if (ax >= 0x7f800000)           /* inf or nan */
		return sign | 0x7c00 | (ax > 0x7f800000 ? 0x200 : 0);
	if (ax >= 0x477ff000)           /* rounds to >= 65520: inf */
		return sign | 0x7c00;
	if (ax < 0x38800000) {          /* subnormal half or zero */
		float m = fabsf(f) * 16777216.0f; /* 2^24: units of the smallest half */
		return sign | (uint16_t)lrintf(m);
	}
	uint32_t r = ax + 0xfff + ((ax >> 13) & 1);
	return sign | (uint16_t)((r - 0x38000000) >> 13);
}

/* Stores v as one little-endian element of dtype at out. */
void
tobytes(double v, int dtype, void *out)
{
	char *p = out;
	switch (dtype) {
	case DP_U8: case DP_I8: put(p, (uint64_t)(int64_t)v, 1); break;
	case DP_BOOL: put(p, v != 0, 1); break;
	case DP_I16: put(p, (uint64_t)(int64_t)v, 2); break;
	case DP_I32: put(p, (uint64_t)(int64_t)v, 4); break;
	case DP_I64: put(p, (uint64_t)(int64_t)v, 8); break;
	case DP_F16: put(p, tohalf((float)v), 2); break;
	case DP_BF16: {
		uint32_t u = f32bits((float)v);
		if ((u & 0x7fffffff) > 0x7f800000)
			u = (u | 0x400000);
		else
			u += 0x7fff + ((u >> 16) & 1);
		put(p, u >> 16, 2);
		break;
	}
	case DP_F32: put(p, f32bits((float)v), 4); break;
	case DP_F64: {
		uint64_t u;
		memcpy(&u, &v, 8);
		put(p, u, 8);
		break;
	}
	default: dp_die("tobytes: bad dtype %d", dtype);
	}
}
