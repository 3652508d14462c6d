/* attn.c: attention with grouped heads (grouped-query attention: G query
 * heads to each head of the keys and values) read in place.  A decoder
 * written as Hugging Face's Llama repeats each key and value head G times
 * before attention (repeat_kv: k[:, :, None].expand(B, Hkv, G, S, E)
 * .reshape(B, Hkv·G, S, E)), which materializes the whole KV cache, every
 * layer, every step; aten.scaled_dot_product_attention(enable_gqa=True)
 * says the same without the copy.  Both become one attention over the
 * query viewed [.., Hkv, G, L, E] against keys and values [.., Hkv, 1, S,
 * E], whose batch dim of 1 every query head of the group reads (the op's
 * broadcast, formats/ops.md): the kernels read the cache through a stride
 * of 0, and the expand, now read by nothing, is dropped (lz_dropdead). */
#include <string.h>

#include "legalize.h"

#define X(i) (z->map[op->in[i]])
#define IT(i) (&z->in->val[op->in[i]].t)
#define OT (&z->in->val[op->out[0]].t)

/* Whether out value v, of rank r, is x repeated: v = aten.view(aten.expand(x))
 * (clones between them allowed), x [.., Hkv, 1, S, E] expanded to [.., Hkv,
 * G, S, E] with G > 1, the view merging (Hkv, G) into dim r - 3.  Sets *x,
 * *hkv and *g. */
static int
repeated(const Lz *z, int v, int r, int *x, int64_t *hkv, int64_t *g, int *ops, int *nops)
{
	const Fn *fn = z->out;
	const Type *tv = &fn->val[v].t, *te, *tx;
	const Op *a, *e;
	int u, j;

	if (r < 3 || r + 1 > DP_MAXRANK || fn->val[v].def < 0)
		return 0;
	a = &fn->op[fn->val[v].def];
	if (a->kind != Aview || a->nin != 1)
		return 0;
	*nops = 0;
	ops[(*nops)++] = fn->val[v].def;
	for (u = a->in[0]; fn->val[u].def >= 0 && fn->op[fn->val[u].def].kind == Aclone &&
	                   *nops < 7;) {
		ops[(*nops)++] = fn->val[u].def;
		u = fn->op[fn->val[u].def].in[0];
	}
	if (fn->val[u].def < 0)
		return 0;
	ops[(*nops)++] = fn->val[u].def;
	e = &fn->op[fn->val[u].def];
	if (e->kind != Aexpand || e->nin != 1)
		return 0;
	te = &fn->val[u].t, tx = &fn->val[e->in[0]].t;
	if (te->rank != r + 1 || tx->rank != r + 1 || tx->dim[r - 2] != 1 || te->dim[r - 2] < 2)
		return 0;
	for (j = 0; j < r - 3; j++)
		if (te->dim[j] != tv->dim[j])
			return 0;
	if (te->dim[r - 3] * te->dim[r - 2] != tv->dim[r - 3] || te->dim[r - 1] != tv->dim[r - 2] ||
	    te->dim[r] != tv->dim[r - 1])
		return 0;
	*x = e->in[0];
	*hkv = te->dim[r - 3];
	*g = te->dim[r - 2];
	return 1;
}

/* t's sizes with dim d split into (a, b): rank t->rank + 1. */
static void
split(const Type *t, int d, int64_t a, int64_t b, int64_t *out)
{
	int j, n = 0;

	for (j = 0; j < t->rank; j++) {
		if (j == d) {
			out[n++] = a;
			out[n++] = b;
		} else
			out[n++] = t->dim[j];
	}
}

/* aten.scaled_dot_product_attention: with enable_gqa, or with keys and
 * values both repeated by the same (Hkv, G), the query viewed [.., Hkv, G,
 * L, E] (a mask with heads likewise, one without: as it is) against the
 * keys and values [.., Hkv, 1, S, E], the result viewed back; else
 * unchanged. */
int
r_sdpa(Lz *z, const Op *op)
{
	const Type *tq = IT(0);
	int r = tq->rank, kx = -1, vx = -1, in[4], k, j;
	int64_t hkv = 0, g = 0, h2, g2, d[DP_MAXRANK];
	int ops[2][8], nops[2] = { 0, 0 };
	const Attr *sc = dp_attr(op, "scale");

	if (dp_geti(op, "enable_gqa", 0)) {   /* the shape rule (dp_read verifies) checked the heads */
		hkv = IT(1)->dim[r - 3];
		g = tq->dim[r - 3] / hkv;
		if (g > 1 && r + 1 > DP_MAXRANK)
			return lz_fail(z, "enable_gqa: rank %d is one too many to group the heads", r);
		if (g > 1) {
			split(IT(1), r - 3, hkv, 1, d);
			kx = lz_view(z, X(1), d, r + 1);
			split(IT(2), r - 3, hkv, 1, d);
			vx = lz_view(z, X(2), d, r + 1);
		}
	} else if (!repeated(z, X(1), r, &kx, &hkv, &g, ops[0], &nops[0]) ||
	           !repeated(z, X(2), r, &vx, &h2, &g2, ops[1], &nops[1]) || h2 != hkv || g2 != g) {
		g = 1;
	} else {   /* the repeats: dropped where nothing else reads them */
		for (j = 0; j < nops[0]; j++)
			lz_readpast(z, ops[0][j]);
		for (j = 0; j < nops[1]; j++)
			lz_readpast(z, ops[1][j]);
	}
	if (g == 1)   /* nothing grouped: the op as it is */
		return lz_copy(z, op);
	split(tq, r - 3, hkv, g, d);
	in[0] = lz_view(z, X(0), d, r + 1);
	in[1] = kx, in[2] = vx;
	if (op->nin == 4) {   /* the mask's heads, where it has them, split too */
		const Type *tm = IT(3);
		int hd = tm->rank - 3;
		in[3] = X(3);
		if (hd >= 0) {
			if (tm->dim[hd] == 1)
				split(tm, hd, 1, 1, d);
			else
				split(tm, hd, hkv, g, d);
			in[3] = lz_view(z, X(3), d, tm->rank + 1);
		}
	}
	for (j = 0; j < op->nin; j++)
		if (in[j] < 0)
			return -1;
	k = lz_begin(z, Asdpa, in, op->nin);
	dp_seti(z->out, k, "is_causal", dp_geti(op, "is_causal", 0));
	if (sc)
		dp_setf(z->out, k, "scale", sc->f);
	memcpy(d, OT->dim, sizeof d);
	return (z->map[op->out[0]] = lz_view(z, lz_end(z, k), d, r)) < 0 ? -1 : 0;
}
