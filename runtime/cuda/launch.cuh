/* launch.cuh: how a program's generated .cu (dp-lower_gpu) launches its
 * kernels: DP_LAUNCH(k, grid, block, pdl)(args...) enqueues kernel k on
 * g->stream, the arguments converted to k's parameter types; pdl nonzero
 * lets the GPU start k's blocks while the kernel before it works
 * (programmatic dependent launch, sm_90 on: cuda/pdl.cuh).
 *
 * The file compiles two ways:
 *  - whole (nvcc -c; tests, CMake): the kernels are the file's own, which
 *    nvcc registers, and DP_LAUNCH launches them by address;
 *  - in halves (devproc build, rules.ninja), side by side: nvcc -fatbin
 *    -DDP_DEVICE compiles the kernels alone (no host pass: no cudafe++, no
 *    host compiler), and the C++ compiler -DDP_HOST the host code alone
 *    (no CUDA front end), which sees only the kernels' declarations.  That
 *    half loads the device half, which dp-link embeds as NAME_gpu_fatbin,
 *    as a CUDA library at init (dp_load) and launches each kernel by the
 *    handle of its name, looked up at its first launch. */
#ifndef DPRT_LAUNCH_CUH
#define DPRT_LAUNCH_CUH

/* Whether the device (0) has programmatic dependent launch: sm_90 on. */
static inline int
dp_pdl_ok(void)
{
	static int ok = -1;

	if (ok < 0) {
		int major = 0;
		ok = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) ==
		             cudaSuccess && major >= 9;
	}
	return ok;
}

/* The configuration of a launch on stream s. */
static inline void
dp_config(cudaLaunchConfig_t *c, cudaLaunchAttribute *at, dim3 grid, dim3 block, cudaStream_t s,
          int pdl)
{
	at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
	at[0].val.programmaticStreamSerializationAllowed = 1;
	*c = cudaLaunchConfig_t{};
	c->gridDim = grid;
	c->blockDim = block;
	c->dynamicSmemBytes = 0;
	c->stream = s;
	c->attrs = at;
	c->numAttrs = pdl && dp_pdl_ok() ? 1 : 0;
}

#ifdef DP_HOST

#include <stdio.h>

/* The device half, loaded once per process (dp_load). */
static cudaLibrary_t dp_lib;

/* Loads the device half (a fatbin image) once; 0, or -1 with a message. */
static int
dp_load(const unsigned char *image, char *err, size_t errn)
{
	static int rc = [&] {   /* once, even with instances made on several threads */
		cudaError_t e = cudaLibraryLoadData(&dp_lib, image, NULL, NULL, 0, NULL, NULL, 0);
		if (e != cudaSuccess && errn > 0)
			snprintf(err, errn, "cuda: loading the program's kernels: %s",
			         cudaGetErrorString(e));
		return e == cudaSuccess ? 0 : -1;
	}();
	if (rc != 0 && errn > 0 && err[0] == 0)
		snprintf(err, errn, "cuda: the program's kernels could not be loaded");
	return rc;
}

/* The handle of kernel name in the device half, or NULL (the launch then
 * fails, and dprt_cuda_launched reports it). */
static inline cudaKernel_t
dp_kernel(const char *name)
{
	cudaKernel_t k = NULL;

	if (cudaLibraryGetKernel(&k, dp_lib, name) != cudaSuccess)
		k = NULL;
	return k;
}

/* The device address of variable name in the device half, or NULL. */
static inline void *
dp_symbol(const char *name)
{
	void *p = NULL;
	size_t n = 0;

	if (cudaLibraryGetGlobal(&p, &n, dp_lib, name) != cudaSuccess)
		p = NULL;
	return p;
}

template <typename F>
struct dp_go;

/* A launch of kernel handle k, whose declaration has type void(P...). */
template <typename... P>
struct dp_go<void(P...)> {
	cudaKernel_t k;
	dim3 grid, block;
	cudaStream_t s;
	int pdl;

	void operator()(P... a) const
	{
		void *args[sizeof...(P) + 1] = {(void *)&a...};
		cudaLaunchAttribute at[1];
		cudaLaunchConfig_t c;

		dp_config(&c, at, grid, block, s, pdl);
		(void)cudaLaunchKernelExC(&c, (const void *)k, args);   /* dprt_cuda_launched reads
		                                                             its error */
	}
};

/* each launch site looks its kernel's handle up once */
#define DP_LAUNCH(k, grid, block, pdl)                                                        \
	dp_go<decltype(k)>{[] {                                                                \
		static cudaKernel_t h_ = dp_kernel(#k);                                        \
		return h_;                                                                     \
	}(), grid, block, g->stream, pdl}

#else

/* A launch of kernel k (the file's own). */
template <typename... P>
struct dp_call {
	void (*k)(P...);
	dim3 grid, block;
	cudaStream_t s;
	int pdl;

	template <typename... A>
	void operator()(A... a) const
	{
		cudaLaunchAttribute at[1];
		cudaLaunchConfig_t c;

		dp_config(&c, at, grid, block, s, pdl);
		(void)cudaLaunchKernelEx(&c, k, (P)a...);   /* dprt_cuda_launched reads its error */
	}
};

template <typename... P>
static inline dp_call<P...>
dp_launch_(void (*k)(P...), dim3 grid, dim3 block, cudaStream_t s, int pdl)
{
	return dp_call<P...>{k, grid, block, s, pdl};
}

#define DP_LAUNCH(k, grid, block, pdl) dp_launch_(k, grid, block, g->stream, pdl)

#endif

#endif
