/* core.c: IR tables, arenas, building functions, attributes, types, errors. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dpir.h"
#include "dpsweep.h"

#define X(e, n, sz, pt) n,
const char *const dp_dtype_name[DP_NDTYPE] = { DP_DTYPES(X) };
#undef X
#define X(e, n, sz, pt) sz,
const int dp_dtype_size[DP_NDTYPE] = { DP_DTYPES(X) };
#undef X
#define X(e, n, sz, pt) pt,
const int dp_dtype_pt2[DP_NDTYPE] = { DP_DTYPES(X) };
#undef X
const char *const dp_dev_name[DEV_N] = { "cpu", "cuda" };

#define X(e, n, nin, nout, k, f, fn, d, a) n,
const char *const dp_op_name[DP_NOP] = { DP_OPS(X) };
#undef X
#define X(e, n, nin, nout, k, f, fn, d, a) nin,
const int dp_op_nin[DP_NOP] = { DP_OPS(X) };
#undef X
#define X(e, n, nin, nout, k, f, fn, d, a) nout,
const int dp_op_nout[DP_NOP] = { DP_OPS(X) };
#undef X
#define X(e, n, nin, nout, k, f, fn, d, a) k,
const int dp_op_class[DP_NOP] = { DP_OPS(X) };
#undef X
#define X(e, n, nin, nout, k, f, fn, d, a) d,
const int dp_op_devs[DP_NOP] = { DP_OPS(X) };
#undef X
#define X(e, n, nin, nout, k, f, fn, d, a) a,
const char *const dp_op_attrs[DP_NOP] = { DP_OPS(X) };
#undef X
#define X(e, n, nin, nout, k, f, fn, d, a) f,
const int dp_op_form[DP_NOP] = { DP_OPS(X) };
#undef X
#define X(e, n, nin, nout, k, f, fn, d, a) fn,
const char *const dp_op_formula[DP_NOP] = { DP_OPS(X) };
#undef X
#define X(e, n) n,
const char *const dp_class_name[DP_NCLASS] = { DP_CLASSES(X) };
#undef X
#define X(e, n) n,
const char *const dp_form_name[DP_NFORM] = { DP_FORMS(X) };
#undef X

_Static_assert(sizeof dp_op_name / sizeof *dp_op_name == DP_NOP, "op table");
_Static_assert(sizeof dp_class_name / sizeof *dp_class_name == DP_NCLASS, "class table");
_Static_assert(sizeof dp_form_name / sizeof *dp_form_name == DP_NFORM, "form table");

#define X(e, n, nin, nout, ...) _Static_assert(nout >= 1 && nout <= DP_MAXOUT, "results of " n);
DP_OPS(X)
#undef X
_Static_assert(sizeof dp_dtype_name / sizeof *dp_dtype_name == DP_NDTYPE, "dtype table");
_Static_assert(DP_NDTYPE == 10, "dtype numbering is shared with runtime/dprt.h");

static int
lookup(const char *const *tab, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(tab[i], name) == 0)
			return i;
	return -1;
}

int dp_dtype_lookup(const char *name) { return lookup(dp_dtype_name, DP_NDTYPE, name); }
int dp_dev_lookup(const char *name) { return lookup(dp_dev_name, DEV_N, name); }
int dp_op_lookup(const char *name) { return lookup(dp_op_name, DP_NOP, name); }
int dp_class_lookup(const char *name) { return lookup(dp_class_name, DP_NCLASS, name); }

int
dp_dtype_from_pt2(int e)
{
	for (int i = 0; i < DP_NDTYPE; i++)
		if (dp_dtype_pt2[i] == e)
			return i;
	return -1;
}

/* ---- errors ---- */

_Noreturn void
dp_die_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "internal error: %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void
dp_seterr(Err *err, const char *fmt, ...)
{
	va_list ap;
	err->line = err->col = 0;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
}

void
dp_seterr_at(Err *err, int line, int col, const char *fmt, ...)
{
	va_list ap;
	err->line = line;
	err->col = col;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
}

void
dp_report(const char *file, const char *stage, const Err *err)
{
	if (err->line > 0)
		fprintf(stderr, "%s:%d:%d: %s: %s\n", file, err->line, err->col, stage, err->msg);
	else
		fprintf(stderr, "%s: %s: %s\n", file, stage, err->msg);
}

/* ---- arenas ---- */

typedef struct Chunk Chunk;
struct Chunk {
	Chunk *next;
	size_t used, cap;
	_Alignas(16) unsigned char mem[];
};

struct Arena {
	Chunk *head;
};

Arena *
dp_arena_new(void)
{
	Arena *a = calloc(1, sizeof *a);
	if (!a)
		dp_die("out of memory");
	return a;
}

void
dp_arena_free(Arena *a)
{
	if (!a)
		return;
	for (Chunk *c = a->head, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(a);
}

void *
dp_alloc(Arena *a, size_t n, size_t size)
{
	if (size && n > (SIZE_MAX / 2) / size)
		dp_die("allocation of %zu x %zu bytes overflows", n, size);
	size_t bytes = (n * size + 15) & ~(size_t)15;
	Chunk *c = a->head;
	if (!c || c->cap - c->used < bytes) {
		size_t cap = bytes > 65536 ? bytes : 65536;
		c = malloc(sizeof *c + cap);
		if (!c) {
			fprintf(stderr, "devproc: out of memory (%zu bytes)\n", cap);
			exit(1);
		}
		c->used = 0;
		c->cap = cap;
		c->next = a->head;
		a->head = c;
	}
	void *p = c->mem + c->used;
	c->used += bytes;
	memset(p, 0, bytes);
	return p;
}

char *
dp_strndup(Arena *a, const char *s, size_t n)
{
	char *p = dp_alloc(a, n + 1, 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *
dp_strdup(Arena *a, const char *s)
{
	return dp_strndup(a, s, strlen(s));
}

/* Grows *arr (of elements of size sz) to hold at least need, in the arena. */
static void
grow(Arena *a, void **arr, int *cap, int need, size_t sz)
{
	if (need <= *cap)
		return;
	int ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	void *p = dp_alloc(a, ncap, sz);
	if (*cap)
		memcpy(p, *arr, (size_t)*cap * sz);
	*arr = p;
	*cap = ncap;
}
#define GROW(fn, arr, n, cap) grow((fn)->arena, (void **)&(arr), &(cap), (n) + 1, sizeof *(arr))

/* ---- building ---- */

Fn *
dp_new(const char *name, const char *stage)
{
	Arena *a = dp_arena_new();
	Fn *fn = dp_alloc(a, 1, sizeof *fn);
	fn->arena = a;
	fn->name = dp_strdup(a, name);
	fn->stage = dp_strdup(a, stage);
	return fn;
}

void
dp_free(Fn *fn)
{
	if (fn)
		dp_arena_free(fn->arena);
}

int
dp_addval(Fn *fn, Type t, int def)
{
	GROW(fn, fn->val, fn->nval, fn->capval);
	fn->val[fn->nval].t = t;
	fn->val[fn->nval].def = def;
	return fn->nval++;
}

int
dp_addop(Fn *fn, int kind, const int *in, int nin)
{
	GROW(fn, fn->op, fn->nop, fn->capop);
	Op *op = &fn->op[fn->nop];
	memset(op, 0, sizeof *op);
	op->kind = kind;
	op->part = -1;
	op->nin = nin;
	op->in = dp_alloc(fn->arena, nin ? nin : 1, sizeof *op->in);
	if (nin)
		memcpy(op->in, in, (size_t)nin * sizeof *in);
	op->dev = DEV_CPU;
	for (int i = 0; i < nin; i++)
		if (in[i] >= 0 && in[i] < fn->nval) {
			op->dev = fn->val[in[i]].t.dev;
			break;
		}
	return fn->nop++;
}

int
dp_addout(Fn *fn, int op, Type t)
{
	int v = dp_addval(fn, t, op);
	Op *o = &fn->op[op];
	int *out = dp_alloc(fn->arena, o->nout + 1, sizeof *out);
	if (o->nout)
		memcpy(out, o->out, (size_t)o->nout * sizeof *out);
	out[o->nout++] = v;
	o->out = out;
	return v;
}

/* Returns the attribute slot for key in op, inserting it in key order. */
static Attr *
slot(Fn *fn, int opi, const char *key)
{
	Op *op = &fn->op[opi];
	int i = 0;
	while (i < op->nattr && strcmp(op->attr[i].key, key) < 0)
		i++;
	if (i < op->nattr && strcmp(op->attr[i].key, key) == 0) {
		memset(&op->attr[i], 0, sizeof op->attr[i]);
		op->attr[i].key = dp_strdup(fn->arena, key);
		return &op->attr[i];
	}
	Attr *na = dp_alloc(fn->arena, op->nattr + 1, sizeof *na);
	if (i)
		memcpy(na, op->attr, (size_t)i * sizeof *na);
	if (op->nattr - i)
		memcpy(na + i + 1, op->attr + i, (size_t)(op->nattr - i) * sizeof *na);
	op->attr = na;
	op->nattr++;
	na[i].key = dp_strdup(fn->arena, key);
	return &na[i];
}

void
dp_seti(Fn *fn, int op, const char *key, int64_t v)
{
	Attr *a = slot(fn, op, key);
	a->kind = A_INT;
	a->i = v;
}

void
dp_setf(Fn *fn, int op, const char *key, double v)
{
	Attr *a = slot(fn, op, key);
	a->kind = A_FLOAT;
	a->f = v;
}

void
dp_sets(Fn *fn, int op, const char *key, const char *v)
{
	const char *s = dp_strdup(fn->arena, v);
	Attr *a = slot(fn, op, key);
	a->kind = A_STR;
	a->s = s;
}

void
dp_setints(Fn *fn, int op, const char *key, const int64_t *v, int n)
{
	int64_t *p = dp_alloc(fn->arena, n ? n : 1, sizeof *p);
	if (n)
		memcpy(p, v, (size_t)n * sizeof *v);
	Attr *a = slot(fn, op, key);
	a->kind = A_INTS;
	a->n = n;
	a->ints = p;
}

void
dp_setfloats(Fn *fn, int op, const char *key, const double *v, int n)
{
	double *p = dp_alloc(fn->arena, n ? n : 1, sizeof *p);
	if (n)
		memcpy(p, v, (size_t)n * sizeof *v);
	Attr *a = slot(fn, op, key);
	a->kind = A_FLOATS;
	a->n = n;
	a->floats = p;
}

void
dp_addport(Fn *fn, const char *name, int val)
{
	GROW(fn, fn->out, fn->nout, fn->capout);
	fn->out[fn->nout].name = dp_strdup(fn->arena, name);
	fn->out[fn->nout].val = val;
	fn->nout++;
}

void
dp_adddep(Fn *fn, const char *path, const char *hash)
{
	GROW(fn, fn->dep, fn->ndep, fn->capdep);
	fn->dep[fn->ndep].path = dp_strdup(fn->arena, path);
	fn->dep[fn->ndep].hash = dp_strdup(fn->arena, hash);
	fn->ndep++;
}

/* Adds a partition on dev; returns its index. */
int
dp_addpart(Fn *fn, int dev)
{
	GROW(fn, fn->part, fn->npart, fn->cappart);
	fn->part[fn->npart].dev = (uint8_t)dev;
	return fn->npart++;
}

const Attr *
dp_attr(const Op *op, const char *key)
{
	for (int i = 0; i < op->nattr; i++)
		if (strcmp(op->attr[i].key, key) == 0)
			return &op->attr[i];
	return NULL;
}

int64_t
dp_geti(const Op *op, const char *key, int64_t def)
{
	const Attr *a = dp_attr(op, key);
	return a && a->kind == A_INT ? a->i : def;
}

double
dp_getf(const Op *op, const char *key, double def)
{
	const Attr *a = dp_attr(op, key);
	if (a && a->kind == A_FLOAT)
		return a->f;
	if (a && a->kind == A_INT)
		return (double)a->i;
	return def;
}

const char *
dp_gets(const Op *op, const char *key)
{
	const Attr *a = dp_attr(op, key);
	return a && a->kind == A_STR ? a->s : NULL;
}

/* ---- types ---- */

int64_t
dp_numel(const Type *t)
{
	/* the product of the non-zero sizes must fit too: shape rules multiply
	 * sizes of tensors with no elements (flatten of [0,2^62,2^62]) */
	int64_t n = 1;
	int empty = 0;
	if (dp_isdyn(t))
		return 0;
	for (int i = 0; i < t->rank; i++) {
		if (t->dim[i] < 0)
			return -1;
		if (t->dim[i] == 0) {
			empty = 1;
			continue;
		}
		if (n > INT64_MAX / t->dim[i])
			return -1;
		n *= t->dim[i];
	}
	return empty ? 0 : n;
}

int64_t
dp_nbytes(const Type *t)
{
	int64_t n = dp_numel(t);
	if (n < 0 || t->dtype >= DP_NDTYPE)
		return -1;
	int sz = dp_dtype_size[t->dtype];
	if (n > DP_MAXBYTES / sz)
		return -1;
	return n * sz;
}

/* Whether t is text: u8[?], UTF-8 bytes of any length. */
int
dp_istext(const Type *t)
{
	return t->dtype == DP_U8 && t->rank == 1 && t->dim[0] == DP_DYN;
}

int
dp_isdyn(const Type *t)
{
	for (int i = 0; i < t->rank; i++)
		if (t->dim[i] == DP_DYN)
			return 1;
	return 0;
}

int
dp_type_eq(const Type *a, const Type *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank || a->dev != b->dev || a->bnd != b->bnd)
		return 0;
	for (int i = 0; i < a->rank; i++)
		if (a->dim[i] != b->dim[i])
			return 0;
	return 1;
}

void
dp_bstrides(const Type *t, const Type *out, int64_t *s)
{
	int off = out->rank - t->rank, i;
	int64_t st = 1;

	for (i = out->rank - 1; i >= 0; i--) {
		int k = i - off;
		s[i] = k < 0 || t->dim[k] == 1 ? 0 : st;
		if (k >= 0)
			st *= t->dim[k];
	}
}

void
dp_pair(const Op *op, const char *key, int64_t def, int64_t out[2])
{
	const Attr *a = dp_attr(op, key);

	out[0] = out[1] = def;
	if (a && a->n >= 1)
		out[0] = out[1] = a->ints[0];
	if (a && a->n >= 2)
		out[1] = a->ints[1];
}

char *
dp_type_str(const Type *t, int dev, char *buf, size_t n)
{
	size_t k = 0;
	k += snprintf(buf + k, n - k, "%s[", t->dtype < DP_NDTYPE ? dp_dtype_name[t->dtype] : "?");
	for (int i = 0; i < t->rank && k < n; i++)
		k += t->dim[i] == DP_DYN ? snprintf(buf + k, n - k, "%s?", i ? "," : "")
		     : snprintf(buf + k, n - k, "%s%s%lld", i ? "," : "", !i && t->bnd ? "<=" : "",
		                (long long)t->dim[i]);
	if (k < n)
		k += snprintf(buf + k, n - k, "]");
	if (dev && k < n)
		snprintf(buf + k, n - k, " @%s", t->dev < DEV_N ? dp_dev_name[t->dev] : "?");
	return buf;
}

/* ---- files ---- */

int
dp_slurp(const char *path, char **buf, size_t *len, Err *err)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		dp_seterr(err, "cannot open: %s", strerror(errno));
		return -1;
	}
	size_t cap = 1 << 16, n = 0;
	char *p = malloc(cap);
	for (;;) {
		if (!p) {
			fclose(f);
			dp_seterr(err, "out of memory");
			return -1;
		}
		n += fread(p + n, 1, cap - n - 1, f);
		if (n < cap - 1)
			break;
		cap *= 2;
		char *q = realloc(p, cap);
		if (!q)
			free(p);
		p = q;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(p);
		dp_seterr(err, "read error");
		return -1;
	}
	p[n] = 0;
	*buf = p;
	*len = n;
	return 0;
}

/* The writer's process id in a PATH.tmpPID name's suffix, 0 in another's. */
static long
tmppid(const char *s)
{
	char *end;
	long pid;

	if (strncmp(s, ".tmp", 4) != 0 || s[4] < '0' || s[4] > '9')
		return 0;
	errno = 0;
	pid = strtol(s + 4, &end, 10);
	return *end || errno ? 0 : pid;
}

int
dp_write_file(const char *path, const void *buf, size_t len, Err *err)
{
	DpSeg s = { buf, len };
	return dp_write_segs(path, &s, 1, err);
}

/* Whether the open file f holds exactly the bytes of segs[0..nseg). */
static int
samesegs(FILE *f, const DpSeg *segs, int nseg)
{
	static const char zeros[4096];
	char tmp[1 << 16];
	for (int i = 0; i < nseg; i++) {
		const char *p = segs[i].p;
		for (size_t done = 0; done < segs[i].n;) {
			size_t want = segs[i].n - done < sizeof tmp ? segs[i].n - done : sizeof tmp;
			if (fread(tmp, 1, want, f) != want)
				return 0;
			for (size_t k = 0; k < want; k += sizeof zeros) {
				size_t m = want - k < sizeof zeros ? want - k : sizeof zeros;
				if (memcmp(tmp + k, p ? p + done + k : zeros, m) != 0)
					return 0;
			}
			done += want;
		}
	}
	return fgetc(f) == EOF;
}

int
dp_write_segs(const char *path, const DpSeg *segs, int nseg, Err *err)
{
	static const char zeros[4096];
	struct stat st;
	/* a device or pipe is written straight, never renamed over */
	int regular = !(stat(path, &st) == 0 && !S_ISREG(st.st_mode));
	if (regular) {
		FILE *f = fopen(path, "rb");
		if (f) {
			int same = samesegs(f, segs, nseg);
			fclose(f);
			if (same) {
				dp_sweep(path, tmppid);
				return 0;
			}
		}
	}
	size_t pl = strlen(path);
	char *tmpname = malloc(pl + 32);
	if (!tmpname) {
		dp_seterr(err, "out of memory");
		return -1;
	}
	snprintf(tmpname, pl + 32, "%s.tmp%ld", path, (long)getpid());
	FILE *f = fopen(regular ? tmpname : path, "wb");
	if (!f) {
		dp_seterr(err, "cannot write %s: %s", path, strerror(errno));
		free(tmpname);
		return -1;
	}
	int bad = 0;
	for (int i = 0; i < nseg && !bad; i++) {
		if (segs[i].p)
			bad = segs[i].n && fwrite(segs[i].p, 1, segs[i].n, f) != segs[i].n;
		else
			for (size_t k = 0; k < segs[i].n && !bad; k += sizeof zeros) {
				size_t m = segs[i].n - k < sizeof zeros ? segs[i].n - k : sizeof zeros;
				bad = fwrite(zeros, 1, m, f) != m;
			}
	}
	bad |= fflush(f) != 0;
	bad |= fclose(f) != 0;
	if (!regular) {
		free(tmpname);
		if (bad) {
			dp_seterr(err, "cannot write %s: %s", path, strerror(errno));
			return -1;
		}
		return 0;
	}
	if (bad || rename(tmpname, path) != 0) {
		dp_seterr(err, "cannot write %s: %s", path, strerror(errno));
		remove(tmpname);
		free(tmpname);
		return -1;
	}
	free(tmpname);
	dp_sweep(path, tmppid);
	return 0;
}

uint64_t
dp_hash(const void *p, size_t n, uint64_t h)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

void
dp_hash_hex(uint64_t h, char out[17])
{
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* ---- the weight hash (formats/weights.md) ---- */

enum { WH_STRIPE = 32 };
#define WH_K1 0x9e3779b97f4a7c15ULL
#define WH_K2 0xbf58476d1ce4e5b9ULL
#define WH_K3 0x94d049bb133111ebULL

static uint64_t
rotl64(uint64_t x, int r)
{
	return x << r | x >> (64 - r);
}

static uint64_t
le64(const unsigned char *p)
{
	uint64_t w;
	memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

/* One 32-byte stripe: each of the four lanes takes one word. */
static void
whstripe(uint64_t v[4], const unsigned char *p)
{
	for (int j = 0; j < 4; j++)
		v[j] = rotl64(v[j] + le64(p + 8 * j) * WH_K2, 31) * WH_K1;
}

void
dp_whash_init(DpWhash *s)
{
	memset(s, 0, sizeof *s);
	for (int j = 0; j < 4; j++)
		s->v[j] = (uint64_t)(j + 1) * WH_K2;
}

void
dp_whash_add(DpWhash *s, const void *data, size_t n)
{
	const unsigned char *p = data;
	s->len += n;
	if (s->nbuf) {
		size_t k = WH_STRIPE - s->nbuf < n ? WH_STRIPE - s->nbuf : n;
		memcpy(s->buf + s->nbuf, p, k);
		s->nbuf += k, p += k, n -= k;
		if (s->nbuf < WH_STRIPE)
			return;
		whstripe(s->v, s->buf);
		s->nbuf = 0;
	}
	uint64_t v0 = s->v[0], v1 = s->v[1], v2 = s->v[2], v3 = s->v[3];
	for (; n >= WH_STRIPE; p += WH_STRIPE, n -= WH_STRIPE) {
		v0 = rotl64(v0 + le64(p) * WH_K2, 31) * WH_K1;
		v1 = rotl64(v1 + le64(p + 8) * WH_K2, 31) * WH_K1;
		v2 = rotl64(v2 + le64(p + 16) * WH_K2, 31) * WH_K1;
		v3 = rotl64(v3 + le64(p + 24) * WH_K2, 31) * WH_K1;
	}
	s->v[0] = v0, s->v[1] = v1, s->v[2] = v2, s->v[3] = v3;
	memcpy(s->buf, p, n);
	s->nbuf = n;
}

uint64_t
dp_whash_end(DpWhash *s)
{
	if (s->nbuf) {
		memset(s->buf + s->nbuf, 0, WH_STRIPE - s->nbuf);
		whstripe(s->v, s->buf);
	}
	uint64_t h = s->len * WH_K1;
	for (int j = 0; j < 4; j++)
		h = rotl64(h ^ s->v[j], 29) * WH_K1;
	h ^= h >> 31;
	h *= WH_K2;
	h ^= h >> 29;
	h *= WH_K3;
	h ^= h >> 32;
	return h;
}

uint64_t
dp_whash(const void *p, size_t n)
{
	DpWhash s;
	dp_whash_init(&s);
	dp_whash_add(&s, p, n);
	return dp_whash_end(&s);
}
