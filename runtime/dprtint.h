/* dprtint.h: runtime internals shared between the runtime's own files. */
#ifndef DPRTINT_H
#define DPRTINT_H

#include <stdarg.h>
#include "dprt.h"

#define DPRT_HIDDEN __attribute__((visibility("hidden")))

/* Formats a message into err[0..errn-1] (when errn > 0); returns -1. */
DPRT_HIDDEN int dprt_errf(char *err, size_t errn, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Element count of a shape into *n; 0, or -1 on a negative dim or overflow. */
DPRT_HIDDEN int dprt_numel(int rank, const int64_t *dim, int64_t *n);

/* Writes a .npy file to a fresh temporary beside path (its name into tmp,
 * which has room for tmpn bytes); the caller renames or unlinks it.  0, or
 * -1 with a message in err (and no file left behind). */
DPRT_HIDDEN int dprt_npy_write_tmp(const char *path, char *tmp, size_t tmpn,
                                   int dtype, int rank, const int64_t *dim,
                                   const void *src, char *err, size_t errn);

#endif
