#!/usr/bin/env python3
"""ab.py: one pipeline built for cuda with two mappings, A and B, that
differ by `tune` lines, timed in alternating rounds on the GPU machine.

Run from the repository root after make, once bench/gpu.py --export-only
(or a gpu.py run) has written build/bench-gpu/NAME_bB/:
    python3 bench/ab.py NAME_bB [NAME_bB ...] [--precisions fp32,tf32]
                        [--a "tune KEY VALUE"]... [--b "tune KEY VALUE"]...
                        [--rounds 3] [--runs N] [--out FILE.md]
or any pipeline DIR/NAME.dp, its inputs and output named:
    python3 bench/ab.py decode --dir build/bench-llm --in ids=build/bench-llm/tok.npy
                        --in pos=build/bench-llm/tokpos.npy --output logits
                        --precisions bf16,fp32 --a "tune cuda.gemv.tail 0"

Each pipeline is built with targets/cuda (plus "tune cuda.precision P"
for a precision other than fp32) and A's lines, and again with B's, into
DIR/ab.PREC.{a,b}/; both executables are run once on the pipeline's
inputs and their outputs compared with bin/npycmp (exact,
then 1e-5: a change of kernels that computes the same values, in the same
order, gives the same bits); then A, B, A, B... --rounds times each, each
figure the executable's --bench median of --runs runs (host to host, us).
Prints one line per pipeline and precision: the rounds and their medians
(and appends them as a table to --out)."""
import argparse
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build(d, pname, prec, lines, tag):
    bd = f"{d}/ab.{prec}.{tag}"
    os.makedirs(bd, exist_ok=True)
    with open(f"{ROOT}/targets/cuda") as f, open(f"{bd}/cuda.map", "w") as g:
        g.write(f.read())
        if prec != "fp32":
            g.write(f"tune cuda.precision {prec}\n")
        for line in lines:
            g.write(line + "\n")
    r = subprocess.run([f"{ROOT}/bin/devproc", "build", f"{d}/{pname}.dp", "--target",
                        f"{bd}/cuda.map", "-C", f"{bd}/b"], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"ab.py: {pname} {prec} {tag}: build failed:\n{(r.stdout + r.stderr)[-800:]}")
    return f"{bd}/b/{pname}/{pname}", bd


def inarg(d, pname):
    with open(f"{d}/{pname}.dp") as f:
        name = f.readline().split()[1].rstrip(":")
    return [f"{name}={d}/in.npy"]


def ins(args):
    return sum([["--in", x] for x in args], [])


def bench(exe, args, runs):
    r = subprocess.run([exe] + ins(args) + ["--bench", str(runs)], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("bench:") and "median" in line:
            return float(line.split("median ")[1].split()[0])
    sys.exit(f"ab.py: {exe}: no figure:\n{(r.stdout + r.stderr)[-500:]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pipelines", nargs="+")
    ap.add_argument("--precisions", default="fp32")
    ap.add_argument("--a", action="append", default=[])
    ap.add_argument("--b", action="append", default=[])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--out", default=f"{ROOT}/build/bench-gpu/ab.md")
    ap.add_argument("--dir", help="the pipelines' folder (default build/bench-gpu/NAME)")
    ap.add_argument("--in", dest="ins", action="append", default=[], metavar="NAME=FILE",
                    help="an input (default: the first input from DIR/in.npy)")
    ap.add_argument("--output", default="y", help="the output compared (default y)")
    a = ap.parse_args()
    rows = []
    for pname in a.pipelines:
        d = os.path.abspath(a.dir) if a.dir else f"{ROOT}/build/bench-gpu/{pname}"
        arg = a.ins or inarg(d, pname)
        for prec in a.precisions.split(","):
            exes = {}
            for tag, lines in (("a", a.a), ("b", a.b)):
                exe, bd = build(d, pname, prec, lines, tag)
                got = f"{bd}/y.npy"
                r = subprocess.run([exe] + ins(arg) + ["--out", f"{a.output}={got}"],
                                   capture_output=True, text=True)
                if r.returncode:
                    sys.exit(f"ab.py: {exe}: {r.stderr.strip()[-300:]}")
                exes[tag] = (exe, got)
            same = subprocess.run([f"{ROOT}/bin/npycmp", "--exact", exes["b"][1], exes["a"][1]],
                                  capture_output=True, text=True)
            close = subprocess.run([f"{ROOT}/bin/npycmp", exes["b"][1], exes["a"][1]],
                                   capture_output=True, text=True)
            cmp = "same bits" if same.returncode == 0 else \
                f"within 1e-5 ({close.stdout.strip()})" if close.returncode == 0 else \
                f"DIFFERENT ({close.stdout.strip()})"
            t = {"a": [], "b": []}
            for _ in range(a.rounds):
                for tag in ("a", "b"):
                    t[tag].append(bench(exes[tag][0], arg, a.runs))
            ma, mb = statistics.median(t["a"]), statistics.median(t["b"])
            row = (f"| {pname} | {prec} | {' / '.join('%.1f' % x for x in t['a'])} | {ma:.1f} | "
                   f"{' / '.join('%.1f' % x for x in t['b'])} | {mb:.1f} ({100 * (mb - ma) / ma:+.1f}%) | {cmp} |")
            print(row, flush=True)
            rows.append(row)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "a") as f:
        f.write(f"A: {a.a or ['targets/cuda']}, B: {a.b}, --bench {a.runs}, {a.rounds} rounds\n\n"
                "| pipeline | precision | A (rounds) | A median | B (rounds) | B median | outputs |\n"
                "|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n")


if __name__ == "__main__":
    main()
