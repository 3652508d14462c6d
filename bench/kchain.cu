/* kchain.cu: the floor of a chain of dependent kernels in a CUDA graph, as a
 * decode step is one (a Llama step: about 6 kernels a layer, 78 in all):
 * N kernels in a row, each reading what the one before wrote, captured
 * once and replayed; the time a kernel of the chain (replay, host to host,
 * divided by N), with blocks of 128 threads, for a few grid sizes, each
 * launched as an ordinary launch and with programmatic dependent launch
 * (each kernel waits for the one before at its first line, then lets the
 * next start, as the generated kernels do).  A GPU machine only:
 *
 *   nvcc -O2 -arch=sm_90 bench/kchain.cu -o kchain && ./kchain [N [RUNS]]
 *
 * Prints a line per grid size and launch kind; the median of RUNS replays. */
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <chrono>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "kchain: %s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

/* One link: x[i] = x[i]·0.5 + 1, after the kernel before. */
static __global__ void __launch_bounds__(128)
link(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

#if __CUDA_ARCH__ >= 900
	cudaGridDependencySynchronize();
	cudaTriggerProgrammaticLaunchCompletion();
#endif
	if (i < n)
		x[i] = x[i] * 0.5f + 1.0f;
}

static double
chain(float *x, int blocks, int pdl, int n, int runs, cudaStream_t st)
{
	cudaGraph_t gr;
	cudaGraphExec_t ex;
	cudaLaunchAttribute at;
	cudaLaunchConfig_t c = {};
	std::vector<double> t;

	at.id = cudaLaunchAttributeProgrammaticStreamSerialization;
	at.val.programmaticStreamSerializationAllowed = 1;
	c.gridDim = dim3(blocks);
	c.blockDim = dim3(128);
	c.stream = st;
	c.attrs = &at;
	c.numAttrs = pdl ? 1 : 0;
	CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
	for (int k = 0; k < n; k++)
		CK(cudaLaunchKernelEx(&c, link, x, blocks * 128));
	CK(cudaStreamEndCapture(st, &gr));
	CK(cudaGraphInstantiate(&ex, gr, 0));
	for (int r = 0; r < runs + 10; r++) {
		auto t0 = std::chrono::steady_clock::now();
		CK(cudaGraphLaunch(ex, st));
		CK(cudaStreamSynchronize(st));
		auto t1 = std::chrono::steady_clock::now();
		if (r >= 10)
			t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
	}
	CK(cudaGraphExecDestroy(ex));
	CK(cudaGraphDestroy(gr));
	std::sort(t.begin(), t.end());
	return t[t.size() / 2];
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 78, runs = argc > 2 ? atoi(argv[2]) : 200, sms = 0;
	float *x;
	cudaStream_t st;

	if (n < 1 || runs < 1) {
		fprintf(stderr, "usage: kchain [KERNELS [RUNS]]\n");
		return 1;
	}
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	CK(cudaMalloc((void **)&x, (size_t)sms * 64 * 128 * sizeof(float)));
	CK(cudaMemset(x, 0, (size_t)sms * 64 * 128 * sizeof(float)));
	CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	printf("chain of %d dependent kernels in a CUDA graph, median of %d replays, host to host\n",
	       n, runs);
	int grids[] = {1, sms, 4 * sms, 16 * sms, 64 * sms};
	for (int b : grids) {
		double t0 = chain(x, b, 0, n, runs, st), t1 = chain(x, b, 1, n, runs, st);
		printf("%6d blocks of 128: %7.1f us (%.2f a kernel) ordinary, %7.1f us (%.2f a kernel) "
		       "with programmatic dependent launch\n", b, t0, t0 / n, t1, t1 / n);
	}
	return 0;
}
