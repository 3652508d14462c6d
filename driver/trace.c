/* trace.c: devproc trace BUILDDIR: the last ninja run's edges, from
 * .ninja_log, as Chrome/Perfetto trace JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

typedef struct Ev {
	int first, nout;        /* its log entries: e[first], and nout in all */
	int64_t start, end;
	int lane;
} Ev;

/* A JSON string: quotes, backslashes and control bytes escaped; bytes that
 * are not well-formed UTF-8 become U+FFFD, so the output is always valid. */
static void
jstr(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	fputc('"', f);
	while (*p) {
		unsigned c = *p;
		if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", c);
			p++;
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			p++;
		} else if (c < 0x80) {
			fputc((int)c, f);
			p++;
		} else {
			int n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
			int ok = n > 0;
			for (int k = 1; ok && k < n; k++)
				ok = (p[k] & 0xc0) == 0x80;
			if (ok && n == 3)   /* no overlong forms or surrogates */
				ok = !(c == 0xe0 && p[1] < 0xa0) && !(c == 0xed && p[1] >= 0xa0);
			if (ok && n == 4)
				ok = !(c == 0xf0 && p[1] < 0x90) && !(c == 0xf4 && p[1] >= 0x90);
			if (ok) {
				fwrite(p, 1, (size_t)n, f);
				p += n;
			} else {
				fputs("\\ufffd", f);
				p++;
			}
		}
	}
	fputc('"', f);
}

static int
bystart(const void *a, const void *b)
{
	const Ev *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->first - y->first;
}

/* An event's name: "STAGE PIPELINE" for a DevProc artifact, else the
 * output's path. */
static void
evname(const char *path, char *buf, size_t n)
{
	const char *slash = strrchr(path, '/');
	if (slash) {
		const char *dir0 = path, *s;
		for (s = path; s < slash; s++)
			if (*s == '/')
				dir0 = s + 1;
		char pipe[256];
		snprintf(pipe, sizeof pipe, "%.*s", (int)(slash - dir0), dir0);
		const char *stage = stage_of(slash + 1, pipe);
		if (stage) {
			snprintf(buf, n, "%s %.*s", stage, (int)(slash - path), path);
			return;
		}
	}
	snprintf(buf, n, "%s", path);
}

int
cmd_trace(int argc, char **argv)
{
	const char *dir = NULL, *out = NULL;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs("usage: devproc trace BUILDDIR [-o FILE]\n", stdout);
			return 0;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!dir && argv[i][0] != '-')
			dir = argv[i];
		else {
			fputs("usage: devproc trace BUILDDIR [-o FILE]\n", stderr);
			return 1;
		}
	}
	if (!dir) {
		fputs("usage: devproc trace BUILDDIR [-o FILE]\n", stderr);
		return 1;
	}
	NinjaLog log;
	Err err;
	if (ninjalog_read(dir, &log, &err)) {
		fprintf(stderr, "%s: trace: %s\n", dir, err.msg);
		return 1;
	}
	/* the last run's entries; the outputs of one edge share start, end
	 * and command hash */
	Ev *ev = calloc((size_t)log.n + 1, sizeof *ev);
	if (!ev)
		dp_die("out of memory");
	int nev = 0;
	for (int i = 0; i < log.n; i++) {
		const LogEntry *e = &log.e[i];
		if (e->run != log.nrun - 1)
			continue;
		int k;
		for (k = nev - 1; k >= 0; k--) {
			const LogEntry *x = &log.e[ev[k].first];
			if (x->start == e->start && x->end == e->end && !strcmp(x->hash, e->hash))
				break;
		}
		if (k >= 0)
			ev[k].nout++;
		else
			ev[nev++] = (Ev){ i, 1, e->start, e->end, 0 };
	}
	qsort(ev, (size_t)nev, sizeof *ev, bystart);
	/* lanes: each event on the first lane free at its start */
	int64_t *busy = calloc((size_t)nev + 1, sizeof *busy);
	if (!busy)
		dp_die("out of memory");
	int nlane = 0;
	for (int i = 0; i < nev; i++) {
		int l;
		for (l = 0; l < nlane && busy[l] > ev[i].start; l++)
			;
		if (l == nlane)
			nlane++;
		busy[l] = ev[i].end;
		ev[i].lane = l;
	}

	FILE *f = out ? fopen(out, "w") : stdout;
	if (!f) {
		fprintf(stderr, "%s: trace: cannot write: %s\n", out, strerror(errno));
		free(ev);
		free(busy);
		ninjalog_free(&log);
		return 1;
	}
	char name[600];
	fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
	fprintf(f, "  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, \"args\": {\"name\": ");
	snprintf(name, sizeof name, "ninja in %s", dir);
	jstr(f, name);
	fprintf(f, "}}");
	for (int l = 0; l < nlane; l++)
		fprintf(f, ",\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %d, "
		        "\"args\": {\"name\": \"job slot %d\"}}", l, l);
	for (int i = 0; i < nev; i++) {
		const LogEntry *e = &log.e[ev[i].first];
		evname(e->path, name, sizeof name);
		fprintf(f, ",\n  {\"name\": ");
		jstr(f, name);
		fprintf(f, ", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %" PRId64 ", \"dur\": %" PRId64
		        ", \"pid\": 1, \"tid\": %d, \"args\": {\"outputs\": [",
		        strcmp(name, e->path) ? "devproc" : "ninja", e->start * 1000,
		        (e->end - e->start) * 1000, ev[i].lane);
		int k = 0;
		for (int j = ev[i].first; j < log.n && k < ev[i].nout; j++) {
			const LogEntry *x = &log.e[j];
			if (x->start == e->start && x->end == e->end && !strcmp(x->hash, e->hash) &&
			    x->run == e->run) {
				fprintf(f, "%s", k++ ? ", " : "");
				jstr(f, x->path);
			}
		}
		fprintf(f, "]}}");
	}
	fprintf(f, "\n]}\n");
	int bad = ferror(f);
	if (out)
		bad |= fclose(f) != 0;
	else
		bad |= fflush(f) != 0;
	if (bad)
		fprintf(stderr, "%s: trace: write error\n", out ? out : "stdout");
	free(ev);
	free(busy);
	ninjalog_free(&log);
	return bad;
}
