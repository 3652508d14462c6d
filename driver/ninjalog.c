/* ninjalog.c: reads Ninja's .ninja_log (for devproc stages and trace) and
 * names the stage behind each artifact. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "driver.h"

/* Splits s at the next tab; NULL when there is none. */
static char *
field(char **s)
{
	char *f = *s, *t = f ? strchr(f, '\t') : NULL;
	if (!t)
		return NULL;
	*t = 0;
	*s = t + 1;
	return f;
}

static int
num(const char *s, int64_t *v)
{
	char *e;
	errno = 0;
	long long x = strtoll(s, &e, 10);
	if (errno || e == s || *e)
		return -1;
	*v = x;
	return 0;
}

/* Reads DIR/.ninja_log: a header "# ninja log vN" (5 <= N <= 7), then one
 * line per output of each edge run: start, end (ms since that ninja run
 * began), mtime, output path, command hash, tab-separated.  A run is told
 * from the one before it by its end times starting over (as ninjatracing
 * does); entries rewritten by a log compaction may blur that border. */
int
ninjalog_read(const char *dir, NinjaLog *log, Err *err)
{
	char path[PATH_MAX];
	memset(log, 0, sizeof *log);
	snprintf(path, sizeof path, "%s/.ninja_log", dir);
	FILE *f = fopen(path, "r");
	if (!f) {
		dp_seterr(err, "cannot open %s: %s (has ninja built there?)", path, strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, version = 0;
	int64_t lastend = -1;
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		if (lineno == 1) {
			if (sscanf(line, "# ninja log v%d", &version) != 1 || version < 5 || version > 7) {
				dp_seterr(err, "%s: not a ninja log of version 5 to 7 ('%.40s')", path, line);
				goto bad;
			}
			continue;
		}
		if (!*line || *line == '#')
			continue;
		char *s = line, *a = field(&s), *b = field(&s), *m = field(&s), *p = field(&s);
		LogEntry e = { 0 };
		if (!p || num(a, &e.start) || num(b, &e.end) || num(m, &e.mtime)) {
			dp_seterr(err, "%s:%d: not a ninja log line", path, lineno);
			goto bad;
		}
		if (e.end < lastend)
			log->nrun++;
		lastend = e.end;
		e.run = log->nrun;
		e.path = strdup(p);
		e.hash = strdup(s);
		if (!e.path || !e.hash)
			dp_die("out of memory");
		if (log->n == log->cap) {
			log->cap = log->cap ? 2 * log->cap : 64;
			log->e = realloc(log->e, (size_t)log->cap * sizeof *log->e);
			if (!log->e)
				dp_die("out of memory");
		}
		log->e[log->n++] = e;
	}
	if (log->n)
		log->nrun++;
	free(line);
	fclose(f);
	return 0;
bad:
	free(line);
	fclose(f);
	ninjalog_free(log);
	return -1;
}

const LogEntry *
ninjalog_find(const NinjaLog *log, const char *path)
{
	for (int i = log->n - 1; i >= 0; i--)
		if (!strcmp(log->e[i].path, path))
			return &log->e[i];
	return NULL;
}

void
ninjalog_free(NinjaLog *log)
{
	for (int i = 0; i < log->n; i++) {
		free(log->e[i].path);
		free(log->e[i].hash);
	}
	free(log->e);
	memset(log, 0, sizeof *log);
}

const char *
stage_of(const char *file, const char *pipe)
{
	static const char *const fixed[][2] = {
		{ "1.import.dpir", "import" }, { "weights.bin", "import" },
		{ "2.verify.stamp", "verify" }, { "2.legalize.dpir", "legalize" },
		{ "3.place.dpir", "place" },
		{ "4.partition.dpir", "partition" }, { "5.cpu.c", "lower_cpu" },
		{ "5.cpu.o", "cc" }, { "5.gpu.cu", "lower_gpu" }, { "5.gpu.fatbin", "nvcc" },
	};
	if (!strcmp(file, "5.gpu.o"))   /* the host half alone where configure found */
		return *DP_CXX ? "c++" : "nvcc";   /* a C++ compiler (runtime/cuda/launch.cuh) */
	for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
		if (!strcmp(file, fixed[i][0]))
			return fixed[i][1];
	size_t n = strlen(pipe), fn = strlen(file);
	if (!strcmp(file, pipe))
		return "link";
	if (fn == n + 5 && !strncmp(file, "lib", 3) && !strncmp(file + 3, pipe, n) &&
	    !strcmp(file + 3 + n, ".a"))
		return "link";
	if (fn == n + 2 && !strncmp(file, pipe, n) && !strcmp(file + n, ".h"))
		return "link";
	return NULL;
}
