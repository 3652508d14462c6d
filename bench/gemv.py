#!/usr/bin/env python3
"""gemv.py: the cuda target's matrix-vector products (one row, a decoder's
step) by precision: y = x W^T, x f32[1,K], W [N,K] (no bias), built with
targets/cuda (fp32) and with "tune cuda.precision bf16" (W read in bf16),
each program's --profile kernel time of the product (CUDA events, the
median of its runs) against the time to read W once at the device's
measured bandwidth (a device-to-device copy of 1 GiB: bytes read + written
/ time), and PyTorch's bf16 F.linear on the same shapes (CUDA events,
median of 200).  Run from the repository root on the GPU machine after make:
    python3 bench/gemv.py [--out DIR]"""
import argparse
import os
import re
import statistics
import subprocess

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPES = [(768, 768), (768, 2048), (2048, 768), (768, 32000)]


def bandwidth():
    a = torch.empty(1 << 28, device="cuda")   # 1 GiB
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    t = []
    for _ in range(10):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        b.copy_(a)
        e.record()
        e.synchronize()
        t.append(s.elapsed_time(e) / 1e3)
    return 2 * a.numel() * 4 / statistics.median(t)


def torch_us(K, N):
    w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(1, K, device="cuda", dtype=torch.bfloat16)
    for _ in range(20):
        torch.nn.functional.linear(x, w)
    t = []
    for _ in range(200):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.nn.functional.linear(x, w)
        e.record()
        e.synchronize()
        t.append(s.elapsed_time(e) * 1e3)
    return statistics.median(t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=f"{ROOT}/build/gemv")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    bw = bandwidth()
    print(f"device bandwidth (copy of 1 GiB): {bw / 1e9:.0f} GB/s")
    print("| K | N | bf16 weight bytes | floor at that bandwidth (us) | DevProc fp32 (us) | "
          "DevProc bf16 (us) | bf16 / floor | PyTorch bf16 F.linear (us) |")
    print("|---|---|---|---|---|---|---|---|")
    for K, N in SHAPES:
        torch.manual_seed(0)
        m = torch.nn.Linear(K, N, bias=False).eval()
        x = torch.randn(1, K)
        name = f"g{K}x{N}"
        torch.export.save(torch.export.export(m, (x,)), f"{a.out}/{name}.pt2")
        np.save(f"{a.out}/{name}.x.npy", x.numpy())
        got = {}
        for prec in ("fp32", "bf16"):
            d = f"{a.out}/{name}.{prec}"
            os.makedirs(d, exist_ok=True)
            with open(f"{d}/{name}.dp", "w") as f:
                f.write(f'input x: f32[1,{K}]\ny = model("{a.out}/{name}.pt2", x)\noutput y\n')
            with open(f"{ROOT}/targets/cuda") as f, open(f"{d}/m.map", "w") as g:
                g.write(f.read() + f"tune cuda.precision {prec}\n")
            subprocess.run([f"{ROOT}/bin/devproc", "build", f"{d}/{name}.dp", "--target",
                            f"{d}/m.map", "-C", f"{d}/b"], check=True, capture_output=True)
            r = subprocess.run([f"{d}/b/{name}/{name}", "--in", f"x={a.out}/{name}.x.npy",
                                "--profile"], capture_output=True, text=True)
            with open(f"{d}/profile.txt", "w") as f:
                f.write(r.stdout + r.stderr)
            us = None
            for line in r.stdout.splitlines():
                if "aten.linear" in line:
                    nums = re.findall(r"[0-9]+\.[0-9]+", line)
                    us = float(nums[0]) if nums else None
            got[prec] = us
        floor = N * K * 2 / bw * 1e6
        cell = lambda t: f"{t:.1f}" if t else "n/a"
        ratio = f"{got['bf16'] / floor:.2f}" if got["bf16"] else "n/a"
        print(f"| {K} | {N} | {N * K * 2} | {floor:.1f} | {cell(got['fp32'])} | "
              f"{cell(got['bf16'])} | {ratio} | {torch_us(K, N):.1f} |", flush=True)
    print(f"(profiles: {a.out}/*/profile.txt)")


if __name__ == "__main__":
    main()
