/* util.c: dtype tables, sizes, shape text, error formatting and the clock. */
#include <stdio.h>
#include <time.h>
#include "dprtint.h"

const char *const dprt_dtype_name[DPRT_NDTYPE] = {
	"u8", "i8", "i16", "i32", "i64", "f16", "f32", "f64", "bool", "bf16"
};
const int dprt_dtype_size[DPRT_NDTYPE] = { 1, 1, 2, 4, 8, 2, 4, 8, 1, 2 };

_Static_assert(DPRT_NDTYPE == 10, "dtype tables out of step with the enum");
_Static_assert(sizeof dprt_dtype_name / sizeof *dprt_dtype_name == DPRT_NDTYPE,
               "dprt_dtype_name");
_Static_assert(sizeof dprt_dtype_size / sizeof *dprt_dtype_size == DPRT_NDTYPE,
               "dprt_dtype_size");

/* Formats into err (when there is room); returns -1 for `return dprt_errf(...)`. */
int
dprt_errf(char *err, size_t errn, const char *fmt, ...)
{
	va_list ap;

	if (err && errn > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errn, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Element count of a shape; -1 on a negative dim or int64 overflow. */
int
dprt_numel(int rank, const int64_t *dim, int64_t *n)
{
	int64_t m;
	int i;

	m = 1;
	for (i = 0; i < rank; i++) {
		if (dim[i] < 0)
			return -1;
		if (dim[i] != 0 && m > INT64_MAX / dim[i])
			return -1;
		m *= dim[i];
	}
	*n = m;
	return 0;
}

/* Element count times dtype size; 0 when the shape is invalid or the size
 * does not fit in size_t (an empty tensor is also 0). */
size_t
dprt_io_bytes(const dprt_io *io)
{
	int64_t n;
	size_t sz;

	if (io->dtype < 0 || io->dtype >= DPRT_NDTYPE || io->rank < 0 ||
	    io->rank > DPRT_MAXRANK || dprt_numel(io->rank, io->dim, &n) < 0)
		return 0;
	sz = (size_t)dprt_dtype_size[io->dtype];
	if ((uint64_t)n > SIZE_MAX / sz)
		return 0;
	return (size_t)n * sz;
}

/* Shape as text, "[1,32,32,3]"; truncated (still terminated) if buf is short. */
char *
dprt_shape_str(char *buf, size_t n, int rank, const int64_t *dim)
{
	size_t len;
	int i;

	if (n == 0)
		return buf;
	len = (size_t)snprintf(buf, n, "[");
	for (i = 0; i < rank && len < n; i++)
		len += dim[i] == DPRT_DYN ? (size_t)snprintf(buf + len, n - len, "%s?", i ? "," : "")
		       : (size_t)snprintf(buf + len, n - len, "%s%lld", i ? "," : "",
		                          (long long)dim[i]);
	if (len < n)
		snprintf(buf + len, n - len, "]");
	return buf;
}

/* CLOCK_MONOTONIC in seconds. */
double
dprt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
