/* cuda/pdl.cuh for the emulator: found before runtime/cuda/pdl.cuh (the
 * tests put tests/gpu/emu first on the include path), so that generated
 * code with programmatic dependent launch (tune cuda.pdl 1, the default)
 * runs here too.  The emulator runs one kernel at a time to its end, so a
 * launch is an ordinary one and the wait has nothing to wait for. */
#ifndef DPRT_PDL_CUH
#define DPRT_PDL_CUH

static inline void
dp_pdl_wait(void)
{
}

static inline void
dp_pdl_prefetch(const void *)
{
}

static inline void
dp_pdl_l2(const void *, unsigned)
{
}

#endif
