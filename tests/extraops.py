#!/usr/bin/env python3
"""extraops.py OUTDIR: training-IR ops import decomposes (softplus, std,
logsumexp, glu, pixel_shuffle, pixel_unshuffle) for tests/extraops.t, with
references computed from PyTorch's definitions, not by DevProc.

Each case is the conformance archive c_relu.pt2 (PyTorch's export of
torch.relu) with its one node changed into the op, its arguments and the
input's and result's sizes.  The reference is the op's definition in
float64 on seeded normal inputs.  Writes NAME.pt2, NAME.dp, NAME_x.npy and
NAME_ref.npy per case.  Python's standard library only.
"""
import array
import itertools
import json
import math
import os
import random
import struct
import sys
import zipfile


def strides(shape):
    s = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        s[i] = s[i + 1] * shape[i + 1]
    return s


def npy(path, shape, vals):
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(array.array("f", vals).tobytes())


def f32(v):
    return array.array("f", [v])[0]


def case(out, name, target, args, X, Y, ref):
    src = os.path.join(os.path.dirname(__file__), "conformance", "c_relu.pt2")
    z = zipfile.ZipFile(src)
    root = z.namelist()[0].split("/")[0]
    model = json.loads(z.read(root + "/models/model.json"))
    g = model["graph_module"]["graph"]
    node = g["nodes"][0]
    node["target"] = target
    node["inputs"] = [{"name": "self", "arg": {"as_tensor": {"name": "xs_0"}}, "kind": 1}] + [
        {"name": k, "arg": v, "kind": 1} for k, v in args]
    for v, shape in (("xs_0", X), ("relu", Y)):
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
    idx = list(itertools.product(*map(range, X)))
    x = {i: f32(random.gauss(0, 1.5)) for i in idx}
    y = ref(x)
    npy(os.path.join(out, name + "_x.npy"), X, [x[i] for i in idx])
    npy(os.path.join(out, name + "_ref.npy"), Y, [y[i] for i in itertools.product(*map(range, Y))])
    with open(os.path.join(out, name + ".dp"), "w") as f:
        f.write("input in0: f32[%s]\nout = model(\"%s.pt2\", in0)\noutput out\n"
                % (",".join(map(str, X)), name))


def reduce(x, X, dims, keep, f):
    """f over the elements of x along dims, for each index of the rest."""
    groups = {}
    for i, v in x.items():
        k = tuple(0 if d in dims else i[d] for d in range(len(X)))
        groups.setdefault(k, []).append(v)
    r = {k: f(vs) for k, vs in groups.items()}
    if keep:
        return r
    return {tuple(c for d, c in enumerate(k) if d not in dims): v for k, v in r.items()}


def std(vs, corr):
    m = sum(vs) / len(vs)
    return math.sqrt(sum((v - m) ** 2 for v in vs) / (len(vs) - corr))


def lse(vs):
    m = max(vs)
    return math.log(sum(math.exp(v - m) for v in vs)) + m


def main():
    out = sys.argv[1]
    ints = lambda v: {"as_ints": v}
    case(out, "softplus", "torch.ops.aten.softplus.default",
         [("beta", {"as_float": 2.0}), ("threshold", {"as_float": 1.5})], [2, 3, 4], [2, 3, 4],
         lambda x: {i: v if 2 * v > 1.5 else math.log1p(math.exp(2 * v)) / 2 for i, v in x.items()})
    case(out, "std_keep", "torch.ops.aten.std.correction",
         [("dim", ints([1])), ("correction", {"as_float": 1.0}), ("keepdim", {"as_bool": True})],
         [2, 5, 3], [2, 1, 3], lambda x: reduce(x, [2, 5, 3], [1], True, lambda vs: std(vs, 1)))
    case(out, "std_dims", "torch.ops.aten.std.dim",
         [("dim", ints([0, 2])), ("unbiased", {"as_bool": False})],
         [3, 2, 4], [2], lambda x: reduce(x, [3, 2, 4], [0, 2], False, lambda vs: std(vs, 0)))
    case(out, "logsumexp", "torch.ops.aten.logsumexp.default", [("dim", ints([1]))],
         [3, 6, 2], [3, 2], lambda x: reduce(x, [3, 6, 2], [1], False, lse))
    case(out, "logsumexp_keep", "torch.ops.aten.logsumexp.default",
         [("dim", ints([0, 2])), ("keepdim", {"as_bool": True})],
         [2, 3, 4], [1, 3, 1], lambda x: reduce(x, [2, 3, 4], [0, 2], True, lse))
    case(out, "glu", "torch.ops.aten.glu.default", [("dim", {"as_int": 1})], [2, 6, 3], [2, 3, 3],
         lambda x: {(a, b, c): x[(a, b, c)] / (1 + math.exp(-x[(a, b + 3, c)]))
                    for a, b, c in itertools.product(range(2), range(3), range(3))})
    r = 2   # out[n, c, h·r + i, w·r + j] = in[n, c·r² + i·r + j, h, w]
    case(out, "pixel_shuffle", "torch.ops.aten.pixel_shuffle.default",
         [("upscale_factor", {"as_int": r})], [1, 8, 2, 3], [1, 2, 4, 6],
         lambda x: {(n, c, h * r + i, w * r + j): x[(n, c * r * r + i * r + j, h, w)]
                    for n, c, h, w, i, j in itertools.product(range(1), range(2), range(2), range(3),
                                                              range(r), range(r))})
    case(out, "pixel_unshuffle", "torch.ops.aten.pixel_unshuffle.default",
         [("downscale_factor", {"as_int": r})], [2, 2, 4, 6], [2, 8, 2, 3],
         lambda x: {(n, c * r * r + i * r + j, h, w): x[(n, c, h * r + i, w * r + j)]
                    for n, c, h, w, i, j in itertools.product(range(2), range(2), range(2), range(3),
                                                              range(r), range(r))})


if __name__ == "__main__":
    main()
