/* weights.c: builds the weight blob (formats/weights.md): a 64-byte header,
 * then each distinct tensor once, at a 64-byte-aligned offset.  Tensors of
 * an archive are not copied: the blob points at them in the mapped archive
 * and they go from there into weights.bin when it is written. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

enum { HDR = 64, ALIGN = 64, WB_MAJOR = 1, WB_MINOR = 2 };

/* An empty blob: the header alone. */
void
blob_init(Blob *b)
{
	memset(b, 0, sizeof *b);
	b->len = HDR;
}

/* Room for n bytes to fill, then keep with blob_commit (or drop).  The
 * pointer is valid until the next blob_room or blob_commit. */
char *
blob_room(Blob *b, size_t n)
{
	if (n > b->roomcap || !b->room) {
		free(b->room);
		b->room = xrealloc(NULL, n ? n : 1, 1);
		b->roomcap = n;
	}
	return b->room;
}

/* Keeps the n bytes just written at blob_room unless the blob already holds
 * the same bytes; returns their file offset and puts their hash in hash. */
int64_t
blob_commit(Blob *b, size_t n, char hash[17])
{
	return blob_commit_as(b, n, hash, NULL);
}

/* The offset of the n bytes at p, with their hash h, under state-dict name
 * (NULL: anonymous): one already stored, or -1. */
static int64_t
find(const Blob *b, const char *p, size_t n, uint64_t h, const char *name)
{
	for (int i = 0; i < b->nt; i++) {
		const Stored *s = &b->t[i];
		if (s->hash == h && s->n == (int64_t)n && memcmp(s->p, p, n) == 0 &&
		    (s->name == name || (s->name && name && strcmp(s->name, name) == 0)))
			return s->off;
	}
	return -1;
}

/* Appends the n bytes at p (owned: the blob frees them) at the next
 * aligned offset. */
static int64_t
append(Blob *b, const char *p, size_t n, uint64_t h, const char *name, int own)
{
	int64_t off = (int64_t)b->len;
	if (n > (size_t)INT64_MAX - b->len - ALIGN)
		dp_die("weight blob size overflows");
	if (b->nt == b->capt) {
		b->capt = b->capt ? 2 * b->capt : 64;
		b->t = xrealloc(b->t, (size_t)b->capt, sizeof *b->t);
	}
	b->t[b->nt++] = (Stored){ h, off, (int64_t)n, name, p, own };
	b->len = (b->len + n + ALIGN - 1) / ALIGN * ALIGN;
	return off;
}

/* blob_commit for the tensor of a state-dict name (NULL: an anonymous
 * constant): bytes are shared only between tensors of the same name, so
 * that a checkpoint can give each name its own values at run time.  The
 * room's memory becomes the blob's. */
int64_t
blob_commit_as(Blob *b, size_t n, char hash[17], const char *name)
{
	uint64_t h = dp_whash(b->room, n);
	dp_hash_hex(h, hash);
	if (n == 0)
		return (int64_t)b->len;
	int64_t off = find(b, b->room, n, h, name);
	if (off >= 0)
		return off;
	off = append(b, b->room, n, h, name, 1);
	b->room = NULL;
	b->roomcap = 0;
	return off;
}

/* Stores the n bytes at p, whose weight hash is h, in place: they are not
 * copied, and must stay where they are (a mapped archive) until the blob is
 * written.  Otherwise as blob_commit_as. */
int64_t
blob_ref(Blob *b, const char *p, size_t n, uint64_t h, char hash[17], const char *name)
{
	dp_hash_hex(h, hash);
	if (n == 0)
		return (int64_t)b->len;
	int64_t off = find(b, p, n, h, name);
	return off >= 0 ? off : append(b, p, n, h, name, 0);
}

static void
put(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* The padding after stored tensor i, up to the next one or the end. */
static size_t
pad(const Blob *b, int i)
{
	size_t end = (size_t)(b->t[i].off + b->t[i].n);
	return (i + 1 < b->nt ? (size_t)b->t[i + 1].off : b->len) - end;
}

/* Fills in the header (b->head); returns the data hash it holds. */
uint64_t
blob_finish(Blob *b)
{
	static const char zeros[ALIGN];
	DpWhash s;
	dp_whash_init(&s);
	for (int i = 0; i < b->nt; i++) {
		dp_whash_add(&s, b->t[i].p, (size_t)b->t[i].n);
		dp_whash_add(&s, zeros, pad(b, i));
	}
	uint64_t h = dp_whash_end(&s);
	memset(b->head, 0, HDR);
	memcpy(b->head, "DPWB", 4);
	put(b->head + 4, WB_MAJOR, 2);
	put(b->head + 6, WB_MINOR, 2);
	put(b->head + 8, (uint64_t)b->nt, 4);
	put(b->head + 16, b->len, 8);
	put(b->head + 24, HDR, 8);
	put(b->head + 32, h, 8);
	return h;
}

/* Writes the finished blob to path (only when its bytes change), each
 * tensor from where it lies: 0, or -1 with err set. */
int
blob_write(const Blob *b, const char *path, Err *err)
{
	DpSeg *seg = xrealloc(NULL, 2 * (size_t)b->nt + 1, sizeof *seg);
	int n = 0;
	seg[n++] = (DpSeg){ b->head, HDR };
	for (int i = 0; i < b->nt; i++) {
		seg[n++] = (DpSeg){ b->t[i].p, (size_t)b->t[i].n };
		seg[n++] = (DpSeg){ NULL, pad(b, i) };
	}
	int r = dp_write_segs(path, seg, n, err);
	free(seg);
	return r;
}

/* Frees the blob's memory. */
void
blob_free(Blob *b)
{
	for (int i = 0; i < b->nt; i++)
		if (b->t[i].own)
			free((char *)b->t[i].p);
	free(b->t);
	free(b->room);
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
	unsigned char *p = out;
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
