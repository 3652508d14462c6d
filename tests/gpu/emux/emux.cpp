/* emux.cpp: the kernel library's attention for the host emulator
 * (emux.h): dprt_cuda_sdpa as runtime/cuda/attn.cu sets up the geometry,
 * then always the decode kernel of attndec.cuh with blocks of one warp, in
 * chunks of 32 keys merged by the last block of each row (its own counters
 * and partials). */
#include <stdio.h>

#include "dprt_cuda.h"
#include "emux.h"
#include "cuda/fastdiv.cuh"
#include "cuda/attn.cuh"
#include "cuda/attndec.cuh"
#include "cuda/tf32.cuh"   /* the emulator's: dp_x3put */

std::mutex emux_atomic;

template <int NO, int MASK, int D>
static void
run(int nchunk, int rows, const At &P, const float *q, const float *k, const float *v,
    const void *m, float *y, int chunk, float *part, unsigned *count)
{
	dp_launch(dim3(nchunk, rows), 32, [](auto... a) { sdpadec<NO, MASK, D, 1>(a...); })(
		P, q, k, v, m, y, chunk, part, count);
}

template <int NO>
static void
bymask(int mask, int nchunk, int rows, const At &P, const float *q, const float *k,
       const float *v, const void *m, float *y, int chunk, float *part, unsigned *count)
{
	if (mask == 0)
		run<NO, 0, 0>(nchunk, rows, P, q, k, v, m, y, chunk, part, count);
	else if (mask == 1)
		run<NO, 1, 0>(nchunk, rows, P, q, k, v, m, y, chunk, part, count);
	else
		run<NO, 2, 0>(nchunk, rows, P, q, k, v, m, y, chunk, part, count);
}

extern "C" int
dprt_cuda_sdpa(dprt_cuda *g, const dprt_sdpa *a, const float *q, const float *k,
               const float *v, const void *mask, float *y, char *err, size_t errn)
{
	At P;
	int rows = a->B * a->L;
	int chunk = 32, nchunk = (a->S + chunk - 1) / chunk;

	(void)g;
	if ((long long)a->B * a->L * a->EV == 0)
		return 0;
	if (a->EV > 64 || a->E > DEC_MAXE) {
		snprintf(err, errn, "emux: head sizes %d and %d", a->E, a->EV);
		return -1;
	}
	P = atgeom(a);
	std::vector<float> part((size_t)rows * nchunk * (a->EV + 2));
	std::vector<unsigned> count(rows, 0);
	if (a->EV <= 32)
		bymask<1>(a->mask, nchunk, rows, P, q, k, v, mask, y, chunk, part.data(), count.data());
	else
		bymask<2>(a->mask, nchunk, rows, P, q, k, v, mask, y, chunk, part.data(), count.data());
	for (unsigned c : count)
		if (c != 0) {
			snprintf(err, errn, "emux: attention's counters left nonzero");
			return -1;
		}
	return 0;
}

/* As attn.cu's: y, then (where the products take splits) its split. */
extern "C" int
dprt_cuda_sdpa3(dprt_cuda *g, const dprt_sdpa *a, const float *q, const float *k,
                const float *v, const void *mask, float *y, int64_t K, char *err, size_t errn)
{
	long long n = (long long)a->B * a->L * a->EV;

	if (dprt_cuda_sdpa(g, a, q, k, v, mask, y, err, errn) != 0)
		return -1;
	if (!g->x3off && g->s3)
		for (long long i = 0; i < n; i++)
			dp_x3put((float *)g->s3, (long long)K, i, y[i]);
	return 0;
}
