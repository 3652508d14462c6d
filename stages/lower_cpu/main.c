/* main.c: dp-lower_cpu: lowers the host schedule of a partitioned DPIR
 * function to readable C that calls the runtime (dprt.h). */
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
	"blob that dp-link embeds.  Compile the output with -I<runtime headers>.\n"
	"\n"
	"OUT.c is written only when its bytes change.  Errors: `IN: lower_cpu:\n"
	"message`, exit status 1, no output.\n"
	"\n"
	"  -o OUT.c   the C file to write\n"
	"  --help     this text\n";

static const char *
base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int
oncuda(const Fn *fn, const Op *op)
{
	int k;

	if (op->dev == DEV_CUDA)
		return 1;
	if (op->part >= 0 && op->part < fn->npart && fn->part[op->part].dev == DEV_CUDA)
		return 1;
	for (k = 0; k < op->nout; k++)
		if (fn->val[op->out[k]].t.dev == DEV_CUDA)
			return 1;
	return 0;
}

/* Rejects ops the host cannot run, naming the first that computes (not a
 * copy or a constant) if any.  (When lower_gpu exists, the ops of cuda
 * partitions become calls of the functions it emits instead.) */
static int
hostonly(const Fn *fn, Err *err)
{
	int i, bad = -1;

	for (i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		if (!oncuda(fn, op))
			continue;
		if (bad < 0 || (op->kind != Ocopy && op->kind != Oconst &&
		                (fn->op[bad].kind == Ocopy || fn->op[bad].kind == Oconst)))
			bad = i;
	}
	if (bad >= 0) {
		dp_seterr(err, "op %d (%s) is placed on cuda; the cuda target is not supported "
		          "yet", bad, dp_op_name[fn->op[bad].kind]);
		return -1;
	}
	for (i = 0; i < fn->npart; i++) {
		if (fn->part[i].dev == DEV_CUDA) {
			dp_seterr(err, "partition %d is on cuda; the cuda target is not supported "
			          "yet", i);
			return -1;
		}
	}
	return 0;
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
	if (hostonly(fn, &err) != 0 || emit_file(fn, base(in), base(out), &text, &err) != 0)
		dp_report(in, STAGE, &err);
	else if (dp_write_file(out, text.p, text.n, &err) != 0)
		dp_report(out, STAGE, &err);
	else
		rc = 0;
	str_free(&text);
	dp_free(fn);
	return rc;
}
