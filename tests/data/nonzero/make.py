#!/usr/bin/env python3
"""make.py: archives of models that use nonzero's run-time length in ways
DevProc refuses (tests/nonzero.t checks the one error each gets).

Run from the repository root with PyTorch 2.11:
    python3 tests/data/nonzero/make.py [--print]
Writes NAME.pt2 (training IR) and NAME_core.pt2 (Core ATen) beside itself;
--print also prints each graph."""
import os
import sys

import torch
import torch.nn as nn


class Fn(nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, *xs):
        return self.f(*xs)


MODELS = {
    # a reduction over the bounded dimension
    "mask_sum": (lambda x: x[x > 0].sum(), (torch.randn(3, 4),)),
    # a view merging the bounded dimension with another
    "nonzero_flat": (lambda x: torch.nonzero(x).flatten(), (torch.randn(3, 4),)),
}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    torch.manual_seed(0)
    for name, (f, xs) in MODELS.items():
        train = torch.export.export(Fn(f), xs)
        core = train.run_decompositions()
        torch.export.save(train, os.path.join(here, name + ".pt2"))
        torch.export.save(core, os.path.join(here, name + "_core.pt2"))
        if "--print" in sys.argv:
            print(f"== {name}\n{train.graph}\n{train.range_constraints}\n== {name}_core\n{core.graph}")


if __name__ == "__main__":
    main()
