/* fault.cuh: the device side of the runtime's fault record (dprt_fault,
 * dprt_cuda.h), included by a program's .cu that gathers on the device:
 * dp_fault, the record's address (set at init), and dprt_fault_at, which
 * a kernel calls for an index out of range; the kernel then goes on
 * (reading nothing out of bounds) and the run reports the error. */
#ifndef DPRT_FAULT_CUH
#define DPRT_FAULT_CUH

__device__ dprt_fault *dp_fault;   /* not static: the host half finds it by name */

/* Records (op, pos) where it comes before what is recorded: the smallest
 * op, then the smallest position, as the cpu finds them. */
static __device__ __noinline__ void
dprt_fault_at(int op, int kind, long long pos, long long index, long long size)
{
	volatile dprt_fault *f = dp_fault;

	if (f == NULL)
		return;
	while (atomicCAS((unsigned *)&f->lock, 0u, 1u) != 0u)
		;
	if (f->op < 0 || op < f->op || (op == f->op && pos < f->pos)) {
		f->op = op;
		f->kind = kind;
		f->pos = pos;
		f->index = index;
		f->size = size;
	}
	__threadfence();
	atomicExch((unsigned *)&f->lock, 0u);
	*(volatile int *)f->seen = 1;
	__threadfence_system();
}

#endif
