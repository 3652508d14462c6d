/* attndec.cpp: the decode attention kernel (runtime/cuda/attndec.cuh) run
 * on the host through the emulator of tests/gpu/emu (one thread per CUDA
 * thread, block after block) against a float64 loop, for checking its
 * indexing, masks, chunks and last-block merge where there is no GPU
 * (tests/attn.t; on a GPU tests/gpu/attn.c checks the real thing).  Each
 * case runs with blocks of one warp in one chunk and in chunks of 32 and 64
 * keys, and with blocks of the library's warps (decwarps) in one chunk
 * and (up to 200 keys) in chunks of 64; the counters must be back at zero
 * after each run.  Prints "ok"/"FAIL" per case and chunk; exit 1 on a
 * failure.  Linked with tests/gpu/emux/emux.cpp. */
#include <stdio.h>

#include "dprt_cuda.h"   /* the emulator's */

#include "emux.h"   /* what else of CUDA the kernel uses */

#include "cuda/fastdiv.cuh"
#include "xrand.h"
#include "cuda/attn.cuh"
#include "cuda/attndec.cuh"

struct Case {
	const char *name;
	int B, L, S, E, EV, causal, mask;   /* mask 0 none, 1 bool, 2 added */
	int pos;                            /* bool mask: keys past pos dropped (a decode step), -1 random */
	int deadrow;                        /* bool mask: a row with every key masked, -1 none */
};

static const Case cases[] = {
	{"1 row, 1 key", 2, 1, 1, 64, 64, 0, 0, -1, -1},
	{"1 row, 7 keys", 3, 1, 7, 64, 64, 0, 0, -1, -1},
	{"1 row, 33 keys, bool mask", 2, 1, 33, 64, 64, 0, 1, -1, -1},
	{"llama step 12x1x512, keys past 128 masked", 12, 1, 512, 64, 64, 0, 1, 128, -1},
	{"1 row, 1000 keys, added mask", 2, 1, 1000, 64, 64, 0, 2, -1, -1},
	{"4 rows causal, 300 keys", 2, 4, 300, 64, 64, 1, 0, -1, -1},
	{"3 rows, bool mask, a dead row", 2, 3, 90, 64, 64, 0, 1, -1, 1},
	{"head sizes 40 and 72, 2 rows, 150 keys", 3, 2, 150, 40, 72, 0, 0, -1, -1},
	{"head size 16 (small llama), 1 row, 32 keys, pos 5", 4, 1, 32, 16, 16, 0, 1, 5, -1},
	{"1 row, 1100 keys, bool mask (over 32 chunks)", 1, 1, 1100, 64, 64, 0, 1, -1, -1},
};

template <int NO, int MASK, int D, int W>
static void
launch(int nchunk, int rows, const At &P, const float *q, const float *k, const float *v,
       const void *m, float *y, int chunk, float *part, unsigned *count)
{
	dp_launch(dim3(nchunk, rows), 32 * W, [](auto... a) { sdpadec<NO, MASK, D, W>(a...); })(
		P, q, k, v, m, y, chunk, part, count);
}

template <int NO, int D, int W>
static void
bymask(int mask, int nchunk, int rows, const At &P, const float *q, const float *k,
       const float *v, const void *m, float *y, int chunk, float *part, unsigned *count)
{
	if (mask == 0)
		launch<NO, 0, D, W>(nchunk, rows, P, q, k, v, m, y, chunk, part, count);
	else if (mask == 1)
		launch<NO, 1, D, W>(nchunk, rows, P, q, k, v, m, y, chunk, part, count);
	else
		launch<NO, 2, D, W>(nchunk, rows, P, q, k, v, m, y, chunk, part, count);
}

/* The kernel with blocks of one warp (w 0) or of the library's warps. */
template <int NO, int D>
static void
bywarps(int w, int mask, int nchunk, int rows, const At &P, const float *q, const float *k,
        const float *v, const void *m, float *y, int chunk, float *part, unsigned *count)
{
	if (w)
		bymask<NO, D, decwarps(D)>(mask, nchunk, rows, P, q, k, v, m, y, chunk, part, count);
	else
		bymask<NO, D, 1>(mask, nchunk, rows, P, q, k, v, m, y, chunk, part, count);
}

static int
run(const Case *c)
{
	int fails = 0, B = c->B, L = c->L, S = c->S, E = c->E, EV = c->EV;
	std::vector<float> q((size_t)B * L * E), k((size_t)B * S * E), v((size_t)B * S * EV);
	std::vector<float> fm((size_t)L * S);
	std::vector<unsigned char> bm((size_t)L * S);
	std::vector<double> ref((size_t)B * L * EV), p(S);
	double mref = 0;
	float scale = 1.0f / sqrtf((float)E);

	for (auto &x : q)
		x = (float)(1.5 * nrand());
	for (auto &x : k)
		x = (float)(1.5 * nrand());
	for (auto &x : v)
		x = (float)nrand();
	for (int i = 0; i < L; i++)
		for (int j = 0; j < S; j++) {
			bm[(size_t)i * S + j] = i == c->deadrow ? 0 : c->pos >= 0 ? j <= c->pos : urand() < 0.7;
			fm[(size_t)i * S + j] = urand() < 0.2 ? -INFINITY : (float)(2 * nrand());
		}
	for (int b = 0; b < B; b++)
		for (int i = 0; i < L; i++) {
			double m = -INFINITY, l = 0;
			for (int j = 0; j < S; j++) {
				double s = 0;
				int keep = !(c->causal && j > i);
				for (int e = 0; e < E; e++)
					s += (double)q[((size_t)b * L + i) * E + e] * k[((size_t)b * S + j) * E + e];
				s *= scale;
				if (c->mask == 1 && !bm[(size_t)i * S + j])
					keep = 0;
				if (c->mask == 2)
					s += fm[(size_t)i * S + j];
				p[j] = keep ? s : -INFINITY;
				m = std::max(m, p[j]);
			}
			for (int j = 0; j < S; j++)
				l += p[j] = m == -INFINITY ? 0 : exp(p[j] - m);
			for (int e = 0; e < EV; e++) {
				double o = 0;
				for (int j = 0; j < S; j++)
					o += p[j] * v[((size_t)b * S + j) * EV + e];
				ref[((size_t)b * L + i) * EV + e] = l > 0 ? o / l : 0;
				mref = std::max(mref, fabs(o / (l > 0 ? l : 1)));
			}
		}

	At P;
	memset(&P, 0, sizeof P);
	P.L = L, P.S = S, P.E = E, P.EV = EV, P.CAUSAL = c->causal, P.NB = 1;
	P.MSL = S, P.MSS = 1, P.SCALE = scale;
	P.bdim[0] = B;
	for (int i = 1; i < DPRT_SDPA_MAXB; i++)
		P.bdim[i] = 1;
	P.qbs[0] = (long long)L * E, P.kbs[0] = (long long)S * E, P.vbs[0] = (long long)S * EV;
	P.ybs[0] = (long long)L * EV;
	P.QRS = E, P.KRS = E, P.VRS = EV, P.YRS = EV;
	atdivs(&P);
	const void *mask = c->mask == 1 ? (const void *)bm.data() : c->mask == 2 ? (const void *)fm.data() : NULL;
	/* blocks of one warp: chunks of all, 32 and 64 keys; of the library's
	 * warps: all the keys (head size 64: merged by warp 0, then by every
	 * warp, P.MERGE), and 64 (warps with no slice of their own) */
	static const int chunks[][3] = {{0, 0, 0}, {0, 32, 0}, {0, 64, 0}, {1, 0, 0}, {1, 0, 1}, {1, 64, 0}};
	for (const auto &wc : chunks) {
		int wide = wc[0], chunk = wc[1];
		P.MERGE = wc[2];
		if (P.MERGE && !(E == 64 && EV == 64))
			continue;   /* the every-warp merge is head size 64's only */
		if (wide && chunk && S > 200)
			continue;   /* the emulator's time: 8 warps in many chunks on the short cases */
		int rows = B * L, ch = chunk ? chunk : S, nchunk = (S + ch - 1) / ch;
		std::vector<float> y((size_t)B * L * EV, NAN), part((size_t)rows * nchunk * (EV + 2), NAN);
		std::vector<unsigned> count(rows, 0);
		double err = 0;
		int nan = 0, left = 0;

		if (E == 64 && EV == 64)
			bywarps<2, 64>(wide, c->mask, nchunk, rows, P, q.data(), k.data(), v.data(), mask,
			               y.data(), ch, part.data(), count.data());
		else if ((EV + 31) / 32 == 3)
			bywarps<3, 0>(wide, c->mask, nchunk, rows, P, q.data(), k.data(), v.data(), mask,
			              y.data(), ch, part.data(), count.data());
		else
			bywarps<1, 0>(wide, c->mask, nchunk, rows, P, q.data(), k.data(), v.data(), mask,
			              y.data(), ch, part.data(), count.data());
		for (size_t i = 0; i < y.size(); i++) {
			if (y[i] != y[i])
				nan++;
			else
				err = std::max(err, fabs(y[i] - ref[i]));
		}
		for (unsigned n : count)
			left += n != 0;
		err /= mref > 0 ? mref : 1;
		int bad = nan || left || !(err <= 1e-5);
		printf("%s %-50s %d-warp blocks%s, chunks of %4d (%3d): max|err|/max|ref| %.2e%s%s\n",
		       bad ? "FAIL" : "ok  ", c->name, wide ? decwarps(E == 64 && EV == 64 ? 64 : 0) : 1,
		       P.MERGE ? " (merged in every warp)" : "",
		       ch, nchunk, err, nan ? ", NaN or unwritten" : "",
		       left ? ", counters left nonzero" : "");
		fails += bad;
	}
	return fails;
}

int
main(void)
{
	int fails = 0;

	for (const Case &c : cases)
		fails += run(&c);
	return fails > 0;
}
