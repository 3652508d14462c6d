/* image.c: shape rules of the image and selection ops (IMAGE_OPS in ops.h):
 * resize, center_crop, topk; and of graph inputs of unknown size. */
#include <string.h>

#include "dpir.h"
#include "dpint.h"

#define NAME dp_op_name[op->kind]
#define MAXSIDE ((int64_t)1 << 24)   /* the largest size or crop side */

/* The 1 or 2 entries of list attribute key as [h, w] (one entry is a
 * square), each from 1 to MAXSIDE. */
static int
sides(const Op *op, const char *key, int64_t hw[2], Err *err)
{
	const Attr *a = dp_attr(op, key);

	if (a->n != 1 && a->n != 2) {
		dp_seterr(err, "%s: %s needs 1 or 2 values, got %d", NAME, key, a->n);
		return -1;
	}
	for (int i = 0; i < a->n; i++)
		if (a->ints[i] < 1 || a->ints[i] > MAXSIDE) {
			dp_seterr(err, "%s: %s[%d] = %lld is not a size from 1 to %lld", NAME, key, i,
			          (long long)a->ints[i], (long long)MAXSIDE);
			return -1;
		}
	hw[0] = a->ints[0];
	hw[1] = a->ints[a->n - 1];
	return 0;
}

/* An [H, W, C] operand (H and W may be unknown), any dtype unless u8only. */
static int
hwc(const Op *op, const Type *t, int u8only, Err *err)
{
	if (u8only && t->dtype != DP_U8) {
		dp_seterr(err, "%s: input must be u8 (an image), got %s", NAME, dp_dtype_name[t->dtype]);
		return -1;
	}
	if (t->rank != 3)
		return dp_failt(err, op, "input must be an image [H,W,C] (rank 3)", t, NULL);
	return 0;
}

/* Checks the type of an input op of unknown size: an image u8[?,?,C]. */
int
dp_rule_dyninput(const Op *op, const Type *t, Err *err)
{
	if (dp_istext(t))
		return 0;
	if (t->dtype != DP_U8 || t->rank != 3 || t->dim[0] != DP_DYN || t->dim[1] != DP_DYN ||
	    t->dim[2] < 1 || t->dim[2] > 4) {
		char x[128];
		dp_seterr(err, "input: %s: only an image has unknown sizes: u8[?,?,C] with C "
		          "from 1 to 4 (3 for RGB), or text: u8[?]", dp_type_str(t, 0, x, sizeof x));
		return -1;
	}
	return 0;
}

/* The size resize gives an h x w image: size [s] scales the shorter side to
 * s (the longer one to trunc(s * long / short), as torchvision's Resize);
 * [h, w] is exact. */
void
dp_resize_size(int64_t h, int64_t w, const int64_t *size, int nsize, int64_t *oh, int64_t *ow)
{
	if (nsize == 2) {
		*oh = size[0], *ow = size[1];
		return;
	}
	int64_t s = size[0], sh = w <= h ? w : h, lo = w <= h ? h : w;
	int64_t l = (int64_t)((double)s * (double)lo / (double)sh);
	*oh = w <= h ? l : s;
	*ow = w <= h ? s : l;
}

int
dp_rule_image(const Fn *fn, const Op *op, Type *out, Err *err)
{
	const Type *x = op->nin ? &fn->val[op->in[0]].t : NULL;
	int64_t size[2], crop[2], oh, ow;

	switch (op->kind) {
	case Oresize: {
		const Attr *sz = dp_attr(op, "size");
		if (hwc(op, x, 1, err) || sides(op, "size", size, err) ||
		    (dp_attr(op, "crop") && sides(op, "crop", crop, err)))
			return -1;
		if (sz->n == 1 && dp_isdyn(x) && !dp_attr(op, "crop")) {
			dp_seterr(err, "resize: the result's size depends on the image's: give "
			          "crop=[h,w] or size=[h,w]");
			return -1;
		}
		if (sz->n == 1 && !dp_isdyn(x))
			dp_resize_size(x->dim[0], x->dim[1], sz->ints, 1, &oh, &ow);
		else
			oh = size[0], ow = size[1];   /* [s]: at least s x s */
		if (dp_attr(op, "crop")) {
			if (crop[0] > oh || crop[1] > ow) {
				dp_seterr(err, "resize: crop %lldx%lld is larger than the resized image "
				          "(%s%lldx%lld)", (long long)crop[0], (long long)crop[1],
				          sz->n == 1 && dp_isdyn(x) ? "at least " : "", (long long)oh,
				          (long long)ow);
				return -1;
			}
			oh = crop[0], ow = crop[1];
		}
		*out = *x;
		out->dim[0] = oh;
		out->dim[1] = ow;
		return 0;
	}
	case Ocrop:
		if (hwc(op, x, 0, err) || sides(op, "size", crop, err))
			return -1;
		if (crop[0] > x->dim[0] || crop[1] > x->dim[1]) {
			char t[128];
			dp_seterr(err, "center_crop: %lldx%lld is larger than the input %s",
			          (long long)crop[0], (long long)crop[1], dp_type_str(x, 0, t, sizeof t));
			return -1;
		}
		*out = *x;
		out->dim[0] = crop[0];
		out->dim[1] = crop[1];
		return 0;
	case Otokenize:
	case Odetokenize: {
		const Type *f = &fn->val[op->in[1]].t;
		int64_t n = dp_geti(op, op->kind == Otokenize ? "length" : "bytes", 0);
		if (f->dtype != DP_U8 || f->rank != 1 || dp_isdyn(f)) {
			dp_seterr(err, "%s: operand 1 must be the tokenizer.json's bytes (u8[N])",
			          dp_op_name[op->kind]);
			return -1;
		}
		if (op->kind == Otokenize && !dp_istext(x)) {
			char t[128];
			dp_seterr(err, "tokenize: operand 0 must be text (u8[?]), got %s",
			          dp_type_str(x, 0, t, sizeof t));
			return -1;
		}
		if (op->kind == Odetokenize && ((x->dtype != DP_I64 && x->dtype != DP_I32) ||
		                               dp_isdyn(x))) {
			char t[128];
			dp_seterr(err, "detokenize: operand 0 must be token ids (i64 or i32), got %s",
			          dp_type_str(x, 0, t, sizeof t));
			return -1;
		}
		if (n < 1 || n > ((int64_t)1 << 32)) {
			dp_seterr(err, "%s: %s = %lld is not from 1 to 2^32", dp_op_name[op->kind],
			          op->kind == Otokenize ? "length" : "bytes", (long long)n);
			return -1;
		}
		memset(out, 0, sizeof *out);
		out->dtype = op->kind == Otokenize ? DP_I64 : DP_U8;
		out->dev = x->dev;
		out->rank = op->kind == Otokenize ? 2 : 1;
		out->dim[0] = op->kind == Otokenize ? 1 : n;
		out->dim[1] = n;
		if (op->kind == Odetokenize)
			out->dim[1] = 0;
		return 0;
	}
	case Oassign: {
		const Op *d = &fn->op[fn->val[op->in[0]].def];
		const Type *v = &fn->val[op->in[1]].t;
		char a[128], b[128];
		if (d->kind != Oconst || !dp_geti(d, "state", 0)) {
			dp_seterr(err, "assign: operand 0 must be a state (a const with state=1)");
			return -1;
		}
		if (v->dtype != x->dtype || v->rank != x->rank ||
		    memcmp(v->dim, x->dim, sizeof *x->dim * (size_t)x->rank) != 0) {
			dp_seterr(err, "assign: the value %s is not the state's type %s",
			          dp_type_str(v, 0, a, sizeof a), dp_type_str(x, 0, b, sizeof b));
			return -1;
		}
		*out = *v;
		return 0;
	}
	case Otopk: {
		int d = dp_axis(dp_geti(op, "dim", -1), x->rank);
		int64_t k = dp_geti(op, "k", 1);
		if (d < 0) {
			dp_seterr(err, "topk: dim %lld is out of range for rank %d",
			          (long long)dp_geti(op, "dim", -1), x->rank);
			return -1;
		}
		if (x->dtype == DP_BOOL) {
			dp_seterr(err, "topk: needs numbers, got bool");
			return -1;
		}
		if (k < 1 || k > x->dim[d]) {
			dp_seterr(err, "topk: k = %lld is not from 1 to %lld (the size of dim %d)",
			          (long long)k, (long long)x->dim[d], d);
			return -1;
		}
		out[0] = *x;
		out[0].dim[d] = k;
		out[1] = out[0];
		out[1].dtype = DP_I64;
		return 0;
	}
	}
	return -2;
}
