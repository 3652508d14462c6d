#!/usr/bin/env python3
"""PyTorch's greedy tokens for tests/generate.t: tests/data/tinylm.pt2
(ids i64[1,32] -> logits f32[1,32,256]) loaded with torch.export.load and
run as a manual argmax loop: the prompt, then each step the argmax of the
last position's logits appended, the sequence zero-padded to 32 as the
program's input is (the model is causal: the padding after the last token
does not reach it).

    python3 tools/make_generate_refs.py OUT.txt

Writes one line per prompt: "PROMPT_TOKENS : GENERATED_TOKENS".
"""
import sys

import torch

PROMPTS = [[3, 1, 4, 1, 5], [7], [200, 100, 50, 25, 12, 6, 3, 1, 0, 255]]
STEPS = 12


def main():
    m = torch.export.load("tests/data/tinylm.pt2").module()
    lines = []
    with torch.no_grad():
        for p in PROMPTS:
            seq = list(p)
            out = []
            for _ in range(STEPS):
                ids = torch.zeros(1, 32, dtype=torch.int64)
                ids[0, :len(seq)] = torch.tensor(seq)
                logits = m(ids)
                t = int(torch.argmax(logits[0, len(seq) - 1]))
                out.append(t)
                seq.append(t)
            lines.append(" ".join(map(str, p)) + " : " + " ".join(map(str, out)))
    with open(sys.argv[1], "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print("torch", torch.__version__)


if __name__ == "__main__":
    main()
