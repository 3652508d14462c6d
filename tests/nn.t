#!/bin/sh
# nn.t: the neural-network kernels' unit tests (tests/unit/nn.c, TAP).
exec ./bin/test-nn
