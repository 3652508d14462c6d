/* regex.c: libFuzzer harness of the runtime's regular expressions (the
 * Split pre-tokenizers' patterns, runtime/regex.c: dprt_re_new,
 * dprt_re_find).  The input's first line is a pattern, the rest a text
 * (UTF-8; bytes that are not, as the tokenizer's stand-ins past U+10FFFF).
 * A pattern compiles or says why; a compiled one finds its matches through
 * the text, each inside the text and at or after where the search began,
 * the same twice (nothing of a search stays in the pattern); a search that
 * backtracks past the limit gives up (-3), never runs on. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dprtint.h"
#include "fuzz.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_help(*argc, *argv, "the runtime's regular expressions");
	return 0;
}

/* The code points of s[0..n-1] into cp: UTF-8, else 0x110000 + the byte. */
static size_t
points(const uint8_t *s, size_t n, uint32_t *cp)
{
	size_t i = 0, m = 0, k, len;

	while (i < n) {
		uint32_t c = s[i];
		len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 :
		      c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		if (len == 0 || i + len > n)
			goto raw;
		c &= len == 1 ? 0x7f : 0x3f >> (len - 1);
		for (k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				goto raw;
			c = c << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 2 && c < 0x80) || (len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
		    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
			goto raw;
		cp[m++] = c;
		i += len;
		continue;
raw:
		cp[m++] = 0x110000 + s[i++];
	}
	return m;
}

/* Every match from the start: their spans into out[0..] (up to max
 * pairs); the count, or -3 when a search gave up. */
static ptrdiff_t
all(const dprt_re *re, const uint32_t *cp, size_t n, size_t *out, size_t max)
{
	size_t i = 0, s, k = 0;
	ptrdiff_t e;

	while (i <= n && (e = dprt_re_find(re, cp, n, i, &s)) != -1) {
		if (e == -3)
			return -3;
		if (e < 0 || s < i || (size_t)e < s || (size_t)e > n)
			abort();   /* out of memory, or a match outside the text */
		if (k < max)
			out[2 * k] = s, out[2 * k + 1] = (size_t)e;
		k++;
		i = (size_t)e > s ? (size_t)e : s + 1;
	}
	return (ptrdiff_t)k;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t np = nl ? (size_t)(nl - data) : size, n;
	char *pat = malloc(np + 1), err[512] = "";
	uint32_t *cp = malloc((size - np + 1) * sizeof *cp);
	size_t a[128], b[128];
	ptrdiff_t ka, kb;
	dprt_re *re;

	if (pat == NULL || cp == NULL)
		abort();
	memcpy(pat, data, np);
	pat[np] = '\0';
	n = nl ? points(nl + 1, size - np - 1, cp) : 0;
	if ((re = dprt_re_new(pat, err, sizeof err)) == NULL) {
		if (strncmp(err, "regex", 5) != 0)
			abort();   /* a pattern refused says why */
	} else {
		ka = all(re, cp, n, a, 64);
		kb = all(re, cp, n, b, 64);
		if (ka != kb || (ka > 0 && memcmp(a, b, 2 * (size_t)(ka < 64 ? ka : 64) * sizeof *a) != 0))
			abort();   /* the same search twice, other matches */
		dprt_re_free(re);
	}
	free(pat);
	free(cp);
	return 0;
}
