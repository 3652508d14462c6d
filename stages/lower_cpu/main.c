/* main.c: dp-lower_cpu: lowers the host schedule of a partitioned DPIR
 * function to readable C that calls the runtime (dprt.h) and, for cuda
 * partitions, the functions dp-lower_gpu emits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

#define STAGE "lower_cpu"

static const char usage[] =
	"usage: dp-lower_cpu IN.dpir -o OUT.c\n"
	"\n"
	"Lowers the host schedule of a partitioned DPIR file to C that calls the\n"
	"DevProc runtime (dprt.h): a static buffer plan (one arena, offsets fixed at\n"
	"compile time and reused once a value is dead; inputs read and outputs\n"
	"written in the caller's buffers; reshapes and matmul transposes are free\n"
	"views), one statement per op, the descriptor `const dprt_prog NAME_prog`\n"
	"and the typed API NAME_create/NAME_run/NAME_error/NAME_destroy (declared\n"
	"by dp-link in NAME.h).  Constants point into `NAME_weights`, the weight\n"
	"blob that dp-link embeds.  Each cuda partition becomes one call of\n"
	"NAME_gpu_partK (from dp-lower_gpu's 5.gpu.cu), after the values it takes\n"
	"from the host are copied into page-locked staging; values copied back to\n"
	"the cpu are read where they land (a copy to the cpu waits for the device).\n"
	"Compile the output with -I<runtime headers>.\n"
	"\n"
	"OUT.c is written only when its bytes change.  Errors: `IN: lower_cpu:\n"
	"message`, exit status 1, no output.\n"
	"\n"
	"  -o OUT.c   the C file to write\n"
	"  --supports list the ops the cpu target has kernels for, one a line\n"
	"  --help     this text\n";

static const char *
base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

int
main(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	Fn *fn;
	Err err = {0};
	Str text = {0};
	int i, rc = 1;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(usage, stdout);
			return 0;
		} else if (strcmp(argv[i], "--supports") == 0) {
			for (int k = 0; k < DP_NOP; k++)
				if (cpu_supports(k))
					puts(dp_op_name[k]);
			return 0;
		} else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
			out = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			fprintf(stderr, "dp-lower_cpu: unknown option %s (see --help)\n", argv[i]);
			return 1;
		} else if (in == NULL) {
			in = argv[i];
		} else {
			fprintf(stderr, "dp-lower_cpu: more than one input (see --help)\n");
			return 1;
		}
	}
	if (in == NULL || out == NULL) {
		fprintf(stderr, "dp-lower_cpu: need IN.dpir and -o OUT.c (see --help)\n");
		return 1;
	}

	if (dp_read(in, &fn, &err) != 0) {
		dp_report(in, STAGE, &err);
		return 1;
	}
	if (emit_file(fn, base(in), base(out), &text, &err) != 0)
		dp_report(in, STAGE, &err);
	else if (dp_write_file(out, text.p, text.n, &err) != 0)
		dp_report(out, STAGE, &err);
	else
		rc = 0;
	str_free(&text);
	dp_free(fn);
	return rc;
}
