#!/usr/bin/env python3
"""gpu.py: DevProc's cuda target against PyTorch on the GPU, host to host,
for ResNet-50, DeiT-tiny, ViT-B/16 and a GPT-2 small-config prefill
(sequence 128), at the batches asked, in fp32 and in TF32.

Run from the repository root on the GPU machine after make (python3 with
torch, torchvision, timm, transformers and numpy; an NVIDIA GPU):
    python3 bench/gpu.py [--models resnet50,deit_tiny,vit_b16,gpt2]   (also resnet18, mobilenet_v2)
                         [--batches 1,32] [--modes devproc,eager,ro,ma]
                         [--precisions fp32,tf32] [--runs N] [--db M=FILE ...]
                         [--budget SECONDS] [--out FILE.md] [--export-only]
                         [--variant TAG:ENV=VAL[,ENV=VAL]] [--profile DIR]

Models: ResNet-18, ResNet-50, MobileNetV2 and GPT-2 as bench/cpu.py makes them (random weights,
seed 0; GPT-2's logits of a prefill of 128 token ids), DeiT-tiny and
ViT-B/16 from timm (random weights, seed 0); each exported with
torch.export at its batch into build/bench-gpu/NAME_bB/, a one-line
pipeline calls it.  DevProc builds it with targets/cuda (fp32) and with
"tune cuda.precision tf32" added (tf32), and with "tune cuda.db FILE" for
--db NAME=FILE (a database devproc tune wrote, at every batch: its keys
name the shapes, so one file can hold several batches' lines); its output is compared
with PyTorch's in the same precision (max|err| / max|ref|, printed).
Modes: devproc (the executable's --bench N median: run() host to host),
eager, ro (torch.compile mode="reduce-overhead"), ma (torch.compile
mode="max-autotune"); PyTorch's time is the median of N calls from a
pinned host tensor to a host tensor (.cuda(), the model, .cpu()) after 20
warm-up calls, under torch.no_grad, TF32 on (matmul and cuDNN) for tf32.
--variant also times DevProc's executable with those environment variables
(e.g. attn-simt:DPRT_CUDA_ATTN=simt), in the notes; --profile DIR writes
each build's --profile table (time per op) to DIR/NAME_bB.PREC.txt and
prints its cuda time summed by op name.
One run per measurement; each line is printed as it is measured, and the
table (us) goes to stdout and is rewritten in --out after each one.  Measurements past --budget seconds
are skipped and marked."""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
T0 = time.time()


def log(*a):
    print(*a, flush=True)


def precision(p):
    tf = p == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf
    torch.backends.cudnn.allow_tf32 = tf


def make(name, b):
    """(model, input, input name, dtype text)."""
    if name in ("resnet18", "resnet50", "mobilenet_v2", "gpt2"):
        from cpu import make as cpumake
        m, mkin, inname, dt, _ = cpumake(name)
        return m.eval(), mkin(b), inname, dt
    import timm
    torch.manual_seed(0)
    m = timm.create_model({"deit_tiny": "deit_tiny_patch16_224",
                           "vit_b16": "vit_base_patch16_224"}[name], pretrained=False).eval()
    torch.manual_seed(1)
    return m, torch.randn(b, 3, 224, 224), "x", "f32"


def build(d, pname, prec, db):
    bd = f"{d}/{prec}{'.tuned' if db else ''}"
    os.makedirs(bd, exist_ok=True)
    mp = f"{bd}/cuda.map"
    with open(f"{ROOT}/targets/cuda") as f, open(mp, "w") as g:
        g.write(f.read())
        if prec == "tf32":
            g.write("tune cuda.precision tf32\n")
        if db:
            g.write(f"tune cuda.db {os.path.abspath(db)}\n")
    t0 = time.time()
    r = subprocess.run([f"{ROOT}/bin/devproc", "build", f"{d}/{pname}.dp", "--target", mp,
                        "-C", f"{bd}/b"], capture_output=True, text=True)
    if r.returncode != 0:
        log(f"devproc {pname} {prec}: build failed:", (r.stdout + r.stderr)[-800:])
        return None
    log(f"devproc {pname} {prec}{' tuned' if db else ''}: built in {time.time() - t0:.1f} s")
    return f"{bd}/b/{pname}/{pname}"


def bench_exe(exe, arg, runs, env=None):
    r = subprocess.run([exe, "--in", arg, "--bench", str(runs)], capture_output=True, text=True,
                       env=dict(os.environ, **(env or {})))
    for line in r.stdout.splitlines():
        if line.startswith("bench:") and "median" in line:
            return float(line.split("median ")[1].split()[0])
    log("bench failed:", (r.stdout + r.stderr)[-500:])
    return None


def profsum(text):
    """--profile's first line and its cuda time summed by op name."""
    lines = text.splitlines()
    by = {}
    for line in lines:
        w = line.split(None, 4)
        if len(w) == 5 and w[1] == "cuda" and w[0].isdigit():
            t, n = by.get(w[4], (0.0, 0))
            by[w[4]] = (t + float(w[2]), n + 1)
    out = [l for l in lines if l.startswith("profile:")][:1]
    out += [f"  {t:9.1f} us {n:4d} x {name}" for name, (t, n) in
            sorted(by.items(), key=lambda x: -x[1][0])[:12]]
    return "\n".join(out)


def bench_torch(f, x, runs):
    with torch.no_grad():
        for _ in range(20):
            f(x.cuda(non_blocking=True)).cpu()
        t = []
        for _ in range(runs):
            t0 = time.perf_counter()
            f(x.cuda(non_blocking=True)).cpu()
            t.append(time.perf_counter() - t0)
    return statistics.median(t) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="resnet50,deit_tiny,vit_b16,gpt2")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--modes", default="devproc,eager,ro,ma")
    ap.add_argument("--precisions", default="fp32,tf32")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--db", action="append", default=[], metavar="NAME=FILE",
                    help="also DevProc with this tuning database (batch 1)")
    ap.add_argument("--budget", type=float, default=1e9)
    ap.add_argument("--variant", action="append", default=[], metavar="TAG:ENV=VAL[,ENV=VAL]",
                    help="also time DevProc with these environment variables")
    ap.add_argument("--profile", metavar="DIR", help="write each build's --profile table here")
    ap.add_argument("--out", default=f"{ROOT}/build/bench-gpu/gpu.md")
    ap.add_argument("--export-only", action="store_true",
                    help="write build/bench-gpu/NAME_bB/ (m.pt2, in.npy, NAME_bB.dp) and stop")
    a = ap.parse_args()
    base = f"{ROOT}/build/bench-gpu"
    os.makedirs(base, exist_ok=True)
    dbs = dict(x.split("=", 1) for x in a.db)
    modes = a.modes.split(",")
    log("torch", torch.__version__, torch.cuda.get_device_name(0))
    rows = []
    for b in [int(x) for x in a.batches.split(",")]:
        for name in a.models.split(","):
            pname = f"{name}_b{b}"
            d = f"{base}/{pname}"
            os.makedirs(d, exist_ok=True)
            if time.time() - T0 > a.budget:
                rows.append((name, b, "-", {}, "not measured (time budget)"))
                continue
            try:
                m, x, inname, dt = make(name, b)
                with torch.no_grad():
                    ep = torch.export.export(m, (x,), strict=False)
                torch.export.save(ep, f"{d}/m.pt2")
                np.save(f"{d}/in.npy", x.numpy())
                with open(f"{d}/{pname}.dp", "w") as f:
                    f.write(f'input {inname}: {dt}[{",".join(map(str, x.shape))}]\n'
                            f'y = model("m.pt2", {inname})\noutput y\n')
            except Exception as e:
                rows.append((name, b, "-", {}, f"export failed: {str(e)[:100]}"))
                log(rows[-1])
                continue
            if a.export_only:
                log(f"exported {d}/{pname}.dp")
                continue
            mc = m.cuda()
            xh = x.pin_memory()
            for prec in a.precisions.split(","):
                res, note = {}, []
                rows.append((name, b, prec, res, note))   # filled in as measured
                precision(prec)
                with torch.no_grad():
                    ref = mc(x.cuda()).cpu().numpy()
                if "devproc" in modes:
                    for tag, db in (("devproc", None), ("tuned", dbs.get(name))):
                        if tag == "tuned" and not db:
                            continue
                        exe = build(d, pname, prec, db)
                        if exe is None:
                            note.append(f"{tag}: build failed")
                            continue
                        got = f"{d}/{prec}.got.npy"
                        r = subprocess.run([exe, "--in", f"{inname}={d}/in.npy", "--out", f"y={got}"],
                                           capture_output=True, text=True)
                        if r.returncode != 0:
                            note.append(f"{tag}: {r.stderr.strip()[-150:]}")
                            continue
                        y = np.load(got).astype(np.float64)
                        err = float(np.abs(y - ref).max() / max(np.abs(ref).max(), 1e-30))
                        note.append(f"{tag} err {err:.1e}")
                        res[tag] = bench_exe(exe, f"{inname}={d}/in.npy", a.runs)
                        log(f"{pname} {prec} {tag}: {res[tag]} us (err {err:.1e})")
                        for v in a.variant if tag == "devproc" else []:
                            vt, ve = v.split(":", 1)
                            env = dict(x.split("=", 1) for x in ve.split(","))
                            t = bench_exe(exe, f"{inname}={d}/in.npy", a.runs, env)
                            note.append(f"{vt} {t:.1f}" if t else f"{vt} failed")
                            log(f"{pname} {prec} {vt}: {t} us")
                        if a.profile and tag == "devproc":
                            os.makedirs(a.profile, exist_ok=True)
                            r = subprocess.run([exe, "--in", f"{inname}={d}/in.npy", "--profile"],
                                               capture_output=True, text=True)
                            with open(f"{a.profile}/{pname}.{prec}.txt", "w") as f:
                                f.write(r.stdout + r.stderr)
                            log(profsum(r.stdout + r.stderr))
                        table(rows, a.out)
                for mode in ("eager", "ro", "ma"):
                    if mode not in modes:
                        continue
                    if time.time() - T0 > a.budget:
                        note.append(f"{mode}: time budget")
                        continue
                    try:
                        f = mc
                        if mode != "eager":
                            torch._dynamo.reset()
                            f = torch.compile(mc, mode="reduce-overhead" if mode == "ro" else
                                              "max-autotune")
                            t0 = time.time()
                            with torch.no_grad():
                                f(xh.cuda()).cpu()
                            log(f"{pname} {prec} {mode}: compiled in {time.time() - t0:.0f} s")
                        res[mode] = bench_torch(f, xh, a.runs)
                        log(f"{pname} {prec} {mode}: {res[mode]:.1f} us")
                        table(rows, a.out)
                    except Exception as e:
                        note.append(f"{mode} failed: {str(e).splitlines()[0][:80]}")
                        log(note[-1])
                table(rows, a.out)
            del mc
            torch.cuda.empty_cache()
    table(rows, a.out)


def table(rows, out):
    cell = lambda t: f"{t:.1f}" if t else "n/a"
    lines = ["| model | batch | precision | DevProc | DevProc tuned | PyTorch eager | "
             "compile reduce-overhead | compile max-autotune | DevProc / best PyTorch | notes |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, b, prec, r, note in rows:
        note = note if isinstance(note, str) else "; ".join(note)
        best = min([r[k] for k in ("eager", "ro", "ma") if r.get(k)], default=None)
        dp = min([r[k] for k in ("devproc", "tuned") if r.get(k)], default=None)
        lines.append(f"| {name} | {b} | {prec} | {cell(r.get('devproc'))} | {cell(r.get('tuned'))} | "
                     f"{cell(r.get('eager'))} | {cell(r.get('ro'))} | {cell(r.get('ma'))} | "
                     f"{f'{dp / best:.2f}' if dp and best else 'n/a'} | {note} |")
    text = "\n".join(lines) + "\n"
    log("\n" + text)
    with open(out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    sys.exit(main())
