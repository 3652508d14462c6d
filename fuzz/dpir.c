/* dpir.c: libFuzzer harness of the DPIR reader (dp_decode, dp_verify): any
 * bytes give IR or an error, never a crash; IR that verifies encodes to bytes
 * that decode to the same IR, and prints as text that parses back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpir.h"
#include "fuzz.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_help(*argc, *argv, "the DPIR reader");
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Fn *fn, *g, *h;
	Err err;
	if (dp_decode((const char *)data, size, &fn, &err))
		return 0;
	if (dp_verify(fn, &err) == 0) {
		char *b1, *b2, *t1, *t2;
		size_t n1, n2, l1, l2;
		if (dp_encode(fn, &b1, &n1, &err))
			dp_die("encoding verified IR failed: %s", err.msg);
		if (dp_decode(b1, n1, &g, &err) || dp_verify(g, &err))
			dp_die("re-reading encoded IR failed: %s", err.msg);
		if (dp_encode(g, &b2, &n2, &err) || n1 != n2 || memcmp(b1, b2, n1))
			dp_die("encode(decode(encode(x))) != encode(x)");
		t1 = fuzz_text(fn, &l1);
		if (dp_parse(t1, l1, &h, &err))
			dp_die("printed IR does not parse back: %d:%d: %s\n%s", err.line, err.col, err.msg, t1);
		t2 = fuzz_text(h, &l2);
		if (l1 != l2 || memcmp(t1, t2, l1))
			dp_die("print(parse(print(x))) != print(x):\n%s\n----\n%s", t1, t2);
		free(b1);
		free(b2);
		free(t1);
		free(t2);
		dp_free(g);
		dp_free(h);
	}
	dp_free(fn);
	return 0;
}
