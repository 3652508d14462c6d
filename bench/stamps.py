#!/usr/bin/env python3
"""stamps.py STAMPS GPU.cu: where a CUDA program's run goes, kernel by kernel,
from the in-graph timestamps of a tree patched by bench/stamps_patch.py
(STAMPS and STAMPS.attn, written by its executable; GPU.cu the program's
generated 5.gpu.cu, whose launches name the kernels).

The records are sorted by the time each block left its wait (the kernels
before it done) and cut into kernels (runs of one grid and block size, as
many records as blocks) and runs of the program (each beginning at the
first launch's kernel); the warm-up run is left out.  A GEMV kernel
with a tail (lower_gpu's mm.c) waits twice, before its sums and before the
tail's elements: its second records are a row of their own, NAME_tail.  For each kernel of a
run, the means over the runs of: "to next", from its first block leaving
the wait to the next kernel's (its share of the run: its own work after the
wait, then the chain to the next); "spread", from its first block leaving
the wait to its last; "arr0" and "arrN", from the kernel before leaving its
wait to this kernel's first and last block arriving at theirs (a kernel
launched early arrives about 1 us after; one that arrives later was held
back: no room on the SMs, or its launch waited).  Then the shares summed by
kind of kernel.
"""
import re
import statistics
import struct
import sys

if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
    sys.exit(__doc__)

def load(p, src):
    b = open(p, "rb").read()
    n = int.from_bytes(b[:4], "little")
    m = (len(b) - 4) // 32
    v = struct.unpack("<%dQ" % (4 * m), b[4:4 + 32 * m])
    return n, [(v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3], src) for i in range(m)]

n0, a = load(sys.argv[1], 0)
n1, b = load(sys.argv[1] + ".attn", 1)
print("records: %d program, %d attention" % (n0, n1))
r = sorted(a + b, key=lambda x: x[1])
d = [y[1] - x[1] for x, y in zip(r, r[1:]) if y[1] > x[1]]
print("globaltimer: smallest step seen %d ns" % (min(d) if d else -1))
# kernels: runs of one signature and source, at most grid blocks, no gap > 2 us
ks = []
cur = None
for t0, t1, sig, sm, src in r:
    grid = sig & 0xffffffff
    if cur is None or sig != cur["sig"] or src != cur["src"] or cur["n"] >= grid:
        cur = dict(sig=sig, src=src, n=0, t1min=t1, t1max=t1, t0min=t0, t0max=t0)
        ks.append(cur)
    cur["n"] += 1
    cur["t1max"] = max(cur["t1max"], t1)
    cur["t0min"] = min(cur["t0min"], t0)
    cur["t0max"] = max(cur["t0max"], t0)
# steps: a gap of more than 15 us between kernels' first releases
# the launches of the program, in order
cu = open(sys.argv[2]).read()
run = cu[cu.find("#ifdef DP_HOST"):]
# a GEMV kernel with a tail (mm.c: its KERNEL_body, then the tail's elements)
# waits twice, before its sums and again before the tail
tails = set(re.findall(r"\n(k\w+)_body\(", cu))
L = []
for m in re.finditer(r"DP_LAUNCH\((k\w+), (dim3\([^)]*\)|\d+), (\d+), ([01])\)|dprt_cuda_sdpa\(g, &(attn\d+)", run):
    if m.group(5):
        L.append((m.group(5), None, 1)); continue
    gs = m.group(2)
    g = 1
    for x in re.findall(r"\d+", gs[4:] if gs.startswith("dim3") else gs):
        g *= int(x)
    L.append((m.group(1), g * 1000000 + int(m.group(3)), int(m.group(4))))
    if m.group(1) in tails:   # its second wait, before the tail: a second record a block
        L.append((m.group(1) + "_tail", g * 1000000 + int(m.group(3)), int(m.group(4))))
def sigof(l):
    return None if l[1] is None else (l[1] // 1000000) | (l[1] % 1000000) << 32
def fits(k, l):
    return (k["src"] == 1) if l[1] is None else (k["src"] == 0 and k["sig"] == sigof(l))
# steps: each begins at a kernel of the first launch's signature followed by
# one of the second's (a copy-in kernel of a step's first input has the
# signature of its others)
steps, s = [], []
for i, k in enumerate(ks):
    if s and fits(k, L[0]) and i + 1 < len(ks) and fits(ks[i + 1], L[1]):
        steps.append(s); s = []
    s.append(k)
steps.append(s)
lens = [len(x) for x in steps]
mode = max(set(lens), key=lens.count)
good = [x for x in steps if len(x) == mode][1:]   # the first (warm-up) left out
print("steps: %d, kernels a step: %s; using %d steps of %d" % (len(steps), sorted(set(lens)), len(good), mode))
names, j = [], 0
for k in good[0]:
    key = (k["sig"] & 0xffffffff) * 1000000 + (k["sig"] >> 32)
    nm = "?"
    for jj in range(j, len(L)):
        if (k["src"] == 1 and L[jj][1] is None) or (k["src"] == 0 and L[jj][1] == key):
            nm = L[jj][0]; j = jj + 1; break
    names.append(nm)
mean = statistics.mean
def col(f, i):
    return [f(x, i) for x in good]
iv = [mean(col(lambda x, i: x[i + 1]["t1min"] - x[i]["t1min"], i)) for i in range(mode - 1)]
print("step (first release to last kernel's first release): mean %.1f us" % (mean([x[-1]["t1min"] - x[0]["t1min"] for x in good]) / 1e3))
print("%3s %-22s %6s %9s %8s %8s %8s" % ("#", "kernel", "blocks", "to next", "spread", "arr0", "arrN"))
agg = {}
for i in range(mode):
    k = good[0][i]
    nx = iv[i] / 1e3 if i < mode - 1 else float("nan")
    arr0 = mean(col(lambda x, i: x[i]["t0min"] - x[i - 1]["t1min"], i)) / 1e3 if i else float("nan")
    arrN = mean(col(lambda x, i: x[i]["t0max"] - x[i - 1]["t1min"], i)) / 1e3 if i else float("nan")
    spr = mean(col(lambda x, i: x[i]["t1max"] - x[i]["t1min"], i)) / 1e3
    print("%3d %-22s %6d %9.2f %8.2f %8.2f %8.2f" % (i, names[i][:22], k["n"], nx, spr, arr0, arrN))
    base = re.sub(r"^k\d+_", "", names[i]); base = re.sub(r"^attn\d+", "attention", base)
    if i < mode - 1:
        agg.setdefault(base, []).append(nx)
print("by kind: kernels, total us (to next), mean")
for b2, v in sorted(agg.items(), key=lambda x: -sum(x[1])):
    print("  %-20s %3d %8.1f %6.2f" % (b2, len(v), sum(v), mean(v)))
