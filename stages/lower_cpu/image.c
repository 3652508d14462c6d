/* image.c: the emitters of the image and selection ops (IMAGE_OPS in
 * ops.h): resize, center_crop, topk; and of the text ops (TEXT_OPS):
 * tokenize, detokenize; and assign (STATE_OPS). */
#include <stdio.h>
#include <string.h>

#include "lower.h"

/* resize: one dprt_resize_u8 call.  An image input of any size is already
 * a dprt_image; a static operand is wrapped in one. */
int
k_resize(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0];
	const Type *tx = ty(c, x), *to = ty(c, y);
	const Attr *size = dp_attr(op, "size");
	const Op *def = &c->fn->op[c->fn->val[x].def];

	str_printf(c->body, "\tif (dprt_resize_u8(v%d, ", V(c, y));
	if (dp_isdyn(tx))
		str_printf(c->body, "v%d", V(c, x));
	else
		str_printf(c->body, "&(dprt_image){v%d, %lld, %lld, %lld}", V(c, x),
		           (long long)tx->dim[0], (long long)tx->dim[1], (long long)tx->dim[2]);
	str_put(c->body, ", ");
	cints(c, size->ints, size->n);
	str_printf(c->body, ", %d, %lld, %lld, ", size->n, (long long)to->dim[0],
	           (long long)to->dim[1]);
	str_cstring(c->body, def->kind == Oinput ? dp_gets(def, "name") : "resize");
	str_put(c->body, ", err, errn) != 0)\n\t\treturn -1;\n");
	return 0;
}

/* center_crop: a strided copy of the window (torchvision's offsets). */
int
k_crop(Ctx *c, const Op *op, int i)
{
	int y = op->out[0], x = op->in[0];
	const Type *tx = ty(c, x), *to = ty(c, y);
	int64_t H = tx->dim[0], W = tx->dim[1], C = tx->dim[2];
	int64_t ch = to->dim[0], cw = to->dim[1], top, left;

	if (dp_numel(to) == 0)
		return 0;
	top = (H - ch) / 2 + ((H - ch) % 2 && ((H - ch) / 2) % 2);   /* halves to even */
	left = (W - cw) / 2 + ((W - cw) % 2 && ((W - cw) / 2) % 2);
	int64_t ys[3] = { cw * C, C, 1 }, xs[3] = { W * C, C, 1 }, n[3] = { ch, cw, C };

	str_printf(c->body, "\tdprt_copy(v%d, ", V(c, y));
	cints(c, ys, 3);
	str_printf(c->body, ", v%d + %lld, ", V(c, x), (long long)((top * W + left) * C));
	cints(c, xs, 3);
	str_printf(c->body, ", %d, 3, ", dp_dtype_size[tx->dtype]);
	cints(c, n, 3);
	str_put(c->body, ");\n");
	return 0;
}

/* topk: x viewed as [outer, n, inner] around dim. */
int
k_topk(Ctx *c, const Op *op, int i)
{
	const Type *tx = ty(c, op->in[0]);
	int d = normdim(dp_geti(op, "dim", -1), tx->rank);

	if (tx->dtype != DP_F32) {
		dp_seterr(c->err, "op %d (topk): the cpu target has no kernel for %s tensors "
		          "(only f32)", i, dp_dtype_name[tx->dtype]);
		return -1;
	}
	if (dp_numel(tx) == 0)
		return 0;
	str_printf(c->body, "\tdprt_topk_f32(v%d, v%d, v%d, %lld, %lld, %lld, %lld);\n",
	           V(c, op->out[0]), V(c, op->out[1]), V(c, op->in[0]),
	           (long long)prod(tx, 0, d), (long long)tx->dim[d],
	           (long long)prod(tx, d + 1, tx->rank), (long long)dp_geti(op, "k", 1));
	return 0;
}

/* tokenize: one dprt_tokenize call on the text (a dprt_image of h bytes)
 * with the tokenizer.json's bytes (operand 1, a constant). */
int
k_tokenize(Ctx *c, const Op *op, int i)
{
	str_printf(c->body, "\tif (dprt_tokenize(v%d, %lld, %lld, %d, v%d, v%d, %lld, err, errn) != 0)\n"
	           "\t\treturn -1;\n", V(c, op->out[0]), (long long)dp_geti(op, "length", 1),
	           (long long)dp_geti(op, "pad", 0), (int)dp_geti(op, "special", 1), V(c, op->in[0]),
	           V(c, op->in[1]), (long long)ty(c, op->in[1])->dim[0]);
	return 0;
}

/* detokenize: the ids' text, NUL-padded to bytes. */
int
k_detokenize(Ctx *c, const Op *op, int i)
{
	const Type *tx = ty(c, op->in[0]);

	str_printf(c->body, "\tif (dprt_detokenize(v%d, %lld, %d, v%d, %s, %lld, v%d, %lld, err, "
	           "errn) != 0)\n\t\treturn -1;\n", V(c, op->out[0]),
	           (long long)dp_geti(op, "bytes", 1), (int)dp_geti(op, "skip", 1), V(c, op->in[0]),
	           dprt_enum(tx->dtype), (long long)dp_numel(tx), V(c, op->in[1]),
	           (long long)ty(c, op->in[1])->dim[0]);
	return 0;
}

/* assign: the new value into the state's buffer (the arena's state region,
 * emit.c), once the state's other readers have run; the result is the
 * new value.  Nothing where the new value is a view of the state (written
 * in place by index_write, plan.c). */
int
k_assign(Ctx *c, const Op *op, int i)
{
	const Home *h = &c->plan->h[op->in[0]];
	int64_t n = h->bytes;
	int j, k, v = op->in[1], *e = dp_alloc(c->fn->arena, (size_t)c->fn->nop + 1, sizeof *e);

	while (c->plan->h[v].kind == H_VIEW && v != op->in[0])
		v = c->plan->h[v].base;
	if (v == op->in[0])
		return 0;   /* the new value is the state's bytes (an index_write in place) */
	if (dp_entries(c->fn, e, NULL, c->err) < 0)
		return -1;
	for (j = i + 1; j < c->fn->nop; j++)   /* readers after the update would see it */
		for (k = 0; k < c->fn->op[j].nin && e[j] == e[i]; k++) {   /* (its entry's) */
			int v = c->fn->op[j].in[k];
			if (v == op->in[0] || (c->plan->h[v].kind == H_VIEW && c->plan->h[v].base == op->in[0])) {
				dp_seterr(c->err, "op %d (assign): op %d reads the state after its update",
				          i, j);
				return -1;
			}
		}
	if (n == 0)
		return 0;
	/* over the pool when the two do not overlap (a KV cache's update) */
	str_printf(c->body, "\tif ((const char *)v%d + %lld <= (const char *)v%d || "
	           "(const char *)v%d + %lld <= (const char *)v%d)\n\t\tdprt_memcpy(v%d, v%d, %lld);\n"
	           "\telse\n\t\tmemmove(v%d, v%d, %lld);\n", V(c, op->in[0]), (long long)n,
	           V(c, op->in[1]), V(c, op->in[1]), (long long)n, V(c, op->in[0]), V(c, op->in[0]),
	           V(c, op->in[1]), (long long)n, V(c, op->in[0]), V(c, op->in[1]), (long long)n);
	k = c->plan->h[op->out[0]].last > i;   /* the result read (through views too), */
	for (j = 0; j < c->fn->nout; j++)        /* or an output */
		k |= c->fn->out[j].val == op->out[0];
	if (k)
		str_printf(c->body, "\tif ((void *)v%d != (const void *)v%d)\n\t\tdprt_memcpy(v%d, "
		           "v%d, %lld);\n", V(c, op->out[0]), V(c, op->in[1]), V(c, op->out[0]),
		           V(c, op->in[1]), (long long)n);
	return 0;
}
