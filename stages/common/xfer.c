/* xfer.c: classifies the copy ops of a partitioned function, lays out their
 * staging buffers in page-locked host memory, and places arena buffers. */
#include <stdlib.h>
#include <string.h>

#include "xfer.h"

#define ALIGN 64

/* Whether op runs on cuda. */
int
oncuda(const Fn *fn, const Op *op)
{
	int k;

	if (op->dev == DEV_CUDA)
		return 1;
	if (op->part >= 0 && op->part < fn->npart && fn->part[op->part].dev == DEV_CUDA)
		return 1;
	for (k = 0; k < op->nout; k++)
		if (fn->val[op->out[k]].t.dev == DEV_CUDA)
			return 1;
	return 0;
}

/* Whether the copy x (op i) of a device value is one to split into
 * pieces (xfer.h): big enough, its host value read by no op and named by
 * a program output. */
static int
splits(const Fn *fn, const Xfer *x, int i, const char *read)
{
	int v = fn->op[i].out[0], j;

	if (x->kind != X_D2H || x->bytes < XFER_SPLIT || read[v])
		return 0;
	for (j = 0; j < fn->nout; j++)
		if (fn->out[j].val == v)
			return 1;
	return 0;
}

/* Classifies every op; copies that move bytes at run time get staging.  A
 * device->host copy is issued at the end of the last cuda partition before
 * it in the schedule: all device work it depends on is done by then.  The
 * copies of one partition follow its ops in the schedule, before the next
 * partition's, so the events of its copies in pieces are numbered in a
 * row: its head, then each piece. */
int64_t
xfer_plan(const Fn *fn, Xfer *x, int *nev)
{
	int64_t pin = 0, nb;
	int i, k, lastcuda = -1, ev = 0, headof = -1, head = -1;
	char *read = calloc((size_t)fn->nval + 1, 1);   /* per value: an op reads it */

	if (read == NULL)
		dp_die("out of memory");
	for (i = 0; i < fn->nop; i++)
		for (k = 0; k < fn->op[i].nin; k++)
			read[fn->op[i].in[k]] = 1;
	for (i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		x[i] = (Xfer){.kind = X_NONE, .pin = -1, .part = -1, .src = -1, .ev = -1, .head = -1};
		if (oncuda(fn, op) && op->kind != Ocopy)
			lastcuda = op->part;
		if (op->kind != Ocopy)
			continue;
		const Val *from = &fn->val[op->in[0]], *to = &fn->val[op->out[0]];
		int isconst = fn->op[from->def].kind == Oconst;
		x[i].src = from->def;
		if (from->t.dev == to->t.dev)
			continue;   /* no transfer (never made by partition) */
		if (to->t.dev == DEV_CUDA) {
			x[i].kind = isconst ? X_UPLOAD : X_H2D;
			lastcuda = op->part;
		} else {
			x[i].kind = isconst ? X_HOSTCONST : X_D2H;
			x[i].part = lastcuda;
			if (lastcuda < 0 && !isconst)
				dp_die("op %d copies a device value before any cuda partition", i);
		}
		if (x[i].kind != X_H2D && x[i].kind != X_D2H)
			continue;
		nb = dp_nbytes(&to->t);
		x[i].pin = pin;
		x[i].bytes = nb;
		pin += (nb + ALIGN - 1) / ALIGN * ALIGN;
		if (!splits(fn, &x[i], i, read))
			continue;
		x[i].piece = (nb + XFER_NPIECE - 1) / XFER_NPIECE;
		if (x[i].piece < XFER_PIECE)
			x[i].piece = XFER_PIECE;
		x[i].piece = (x[i].piece + ALIGN - 1) / ALIGN * ALIGN;
		x[i].npiece = (int)((nb + x[i].piece - 1) / x[i].piece);
		if (headof != lastcuda) {   /* the partition's first: its head */
			headof = lastcuda;
			head = ev++;
		}
		x[i].head = head;
		x[i].ev = ev;
		ev += x[i].npiece;
	}
	free(read);
	if (nev)
		*nev = ev;
	return pin;
}

/* Piece k of a copy in pieces. */
int64_t
xfer_piece(const Xfer *x, int k, int64_t *at)
{
	*at = (int64_t)k * x->piece;
	return x->bytes - *at < x->piece ? x->bytes - *at : x->piece;
}

/* First-fit placement, in op order (see xfer.h). */
int64_t
firstfit(int n, const int64_t *size, const int *birth, const int *death, int nop,
         int64_t align, int64_t *off)
{
	int *live = malloc(((size_t)n + 1) * sizeof *live);   /* by offset */
	int nl = 0, i, b, j;
	int64_t top = 0;

	if (live == NULL)
		dp_die("out of memory");
	for (i = 0; i < nop; i++) {
		for (b = 0; b < n; b++) {
			int64_t at = 0, sz;
			if (birth[b] != i || size[b] <= 0)
				continue;
			sz = (size[b] + align - 1) / align * align;
			for (j = 0; j < nl; j++) {
				if (off[live[j]] - at >= sz)
					break;
				at = off[live[j]] + (size[live[j]] + align - 1) / align * align;
			}
			memmove(live + j + 1, live + j, (size_t)(nl - j) * sizeof *live);
			live[j] = b;
			nl++;
			off[b] = at;
			if (at + sz > top)
				top = at + sz;
		}
		for (j = 0; j < nl;) {
			if (death[live[j]] <= i) {
				memmove(live + j, live + j + 1, (size_t)(nl - j - 1) * sizeof *live);
				nl--;
			} else {
				j++;
			}
		}
	}
	free(live);
	return top;
}
