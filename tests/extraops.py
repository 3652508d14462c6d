#!/usr/bin/env python3
"""extraops.py OUTDIR: training-IR ops that are formulas or that import
computes in several ops (softplus, threshold, hardshrink, softshrink, frac,
logit, std, var_mean and std_mean (both results), logsumexp, glu, pixel_(un)shuffle, max and min of all, triu,
tril, nan_to_num, lerp, logaddexp) for tests/extraops.t, with references
computed from PyTorch's definitions, not by DevProc.

Each case is a conformance archive of one op (c_relu.pt2, c_atan2.pt2,
c_addcmul.pt2 for one, two and three inputs: PyTorch's exports) with its
node changed into the op, its arguments and the inputs' and result's sizes.
The reference is the op's definition in float64 on seeded normal inputs
(special values where the case says).  Writes NAME.pt2, NAME.dp, NAME_xK.npy
and NAME_ref.npy per case.  Python's standard library only.
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


def npy(path, shape, vals, code="f"):
    """An .npy of vals: code "f" f32, "q" i64."""
    hdr = "{'descr': '<%s', 'fortran_order': False, 'shape': (%s), }" % (
        {"f": "f4", "q": "i8"}[code], ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(array.array(code, vals).tobytes())


def f32(v):
    return array.array("f", [v])[0]


SRC = {1: ("c_relu", ["self"], "relu"), 2: ("c_atan2", ["self", "other"], "atan2"),
       3: ("c_addcmul", ["self", "tensor1", "tensor2"], "addcmul")}


def case(out, name, target, args, X, Y, ref, names=None, special=(), res=None, i64=False,
         sort=(), special1=(), ints=None):
    """X: the inputs' shapes (one shape: one input); names: their argument
    names (else the source's); special: values put first into input 0;
    res (k, n): the node has n results of shape Y, the graph's is the k-th;
    i64: the result is i64; sort: the inputs given in ascending order;
    special1: values put first into input 1; ints {k: (lo, hi)}: input k
    is i64, random in lo..hi."""
    Xs = X if isinstance(X[0], list) else [X]
    stem, argn, oname = SRC[len(Xs)]
    src = os.path.join(os.path.dirname(__file__), "conformance", stem + ".pt2")
    z = zipfile.ZipFile(src)
    root = z.namelist()[0].split("/")[0]
    model = json.loads(z.read(root + "/models/model.json"))
    g = model["graph_module"]["graph"]
    node = g["nodes"][0]
    node["target"] = target
    node["inputs"] = [{"name": a, "arg": {"as_tensor": {"name": "xs_%d" % k}}, "kind": 1}
                      for k, a in enumerate(names or argn)] + [
        {"name": k, "arg": v, "kind": 1} for k, v in args]
    for v, shape in [("xs_%d" % k, x) for k, x in enumerate(Xs)] + [(oname, Y)]:
        tv = g["tensor_values"][v]
        tv["sizes"] = [{"as_int": d} for d in shape]
        tv["strides"] = [{"as_int": d} for d in strides(shape)]
    if i64:
        g["tensor_values"][oname]["dtype"] = 5   # torch.export's LONG
    for k in ints or {}:
        g["tensor_values"]["xs_%d" % k]["dtype"] = 5
    if res:   # the other results: tensors of their own the graph does not read
        for j in range(res[1]):
            if j != res[0]:
                g["tensor_values"]["aux%d" % j] = json.loads(json.dumps(g["tensor_values"][oname]))
        node["outputs"] = [{"as_tensor": {"name": oname if j == res[0] else "aux%d" % j}}
                           for j in range(res[1])]
    with zipfile.ZipFile(os.path.join(out, name + ".pt2"), "w") as zo:
        for info in z.infolist():
            data = z.read(info.filename)
            if info.filename.endswith("models/model.json"):
                data = json.dumps(model).encode()
            zo.writestr(info, data)
    random.seed(name)
    xs = []
    for k, shape in enumerate(Xs):
        idx = list(itertools.product(*map(range, shape)))
        if ints and k in ints:
            xs.append({i: random.randint(*ints[k]) for i in idx})
        else:
            xs.append({i: f32(random.gauss(0, 1.5)) for i in idx})
        for j, v in enumerate(special if k == 0 else special1 if k == 1 else ()):
            xs[k][idx[j]] = v
        if k in sort:
            xs[k] = dict(zip(idx, sorted(xs[k].values())))
        npy(os.path.join(out, "%s_x%d.npy" % (name, k)), shape, [xs[k][i] for i in idx],
            "q" if ints and k in ints else "f")
    y = ref(*xs)
    npy(os.path.join(out, name + "_ref.npy"), Y, [y[i] for i in itertools.product(*map(range, Y))],
        "q" if i64 else "f")
    with open(os.path.join(out, name + ".dp"), "w") as f:
        for k, shape in enumerate(Xs):
            f.write("input in%d: %s[%s]\n" % (k, "i64" if ints and k in ints else "f32",
                                              ",".join(map(str, shape))))
        f.write("out = model(\"%s.pt2\", %s)\noutput out\n"
                % (name, ", ".join("in%d" % k for k in range(len(Xs)))))


def bcast(x, shape, i):
    """x's element that index i of the broadcast shape reads."""
    r = len(shape) - len(i)
    return x[tuple(0 if shape[d] == 1 else i[r + d] for d in range(len(shape)))] if r == 0 else \
        x[tuple(0 if shape[d] == 1 else i[d + len(i) - len(shape)] for d in range(len(shape)))]


def ew(Y, f):
    return {i: f(i) for i in itertools.product(*map(range, Y))}


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
    # var_mean, std_mean: both results (the graph reads one, the other
    # still computed by the node)
    var = lambda vs, c: std(vs, c) ** 2
    mean = lambda vs: sum(vs) / len(vs)
    case(out, "var_mean_var", "torch.ops.aten.var_mean.correction",
         [("dim", ints([1])), ("correction", {"as_float": 1.0}), ("keepdim", {"as_bool": True})],
         [2, 5, 3], [2, 1, 3], lambda x: reduce(x, [2, 5, 3], [1], True, lambda vs: var(vs, 1)),
         res=(0, 2))
    case(out, "var_mean_mean", "torch.ops.aten.var_mean.correction",
         [("dim", ints([0, 2])), ("correction", {"as_float": 0.0})],
         [3, 2, 4], [2], lambda x: reduce(x, [3, 2, 4], [0, 2], False, mean), res=(1, 2))
    case(out, "std_mean_std", "torch.ops.aten.std_mean.dim",
         [("dim", ints([2])), ("unbiased", {"as_bool": True})],
         [3, 2, 4], [3, 2], lambda x: reduce(x, [3, 2, 4], [2], False, lambda vs: std(vs, 1)),
         res=(0, 2))
    case(out, "std_mean_all", "torch.ops.aten.std_mean.default", [("unbiased", {"as_bool": False})],
         [4, 3], [], lambda x: {(): mean(list(x.values()))}, res=(1, 2))
    case(out, "logsumexp", "torch.ops.aten.logsumexp.default", [("dim", ints([1]))],
         [3, 6, 2], [3, 2], lambda x: reduce(x, [3, 6, 2], [1], False, lse))
    case(out, "logsumexp_keep", "torch.ops.aten.logsumexp.default",
         [("dim", ints([0, 2])), ("keepdim", {"as_bool": True})],
         [2, 3, 4], [1, 3, 1], lambda x: reduce(x, [2, 3, 4], [0, 2], True, lse))
    case(out, "glu", "torch.ops.aten.glu.default", [("dim", {"as_int": 1})], [2, 6, 3], [2, 3, 3],
         lambda x: {(a, b, c): x[(a, b, c)] / (1 + math.exp(-x[(a, b + 3, c)]))
                    for a, b, c in itertools.product(range(2), range(3), range(3))})
    inf, nan = float("inf"), float("nan")
    case(out, "threshold", "torch.ops.aten.threshold.default",
         [("threshold", {"as_float": 0.3}), ("value", {"as_float": -2.0})], [3, 5], [3, 5],
         lambda x: {i: -2.0 if v <= 0.3 else v for i, v in x.items()})
    case(out, "hardshrink", "torch.ops.aten.hardshrink.default", [("lambd", {"as_float": 0.7})],
         [4, 5], [4, 5], lambda x: {i: 0.0 if -0.7 <= v <= 0.7 else v for i, v in x.items()})
    case(out, "softshrink", "torch.ops.aten.softshrink.default", [], [4, 5], [4, 5],
         lambda x: {i: v - 0.5 if v > 0.5 else v + 0.5 if v < -0.5 else 0.0 for i, v in x.items()})
    case(out, "frac", "torch.ops.aten.frac.default", [], [3, 4], [3, 4],
         lambda x: {i: v - math.trunc(v) for i, v in x.items()})
    case(out, "logit_eps", "torch.ops.aten.logit.default", [("eps", {"as_float": 0.1})], [3, 4], [3, 4],
         lambda x: {i: math.log(min(max(v, 0.1), 0.9) / (1 - min(max(v, 0.1), 0.9)))
                    for i, v in x.items()}, special=(0.5, 0.25, 0.75, 0.05, 0.95))
    case(out, "max_all", "torch.ops.aten.max.default", [], [3, 4, 2], [],
         lambda x: {(): max(x.values())})
    case(out, "min_all", "torch.ops.aten.min.default", [], [5, 3], [],
         lambda x: {(): min(x.values())})
    case(out, "triu", "torch.ops.aten.triu.default", [("diagonal", {"as_int": 1})], [2, 4, 5],
         [2, 4, 5], lambda x: {i: v if i[2] - i[1] >= 1 else 0.0 for i, v in x.items()})
    case(out, "tril", "torch.ops.aten.tril.default", [("diagonal", {"as_int": -1})], [5, 3], [5, 3],
         lambda x: {i: v if i[1] - i[0] <= -1 else 0.0 for i, v in x.items()})
    big = 3.4028234663852886e38
    case(out, "nan_to_num", "torch.ops.aten.nan_to_num.default",
         [("nan", {"as_float": 1.5}), ("posinf", {"as_float": 100.0}), ("neginf", {"as_float": -50.0})],
         [3, 4], [3, 4], lambda x: {i: 1.5 if v != v else 100.0 if v == inf else -50.0 if v == -inf
                                    else v for i, v in x.items()}, special=(nan, inf, -inf, 2.0))
    # the defaults: 0 and the largest finite floats (compared exactly: the
    # relative error against 3.4e38 would say little)
    case(out, "nan_to_num_exact", "torch.ops.aten.nan_to_num.default", [], [2, 3], [2, 3],
         lambda x: {i: 0.0 if v != v else big if v == inf else -big if v == -inf else v
                    for i, v in x.items()}, special=(inf, nan, -inf))
    case(out, "lerp", "torch.ops.aten.lerp.Tensor", [], [[2, 3], [3], [2, 1]], [2, 3],
         lambda a, b, w: ew([2, 3], lambda i: (lambda s, e, t: s + t * (e - s) if abs(t) < 0.5
                                               else e - (e - s) * (1 - t))(
             a[i], b[(i[1],)], w[(i[0], 0)])), names=["self", "end", "weight"])
    case(out, "lerp_scalar", "torch.ops.aten.lerp.Scalar", [("weight", {"as_float": 0.75})],
         [[2, 3, 4], [3, 1]], [2, 3, 4],
         lambda a, b: ew([2, 3, 4], lambda i: (lambda s, e: e - (e - s) * 0.25)(a[i], b[(i[1], 0)])),
         names=["self", "end"])
    case(out, "logaddexp", "torch.ops.aten.logaddexp.default", [], [[2, 3, 4], [3, 1]], [2, 3, 4],
         lambda a, b: ew([2, 3, 4], lambda i: (lambda p, q: p if math.isinf(p) and p == q else
                                               max(p, q) + math.log1p(math.exp(-abs(p - q))))(
             a[i], b[(i[1], 0)])), names=["self", "other"], special=(-inf, 5.0))
    # running products along an axis (a zero and a negative among them)
    def cumprod(x, Y, d):
        def at(i):
            p = 1.0
            for j in range(i[d] + 1):
                p *= x[i[:d] + (j,) + i[d + 1:]]
            return p
        return ew(Y, at)
    case(out, "cumprod", "torch.ops.aten.cumprod.default", [("dim", {"as_int": 1})], [2, 5, 3],
         [2, 5, 3], lambda x: cumprod(x, [2, 5, 3], 1), special=(2.0, -3.0, 0.5, 1.5, 0.0))
    case(out, "cumprod_last", "torch.ops.aten.cumprod.default", [("dim", {"as_int": -1})], [3, 6],
         [3, 6], lambda x: cumprod(x, [3, 6], 1))
    # nn.PReLU's kernel: x where x > 0, else weight·x (the weight shaped to
    # broadcast along the channels); a NaN and -inf among x
    case(out, "prelu", "torch.ops.aten._prelu_kernel.default", [], [[2, 3, 4], [3, 1]], [2, 3, 4],
         lambda x, w: ew([2, 3, 4], lambda i: x[i] if x[i] > 0 or x[i] != x[i] else
                         f32(w[(i[1], 0)] * x[i])),
         names=["self", "weight"], special=(nan, -inf, 0.0, -2.0))
    # celu (elu with input scale 1/alpha) and log_sigmoid's forward, either
    # of its results read (the second, the cpu's buffer exp(-|x|))
    case(out, "celu", "torch.ops.aten.celu.default", [("alpha", {"as_float": 0.5})], [2, 3, 4],
         [2, 3, 4], lambda x: ew([2, 3, 4], lambda i: x[i] if x[i] > 0 else
                                 0.5 * math.expm1(x[i] / 0.5)), special=(-inf, 0.0, -30.0))
    case(out, "log_sigmoid", "torch.ops.aten.log_sigmoid_forward.default", [], [3, 5], [3, 5],
         lambda x: ew([3, 5], lambda i: x[i] if x[i] != x[i] else
                      min(x[i], 0.0) - math.log1p(math.exp(-abs(x[i])))),
         special=(-inf, inf, nan, -90.0, 40.0), res=(0, 2))
    case(out, "log_sigmoid_buf", "torch.ops.aten.log_sigmoid_forward.default", [], [3, 5], [3, 5],
         lambda x: ew([3, 5], lambda i: math.exp(-abs(x[i]))), res=(1, 2))
    # matrix-vector and vector-vector products (to a rank-0 result)
    case(out, "mv", "torch.ops.aten.mv.default", [], [[3, 5], [5]], [3],
         lambda a, v: ew([3], lambda i: sum(a[(i[0], k)] * v[(k,)] for k in range(5))),
         names=["self", "vec"])
    case(out, "dot", "torch.ops.aten.dot.default", [], [[7], [7]], [],
         lambda a, b: {(): sum(a[(k,)] * b[(k,)] for k in range(7))}, names=["self", "tensor"])
    # addmv; the buckets of x among sorted boundaries (a boundary equal to an
    # element: below it with right; a NaN past them all, as PyTorch's binary
    # search puts it); searchsorted, the same 1-D
    case(out, "addmv", "torch.ops.aten.addmv.default",
         [("beta", {"as_float": 0.5}), ("alpha", {"as_float": 2.0})], [[3], [3, 4], [4]], [3],
         lambda b, a, v: ew([3], lambda i: 0.5 * b[i] + 2.0 * sum(a[(i[0], k)] * v[(k,)]
                                                                  for k in range(4))),
         names=["self", "mat", "vec"])
    def buckets(x, b, Y, right):
        bs = sorted(b.values())
        return ew(Y, lambda i: sum(1 for v in bs if not (v > x[i] if right else v >= x[i])))
    for nm, right in (("bucketize", 0), ("bucketize_right", 1)):
        case(out, nm, "torch.ops.aten.bucketize.Tensor", [("right", {"as_bool": bool(right)})],
             [[3, 4], [5]], [3, 4], lambda x, b, right=right: buckets(x, b, [3, 4], right),
             names=["self", "boundaries"], i64=True, sort=(1,), special=(0.0, 1.0, nan),
             special1=(0.0, 1.0))
    case(out, "searchsorted", "torch.ops.aten.searchsorted.Tensor", [("side", {"as_string": "right"})],
         [[6], [2, 3]], [2, 3], lambda b, x: buckets(x, b, [2, 3], 1),
         names=["sorted_sequence", "self"], i64=True, sort=(0,), special=(0.5,),
         special1=(0.5, nan))
    # index_add: alpha·src added at the index along dim (repeated indices
    # add up)
    def index_add(x, i, src, X, d, alpha):
        y = dict(x)
        for j, v in src.items():
            k = i[(j[d],)] % X[d]
            t = j[:d] + (k,) + j[d + 1:]
            y[t] = y[t] + alpha * v
        return y
    case(out, "index_add", "torch.ops.aten.index_add.default",
         [("dim", {"as_int": 1}), ("alpha", {"as_float": 0.5})], [[2, 4, 3], [5], [2, 5, 3]],
         [2, 4, 3], lambda x, i, s: index_add(x, i, s, [2, 4, 3], 1, 0.5),
         names=["self", "index", "source"], ints={1: (0, 3)})
    # hypot (large values: no overflow) and copysign (a -0 and a NaN's sign;
    # not named hypot and copysign: a pipeline is a C type of its name)
    case(out, "hypot_ab", "torch.ops.aten.hypot.default", [], [[2, 3], [3]], [2, 3],
         lambda a, b: ew([2, 3], lambda i: math.hypot(a[i], b[(i[1],)])),
         names=["self", "other"], special=(3e38, -inf))
    case(out, "copysign_ab", "torch.ops.aten.copysign.Tensor", [], [[2, 3], [2, 3]], [2, 3],
         lambda a, b: ew([2, 3], lambda i: math.copysign(a[i], b[i])),
         names=["self", "other"], special1=(-0.0, nan))
    # index_fill: the value at the index along dim
    case(out, "index_fill", "torch.ops.aten.index_fill.int_Scalar",
         [("dim", {"as_int": -1}), ("value", {"as_float": -2.5})], [[3, 4], [2]], [3, 4],
         lambda x, i: ew([3, 4], lambda j: -2.5 if j[1] in (i[(0,)], i[(1,)]) else x[j]),
         names=["self", "index"], ints={1: (0, 3)})
    # histc: PyTorch's bin ⌊(x − min)·bins/(max − min)⌋ in f32, x = max in
    # the last bin, values outside [min, max] and NaN nowhere
    def histc(x, bins, lo, hi):
        h = [0] * bins
        for v in x.values():
            if v == v and lo <= v <= hi:
                p = int(f32(f32(f32(v - lo) * bins) / f32(f32(hi) - f32(lo))))
                h[min(p, bins - 1)] += 1
        return {(b,): float(h[b]) for b in range(bins)}
    case(out, "histc", "torch.ops.aten.histc.default",
         [("bins", {"as_int": 7}), ("min", {"as_float": -2.0}), ("max", {"as_float": 2.5})],
         [4, 5], [7], lambda x: histc(x, 7, -2.0, 2.5), special=(2.5, -2.0, 3.0, nan, -inf, 0.0))
    # grouped_mm (transformers' experts): row i of a by the group of b its
    # offset range gives, g(i) = #{j: offs_j <= i}; rows past the last 0
    def grouped(a, w, offs, M, K, N, G):
        o = [offs[(j,)] for j in range(G)]
        def at(i):
            g = sum(1 for v in o if v <= i[0])
            return 0.0 if g >= G else sum(a[(i[0], k)] * w[(g, k, i[1])] for k in range(K))
        return ew([M, N], at)
    case(out, "grouped_mm", "torch.ops.transformers.grouped_mm_fallback.default", [],
         [[7, 4], [3, 4, 5], [3]], [7, 5], lambda a, w, o: grouped(a, w, o, 7, 4, 5, 3),
         names=["input", "weight", "offs"], ints={2: (0, 6)}, sort=(2,))
    # an index out of range, for extraops.t's run that must fail: 4 of a
    # dimension of 4 (index_add's dim 1)
    npy(os.path.join(out, "index_add_oob.npy"), [5], [0, 1, 4, 2, 3], "q")
    # log of running sums of exponentials: -inf first (an empty sum's log),
    # a large value (the larger taken out), an infinity in one row
    def lcse(x, Y, d):
        def at(i):
            vs = [x[i[:d] + (j,) + i[d + 1:]] for j in range(i[d] + 1)]
            m = max(vs)
            return m if math.isinf(m) else m + math.log(sum(math.exp(v - m) for v in vs))
        return ew(Y, at)
    case(out, "logcumsumexp", "torch.ops.aten.logcumsumexp.default", [("dim", {"as_int": 1})],
         [2, 5, 3], [2, 5, 3], lambda x: lcse(x, [2, 5, 3], 1),
         special=(-inf, -inf, 90.0, 1.0, 2.0, inf))
    # upsampling along 1 and 3 axes: PyTorch's source index per axis,
    # nearest min(⌊dst·in/out⌋, in − 1); linear with or without the corners
    # (a scale factor sf given to PyTorch: 1/sf in f32 instead of in/out)
    def near(n_in, n_out, sf=0):
        sc = f32(1 / sf) if sf else n_in / n_out
        return lambda d: d if n_in == n_out else min(int(math.floor(d * sc)), n_in - 1)

    def lin(n_in, n_out, al, sf=0):
        sc = f32(1 / sf) if sf else n_in / n_out
        def taps(d):
            if al:
                src = d * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
            else:
                src = max((d + 0.5) * sc - 0.5, 0.0)
            i0 = int(math.floor(src))
            i1 = i0 + (1 if i0 < n_in - 1 else 0)
            return [(i0, 1 - (src - i0)), (i1, src - i0)]
        return taps

    def resample(x, X, Y, f):   # f(axis) -> taps(dst) over the spatial axes 2..
        def at(i):
            tot = 0.0
            for combo in itertools.product(*[f(a)(i[a]) for a in range(2, len(Y))]):
                w = 1.0
                for _, wt in combo:
                    w *= wt
                tot += w * x[i[:2] + tuple(j for j, _ in combo)]
            return tot
        return ew(Y, at)

    nearest = lambda X, Y: lambda a: (lambda g: lambda d: [(g(d), 1.0)])(near(X[a], Y[a]))
    case(out, "up_nearest1d", "torch.ops.aten.upsample_nearest1d.vec",
         [("output_size", ints([9])), ("scale_factors", {"as_none": True})], [2, 3, 4], [2, 3, 9],
         lambda x: resample(x, [2, 3, 4], [2, 3, 9], nearest([2, 3, 4], [2, 3, 9])), names=["input"])
    case(out, "up_linear1d", "torch.ops.aten.upsample_linear1d.vec",
         [("output_size", ints([8])), ("align_corners", {"as_bool": False}),
          ("scale_factors", {"as_none": True})], [1, 2, 5], [1, 2, 8],
         lambda x: resample(x, [1, 2, 5], [1, 2, 8], lambda a: lin(5, 8, False)), names=["input"])
    case(out, "up_linear1d_al", "torch.ops.aten.upsample_linear1d.vec",
         [("output_size", ints([7])), ("align_corners", {"as_bool": True}),
          ("scale_factors", {"as_none": True})], [1, 2, 4], [1, 2, 7],
         lambda x: resample(x, [1, 2, 4], [1, 2, 7], lambda a: lin(4, 7, True)), names=["input"])
    X3, Y3 = [1, 2, 3, 4, 5], [1, 2, 5, 6, 7]
    case(out, "up_nearest3d", "torch.ops.aten.upsample_nearest3d.vec",
         [("output_size", ints(Y3[2:])), ("scale_factors", {"as_none": True})], X3, Y3,
         lambda x: resample(x, X3, Y3, nearest(X3, Y3)), names=["input"])
    X4, Y4 = [1, 2, 3, 4, 3], [1, 2, 6, 5, 4]
    case(out, "up_trilinear3d", "torch.ops.aten.upsample_trilinear3d.vec",
         [("output_size", ints(Y4[2:])), ("align_corners", {"as_bool": False}),
          ("scale_factors", {"as_none": True})], X4, Y4,
         lambda x: resample(x, X4, Y4, lambda a: lin(X4[a], Y4[a], False)), names=["input"])
    # adaptive max pooling: window i of n along an axis is [⌊i·n/o⌋, ⌈(i + 1)·n/o⌉)
    def amaxp(x, X, o):
        def at(i):
            n, c, a, b = i
            h0, h1 = a * X[2] // o[0], -(-(a + 1) * X[2] // o[0])
            w0, w1 = b * X[3] // o[1], -(-(b + 1) * X[3] // o[1])
            return max(x[(n, c, h, w)] for h in range(h0, h1) for w in range(w0, w1))
        return ew([X[0], X[1], o[0], o[1]], at)
    case(out, "adaptive_max", "torch.ops.aten.adaptive_max_pool2d.default",
         [("output_size", ints([3, 2]))], [2, 3, 7, 5], [2, 3, 3, 2],
         lambda x: amaxp(x, [2, 3, 7, 5], [3, 2]))
    case(out, "adaptive_max_1", "torch.ops.aten.adaptive_max_pool2d.default",
         [("output_size", ints([1, 1]))], [1, 4, 3, 6], [1, 4, 1, 1],
         lambda x: amaxp(x, [1, 4, 3, 6], [1, 1]))

    # im2col (F.unfold): out[n, (c·kh + i)·kw + j, h·ow + w] = x[n, c, h·sh + i·dh − ph, w·sw + j·dw − pw]
    def im2col(x, X, k, dl, pd, st):
        oh = (X[2] + 2 * pd[0] - dl[0] * (k[0] - 1) - 1) // st[0] + 1
        ow = (X[3] + 2 * pd[1] - dl[1] * (k[1] - 1) - 1) // st[1] + 1
        def at(t):
            n, row, l = t
            c, i, j = row // (k[0] * k[1]), row // k[1] % k[0], row % k[1]
            h, w = l // ow * st[0] + i * dl[0] - pd[0], l % ow * st[1] + j * dl[1] - pd[1]
            return x[(n, c, h, w)] if 0 <= h < X[2] and 0 <= w < X[3] else 0.0
        return ew([X[0], X[1] * k[0] * k[1], oh * ow], at)
    case(out, "im2col", "torch.ops.aten.im2col.default",
         [("kernel_size", ints([2, 3])), ("dilation", ints([1, 2])), ("padding", ints([1, 0])),
          ("stride", ints([2, 1]))], [2, 3, 5, 6], [2, 18, 6],
         lambda x: im2col(x, [2, 3, 5, 6], [2, 3], [1, 2], [1, 0], [2, 1]))
    # scale factors that are not integers: the source positions from them
    none = {"as_none": True}
    sfs = lambda *v: {"as_floats": list(v)}
    case(out, "up_bilinear_sf", "torch.ops.aten.upsample_bilinear2d.vec",
         [("output_size", none), ("align_corners", {"as_bool": False}), ("scale_factors", sfs(2.5, 1.5))],
         [1, 2, 5, 4], [1, 2, 12, 6],
         lambda x: resample(x, [1, 2, 5, 4], [1, 2, 12, 6],
                            lambda a: lin(5, 12, False, 2.5) if a == 2 else lin(4, 6, False, 1.5)),
         names=["input"])
    case(out, "up_nearest_sf", "torch.ops.aten.upsample_nearest2d.vec",
         [("output_size", none), ("scale_factors", sfs(1.7, 2.3))], [1, 1, 3, 4], [1, 1, 5, 9],
         lambda x: resample(x, [1, 1, 3, 4], [1, 1, 5, 9],
                            lambda a: (lambda g: lambda d: [(g(d), 1.0)])(
                                near(3, 5, 1.7) if a == 2 else near(4, 9, 2.3))), names=["input"])
    case(out, "up_nearest1d_sf", "torch.ops.aten.upsample_nearest1d.vec",
         [("output_size", none), ("scale_factors", sfs(2.5))], [1, 2, 5], [1, 2, 12],
         lambda x: resample(x, [1, 2, 5], [1, 2, 12],
                            lambda a: (lambda g: lambda d: [(g(d), 1.0)])(near(5, 12, 2.5))),
         names=["input"])
    case(out, "up_trilinear_sf", "torch.ops.aten.upsample_trilinear3d.vec",
         [("output_size", none), ("align_corners", {"as_bool": False}),
          ("scale_factors", sfs(1.5, 2.5, 1.0))], [1, 1, 2, 3, 4], [1, 1, 3, 7, 4],
         lambda x: resample(x, [1, 1, 2, 3, 4], [1, 1, 3, 7, 4],
                            lambda a: [None, None, lin(2, 3, False, 1.5), lin(3, 7, False, 2.5),
                                       lin(4, 4, False, 1.0)][a]), names=["input"])
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
