#!/usr/bin/env python3
"""export_shells.py: torchvision models exported with every parameter and
buffer zeroed (batch-norm variances 1), so that the archive compresses to
almost nothing and can come back from the GPU machine, where PyTorch is, to
the development machine, where it is not.  tools/fill_weights.py then gives
the archive seeded random weights of the same shapes in place.  For build
times and kernel timings on the development machine (neither depends on the
weights' values); outputs are compared with PyTorch on the GPU machine, not
with these.

    python3 tools/export_shells.py OUT_DIR resnet50 mobilenet_v2 ...

Writes OUT_DIR/NAME.pt2.xz (training IR) and OUT_DIR/NAME_core.pt2.xz (Core
ATen), input f32[1,3,224,224] (inception_v3: 299).
"""
import lzma
import os
import sys

import torch
import torchvision


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: export_shells.py OUT_DIR MODEL...")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name in sys.argv[2:]:
        m = torchvision.models.get_model(name).eval()
        with torch.no_grad():
            for k, t in list(m.state_dict().items()):
                if t.is_floating_point():
                    t.fill_(1.0 if k.endswith("running_var") else 0.0)
        s = 299 if name == "inception_v3" else 224
        x = torch.zeros(1, 3, s, s)
        ep = torch.export.export(m, (x,))
        for form, e in (("", ep), ("_core", ep.run_decompositions())):
            p = os.path.join(out, name + form + ".pt2")
            torch.export.save(e, p)
            with open(p, "rb") as f, lzma.open(p + ".xz", "wb", preset=6) as g:
                g.write(f.read())
            os.remove(p)
            print(name + form, os.path.getsize(p + ".xz"), "bytes compressed", flush=True)


if __name__ == "__main__":
    main()
