/* main.c: the import stage: reads a .dp pipeline and the .pt2 archives it
 * names; writes the IR, the weight blob and a Ninja depfile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

static const char usage[] =
	"usage: dp-import PIPELINE.dp -o OUT.dpir -w WEIGHTS.bin [-d DEPFILE]\n"
	"       dp-import --targets\n"
	"\n"
	"Parses the pipeline, inlines every model(\"file.pt2\", ...) it calls (paths\n"
	"relative to the .dp's folder) and writes:\n"
	"  -o OUT.dpir     the IR (DPIR, msgpack), written only when it changes\n"
	"  -w WEIGHTS.bin  the weight blob the IR's constants point into\n"
	"  -d DEPFILE      a Ninja depfile naming the archives read\n"
	"Errors: FILE:LINE:COL: import: MESSAGE on stderr, exit status 1, and no\n"
	"output written.  An archive with ATen targets import does not convert\n"
	"gets one error naming each, with its count and every place the model\n"
	"uses it (file.py:LINE (module.path), from the nodes' metadata); `devproc\n"
	"dump X.pt2` shows an archive's op histogram with those marked.\n"
	"\n"
	"--targets lists the ATen targets import converts (stages/import/atab.c),\n"
	"one a line: TARGET, a tab, the IR op it becomes ('(alias)': the result is\n"
	"its operand, no op; '(dropped)': nothing to run; '(folded)': an int of the\n"
	"operand's static shape, no op) and, after another tab\n"
	"when there are any, its conditions ('needs X off': X must be omitted,\n"
	"None, False or 0).\n";

/* Appends sep (when buf is not empty) and s to buf, truncating. */
static void
addnote(char *buf, size_t cap, const char *sep, const char *s, int len)
{
	size_t n = strlen(buf);
	snprintf(buf + n, cap - n, "%s%.*s", n ? sep : "", len, s);
}

/* --targets: the importer's own table (atab.c) as text, for devproc ops. */
static int
targets(void)
{
	for (int i = 0; i < aten_count(); i++) {
		const Aten *a = aten_entry(i);
		const char *op = a->kind < 0 ? "(dropped)" : a->hook == H_IDENTITY ? "(alias)"
		               : a->hook == H_SYM ? "(folded)" : dp_op_name[a->kind];
		char note[512] = "", off[256] = "";
		if (a->flags & F_INPLACE)
			addnote(note, sizeof note, "; ", "in-place", -1);
		if (a->flags & F_MULTI)
			addnote(note, sizeof note, "; ", "first result only", -1);
		if (a->flags & F_LIST)
			addnote(note, sizeof note, "; ", "one op per result", -1);
		if (a->hook == H_BOOL)
			addnote(note, sizeof note, "; ", "bool operands only", -1);
		if (a->hook == H_TOCOPY || a->hook == H_TYPEAS)
			addnote(note, sizeof note, "; ", "no op when the dtype is unchanged", -1);
		/* the schema's "name:0" arguments: variants import does not do */
		for (const char *s = a->args; *s;) {
			size_t len = strcspn(s, " ");
			const char *colon = memchr(s, ':', len);
			if (colon && (size_t)(colon - s) + 2 == len && colon[1] == '0')
				addnote(off, sizeof off, ", ", s, (int)(colon - s));
			s += len;
			s += strspn(s, " ");
		}
		if (*off) {
			char need[300];
			snprintf(need, sizeof need, "needs %s off", off);
			addnote(note, sizeof note, "; ", need, -1);
		}
		printf("%s\t%s%s%s\n", a->target, op, *note ? "\t" : "", note);
	}
	return fflush(stdout) || ferror(stdout) ? 1 : 0;
}

static const char *
base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static const char *outs[3]; /* -w, -o, -d: removed all when one write fails */

static _Noreturn void
writefail(const char *path, const Err *err)
{
	dp_report(path, "import", err);
	for (int i = 0; i < 3; i++)
		if (outs[i])
			remove(outs[i]);
	exit(1);
}

static void
writeout(const char *path, const void *buf, size_t n)
{
	Err err = { 0 };
	if (dp_write_file(path, buf, n, &err))
		writefail(path, &err);
}

int
main(int argc, char **argv)
{
	const char *in = NULL, *out = NULL, *wout = NULL, *dep = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage, stdout);
			return 0;
		}
		if (strcmp(a, "--targets") == 0) {
			if (argc == 2)
				return targets();
			fputs("dp-import: --targets takes no other argument\n", stderr);
			return 1;
		}
		const char **opt = strcmp(a, "-o") == 0 ? &out : strcmp(a, "-w") == 0 ? &wout
		                 : strcmp(a, "-d") == 0 ? &dep : NULL;
		if (opt) {
			if (i + 1 == argc) {
				fprintf(stderr, "dp-import: %s needs an argument (see --help)\n", a);
				return 1;
			}
			*opt = argv[++i];
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "dp-import: unknown option '%s' (see --help)\n", a);
			return 1;
		} else if (in) {
			fprintf(stderr, "dp-import: more than one pipeline ('%s' and '%s')\n", in, a);
			return 1;
		} else
			in = a;
	}
	if (!in || !out || !wout) {
		fputs(usage, stderr);
		return 1;
	}

	/* read the pipeline */
	Src src = { .path = in };
	Err err = { 0 };
	if (dp_slurp(in, &src.text, &src.len, &err)) {
		dp_report(in, "import", &err);
		return 1;
	}
	const char *b = base(in);
	char *dir = strfmt("%.*s", (int)(b - in), in);
	src.dir = dir;
	const char *dot = strrchr(b, '.');
	char *name = strfmt("%.*s", (int)(dot && dot != b ? (size_t)(dot - b) : strlen(b)), b);

	/* build the IR: parse, inline the models, collect the weights */
	Imp imp = { .src = &src };
	imp_run(&imp, name, b, base(wout));
	Fn *fn = imp.fn;

	/* write, each only when its bytes change; none when one fails */
	outs[0] = wout;
	outs[1] = out;
	outs[2] = dep;
	if (blob_write(&imp.blob, wout, &err))
		writefail(wout, &err);
	if (dp_write(out, fn, &err))
		writefail(out, &err);
	if (dep) {
		char *d = pt2_depfile(&imp, out);
		writeout(dep, d, strlen(d));
		free(d);
	}

	imp_free(&imp);
	free(src.text);
	free(dir);
	free(name);
	return 0;
}
