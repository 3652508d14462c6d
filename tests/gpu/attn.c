/* attn.c: the kernel library's attention (dprt_cuda_sdpa) against an
 * independent reference, a float64 loop on the cpu over the same random
 * inputs (fresh for every case), for each method (DPRT_CUDA_ATTN=simt,
 * tf32, 3xtf32), each block shape of the tensor-core kernel
 * (DPRT_CUDA_ATTN_RW=1, 2, 4; DPRT_CUDA_ATTN_NW=4 or 8 warps) and with and
 * without keys split over blocks (DPRT_CUDA_ATTN_SPLIT=0): the shapes of
 * ViT-B/16, DeiT-tiny and GPT-2's prefill, tails of rows and keys, causal
 * attention with fewer queries than keys, boolean and added masks
 * broadcast over batch axes, a row whose keys are all masked (zeros), and
 * q, k, v read through strides as windows of one packed qkv tensor (ViT's
 * layout), y written through strides (as transpose(1, 2) of it).  The
 * output is poisoned (NaN) before each run, so an element left unwritten
 * fails.  Prints one line per case
 * and method, "ok" or "FAIL", max|err|/max|ref| against the tolerance
 * (1e-5 for simt and 3xTF32, 5e-3 for TF32); exit 1 on a failure.  The
 * chunks of keys (split over blocks, merged by a second kernel) are also
 * forced as a tuning database would (dprt_sdpa.split).  The decode kernel
 * (attndec.cuh: DPRT_CUDA_ATTN=decode, and the default where the query
 * rows are 8 or fewer) on every case, with its own chunks, none, and 3 as
 * a tuning database would set them, and on decode shapes: one query row
 * against 1 to 1000 keys, masks, a few causal rows, a dead row; method ""
 * is the default choice.
 * With --bench N: each method's time per call instead (median of N runs
 * of CUDA events, after 20 warm-up calls) on the models' shapes. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "dprt_cuda.h"
#include "xrand.h"

typedef struct Case {
	const char *name;
	int B0, B1, L, S, causal, mask;   /* batch axes B0 × B1; mask 0 none, 1 bool, 2 added */
	int maskb0;                       /* the mask has the B0 axis (else broadcast) */
	int deadrow;                      /* bool mask: this row has every key masked (-1 none) */
	int packed;                       /* q, k, v windows of one [B0][L][3][B1][64] (L = S),
	                                     as ViT's qkv, read through strides, and y
	                                     written as [B0][L][B1][64] */
} Case;

static const Case cases[] = {
	{"vit_b16 12x197x197", 1, 12, 197, 197, 0, 0, 0, -1, 0},
	{"deit_tiny 3x197x197", 1, 3, 197, 197, 0, 0, 0, -1, 0},
	{"gpt2 prefill 12x128 causal", 1, 12, 128, 128, 1, 0, 0, -1, 0},
	{"causal 2x3 50x130 (fewer queries)", 2, 3, 50, 130, 1, 0, 0, -1, 0},
	{"tails 2x1 5x7", 2, 1, 5, 7, 0, 0, 0, -1, 0},
	{"one query 4x1x300", 1, 4, 1, 300, 0, 0, 0, -1, 0},
	{"bool mask [L][S] 2x3 70x90, a dead row", 2, 3, 70, 90, 0, 1, 0, 33, 0},
	{"added mask [B0][1][L][S] 2x2 40x150", 2, 2, 40, 150, 0, 2, 1, -1, 0},
	{"causal + added mask 1x12 128x128", 1, 12, 128, 128, 1, 2, 0, -1, 0},
	{"packed qkv 2x3 197x197 (strided)", 2, 3, 197, 197, 0, 0, 0, -1, 1},
	{"packed qkv causal 1x12 128x128 (strided)", 1, 12, 128, 128, 1, 0, 0, -1, 1},
	{"decode 12x1x512 bool mask (a llama step)", 1, 12, 1, 512, 0, 1, 0, -1, 0},
	{"decode 4x1x1 (one key)", 1, 4, 1, 1, 0, 0, 0, -1, 0},
	{"decode 2x3 1x1000 added mask [B0]", 2, 3, 1, 1000, 0, 2, 1, -1, 0},
	{"decode 1x2 4x77 causal", 1, 2, 4, 77, 1, 0, 0, -1, 0},
	{"decode 1x3 3x200 bool mask, a dead row", 1, 3, 3, 200, 0, 1, 0, 1, 0},
	{"batch 32 vit 384x197x197", 32, 12, 197, 197, 0, 0, 0, -1, 0},
};

static int
ok(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "attn: %s: %s\n", what, cudaGetErrorString(e));
		return 0;
	}
	return 1;
}

/* The reference: y = softmax(q·kᵀ·scale + mask)·v in float64, a row with
 * every key masked zeros (as runtime/nn.c). */
static void
reference(const Case *c, const float *q, const float *k, const float *v, const void *mask,
          long long msl, const long long *bstr, float scale, double *y)
{
	int B = c->B0 * c->B1, D = 64;
	double *p = malloc(sizeof(double) * (size_t)c->S);

	for (int b = 0; b < B; b++)
		for (int i = 0; i < c->L; i++) {
			long long mo = (long long)(b / c->B1) * bstr[0] + (long long)(b % c->B1) * bstr[1] +
			               (long long)i * msl;
			double m = -INFINITY, l = 0;
			for (int j = 0; j < c->S; j++) {
				double s = 0;
				int keep = !(c->causal && j > i);
				for (int e = 0; e < D; e++)
					s += (double)q[((long long)b * c->L + i) * D + e] *
					     k[((long long)b * c->S + j) * D + e];
				s *= scale;
				if (c->mask == 1 && !((const unsigned char *)mask)[mo + j])
					keep = 0;
				if (c->mask == 2)
					s += ((const float *)mask)[mo + j];
				p[j] = keep ? s : -INFINITY;
				if (p[j] > m)
					m = p[j];
			}
			for (int j = 0; j < c->S; j++) {
				p[j] = m == -INFINITY ? 0 : exp(p[j] - m);
				l += p[j];
			}
			for (int e = 0; e < D; e++) {
				double o = 0;
				for (int j = 0; j < c->S; j++)
					o += p[j] * v[((long long)b * c->S + j) * D + e];
				y[((long long)b * c->L + i) * D + e] = l > 0 ? o / l : 0;
			}
		}
	free(p);
}

typedef struct Run {
	const Case *c;
	dprt_cuda *g;
	dprt_sdpa a;
	float *dq, *dk, *dv, *dy, *dqkv;
	void *dm;
} Run;

static int
setup(Run *r, const Case *c, dprt_cuda *g, float **hq, float **hk, float **hv, void **hm)
{
	int B = c->B0 * c->B1, D = 64;
	size_t nq = (size_t)B * c->L * D, nk = (size_t)B * c->S * D;
	size_t nm = c->mask ? (size_t)(c->maskb0 ? c->B0 : 1) * c->L * c->S : 0;
	size_t mb = c->mask == 1 ? 1 : 4;

	memset(r, 0, sizeof *r);
	r->c = c, r->g = g;
	*hq = malloc(nq * 4), *hk = malloc(nk * 4), *hv = malloc(nk * 4);
	*hm = nm ? malloc(nm * mb) : NULL;
	for (size_t i = 0; i < nq; i++)
		(*hq)[i] = (float)(1.5 * nrand());
	for (size_t i = 0; i < nk; i++)
		(*hk)[i] = (float)(1.5 * nrand()), (*hv)[i] = (float)nrand();
	for (size_t i = 0; i < nm; i++) {
		if (c->mask == 1) {
			size_t row = i / c->S % c->L;
			((unsigned char *)*hm)[i] = row == (size_t)c->deadrow ? 0 : urand() < 0.7;
		} else {
			((float *)*hm)[i] = urand() < 0.2 ? -INFINITY : (float)(2 * nrand());
		}
	}
	r->a.id = 1, r->a.B = B, r->a.L = c->L, r->a.S = c->S, r->a.E = D, r->a.EV = D;
	r->a.causal = c->causal, r->a.mask = c->mask;
	r->a.msl = c->S, r->a.mss = 1, r->a.nb = 2;
	r->a.bdim[0] = c->B0, r->a.bdim[1] = c->B1;
	r->a.bstr[0] = c->mask && c->maskb0 ? (long long)c->L * c->S : 0;
	r->a.scale = 0.125f;
	if (c->packed) {   /* one buffer [B0][L][3][B1][64]; q, k, v its windows */
		size_t row = 3 * (size_t)c->B1 * D, n = (size_t)c->B0 * c->L * row;
		float *h = malloc(n * 4);
		for (int b = 0; b < B; b++)
			for (int i = 0; i < c->L; i++)
				for (int e = 0; e < D; e++) {
					size_t o = ((size_t)(b / c->B1) * c->L + i) * row + (size_t)(b % c->B1) * D + e;
					size_t x = ((size_t)b * c->L + i) * D + e;
					h[o] = (*hq)[x], h[o + c->B1 * D] = (*hk)[x], h[o + 2 * c->B1 * D] = (*hv)[x];
				}
		if (!ok(cudaMalloc((void **)&r->dqkv, n * 4), "cudaMalloc") ||
		    !ok(cudaMalloc((void **)&r->dy, nq * 4), "cudaMalloc") ||
		    !ok(cudaMemcpy(r->dqkv, h, n * 4, cudaMemcpyHostToDevice), "cudaMemcpy"))
			return -1;
		free(h);
		r->dq = r->dqkv, r->dk = r->dqkv + c->B1 * D, r->dv = r->dqkv + 2 * c->B1 * D;
		r->a.qbs[0] = r->a.kbs[0] = r->a.vbs[0] = (long long)c->L * row;
		r->a.qbs[1] = r->a.kbs[1] = r->a.vbs[1] = D;
		r->a.qrs = r->a.krs = r->a.vrs = (long long)row;
		r->a.ybs[0] = (long long)c->L * c->B1 * D, r->a.ybs[1] = D, r->a.yrs = c->B1 * D;
		return 0;
	}
	if (!ok(cudaMalloc((void **)&r->dq, nq * 4), "cudaMalloc") ||
	    !ok(cudaMalloc((void **)&r->dk, nk * 4), "cudaMalloc") ||
	    !ok(cudaMalloc((void **)&r->dv, nk * 4), "cudaMalloc") ||
	    !ok(cudaMalloc((void **)&r->dy, nq * 4), "cudaMalloc") ||
	    (nm && !ok(cudaMalloc(&r->dm, nm * mb), "cudaMalloc")) ||
	    !ok(cudaMemcpy(r->dq, *hq, nq * 4, cudaMemcpyHostToDevice), "cudaMemcpy") ||
	    !ok(cudaMemcpy(r->dk, *hk, nk * 4, cudaMemcpyHostToDevice), "cudaMemcpy") ||
	    !ok(cudaMemcpy(r->dv, *hv, nk * 4, cudaMemcpyHostToDevice), "cudaMemcpy") ||
	    (nm && !ok(cudaMemcpy(r->dm, *hm, nm * mb, cudaMemcpyHostToDevice), "cudaMemcpy")))
		return -1;
	return 0;
}

static void
teardown(Run *r)
{
	if (r->dqkv)
		cudaFree(r->dqkv);
	else
		cudaFree(r->dq), cudaFree(r->dk), cudaFree(r->dv);
	cudaFree(r->dy), cudaFree(r->dm);
}

static int
call(Run *r)
{
	char err[256];

	if (dprt_cuda_sdpa(r->g, &r->a, r->dq, r->dk, r->dv, r->dm, r->dy, err, sizeof err) != 0) {
		fprintf(stderr, "attn: %s\n", err);
		return -1;
	}
	return 0;
}

/* The methods: DPRT_CUDA_ATTN, DPRT_CUDA_ATTN_RW, DPRT_CUDA_ATTN_SPLIT,
 * tolerance, chunks of keys as a tuning database sets them
 * (dprt_sdpa.split; 0 the kernel's own choice), and DPRT_CUDA_ATTN_NW
 * ("": unset, the kernel's own choice). */
typedef struct Method {
	const char *attn, *rw, *split;
	double tol;
	int chunks;
	const char *nw;
	const char *cl;   /* DPRT_CUDA_ATTN_CLUSTER (NULL: unset) */
} Method;

static const Method methods[] = {
	{"simt", "", "", 1e-5, 0, "", NULL},     {"simt", "", "0", 1e-5, 0, "", NULL},    {"simt", "", "", 1e-5, 3, "", NULL},
	{"3xtf32", "", "", 1e-5, 0, "", NULL},   {"3xtf32", "", "", 1e-5, 3, "", NULL},   {"3xtf32", "1", "", 1e-5, 0, "", NULL},
	{"3xtf32", "2", "", 1e-5, 2, "", NULL},  {"3xtf32", "4", "", 1e-5, 0, "", NULL},
	{"3xtf32", "1", "", 1e-5, 0, "8", NULL}, {"3xtf32", "1", "", 1e-5, 3, "8", NULL},
	{"3xtf32", "1", "", 1e-5, 0, "4", NULL}, {"tf32", "1", "", 5e-3, 0, "8", NULL},
	{"tf32", "", "", 5e-3, 0, "", NULL},     {"tf32", "", "", 5e-3, 3, "", NULL},     {"tf32", "1", "", 5e-3, 2, "", NULL},
	{"tf32", "2", "", 5e-3, 0, "", NULL},    {"tf32", "4", "", 5e-3, 0, "", NULL},
	{"", "", "", 1e-5, 0, "", NULL},         {"decode", "", "", 1e-5, 0, "", NULL},   {"decode", "", "0", 1e-5, 0, "", NULL},
	{"decode", "", "", 1e-5, 3, "", NULL},
	{"decode", "", "", 1e-5, 0, "", "2"}, {"decode", "", "", 1e-5, 0, "", "4"},
	{"decode", "", "", 1e-5, 0, "", "8"},
};

static void
use(const Method *m)
{
	if (*m->attn)
		setenv("DPRT_CUDA_ATTN", m->attn, 1);
	else
		unsetenv("DPRT_CUDA_ATTN");   /* the default choice */
	if (*m->rw)
		setenv("DPRT_CUDA_ATTN_RW", m->rw, 1);
	else
		unsetenv("DPRT_CUDA_ATTN_RW");
	if (*m->split)
		setenv("DPRT_CUDA_ATTN_SPLIT", m->split, 1);
	else
		unsetenv("DPRT_CUDA_ATTN_SPLIT");
	if (*m->nw)
		setenv("DPRT_CUDA_ATTN_NW", m->nw, 1);
	else
		unsetenv("DPRT_CUDA_ATTN_NW");
	if (m->cl)
		setenv("DPRT_CUDA_ATTN_CLUSTER", m->cl, 1);
	else
		unsetenv("DPRT_CUDA_ATTN_CLUSTER");
}

static int
check(dprt_cuda *g)
{
	int fails = 0;

	for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
		const Case *c = &cases[ci];
		Run r;
		float *hq, *hk, *hv, *got;
		void *hm;
		size_t ny = (size_t)c->B0 * c->B1 * c->L * 64;
		double *ref = malloc(ny * sizeof(double)), mref = 0;

		if (ci == sizeof cases / sizeof cases[0] - 1 && getenv("ATTN_QUICK"))
			break;   /* the batch-32 reference takes seconds */
		if (setup(&r, c, g, &hq, &hk, &hv, &hm) != 0)
			return 1;
		reference(c, hq, hk, hv, hm, r.a.msl, r.a.bstr, r.a.scale, ref);
		for (size_t i = 0; i < ny; i++)
			mref = fmax(mref, fabs(ref[i]));
		got = malloc(ny * 4);
		for (size_t mi = 0; mi < sizeof methods / sizeof methods[0]; mi++) {
			const Method *m = &methods[mi];
			double e = 0;
			int nan = 0;

			use(m);
			r.a.split = m->chunks;
			if (!ok(cudaMemset(r.dy, 0xff, ny * 4), "cudaMemset") || call(&r) != 0 ||
			    !ok(cudaDeviceSynchronize(), "the kernel") ||
			    !ok(cudaMemcpy(got, r.dy, ny * 4, cudaMemcpyDeviceToHost), "cudaMemcpy"))
				return 1;
			if (c->packed) {   /* [B0][L][B1][64] back to [B0][B1][L][64] */
				float *t = malloc(ny * 4);
				for (size_t x = 0; x < ny; x++) {
					size_t e = x % 64, i = x / 64 % c->L, b1 = x / 64 / c->L % c->B1;
					size_t b0 = x / 64 / c->L / c->B1;
					t[x] = got[((b0 * c->L + i) * c->B1 + b1) * 64 + e];
				}
				memcpy(got, t, ny * 4);
				free(t);
			}
			for (size_t i = 0; i < ny; i++) {
				if (got[i] != got[i])
					nan++;
				else
					e = fmax(e, fabs(got[i] - ref[i]));
			}
			e /= mref > 0 ? mref : 1;
			printf("%s %-40s %-7s rw=%-1s nw=%-1s split=%-1s chunks=%d cluster=%s: "
			       "max|err|/max|ref| %.2e (tol %.0e)%s\n",
			       nan || !(e <= m->tol) ? "FAIL" : "ok  ", c->name,
			       *m->attn ? m->attn : "default", *m->rw ? m->rw : "-", *m->nw ? m->nw : "-",
			       *m->split ? m->split : "-", m->chunks, m->cl ? m->cl : "-", e, m->tol,
			       nan ? " unwritten or NaN elements" : "");
			fails += nan || !(e <= m->tol);
		}
		free(hq), free(hk), free(hv), free(hm), free(got), free(ref);
		teardown(&r);
	}
	return fails > 0;
}

static int
cmpf(const void *x, const void *y)
{
	float a = *(const float *)x, b = *(const float *)y;

	return (a > b) - (a < b);
}

static int
bench(dprt_cuda *g, int n)
{
	static const int which[] = {0, 1, 2, 10, 11, 16};   /* 11: a llama step */
	static const Method bm[] = {
		{"simt", "", "", 0, 0, "", NULL}, {"3xtf32", "", "", 0, 0, "", NULL}, {"3xtf32", "", "", 0, 4, "", NULL},
		{"tf32", "", "", 0, 0, "", NULL}, {"tf32", "", "", 0, 4, "", NULL}, {"tf32", "1", "", 0, 0, "", NULL},
		{"tf32", "4", "", 0, 0, "", NULL}, {"decode", "", "", 0, 0, "", NULL}, {"decode", "", "0", 0, 0, "", NULL},
		{"decode", "", "", 0, 0, "", "2"}, {"decode", "", "", 0, 0, "", "4"},
		{"decode", "", "", 0, 0, "", "8"},
		{"3xtf32", "1", "", 0, 0, "4", NULL}, {"3xtf32", "1", "", 0, 0, "8", NULL}, {"tf32", "1", "", 0, 0, "8", NULL},
	};
	cudaEvent_t e0, e1;
	float *t = malloc(sizeof(float) * (size_t)n);

	cudaEventCreate(&e0), cudaEventCreate(&e1);
	for (size_t w = 0; w < sizeof which / sizeof which[0]; w++) {
		const Case *c = &cases[which[w]];
		Run r;
		float *hq, *hk, *hv;
		void *hm;

		if (setup(&r, c, g, &hq, &hk, &hv, &hm) != 0)
			return 1;
		for (size_t mi = 0; mi < sizeof bm / sizeof bm[0]; mi++) {
			use(&bm[mi]);
			r.a.split = bm[mi].chunks;
			for (int i = 0; i < 20; i++)
				if (call(&r) != 0)
					return 1;
			for (int i = 0; i < n; i++) {
				cudaEventRecord(e0, g->stream);
				if (call(&r) != 0)
					return 1;
				cudaEventRecord(e1, g->stream);
				if (!ok(cudaEventSynchronize(e1), "the kernel"))
					return 1;
				cudaEventElapsedTime(&t[i], e0, e1);
			}
			qsort(t, (size_t)n, sizeof *t, cmpf);
			printf("bench %-32s %-6s rw=%-1s nw=%-1s chunks=%d cluster=%s: %8.1f us (median of %d)\n",
			       c->name, bm[mi].attn, *bm[mi].rw ? bm[mi].rw : "-", *bm[mi].nw ? bm[mi].nw : "-",
			       bm[mi].chunks, bm[mi].cl ? bm[mi].cl : "-", 1e3 * t[n / 2], n);
		}
		free(hq), free(hk), free(hv), free(hm);
		teardown(&r);
	}
	free(t);
	return 0;
}

int
main(int argc, char **argv)
{
	dprt_cuda g;
	int ndev = 0;

	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		fprintf(stderr, "attn: no CUDA device\n");
		return 2;
	}
	memset(&g, 0, sizeof g);   /* what dprt_cuda_sdpa reads: stream, blasws, tf32 */
	if (!ok(cudaStreamCreate(&g.stream), "cudaStreamCreate") ||
	    !ok(cudaMalloc(&g.blasws, DPRT_BLAS_WORKSPACE), "cudaMalloc"))
		return 1;
	if (argc == 3 && strcmp(argv[1], "--bench") == 0)
		return bench(&g, atoi(argv[2]) > 0 ? atoi(argv[2]) : 100);
	return check(&g);
}
