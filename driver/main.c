/* main.c: the devproc driver: build, gen, dump, parse. */
#include <errno.h>
#include <limits.h>
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
	"                      generate DIR/build.ninja and run ninja in DIR\n"
	"  gen PIPELINE.dp... [--target T] [-C DIR] [-o FILE]\n"
	"                      only generate DIR/build.ninja (or DIR/FILE, for\n"
	"                      pulling into another build with subninja)\n"
	"  dump FILE           print a DPIR file as text IR (or summarize a weight blob)\n"
	"  parse TEXT -o OUT.dpir\n"
	"                      read text IR, verify it and write it as DPIR\n"
	"  help                this text\n"
	"\n"
	"options:\n"
	"  --target T          a target mapping: a name under targets/ (cpu) or a file\n"
	"                      path (default: cpu)\n"
	"  -C DIR              the build folder (default: build)\n"
	"  -j N                parallel jobs for ninja\n"
	"\n"
	"Each pipeline NAME.dp builds into DIR/NAME/: the stage artifacts\n"
	"1.import.dpir, weights.bin, 3.place.dpir, 4.partition.dpir, 5.cpu.c, and\n"
	"the executable DIR/NAME/NAME, DIR/NAME/libNAME.a and DIR/NAME/NAME.h.\n";

static void
die(const char *fmt, const char *a)
{
	fprintf(stderr, "devproc: ");
	fprintf(stderr, fmt, a);
	fputc('\n', stderr);
	exit(1);
}

/* The DevProc source/install folder: $DEVPROC_ROOT, else the folder above
 * the one holding this executable (ROOT/bin/devproc). */
static char *
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
	Gen g = { .root = root, .dir = "build", .target = "cpu", .file = "build.ninja" };
	const char *jobs = NULL;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--target") == 0 && i + 1 < argc)
			g.target = argv[++i];
		else if (strncmp(a, "--target=", 9) == 0)
			g.target = a + 9;
		else if (strcmp(a, "-C") == 0 && i + 1 < argc)
			g.dir = argv[++i];
		else if (strcmp(a, "-o") == 0 && i + 1 < argc && !run)
			g.file = argv[++i];
		else if (strcmp(a, "-j") == 0 && i + 1 < argc)
			jobs = argv[++i];
		else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage, stdout);
			return 0;
		} else if (a[0] == '-')
			die("unknown option '%s' (see devproc --help)", a);
		else if (g.npipe < (int)(sizeof g.pipe / sizeof *g.pipe))
			g.pipe[g.npipe++] = a;
		else
			die("too many pipelines (at most %s)", "64");
	}
	if (!g.npipe)
		die("%s: no pipeline given (devproc build PIPELINE.dp)", run ? "build" : "gen");
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
	die("unknown command '%s' (see devproc --help)", cmd);
}
