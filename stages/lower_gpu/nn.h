/* nn.h: the state shared by the emitters of the neural-network ops
 * (nn.c: plan, dispatch, pooling, batched products; conv.c: convolution;
 * attn.c: attention). */
#ifndef NN_H
#define NN_H

#include "gpu.h"

/* A convolution and the ops folded into its kernel's epilogue. */
typedef struct Chain {
	int conv;          /* the aten.convolution */
	int bn, add, relu; /* the folded aten.batch_norm, aten.add, aten.relu or
	                      aten.clamp (ReLU6, hardtanh), or -1 */
	double lo, hi;     /* the relu's or clamp's bounds: 0, inf for a relu */
	int res;           /* the add's other operand (the residual) */
	double ca, cr;     /* the add: ca·conv + cr·res (its alpha on operand 1) */
} Chain;

typedef struct Nn {
	Chain *chain;      /* per op: the chain whose last op it is (conv < 0: none) */
	int64_t wsmax;     /* bytes of split-K workspace the largest split needs */
	int64_t ws;        /* its offset in the device weights, -1 until reserved */
} Nn;

/* Device bytes appended to the weights block (space the stage adds after
 * the plan: packed weights, workspace); returns their offset. */
int64_t wreserve(Gpu *g, int64_t bytes);
/* Whether v is a constant on the device (uploaded at init), maybe through
 * reshapes. */
int gpu_isconst(const Gpu *g, int v);
/* 0 when op i's operands and result are f32, else -1 with g->err set. */
int gpu_needf32(Gpu *g, int i);

/* conv.c */
/* Bytes of split-K workspace the convolution op i needs (0: none). */
int64_t convws(const Gpu *g, int i);
/* The kernels and launches of chain c (its last op being i). */
int emit_conv(Gpu *g, const Chain *c, int i);

/* attn.c */
int emit_sdpa(Gpu *g, int i);

#endif
