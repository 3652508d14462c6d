/* h2d.cu: what a program's input costs to reach the GPU: N bytes (a batch
 * of 32 224x224 RGB images in f32 by default) copied host->device from
 * page-locked memory (cudaHostAlloc, as a program's staging is), from
 * ordinary memory (the driver stages it itself), and from page-locked
 * memory as a node of a CUDA graph; the median of RUNS copies each, timed
 * by CUDA events.  A GPU machine only:
 *
 *   nvcc -O2 -arch=sm_90 bench/h2d.cu -o h2d && ./h2d [N [RUNS]]
 *
 * (bench/RESULTS.md, 2026-11-28: 355 us page-locked, 1670-1706 us from
 * ordinary memory for 19 MB on the H100.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "h2d: %s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static cudaStream_t st;
static cudaEvent_t ea, eb;

/* the median of runs copies of n bytes from src, or of runs graph launches */
static double
timed(void *dst, const void *src, size_t n, int runs, cudaGraphExec_t ge)
{
	std::vector<float> t;
	float ms;

	for (int i = 0; i < runs; i++) {
		CK(cudaEventRecord(ea, st));
		if (ge)
			CK(cudaGraphLaunch(ge, st));
		else
			CK(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, st));
		CK(cudaEventRecord(eb, st));
		CK(cudaEventSynchronize(eb));
		CK(cudaEventElapsedTime(&ms, ea, eb));
		t.push_back(ms);
	}
	std::sort(t.begin(), t.end());
	return t[t.size() / 2] * 1e3;
}

int
main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 32 * 3 * 224 * 224 * sizeof(float);
	int runs = argc > 2 ? atoi(argv[2]) : 20;
	unsigned char *pin, *pg = (unsigned char *)malloc(n), *d;
	cudaGraph_t gr;
	cudaGraphExec_t ge;

	if (pg == NULL || runs < 1) {
		fprintf(stderr, "usage: h2d [BYTES [RUNS]]\n");
		return 2;
	}
	CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CK(cudaHostAlloc((void **)&pin, n, cudaHostAllocDefault));
	CK(cudaMalloc((void **)&d, n));
	CK(cudaEventCreate(&ea));
	CK(cudaEventCreate(&eb));
	memset(pin, 1, n);
	memset(pg, 1, n);
	for (int k = 0; k < 3; k++) {
		printf("%zu bytes from page-locked memory: %.1f us\n", n, timed(d, pin, n, runs, NULL));
		printf("%zu bytes from ordinary memory: %.1f us\n", n, timed(d, pg, n, runs, NULL));
	}
	CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
	CK(cudaMemcpyAsync(d, pin, n, cudaMemcpyHostToDevice, st));
	CK(cudaStreamEndCapture(st, &gr));
	CK(cudaGraphInstantiate(&ge, gr, 0));
	printf("%zu bytes from page-locked memory in a CUDA graph: %.1f us\n", n,
	       timed(d, pin, n, runs, ge));
	return 0;
}
