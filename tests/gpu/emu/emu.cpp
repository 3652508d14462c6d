/* emu.cpp: the runtime of the host emulation of generated CUDA code (see
 * dprt_cuda.h beside it): plain host memory, memcpy for transfers, a
 * naive sgemm, each partition run eagerly. */
#include <stdio.h>

#include "dprt_cuda.h"

thread_local emu_dim threadIdx, blockIdx;
emu_dim blockDim, gridDim;
emu_block *emu_cur;

/* The threads of emu_run: made as a launch first needs them, never ended
 * (detached, the pool never freed: they wait in cv when the program exits). */
static struct emu_pool {
	std::mutex m;
	std::condition_variable cv, done;
	const std::function<void()> *job;
	int nthreads, B, left;
	long gen;
} *pool;

static void
emu_worker(int t)
{
	long seen = 0;

	threadIdx = {(unsigned)t, 0, 0};
	for (;;) {
		const std::function<void()> *job;
		{
			std::unique_lock<std::mutex> l(pool->m);
			pool->cv.wait(l, [&] { return pool->gen != seen && t < pool->B; });
			seen = pool->gen;
			job = pool->job;
		}
		(*job)();
		std::lock_guard<std::mutex> l(pool->m);
		if (--pool->left == 0)
			pool->done.notify_one();
	}
}

void
emu_run(int B, const std::function<void()> &job)
{
	if (!pool)
		pool = new emu_pool();
	std::unique_lock<std::mutex> l(pool->m);
	for (; pool->nthreads < B; pool->nthreads++)
		std::thread(emu_worker, pool->nthreads).detach();
	pool->job = &job;
	pool->B = B;
	pool->left = B;
	pool->gen++;
	pool->cv.notify_all();
	pool->done.wait(l, [] { return pool->left == 0; });
}

extern "C" {
int
dprt_cuda_open(dprt_cuda **g, const dprt_cuda_plan *p, char *err, size_t errn)
{
	dprt_cuda *c = (dprt_cuda *)calloc(1, sizeof *c);
	c->arena = (unsigned char *)malloc(p->arena + 1);
	memset(c->arena, 0xff, p->arena + 1);   /* NaN, -1: unwritten reads show */
	c->weights = (unsigned char *)calloc(1, p->weights + 1);
	c->pinned = (unsigned char *)calloc(1, p->pinned + 1);
	c->ev = (unsigned char *)calloc(1, (size_t)p->nevents + 1);
	c->nev = p->nevents;
	*g = c;
	return 0;
}
void
dprt_cuda_close(dprt_cuda *g)
{
	if (g) {
		free(g->arena);
		free(g->weights);
		free(g->pinned);
		free(g->ev);
		free(g->s3);
		free(g);
	}
}
int dprt_cuda_ok(cudaError_t e, const char *call, char *err, size_t errn) { return e ? -1 : 0; }
int dprt_cuda_launched(const char *kernel, char *err, size_t errn) { return 0; }
int
dprt_cuda_upload(dprt_cuda *g, size_t off, const void *src, size_t n, char *err, size_t errn)
{
	memcpy(g->weights + off, src, n);
	return 0;
}
int
dprt_cuda_run(dprt_cuda *g, int part, dprt_cuda_rec *rec, int sync, char *err, size_t errn)
{
	return rec(g, err, errn);
}
/* The copies in pieces: each piece is on the host when its copy returns,
 * so an event only checks the order: waited for once after each record. */
int
dprt_cuda_record(dprt_cuda *g, int ev, char *err, size_t errn)
{
	if (ev < 0 || ev >= g->nev)
		return snprintf(err, errn, "emu: event %d of %d", ev, g->nev), -1;
	g->ev[ev] = 1;
	return 0;
}
int
dprt_cuda_wait(dprt_cuda *g, int ev, char *err, size_t errn)
{
	if (ev < 0 || ev >= g->nev || !g->ev[ev])
		return snprintf(err, errn, "emu: event %d waited for but not recorded", ev), -1;
	g->ev[ev] = 0;
	return 0;
}
int
dprt_cuda_run_until(dprt_cuda *g, int part, dprt_cuda_rec *rec, int ev, char *err, size_t errn)
{
	return rec(g, err, errn) != 0 ? -1 : dprt_cuda_wait(g, ev, err, errn);
}
int dprt_cublas_open(dprt_cuda *g, char *err, size_t errn) { return 0; }
int
dprt_cublas_sgemm(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                  int64_t rsa, int64_t csa, const float *B, int64_t rsb, int64_t csb, float *C,
                  int64_t ldc, char *err, size_t errn)
{
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double s = 0;
			for (int64_t k = 0; k < K; k++)
				s += (double)A[i * rsa + k * csa] * B[k * rsb + j * csb];
			C[i * ldc + j] = (float)(alpha * s);
		}
	return 0;
}
int
dprt_cuda_x3init(dprt_cuda *g, size_t wbytes, size_t sbytes, char *err, size_t errn)
{
	g->s3 = (unsigned char *)malloc(sbytes + 1);
	memset(g->s3, 0xff, sbytes + 1);   /* NaN: parts not written show */
	return 0;
}
int
dprt_cuda_x3weight(dprt_cuda *g, size_t off, const float *B, int64_t K, int64_t N, int64_t rsb,
                   int64_t csb, char *err, size_t errn)
{
	return 0;   /* the products read B itself */
}
/* C = alpha·A·B + bias, A's rows of rsa from A, or (split) from g->s3's
 * rows of 3K: [hi | hi | lo]. */
static int
x3(dprt_cuda *g, int split, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
   int64_t rsa, const float *B, int64_t rsb, int64_t csb, const float *bias, float *C,
   int64_t ldc, char *err, size_t errn)
{
	const float *S = (const float *)g->s3;

	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double s = 0;
			for (int64_t k = 0; k < K; k++) {
				double a = A[i * rsa + k];
				if (split) {
					const float *r = S + i * 3 * K + k;
					if (memcmp(&r[0], &r[K], 4) != 0)
						return snprintf(err, errn, "emu: 3xTF32: A's split at [%lld][%lld]: "
						                "its hi parts differ", (long long)i, (long long)k), -1;
					a = (double)r[0] + r[2 * K];
				}
				s += a * B[k * rsb + j * csb];
			}
			C[i * ldc + j] = (float)(alpha * s + (bias ? bias[j] : 0.0));
		}
	return 0;
}
int
dprt_cublaslt_x3(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                 int64_t rsa, const float *B, int64_t rsb, int64_t csb, size_t off3,
                 const float *bias, float *C, int64_t ldc, char *err, size_t errn)
{
	return x3(g, 0, M, N, K, alpha, A, rsa, B, rsb, csb, bias, C, ldc, err, errn);
}
int
dprt_cublaslt_x3s(dprt_cuda *g, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                  int64_t rsa, const float *B, int64_t rsb, int64_t csb, size_t off3,
                  const float *bias, float *C, int64_t ldc, char *err, size_t errn)
{
	return x3(g, 1, M, N, K, alpha, A, rsa, B, rsb, csb, bias, C, ldc, err, errn);
}
cudaError_t
cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t st)
{
	memcpy(d, s, n);
	return 0;
}
cudaError_t
cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t st)
{
	memset(d, v, n);
	return 0;
}
}
