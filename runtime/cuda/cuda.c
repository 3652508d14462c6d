/* cuda.c: the CUDA side of the runtime: opening the device, the memory of
 * the static plan and its events, checked calls, and running each cuda
 * partition eagerly once, then as a captured CUDA graph. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dprt_cuda.h"

static int
errf(char *err, size_t errn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
errf(char *err, size_t errn, const char *fmt, ...)
{
	va_list ap;

	if (errn > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errn, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* 0 when e is cudaSuccess, else -1 with "cuda: CALL: <error string>". */
int
dprt_cuda_ok(cudaError_t e, const char *call, char *err, size_t errn)
{
	if (e == cudaSuccess)
		return 0;
	return errf(err, errn, "cuda: %s: %s", call, cudaGetErrorString(e));
}

/* Checks the last launch. */
int
dprt_cuda_launched(const char *kernel, char *err, size_t errn)
{
	cudaError_t e = cudaGetLastError();

	if (e == cudaSuccess)
		return 0;
	return errf(err, errn, "cuda: launch of %s: %s", kernel, cudaGetErrorString(e));
}

/* Finds a device: the first visible one. */
static int
device(char *err, size_t errn)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess || n == 0) {
		cudaGetLastError();   /* clear it */
		return errf(err, errn, "cuda: cudaGetDeviceCount: %s: no CUDA device (this "
		            "program was built for the cuda target and needs an NVIDIA GPU; "
		            "build it with --target cpu to run on the CPU)",
		            e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
	}
	return dprt_cuda_ok(cudaSetDevice(0), "cudaSetDevice", err, errn);
}

/* Opens the device and allocates the plan. */
int
dprt_cuda_open(dprt_cuda **gp, const dprt_cuda_plan *p, char *err, size_t errn)
{
	dprt_cuda *g;
	const char *env = getenv("DPRT_CUDA_GRAPHS");
	int np = p->nparts > 0 ? p->nparts : 1;

	*gp = NULL;
	if (device(err, errn) != 0)
		return -1;
	g = calloc(1, sizeof *g);
	if (g == NULL)
		return errf(err, errn, "out of memory");
	g->nparts = p->nparts;
	g->graphs = !(env && strcmp(env, "0") == 0);
	env = getenv("DPRT_CUDA_CONV");
	if (env && strcmp(env, "tf32") == 0) {
		g->conv = DPRT_CONV_TF32;
	} else if (env && strcmp(env, "direct") == 0) {
		g->conv = DPRT_CONV_DIRECT;
	} else if (env && *env && strcmp(env, "fp32") != 0) {
		dprt_cuda_close(g);
		return errf(err, errn, "cuda: DPRT_CUDA_CONV is '%.40s': expected fp32, tf32 or "
		            "direct", env);
	}
	/* conv.cu's timing switches */
	env = getenv("DPRT_CUDA_CONV_TILE");
	g->convtile = env && strcmp(env, "64") == 0 ? 64 : env && strcmp(env, "128") == 0 ? 128 : 0;
	if (env && *env && !g->convtile) {
		dprt_cuda_close(g);
		return errf(err, errn, "cuda: DPRT_CUDA_CONV_TILE is '%.40s': expected 64 or 128", env);
	}
	env = getenv("DPRT_CUDA_CONV_VEC");
	g->convvec = !(env && strcmp(env, "0") == 0);
	if (env && *env && strcmp(env, "0") != 0 && strcmp(env, "1") != 0) {
		dprt_cuda_close(g);
		return errf(err, errn, "cuda: DPRT_CUDA_CONV_VEC is '%.40s': expected 0 or 1", env);
	}
	env = getenv("DPRT_CUDA_CONV_PDL");
	g->convpdl = !env || !*env || strcmp(env, "sum") == 0 ? 4 : strcmp(env, "dw") == 0 ? 1 :
	             strcmp(env, "nosplit") == 0 ? 2 : strcmp(env, "all") == 0 ? 3 : 0;
	if (env && *env && strcmp(env, "0") != 0 && !g->convpdl) {
		dprt_cuda_close(g);
		return errf(err, errn, "cuda: DPRT_CUDA_CONV_PDL is '%.40s': expected 0, dw, nosplit, "
		            "all or sum", env);
	}
	env = getenv("DPRT_CUDA_SPLITK");
	g->cluster = env && strcmp(env, "cluster") == 0;
	if (env && *env && strcmp(env, "sum") != 0 && strcmp(env, "cluster") != 0) {
		dprt_cuda_close(g);
		return errf(err, errn, "cuda: DPRT_CUDA_SPLITK is '%.40s': expected sum or cluster", env);
	}
	env = getenv("DPRT_CUDA_MM");
	g->mmlt = env && strcmp(env, "lt") == 0;
	if (env && *env && !g->mmlt) {
		dprt_cuda_close(g);
		return errf(err, errn, "cuda: DPRT_CUDA_MM is '%.40s': expected lt", env);
	}
	g->runs = calloc((size_t)np, sizeof *g->runs);
	g->exec = calloc((size_t)np, sizeof *g->exec);
	g->xev = calloc((size_t)(p->nevents > 0 ? p->nevents : 1), sizeof *g->xev);
	if (g->runs == NULL || g->exec == NULL || g->xev == NULL) {
		dprt_cuda_close(g);
		return errf(err, errn, "out of memory");
	}
	for (; g->nxev < p->nevents; g->nxev++)   /* waited for, never timed */
		if (dprt_cuda_ok(cudaEventCreateWithFlags(&g->xev[g->nxev], cudaEventDisableTiming),
		                 "cudaEventCreateWithFlags", err, errn) != 0) {
			dprt_cuda_close(g);
			return -1;
		}
	if (dprt_cuda_ok(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking),
	                 "cudaStreamCreateWithFlags", err, errn) != 0 ||
	    (p->arena && dprt_cuda_ok(cudaMalloc((void **)&g->arena, p->arena),
	                              "cudaMalloc", err, errn) != 0) ||
	    (p->weights && dprt_cuda_ok(cudaMalloc((void **)&g->weights, p->weights),
	                                "cudaMalloc", err, errn) != 0) ||
	    /* mapped: a generated kernel reads a small input's staging itself
	     * (lower_gpu's copyin; under unified addressing the same pointer) */
	    (p->pinned && dprt_cuda_ok(cudaHostAlloc((void **)&g->pinned, p->pinned,
	                                             cudaHostAllocMapped),
	                               "cudaHostAlloc", err, errn) != 0)) {
		dprt_cuda_close(g);
		return -1;
	}
	*gp = g;
	return 0;
}

/* Frees the state; errors on the way out are ignored. */
void
dprt_cuda_close(dprt_cuda *g)
{
	int i;

	if (g == NULL)
		return;
	if (g->stream)
		cudaStreamSynchronize(g->stream);
	if (g->blasclose)
		g->blasclose(g);
	for (i = 0; g->exec && i < (g->nparts > 0 ? g->nparts : 1); i++)
		if (g->exec[i])
			cudaGraphExecDestroy(g->exec[i]);
	for (i = 0; i < g->capmark; i++)
		cudaEventDestroy(g->ev[i]);
	free(g->ev);
	for (i = 0; i < g->nxev; i++)
		cudaEventDestroy(g->xev[i]);
	free(g->xev);
	free(g->markop);
	free(g->markname);
	cudaFree(g->fault);
	cudaFreeHost((void *)g->seen);
	cudaFree(g->arena);
	cudaFree(g->weights);
	cudaFree(g->w16);
	cudaFree(g->s16);
	cudaFree(g->w3);
	cudaFree(g->s3);
	cudaFree(g->attnct);
	cudaFreeHost(g->pinned);
	if (g->stream)
		cudaStreamDestroy(g->stream);
	cudaGetLastError();
	free(g->runs);
	free(g->exec);
	free(g);
}

/* Copies constants to the device, once. */
int
dprt_cuda_upload(dprt_cuda *g, size_t off, const void *src, size_t n, char *err,
                 size_t errn)
{
	return dprt_cuda_ok(cudaMemcpy(g->weights + off, src, n, cudaMemcpyHostToDevice),
	                    "cudaMemcpy", err, errn);
}

/* The fault record and its flag. */
int
dprt_cuda_faults(dprt_cuda *g, dprt_fault **dev, char *err, size_t errn)
{
	dprt_fault f = {0};
	int *seen = NULL;

	*dev = NULL;
	if (g->fault == NULL) {
		if (dprt_cuda_ok(cudaHostAlloc((void **)&g->seen, sizeof *g->seen, cudaHostAllocMapped),
		                 "cudaHostAlloc", err, errn) != 0)
			return -1;
		*g->seen = 0;
		f.op = -1;
		if (dprt_cuda_ok(cudaHostGetDevicePointer((void **)&seen, (void *)g->seen, 0),
		                 "cudaHostGetDevicePointer", err, errn) != 0 ||
		    dprt_cuda_ok(cudaMalloc((void **)&g->fault, sizeof f), "cudaMalloc", err, errn) != 0)
			return -1;
		f.seen = seen;
		if (dprt_cuda_ok(cudaMemcpy(g->fault, &f, sizeof f, cudaMemcpyHostToDevice),
		                 "cudaMemcpy", err, errn) != 0)
			return -1;
	}
	*dev = g->fault;
	return 0;
}

/* After the stream is idle (or the head event of its copies in pieces
 * reached, all kernels before it): the fault a kernel recorded, as the cpu
 * reports it (runtime/elem.c, dprt_gather); the record is cleared. */
static int
faulted(dprt_cuda *g, char *err, size_t errn)
{
	dprt_fault f, none = {0};

	if (g->seen == NULL || *g->seen == 0)
		return 0;
	if (dprt_cuda_ok(cudaMemcpy(&f, g->fault, sizeof f, cudaMemcpyDeviceToHost),
	                 "cudaMemcpy", err, errn) != 0)
		return -1;
	none.op = -1;
	none.seen = f.seen;
	*g->seen = 0;
	if (dprt_cuda_ok(cudaMemcpy(g->fault, &none, sizeof none, cudaMemcpyHostToDevice),
	                 "cudaMemcpy", err, errn) != 0)
		return -1;
	return errf(err, errn, "op %d (%s): index %lld is out of range for a dimension of size "
	            "%lld", f.op, f.kind == 1 ? "aten.index" : "aten.embedding", f.index, f.size);
}

/* Captures rec into a graph on g's stream and instantiates it. */
static int
capture(dprt_cuda *g, int part, dprt_cuda_rec *rec, char *err, size_t errn)
{
	cudaGraph_t graph = NULL;
	cudaError_t e;
	int rc;

	if (dprt_cuda_ok(cudaStreamBeginCapture(g->stream, cudaStreamCaptureModeThreadLocal),
	                 "cudaStreamBeginCapture", err, errn) != 0)
		return -1;
	rc = rec(g, err, errn);
	e = cudaStreamEndCapture(g->stream, &graph);
	if (rc == 0)
		rc = dprt_cuda_ok(e, "cudaStreamEndCapture", err, errn);
	if (rc == 0)
		rc = dprt_cuda_ok(cudaGraphInstantiate(&g->exec[part], graph, 0),
		                  "cudaGraphInstantiate", err, errn);
	if (graph)
		cudaGraphDestroy(graph);
	return rc;
}

/* Records an event after op's kernels (g->marks set: a traced run); the
 * marks past what could be allocated are dropped. */
void
dprt_cuda_mark(dprt_cuda *g, int op, const char *name)
{
	if (g->nmark == g->capmark) {
		int n = g->capmark ? 2 * g->capmark : 64, i;
		cudaEvent_t *ev = realloc(g->ev, (size_t)n * sizeof *ev);
		int *mo;
		const char **mn;

		if (ev)
			g->ev = ev;
		if ((mo = realloc(g->markop, (size_t)n * sizeof *mo)) != NULL)
			g->markop = mo;
		if ((mn = realloc(g->markname, (size_t)n * sizeof *mn)) != NULL)
			g->markname = mn;
		if (!ev || !mo || !mn)
			return;
		for (i = g->capmark; i < n; i++)
			if (cudaEventCreate(&g->ev[i]) != cudaSuccess)
				break;
		g->capmark = i;
		if (g->nmark == g->capmark)
			return;
	}
	g->markop[g->nmark] = op;
	g->markname[g->nmark] = name;
	cudaEventRecord(g->ev[g->nmark++], g->stream);
}

/* A traced run of a partition: eager, an event before and after each op's
 * kernels, each op's time into the trace, placed at the host's time of the
 * partition's start plus the device time since its first event. */
static int
tracedrun(dprt_cuda *g, dprt_cuda_rec *rec, char *err, size_t errn)
{
	double t0 = dprt_now();
	int i, rc;
	float ms, at;

	g->nmark = 0;
	g->marks = 1;
	dprt_cuda_mark(g, -1, "start");
	rc = rec(g, err, errn);
	g->marks = 0;
	if (rc != 0)
		return -1;
	if (dprt_cuda_ok(cudaStreamSynchronize(g->stream), "cudaStreamSynchronize", err, errn) != 0)
		return -1;
	for (i = 1, at = 0; i < g->nmark; i++) {
		if (cudaEventElapsedTime(&ms, g->ev[i - 1], g->ev[i]) != cudaSuccess)
			ms = 0;
		dprt_trace_add(g->markop[i], g->markname[i], 1, t0 + at * 1e-3, ms * 1e-3);
		at += ms;
	}
	return 0;
}

/* Records event ev of the plan: while the stream is captured, as an
 * external event-record node of the graph (that the host can wait for
 * after a replay); otherwise as an ordinary record (the driver refuses the
 * external flag outside a capture: "the operation cannot be performed in
 * the present state", seen on the H100). */
int
dprt_cuda_record(dprt_cuda *g, int ev, char *err, size_t errn)
{
	enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;

	if (ev < 0 || ev >= g->nxev)
		return errf(err, errn, "cuda: event %d of %d", ev, g->nxev);
	if (dprt_cuda_ok(cudaStreamIsCapturing(g->stream, &cs), "cudaStreamIsCapturing", err,
	                 errn) != 0)
		return -1;
	if (cs == cudaStreamCaptureStatusNone)
		return dprt_cuda_ok(cudaEventRecord(g->xev[ev], g->stream), "cudaEventRecord", err,
		                    errn);
	return dprt_cuda_ok(cudaEventRecordWithFlags(g->xev[ev], g->stream, cudaEventRecordExternal),
	                    "cudaEventRecordWithFlags", err, errn);
}

/* Waits for event ev of the plan. */
int
dprt_cuda_wait(dprt_cuda *g, int ev, char *err, size_t errn)
{
	if (ev < 0 || ev >= g->nxev)
		return errf(err, errn, "cuda: event %d of %d", ev, g->nxev);
	return dprt_cuda_ok(cudaEventSynchronize(g->xev[ev]), "cudaEventSynchronize", err, errn);
}

/* Enqueues one run of a cuda partition: eager, then captured, then
 * replayed (traced: eager, and waited for). */
static int
launch(dprt_cuda *g, int part, dprt_cuda_rec *rec, char *err, size_t errn)
{
	if (part < 0 || part >= g->nparts)
		return errf(err, errn, "cuda: partition %d of %d", part, g->nparts);
	if (dprt_tracing) {
		if (tracedrun(g, rec, err, errn) != 0)
			return -1;
	} else if (g->exec[part] == NULL) {
		if (g->runs[part] == 0 || !g->graphs) {
			if (rec(g, err, errn) != 0)
				return -1;
		} else if (capture(g, part, rec, err, errn) != 0) {
			return -1;
		}
	}
	if (!dprt_tracing && g->exec[part] != NULL &&
	    dprt_cuda_ok(cudaGraphLaunch(g->exec[part], g->stream), "cudaGraphLaunch",
	                 err, errn) != 0)
		return -1;
	g->runs[part]++;
	return 0;
}

/* Runs one cuda partition, waiting for the stream with sync set. */
int
dprt_cuda_run(dprt_cuda *g, int part, dprt_cuda_rec *rec, int sync, char *err, size_t errn)
{
	if (launch(g, part, rec, err, errn) != 0)
		return -1;
	if (sync)
		return dprt_cuda_ok(cudaStreamSynchronize(g->stream), "cudaStreamSynchronize",
		                    err, errn) != 0 ? -1 : faulted(g, err, errn);
	return 0;
}

/* Runs one cuda partition and waits for its head event ev only: the
 * copies in pieces after it go on while the host reads them. */
int
dprt_cuda_run_until(dprt_cuda *g, int part, dprt_cuda_rec *rec, int ev, char *err, size_t errn)
{
	if (launch(g, part, rec, err, errn) != 0 || dprt_cuda_wait(g, ev, err, errn) != 0)
		return -1;
	return faulted(g, err, errn);
}
