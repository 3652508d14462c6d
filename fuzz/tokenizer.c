/* tokenizer.c: libFuzzer harness of the runtime's tokenizer.json reader and
 * byte-level BPE (dprt_tok_parse, dprt_tok_encode, dprt_tok_decode).  An
 * input starting with '{' is a tokenizer.json: it loads or gives an error,
 * and a loaded one encodes and decodes a fixed text without crashing.  Any
 * other input is text for the two tokenizers of tests/data/tokenizer (run
 * from the repository root): encoding is the same with too little room as
 * with enough, and valid UTF-8 decodes back to itself (byte-level BPE loses
 * nothing, added tokens included). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dprt.h"
#include "fuzz.h"

static dprt_tokenizer *tok[2];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_help(*argc, *argv, "the runtime's tokenizer");
	static const char *const path[2] = {"tests/data/tokenizer/gpt2.json",
	                                    "tests/data/tokenizer/llama3.json"};
	char err[512];
	int k;

	for (k = 0; k < 2; k++)
		if (dprt_tok_load(path[k], &tok[k], err, sizeof err) != 0) {
			fprintf(stderr, "%s (run from the repository root)\n", err);
			abort();
		}
	return 0;
}

/* Whether s[0..n-1] is valid UTF-8 (no surrogates, nothing past U+10FFFF). */
static int
valid(const uint8_t *s, size_t n)
{
	size_t i = 0, k, len;
	uint32_t c;

	while (i < n) {
		c = s[i];
		len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 :
		      c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		if (len == 0 || i + len > n)
			return 0;
		c &= len == 1 ? 0x7f : 0x3f >> (len - 1);
		for (k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			c = c << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
		    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
			return 0;
		i += len;
	}
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	int k;

	if (size > 0 && data[0] == '{') {
		dprt_tokenizer *t;
		int64_t ids[64];
		char buf[256];
		if (dprt_tok_parse((const char *)data, size, "fuzz", &t, err, sizeof err) != 0) {
			if (err[0] == '\0')
				abort();   /* a failure says why */
			return 0;
		}
		int64_t n = dprt_tok_encode(t, "Hello, world! 日本 <|x|>\n\n  x", 30, 1, ids, 64);
		if (n > 64)
			n = 64;
		if (n >= 0)
			dprt_tok_decode(t, ids, n, 0, buf, sizeof buf);
		dprt_tok_free(t);
		return 0;
	}
	for (k = 0; k < 2; k++) {
		int64_t n = dprt_tok_encode(tok[k], (const char *)data, size, k, NULL, 0), m, d;
		int64_t *ids = malloc(sizeof *ids * (size_t)(n + 1)), few[3];
		char *back;
		if (n < 0 || ids == NULL)
			abort();
		m = dprt_tok_encode(tok[k], (const char *)data, size, k, ids, n);
		if (m != n || dprt_tok_encode(tok[k], (const char *)data, size, k, few, 3) != n ||
		    (n > 0 && memcmp(few, ids, sizeof *few * (size_t)(n < 3 ? n : 3)) != 0))
			abort();   /* the count and the ids do not depend on the room */
		d = dprt_tok_decode(tok[k], ids, n, 0, NULL, 0);
		back = malloc((size_t)d + 1);
		if (d < 0 || back == NULL || dprt_tok_decode(tok[k], ids, n, 0, back, d) != d)
			abort();
		if (k == 1 && n > 0)   /* llama3 with the template: <|begin_of_text|> first */
			d -= 17, memmove(back, back + 17, (size_t)d);
		if (valid(data, size) && (d != (int64_t)size || memcmp(back, data, size) != 0))
			abort();   /* byte-level BPE round trip */
		free(back);
		free(ids);
	}
	return 0;
}
