/* dprt_cuda.h (emulation): runs the kernels dp-lower_gpu generates on the
 * host, one std::thread per CUDA thread of a block, block after block, for
 * checking their index arithmetic where there is no GPU (tests/gpu.t,
 * tests/kernfuzz.t; tests/conformance_cuda.t with DP_TEST_EMULATE=1).
 * Not the real runtime: a 1-D block, the warp intrinsics through per-warp
 * barriers, __shared__ as static (one block runs at a time), products
 * rounded as __fmul_rn rounds them.  The generated code's launches,
 * DP_LAUNCH(k, G, B, pdl)(args), come here through
 * tests/gpu/emu/cuda/launch.cuh as dp_launch(G, B, [](auto... a) {
 * k(a...); })(args). */
#ifndef DPRT_CUDA_H
#define DPRT_CUDA_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <algorithm>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__
#define __constant__
#define __shared__ static
#undef NULL
#define NULL nullptr   /* passed through the generic launch lambda */
#define DPRT_CUDA_MARK(g, op, name) ((void)0)   /* no tracing in the emulator */

typedef int cudaError_t;
typedef void *cudaStream_t;
enum { cudaSuccess = 0 };
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                      cudaMemcpyDeviceToDevice, cudaMemcpyDefault };

struct emu_dim { unsigned x, y, z; };
struct dim3 {
	unsigned x, y, z;
	dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct float4 { float x, y, z, w; };
using std::min;
using std::max;
extern thread_local emu_dim threadIdx, blockIdx;
extern emu_dim blockDim, gridDim;

/* A reusable barrier of n threads. */
struct emu_bar {
	std::mutex m;
	std::condition_variable cv;
	int n = 0, waiting = 0;
	long gen = 0;
	void wait() {
		std::unique_lock<std::mutex> l(m);
		long g = gen;
		if (++waiting == n) {
			waiting = 0;
			gen++;
			cv.notify_all();
			return;
		}
		cv.wait(l, [&] { return gen != g; });
	}
};

struct emu_block {
	emu_bar bar, warp[32];
	unsigned char slot[1024][8];
};
extern emu_block *emu_cur;

static inline float __fmul_rn(float a, float b) { volatile float r = a * b; return r; }
static inline float __fadd_rn(float a, float b) { volatile float r = a + b; return r; }
static inline double __dmul_rn(double a, double b) { volatile double r = a * b; return r; }

/* a load that fetches the line again (ld.global.cv): here, a load */
template <typename T> static T
__ldcv(const T *p)
{
	return *p;
}

template <typename T> static T
emu_xchg(T v, int from)
{
	int t = threadIdx.x, w = t / 32;
	T o;

	memcpy(emu_cur->slot[t], &v, sizeof v);
	emu_cur->warp[w].wait();
	memcpy(&o, emu_cur->slot[w * 32 + from], sizeof o);
	emu_cur->warp[w].wait();
	return o;
}
template <typename T> static T
__shfl_xor_sync(unsigned, T v, int s)
{
	return emu_xchg(v, (threadIdx.x % 32) ^ s);
}
template <typename T> static T
__shfl_sync(unsigned, T v, int src)
{
	return emu_xchg(v, src % 32);
}
template <typename T> static T
__shfl_down_sync(unsigned, T v, int s)
{
	int l = threadIdx.x % 32;
	T o = emu_xchg(v, l + s < 32 ? l + s : l);
	return o;
}
/* every lane's p at once: one exchange, not one a lane */
static inline unsigned
__ballot_sync(unsigned, int p)
{
	int t = threadIdx.x, w = t / 32, v = p != 0;
	unsigned r = 0;

	memcpy(emu_cur->slot[t], &v, sizeof v);
	emu_cur->warp[w].wait();
	for (int s = 0; s < 32; s++) {
		memcpy(&v, emu_cur->slot[w * 32 + s], sizeof v);
		r |= (unsigned)v << s;
	}
	emu_cur->warp[w].wait();
	return r;
}
static inline int
__any_sync(unsigned m, int p)
{
	return __ballot_sync(m, p) != 0;
}
static inline void
__syncthreads(void)
{
	emu_cur->bar.wait();
}
static inline int
__syncthreads_or(int p)
{
	int t = threadIdx.x, r = 0;
	memcpy(emu_cur->slot[t], &p, sizeof p);
	emu_cur->bar.wait();
	for (unsigned s = 0; s < blockDim.x; s++) {
		int q;
		memcpy(&q, emu_cur->slot[s], sizeof q);
		r |= q != 0;
	}
	emu_cur->bar.wait();
	return r;
}

/* emu_run(B, job): job() on the emulator's threads 0..B-1 at once, each
 * with threadIdx.x = t; returns when all have returned.  The threads are
 * made once and kept for the next launch: a thread made anew takes a copy
 * of the runtime's thread-local buffers (the cpu kernels' packing, 336 KB,
 * zeroed at its start), which cost most of an emulated run (emu.cpp). */
void emu_run(int B, const std::function<void()> &job);

/* dp_launch(G, B, [&](auto... a) { k(a...); })(args): k on G blocks of B
 * threads, the blocks in turn (x fastest), each thread taking its index in
 * every block, a barrier between blocks */
template <typename F> struct emu_launch {
	dim3 G;
	int B;
	F f;
	template <typename... A> void operator()(A... args) {
		emu_block *b = new emu_block;
		emu_bar next;
		unsigned long long nb = (unsigned long long)G.x * G.y * G.z;
		blockDim = {(unsigned)B, 1, 1};
		gridDim = {G.x, G.y, G.z};
		b->bar.n = B;
		next.n = B;
		for (int w = 0; w < 32; w++)
			b->warp[w].n = 32;
		emu_cur = b;
		emu_run(B, [&] {
			for (unsigned long long i = 0; i < nb; i++) {
				blockIdx = {(unsigned)(i % G.x), (unsigned)(i / G.x % G.y), (unsigned)(i / G.x / G.y)};
				f(args...);
				if (i + 1 < nb)
					next.wait();   /* the block done before the next starts */
			}
		});
		delete b;
	}
};
template <typename F> static emu_launch<F>
dp_launch(dim3 G, int B, F f)
{
	return emu_launch<F>{G, B, f};
}
template <typename F> static emu_launch<F>
dp_launch(long long G, int B, F f)
{
	return emu_launch<F>{dim3((unsigned)G), B, f};
}

extern "C" {
typedef struct dprt_cuda_plan {
	size_t arena, weights, pinned;
	int nparts, blas, nevents;
} dprt_cuda_plan;
typedef struct dprt_cuda {
	cudaStream_t stream;
	unsigned char *arena, *weights, *pinned;
	void *blas;
	int pdl;
	unsigned char *ev;   /* per event of the plan: recorded, not yet waited for */
	int nev;
	unsigned char *s3;   /* 3xTF32's split of A, as a kernel writes it (cuda/tf32.cuh) */
	int x3off;           /* 0: the split is used (dprt_cuda_x3init) */
} dprt_cuda;
typedef int dprt_cuda_rec(dprt_cuda *g, char *err, size_t errn);
int dprt_cuda_open(dprt_cuda **g, const dprt_cuda_plan *p, char *err, size_t errn);
void dprt_cuda_close(dprt_cuda *g);
int dprt_cuda_ok(cudaError_t e, const char *call, char *err, size_t errn);
int dprt_cuda_launched(const char *kernel, char *err, size_t errn);
int dprt_cuda_upload(dprt_cuda *g, size_t off, const void *src, size_t n, char *err, size_t errn);
int dprt_cuda_run(dprt_cuda *g, int part, dprt_cuda_rec *rec, int sync, char *err, size_t errn);
int dprt_cuda_record(dprt_cuda *g, int ev, char *err, size_t errn);
int dprt_cuda_wait(dprt_cuda *g, int ev, char *err, size_t errn);
int dprt_cuda_run_until(dprt_cuda *g, int part, dprt_cuda_rec *rec, int ev, char *err,
                        size_t errn);
int dprt_cublas_open(dprt_cuda *g, char *err, size_t errn);
int dprt_cublas_sgemm(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha,
                      const float *A, int64_t rsa, int64_t csa, const float *B, int64_t rsb,
                      int64_t csb, float *C, int64_t ldc, char *err, size_t errn);
/* 3xTF32 through cuBLASLt, emulated: the products in double on A and B;
 * dprt_cublaslt_x3s reads A from the split a kernel wrote (hi + lo, its
 * two hi parts equal, else an error). */
int dprt_cuda_x3init(dprt_cuda *g, size_t wbytes, size_t sbytes, char *err, size_t errn);
int dprt_cuda_x3weight(dprt_cuda *g, size_t off, const float *B, int64_t K, int64_t N,
                       int64_t rsb, int64_t csb, char *err, size_t errn);
int dprt_cublaslt_x3(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha,
                     const float *A, int64_t rsa, const float *B, int64_t rsb, int64_t csb,
                     size_t off3, const float *bias, float *C, int64_t ldc, char *err,
                     size_t errn);
int dprt_cublaslt_x3s(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha,
                      const float *A, int64_t rsa, const float *B, int64_t rsb, int64_t csb,
                      size_t off3, const float *bias, float *C, int64_t ldc, char *err,
                      size_t errn);
cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t st);
cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t st);
}

#endif
