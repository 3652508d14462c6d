#!/usr/bin/env python3
"""Exports a KV-cache decoder block with torch.export and records PyTorch's
outputs of two successive calls of the same module: the fixtures in
tests/data/kvcache/ for programs that keep state across runs (buffer
mutations; tests/state.t runs the Core ATen ones against them).

    python3 tools/export_kvcache.py OUT_DIR

The block keeps its key and value caches as registered buffers and writes
each call's keys and values into them in forward() (index_copy_ in
kv_copy.pt2, index_put_ through indexing assignment in kv_put.pt2), so the
exported programs have buffer mutations.  Each call takes x f32[1,2,32] and
its positions pos i64[2]: the first call [0, 1], the second [2, 3].
kv_decode.pt2 is the same module for one token (x f32[1,1,32], pos i64[1]).
Writes per program NAME.pt2, NAME_core.pt2 (run_decompositions()),
NAME.txt (the graph signature and graph), and the .npy files x1 pos1 y1 x2
pos2 y2 (y after call 1 and call 2 on a fresh module) and k2 v2 (the caches
after call 2).
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

D, H, T = 32, 2, 8


class Block(torch.nn.Module):
    def __init__(self, put=False):
        super().__init__()
        self.put = put
        self.qkv = torch.nn.Linear(D, 3 * D)
        self.o = torch.nn.Linear(D, D)
        self.register_buffer("k_cache", torch.zeros(1, H, T, D // H))
        self.register_buffer("v_cache", torch.zeros(1, H, T, D // H))

    def forward(self, x, pos):
        B, L, _ = x.shape
        q, k, v = self.qkv(x).split(D, dim=-1)
        q = q.view(B, L, H, D // H).transpose(1, 2)
        k = k.view(B, L, H, D // H).transpose(1, 2)
        v = v.view(B, L, H, D // H).transpose(1, 2)
        if self.put:
            self.k_cache[:, :, pos] = k
            self.v_cache[:, :, pos] = v
        else:
            self.k_cache.index_copy_(2, pos, k)
            self.v_cache.index_copy_(2, pos, v)
        mask = torch.arange(T)[None, :] <= pos[:, None]
        y = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=mask)
        return self.o(y.transpose(1, 2).reshape(B, L, D))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    ref = Block()
    sd = {k: v.clone() for k, v in ref.state_dict().items()}
    g = torch.Generator().manual_seed(1)
    x1, x2 = torch.randn(1, 2, D, generator=g), torch.randn(1, 2, D, generator=g)
    p1, p2 = torch.tensor([0, 1]), torch.tensor([2, 3])
    for name, put, L in (("kv_copy", False, 2), ("kv_put", True, 2), ("kv_decode", False, 1)):
        m = Block(put)
        m.load_state_dict(sd)
        xa, pa = (x1, p1) if L == 2 else (x1[:, :1], p1[:1])
        ep = torch.export.export(m, (xa, pa))
        torch.export.save(ep, os.path.join(out, name + ".pt2"))
        core = ep.run_decompositions()
        torch.export.save(core, os.path.join(out, name + "_core.pt2"))
        with open(os.path.join(out, name + ".txt"), "w") as f:
            f.write(str(ep.graph_signature) + "\n\n" + str(ep.graph) + "\n\ncore:\n" +
                    str(core.graph_signature) + "\n\n" + str(core.graph) + "\n")
        if L != 2:
            continue
        m = Block(put)
        m.load_state_dict(sd)
        with torch.no_grad():
            y1 = m(x1, p1)
            y2 = m(x2, p2)
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        for k, v in (("x1", x1), ("pos1", p1), ("y1", y1), ("x2", x2), ("pos2", p2),
                     ("y2", y2), ("k2", m.k_cache), ("v2", m.v_cache)):
            np.save(os.path.join(d, k + ".npy"), v.numpy())
    print("torch", torch.__version__)


if __name__ == "__main__":
    main()
