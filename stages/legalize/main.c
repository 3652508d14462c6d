/* legalize: rewrites the imported IR into the form every later stage
 * expects: composite ops decomposed into primitives, aliases in one
 * canonical form, attribute defaults filled (rules.c is the table). */
#include <stdlib.h>
#include <string.h>

#include "legalize.h"

static const char usage[] =
	"usage: dp-legalize IN.dpir -o OUT.dpir\n"
	"       dp-legalize --rules\n"
	"Rewrites IN (imported, not yet placed) so that the lowerings see only\n"
	"primitives in canonical form: every reshape, flatten, unflatten and view\n"
	"an aten.view to its result's sizes; every transpose an aten.permute;\n"
	"aten.matmul rank-promoted into aten.mm or aten.bmm between views; pooling\n"
	"windows with their defaults filled; each composite op of formats/ops.h\n"
	"decomposed into primitives.  Other ops are copied unchanged, constants\n"
	"keep pointing into the weight blob (nothing is copied).\n"
	"\n"
	"OUT is written only when its bytes change.  Errors: `IN: legalize:\n"
	"message` (`IN:line:col: ...` for text IR positions), exit status 1, no\n"
	"output.\n"
	"\n"
	"  -o OUT.dpir  the IR to write\n"
	"  --rules      list the rewrite table: OP, then what it becomes\n"
	"  --help       this text\n";

/* Rewrites in into a new function; NULL with err set on failure. */
static Fn *
legalize(const Fn *in, Err *err)
{
	Fn *out = dp_new(in->name, "legalize");
	Lz z = { .in = in, .out = out, .err = err };
	int i;

	out->weights = in->weights ? dp_strdup(out->arena, in->weights) : NULL;
	out->whash = in->whash ? dp_strdup(out->arena, in->whash) : NULL;
	out->wsize = in->wsize;
	for (i = 0; i < in->ndep; i++)
		dp_adddep(out, in->dep[i].path, in->dep[i].hash);
	z.map = dp_alloc(out->arena, (size_t)in->nval + 1, sizeof *z.map);
	for (i = 0; i < in->nop; i++) {
		z.at = i;
		if (rewrite(&z, &in->op[i]) != 0) {
			dp_free(out);
			return NULL;
		}
	}
	for (i = 0; i < in->nout; i++)
		dp_addport(out, in->out[i].name, z.map[in->out[i].val]);
	lz_dropdead(&z);
	dp_canon(out);
	return out;
}

int
main(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	Fn *fn, *lf;
	Err err = {0};

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--rules")) {
			print_rules(stdout);
			return 0;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!in && argv[i][0] != '-')
			in = argv[i];
		else {
			fprintf(stderr, "dp-legalize: bad argument %s (see --help)\n", argv[i]);
			return 1;
		}
	}
	if (!in || !out) {
		fprintf(stderr, "dp-legalize: need IN.dpir and -o OUT.dpir (see --help)\n");
		return 1;
	}
	if (dp_read(in, &fn, &err)) {
		dp_report(in, "legalize", &err);
		return 1;
	}
	if (fn->npart) {
		fprintf(stderr, "%s: legalize: the IR is already partitioned (stage %s)\n", in,
		        fn->stage);
		return 1;
	}
	if (!(lf = legalize(fn, &err)) || dp_write(out, lf, &err)) {
		dp_report(in, "legalize", &err);
		return 1;
	}
	dp_free(lf);
	dp_free(fn);
	return 0;
}
