#!/bin/sh
# convblk.t: the 1×1 convolutions between activations blocked by 16
# (runtime/conv.c's blocked kernel where the CPU has AVX-512; tests/unit/
# nn.c, test_conv_blocked, TAP): our kernels only, blocks of 16.
DPRT_DNNL=0 DPRT_LAYOUT=16 exec ./bin/test-nn --blocked
