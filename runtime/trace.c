/* trace.c: the timeline of a run (--trace FILE, --profile of the generated
 * executables): the host code marks the end of each cpu op
 * (DPRT_TRACE_OP, dprt.h), each span running from the mark before it; the
 * CUDA runtime adds each cuda op's kernels, timed by CUDA events
 * (runtime/cuda/cuda.c).  Written as Chrome/Perfetto trace JSON (one
 * complete event per op: "ph":"X", microseconds), or summed per op. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dprtint.h"

typedef struct Ev {
	int op, dev;          /* dev: 0 cpu, 1 cuda */
	const char *name;
	double ts, dur;       /* seconds, dprt_now's clock */
} Ev;

int dprt_tracing;
static Ev *ev;
static size_t nev, cap;
static double mark, t0;
static int failed;            /* out of memory: the trace is incomplete */

void
dprt_trace_start(void)
{
	nev = 0;
	failed = 0;
	t0 = mark = dprt_now();
	dprt_tracing = 1;
}

void
dprt_trace_stop(void)
{
	dprt_tracing = 0;
}

void
dprt_trace_add(int op, const char *name, int dev, double ts, double dur)
{
	if (nev == cap) {
		size_t n = cap ? 2 * cap : 256;
		Ev *e = realloc(ev, n * sizeof *e);
		if (e == NULL) {
			failed = 1;
			return;
		}
		ev = e;
		cap = n;
	}
	ev[nev++] = (Ev){.op = op, .dev = dev, .name = name, .ts = ts, .dur = dur};
}

void
dprt_trace_op(int op, const char *name)
{
	double now = dprt_now();

	dprt_trace_add(op, name, 0, mark, now - mark);
	mark = now;
}

void
dprt_trace_mark(void)
{
	mark = dprt_now();
}

/* A JSON string of s (op and program names: printable ASCII). */
static void
jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

int
dprt_trace_write(const char *path, const char *prog, char *err, size_t errn)
{
	FILE *f;
	size_t i;
	int rc;

	if (failed)
		return dprt_errf(err, errn, "--trace: out of memory");
	f = fopen(path, "w");
	if (f == NULL)
		return dprt_errf(err, errn, "%s: cannot write the trace", path);
	fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n", f);
	fputs("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": ", f);
	jstr(f, prog);
	fputs("}},\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, "
	      "\"args\": {\"name\": \"cpu\"}},\n"
	      "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 2, "
	      "\"args\": {\"name\": \"cuda stream\"}}", f);
	for (i = 0; i < nev; i++) {
		fputs(",\n{\"name\": ", f);
		jstr(f, ev[i].name);
		fprintf(f, ", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": 1, \"tid\": %d, "
		        "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"op\": %d}}",
		        ev[i].dev ? "cuda" : "cpu", ev[i].dev ? 2 : 1, (ev[i].ts - t0) * 1e6,
		        ev[i].dur * 1e6, ev[i].op);
	}
	fputs("\n]}\n", f);
	rc = ferror(f);
	if (fclose(f) != 0 || rc)
		return dprt_errf(err, errn, "%s: cannot write the trace", path);
	return 0;
}

typedef struct Row {
	int op, dev;
	const char *name;
	double sum;
} Row;

static int
cmprow(const void *a, const void *b)
{
	const Row *x = a, *y = b;

	if (x->sum != y->sum)
		return x->sum < y->sum ? 1 : -1;
	return (x->op > y->op) - (x->op < y->op);
}

void
dprt_trace_profile(FILE *f, long runs)
{
	Row *r = calloc(nev ? nev : 1, sizeof *r);
	size_t i, j, n = 0;
	double cpu = 0, gpu = 0;

	if (r == NULL || runs < 1) {
		free(r);
		return;
	}
	for (i = 0; i < nev; i++) {   /* one row per (op, device), in order */
		for (j = 0; j < n; j++)
			if (r[j].op == ev[i].op && r[j].dev == ev[i].dev)
				break;
		if (j == n)
			r[n++] = (Row){.op = ev[i].op, .dev = ev[i].dev, .name = ev[i].name};
		r[j].sum += ev[i].dur;
		*(ev[i].dev ? &gpu : &cpu) += ev[i].dur;
	}
	qsort(r, n, sizeof *r, cmprow);
	fprintf(f, "profile: %ld run%s, mean per run; cpu ops %.1f us, cuda ops %.1f us "
	        "(kernel time, CUDA events)\n", runs, runs == 1 ? "" : "s", cpu * 1e6 / runs,
	        gpu * 1e6 / runs);
	fprintf(f, "%6s  %-6s %10s %6s  %s\n", "op", "device", "us", "share", "name");
	for (i = 0; i < n; i++) {
		double tot = r[i].dev ? gpu : cpu;
		fprintf(f, "%6d  %-6s %10.1f %5.1f%%  %s\n", r[i].op, r[i].dev ? "cuda" : "cpu",
		        r[i].sum * 1e6 / runs, tot > 0 ? 100 * r[i].sum / tot : 0.0, r[i].name);
	}
	free(r);
}
