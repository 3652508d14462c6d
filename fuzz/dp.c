/* dp.c: libFuzzer harness of the .dp pipeline parser (the import stage in
 * process): any text gives IR or one positioned error, never a crash.
 * model("NAME.pt2", ...) calls read the archives of fuzz/seeds/pt2/ (run
 * from the repository root). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "fuzz.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_help(*argc, *argv, "the .dp pipeline parser");
	/* the stage reports each error on stderr: keep it out of the log (the
	 * sanitizers write to file descriptor 2 directly) */
	stderr = fopen("/dev/null", "w");
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static jmp_buf jb;
	static Src src;   /* static: they outlive a longjmp with their values */
	static Imp imp;
	src = (Src){ .path = "fuzz.dp", .dir = "fuzz/seeds/pt2/", .text = (char *)data, .len = size };
	imp = (Imp){ .src = &src };
	imp_bail = &jb;
	if (setjmp(jb) == 0) {
		char *b;
		size_t n;
		Err err;
		imp_run(&imp, "fuzz", "fuzz.dp", "weights.bin");
		if (dp_encode(imp.fn, &b, &n, &err))
			dp_die("encoding imported IR failed: %s", err.msg);
		free(b);
	}
	imp_bail = NULL;
	imp_free(&imp);
	return 0;
}
