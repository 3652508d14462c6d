/* main.c: the devproc driver: build, gen, dump, parse, stages, trace, ops,
 * tensor, tune. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "driver.h"

static const char usage[] =
	"usage: devproc COMMAND [options]\n"
	"\n"
	"commands:\n"
	"  build PIPELINE.dp... [--target T] [-C DIR] [-j N]\n"
	"                      generate DIR/build.ninja and run ninja in DIR; the\n"
	"                      pipelines built in DIR before stay in the graph\n"
	"                      (while their .dp files exist)\n"
	"  gen PIPELINE.dp... [--target T] [-C DIR] [-o FILE]\n"
	"                      only generate DIR/build.ninja; with -o, write FILE\n"
	"                      (relative to DIR, or absolute) for a build.ninja in\n"
	"                      DIR to pull in with subninja: no default targets,\n"
	"                      no aliases, no self-regeneration\n"
	"  dump [--dot] [--ir X.dpir] FILE\n"
	"                      print any artifact as text: DPIR as text IR, a\n"
	"                      weight blob's header and sizes (its tensors too,\n"
	"                      from --ir or the 1.import.dpir beside it), a target\n"
	"                      mapping's rules and where each op goes, an archive's\n"
	"                      members (ar, and zip: a .pt2 or an .npz), an .npy's\n"
	"                      or .npz's tensors (as devproc tensor shows them);\n"
	"                      text files as they are; others' size and hash.  --dot: a DPIR file as a Graphviz graph\n"
	"                      (devices coloured, copies marked, partitions boxed)\n"
	"  parse [--no-verify] TEXT -o OUT.dpir\n"
	"                      read text IR, verify it (unless --no-verify) and write it as DPIR\n"
	"  stages BUILDDIR     per pipeline, each stage's artifacts: size, content\n"
	"                      hash, and how long its last run took (.ninja_log;\n"
	"                      * where that run was the latest one doing work)\n"
	"  trace BUILDDIR [-o FILE]\n"
	"                      the edges of the latest ninja run that did any work,\n"
	"                      from .ninja_log, as a Chrome/Perfetto trace (JSON;\n"
	"                      open it in ui.perfetto.dev or chrome://tracing)\n"
	"  ops [--aten]        every IR op (formats/ops.h) with its placement class\n"
	"                      and the devices that can run it, and a count; --aten:\n"
	"                      the Core ATen coverage report: each overload of\n"
	"                      formats/core_aten_ops.txt that import converts (from\n"
	"                      dp-import --targets), with its IR op and devices, the\n"
	"                      unsupported ones, the training-IR (non-core) targets\n"
	"                      import also converts, and the totals\n"
	"  tensor FILE... [--all]\n"
	"                      an .npy file, each member of an .npz or a decoded\n"
	"                      PNG/JPEG: dtype, shape, min, max, mean, std, argmax\n"
	"                      and values (--all: every value)\n"
	"  tensor -o OUT.npy (--image F [--resize R] [--crop C] | --raw F | --values LIST)\n"
	"         [--dtype D] [--shape S]\n"
	"                      make an .npy input without numpy: from a PNG or\n"
	"                      JPEG, raw bytes or a list of numbers (devproc\n"
	"                      tensor --help)\n"
	"  tune PIPELINE.dp [--target cuda] [-o FILE] [--in NAME=F.npy ...]\n"
	"                      on a GPU: measure each convolution's, product's and\n"
	"                      attention's variants and write the fastest per shape\n"
	"                      as a tuning database (formats/tune.md; devproc tune\n"
	"                      --help)\n"
	"  help                this text\n"
	"\n"
	"options:\n"
	"  --apart             link each program without its weight blob: it maps\n"
	"                      DIR/NAME/weights.bin (beside it) at run time, or the\n"
	"                      file its --weights names (dp-link --apart)\n"
	"  --shared-runtime    link each program against lib/libdprt.so (make\n"
	"                      lib/libdprt.so), not the static runtime, for\n"
	"                      development: the link copies no runtime (most of a\n"
	"                      link under make SAN=1); the program then needs that\n"
	"                      library at run time (dp-link --shared-runtime)\n"
	"  --cuda-arch sm_XX   the GPU architecture for nvcc (default: the mapping's\n"
	"                      'device cuda sm_XX' line, sm_90 in targets/cuda)\n"
	"  --target T          a target mapping: a name under targets/ (cpu, cuda) or\n"
	"                      a file path; a name shipped by none, a file in the\n"
	"                      current folder (default: cpu)\n"
	"  -C DIR              the build folder, where ninja runs (default: build)\n"
	"  -j N                parallel jobs for ninja\n"
	"\n"
	"Each pipeline NAME.dp builds into DIR/NAME/ (a file name that is no C\n"
	"identifier: the NAME of its 'pipeline NAME' line): the stage artifacts\n"
	"1.import.dpir, weights.bin, 2.verify.stamp, 2.legalize.dpir, 3.place.dpir,\n"
	"4.partition.dpir, 5.cpu.c, 5.cpu.o (5.gpu.cu, 5.gpu.fatbin, 5.gpu.o for a cuda\n"
	"mapping: the kernels and the host code, compiled side by side), and the\n"
	"executable DIR/NAME/NAME, DIR/NAME/libNAME.a and DIR/NAME/NAME.h.  Paths\n"
	"in the generated file are relative to DIR (or absolute), so it works as\n"
	"a subninja of a build.ninja in DIR.  The tools, the runtime and rules.ninja\n"
	"come from the folder above this executable's, or $DEVPROC_ROOT.\n";

__attribute__((format(printf, 1, 2))) static _Noreturn void
die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "devproc: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* The DevProc source/install folder: $DEVPROC_ROOT, else the folder above
 * the one holding this executable (ROOT/bin/devproc). */
char *
findroot(const char *argv0)
{
	const char *env = getenv("DEVPROC_ROOT");
	static char buf[PATH_MAX];
	if (env && *env) {
		if (!realpath(env, buf))
			die("DEVPROC_ROOT: %s", strerror(errno));
		return buf;
	}
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n <= 0) {
		if (!realpath(argv0, buf))
			die("cannot find the devproc folder; set DEVPROC_ROOT (%s)", strerror(errno));
		n = (ssize_t)strlen(buf);
	}
	buf[n] = 0;
	for (int up = 0; up < 2; up++) {
		char *s = strrchr(buf, '/');
		if (!s)
			die("cannot find the devproc folder from %s; set DEVPROC_ROOT", buf);
		*s = 0;
	}
	return buf;
}

static int
cmd_gen(int argc, char **argv, const char *root, int run)
{
	static Gen g;  /* static: its pipeline list lives until exit */
	g = (Gen){ .root = root, .dir = "build", .target = "cpu", .file = "build.ninja" };
	g.pipe = calloc(argc + 1, sizeof *g.pipe);
	if (!g.pipe)
		die("out of memory%s", "");
	const char *cmd = run ? "build" : "gen";
	const char *jobs = NULL;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--target") == 0 && i + 1 < argc)
			g.target = argv[++i];
		else if (strncmp(a, "--target=", 9) == 0)
			g.target = a + 9;
		else if (strcmp(a, "--cuda-arch") == 0 && i + 1 < argc)
			g.arch = argv[++i];
		else if (strncmp(a, "--cuda-arch=", 12) == 0)
			g.arch = a + 12;
		else if (strcmp(a, "--apart") == 0)
			g.apart = 1;
		else if (strcmp(a, "--shared-runtime") == 0)
			g.shared = 1;
		else if (strcmp(a, "-C") == 0 && i + 1 < argc)
			g.dir = argv[++i];
		else if (strcmp(a, "-o") == 0 && i + 1 < argc && !run) {
			g.file = argv[++i];
			g.sub = 1;
		} else if (strcmp(a, "-j") == 0 && i + 1 < argc)
			jobs = argv[++i];
		else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage, stdout);
			return 0;
		} else if (a[0] == '-')
			die("%s: unknown option or missing argument '%s' (see devproc --help)", cmd, a);
		else
			g.pipe[g.npipe++] = a;
	}
	if (!g.npipe)
		die("%s: no pipeline given (devproc %s PIPELINE.dp)", cmd, cmd);
	if (gen_ninja(&g))
		return 1;
	if (!run)
		return 0;
	char *args[8];
	int n = 0;
	args[n++] = (char *)DP_NINJA;
	args[n++] = "-C";
	args[n++] = (char *)g.dir;
	if (jobs) {
		args[n++] = "-j";
		args[n++] = (char *)jobs;
	}
	args[n] = NULL;
	fflush(stdout);
	execv(DP_NINJA, args);
	die("cannot run ninja: %s", strerror(errno));
	return 1;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return 1;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(cmd, "build") || !strcmp(cmd, "gen"))
		return cmd_gen(argc - 2, argv + 2, findroot(argv[0]), cmd[0] == 'b');
	if (!strcmp(cmd, "dump"))
		return cmd_dump(argc - 2, argv + 2);
	if (!strcmp(cmd, "parse"))
		return cmd_parse(argc - 2, argv + 2);
	if (!strcmp(cmd, "stages"))
		return cmd_stages(argc - 2, argv + 2);
	if (!strcmp(cmd, "trace"))
		return cmd_trace(argc - 2, argv + 2);
	if (!strcmp(cmd, "tensor"))
		return cmd_tensor(argc - 2, argv + 2);
	if (!strcmp(cmd, "ops"))
		return cmd_ops(argc - 2, argv + 2, findroot(argv[0]));
	if (!strcmp(cmd, "tune"))
		return cmd_tune(argc - 2, argv + 2, findroot(argv[0]));
	die("unknown command '%s' (see devproc --help)", cmd);
}
