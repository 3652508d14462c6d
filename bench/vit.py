#!/usr/bin/env python3
"""vit.py: Vision Transformers on the GPU, host to host at batch 1: DevProc
(--target cuda, fp32, tf32 and bf16 mappings) against PyTorch eager and
torch.compile(mode="reduce-overhead") in the same precision (bf16: the
model converted with .to(torch.bfloat16), its input cast on the GPU, its
output widened to f32 there).

Run from the repository root on the GPU machine after make (python3 with
torch, timm and numpy, an NVIDIA GPU):
    python3 bench/vit.py [--models deit_tiny vit_b16] [--runs N] [--rounds R]
                         [--precisions fp32 tf32 bf16] [--out DIR] [--profile]

For each model: timm's deit_tiny_patch16_224 or vit_base_patch16_224,
random weights (torch.manual_seed(0); no download; resnet18: torchvision's), exported with
torch.export in eval mode to DIR/M.pt2; the input torch.manual_seed(1)
randn(1, 3, 224, 224).  References: PyTorch on the GPU in fp32 (TF32 off)
and in TF32 (allow_tf32 on for matmul and cuDNN), and the bf16 model.
DevProc builds the one-line pipeline once per precision, with targets/cuda
(fp32, the default) and with targets/cuda plus "tune cuda.precision tf32"
(or bf16), checks each output with bin/npycmp (fp32: 1e-5 relative to the
fp32 reference; tf32: 1e-2 to the TF32 one, the two differing by rounding
on both sides; bf16: 2e-2 to PyTorch's bf16 model; each also with
DPRT_CUDA_ATTN_SPLIT=0, attention in one kernel), then times R
interleaved rounds: the executable's --bench N median (also with
DPRT_CUDA_ATTN_SPLIT=0), and PyTorch's
median of N calls from a pinned host tensor to a host tensor (.cuda(),
the model, .cpu()), eager and compiled, each precision.  Prints one line
per measurement and a table (median of the rounds' medians)."""
import argparse
import copy
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = {"deit_tiny": "deit_tiny_patch16_224", "vit_b16": "vit_base_patch16_224",
          "resnet18": "torchvision resnet18"}


def log(*a):
    print(*a, flush=True)


def precision(p):
    tf = p == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf
    torch.backends.cudnn.allow_tf32 = tf


def export(name, out):
    torch.manual_seed(0)
    if name == "resnet18":
        import torchvision
        m = torchvision.models.resnet18().eval()
    else:
        import timm
        m = timm.create_model(MODELS[name], pretrained=False).eval()
    torch.manual_seed(1)
    x = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        ep = torch.export.export(m, (x,))
    torch.export.save(ep, f"{out}/{name}.pt2")
    np.save(f"{out}/{name}.x.npy", x.numpy())
    return m, x


def build(name, out, prec):
    d = f"{out}/{name}.{prec}"
    os.makedirs(d, exist_ok=True)
    with open(f"{d}/{name}.dp", "w") as f:
        f.write(f'input x: f32[1,3,224,224]\ny = model("{out}/{name}.pt2", x)\noutput y\n')
    target = "cuda"
    if prec != "fp32":
        target = f"{d}/{prec}.map"
        with open(f"{ROOT}/targets/cuda") as f, open(target, "w") as g:
            g.write(f.read() + f"tune cuda.precision {prec}\n")
    t0 = time.time()
    r = subprocess.run([f"{ROOT}/bin/devproc", "build", f"{d}/{name}.dp", "--target", target,
                        "-C", f"{d}/b"], capture_output=True, text=True)
    if r.returncode != 0:
        log(f"devproc {name} {prec}: build failed:", (r.stdout + r.stderr)[-1500:])
        return None
    log(f"devproc {name} {prec}: built in {time.time() - t0:.1f} s")
    return f"{d}/b/{name}/{name}"


NOSPLIT = dict(os.environ, DPRT_CUDA_ATTN_SPLIT="0")


def bench_exe(exe, x, runs, env=None):
    r = subprocess.run([exe, "--in", f"x={x}", "--bench", str(runs)], capture_output=True, text=True,
                       env=env)
    for line in r.stdout.splitlines():
        if line.startswith("bench:") and "median" in line:
            return float(line.split("median ")[1].split()[0])
    log("bench failed:", (r.stdout + r.stderr)[-500:])
    return None


def bench_torch(f, x, runs):
    for _ in range(30):
        f(x.cuda(non_blocking=True)).cpu()
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        f(x.cuda(non_blocking=True)).cpu()
        t.append(time.perf_counter() - t0)
    return statistics.median(t) * 1e6


def table(models, res, precs=("fp32", "tf32", "bf16")):
    """The table so far: medians of the rounds' medians (us)."""
    log("\n| model | precision | DevProc | DevProc, DPRT_CUDA_ATTN_SPLIT=0 | PyTorch eager | "
        "torch.compile reduce-overhead | DevProc / best PyTorch |")
    log("|---|---|---|---|---|---|---|")
    for name in models:
        for prec in precs:
            v = {w: statistics.median(res[(name, w, prec)]) if (name, w, prec) in res else None
                 for w in ("devproc", "devproc-nosplit", "eager", "compile")}
            best = min([t for w, t in v.items() if not w.startswith("devproc") and t], default=None)
            ratio = f"{v['devproc'] / best:.2f}" if v["devproc"] and best else "n/a"
            cell = lambda t: f"{t:.1f}" if t else "n/a"
            log(f"| {name} | {prec} | {cell(v['devproc'])} | {cell(v['devproc-nosplit'])} | "
                f"{cell(v['eager'])} | {cell(v['compile'])} | {ratio} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="+", default=list(MODELS))
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--precisions", nargs="+", default=["fp32", "tf32", "bf16"])
    ap.add_argument("--out", default=f"{ROOT}/build/vit")
    ap.add_argument("--no-compile", nargs="*", default=None, metavar="MODEL",
                    help="no torch.compile for these models (all when none named)")
    ap.add_argument("--profile", action="store_true", help="the DevProc programs' --profile")
    ap.add_argument("--wait", help="before timing, wait (at most 300 s) for this file to exist")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    res = {}
    for name in a.models:
        m, x = export(name, a.out)
        xp = f"{a.out}/{name}.x.npy"
        mc = m.cuda()
        xh = x.pin_memory()
        fns = {}
        for prec in a.precisions:
            precision(prec)
            model = mc
            if prec == "bf16":
                m16 = copy.deepcopy(mc).to(torch.bfloat16)
                model = lambda t, m16=m16: m16(t.to(torch.bfloat16)).float()
            with torch.no_grad():
                ref = model(x.cuda()).cpu().numpy()
            np.save(f"{a.out}/{name}.{prec}.ref.npy", ref)
            exe = build(name, a.out, prec)
            if exe:
                for how, env in (("", None), (" DPRT_CUDA_ATTN_SPLIT=0", NOSPLIT)):
                    got = f"{a.out}/{name}.{prec}.got.npy"
                    r = subprocess.run([exe, "--in", f"x={xp}", "--out", f"y={got}"],
                                       capture_output=True, text=True, env=env)
                    tol = {"fp32": "1e-5", "tf32": "1e-2", "bf16": "2e-2"}[prec]
                    c = subprocess.run([f"{ROOT}/bin/npycmp", "--tol", tol,
                                        got, f"{a.out}/{name}.{prec}.ref.npy"], capture_output=True, text=True)
                    log(f"devproc {name} {prec}{how}: "
                        f"{'ok' if r.returncode == 0 and c.returncode == 0 else 'MISMATCH'} "
                        f"{(r.stderr + c.stdout + c.stderr).strip()[-300:]}")
                if a.profile:
                    p = subprocess.run([exe, "--in", f"x={xp}", "--profile"], capture_output=True, text=True)
                    with open(f"{a.out}/{name}.{prec}.profile.txt", "w") as f:
                        f.write(p.stdout + p.stderr)
                fns[("devproc", prec)] = exe
                fns[("devproc-nosplit", prec)] = exe
            fns[("eager", prec)] = model
            if a.no_compile is not None and (not a.no_compile or name in a.no_compile):
                pass
            else:
                try:
                    c = torch.compile(mc if prec != "bf16" else m16, mode="reduce-overhead")
                    if prec == "bf16":
                        c = lambda t, c16=c: c16(t.to(torch.bfloat16)).float()
                    with torch.no_grad():
                        t0 = time.time()
                        for _ in range(5):
                            c(xh.cuda()).cpu()
                    log(f"torch.compile {name} {prec}: compiled in {time.time() - t0:.1f} s")
                    fns[("compile", prec)] = c
                except Exception as e:
                    log(f"torch.compile {name} {prec} failed: {str(e)[:300]}")
        t0 = time.time()
        while a.wait and not os.path.exists(a.wait) and time.time() - t0 < 300:
            time.sleep(1)
        for rd in range(a.rounds):
            for (who, prec), f in fns.items():
                precision(prec)
                if who.startswith("devproc"):
                    t = bench_exe(f, xp, a.runs, NOSPLIT if who == "devproc-nosplit" else None)
                else:
                    with torch.no_grad():
                        t = bench_torch(f, xh, a.runs)
                log(f"round {rd + 1} {name} {who} {prec}: {t} us")
                if t is not None:
                    res.setdefault((name, who, prec), []).append(t)
        table(a.models[:a.models.index(name) + 1], res, a.precisions)


if __name__ == "__main__":
    sys.exit(main())
