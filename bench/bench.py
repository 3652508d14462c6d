#!/usr/bin/env python3
"""bench.py: host-to-host latency of the classify pipeline on a GPU machine:
DevProc (--target cuda) against PyTorch eager and torch.compile(mode=
"reduce-overhead"), at batch 1 and 256, on the same uint8 images.

Run from the repository root after ./configure && make (python3 with torch
and numpy, an NVIDIA GPU):  python3 bench/bench.py [--runs N] [--rounds R]

For each batch size it writes the pipeline (examples/classify/classify.dp
with the batch changed) and the MLP exported for that batch into
build/bench/bB/, builds it with `devproc build --target cuda`, checks its
outputs against PyTorch's (labels equal, logits within 1e-5 relative: fp32,
no TF32 on either side), then times, in R interleaved rounds of N runs
after warm-up: the DevProc executable's --bench (each run() timed from the
caller's host buffers to its host buffers: the copy in, the CUDA graph, the
copy back, argmax), and the same pipeline in PyTorch from the numpy array
to numpy results (torch.from_numpy(...).cuda(), the ops, .cpu()).  Each
mode's latency is the median of its rounds' medians.  Prints a table with
DevProc / best PyTorch mode."""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


def log(*a):
    print(*a, flush=True)


class MLP(torch.nn.Module):
    """The example's model (tools that made examples/classify/mlp.pt2:
    fc1 3072->512, relu, fc2 512->10), with its weights."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(3072, 512)
        self.fc2 = torch.nn.Linear(512, 10)
        ep = torch.export.load(os.path.join(ROOT, "examples/classify/mlp.pt2"))
        self.load_state_dict(ep.state_dict)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def export_mlp(model, batch, path):
    """The MLP exported for a batch size, as examples/classify/mlp.pt2 was
    for batch 1 (the training IR: linear, relu)."""
    ep = torch.export.export(model, (torch.zeros(batch, 3072),))
    torch.export.save(ep, path)


def write_dp(batch, folder):
    with open(os.path.join(ROOT, "examples/classify/classify.dp")) as f:
        text = f.read()
    text = text.replace("input image: u8[1,32,32,3]", "input image: u8[%d,32,32,3]" % batch)
    assert "u8[%d,32,32,3]" % batch in text
    with open(os.path.join(folder, "classify.dp"), "w") as f:
        f.write(text)


def pipeline(model):
    mean = torch.tensor(MEAN, device="cuda")
    std = torch.tensor(STD, device="cuda")

    def gpu(x):   # x: uint8 [B,32,32,3] on the GPU
        x = (x.float() * (1 / 255) - mean) / std
        x = x.permute(0, 3, 1, 2).flatten(1)
        logits = model(x)
        return logits.argmax(1), logits
    return gpu


def host_to_host(gpu):
    def run(img):
        x = torch.from_numpy(img).cuda()
        label, logits = gpu(x)
        return label.cpu().numpy(), logits.cpu().numpy()
    return run


def time_py(fn, img, runs, warmup):
    for _ in range(warmup):
        fn(img)
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(img)
        t.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(t)


def time_devproc(exe, npy, runs, env=None):
    out = subprocess.run([exe, "--in", "image=" + npy, "--bench", str(runs)], check=True,
                         capture_output=True, text=True, env=env).stdout
    m = re.search(r"bench: \d+ runs, median ([0-9.]+) us", out)
    assert m, out
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batches", default="1,256")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False   # the default; fp32 as DevProc
    torch.backends.cudnn.allow_tf32 = False
    log("torch", torch.__version__, "on", torch.cuda.get_device_name(0))
    rows = []
    for batch in [int(b) for b in args.batches.split(",")]:
        d = os.path.join(ROOT, "build/bench/b%d" % batch)
        os.makedirs(d, exist_ok=True)
        write_dp(batch, d)
        export_mlp(MLP().eval(), batch, os.path.join(d, "mlp.pt2"))
        b = os.path.join(d, "build")
        r = subprocess.run([os.path.join(ROOT, "bin/devproc"), "build",
                            os.path.join(d, "classify.dp"), "--target", "cuda", "-C", b],
                           capture_output=True, text=True)
        if r.returncode != 0:
            log(r.stdout, r.stderr)
            return 1
        exe = os.path.join(b, "classify/classify")
        rng = np.random.default_rng(batch)
        img = rng.integers(0, 256, size=(batch, 32, 32, 3), dtype=np.uint8)
        npy = os.path.join(d, "image.npy")
        np.save(npy, img)

        model = MLP().eval().cuda()
        eager = host_to_host(pipeline(model))
        compiled = host_to_host(torch.compile(pipeline(model), mode="reduce-overhead"))
        with torch.no_grad():
            ref_label, ref_logits = eager(img)
            # DevProc's outputs against PyTorch's
            subprocess.run([exe, "--in", "image=" + npy, "--out", "label=" + d + "/label.npy",
                            "--out", "logits=" + d + "/logits.npy"], check=True)
            got_label = np.load(d + "/label.npy")
            got_logits = np.load(d + "/logits.npy")
            err = float(np.abs(got_logits - ref_logits).max() / np.abs(ref_logits).max())
            same = bool((got_label == ref_label).all())
            log("batch %d: DevProc vs PyTorch: labels %s, max|err|/max|ref| = %.2e"
                % (batch, "equal" if same else "DIFFER", err))
            c_label, c_logits = compiled(img)   # compile and record first
            compiled(img)
            cerr = float(np.abs(c_logits - ref_logits).max() / np.abs(ref_logits).max())
            log("batch %d: torch.compile vs eager: max|err|/max|ref| = %.2e" % (batch, cerr))

            res = {"devproc": [], "eager": [], "compile": [], "devproc_nograph": []}
            for r in range(args.rounds):
                res["devproc"].append(time_devproc(exe, npy, args.runs))
                res["devproc_nograph"].append(
                    time_devproc(exe, npy, args.runs, dict(os.environ, DPRT_CUDA_GRAPHS="0")))
                res["eager"].append(time_py(eager, img, args.runs, 50))
                res["compile"].append(time_py(compiled, img, args.runs, 50))
                log("batch %d round %d: %s" % (batch, r, ", ".join(
                    "%s %.1f us" % (k, v[-1]) for k, v in res.items())))
        med = {k: statistics.median(v) for k, v in res.items()}
        best = min(med["eager"], med["compile"])
        rows.append((batch, med, best, same and err <= 1e-5))

    log("")
    log("host-to-host latency per inference, median of %d rounds x %d runs (us)"
        % (args.rounds, args.runs))
    log("| batch | DevProc | DevProc, no graph | PyTorch eager | torch.compile reduce-overhead "
        "| DevProc / best PyTorch | outputs = PyTorch |")
    log("|---|---|---|---|---|---|---|")
    for batch, med, best, ok in rows:
        log("| %d | %.1f | %.1f | %.1f | %.1f | %.3f | %s |" % (
            batch, med["devproc"], med["devproc_nograph"], med["eager"], med["compile"],
            med["devproc"] / best, "yes" if ok else "NO"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
