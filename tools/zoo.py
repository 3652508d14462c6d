#!/usr/bin/env python3
"""zoo.py: the model-zoo conformance run: public models exported with
torch.export, built with devproc for cpu and cuda, compared with PyTorch.

Run from the repository root on the GPU machine (PyTorch, torchvision and
transformers installed, DevProc built; tools/zoo.sh does both):

    python3 tools/zoo.py [--models NAME...] [--forms train core] [--jobs N]
                         [--deadline SECONDS] [--work DIR] [--out tools/zoo/RESULTS.md]

Models: every torchvision classification model (224x224, batch 1;
inception_v3 at 299), the segmentation models fcn_resnet50,
deeplabv3_mobilenet_v3_large and lraspp_mobilenet_v3_large (their "out"),
and Hugging Face GPT-2, Llama, Qwen2 (logits) and BERT (last hidden state)
with small random configs (batch 1, 32 tokens).  Weights are random
(seeded), the models in eval mode.  Each model is exported in both forms:
the training IR ("train") and run_decompositions() ("core").  For each
(model, form): does it import, how long `devproc build` takes per target,
the first line of any error, and whether the output matches PyTorch's in
fp32: max|err| / max|ref| <= 1e-4 end to end.  The table goes to --out
(Markdown), one row per model and form; a model the deadline cut off says
so.  Exit status 0 unless the run itself failed.
"""
import argparse
import concurrent.futures as cf
import os
import shutil
import subprocess
import sys
import time
import traceback

TOL = 1e-4
SEG = ["fcn_resnet50", "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"]
HF = ["hf_gpt2", "hf_llama", "hf_qwen2", "hf_bert"]


def all_models():
    import torchvision
    cls = sorted(torchvision.models.list_models(module=torchvision.models))
    return cls + SEG + HF


def make(name):
    """The module (returning one tensor) and its example inputs."""
    import torch
    torch.manual_seed(0)
    if name.startswith("hf_"):
        import transformers as tf
        kind = name[3:]
        small = dict(vocab_size=1000, hidden_size=64, intermediate_size=128,
                     num_hidden_layers=2, num_attention_heads=4)
        if kind == "gpt2":
            cfg = tf.GPT2Config(vocab_size=1000, n_embd=64, n_layer=2, n_head=4, n_positions=128)
            m = tf.GPT2LMHeadModel(cfg)
        elif kind == "llama":
            m = tf.LlamaForCausalLM(tf.LlamaConfig(num_key_value_heads=2, **small))
        elif kind == "qwen2":
            m = tf.Qwen2ForCausalLM(tf.Qwen2Config(num_key_value_heads=2, **small))
        else:
            m = tf.BertModel(tf.BertConfig(**small))

        class Wrap(torch.nn.Module):
            def __init__(self, m, bert):
                super().__init__()
                self.m, self.bert = m, bert

            def forward(self, ids):
                o = self.m(input_ids=ids, use_cache=False) if not self.bert else self.m(input_ids=ids)
                return o.last_hidden_state if self.bert else o.logits
        ids = torch.randint(0, 1000, (1, 32), dtype=torch.int64)
        return Wrap(m.eval(), kind == "bert").eval(), (ids,)
    import torchvision
    size = 299 if name == "inception_v3" else 224
    kw = {"aux_logits": True, "init_weights": True} if name in ("inception_v3", "googlenet") else {}
    if name in SEG:
        kw = {"weights_backbone": None, "aux_loss": False}
    m = torchvision.models.get_model(name, weights=None, **kw).eval()

    class Out(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            y = self.m(x)
            return y["out"] if isinstance(y, dict) else y
    return Out(m).eval(), (torch.randn(1, 3, size, size),)


def first_line(text):
    """The first line of an error, not ninja's or the command's."""
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("[", "ninja:", "FAILED", "devproc: ")) and \
                not (line.startswith("/") and "/bin/dp-" in line.split()[0]):
            return line[:240]
    return text.strip()[:240]


def one(name, form, work, root, cuda):
    """Exports, builds and runs one (model, form); returns its row."""
    import numpy as np
    import torch
    torch.set_num_threads(2)
    row = dict(model=name, form=form, imported="", cpu="", cuda="", tcpu="", tcuda="",
               error="", ops="")
    d = os.path.join(work, f"{name}_{form}")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    stem = "m_" + "".join(c if c.isalnum() else "_" for c in name) + "_" + form
    try:
        mod, xs = make(name)
        with torch.no_grad():
            ref = mod(*xs)
            ep = torch.export.export(mod, xs, strict=False)
            if form == "core":
                ep = ep.run_decompositions()
        torch.export.save(ep, os.path.join(d, stem + ".pt2"))
    except Exception as e:   # noqa: BLE001: the row records any failure
        row["error"] = "export: " + first_line(f"{type(e).__name__}: {e}")
        return row
    dt = {torch.float32: "f32", torch.int64: "i64"}
    with open(os.path.join(d, stem + ".dp"), "w") as f:
        for i, x in enumerate(xs):
            f.write(f"input in{i}: {dt[x.dtype]}[{','.join(map(str, x.shape))}]\n")
        f.write(f'out = model("{stem}.pt2", {", ".join(f"in{i}" for i in range(len(xs)))})\n')
        f.write("output out\n")
    args = []
    for i, x in enumerate(xs):
        np.save(os.path.join(d, f"in{i}.npy"), x.numpy())
        args += ["--in", f"in{i}={os.path.join(d, f'in{i}.npy')}"]
    r = ref.detach().double().numpy()
    np.save(os.path.join(d, "ref.npy"), ref.detach().numpy())
    for target in ["cpu"] + (["cuda"] if cuda else []):
        b = os.path.join(d, "build_" + target)
        t0 = time.time()
        p = subprocess.run([os.path.join(root, "bin/devproc"), "build", stem + ".dp", "--target",
                            target, "-C", b], cwd=d, capture_output=True, text=True)
        row["t" + target] = f"{time.time() - t0:.1f}"
        if p.returncode != 0:
            msg = first_line(p.stderr + p.stdout)
            if "import:" in msg and not row["imported"]:
                row["imported"] = "no"
            row["error"] = row["error"] or msg
            row[target] = "build fails"
            continue
        row["imported"] = "yes"
        out = os.path.join(b, "out.npy")
        p = subprocess.run([os.path.join(b, stem, stem)] + args + ["--out", "out=" + out],
                           capture_output=True, text=True)
        if p.returncode != 0:
            row[target] = "run fails"
            row["error"] = row["error"] or first_line(p.stderr)
            continue
        got = np.load(out).astype(np.float64)
        if got.shape != r.shape:
            row[target] = f"shape {got.shape}"
            continue
        err = float(np.abs(got - r).max()) / max(float(np.abs(r).max()), 1e-30)
        row[target] = ("ok" if err <= TOL else "DIFFERS") + f" {err:.1e}"
    if not row["imported"]:
        p = subprocess.run([os.path.join(root, "bin/devproc"), "dump", stem + ".pt2"], cwd=d,
                           capture_output=True, text=True)
        row["ops"] = " ".join(l.split()[1] for l in p.stdout.splitlines() if "UNSUPPORTED" in l)
    return row


def table(rows, path, note):
    cols = ["model", "form", "imported", "tcpu", "cpu", "tcuda", "cuda", "error"]
    head = ["model", "form", "import", "build cpu (s)", "cpu", "build cuda (s)", "cuda",
            "first error / unsupported ops"]
    with open(path, "w") as f:
        f.write("# Model zoo: devproc against PyTorch\n\n" + note + "\n\n")
        f.write("| " + " | ".join(head) + " |\n|" + "---|" * len(head) + "\n")
        for r in rows:
            r = dict(r)
            if r.get("ops"):
                r["error"] = (r["error"] + "; unsupported: " + r["ops"]).strip("; ")
            f.write("| " + " | ".join(str(r.get(c, "")).replace("|", "/") for c in cols) + " |\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="*")
    ap.add_argument("--forms", nargs="*", default=["train", "core"])
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds; then stop")
    ap.add_argument("--work", default="/tmp/dpzoo")
    ap.add_argument("--out", default="tools/zoo/RESULTS.md")
    ap.add_argument("--no-cuda", action="store_true")
    a = ap.parse_args()
    start = time.time()
    root = os.getcwd()
    models = a.models or all_models()
    todo = [(m, f) for m in models for f in a.forms]
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    rows = {}
    ex = cf.ProcessPoolExecutor(a.jobs)
    futs = {ex.submit(one, m, f, a.work, root, not a.no_cuda): (m, f) for m, f in todo}
    try:
        for fu in cf.as_completed(futs, timeout=max(1, a.deadline - (time.time() - start))):
            m, f = futs[fu]
            try:
                rows[(m, f)] = fu.result()
            except Exception:   # noqa: BLE001
                rows[(m, f)] = dict(model=m, form=f, error="zoo.py: " +
                                    first_line(traceback.format_exc().splitlines()[-1]))
            r = rows[(m, f)]
            print(f"{m} {f}: import {r.get('imported') or '-'} cpu {r.get('cpu') or '-'} "
                  f"cuda {r.get('cuda') or '-'} {r.get('error', '')}", flush=True)
    except cf.TimeoutError:
        pass
    procs = list(getattr(ex, "_processes", {}).values())
    ex.shutdown(wait=False, cancel_futures=True)
    for p in procs:   # the deadline: stop the workers still exporting or building
        p.kill()
    out = [rows.get(k, dict(model=k[0], form=k[1], error="not run (deadline)")) for k in todo]
    ok = sum(1 for r in out if r.get("imported") == "yes")
    note = (f"Made by tools/zoo.py in {time.time() - start:.0f} s, {a.jobs} jobs; "
            f"{ok} of {len(out)} (model, form) pairs import.  Tolerance max|err|/max|ref| <= {TOL:g}; "
            "train = torch.export training IR, core = run_decompositions().")
    table(out, a.out, note)
    print(note)


if __name__ == "__main__":
    sys.exit(main())
