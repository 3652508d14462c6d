#!/usr/bin/env python3
"""Makes tests/data/dwnet.pt2, a MobileNetV2-shaped block chain in Core
ATen, and its reference output, without PyTorch.

    python3 tools/make_dwnet.py OUT_DIR

The archive is written by hand in torch.export's layout (formats: DESIGN.md,
"Reading .pt2"): convolution (3x3, depthwise 3x3 at strides 1 and 2, 1x1),
_native_batch_norm_legit_no_training, hardtanh (ReLU6), a residual add,
max_pool2d_with_indices (3x3, stride 2, padding 1), mean over H and W,
view, permute and addmm; 24 channels, so that blocks of 16 are padded.
The reference (dwnet/out.npy for dwnet/in0.npy) is a plain Python forward
pass in float64 over the float32 weights: a computation independent of
DevProc's.  Only the standard library is used.
"""
import array
import json
import math
import os
import random
import struct
import sys
import zipfile

R = random.Random(7)


def meta(shape):
    st, m = [], 1
    for d in reversed(shape):
        st.append(m)
        m *= d
    st.reverse()
    return {"dtype": 7, "sizes": [{"as_int": d} for d in shape], "requires_grad": False,
            "device": {"type": "cpu", "index": None}, "strides": [{"as_int": s} for s in st],
            "storage_offset": {"as_int": 0}, "layout": 7}


def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


class Graph:
    def __init__(self):
        self.nodes, self.tv, self.specs, self.wcfg, self.files, self.n = [], {}, [], {}, [], 0

    def param(self, fqn, shape, vals, buf=False):
        nm = ("b_" if buf else "p_") + fqn.replace(".", "_")
        self.tv[nm] = meta(shape)
        path = "weight_%d" % len(self.files)
        self.files.append(("data/weights/" + path, array.array("f", vals).tobytes()))
        self.wcfg[fqn] = {"path_name": path, "is_param": not buf, "use_pickle": False,
                          "tensor_meta": meta(shape)}
        kind = "buffer" if buf else "parameter"
        spec = {"arg": {"name": nm}, kind + "_name": fqn}
        if buf:
            spec["persistent"] = True
        self.specs.append({kind: spec})
        return nm

    def node(self, target, args, shapes):
        outs = []
        for sh in shapes:
            self.n += 1
            o = "t%d" % self.n
            self.tv[o] = meta(sh)
            outs.append({"as_tensor": {"name": o}})
        self.n += 1
        self.nodes.append({"target": "torch.ops.aten." + target,
                           "inputs": [{"name": k, "arg": v, "kind": 1} for k, v in args],
                           "outputs": outs, "metadata": {}, "is_hop_single_tensor_return": None,
                           "name": "n%d" % self.n})
        return [o["as_tensor"]["name"] for o in outs]


T = lambda n: {"as_tensor": {"name": n}}
I = lambda v: {"as_ints": list(v)}
F = lambda v: {"as_float": v}


class Net:
    """Builds the graph and computes the reference alongside: a value is
    (graph name, shape, nested lists of floats [C][H][W], batch 1)."""

    def __init__(self):
        self.g = Graph()

    def conv(self, x, fqn, O, k, s, p, groups):
        name, (N, C, H, W), xv = x
        Cg = C // groups
        sd = math.sqrt(2.0 / (Cg * k * k))
        w = [f32(R.gauss(0, sd)) for _ in range(O * Cg * k * k)]
        wn = self.g.param(fqn + ".weight", [O, Cg, k, k], w)
        OH, OW = (H + 2 * p - k) // s + 1, (W + 2 * p - k) // s + 1
        y, = self.g.node("convolution.default", [
            ("input", T(name)), ("weight", T(wn)), ("bias", {"as_none": True}),
            ("stride", I([s, s])), ("padding", I([p, p])), ("dilation", I([1, 1])),
            ("transposed", {"as_bool": False}), ("output_padding", I([0, 0])),
            ("groups", {"as_int": groups})], [[N, O, OH, OW]])
        Og = O // groups
        yv = [[[0.0] * OW for _ in range(OH)] for _ in range(O)]
        for o in range(O):
            g = o // Og
            for oh in range(OH):
                for ow in range(OW):
                    a = 0.0
                    for c in range(Cg):
                        xc = xv[g * Cg + c]
                        for i in range(k):
                            ih = oh * s - p + i
                            if ih < 0 or ih >= H:
                                continue
                            for j in range(k):
                                iw = ow * s - p + j
                                if 0 <= iw < W:
                                    a += w[((o * Cg + c) * k + i) * k + j] * xc[ih][iw]
                    yv[o][oh][ow] = a
        return y, [N, O, OH, OW], yv

    def bn(self, x, fqn):
        name, sh, xv = x
        C = sh[1]
        u = lambda lo, hi: [f32(lo + (hi - lo) * R.random()) for _ in range(C)]
        wt, bs, mn, vr = u(0.5, 1.5), u(-0.1, 0.1), u(-0.1, 0.1), u(0.5, 1.5)
        args = [self.g.param(fqn + ".weight", [C], wt), self.g.param(fqn + ".bias", [C], bs),
                self.g.param(fqn + ".running_mean", [C], mn, True),
                self.g.param(fqn + ".running_var", [C], vr, True)]
        y, _, _ = self.g.node("_native_batch_norm_legit_no_training.default", [
            ("input", T(name)), ("weight", T(args[0])), ("bias", T(args[1])),
            ("running_mean", T(args[2])), ("running_var", T(args[3])),
            ("momentum", F(0.1)), ("eps", F(1e-5))], [sh, [0], [0]])
        yv = [[[(v - mn[c]) / math.sqrt(vr[c] + 1e-5) * wt[c] + bs[c] for v in row]
               for row in xv[c]] for c in range(C)]
        return y, sh, yv

    def relu6(self, x):
        name, sh, xv = x
        y, = self.g.node("hardtanh.default", [("self", T(name)), ("min_val", F(0.0)),
                                              ("max_val", F(6.0))], [sh])
        return y, sh, [[[min(max(v, 0.0), 6.0) for v in row] for row in ch] for ch in xv]

    def add(self, a, b):
        y, = self.g.node("add.Tensor", [("self", T(a[0])), ("other", T(b[0]))], [a[1]])
        return y, a[1], [[[u + v for u, v in zip(r, q)] for r, q in zip(ca, cb)]
                         for ca, cb in zip(a[2], b[2])]

    def cbr(self, x, fqn, O, k, s, p, groups, act):
        y = self.bn(self.conv(x, fqn + ".0", O, k, s, p, groups), fqn + ".1")
        return self.relu6(y) if act else y

    def maxpool(self, x):
        name, (N, C, H, W), xv = x
        OH, OW = (H + 2 - 3) // 2 + 1, (W + 2 - 3) // 2 + 1
        y, _ = self.g.node("max_pool2d_with_indices.default", [
            ("self", T(name)), ("kernel_size", I([3, 3])), ("stride", I([2, 2])),
            ("padding", I([1, 1]))], [[N, C, OH, OW], [N, C, OH, OW]])
        yv = [[[max(xv[c][ih][iw] for ih in range(max(oh * 2 - 1, 0), min(oh * 2 + 2, H))
                    for iw in range(max(ow * 2 - 1, 0), min(ow * 2 + 2, W)))
                for ow in range(OW)] for oh in range(OH)] for c in range(C)]
        return y, [N, C, OH, OW], yv

    def head(self, x, ncls):
        name, (N, C, H, W), xv = x
        m, = self.g.node("mean.dim", [("self", T(name)), ("dim", I([-1, -2])),
                                      ("keepdim", {"as_bool": True})], [[N, C, 1, 1]])
        v, = self.g.node("view.default", [("self", T(m)), ("size", I([N, C]))], [[N, C]])
        w = [f32(R.gauss(0, 1 / math.sqrt(C))) for _ in range(ncls * C)]
        b = [f32(R.uniform(-0.1, 0.1)) for _ in range(ncls)]
        wn = self.g.param("fc.weight", [ncls, C], w)
        bn = self.g.param("fc.bias", [ncls], b)
        t, = self.g.node("permute.default", [("self", T(wn)), ("dims", I([1, 0]))], [[C, ncls]])
        y, = self.g.node("addmm.default", [("self", T(bn)), ("mat1", T(v)), ("mat2", T(t))],
                         [[N, ncls]])
        mean = [sum(sum(r) for r in xv[c]) / (H * W) for c in range(C)]
        return y, [b[o] + sum(w[o * C + c] * mean[c] for c in range(C)) for o in range(ncls)]


def npy(path, shape, vals):
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % \
        "".join("%d, " % d for d in shape)
    hdr += " " * ((-(10 + len(hdr) + 1)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(array.array("f", vals).tobytes())


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "dwnet"), exist_ok=True)
    net = Net()
    g = net.g
    xs = [1, 3, 12, 12]
    xin = [f32(R.gauss(0, 1)) for _ in range(3 * 12 * 12)]
    g.tv["x"] = meta(xs)
    x = ("x", xs, [[xin[(c * 12 + h) * 12:(c * 12 + h) * 12 + 12] for h in range(12)]
                   for c in range(3)])
    a = net.cbr(x, "stem", 24, 3, 1, 1, 1, True)           # 3 -> 24, 12x12
    a = net.cbr(a, "b1.dw", 24, 3, 2, 1, 24, True)         # depthwise, stride 2: 6x6
    a = net.cbr(a, "b1.pw", 16, 1, 1, 0, 1, False)         # project to 16
    r = a
    a = net.cbr(a, "b2.ex", 24, 1, 1, 0, 1, True)          # expand to 24
    a = net.cbr(a, "b2.dw", 24, 3, 1, 1, 24, True)         # depthwise, stride 1
    a = net.cbr(a, "b2.pw", 16, 1, 1, 0, 1, False)
    a = net.add(r, a)                                      # the residual
    a = net.maxpool(a)                                     # 16 x 3x3
    y, ref = net.head(a, 5)
    sig = {"input_specs": g.specs + [{"user_input": {"arg": T("x")}}],
           "output_specs": [{"user_output": {"arg": T(y)}}]}
    model = {"graph_module": {
        "graph": {"inputs": [T(sp[k]["arg"]["name"]) for sp in g.specs for k in sp] + [T("x")],
                  "outputs": [T(y)], "nodes": g.nodes, "tensor_values": g.tv,
                  "sym_int_values": {}, "sym_bool_values": {}, "is_single_tensor_return": False,
                  "custom_obj_values": {}, "sym_float_values": {}},
        "signature": sig, "module_call_graph": [], "metadata": {},
        "treespec_namedtuple_fields": {}},
        "opset_version": {"aten": 10}, "range_constraints": {},
        "schema_version": {"major": 8, "minor": 17}, "verifiers": ["ATEN"],
        "torch_version": "2.11.0", "guards_code": []}
    files = [("archive_format", b"pt2"), ("archive_version", b"0"), ("byteorder", b"little"),
             ("models/model.json", json.dumps(model, sort_keys=True).encode()),
             ("data/weights/model_weights_config.json",
              json.dumps({"config": g.wcfg}, sort_keys=True).encode()),
             ("data/constants/model_constants_config.json", b'{"config": {}}')] + g.files
    with open(os.path.join(out, "dwnet.pt2"), "wb") as fp:
        z = zipfile.ZipFile(fp, "w", zipfile.ZIP_STORED)
        for name, data in files:   # each entry's data 64-byte aligned (padding extra field)
            zi = zipfile.ZipInfo("dwnet/" + name, (1980, 1, 1, 0, 0, 0))
            pad = (-(fp.tell() + 30 + len(zi.filename.encode()) + 4)) % 64
            zi.extra = struct.pack("<HH", 0xd935, pad) + b"\0" * pad
            z.writestr(zi, data)
        z.close()
    npy(os.path.join(out, "dwnet", "in0.npy"), xs, xin)
    npy(os.path.join(out, "dwnet", "out.npy"), [1, 5], ref)
    with open(os.path.join(out, "dwnet.dp"), "w") as f:
        f.write("# dwnet.dp: MobileNetV2-shaped blocks (tools/make_dwnet.py): depthwise\n"
                "# convolutions at strides 2 and 1, a residual add, 24 channels.\n"
                "input x: f32[1,3,12,12]\ny = model(\"dwnet.pt2\", x)\noutput y\n")


if __name__ == "__main__":
    main()
