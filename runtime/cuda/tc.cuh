/* tc.cuh: the pieces of the kernel library's tensor-core products
 * (conv.cu's implicit GEMM, gemm.cu's matrix product): TF32 rounding (tf32.cuh), the
 * mma.sync m16n8k8 tile product, the cp.async copies that fill their rings
 * of shared memory and their ring (tcring), the 3xTF32 split (msplit),
 * ldmatrix of A fragments (ldm4), and one slice of K of a tile (tcslice).
 * Each includer gets its own static copies. */
#ifndef DPRT_TC_CUH
#define DPRT_TC_CUH

#include "tf32.cuh"   /* tf32 */

/* d += a·b on a 16x8x8 tile: a row-major 16x8, b column-major 8x8 */
static __device__ __forceinline__ void
mma(float *d, const unsigned *a, const unsigned *b)
{
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
	             "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
	             : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
	             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* cp.async: n of the 16 (or 4) bytes at src into shared dst, zeros after */
static __device__ __forceinline__ void
cp16(float *dst, const float *src, int n)
{
	unsigned d = (unsigned)__cvta_generic_to_shared(dst);
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(d), "l"(src), "r"(n) : "memory");
}

static __device__ __forceinline__ void
cp4(float *dst, const float *src, int n)
{
	unsigned d = (unsigned)__cvta_generic_to_shared(dst);
	asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" :: "r"(d), "l"(src), "r"(n) : "memory");
}

static __device__ __forceinline__ void
commit(void)
{
	asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* until at most N groups of this thread's copies are in flight */
template <int N>
static __device__ __forceinline__ void
waitcp(void)
{
	asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}

/* Four 8x4 matrices of floats from shared memory, one register each a
 * thread (ldmatrix of 8x8 16-bit elements: lane l gives the address of row
 * l % 8 of matrix l / 8, rows of 16 bytes, 16-byte aligned; the thread of
 * lane l gets row l / 4, float l % 4 of each).  Pointed at row (l & 7) +
 * 8·(l >> 3 & 1), column 4·(l >> 4) of a 16x8 tile, the four are mma's A
 * fragment of it, as four scalar reads would give it. */
static __device__ __forceinline__ void
ldm4(unsigned *r, const float *p)
{
	unsigned a = (unsigned)__cvta_generic_to_shared(p);
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
	             : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a) : "memory");
}

/* x as hi = tf32(x) (its bits), and where SPLIT3 lo = tf32(x - hi): the
 * two parts whose products 3xTF32 sums */
template <int SPLIT3>
static __device__ __forceinline__ void
msplit(float x, unsigned &hi, unsigned &lo)
{
	hi = __float_as_uint(tf32(x));
	if (SPLIT3)
		lo = __float_as_uint(tf32(x - __uint_as_float(hi)));
}

/* A ring of S stages of shared memory over nk slices of K: issue(t) starts
 * slice t's cp.async copies into stage t % S, slice(st) multiplies the
 * slice in stage st; S - 1 slices are on their way while one is
 * multiplied (at batch 1 the slices in flight, not the arithmetic, keep
 * the tensor cores fed).  No copy outlives it. */
template <int S, class Issue, class Slice>
static __device__ __forceinline__ void
tcring(int nk, Issue issue, Slice slice)
{
#pragma unroll
	for (int t = 0; t < S - 1; t++) {
		if (t < nk)
			issue(t);
		commit();   /* empty groups too: the count stays in step */
	}
	for (int t = 0; t < nk; t++) {
		waitcp<S - 2>();   /* slice t has landed, for this thread ... */
		__syncthreads();   /* ... and every thread; slice t - 1 is read */
		if (t + S - 1 < nk)
			issue(t + S - 1);   /* into the stage of slice t - 1 */
		commit();
		slice(t % S);
	}
	waitcp<0>();
}

/* One slice of 16 of K on the tensor cores, each warp adding its
 * (16·MI)x(8·NJ) share of the tile into acc (accumulator e of tile (i, j):
 * row wm·16·MI + i·16 + gq (+8 for e >= 2), column wn·8·NJ + j·8 + 2·tq +
 * e % 2; MI 2, NJ 4: the 2x2 warps of 32x32 of a 64x64 tile): A from
 * a[m][k] (rows of LA floats, 16-byte aligned; in TF32 read by ldm4), B
 * from b as [k][n] (rows of LB) or, BT, as [n][k] (rows of LB); operands
 * rounded to tf32 as they are read (A not where ARND says its values are
 * tf32 already: rounding them again changes no bit), and in MODE 0
 * (3xTF32) split into a tf32 part and a tf32 remainder whose three leading
 * products are summed, the small ones first; MODE 1: TF32.  Each output's
 * sum runs over K in the same order whatever MI and NJ are. */
template <int MODE, int BT, int LA, int LB, int MI = 2, int NJ = 4, int ARND = 0>
static __device__ __forceinline__ void
tcslice(float (&acc)[MI][NJ][4], const float (*a)[LA], const float *b, int wm, int wn, int gq,
        int tq)
{
	const int lane = gq << 2 | tq;

#pragma unroll
	for (int kk = 0; kk < 16; kk += 8) {
		unsigned af[2][MI][4], bf[2][NJ][2];   /* [tf32, remainder] */
#pragma unroll
		for (int i = 0; i < MI; i++) {
			if (MODE == 0) {   /* ldmatrix measured no faster in 3xTF32 */
				const float *ap = &a[wm * 16 * MI + i * 16 + gq][kk + tq];
				float v[4] = { ap[0], ap[8 * LA], ap[4], ap[8 * LA + 4] };
#pragma unroll
				for (int e = 0; e < 4; e++)
					msplit<1>(v[e], af[0][i][e], af[1][i][e]);
				continue;
			}
			unsigned v[4];
			int row = wm * 16 * MI + i * 16 + (lane & 7) + (lane >> 3 & 1) * 8;

			ldm4(v, &a[row][kk + (lane >> 4) * 4]);
#pragma unroll
			for (int e = 0; e < 4; e++)
				af[0][i][e] = ARND ? v[e] : __float_as_uint(tf32(__uint_as_float(v[e])));
		}
#pragma unroll
		for (int j = 0; j < NJ; j++) {
			float v[2];
			if (BT) {
				const float *bp = b + (wn * 8 * NJ + j * 8 + gq) * LB + kk + tq;
				v[0] = bp[0], v[1] = bp[4];
			} else {
				const float *bp = b + (kk + tq) * LB + wn * 8 * NJ + j * 8 + gq;
				v[0] = bp[0], v[1] = bp[4 * LB];
			}
#pragma unroll
			for (int e = 0; e < 2; e++)
				msplit<MODE == 0>(v[e], bf[0][j][e], bf[1][j][e]);
		}
#pragma unroll
		for (int i = 0; i < MI; i++)
#pragma unroll
			for (int j = 0; j < NJ; j++) {
				if (MODE == 0) {   /* the small products first */
					mma(acc[i][j], af[1][i], bf[0][j]);
					mma(acc[i][j], af[0][i], bf[1][j]);
				}
				mma(acc[i][j], af[0][i], bf[0][j]);
			}
	}
}

#endif
