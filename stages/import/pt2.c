/* pt2.c: reads torch.export archives (.pt2) and inlines a model's graph
 * into the pipeline's function: user inputs bound to the call's arguments,
 * parameters/buffers/constants as consts into the weight blob. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <zip.h>

#include "import.h"

enum { SCHEMA_MAJOR = 8 };

struct Model {
	const char *path;  /* as written in the .dp */
	char *file;        /* as opened: the .dp's folder + path */
	const Src *src;    /* the .dp, and the position of the call being */
	Pos at;            /* inlined: where errors in the archive are shown */
	void *map;         /* the whole file, mapped */
	size_t size;
	zip_t *zip;
	char *root;        /* the archive's top folder, with '/' */
	json_t *prog;      /* models/model.json */
	json_t *wcfg, *ccfg; /* weight and constant configs: FQN -> entry */
	char hash[17];
	int64_t *data;     /* per entry: where its stored bytes start, or -1 */
	zip_int64_t ndata;
	char *buf;         /* an entry being read, freed by pt2_free after an error */
	zip_file_t *zf;    /* the entry open for reading, likewise */
};

/* A name -> value id map for one inlined graph (open addressing). */
typedef struct Slot {
	const char *key;
	int val;           /* value id, or -1 - (index in input_specs) for a
	                      parameter/buffer/constant not emitted yet */
	const char *unused; /* a result import does not compute: its node */
} Slot;

struct Graph {
	Imp *imp;
	Model *m;
	json_t *tv;        /* graph.tensor_values */
	json_t *specs;     /* signature.input_specs */
	json_t *outs;      /* signature.output_specs: buffer mutations make state */
	json_t *nodes;     /* graph.nodes */
	Slot *slot;
	size_t nslot, used;
	json_t *gr;        /* the graph: its sym_int_values, sym_bool_values */
	const char **symname; /* the ints import folded (sym_size...): names */
	int64_t *symval;
	int nsym, maxsym;
};

/* ---- name map ---- */

static size_t
strhash(const char *s)
{
	return (size_t)dp_hash(s, strlen(s), DP_HASH_INIT);
}

static Slot *
slotof(Graph *g, const char *key)
{
	size_t i = strhash(key) & (g->nslot - 1);
	while (g->slot[i].key && strcmp(g->slot[i].key, key) != 0)
		i = (i + 1) & (g->nslot - 1);
	return &g->slot[i];
}

/* Binds name to value id v in g (rebinding an existing name). */
void
g_bind(Graph *g, const char *name, int v)
{
	if (2 * (g->used + 1) > g->nslot) {
		Slot *old = g->slot;
		size_t n = g->nslot;
		g->nslot = n ? 2 * n : 256;
		g->slot = dp_alloc(g->imp->fn->arena, g->nslot, sizeof *g->slot);
		for (size_t i = 0; i < n; i++)
			if (old[i].key)
				*slotof(g, old[i].key) = old[i];
	}
	Slot *s = slotof(g, name);
	if (!s->key)
		g->used++;
	s->key = name;
	s->val = v;
	s->unused = NULL;
}

/* Binds a name the archive defines: an input spec's or a node's result;
 * what names the definer (for the error when name is defined already). */
void
g_define(Graph *g, const char *name, int v, const char *what)
{
	if (g->nslot && slotof(g, name)->key)
		g_err(g, "malformed archive: %s defines '%s', which is already defined", what, name);
	g_bind(g, name, v);
}

/* Binds name, a SymInt or SymBool result, to the integer v. */
void
g_symset(Graph *g, const char *name, int64_t v)
{
	if (g->nsym == g->maxsym) {
		int n = g->maxsym ? 2 * g->maxsym : 16;
		const char **nn = dp_alloc(g->imp->fn->arena, (size_t)n, sizeof *nn);
		int64_t *nv = dp_alloc(g->imp->fn->arena, (size_t)n, sizeof *nv);
		if (g->nsym) {
			memcpy(nn, g->symname, (size_t)g->nsym * sizeof *nn);
			memcpy(nv, g->symval, (size_t)g->nsym * sizeof *nv);
		}
		g->symname = nn;
		g->symval = nv;
		g->maxsym = n;
	}
	g->symname[g->nsym] = name;
	g->symval[g->nsym++] = v;
}

static int hint(json_t *s, int64_t *v);

/* Whether expression expr names an unbacked symbol (u0, u1...). */
static int
hasunbacked(const char *expr)
{
	for (const char *p = expr; p && *p; p++)
		if (*p == 'u' && p[1] >= '0' && p[1] <= '9' && (p == expr || !isalnum((unsigned char)p[-1])))
			return 1;
	return 0;
}

/* The value of SymInt s (an int, or its example value); 0 when none. */
int
g_hint(json_t *s, int64_t *v)
{
	return hint(s, v);
}

/* The integer a SymInt or SymBool named name stands for: one import folded
 * (g_symset), else the export's example value that the graph's
 * sym_int_values / sym_bool_values record.  0 when there is none. */
int
g_symget(Graph *g, const char *name, int64_t *v)
{
	for (int i = g->nsym - 1; i >= 0; i--)
		if (strcmp(g->symname[i], name) == 0) {
			*v = g->symval[i];
			return 1;
		}
	json_t *s = json_object_get(json_object_get(g->gr, "sym_int_values"), name);
	json_t *b = json_object_get(json_object_get(g->gr, "sym_bool_values"), name);
	if (b && json_is_boolean(json_object_get(b, "as_bool"))) {
		*v = json_is_true(json_object_get(b, "as_bool"));
		return 1;
	}
	return s && hint(s, v);
}

/* Whether SymInt name (not folded by import) is an expression of a
 * data-dependent size: an unbacked symbol with no example value. */
int
g_symunbacked(Graph *g, const char *name)
{
	json_t *s = json_object_get(json_object_get(g->gr, "sym_int_values"), name);
	int64_t v;
	return s && !hint(s, &v) &&
	       hasunbacked(json_string_value(json_object_get(json_object_get(s, "as_expr"), "expr_str")));
}

/* The archive's TensorMeta of value name (its strides, storage offset), or
 * NULL. */
json_t *
g_meta(Graph *g, const char *name)
{
	return json_object_get(g->tv, name);
}

/* Binds a result of node what that import does not compute (an extra
 * result of a multi-result op): any use of it is an error. */
void
g_unused(Graph *g, const char *name, const char *what)
{
	g_define(g, name, -1, what);
	slotof(g, name)->unused = dp_strdup(g->imp->fn->arena, what);
}

/* Binds name, a result g_unused marked, to v after all: a hook computes
 * it. */
void
g_result(Graph *g, const char *name, int v)
{
	slotof(g, name)->unused = NULL;
	g_bind(g, name, v);
}

/* ---- errors ---- */

static _Noreturn void
vmerr(Model *m, const char *fmt, va_list ap)
{
	char msg[1024];
	vsnprintf(msg, sizeof msg, fmt, ap);
	errat(m->src, m->at, "%s: %s", m->path, msg);
}

/* Reports an error in archive m at the model() call being inlined:
 * "PIPELINE.dp:line:col: import: ARCHIVE: msg"; exits 1. */
static _Noreturn void __attribute__((format(printf, 2, 3)))
merr(Model *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmerr(m, fmt, ap);
}

/* The same for an error in g's archive. */
_Noreturn void
g_err(Graph *g, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmerr(g->m, fmt, ap);
}

/* ---- archive access ---- */

/* The import run g belongs to. */
Imp *
g_imp(Graph *g)
{
	return g->imp;
}

static zip_int64_t
locate(Model *m, const char *rel, zip_uint64_t *size)
{
	char *name = strfmt("%s%s", m->root, rel);
	zip_int64_t i = zip_name_locate(m->zip, name, 0);
	free(name);
	if (i >= 0 && size) {
		zip_stat_t st;
		if (zip_stat_index(m->zip, (zip_uint64_t)i, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
			merr(m, "cannot read the archive entry %s%s: %s", m->root, rel, zip_strerror(m->zip));
		/* a size is believed only when the stored bytes can hold it
		 * (deflate expands at most 1032 times): nothing is allocated
		 * for what the archive only claims */
		if ((st.valid & ZIP_STAT_COMP_SIZE) && (st.valid & ZIP_STAT_COMP_METHOD) &&
		    (st.comp_size > m->size ||
		     (st.comp_method == ZIP_CM_STORE ? st.size != st.comp_size
		                                     : st.size / 1032 > st.comp_size + 1)))
			merr(m, "malformed archive: entry %s%s claims %llu bytes, stored in %llu", m->root,
			     rel, (unsigned long long)st.size, (unsigned long long)st.comp_size);
		*size = st.size;
	}
	return i;
}

/* Reads n bytes of entry i (its first n, or all of it with the CRC check
 * when n is its size) into buf. */
static void
readentry(Model *m, zip_int64_t i, const char *rel, void *buf, zip_uint64_t n, zip_uint64_t size)
{
	zip_file_t *f = m->zf = zip_fopen_index(m->zip, (zip_uint64_t)i, 0);
	if (!f)
		merr(m, "cannot read %s%s: %s", m->root, rel, zip_strerror(m->zip));
	zip_uint64_t got = 0;
	while (got < n) {
		zip_int64_t r = zip_fread(f, (char *)buf + got, n - got);
		if (r < 0)
			merr(m, "cannot read %s%s: %s", m->root, rel, zip_file_strerror(f));
		if (r == 0)
			break;
		got += (zip_uint64_t)r;
	}
	if (got != n)
		merr(m, "%s%s is truncated (%llu of %llu bytes)", m->root, rel,
		        (unsigned long long)got, (unsigned long long)n);
	if (n == size) {
		char c;
		if (zip_fread(f, &c, 1) != 0)
			merr(m, "cannot read %s%s: %s", m->root, rel, zip_file_strerror(f));
	}
	m->zf = NULL;
	zip_fclose(f);
}

static uint64_t
rd(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Fills m->data from the archive's central directory: for each entry
 * stored uncompressed, the offset of its bytes in the file (past its local
 * header), so that weights are used where they lie.  libzip checked the
 * archive's consistency on open; anything unexpected here leaves -1, and
 * the entry is then read through libzip. */
static void
dataoffsets(Model *m)
{
	const unsigned char *z = m->map;
	size_t size = m->size;
	m->ndata = zip_get_num_entries(m->zip, 0);
	m->data = xrealloc(NULL, (size_t)m->ndata + 1, sizeof *m->data);
	for (zip_int64_t i = 0; i < m->ndata; i++)
		m->data[i] = -1;
	/* the end of central directory record, and its zip64 twin (an archive
	 * too small to hold both and an entry is read through libzip) */
	if (size < 128)
		return;
	size_t e = size - 22, stop = e > 65535 ? e - 65535 : 0;
	while (e > stop && rd(z + e, 4) != 0x06054b50)
		e--;
	if (rd(z + e, 4) != 0x06054b50)
		return;
	uint64_t count = rd(z + e + 10, 2), cd = rd(z + e + 16, 4);
	if ((count == 0xffff || cd == 0xffffffff) && e >= 20 && rd(z + e - 20, 4) == 0x07064b50) {
		uint64_t z64 = rd(z + e - 20 + 8, 8);
		if (z64 > size - 56 || rd(z + z64, 4) != 0x06064b50)
			return;
		count = rd(z + z64 + 32, 8);
		cd = rd(z + z64 + 48, 8);
	}
	if (count != (uint64_t)m->ndata)
		return;
	for (uint64_t i = 0, at = cd; i < count; i++) {
		if (at > size - 46 || rd(z + at, 4) != 0x02014b50)
			return;
		const unsigned char *h = z + at;
		uint64_t method = rd(h + 10, 2), csize = rd(h + 20, 4), usize = rd(h + 24, 4);
		uint64_t nlen = rd(h + 28, 2), xlen = rd(h + 30, 2), clen = rd(h + 32, 2);
		uint64_t local = rd(h + 42, 4);
		if (46 + nlen + xlen + clen > size - at)
			return;
		/* zip64: the sizes and offset that do not fit come in extra field 1 */
		for (uint64_t x = 46 + nlen; x + 4 <= 46 + nlen + xlen;) {
			uint64_t id = rd(h + x, 2), xl = rd(h + x + 2, 2), k = x + 4;
			if (x + 4 + xl > 46 + nlen + xlen)
				return;
			if (id == 1) {
				if (usize == 0xffffffff && k + 8 <= x + 4 + xl)
					usize = rd(h + k, 8), k += 8;
				if (csize == 0xffffffff && k + 8 <= x + 4 + xl)
					csize = rd(h + k, 8), k += 8;
				if (local == 0xffffffff && k + 8 <= x + 4 + xl)
					local = rd(h + k, 8);
			}
			x += 4 + xl;
		}
		const char *name = zip_get_name(m->zip, i, ZIP_FL_ENC_RAW);
		if (method == 0 && csize == usize && name && strlen(name) == nlen &&
		    memcmp(name, h + 46, nlen) == 0 && local <= size - 30 &&
		    rd(z + local, 4) == 0x04034b50) {
			uint64_t d = local + 30 + rd(z + local + 26, 2) + rd(z + local + 28, 2);
			if (d <= size && usize <= size - d)
				m->data[i] = (int64_t)d;
		}
		at += 46 + nlen + xlen + clen;
	}
}

/* The stored bytes of entry i in the mapped archive, or NULL when they are
 * compressed or cannot be found there. */
static const char *
entrydata(Model *m, zip_int64_t i)
{
	if (!m->data)
		dataoffsets(m);
	return i >= 0 && i < m->ndata && m->data[i] >= 0 ? (const char *)m->map + m->data[i] : NULL;
}

/* Reads all of entry i (size bytes) through libzip in cache-sized pieces,
 * so that its CRC-32 is checked, and returns the weight hash of its bytes
 * [skip, skip + n). */
static uint64_t
readhash(Model *m, zip_int64_t i, const char *rel, zip_uint64_t skip, zip_uint64_t n,
         zip_uint64_t size)
{
	enum { PIECE = 1 << 18 };
	char *buf = m->buf = xrealloc(NULL, PIECE, 1);
	zip_file_t *f = m->zf = zip_fopen_index(m->zip, (zip_uint64_t)i, 0);
	if (!f)
		merr(m, "cannot read %s%s: %s", m->root, rel, zip_strerror(m->zip));
	DpWhash h;
	dp_whash_init(&h);
	zip_uint64_t got = 0;
	for (;;) {
		zip_int64_t r = zip_fread(f, buf, PIECE);
		if (r < 0)
			merr(m, "cannot read %s%s: %s", m->root, rel, zip_file_strerror(f));
		if (r == 0)
			break;
		zip_uint64_t lo = got > skip ? got : skip, hi = got + (zip_uint64_t)r;
		if (hi > skip + n)
			hi = skip + n;
		if (lo < hi)
			dp_whash_add(&h, buf + (lo - got), hi - lo);
		got += (zip_uint64_t)r;
	}
	if (got != size)
		merr(m, "%s%s is truncated (%llu of %llu bytes)", m->root, rel,
		        (unsigned long long)got, (unsigned long long)size);
	m->zf = NULL;
	zip_fclose(f);
	m->buf = NULL;
	free(buf);
	return dp_whash_end(&h);
}

static json_t *
readjson(Model *m, const char *rel, int optional)
{
	zip_uint64_t size;
	zip_int64_t i = locate(m, rel, &size);
	if (i < 0) {
		if (optional)
			return NULL;
		merr(m, "not a torch.export archive: no entry %s%s", m->root, rel);
	}
	char *buf = m->buf = xrealloc(NULL, size + 1, 1);
	readentry(m, i, rel, buf, size, size);
	json_error_t je;
	json_t *j = json_loadb(buf, size, 0, &je);
	m->buf = NULL;
	free(buf);
	if (!j)
		merr(m, "%s%s:%d:%d: bad JSON: %s", m->root, rel, je.line, je.column, je.text);
	return j;
}

static json_t *
getobj(Model *m, json_t *o, const char *key, const char *what)
{
	json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
	if (!v)
		merr(m, "malformed archive: %s has no '%s'", what, key);
	return v;
}

static json_t *
config(Model *m, const char *rel)
{
	json_t *j = readjson(m, rel, 1);
	if (!j)
		return NULL;
	json_t *c = json_object_get(j, "config");
	if (!json_is_object(c)) {
		json_decref(j);
		merr(m, "malformed archive: %s%s has no 'config' object", m->root, rel);
	}
	json_incref(c);
	json_decref(j);
	return c;
}

static Model *
load(Imp *imp, const Call *c)
{
	for (int i = 0; i < imp->nmodel; i++)
		if (strcmp(imp->model[i]->path, c->path) == 0)
			return imp->model[i];
	Model *m = xrealloc(NULL, 1, sizeof *m);
	memset(m, 0, sizeof *m);
	imp->model = xrealloc(imp->model, (size_t)imp->nmodel + 1, sizeof *imp->model);
	imp->model[imp->nmodel++] = m;
	m->path = c->path;
	m->src = imp->src;
	m->at = c->pathat;
	m->file = c->path[0] == '/' ? xstrdup(c->path) : strfmt("%s%s", imp->src->dir, c->path);
	int fd = open(m->file, O_RDONLY);
	struct stat st;
	if (fd < 0)
		errat(imp->src, c->pathat, "cannot open '%s': %s", c->path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errat(imp->src, c->pathat, "cannot open '%s': %s", c->path,
		      S_ISDIR(st.st_mode) ? "Is a directory" : "not a regular file");
	}
	if (st.st_size == 0) {
		close(fd);
		merr(m, "cannot read the archive: empty file");
	}
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		errat(imp->src, c->pathat, "cannot read '%s': %s", c->path, strerror(errno));
	m->map = map;
	m->size = (size_t)st.st_size;
	dp_hash_hex(dp_whash(m->map, m->size), m->hash);

	zip_error_t ze;
	zip_error_init(&ze);
	zip_source_t *zs = zip_source_buffer_create(m->map, m->size, 0, &ze);
	if (zs && !(m->zip = zip_open_from_source(zs, ZIP_RDONLY | ZIP_CHECKCONS, &ze)))
		zip_source_free(zs);
	if (!m->zip) {
		char msg[256];
		snprintf(msg, sizeof msg, "%s", zip_error_strerror(&ze));
		zip_error_fini(&ze);
		merr(m, "cannot read the archive: %s", msg);
	}
	const char *first = zip_get_num_entries(m->zip, 0) > 0 ? zip_get_name(m->zip, 0, 0) : NULL;
	const char *slash = first ? strchr(first, '/') : NULL;
	if (!slash)
		merr(m, "not a torch.export archive: entries are not under one folder");
	m->root = strfmt("%.*s/", (int)(slash - first), first);

	zip_uint64_t bsize;
	zip_int64_t bi = locate(m, "byteorder", &bsize);
	if (bi >= 0 && bsize < 64) {
		char bo[64] = { 0 };
		readentry(m, bi, "byteorder", bo, bsize, bsize);
		if (strcmp(bo, "little") != 0)
			merr(m, "the archive's byteorder is '%s'; DevProc reads little-endian archives only", bo);
	}
	m->prog = readjson(m, "models/model.json", 0);
	json_t *v = json_object_get(json_object_get(m->prog, "schema_version"), "major");
	if (!json_is_integer(v))
		merr(m, "malformed archive: models/model.json has no schema_version.major");
	if (json_integer_value(v) != SCHEMA_MAJOR)
		merr(m, "unsupported ExportedProgram schema version %lld (DevProc reads major %d, "
		        "written by PyTorch 2.9 and later)", (long long)json_integer_value(v), SCHEMA_MAJOR);
	m->wcfg = config(m, "data/weights/model_weights_config.json");
	m->ccfg = config(m, "data/constants/model_constants_config.json");
	return m;
}

/* ---- types ---- */

static int
sameshape(const Type *a, const Type *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank)
		return 0;
	for (int i = 0; i < a->rank; i++)
		if (a->dim[i] != b->dim[i])
			return 0;
	return 1;
}

/* The value of SymInt s: its int, or the export example's value (hint)
 * of its expression; 0 when it has neither. */
static int
hint(json_t *s, int64_t *v)
{
	json_t *x = json_object_get(s, "as_int"), *h;
	if (json_is_integer(x)) {
		*v = json_integer_value(x);
		return 1;
	}
	h = json_object_get(json_object_get(s, "as_expr"), "hint");
	if (json_is_object(h))
		h = json_object_get(h, "as_int");
	if (!json_is_integer(h))
		return 0;
	*v = json_integer_value(h);
	return 1;
}

/* The bound of an unbacked symbol ("Symbol('u0', integer=True)" or "u0":
 * a data-dependent size such as aten.nonzero's row count): the archive's
 * range_constraints' max_val; 0 when expr is no such symbol or has none. */
static int
unbacked(Model *m, const char *expr, int64_t *bound)
{
	char name[32];
	size_t n;
	if (!expr)
		return 0;
	if (strncmp(expr, "Symbol('", 8) == 0)
		expr += 8;
	n = strspn(expr + 1, "0123456789");
	if (expr[0] != 'u' || n == 0 || n > 20 || (expr[n + 1] && strncmp(expr + n + 1, "', ", 3)))
		return 0;
	snprintf(name, sizeof name, "u%.*s", (int)n, expr + 1);
	json_t *mx = json_object_get(json_object_get(json_object_get(m->prog, "range_constraints"),
	                                             name), "max_val");
	if (!json_is_integer(mx) || json_integer_value(mx) < 1)
		return 0;
	*bound = json_integer_value(mx);
	return 1;
}

/* A size of the archive: an int, or a symbolic size of a dynamic-shape
 * export, which import takes at the export example's value (the hint the
 * archive records with the expression); with bnd, a leading size that is
 * an unbacked symbol is its bound (*bnd set: formats/ops.md, "Bounded
 * sizes").  Any other with no hint is an error. */
static int64_t
symint(Model *m, json_t *s, const char *what, const char *name, int i, uint8_t *bnd)
{
	int64_t h;
	if (hint(s, &h))
		return h;
	const char *key = json_is_object(s) ? json_object_iter_key(json_object_iter(s)) : NULL;
	const char *sym = json_string_value(json_object_get(json_object_get(s, "as_expr"), "expr_str"));
	if (bnd && i == 0 && unbacked(m, sym, &h)) {
		*bnd = 1;
		return h;
	}
	merr(m, "%s '%s' has a symbolic size at dimension %d (%s) with no example value; DevProc "
	        "needs static shapes%s", what, name, i, sym ? sym : key ? key : "not an integer",
	     hasunbacked(sym) ? " (a data-dependent size is supported as the leading size "
	     "of aten.nonzero's result and what keeps its rows: formats/ops.md, \"Bounded sizes\")"
	     : "");
}

/* Reads a TensorMeta (tensor_values entry or a config's tensor_meta). */
static void
meta(Model *m, json_t *tm, const char *what, const char *name, Type *t)
{
	json_t *dt = json_object_get(tm, "dtype"), *sz = json_object_get(tm, "sizes");
	if (!json_is_integer(dt) || !json_is_array(sz))
		merr(m, "malformed archive: %s '%s' needs an integer dtype and a list of sizes", what, name);
	json_int_t de = json_integer_value(dt);
	int d = de >= 0 && de < 256 ? dp_dtype_from_pt2((int)de) : -1;
	if (d < 0)
		merr(m, "%s '%s' has an unsupported dtype (schema enum %lld)", what, name,
		        (long long)json_integer_value(dt));
	memset(t, 0, sizeof *t);
	t->dtype = (uint8_t)d;
	t->dev = DEV_CPU;
	if (json_array_size(sz) > DP_MAXRANK)
		merr(m, "%s '%s' has rank %zu (at most %d)", what, name, json_array_size(sz), DP_MAXRANK);
	t->rank = (uint8_t)json_array_size(sz);
	for (int i = 0; i < t->rank; i++) {
		t->dim[i] = symint(m, json_array_get(sz, (size_t)i), what, name, i, &t->bnd);
		if (t->dim[i] < 0)
			merr(m, "%s '%s' has a negative size", what, name);
	}
	if (dp_nbytes(t) < 0)
		merr(m, "%s '%s' (%s) is larger than " DP_MAXBYTES_TEXT ", the largest tensor DevProc "
		        "handles", what, name, typestr(t));
}

/* The type the archive gives graph value name; 0 when it gives none. */
int
g_type(Graph *g, const char *name, Type *t)
{
	json_t *tm = json_object_get(g->tv, name);
	if (!tm)
		return 0;
	if (g_complex(g, name)) {   /* complex64: f32 [..., 2] (formats/ops.md) */
		/* read as f32 in place (no copy to leak when meta fails) */
		json_object_set_new(tm, "dtype", json_integer(PT2_FLOAT));
		meta(g->m, tm, "value", name, t);
		json_object_set_new(tm, "dtype", json_integer(PT2_COMPLEX64));
		if (t->rank == DP_MAXRANK)
			merr(g->m, "value '%s' is complex of rank 8 (at most 7)", name);
		t->dim[t->rank++] = 2;
		return 1;
	}
	meta(g->m, tm, "value", name, t);
	return 1;
}

/* Whether the archive gives graph value name a complex64 dtype. */
int
g_complex(Graph *g, const char *name)
{
	json_t *tm = name ? json_object_get(g->tv, name) : NULL;
	return tm && json_integer_value(json_object_get(tm, "dtype")) == PT2_COMPLEX64;
}

/* ---- constants ---- */

static const char *tensorname(json_t *arg);

/* The placeholder of buffer fqn (its input spec's arg), or NULL. */
static const char *
bufferarg(const Graph *g, const char *fqn)
{
	const char *ph = NULL;
	for (size_t i = 0; fqn && i < json_array_size(g->specs); i++) {
		json_t *b = json_object_get(json_array_get(g->specs, i), "buffer");
		const char *n = json_string_value(json_object_get(b, "buffer_name"));
		if (n && strcmp(n, fqn) == 0)
			ph = json_string_value(json_object_get(json_object_get(b, "arg"), "name"));
	}
	return ph;
}

/* Whether some node writes in place (an aten op whose name ends in '_',
 * such as index_put_) into the tensor named ph, its first input: a
 * training-IR archive's buffer mutation, which has no buffer_mutation
 * output. */
static int
writteninto(const Graph *g, const char *ph)
{
	for (size_t i = 0; ph && i < json_array_size(g->nodes); i++) {
		json_t *nd = json_array_get(g->nodes, i);
		const char *t = json_string_value(json_object_get(nd, "target"));
		const char *dot = t ? strrchr(t, '.') : NULL;
		if (!dot || dot == t || dot[-1] != '_' || strncmp(t, "torch.ops.aten.", 15) != 0)
			continue;
		const char *a = tensorname(json_object_get(
			json_array_get(json_object_get(nd, "inputs"), 0), "arg"));
		if (a && strcmp(a, ph) == 0)
			return 1;
	}
	return 0;
}

/* Whether the model has a buffer_mutation output for its buffer fqn. */
static int
mutationout(const Graph *g, const char *fqn)
{
	for (size_t i = 0; g && i < json_array_size(g->outs); i++) {
		json_t *b = json_object_get(json_array_get(g->outs, i), "buffer_mutation");
		const char *n = json_string_value(json_object_get(b, "buffer_name"));
		if (n && strcmp(n, fqn) == 0)
			return 1;
	}
	return 0;
}

/* Whether the model mutates its buffer fqn: a buffer_mutation output, or
 * an in-place write into it. */
static int
mutated(const Graph *g, const char *fqn)
{
	return g && (mutationout(g, fqn) || writteninto(g, bufferarg(g, fqn)));
}

/* The const op of a tensor of the blob; param is its state-dict name, or
 * NULL for constants a checkpoint does not hold; state: a buffer the model
 * mutates (the program keeps it from run to run). */
static int
constop(Imp *imp, int64_t off, int64_t n, const char *hash, const Type *t, const char *param,
        int state)
{
	for (int i = 0; i < imp->nkonst; i++) {
		Const *k = &imp->konst[i];
		if (k->off == off && k->n == n && dp_type_eq(&k->t, t))
			return k->val;   /* offsets are shared only under one name */
	}
	Fn *fn = imp->fn;
	int op = dp_addop(fn, Oconst, NULL, 0);
	dp_seti(fn, op, "offset", off);
	dp_seti(fn, op, "nbytes", n);
	dp_sets(fn, op, "hash", hash);
	if (param)
		dp_sets(fn, op, "param", param);
	if (state)
		dp_seti(fn, op, "state", 1);
	int v = dp_addout(fn, op, *t);
	if (imp->nkonst == imp->capkonst) {
		imp->capkonst = imp->capkonst ? 2 * imp->capkonst : 64;
		imp->konst = xrealloc(imp->konst, (size_t)imp->capkonst, sizeof *imp->konst);
	}
	imp->konst[imp->nkonst++] = (Const){ off, n, *t, v };
	return v;
}

int
imp_const(Imp *imp, const void *bytes, const Type *t)
{
	size_t n = (size_t)dp_nbytes(t);
	char hash[17];

	memcpy(blob_room(&imp->blob, n), bytes, n);
	int64_t off = blob_commit(&imp->blob, n, hash);
	return constop(imp, off, (int64_t)n, hash, t, NULL, 0);
}

/* A rank-0 const holding v as dtype. */
int
g_scalar(Graph *g, double v, int dtype)
{
	Type t = { .dtype = (uint8_t)dtype, .dev = DEV_CPU };
	int n = dp_dtype_size[dtype];
	char hash[17];
	tobytes(v, dtype, blob_room(&g->imp->blob, (size_t)n));
	int64_t off = blob_commit(&g->imp->blob, (size_t)n, hash);
	return constop(g->imp, off, n, hash, &t, NULL, 0);
}

/* A const of type t with every element v. */
int
g_filled(Graph *g, const Type *t, double v)
{
	int64_t n = dp_numel(t), es = dp_dtype_size[t->dtype];
	char hash[17], *p;

	if (n < 0 || dp_nbytes(t) < 0)
		dp_die("g_filled: bad type");
	p = blob_room(&g->imp->blob, (size_t)(n * es));
	for (int64_t i = 0; i < n; i++)
		tobytes(v, t->dtype, p + i * es);
	int64_t off = blob_commit(&g->imp->blob, (size_t)(n * es), hash);
	return constop(g->imp, off, n * es, hash, t, NULL, 0);
}

/* Emits the const of a parameter, buffer or tensor constant named fqn (graph
 * value name): its bytes, dense in C order, go into the blob.  named: a
 * parameter or persistent buffer, whose fqn is its state-dict name. */
static int
weight(Graph *g, const char *name, const char *fqn, int named)
{
	Model *m = g->m;
	const char *dir = "data/weights/";
	json_t *e = m->wcfg ? json_object_get(m->wcfg, fqn) : NULL;
	if (!e && m->ccfg && (e = json_object_get(m->ccfg, fqn)))
		dir = "data/constants/";
	if (!e)
		merr(m, "'%s' is not in the archive's weight or constant configs", fqn);
	if (json_is_true(json_object_get(e, "use_pickle")))
		merr(m, "'%s' is stored pickled; DevProc reads raw tensor files only", fqn);
	const char *pn = json_string_value(json_object_get(e, "path_name"));
	json_t *tm = json_object_get(e, "tensor_meta");
	if (!pn || !tm)
		merr(m, "malformed archive: the config entry of '%s' has no path_name or tensor_meta", fqn);
	Type t, tv;
	meta(m, tm, "tensor", fqn, &t);
	if (g_type(g, name, &tv) && !sameshape(&t, &tv))
		merr(m, "'%s' is %s in the config but %s in the graph", fqn, typestr(&t), typestr(&tv));
	json_t *lay = json_object_get(tm, "layout");
	if (lay && json_integer_value(lay) != 7)
		merr(m, "'%s' is not a strided (dense) tensor (layout %lld)", fqn,
		        (long long)json_integer_value(lay));

	/* element strides and offset into the stored bytes */
	int64_t st[DP_MAXRANK], off = 0, dense = 1;
	json_t *js = json_object_get(tm, "strides"), *jo = json_object_get(tm, "storage_offset");
	if (js && json_array_size(js) != t.rank)
		merr(m, "malformed archive: '%s' has %zu strides for rank %d", fqn, json_array_size(js), t.rank);
	int contiguous = 1;
	for (int i = t.rank - 1; i >= 0; i--) {
		st[i] = js ? symint(m, json_array_get(js, (size_t)i), "tensor", fqn, i, NULL) : dense;
		if (st[i] < 0)
			merr(m, "'%s' has a negative stride", fqn);
		if (t.dim[i] != 1 && st[i] != dense)
			contiguous = 0;
		dense *= t.dim[i];
	}
	if (jo)
		off = symint(m, jo, "tensor", fqn, 0, NULL);
	if (off < 0)
		merr(m, "'%s' has a negative storage offset", fqn);
	int64_t numel = dp_numel(&t), es = dp_dtype_size[t.dtype], need = 0;
	if (numel > 0) {
		/* the last element's offset, in elements, without overflow */
		int64_t last = off;
		for (int i = 0; i < t.rank; i++) {
			if (st[i] && t.dim[i] - 1 > (INT64_MAX - last) / st[i])
				merr(m, "'%s': its strides and storage offset overflow", fqn);
			last += (t.dim[i] - 1) * st[i];
		}
		if (last >= INT64_MAX / es)
			merr(m, "'%s': its strides and storage offset overflow", fqn);
		need = (last + 1) * es;
	}
	char *rel = dp_alloc(g->imp->fn->arena, strlen(dir) + strlen(pn) + 1, 1);
	strcat(strcpy(rel, dir), pn);
	zip_uint64_t size;
	zip_int64_t zi = locate(m, rel, &size);
	if (zi < 0)
		merr(m, "no entry %s%s for '%s'", m->root, rel, fqn);
	if ((int64_t)size < need)
		merr(m, "%s%s holds %llu bytes but '%s' (%s) needs %lld", m->root, rel,
		        (unsigned long long)size, fqn, typestr(&t), (long long)need);
	size_t nb = (size_t)(numel * es);
	char hash[17];
	Blob *b = &g->imp->blob;
	int state = mutated(g, fqn);
	const char *param = named || state ? dp_strdup(g->imp->fn->arena, fqn) : NULL;
	const char *at = contiguous ? entrydata(m, zi) : NULL;
	int64_t where;
	if (at) {
		/* used where it lies in the archive: copied once, into weights.bin */
		uint64_t h = readhash(m, zi, rel, (zip_uint64_t)(off * es), nb, size);
		where = blob_ref(b, at + off * es, nb, h, hash, param);
	} else if (contiguous && off == 0 && (int64_t)size == need) {
		readentry(m, zi, rel, blob_room(b, nb), nb, size);
		where = blob_commit_as(b, nb, hash, param);
	} else {
		/* copy the strided view into dense C order */
		char *raw = m->buf = xrealloc(NULL, size ? size : 1, 1);
		readentry(m, zi, rel, raw, size, size);
		char *dst = blob_room(b, nb);
		int64_t idx[DP_MAXRANK] = { 0 };
		for (int64_t k = 0; k < numel; k++) {
			int64_t src = off;
			for (int i = 0; i < t.rank; i++)
				src += idx[i] * st[i];
			memcpy(dst + k * es, raw + src * es, (size_t)es);
			for (int i = t.rank - 1; i >= 0; i--) {
				if (++idx[i] < t.dim[i])
					break;
				idx[i] = 0;
			}
		}
		m->buf = NULL;
		free(raw);
		where = blob_commit_as(b, nb, hash, param);
	}
	return constop(g->imp, where, (int64_t)nb, hash, &t, param, state);
}

/* The value id of graph value name, emitting its const on first use. */
int
g_value(Graph *g, const char *name, const char *node)
{
	Slot *s = slotof(g, name);
	if (!s->key)
		merr(g->m, "node '%s' uses '%s', which is not defined before it", node, name);
	if (s->unused)
		merr(g->m, "node '%s' uses '%s', a result of %s other than the first, which DevProc "
		        "does not compute", node, name, s->unused);
	if (s->val >= 0)
		return s->val;
	json_t *spec = json_array_get(g->specs, (size_t)(-1 - s->val));
	const char *kind = json_object_iter_key(json_object_iter(spec));
	json_t *body = json_object_iter_value(json_object_iter(spec));
	const char *key = strcmp(kind, "parameter") == 0 ? "parameter_name"
	                : strcmp(kind, "buffer") == 0 ? "buffer_name" : "tensor_constant_name";
	const char *fqn = json_string_value(json_object_get(body, key));
	if (!fqn)
		merr(g->m, "malformed archive: input spec of '%s' has no %s", name, key);
	int named = strcmp(kind, "parameter") == 0 ||
	            (strcmp(kind, "buffer") == 0 && json_is_true(json_object_get(body, "persistent")));
	int v = weight(g, name, fqn, named);
	s = slotof(g, name);
	s->val = v;
	return v;
}

/* ---- inlining ---- */

static const char *
tensorname(json_t *arg)
{
	return json_string_value(json_object_get(json_object_get(arg, "as_tensor"), "name"));
}

/* An in-place op wrote v into name, whose value was old: when name is a
 * slice or select of a base tensor (the node that defined it says), the
 * base becomes the base with v scattered into that window (the functional
 * form: aten.slice_scatter / aten.select_scatter), and so on up a chain
 * of views. */
void
g_writeback(Graph *g, const char *name, int old, int v)
{
	Fn *fn = g->imp->fn;
	for (size_t i = 0; i < json_array_size(g->nodes); i++) {
		json_t *nd = json_array_get(g->nodes, i);
		json_t *outs = json_object_get(nd, "outputs");
		const char *on = tensorname(json_array_get(outs, 0));
		const char *t = json_string_value(json_object_get(nd, "target"));
		if (!on || !t || strcmp(on, name) != 0)
			continue;
		int sel = !strcmp(t, "torch.ops.aten.select.int");
		if (!sel && strcmp(t, "torch.ops.aten.slice.Tensor") != 0)
			return;   /* not a view: nothing else shares its bytes */
		const char *base = tensorname(json_object_get(
			json_array_get(json_object_get(nd, "inputs"), 0), "arg"));
		const Op *view = &fn->op[fn->val[old].def];
		if (!base || (view->kind != Aslice && view->kind != Aselect))
			return;
		int in[2] = { view->in[0], v }, k = dp_addop(fn, sel ? Aselscat : Aslicescat, in, 2);
		view = &fn->op[fn->val[old].def];
		for (int j = 0; j < view->nattr; j++) {
			const Attr *a = &fn->op[fn->val[old].def].attr[j];
			dp_seti(fn, k, a->key, a->i);   /* dim, start, end, step / dim, index */
		}
		Err err = { 0 };
		if (dp_infer(fn, k, &err))
			merr(g->m, "node '%s' writes into a view of '%s': %s", name, base, err.msg);
		int bold = g_value(g, base, name);
		g_bind(g, base, fn->op[k].out[0]);
		g_writeback(g, base, bold, fn->op[k].out[0]);
		return;
	}
}

/* Where node nd comes from in the user's Python, from its metadata: the
 * innermost frame of stack_trace outside torch itself as "file.py:LINE",
 * and the innermost module of nn_module_stack ("key,path,type;...") as
 * its path, into buf. */
static void
origin(json_t *nd, char *buf, size_t n)
{
	json_t *md = json_object_get(nd, "metadata");
	const char *st = json_string_value(json_object_get(md, "stack_trace"));
	const char *ms = json_string_value(json_object_get(md, "nn_module_stack"));
	char file[160] = "", mod[200] = "";
	long line = 0;

	for (const char *p = st; p && (p = strstr(p, "File \"")) != NULL;) {
		const char *f = p + 6, *e = strchr(f, '"'), *base;
		if (!e)
			break;
		p = e;
		const char *q = f;
		while (q + 7 <= e && strncmp(q, "/torch/", 7) != 0)
			q++;
		if (q + 7 <= e)
			continue;   /* inside PyTorch: the caller's line says more */
		for (base = e; base > f && base[-1] != '/'; base--)
			;
		snprintf(file, sizeof file, "%.*s", (int)(e - base), base);
		line = strncmp(e, "\", line ", 8) == 0 ? strtol(e + 8, NULL, 10) : 0;
	}
	if (ms) {   /* the last entry's middle field */
		const char *last = strrchr(ms, ';'), *c1, *c2;
		last = last ? last + 1 : ms;
		c1 = strchr(last, ',');
		c2 = c1 ? strchr(c1 + 1, ',') : NULL;
		if (c1 && c2)
			snprintf(mod, sizeof mod, "%.*s", (int)(c2 - c1 - 1), c1 + 1);
		if (strncmp(mod, "L['self'].", 10) == 0)
			memmove(mod, mod + 10, strlen(mod + 10) + 1);
	}
	if (*file)
		snprintf(buf, n, "%s:%ld (%s)", file, line, *mod ? mod : "the model itself");
	else
		snprintf(buf, n, "(%s%s)", *mod ? "module " : "no source line", mod);
}

/* ---- higher-order ops ---- */

/* The body of higher-order node nd when inlining it computes what the
 * node does at inference: a torch.no_grad / enable_grad region
 * (wrap_with_set_grad_enabled) or an autocast region that is disabled
 * (wrap_with_autocast with enabled False, as transformers' rotary
 * embedding writes); else NULL.  *first: the index of the body's first
 * operand among nd's inputs. */
static json_t *
hopbody(json_t *nd, size_t *first)
{
	const char *t = json_string_value(json_object_get(nd, "target"));
	json_t *in = json_object_get(nd, "inputs");
	size_t at;
	if (!t || !json_is_array(in))
		return NULL;
	if (strcmp(t, "torch.ops.higher_order.wrap_with_set_grad_enabled") == 0)
		at = 1;     /* (enabled, body, *args) */
	else if (strcmp(t, "torch.ops.higher_order.wrap_with_autocast") == 0) {
		at = 4;     /* (device_type, dtype, enabled, cache_enabled, body, *args) */
		json_t *en = json_object_get(json_object_get(json_array_get(in, 2), "arg"), "as_bool");
		if (!json_is_false(en))
			return NULL;
	} else
		return NULL;
	json_t *body = json_object_get(json_object_get(json_object_get(
		json_array_get(in, at), "arg"), "as_graph"), "graph");
	if (!json_is_object(body) || !json_is_array(json_object_get(body, "nodes")) ||
	    !json_is_array(json_object_get(body, "inputs")) ||
	    !json_is_array(json_object_get(body, "outputs")))
		return NULL;
	*first = at + 1;
	return body;
}

/* Why higher-order node nd is not inlined, for the unsupported-op message. */
static const char *
hopwhy(json_t *nd)
{
	const char *t = json_string_value(json_object_get(nd, "target"));
	if (t && strcmp(t, "torch.ops.higher_order.wrap_with_autocast") == 0)
		return " (an enabled autocast region changes dtypes; DevProc inlines disabled ones)";
	if (t && strcmp(t, "torch.ops.higher_order.wrap_with_set_grad_enabled") == 0)
		return " (its body is malformed)";
	return "";
}

/* Appends nodes[0..] and, in place of each inlinable higher-order node,
 * its body's nodes (recursively) to the arena list *all of *n (room for
 * *cap): the nodes the op check looks at. */
static void
flatten(Arena *a, json_t *nodes, json_t ***all, size_t *n, size_t *cap)
{
	for (size_t i = 0; i < json_array_size(nodes); i++) {
		json_t *nd = json_array_get(nodes, i), *body;
		size_t first;
		if ((body = hopbody(nd, &first)) != NULL) {
			flatten(a, json_object_get(body, "nodes"), all, n, cap);
			continue;
		}
		if (*n == *cap) {
			json_t **old = *all;
			*cap = *cap ? 2 * *cap : 256;
			*all = dp_alloc(a, *cap, sizeof **all);
			if (*n)
				memcpy(*all, old, *n * sizeof **all);
		}
		(*all)[(*n)++] = nd;
	}
}

static void node(Graph *g, json_t *nd);

/* Inlines higher-order node nd (hopbody's kind): its body's inputs bound
 * to nd's operands, its nodes converted in a name scope of their own,
 * nd's results bound to the body's outputs. */
static void
hop(Graph *g, json_t *nd, json_t *body, size_t first)
{
	const char *name = json_string_value(json_object_get(nd, "name"));
	json_t *in = json_object_get(nd, "inputs"), *bin = json_object_get(body, "inputs");
	json_t *bout = json_object_get(body, "outputs"), *outs = json_object_get(nd, "outputs");
	if (!name)
		name = "?";
	if (json_array_size(in) != first + json_array_size(bin))
		g_err(g, "malformed archive: node '%s' passes %zu operands to a body of %zu inputs",
		      name, json_array_size(in) - (first < json_array_size(in) ? first : 0),
		      json_array_size(bin));
	if (json_array_size(outs) != json_array_size(bout))
		g_err(g, "malformed archive: node '%s' has %zu results for a body of %zu outputs",
		      name, json_array_size(outs), json_array_size(bout));
	Graph sub = { .imp = g->imp, .m = g->m, .specs = g->specs };
	sub.tv = json_object_get(body, "tensor_values");
	sub.nodes = json_object_get(body, "nodes");
	sub.gr = body;
	for (size_t i = 0; i < json_array_size(bin); i++) {
		const char *on = tensorname(json_object_get(json_array_get(in, first + i), "arg"));
		const char *bn = tensorname(json_array_get(bin, i));
		if (!on || !bn)
			g_err(g, "node '%s': operand %zu of its body is not a tensor; DevProc inlines "
			         "bodies of tensors only", name, i + 1);
		g_define(&sub, bn, g_value(g, on, name), "a body input");
	}
	for (size_t i = 0; i < json_array_size(sub.nodes); i++)
		node(&sub, json_array_get(sub.nodes, i));
	for (size_t i = 0; i < json_array_size(bout); i++) {
		const char *bn = tensorname(json_array_get(bout, i));
		const char *on = tensorname(json_array_get(outs, i));
		if (!bn || !on)
			g_err(g, "node '%s': result %zu is not a tensor", name, i + 1);
		if (!slotof(&sub, bn)->key)
			g_err(g, "malformed archive: node '%s''s body returns '%s', which it never "
			         "defines", name, bn);
		g_define(g, on, g_value(&sub, bn, name), name);
	}
}

/* Converts one node of g: an aten op, or an inlined higher-order op. */
static void
node(Graph *g, json_t *nd)
{
	size_t first;
	json_t *body = hopbody(nd, &first);
	if (body)
		hop(g, nd, body, first);
	else
		aten_node(g, nd);
}

/* Whether node nd is arithmetic on sizes (_operator.floordiv...) whose
 * results are all SymInts or SymBools: import reads those at their
 * example values (g_symget), so the node computes nothing. */
int
symnode(json_t *nd)
{
	const char *t = json_string_value(json_object_get(nd, "target"));
	json_t *outs = json_object_get(nd, "outputs");
	if (!t || strncmp(t, "_operator.", 10) != 0 || json_array_size(outs) == 0)
		return 0;
	for (size_t k = 0; k < json_array_size(outs); k++) {
		json_t *o = json_array_get(outs, k);
		if (!json_object_get(o, "as_sym_int") && !json_object_get(o, "as_sym_bool"))
			return 0;
	}
	return 1;
}

/* Fails on the unsupported targets of the graph, all of them in one
 * message: each with its count, and each distinct place in the user's
 * Python it comes from (up to 4 per target) from the nodes' metadata. */
static void
unsupported(Model *m, Arena *a, json_t **nodes, size_t n)
{
	size_t nbad = 0, nnode = 0, k;
	const char **tgt = dp_alloc(a, n + 1, sizeof *tgt);
	char **where = dp_alloc(a, n + 1, sizeof *where);   /* per node: its origin */
	size_t *of = dp_alloc(a, n + 1, sizeof *of);         /* per node: its target, or n */
	int *cnt = dp_alloc(a, n + 1, sizeof *cnt);
	for (size_t i = 0; i < n; i++) {
		json_t *nd = nodes[i];
		const char *t = json_string_value(json_object_get(nd, "target"));
		const char *name = json_string_value(json_object_get(nd, "name"));
		of[i] = n;
		if (!t || !name)
			merr(m, "malformed archive: node %zu has no target or name", i);
		if (strncmp(t, "torch.ops.", 10) == 0)
			t += 10;
		const Aten *at = aten_lookup(t);
		if (!at && symnode(nd))
			continue;
		if (at) {
			json_t *outs = json_object_get(nd, "outputs");
			size_t no = json_array_size(outs);
			if (at->flags & F_LIST) {
				if (no != 1 || !json_is_array(json_object_get(json_array_get(outs, 0), "as_tensors")))
					merr(m, "node '%s' (%s): its result is not a list of tensors", name, t);
			} else if (at->kind >= 0 && at->hook != H_SYM &&
			           (no < 1 || (no > (size_t)dp_op_nout[at->kind] && !(at->flags & F_MULTI)) ||
			            (!tensorname(json_array_get(outs, 0)) && at->hook != H_ITEM)))
				merr(m, "node '%s' (%s): only ops with one tensor result are supported", name, t);
			continue;
		}
		for (k = 0; k < nbad && strcmp(tgt[k], t) != 0; k++)
			;
		if (k == nbad) {
			tgt[nbad] = t;
			cnt[nbad++] = 0;
		}
		cnt[k]++;
		of[i] = k;
		where[i] = dp_alloc(a, 500, 1);
		origin(nd, where[i], 400);
		if (strncmp(t, "higher_order.", 13) == 0)
			strcat(where[i], hopwhy(nd));   /* at most 80 more */
		nnode++;
	}
	if (!nbad)
		return;
	char *text = NULL;
	size_t tlen = 0;
	FILE *msg = open_memstream(&text, &tlen);
	if (!msg)
		merr(m, "out of memory");
	fprintf(msg, "%zu unsupported op%s in %zu node%s (", nbad, nbad == 1 ? "" : "s", nnode,
	           nnode == 1 ? "" : "s");
	for (k = 0; k < nbad; k++)
		fprintf(msg, "%s%s x%d", k ? ", " : "", tgt[k], cnt[k]);
	fputs("), where the model uses them:", msg);
	for (k = 0; k < nbad; k++) {
		int shown = 0, more = 0;
		for (size_t i = 0; i < n; i++) {
			if (of[i] != k)
				continue;
			int seen = 0;
			for (size_t j = 0; j < i && !seen; j++)
				seen = of[j] == k && strcmp(where[j], where[i]) == 0;
			if (seen)
				continue;
			if (shown == 4) {
				more++;
				continue;
			}
			int here = 0;
			for (size_t j = i; j < n; j++)
				here += of[j] == k && strcmp(where[j], where[i]) == 0;
			fprintf(msg, "\n  %s: %s", where[i], tgt[k]);
			if (here > 1)
				fprintf(msg, " (%d nodes)", here);
			shown++;
		}
		if (more)
			fprintf(msg, "\n  ... %s at %d more place%s (%d nodes in all)", tgt[k], more,
			           more == 1 ? "" : "s", cnt[k]);
	}
	fclose(msg);
	char *all = dp_strdup(a, text ? text : "out of memory");   /* errat does not return */
	free(text);
	errat(m->src, m->at, "%s: %s", m->path, all);
}

/* Binds the model's inputs: user inputs to the call's arguments (checked),
 * the others to their not-yet-emitted consts. */
static void
inputs(Graph *g, const Call *c)
{
	Imp *imp = g->imp;
	Model *m = g->m;
	size_t n = json_array_size(g->specs);
	int nuser = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *spec = json_array_get(g->specs, i);
		const char *kind = json_object_iter_key(json_object_iter(spec));
		json_t *body = json_object_iter_value(json_object_iter(spec));
		if (!kind)
			merr(m, "malformed archive: empty input spec %zu", i);
		if (strcmp(kind, "user_input") == 0) {
			json_t *arg = json_object_get(body, "arg");
			const char *name = tensorname(arg);
			if (!name)
				merr(m, "input %d of the model is not a tensor (%s); DevProc passes tensors only",
				        nuser + 1, json_is_object(arg) ? json_object_iter_key(json_object_iter(arg)) : "?");
			if (nuser < c->narg) {
				Type t, *a = &imp->fn->val[c->arg[nuser]].t;
				if (!g_type(g, name, &t))
					merr(m, "malformed archive: no type for input '%s'", name);
				if (!sameshape(&t, a))
					errat(imp->src, c->argat[nuser], "model '%s' input %d ('%s') must be %s, but '%s' is %s",
					      c->path, nuser + 1, name, typestr(&t), c->argname[nuser], typestr(a));
				g_define(g, name, c->arg[nuser], "an input spec");
			}
			nuser++;
		} else if (strcmp(kind, "parameter") == 0 || strcmp(kind, "buffer") == 0 ||
		           strcmp(kind, "tensor_constant") == 0) {
			const char *name = json_string_value(json_object_get(json_object_get(body, "arg"), "name"));
			if (!name)
				merr(m, "malformed archive: input spec %zu has no arg name", i);
			g_define(g, name, -1 - (int)i, "an input spec");
		} else
			merr(m, "model inputs of kind '%s' are not supported", kind);
	}
	if (nuser != c->narg)
		errat(imp->src, c->at, "model '%s' takes %d input%s, got %d", c->path, nuser,
		      nuser == 1 ? "" : "s", c->narg);
}

/* A buffer_mutation output: the buffer (its input spec's placeholder, a
 * state const) gets the value name through an assign op. */
static void
mutation(Graph *g, json_t *body, const char *name)
{
	const char *fqn = json_string_value(json_object_get(body, "buffer_name"));
	const char *ph = bufferarg(g, fqn);
	if (!ph || !name)
		merr(g->m, "malformed archive: a buffer mutation of '%s' with no buffer input or value",
		        fqn ? fqn : "?");
	if (!slotof(g, name)->key)
		merr(g->m, "the new value of buffer '%s' is '%s', which is never defined", fqn, name);
	int in[2] = { g_value(g, ph, "buffer mutation"), g_value(g, name, "buffer mutation") };
	Fn *fn = g->imp->fn;
	int op = dp_addop(fn, Oassign, in, 2);
	Err err = { 0 };
	if (dp_infer(fn, op, &err))
		merr(g->m, "buffer '%s': %s", fqn, err.msg);
}

/* Inlines the model of call c into imp->fn; puts the value ids of its
 * results in res[0..c->nres-1].  Reports errors and exits. */
int
pt2_call(Imp *imp, const Call *c, int *res, int maxres)
{
	Model *m = load(imp, c);
	m->at = c->pathat;
	json_t *gm = getobj(m, m->prog, "graph_module", "models/model.json");
	json_t *gr = getobj(m, gm, "graph", "graph_module");
	json_t *sig = getobj(m, gm, "signature", "graph_module");
	json_t *nodes = getobj(m, gr, "nodes", "graph");
	Graph g = { .imp = imp, .m = m };
	g.tv = getobj(m, gr, "tensor_values", "graph");
	g.gr = gr;
	g.specs = getobj(m, sig, "input_specs", "signature");
	g.nodes = nodes;
	json_t *outs = g.outs = getobj(m, sig, "output_specs", "signature");

	json_t **flat = NULL;
	size_t nflat = 0, capflat = 0;
	flatten(imp->fn->arena, nodes, &flat, &nflat, &capflat);
	unsupported(m, imp->fn->arena, flat, nflat);
	inputs(&g, c);
	size_t nres = 0;
	for (size_t i = 0; i < json_array_size(outs); i++)
		nres += !json_object_get(json_array_get(outs, i), "buffer_mutation");
	if ((int)nres != maxres)
		errat(imp->src, c->resat, "model '%s' returns %zu value%s, but %d name%s bound", c->path,
		      nres, nres == 1 ? "" : "s", maxres, maxres == 1 ? " is" : "s are");
	/* buffers written in place with no buffer_mutation output (training
	 * IR): their state consts now, an assign of their last value after */
	size_t nspec = json_array_size(g.specs);
	int *inplace = dp_alloc(imp->fn->arena, nspec ? nspec : 1, sizeof *inplace);  /* errors below exit */
	for (size_t i = 0; i < nspec; i++) {
		json_t *b = json_object_get(json_array_get(g.specs, i), "buffer");
		const char *fqn = json_string_value(json_object_get(b, "buffer_name"));
		const char *ph = json_string_value(json_object_get(json_object_get(b, "arg"), "name"));
		inplace[i] = fqn && ph && !mutationout(&g, fqn) && writteninto(&g, ph) ?
		             g_value(&g, ph, "buffer") : -1;
	}
	for (size_t i = 0; i < json_array_size(nodes); i++)
		node(&g, json_array_get(nodes, i));
	for (size_t i = 0; i < nspec; i++) {
		if (inplace[i] < 0)
			continue;
		json_t *b = json_object_get(json_array_get(g.specs, i), "buffer");
		const char *ph = json_string_value(json_object_get(json_object_get(b, "arg"), "name"));
		int in[2] = { inplace[i], g_value(&g, ph, "buffer") };
		Fn *fn = imp->fn;
		int op = dp_addop(fn, Oassign, in, 2);
		Err err = { 0 };
		if (dp_infer(fn, op, &err))
			merr(m, "buffer '%s': %s", ph, err.msg);
	}
	for (size_t i = 0, k = 0; i < json_array_size(outs); i++) {
		json_t *spec = json_array_get(outs, i);
		const char *kind = json_object_iter_key(json_object_iter(spec));
		json_t *body = json_object_iter_value(json_object_iter(spec));
		const char *name = tensorname(json_object_get(body, "arg"));
		if (kind && strcmp(kind, "buffer_mutation") == 0) {   /* arg: a TensorArgument */
			mutation(&g, body, json_string_value(json_object_get(json_object_get(body, "arg"),
			                                                     "name")));
			continue;
		}
		if (!kind || strcmp(kind, "user_output") != 0)
			merr(m, "model outputs of kind '%s' are not supported (a model that mutates "
			        "its buffers, or training output?)", kind ? kind : "?");
		if (!name)
			merr(m, "output %zu of the model is not a tensor", i + 1);
		if (!slotof(&g, name)->key)
			merr(m, "output %zu of the model is '%s', which is never defined", i + 1, name);
		res[k++] = g_value(&g, name, "output");
	}
	return (int)nres;
}

/* Records each archive read, with its content hash, as a dependency. */
void
pt2_deps(Imp *imp)
{
	for (int i = 0; i < imp->nmodel; i++)
		dp_adddep(imp->fn, imp->model[i]->path, imp->model[i]->hash);
	for (int i = 0; i < imp->ntext; i++)
		dp_adddep(imp->fn, imp->text[i].path, imp->text[i].hash);
}

static void
add(char **buf, size_t *len, size_t *cap, const char *s, int esc)
{
	for (; *s; s++) {
		if (*len + 3 > *cap)
			*buf = xrealloc(*buf, *cap *= 2, 1);
		if (esc && (*s == ' ' || *s == '#' || *s == '\\'))
			(*buf)[(*len)++] = '\\';
		else if (esc && *s == '$')
			(*buf)[(*len)++] = '$';
		(*buf)[(*len)++] = *s;
	}
	(*buf)[*len] = 0;
}

/* The Ninja depfile text "target: archive...\n" (malloc'd), with the
 * archives' paths as opened (relative to the working folder). */
char *
pt2_depfile(Imp *imp, const char *target)
{
	size_t len = 0, cap = 256;
	char *buf = xrealloc(NULL, cap, 1);
	add(&buf, &len, &cap, target, 1);
	add(&buf, &len, &cap, ":", 0);
	for (int i = 0; i < imp->nmodel; i++) {
		add(&buf, &len, &cap, " ", 0);
		add(&buf, &len, &cap, imp->model[i]->file, 1);
	}
	for (int i = 0; i < imp->ntext; i++) {
		add(&buf, &len, &cap, " ", 0);
		add(&buf, &len, &cap, imp->text[i].file, 1);
	}
	add(&buf, &len, &cap, "\n", 0);
	return buf;
}

/* Closes the archives. */
void
pt2_free(Imp *imp)
{
	for (int i = 0; i < imp->nmodel; i++) {
		Model *m = imp->model[i];
		if (m->zf)
			zip_fclose(m->zf);
		free(m->buf);
		free(m->data);
		zip_discard(m->zip);
		if (m->map)
			munmap(m->map, m->size);
		json_decref(m->prog);
		json_decref(m->wcfg);
		json_decref(m->ccfg);
		free(m->file);
		free(m->root);
		free(m);
	}
	free(imp->model);
	free(imp->konst);
}
