#!/usr/bin/env python3
# mkseeds.py: writes the small .pt2 seed archives of fuzz/seeds/pt2/ in the
# torch.export layout DevProc reads, without PyTorch: tiny versions of
# tests/data/mlp*.pt2 (x: f32[1,8]) plus one archive using the ATen ops import
# first knew, a strided weight and a tensor constant.  They are also the
# archives of fuzz/seeds/dp/ and tests/malformed.t.  Run from the repository
# root; rerun only when the seeds should change (the outputs are committed).
import json, struct, zipfile

F32 = 7

def meta(sizes, strides=None, dtype=F32, offset=0):
    if strides is None:
        strides, acc = [], 1
        for d in reversed(sizes):
            strides.insert(0, acc)
            acc *= d
    return {"dtype": dtype, "sizes": [{"as_int": d} for d in sizes],
            "requires_grad": False, "device": {"type": "cpu", "index": None},
            "strides": [{"as_int": s} for s in strides],
            "storage_offset": {"as_int": offset}, "layout": 7}

def floats(n, seed):
    return struct.pack("<%df" % n, *[((i * 7 + seed) % 13 - 6) / 8.0 for i in range(n)])

def t(name):
    return {"as_tensor": {"name": name}}

def node(target, name, *args):
    return {"target": "torch.ops." + target, "name": name,
            "inputs": [{"name": k, "arg": v, "kind": 1} for k, v in args],
            "outputs": [t(name)], "metadata": {}}

def archive(path, root, nodes, values, params, consts, inputs, output):
    """params/consts: list of (graph name, fqn, sizes, strides, bytes)."""
    specs, wcfg, ccfg, files = [], {}, {}, []
    for kind, lst, cfg, d in (("parameter", params, wcfg, "weights"),
                              ("tensor_constant", consts, ccfg, "constants")):
        for i, (gname, fqn, sizes, strides, data, offset) in enumerate(lst):
            key = "parameter_name" if kind == "parameter" else "tensor_constant_name"
            specs.append({kind: {"arg": {"name": gname}, key: fqn}})
            pn = ("weight_%d" if d == "weights" else "tensor_%d") % i
            cfg[fqn] = {"path_name": pn, "is_param": kind == "parameter", "use_pickle": False,
                        "tensor_meta": meta(sizes, strides, offset=offset)}
            values[gname] = meta(sizes, strides, offset=offset)
            files.append(("data/%s/%s" % (d, pn), data))
    for name in inputs:
        specs.append({"user_input": {"arg": t(name)}})
    prog = {"graph_module": {"graph": {"inputs": [], "outputs": [t(output)], "nodes": nodes,
                                       "tensor_values": values, "sym_int_values": {},
                                       "sym_bool_values": {}, "is_single_tensor_return": False,
                                       "custom_obj_values": {}, "sym_float_values": {}},
                             "signature": {"input_specs": specs,
                                           "output_specs": [{"user_output": {"arg": t(output)}}]},
                             "module_call_graph": [], "metadata": {}},
            "opset_version": {"aten": 10}, "range_constraints": {},
            "schema_version": {"major": 8, "minor": 17}, "verifiers": ["ATEN"],
            "torch_version": "2.11.0", "guards_code": []}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        def put(name, data):
            zi = zipfile.ZipInfo(root + "/" + name, (1980, 1, 1, 0, 0, 0))
            z.writestr(zi, data)
        for name, data in files:
            put(name, data)
        put("data/weights/model_weights_config.json", json.dumps({"config": wcfg}))
        put("data/constants/model_constants_config.json", json.dumps({"config": ccfg}))
        put("models/model.json", json.dumps(prog))
        put("archive_format", "pt2")
        put("byteorder", "little")

def mlp(path, root, core):
    x, h, o = 8, 4, 3
    vals = {"x": meta([1, x])}
    if core:
        nodes = [node("aten.permute.default", "permute", ("self", t("w1")), ("dims", {"as_ints": [1, 0]})),
                 node("aten.addmm.default", "addmm", ("self", t("b1")), ("mat1", t("x")), ("mat2", t("permute"))),
                 node("aten.relu.default", "relu", ("self", t("addmm"))),
                 node("aten.permute.default", "permute_1", ("self", t("w2")), ("dims", {"as_ints": [1, 0]})),
                 node("aten.addmm.default", "y", ("self", t("b2")), ("mat1", t("relu")), ("mat2", t("permute_1")))]
        vals.update(permute=meta([x, h], [1, x]), addmm=meta([1, h]), relu=meta([1, h]),
                    permute_1=meta([h, o], [1, h]), y=meta([1, o]))
    else:
        nodes = [node("aten.linear.default", "linear", ("input", t("x")), ("weight", t("w1")), ("bias", t("b1"))),
                 node("aten.relu.default", "relu", ("self", t("linear"))),
                 node("aten.linear.default", "y", ("input", t("relu")), ("weight", t("w2")), ("bias", t("b2")))]
        vals.update(linear=meta([1, h]), relu=meta([1, h]), y=meta([1, o]))
    params = [("w1", "fc1.weight", [h, x], None, floats(h * x, 1), 0),
              ("b1", "fc1.bias", [h], None, floats(h, 2), 0),
              ("w2", "fc2.weight", [o, h], None, floats(o * h, 3), 0),
              ("b2", "fc2.bias", [o], None, floats(o, 4), 0)]
    archive(path, root, nodes, vals, params, [], ["x"], "y")

def ops(path):
    """Every ATen op import knows, a strided weight and a tensor constant."""
    vals = {"x": meta([1, 8])}
    nodes = [
        node("aten.view.default", "v", ("self", t("x")), ("size", {"as_ints": [2, 4]})),
        node("aten.mul.Tensor", "m", ("self", t("v")), ("other", {"as_float": 0.5})),
        node("aten.add.Tensor", "a", ("self", t("m")), ("other", t("c")), ("alpha", {"as_float": 2.0})),
        node("aten.t.default", "tt", ("self", t("a"))),
        node("aten.mm.default", "mm", ("self", t("w")), ("mat2", t("a"))),
        node("aten.relu_.default", "r", ("self", t("mm"))),
        node("aten.add_.Tensor", "a2", ("self", t("r")), ("other", {"as_int": 1})),
        node("aten.reshape.default", "rs", ("self", t("a2")), ("shape", {"as_ints": [1, -1]})),
        node("aten.matmul.default", "mt", ("self", t("a")), ("other", t("tt"))),
        node("aten.flatten.using_ints", "fl", ("self", t("mt")), ("start_dim", {"as_int": 0})),
        node("aten._softmax.default", "sm", ("self", t("rs")), ("dim", {"as_int": 1}),
             ("half_to_float", {"as_bool": False})),
        node("aten.softmax.int", "y", ("self", t("sm")), ("dim", {"as_int": -1})),
    ]
    nodes.insert(0, {"target": "torch.ops.aten._assert_tensor_metadata.default", "name": "_assert",
                     "inputs": [{"name": "a", "arg": t("x"), "kind": 1}], "outputs": [{"as_none": True}],
                     "metadata": {}})
    vals.update(v=meta([2, 4]), m=meta([2, 4]), a=meta([2, 4]), tt=meta([4, 2], [1, 4]),
                mm=meta([3, 4]), r=meta([3, 4]), a2=meta([3, 4]), rs=meta([1, 12]),
                mt=meta([2, 2]), fl=meta([4]), sm=meta([1, 12]), y=meta([1, 12]))
    # w is a transposed view: sizes [3, 2], strides [1, 3], storage offset 1
    params = [("w", "w", [3, 2], [1, 3], floats(7, 5), 1)]
    consts = [("c", "c", [4], None, floats(4, 6), 0)]
    archive(path, "ops", nodes, vals, params, consts, ["x"], "y")

if __name__ == "__main__":
    import os
    os.makedirs("fuzz/seeds/pt2", exist_ok=True)
    mlp("fuzz/seeds/pt2/core.pt2", "core", True)
    mlp("fuzz/seeds/pt2/train.pt2", "train", False)
    ops("fuzz/seeds/pt2/ops.pt2")
