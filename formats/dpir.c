/* dpir.c: DPIR, the binary IR file: msgpack encoding and decoding (spec:
 * formats/dpir.md). */
#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

#include "dpir.h"
#include "dpint.h"

static void
pstr(msgpack_packer *pk, const char *s)
{
	size_t n = strlen(s);
	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, s, n);
}

static void
pattr(msgpack_packer *pk, const Attr *a)
{
	switch (a->kind) {
	case A_INT: msgpack_pack_int64(pk, a->i); break;
	case A_FLOAT: msgpack_pack_double(pk, a->f); break;
	case A_STR: pstr(pk, a->s); break;
	case A_INTS:
		msgpack_pack_array(pk, a->n);
		for (int i = 0; i < a->n; i++)
			msgpack_pack_int64(pk, a->ints[i]);
		break;
	case A_FLOATS:
		msgpack_pack_array(pk, a->n);
		for (int i = 0; i < a->n; i++)
			msgpack_pack_double(pk, a->floats[i]);
		break;
	default: dp_die("bad attribute kind %d", a->kind);
	}
}

int
dp_encode(const Fn *fn, char **buf, size_t *len, Err *err)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);

	msgpack_pack_array(&pk, 5);
	pstr(&pk, "DPIR");
	msgpack_pack_int(&pk, DP_MAJOR);
	msgpack_pack_int(&pk, DP_MINOR);

	msgpack_pack_map(&pk, 3);
	pstr(&pk, "stage");
	pstr(&pk, fn->stage);
	pstr(&pk, "deps");
	msgpack_pack_array(&pk, fn->ndep);
	for (int i = 0; i < fn->ndep; i++) {
		msgpack_pack_array(&pk, 2);
		pstr(&pk, fn->dep[i].path);
		pstr(&pk, fn->dep[i].hash);
	}
	pstr(&pk, "weights");
	if (fn->weights) {
		msgpack_pack_array(&pk, 3);
		pstr(&pk, fn->weights);
		pstr(&pk, fn->whash ? fn->whash : "");
		msgpack_pack_int64(&pk, fn->wsize);
	} else
		msgpack_pack_nil(&pk);

	msgpack_pack_map(&pk, 5);
	pstr(&pk, "name");
	pstr(&pk, fn->name);
	pstr(&pk, "vals");
	msgpack_pack_array(&pk, fn->nval);
	for (int v = 0; v < fn->nval; v++) {
		const Type *t = &fn->val[v].t;
		msgpack_pack_array(&pk, t->bnd ? 4 : 3);
		pstr(&pk, dp_dtype_name[t->dtype]);
		msgpack_pack_array(&pk, t->rank);
		for (int i = 0; i < t->rank; i++)
			msgpack_pack_int64(&pk, t->dim[i]);
		pstr(&pk, dp_dev_name[t->dev]);
		if (t->bnd)   /* the leading size is a bound (minor 1) */
			msgpack_pack_int(&pk, 1);
	}
	pstr(&pk, "ops");
	msgpack_pack_array(&pk, fn->nop);
	for (int i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		msgpack_pack_array(&pk, 7);
		pstr(&pk, dp_op_name[op->kind]);
		msgpack_pack_array(&pk, op->nin);
		for (int k = 0; k < op->nin; k++)
			msgpack_pack_int(&pk, op->in[k]);
		msgpack_pack_array(&pk, op->nout);
		for (int k = 0; k < op->nout; k++)
			msgpack_pack_int(&pk, op->out[k]);
		msgpack_pack_map(&pk, op->nattr);
		for (int k = 0; k < op->nattr; k++) {
			pstr(&pk, op->attr[k].key);
			pattr(&pk, &op->attr[k]);
		}
		pstr(&pk, dp_dev_name[op->dev]);
		msgpack_pack_int(&pk, op->part);
		if (op->rule)
			pstr(&pk, op->rule);
		else
			msgpack_pack_nil(&pk);
	}
	pstr(&pk, "outputs");
	msgpack_pack_array(&pk, fn->nout);
	for (int k = 0; k < fn->nout; k++) {
		msgpack_pack_array(&pk, 2);
		pstr(&pk, fn->out[k].name);
		msgpack_pack_int(&pk, fn->out[k].val);
	}
	pstr(&pk, "parts");
	msgpack_pack_array(&pk, fn->npart);
	for (int k = 0; k < fn->npart; k++)
		pstr(&pk, dp_dev_name[fn->part[k].dev]);

	*buf = sb.data;
	*len = sb.size;
	(void)err;
	return 0;
}

/* ---- decoding: every access is type-checked; errors name the path ---- */

typedef struct Dec {
	Fn *fn;
	Err *err;
	char where[128];
} Dec;

static int
fail(Dec *d, const char *what)
{
	dp_seterr(d->err, "malformed DPIR: %s: %s", d->where, what);
	return -1;
}

static int
isstr(const msgpack_object *o)
{
	return o->type == MSGPACK_OBJECT_STR;
}

static int
isint(const msgpack_object *o)
{
	return o->type == MSGPACK_OBJECT_POSITIVE_INTEGER || o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER;
}

static int64_t
ival(const msgpack_object *o)
{
	return o->type == MSGPACK_OBJECT_POSITIVE_INTEGER ? (int64_t)o->via.u64 : o->via.i64;
}

static const msgpack_object_array *
arr(Dec *d, const msgpack_object *o, int n)
{
	if (o->type != MSGPACK_OBJECT_ARRAY) {
		fail(d, "expected an array");
		return NULL;
	}
	if (n >= 0 && o->via.array.size != (uint32_t)n) {
		fail(d, "array has the wrong length");
		return NULL;
	}
	return &o->via.array;
}

static const char *
str(Dec *d, const msgpack_object *o)
{
	if (!isstr(o)) {
		fail(d, "expected a string");
		return NULL;
	}
	if (memchr(o->via.str.ptr, 0, o->via.str.size)) {
		fail(d, "string holds a NUL byte");
		return NULL;
	}
	return dp_strndup(d->fn->arena, o->via.str.ptr, o->via.str.size);
}

/* Looks up key in map o; NULL (and an error) when absent. */
static const msgpack_object *
get(Dec *d, const msgpack_object *o, const char *key)
{
	if (o->type != MSGPACK_OBJECT_MAP) {
		fail(d, "expected a map");
		return NULL;
	}
	size_t n = strlen(key);
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key;
		if (isstr(k) && k->via.str.size == n && memcmp(k->via.str.ptr, key, n) == 0)
			return &o->via.map.ptr[i].val;
	}
	char m[80];
	snprintf(m, sizeof m, "no '%s' key", key);
	fail(d, m);
	return NULL;
}

static int
intin(Dec *d, const msgpack_object *o, int64_t lo, int64_t hi, int64_t *v)
{
	if (!isint(o))
		return fail(d, "expected an integer");
	*v = ival(o);
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 > INT64_MAX)
		return fail(d, "integer out of range");
	if (*v < lo || *v > hi)
		return fail(d, "integer out of range");
	return 0;
}

/* A value id of fn: what (e.g. "operand 0") refers to it. */
static int
valid(Dec *d, const msgpack_object *o, const char *what, int64_t *v)
{
	char m[160];
	if (!isint(o) || (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 > INT64_MAX))
		return intin(d, o, 0, 0, v);
	*v = ival(o);
	if (*v < 0 || *v >= d->fn->nval) {
		snprintf(m, sizeof m, "%s refers to value %lld, but there are %d values", what,
		         (long long)*v, d->fn->nval);
		return fail(d, m);
	}
	return 0;
}

static int
dattr(Dec *d, int opi, const char *key, const msgpack_object *o)
{
	Fn *fn = d->fn;
	Spec s;
	int want = -1;
	for (int i = 0; dp_spec(fn->op[opi].kind, i, &s); i++)
		if (strcmp(s.key, key) == 0)
			want = s.kind;
	if (isint(o)) {
		int64_t v;
		if (intin(d, o, INT64_MIN, INT64_MAX, &v))
			return -1;
		dp_seti(fn, opi, key, v);
	} else if (o->type == MSGPACK_OBJECT_FLOAT64 || o->type == MSGPACK_OBJECT_FLOAT32)
		dp_setf(fn, opi, key, o->via.f64);
	else if (isstr(o)) {
		const char *v = str(d, o);
		if (!v)
			return -1;
		dp_sets(fn, opi, key, v);
	} else if (o->type == MSGPACK_OBJECT_ARRAY) {
		uint32_t n = o->via.array.size;
		if (n > (1u << 24))
			return fail(d, "list too long");
		int flt = want == A_FLOATS;
		for (uint32_t i = 0; i < n; i++) {
			const msgpack_object *e = &o->via.array.ptr[i];
			if (e->type == MSGPACK_OBJECT_FLOAT64 || e->type == MSGPACK_OBJECT_FLOAT32)
				flt = 1;
			else if (!isint(e))
				return fail(d, "list of neither numbers nor integers");
		}
		if (flt) {
			double *v = dp_alloc(fn->arena, n ? n : 1, sizeof *v);
			for (uint32_t i = 0; i < n; i++) {
				const msgpack_object *e = &o->via.array.ptr[i];
				v[i] = isint(e) ? (double)ival(e) : e->via.f64;
			}
			dp_setfloats(fn, opi, key, v, (int)n);
		} else {
			int64_t *v = dp_alloc(fn->arena, n ? n : 1, sizeof *v);
			for (uint32_t i = 0; i < n; i++)
				if (intin(d, &o->via.array.ptr[i], INT64_MIN, INT64_MAX, &v[i]))
					return -1;
			dp_setints(fn, opi, key, v, (int)n);
		}
	} else
		return fail(d, "attribute of an unsupported kind");
	return 0;
}

static int
dheader(Dec *d, const msgpack_object *h)
{
	Fn *fn = d->fn;
	const msgpack_object *o;
	const msgpack_object_array *a;
	strcpy(d->where, "header");
	if (!(o = get(d, h, "stage")) || !(fn->stage = str(d, o)))
		return -1;
	strcpy(d->where, "header");
	if (!(o = get(d, h, "deps")) || !(a = arr(d, o, -1)))
		return -1;
	for (uint32_t i = 0; i < a->size; i++) {
		snprintf(d->where, sizeof d->where, "header.deps[%u]", i);
		const msgpack_object_array *e = arr(d, &a->ptr[i], 2);
		const char *p, *hs;
		if (!e || !(p = str(d, &e->ptr[0])) || !(hs = str(d, &e->ptr[1])))
			return -1;
		dp_adddep(fn, p, hs);
	}
	strcpy(d->where, "header");
	if (!(o = get(d, h, "weights")))
		return -1;
	strcpy(d->where, "header.weights");
	if (o->type != MSGPACK_OBJECT_NIL) {
		if (!(a = arr(d, o, 3)) || !(fn->weights = str(d, &a->ptr[0])) ||
		    !(fn->whash = str(d, &a->ptr[1])) || intin(d, &a->ptr[2], 0, INT64_MAX, &fn->wsize))
			return -1;
	}
	return 0;
}

static int
dvals(Dec *d, const msgpack_object *o)
{
	Fn *fn = d->fn;
	const msgpack_object_array *a = arr(d, o, -1);
	if (!a)
		return -1;
	if (a->size > (1u << 26))
		return fail(d, "too many values");
	for (uint32_t v = 0; v < a->size; v++) {
		snprintf(d->where, sizeof d->where, "fn.vals[%u]", v);
		const msgpack_object_array *e = arr(d, &a->ptr[v], -1);
		int64_t bnd = 0;
		if (e && e->size != 3 && e->size != 4) {
			fail(d, "array has the wrong length");
			return -1;
		}
		const msgpack_object_array *dims;
		const char *dt, *dev;
		if (!e || !(dt = str(d, &e->ptr[0])) || !(dims = arr(d, &e->ptr[1], -1)) ||
		    !(dev = str(d, &e->ptr[2])))
			return -1;
		Type t = { 0 };
		int k = dp_dtype_lookup(dt), dv = dp_dev_lookup(dev);
		if (k < 0)
			return fail(d, "unknown dtype");
		if (dv < 0)
			return fail(d, "unknown device");
		if (dims->size > DP_MAXRANK)
			return fail(d, "rank exceeds 8");
		t.dtype = (uint8_t)k;
		t.dev = (uint8_t)dv;
		t.rank = (uint8_t)dims->size;
		for (uint32_t i = 0; i < dims->size; i++)
			if (intin(d, &dims->ptr[i], DP_DYN, INT64_MAX, &t.dim[i]))
				return -1;
		if (e->size == 4 && intin(d, &e->ptr[3], 1, 1, &bnd))
			return -1;
		if (bnd && (t.rank < 1 || t.dim[0] < 1))
			return fail(d, "a bounded size needs a leading dim of 1 or more");
		t.bnd = (uint8_t)bnd;
		dp_addval(fn, t, -1);
	}
	return 0;
}

static int
dops(Dec *d, const msgpack_object *o)
{
	Fn *fn = d->fn;
	const msgpack_object_array *a = arr(d, o, -1);
	if (!a)
		return -1;
	for (uint32_t i = 0; i < a->size; i++) {
		snprintf(d->where, sizeof d->where, "fn.ops[%u]", i);
		const msgpack_object_array *e = arr(d, &a->ptr[i], 7), *ins, *outs;
		const char *name, *dev;
		if (!e || !(name = str(d, &e->ptr[0])) || !(ins = arr(d, &e->ptr[1], -1)) ||
		    !(outs = arr(d, &e->ptr[2], -1)) || !(dev = str(d, &e->ptr[4])))
			return -1;
		int kind = dp_op_lookup(name);
		if (kind < 0) {
			char m[200];
			snprintf(m, sizeof m, "unknown op '%.100s'", name);
			return fail(d, m);
		}
		if (ins->size > 4096 || outs->size > 4096)
			return fail(d, "too many operands");
		int in[4096];
		for (uint32_t k = 0; k < ins->size; k++) {
			int64_t v;
			char what[32];
			snprintf(what, sizeof what, "operand %u", k);
			if (valid(d, &ins->ptr[k], what, &v))
				return -1;
			in[k] = (int)v;
		}
		int opi = dp_addop(fn, kind, in, (int)ins->size);
		Op *op = &fn->op[opi];
		op->out = dp_alloc(fn->arena, outs->size ? outs->size : 1, sizeof *op->out);
		op->nout = (int)outs->size;
		for (uint32_t k = 0; k < outs->size; k++) {
			int64_t v;
			char what[32];
			snprintf(what, sizeof what, "result %u", k);
			if (valid(d, &outs->ptr[k], what, &v))
				return -1;
			op->out[k] = (int)v;
			if (fn->val[v].def != -1) {
				char m[120];
				snprintf(m, sizeof m, "value %lld is defined twice (by ops %d and %d)",
				         (long long)v, fn->val[v].def, opi);
				return fail(d, m);
			}
			fn->val[v].def = opi;
		}
		const msgpack_object *m = &e->ptr[3];
		if (m->type != MSGPACK_OBJECT_MAP)
			return fail(d, "attributes are not a map");
		for (uint32_t k = 0; k < m->via.map.size; k++) {
			const char *key = str(d, &m->via.map.ptr[k].key);
			if (!key)
				return -1;
			if (k && strcmp(fn->op[opi].attr[fn->op[opi].nattr - 1].key, key) >= 0)
				return fail(d, "attribute keys are not sorted or repeat");
			if (dattr(d, opi, key, &m->via.map.ptr[k].val))
				return -1;
		}
		op = &fn->op[opi];
		int dv = dp_dev_lookup(dev);
		if (dv < 0)
			return fail(d, "unknown device");
		op->dev = (uint8_t)dv;
		int64_t part;
		if (intin(d, &e->ptr[5], -1, 1 << 20, &part))
			return -1;
		op->part = (int)part;
		if (e->ptr[6].type != MSGPACK_OBJECT_NIL && !(op->rule = str(d, &e->ptr[6])))
			return -1;
	}
	return 0;
}

static int
dfn(Dec *d, const msgpack_object *f)
{
	Fn *fn = d->fn;
	const msgpack_object *o;
	const msgpack_object_array *a;
	strcpy(d->where, "fn");
	if (!(o = get(d, f, "name")) || !(fn->name = str(d, o)))
		return -1;
	strcpy(d->where, "fn");
	if (!(o = get(d, f, "vals")) || dvals(d, o))
		return -1;
	strcpy(d->where, "fn");
	if (!(o = get(d, f, "ops")) || dops(d, o))
		return -1;
	strcpy(d->where, "fn");
	if (!(o = get(d, f, "outputs")) || !(a = arr(d, o, -1)))
		return -1;
	for (uint32_t k = 0; k < a->size; k++) {
		snprintf(d->where, sizeof d->where, "fn.outputs[%u]", k);
		const msgpack_object_array *e = arr(d, &a->ptr[k], 2);
		const char *name;
		int64_t v;
		if (!e || !(name = str(d, &e->ptr[0])))
			return -1;
		char what[160];
		snprintf(what, sizeof what, "output '%.100s'", name);
		if (valid(d, &e->ptr[1], what, &v))
			return -1;
		dp_addport(fn, name, (int)v);
	}
	strcpy(d->where, "fn");
	if (!(o = get(d, f, "parts")) || !(a = arr(d, o, -1)))
		return -1;
	for (uint32_t k = 0; k < a->size; k++) {
		snprintf(d->where, sizeof d->where, "fn.parts[%u]", k);
		const char *dev = str(d, &a->ptr[k]);
		if (!dev)
			return -1;
		int dv = dp_dev_lookup(dev);
		if (dv < 0)
			return fail(d, "unknown device");
		dp_addpart(fn, dv);
	}
	return 0;
}

/* Big-endian unsigned of n bytes at p. */
static uint64_t
be(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* Walks the first msgpack value of buf[0..len) without building it, so that
 * no declared size is believed before the bytes are there: msgpack-c
 * allocates a container's elements as declared (an array32 of 2^32
 * elements: 96 GiB) before it looks for them.  Every pending element needs
 * at least one byte, so the elements declared may never exceed the bytes
 * left.  0 when it is whole, 1 when the bytes end first (or would have to,
 * for a declared size), -1 (err set) on a byte msgpack never uses. */
static int
scan(const unsigned char *p, size_t len, Err *err)
{
	size_t off = 0, pending = 1;
	while (pending) {
		if (off >= len)
			return 1;
		size_t at = off;
		unsigned c = p[off++];
		uint64_t skip = 0, elems = 0;
		int hdr = 0;          /* bytes of length field */
		if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3)
			;
		else if (c >= 0x80 && c <= 0x8f)
			elems = 2 * (uint64_t)(c & 15);
		else if (c >= 0x90 && c <= 0x9f)
			elems = c & 15;
		else if (c >= 0xa0 && c <= 0xbf)
			skip = c & 31;
		else if (c == 0xc4 || c == 0xd9)
			hdr = 1;
		else if (c == 0xc5 || c == 0xda)
			hdr = 2;
		else if (c == 0xc6 || c == 0xdb)
			hdr = 4;
		else if (c == 0xc7 || c == 0xc8 || c == 0xc9) {   /* ext: length, type, data */
			hdr = c == 0xc7 ? 1 : c == 0xc8 ? 2 : 4;
			skip = 1;
		} else if (c == 0xca || c == 0xce || c == 0xd2)
			skip = 4;
		else if (c == 0xcb || c == 0xcf || c == 0xd3)
			skip = 8;
		else if (c == 0xcc || c == 0xd0)
			skip = 1;
		else if (c == 0xcd || c == 0xd1)
			skip = 2;
		else if (c >= 0xd4 && c <= 0xd8)               /* fixext: type, 1..16 bytes */
			skip = 1 + ((uint64_t)1 << (c - 0xd4));
		else if (c == 0xdc || c == 0xde || c == 0xdd || c == 0xdf) {
			int n = c == 0xdc || c == 0xde ? 2 : 4;
			if (len - off < (size_t)n)
				return 1;
			elems = be(p + off, n) * (c >= 0xde ? 2 : 1);
			off += (size_t)n;
		} else {
			dp_seterr(err, "malformed DPIR: not valid msgpack (byte 0x%02x at offset %zu)", c, at);
			return -1;
		}
		if (hdr) {
			if (len - off < (size_t)hdr)
				return 1;
			skip += be(p + off, hdr);
			off += (size_t)hdr;
		}
		if (skip > len - off)
			return 1;
		off += (size_t)skip;
		pending--;
		if (elems > len - off || pending + elems > len - off)
			return 1;   /* a truncated file, or a size no file of len bytes holds */
		pending += (size_t)elems;
	}
	return 0;
}

int
dp_decode(const char *buf, size_t len, Fn **out, Err *err)
{
	static const char magic[] = "\x95\xa4" "DPIR";
	if (len < 6 || memcmp(buf, magic, 6) != 0) {
		dp_seterr(err, "not a DPIR file (bad magic)");
		return -1;
	}
	int sr = scan((const unsigned char *)buf, len, err);
	if (sr < 0)
		return -1;
	if (sr > 0) {
		dp_seterr(err, "truncated DPIR (file ends after %zu bytes)", len);
		return -1;
	}
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	size_t off = 0;
	int r = msgpack_unpack_next(&u, buf, len, &off);
	if (r == MSGPACK_UNPACK_CONTINUE) {
		dp_seterr(err, "truncated DPIR (file ends after %zu bytes)", len);
		msgpack_unpacked_destroy(&u);
		return -1;
	}
	if (r != MSGPACK_UNPACK_SUCCESS) {
		dp_seterr(err, "malformed DPIR: not valid msgpack");
		msgpack_unpacked_destroy(&u);
		return -1;
	}
	int rc = -1;
	Fn *fn = dp_new("", "");
	Dec d = { fn, err, "top" };
	const msgpack_object_array *top = arr(&d, &u.data, 5);
	if (!top)
		goto out;
	int64_t major, minor;
	strcpy(d.where, "version");
	if (intin(&d, &top->ptr[1], 0, 1 << 30, &major) || intin(&d, &top->ptr[2], 0, 1 << 30, &minor))
		goto out;
	if (major != DP_MAJOR) {
		dp_seterr(err, "DPIR version %lld.%lld is not readable by this tool (reads %d.x)",
		          (long long)major, (long long)minor, DP_MAJOR);
		goto out;
	}
	if (off != len) {
		dp_seterr(err, "malformed DPIR: %zu stray byte%s after the IR", len - off, len - off == 1 ? "" : "s");
		goto out;
	}
	if (dheader(&d, &top->ptr[3]) || dfn(&d, &top->ptr[4]))
		goto out;
	rc = 0;
out:
	msgpack_unpacked_destroy(&u);
	if (rc) {
		dp_free(fn);
		return -1;
	}
	*out = fn;
	return 0;
}

int
dp_read(const char *path, Fn **fn, Err *err)
{
	char *buf;
	size_t len;
	if (dp_slurp(path, &buf, &len, err))
		return -1;
	int rc = dp_decode(buf, len, fn, err);
	free(buf);
	if (rc)
		return -1;
	if (dp_verify(*fn, err)) {
		dp_free(*fn);
		*fn = NULL;
		return -1;
	}
	return 0;
}

int
dp_write(const char *path, const Fn *fn, Err *err)
{
	char *buf;
	size_t len;
	if (dp_verify(fn, err) || dp_encode(fn, &buf, &len, err))
		return -1;
	int rc = dp_write_file(path, buf, len, err);
	free(buf);
	return rc;
}

void
dp_canon(Fn *fn)
{
	int *map = dp_alloc(fn->arena, fn->nval ? fn->nval : 1, sizeof *map);
	for (int v = 0; v < fn->nval; v++)
		map[v] = -1;
	int n = 0;
	for (int i = 0; i < fn->nop; i++)
		for (int k = 0; k < fn->op[i].nout; k++)
			if (fn->op[i].out[k] >= 0 && fn->op[i].out[k] < fn->nval && map[fn->op[i].out[k]] < 0)
				map[fn->op[i].out[k]] = n++;
	if (n != fn->nval)
		return;   /* values without a definition: leave it for the verifier */
	Val *nv = dp_alloc(fn->arena, fn->nval, sizeof *nv);
	for (int v = 0; v < fn->nval; v++)
		nv[map[v]] = fn->val[v];
	fn->val = nv;
	fn->capval = fn->nval;
	for (int i = 0; i < fn->nop; i++) {
		Op *op = &fn->op[i];
		for (int k = 0; k < op->nin; k++)
			if (op->in[k] >= 0 && op->in[k] < fn->nval)
				op->in[k] = map[op->in[k]];
		for (int k = 0; k < op->nout; k++)
			op->out[k] = map[op->out[k]];
	}
	for (int k = 0; k < fn->nout; k++)
		if (fn->out[k].val >= 0 && fn->out[k].val < fn->nval)
			fn->out[k].val = map[fn->out[k].val];
}
