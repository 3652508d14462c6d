#!/usr/bin/env python3
"""Makes tests/data/state/accum.pt2, the smallest archive with buffer
mutations that DevProc imports today, from the KV-cache block that PyTorch
exported (tests/data/kvcache/kv_put_core.pt2): the same signature (the
buffers k_cache and v_cache f32[1,2,8,16], zeros; the user inputs x and
pos, unused), its graph replaced by two nodes in the archive's own schema:

    k_new = aten.add.Scalar(k_cache, 1)      # buffer mutation of k_cache
    v_new = aten.add.Tensor(v_cache, k_new)  # buffer mutation of v_cache, and the output

so that the output of call n, from fresh buffers, is n(n+1)/2 everywhere
(1, 3, 6, ...): worked out by hand, no PyTorch needed.

    python3 tools/make_state_pt2.py   (from the repository root)
"""
import json
import zipfile

SRC = "tests/data/kvcache/kv_put_core.pt2"
DST = "tests/data/state/accum.pt2"


def main():
    src = zipfile.ZipFile(SRC)
    root = "kv_put_core/"
    m = json.loads(src.read(root + "models/model.json"))
    g = m["graph_module"]["graph"]
    sig = m["graph_module"]["signature"]
    meta = dict(g["tensor_values"]["b_k_cache"], requires_grad=False)
    g["tensor_values"]["k_new"] = meta
    g["tensor_values"]["v_new"] = dict(meta)

    def node(target, inputs, out):
        return {"name": out, "target": target, "inputs": inputs,
                "outputs": [{"as_tensor": {"name": out}}],
                "metadata": {}, "is_hop_single_tensor_return": None}
    g["nodes"] = [
        node("torch.ops.aten.add.Scalar",
             [{"name": "self", "arg": {"as_tensor": {"name": "b_k_cache"}}, "kind": 1},
              {"name": "other", "arg": {"as_int": 1}, "kind": 1}], "k_new"),
        node("torch.ops.aten.add.Tensor",
             [{"name": "self", "arg": {"as_tensor": {"name": "b_v_cache"}}, "kind": 1},
              {"name": "other", "arg": {"as_tensor": {"name": "k_new"}}, "kind": 1}], "v_new"),
    ]
    g["outputs"] = [{"as_tensor": {"name": n}} for n in ("k_new", "v_new", "v_new")]
    sig["output_specs"] = [
        {"buffer_mutation": {"arg": {"name": "k_new"}, "buffer_name": "k_cache"}},
        {"buffer_mutation": {"arg": {"name": "v_new"}, "buffer_name": "v_cache"}},
        {"user_output": {"arg": {"as_tensor": {"name": "v_new"}}}},
    ]
    with zipfile.ZipFile(DST, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            name = "accum/" + info.filename[len(root):]
            data = src.read(info.filename)
            if info.filename == root + "models/model.json":
                data = json.dumps(m).encode()
            zi = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            dst.writestr(zi, data)


if __name__ == "__main__":
    main()
