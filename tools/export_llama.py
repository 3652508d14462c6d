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
                  the last token does not reach it).  Exported as transformers
                  runs it (not under torch.no_grad), so its rotary embedding
                  is a wrap_with_set_grad_enabled region import inlines.
  llama_kv.pt2    the same model with a static KV cache of 32 positions:
                  Cached, its forward written out here on the model's own
                  modules (embedding, rotary embedding, norms, projections,
                  MLPs, transformers' apply_rotary_pos_emb), keys and values
                  kept in buffers it writes with index_copy_; one token ids
                  i64[1,1] at position pos i64[1] -> logits f32[1,1,V], the
                  attention mask (positions <= pos) made in the graph
  llama_prefill.pt2  Cached again, the same module and buffers, taking P = 8
                  tokens a run: ids i64[1,8] at positions pos i64[8] -> logits
                  f32[1,8,V]; with llama_kv.pt2 the two entries of
                  llama_kv.dp (prefill, then decode), sharing the weights and
                  the cache
  entry/          the test references of tests/entry.t: PyTorch's logits of
                  Cached run on the prompt zero-padded to 8 at positions 0..7
                  (prefill_logits.npy, inputs prefill_ids.npy and
                  prefill_pos.npy), then on the greedy next token at the
                  prompt's length (decode_logits.npy, decode_tok.npy,
                  decode_pos.npy), one module, its cache kept between calls
  refs.txt        the prompt, its ids (tokenize with the <|begin_of_text|>
                  template), model.generate(do_sample=False)'s new tokens,
                  those of a manual argmax loop over llama.pt2 with the
                  sequence zero-padded to 32, and those of a loop over
                  llama_kv.pt2 (the prompt one token at a time, then each new
                  token) and those of the prefill-then-decode loop over
                  Cached (the prompt 8 tokens a call, zero-padded, then each
                  new token), all four of which must agree

An OUT_DIR that holds a tokenizer.json keeps it (the vocabulary the
archives were made with) rather than training a new one.

The weights are drawn with a larger initializer_range than transformers'
default 0.02, which leaves the logits of so small a model nearly flat and
its greedy chain one token repeated: the first of INITS whose chain has at
least 8 distinct tokens and whose every step's best logit leads the next by
at least 1e-3 (so that float rounding cannot flip a choice); refs.txt names
it.
"""
import os
import sys

import torch
import torch.nn.functional as F
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_tokenizer_refs  # noqa: E402

L = 32
P = 8      # llama_prefill.pt2's tokens per run
NEW = 16
PROMPT = "The pipeline language compiles"
INITS = (0.25, 0.15, 0.4, 0.1, 0.6)   # the first whose chain is a strong check


class Logits(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids):
        return self.m(input_ids=input_ids, use_cache=False).logits


class Cached(torch.nn.Module):
    """The model's forward written out with a static cache of n positions
    kept in buffers (written with index_copy_), on the model's own modules
    and weights: tokens ids i64[1,S] at positions pos i64[S] -> logits
    f32[1,S,V] (last: f32[1,1,V], the last position's).  bench/llm.py uses
    it too."""

    def __init__(self, m, n=L, last=False):
        super().__init__()
        self.m = m
        self.n, self.last = n, last
        cfg = m.config
        self.nh, self.nkv = cfg.num_attention_heads, cfg.num_key_value_heads
        self.hd = cfg.hidden_size // self.nh
        for i in range(cfg.num_hidden_layers):
            self.register_buffer("k%d" % i, torch.zeros(1, self.nkv, n, self.hd))
            self.register_buffer("v%d" % i, torch.zeros(1, self.nkv, n, self.hd))

    def forward(self, ids, pos):
        s, nh, nkv, hd, n = ids.shape[1], self.nh, self.nkv, self.hd, self.n
        mm = self.m.model
        h = mm.embed_tokens(ids)
        cos, sin = mm.rotary_emb(h, position_ids=pos[None, :])
        mask = torch.arange(n, device=ids.device)[None, :] <= pos[:, None]
        for i, layer in enumerate(mm.layers):
            at = layer.self_attn
            a = layer.input_layernorm(h)
            q = at.q_proj(a).view(1, s, nh, hd).transpose(1, 2)
            k = at.k_proj(a).view(1, s, nkv, hd).transpose(1, 2)
            v = at.v_proj(a).view(1, s, nkv, hd).transpose(1, 2)
            q, k = apply_rotary_pos_emb(q, k, cos, sin)
            kc, vc = getattr(self, "k%d" % i), getattr(self, "v%d" % i)
            kc.index_copy_(2, pos, k)
            vc.index_copy_(2, pos, v)
            g = nh // nkv
            kr = kc[:, :, None].expand(1, nkv, g, n, hd).reshape(1, nh, n, hd)
            vr = vc[:, :, None].expand(1, nkv, g, n, hd).reshape(1, nh, n, hd)
            o = F.scaled_dot_product_attention(q, kr, vr, attn_mask=mask)
            h = h + at.o_proj(o.transpose(1, 2).reshape(1, s, nh * hd))
            h = h + layer.mlp(layer.post_attention_layernorm(h))
        if self.last:
            h = h[:, -1:]
        return self.m.lm_head(mm.norm(h))


def cachedloop(run, ids):
    """The greedy tokens of a Cached program: the prompt one token a call,
    then each new token."""
    kv, t = [], None
    with torch.no_grad():
        for p in range(len(ids) + NEW - 1):
            x = torch.tensor([[ids[p] if p < len(ids) else t]])
            t = int(torch.argmax(run(x, torch.tensor([p]))[0, -1]))
            if p >= len(ids) - 1:
                kv.append(t)
    return kv


def prefillloop(run, ids):
    """The greedy tokens of prefill then decode through one Cached module:
    the prompt P tokens a call (the last call's tail token 0 at the
    positions that follow), then each new token alone."""
    out, at, m = [], 0, 0
    with torch.no_grad():
        while at < len(ids):
            m = min(P, len(ids) - at)
            x = torch.zeros(1, P, dtype=torch.int64)
            x[0, :m] = torch.tensor(ids[at:at + m])
            lg = run(x, torch.arange(at, at + P))
            at += m
        row = lg[0, m - 1]
        while len(out) < NEW:
            t = int(torch.argmax(row))
            out.append(t)
            row = run(torch.tensor([[t]]), torch.tensor([at]))[0, -1]
            at += 1
    return out


def npy(path, a):
    import numpy as np
    np.save(path, a.detach().numpy() if hasattr(a, "detach") else a)


def chain(model, ids):
    """generate's greedy tokens and the smallest lead of a best logit."""
    with torch.no_grad():
        x = torch.tensor([ids])   # BOS is id 0: no pad_token_id 0, a mask of ones
        g = model.generate(x, attention_mask=torch.ones_like(x), do_sample=False,
                           max_new_tokens=NEW, min_new_tokens=NEW,
                           pad_token_id=model.config.eos_token_id, output_scores=True,
                           return_dict_in_generate=True)
    lead = min(float(s[0].topk(2).values[0] - s[0].topk(2).values[1]) for s in g.scores)
    return g.sequences[0, len(ids):].tolist(), lead


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    import glob
    files = sorted(glob.glob("*.md") + glob.glob("formats/*.md") + glob.glob("*/README.md"))
    tj = os.path.join(out, "tokenizer.json")
    if os.path.exists(tj):   # the vocabulary the archives were made with
        from tokenizers import Tokenizer
        tok = Tokenizer.from_file(tj)
    else:
        tok = make_tokenizer_refs.llama3(files)
        tok.save(tj, pretty=False)
    vocab = tok.get_vocab_size()
    ids = tok.encode(PROMPT, add_special_tokens=True).ids
    for init in INITS:
        torch.manual_seed(0)
        cfg = LlamaConfig(vocab_size=vocab, hidden_size=64, intermediate_size=128,
                          num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                          max_position_embeddings=128, tie_word_embeddings=True,
                          initializer_range=init,
                          bos_token_id=tok.token_to_id("<|begin_of_text|>"),
                          eos_token_id=tok.token_to_id("<|end_of_text|>"))
        model = LlamaForCausalLM(cfg).eval()
        hf, lead = chain(model, ids)
        print("init", init, "generate", hf, "distinct", len(set(hf)), "smallest lead %.4g" % lead)
        if len(set(hf)) >= 8 and lead >= 1e-3:
            break
    else:
        sys.exit("export_llama.py: no greedy chain is a strong enough check")

    w = Logits(model).eval()
    ep = torch.export.export(w, (torch.zeros(1, L, dtype=torch.int64),))
    torch.export.save(ep, os.path.join(out, "llama.pt2"))
    with torch.no_grad():
        prog = ep.module()
        seq, man = list(ids), []
        for _ in range(NEW):
            x = torch.zeros(1, L, dtype=torch.int64)
            x[0, :len(seq)] = torch.tensor(seq)
            t = int(torch.argmax(prog(x)[0, len(seq) - 1]))
            man.append(t)
            seq.append(t)

    c = Cached(model).eval()
    eager = cachedloop(c, ids)
    print("cached, eager", eager, "equal" if eager == hf else "DIFFERENT")
    for n, b in c.named_buffers():   # the caches, not the rotary embedding's inv_freq
        if n[0] in "kv" and n[1:].isdigit():
            b.zero_()
    ek = torch.export.export(c, (torch.zeros(1, 1, dtype=torch.int64),
                                 torch.zeros(1, dtype=torch.int64)))
    torch.export.save(ek, os.path.join(out, "llama_kv.pt2"))
    print(ek.graph_signature)
    kv = cachedloop(ek.module(), ids)
    for n, b in c.named_buffers():   # the same initial cache as llama_kv.pt2's
        if n[0] in "kv" and n[1:].isdigit():
            b.zero_()
    ep = torch.export.export(c, (torch.zeros(1, P, dtype=torch.int64),
                                 torch.zeros(P, dtype=torch.int64)))
    torch.export.save(ep, os.path.join(out, "llama_prefill.pt2"))
    print(ep.graph_signature)
    pre = prefillloop(c, ids)   # eager: one module, so one cache
    for n, b in c.named_buffers():
        if n[0] in "kv" and n[1:].isdigit():
            b.zero_()
    e = os.path.join(out, "entry")
    os.makedirs(e, exist_ok=True)
    with torch.no_grad():
        x = torch.zeros(1, P, dtype=torch.int64)
        x[0, :len(ids)] = torch.tensor(ids)
        pp = torch.arange(P)
        lg = c(x, pp)
        t = int(torch.argmax(lg[0, len(ids) - 1]))
        dt, dp = torch.tensor([[t]]), torch.tensor([len(ids)])
        ld = c(dt, dp)
    for n, a in (("prefill_ids", x), ("prefill_pos", pp), ("prefill_logits", lg),
                 ("decode_tok", dt), ("decode_pos", dp), ("decode_logits", ld)):
        npy(os.path.join(e, n + ".npy"), a)
    with open(os.path.join(out, "refs.txt"), "w") as f:
        f.write("prompt: %s\nids: %s\ninitializer_range: %g\ngenerate: %s\nmanual: %s\n"
                "cached: %s\nprefill: %s\n" % (PROMPT, " ".join(map(str, ids)), init,
                                                 " ".join(map(str, hf)), " ".join(map(str, man)),
                                                 " ".join(map(str, kv)), " ".join(map(str, pre))))
    print("vocab", vocab, "params", sum(p.numel() for p in model.parameters()))
    print("manual  ", man, "equal" if hf == man else "DIFFERENT")
    print("cached  ", kv, "equal" if hf == kv else "DIFFERENT")
    print("prefill ", pre, "equal" if hf == pre else "DIFFERENT")
    import transformers
    print("torch", torch.__version__, "transformers", transformers.__version__)
    if hf != man or hf != kv or hf != pre:
        sys.exit("export_llama.py: the exported programs' tokens differ from generate's")


if __name__ == "__main__":
    main()
