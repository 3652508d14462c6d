#!/usr/bin/env python3
"""llm.py: a ~100M-parameter Llama (hidden 768, 12 layers, 12 heads,
intermediate 2048, vocabulary 32000, random weights, seed 0) at batch 1 in
fp32 and bf16: prefill tokens/s (a prompt of P = 128 tokens) and decode
us/token, for DevProc's cuda and cpu targets against transformers on the
same machine.

Run from the repository root after ./configure && make, on the GPU machine
(torch, transformers):
    python3 bench/llm.py [--out FILE.md] [--threads 16] [--skip-cpu | --cpu-only]
                         [--precisions fp32 bf16] [--build-only | --no-build]
                         [--profile | --profile-only] [--devproc-only] [--tune "KEY VALUE" ...]
                    [--kv-heads N]

bf16: DevProc built with targets/cuda plus "tune cuda.precision bf16"
(formats/target.md: the products in bf16 on the tensor cores, f32 sums;
the KV cache stays f32), PyTorch's model.to(torch.bfloat16); the cpu
target is fp32 only.  --cpu-only builds and times the cpu target alone
(no CUDA needed: DevProc cpu against PyTorch eager on the host CPU).
--build-only exports and builds (CPU work, which can overlap other work)
and writes the timed runs' inputs (DIR/tok.npy and DIR/tokpos.npy: one
token at position P; DIR/ids.npy and DIR/pos.npy: the prompt), as
bench/abtree.py's and bench/stamps_patch.py's recipes use them;
--no-build then times what it made.
--profile prints, for each cuda precision, where one decode step's time
goes: the decode executable's --profile (20 runs, eager, each op's kernels
timed by CUDA events: kernel time, not the CUDA graph's) as a table per op,
then summed by op name (an RMS norm's kernel shows as its last aten.mul,
a fused GEMV as its first aten.linear), and writes it to
DIR/profile.decode.PREC.txt;
--profile-only does that alone (no torch timings; builds unless --no-build).
--kv-heads N gives the model N key and value heads for its 12 query heads
(grouped-query attention, as Llama 3's; default 12, none grouped).
--devproc-only times DevProc alone (its check, its timings and the floor;
no transformers runs, whose torch.compile takes minutes).
--tune "KEY VALUE" (repeatable) adds `tune KEY VALUE` to the cuda builds'
mapping (e.g. "cuda.gemv.norm 0", each RMS norm its own kernel again); use
another --dir for such a variant.  DPRT_CUDA_ATTN=simt in the environment
runs the decode step's attention on the SIMT kernel it had before.

The model is exported twice with a static KV cache of C = 512 positions
(tools/export_llama.py's Cached: the keys and values in buffers written with
index_copy_, which DevProc keeps as the program's state, on the device for
cuda): prefill.pt2 takes ids i64[1,P] at positions pos i64[P] and gives the
last position's logits; decode.pt2 takes one token at its position.  Both
are built with `devproc build` for cuda and for cpu and timed with the
executable's --bench (the median of N runs after a warm-up, host to host:
the ids in, the logits out); a decode run is one token at position P (the
attention reads the whole static cache, masked, so every position costs
the same).  Against, in the same process and run:
  - transformers eager with its dynamic cache (DynamicCache): the prompt's
    forward, then one token at a time with past_key_values;
  - transformers with a StaticCache of C positions and the forward under
    torch.compile(mode="reduce-overhead", fullgraph=True) (CUDA graphs),
    the prompt and a decode step each compiled for their shape;
  - the bandwidth floor of decode: the bytes of the weights a token reads
    (every parameter but the input embedding, which is read one row per
    token) over the device's memory bandwidth measured here (a 1 GiB
    device-to-device copy, read plus written bytes over its median time);
  - on the host CPU, PyTorch eager (dynamic cache) at --threads threads
    against DevProc's cpu target at the same count.
Each torch figure is the median of 20 timed runs after 3 warm-ups
(decode: 64 steps after the prompt, each timed alone).  Each DevProc cuda
decode program's logits for one token at position 0 (an empty cache) are
compared with the same module's in PyTorch, fp32 (max|err|/max|ref|).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from export_llama import Cached  # noqa: E402

P, C = 128, 512
T0 = time.time()


def log(*a):
    print("[%5.0fs]" % (time.time() - T0), *a, flush=True)


KV_HEADS = 12   # --kv-heads


def model():
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=32000, hidden_size=768, intermediate_size=2048,
                      num_hidden_layers=12, num_attention_heads=12, num_key_value_heads=KV_HEADS,
                      max_position_embeddings=2048, tie_word_embeddings=False)
    return LlamaForCausalLM(cfg).eval()


def npy(path, a):
    np.save(path, a)
    return path


def devproc_bench(exe, ins, n, threads=None):
    cmd = [exe] + sum([["--in", "%s=%s" % kv] for kv in ins.items()], []) + ["--bench", str(n)]
    if threads:
        cmd += ["--threads", str(threads)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    m = re.search(r"bench: (\d+) runs, median ([0-9.]+) us", out)
    return float(m.group(2))


def timeit(fn, n=20, warm=3, cuda=True):
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(n):
        if cuda:
            torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        if cuda:
            torch.cuda.synchronize()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e6


def torch_eager(m, ids, dev):
    """prefill us, decode us/token: transformers eager, dynamic cache."""
    cuda = dev == "cuda"
    with torch.inference_mode():
        pre = timeit(lambda: m(ids, use_cache=True, logits_to_keep=1), cuda=cuda)
        out = m(ids, use_cache=True, logits_to_keep=1)
        past, tok, ts = out.past_key_values, out.logits[:, -1:].argmax(-1), []
        for k in range(64 + 3):
            if cuda:
                torch.cuda.synchronize()
            t = time.perf_counter()
            out = m(tok, past_key_values=past, use_cache=True)
            if cuda:
                torch.cuda.synchronize()
            if k >= 3:
                ts.append(time.perf_counter() - t)
            past, tok = out.past_key_values, out.logits[:, -1:].argmax(-1)
    return pre, statistics.median(ts) * 1e6


def torch_static_compiled(m, ids):
    """prefill us, decode us/token: StaticCache, forward under torch.compile."""
    from transformers import StaticCache
    cache = StaticCache(config=m.config, max_cache_len=C)
    fwd = torch.compile(m.forward, mode="reduce-overhead", fullgraph=True)
    pos = torch.arange(P, device="cuda")
    with torch.inference_mode():   # the cache's tensors made by an eager call
        m(input_ids=ids, cache_position=pos, past_key_values=cache, use_cache=True)
    with torch.inference_mode():
        def prefill():
            cache.reset()
            return fwd(input_ids=ids, cache_position=pos, past_key_values=cache,
                       use_cache=True, logits_to_keep=1)
        pre = timeit(prefill, warm=5)
        out = prefill()
        tok = out.logits[:, -1:].argmax(-1)
        ts = []
        for k in range(64 + 5):
            cp = torch.tensor([P + k], device="cuda")
            torch.cuda.synchronize()
            t = time.perf_counter()
            out = fwd(input_ids=tok, cache_position=cp, past_key_values=cache, use_cache=True)
            torch.cuda.synchronize()
            if k >= 5:
                ts.append(time.perf_counter() - t)
            tok = out.logits[:, -1:].argmax(-1).clone()
    return pre, statistics.median(ts) * 1e6


def bandwidth():
    x = torch.empty(2 ** 28, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    t = timeit(lambda: y.copy_(x), n=20, warm=3)
    return 2 * x.numel() * 4 / (t / 1e6)


def inputs(d):
    """The timed runs' inputs, written into d (also by --build-only, for
    bench/abtree.py and bench/stamps_patch.py's runs): the prompt's ids and
    positions, and one decode token at position P.  Returns the prefill's
    and the decode's {name: file}, the ids and the token."""
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 32000, (1, P), generator=g)
    tok = torch.randint(0, 32000, (1, 1), generator=g)
    ins_p = {"ids": npy(os.path.join(d, "ids.npy"), ids.numpy()),
             "pos": npy(os.path.join(d, "pos.npy"), np.arange(P, dtype=np.int64))}
    ins_d = {"ids": npy(os.path.join(d, "tok.npy"), tok.numpy()),
             "pos": npy(os.path.join(d, "tokpos.npy"), np.array([P], dtype=np.int64))}
    return ins_p, ins_d, ids, tok


def profile(d, prec):
    """One decode step's --profile for a cuda build: the table per op, then
    the cuda time summed by op name (largest first)."""
    exe = os.path.join(d, "cuda." + prec, "decode", "decode")
    if not os.path.exists(exe):
        log("profile", prec, ": no", exe)
        return
    ins = {"ids": npy(os.path.join(d, "ptok.npy"), np.array([[1]], dtype=np.int64)),
           "pos": npy(os.path.join(d, "ppos.npy"), np.array([P], dtype=np.int64))}
    cmd = [exe] + sum([["--in", "%s=%s" % kv] for kv in ins.items()], []) + ["--profile"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        log("profile", prec, "failed:", (r.stdout + r.stderr)[-1500:])
        return
    sums, counts = {}, {}
    for line in r.stdout.splitlines():
        f = line.split(None, 4)
        if len(f) == 5 and f[0].isdigit() and f[1] == "cuda":
            sums[f[4]] = sums.get(f[4], 0.0) + float(f[2])
            counts[f[4]] = counts.get(f[4], 0) + 1
    lines = [r.stdout.rstrip(), "", "cuda time of one decode step summed by op name (%s):" % prec,
             "%10s %6s  %s" % ("us", "ops", "name")]
    for name, us in sorted(sums.items(), key=lambda kv: -kv[1]):
        lines.append("%10.1f %6d  %s" % (us, counts[name], name))
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(d, "profile.decode.%s.txt" % prec), "w") as f:
        f.write(text + "\n")


def build(d, a):
    """The two exports, their pipelines, the builds (cuda per precision, cpu)."""
    m = model()
    for name, s, last in (("prefill", P, True), ("decode", 1, False)):
        c = Cached(m, C, last).eval()
        ep = torch.export.export(c, (torch.zeros(1, s, dtype=torch.int64),
                                     torch.arange(s, dtype=torch.int64)))
        torch.export.save(ep, os.path.join(d, name + ".pt2"))
        with open(os.path.join(d, name + ".dp"), "w") as f:
            f.write("input ids: i64[1,%d]\ninput pos: i64[%d]\nlogits = model(\"%s.pt2\", ids, pos)\n"
                    "output logits\n" % (s, s, name))
    log("exported")
    builds = [] if a.cpu_only else [("cuda", p) for p in a.precisions]
    builds += [] if a.skip_cpu else [("cpu", "fp32")]
    for t, prec in builds:
        target = t
        if t == "cuda" and (prec != "fp32" or a.tune):
            target = os.path.join(d, prec + ".map")
            with open(os.path.join(ROOT, "targets", "cuda")) as f, open(target, "w") as g:
                g.write(f.read() + ("tune cuda.precision %s\n" % prec if prec != "fp32" else "") +
                        "".join("tune %s\n" % x for x in a.tune))
        t0 = time.time()
        r = subprocess.run([os.path.join(ROOT, "bin", "devproc"), "build",
                            os.path.join(d, "prefill.dp"), os.path.join(d, "decode.dp"),
                            "--target", target, "-C", os.path.join(d, t + "." + prec)],
                           capture_output=True, text=True)
        if r.returncode:
            log("build", t, prec, "failed:", (r.stdout + r.stderr)[-1500:])
        else:
            log("built", t, prec, "%.0f s" % (time.time() - t0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--kv-heads", type=int, default=12,
                    help="key and value heads (a divisor of 12; fewer: grouped-query attention)")
    ap.add_argument("--skip-cpu", action="store_true")
    ap.add_argument("--cpu-only", action="store_true",
                    help="the cpu target against PyTorch on the host CPU alone (no CUDA)")
    ap.add_argument("--precisions", nargs="+", default=["fp32", "bf16"])
    ap.add_argument("--build-only", action="store_true", help="export and build, time nothing")
    ap.add_argument("--no-build", action="store_true", help="time what --build-only made")
    ap.add_argument("--dir", default=os.path.join(ROOT, "build", "bench-llm"))
    ap.add_argument("--profile", action="store_true",
                    help="also print where a decode step's time goes (the executable's --profile)")
    ap.add_argument("--profile-only", action="store_true",
                    help="only that (no torch timings)")
    ap.add_argument("--devproc-only", action="store_true",
                    help="DevProc's timings, its check and the floor; no transformers runs")
    ap.add_argument("--tune", action="append", default=[], metavar="'KEY VALUE'",
                    help="a tune line for the cuda builds' mapping (repeatable)")
    a = ap.parse_args()
    global KV_HEADS
    if a.kv_heads < 1 or 12 % a.kv_heads:
        ap.error("--kv-heads must divide 12")
    KV_HEADS = a.kv_heads
    d = a.dir
    os.makedirs(d, exist_ok=True)
    if not a.no_build:
        build(d, a)
    ins_p, ins_d, ids, tok = inputs(d)
    if a.build_only:
        return
    if a.profile or a.profile_only:
        for prec in [] if a.cpu_only else a.precisions:
            profile(d, prec)
    if a.profile_only:
        return
    m = model()
    nparam = sum(p.numel() for p in m.parameters())
    wbytes = (nparam - m.model.embed_tokens.weight.numel()) * 4
    log("params", nparam, "decode weight bytes (fp32)", wbytes)

    # check: each decode program from zeros (one token at position 0)
    # against the same module in PyTorch, fp32
    with torch.no_grad():
        ref = Cached(m, C).eval()(tok, torch.tensor([0])).numpy()
    z = {"ids": ins_d["ids"], "pos": npy(os.path.join(d, "pos0.npy"), np.array([0], dtype=np.int64))}
    errs = {}
    for prec in (["cpu"] if not a.skip_cpu else []) + ([] if a.cpu_only else a.precisions):
        exe = os.path.join(d, ("cpu.fp32" if prec == "cpu" else "cuda." + prec), "decode", "decode")
        o = os.path.join(d, "check.%s.npy" % prec)
        if not os.path.exists(exe):
            continue
        subprocess.run([exe, "--in", "ids=" + z["ids"], "--in", "pos=" + z["pos"],
                        "--out", "logits=" + o], check=True, stdout=subprocess.DEVNULL)
        errs[prec] = float(np.abs(np.load(o) - ref).max() / np.abs(ref).max())
        log("decode check", prec, "max|err|/max|ref| against fp32 PyTorch %.2e" % errs[prec])

    res = {}
    bw = float("nan") if a.cpu_only else bandwidth()
    log("bandwidth %.0f GB/s" % (bw / 1e9))
    mc = None if a.cpu_only else m.to("cuda")
    idc = None if a.cpu_only else ids.to("cuda")
    for prec in [] if a.cpu_only else a.precisions:
        dt = {"fp32": torch.float32, "bf16": torch.bfloat16}[prec]
        exe = os.path.join(d, "cuda." + prec, "%s", "%s")
        if os.path.exists(exe % ("decode", "decode")):
            res["dp_cuda", prec] = (devproc_bench(exe % ("prefill", "prefill"), ins_p, 50),
                                    devproc_bench(exe % ("decode", "decode"), ins_d, 300))
            log("devproc cuda", prec, res["dp_cuda", prec])
        if a.devproc_only:
            continue
        mp = mc.to(dt)
        res["eager_cuda", prec] = torch_eager(mp, idc, "cuda")
        log("eager cuda", prec, res["eager_cuda", prec])
        try:
            res["compiled_cuda", prec] = torch_static_compiled(mp, idc)
        except Exception as e:   # reported, not left out
            log("static+compile failed:", repr(e)[:300])
            res["compiled_cuda", prec] = (float("nan"), float("nan"))
        log("static+compile cuda", prec, res["compiled_cuda", prec])
        torch._dynamo.reset()
    if not a.skip_cpu:
        m = model()   # the same weights, fp32 (mc was rounded to bf16 in place)
        torch.set_num_threads(a.threads)
        exe = os.path.join(d, "cpu.fp32", "%s", "%s")
        res["dp_cpu", "fp32"] = (devproc_bench(exe % ("prefill", "prefill"), ins_p, 5, a.threads),
                                 devproc_bench(exe % ("decode", "decode"), ins_d, 50, a.threads))
        log("devproc cpu", res["dp_cpu", "fp32"])
        if not a.devproc_only:
            res["eager_cpu", "fp32"] = torch_eager(m, ids, "cpu")
            log("eager cpu", res["eager_cpu", "fp32"])

    names = {"dp_cuda": "DevProc cuda (static cache, state on the device)",
             "eager_cuda": "transformers eager, dynamic cache (cuda)",
             "compiled_cuda": "transformers static cache + torch.compile reduce-overhead (cuda)",
             "dp_cpu": "DevProc cpu, %d threads (static cache)" % a.threads,
             "eager_cpu": "PyTorch eager, dynamic cache, %d threads (cpu)" % a.threads}
    lines = ["| mode | precision | prefill P=%d (ms) | prefill tokens/s | decode us/token | "
             "decode tokens/s | decode / floor |" % P, "|---|---|---|---|---|---|---|"]
    for (k, prec), (pre, dec) in res.items():
        floor = wbytes / (2 if prec == "bf16" else 1) / bw * 1e6
        lines.append("| %s | %s | %.2f | %.0f | %.1f | %.0f | %s |" % (
            names[k], prec, pre / 1e3, P / (pre / 1e6), dec, 1e6 / dec,
            "%.2f" % (dec / floor) if k.endswith("cuda") else "n/a"))
    lines.append("")
    lines.append("%d parameters; a decode token reads %.1f MB of weights in fp32 (%.1f in bf16); "
                 "device bandwidth %.0f GB/s (1 GiB copy): floor %.1f us/token fp32, %.1f bf16; "
                 "DevProc decode logits vs PyTorch fp32 max|err|/max|ref|: %s; torch %s, %s" % (
                     nparam, wbytes / 1e6, wbytes / 2e6, bw / 1e9, wbytes / bw * 1e6,
                     wbytes / 2 / bw * 1e6,
                     ", ".join("%s %.1e" % kv for kv in errs.items()), torch.__version__,
                     "cpu only" if a.cpu_only else torch.cuda.get_device_name()))
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
