/* tensor.c: devproc tensor: makes .npy files without numpy (from a PNG or
 * JPEG, raw bytes or a list of numbers) and shows .npy files, each member
 * of an .npz and decoded images: dtype, shape, statistics and values. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "dprt.h"
#include "npz.h"

static const char tensor_usage[] =
	"usage: devproc tensor FILE... [--all]\n"
	"       devproc tensor -o OUT.npy --image FILE [--resize R] [--crop C] [--shape S] [--dtype D]\n"
	"       devproc tensor -o OUT.npy --raw FILE --dtype D --shape S\n"
	"       devproc tensor -o OUT.npy --values LIST [--dtype D] [--shape S]\n"
	"\n"
	"Shows each FILE (an .npy, every member of an .npz, or a PNG or JPEG as the\n"
	"u8[H,W,3] pixels a program reads): dtype, shape, bytes, min, max, mean,\n"
	"standard deviation, NaN and Inf counts, the index of the largest value,\n"
	"and the first 8 values (--all: every value, one row of the last\n"
	"dimension a line; the lines after 'values:' read back with --values).\n"
	"\n"
	"With -o, writes one .npy file (format 1.0, C order, little-endian):\n"
	"  --image FILE    a PNG or JPEG decoded to RGB u8[H,W,3] as the programs\n"
	"                  decode it; --resize and --crop as the pipelines'\n"
	"                  resize(size=R, crop=C) does (torchvision's Resize on a PIL\n"
	"                  image, PIL's bilinear, then CenterCrop): R is S (the\n"
	"                  shorter side to S) or H,W; C is S or H,W\n"
	"  --raw FILE      FILE's bytes as they are: little-endian elements of\n"
	"                  --dtype in C order, exactly as many as --shape holds\n"
	"  --values LIST   numbers separated by commas, blanks or line breaks\n"
	"                  ([ ] ignored; true/false for bool); @FILE reads them\n"
	"                  from FILE, - from stdin; --dtype defaults to f32,\n"
	"                  --shape to [N]\n"
	"  --dtype D       u8 i8 i16 i32 i64 f16 f32 f64 bool bf16; converts the\n"
	"                  image's pixels or the numbers to it\n"
	"  --shape S       the dims, as 1,32,32,3 or [1,32,32,3] (the element\n"
	"                  count must be the data's: --shape reshapes, never pads)\n";

__attribute__((format(printf, 1, 2))) static int
tfail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "devproc: tensor: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return 1;
}

/* An error about a file: "FILE: tensor: message" (err as the runtime
 * wrote it, "FILE: message", or a message alone). */
static int
tfile(const char *path, const char *err)
{
	size_t n = strlen(path);
	if (!strncmp(err, path, n) && !strncmp(err + n, ": ", 2))
		err += n + 2;
	fprintf(stderr, "%s: tensor: %s\n", path, err);
	return 1;
}

static int
dtypeof(const char *s)
{
	for (int d = 0; d < DPRT_NDTYPE; d++)
		if (!strcmp(s, dprt_dtype_name[d]))
			return d;
	return -1;
}

/* "1,32,32,3" or "[1, 32, 32, 3]" or "[]" into dim; the rank, or -1. */
static int
parseshape(const char *s, int64_t *dim)
{
	int r = 0;
	while (*s == ' ' || *s == '[')
		s++;
	while (*s && *s != ']') {
		char *end;
		errno = 0;
		long long v = strtoll(s, &end, 10);
		if (end == s || errno || v < 0 || r == DPRT_MAXRANK)
			return -1;
		dim[r++] = v;
		s = end;
		while (*s == ' ')
			s++;
		if (*s == ',' || *s == 'x')
			s++;
		while (*s == ' ')
			s++;
	}
	if (*s == ']')
		s++;
	return *s ? -1 : r;
}

static int64_t
numel(int rank, const int64_t *dim)
{
	int64_t n = 1;
	for (int i = 0; i < rank; i++) {
		if (dim[i] && n > INT64_MAX / dim[i])
			return -1;
		n *= dim[i];
	}
	return n;
}

static int
isfloat(int dt)
{
	return dt == DPRT_F16 || dt == DPRT_BF16 || dt == DPRT_F32 || dt == DPRT_F64;
}

/* Element k as text that reads back to the same value (%.9g for f32). */
static void
elem(char *buf, size_t n, int dt, const void *x, int64_t k)
{
	switch (dt) {
	case DPRT_U8: snprintf(buf, n, "%u", ((const uint8_t *)x)[k]); break;
	case DPRT_I8: snprintf(buf, n, "%d", ((const int8_t *)x)[k]); break;
	case DPRT_I16: snprintf(buf, n, "%d", ((const int16_t *)x)[k]); break;
	case DPRT_I32: snprintf(buf, n, "%ld", (long)((const int32_t *)x)[k]); break;
	case DPRT_I64: snprintf(buf, n, "%lld", (long long)((const int64_t *)x)[k]); break;
	case DPRT_BOOL: snprintf(buf, n, "%s", ((const uint8_t *)x)[k] ? "true" : "false"); break;
	case DPRT_F32: snprintf(buf, n, "%.9g", ((const float *)x)[k]); break;
	case DPRT_F64: snprintf(buf, n, "%.17g", ((const double *)x)[k]); break;
	default: {
		double v;
		dprt_cast(&v, DPRT_F64, (const char *)x + k * dprt_dtype_size[dt], dt, 1);
		snprintf(buf, n, "%.5g", v);
	}
	}
}

/* One tensor's summary and values. */
static void
show(const char *what, int dt, int rank, const int64_t *dim, const void *data, int all)
{
	char sh[256], v[64];
	int64_t n = numel(rank, dim);
	dprt_shape_str(sh, sizeof sh, rank, dim);
	printf("%s: %s%s, %lld element%s, %lld bytes\n", what, dprt_dtype_name[dt], sh,
	       (long long)n, n == 1 ? "" : "s", (long long)n * dprt_dtype_size[dt]);
	if (n > 0) {
		double mn = INFINITY, mx = -INFINITY, sum = 0, sq = 0;
		int64_t nnan = 0, ninf = 0, nfin = 0, at = -1;
		for (int64_t k = 0; k < n; k++) {
			double x;
			dprt_cast(&x, DPRT_F64, (const char *)data + k * dprt_dtype_size[dt], dt, 1);
			if (isnan(x)) {
				nnan++;
				continue;
			}
			if (isinf(x))
				ninf++;
			if (at < 0 || x > mx)
				at = k;
			mn = x < mn ? x : mn;
			mx = x > mx ? x : mx;
			if (!isinf(x)) {
				nfin++;
				sum += x;
				sq += x * x;
			}
		}
		if (at >= 0) {
			double mean = nfin ? sum / (double)nfin : NAN;
			double var = nfin ? sq / (double)nfin - mean * mean : NAN;
			printf("  min %.9g  max %.9g  mean %.9g  std %.9g", mn, mx, mean,
			       var > 0 ? sqrt(var) : 0.0);
			if (isfloat(dt))
				printf("  nan %lld  inf %lld", (long long)nnan, (long long)ninf);
			/* the index of the first largest value, flat and per dim */
			int64_t idx[DPRT_MAXRANK], r = at;
			for (int i = rank - 1; i >= 0; i--) {
				idx[i] = dim[i] ? r % dim[i] : 0;
				r = dim[i] ? r / dim[i] : 0;
			}
			printf("\n  argmax %lld", (long long)at);
			if (rank > 1) {
				printf(" [");
				for (int i = 0; i < rank; i++)
					printf("%s%lld", i ? "," : "", (long long)idx[i]);
				printf("]");
			}
			printf("\n");
		} else
			printf("  every value is NaN\n");
	}
	int64_t row = rank ? dim[rank - 1] : 1;
	if (all && n > 0) {
		printf("  values:\n");
		for (int64_t k = 0; k < n; k++) {
			elem(v, sizeof v, dt, data, k);
			printf("%s%s%s", k % (row ? row : 1) ? " " : "    ", v,
			       k + 1 == n ? "\n" : (k + 1) % (row ? row : 1) ? "," : ",\n");
		}
	} else if (n > 0) {
		int64_t m = n <= 8 ? n : 8;
		printf("  values: [");
		for (int64_t k = 0; k < m; k++) {
			elem(v, sizeof v, dt, data, k);
			printf("%s%s", k ? ", " : "", v);
		}
		printf("%s]%s\n", m < n ? ", ..." : "", m < n ? "  (--all prints every value)" : "");
	}
}

int
tensor_show(const char *path, int all)
{
	char err[1024];
	FILE *f = fopen(path, "rb");
	unsigned char h[8] = { 0 };
	size_t nh = f ? fread(h, 1, sizeof h, f) : 0;
	if (!f)
		return tfile(path, strerror(errno));
	fclose(f);
	if (nh >= 4 && !memcmp(h, "PK\3\4", 4)) {
		Npz z;
		if (npz_read(path, &z, err, sizeof err))
			return tfile(path, err);
		printf("%s: .npz archive, %d member%s\n", path, z.n, z.n == 1 ? "" : "s");
		for (int i = 0; i < z.n; i++) {
			char what[1200];
			snprintf(what, sizeof what, "%s:%s", path, z.m[i].name);
			show(what, z.m[i].dtype, z.m[i].rank, z.m[i].dim, z.m[i].data, all);
		}
		npz_free(&z);
		return 0;
	}
	if ((nh >= 4 && !memcmp(h, "\x89PNG", 4)) || (nh >= 3 && !memcmp(h, "\xff\xd8\xff", 3))) {
		dprt_image im;
		if (dprt_image_read(path, &im, err, sizeof err))
			return tfile(path, err);
		int64_t dim[3] = { im.h, im.w, im.c };
		show(path, DPRT_U8, 3, dim, im.data, all);
		free((void *)im.data);
		return 0;
	}
	int dt, rank;
	int64_t dim[DPRT_MAXRANK];
	void *data;
	if (dprt_npy_load(path, &dt, &rank, dim, &data, err, sizeof err)) {
		size_t l = strlen(err);
		snprintf(err + l, sizeof err - l, " (devproc tensor shows .npy, .npz, PNG and JPEG files)");
		return tfile(path, err);
	}
	show(path, dt, rank, dim, data, all);
	free(data);
	return 0;
}

/* Reads all of path ("-": stdin) into a NUL-terminated buffer. */
static char *
slurp(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0, k;
	char *b = malloc(cap + 1);
	while (b && (k = fread(b + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap) {
			char *nb = realloc(b, 2 * cap + 1);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
	}
	int bad = ferror(f);
	if (f != stdin)
		fclose(f);
	if (!b || bad) {
		free(b);
		errno = bad ? EIO : ENOMEM;
		return NULL;
	}
	b[n] = 0;
	*len = n;
	return b;
}

/* Parses the numbers of s into *out (dtype dt); the count, or -1 after
 * reporting the bad word. */
static int64_t
parsevalues(const char *s, int dt, void **out)
{
	size_t cap = 64, es = (size_t)dprt_dtype_size[dt];
	int64_t n = 0;
	char *buf = malloc(cap * es);
	if (!buf)
		return tfail("out of memory"), -1;
	for (;;) {
		while (*s && strchr(" \t\r\n,[]", *s))
			s++;
		if (!*s)
			break;
		size_t wl = strcspn(s, " \t\r\n,[]");
		char word[128];
		snprintf(word, sizeof word, "%.*s", (int)(wl < 127 ? wl : 127), s);
		char *end = NULL;
		int ok = wl < 127;
		if ((size_t)n == cap) {
			char *nb = realloc(buf, 2 * cap * es);
			if (!nb) {
				free(buf);
				return tfail("out of memory"), -1;
			}
			buf = nb;
			cap *= 2;
		}
		void *dst = buf + (size_t)n * es;
		errno = 0;
		if (dt == DPRT_BOOL) {
			int b = !strcmp(word, "true") || !strcmp(word, "1") ? 1
			      : !strcmp(word, "false") || !strcmp(word, "0") ? 0 : -1;
			ok = ok && b >= 0;
			*(uint8_t *)dst = (uint8_t)(b > 0);
		} else if (isfloat(dt)) {
			double v = strtod(word, &end);
			ok = ok && end != word && !*end;
			dprt_cast(dst, dt, &v, DPRT_F64, 1);
		} else {
			static const long long lo[] = { 0, -128, -32768, -2147483648LL, INT64_MIN };
			static const long long hi[] = { 255, 127, 32767, 2147483647LL, INT64_MAX };
			long long v = strtoll(word, &end, 10);
			ok = ok && end != word && !*end && !errno && v >= lo[dt] && v <= hi[dt];
			int64_t w = v;
			dprt_cast(dst, dt, &w, DPRT_I64, 1);
		}
		if (!ok) {
			free(buf);
			return tfail("--values: '%s' is not a %s value%s", word, dprt_dtype_name[dt],
			             isfloat(dt) || dt == DPRT_BOOL ? "" : " (an integer in its range)"), -1;
		}
		n++;
		s += wl;
	}
	*out = buf;
	return n;
}

static int
make(const char *out, const char *image, const char *raw, const char *values, const char *dts,
     const char *shape, const char *resize, const char *crop)
{
	char err[1024], a[256], b[256];
	int dt = dts ? dtypeof(dts) : -1, rank = -1, srcdt = -1, srank = 0;
	int64_t dim[DPRT_MAXRANK], sdim[DPRT_MAXRANK];
	void *data = NULL;
	if (dts && dt < 0)
		return tfail("--dtype %s: not a dtype (u8 i8 i16 i32 i64 f16 f32 f64 bool bf16)", dts);
	if (shape && (rank = parseshape(shape, dim)) < 0)
		return tfail("--shape %s: expected dims such as 1,32,32,3 (at most %d)", shape,
		             DPRT_MAXRANK);
	if (!!image + !!raw + !!values != 1)
		return tfail("-o needs one of --image, --raw and --values (see devproc tensor --help)");
	if ((resize || crop) && !image)
		return tfail("--resize and --crop resize and crop an --image");
	if (image) {
		dprt_image im;
		if (dprt_image_read(image, &im, err, sizeof err))
			return tfile(image, err);
		srcdt = DPRT_U8, srank = 3;
		sdim[0] = im.h, sdim[1] = im.w, sdim[2] = im.c;
		data = (void *)im.data;
		if (resize || crop) {
			int64_t sz[DPRT_MAXRANK], cr[DPRT_MAXRANK], oh, ow;
			int nsz = resize ? parseshape(resize, sz) : 2, ncr = crop ? parseshape(crop, cr) : 0;
			if (!resize)
				sz[0] = im.h, sz[1] = im.w;
			if (nsz < 1 || nsz > 2 || sz[0] < 1 || sz[nsz - 1] < 1) {
				free(data);
				return tfail("--resize %s: expected S (the shorter side) or H,W", resize);
			}
			if (crop && (ncr < 1 || ncr > 2 || cr[0] < 1 || cr[ncr - 1] < 1)) {
				free(data);
				return tfail("--crop %s: expected S or H,W", crop);
			}
			dprt_resize_size(im.h, im.w, sz, nsz, &oh, &ow);
			if (crop)
				oh = cr[0], ow = cr[ncr - 1];
			uint8_t *y = malloc((size_t)(oh * ow * im.c));
			if (!y || dprt_resize_u8(y, &im, sz, nsz, oh, ow, image, err, sizeof err)) {
				free(y);
				free(data);
				return tfile(image, y ? err : "out of memory");
			}
			free(data);
			data = y;
			sdim[0] = oh, sdim[1] = ow;
		}
	} else if (raw) {
		size_t len;
		if (dt < 0 || rank < 0)
			return tfail("--raw needs --dtype and --shape");
		if (!(data = slurp(raw, &len)))
			return tfile(raw, strerror(errno));
		int64_t n = numel(rank, dim);
		if (n < 0 || (uint64_t)n * (uint64_t)dprt_dtype_size[dt] != len) {
			free(data);
			fprintf(stderr, "%s: tensor: %zu bytes, but %s%s takes %lld\n", raw, len,
			        dprt_dtype_name[dt], dprt_shape_str(a, sizeof a, rank, dim),
			        (long long)(n < 0 ? -1 : n * dprt_dtype_size[dt]));
			return 1;
		}
		srcdt = dt, srank = rank;
		memcpy(sdim, dim, sizeof dim);
	} else {
		size_t len;
		char *text = NULL;
		if (values[0] == '@' || !strcmp(values, "-")) {
			const char *p = values[0] == '@' ? values + 1 : values;
			if (!(text = slurp(p, &len)))
				return tfile(p, strerror(errno));
		}
		srcdt = dt >= 0 ? dt : DPRT_F32;
		int64_t n = parsevalues(text ? text : values, srcdt, &data);
		free(text);
		if (n < 0)
			return 1;
		srank = 1, sdim[0] = n;
	}
	if (dt < 0)
		dt = srcdt;
	if (rank < 0) {
		rank = srank;
		memcpy(dim, sdim, sizeof dim);
	}
	int64_t n = numel(srank, sdim);
	if (numel(rank, dim) != n) {
		free(data);
		return tfail("--shape %s holds %lld elements, the data %s %lld",
		             dprt_shape_str(a, sizeof a, rank, dim), (long long)numel(rank, dim),
		             dprt_shape_str(b, sizeof b, srank, sdim), (long long)n);
	}
	if (dt != srcdt) {
		void *c = malloc(n ? (size_t)n * (size_t)dprt_dtype_size[dt] : 1);
		if (!c) {
			free(data);
			return tfail("out of memory");
		}
		dprt_cast(c, dt, data, srcdt, n);
		free(data);
		data = c;
	}
	int rc = dprt_npy_write(out, dt, rank, dim, data, err, sizeof err);
	free(data);
	if (rc)
		return tfile(out, err);
	return 0;
}

/* devproc tensor: shows FILE... or, with -o, makes one .npy file. */
int
cmd_tensor(int argc, char **argv)
{
	const char *out = NULL, *image = NULL, *raw = NULL, *values = NULL, *dt = NULL;
	const char *shape = NULL, *resize = NULL, *crop = NULL;
	const char **files = calloc((size_t)argc + 1, sizeof *files);
	int nfile = 0, all = 0;
	if (!files)
		return tfail("out of memory");
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], **opt = NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(tensor_usage, stdout);
			free(files);
			return 0;
		}
		if (!strcmp(a, "--all")) {
			all = 1;
			continue;
		}
		opt = !strcmp(a, "-o") ? &out : !strcmp(a, "--image") ? &image : !strcmp(a, "--raw") ? &raw
		    : !strcmp(a, "--values") ? &values : !strcmp(a, "--dtype") ? &dt
		    : !strcmp(a, "--shape") ? &shape : !strcmp(a, "--resize") ? &resize
		    : !strcmp(a, "--crop") ? &crop : NULL;
		if (opt && i + 1 < argc)
			*opt = argv[++i];
		else if (a[0] == '-' && a[1]) {
			free(files);
			fputs(tensor_usage, stderr);
			return tfail("unknown option or missing argument '%s'", a);
		} else
			files[nfile++] = a;
	}
	int rc = 0;
	if (out) {
		if (nfile || all)
			rc = tfail("-o makes one file: no FILE or --all with it");
		else
			rc = make(out, image, raw, values, dt, shape, resize, crop);
	} else if (image || raw || values || dt || shape || resize || crop)
		rc = tfail("--image, --raw, --values, --dtype, --shape, --resize and --crop make a "
		           "file: give -o OUT.npy");
	else if (!nfile) {
		fputs(tensor_usage, stderr);
		rc = 1;
	} else
		for (int i = 0; i < nfile; i++)
			rc |= tensor_show(files[i], all);
	free(files);
	return rc;
}
