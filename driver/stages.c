/* stages.c: devproc stages BUILDDIR: each pipeline's artifacts with their
 * size, content hash and last build time from .ninja_log. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"

/* snprintf that says whether it all fit: 0, or -1 when truncated. */
__attribute__((format(printf, 3, 4))) static int
fmt(char *buf, size_t n, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int k = vsnprintf(buf, n, f, ap);
	va_end(ap);
	return k < 0 || (size_t)k >= n ? -1 : 0;
}

typedef struct Found {
	char rel[PATH_MAX];     /* the pipeline folder, relative to BUILDDIR */
} Found;

static int
byrel(const void *a, const void *b)
{
	return strcmp(((const Found *)a)->rel, ((const Found *)b)->rel);
}

/* Collects folders under dir/rel holding a 1.import.dpir, at most depth
 * levels down, skipping dot folders and CMake's own. */
static void
scan(const char *dir, const char *rel, int depth, Found **fd, int *n, int *cap)
{
	char path[PATH_MAX], sub[PATH_MAX];
	DIR *d = fmt(path, sizeof path, "%s%s%s", dir, *rel ? "/" : "", rel) ? NULL : opendir(path);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "CMakeFiles"))
			continue;
		struct stat st;
		char r[PATH_MAX], imp[PATH_MAX];
		if (fmt(sub, sizeof sub, "%s/%s", path, e->d_name) || stat(sub, &st) ||
		    !S_ISDIR(st.st_mode) || fmt(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", e->d_name) ||
		    fmt(imp, sizeof imp, "%s/1.import.dpir", sub))
			continue;
		if (!access(imp, F_OK)) {
			if (*n == *cap) {
				*cap = *cap ? 2 * *cap : 16;
				*fd = realloc(*fd, (size_t)*cap * sizeof **fd);
				if (!*fd)
					dp_die("out of memory");
			}
			snprintf((*fd)[(*n)++].rel, PATH_MAX, "%s", r);
		}
		if (depth > 1)
			scan(dir, r, depth - 1, fd, n, cap);
	}
	closedir(d);
}

/* The base name dp-link was given in folder: from its libBASE.a, else the
 * folder's own name. */
static void
linkbase(const char *folder, const char *rel, char *base, size_t n)
{
	const char *s = strrchr(rel, '/');
	fmt(base, n, "%s", s ? s + 1 : rel);
	DIR *d = opendir(folder);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len > 5 && !strncmp(e->d_name, "lib", 3) && !strcmp(e->d_name + len - 2, ".a")) {
			fmt(base, n, "%.*s", (int)(len - 5), e->d_name + 3);
			break;
		}
	}
	if (d)
		closedir(d);
}

/* Whether build.ninja in dir, where devproc wrote it ("# pipeline NAME"
 * lines), has no pipeline rel: 1 when it has others but not rel, else 0. */
static int
notingraph(const char *dir, const char *rel)
{
	char path[PATH_MAX], line[1024];
	int any = 0, found = 0;
	if (fmt(path, sizeof path, "%s/build.ninja", dir))
		return 0;
	FILE *f = fopen(path, "r");
	while (f && !found && fgets(line, sizeof line, f))
		if (!strncmp(line, "# pipeline ", 11)) {
			any = 1;
			line[strcspn(line, "\n")] = 0;
			found = !strcmp(line + 11, rel);
		}
	if (f)
		fclose(f);
	return any && !found;
}

static void
row(const char *dir, const char *rel, const char *file, const char *stage, const NinjaLog *log,
    int optional)
{
	char path[PATH_MAX * 2], key[PATH_MAX * 2], hx[17] = "-", when[32] = "-";
	fmt(path, sizeof path, "%s/%s/%s", dir, rel, file);
	fmt(key, sizeof key, "%s/%s", rel, file);
	uint64_t h;
	int64_t size;
	Err err;
	if (access(path, F_OK)) {
		if (!optional)
			printf("  %-10s %-22s %s\n", stage, file, "(missing: not built yet, or the stage failed)");
		return;
	}
	if (file_hash(path, &h, &size, &err)) {
		printf("  %-10s %-22s (%s)\n", stage, file, err.msg);
		return;
	}
	dp_hash_hex(h, hx);
	const LogEntry *e = log ? ninjalog_find(log, key) : NULL;
	if (e)
		snprintf(when, sizeof when, "%" PRId64 " ms%s", e->end - e->start,
		         e->run == log->nrun - 1 ? " *" : "");
	printf("  %-10s %-22s %12" PRId64 "  %s  %s\n", stage, file, size, hx, when);
}

int
cmd_stages(int argc, char **argv)
{
	if (argc != 1 || argv[0][0] == '-') {
		int help = argc == 1 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"));
		fputs("usage: devproc stages BUILDDIR\n", help ? stdout : stderr);
		return help ? 0 : 1;
	}
	const char *dir = argv[0];
	struct stat st;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: stages: not a build folder: %s\n", dir,
		        errno ? strerror(errno) : "not a folder");
		return 1;
	}
	NinjaLog log;
	Err err;
	int havelog = ninjalog_read(dir, &log, &err) == 0;
	if (!havelog)
		fprintf(stderr, "%s: stages: %s; no build times\n", dir, err.msg);
	Found *fd = NULL;
	int n = 0, cap = 0;
	scan(dir, "", 4, &fd, &n, &cap);
	if (!n) {
		fprintf(stderr, "%s: stages: no pipeline built here (no NAME/1.import.dpir)\n", dir);
		if (havelog)
			ninjalog_free(&log);
		return 1;
	}
	qsort(fd, (size_t)n, sizeof *fd, byrel);
	printf("  %-10s %-22s %12s  %-16s  %s\n", "stage", "artifact", "bytes", "hash",
	       "last run");
	for (int i = 0; i < n; i++) {
		char folder[PATH_MAX * 2], base[256], f1[300], f2[300], f3[300];
		fmt(folder, sizeof folder, "%s/%s", dir, fd[i].rel);
		linkbase(folder, fd[i].rel, base, sizeof base);
		printf("%s (%s)%s\n", base, folder, notingraph(dir, fd[i].rel) ?
		       "   not in build.ninja: left from an earlier build, no longer built" : "");
		static const char *const fixed[] = { "1.import.dpir", "weights.bin", "2.verify.stamp",
			"2.legalize.dpir", "3.place.dpir", "4.partition.dpir", "5.cpu.c", "5.cpu.o", "5.gpu.cu",
			"5.gpu.fatbin", "5.gpu.o" };
		for (size_t k = 0; k < sizeof fixed / sizeof *fixed; k++)
			row(dir, fd[i].rel, fixed[k], stage_of(fixed[k], base), havelog ? &log : NULL,
			    fixed[k][2] == 'g');
		fmt(f1, sizeof f1, "%s", base);
		fmt(f2, sizeof f2, "lib%s.a", base);
		fmt(f3, sizeof f3, "%s.h", base);
		row(dir, fd[i].rel, f1, "link", havelog ? &log : NULL, 0);
		row(dir, fd[i].rel, f2, "link", havelog ? &log : NULL, 0);
		row(dir, fd[i].rel, f3, "link", havelog ? &log : NULL, 0);
	}
	printf("hash: FNV-1a 64 of the file; of weights.bin, the data hash in its header\n"
	       "(formats/weights.md), which the IR records\n");
	if (havelog)
		printf("last run: how long the stage's last run took; * when that was in the\n"
		       "latest ninja run that did any work\n");
	free(fd);
	if (havelog)
		ninjalog_free(&log);
	return 0;
}
