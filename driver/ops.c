/* ops.c: devproc ops: the op table's classes and devices; --aten: Core ATen coverage of import. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver.h"

__attribute__((format(printf, 1, 2))) static _Noreturn void
die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "devproc: ops: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* The devices of a mask, comma-separated ("cpu,cuda"). */
static const char *
devstr(int mask)
{
	static char buf[64];
	buf[0] = 0;
	for (int d = 0; d < DEV_N; d++)
		if (mask & (1 << d)) {
			size_t n = strlen(buf);
			snprintf(buf + n, sizeof buf - n, "%s%s", n ? "," : "", dp_dev_name[d]);
		}
	return buf;
}

/* devproc ops: every op of formats/ops.h with its class, form and devices. */
static int
list_ops(void)
{
	int ndev[DEV_N] = { 0 };
	for (int i = 0; i < DP_NOP; i++) {
		printf("%-34s %-12s %-10s %s\n", dp_op_name[i], dp_class_name[dp_op_class[i]],
		       dp_form_name[dp_op_form[i]], devstr(dp_op_devs[i]));
		for (int d = 0; d < DEV_N; d++)
			ndev[d] += (dp_op_devs[i] >> d) & 1;
	}
	printf("%d ops (%s %d, %s %d)\n", DP_NOP, dp_dev_name[DEV_CPU], ndev[DEV_CPU],
	       dp_dev_name[DEV_CUDA], ndev[DEV_CUDA]);
	return 0;
}

/* One line of dp-import --targets: TARGET \t OP [\t NOTE]. */
typedef struct Atarget {
	char *name, *op, *note;
	int devs;              /* the devices that can run it */
	int core;              /* named in the Core ATen list */
} Atarget;

/* Runs ROOT/bin/dp-import --targets and returns its output. */
char *
import_targets(const char *root)
{
	char path[4096];
	if (snprintf(path, sizeof path, "%s/bin/dp-import", root) >= (int)sizeof path)
		die("path too long: %s/bin/dp-import", root);
	int fd[2];
	if (pipe(fd))
		die("pipe: %s", strerror(errno));
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execl(path, path, "--targets", (char *)NULL);
		fprintf(stderr, "devproc: ops: cannot run %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	for (;;) {
		if (!buf)
			die("out of memory");
		ssize_t k = read(fd[0], buf + len, cap - len - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			die("reading from %s: %s", path, strerror(errno));
		if (k == 0)
			break;
		len += (size_t)k;
		if (cap - len < 2)
			buf = realloc(buf, cap *= 2);
	}
	close(fd[0]);
	buf[len] = 0;
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("%s --targets failed", path);
	return buf;
}

/* Splits the --targets output (in place) into entries. */
static Atarget *
parse_targets(char *text, int *n)
{
	int cap = 0;
	Atarget *t = NULL;
	*n = 0;
	for (char *line = text, *next; *line; line = next) {
		next = strchr(line, '\n');
		if (!next)
			die("dp-import --targets: unterminated last line");
		*next++ = 0;
		if (*n == cap && !(t = realloc(t, (size_t)(cap = cap ? 2 * cap : 256) * sizeof *t)))
			die("out of memory");
		Atarget *e = &t[(*n)++];
		*e = (Atarget){ .name = line };
		char *tab = strchr(line, '\t');
		if (!tab)
			die("dp-import --targets: no IR op for %s", line);
		*tab = 0;
		e->op = tab + 1;
		if ((tab = strchr(e->op, '\t'))) {
			*tab = 0;
			e->note = tab + 1;
		}
		if (e->op[0] == '(')               /* (alias), (dropped), (folded): no op */
			e->devs = (1 << DEV_N) - 1;
		else {
			int k = dp_op_lookup(e->op);
			if (k < 0)
				die("dp-import --targets maps %s to '%s', not an op of formats/ops.h",
				    e->name, e->op);
			e->devs = dp_op_devs[k];
		}
	}
	return t;
}

static void
entry(const Atarget *t)
{
	if (t->note)
		printf("  %-50s %-34s %-8s %s\n", t->name, t->op, devstr(t->devs), t->note);
	else
		printf("  %-50s %-34s %s\n", t->name, t->op, devstr(t->devs));
}

/* devproc ops --aten: the Core ATen overloads of formats/core_aten_ops.txt
 * against the targets dp-import converts. */
static int
coverage(const char *root)
{
	int nt;
	char *out = import_targets(root);
	Atarget *t = parse_targets(out, &nt);

	char path[4096], *text;
	size_t len;
	Err err = { 0 };
	snprintf(path, sizeof path, "%s/formats/core_aten_ops.txt", root);
	if (dp_slurp(path, &text, &len, &err))
		die("%s: %s", path, err.msg);
	int ncore = 0, cap = 0, *match = NULL;  /* per Core overload: its Atarget, or -1 */
	char **core = NULL;
	for (char *line = text, *next; line && *line; line = next) {
		if ((next = strchr(line, '\n')))
			*next++ = 0;
		line += strspn(line, " \t\r");
		line[strcspn(line, " \t\r")] = 0;
		if (!*line || *line == '#')
			continue;
		if (ncore == cap) {
			cap = cap ? 2 * cap : 256;
			core = realloc(core, (size_t)cap * sizeof *core);
			match = realloc(match, (size_t)cap * sizeof *match);
			if (!core || !match)
				die("out of memory");
		}
		/* "abs" is aten.abs.default, "add.Tensor" aten.add.Tensor */
		size_t n = strlen(line) + 16;
		char *name = malloc(n);
		if (!name)
			die("out of memory");
		snprintf(name, n, "%s%s%s", strncmp(line, "aten.", 5) ? "aten." : "", line,
		         strchr(strncmp(line, "aten.", 5) ? line : line + 5, '.') ? "" : ".default");
		match[ncore] = -1;
		for (int i = 0; i < ncore; i++)
			if (!strcmp(core[i], name))
				die("%s: %s is listed twice", path, name);
		for (int i = 0; i < nt; i++)
			if (!strcmp(t[i].name, name)) {
				match[ncore] = i;
				t[i].core = 1;
			}
		core[ncore++] = name;
	}

	int nsup = 0, ndev[DEV_N] = { 0 };
	for (int i = 0; i < ncore; i++)
		if (match[i] >= 0) {
			nsup++;
			for (int d = 0; d < DEV_N; d++)
				ndev[d] += (t[match[i]].devs >> d) & 1;
		}
	printf("Core ATen overloads (formats/core_aten_ops.txt) that dp-import converts\n"
	       "(stages/import/atab.c), with the IR op and the devices that can run it:\n\n");
	printf("supported (%d):\n", nsup);
	for (int i = 0; i < ncore; i++)
		if (match[i] >= 0)
			entry(&t[match[i]]);
	printf("\nunsupported (%d):\n", ncore - nsup);
	for (int i = 0; i < ncore; i++)
		if (match[i] < 0)
			printf("  %s\n", core[i]);
	int nother = 0;
	for (int i = 0; i < nt; i++)
		nother += !t[i].core;
	printf("\ntraining-IR (non-core) targets dp-import also converts (%d):\n", nother);
	for (int i = 0; i < nt; i++)
		if (!t[i].core)
			entry(&t[i]);
	printf("\nImport converts %d ATen targets: %d Core ATen, %d training-IR (non-core).\n",
	       nt, nt - nother, nother);
	printf("Core ATen coverage: %d/%d overloads (%s %d, %s %d)\n", nsup, ncore,
	       dp_dev_name[DEV_CPU], ndev[DEV_CPU], dp_dev_name[DEV_CUDA], ndev[DEV_CUDA]);

	for (int i = 0; i < ncore; i++)
		free(core[i]);
	free(core);
	free(match);
	free(text);
	free(out);
	free(t);
	return fflush(stdout) || ferror(stdout) ? 1 : 0;
}

int
cmd_ops(int argc, char **argv, const char *root)
{
	int aten = 0;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--aten"))
			aten = 1;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs("usage: devproc ops [--aten]   (see devproc --help)\n", stdout);
			return 0;
		} else
			die("unknown argument '%s' (see devproc --help)", argv[i]);
	}
	return aten ? coverage(root) : list_ops();
}
