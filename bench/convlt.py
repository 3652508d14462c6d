#!/usr/bin/env python3
"""convlt.py: the shapes of bench/convlt.cu through PyTorch's F.conv2d in
TF32 (cuDNN, torch.backends.cudnn.benchmark), NCHW and channels-last, the
median of 20 CUDA-event timings after 5; beside ./convlt's lines.
    python3 bench/convlt.py [N]"""
import sys
import torch
import torch.nn.functional as F

SHAPES = [("r50", 3, 224, 64, 7, 2), ("r50", 64, 56, 64, 1, 1), ("r50", 64, 56, 64, 3, 1),
          ("r50", 64, 56, 256, 1, 1), ("r50", 256, 56, 64, 1, 1), ("r50", 256, 56, 128, 1, 1),
          ("r50", 128, 56, 128, 3, 2), ("r50", 256, 56, 512, 1, 2), ("r50", 128, 28, 512, 1, 1),
          ("r50", 512, 28, 128, 1, 1), ("r50", 128, 28, 128, 3, 1), ("r50", 512, 28, 256, 1, 1),
          ("r50", 256, 28, 256, 3, 2), ("r50", 512, 28, 1024, 1, 2), ("r50", 256, 14, 1024, 1, 1),
          ("r50", 1024, 14, 256, 1, 1), ("r50", 256, 14, 256, 3, 1), ("r50", 1024, 14, 512, 1, 1),
          ("r50", 512, 14, 512, 3, 2), ("r50", 1024, 14, 2048, 1, 2), ("r50", 512, 7, 2048, 1, 1),
          ("r50", 2048, 7, 512, 1, 1), ("r50", 512, 7, 512, 3, 1),
          ("r18", 64, 56, 64, 3, 1), ("r18", 64, 56, 128, 3, 2), ("r18", 128, 28, 128, 3, 1),
          ("r18", 128, 28, 256, 3, 2), ("r18", 256, 14, 256, 3, 1), ("r18", 256, 14, 512, 3, 2),
          ("r18", 512, 7, 512, 3, 1), ("r18", 64, 56, 128, 1, 2)]


def timed(f):
    for _ in range(5):
        f()
    ts = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        f()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1000)
    return sorted(ts)[10]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    sums = {}
    print("batch %d; us: cuDNN NCHW, channels-last" % n)
    with torch.no_grad():
        for net, c, h, o, k, s in SHAPES:
            x = torch.randn(n, c, h, h, device="cuda")
            w = torch.randn(o, c, k, k, device="cuda")
            bias = torch.randn(o, device="cuda")
            t1 = timed(lambda: F.conv2d(x, w, bias, s, k // 2))
            xc, wc = x.to(memory_format=torch.channels_last), w.to(memory_format=torch.channels_last)
            t2 = timed(lambda: F.conv2d(xc, wc, bias, s, k // 2))
            print("%s %4d->%4d k%d s%d  nchw %8.1f  nhwc %8.1f" % (net, c, o, k, s, t1, t2))
            s0 = sums.setdefault(net, [0.0, 0.0])
            s0[0] += t1
            s0[1] += t2
    print("sums: " + "; ".join("%s nchw %.1f nhwc %.1f" % (k, v[0], v[1]) for k, v in sums.items()))


main()
