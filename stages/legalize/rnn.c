/* rnn.c: the recurrent layers of formats/ops.h (RNN_OPS) unrolled over
 * their steps into products and elementwise ops, in the order PyTorch's
 * cpu implementation computes them (aten/src/ATen/native/RNN.cpp): each
 * layer and direction's input projection once for the whole sequence,
 * then per step the state's projection added to the step's rows. */
#include <string.h>

#include "legalize.h"

#define X(i) (z->map[op->in[i]])

/* aten.linear(x, w[, b]) (b < 0: none). */
static int
linear(Lz *z, int x, int w, int b)
{
	int in[3] = { x, w, b };

	if (x < 0 || w < 0)
		return -1;
	return lz_end(z, lz_begin(z, Alinear, in, b >= 0 ? 3 : 2));
}

/* Columns [k·H, (k + 1)·H) of the gates g [B, G·H]. */
static int
gate(Lz *z, int g, int k, int64_t H)
{
	return lz_slice(z, g, 1, k * H, (k + 1) * H, 1);
}

/* One step of a cell: gx the step's input projection [B, G·H] (with
 * b_ih), h (and c, an LSTM's) the state [B, Hout] ([B, H]); whh, bhh
 * (or -1), whr (or -1) the operands.  The new state into h (and c).
 *   LSTM: gates = h·w_hhᵀ + b_hh + gx; i, f, g, o = σ, σ, tanh, σ of its
 *         quarters; c' = f·c + i·g; h' = o·tanh(c') (times w_hrᵀ).
 *   GRU:  r = σ(hh_r + gx_r), u = σ(hh_u + gx_u), n = tanh(gx_n + hh_n·r)
 *         (hh = h·w_hhᵀ + b_hh); h' = (h − n)·u + n.
 *   RNN:  h' = tanh or relu(h·w_hhᵀ + b_hh + gx). */
static int
step(Lz *z, int kind, int gx, int *h, int *c, int whh, int bhh, int whr, int64_t H)
{
	int hh = linear(z, *h, whh, bhh);

	if (kind == Alstm || kind == Alstmcell) {
		int g = lz_op2(z, Aadd, hh, gx);
		int i = lz_op1(z, Asigmoid, gate(z, g, 0, H)), f = lz_op1(z, Asigmoid, gate(z, g, 1, H));
		int gg = lz_op1(z, Atanh, gate(z, g, 2, H)), o = lz_op1(z, Asigmoid, gate(z, g, 3, H));
		*c = lz_op2(z, Aadd, lz_op2(z, Amul, f, *c), lz_op2(z, Amul, i, gg));
		*h = lz_op2(z, Amul, o, lz_op1(z, Atanh, *c));
		if (whr >= 0)
			*h = linear(z, *h, whr, -1);
	} else if (kind == Agru || kind == Agrucell) {
		int r = lz_op1(z, Asigmoid, lz_op2(z, Aadd, gate(z, hh, 0, H), gate(z, gx, 0, H)));
		int u = lz_op1(z, Asigmoid, lz_op2(z, Aadd, gate(z, hh, 1, H), gate(z, gx, 1, H)));
		int n = lz_op1(z, Atanh, lz_op2(z, Aadd, gate(z, gx, 2, H),
		                                lz_op2(z, Amul, gate(z, hh, 2, H), r)));
		*h = lz_op2(z, Aadd, lz_op2(z, Amul, lz_op2(z, Asub, *h, n), u), n);
	} else {
		*h = lz_op1(z, kind == Arnnrelu ? Arelu : Atanh, lz_op2(z, Aadd, hh, gx));
	}
	return *h < 0 || (c && *c < 0) ? -1 : 0;
}

/* Entry i of a [n, ...] tensor x, viewed without its first dim. */
static int
entry(Lz *z, int x, int64_t i)
{
	const Type *t = lz_type(z, x);

	return x < 0 ? -1 : lz_view(z, lz_slice(z, x, 0, i, i + 1, 1), t->dim + 1, t->rank - 1);
}

/* x [B, n] viewed [1, B, n]. */
static int
lift(Lz *z, int x)
{
	const Type *t;
	int64_t v[3];

	if (x < 0)
		return -1;
	t = lz_type(z, x);
	v[0] = 1, v[1] = t->dim[0], v[2] = t->dim[1];
	return lz_view(z, x, v, 3);
}

/* aten.lstm_cell, aten.gru_cell: one step. */
int
r_rnncell(Lz *z, const Op *op)
{
	DpRnn r;
	int h, c = -1, gx, lstm = op->kind == Alstmcell;

	if (dp_rnn(z->in, op, &r, z->err))
		return -1;
	h = X(1);
	if (lstm)
		c = X(2);
	gx = linear(z, X(0), X(dp_rnnarg(&r, 0, 0, 0)), r.bias ? X(dp_rnnarg(&r, 0, 0, 2)) : -1);
	if (step(z, op->kind, gx, &h, lstm ? &c : NULL, X(dp_rnnarg(&r, 0, 0, 1)),
	         r.bias ? X(dp_rnnarg(&r, 0, 0, 3)) : -1, -1, r.H))
		return -1;
	z->map[op->out[0]] = h;
	if (lstm)
		z->map[op->out[1]] = c;
	return 0;
}

/* aten.lstm, aten.gru, aten.rnn_tanh, aten.rnn_relu: layer by layer, each
 * direction's input projection of the whole sequence [T·B, G·H] (one
 * aten.linear), then its steps in time order (reversed for the second
 * direction), each step's h kept; the layer's output the steps' h
 * concatenated in time order [T, B, Hout], the directions' side by side
 * [T, B, D·Hout]; the final states stacked in PyTorch's order (layer,
 * then direction).  Batch first: the input permuted to [T, B, I] first and
 * the output back. */
int
r_rnn(Lz *z, const Op *op)
{
	DpRnn r;
	int lstm = op->kind == Alstm, x = X(0), *hs, *hn, *cn, *outs, y = -1;
	int64_t sw[3] = { 1, 0, 2 }, v[2];

	if (dp_rnn(z->in, op, &r, z->err))
		return -1;
	if (r.T < 1)
		return lz_fail(z, "the sequence is empty");
	hs = dp_alloc(z->out->arena, (size_t)r.T + 1, sizeof *hs);
	hn = dp_alloc(z->out->arena, (size_t)(r.L * r.D), sizeof *hn);
	cn = dp_alloc(z->out->arena, (size_t)(r.L * r.D), sizeof *cn);
	outs = dp_alloc(z->out->arena, 2, sizeof *outs);
	if (r.first)
		x = lz_permute(z, x, sw, 3);
	for (int l = 0; l < r.L; l++) {
		int64_t in = l ? r.D * r.Hout : r.I;
		v[0] = r.T * r.B, v[1] = in;
		int xf = lz_view(z, x, v, 2);
		for (int d = 0; d < r.D; d++) {
			int s = l * r.D + d, h = entry(z, X(1), s), c = lstm ? entry(z, X(2), s) : -1;
			int gx = linear(z, xf, X(dp_rnnarg(&r, l, d, 0)),
			                r.bias ? X(dp_rnnarg(&r, l, d, 2)) : -1);
			int whh = X(dp_rnnarg(&r, l, d, 1)), bhh = r.bias ? X(dp_rnnarg(&r, l, d, 3)) : -1;
			int whr = r.proj ? X(dp_rnnarg(&r, l, d, 4)) : -1;
			if (gx < 0 || h < 0)
				return -1;
			for (int64_t i = 0; i < r.T; i++) {
				int64_t t = d ? r.T - 1 - i : i;
				int g = lz_slice(z, gx, 0, t * r.B, (t + 1) * r.B, 1);
				if (step(z, op->kind, g, &h, lstm ? &c : NULL, whh, bhh, whr, r.H))
					return -1;
				hs[t] = lift(z, h);
			}
			hn[s] = lift(z, h);
			cn[s] = lstm ? lift(z, c) : -1;
			outs[d] = r.T == 1 ? hs[0] : lz_cat(z, hs, (int)r.T, 0);
		}
		x = r.D == 1 ? outs[0] : lz_cat(z, outs, 2, 2);
		if (x < 0)
			return -1;
	}
	y = r.first ? lz_permute(z, x, sw, 3) : x;
	if (y < 0)
		return -1;
	z->map[op->out[0]] = y;
	z->map[op->out[1]] = r.L * r.D == 1 ? hn[0] : lz_cat(z, hn, r.L * r.D, 0);
	if (lstm)
		z->map[op->out[2]] = r.L * r.D == 1 ? cn[0] : lz_cat(z, cn, r.L * r.D, 0);
	for (int k = 1; k < dp_op_nout[op->kind]; k++)
		if (z->map[op->out[k]] < 0)
			return -1;
	return 0;
}
