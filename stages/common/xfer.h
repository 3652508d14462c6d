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
	int64_t bytes;     /* X_H2D, X_D2H: the bytes moved; else 0 */
	/* An X_D2H copy in pieces (xfer_plan): issued after the partition's
	 * other device->host copies, each piece followed by the recording of
	 * its event, and copied into the program's outputs piece by piece, the
	 * host waiting for each piece's event before its copy; the partition
	 * records its head event just before the first such copy, and the
	 * host waits for that instead of the whole stream.  Events are
	 * numbered across the program. */
	int npiece;        /* pieces (at most XFER_NPIECE); 0: one copy, which the
	                      host waits for with the stream */
	int64_t piece;     /* bytes of each piece but the last, which has the rest
	                      (a multiple of 64) */
	int ev;            /* the first piece's event; piece k's is ev + k */
	int head;          /* the head event of the partition */
} Xfer;

/* Device->host copies in pieces: those of a value of XFER_SPLIT bytes or
 * more that no op reads and that the host only copies into program
 * outputs; pieces of max(XFER_PIECE, bytes / XFER_NPIECE) rounded up to 64
 * bytes.  Why: GPT-2's logits at batch 1 (25.7 MB) came over in ~500 us
 * and were then copied into the caller's buffer in another ~284 us (H100,
 * --profile's "copy to output"), one after the other; in pieces the host
 * copies piece k while piece k+1 comes over, hiding most of the second.
 * Below 8 MiB (~160 us over the bus at that rate, ~90 us on the host)
 * there is too little to hide for the events' waits; pieces of 4 MiB or
 * more keep each wait small against the copy after it, and 32 pieces at
 * most keep a batch-32 run's 823 MB to 32 waits. */
#define XFER_SPLIT (8 << 20)
#define XFER_PIECE (4 << 20)
#define XFER_NPIECE 32

/* Fills x[0..fn->nop-1] and returns the size in bytes of the pinned block
 * (staging buffers 64-byte aligned, in schedule order); *nev (where not
 * NULL) gets the number of events the copies in pieces record. */
int64_t xfer_plan(const Fn *fn, Xfer *x, int *nev);

/* Piece k of copy x: its length in bytes, its byte offset in *at. */
int64_t xfer_piece(const Xfer *x, int k, int64_t *at);

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
