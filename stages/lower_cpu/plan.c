/* plan.c: the static buffer plan: where each value lives (the caller's
 * buffers, the weight blob, a free view of another value, or the arena),
 * liveness over the schedule, and first-fit arena offsets (64-byte aligned)
 * that reuse a buffer once its value is dead. */
#include <string.h>

#include "lower.h"

#define ALIGN 64

static void
sethome(Home *h, int kind, int64_t idx, int ro)
{
	h->kind = kind;
	h->idx = idx;
	h->ro = ro;
}

/* Gives each value a home and each duplicated or read-only output a copy. */
static int
homes(Fn *fn, Plan *p, Err *err)
{
	int *nuse, *nmat;
	int i, j, k, nin = 0;

	nuse = dp_alloc(fn->arena, (size_t)fn->nval, sizeof *nuse);
	nmat = dp_alloc(fn->arena, (size_t)fn->nval, sizeof *nmat);
	for (i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		for (k = 0; k < op->nin; k++) {
			nuse[op->in[k]]++;
			nmat[op->in[k]] += dp_matuse(fn, op, k);
		}
	}
	for (i = 0; i < fn->nval; i++)
		if (fn->val[i].t.dev != DEV_CPU)
			sethome(&p->h[i], H_DEV, 0, 0);
	for (i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		const Op *src = p->x[i].src >= 0 ? &fn->op[p->x[i].src] : op;
		Home *h;

		p->inidx[i] = -1;
		if (p->x[i].kind == X_D2H) {
			sethome(&p->h[op->out[0]], H_PIN, p->x[i].pin, 1);
			continue;
		}
		if (op->kind != Oinput && op->kind != Oconst && p->x[i].kind != X_HOSTCONST)
			continue;
		h = &p->h[op->out[0]];
		if (op->kind == Oinput) {
			p->inidx[i] = nin;
			sethome(h, H_IN, nin++, 1);
			continue;
		}
		if (op->dev != DEV_CPU)
			continue;   /* a constant on the device */
		int64_t off = dp_geti(src, "offset", -1), nb = dp_geti(src, "nbytes", -1);
		int esize = dp_dtype_size[fn->val[op->out[0]].t.dtype];
		if (off < 0 || nb < h->bytes || off % esize != 0 ||
		    (fn->wsize > 0 && (off > fn->wsize || nb > fn->wsize - off))) {
			dp_seterr(err, "op %d (const): bytes %lld..%lld do not hold its %lld-byte "
			          "tensor inside the %lld-byte weight blob at an aligned offset",
			          i, (long long)off, (long long)(off + nb), (long long)h->bytes,
			          (long long)fn->wsize);
			return -1;
		}
		sethome(h, H_CONST, off, !dp_geti(src, "state", 0));   /* state: written by assign */
	}
	for (j = 0; j < fn->nout; j++) {
		Home *h = &p->h[fn->out[j].val];
		if (h->kind == H_NONE)
			sethome(h, H_OUT, j, 0);
		else
			p->copy[j] = 1;
	}
	for (i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		int v, u;

		if (op->nout != 1 || op->nin < 1 || p->h[op->out[0]].kind != H_NONE)
			continue;
		v = op->out[0];
		u = op->in[0];
		if (dp_isreshape(fn, op) || dp_writesstate(fn, op) >= 0 ||
		    (dp_istranspose(fn, op) && nuse[v] > 0 && nuse[v] == nmat[v])) {
			sethome(&p->h[v], H_VIEW, 0, p->h[u].ro);
			p->h[v].base = u;
			p->h[v].trans = dp_istranspose(fn, op);
		}
	}
	for (i = 0; i < fn->nval; i++)
		if (p->h[i].kind == H_NONE)
			sethome(&p->h[i], H_ARENA, 0, 0);
	return 0;
}

/* Reserves op i's scratch (nn_scratch) first-fit among the nb live blocks
 * (sorted by offset), once its results are placed: it lives only while the
 * op runs, so it is not added to them. */
static void
scratch(Fn *fn, Plan *p, int i, const int64_t *off, const int64_t *len, int nb)
{
	int64_t size = (nn_scratch(fn, &fn->op[i], p->blk) + ALIGN - 1) / ALIGN * ALIGN, at = 0;
	int b;

	if (size <= 0 || fn->op[i].dev != DEV_CPU)
		return;
	for (b = 0; b < nb; b++) {
		if (off[b] - at >= size)
			break;
		at = off[b] + len[b];
	}
	p->scratch[i] = at;
	if (at + size > p->arena)
		p->arena = at + size;
}

/* First-fit placement of arena values in schedule order; a value's block
 * is freed after its last reader, and an op's results are placed before
 * its operands are freed, so results never overlap operands. */
static void
arena(Fn *fn, Plan *p)
{
	int64_t *off = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *off);
	int64_t *len = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *len);
	int *who = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *who);
	int *head = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *head);
	int *next = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *next);
	int nb = 0, i, k, v;

	for (i = 0; i < fn->nop; i++)
		head[i] = -1;
	for (v = fn->nval - 1; v >= 0; v--) {
		if (p->h[v].kind != H_ARENA)
			continue;
		next[v] = head[p->h[v].last];
		head[p->h[v].last] = v;
	}
	p->arena = 0;
	for (i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		for (k = 0; k < op->nout; k++) {
			int64_t size, at = 0;
			int b;

			v = op->out[k];
			if (p->h[v].kind != H_ARENA || p->h[v].bytes == 0)
				continue;
			size = (p->h[v].bytes + ALIGN - 1) / ALIGN * ALIGN;
			for (b = 0; b < nb; b++) {
				if (off[b] - at >= size)
					break;
				at = off[b] + len[b];
			}
			memmove(off + b + 1, off + b, (size_t)(nb - b) * sizeof *off);
			memmove(len + b + 1, len + b, (size_t)(nb - b) * sizeof *len);
			memmove(who + b + 1, who + b, (size_t)(nb - b) * sizeof *who);
			off[b] = at;
			len[b] = size;
			who[b] = v;
			nb++;
			p->h[v].idx = at;
			if (at + size > p->arena)
				p->arena = at + size;
		}
		scratch(fn, p, i, off, len, nb);
		for (v = head[i]; v >= 0; v = next[v]) {
			int b;
			for (b = 0; b < nb && who[b] != v; b++)
				;
			if (b == nb)
				continue;   /* empty: never placed */
			memmove(off + b, off + b + 1, (size_t)(nb - b - 1) * sizeof *off);
			memmove(len + b, len + b + 1, (size_t)(nb - b - 1) * sizeof *len);
			memmove(who + b, who + b + 1, (size_t)(nb - b - 1) * sizeof *who);
			nb--;
		}
	}
}

/* Computes the plan: homes, sizes, liveness (views keep their base alive)
 * and arena offsets. */
int
plan(Fn *fn, const char *blk, Plan *p, Err *err)
{
	int i, k;

	memset(p, 0, sizeof *p);
	p->blk = blk;
	p->h = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *p->h);
	p->copy = dp_alloc(fn->arena, (size_t)fn->nout + 1, sizeof *p->copy);
	p->inidx = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *p->inidx);
	p->scratch = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *p->scratch);
	p->x = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *p->x);
	xfer_plan(fn, p->x, &p->nev);
	for (i = 0; i < fn->npart; i++)
		p->ncuda += fn->part[i].dev == DEV_CUDA;
	for (i = 0; i < fn->nval; i++) {
		p->h[i].bytes = blk[i] ? nn_blkbytes(&fn->val[i].t) : dp_nbytes(&fn->val[i].t);
		p->h[i].last = fn->val[i].def;
		if (p->h[i].bytes < 0) {
			dp_seterr(err, "op %d (%s): its result is too large", fn->val[i].def,
			          dp_op_name[fn->op[fn->val[i].def].kind]);
			return -1;
		}
	}
	if (homes(fn, p, err) != 0)
		return -1;
	for (i = 0; i < fn->nop; i++)
		for (k = 0; k < fn->op[i].nin; k++)
			p->h[fn->op[i].in[k]].last = i;
	for (i = fn->nop - 1; i >= 0; i--) {
		const Op *op = &fn->op[i];
		for (k = 0; k < op->nout; k++) {
			const Home *h = &p->h[op->out[k]];
			if (h->kind == H_VIEW && p->h[h->base].last < h->last)
				p->h[h->base].last = h->last;
		}
	}
	arena(fn, p);
	return 0;
}
