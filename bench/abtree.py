#!/usr/bin/env python3
"""abtree.py: one build of a pipeline by two trees of DevProc, A (a commit)
and B (this checkout as it is), timed in alternating rounds.

Run from the repository root after ./configure && make:
    python3 bench/abtree.py BASE -C DIR [--rounds 3] [--runs 300] [--patch FILE]
                            [--exe REL] [--in NAME=FILE]... [--out NAME]...
                            -- BUILD-ARGUMENTS...

A is the tree at BASE (a commit, tag or branch): this checkout copied to
DIR/tree.A with its build outputs (so that make rebuilds only what BASE
changes), reset to BASE there and made.  With --patch FILE, A is instead
this checkout with FILE applied in reverse (patch -R -p1), BASE only its
name: for a machine the checkout reaches without its .git (the GPU
machine's copy), FILE made beforehand where git is, e.g.
`git diff HEAD~1 -- stages runtime >scratch/ab.patch`.  BUILD-ARGUMENTS go to `devproc
build` of each tree, A's into DIR/A and B's into DIR/B (the .dp files and
--target; the same mapping for both).  REL is the executable within those
(default NAME/NAME for the first .dp, NAME its file name less .dp; for a
prefill and a decoder built together, say --exe decode/decode).

Each --out NAME: both executables run once on the inputs (--in, passed to
them as given) and that output compared with bin/npycmp, exactly and then
at 1e-5 (a change that computes the same values in the same order gives
the same bits).  Then A, B, A, B... --rounds times, each figure the
executable's --bench median of --runs runs (host to host).  Prints each
round, the medians of the rounds and B's change over A.

On the GPU machine, after bench/llm.py --build-only --dir D (and, here,
`git diff HEAD~1 -- stages runtime >scratch/ab.patch`, scratch/ carried):
    python3 bench/abtree.py HEAD~1 -C /tmp/ab --patch scratch/ab.patch \\
        --exe decode/decode --in ids=D/tok.npy --in pos=D/tokpos.npy \\
        --out logits -- D/prefill.dp D/decode.dp --target D/bf16.map
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def die(msg):
    sys.exit("abtree.py: " + msg)


def run(cmd, what, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        die("%s failed:\n%s" % (what, (r.stdout + r.stderr)[-1500:]))
    return r.stdout


def tree(base, d, patch=None):
    """This checkout at commit base (or with patch applied in reverse) in
    d/tree.A, made; its bin/devproc and what it is."""
    if patch:
        if not os.path.isfile(patch):
            die("%s: no such file (--patch)" % patch)
        rev = "this checkout less " + os.path.basename(patch)
    else:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--verify", "-q",
                              base + "^{commit}"], capture_output=True, text=True).stdout.strip()
        if not rev:
            die("%s: no such commit" % base)
        rev = rev[:12]
    t = os.path.join(d, "tree.A")
    if os.path.exists(t):
        shutil.rmtree(t)
    skip = os.path.realpath(d)

    def ignore(src, names):   # d itself where it is inside the checkout; the
        # checkout's build/ (pipelines' outputs, which make neither needs nor
        # writes but clean removes)
        top = os.path.realpath(src) == os.path.realpath(ROOT)
        return [n for n in names if os.path.realpath(os.path.join(src, n)) == skip or
                (top and n == "build")]
    shutil.copytree(ROOT, t, symlinks=True, ignore=ignore)
    if patch:
        run(["patch", "-R", "-p1", "-s", "-d", t, "-i", os.path.abspath(patch)], "patch -R")
    else:
        run(["git", "-C", t, "reset", "-q", "--hard", rev], "git reset")
        run(["git", "-C", t, "clean", "-fdq"], "git clean")
    run(["make", "-C", t, "-j%d" % (os.cpu_count() or 2)], "make of " + base)
    return os.path.join(t, "bin", "devproc"), rev


def bench(exe, ins, runs):
    r = subprocess.run([exe] + ins + ["--bench", str(runs)], capture_output=True, text=True)
    m = re.search(r"^bench: .*median ([0-9.]+) us", r.stdout + r.stderr, re.M)
    if r.returncode or not m:
        die("%s: no figure:\n%s" % (exe, (r.stdout + r.stderr)[-800:]))
    return float(m.group(1))


def main():
    argv = sys.argv[1:]
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.rstrip())
        return
    if "--" not in argv:
        die("usage: abtree.py BASE -C DIR [options] -- BUILD-ARGUMENTS... (--help)")
    i = argv.index("--")
    ap = argparse.ArgumentParser(prog="abtree.py", description=__doc__.split("\n")[0],
                                 usage=__doc__.split("\n\n")[1].split("\n", 1)[1])
    ap.add_argument("base")
    ap.add_argument("-C", dest="dir", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--exe", default="")
    ap.add_argument("--in", dest="ins", action="append", default=[])
    ap.add_argument("--out", dest="outs", action="append", default=[])
    ap.add_argument("--patch", default=None)
    a = ap.parse_args(argv[:i])
    bargs = argv[i + 1:]
    dps = [x for x in bargs if x.endswith(".dp")]
    if not dps:
        die("no .dp among the build arguments")
    if a.rounds < 1 or a.runs < 1:
        die("--rounds and --runs take a positive count")
    exe = a.exe or "%s/%s" % ((os.path.basename(dps[0])[:-3],) * 2)
    os.makedirs(a.dir, exist_ok=True)
    dva, rev = tree(a.base, a.dir, a.patch)
    dvb = os.path.join(ROOT, "bin", "devproc")
    ex = {}
    for tag, dv in (("A", dva), ("B", dvb)):
        out = os.path.join(a.dir, tag)
        run([dv, "build"] + bargs + ["-C", out], "the build of " + tag)
        ex[tag] = os.path.join(out, exe)
        if not os.access(ex[tag], os.X_OK):
            die("%s: no such executable (--exe)" % ex[tag])
    ins = [y for x in a.ins for y in ("--in", x)]
    print("A: %s (%s), B: this checkout; %s" % (a.base, rev, exe))
    for name in a.outs:
        f = {}
        for tag in ("A", "B"):
            f[tag] = os.path.join(a.dir, "%s.%s.npy" % (tag, name))
            run([ex[tag]] + ins + ["--out", "%s=%s" % (name, f[tag])], "the run of " + tag)
        cmp = os.path.join(ROOT, "bin", "npycmp")
        same = subprocess.run([cmp, "--exact", f["A"], f["B"]], capture_output=True, text=True)
        near = subprocess.run([cmp, f["A"], f["B"]], capture_output=True, text=True)
        last = ((same.stdout + same.stderr).strip().splitlines() or [""])[-1]
        print("output %s: %s (%s)" % (name, "the same bits" if same.returncode == 0 else
                                     "within 1e-5" if near.returncode == 0 else "DIFFERENT",
                                     last))
    t = {"A": [], "B": []}
    for r in range(a.rounds):
        for tag in ("A", "B"):
            t[tag].append(bench(ex[tag], ins, a.runs))
        print("round %d: A %.1f us, B %.1f us" % (r + 1, t["A"][-1], t["B"][-1]))
    ma, mb = statistics.median(t["A"]), statistics.median(t["B"])
    print("median of %d rounds of %d runs: A %.1f us, B %.1f us (%+.1f%%)" %
          (a.rounds, a.runs, ma, mb, 100.0 * (mb - ma) / ma))


if __name__ == "__main__":
    main()
