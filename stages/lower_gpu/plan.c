/* plan.c: the device side of the buffer plan: fusion (values computed inside
 * the kernel of their one reader never reach memory, nor small ones that
 * each of their elementwise readers' kernels computes again: manyread),
 * free views (reshapes;
 * transposes read through matmul strides), and where every other device
 * value lives: the weights block, uploaded once at init, or the arena,
 * placed first-fit by liveness over the positions where kernels run. */
#include <string.h>

#include "gpu.h"

#define ALIGN 256

/* Whether an elementwise kernel computes ops of kind k, element by element
 * (kern.c): the elementwise forms, normalizations by channel, shape ops as
 * index mappings, sources from the index, gathers reading their index
 * operand in the kernel. */
int
elemkind(int k)
{
	switch (dp_op_form[k]) {
	case Funary: case Funaryn: case Fbinary: case Fbinaryn: case Fcompare: case Flogic:
	case Fwhere:
	case Fcast: case Fview: case Fmove: case Fgather: case Fsource:
		return 1;
	}
	return k == Onormalize || k == Abatchnorm;
}

/* Whether op is computed by an elementwise kernel on the device. */
int
fusable(const Fn *fn, const Op *op)
{
	(void)fn;
	return elemkind(op->kind) && op->dev == DEV_CUDA;
}

static int
ismm(const Op *op)
{
	return op->kind == Alinear || op->kind == Aaddmm || op->kind == Amm;
}

/* The value holding v's bytes (through views). */
int
gbase(const Gpu *g, int v)
{
	while (g->h[v].kind == G_VIEW)
		v = g->h[v].base;
	return v;
}

/* Readers of each value, ports counted (as a reader -1). */
static void
gpu_uses(Gpu *g)
{
	Fn *fn = g->fn;
	int i, k;

	for (i = 0; i < fn->nval; i++)
		g->user[i] = -1;
	for (i = 0; i < fn->nop; i++)
		for (k = 0; k < fn->op[i].nin; k++) {
			g->nuse[fn->op[i].in[k]]++;
			g->user[fn->op[i].in[k]] = i;
		}
	for (k = 0; k < fn->nout; k++) {
		g->nuse[fn->out[k].val]++;
		g->user[fn->out[k].val] = -1;
	}
}

/* Whether value v is in device memory whatever the plan: read by several
 * ops or computed by no elementwise kernel (a product, a reduction...), so
 * never inside a reader's kernel. */
static int
rooted(const Gpu *g, int v)
{
	const Op *d = &g->fn->op[g->fn->val[v].def];

	return d->dev == DEV_CUDA && d->nout == 1 && g->fn->val[v].t.dev == DEV_CUDA &&
	       (g->nuse[v] > 1 || !fusable(g->fn, d)) && !dp_isreshape(g->fn, d) &&
	       (g->fold == NULL || g->fold[g->fn->val[v].def] < 0);
}

/* Whether op is a product gepilogue and ggroup may take: aten.linear of a
 * constant weight [N, K], no bias, input rank >= 3, f32, few rows. */
static int
gemvable(const Gpu *g, const Op *op)
{
	const Fn *fn = g->fn;

	return op->kind == Alinear && op->nin == 2 && op->dev == DEV_CUDA &&
	       ty(g, op->out[0])->dtype == DP_F32 && ty(g, op->in[0])->rank >= 3 &&
	       fn->op[fn->val[op->in[1]].def].kind == Oconst &&
	       dp_numel(ty(g, op->out[0])) / ty(g, op->in[1])->dim[0] <= 8;
}

/* The GEMV epilogues: a product of few rows (aten.linear of a weight, no
 * bias: a decoder's projections) whose one reader is an add (alpha 1) or a
 * mul of its own type, the other operand in memory (or, for a mul, the silu
 * of a value in memory: SwiGLU's gate), computes that op in its epilogue
 * (mm.c), as the op's own kernel would: the residual adds after the
 * attention's and the MLP's output projections, the gate times the up
 * projection.  After nnplan, before the inlining, which then leaves the
 * folded op and its other operand alone (the silu is computed in the
 * epilogue). */
static void
gepilogue(Gpu *g)
{
	Fn *fn = g->fn;
	int i;

	for (i = 0; i < fn->nop; i++)
		g->epi[i] = g->epimm[i] = g->gate[i] = -1;
	for (i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i], *u;
		int v = op->out[0], o, od;
		if (!gemvable(g, op) || g->nuse[v] != 1 || g->user[v] < 0 || g->epimm[g->user[v]] >= 0 ||
		    (g->fold && (g->fold[i] >= 0 || g->fold[g->user[v]] >= 0)))
			continue;
		u = &fn->op[g->user[v]];
		if ((u->kind != Aadd && u->kind != Amul) || u->dev != DEV_CUDA || u->part != op->part ||
		    (u->kind == Aadd && dp_getf(u, "alpha", 1) != 1) || u->in[0] == u->in[1] ||
		    !dp_type_eq(ty(g, u->out[0]), ty(g, v)))
			continue;
		o = u->in[u->in[0] == v];
		if (!dp_type_eq(ty(g, o), ty(g, v)))
			continue;
		od = fn->val[o].def;
		if (!rooted(g, o) && !(u->kind == Amul && fn->op[od].kind == Asilu &&
		                       g->nuse[o] == 1 && fn->op[od].dev == DEV_CUDA &&
		                       dp_type_eq(ty(g, fn->op[od].in[0]), ty(g, v)) &&
		                       rooted(g, fn->op[od].in[0])))
			continue;
		g->epi[i] = g->user[v];
		g->epimm[g->user[v]] = i;
		if (u->kind == Amul && fn->op[od].kind == Asilu) {   /* the gate a sibling: */
			int t = fn->val[fn->op[od].in[0]].def;   /* summed in this kernel */
			if (gemvable(g, &fn->op[t]) && fn->op[t].in[0] == op->in[0] &&
			    g->nuse[fn->op[t].out[0]] == 1 && fn->op[t].part == op->part &&
			    g->epi[t] < 0 && g->gate[t] < 0 &&
			    ty(g, fn->op[t].in[1])->dim[0] == ty(g, op->in[1])->dim[0])
				g->gate[i] = t;
		}
	}
	for (i = 0; i < fn->nop; i++)   /* a gate summed in its sibling's kernel: no kernel */
		if (g->gate[i] >= 0)
			g->epi[g->gate[i]] = g->user[fn->op[g->gate[i]].out[0]];
}

/* Sibling products: the one-row products of one input (a decoder's q, k
 * and v projections), none with anything folded into it, run as one GEMV
 * kernel over all their columns at the first one's place (mm.c), up to 4
 * at a time.  After the homes, before the liveness. */
static void
ggroup(Gpu *g)
{
	Fn *fn = g->fn;
	int i, j, n;

	for (i = 0; i < fn->nop; i++)
		g->group[i] = -1;
	for (i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		if (g->group[i] >= 0 || !gemvable(g, op) || g->relu[i] >= 0 || g->epi[i] >= 0 ||
		    g->h[op->out[0]].kind != G_ARENA ||
		    dp_numel(ty(g, op->out[0])) != ty(g, op->in[1])->dim[0])
			continue;
		for (j = i + 1, n = 1; j < fn->nop && n < 4; j++) {
			const Op *s = &fn->op[j];
			if (s->in[0] != op->in[0] || s->part != op->part || !gemvable(g, s) ||
			    g->relu[j] >= 0 || g->epi[j] >= 0 || g->h[s->out[0]].kind != G_ARENA ||
			    dp_numel(ty(g, s->out[0])) != ty(g, s->in[1])->dim[0])
				continue;
			g->group[i] = i;
			g->group[j] = i;
			n++;
		}
	}
}

enum {
	MANY_MAX = 4096,   /* elements of a value that several kernels may compute again */
	MANY_COPIES = 8,   /* times at most that one kernel computes it */
	MANY_READS = 256,  /* its reads at most (a table read by each layer) */
};

/* What the homes know of the ops after the one being placed: where each
 * one's result is computed (gpu_homes decides from the last op back). */
typedef struct Inl {
	unsigned char *rmsop;   /* per op: one of an RMS norm's row kernel */
	int *root;         /* per op: the op of the kernel computing its result,
	                      -1 where several kernels do (manyread) */
	int *copies;       /* per op: times its result is computed in that kernel;
	                      where several, at most that in any of them */
	int *nread;        /* per kernel's root op: the operands its ops read from
	                      memory, at most (kept within GPU_MAXREAD), and its ops */
	int *nops;         /* (within GPU_MAXOPS) */
} Inl;

/* Whether elementwise op i's result, of at most MANY_MAX elements, is read
 * only by elementwise ops of its partition whose kernels kern.c writes, so
 * that each of those kernels may compute it again instead of a kernel of
 * its own writing it: a decoder step's rotary tables (a position times the
 * inverse frequencies, concatenated with itself, read by cos and sin) are
 * then no launch of their own, each launch a link of the chain of
 * dependent kernels.  Not where it or a reader is a GEMV's epilogue or its
 * operand (mm.c reads that in memory, or computes a silu of a value in
 * memory), part of an RMS norm's row kernel (which reads x in memory) or
 * of a convolution's chain, nor where a reader is a reshape that would be
 * a view of it in memory (a product's operand); nor where one kernel
 * would compute it more than MANY_COPIES times (kern.c's elem computes a
 * value reached twice in a kernel twice where at two indices: a web of
 * such values, a grid_sample's decomposition, would grow as a product of
 * its reads), the readers of one kernel counted together, those that
 * several kernels compute counted at their most.  Sets in->copies[i]. */
static int
manyread(const Gpu *g, Inl *in, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	int v = op->out[0], j, k, t, n = 0, m = 0, most = 0, many = 0;
	int root[MANY_READS], copies[MANY_READS];

	if (!fusable(fn, op) || op->kind == Onormalize || op->kind == Abatchnorm ||
	    dp_numel(ty(g, v)) > MANY_MAX || g->nuse[v] > MANY_READS || in->rmsop[i] ||
	    g->epi[i] >= 0 || g->epimm[i] >= 0 || (g->fold && g->fold[i] >= 0))
		return 0;
	for (j = i + 1; j < fn->nop; j++)
		for (k = 0; k < fn->op[j].nin; k++) {
			const Op *u = &fn->op[j];
			int w;
			if (u->in[k] != v)
				continue;
			w = u->nout == 1 ? g->user[u->out[0]] : -1;   /* u's reader */
			if (!fusable(fn, u) || u->nout != 1 || u->part != op->part ||
			    g->epimm[j] >= 0 || g->epi[j] >= 0 || (w >= 0 && g->epimm[w] >= 0) ||
			    in->rmsop[j] || (g->fold && g->fold[j] >= 0) ||
			    (dp_isreshape(fn, u) && g->h[u->out[0]].kind != G_INLINE))
				return 0;   /* (a reshape in a kernel of its own: a view of v in memory) */
			n++;
			if (in->root[j] < 0)   /* several kernels: in any of them */
				many += in->copies[j];
			else
				root[m] = in->root[j], copies[m++] = in->copies[j];
		}
	if (n != g->nuse[v])
		return 0;   /* a program's output (a use too) */
	for (j = 0; j < m; j++) {   /* the readers of each kernel together */
		int c = 0;
		for (t = 0; t < m; t++)
			if (root[t] == root[j])
				c += copies[t];
		if (c > most)
			most = c;
	}
	if (most + many > MANY_COPIES)
		return 0;
	in->copies[i] = most + many;
	return 1;
}

/* Whether op i's one result is computed inside the kernel of its reader
 * (of each reader, where manyread). */
static int
inlined(Gpu *g, Inl *in, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	int v, u;

	if (op->nout != 1 || op->dev != DEV_CUDA)
		return 0;
	if (g->fold && g->fold[i] >= 0)   /* a convolution's chain (nnplan) */
		return g->fold[i] != i;
	if (g->epi[i] >= 0)   /* a GEMV computing its reader in its epilogue */
		return 1;
	if (g->epimm[i] >= 0)   /* that reader: where the GEMV runs */
		return 0;
	v = op->out[0];
	u = g->user[v];
	if (u >= 0 && g->epimm[u] >= 0)   /* the other operand of a GEMV's epilogue: */
		return op->kind == Asilu;   /* in memory, or SwiGLU's silu computed there */
	if (u >= 0 && g->nuse[v] == 1 && fn->op[u].kind == Oindexwrite && fn->op[u].in[2] == v &&
	    fn->op[u].part == op->part && fusable(fn, op) && dp_numel(ty(g, v)) < (1 << 27))
		return 1;   /* index_write's src: a chain computed in its kernel (kern.c) */
	if (g->nuse[v] > 1 && u >= 0 && manyread(g, in, i))
		return 1;   /* small, read by several elementwise kernels: computed in each */
	if (g->nuse[v] != 1 || u < 0 || fn->op[u].part != op->part)
		return 0;
	if (g->fold && g->fold[u] >= 0)   /* read by a convolution's kernel */
		return 0;
	if (fusable(fn, op) && fusable(fn, &fn->op[u]))   /* unless its kernel would read too many */
		return in->root[u] < 0 || (in->nread[in->root[u]] - 1 + op->nin <= GPU_MAXREAD &&
		                           in->nops[in->root[u]] < GPU_MAXOPS);
	/* a matmul whose one reader is a relu that is not itself inlined:
	 * the relu becomes the matmul's epilogue */
	if (ismm(op) && fn->op[u].kind == Arelu && fn->val[v].t.dtype == DP_F32 &&
	    !inlined(g, in, u)) {
		g->relu[i] = u;
		return 1;
	}
	return 0;
}

/* Whether every reader of v reads it as a matrix through strides. */
static int
allmat(const Gpu *g, int v)
{
	const Fn *fn = g->fn;
	int i, k, n = 0;

	for (i = 0; i < fn->nop; i++)
		for (k = 0; k < fn->op[i].nin; k++)
			if (fn->op[i].in[k] == v) {
				if (!ismm(&fn->op[i]) || !dp_matuse(fn, &fn->op[i], k) ||
				    fn->op[i].dev != DEV_CUDA)
					return 0;
				n++;
			}
	return n == g->nuse[v];
}

/* The windows attention reads in place (GHome.strided): a chain of
 * aten.view, aten.permute, aten.slice and aten.select on the device
 * between a value in memory and the q, k or v of attention, each link read
 * by nothing but the chain's next links and attention, whose strides leave
 * the head's axis dense (the kernels read rows of q, k, v).  ViT's
 * qkv.reshape().permute().unbind() and GPT-2's split().view().transpose()
 * then cost no copy kernels. */
static int
windowop(const Fn *fn, const Op *op)
{
	return (op->kind == Aview || op->kind == Apermute || op->kind == Aslice ||
	        op->kind == Aselect) && op->nin == 1 && op->nout == 1 && op->dev == DEV_CUDA &&
	       fn->val[op->out[0]].t.dtype == DP_F32 && fn->val[op->in[0]].t.dtype == DP_F32;
}

/* The strides of a view of sizes nd[nr] of a tensor of sizes od[orank] and
 * strides os, as far as one exists without a copy: each run of old axes
 * that are contiguous with each other splits or merges into new axes. */
static int
viewstrides(const int64_t *od, const int64_t *os, int orank, const int64_t *nd, int nr,
            int64_t *ns)
{
	int64_t base, onum = 1, nnum = 1;
	int j = nr - 1;

	if (orank == 0) {
		for (j = 0; j < nr; j++)
			ns[j] = 1;
		return 0;
	}
	base = os[orank - 1];
	for (int d = orank - 1; d >= 0; d--) {
		onum *= od[d];
		if (d > 0 && (od[d - 1] == 1 || os[d - 1] == onum * base))
			continue;   /* axis d - 1 continues the run (or has one index) */
		while (j >= 0 && (nnum < onum || nd[j] == 1)) {
			ns[j] = nnum * base;
			nnum *= nd[j--];
		}
		if (nnum != onum)
			return -1;
		if (d > 0) {
			base = os[d - 1];
			onum = nnum = 1;
		}
	}
	return j == -1 ? 0 : -1;
}

/* Strides and offset of v, following back the values in[] marks (windows)
 * to the first unmarked one, which is taken as dense. */
static int
chainlayout(const Gpu *g, int v, const char *in, int64_t *str, int64_t *off)
{
	const Fn *fn = g->fn;
	const Type *t = &fn->val[v].t;
	const Op *op;
	int64_t xs[DP_MAXRANK], xo;
	int r, d, j, n;

	if (!in[v] || fn->val[v].def < 0) {
		int64_t s = 1;
		for (d = t->rank - 1; d >= 0; d--) {
			str[d] = s;
			s *= t->dim[d];
		}
		*off = 0;
		return 0;
	}
	op = &fn->op[fn->val[v].def];
	if (chainlayout(g, op->in[0], in, xs, &xo) != 0)
		return -1;
	const Type *tx = &fn->val[op->in[0]].t;
	r = tx->rank;
	*off = xo;
	switch (op->kind) {
	case Aview:
		return dp_numel(t) == 0 ? -1 : viewstrides(tx->dim, xs, r, t->dim, t->rank, str);
	case Apermute: {
		const Attr *a = dp_attr(op, "dims");
		if (a == NULL || a->n != r)
			return -1;
		for (j = 0; j < r; j++)
			str[j] = xs[normdim(a->ints[j], r)];
		return 0;
	}
	case Aslice: {   /* start clipped as the shape rule clips it */
		int64_t len, at;
		d = normdim(dp_geti(op, "dim", 0), r);
		len = tx->dim[d];
		at = dp_geti(op, "start", 0);
		if (at < 0)
			at = at < -len ? 0 : at + len;
		if (at > len)
			at = len;
		memcpy(str, xs, sizeof xs);
		str[d] *= dp_geti(op, "step", 1);
		*off += at * xs[d];
		return 0;
	}
	case Aselect: {
		int64_t at;
		d = normdim(dp_geti(op, "dim", 0), r);
		at = dp_geti(op, "index", 0);
		if (at < 0)
			at += tx->dim[d];
		for (j = n = 0; j < r; j++)
			if (j != d)
				str[n++] = xs[j];
		*off += at * xs[d];
		return 0;
	}
	}
	return -1;
}

/* The strides of v in the memory of z, where z is v through a chain of
 * views and permutes, each link the one reader of the one before: z dense,
 * back through the links (a view's strides as viewstrides, a permute's
 * inverted). */
static int
outlayout(const Gpu *g, int v, int z, int64_t *str)
{
	const Fn *fn = g->fn;
	const Type *t = &fn->val[z].t;
	int64_t zs[DP_MAXRANK], s = 1;
	int d;

	for (d = t->rank - 1; d >= 0; d--) {
		zs[d] = s;
		s *= t->dim[d];
	}
	while (z != v) {
		const Op *op = &fn->op[fn->val[z].def];
		const Type *tx = &fn->val[op->in[0]].t, *tz = &fn->val[z].t;
		int64_t xs[DP_MAXRANK];
		if (op->kind == Aview) {
			if (dp_numel(tz) == 0 || viewstrides(tz->dim, zs, tz->rank, tx->dim, tx->rank, xs) != 0)
				return -1;
		} else if (op->kind == Apermute) {
			const Attr *a = dp_attr(op, "dims");
			if (a == NULL || a->n != tx->rank)
				return -1;
			for (d = 0; d < tx->rank; d++)
				xs[normdim(a->ints[d], tx->rank)] = zs[d];
		} else {
			return -1;
		}
		memcpy(zs, xs, sizeof zs);
		z = op->in[0];
	}
	memcpy(str, zs, sizeof zs);
	return 0;
}

int
gviewlayout(const Gpu *g, int v, int64_t *str, int64_t *off)
{
	const Fn *fn = g->fn;
	char *in;

	if (g->h[v].kind == G_VIEW && g->h[v].strided == 2) {
		*off = 0;
		return outlayout(g, v, g->h[v].base, str);
	}
	in = dp_alloc(fn->arena, (size_t)fn->nval + 1, 1);
	for (int x = 0; x < fn->nval; x++)
		in[x] = g->h[x].kind == G_VIEW && g->h[x].strided == 1;
	return chainlayout(g, v, in, str, off);
}

/* Attention's result written in place: where it is read by nothing but a
 * chain of views and permutes (on the device, each link the one reader of
 * the one before, the last in memory: GPT-2's and ViT's
 * transpose(1, 2).reshape()), attention writes the chain's last value z
 * through strides (its result a window of z, strided 2), and the links
 * are views: the copy kernel that made z is gone.  z's kernel position is
 * the attention's (its memory is written there). */
static void
attnwrites(Gpu *g)
{
	Fn *fn = g->fn;
	int64_t str[DP_MAXRANK];

	for (int i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		int y, z, r, k;
		if (op->kind != Asdpa || op->dev != DEV_CUDA || op->nout != 1)
			continue;
		y = z = op->out[0];
		if (fn->val[y].t.dtype != DP_F32 || g->h[y].kind != G_ARENA)
			continue;
		for (;;) {   /* follow the one reader while it is a view or permute */
			int u = g->user[z], out = 0;
			for (k = 0; k < fn->nout; k++)
				out |= fn->out[k].val == z;
			if (out || g->nuse[z] != 1 || u < 0 || !windowop(fn, &fn->op[u]) ||
			    (fn->op[u].kind != Aview && fn->op[u].kind != Apermute) ||
			    fn->op[u].part != op->part)
				break;
			z = fn->op[u].out[0];
		}
		r = fn->val[y].t.rank;
		if (z == y || g->h[z].kind != G_ARENA || r < 2 || outlayout(g, y, z, str) != 0 ||
		    str[r - 1] != 1)
			continue;
		for (int v = z; v != y; ) {   /* the links: views */
			int x = fn->op[fn->val[v].def].in[0];
			if (v != z) {
				g->h[v].kind = G_VIEW;
				g->h[v].base = x;
				g->h[v].trans = 0;
				g->h[v].strided = 1;
			}
			v = x;
		}
		g->h[y].kind = G_VIEW;
		g->h[y].base = z;
		g->h[y].trans = 0;
		g->h[y].strided = 2;
		g->h[z].wrby = 1 + i;
	}
}

/* Whether attention may read value v (op i's result) through strides:
 * every reader is attention (q, k or v) or a window marked ok. */
static int
attnonly(const Gpu *g, int v, const char *ok)
{
	const Fn *fn = g->fn;
	int i, k, n = 0;

	for (k = 0; k < fn->nout; k++)
		if (fn->out[k].val == v)
			return 0;
	for (i = 0; i < fn->nop; i++)
		for (k = 0; k < fn->op[i].nin; k++)
			if (fn->op[i].in[k] == v) {
				const Op *u = &fn->op[i];
				if (u->dev != DEV_CUDA || u->part != fn->op[fn->val[v].def].part)
					return 0;
				if (!(u->kind == Asdpa && k < 3) && !(windowop(fn, u) && ok[u->out[0]]))
					return 0;
				n++;
			}
	return n > 0 && n == g->nuse[v];
}

/* Whether the memory under the chain ending at v is there to read: the
 * first value not marked is in memory, or computed inside the first link's
 * kernel by an elementwise kernel that can run on its own instead. */
static int
rootok(const Gpu *g, int v, const char *ok)
{
	const Fn *fn = g->fn;
	const GHome *h;
	int d;

	while (ok[v])
		v = fn->op[fn->val[v].def].in[0];
	h = &g->h[v];
	d = fn->val[v].def;
	if (h->kind == G_INLINE)
		return d >= 0 && fusable(fn, &fn->op[d]) && !(g->fold && g->fold[d] >= 0);
	return h->kind == G_ARENA || h->kind == G_WEIGHT || (h->kind == G_VIEW && !h->trans);
}

static void
attnwindows(Gpu *g)
{
	Fn *fn = g->fn;
	char *ok = dp_alloc(fn->arena, (size_t)fn->nval + 1, 1);
	int i, k, changed = 1;
	int64_t str[DP_MAXRANK], off;

	for (i = 0; i < fn->nop; i++)
		if (windowop(fn, &fn->op[i]))
			ok[fn->op[i].out[0]] = 1;
	while (changed) {
		changed = 0;
		for (i = fn->nop - 1; i >= 0; i--) {   /* readers first */
			int v = fn->op[i].out[0];
			if (windowop(fn, &fn->op[i]) && ok[v] && !attnonly(g, v, ok))
				ok[v] = 0, changed = 1;
		}
		/* every chain attention reads: strides with a dense head, else
		 * none of its links is a window */
		for (i = 0; i < fn->nop && !changed; i++) {
			const Op *op = &fn->op[i];
			if (op->kind != Asdpa || op->dev != DEV_CUDA)
				continue;
			for (k = 0; k < 3 && k < op->nin; k++) {
				int v = op->in[k], r = fn->val[v].t.rank;
				if (!ok[v] || (chainlayout(g, v, ok, str, &off) == 0 && r >= 2 &&
				               str[r - 1] == 1 && rootok(g, v, ok)))
					continue;
				for (; ok[v]; v = fn->op[fn->val[v].def].in[0])
					ok[v] = 0;
				changed = 1;
			}
		}
	}
	for (i = 0; i < fn->nop; i++) {   /* in order: a link's input is decided */
		const Op *op = &fn->op[i];
		if (!windowop(fn, op) || !ok[op->out[0]])
			continue;
		GHome *h = &g->h[op->out[0]], *in = &g->h[op->in[0]];
		if (in->kind == G_INLINE)   /* rootok: its reader is no kernel now */
			in->kind = G_ARENA;
		if (in->kind == G_INLINE || in->kind == G_HOST || (in->kind == G_VIEW && in->trans))
			dp_die("value %d: a window of attention over no memory", op->out[0]);
		h->kind = G_VIEW;
		h->base = op->in[0];
		h->trans = 0;
		h->strided = 1;
	}
}

/* Whether value v's bytes are in device memory, seen through reshapes that
 * were to be computed inside their reader's kernel: those become views
 * (a chain of reshapes, [1,1,768] -> [1,1,12,64] -> [1,12,1,64], read by
 * several kernels is then no copy). */
int
inmemory(Gpu *g, int v)
{
	const Op *d = &g->fn->op[g->fn->val[v].def];
	GHome *h = &g->h[v];

	if (h->kind != G_INLINE)
		return h->kind != G_HOST && !(h->kind == G_VIEW && h->trans);
	if (!dp_isreshape(g->fn, d) || (g->fold && g->fold[g->fn->val[v].def] >= 0) ||
	    !inmemory(g, d->in[0]))
		return 0;
	h->kind = G_VIEW;
	h->base = d->in[0];
	return 1;
}

/* Device homes: inline, views, weights, arena. */
static void
gpu_homes(Gpu *g)
{
	Fn *fn = g->fn;
	Inl in;
	int i;

	for (i = 0; i < fn->nval; i++) {
		g->h[i].kind = fn->val[i].t.dev == DEV_CUDA ? G_ARENA : G_HOST;
		g->h[i].bytes = dp_nbytes(&fn->val[i].t);
	}
	in.rmsop = dp_alloc(fn->arena, (size_t)fn->nop + 1, 1);
	in.root = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *in.root);
	in.copies = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *in.copies);
	in.nread = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *in.nread);
	in.nops = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *in.nops);
	for (i = 0; i < fn->nop; i++)   /* the ops of each RMS norm's row kernel */
		for (int o = g->rms[i]; o >= 0; o = g->user[fn->op[o].out[0]]) {
			in.rmsop[o] = 1;
			if (o == i)
				break;
		}
	for (i = fn->nop - 1; i >= 0; i--) {
		int u = fn->op[i].nout == 1 ? g->user[fn->op[i].out[0]] : -1;
		in.root[i] = i, in.copies[i] = 1, in.nread[i] = fn->op[i].nin, in.nops[i] = 1;
		if (!inlined(g, &in, i))
			continue;
		g->h[fn->op[i].out[0]].kind = G_INLINE;
		if (g->nuse[fn->op[i].out[0]] > 1)   /* manyread: in.copies[i] set */
			in.root[i] = -1;
		else if (u >= 0) {   /* in its one reader's kernel */
			in.root[i] = in.root[u], in.copies[i] = in.copies[u];
			if (in.root[i] >= 0)
				in.nread[in.root[i]] += fn->op[i].nin - 1, in.nops[in.root[i]]++;
		}
	}
	for (i = 0; i < fn->nop; i++) {   /* an RMS norm's ops: in its row kernel, */
		if (g->rms[i] >= 0 && g->h[fn->op[i].out[0]].kind == G_INLINE)
			g->rms[i] = -1;   /* unless its result is computed in a reader's */
		for (int o = g->rms[i]; o >= 0 && o != i; o = g->user[fn->op[o].out[0]])
			g->h[fn->op[o].out[0]].kind = G_INLINE;
	}
	for (i = 0; i < fn->nop; i++) {
		const Op *op = &fn->op[i];
		GHome *h;
		if (op->dev != DEV_CUDA || op->nout != 1)
			continue;
		h = &g->h[op->out[0]];
		if (op->kind == Oconst || g->x[i].kind == X_UPLOAD) {
			h->kind = G_WEIGHT;   /* a state const too: the instance's, written by assign */
			continue;
		}
		if (op->kind == Oassign ||   /* its result: the new value's bytes */
		    (op->kind == Oindexwrite && dp_writesstate(fn, op) >= 0)) {   /* the state's */
			h->kind = G_VIEW;
			h->base = op->in[op->kind == Oassign];
			continue;
		}
		if (h->kind != G_ARENA || op->nin != 1)
			continue;
		if (dp_isreshape(fn, op) && inmemory(g, op->in[0])) {
			h->kind = G_VIEW;
			h->base = op->in[0];
		} else if (dp_istranspose(fn, op) && allmat(g, op->out[0]) &&
		           g->h[op->in[0]].kind != G_INLINE && inmemory(g, op->in[0])) {
			h->kind = G_VIEW;
			h->base = op->in[0];
			h->trans = 1;
		}
	}
	if (g->attninplace) {   /* tune cuda.attn.inplace 1 */
		attnwindows(g);
		attnwrites(g);
	}
}

/* The transfers and the readers of each value. */
int
guses(Gpu *g)
{
	Fn *fn = g->fn;
	int i, v;

	g->x = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *g->x);
	g->h = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *g->h);
	g->nuse = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *g->nuse);
	g->user = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *g->user);
	g->exec = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *g->exec);
	g->relu = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *g->relu);
	g->epi = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *g->epi);
	g->epimm = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *g->epimm);
	g->gate = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *g->gate);
	g->group = dp_alloc(fn->arena, (size_t)fn->nop + 1, sizeof *g->group);
	g->cpart = dp_alloc(fn->arena, (size_t)fn->npart + 1, sizeof *g->cpart);
	g->used = dp_alloc(fn->arena, (size_t)fn->nval + 1, 1);
	g->wonly = dp_alloc(fn->arena, (size_t)fn->nval + 1, 1);
	g->pinned = xfer_plan(fn, g->x, &g->nev);
	for (i = 0; i < fn->npart; i++)
		g->cpart[i] = fn->part[i].dev == DEV_CUDA ? g->ncpart++ : -1;
	for (i = 0; i < fn->nop; i++)
		g->relu[i] = -1;
	for (v = 0; v < fn->nval; v++)
		if (dp_nbytes(&fn->val[v].t) < 0) {
			dp_seterr(g->err, "op %d (%s): its result is too large", fn->val[v].def,
			          dp_op_name[fn->op[fn->val[v].def].kind]);
			return -1;
		}
	gpu_uses(g);
	return 0;
}

/* Where inlined value v is computed, for the liveness of what it reads:
 * in its reader's kernel, the last of them where several compute it. */
static int
lastexec(const Gpu *g, int v)
{
	const Fn *fn = g->fn;
	int j, k, e = g->exec[g->user[v]];

	if (g->nuse[v] > 1)
		for (j = fn->val[v].def + 1; j < fn->nop; j++)
			for (k = 0; k < fn->op[j].nin; k++)
				if (fn->op[j].in[k] == v && g->exec[j] > e)
					e = g->exec[j];
	return e;
}

/* For a product of one row (a GEMV kernel, mm.c), the position of the last
 * of the small elementwise kernels right after it, which may run as its
 * tail inside its kernel (kern.c, ktail; tune cuda.gemv.tail), else i:
 * what the product reads must outlive them, lest one's result take its
 * memory while the product's other blocks still read it. */
static int
tailend(const Gpu *g, int i)
{
	const Fn *fn = g->fn;
	const Op *op = &fn->op[i];
	int j, end = i, roots = 0;

	if (!g->gvtail || !ismm(op) || op->nout != 1 ||
	    dp_numel(ty(g, op->out[0])) != ty(g, op->out[0])->dim[ty(g, op->out[0])->rank - 1])
		return i;
	for (j = i + 1; j < fn->nop && roots < 8; j++) {
		const Op *o = &fn->op[j];
		int v = o->nout == 1 ? o->out[0] : -1;
		if (o->part != op->part)
			break;
		if (g->exec[j] != j || o->kind == Oconst || (v >= 0 && g->h[v].kind == G_VIEW) ||
		    g->x[j].kind == X_UPLOAD)
			continue;   /* no kernel of its own */
		if (g->x[j].kind != X_NONE || v < 0 ||
		    !(fusable(fn, o) || (o->kind == Oindexwrite && g->h[o->in[2]].kind == G_INLINE)))
			break;
		end = j;
		roots++;
	}
	return end;
}

/* Homes, liveness over kernel positions, then offsets. */
int
gplan(Gpu *g)
{
	Fn *fn = g->fn;
	int i, k, n = 0, v;
	int64_t *size, *off;
	int *birth, *death, *who;

	gepilogue(g);
	grms(g);
	gpu_homes(g);
	gaddnorm(g);
	ggroup(g);

	for (i = fn->nop - 1; i >= 0; i--) {
		const Op *op = &fn->op[i];
		g->exec[i] = g->addnorm[i] >= 0 ? g->addnorm[i] : g->group[i] >= 0 ? g->group[i] : i;
		if (op->nout == 1 && g->h[op->out[0]].wrby)   /* written by attention */
			g->exec[i] = g->h[op->out[0]].wrby - 1;
		if (op->nout == 1 && g->h[op->out[0]].kind == G_INLINE)
			g->exec[i] = lastexec(g, op->out[0]);
	}
	for (v = 0; v < fn->nval; v++)
		g->h[v].last = g->exec[fn->val[v].def];
	for (i = 0; i < fn->nop; i++)
		for (k = 0; k < fn->op[i].nin; k++) {
			int d = fn->val[fn->op[i].in[k]].def, e = g->exec[i] == i ? tailend(g, i) : g->exec[i];
			GHome *h = &g->h[fn->op[i].in[k]];
			if (e > h->last)
				h->last = e;
			/* an RMS norm's result may be computed instead by the GEMV
			 * kernel of one row that reads it (mm.c decides as it emits
			 * it): the norm's input lives until then too, lest the
			 * GEMV's result take its memory while the GEMV reads it */
			if (d >= 0 && g->rms[d] >= 0) {
				h = &g->h[fn->op[g->rms[d]].in[0]];
				if (e > h->last)
					h->last = e;
			}
		}
	for (v = fn->nval - 1; v >= 0; v--)
		if (g->h[v].kind == G_VIEW && g->h[g->h[v].base].last < g->h[v].last)
			g->h[g->h[v].base].last = g->h[v].last;

	for (i = 0; i < fn->nop; i++) {   /* the weights block, in op order */
		GHome *h = fn->op[i].nout == 1 ? &g->h[fn->op[i].out[0]] : NULL;
		if (h == NULL || h->kind != G_WEIGHT)
			continue;
		h->off = g->wbytes;
		g->wbytes += (h->bytes + ALIGN - 1) / ALIGN * ALIGN;
	}
	size = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *size);
	off = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *off);
	birth = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *birth);
	death = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *death);
	who = dp_alloc(fn->arena, (size_t)fn->nval + 1, sizeof *who);
	for (v = 0; v < fn->nval; v++) {
		if (g->h[v].kind != G_ARENA)
			continue;
		size[n] = g->h[v].bytes;
		birth[n] = g->exec[fn->val[v].def];
		death[n] = g->h[v].last;
		who[n++] = v;
	}
	g->arena = firstfit(n, size, birth, death, fn->nop, ALIGN, off);
	for (k = 0; k < n; k++)
		g->h[who[k]].off = off[k];
	return 0;
}
