/* conv.c: 2-D convolution on the device, with the batch norm, residual add
 * and relu that nnplan folded into it (a Chain).
 *
 * The convolution is an implicit GEMM: y[o][p] = sum_k w[o][k]·x̂[k][p] per
 * group, o the output channel (M), p the output pixel with the batch folded
 * in (N), k = (c·KH + r)·KW + s (K), and x̂ = im2col(x) gathered on the fly,
 * never stored.  A block of 128 threads computes a 64x64 tile of y on the
 * tensor cores (mma.sync m16n8k8, tf32 in, fp32 accumulate), 16 of K at a
 * time through a ring of 3 slices in shared memory that cp.async fills
 * two slices ahead (the kernel is latency-bound at batch 1: slices in
 * flight, rather than one loaded into registers, are what keep the tensor
 * cores fed; on the H100, ResNet-18 batch 1 tf32, host to host, median of
 * 1000, one run: 2 slices 363 us, 3 slices 332, 4 slices 338, fp32 about
 * 373 for each; the register-staged kernel before it measured 354 and 416
 * in an earlier run).  Where
 * the tiles alone would leave the GPU idle (the late layers at batch 1: few
 * pixels, long K) K is split among up to 16 blocks that write their
 * partial tiles to a workspace, and a second kernel sums them in the order
 * of the splits and applies the epilogue.  With the program's
 * DPRT_CUDA_SPLITK=cluster, on sm_90 and later (init checks, nn_convcl_ok),
 * the blocks of a tile run as one thread-block cluster instead and sum
 * their partial tiles through distributed shared memory, each block a
 * share of the rows, in the same order: the same bits, one launch and no
 * workspace round trip per convolution, but no faster on the H100
 * (ResNet-18 batch 1, host to host, median of 1000, cluster / sum: full
 * width tf32 344 / 368 us, fp32 386 / 367; quarter width tf32 198 / 180,
 * fp32 205 / 197), so not the default.
 *
 * Precision, chosen at run time by the program's DPRT_CUDA_CONV (read at
 * init, runtime/cuda/cuda.c): "fp32" (the default) runs 3xTF32, each
 * operand split into a tf32 part and a tf32 remainder whose three leading
 * products give fp32 accuracy (within 1e-5 of PyTorch's fp32 convolutions,
 * as every cuda result is); "tf32" runs plain TF32 (one product; 10-bit
 * mantissas, PyTorch's own default for convolutions on CUDA,
 * torch.backends.cudnn.allow_tf32); "direct" runs a plain fp32 loop per
 * output (slow; a reference).  Depthwise convolutions (one input channel
 * per group, K = KH·KW) always run the direct loop, which suits them.
 *
 * The weights are constants uploaded at init; init then packs them once on
 * the device into rows of K rounded up to 16 (zeros past K, so that the
 * GEMM loads them 16 bytes at a time unguarded), with the batch norm folded
 * in: w' = w·a, b' = (cb - mean)·a + beta, a = gamma / sqrt(var + eps).
 * Weights computed at run time are read where they are, unfolded. */
#include <stdio.h>
#include <string.h>

#include "nn.h"

enum {
	BM = 64, BN = 64, BK = 16,   /* the GEMM tile (must match the kernel text) */
	SMS = 132,         /* streaming multiprocessors of an H100 SXM */
	CTAS = 2 * SMS,    /* split K until about this many blocks run */
	MINKT = 2,         /* ... keeping at least this many BK slices per block
	                      (measured on the H100, ResNet-18 batch 1, tf32:
	                      CTAS 264..2112 x MINKT 8..1 change the full width
	                      by <10%; the quarter width goes 238 -> 186 us
	                      from MINKT 8 to 2) */
	MAXSPLIT = 16,     /* a cluster's blocks at most (Hopper, non-portable) */
};

/* The kernels every convolution instantiates: P is a struct of constants
 * (one per convolution), MODE 0 = 3xTF32, 1 = TF32. */
static const char templates[] =
"\n/* ---- convolution (stages/lower_gpu/conv.c explains the method) ---- */\n"
"\n"
"/* x rounded to tf32 (10-bit mantissa, to nearest, ties away) */\n"
"__device__ __forceinline__ float\n"
"nn_tf32(float x)\n"
"{\n"
"\tunsigned r;\n"
"\tasm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(r) : \"f\"(x));\n"
"\treturn __uint_as_float(r);\n"
"}\n"
"\n"
"/* d += a·b on a 16x8x8 tile: a row-major 16x8, b column-major 8x8 */\n"
"__device__ __forceinline__ void\n"
"nn_mma(float *d, const unsigned *a, const unsigned *b)\n"
"{\n"
"\tasm volatile(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 \"\n"
"\t             \"{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\\n\"\n"
"\t             : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
"\t             : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
"}\n"
"\n"
"/* Output channel o at pixel p (batch folded in): bias, residual, relu. */\n"
"template <class P>\n"
"static __device__ __forceinline__ void\n"
"nn_convout(float acc, int o, int p, const float *__restrict__ bias,\n"
"           const float *__restrict__ res, float *__restrict__ y)\n"
"{\n"
"\tconstexpr int PIX = P::OH * P::OW;\n"
"\tint i = (p / PIX * P::O + o) * PIX + p % PIX;\n"
"\tfloat r = acc;\n"
"\n"
"\tif (P::BIAS)\n"
"\t\tr += bias[o];\n"
"\tif (P::RES)\n"
"\t\tr = P::CA * r + P::CR * res[i];\n"
"\tif (P::RELU)\n"
"\t\tr = r < 0.0f ? 0.0f : r;   /* relu, NaN stays */\n"
"\ty[i] = r;\n"
"}\n"
"\n"
"#ifndef NN_STAGES   /* slices of K in the ring (nvcc -DNN_STAGES=N to try others) */\n"
"#define NN_STAGES 3\n"
"#endif\n"
"\n"
"/* cp.async: n of the 16 (or 4) bytes at src into shared dst, zeros after */\n"
"__device__ __forceinline__ void\n"
"nn_cp16(float *dst, const float *src, int n)\n"
"{\n"
"\tunsigned d = (unsigned)__cvta_generic_to_shared(dst);\n"
"\tasm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\\n\" :: \"r\"(d), \"l\"(src), \"r\"(n) : \"memory\");\n"
"}\n"
"\n"
"__device__ __forceinline__ void\n"
"nn_cp4(float *dst, const float *src, int n)\n"
"{\n"
"\tunsigned d = (unsigned)__cvta_generic_to_shared(dst);\n"
"\tasm volatile(\"cp.async.ca.shared.global [%0], [%1], 4, %2;\\n\" :: \"r\"(d), \"l\"(src), \"r\"(n) : \"memory\");\n"
"}\n"
"\n"
"__device__ __forceinline__ void\n"
"nn_commit(void)\n"
"{\n"
"\tasm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");\n"
"}\n"
"\n"
"/* until at most N groups of this thread's copies are in flight */\n"
"template <int N>\n"
"__device__ __forceinline__ void\n"
"nn_wait(void)\n"
"{\n"
"\tasm volatile(\"cp.async.wait_group %0;\\n\" :: \"n\"(N) : \"memory\");\n"
"}\n"
"\n"
"/* Thread-block clusters (sm_90): this block's rank in its cluster; a barrier\n"
" * of the cluster's blocks that orders their shared-memory writes before\n"
" * the reads after it; the float at shared address p of block q of the\n"
" * cluster.  Builds for older GPUs trap (nn_convcl_ok keeps them off). */\n"
"__device__ __forceinline__ unsigned\n"
"nn_ctarank(void)\n"
"{\n"
"\tunsigned r = 0;\n"
"#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900\n"
"\tasm volatile(\"mov.u32 %0, %%cluster_ctarank;\" : \"=r\"(r));\n"
"#else\n"
"\t__trap();\n"
"#endif\n"
"\treturn r;\n"
"}\n"
"\n"
"__device__ __forceinline__ void\n"
"nn_clsync(void)\n"
"{\n"
"#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900\n"
"\tasm volatile(\"barrier.cluster.arrive.release.aligned;\\n\\tbarrier.cluster.wait.acquire.aligned;\" ::: \"memory\");\n"
"#else\n"
"\t__trap();\n"
"#endif\n"
"}\n"
"\n"
"__device__ __forceinline__ float\n"
"nn_dsld(const float *p, unsigned q)\n"
"{\n"
"\tfloat v = 0.0f;\n"
"#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900\n"
"\tunsigned a = (unsigned)__cvta_generic_to_shared(p), b;\n"
"\tasm volatile(\"mapa.shared::cluster.u32 %0, %1, %2;\" : \"=r\"(b) : \"r\"(a), \"r\"(q));\n"
"\tasm volatile(\"ld.shared::cluster.f32 %0, [%1];\" : \"=f\"(v) : \"r\"(b) : \"memory\");\n"
"#else\n"
"\t__trap();\n"
"#endif\n"
"\treturn v;\n"
"}\n"
"\n"
"\n"
"/* The implicit GEMM: a 64x64 tile of y[o][p] per block, 2x2 warps of 32x32;\n"
" * blockIdx = (pixel tile, channel tile, group * SPLIT + split).  K goes through\n"
" * shared memory 16 at a time in a ring of NN_STAGES slices filled by\n"
" * cp.async, so that NN_STAGES - 1 slices are on their way while one is\n"
" * multiplied; operands are rounded to tf32 (and split, in MODE 0) as the\n"
" * warps read them.  Split K (SPLIT > 1): blockIdx.z = group * SPLIT +\n"
" * split; RED 0 writes the partial tile to ws for nn_convsum, RED 1 runs\n"
" * the SPLIT blocks of a tile as one cluster that sums the partial tiles\n"
" * through distributed shared memory, each block a SPLIT-th of the rows,\n"
" * in the order of the splits (so the same sums as nn_convsum's). */\n"
"template <class P, int MODE, int RED>\n"
"static __global__ void __launch_bounds__(128)\n"
"nn_conv(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ bias,\n"
"        const float *__restrict__ res, float *__restrict__ y, float *__restrict__ ws)\n"
"{\n"
"\tconstexpr int CG = P::C / P::G, OG = P::O / P::G, KK = P::KH * P::KW, K = CG * KK;\n"
"\tconstexpr int PIX = P::OH * P::OW, NP = P::N * PIX, S = NN_STAGES;\n"
"\tconstexpr int LA = 16 + 4, LB = 64 + 8;   /* padded rows: no bank conflicts */\n"
"\t__shared__ __align__(16) float sm[S * 64 * LA + S * 16 * LB];\n"
"\tfloat (*as)[64][LA] = (float (*)[64][LA])sm;               /* w slices [o][k] */\n"
"\tfloat (*bs)[16][LB] = (float (*)[16][LB])(sm + S * 64 * LA);   /* x̂ slices [k][p] */\n"
"\tint tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wm = warp >> 1, wn = warp & 1;\n"
"\tint gq = lane >> 2, tq = lane & 3;\n"
"\tint m0 = blockIdx.y * 64, n0 = blockIdx.x * 64;\n"
"\tint grp = blockIdx.z / P::SPLIT, split = blockIdx.z % P::SPLIT;\n"
"\tint kbeg = split * P::KCHUNK, kend = min(K, kbeg + P::KCHUNK), nk = (kend - kbeg + 15) / 16;\n"
"\tconst float *wg = w + grp * OG * P::LDA;\n"
"\t/* what this thread copies: x̂ column nb, rows kb..kb+7; w rows am, am+32,\n"
"\t * columns ak..ak+3 */\n"
"\tint nb = tid & 63, kb = (tid >> 6) * 8, am = tid >> 2, ak = (tid & 3) * 4;\n"
"\tint p = n0 + nb, ppix = p % PIX;\n"
"\tint ih0 = ppix / P::OW * P::SH - P::PH, iw0 = ppix % P::OW * P::SW - P::PW;\n"
"\tconst float *xp = x + (p / PIX * P::C + grp * CG) * P::H * P::W;\n"
"\tfloat acc[2][4][4];\n"
"\n"
"\tfor (int i = 0; i < 2; i++)\n"
"\t\tfor (int j = 0; j < 4; j++)\n"
"\t\t\tfor (int e = 0; e < 4; e++)\n"
"\t\t\t\tacc[i][j][e] = 0.0f;\n"
"\t/* slice t into stage t % S (out of range: zeros) */\n"
"\tauto issue = [&](int t) {\n"
"\t\tint k0 = kbeg + 16 * t, st = t % S;\n"
"#pragma unroll\n"
"\t\tfor (int h = 0; h < 2; h++) {\n"
"\t\t\tint m = m0 + am + 32 * h;\n"
"\t\t\tfloat *dst = &as[st][am + 32 * h][ak];\n"
"\t\t\tif (P::PACKED) {   /* rows of LDA (a multiple of 16) floats */\n"
"\t\t\t\tnn_cp16(dst, m < OG ? wg + m * P::LDA + k0 + ak : w, m < OG ? 16 : 0);\n"
"\t\t\t} else {\n"
"#pragma unroll\n"
"\t\t\t\tfor (int e = 0; e < 4; e++) {\n"
"\t\t\t\t\tbool in = m < OG && k0 + ak + e < K;\n"
"\t\t\t\t\tnn_cp4(dst + e, in ? wg + m * P::LDA + k0 + ak + e : w, in ? 4 : 0);\n"
"\t\t\t\t}\n"
"\t\t\t}\n"
"\t\t}\n"
"#pragma unroll\n"
"\t\tfor (int e = 0; e < 8; e++) {\n"
"\t\t\tint k = k0 + kb + e, c = k / KK, r = k % KK / P::KW, s = k % P::KW;\n"
"\t\t\tint ih = ih0 + r * P::DH, iw = iw0 + s * P::DW;\n"
"\t\t\tbool in = p < NP && (K % 16 == 0 || k < K) && ih >= 0 && ih < P::H &&\n"
"\t\t\t          iw >= 0 && iw < P::W;\n"
"\t\t\tnn_cp4(&bs[st][kb + e][nb], in ? xp + (c * P::H + ih) * P::W + iw : x, in ? 4 : 0);\n"
"\t\t}\n"
"\t};\n"
"\n"
"#pragma unroll\n"
"\tfor (int t = 0; t < S - 1; t++) {\n"
"\t\tif (t < nk)\n"
"\t\t\tissue(t);\n"
"\t\tnn_commit();   /* empty groups too: the count stays in step */\n"
"\t}\n"
"\tfor (int t = 0; t < nk; t++) {\n"
"\t\tnn_wait<S - 2>();   /* slice t has landed, for this thread ... */\n"
"\t\t__syncthreads();    /* ... and every thread; slice t - 1 is read */\n"
"\t\tif (t + S - 1 < nk)\n"
"\t\t\tissue(t + S - 1);   /* into the stage of slice t - 1 */\n"
"\t\tnn_commit();\n"
"\t\tint st = t % S;\n"
"#pragma unroll\n"
"\t\tfor (int kk = 0; kk < 16; kk += 8) {\n"
"\t\t\tunsigned a[2][2][4], b[2][4][2];   /* [tf32, remainder] */\n"
"#pragma unroll\n"
"\t\t\tfor (int i = 0; i < 2; i++) {\n"
"\t\t\t\tconst float *ap = &as[st][wm * 32 + i * 16 + gq][kk + tq];\n"
"\t\t\t\tfloat v[4] = { ap[0], ap[8 * LA], ap[4], ap[8 * LA + 4] };\n"
"#pragma unroll\n"
"\t\t\t\tfor (int e = 0; e < 4; e++) {\n"
"\t\t\t\t\tfloat hi = nn_tf32(v[e]);\n"
"\t\t\t\t\ta[0][i][e] = __float_as_uint(hi);\n"
"\t\t\t\t\tif (MODE == 0)\n"
"\t\t\t\t\t\ta[1][i][e] = __float_as_uint(nn_tf32(v[e] - hi));\n"
"\t\t\t\t}\n"
"\t\t\t}\n"
"#pragma unroll\n"
"\t\t\tfor (int j = 0; j < 4; j++) {\n"
"\t\t\t\tconst float *bp = &bs[st][kk + tq][wn * 32 + j * 8 + gq];\n"
"\t\t\t\tfloat v[2] = { bp[0], bp[4 * LB] };\n"
"#pragma unroll\n"
"\t\t\t\tfor (int e = 0; e < 2; e++) {\n"
"\t\t\t\t\tfloat hi = nn_tf32(v[e]);\n"
"\t\t\t\t\tb[0][j][e] = __float_as_uint(hi);\n"
"\t\t\t\t\tif (MODE == 0)\n"
"\t\t\t\t\t\tb[1][j][e] = __float_as_uint(nn_tf32(v[e] - hi));\n"
"\t\t\t\t}\n"
"\t\t\t}\n"
"#pragma unroll\n"
"\t\t\tfor (int i = 0; i < 2; i++)\n"
"#pragma unroll\n"
"\t\t\t\tfor (int j = 0; j < 4; j++) {\n"
"\t\t\t\t\tif (MODE == 0) {   /* the small products first */\n"
"\t\t\t\t\t\tnn_mma(acc[i][j], a[1][i], b[0][j]);\n"
"\t\t\t\t\t\tnn_mma(acc[i][j], a[0][i], b[1][j]);\n"
"\t\t\t\t\t}\n"
"\t\t\t\t\tnn_mma(acc[i][j], a[0][i], b[0][j]);\n"
"\t\t\t\t}\n"
"\t\t}\n"
"\t}\n"
"\tnn_wait<0>();   /* no copy outlives the block */\n"
"\tif constexpr (RED && P::SPLIT > 1) {\n"
"\t\tconstexpr int LR = 64 + 4, R = (64 + P::SPLIT - 1) / P::SPLIT;\n"
"\t\tfloat *red = sm;   /* the partial tile [o][p], over the slices */\n"
"\t\tunsigned rank = nn_ctarank();\n"
"\n"
"\t\t__syncthreads();   /* every warp is done with the slices */\n"
"#pragma unroll\n"
"\t\tfor (int i = 0; i < 2; i++)\n"
"#pragma unroll\n"
"\t\t\tfor (int j = 0; j < 4; j++)\n"
"#pragma unroll\n"
"\t\t\t\tfor (int e = 0; e < 4; e++)\n"
"\t\t\t\t\tred[(wm * 32 + i * 16 + gq + (e >> 1) * 8) * LR + wn * 32 + j * 8 + 2 * tq + (e & 1)] =\n"
"\t\t\t\t\t\tacc[i][j][e];\n"
"\t\tnn_clsync();   /* the cluster's partial tiles are written */\n"
"\t\tfor (int t = tid; t < R * 64; t += 128) {\n"
"\t\t\tint row = rank * R + t / 64, col = t % 64, m = m0 + row, n = n0 + col;\n"
"\t\t\tif (row >= 64 || m >= OG || n >= NP)\n"
"\t\t\t\tcontinue;\n"
"\t\t\tfloat sum = 0.0f;\n"
"\t\t\tfor (int q = 0; q < P::SPLIT; q++)\n"
"\t\t\t\tsum += nn_dsld(&red[row * LR + col], q);\n"
"\t\t\tnn_convout<P>(sum, grp * OG + m, n, bias, res, y);\n"
"\t\t}\n"
"\t\tnn_clsync();   /* no block leaves while another reads its tile */\n"
"\t} else {\n"
"\t\t/* accumulator e of tile (i, j): row gq (+8 for e >= 2), column 2·tq + e % 2 */\n"
"#pragma unroll\n"
"\t\tfor (int i = 0; i < 2; i++)\n"
"#pragma unroll\n"
"\t\t\tfor (int j = 0; j < 4; j++)\n"
"#pragma unroll\n"
"\t\t\t\tfor (int e = 0; e < 4; e++) {\n"
"\t\t\t\t\tint m = m0 + wm * 32 + i * 16 + gq + (e >> 1) * 8;\n"
"\t\t\t\t\tint n = n0 + wn * 32 + j * 8 + 2 * tq + (e & 1);\n"
"\t\t\t\t\tif (m >= OG || n >= NP)\n"
"\t\t\t\t\t\tcontinue;\n"
"\t\t\t\t\tif (P::SPLIT > 1)\n"
"\t\t\t\t\t\tws[(split * P::O + grp * OG + m) * NP + n] = acc[i][j][e];\n"
"\t\t\t\t\telse\n"
"\t\t\t\t\t\tnn_convout<P>(acc[i][j][e], grp * OG + m, n, bias, res, y);\n"
"\t\t\t\t}\n"
"\t}\n"
"}\n"
"\n"
"/* After a split K: the sum of the splits' partial tiles, then the epilogue. */\n"
"template <class P>\n"
"static __global__ void __launch_bounds__(256)\n"
"nn_convsum(const float *__restrict__ ws, const float *__restrict__ bias,\n"
"           const float *__restrict__ res, float *__restrict__ y)\n"
"{\n"
"\tconstexpr int NP = P::N * P::OH * P::OW;\n"
"\tint i = blockIdx.x * 256 + threadIdx.x;\n"
"\tfloat s = 0.0f;\n"
"\n"
"\tif (i >= P::O * NP)\n"
"\t\treturn;\n"
"#pragma unroll 8\n"
"\tfor (int k = 0; k < P::SPLIT; k++)\n"
"\t\ts += ws[k * P::O * NP + i];\n"
"\tnn_convout<P>(s, i / NP, i % NP, bias, res, y);\n"
"}\n"
"\n"
"/* Launches the clustered form of P (RED 1): clusters of SPLIT blocks\n"
" * along z. */\n"
"template <class P, int MODE>\n"
"static cudaError_t\n"
"nn_convcl(dim3 grid, cudaStream_t st, const float *x, const float *w, const float *b,\n"
"          const float *res, float *y)\n"
"{\n"
"\tcudaLaunchConfig_t c = {};\n"
"\tcudaLaunchAttribute a[1];\n"
"\n"
"\ta[0].id = cudaLaunchAttributeClusterDimension;\n"
"\ta[0].val.clusterDim.x = 1;\n"
"\ta[0].val.clusterDim.y = 1;\n"
"\ta[0].val.clusterDim.z = P::SPLIT;\n"
"\tc.gridDim = grid;\n"
"\tc.blockDim = dim3(128, 1, 1);\n"
"\tc.stream = st;\n"
"\tc.attrs = a;\n"
"\tc.numAttrs = 1;\n"
"\treturn cudaLaunchKernelEx(&c, nn_conv<P, MODE, 1>, x, w, b, res, y, (float *)NULL);\n"
"}\n"
"\n"
"/* At init: whether P's clustered form runs here: built for sm_90 or later\n"
" * (no trap), and a cluster of SPLIT blocks fits on the device (past 8, the\n"
" * non-portable sizes Hopper allows). */\n"
"template <class P, int MODE>\n"
"static bool\n"
"nn_convcl_fits(void)\n"
"{\n"
"\tcudaFuncAttributes fa;\n"
"\tcudaLaunchConfig_t c = {};\n"
"\tcudaLaunchAttribute a[1];\n"
"\tint n = 0;\n"
"\n"
"\tif (cudaFuncGetAttributes(&fa, nn_conv<P, MODE, 1>) != cudaSuccess || fa.ptxVersion < 90)\n"
"\t\treturn false;\n"
"\tif (P::SPLIT > 8 && cudaFuncSetAttribute(nn_conv<P, MODE, 1>,\n"
"\t                                         cudaFuncAttributeNonPortableClusterSizeAllowed,\n"
"\t                                         1) != cudaSuccess)\n"
"\t\treturn false;\n"
"\ta[0].id = cudaLaunchAttributeClusterDimension;\n"
"\ta[0].val.clusterDim.x = 1;\n"
"\ta[0].val.clusterDim.y = 1;\n"
"\ta[0].val.clusterDim.z = P::SPLIT;\n"
"\tc.gridDim = dim3(1, 1, P::SPLIT);\n"
"\tc.blockDim = dim3(128, 1, 1);\n"
"\tc.attrs = a;\n"
"\tc.numAttrs = 1;\n"
"\treturn cudaOccupancyMaxActiveClusters(&n, nn_conv<P, MODE, 1>, &c) == cudaSuccess && n > 0;\n"
"}\n"
"\n"
"template <class P>\n"
"static bool\n"
"nn_convcl_ok(void)\n"
"{\n"
"\tbool ok = nn_convcl_fits<P, 0>() && nn_convcl_fits<P, 1>();\n"
"\n"
"\t(void)cudaGetLastError();   /* a refusal above is an answer, not an error */\n"
"\treturn ok;\n"
"}\n"
"\n"
"\n"
"/* One thread per output, fp32 FMAs in order of k. */\n"
"template <class P>\n"
"static __global__ void __launch_bounds__(256)\n"
"nn_convdirect(const float *__restrict__ x, const float *__restrict__ w,\n"
"              const float *__restrict__ bias, const float *__restrict__ res,\n"
"              float *__restrict__ y)\n"
"{\n"
"\tconstexpr int CG = P::C / P::G, OG = P::O / P::G, PIX = P::OH * P::OW, NP = P::N * PIX;\n"
"\tint i = blockIdx.x * 256 + threadIdx.x;\n"
"\n"
"\tif (i >= P::O * NP)\n"
"\t\treturn;\n"
"\tint o = i / NP, p = i % NP, pix = p % PIX;\n"
"\tint ih0 = pix / P::OW * P::SH - P::PH, iw0 = pix % P::OW * P::SW - P::PW;\n"
"\tconst float *xp = x + (p / PIX * P::C + o / OG * CG) * P::H * P::W, *wp = w + o * P::LDA;\n"
"\tfloat acc = 0.0f;\n"
"\n"
"\tfor (int c = 0; c < CG; c++)\n"
"\t\tfor (int r = 0; r < P::KH; r++) {\n"
"\t\t\tint ih = ih0 + r * P::DH;\n"
"\t\t\tif (ih < 0 || ih >= P::H)\n"
"\t\t\t\tcontinue;\n"
"\t\t\tfor (int s = 0; s < P::KW; s++) {\n"
"\t\t\t\tint iw = iw0 + s * P::DW;\n"
"\t\t\t\tif (iw >= 0 && iw < P::W)\n"
"\t\t\t\t\tacc = fmaf(xp[(c * P::H + ih) * P::W + iw], wp[(c * P::KH + r) * P::KW + s], acc);\n"
"\t\t\t}\n"
"\t\t}\n"
"\tnn_convout<P>(acc, o, p, bias, res, y);\n"
"}\n";

/* The init kernel that packs (and folds) a convolution's weights. */
static const char pack[] =
"\n/* At init: weights [O][K] into rows of LDA floats (zeros past K) times a,\n"
" * and bias b' = (cb - mean)·a + beta, a = gamma / sqrt(var + eps), where a\n"
" * batch norm is folded (gamma not NULL; else a = 1 and no b'). */\n"
"static __global__ void\n"
"nn_pack(float *__restrict__ wout, float *__restrict__ bout, const float *__restrict__ w,\n"
"        const float *__restrict__ cb, const float *__restrict__ gamma,\n"
"        const float *__restrict__ beta, const float *__restrict__ mean,\n"
"        const float *__restrict__ var, float eps, int O, int K, int LDA)\n"
"{\n"
"\tfor (int i = blockIdx.x * blockDim.x + threadIdx.x; i < O * LDA; i += gridDim.x * blockDim.x) {\n"
"\t\tint o = i / LDA, k = i % LDA;\n"
"\t\tfloat a = 1.0f;\n"
"\n"
"\t\tif (gamma)   /* as runtime/nn.c's batch norm: invstd first */\n"
"\t\t\ta = 1.0f / sqrtf(var[o] + eps) * gamma[o];\n"
"\t\twout[i] = k < K ? w[o * K + k] * a : 0.0f;\n"
"\t\tif (gamma && k == 0)\n"
"\t\t\tbout[o] = beta[o] - mean[o] * a + (cb ? cb[o] * a : 0.0f);\n"
"\t}\n"
"}\n";

/* The geometry and method of convolution op i. */
typedef struct Cfg {
	long long N, C, H, W, O, OH, OW, k[2], s[2], p[2], d[2], G;
	long long K, lda, np, split, kchunk;
	int packed, direct;
} Cfg;

static void
cfg(const Gpu *g, int i, Cfg *c)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	const Type *x = &fn->val[op->in[0]].t, *w = &fn->val[op->in[1]].t, *y = &fn->val[op->out[0]].t;
	int64_t s[2], p[2], d[2];
	long long tiles, nkt;

	memset(c, 0, sizeof *c);
	c->N = x->dim[0], c->C = x->dim[1], c->H = x->dim[2], c->W = x->dim[3];
	c->O = y->dim[1], c->OH = y->dim[2], c->OW = y->dim[3];
	c->k[0] = w->dim[2], c->k[1] = w->dim[3];
	dp_pair(op, "stride", 1, s);
	dp_pair(op, "padding", 0, p);
	dp_pair(op, "dilation", 1, d);
	for (int j = 0; j < 2; j++)
		c->s[j] = s[j], c->p[j] = p[j], c->d[j] = d[j];
	c->G = dp_geti(op, "groups", 1);
	c->K = c->C / c->G * c->k[0] * c->k[1];
	c->np = c->N * c->OH * c->OW;
	c->packed = isconst(g, op->in[1]);
	c->lda = c->packed ? (c->K + BK - 1) / BK * BK : c->K;
	c->direct = c->C == c->G;   /* depthwise: K is the window alone */
	tiles = (c->O / c->G + BM - 1) / BM * ((c->np + BN - 1) / BN) * c->G;
	nkt = (c->K + BK - 1) / BK;
	c->split = 1;
	while (c->split < MAXSPLIT && tiles * c->split < CTAS && nkt / (2 * c->split) >= MINKT)
		c->split *= 2;
	c->kchunk = (nkt + c->split - 1) / c->split * BK;
	c->split = c->kchunk > 0 ? (c->K + c->kchunk - 1) / c->kchunk : 1;   /* none empty */
	if (c->direct || c->split < 1)
		c->split = 1;
}

int64_t
convws(const Gpu *g, int i)
{
	const Type *x = &g->fn->val[g->fn->op[i].in[0]].t;
	Cfg c;

	if (x->rank != 4 || x->dtype != DP_F32)
		return 0;
	cfg(g, i, &c);
	return c.split > 1 ? 4 * c.split * c.O * c.np : 0;
}

/* The device address of constant v, for init. */
static void
wconst(Gpu *g, Str *s, int v)
{
	int b = gbase(g, v);

	if (g->h[b].kind != G_WEIGHT)
		dp_die("conv: value %d is not in the device weights", v);
	str_printf(s, "(const float *)(g->weights + %lld)", (long long)g->h[b].off);
}

/* Init's packing of the weights of chain c into woff (and bout). */
static void
packinit(Gpu *g, const Chain *ch, const Cfg *c, int64_t woff, int64_t boff)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[ch->conv], *bn = ch->bn >= 0 ? &fn->op[ch->bn] : NULL;
	Str *s = &g->init;
	long long n = c->O * c->lda, blocks = (n + 255) / 256;
	int k;

	if (!(g->nn->done & N_PACK)) {
		g->nn->done |= N_PACK;
		str_put(&g->kern, pack);
	}
	str_printf(s, "\t/* op %d (%s)", ch->conv, dp_op_name[op->kind]);
	if (bn)
		str_printf(s, " and op %d (%s) folded", ch->bn, dp_op_name[bn->kind]);
	str_printf(s, ": the weights as %lld rows of %lld floats */\n", c->O, c->lda);
	str_printf(s, "\tif (dprt_cuda_ok(cudaDeviceSynchronize(), \"cudaDeviceSynchronize\", err, "
	              "errn) != 0) {\n\t\tdprt_cuda_close(g);\n\t\treturn -1;\n\t}\n"
	              "\tnn_pack<<<%lld, 256, 0, g->stream>>>((float *)(g->weights + %lld), ",
	           blocks > 4096 ? 4096 : blocks, (long long)woff);
	if (bn)
		str_printf(s, "(float *)(g->weights + %lld),\n\t\t", (long long)boff);
	else
		str_put(s, "NULL,\n\t\t");
	wconst(g, s, op->in[1]);
	str_put(s, ", ");
	if (op->nin == 3)
		wconst(g, s, op->in[2]);
	else
		str_put(s, "NULL");
	for (k = 1; k < 5; k++) {
		str_put(s, k == 3 ? ",\n\t\t" : ", ");
		if (bn)
			wconst(g, s, bn->in[k]);
		else
			str_put(s, "NULL");
	}
	str_put(s, ", ");
	str_float(s, bn ? dp_getf(bn, "eps", 1e-5) : 0);
	str_printf(s, ", %lld, %lld, %lld);\n", c->O, c->K, c->lda);
	str_put(s, "\tif (dprt_cuda_launched(\"nn_pack\", err, errn) != 0 ||\n"
	           "\t    dprt_cuda_ok(cudaStreamSynchronize(g->stream), \"cudaStreamSynchronize\", "
	           "err, errn) != 0) {\n\t\tdprt_cuda_close(g);\n\t\treturn -1;\n\t}\n");
}

/* The struct of constants of chain c. */
static void
constants(Gpu *g, const Chain *ch, const Cfg *c, int bias)
{
	const Fn *fn = g->fn;
	Str *s = &g->kern;

	str_put(s, "\n");
	opcomment(s, fn, ch->conv, "");
	if (ch->bn >= 0)
		opcomment(s, fn, ch->bn, "");
	if (ch->add >= 0)
		opcomment(s, fn, ch->add, "");
	if (ch->relu >= 0)
		opcomment(s, fn, ch->relu, "");
	str_printf(s, "struct Conv%d {\n"
	              "\tstatic constexpr int N = %lld, C = %lld, H = %lld, W = %lld, G = %lld;\n"
	              "\tstatic constexpr int O = %lld, OH = %lld, OW = %lld, KH = %lld, KW = %lld;\n"
	              "\tstatic constexpr int SH = %lld, SW = %lld, PH = %lld, PW = %lld, DH = %lld, DW = %lld;\n"
	              "\tstatic constexpr int LDA = %lld, PACKED = %d;   /* weight rows */\n"
	              "\tstatic constexpr int SPLIT = %lld, KCHUNK = %lld;   /* of K = %lld */\n"
	              "\tstatic constexpr int BIAS = %d, RES = %d, RELU = %d;\n"
	              "\tstatic constexpr float CA = ",
	           ch->conv, c->N, c->C, c->H, c->W, c->G, c->O, c->OH, c->OW, c->k[0], c->k[1],
	           c->s[0], c->s[1], c->p[0], c->p[1], c->d[0], c->d[1], c->lda, c->packed,
	           c->split, c->kchunk, c->K, bias, ch->add >= 0, ch->relu >= 0);
	str_float(s, ch->ca);
	str_put(s, ", CR = ");
	str_float(s, ch->cr);
	str_put(s, ";   /* y = CA·conv + CR·res */\n};\n");
}

/* The kernels and launches of chain ch, run at its last op i. */
int
emit_conv(Gpu *g, const Chain *ch, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[ch->conv];
	const Type *tx = &fn->val[op->in[0]].t;
	int y = fn->op[i].out[0], bias;
	int64_t woff = -1, boff = -1;
	long long big = 2147483647LL, tiles;
	Str *r = g->rec;
	Cfg c;

	if (needf32(g, ch->conv) != 0)
		return -1;
	if (tx->rank != 4)
		dp_die("conv: rank %d", tx->rank);
	cfg(g, ch->conv, &c);
	opcomment(r, fn, ch->conv, "\t");
	if (ch->bn >= 0)
		opcomment(r, fn, ch->bn, "\t");
	if (ch->add >= 0)
		opcomment(r, fn, ch->add, "\t");
	if (ch->relu >= 0)
		opcomment(r, fn, ch->relu, "\t");
	if (c.np * c.O == 0)
		return 0;
	if (c.N * c.C * c.H * c.W > big || c.np * c.O > big || c.O * c.lda > big ||
	    c.split * c.O * c.np > big || (c.np + BN - 1) / BN > big ||
	    (c.O / c.G + BM - 1) / BM > 65535 || c.G * c.split > 65535) {
		dp_seterr(g->err, "op %d (%s): too large for the cuda kernel", ch->conv,
		          dp_op_name[op->kind]);
		return -1;
	}
	if (!(g->nn->done & N_CONV)) {
		g->nn->done |= N_CONV;
		str_put(&g->kern, templates);
	}
	if (c.packed) {
		woff = wreserve(g, 4 * c.O * c.lda);
		if (ch->bn >= 0)
			boff = wreserve(g, 4 * c.O);
		packinit(g, ch, &c, woff, boff);
	}
	if (c.split > 1 && g->nn->ws < 0)
		g->nn->ws = wreserve(g, g->nn->wsmax);
	bias = ch->bn >= 0 || op->nin == 3;
	constants(g, ch, &c, bias);

	str_printf(r, "\t{\n\t\tconst float *x = v%d, *w = ", gV(g, gbase(g, op->in[0])));
	if (c.packed)
		str_printf(r, "(const float *)(g->weights + %lld);\n", (long long)woff);
	else
		str_printf(r, "v%d;\n", gV(g, gbase(g, op->in[1])));
	str_put(r, "\t\tconst float *b = ");
	if (ch->bn >= 0)
		str_printf(r, "(const float *)(g->weights + %lld)", (long long)boff);
	else if (op->nin == 3)
		str_printf(r, "v%d", gV(g, gbase(g, op->in[2])));
	else
		str_put(r, "NULL");
	str_put(r, ", *res = ");
	if (ch->add >= 0)
		str_printf(r, "v%d;\n", gV(g, gbase(g, ch->res)));
	else
		str_put(r, "NULL;\n");
	str_printf(r, "\t\tfloat *y = v%d", gV(g, y));
	if (c.split > 1)
		str_printf(r, ", *ws = (float *)(g->weights + %lld);\n\n", (long long)g->nn->ws);
	else if (!c.direct)
		str_put(r, ", *ws = NULL;\n\n");
	else
		str_put(r, ";\n\n");
	tiles = (c.O / c.G + BM - 1) / BM;
	if (c.split > 1) {   /* the clustered form where asked for and init found it runs */
		str_printf(&g->init, "\t/* op %d: with DPRT_CUDA_SPLITK=cluster, split K summed in clusters of %lld blocks, where they run */\n"
		                     "\tif (g->cluster && !nn_convcl_ok<Conv%d>())\n\t\tg->cluster = 0;\n",
		           ch->conv, c.split, ch->conv);
		str_printf(r, "\t\tif (g->cluster && g->conv != DPRT_CONV_DIRECT) {\n"
		              "\t\t\tdim3 grid(%lld, %lld, %lld);\n\n"
		              "\t\t\tif (dprt_cuda_ok(g->conv == DPRT_CONV_TF32 ?\n"
		              "\t\t\t                 nn_convcl<Conv%d, 1>(grid, g->stream, x, w, b, res, y) :\n"
		              "\t\t\t                 nn_convcl<Conv%d, 0>(grid, g->stream, x, w, b, res, y),\n"
		              "\t\t\t                 \"cudaLaunchKernelEx (conv %d)\", err, errn) != 0)\n"
		              "\t\t\t\treturn -1;\n\t\t} else {\n",
		           (c.np + BN - 1) / BN, tiles, c.G * c.split, ch->conv, ch->conv, ch->conv);
	}
	if (!c.direct) {
		str_printf(r, "\t\tif (g->conv == DPRT_CONV_TF32)\n"
		              "\t\t\tnn_conv<Conv%d, 1, 0><<<dim3(%lld, %lld, %lld), 128, 0, g->stream>>>"
		              "(x, w, b, res, y, ws);\n"
		              "\t\telse if (g->conv == DPRT_CONV_FP32)\n"
		              "\t\t\tnn_conv<Conv%d, 0, 0><<<dim3(%lld, %lld, %lld), 128, 0, g->stream>>>"
		              "(x, w, b, res, y, ws);\n\t\telse\n\t",
		           ch->conv, (c.np + BN - 1) / BN, tiles, c.G * c.split,
		           ch->conv, (c.np + BN - 1) / BN, tiles, c.G * c.split);
	}
	str_printf(r, "\t\tnn_convdirect<Conv%d><<<%lld, 256, 0, g->stream>>>(x, w, b, res, y);\n"
	              "\t\tif (dprt_cuda_launched(\"conv %d\", err, errn) != 0)\n\t\t\treturn -1;\n",
	           ch->conv, (c.O * c.np + 255) / 256, ch->conv);
	if (c.split > 1)
		str_printf(r, "\t\tif (g->conv != DPRT_CONV_DIRECT) {\n"
		              "\t\t\tnn_convsum<Conv%d><<<%lld, 256, 0, g->stream>>>(ws, b, res, y);\n"
		              "\t\t\tif (dprt_cuda_launched(\"conv %d (sum of %lld splits)\", err, errn) != 0)\n"
		              "\t\t\t\treturn -1;\n\t\t}\n",
		           ch->conv, (c.O * c.np + 255) / 256, ch->conv, c.split);
	if (c.split > 1)
		str_put(r, "\t\t}\n");
	str_put(r, "\t}\n");
	g->nkern++;
	return 0;
}
