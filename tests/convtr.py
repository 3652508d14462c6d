#!/usr/bin/env python3
"""convtr.py OUTDIR: transposed convolutions for tests/convtr.t, with their
references computed from PyTorch's definition, not by DevProc.

Each case is a conformance archive (a Conv1d, Conv3d or Conv2d with two
groups, exported by PyTorch) whose convolution node is changed into
aten.conv_transpose1d/3d/2d with other strides, paddings, output paddings
and dilations; its weight [C, O/g, k...] is read as the transposed
convolution's.  The reference is the definition: each input element
times the kernel, scattered into the output at i·stride − padding +
k·dilation and summed in float64.  Writes NAME.pt2, NAME.dp, NAME_x.npy
(seeded normal inputs) and NAME_ref.npy per case.  Python's standard
library only.
"""
import array
import itertools
import json
import os
import random
import sys
import zipfile

from extraops import npy, strides   # (tests/extraops.py: the same .npy writer)


def case(out, name, src, target, X, S, P, OP, D, G):
    z = zipfile.ZipFile(src)
    root = z.namelist()[0].split("/")[0]
    w = array.array("f")
    w.frombytes(z.read(root + "/data/weights/weight_0"))
    model = json.loads(z.read(root + "/models/model.json"))
    g = model["graph_module"]["graph"]
    node = g["nodes"][0]
    wname = node["inputs"][1]["arg"]["as_tensor"]["name"]
    oname = node["outputs"][0]["as_tensor"]["name"]
    WS = [s["as_int"] for s in g["tensor_values"][wname]["sizes"]]
    n = len(X) - 2
    Cin, Og = X[1], WS[1]
    Cg, K = Cin // G, WS[2:]
    Y = [X[0], Og * G] + [(X[2 + i] - 1) * S[i] - 2 * P[i] + D[i] * (K[i] - 1) + OP[i] + 1
                          for i in range(n)]
    assert WS[0] == Cin
    node["target"] = target
    node["inputs"] = [
        {"name": "input", "arg": {"as_tensor": {"name": "xs_0"}}, "kind": 1},
        {"name": "weight", "arg": {"as_tensor": {"name": wname}}, "kind": 1},
        {"name": "bias", "arg": {"as_none": True}, "kind": 1},
        {"name": "stride", "arg": {"as_ints": S}, "kind": 1},
        {"name": "padding", "arg": {"as_ints": P}, "kind": 1},
        {"name": "output_padding", "arg": {"as_ints": OP}, "kind": 1},
        {"name": "groups", "arg": {"as_int": G}, "kind": 1},
        {"name": "dilation", "arg": {"as_ints": D}, "kind": 1}]
    for v, shape in (("xs_0", X), (oname, Y)):
        tv = g["tensor_values"][v]
        tv["sizes"] = [{"as_int": d} for d in shape]
        tv["strides"] = [{"as_int": d} for d in strides(shape)]
    with zipfile.ZipFile(os.path.join(out, name + ".pt2"), "w") as zo:
        for info in z.infolist():
            data = z.read(info.filename)
            if info.filename.endswith("models/model.json"):
                data = json.dumps(model).encode()
            zo.writestr(info, data)
    random.seed(name)
    x = [random.gauss(0, 1) for _ in range(len(list(itertools.product(*map(range, X)))))]
    y = [0.0] * len(list(itertools.product(*map(range, Y))))
    xs, ys, ws = strides(X), strides(Y), strides(WS)
    for b, ci in itertools.product(range(X[0]), range(Cin)):
        gi = ci // Cg
        for pos in itertools.product(*map(range, X[2:])):
            xv = x[b * xs[0] + ci * xs[1] + sum(pos[i] * xs[2 + i] for i in range(n))]
            for o, kk in itertools.product(range(Og), itertools.product(*map(range, K))):
                q = [pos[i] * S[i] - P[i] + kk[i] * D[i] for i in range(n)]
                if all(0 <= q[i] < Y[2 + i] for i in range(n)):
                    y[b * ys[0] + (gi * Og + o) * ys[1] + sum(q[i] * ys[2 + i] for i in range(n))] += \
                        xv * w[ci * ws[0] + o * ws[1] + sum(kk[i] * ws[2 + i] for i in range(n))]
    npy(os.path.join(out, name + "_x.npy"), X, x)
    npy(os.path.join(out, name + "_ref.npy"), Y, y)
    with open(os.path.join(out, name + ".dp"), "w") as f:
        f.write("input in0: f32[%s]\nout = model(\"%s.pt2\", in0)\noutput out\n"
                % (",".join(map(str, X)), name))


def main():
    out, conf = sys.argv[1], os.path.join(os.path.dirname(__file__), "conformance")
    # Conv1d(4, 4, 5, groups=2): w [4, 2, 5]
    case(out, "tr1", os.path.join(conf, "c_conv1d_groups.pt2"), "torch.ops.aten.conv_transpose1d.default",
         [1, 4, 9], [3], [2], [1], [2], 2)
    # Conv2d(4, 6, (3, 1), groups=2): w [6, 2, 3, 1]
    case(out, "tr2", os.path.join(conf, "c_conv_groups.pt2"), "torch.ops.aten.conv_transpose2d.input",
         [1, 6, 5, 4], [2, 3], [1, 0], [1, 2], [2, 1], 2)
    # Conv3d(4, 6, (3, 1, 2), groups=2): w [6, 2, 3, 1, 2]
    case(out, "tr3", os.path.join(conf, "c_conv3d_groups.pt2"), "torch.ops.aten.conv_transpose3d.input",
         [1, 6, 3, 2, 3], [2, 1, 2], [1, 0, 1], [1, 0, 0], [1, 1, 2], 2)


if __name__ == "__main__":
    main()
