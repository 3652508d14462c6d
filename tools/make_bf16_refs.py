#!/usr/bin/env python3
"""Makes tests/data/half/: the fixture of tests/half.t, the cuda target in
16-bit precision (`tune cuda.precision bf16|f16`) against PyTorch running
the same model in that dtype.

The model (torch.manual_seed(0)): a transformer-style block used twice with
the same weights, once on x f32[1,16,64] (16 rows: the products of many
rows, cuBLASLt) and once on z f32[1,64] (one row: the matrix-vector
kernel):

    h = inp(x)                          # Linear 64->128, bias
    h = h + fc2(gelu(fc1(ln(h))))       # LayerNorm, Linear 128->256 (bias),
                                        # GELU, Linear 256->128 (no bias)
    h = relu(mid(h))                    # Linear 128->128 + relu
    y = head(h)                         # Linear 128->16, bias

Writes block.pt2 (torch.export of the fp32 module), x.npy and z.npy, and
the references: ref_fp32_{y,w}.npy (the fp32 module, TF32 off) and
ref_bf16_{y,w}.npy, ref_f16_{y,w}.npy (model.to(dtype) on the inputs cast
to dtype, outputs widened to f32), each computed on the GPU.

    python3 tools/make_bf16_refs.py [OUTDIR]   (default tests/data/half)
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(64, 128)
        self.ln = nn.LayerNorm(128)
        self.fc1 = nn.Linear(128, 256)
        self.fc2 = nn.Linear(256, 128, bias=False)
        self.mid = nn.Linear(128, 128)
        self.head = nn.Linear(128, 16)

    def forward(self, x):
        h = self.inp(x)
        h = h + self.fc2(F.gelu(self.fc1(self.ln(h))))
        h = torch.relu(self.mid(h))
        return self.head(h)


class Twice(nn.Module):
    def __init__(self):
        super().__init__()
        self.b = Block()

    def forward(self, x, z):
        return self.b(x), self.b(z)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/half"
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    m = Twice().eval()
    with torch.no_grad():   # non-trivial LayerNorm parameters
        m.b.ln.weight.uniform_(0.5, 1.5)
        m.b.ln.bias.uniform_(-0.5, 0.5)
    x = torch.randn(1, 16, 64)
    z = torch.randn(1, 64)
    with torch.no_grad():
        ep = torch.export.export(m, (x, z))
    torch.export.save(ep, f"{out}/block.pt2")
    np.save(f"{out}/x.npy", x.numpy())
    np.save(f"{out}/z.npy", z.numpy())
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    for name, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16), ("f16", torch.float16)):
        md = Twice().eval()
        md.load_state_dict(m.state_dict())
        md = md.to(dev).to(dt)
        with torch.no_grad():
            y, w = md(x.to(dev).to(dt), z.to(dev).to(dt))
        np.save(f"{out}/ref_{name}_y.npy", y.float().cpu().numpy())
        np.save(f"{out}/ref_{name}_w.npy", w.float().cpu().numpy())
        print(name, "y", tuple(y.shape), "w", tuple(w.shape), "on", dev)
    for a in ("bf16", "f16"):   # how far the dtypes' models are from the fp32 one
        for o in ("y", "w"):
            r = np.load(f"{out}/ref_fp32_{o}.npy")
            d = np.load(f"{out}/ref_{a}_{o}.npy")
            print(f"{a} {o}: max|{a}-fp32|/max|fp32| = {np.abs(d - r).max() / np.abs(r).max():.3e}")


if __name__ == "__main__":
    main()
