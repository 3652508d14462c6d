/* text.c: libFuzzer harness of the text IR parser (dp_parse_raw, dp_verify):
 * any text gives IR or a positioned error, never a crash; IR that verifies
 * prints as text that parses to the same IR and survives a DPIR round trip. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpir.h"
#include "fuzz.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_help(*argc, *argv, "the text IR parser");
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Fn *fn, *g, *h;
	Err err;
	/* data is exactly size bytes, not NUL-terminated: the parser must keep
	 * within len */
	if (dp_parse_raw((const char *)data, size, &fn, &err))
		return 0;
	if (dp_verify(fn, &err) == 0) {
		char *t1, *t2, *b;
		size_t l1, l2, n;
		dp_canon(fn);
		t1 = fuzz_text(fn, &l1);
		if (dp_parse(t1, l1, &g, &err))
			dp_die("printed IR does not parse back: %d:%d: %s\n%s", err.line, err.col, err.msg, t1);
		t2 = fuzz_text(g, &l2);
		if (l1 != l2 || memcmp(t1, t2, l1))
			dp_die("print(parse(print(x))) != print(x):\n%s\n----\n%s", t1, t2);
		if (dp_encode(g, &b, &n, &err) || dp_decode(b, n, &h, &err) || dp_verify(h, &err))
			dp_die("DPIR round trip of parsed IR failed: %s", err.msg);
		free(t1);
		free(t2);
		free(b);
		dp_free(g);
		dp_free(h);
	}
	dp_free(fn);
	return 0;
}
