#!/bin/sh
# zoo.sh: builds DevProc and runs tools/zoo.py on the GPU machine (PyTorch,
# torchvision, transformers, nvcc); arguments go to zoo.py, e.g.
#   sh tools/zoo.sh --models resnet18 hf_llama --deadline 400
# The results table is tools/zoo/RESULTS.md (or --out).
set -e
cd "$(dirname "$0")/.."
[ -x bin/devproc ] || { ./configure >/dev/null && make -j"$(nproc)" >/dev/null; }
exec python3 tools/zoo.py "$@"
