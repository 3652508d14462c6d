/* emux.h: more of CUDA for the host emulator (tests/gpu/emu), for running
 * a whole decoder step's generated code (tests/gpu.t) and the kernel
 * library's decode attention (tests/attn.t) on the host: the vector
 * types, __ldg, the warp and fence intrinsics the kernels use, the
 * atomics (one lock), the kernel library's attention call (dprt_sdpa, as
 * runtime/dprt_cuda.h declares it; emux.cpp runs attndec.cuh's kernel).
 * Included after the emulator's dprt_cuda.h (-include). */
#ifndef DPRT_EMUX_H
#define DPRT_EMUX_H

#define __grid_constant__
#define __noinline__
enum { DPRT_SDPA_MAXB = 6 };
struct float2 { float x, y; };
struct uint4 { unsigned x, y, z, w; };
template <typename T> static inline T __ldg(const T *p) { return *p; }
template <typename T> static inline T __ldcg(const T *p) { return *p; }
template <typename T> static inline T __ldcs(const T *p) { return *p; }
static inline unsigned
__umulhi(unsigned a, unsigned b)
{
	return (unsigned)(((unsigned long long)a * b) >> 32);
}
static inline void __syncwarp(unsigned = 0xffffffffu) { emu_cur->warp[threadIdx.x / 32].wait(); }
static inline void __threadfence(void) {}
static inline void __threadfence_system(void) {}
extern std::mutex emux_atomic;
static inline unsigned
atomicAdd(unsigned *p, unsigned v)
{
	std::lock_guard<std::mutex> l(emux_atomic);
	unsigned o = *p;
	*p = o + v;
	return o;
}

typedef struct dprt_fault { int op; } dprt_fault;
static inline int
dprt_cuda_faults(dprt_cuda *g, dprt_fault **f, char *err, size_t errn)
{
	(void)g, (void)err, (void)errn;
	*f = NULL;
	return 0;
}
template <typename T, typename U> static inline cudaError_t
cudaMemcpyToSymbol(T &sym, const U *src, size_t n)
{
	memcpy(&sym, src, n);
	return 0;
}
static inline cudaError_t cudaStreamSynchronize(cudaStream_t s) { (void)s; return 0; }

extern "C" {
typedef struct dprt_sdpa {
	int id;
	int B, L, S, E, EV;
	int causal, mask;
	long long msl, mss;
	int nb;
	long long bdim[DPRT_SDPA_MAXB], bstr[DPRT_SDPA_MAXB];
	float scale;
	int split;
	long long qbs[DPRT_SDPA_MAXB], kbs[DPRT_SDPA_MAXB], vbs[DPRT_SDPA_MAXB];
	long long qrs, krs, vrs;
	long long ybs[DPRT_SDPA_MAXB], yrs;
} dprt_sdpa;
int dprt_cuda_sdpa(dprt_cuda *g, const dprt_sdpa *a, const float *q, const float *k,
                   const float *v, const void *mask, float *y, char *err, size_t errn);
int dprt_cuda_sdpa3(dprt_cuda *g, const dprt_sdpa *a, const float *q, const float *k,
                    const float *v, const void *mask, float *y, int64_t K, char *err,
                    size_t errn);
}

#endif
