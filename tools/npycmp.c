/* npycmp.c: compares two .npy files (or .npz members): floats to a relative
 * tolerance, integers exactly or within an absolute difference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dprt.h"
#include "../driver/npz.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: npycmp [--tol T] [--exact] [--diff D] GOT REF\n"
	        "  GOT and REF: an .npy file, an .npz member as FILE.npz:NAME, or an\n"
	        "  .npz of one member.\n"
	        "  floats (f16, bf16, f32, f64, in any mix): passes when\n"
	        "  max|got-ref| / max|ref| <= T (default 1e-5; absolute when\n"
	        "  max|ref| is 0); --exact asks for equal values.  Integers and\n"
	        "  bool must be equal, or differ by at most D with --diff D\n"
	        "  (the count of differing elements and the largest difference\n"
	        "  are printed).  Exit 0 on a match, 1 on a mismatch, 2 on a\n"
	        "  usage or read error.\n");
}

static int
isfloat(int dt)
{
	return dt == DPRT_F16 || dt == DPRT_BF16 || dt == DPRT_F32 || dt == DPRT_F64;
}

/* One loaded file. */
typedef struct File {
	const char *path;
	int dtype, rank;
	int64_t dim[DPRT_MAXRANK];
	int64_t n;
	void *data;
} File;

/* FILE.npz:NAME, or FILE.npz of one member: takes the member's data into f
 * (f->data stays NULL when path names no .npz); 0, or -1 after a message. */
static int
loadnpz(File *f, const char *path)
{
	char file[4096], err[1024];
	const char *colon = strrchr(path, ':'), *name = NULL;
	Npz z;
	const NpzMember *m;

	snprintf(file, sizeof file, "%s", path);
	if (!npz_isnpz(file) && colon && (size_t)(colon - path) < sizeof file) {
		file[colon - path] = 0;
		name = colon + 1;
		if (!npz_isnpz(file))
			return 0;
	} else if (!npz_isnpz(file))
		return 0;
	if (npz_read(file, &z, err, sizeof err) < 0) {
		fprintf(stderr, "npycmp: %s\n", err);
		return -1;
	}
	m = name ? npz_find(&z, name) : z.n == 1 ? &z.m[0] : NULL;
	if (!m) {
		fprintf(stderr, "npycmp: %s: %s; its members:", file, name ? "no such member" :
		        "name one member as FILE.npz:NAME");
		for (int i = 0; i < z.n; i++)
			fprintf(stderr, " %s", z.m[i].name);
		fputc('\n', stderr);
		npz_free(&z);
		return -1;
	}
	f->dtype = m->dtype;
	f->rank = m->rank;
	memcpy(f->dim, m->dim, sizeof f->dim);
	f->data = m->data;
	((NpzMember *)m)->data = NULL;   /* now f's */
	npz_free(&z);
	return 0;
}

static int
load(File *f, const char *path)
{
	char err[512];
	int i;

	f->path = path;
	if (loadnpz(f, path) < 0)
		return -1;
	if (!f->data && dprt_npy_load(path, &f->dtype, &f->rank, f->dim, &f->data, err,
	                              sizeof err) < 0) {
		fprintf(stderr, "npycmp: %s\n", err);
		return -1;
	}
	f->n = 1;
	for (i = 0; i < f->rank; i++)
		f->n *= f->dim[i];	/* checked by the loader */
	return 0;
}

/* Converts the data to f64 (floats) or i64 (integers, bool) in place of the
 * original; returns -1 when out of memory. */
static int
widen(File *f, int to)
{
	void *w;

	w = malloc(f->n > 0 ? (size_t)f->n * 8 : 1);
	if (!w) {
		fprintf(stderr, "npycmp: %s: out of memory\n", f->path);
		return -1;
	}
	dprt_cast(w, to, f->data, f->dtype, f->n);
	free(f->data);
	f->data = w;
	return 0;
}

/* Float comparison: 0 match, 1 mismatch. */
static int
cmpfloat(const File *g, const File *r, double tol, int exact)
{
	const double *a = g->data, *b = r->data;
	double me, mr, e, rel;
	int64_t i, at, nnan;

	me = mr = 0;
	at = -1;
	nnan = 0;
	for (i = 0; i < g->n; i++) {
		if (isnan(a[i]) || isnan(b[i])) {
			if (isnan(a[i]) && isnan(b[i]))
				continue;
			e = INFINITY;
			nnan++;
		} else if (a[i] == b[i]) {
			e = 0;		/* also equal infinities */
		} else {
			e = fabs(a[i] - b[i]);
		}
		if (e > me || (at < 0 && e > 0)) {
			me = e;
			at = i;
		}
		if (isfinite(b[i]) && fabs(b[i]) > mr)
			mr = fabs(b[i]);
	}
	rel = mr > 0 ? me / mr : me;
	printf("max|err|=%.6g max|ref|=%.6g rel=%.6g\n", me, mr, rel);
	if (exact ? me == 0 : rel <= tol)
		return 0;
	if (nnan)
		fprintf(stderr, "npycmp: %s: NaN where %s has a number (%lld elements)\n",
		        g->path, r->path, (long long)nnan);
	if (exact)
		fprintf(stderr, "npycmp: %s: differs from %s at element %lld (got %.9g, ref %.9g)\n",
		        g->path, r->path, (long long)at, a[at], b[at]);
	else
		fprintf(stderr, "npycmp: %s: %s error %.6g exceeds tolerance %g "
		        "(worst at element %lld: got %.9g, ref %.9g)\n", g->path,
		        mr > 0 ? "relative" : "absolute", rel, tol, (long long)at, a[at], b[at]);
	return 1;
}

/* Integer comparison, within diff: 0 match, 1 mismatch. */
static int
cmpint(const File *g, const File *r, long long diff)
{
	const int64_t *a = g->data, *b = r->data;
	int64_t i, bad, first, far;
	long long d, md = 0;

	bad = far = 0;
	first = -1;
	for (i = 0; i < g->n; i++) {
		if (a[i] == b[i])
			continue;
		d = a[i] > b[i] ? (long long)a[i] - (long long)b[i] : (long long)b[i] - (long long)a[i];
		md = d > md ? d : md;
		bad++;
		if (d > diff && far++ == 0)
			first = i;
	}
	if (bad == 0) {
		printf("equal: %lld elements\n", (long long)g->n);
		return 0;
	}
	printf("mismatches=%lld of %lld max|diff|=%lld\n", (long long)bad, (long long)g->n, md);
	if (far == 0)
		return 0;
	fprintf(stderr, "npycmp: %s: %lld of %lld elements differ from %s", g->path,
	        (long long)far, (long long)g->n, r->path);
	if (diff > 0)
		fprintf(stderr, " by more than %lld", diff);
	fprintf(stderr, ", first at element %lld (got %lld, ref %lld)\n", (long long)first,
	        (long long)a[first], (long long)b[first]);
	return 1;
}

int
main(int argc, char **argv)
{
	const char *files[2];
	char sg[200], sr[200], *end;
	double tol = 1e-5;
	long long diff = 0;
	int exact = 0, nf = 0, i, rc, same;
	File g, r;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--tol") == 0 && i + 1 < argc) {
			tol = strtod(argv[++i], &end);
			if (*end || !(tol >= 0) || !isfinite(tol)) {
				fprintf(stderr, "npycmp: bad --tol '%s'\n", argv[i]);
				return 2;
			}
		} else if (strcmp(argv[i], "--diff") == 0 && i + 1 < argc) {
			diff = strtoll(argv[++i], &end, 10);
			if (*end || diff < 0) {
				fprintf(stderr, "npycmp: bad --diff '%s'\n", argv[i]);
				return 2;
			}
		} else if (strcmp(argv[i], "--exact") == 0) {
			exact = 1;
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "npycmp: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		} else if (nf < 2) {
			files[nf++] = argv[i];
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (nf != 2) {
		usage(stderr);
		return 2;
	}
	memset(&g, 0, sizeof g);
	memset(&r, 0, sizeof r);
	if (load(&g, files[0]) < 0 || load(&r, files[1]) < 0) {
		free(g.data);
		return 2;
	}
	same = g.rank == r.rank;
	for (i = 0; same && i < g.rank; i++)
		same = g.dim[i] == r.dim[i];
	rc = 1;
	if (!same) {
		fprintf(stderr, "npycmp: shape mismatch: %s is %s, %s is %s\n", g.path,
		        dprt_shape_str(sg, sizeof sg, g.rank, g.dim), r.path,
		        dprt_shape_str(sr, sizeof sr, r.rank, r.dim));
	} else if (isfloat(g.dtype) != isfloat(r.dtype)) {
		fprintf(stderr, "npycmp: dtype mismatch: %s is %s, %s is %s\n", g.path,
		        dprt_dtype_name[g.dtype], r.path, dprt_dtype_name[r.dtype]);
	} else if (isfloat(g.dtype)) {
		rc = widen(&g, DPRT_F64) < 0 || widen(&r, DPRT_F64) < 0 ? 2 :
		     cmpfloat(&g, &r, tol, exact);
	} else {
		rc = widen(&g, DPRT_I64) < 0 || widen(&r, DPRT_I64) < 0 ? 2 : cmpint(&g, &r, diff);
	}
	free(g.data);
	free(r.data);
	return rc;
}
