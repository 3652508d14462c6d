#!/usr/bin/env python3
"""cpu.py: DevProc's cpu target against PyTorch eager and ONNX Runtime on the
CPU, for ResNet-18, ResNet-50, MobileNetV2, ViT-B/16, a GPT-2 small-config
prefill (sequence 128) and the classify example, at batch 1 and 8.

Run from the repository root after ./configure && make, with python3,
torch, torchvision, transformers, onnxruntime and numpy (the GPU machine's
host; bench/cpu.sh does the build and keeps the logs):
    python3 bench/cpu.py [--threads 16] [--models resnet18,...] [--batches 1,8]
                         [--budget SECONDS] [--out FILE.md]

For each model and batch: the model (random weights, seed 0; batch-norm
statistics randomized so that folding them is exercised) is exported with
torch.export into build/bench-cpu/NAME_bB/, a pipeline .dp calls it, and
`devproc build --target cpu` compiles it (all pipelines in one ninja run).
A model DevProc cannot import or lower yet is reported with the first line
of the error, not left out.  The DevProc executable's output is compared
with PyTorch's (max|err| / max|ref|).  Then, one mode after the other on the
same input: DevProc (--bench, run() host to host) at N threads and at 1,
each with the default mapping (oneDNN where present, see runtime/dprt.h)
and with our own kernels only (DPRT_DNNL=0; for MobileNetV2 also with the
depthwise layers on ours at every batch, DPRT_DNNL=conv,linear, and on
oneDNN at every batch, DPRT_DNNL=conv,dw,dw1,linear,gemm; for the CNNs
with the activations plain between convolutions, DPRT_LAYOUT=plain,
with the 3x3 stride-1 convolutions direct rather than through oneDNN's
Winograd, DPRT_DNNL=conv,dw,linear,gemm, and with the 1x1 convolutions
between blocked activations on oneDNN at batch 1 too rather than our
blocked kernel, DPRT_DNNL=conv,dw,linear,gemm,wino,pw; for ViT-B/16 and GPT-2
with the linear layers on ours, DPRT_DNNL=conv,dw), the outputs at N threads
and at 1 compared with PyTorch's,
PyTorch eager (inference_mode) at N threads and at 1, ONNX Runtime (the
model exported with torch.onnx.export, all graph optimizations) at N and 1
intra-op threads (the 1-thread modes only at --one-thread-batches, 1 by
default).  Each is the median of as many runs as fit in about 1 s
(at least 3, at most 100) after a warm-up; DevProc and ONNX Runtime at N
threads are measured --rounds times (3), alternately, and the table gives
the median of the rounds (this host's medians move by up to a third
between minutes).  The table (ms) goes to stdout
and to --out; the ratio columns are DevProc (N threads) over ONNX Runtime
(N threads) and DevProc (N threads) over PyTorch (1 thread).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time
import traceback

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]
T0 = time.time()


def log(*a):
    print("[%5.0fs]" % (time.time() - T0), *a, flush=True)


def randomize_bn(model):
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            n = m.num_features
            with torch.no_grad():
                m.running_mean.copy_(torch.rand(n, generator=g) * 0.2 - 0.1)
                m.running_var.copy_(torch.rand(n, generator=g) + 0.5)
                m.weight.copy_(torch.rand(n, generator=g) + 0.5)
                m.bias.copy_(torch.rand(n, generator=g) * 0.2 - 0.1)
    return model


class Classify(torch.nn.Module):
    """examples/classify: normalize, permute, flatten, the MLP of mlp.pt2,
    argmax; u8 [B,32,32,3] in."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(3072, 512)
        self.fc2 = torch.nn.Linear(512, 10)
        ep = torch.export.load(os.path.join(ROOT, "examples/classify/mlp.pt2"))
        self.load_state_dict(ep.state_dict)
        self.register_buffer("mean", torch.tensor(MEAN))
        self.register_buffer("std", torch.tensor(STD))

    def mlp(self, x):
        return self.fc2(torch.relu(self.fc1(x)))

    def forward(self, img):
        x = (img.float() * (1 / 255) - self.mean) / self.std
        logits = self.mlp(x.permute(0, 3, 1, 2).flatten(1))
        return logits.argmax(1), logits


class MLPOnly(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c

    def forward(self, x):
        return self.c.mlp(x)


class GPT2Logits(torch.nn.Module):
    """Logits of a prefill.  The all-ones attention mask keeps transformers
    from looking for packed sequences in the position ids (aten.diff, which
    neither DevProc nor the ONNX exporter has)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids):
        return self.m(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False,
                      return_dict=False)[0]


def make(name):
    """(model, make_input(batch), input name, dtype text, shape tail)."""
    import torchvision
    torch.manual_seed(0)
    img = lambda b: torch.randn(b, 3, 224, 224)
    if name == "resnet18":
        return randomize_bn(torchvision.models.resnet18()), img, "x", "f32", [3, 224, 224]
    if name == "resnet50":
        return randomize_bn(torchvision.models.resnet50()), img, "x", "f32", [3, 224, 224]
    if name == "mobilenet_v2":
        return randomize_bn(torchvision.models.mobilenet_v2()), img, "x", "f32", [3, 224, 224]
    if name == "vit_b_16":   # its head is zero-initialized: random, so that outputs are compared
        m = torchvision.models.vit_b_16()
        with torch.no_grad():
            m.heads.head.weight.normal_(0, 0.02)
            m.heads.head.bias.normal_(0, 0.02)
        return m, img, "x", "f32", [3, 224, 224]
    if name == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel
        cfg = GPT2Config()
        try:
            m = GPT2Logits(GPT2LMHeadModel._from_config(cfg, attn_implementation="sdpa"))
        except Exception:
            m = GPT2Logits(GPT2LMHeadModel(cfg))
        ids = lambda b: torch.randint(0, cfg.vocab_size, (b, 128), generator=torch.Generator().manual_seed(b))
        return m, ids, "ids", "i64", [128]
    if name == "classify":
        rng = lambda b: torch.from_numpy(np.random.default_rng(b).integers(0, 256, size=(b, 32, 32, 3), dtype=np.uint8))
        return Classify(), rng, "image", "u8", [32, 32, 3]
    raise ValueError(name)


def timeit(fn, budget=1.0, lo=3, hi=100):
    fn()   # warm-up
    t = []
    start = time.perf_counter()
    while len(t) < hi and (len(t) < lo or time.perf_counter() - start < budget):
        t0 = time.perf_counter()
        fn()
        t.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(t), len(t)


def devproc_bench(exe, inarg, threads, budget=1.0, dnnl=None, layout=None):
    """Median ms of --bench, its run count sized from one timed run; dnnl:
    DPRT_DNNL's value (None: the default mapping); layout: DPRT_LAYOUT's."""
    env = dict(os.environ)
    if dnnl is not None:
        env["DPRT_DNNL"] = dnnl
    if layout is not None:
        env["DPRT_LAYOUT"] = layout
    t0 = time.perf_counter()
    subprocess.run([exe, "--in", inarg, "--threads", str(threads)], check=True,
                   capture_output=True, env=env)
    one = max(time.perf_counter() - t0, 1e-4)
    runs = int(max(3, min(100, budget / one)))
    out = subprocess.run([exe, "--in", inarg, "--threads", str(threads), "--bench", str(runs)],
                         check=True, capture_output=True, text=True, env=env).stdout
    m = re.search(r"bench: (\d+) runs, median ([0-9.]+) us", out)
    mem = re.search(r"peak resident memory ([0-9.]+) MiB", out)
    isa = re.search(r"threads, (\w+) kernels", out)
    return float(m.group(2)) / 1e3, int(m.group(1)), float(mem.group(1)) if mem else 0, \
        isa.group(1) if isa else "?"


def relerr(got, ref):
    ref = np.asarray(ref, dtype=np.float64)
    m = np.abs(ref).max()
    return float(np.abs(np.asarray(got, dtype=np.float64) - ref).max() / (m if m > 0 else 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--models", default="resnet18,resnet50,mobilenet_v2,vit_b_16,gpt2,classify")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--one-thread-batches", default="1",
                    help="batches at which the 1-thread modes are measured too")
    ap.add_argument("--budget", type=float, default=1e9,
                    help="seconds after which the remaining measurements are skipped")
    ap.add_argument("--out", default=os.path.join(ROOT, "build/bench-cpu/cpu.md"))
    ap.add_argument("--rounds", type=int, default=3,
                    help="DevProc and ONNX Runtime at N threads measured this many times, "
                    "alternately; the table gives the median of the rounds")
    ap.add_argument("--quick", action="store_true",
                    help="half a second per mode, and no DPRT_DNNL variants (device time)")
    args = ap.parse_args()
    N = args.threads
    mb = 0.5 if args.quick else 1.0   # seconds of runs per mode
    base = os.path.join(ROOT, "build/bench-cpu")
    os.makedirs(base, exist_ok=True)
    import onnxruntime as ort
    log("torch", torch.__version__, "onnxruntime", ort.__version__, "cores", os.cpu_count(),
        "affinity", len(os.sched_getaffinity(0)))
    try:
        cpu = [l for l in open("/proc/cpuinfo") if l.startswith("model name")][0].split(":")[1].strip()
    except Exception:
        cpu = "?"
    log("cpu:", cpu)

    # 1. exports and pipelines
    jobs = []
    for b in [int(x) for x in args.batches.split(",")]:   # batch 1 of every model first
        for name in args.models.split(","):
            d = os.path.join(base, "%s_b%d" % (name, b))
            os.makedirs(d, exist_ok=True)
            job = {"name": name, "batch": b, "dir": d, "note": "", "pname": "%s_b%d" % (name, b)}
            jobs.append(job)
            try:
                model, mkin, inname, dt, tail = make(name)
                model.eval()
                x = mkin(b)
                job.update(model=model, x=x, inname=inname)
                np.save(os.path.join(d, "in.npy"), x.numpy())
                if name == "classify":   # the example's pipeline, batch b
                    with open(os.path.join(ROOT, "examples/classify/classify.dp")) as f:
                        text = f.read().replace("u8[1,32,32,3]", "u8[%d,32,32,3]" % b)
                    mlp = MLPOnly(model).eval()
                    ep = torch.export.export(mlp, (torch.zeros(b, 3072),))
                    torch.export.save(ep, os.path.join(d, "mlp.pt2"))
                else:
                    ep = torch.export.export(model, (x,), strict=False)
                    torch.export.save(ep, os.path.join(d, "m.pt2"))
                    text = ("input %s: %s[%s]\ny = model(\"m.pt2\", %s)\noutput y\n"
                            % (inname, dt, ",".join(str(v) for v in [b] + tail), inname))
                with open(os.path.join(d, job["pname"] + ".dp"), "w") as f:
                    f.write(text)
                log("exported", name, "batch", b)
            except Exception as e:
                job["note"] = "export failed: %s" % str(e).splitlines()[0][:120]
                log(job["note"])
                traceback.print_exc()

    # 2. DevProc builds, all in one ninja graph (-k 0: a pipeline that fails
    # does not stop the others); a failure's message from building it alone
    dps = [os.path.join(j["dir"], j["pname"] + ".dp") for j in jobs if not j["note"]]
    bdir = os.path.join(base, "build")
    r = subprocess.run([os.path.join(ROOT, "bin/devproc"), "gen", *dps, "--target", "cpu",
                        "-C", bdir], capture_output=True, text=True)
    if r.returncode != 0:
        log("devproc gen:", r.stdout[-2000:], r.stderr[-2000:])
    r = subprocess.run(["ninja", "-C", bdir, "-k", "0"], capture_output=True, text=True)
    log("devproc build: exit", r.returncode)
    for j in jobs:
        if j["note"]:
            continue
        exe = os.path.join(bdir, j["pname"], j["pname"])
        if os.path.exists(exe):
            j["exe"] = exe
            continue
        jb = os.path.join(j["dir"], "alone")
        r = subprocess.run([os.path.join(ROOT, "bin/devproc"), "build",
                            os.path.join(j["dir"], j["pname"] + ".dp"), "--target", "cpu",
                            "-C", jb], capture_output=True, text=True)
        err = [l for l in (r.stdout + r.stderr).splitlines()
               if ": import:" in l or ": lower_cpu:" in l or ": verify:" in l or "error" in l]
        j["note"] = "DevProc: " + (err[0] if err else (r.stdout + r.stderr)[-200:]).strip()[:200]
        log(j["name"], j["batch"], j["note"])

    # 3. measurements
    rows = []
    for j in jobs:
        row = {"name": j["name"], "batch": j["batch"], "note": j["note"]}
        rows.append(row)
        if "model" not in j:
            continue
        if time.time() - T0 > args.budget:
            row["note"] = (row["note"] + "; " if row["note"] else "") + "not measured (time budget)"
            continue
        model, x, d = j["model"], j["x"], j["dir"]
        one = str(j["batch"]) in args.one_thread_batches.split(",")
        inarg = "%s=%s" % (j["inname"], os.path.join(d, "in.npy"))
        sess = {}   # ONNX Runtime at N threads and at 1
        try:
            onnx = os.path.join(d, "m.onnx")
            if not os.path.exists(onnx):
                torch.onnx.export(model, (x,), onnx, dynamo=False, opset_version=17,
                                  input_names=["x"], output_names=["y"] if j["name"] != "classify"
                                  else ["label", "y"])
            for t, key in ((N, "ort"), (1, "ort1"))[:2 if one else 1]:
                so = ort.SessionOptions()
                so.intra_op_num_threads = t
                so.inter_op_num_threads = 1
                so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                s = ort.InferenceSession(onnx, so, providers=["CPUExecutionProvider"])
                sess[key] = (s, {s.get_inputs()[0].name: x.numpy()})
        except Exception as e:
            row["onnx"] = "ONNX: %s" % str(e).splitlines()[0][:100]
            traceback.print_exc()
        ortrun = lambda key: timeit(lambda: sess[key][0].run(None, sess[key][1]), mb)[0]
        try:
            torch.set_num_threads(N)
            with torch.inference_mode():
                ref = model(x)
            ref = ref[1] if isinstance(ref, tuple) else ref
            ref = ref.numpy()
            if j.get("exe"):
                outs = ["--out", "y=" + os.path.join(d, "y.npy")]
                if j["name"] == "classify":
                    outs = ["--out", "logits=" + os.path.join(d, "y.npy")]
                subprocess.run([j["exe"], "--in", inarg, *outs], check=True, capture_output=True)
                row["err"] = relerr(np.load(os.path.join(d, "y.npy")), ref)
                # DevProc and ONNX Runtime at N threads, alternately, --rounds times
                dps, orts = [], []
                for _ in range(max(1, args.rounds)):
                    row["dp"], row["dp_runs"], row["mem"], row["isa"] = devproc_bench(j["exe"], inarg, N, mb)
                    dps.append(row["dp"])
                    if "ort" in sess:
                        orts.append(ortrun("ort"))
                row["dp"] = statistics.median(dps)
                row["dp_rounds"] = dps
                if orts:
                    row["ort"] = statistics.median(orts)
                    row["ort_rounds"] = orts
                # our own kernels only, and (MobileNetV2) oneDNN without the
                # depthwise layers: which of the two won where
                if not args.quick:
                    row["dp_ours"], _, _, _ = devproc_bench(j["exe"], inarg, N, dnnl="0")
                if j["name"] == "mobilenet_v2" and not args.quick:   # depthwise: ours / oneDNN
                    row["dp_nodw"], _, _, _ = devproc_bench(j["exe"], inarg, N, dnnl="conv,linear")
                    row["dp_dw1"], _, _, _ = devproc_bench(j["exe"], inarg, N,
                                                           dnnl="conv,dw,dw1,linear,gemm")
                if j["name"] in ("resnet18", "resnet50", "mobilenet_v2") and not args.quick:
                    # before the blocked layout; with oneDNN's Winograd for 3x3 stride 1
                    row["dp_plain"], _, _, _ = devproc_bench(j["exe"], inarg, N, layout="plain")
                    row["dp_direct"], _, _, _ = devproc_bench(j["exe"], inarg, N,
                                                              dnnl="conv,dw,linear,gemm")
                    row["dp_pw"], _, _, _ = devproc_bench(j["exe"], inarg, N,
                                                          dnnl="conv,dw,linear,gemm,wino,pw")
                if j["name"] in ("vit_b_16", "gpt2") and not args.quick:
                    row["dp_nolin"], _, _, _ = devproc_bench(j["exe"], inarg, N, dnnl="conv,dw")
                if one:
                    row["dp1"], _, _, _ = devproc_bench(j["exe"], inarg, 1, mb)
                    if not args.quick:
                        row["dp1_ours"], _, _, _ = devproc_bench(j["exe"], inarg, 1, dnnl="0")
                    if j["name"] != "classify":   # the 1-thread outputs too
                        subprocess.run([j["exe"], "--in", inarg, "--threads", "1", *outs],
                                       check=True, capture_output=True)
                        row["err1"] = relerr(np.load(os.path.join(d, "y.npy")), ref)
            elif "ort" in sess:
                row["ort"] = ortrun("ort")
            if "ort1" in sess:
                row["ort1"] = ortrun("ort1")
            with torch.inference_mode():
                for t, key in ((N, "pt"), (1, "pt1"))[:2 if one else 1]:
                    torch.set_num_threads(t)
                    row[key], _ = timeit(lambda: model(x), mb)
            torch.set_num_threads(N)
        except Exception as e:
            row["note"] = (row["note"] + "; " if row["note"] else "") + "failed: %s" % str(e).splitlines()[0][:120]
            traceback.print_exc()
        log(row)

    # 4. the table
    f = lambda v: "%.2f" % v if isinstance(v, float) else "n/a"
    lines = ["CPU: %s, %d threads (\"N\"); DevProc kernels: %s; ms per inference, median; "
             "torch %s, onnxruntime %s." % (cpu, N, next((r["isa"] for r in rows if "isa" in r), "?"),
                                           torch.__version__, ort.__version__), "",
             "| model | batch | DevProc N | DevProc 1 | ORT N | ORT 1 | PyTorch N | PyTorch 1 "
             "| DevProc N / ORT N | DevProc N / PyTorch 1 | DevProc N, own kernels (DPRT_DNNL=0) "
             "| DevProc 1, own kernels | DevProc peak RSS (MiB) "
             "| max\\|err\\|/max\\|ref\\| (N; 1 thread) | notes |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    rounds = lambda r: "rounds at N threads, DevProc %s, ORT %s" % (
        "/".join("%.2f" % v for v in r["dp_rounds"]), "/".join("%.2f" % v for v in r["ort_rounds"])) \
        if len(r.get("dp_rounds", [])) > 1 and "ort_rounds" in r else ""
    for r in rows:
        ratio = lambda a, b: "%.2f" % (r[a] / r[b]) if a in r and b in r else "n/a"
        nodw = "DevProc N, plain layout between convolutions (DPRT_LAYOUT=plain): %.2f" % r["dp_plain"] \
            if "dp_plain" in r else ""
        nodw += "; DevProc N, 3x3 stride 1 direct, not Winograd (DPRT_DNNL=conv,dw,linear,gemm): " \
            "%.2f" % r["dp_direct"] if "dp_direct" in r else ""
        nodw += "; DevProc N, 1x1 convolutions on oneDNN (DPRT_DNNL=conv,dw,linear,gemm,wino," \
            "pw): %.2f" % r["dp_pw"] if "dp_pw" in r else ""
        nodw += "; DevProc N, depthwise on our kernel at every batch (DPRT_DNNL=conv,linear): " \
            "%.2f" % r["dp_nodw"] if "dp_nodw" in r else ""
        nodw += "; DevProc N, depthwise on oneDNN at every batch (DPRT_DNNL=conv,dw,dw1,linear," \
            "gemm): %.2f" % r["dp_dw1"] if "dp_dw1" in r else ""
        nodw += "; DevProc N, linear layers on own kernels (DPRT_DNNL=conv,dw): %.2f" % r["dp_nolin"] \
            if "dp_nolin" in r else ""
        lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["name"], r["batch"], f(r.get("dp")), f(r.get("dp1")), f(r.get("ort")),
            f(r.get("ort1")), f(r.get("pt")), f(r.get("pt1")), ratio("dp", "ort"),
            ratio("dp", "pt1"), f(r.get("dp_ours")), f(r.get("dp1_ours")),
            "%.0f" % r["mem"] if "mem" in r else "n/a",
            ("%.1e" % r["err"] if "err" in r else "n/a") +
            ("; %.1e" % r["err1"] if "err1" in r else ""),
            "; ".join(x for x in (r["note"], r.get("onnx", ""), nodw.lstrip("; "), rounds(r))
                      if x).replace("|", "/")))
    text = "\n".join(lines) + "\n"
    print(text)
    with open(args.out, "w") as fo:
        fo.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
