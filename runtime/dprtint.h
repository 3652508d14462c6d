/* dprtint.h: runtime internals shared between the runtime's own files. */
#ifndef DPRTINT_H
#define DPRTINT_H

#include <stdarg.h>
#include <stdio.h>
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

/* trace.c: a traced run: start (events cleared, the clock marked), mark
 * (before each run), stop; the events as Chrome/Perfetto trace JSON into
 * path, or summed per op (mean over runs) into f. */
DPRT_HIDDEN void dprt_trace_start(void);
DPRT_HIDDEN void dprt_trace_mark(void);
DPRT_HIDDEN void dprt_trace_stop(void);
DPRT_HIDDEN int dprt_trace_write(const char *path, const char *prog, char *err, size_t errn);
DPRT_HIDDEN void dprt_trace_profile(FILE *f, long runs);

#endif
