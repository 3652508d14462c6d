#!/usr/bin/env python3
"""Makes the test fixtures DevProc needs beyond the reference archives.

Run on a machine with PyTorch 2.11 (the GPU machine):
    python3 tools/export_fixtures.py SRC_DIR OUT_DIR
SRC_DIR holds mlp.pt2 and mlp_io.npz (the reference archives). Writes to OUT_DIR:
  mlp_core.pt2      the same MLP after run_decompositions() (Core ATen: permute, addmm, relu)
  mlp_core_io.npz   in0 (input) and out (PyTorch's output of the decomposed program)
  mlp_core_ops.txt  the ATen targets in the decomposed graph, one per line
"""
import sys, os
import numpy as np
import torch

src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)

ep = torch.export.load(os.path.join(src, "mlp.pt2"))
core = ep.run_decompositions()
torch.export.save(core, os.path.join(out, "mlp_core.pt2"))

io = np.load(os.path.join(src, "mlp_io.npz"))
x = torch.from_numpy(io["in0"])
with torch.no_grad():
    y = core.module()(x)
np.savez(os.path.join(out, "mlp_core_io.npz"), in0=io["in0"], out=y.numpy())
err = float((y - torch.from_numpy(io["out"])).abs().max())
with open(os.path.join(out, "mlp_core_ops.txt"), "w") as f:
    for n in core.graph.nodes:
        if n.op == "call_function":
            f.write(str(n.target) + "\n")
print("mlp_core: max|core - training| =", err)
print("torch", torch.__version__)
