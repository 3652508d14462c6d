/* xfer.h: the host<->device transfers of a partitioned function (its copy
 * ops) and their page-locked staging buffers; shared by lower_cpu and
 * lower_gpu so that the host code and the CUDA code agree on the layout;
 * and the first-fit arena placement both stages' buffer plans use. */
#ifndef XFER_H
#define XFER_H

#include "dpir.h"

enum {
	X_NONE,            /* not a copy */
	X_H2D,             /* host value -> device, through staging, every run */
	X_D2H,             /* device value -> host staging, every run; the host
	                      waits for the device before reading it */
	X_UPLOAD,          /* a constant -> device: uploaded once, at init */
	X_HOSTCONST,       /* a device constant -> host: the host's own weights */
};

typedef struct Xfer {
	int kind;          /* X_* */
	int64_t pin;       /* X_H2D, X_D2H: byte offset of the staging buffer in
	                      the pinned block; else -1 */
	int part;          /* X_D2H: the cuda partition after whose work the
	                      device->host copy is issued; else -1 */
	int src;           /* the op defining the copied value (a const for
	                      X_UPLOAD and X_HOSTCONST); -1 when not a copy */
} Xfer;

/* Fills x[0..fn->nop-1] and returns the size in bytes of the pinned block
 * (staging buffers 64-byte aligned, in schedule order). */
int64_t xfer_plan(const Fn *fn, Xfer *x);

/* First-fit placement of n buffers in one arena: buffer b (size[b] bytes)
 * is live from op birth[b] through op death[b] (op indices < nop); at each
 * op the buffers born there are placed before those dying there are freed,
 * so an op's results never overlap its operands.  Offsets (multiples of
 * align) go to off[b]; returns the arena size, a multiple of align. */
int64_t firstfit(int n, const int64_t *size, const int *birth, const int *death, int nop,
                 int64_t align, int64_t *off);

/* Whether op runs on cuda (its partition, device or results say so). */
int oncuda(const Fn *fn, const Op *op);

#endif
