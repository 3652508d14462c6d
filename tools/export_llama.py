#!/usr/bin/env python3
"""Makes examples/llama: a Llama-architecture model (transformers'
LlamaForCausalLM, a small random config, seeded) and its tokenizer, with
PyTorch's greedy tokens for a prompt.

    python3 tools/export_llama.py OUT_DIR

Writes into OUT_DIR:
  tokenizer.json  a Llama-3 style byte-level BPE trained with `tokenizers`
                  on the repository's Markdown (tools/make_tokenizer_refs.py's
                  llama3(), vocabulary 4000)
  llama.pt2       torch.export of the model without a cache: input_ids
                  i64[1,32] -> logits f32[1,32,V] (use_cache=False, so each
                  step recomputes the sequence; causal, so zero padding after
                  the last token does not reach it)
  refs.txt        the prompt, its ids (tokenize with the <|begin_of_text|>
                  template), model.generate(do_sample=False)'s new tokens and
                  those of a manual argmax loop over the exported program with
                  the sequence zero-padded to 32, which must agree
"""
import os
import sys

import torch
from transformers import LlamaConfig, LlamaForCausalLM

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_tokenizer_refs  # noqa: E402

L = 32
NEW = 16
PROMPT = "The pipeline language compiles"


class Logits(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids):
        return self.m(input_ids=input_ids, use_cache=False).logits


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    import glob
    files = sorted(glob.glob("*.md") + glob.glob("formats/*.md") + glob.glob("*/README.md"))
    tok = make_tokenizer_refs.llama3(files)
    tok.save(os.path.join(out, "tokenizer.json"), pretty=False)
    vocab = tok.get_vocab_size()
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=64, intermediate_size=128,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=128, tie_word_embeddings=True,
                      bos_token_id=tok.token_to_id("<|begin_of_text|>"),
                      eos_token_id=tok.token_to_id("<|end_of_text|>"))
    model = LlamaForCausalLM(cfg).eval()
    w = Logits(model).eval()
    ex = torch.zeros(1, L, dtype=torch.int64)
    ep = torch.export.export(w, (ex,))
    torch.export.save(ep, os.path.join(out, "llama.pt2"))
    ids = tok.encode(PROMPT, add_special_tokens=True).ids
    with torch.no_grad():
        g = model.generate(torch.tensor([ids]), do_sample=False, max_new_tokens=NEW,
                           min_new_tokens=NEW, pad_token_id=0)
        hf = g[0, len(ids):].tolist()
        prog = ep.module()
        seq, man = list(ids), []
        for _ in range(NEW):
            x = torch.zeros(1, L, dtype=torch.int64)
            x[0, :len(seq)] = torch.tensor(seq)
            t = int(torch.argmax(prog(x)[0, len(seq) - 1]))
            man.append(t)
            seq.append(t)
    with open(os.path.join(out, "refs.txt"), "w") as f:
        f.write("prompt: %s\nids: %s\ngenerate: %s\nmanual: %s\n" % (
            PROMPT, " ".join(map(str, ids)), " ".join(map(str, hf)), " ".join(map(str, man))))
    print("vocab", vocab, "params", sum(p.numel() for p in model.parameters()))
    print("generate", hf)
    print("manual  ", man, "equal" if hf == man else "DIFFERENT")
    import transformers
    print("torch", torch.__version__, "transformers", transformers.__version__)


if __name__ == "__main__":
    main()
