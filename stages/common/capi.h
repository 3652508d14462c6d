/* capi.h: a text buffer for code generators and the typed C API of a
 * generated program; shared by lower_cpu (which defines the API) and link
 * (which declares it in NAME.h), so the two can never disagree. */
#ifndef CAPI_H
#define CAPI_H

#include <stdarg.h>
#include <stddef.h>

#include "dpir.h"

/* A growable NUL-terminated text buffer; the zero value is empty. */
typedef struct Str {
	char *p;
	size_t n, cap;     /* length without the NUL; allocated bytes */
} Str;

void str_put(Str *s, const char *t);
void str_putn(Str *s, const char *t, size_t n);
void str_printf(Str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void str_free(Str *s);
/* Appends t as a C string literal (quotes and escapes included). */
void str_cstring(Str *s, const char *t);
/* Appends text for a comment body, breaking any star-slash in it. */
void str_comment(Str *s, const char *t);
/* Appends a float literal that reads back as (float)f: "0.5f", "INFINITY". */
void str_float(Str *s, double f);
/* An i64 bound as a C literal: v truncated, or INT64_MIN / INT64_MAX
 * beyond the range (infinities). */
void str_i64(Str *s, double v);
/* Appends "{1, 32, 32, 3}" (or "{0}" for n = 0). */
void str_ints(Str *s, const int64_t *v, int n);

/* optext.c: appends the op's text form, as a comment body:
 * "%5 = aten.linear %4, %1, %2 : f32[1,512]". */
void op_text(Str *s, const Fn *fn, const Op *op);

/* One parameter of NAME_run: a graph input or output. */
typedef struct Param {
	const char *name;  /* the C identifier used for it */
	const char *io;    /* the graph's name for it */
	const char *ctype; /* element type: "float", "uint8_t"... */
	int isout;
	int val;           /* value id */
	Type t;
	const char *hname, *wname; /* an image input's extra height and width
	                              parameters (int64_t), a text input's
	                              length (hname; wname NULL), else NULL */
} Param;

/* Fills *p with the inputs (input ops in schedule order) then the outputs
 * (fn->out order) of fn; names are unique C identifiers.  An image input
 * of any size (u8[?,?,C]) also takes its height and width.  Checks that the
 * pipeline name is a C identifier.  0, or -1 with err set. */
int capi_params(Fn *fn, Param **p, int *np, Err *err);
/* The C element type of a dtype (bool as uint8_t, f16/bf16 as uint16_t). */
const char *capi_ctype(int dtype);
/* Appends the typedef and the four prototypes of the typed API. */
void capi_decls(Str *s, const Fn *fn, const Param *p, int np);
/* The input op of the pipeline's generate statement when NAME_generate is
 * part of the API (the token input is the program's only input), else -1. */
int capi_generate(const Fn *fn);
/* The input op of its generate statement's pos=NAME, or -1. */
int capi_genpos(const Fn *fn);
/* The entry its prefill=ENTRY names (n bytes, into *n) when NAME_generate
 * is part of the API, else NULL. */
const char *capi_genprefill(const Fn *fn, size_t *n);

#endif
