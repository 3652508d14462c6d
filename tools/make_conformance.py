#!/usr/bin/env python3
"""make_conformance.py: the per-op conformance archives and their references.

Run from the repository root on a machine with PyTorch 2.11 (the GPU
machine; everything runs on its CPU, in float32):

    python3 tools/make_conformance.py [--out tests/conformance] [--only NAME...]

For every op import supports, one or more tiny torch modules (random inputs
of several small shapes, seeded by the case's name) are exported twice: the
default training IR (NAME.pt2) and, when run_decompositions() changes the
graph, Core ATen (NAME_core.pt2), NAME being "c_" and the case's name (so
that no pipeline is named like a C library function: exp, div, select...).
Each archive gets a pipeline NAME.dp / NAME_core.dp (its inputs, the model
call, and "# ref CASE" and "# tol T" comment lines that tests/conformance.t
reads).  The inputs and PyTorch's
output of every case go into one uncompressed refs.npz (NAME.in0,
CASE.in1..., CASE.out), which tests/conformance.t unpacks with npzx.c.
MANIFEST lists each archive with its ATen targets and the versions used.

Old *.pt2, *.dp, refs.npz and MANIFEST in the folder are removed first
(with --only, just those of the named cases).  A case that fails to
export is reported and skipped; the exit status is then 1.
"""
import argparse
import glob
import os
import sys
import traceback
import zipfile
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DT = {torch.float32: "f32", torch.int64: "i64", torch.int32: "i32", torch.bool: "bool",
      torch.uint8: "u8", torch.float64: "f64"}


class Fn(nn.Module):
    """Wraps a function of the inputs (and of self.m, its submodules)."""

    def __init__(self, f, *mods):
        super().__init__()
        self.f = f
        self.m = nn.ModuleList(mods)

    def forward(self, *xs):
        return self.f(self, *xs)


def r(*shape):
    """Standard normal f32."""
    return torch.randn(*shape)


def pos(*shape):
    """Positive f32 in [0.1, 3)."""
    return torch.rand(*shape) * 2.9 + 0.1


def ints(lo, hi, *shape):
    return torch.randint(lo, hi, shape, dtype=torch.int64)


def mask(*shape):
    return torch.rand(*shape) > 0.4


CASES = []


def case(name, f, *inputs, mods=(), tol=1e-5, dyn=None):
    """One conformance case: the module Fn(f, *mods) on inputs (callables
    returning tensors, called under the case's seed); dyn: {input: [dims]}
    exported as dynamic sizes (the archive then holds symbolic sizes and
    the ops on them)."""
    CASES.append((name, f, inputs, mods, tol, dyn))


def cases():
    # -- matrices
    case("linear", lambda s, x: s.m[0](x), lambda: r(2, 4), mods=(lambda: nn.Linear(4, 3),))
    case("linear_3d_nobias", lambda s, x: s.m[0](x), lambda: r(2, 5, 4),
         mods=(lambda: nn.Linear(4, 6, bias=False),))
    case("addmm", lambda s, b, x, w: torch.addmm(b, x, w, beta=0.5, alpha=2.0),
         lambda: r(3), lambda: r(2, 4), lambda: r(4, 3))
    # more than 8 rows with a bias vector: cuBLASLt on cuda, or with
    # "tune cuda.mm.tc 1" (conformance_cuda.t's DP_TEST_TARGET) the kernel
    # library's tensor-core product (runtime/cuda/gemm.cu, 3xTF32): tiles cut
    # at every edge, K not a multiple of 16; rows of K a multiple of 4
    # (16-byte copies) or not; the weight by rows (a linear's; its core
    # form's addmm reads it transposed) or by columns (addmm's), alpha
    case("linear_tiles", lambda s, x: s.m[0](x), lambda: r(2, 37, 40),
         mods=(lambda: nn.Linear(40, 70),))
    case("linear_wide", lambda s, x: s.m[0](x), lambda: r(3, 50, 96),
         mods=(lambda: nn.Linear(96, 200),))
    case("addmm_rows", lambda s, b, x, w: torch.addmm(b, x, w), lambda: r(130), lambda: r(100, 67),
         lambda: r(67, 130))
    case("addmm_alpha", lambda s, b, x, w: torch.addmm(b, x, w, alpha=2.0), lambda: r(48),
         lambda: r(20, 32), lambda: r(32, 48))
    # more than 8 rows of a product of a constant without a bias, and of
    # addmm with a constant row-major operand (Hugging Face's Conv1D): with
    # "tune cuda.mm.x3 1" (DP_TEST_TARGET) 3xTF32 through cuBLASLt, each
    # constant split at init, by rows or stacked
    case("linear_nobias_rows", lambda s, x: s.m[0](x), lambda: r(3, 30, 40),
         mods=(lambda: nn.Linear(40, 72, bias=False),))
    case("addmm_const_kn", lambda s, x: torch.addmm(s.m[1].bias, x, s.m[0].weight),
         lambda: r(45, 36), mods=(lambda: nn.Linear(52, 36, bias=False), lambda: nn.Linear(4, 52)))
    # an activation after such a product
    case("linear_gelu", lambda s, x: F.gelu(s.m[0](x)), lambda: r(2, 20, 48),
         mods=(lambda: nn.Linear(48, 96),))
    case("linear_gelu_tanh", lambda s, x: F.gelu(s.m[0](x), approximate="tanh"),
         lambda: r(2, 20, 48), mods=(lambda: nn.Linear(48, 96),))
    case("linear_relu_rows", lambda s, x: F.relu(s.m[0](x)), lambda: r(30, 24),
         mods=(lambda: nn.Linear(24, 40),))
    case("mm", lambda s, x, y: torch.mm(x, y), lambda: r(3, 4), lambda: r(4, 5))
    case("bmm", lambda s, x, y: torch.bmm(x, y), lambda: r(2, 3, 4), lambda: r(2, 4, 5))
    case("matmul_batched", lambda s, x, y: x @ y, lambda: r(2, 1, 3, 4), lambda: r(3, 4, 2))
    case("matmul_3d_2d", lambda s, x, y: x @ y, lambda: r(2, 3, 4), lambda: r(4, 5))
    case("matmul_vec", lambda s, x, y: x @ y, lambda: r(3, 4), lambda: r(4))
    # K = 1, an outer product (a rotary embedding's frequencies by its
    # positions): legalize makes it aten.mul
    case("matmul_outer", lambda s, x, y: x[:, :, None].float() @ y[:, None, :], lambda: r(2, 5),
         lambda: r(2, 7))
    case("bmm_outer", lambda s, x, y: torch.bmm(x, y), lambda: r(3, 4, 1), lambda: r(3, 1, 6))
    case("mm_outer", lambda s, x, y: torch.mm(x, y), lambda: r(6, 1), lambda: r(1, 5))
    # one row against wide weights: a decoder step's products (rank 3, one
    # token), whose cuda GEMV kernel takes several columns a warp: the RMS
    # norm, written out as Hugging Face's Llama writes it, computed in it;
    # siblings of one input in one kernel; SwiGLU's gate; a bias
    case("gemv_columns_qkv",
         lambda s, x: (lambda h: torch.cat([s.m[1](h).sin(), s.m[2](h).cos(), s.m[3](h).tanh()],
                                           -1))(rmsn(s.m[0], x)),
         lambda: r(1, 1, 32), mods=(lambda: affine(nn.RMSNorm(32)),) +
         tuple((lambda: nn.Linear(32, 1024, bias=False)) for _ in range(3)))
    case("gemv_columns_swiglu",
         lambda s, x: (lambda h: F.silu(s.m[1](h)) * s.m[2](h))(rmsn(s.m[0], x)),
         lambda: r(1, 1, 32), mods=(lambda: affine(nn.RMSNorm(32)),
                                    lambda: nn.Linear(32, 2048, bias=False),
                                    lambda: nn.Linear(32, 2048, bias=False)))
    case("gemv_columns_bias", lambda s, x: s.m[0](x), lambda: r(1, 16),
         mods=(lambda: nn.Linear(16, 4096),))

    # -- arithmetic with broadcasting and scalars
    case("add", lambda s, x, y: x + y, lambda: r(2, 3, 4), lambda: r(3, 1))
    case("add_alpha", lambda s, x, y: torch.add(x, y, alpha=0.5), lambda: r(2, 3), lambda: r(2, 3))
    case("add_scalar", lambda s, x: x + 2, lambda: r(2, 3))
    case("add_int", lambda s, x, y: x + y + 3, lambda: ints(-9, 9, 2, 3), lambda: ints(-9, 9, 3))
    case("add_inplace", lambda s, x, y: x.clone().add_(y), lambda: r(4), lambda: r(4))
    case("sub", lambda s, x, y: x - y, lambda: r(1, 4), lambda: r(3, 1))
    case("sub_alpha_int", lambda s, x, y: torch.sub(x, y, alpha=2), lambda: ints(-9, 9, 5),
         lambda: ints(-9, 9, 5))
    case("rsub_scalar", lambda s, x: 1 - x, lambda: r(2, 3))
    case("rsub_tensor", lambda s, x, y: torch.rsub(x, y, alpha=2), lambda: r(3), lambda: r(3))
    case("mul", lambda s, x, y: x * y, lambda: r(2, 1, 4), lambda: r(3, 1))
    case("mul_scalar", lambda s, x: x * 0.25, lambda: r(5))
    case("mul_int", lambda s, x, y: x * y, lambda: ints(-9, 9, 4), lambda: ints(-9, 9, 2, 4))
    case("div", lambda s, x, y: x / y, lambda: r(2, 3), lambda: pos(3))
    case("div_scalar", lambda s, x: x / 3, lambda: r(2, 3))
    case("div_inplace", lambda s, x: x.clone().div_(7), lambda: r(2, 3))
    case("pow_tensor_scalar", lambda s, x: x ** 2.5, lambda: pos(2, 3))
    case("pow_square", lambda s, x: x ** 2, lambda: r(2, 3))
    case("pow_tensor_tensor", lambda s, x, y: x ** y, lambda: pos(2, 3), lambda: r(3))
    case("pow_scalar_base", lambda s, x: 10000 ** x, lambda: torch.rand(6))

    # -- elementwise functions
    for n, f, inp in (
            ("rsqrt", torch.rsqrt, pos), ("sqrt", torch.sqrt, pos), ("exp", torch.exp, r),
            ("log", torch.log, pos), ("cos", torch.cos, r), ("sin", torch.sin, r),
            ("neg", torch.neg, r), ("abs", torch.abs, r), ("reciprocal", torch.reciprocal, pos),
            ("sigmoid", torch.sigmoid, r), ("tanh", torch.tanh, r), ("silu", F.silu, r),
            ("hardswish", F.hardswish, r), ("hardsigmoid", F.hardsigmoid, r),
            ("relu", F.relu, r), ("gelu", F.gelu, r),
            ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), r)):
        case(n, (lambda f: lambda s, x: f(x))(f), (lambda inp: lambda: inp(2, 3, 4) * 2)(inp))
    case("relu_inplace", lambda s, x: x.clone().relu_(), lambda: r(3, 4))
    case("sigmoid_inplace", lambda s, x: x.clone().sigmoid_(), lambda: r(3, 4))
    case("relu_module_inplace", lambda s, x: s.m[0](x * 1), lambda: r(3, 4),
         mods=(lambda: nn.ReLU(inplace=True),))
    case("neg_int", lambda s, x: -x, lambda: ints(-9, 9, 5))
    case("abs_int", lambda s, x: x.abs(), lambda: ints(-9, 9, 5))
    case("clamp", lambda s, x: x.clamp(-0.5, 0.7), lambda: r(3, 4))
    case("clamp_min", lambda s, x: x.clamp(min=-0.2), lambda: r(3, 4))
    case("clamp_max", lambda s, x: torch.clamp_max(x, 0.3), lambda: r(3, 4))
    case("clamp_int", lambda s, x: x.clamp(-3, 4), lambda: ints(-9, 9, 6))
    case("hardtanh", lambda s, x: F.hardtanh(x, -0.5, 0.5), lambda: r(3, 4))
    case("relu6", lambda s, x: F.relu6(x * 4), lambda: r(3, 4))

    # -- comparisons and logic (bool results)
    for n, f in (("eq", torch.eq), ("ne", torch.ne), ("lt", torch.lt), ("le", torch.le),
                 ("gt", torch.gt), ("ge", torch.ge)):
        case(n, (lambda f: lambda s, x, y: f(x, y))(f),
             lambda: torch.randint(0, 3, (2, 3)).float(), lambda: torch.randint(0, 3, (3,)).float())
        case(n + "_scalar", (lambda f: lambda s, x: f(x, 1))(f),
             lambda: torch.randint(0, 3, (2, 3)).float())
        case(n + "_int", (lambda f: lambda s, x, y: f(x, y))(f), lambda: ints(0, 3, 2, 3),
             lambda: ints(0, 3, 2, 1))
    case("logical_and", lambda s, x, y: torch.logical_and(x, y), lambda: mask(2, 3), lambda: r(3))
    case("logical_or", lambda s, x, y: torch.logical_or(x, y), lambda: mask(2, 3), lambda: mask(2, 3))
    case("logical_xor", lambda s, x, y: torch.logical_xor(x, y), lambda: mask(4), lambda: mask(4))
    case("logical_not", lambda s, x: torch.logical_not(x), lambda: mask(2, 3))
    case("bitwise_bool", lambda s, x, y: (x & y) | ~(x ^ y), lambda: mask(2, 3), lambda: mask(3))
    case("where", lambda s, c, x, y: torch.where(c, x, y), lambda: mask(2, 3), lambda: r(2, 3),
         lambda: r(3))
    case("where_scalar_other", lambda s, x: torch.where(x > 0, x, 0.0), lambda: r(2, 3))
    case("where_scalar_self", lambda s, x: torch.where(x > 0, 1.5, x), lambda: r(2, 3))
    case("where_int", lambda s, c, x, y: torch.where(c, x, y), lambda: mask(4), lambda: ints(0, 9, 4),
         lambda: ints(0, 9, 1))

    # -- shapes and data movement
    case("view", lambda s, x: x.view(4, 6) * 1, lambda: r(2, 3, 4))
    case("reshape", lambda s, x: x.transpose(0, 1).reshape(-1, 2), lambda: r(2, 3, 4))
    case("permute", lambda s, x: x.permute(2, 0, 1) + 0, lambda: r(2, 3, 4))
    case("t", lambda s, x: x.t() * 2, lambda: r(3, 4))
    case("transpose", lambda s, x: x.transpose(1, 2) + 0, lambda: r(2, 3, 4))
    case("flatten", lambda s, x: torch.flatten(x * 2, 1), lambda: r(2, 3, 4))
    case("expand", lambda s, x: x.expand(2, 3, 4) + 0, lambda: r(3, 1))
    case("unsqueeze", lambda s, x: x.unsqueeze(1) * 2, lambda: r(2, 3))
    case("squeeze_dim", lambda s, x: x.squeeze(1) * 2, lambda: r(2, 1, 3, 1))
    case("squeeze_all", lambda s, x: x.squeeze() * 2, lambda: r(2, 1, 3, 1))
    case("clone", lambda s, x: x.clone() + x, lambda: r(2, 3))
    case("contiguous", lambda s, x: x.t().contiguous() + 1, lambda: r(2, 3))
    case("detach", lambda s, x: x.detach() * 3, lambda: r(2, 3))
    case("dropout_eval", lambda s, x: s.m[0](x) * 2, lambda: r(2, 3), mods=(lambda: nn.Dropout(0.5),))
    case("cat", lambda s, x, y: torch.cat([x, y, x], 0), lambda: r(2, 3), lambda: r(1, 3))
    case("cat_last", lambda s, x, y: torch.cat([x, y], -1), lambda: r(2, 3), lambda: r(2, 2))
    case("stack", lambda s, x, y: torch.stack([x, y], 1), lambda: r(2, 3), lambda: r(2, 3))
    case("slice_step", lambda s, x: x[:, 1::2] * 1, lambda: r(3, 7))
    case("slice_negative", lambda s, x: x[..., -3:-1] * 1, lambda: r(2, 3, 5))
    case("select", lambda s, x: x[1] * 1 + x[:, -1, None].sum(), lambda: r(3, 4))
    case("index_dim0", lambda s, x, i: x[i], lambda: r(5, 3), lambda: ints(0, 5, 2, 2))
    case("index_dim1", lambda s, x, i: x[:, i], lambda: r(3, 5), lambda: ints(-5, 5, 4))
    case("embedding", lambda s, i: s.m[0](i), lambda: ints(0, 10, 2, 3),
         mods=(lambda: nn.Embedding(10, 4),))
    case("split", lambda s, x: torch.split(x, 2, 1)[2] * 1, lambda: r(2, 5))
    case("split_sizes", lambda s, x: torch.split(x, [1, 3], 0)[1] * 1, lambda: r(4, 2))
    case("chunk", lambda s, x: x.chunk(3, -1)[1] + x.chunk(3, -1)[2], lambda: r(2, 6))
    case("unbind", lambda s, x: x.unbind(1)[1] * 1, lambda: r(2, 3, 4))

    # -- reductions and softmax
    case("mean_dim", lambda s, x: x.mean(-1), lambda: r(2, 3, 4))
    case("mean_keepdim", lambda s, x: x.mean((0, 2), keepdim=True), lambda: r(2, 3, 4))
    case("mean_all", lambda s, x: x.mean(), lambda: r(2, 3, 4))
    case("sum_dim", lambda s, x: x.sum(1), lambda: r(2, 3, 4))
    case("sum_all", lambda s, x: x.sum(), lambda: r(2, 3, 4))
    case("sum_int", lambda s, x: x.sum(0), lambda: ints(-9, 9, 3, 4))
    case("any_dim", lambda s, x: (x > 1).any(-1), lambda: r(3, 4))
    case("softmax_last", lambda s, x: F.softmax(x, -1), lambda: r(2, 3, 5))
    case("softmax_mid", lambda s, x: torch.softmax(x, 1), lambda: r(2, 3, 5))

    # -- sorts and products (two-result ops: one case per result)
    case("sort", lambda s, x: torch.sort(x, dim=1)[0], lambda: r(3, 7))
    case("sort_indices", lambda s, x: torch.sort(x, dim=0, descending=True)[1], lambda: r(6, 4))
    case("sort_stable", lambda s, x: torch.sort(x, stable=True)[1], lambda: halves(4, 9))
    case("sort_stable_desc", lambda s, x: torch.sort(x, dim=0, descending=True, stable=True)[1],
         lambda: halves(7, 3))
    case("sort_int", lambda s, x: torch.sort(x, descending=True, stable=True)[0], lambda: ints(-5, 5, 3, 8))
    case("sort_nan", lambda s, x: torch.sort(x.log())[0], lambda: r(2, 9))
    case("topk", lambda s, x: torch.topk(x, 3)[0], lambda: r(4, 9))
    case("topk_indices", lambda s, x: torch.topk(x, 2, dim=0, largest=False)[1], lambda: r(5, 3))
    case("topk_both", lambda s, x: (lambda v, i: v * i.float())(*torch.topk(x, 4, 1)), lambda: r(3, 6))
    case("prod_all", lambda s, x: torch.prod(x), lambda: pos(3, 4) * 0.3 + 0.6)
    case("prod_dim", lambda s, x: torch.prod(x, 1, keepdim=True), lambda: r(2, 5, 3))
    case("prod_int", lambda s, x: torch.prod(x, 0), lambda: ints(-3, 4, 3, 5))

    # -- symbolic sizes (a dynamic export, imported at its example shapes)
    case("sym_size", lambda s, x: x.view(x.size(0), -1) * 2, lambda: r(4, 3, 2), dyn={0: [0]})
    case("sym_numel", lambda s, x: x.reshape(x.numel()) + 1, lambda: r(4, 3), dyn={0: [0]})
    case("sym_stride", lambda s, x: x.view(x.stride(0), -1) + 1, lambda: r(2, 5, 3), dyn={0: [1]})
    case("sym_storage_offset",
         lambda s, x: torch.ops.aten.sym_storage_offset(x[x.size(0) // 2:]) + x,
         lambda: r(6, 3), dyn={0: [0]})
    case("sym_is_contiguous",
         lambda s, x: x + torch.ops.aten.sym_is_contiguous(x.t()), lambda: r(4, 4), dyn={0: [0, 1]})

    # -- out= and in-place resizing
    case("atan2_out", lambda s, x, y: torch.atan2(x, y, out=torch.empty_like(x)) + 0,
         lambda: r(3, 4), lambda: r(3, 4))
    case("resize_same", lambda s, x: (x * 2).resize_(3, 4) + 1, lambda: r(3, 4))
    case("resize_flat", lambda s, x: (x * 2).resize_(12) - 1, lambda: r(3, 4))

    # -- batch statistics
    case("batch_norm_stats", lambda s, x: F.batch_norm(x, None, None, training=True), lambda: r(3, 4, 5))
    case("batch_norm_stats_affine",
         lambda s, x, w, b: F.batch_norm(x, None, None, w, b, training=True, eps=1e-3),
         lambda: r(2, 3, 4, 5), lambda: pos(3), lambda: r(3))

    # -- distances, bags, folds and sampling
    case("cdist", lambda s, a, b: torch.cdist(a, b), lambda: r(2, 5, 3), lambda: r(2, 4, 3))
    case("cdist_p1", lambda s, a, b: torch.cdist(a, b, p=1), lambda: r(5, 3), lambda: r(4, 3))
    case("cdist_p3", lambda s, a, b: torch.cdist(a, b, p=3), lambda: r(5, 3), lambda: r(4, 3))
    case("pdist", lambda s, x: F.pdist(x), lambda: r(5, 3))
    case("pdist_p1", lambda s, x: F.pdist(x, p=1), lambda: r(6, 2))
    case("masked_scatter", lambda s, x, m, y: x.masked_scatter(m, y), lambda: r(3, 4), lambda: mask(3, 4),
         lambda: r(4, 4))
    case("masked_scatter_bcast", lambda s, x, m, y: x.masked_scatter(m, y), lambda: r(3, 4),
         lambda: mask(1, 4), lambda: r(14))
    for n, kw in (("sum", dict(mode="sum")), ("mean", dict(mode="mean")), ("max", dict(mode="max")),
                  ("last", dict(mode="sum", include_last_offset=True))):
        case("embedding_bag_" + n, (lambda kw: lambda s, i, o, w: F.embedding_bag(i, w, o, **kw))(kw),
             lambda: ints(0, 7, 9), lambda: torch.tensor([0, 2, 2, 6]), lambda: r(7, 3))
    case("embedding_bag_2d", lambda s, i, w: F.embedding_bag(i, w, mode="mean"), lambda: ints(0, 7, 3, 4),
         lambda: r(7, 5))
    case("embedding_bag_module", lambda s, i, o: s.m[0](i, o), lambda: ints(0, 7, 9),
         lambda: torch.tensor([0, 2, 5]), mods=(lambda: nn.EmbeddingBag(7, 3, mode="max"),))
    case("col2im", lambda s, x: F.fold(x, (5, 6), (2, 3)), lambda: r(2, 12, 16))
    case("col2im_stride", lambda s, x: F.fold(x, (7, 6), 3, dilation=(1, 2), padding=1, stride=2),
         lambda: r(1, 18, 8))
    for mode in ("bilinear", "nearest"):
        for pad in ("zeros", "border", "reflection"):
            for ac in (False, True):
                case(f"grid_sample_{mode}_{pad}_{int(ac)}",
                     (lambda kw: lambda s, x, g: F.grid_sample(x, g, **kw))(
                         dict(mode=mode, padding_mode=pad, align_corners=ac)),
                     lambda: r(2, 3, 5, 6), lambda: torch.rand(2, 4, 7, 2) * 2.6 - 1.3)

    # -- norms
    case("batch_norm", lambda s, x: s.m[0](x), lambda: r(2, 3, 4, 4),
         mods=(lambda: bn(nn.BatchNorm2d(3)),))
    case("batch_norm_noaffine", lambda s, x: s.m[0](x), lambda: r(2, 3, 5),
         mods=(lambda: bn(nn.BatchNorm1d(3, affine=False)),))
    case("layer_norm", lambda s, x: s.m[0](x), lambda: r(2, 3, 8), mods=(lambda: affine(nn.LayerNorm(8)),))
    case("layer_norm_2d_noaffine", lambda s, x: s.m[0](x), lambda: r(2, 3, 8),
         mods=(lambda: nn.LayerNorm([3, 8], elementwise_affine=False),))
    case("layer_norm_nobias", lambda s, x: s.m[0](x), lambda: r(4, 6),
         mods=(lambda: affine(nn.LayerNorm(6, bias=False)),))
    case("rms_norm", lambda s, x: s.m[0](x), lambda: r(2, 3, 8), mods=(lambda: affine(nn.RMSNorm(8)),))
    case("rms_norm_eps", lambda s, x: F.rms_norm(x, [8], eps=1e-3), lambda: r(2, 8))
    # rows held in registers by their warp on cuda (up to 1024 elements): a
    # residual add written by the norm, rows not whole rounds of 32; rows of
    # 3 rounds; and rows past 1024, which the warp reads from memory
    case("layer_norm_add_rows", lambda s, x, y: s.m[0](x + y), lambda: r(3, 10, 200),
         lambda: r(3, 10, 200), mods=(lambda: affine(nn.LayerNorm(200)),))
    case("rms_norm_rows", lambda s, x: s.m[0](x), lambda: r(5, 96), mods=(lambda: affine(nn.RMSNorm(96)),))
    case("layer_norm_long", lambda s, x: s.m[0](x), lambda: r(3, 1500),
         mods=(lambda: affine(nn.LayerNorm(1500)),))
    # an elementwise result of over 2^20 elements (1000 x 1100, not whole
    # rounds of 1024): on cuda four elements a thread, the last block's in
    # the loop with bounds checks; the product needs it in memory
    case("elem_many", lambda s, x, y: s.m[0](F.gelu(x + y)), lambda: r(1000, 1),
         lambda: r(1, 1100), mods=(lambda: nn.Linear(1100, 4, bias=False),))

    # a fp32 product's A computed by the kernel before it: with "tune
    # cuda.mm.x3 1" (DP_TEST_TARGET) the product is 3xTF32 through cuBLASLt
    # and that kernel writes A already split (cuda/tf32.cuh): an
    # elementwise kernel of one element a thread, through a reshape; a
    # layer norm of enough rows for its kernel to fill the GPU (their
    # inputs made inside from small ones): rows held by a warp (of a sum,
    # which an elementwise kernel computes before it: the residual add a
    # norm does itself is in tests/golden/tune/x3split.ir and in the
    # vision transformers of bench/gpu.py); read from memory by a warp
    # (past 1024) and by a block (past 4096)
    case("x3s_gelu_linear", lambda s, x: s.m[0](F.gelu(x).reshape(4, 10, 48)),
         lambda: r(2, 20, 48), mods=(lambda: nn.Linear(48, 24),))
    case("x3s_layer_norm_add_linear",
         lambda s, p, q: s.m[1](s.m[0](F.gelu(p + q) + torch.tanh(p * q))), lambda: r(1100, 1),
         lambda: r(1, 200), mods=(lambda: affine(nn.LayerNorm(200)), lambda: nn.Linear(200, 36)))
    case("x3s_layer_norm_long_linear", lambda s, p, q: s.m[1](s.m[0](p * q + torch.sin(q))),
         lambda: r(1100, 1), lambda: r(1, 1500),
         mods=(lambda: affine(nn.LayerNorm(1500)), lambda: nn.Linear(1500, 20, bias=False)))
    # attention of head size 64 (the tensor cores' kernel on cuda) whose
    # result, transposed and reshaped in place, a product reads: the
    # attention kernel writes the split (dprt_cuda_sdpa3)
    case("x3s_sdpa_linear",
         lambda s, q, k, v: s.m[0](F.scaled_dot_product_attention(q, k, v).transpose(1, 2)
                                   .reshape(2, 40, 256)),
         lambda: r(2, 4, 40, 64), lambda: r(2, 4, 40, 64), lambda: r(2, 4, 40, 64),
         mods=(lambda: nn.Linear(256, 24),))
    case("x3s_layer_norm_wide_linear", lambda s, p, q: s.m[1](s.m[0](p - q)), lambda: r(140, 1),
         lambda: r(1, 5000), mods=(lambda: affine(nn.LayerNorm(5000)), lambda: nn.Linear(5000, 8)))

    # -- convolution and pooling
    for n, kw, shape in (
            ("conv", dict(in_channels=3, out_channels=4, kernel_size=3, padding=1), (1, 3, 8, 8)),
            ("conv_stride", dict(in_channels=3, out_channels=4, kernel_size=3, stride=2, bias=False),
             (2, 3, 9, 9)),
            ("conv_dilation", dict(in_channels=2, out_channels=3, kernel_size=3, dilation=2, padding=2),
             (1, 2, 9, 7)),
            ("conv_groups", dict(in_channels=4, out_channels=6, kernel_size=(3, 1), groups=2),
             (1, 4, 6, 6)),
            ("conv_depthwise", dict(in_channels=4, out_channels=8, kernel_size=3, groups=4, padding=1),
             (2, 4, 5, 5)),
            ("conv_1x1", dict(in_channels=5, out_channels=3, kernel_size=1), (1, 5, 4, 4)),
            # two tiles each way on cuda, cut at both edges, in the 64x64 tile
            # and the 128x128 one (DPRT_CUDA_CONV_TILE, tests/gpu_nn.t); K =
            # 216, not a multiple of 16
            ("conv_tiles", dict(in_channels=24, out_channels=136, kernel_size=3, padding=1),
             (2, 24, 10, 9)),
            # the same for a 1x1 window whose images are rows of 4 pixels
            # (x̂ loaded 16 bytes at a time); K = 40
            ("conv_1x1_tiles", dict(in_channels=40, out_channels=136, kernel_size=1), (2, 40, 12, 12)),
            # a group's channels a multiple of 16: cuda's packed weights take K
            # tap by tap (runtime/cuda/conv.cu, tapk); two tiles of 64 and of
            # 128 rows, K split on cuda (few pixels, K = 288)
            ("conv_taps", dict(in_channels=32, out_channels=136, kernel_size=3, padding=1),
             (1, 32, 7, 6)),
            # the same through groups of 16 channels, a 3x5 window, strides,
            # dilation and padding that cut both edges
            ("conv_taps_groups", dict(in_channels=32, out_channels=18, kernel_size=(3, 5),
                                      stride=(2, 1), padding=(1, 3), dilation=(1, 2), groups=2),
             (2, 32, 9, 11)),
            # a 7x7 window (a ResNet's stem): cuda walks its taps slice by
            # slice (runtime/cuda/conv.cu, KS 7); K = 147, padding and stride
            # that cut both edges
            ("conv_7x7", dict(in_channels=3, out_channels=20, kernel_size=7, stride=2, padding=3),
             (2, 3, 15, 13))):
        case(n, lambda s, x: s.m[0](x), (lambda shape: lambda: r(*shape))(shape),
             mods=((lambda kw: lambda: nn.Conv2d(**kw))(kw),))
    # windows that tile the input (stride = kernel): legalize makes each one
    # product of the patches (stages/legalize/rules.c, r_conv); a 2x4
    # window with a bias, and a vision transformer's patch embedding (16x16,
    # no bias) read as the sequence of its patches
    case("conv_patch", lambda s, x: s.m[0](x), lambda: r(2, 3, 8, 12),
         mods=(lambda: nn.Conv2d(3, 8, kernel_size=(2, 4), stride=(2, 4)),))
    case("conv_patch_seq", lambda s, x: s.m[0](x).flatten(2).transpose(1, 2), lambda: r(1, 3, 32, 48),
         mods=(lambda: nn.Conv2d(3, 24, kernel_size=16, stride=16, bias=False),))
    # a convolution's clamp (ReLU6, hardtanh, clamp) after its batch norm
    # or alone, folded into its epilogue on cuda; inputs large enough that
    # both bounds cut
    case("conv_bn_relu6", lambda s, x: F.relu6(s.m[1](s.m[0](x))), lambda: r(2, 8, 7, 7) * 12,
         mods=(lambda: nn.Conv2d(8, 16, 3, padding=1), lambda: bn(nn.BatchNorm2d(16))))
    case("conv_dw_hardtanh", lambda s, x: F.hardtanh(s.m[0](x), -0.3, 0.4), lambda: r(1, 6, 6, 5),
         mods=(lambda: nn.Conv2d(6, 6, 3, padding=1, groups=6),))
    case("conv_clamp_min", lambda s, x: s.m[0](x).clamp(min=-0.1), lambda: r(1, 5, 6, 6),
         mods=(lambda: nn.Conv2d(5, 7, 1),))
    # depthwise convolutions through the cuda kernel's other paths: stride 2
    # (each row's span read once), a dilated 5x5 window with two outputs a
    # channel (any window); rows of 9 and 11 outputs cut the last thread's 4
    case("conv_dw_s2", lambda s, x: s.m[0](x), lambda: r(2, 6, 9, 17),
         mods=(lambda: nn.Conv2d(6, 6, 3, stride=2, padding=1, groups=6),))
    case("conv_dw_5x5_dil", lambda s, x: s.m[0](x), lambda: r(1, 4, 9, 11),
         mods=(lambda: nn.Conv2d(4, 8, 5, padding=4, dilation=2, groups=4),))
    case("max_pool", lambda s, x: F.max_pool2d(x, 2), lambda: r(1, 2, 6, 6))
    case("max_pool_pad_ceil", lambda s, x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), lambda: r(2, 2, 8, 7))
    case("max_pool_dilation", lambda s, x: F.max_pool2d(x, 2, 1, 0, dilation=2), lambda: r(1, 2, 7, 7))
    case("avg_pool", lambda s, x: F.avg_pool2d(x, 2), lambda: r(1, 2, 6, 6))
    case("avg_pool_pad", lambda s, x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
         lambda: r(1, 2, 7, 7))
    case("avg_pool_ceil_divisor", lambda s, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, divisor_override=4),
         lambda: r(1, 2, 8, 8))
    case("adaptive_avg_pool", lambda s, x: F.adaptive_avg_pool2d(x, (2, 3)), lambda: r(1, 3, 7, 8))
    case("adaptive_avg_pool_1", lambda s, x: F.adaptive_avg_pool2d(x, 1), lambda: r(2, 3, 5, 5))

    # -- attention
    case("sdpa", lambda s, q, k, v: F.scaled_dot_product_attention(q, k, v),
         lambda: r(1, 2, 5, 8), lambda: r(1, 2, 7, 8), lambda: r(1, 2, 7, 4))
    case("sdpa_causal", lambda s, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
         lambda: r(2, 2, 6, 8), lambda: r(2, 2, 6, 8), lambda: r(2, 2, 6, 8))
    case("sdpa_causal_rect", lambda s, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
         lambda: r(1, 1, 4, 8), lambda: r(1, 1, 6, 8), lambda: r(1, 1, 6, 8))
    case("sdpa_bool_mask", lambda s, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
         lambda: r(1, 2, 5, 8), lambda: r(1, 2, 7, 8), lambda: r(1, 2, 7, 4),
         lambda: torch.rand(5, 7) > 0.3)
    case("sdpa_float_mask_scale",
         lambda s, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3),
         lambda: r(2, 5, 8), lambda: r(2, 7, 8), lambda: r(2, 7, 4), lambda: r(1, 5, 7))
    # grouped heads (grouped-query attention): Hugging Face's repeat_kv
    # before attention, and enable_gqa; on cuda one query row takes the
    # decode kernel (head size 64: its own path), 20 rows of head size 64
    # the tensor-core kernel
    case("sdpa_gqa_repeat",
         lambda s, q, k, v, m: F.scaled_dot_product_attention(q, repkv(k, 2), repkv(v, 2),
                                                              attn_mask=m),
         lambda: r(1, 4, 3, 8), lambda: r(1, 2, 6, 8), lambda: r(1, 2, 6, 8),
         lambda: r(1, 1, 3, 6))
    case("sdpa_gqa_decode",
         lambda s, q, k, v, m: F.scaled_dot_product_attention(q, repkv(k, 3), repkv(v, 3),
                                                              attn_mask=m),
         lambda: r(1, 6, 1, 16), lambda: r(1, 2, 40, 16), lambda: r(1, 2, 40, 16),
         lambda: torch.rand(1, 1, 1, 40) > 0.3)
    case("sdpa_gqa_decode64",
         lambda s, q, k, v, m: F.scaled_dot_product_attention(q, repkv(k, 2), repkv(v, 2),
                                                              attn_mask=m),
         lambda: r(1, 4, 1, 64), lambda: r(1, 2, 48, 64), lambda: r(1, 2, 48, 64),
         lambda: torch.rand(1, 4, 1, 48) > 0.3)
    case("sdpa_gqa_d64",
         lambda s, q, k, v: F.scaled_dot_product_attention(q, repkv(k, 2), repkv(v, 2),
                                                           is_causal=True),
         lambda: r(1, 4, 20, 64), lambda: r(1, 2, 20, 64), lambda: r(1, 2, 20, 64))
    case("sdpa_enable_gqa",
         lambda s, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                           enable_gqa=True),
         lambda: r(2, 6, 4, 8), lambda: r(2, 2, 5, 8), lambda: r(2, 2, 5, 8))
    case("mha", lambda s, q, k, v: s.m[0](q, k, v, need_weights=False)[0],
         lambda: r(1, 5, 8), lambda: r(1, 6, 8), lambda: r(1, 6, 8),
         mods=(lambda: nn.MultiheadAttention(8, 2, batch_first=True),))

    # -- tensors made from nothing (added to an input, which export needs)
    case("arange", lambda s, x: x + torch.arange(4), lambda: ints(0, 9, 4))
    case("arange_float", lambda s, x: x + torch.arange(0.5, 2.5, 0.5), lambda: r(4))
    case("arange_start_step", lambda s, x: x + torch.arange(1, 9, 2).float(), lambda: r(4))
    case("full", lambda s, x: x + torch.full((3, 4), 2.5), lambda: r(3, 4))
    case("full_int", lambda s, x: x + torch.full((4,), 7), lambda: ints(0, 9, 4))
    case("full_bool", lambda s, x: x & torch.full((4,), True), lambda: mask(4))
    case("zeros_ones", lambda s, x: x + torch.zeros(4) + torch.ones(3, 1), lambda: r(3, 4))
    case("zeros_ones_like", lambda s, x: torch.zeros_like(x) + torch.ones_like(x) * x, lambda: r(3, 4))
    case("full_like", lambda s, x: torch.full_like(x, 7) - x, lambda: r(3, 4))
    case("scalar_tensor", lambda s, x: x + torch.scalar_tensor(3.0), lambda: r(3))
    case("new_zeros_ones", lambda s, x: x + x.new_zeros(3, 4) + x.new_ones(4) + x.new_full((1, 4), 2.0),
         lambda: r(3, 4))

    # -- dtype conversions
    case("to_int", lambda s, x: (x * 4).to(torch.int64), lambda: r(3, 4))
    case("to_float", lambda s, x: x.to(torch.float32) / 2, lambda: ints(-9, 9, 3, 4))
    case("bool_to_float", lambda s, x: (x > 0).float(), lambda: r(3, 4))
    case("to_same", lambda s, x: x.to(torch.float32) * 2, lambda: r(3))
    case("type_as", lambda s, x, y: x.type_as(y) + y, lambda: ints(0, 9, 3), lambda: r(3))

    # -- more elementwise formulas (runtime/dpscalar.h)
    for n, f, inp in (
            ("acos", torch.acos, unit), ("acosh", torch.acosh, lambda *sh: pos(*sh) + 1),
            ("asin", torch.asin, unit), ("asinh", torch.asinh, r), ("atan", torch.atan, r),
            ("atanh", torch.atanh, unit), ("ceil", torch.ceil, r), ("cosh", torch.cosh, r),
            ("erf", torch.erf, r), ("expm1", torch.expm1, r), ("floor", torch.floor, r),
            ("log10", torch.log10, pos), ("log1p", torch.log1p, pos), ("log2", torch.log2, pos),
            ("round", torch.round, halves), ("sign", torch.sign, r), ("sinh", torch.sinh, r),
            ("tan", torch.tan, unit), ("trunc", torch.trunc, r),
            ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), r), ("elu", F.elu, r),
            ("selu", torch.selu, r), ("mish", F.mish, r)):
        case(n, (lambda f: lambda s, x: f(x))(f), (lambda inp: lambda: inp(2, 3, 4) * 2)(inp))
    case("isnan_isinf", lambda s, x: torch.isnan(x.log()) | torch.isinf(1 / x.round()),
         lambda: r(3, 4))
    for n, f in (("fmod", torch.fmod), ("remainder", torch.remainder),
                 ("maximum", torch.maximum), ("minimum", torch.minimum), ("atan2", torch.atan2)):
        case(n, (lambda f: lambda s, x, y: f(x, y))(f), lambda: r(2, 3, 4) * 3, lambda: r(3, 1) + 0.1)
    case("remainder_scalar", lambda s, x: x % 1.5, lambda: r(2, 5) * 4)
    case("addcmul", lambda s, x, a, b: torch.addcmul(x, a, b, value=0.5), lambda: r(2, 3),
         lambda: r(3), lambda: r(2, 1))
    case("addcdiv", lambda s, x, a, b: torch.addcdiv(x, a, b, value=2), lambda: r(2, 3),
         lambda: r(2, 3), lambda: pos(3))

    # -- scans, gathers and the legalize table's decompositions
    case("cumsum", lambda s, x: torch.cumsum(x, 1), lambda: r(2, 5, 3))
    case("cumsum_int", lambda s, m: m.long().cumsum(-1) - 1, lambda: mask(2, 7))
    case("cumprod", lambda s, x: torch.cumprod(x, 1), lambda: r(2, 5, 3))
    case("cumprod_int", lambda s, x: torch.cumprod(x.int(), -1), lambda: ints(-3, 4, 3, 6))
    case("logcumsumexp", lambda s, x: torch.logcumsumexp(x * 30, 1), lambda: r(2, 5, 3))
    case("position_ids", lambda s, m: (m.cumsum(-1) * m - 1).clamp(min=0), lambda: ints(0, 2, 2, 9))
    case("diff", lambda s, x: torch.diff(x, dim=1), lambda: r(2, 6))
    case("diff_n2", lambda s, x: torch.diff(x, n=2), lambda: ints(-9, 9, 3, 5))
    case("gather", lambda s, x, i: torch.gather(x, 1, i), lambda: r(3, 5), lambda: ints(0, 5, 3, 4))
    case("gather_dim0", lambda s, x, i: torch.gather(x, 0, i) * 2, lambda: r(4, 3, 2),
         lambda: ints(0, 4, 2, 3, 2))
    case("index_select", lambda s, x, i: torch.index_select(x, 1, i), lambda: r(3, 5),
         lambda: ints(0, 5, 4))
    case("masked_fill", lambda s, x, m: x.masked_fill(m, -1e4), lambda: r(2, 3, 4), lambda: mask(3, 4))
    case("masked_fill_inplace", lambda s, x: x.clone().masked_fill_(x > 0.5, 0.25), lambda: r(2, 6))
    case("fill_inplace", lambda s, x: x + x.clone().fill_(3.5), lambda: r(2, 3))
    case("fill_tensor", lambda s, x, v: x + x.clone().fill_(v), lambda: r(2, 3), lambda: r(()))
    case("dropout_inplace", lambda s, x: s.m[0](x * 2), lambda: r(2, 3),
         mods=(lambda: nn.Dropout(0.3, inplace=True),))
    case("unflatten", lambda s, x: x.unflatten(1, (2, -1)) * 2, lambda: r(3, 6))
    case("expand_as", lambda s, x, y: x.expand_as(y) + y, lambda: r(3, 1), lambda: r(2, 3, 4))
    case("swapaxes", lambda s, x: x.swapaxes(0, 2) * 1, lambda: r(2, 3, 4))
    case("vector_norm", lambda s, x: torch.linalg.vector_norm(x, dim=-1), lambda: r(3, 5))
    case("vector_norm_l1", lambda s, x: torch.linalg.vector_norm(x, 1, dim=(0, 2), keepdim=True),
         lambda: r(3, 2, 5))
    case("normalize_l2", lambda s, x: F.normalize(x, dim=1), lambda: r(4, 6))
    case("var", lambda s, x: x.var(1), lambda: r(3, 5))
    case("var_unbiased_false", lambda s, x: torch.var(x, (0, 2), unbiased=False), lambda: r(2, 3, 4))
    case("group_norm", lambda s, x: s.m[0](x), lambda: r(2, 6, 3, 4),
         mods=(lambda: affine(nn.GroupNorm(3, 6)),))
    case("log_softmax", lambda s, x: F.log_softmax(x, -1), lambda: r(2, 7))
    case("constant_pad", lambda s, x: F.pad(x, (1, 2, 0, -1), value=0.5), lambda: r(2, 3, 4))
    case("reflect_pad", lambda s, x: F.pad(x, (2, 1, 1, 2), mode="reflect"), lambda: r(1, 2, 4, 5))
    case("replicate_pad", lambda s, x: F.pad(x, (2, 3, 1, 0), mode="replicate"), lambda: r(1, 2, 3, 4))
    case("circular_pad", lambda s, x: F.pad(x, (1, 2), mode="circular"), lambda: r(1, 2, 5))
    case("roll", lambda s, x: torch.roll(x, (1, -2), (1, 2)), lambda: r(2, 3, 4))
    case("roll_flat", lambda s, x: torch.roll(x, 3), lambda: r(2, 3))
    case("slice_scatter", lambda s, x, y: torch.slice_scatter(x, y, 1, 1, 3), lambda: r(2, 5),
         lambda: r(2, 2))
    case("select_scatter", lambda s, x, y: torch.select_scatter(x, y, 0, 1), lambda: r(3, 4),
         lambda: r(4))
    case("setitem", lambda s, x, y: setitem(x, y), lambda: r(4, 5), lambda: r(2, 5))
    case("upsample_nearest", lambda s, x: F.interpolate(x, scale_factor=2, mode="nearest"),
         lambda: r(1, 2, 3, 4))
    case("upsample_nearest_size", lambda s, x: F.interpolate(x, size=(5, 7), mode="nearest"),
         lambda: r(1, 2, 3, 4))
    case("flip", lambda s, x: torch.flip(x, (0, 2)), lambda: r(2, 3, 4))
    case("repeat", lambda s, x: x.repeat(2, 1, 3), lambda: r(3, 2))
    case("copy_inplace", lambda s, x, y: x.clone().copy_(y), lambda: r(2, 3), lambda: r(3))
    case("upsample_bilinear", lambda s, x: F.interpolate(x, scale_factor=2, mode="bilinear"),
         lambda: r(1, 2, 3, 4))
    case("upsample_bilinear_size", lambda s, x: F.interpolate(x, size=(7, 3), mode="bilinear"),
         lambda: r(2, 2, 5, 4))
    case("upsample_bilinear_align", lambda s, x: F.interpolate(x, size=(6, 9), mode="bilinear",
                                                               align_corners=True),
         lambda: r(1, 3, 4, 5))
    case("einsum_attn", lambda s, q, k: torch.einsum("bhid,bhjd->bhij", q, k),
         lambda: r(2, 3, 4, 5), lambda: r(2, 3, 6, 5))
    case("einsum_mm", lambda s, a, b: torch.einsum("ij,jk->ki", a, b), lambda: r(3, 4), lambda: r(4, 5))
    case("einsum_sum", lambda s, a, b: torch.einsum("bij,bjk->b", a, b), lambda: r(2, 3, 4),
         lambda: r(2, 4, 5))
    case("einsum_broadcast", lambda s, a, b: torch.einsum("nhw,hwc->nc", a, b), lambda: r(2, 3, 4),
         lambda: r(3, 4, 5))
    case("einsum_transpose", lambda s, a: torch.einsum("abc->cab", a) * 1, lambda: r(2, 3, 4))
    case("all", lambda s, x: (x > -1).all(-1), lambda: r(3, 4))
    case("argmax_all", lambda s, x: torch.argmax(x), lambda: r(3, 4))
    case("argmin_dim", lambda s, x: torch.argmin(x, 1, keepdim=True), lambda: r(3, 4, 2))
    case("as_strided", lambda s, x: torch.as_strided(x, (3, 2, 4), (1, 12, 3)) * 1, lambda: r(2, 4, 3))
    case("amax", lambda s, x: torch.amax(x, (0, 2), keepdim=True), lambda: r(2, 3, 4))
    case("amax_all", lambda s, x: x.amax(), lambda: r(3, 5))
    case("amin", lambda s, x: torch.amin(x, 1), lambda: r(3, 4, 2))
    case("amin_int", lambda s, x: torch.amin(x, -1, keepdim=True), lambda: ints(-9, 9, 2, 5))
    case("clamp_tensor", lambda s, x, lo, hi: torch.clamp(x, lo, hi), lambda: r(3, 4),
         lambda: r(4) - 0.5, lambda: r(3, 1) + 0.5)
    case("clamp_tensor_min", lambda s, x, lo: torch.clamp(x, min=lo), lambda: r(2, 3), lambda: r(3))
    case("clamp_tensor_max", lambda s, x, hi: torch.clamp(x, max=hi), lambda: r(2, 3),
         lambda: r(2, 1))
    case("bitwise_scalar", lambda s, x: (x & True) ^ (x | False) ^ True, lambda: mask(2, 5))
    case("max_dim", lambda s, x: x.max(1).values, lambda: r(3, 4, 2))
    case("min_dim_keep", lambda s, x: torch.min(x, -1, keepdim=True)[0], lambda: r(2, 5))
    case("diagonal", lambda s, x: torch.diagonal(x) * 1, lambda: r(4, 3))
    case("diagonal_offset", lambda s, x: torch.diagonal(x, -1, 1, 2) * 1, lambda: r(2, 4, 5))
    case("avg_pool1d", lambda s, x: F.avg_pool1d(x, 3, 2, 1), lambda: r(2, 3, 9))
    case("avg_pool1d_ceil", lambda s, x: F.avg_pool1d(x, 2, ceil_mode=True, count_include_pad=False),
         lambda: r(2, 3, 7))
    case("max_pool1d", lambda s, x: F.max_pool1d(x, 3, 2, 1), lambda: r(2, 3, 8))
    case("adaptive_avg_pool1d", lambda s, x: F.adaptive_avg_pool1d(x, 4), lambda: r(2, 3, 10))
    case("avg_pool3d", lambda s, x: F.avg_pool3d(x, (2, 3, 2), 2, (1, 1, 0), ceil_mode=True,
                                                 count_include_pad=False),
         lambda: r(2, 3, 4, 6, 5))
    case("avg_pool3d_pad", lambda s, x: F.avg_pool3d(x, 3, 2, 1), lambda: r(1, 2, 5, 6, 7))
    case("max_pool3d", lambda s, x: F.max_pool3d(x, 2, (1, 2, 2)), lambda: r(2, 3, 4, 6, 5))
    case("max_pool3d_pad", lambda s, x: F.max_pool3d(x, 3, 2, 1, dilation=(1, 2, 1)),
         lambda: r(1, 2, 6, 9, 5))
    case("adaptive_avg_pool3d", lambda s, x: F.adaptive_avg_pool3d(x, (3, 2, 4)),
         lambda: r(2, 3, 4, 6, 5))
    case("scatter", lambda s, x, i, y: torch.scatter(x, 0, i, y),
         lambda: r(5, 3), lambda: torch.randperm(5)[:2].view(2, 1).expand(2, 3).contiguous(),
         lambda: r(2, 3))
    case("scatter_value", lambda s, x, i: x.scatter(1, i, -2.5),
         lambda: r(3, 6), lambda: torch.randperm(6)[:4].repeat(3, 1))
    case("scatter_src_larger", lambda s, x, i, y: torch.scatter(x, 1, i, y),
         lambda: r(2, 6), lambda: torch.stack([torch.randperm(6)[:3] for _ in range(2)]),
         lambda: r(2, 5))
    case("scatter_add", lambda s, x, i, y: torch.scatter_add(x, 1, i, y),
         lambda: r(3, 4), lambda: ints(0, 4, 3, 7), lambda: r(3, 7))
    case("scatter_reduce_sum", lambda s, x, i, y: x.scatter_reduce(0, i, y, "sum", include_self=False),
         lambda: r(4, 3), lambda: ints(0, 4, 6, 3), lambda: r(6, 3))
    case("scatter_reduce_mean", lambda s, x, i, y: x.scatter_reduce(1, i, y, "mean"),
         lambda: r(2, 5), lambda: ints(0, 5, 2, 8), lambda: r(2, 8))
    case("scatter_reduce_amax", lambda s, x, i, y: x.scatter_reduce(1, i, y, "amax"),
         lambda: r(2, 5), lambda: ints(0, 5, 2, 8), lambda: r(2, 8))
    case("scatter_reduce_amin", lambda s, x, i, y: x.scatter_reduce(0, i, y, "amin", include_self=False),
         lambda: r(4, 3), lambda: ints(0, 4, 6, 3), lambda: r(6, 3))
    case("scatter_add_int", lambda s, x, i, y: torch.scatter_add(x, 0, i, y),
         lambda: ints(-9, 9, 3, 2), lambda: ints(0, 3, 5, 2), lambda: ints(-9, 9, 5, 2))
    case("index_put_kv", lambda s, c, p, k: setindex(c, p, k),
         lambda: r(1, 2, 8, 4), lambda: torch.tensor([3, 4, 5]), lambda: r(1, 2, 3, 4))
    case("index_put_neg", lambda s, x, i, v: torch.index_put(x, (i,), v),
         lambda: r(6, 3), lambda: torch.tensor([-1, 2]), lambda: r(3))
    case("index_put_2d", lambda s, x, i, j, v: torch.index_put(x, (i, j), v),
         lambda: r(4, 5, 2), lambda: torch.tensor([0, 3, 1]), lambda: torch.tensor([4, 0, 2]),
         lambda: r(3, 2))
    case("index_put_acc", lambda s, x, i, v: torch.index_put(x, (i,), v, accumulate=True),
         lambda: r(5, 3), lambda: torch.tensor([1, 3, 1, 0]), lambda: r(4, 3))
    case("index_copy", lambda s, c, p, k: c.index_copy(2, p, k),
         lambda: r(1, 2, 8, 4), lambda: torch.tensor([6, 2]), lambda: r(1, 2, 2, 4))
    case("setitem_kv", lambda s, c, k: setitem2(c, k), lambda: r(2, 7, 4), lambda: r(2, 2, 4))
    case("div_scalar_mode", lambda s, x: torch.div(x, 4.0, rounding_mode=None), lambda: r(2, 3))

    # -- random numbers: DevProc's generator is not PyTorch's (formats/ops.md,
    # "Random numbers"), so these cases check properties, each one a bool the
    # module computes from its samples (PyTorch's own pass too): the input,
    # all true, is and-ed in
    case("rand", lambda s, t: rand_props(torch.rand(256, 256), torch.rand(4096)) & t, trues)
    case("randn", lambda s, t: randn_props(torch.randn(256, 256)) & t, trues)
    case("randperm", lambda s, t: perm_props(torch.randperm(100), 100) & t, trues)
    case("randperm_int32", lambda s, t: perm_props(torch.randperm(37, dtype=torch.int32), 37) & t,
         trues)

    # -- the discrete Fourier transform and complex values (f32 [..., 2] in DevProc)
    case("rfft", lambda s, x: torch.view_as_real(torch.fft.rfft(x)), lambda: r(3, 16))
    case("rfft_ortho_dim0", lambda s, x: torch.view_as_real(torch.fft.rfft(x, dim=0, norm="ortho")),
         lambda: r(7, 5))
    case("rfft_forward_abs", lambda s, x: torch.fft.rfft(x, norm="forward").abs(), lambda: r(2, 10))
    case("rfft2", lambda s, x: torch.view_as_real(torch.fft.rfft2(x)), lambda: r(2, 6, 8))
    case("fft_real", lambda s, x: torch.view_as_real(torch.fft.fft(x)), lambda: r(3, 6))
    case("irfft", lambda s, y: torch.fft.irfft(torch.view_as_complex(y)), lambda: r(4, 9, 2))
    case("irfft_odd_n", lambda s, y: torch.fft.irfft(torch.view_as_complex(y), n=15, norm="forward"),
         lambda: r(4, 9, 2))
    case("global_filter", lambda s, x, w: torch.fft.irfft2(
        torch.fft.rfft2(x, dim=(1, 2), norm="ortho") * torch.view_as_complex(w), s=(6, 8), dim=(1, 2),
        norm="ortho"), lambda: r(2, 6, 8, 3), lambda: r(6, 5, 3, 2))
    case("rfft_mix", lambda s, x, g: torch.view_as_real(torch.fft.rfft(x) * g + torch.fft.rfft(x * 2) * 0.5),
         lambda: r(3, 12), lambda: r(7))
    case("rfft_angle", lambda s, x, w: torch.angle(torch.fft.rfft(x) * torch.view_as_complex(w)),
         lambda: r(3, 12), lambda: r(7, 2), tol=1e-4)

    case("fftn_real", lambda s, x: torch.view_as_real(torch.fft.fftn(x, dim=(1, 2))), lambda: r(2, 5, 6))
    case("fft2_ortho", lambda s, x: torch.view_as_real(torch.fft.fft2(x, norm="ortho")), lambda: r(3, 4, 7))
    case("fftn_realpart", lambda s, x: torch.fft.fftn(x, dim=(1, 2)).real, lambda: r(1, 8, 6))
    case("fft_complex", lambda s, y: torch.view_as_real(torch.fft.fft(torch.view_as_complex(y),
                                                                      norm="forward")),
         lambda: r(3, 7, 2))
    case("ifft_complex", lambda s, y: torch.view_as_real(torch.fft.ifft(torch.view_as_complex(y))),
         lambda: r(2, 6, 2))
    case("ifft2_real_imag", lambda s, x: torch.fft.ifft2(x).imag, lambda: r(2, 5, 4))
    case("to_complex_fft", lambda s, x: torch.view_as_real(torch.fft.fftn(x.to(torch.complex64),
                                                                          dim=(0, 1))),
         lambda: r(4, 3))

    # -- what Hugging Face's vision, speech and encoder-decoder models use
    case("cast_half", lambda s, x, i: x.to(torch.bfloat16).float() + x.to(torch.float16).float() * 2 +
         (x * 1e4).to(torch.float16).float() + i.to(torch.bfloat16).float() * 3 +
         x.double().to(torch.bfloat16).to(torch.float16).float(), lambda: r(4, 5),
         lambda: ints(-100000, 100000, 5))
    case("pool_past_input", lambda s, x: F.avg_pool2d(x, 9, ceil_mode=True) +
         F.max_pool2d(x, (5, 4), ceil_mode=True) + F.avg_pool2d(x, (3, 2), padding=1, ceil_mode=True)[..., :1, :1],
         lambda: r(1, 2, 2, 3))
    case("cat_empty", lambda s, x: torch.cat([x.new_zeros(0), x, x.new_zeros(0)], dim=-2),
         lambda: r(2, 3, 4))
    case("square", lambda s, x, i: torch.square(x) + torch.square(i), lambda: r(3, 4),
         lambda: ints(-5, 5, 4))
    case("arith_aliases", lambda s, x, y: torch.multiply(x, y) - torch.subtract(x, y, alpha=2) +
         torch.divide(x, y) + torch.true_divide(x, 2.0) + torch.divide(x, y, rounding_mode="floor"),
         lambda: r(3, 5), lambda: pos(5))
    case("compare_aliases", lambda s, x, y: torch.greater(x, y).float() + torch.greater_equal(x, y) * 2 +
         torch.less(x, y) * 4 + torch.less_equal(x, y) * 8 + torch.not_equal(x, y) * 16,
         lambda: ints(-2, 2, 4, 3).float(), lambda: ints(-2, 2, 3).float())
    case("unary_aliases", lambda s, x, y: torch.negative(x) + torch.absolute(x) + torch.fix(x * 3) +
         torch.arctan(x) + torch.arcsinh(x) + torch.clip(x, -0.5, 0.5) + torch.arctan2(x, y),
         lambda: r(4, 5), lambda: r(5))
    case("broadcast_to", lambda s, x: torch.broadcast_to(x, (3, 2, 4)) * 2, lambda: r(2, 1))
    case("meshgrid_ij", lambda s, a, b: torch.stack(torch.meshgrid(a, b, indexing="ij")),
         lambda: r(3), lambda: r(4))
    case("meshgrid_xy", lambda s, a, b, c: torch.stack(torch.meshgrid(a, b, c, indexing="xy")),
         lambda: r(3), lambda: r(4), lambda: r(2))
    case("conv2d_same", lambda s, x, w: F.conv2d(x, w, padding="same"), lambda: r(1, 3, 7, 8),
         lambda: r(4, 3, 3, 4))
    case("conv2d_same_dil", lambda s, x, w, b: F.conv2d(x, w, b, padding="same", dilation=(2, 1)),
         lambda: r(2, 2, 6, 5), lambda: r(3, 2, 3, 3), lambda: r(3))
    case("conv1d_valid", lambda s, x, w: F.conv1d(x, w, padding="valid", stride=2), lambda: r(2, 3, 11),
         lambda: r(4, 3, 3))
    case("weight_norm_dim2", lambda s, x, v, g: F.conv1d(x, torch._weight_norm(v, g, 2), padding=2),
         lambda: r(1, 4, 9), lambda: r(4, 4, 5), lambda: pos(1, 1, 5))
    case("weight_norm_dim0", lambda s, v, g: torch._weight_norm(v, g, 0), lambda: r(3, 2, 4),
         lambda: pos(3, 1, 1))

    # -- a tensor's value as a Python scalar (aten._local_scalar_dense), used in arithmetic
    case("item_scale", lambda s, x, t: x * t.item(), lambda: r(2, 3), lambda: r(()))
    case("item_int_add", lambda s, x, t: x + t.item(), lambda: ints(0, 9, 4), lambda: ints(0, 9))
    case("item_of_sum", lambda s, x: x / x.abs().sum().item(), lambda: r(3, 4))

    # -- nonzero with a static bound (torch.nonzero_static: padded with fill_value)
    case("nonzero_static", lambda s, x: torch.nonzero_static(x > 0.3, size=10), lambda: r(3, 4))
    case("nonzero_static_fill", lambda s, x: torch.nonzero_static(x, size=4, fill_value=7),
         lambda: ints(0, 2, 2, 3, 2))

    # -- nonzero: a result [n, rank] whose n is known only at run time (a
    # bounded dimension, n <= numel: formats/ops.md), and the boolean-mask
    # selection x[mask] it serves
    case("nonzero", lambda s, x: torch.nonzero(x > 0.3), lambda: r(3, 4))
    case("nonzero_none", lambda s, x: torch.nonzero(x > 100), lambda: r(2, 3))
    case("nonzero_all", lambda s, x: torch.nonzero(x), lambda: pos(2, 3, 2))
    case("nonzero_1d_int", lambda s, x: torch.nonzero(x), lambda: ints(0, 2, 9))
    case("nonzero_add", lambda s, x: torch.nonzero(x < 0) * 2 + 1, lambda: r(4, 3))
    case("mask_select", lambda s, x: x[x > 0.2], lambda: r(3, 5))
    case("mask_rows", lambda s, x, m: x[m], lambda: r(5, 3), lambda: mask(5))
    case("mask_rows_ew", lambda s, x, m: (x[m] * 2 + 1).relu(), lambda: r(6, 2, 3),
         lambda: mask(6))
    case("mask_none", lambda s, x: x[x > 100] + 1, lambda: r(4, 3))
    case("mask_all", lambda s, x, m: torch.exp(x[m | True]), lambda: r(4, 2), lambda: mask(4, 2))
    # -- ops and arguments that public models use (tools/zoo.py --set timm hf):
    # mixed dtypes promoted as PyTorch does (an i32 arange times f32 slopes,
    # f32 to the power of integers, a comparison of i64 with f32, where of
    # i64 and f32, a rank-0 f32 beside i64); reshape_as, view_as, .T, min
    # and max of two tensors, baddbmm, repeat_interleave, unfold, div with
    # a rounding mode, floor_divide, cumsum with a dtype, 1-D convolution
    case("promote_mul", lambda s, x, i: i * x, lambda: r(3, 4), lambda: ints(-5, 5, 3, 4).int())
    case("promote_pow", lambda s, b, p: torch.pow(b[0], p), lambda: pos(1),
         lambda: ints(0, 4, 6).int())
    case("promote_lt", lambda s, i, x: i < x, lambda: ints(-3, 3, 2, 5), lambda: r(2, 5))
    case("promote_where", lambda s, c, i, x: torch.where(c, i, x), lambda: mask(2, 3),
         lambda: ints(-9, 9, 2, 3), lambda: r(2, 3))
    case("promote_rank0", lambda s, i, x: i + x[0], lambda: ints(-9, 9, 4), lambda: r(1))
    case("reshape_as", lambda s, x, y: x.reshape_as(y) + y, lambda: r(2, 6), lambda: r(3, 4))
    case("view_as", lambda s, x, y: x.view_as(y) * y, lambda: r(4, 3), lambda: r(2, 2, 3))
    case("numpy_t", lambda s, x: x.T * 2, lambda: r(3, 5))
    case("min_other", lambda s, x, y: torch.min(x, y), lambda: r(3, 4), lambda: r(4))
    case("max_other", lambda s, x, y: torch.max(x, y), lambda: r(2, 3), lambda: r(2, 3))
    case("baddbmm", lambda s, c, a, b: torch.baddbmm(c, a, b, beta=0.5, alpha=2.0),
         lambda: r(1, 3, 4), lambda: r(2, 3, 5), lambda: r(2, 5, 4))
    case("baddbmm_beta0", lambda s, c, a, b: torch.baddbmm(c, a, b, beta=0.0),
         lambda: r(2, 3, 4), lambda: r(2, 3, 5), lambda: r(2, 5, 4))
    case("repeat_interleave", lambda s, x: x.repeat_interleave(3, dim=1), lambda: r(2, 4, 3))
    case("repeat_interleave_flat", lambda s, x: x.repeat_interleave(2), lambda: r(2, 3))
    case("unfold", lambda s, x: x.unfold(2, 3, 2), lambda: r(2, 3, 9, 4))
    case("unfold_last", lambda s, x: x.unfold(-1, 4, 4) * 2, lambda: r(3, 8))
    case("div_floor", lambda s, x, y: torch.div(x, y, rounding_mode="floor"), lambda: r(3, 4),
         lambda: r(4))
    case("div_trunc", lambda s, x: torch.div(x, 0.7, rounding_mode="trunc"), lambda: r(3, 4))
    case("div_floor_int", lambda s, x: torch.div(x, 3, rounding_mode="floor"),
         lambda: ints(-20, 20, 9))
    case("floor_divide", lambda s, x, y: torch.floor_divide(x, y), lambda: ints(-20, 20, 2, 6),
         lambda: ints(1, 5, 6))
    case("cumsum_dtype", lambda s, m: torch.cumsum(m, 1, dtype=torch.float32), lambda: mask(2, 7))
    case("conv1d", lambda s, x: s.m[0](x), lambda: r(2, 4, 11),
         mods=(lambda: nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=1),))
    case("conv1d_groups", lambda s, x: s.m[0](x), lambda: r(1, 4, 9),
         mods=(lambda: nn.Conv1d(4, 4, 5, padding=4, dilation=2, groups=2, bias=False),))
    # bicubic resampling (a vision transformer's position embeddings to
    # another grid, as CrossViT's): up, down, corners aligned
    case("upsample_bicubic", lambda s, x: F.interpolate(x, size=(7, 9), mode="bicubic"),
         lambda: r(1, 2, 4, 5))
    case("upsample_bicubic_down", lambda s, x: F.interpolate(x, size=(3, 5), mode="bicubic"),
         lambda: r(2, 3, 8, 7))
    case("upsample_bicubic_align", lambda s, x: F.interpolate(x, size=(6, 6), mode="bicubic",
                                                              align_corners=True),
         lambda: r(1, 2, 3, 4))
    # a rotary embedding of a slice of a fused q/k/v projection (Falcon,
    # Phi-3, GPT-NeoX): the slice read in both branches of rotate_half's
    # cat, at other indices than outside it (the cuda kernel's index
    # variables of one name, lower_gpu/kern.c's elem)
    case("rope_slice", lambda s, x, c, si: rope(x[:, :, :-2].permute(0, 2, 1, 3), c, si),
         lambda: r(1, 4, 6, 16), lambda: r(4, 16), lambda: r(4, 16))
    case("rope_index", lambda s, x, c, si: rope(x[:, :, 4:5].permute(0, 2, 3, 1), c.t(), si.t()),
         lambda: r(1, 5, 6, 8), lambda: r(5, 8), lambda: r(5, 8))
    case("conv1d_eca", lambda s, x: x * torch.sigmoid(s.m[0](x.mean((2, 3)).unsqueeze(1))
                                                       .transpose(-1, -2).unsqueeze(-1)),
         lambda: r(1, 8, 5, 5), mods=(lambda: nn.Conv1d(1, 1, 3, padding=1, bias=False),))
    # -- recurrent layers (aten.lstm, aten.gru, aten.rnn_tanh/relu in training
    # IR; Core ATen has them unrolled already): one and two layers, both
    # directions, batch first or not, without biases, with a projection, an
    # initial state given; every result (output, h_n, c_n) checked
    case("lstm", lambda s, x: s.m[0](x)[0], lambda: r(5, 2, 3),
         mods=(lambda: nn.LSTM(3, 4),))
    case("lstm_state", lambda s, x, h, c: flat(s.m[0](x, (h, c))),
         lambda: r(2, 6, 3), lambda: r(2, 2, 5), lambda: r(2, 2, 5),
         mods=(lambda: nn.LSTM(3, 5, num_layers=2, batch_first=True),))
    case("lstm_bi", lambda s, x: flat(s.m[0](x)), lambda: r(4, 3, 6),
         mods=(lambda: nn.LSTM(6, 4, num_layers=2, bidirectional=True),))
    case("lstm_nobias_proj", lambda s, x: s.m[0](x)[0] * 2, lambda: r(1, 7, 4),
         mods=(lambda: nn.LSTM(4, 6, bias=False, proj_size=3, batch_first=True,
                               bidirectional=True),))
    case("gru", lambda s, x: s.m[0](x)[0], lambda: r(5, 2, 3), mods=(lambda: nn.GRU(3, 4),))
    case("gru_bi_state", lambda s, x, h: flat(s.m[0](x, h)), lambda: r(2, 4, 3),
         lambda: r(4, 2, 5),
         mods=(lambda: nn.GRU(3, 5, num_layers=2, batch_first=True, bidirectional=True),))
    case("rnn_tanh", lambda s, x: s.m[0](x)[1], lambda: r(6, 2, 3),
         mods=(lambda: nn.RNN(3, 4, num_layers=2),))
    case("rnn_relu_bi", lambda s, x: s.m[0](x)[0], lambda: r(2, 5, 3),
         mods=(lambda: nn.RNN(3, 4, nonlinearity="relu", batch_first=True, bidirectional=True,
                              bias=False),))
    case("lstm_cell", lambda s, x, h, c: (lambda o: o[0] + o[1])(s.m[0](x, (h, c))),
         lambda: r(3, 4), lambda: r(3, 5), lambda: r(3, 5), mods=(lambda: nn.LSTMCell(4, 5),))
    case("gru_cell", lambda s, x, h: s.m[0](x, h), lambda: r(3, 4), lambda: r(3, 5),
         mods=(lambda: nn.GRUCell(4, 5),))
    # -- 3-D convolution (video models, lambda layers): stride, padding,
    # dilation, groups, with and without a bias
    case("conv3d", lambda s, x: s.m[0](x), lambda: r(2, 3, 5, 6, 7),
         mods=(lambda: nn.Conv3d(3, 4, 3, stride=(1, 2, 1), padding=1),))
    case("conv3d_groups", lambda s, x: s.m[0](x), lambda: r(1, 4, 6, 5, 5),
         mods=(lambda: nn.Conv3d(4, 6, (3, 1, 2), stride=2, padding=(2, 0, 1), dilation=(2, 1, 1),
                                 groups=2, bias=False),))
    case("conv3d_1x1", lambda s, x: s.m[0](x).relu(), lambda: r(2, 5, 3, 4, 4),
         mods=(lambda: nn.Conv3d(5, 2, 1),))
    # -- transposed convolutions (ConvTranspose1d/2d/3d: decoders, U-Nets,
    # GANs): stride, padding, output_padding, dilation, groups, bias or not
    case("conv_transpose2d", lambda s, x: s.m[0](x), lambda: r(2, 4, 5, 6),
         mods=(lambda: nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1),))
    case("conv_transpose2d_groups", lambda s, x: s.m[0](x), lambda: r(1, 6, 4, 3),
         mods=(lambda: nn.ConvTranspose2d(6, 4, (2, 3), stride=(3, 1), padding=(0, 2), dilation=(1, 2),
                                          groups=2, bias=False),))
    case("conv_transpose2d_up", lambda s, x: s.m[0](x).relu(), lambda: r(1, 8, 7, 7),
         mods=(lambda: nn.ConvTranspose2d(8, 4, 2, stride=2),))
    case("conv_transpose1d", lambda s, x: s.m[0](x), lambda: r(2, 3, 9),
         mods=(lambda: nn.ConvTranspose1d(3, 5, 4, stride=3, padding=2, output_padding=2),))
    case("conv_transpose3d", lambda s, x: s.m[0](x), lambda: r(1, 2, 3, 4, 3),
         mods=(lambda: nn.ConvTranspose3d(2, 3, 3, stride=(2, 1, 2), padding=1, output_padding=(1, 0, 0)),))
    # -- tensor_split at indices (MViT's) and into sections
    case("tensor_split_idx", lambda s, x: torch.cat([p * (i + 1) for i, p in enumerate(
        torch.tensor_split(x, [1, 4, 4], dim=1))], 1), lambda: r(2, 6, 3))
    case("tensor_split_sec", lambda s, x: torch.cat([p.sum(-1, keepdim=True) * (i + 1) for i, p in
                                                     enumerate(torch.tensor_split(x, 3, dim=-1))], -1),
         lambda: r(3, 7))
    # -- training-IR ops import computes in several ops (tests/extraops.t
    # checks them against their definitions meanwhile)
    case("softplus", lambda s, x: F.softplus(x, beta=2.0, threshold=1.5), lambda: r(2, 3, 4))
    case("std", lambda s, x: torch.std(x, dim=1, keepdim=True) + x.std(), lambda: r(2, 5, 3))
    case("std_unbiased0", lambda s, x: torch.std(x, dim=(0, 2), unbiased=False), lambda: r(3, 2, 4))
    # both results read: (x - mean) / std, var + mean
    case("var_mean", lambda s, x: (lambda v, m: (x - m) * v)(*torch.var_mean(x, dim=1, keepdim=True)),
         lambda: r(2, 5, 3))
    case("std_mean", lambda s, x: (lambda d, m: d + m)(*torch.std_mean(x, dim=(0, 2), correction=0)),
         lambda: r(3, 2, 4))
    case("logsumexp", lambda s, x: torch.logsumexp(x * 3, dim=1), lambda: r(3, 6, 2))
    case("logsumexp_inf", lambda s, x: torch.logsumexp(x.masked_fill(x > 0, float("-inf")), dim=(0, 2),
                                                        keepdim=True), lambda: r(2, 3, 4))
    case("glu", lambda s, x: F.glu(x, dim=1), lambda: r(2, 6, 3))
    case("pixel_shuffle", lambda s, x: F.pixel_shuffle(x, 2), lambda: r(1, 8, 2, 3))
    case("pixel_unshuffle", lambda s, x: F.pixel_unshuffle(x, 2), lambda: r(2, 2, 4, 6))
    case("threshold", lambda s, x: F.threshold(x, 0.3, -2.0), lambda: r(3, 5))
    case("hardshrink", lambda s, x: F.hardshrink(x, 0.7), lambda: r(4, 5))
    case("softshrink", lambda s, x: F.softshrink(x), lambda: r(4, 5))
    case("frac", lambda s, x: torch.frac(x * 3), lambda: r(3, 4))
    case("logit", lambda s, x: torch.logit(x, eps=0.1) + torch.logit(x.sigmoid()), lambda: r(3, 4))
    case("max_all", lambda s, x: torch.max(x) + torch.min(x), lambda: r(3, 4, 2))
    case("triu", lambda s, x: torch.triu(x, 1) + torch.tril(x, -1) * 2, lambda: r(2, 4, 5))
    case("causal_mask", lambda s, x: x.masked_fill(torch.triu(torch.ones(5, 5, dtype=torch.bool), 1),
                                                    float("-inf")).softmax(-1), lambda: r(2, 5, 5))
    case("nan_to_num", lambda s, x: torch.nan_to_num(torch.log(x), nan=1.5), lambda: r(3, 4))
    case("lerp", lambda s, a, b, w: torch.lerp(a, b, w) + torch.lerp(a, b, 0.75),
         lambda: r(2, 3), lambda: r(3), lambda: r(2, 1))
    case("logaddexp", lambda s, a, b: torch.logaddexp(a, b), lambda: r(2, 3, 4), lambda: r(3, 1))
    case("prelu", lambda s, x: s.m[0](x) + F.prelu(x, torch.tensor([0.25])), lambda: r(2, 3, 4, 5),
         mods=(lambda: nn.PReLU(3, init=0.1),))
    case("addmv", lambda s, b, a, v: torch.addmv(b, a, v, beta=0.5, alpha=2.0), lambda: r(3),
         lambda: r(3, 4), lambda: r(4))
    case("bucketize", lambda s, x, b: torch.bucketize(x, b) * 10 + torch.bucketize(x, b, right=True),
         lambda: torch.randint(-4, 5, (3, 4)).float() / 2, lambda: torch.arange(-2.0, 2.5, 0.5))
    case("searchsorted", lambda s, b, x: torch.searchsorted(b, x, side="right", out_int32=True),
         lambda: torch.arange(-2.0, 2.5, 0.5), lambda: torch.randint(-4, 5, (2, 5)).float() / 2)
    case("index_add", lambda s, x, i, src: x.index_add(1, i, src, alpha=0.5), lambda: r(2, 4, 3),
         lambda: torch.tensor([3, 0, 3, 1, 0]), lambda: r(2, 5, 3))
    case("hypot_copysign", lambda s, a, b: torch.hypot(a, b) + torch.copysign(a, b) + a.copysign(-1.5),
         lambda: r(2, 3), lambda: r(3))
    case("index_fill", lambda s, x, i: x.index_fill(-1, i, -2.5), lambda: r(3, 4),
         lambda: torch.tensor([2, 0]))
    case("celu_logsigmoid", lambda s, x: F.celu(x, 0.5) + F.logsigmoid(x * 20), lambda: r(2, 3, 4))
    case("mv_dot", lambda s, a, v, w: torch.mv(a, v) * torch.dot(v, w), lambda: r(3, 5),
         lambda: r(5), lambda: r(5))
    case("adaptive_max", lambda s, x: F.adaptive_max_pool2d(x, (3, 2)), lambda: r(2, 3, 7, 5))
    case("unfold_im2col", lambda s, x: F.unfold(x, (2, 3), dilation=(1, 2), padding=(1, 0), stride=(2, 1)),
         lambda: r(2, 3, 5, 6))
    # scale factors that are not integers: PyTorch's source positions come
    # from them, not from the sizes
    case("up_bilinear_sf", lambda s, x: F.interpolate(x, scale_factor=(2.5, 1.5), mode="bilinear"),
         lambda: r(1, 2, 5, 4))
    case("up_nearest_sf", lambda s, x: F.interpolate(x, scale_factor=(1.7, 2.3)), lambda: r(1, 1, 3, 4))
    case("up_bicubic_sf", lambda s, x: F.interpolate(x, scale_factor=1.5, mode="bicubic"),
         lambda: r(1, 2, 5, 4))
    case("up_trilinear_sf", lambda s, x: F.interpolate(x, scale_factor=(1.5, 2.5, 1.0), mode="trilinear"),
         lambda: r(1, 1, 2, 3, 4))
    case("up_nearest1d", lambda s, x: F.interpolate(x, size=9), lambda: r(2, 3, 4))
    case("up_linear1d", lambda s, x: F.interpolate(x, size=8, mode="linear"), lambda: r(1, 2, 5))
    case("up_linear1d_al", lambda s, x: F.interpolate(x, size=7, mode="linear", align_corners=True),
         lambda: r(1, 2, 4))
    case("up_nearest3d", lambda s, x: F.interpolate(x, size=(5, 6, 7)), lambda: r(1, 2, 3, 4, 5))
    case("up_trilinear3d", lambda s, x: F.interpolate(x, size=(6, 5, 4), mode="trilinear"),
         lambda: r(1, 2, 3, 4, 3))
    # -- a Python float beside an integer tensor: the result is float
    case("promote_scalar_mul", lambda s, i: i * 0.5, lambda: ints(-9, 9, 3, 4))
    case("promote_scalar_add", lambda s, i: (i + 1.25) * 2, lambda: ints(-9, 9, 5).int())
    case("promote_scalar_sub", lambda s, i: 2.5 - i, lambda: ints(-9, 9, 2, 3))
    case("promote_scalar_lt", lambda s, i: i < 0.5, lambda: ints(-3, 3, 7))
    case("promote_scalar_bool", lambda s, m: m * 1.5 + m, lambda: mask(2, 5))


def flat(o):
    """The tensors of a nested tuple of results, flattened into one."""
    ts, todo = [], [o]
    while todo:
        t = todo.pop(0)
        if isinstance(t, (tuple, list)):
            todo[:0] = list(t)
        else:
            ts.append(t.flatten())
    return torch.cat(ts)


def rope(q, c, s):
    """q·cos + rotate_half(q)·sin along the last dim (transformers' form)."""
    h = q.shape[-1] // 2
    return q * c + torch.cat((-q[..., h:], q[..., :h]), -1) * s


def trues():
    return torch.ones(8, dtype=torch.bool)


def rand_props(u, w):
    """Uniform on [0, 1): 65536 samples u (their mean's sd 0.0011, variance's
    0.0003, a quartile's share's 0.0017, a lag-1 product's mean's 0.0003)
    and w from another call."""
    f = u.flatten()
    c = (f[:-1] - 0.5) * (f[1:] - 0.5)
    return torch.stack([torch.amin(u) >= 0, torch.amax(u) < 1, (u.mean() - 0.5).abs() < 0.01,
                        (u.var() - 1 / 12).abs() < 0.003,
                        ((u < 0.25).float().mean() - 0.25).abs() < 0.01,
                        c.mean().abs() < 0.003, (w != f[:4096]).all(),
                        ((w - 0.5) * (f[:4096] - 0.5)).mean().abs() < 0.01])


def randn_props(z):
    """Standard normal: 65536 samples (the mean's sd 0.004, the variance's
    0.0055, the share within 1's 0.0018, the third moment's 0.015, the
    fourth's 0.038, a lag-1 product's mean's 0.004)."""
    f = z.flatten()
    return torch.stack([z.mean().abs() < 0.02, (z.var() - 1).abs() < 0.03,
                        ((z.abs() < 1).float().mean() - 0.6827).abs() < 0.01,
                        (z ** 3).mean().abs() < 0.08, ((z ** 4).mean() - 3).abs() < 0.2,
                        torch.amax(z.abs()) < 7, (f[:-1] * f[1:]).mean().abs() < 0.02,
                        (z > 0).any()])


def perm_props(p, n):
    """A permutation of 0..n-1: each value once, not the identity."""
    a = torch.arange(n, dtype=p.dtype)
    once = ((p.view(n, 1) == a.view(1, n)).long().sum(0) == 1).all()
    return torch.stack([once, (p != a).any(), (p >= 0).all(), (p < n).all(), once, once, once,
                        once])


def unit(*shape):
    """f32 in (-0.9, 0.9)."""
    return (torch.rand(*shape) * 2 - 1) * 0.45


def halves(*shape):
    """Multiples of 0.5 in [-5, 5]: round's ties."""
    return torch.randint(-10, 11, shape).float() / 4


def setitem(x, y):
    x = x.clone()
    x[1:3] = y
    return x


def setindex(c, p, k):
    """A KV-cache write: aten.index_put with two leading None indices."""
    c = c.clone()
    c[:, :, p] = k
    return c


def setitem2(c, k):
    c = c.clone()
    c[:, 3:5] = k
    return c


def repkv(x, g):
    """Each key or value head repeated g times, as Hugging Face's repeat_kv."""
    b, h, n, d = x.shape
    return x[:, :, None, :, :].expand(b, h, g, n, d).reshape(b, h * g, n, d)


def rmsn(m, x):
    """RMS norm m's of x written out as ops, as Hugging Face's Llama does."""
    return m.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))


def bn(m):
    """A batch norm with non-trivial running statistics and affine
    parameters, in eval mode."""
    with torch.no_grad():
        m.running_mean.uniform_(-1, 1)
        m.running_var.uniform_(0.5, 2)
        if m.affine:
            m.weight.uniform_(0.5, 2)
            m.bias.uniform_(-1, 1)
    return m


def affine(m):
    """A norm layer with non-trivial weight (and bias)."""
    with torch.no_grad():
        m.weight.uniform_(0.5, 2)
        if getattr(m, "bias", None) is not None:
            m.bias.uniform_(-1, 1)
    return m


def smallzip(path):
    """Rewrites archive path with its JSON entries (the graph, the configs)
    deflated and every other entry stored as it was: the weights stay
    where dp-import maps them, and the repository holds a third less."""
    with zipfile.ZipFile(path) as zi:
        items = [(i, zi.read(i.filename)) for i in zi.infolist()]
    with zipfile.ZipFile(path + ".tmp", "w") as zo:
        for i, data in items:
            ni = zipfile.ZipInfo(i.filename, date_time=i.date_time)
            ni.external_attr = i.external_attr
            ni.compress_type = zipfile.ZIP_DEFLATED if i.filename.endswith(".json") else zipfile.ZIP_STORED
            zo.writestr(ni, data, compresslevel=9 if ni.compress_type == zipfile.ZIP_DEFLATED else None)
    os.replace(path + ".tmp", path)


def targets(ep):
    return [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]


def dpfile(path, name, ref, form, inputs, tol, ops):
    with open(path, "w") as f:
        f.write(f"# {name}: made by tools/make_conformance.py ({form}); ops: {' '.join(sorted(set(ops)))}\n")
        f.write(f"# ref {ref}\n# tol {tol:g}\n")
        for i, x in enumerate(inputs):
            f.write(f"input in{i}: {DT[x.dtype]}[{','.join(str(d) for d in x.shape)}]\n")
        args = ", ".join(f"in{i}" for i in range(len(inputs)))
        f.write(f'out = model("{name}.pt2", {args})\noutput out\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="tests/conformance")
    ap.add_argument("--only", nargs="*", help="make only these cases")
    ap.add_argument("--refs", default="refs.npz",
                    help="the references' file in --out (the tests unpack every refs*.npz)")
    a = ap.parse_args()
    torch.set_num_threads(1)
    cases()
    names = [c[0] for c in CASES]
    assert len(set(names)) == len(names), "duplicate case names"
    todo = [c for c in CASES if not a.only or c[0] in a.only]
    os.makedirs(a.out, exist_ok=True)
    refs = {}
    refpath = os.path.join(a.out, a.refs)
    if a.only and os.path.exists(refpath):
        with np.load(refpath) as old:
            refs = {k: old[k] for k in old.files if k.split(".")[0] not in a.only}
    for c in todo:
        stem = os.path.join(a.out, "c_" + c[0])
        for p in glob.glob(stem + ".*") + glob.glob(stem + "_core.*"):
            os.remove(p)
    if not a.only:
        for p in glob.glob(os.path.join(a.out, "*.pt2")) + glob.glob(os.path.join(a.out, "*.dp")):
            os.remove(p)

    manifest, failed = [], []
    for name, f, inputs, mods, tol, dyn in todo:
        try:
            torch.manual_seed(zlib.crc32(name.encode()))
            mod = Fn(f, *(m() for m in mods)).eval()
            xs = tuple(g() for g in inputs)
            with torch.no_grad():
                ref = mod(*xs)
                ds = None
                if dyn:
                    ds = tuple({d: torch.export.Dim.DYNAMIC for d in dyn[i]} if i in dyn else None
                               for i in range(len(xs)))
                train = torch.export.export(mod, xs, dynamic_shapes=ds and (ds,))
                core = train.run_decompositions()
            if ref.dtype not in DT or any(x.dtype not in DT for x in xs):
                raise ValueError(f"unsupported dtype in {[x.dtype for x in xs]} -> {ref.dtype}")
            stem = "c_" + name
            torch.export.save(train, os.path.join(a.out, stem + ".pt2"))
            smallzip(os.path.join(a.out, stem + ".pt2"))
            dpfile(os.path.join(a.out, stem + ".dp"), stem, name, "training IR", xs, tol, targets(train))
            manifest.append(f"{stem}.pt2: {' '.join(targets(train))}")
            if targets(core) != targets(train):
                with torch.no_grad():
                    got = core.module()(*xs)
                err = float((got.double() - ref.double()).abs().max())
                if err > 1e-4 * max(1.0, float(ref.double().abs().max())):
                    raise ValueError(f"the Core ATen program differs from eager by {err}")
                torch.export.save(core, os.path.join(a.out, stem + "_core.pt2"))
                smallzip(os.path.join(a.out, stem + "_core.pt2"))
                dpfile(os.path.join(a.out, stem + "_core.dp"), stem + "_core", name, "Core ATen", xs,
                       tol, targets(core))
                manifest.append(f"{stem}_core.pt2: {' '.join(targets(core))}")
            for i, x in enumerate(xs):
                refs[f"{name}.in{i}"] = x.numpy().copy(order="C")
            refs[f"{name}.out"] = ref.detach().numpy().copy(order="C")
        except Exception:
            failed.append(name)
            print(f"{name}: FAILED\n{traceback.format_exc()}", file=sys.stderr)
            stem = os.path.join(a.out, "c_" + name)   # no half-made case
            for p in glob.glob(stem + ".*") + glob.glob(stem + "_core.*"):
                os.remove(p)
            manifest = [m for m in manifest if not m.startswith(f"c_{name}.") and
                        not m.startswith(f"c_{name}_core.")]
    np.savez(refpath, **refs)   # uncompressed: tests/conformance/npzx.c unpacks it
    with open(os.path.join(a.out, "MANIFEST"), "a" if a.only else "w") as f:
        if not a.only:
            f.write(f"# made by tools/make_conformance.py with torch {torch.__version__}, "
                    f"numpy {np.__version__}\n")
        f.write("".join(m + "\n" for m in manifest))
    print(f"{len(todo) - len(failed)} cases, {len(manifest)} archives in {a.out}"
          + (f"; FAILED: {' '.join(failed)}" if failed else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
