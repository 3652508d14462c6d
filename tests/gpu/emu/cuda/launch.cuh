/* cuda/launch.cuh for the emulator: found before runtime/cuda/launch.cuh
 * (the tests put tests/gpu/emu first on the include path).  The generated
 * code is compiled whole here, as by nvcc -c: DP_LAUNCH(k, grid, block,
 * pdl)(args) runs kernel k through the emulator's dp_launch, the arguments
 * converted to k's parameter types; pdl changes nothing, the emulator
 * running one kernel at a time to its end. */
#ifndef DPRT_LAUNCH_CUH
#define DPRT_LAUNCH_CUH

template <typename... P>
struct dp_emu_call {
	void (*k)(P...);
	dim3 grid, block;

	template <typename... A>
	void operator()(A... a) const
	{
		void (*f)(P...) = k;

		dp_launch(grid, (int)block.x, [f](auto... x) { f(x...); })((P)a...);
	}
};

template <typename... P>
static dp_emu_call<P...>
dp_emu(void (*k)(P...), dim3 grid, dim3 block)
{
	return dp_emu_call<P...>{k, grid, block};
}

#define DP_LAUNCH(k, grid, block, pdl) dp_emu(k, grid, block)

/* no programmatic dependent launch here */
static inline int
dp_pdl_ok(void)
{
	return 0;
}

#endif
