/* npy.c: .npy reading (format 1.0/2.0/3.0) and writing (1.0), checked and atomic. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "dprtint.h"
#include "dpsweep.h"

enum {
	MAXHDR = 1 << 20	/* header bytes we accept (numpy caps at 10000) */
};

/* A parsed header. */
typedef struct Hdr {
	int dtype;
	int swap;		/* data is big-endian: swap after reading */
	int rank;
	int64_t dim[DPRT_MAXRANK];
	size_t nbytes;		/* data bytes */
} Hdr;

/* descr text for each dtype as written; bf16 has no numpy dtype: it is
 * written as 2-byte void, which ml_dtypes' bfloat16 also saves as. */
static const char *const wdescr[DPRT_NDTYPE] = {
	"|u1", "|i1", "<i2", "<i4", "<i8", "<f2", "<f4", "<f8", "|b1", "<V2"
};

/* The dtype of a descr string ("<f4", "|u1", ">i8", "=f2"...), -1 if none.
 * Sets *swap for big-endian multi-byte types. */
static int
descr_dtype(const char *d, int *swap)
{
	static const struct { const char *code; int dtype; } tab[] = {
		{ "u1", DPRT_U8 }, { "i1", DPRT_I8 }, { "i2", DPRT_I16 },
		{ "i4", DPRT_I32 }, { "i8", DPRT_I64 }, { "f2", DPRT_F16 },
		{ "f4", DPRT_F32 }, { "f8", DPRT_F64 }, { "b1", DPRT_BOOL },
		{ "V2", DPRT_BF16 },
	};
	size_t i;

	if (d[0] != '<' && d[0] != '>' && d[0] != '|' && d[0] != '=')
		return -1;
	for (i = 0; i < sizeof tab / sizeof *tab; i++)
		if (strcmp(d + 1, tab[i].code) == 0) {
			*swap = d[0] == '>' && dprt_dtype_size[tab[i].dtype] > 1 &&
			        tab[i].dtype != DPRT_BF16;
			return tab[i].dtype;
		}
	return -1;
}

/* ---- the header dict: {'descr': '<f4', 'fortran_order': False, 'shape': (1, 10), } ---- */

typedef struct Lex {
	const char *s, *end;
	const char *path;
	char *err;
	size_t errn;
} Lex;

static void
skipws(Lex *l)
{
	while (l->s < l->end && (*l->s == ' ' || *l->s == '\t' || *l->s == '\n' ||
	                         *l->s == '\r'))
		l->s++;
}

static int
expect(Lex *l, char c, const char *what)
{
	skipws(l);
	if (l->s >= l->end || *l->s != c)
		return dprt_errf(l->err, l->errn, "%s: bad header: expected %s",
		                 l->path, what);
	l->s++;
	return 0;
}

/* A quoted string into buf (quotes ' or "); no escapes needed in npy. */
static int
string(Lex *l, char *buf, size_t n, const char *what)
{
	char q;
	size_t len;

	skipws(l);
	if (l->s >= l->end || (*l->s != '\'' && *l->s != '"'))
		return dprt_errf(l->err, l->errn, "%s: bad header: expected %s",
		                 l->path, what);
	q = *l->s++;
	for (len = 0; l->s < l->end && *l->s != q; l->s++) {
		if (len + 1 >= n)
			return dprt_errf(l->err, l->errn, "%s: bad header: %s too long",
			                 l->path, what);
		buf[len++] = *l->s;
	}
	if (l->s >= l->end)
		return dprt_errf(l->err, l->errn, "%s: bad header: unterminated string",
		                 l->path);
	l->s++;
	buf[len] = 0;
	return 0;
}

static int
word(Lex *l, const char *w)
{
	size_t n = strlen(w);

	skipws(l);
	if ((size_t)(l->end - l->s) >= n && memcmp(l->s, w, n) == 0) {
		l->s += n;
		return 1;
	}
	return 0;
}

/* The shape tuple: (), (n,), (a, b), with Python 2's "L" suffix allowed. */
static int
shape(Lex *l, Hdr *h)
{
	int64_t v;
	int digits;

	if (expect(l, '(', "'(' to start the shape") < 0)
		return -1;
	h->rank = 0;
	for (;;) {
		skipws(l);
		if (l->s < l->end && *l->s == ')') {
			l->s++;
			return 0;
		}
		v = 0;
		for (digits = 0; l->s < l->end && *l->s >= '0' && *l->s <= '9'; l->s++, digits++) {
			if (v > (INT64_MAX - 9) / 10)
				return dprt_errf(l->err, l->errn,
				                 "%s: bad header: dimension too large", l->path);
			v = v * 10 + (*l->s - '0');
		}
		if (digits == 0)
			return dprt_errf(l->err, l->errn,
			                 "%s: bad header: expected a dimension in the shape",
			                 l->path);
		if (l->s < l->end && *l->s == 'L')
			l->s++;
		if (h->rank == DPRT_MAXRANK)
			return dprt_errf(l->err, l->errn,
			                 "%s: rank exceeds the maximum of %d", l->path,
			                 DPRT_MAXRANK);
		h->dim[h->rank++] = v;
		skipws(l);
		if (l->s < l->end && *l->s == ',') {
			l->s++;
			continue;
		}
		if (l->s < l->end && *l->s == ')') {
			l->s++;
			if (h->rank == 1)	/* "(3)" is not a tuple */
				return dprt_errf(l->err, l->errn,
				                 "%s: bad header: shape (n) needs a comma",
				                 l->path);
			return 0;
		}
		return dprt_errf(l->err, l->errn,
		                 "%s: bad header: expected ',' or ')' in the shape", l->path);
	}
}

/* Parses the dict into h; all three keys required, no others allowed. */
static int
parse_dict(Lex *l, Hdr *h)
{
	char key[32], descr[32];
	int seen, bit, fortran;
	int64_t n;
	size_t sz;

	seen = 0;
	fortran = 0;
	if (expect(l, '{', "'{'") < 0)
		return -1;
	for (;;) {
		skipws(l);
		if (l->s < l->end && *l->s == '}')
			break;
		if (string(l, key, sizeof key, "a quoted key") < 0 ||
		    expect(l, ':', "':' after a key") < 0)
			return -1;
		if (strcmp(key, "descr") == 0) {
			bit = 1;
			skipws(l);
			if (l->s < l->end && *l->s == '[')
				return dprt_errf(l->err, l->errn,
				                 "%s: structured dtypes are not supported", l->path);
			if (string(l, descr, sizeof descr, "a quoted descr") < 0)
				return -1;
			h->dtype = descr_dtype(descr, &h->swap);
			if (h->dtype < 0)
				return dprt_errf(l->err, l->errn, "%s: unsupported dtype '%s'",
				                 l->path, descr);
		} else if (strcmp(key, "fortran_order") == 0) {
			bit = 2;
			if (word(l, "True"))
				fortran = 1;
			else if (!word(l, "False"))
				return dprt_errf(l->err, l->errn,
				                 "%s: bad header: fortran_order is not True or False",
				                 l->path);
		} else if (strcmp(key, "shape") == 0) {
			bit = 4;
			if (shape(l, h) < 0)
				return -1;
		} else {
			return dprt_errf(l->err, l->errn, "%s: bad header: unknown key '%s'",
			                 l->path, key);
		}
		if (seen & bit)
			return dprt_errf(l->err, l->errn, "%s: bad header: key '%s' repeated",
			                 l->path, key);
		seen |= bit;
		skipws(l);
		if (l->s < l->end && *l->s == ',')
			l->s++;
		else if (l->s >= l->end || *l->s != '}')
			return dprt_errf(l->err, l->errn,
			                 "%s: bad header: expected ',' or '}' after a value",
			                 l->path);
	}
	if (seen != 7)
		return dprt_errf(l->err, l->errn, "%s: bad header: no '%s' key", l->path,
		                 !(seen & 1) ? "descr" : !(seen & 2) ? "fortran_order" : "shape");
	if (fortran)
		return dprt_errf(l->err, l->errn,
		                 "%s: fortran_order is True; only C order is supported",
		                 l->path);
	sz = (size_t)dprt_dtype_size[h->dtype];
	if (dprt_numel(h->rank, h->dim, &n) < 0 || (uint64_t)n > SIZE_MAX / sz)
		return dprt_errf(l->err, l->errn, "%s: shape is too large", l->path);
	h->nbytes = (size_t)n * sz;
	return 0;
}

/* Reads the magic, version and header of f into h. */
static int
read_header(FILE *f, const char *path, Hdr *h, char *err, size_t errn)
{
	unsigned char pre[12];
	size_t hlen, got;
	char *buf;
	Lex l;
	int rc;

	memset(h, 0, sizeof *h);
	got = fread(pre, 1, 10, f);
	if (got < 10 && ferror(f))
		return dprt_errf(err, errn, "%s: read error: %s", path, strerror(errno));
	if (got < 6 || memcmp(pre, "\x93NUMPY", 6) != 0)
		return dprt_errf(err, errn, "%s: not an .npy file (bad magic)", path);
	if (got < 10)
		return dprt_errf(err, errn, "%s: truncated header", path);
	if (pre[6] == 1) {
		hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
	} else if (pre[6] == 2 || pre[6] == 3) {
		if (fread(pre + 10, 1, 2, f) != 2)
			return dprt_errf(err, errn, "%s: truncated header", path);
		hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 |
		       (size_t)pre[11] << 24;
	} else {
		return dprt_errf(err, errn, "%s: unsupported .npy format version %d.%d",
		                 path, pre[6], pre[7]);
	}
	if (hlen > MAXHDR)
		return dprt_errf(err, errn, "%s: bad header: %zu bytes long", path, hlen);
	buf = malloc(hlen + 1);
	if (!buf)
		return dprt_errf(err, errn, "%s: out of memory", path);
	if (fread(buf, 1, hlen, f) != hlen) {
		free(buf);
		return dprt_errf(err, errn, "%s: truncated header", path);
	}
	buf[hlen] = 0;
	l.s = buf;
	l.end = buf + hlen;
	l.path = path;
	l.err = err;
	l.errn = errn;
	rc = parse_dict(&l, h);
	free(buf);
	return rc;
}

/* Reads h->nbytes of data into dst, byte-swapping big-endian data. */
static int
read_data(FILE *f, const char *path, const Hdr *h, void *dst, char *err, size_t errn)
{
	size_t got, es, i, k;
	unsigned char *p, t;

	got = h->nbytes ? fread(dst, 1, h->nbytes, f) : 0;
	if (got != h->nbytes) {
		if (ferror(f))
			return dprt_errf(err, errn, "%s: read error: %s", path, strerror(errno));
		return dprt_errf(err, errn, "%s: truncated: %zu of %zu data bytes", path,
		                 got, h->nbytes);
	}
	if (h->swap) {
		es = (size_t)dprt_dtype_size[h->dtype];
		p = dst;
		for (i = 0; i < h->nbytes; i += es)
			for (k = 0; k < es / 2; k++) {
				t = p[i + k];
				p[i + k] = p[i + es - 1 - k];
				p[i + es - 1 - k] = t;
			}
	}
	return 0;
}

/* Reads path into dst after checking its dtype and shape against the
 * expected ones; never writes more than the expected bytes into dst. */
int
dprt_npy_read(const char *path, int dtype, int rank, const int64_t *dim,
              void *dst, char *err, size_t errn)
{
	char a[200], b[200];
	FILE *f;
	Hdr h;
	int i, rc, same;

	f = fopen(path, "rb");
	if (!f)
		return dprt_errf(err, errn, "%s: cannot open: %s", path, strerror(errno));
	rc = read_header(f, path, &h, err, errn);
	if (rc == 0 && h.dtype != dtype)
		rc = dprt_errf(err, errn, "%s: dtype is %s, expected %s", path,
		               dprt_dtype_name[h.dtype],
		               dtype >= 0 && dtype < DPRT_NDTYPE ? dprt_dtype_name[dtype] : "?");
	same = h.rank == rank;
	for (i = 0; same && i < rank; i++)
		same = h.dim[i] == dim[i];
	if (rc == 0 && !same)
		rc = dprt_errf(err, errn, "%s: shape is %s, expected %s", path,
		               dprt_shape_str(a, sizeof a, h.rank, h.dim),
		               dprt_shape_str(b, sizeof b, rank, dim));
	if (rc == 0)
		rc = read_data(f, path, &h, dst, err, errn);
	fclose(f);
	return rc;
}

/* Bytes left in a regular file f, or -1 when that cannot be known. */
static long long
avail(FILE *f)
{
	struct stat st;
	long pos;

	pos = ftell(f);
	if (pos < 0 || fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	return (long long)st.st_size - pos;
}

/* The end of a load from f, whose header h is read (rc: the status so
 * far): the data into a malloc'd buffer, f closed, the tensor handed out. */
static int
finish(FILE *f, const char *name, const Hdr *h, int rc, int *dtype, int *rank, int64_t *dim,
       void **data, char *err, size_t errn)
{
	void *p = NULL;

	if (rc == 0 && !(p = malloc(h->nbytes ? h->nbytes : 1)))
		rc = dprt_errf(err, errn, "%s: out of memory (%zu bytes)", name, h->nbytes);
	if (rc == 0)
		rc = read_data(f, name, h, p, err, errn);
	fclose(f);
	if (rc < 0) {
		free(p);
		return rc;
	}
	*dtype = h->dtype;
	*rank = h->rank;
	memcpy(dim, h->dim, sizeof *dim * (size_t)h->rank);
	*data = p;
	return 0;
}

/* Reads path whatever its dtype and shape; *data is malloc'd, and only
 * after the file is known to hold that many bytes. */
int
dprt_npy_load(const char *path, int *dtype, int *rank, int64_t *dim, void **data,
              char *err, size_t errn)
{
	FILE *f;
	Hdr h;
	long long left;
	int rc;

	*data = NULL;
	f = fopen(path, "rb");
	if (!f)
		return dprt_errf(err, errn, "%s: cannot open: %s", path, strerror(errno));
	rc = read_header(f, path, &h, err, errn);
	if (rc == 0 && (left = avail(f)) >= 0 && (unsigned long long)left < h.nbytes)
		rc = dprt_errf(err, errn, "%s: truncated: %lld of %zu data bytes", path,
		               left, h.nbytes);
	return finish(f, path, &h, rc, dtype, rank, dim, data, err, errn);
}

/* Reads an .npy file held in memory (an .npz member): name is what errors
 * call it; otherwise as dprt_npy_load. */
int
dprt_npy_load_mem(const void *buf, size_t len, const char *name, int *dtype, int *rank,
                  int64_t *dim, void **data, char *err, size_t errn)
{
	FILE *f;
	Hdr h;
	long pos;
	int rc;

	*data = NULL;
	if (len == 0)
		return dprt_errf(err, errn, "%s: not an .npy file (empty)", name);
	f = fmemopen((void *)buf, len, "rb");
	if (!f)
		return dprt_errf(err, errn, "%s: cannot read: %s", name, strerror(errno));
	rc = read_header(f, name, &h, err, errn);
	if (rc == 0 && ((pos = ftell(f)) < 0 || len - (size_t)pos < h.nbytes))
		rc = dprt_errf(err, errn, "%s: truncated: %zu of %zu data bytes", name,
		               pos < 0 ? 0 : len - (size_t)pos, h.nbytes);
	return finish(f, name, &h, rc, dtype, rank, dim, data, err, errn);
}

/* The 1.0 header for (dtype, shape): magic, version, length, the dict padded
 * with spaces and a newline to a multiple of 64 bytes.  Returns its length. */
static size_t
make_header(char *buf, size_t n, int dtype, int rank, const int64_t *dim)
{
	char dict[400];
	size_t len, total;
	int i;

	len = (size_t)snprintf(dict, sizeof dict,
	                       "{'descr': '%s', 'fortran_order': False, 'shape': (",
	                       wdescr[dtype]);
	for (i = 0; i < rank; i++)
		len += (size_t)snprintf(dict + len, sizeof dict - len, "%s%lld",
		                        i ? ", " : "", (long long)dim[i]);
	len += (size_t)snprintf(dict + len, sizeof dict - len, "%s), }",
	                        rank == 1 ? "," : "");
	total = (10 + len + 1 + 63) / 64 * 64;
	if (total > n)
		return 0;
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (char)((total - 10) & 0xff);
	buf[9] = (char)((total - 10) >> 8);
	memcpy(buf + 10, dict, len);
	memset(buf + 10 + len, ' ', total - 10 - len - 1);
	buf[total - 1] = '\n';
	return total;
}

/* Writes everything or fails with errno set. */
static int
writeall(int fd, const void *p, size_t n)
{
	const char *c = p;
	ssize_t w;

	while (n > 0) {
		w = write(fd, c, n > (1u << 30) ? (1u << 30) : n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The writer's process id in a PATH.PID.N.tmp name's suffix, 0 in
 * another's. */
static long
tmppid(const char *s)
{
	char *end;
	long pid;

	if (s[0] != '.' || s[1] < '0' || s[1] > '9')
		return 0;
	errno = 0;
	pid = strtol(s + 1, &end, 10);
	if (errno || *end != '.' || end[1] < '0' || end[1] > '9')
		return 0;
	strtol(end + 1, &end, 10);	/* N */
	return strcmp(end, ".tmp") == 0 ? pid : 0;
}

/* Writes the file to a fresh "PATH.PID.N.tmp" (O_EXCL), removed again on
 * any failure, after removing those of killed earlier writers; the caller
 * renames it into place or unlinks it. */
int
dprt_npy_write_tmp(const char *path, char *tmp, size_t tmpn, int dtype, int rank,
                   const int64_t *dim, const void *src, char *err, size_t errn)
{
	char hdr[512];
	size_t hl, nbytes, sz;
	int64_t n;
	int fd, i, e;
	struct stat st;

	if (dtype < 0 || dtype >= DPRT_NDTYPE || rank < 0 || rank > DPRT_MAXRANK)
		return dprt_errf(err, errn, "%s: cannot write dtype %d rank %d", path,
		                 dtype, rank);
	sz = (size_t)dprt_dtype_size[dtype];
	if (dprt_numel(rank, dim, &n) < 0 || (uint64_t)n > SIZE_MAX / sz)
		return dprt_errf(err, errn, "%s: shape is too large", path);
	nbytes = (size_t)n * sz;
	hl = make_header(hdr, sizeof hdr, dtype, rank, dim);
	if (hl == 0)
		return dprt_errf(err, errn, "%s: header too long", path);
	fd = -1;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* a device or pipe (/dev/stdout): write straight to it; tmp[0] = 0
		 * tells the caller there is nothing to rename */
		tmp[0] = 0;
		fd = open(path, O_WRONLY);
		if (fd < 0)
			return dprt_errf(err, errn, "%s: cannot open: %s", path, strerror(errno));
		if (writeall(fd, hdr, hl) < 0 || writeall(fd, src, nbytes) < 0) {
			e = errno;
			close(fd);
			return dprt_errf(err, errn, "%s: write error: %s", path, strerror(e));
		}
		close(fd);
		return 0;
	}
	dp_sweep(path, tmppid);
	for (i = 0; i < 100 && fd < 0; i++) {
		if ((size_t)snprintf(tmp, tmpn, "%s.%ld.%d.tmp", path, (long)getpid(), i) >= tmpn)
			return dprt_errf(err, errn, "%s: path too long", path);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
		if (fd < 0 && errno != EEXIST)
			return dprt_errf(err, errn, "%s: cannot create: %s", path,
			                 strerror(errno));
	}
	if (fd < 0)
		return dprt_errf(err, errn, "%s: cannot create a temporary file", path);
	if (writeall(fd, hdr, hl) < 0 || writeall(fd, src, nbytes) < 0) {
		e = errno;
		close(fd);
		unlink(tmp);
		return dprt_errf(err, errn, "%s: write error: %s", path, strerror(e));
	}
	if (close(fd) < 0) {
		e = errno;
		unlink(tmp);
		return dprt_errf(err, errn, "%s: write error: %s", path, strerror(e));
	}
	return 0;
}

/* Writes a version 1.0 .npy file atomically (temporary file + rename). */
int
dprt_npy_write(const char *path, int dtype, int rank, const int64_t *dim,
               const void *src, char *err, size_t errn)
{
	char tmp[4096];
	int e;

	if (dprt_npy_write_tmp(path, tmp, sizeof tmp, dtype, rank, dim, src, err,
	                       errn) < 0)
		return -1;
	if (tmp[0] && rename(tmp, path) < 0) {
		e = errno;
		unlink(tmp);
		return dprt_errf(err, errn, "%s: cannot rename into place: %s", path,
		                 strerror(e));
	}
	return 0;
}
