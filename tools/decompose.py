#!/usr/bin/env python3
"""decompose.py: makes the Core ATen form of a torch.export archive.

    python3 tools/decompose.py IN.pt2 OUT.pt2 [IN0.npy OUT.npy]

Loads IN.pt2 (default training IR), runs run_decompositions() and saves the
result as OUT.pt2.  Given the reference input and output of IN.pt2 (.npy),
it checks that the decomposed program still computes them (PyTorch's own
difference between the two forms is printed; it is ~1e-7 relative).  This
is how tests/data/cnn_core.pt2 and tinylm_core.pt2 were made from cnn.pt2
and tinylm.pt2 (PyTorch 2.11, CPU):

    python3 tools/decompose.py tests/data/cnn.pt2 tests/data/cnn_core.pt2 \\
        tests/data/cnn/in0.npy tests/data/cnn/out.npy
    python3 tools/decompose.py tests/data/tinylm.pt2 tests/data/tinylm_core.pt2 \\
        tests/data/tinylm/in0.npy tests/data/tinylm/out.npy
"""
import sys

import numpy as np
import torch


def main(argv):
    if len(argv) not in (3, 5):
        sys.exit(__doc__)
    ep = torch.export.load(argv[1])
    core = ep.run_decompositions()
    torch.export.save(core, argv[2])
    targets = sorted({str(n.target) for n in core.graph.nodes if n.op == "call_function"})
    print(f"{argv[2]}: {len(targets)} targets: {' '.join(targets)}")
    if len(argv) == 5:
        x = torch.from_numpy(np.load(argv[3]))
        ref = np.load(argv[4])
        with torch.no_grad():
            y = core.module()(x).numpy()
        err = float(np.abs(y - ref).max() / np.abs(ref).max())
        print(f"max|err|/max|ref| against {argv[4]}: {err:.3g}")
        if err > 1e-5:
            sys.exit("the decomposed program does not compute the reference output")


if __name__ == "__main__":
    main(sys.argv)
