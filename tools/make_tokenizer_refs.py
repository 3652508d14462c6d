#!/usr/bin/env python3
"""Makes the tokenizer fixtures of tests/tokenize.t with the `tokenizers`
library (Hugging Face), which the GPU machine has (no hub access needed).

    python3 tools/make_tokenizer_refs.py OUT_DIR [TEXT_FILE...]

Trains two small byte-level BPE tokenizers on the TEXT_FILEs (the
repository's own Markdown, by default: text we ship) plus the test corpus:

  gpt2.json    GPT-2 style: ByteLevel pre-tokenizer with GPT-2's regex, no
               prefix space, the <|endoftext|> special token
  llama3.json  Llama-3 style: a Split on Llama-3's regex then ByteLevel
               without its regex, ignore_merges, <|begin_of_text|>,
               <|end_of_text|>, <|eot_id|> and a non-special added token,
               a TemplateProcessing post-processor adding <|begin_of_text|>

and writes refs.json: for every string of the corpus (Unicode, emoji,
whitespace runs, CJK, numbers, punctuation, special tokens in the text),
each tokenizer's encode(add_special_tokens=False).ids, llama3's ids with
add_special_tokens=True, and decode(ids, skip_special_tokens=False).
"""
import glob
import json
import os
import sys

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

GPT2_RE = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA3_RE = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"""
             r""" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")

CORPUS = [
    "",
    "Hello, world!",
    "hello world",
    " leading space",
    "trailing space ",
    "   three leading spaces",
    "tabs\tand\t\ttabs",
    "line one\nline two\n\nline four\r\nwindows line",
    "many     spaces   between    words",
    "    \n\n   \t  ",
    "I'm sure it's fine, they'll see; we've done what you'd DON'T'S.",
    "The year 2026 had 365 days; 1234567890 and 3.14159 and -42 and 1e-5.",
    "a1b22c333d4444 x=10,y=200",
    "Punctuation!!! ??? ... --- (parens) [brackets] {braces} <angle> \"quotes\" 'single'",
    "C code: int main(void) { return a->b[i] + *p++; } // comment",
    "def f(x):\n    return x ** 2  # square\n",
    "Ünïcödé àccents: café, naïve, Zürich, São Paulo, Ærøskøbing",
    "Греческий и русский: Привет, мир! Ελληνικά γράμματα",
    "日本語のテキスト、東京は大きい。中文文本：你好，世界！한국어 문장입니다.",
    "Emoji: 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️ 🚀 and text after",
    "Math: ∑ x² ≤ ∞, α+β=γ, √2 ≈ 1.414, ½ ¾ ①②③ Ⅻ",
    "Arabic مرحبا بالعالم and Hebrew שלום עולם and Hindi नमस्ते दुनिया",
    "mixed日本語English123数字４５６",
    "<|endoftext|>",
    "text<|endoftext|>more text",
    "<|begin_of_text|>Hello<|eot_id|><|end_of_text|>",
    "tool call <tool> inside </tool> text",
    "Zero\u200bwidth\u00a0nbsp\u2003em space\u3000ideographic space",
    "control\x01chars\x7f and \u0085 next line",
    "URL: https://example.com/path?q=1&r=two#frag and email a.b@c.de",
    "CamelCaseIdentifiers snake_case_names kebab-case-names SCREAMING_CASE",
    "repeated aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa letters",
    "'s 's 'S 'll 'LL 'Re the cat's hat",
    "1 12 123 1234 12345 123456 1234567",
    "\n",
    " ",
    "\t\t",
    "a\n b\n  c\n   d",
    "end with newlines\n\n\n",
    "I'M SURE WE'LL GO, SHE'S HERE; 'Sam 'Tis 'Re 'VEry 'Mary 'Llama 'Dog",
    "the long s: ſ 'ſ 'ſt and Kelvin \u212a",
    "fullwidth １２３４５ and superscripts ²³ and roman Ⅳ and fractions ⅞",
    "combining e\u0301 a\u0308 and variation \u2764\ufe0f and ZWJ \U0001f469\u200d\U0001f4bb",
    "line\u2028separator\u2029paragraph and \u0085",
    "numbers 1234567 12.5e10 0x1F 1_000_000 -0.001",
    "\t\n \r\n\t mixed whitespace \n\n\t",
    "!!!???...,,,;;; :-) <3 ->> =>",
    "<|endoftext|><|endoftext|> back to back <|eot_id|><tool><tool>",
    "a" * 300,
]


def texts(files):
    for path in files:
        with open(path, encoding="utf-8") as f:
            yield f.read()
    for _ in range(3):
        yield from CORPUS


def gpt2(files):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tr = trainers.BpeTrainer(vocab_size=3000, min_frequency=2, show_progress=False,
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                             special_tokens=["<|endoftext|>"])
    tok.train_from_iterator(texts(files), tr)
    return tok


def llama3(files):
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_RE), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"]
    tr = trainers.BpeTrainer(vocab_size=4000, min_frequency=2, show_progress=False,
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                             special_tokens=specials)
    tok.train_from_iterator(texts(files), tr)
    tok.add_tokens(["<tool>"])
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = processors.TemplateProcessing(
        single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B",
        special_tokens=[("<|begin_of_text|>", bos)])
    return tok


def main():
    out = sys.argv[1]
    files = sys.argv[2:] or sorted(glob.glob("*.md") + glob.glob("formats/*.md") +
                                   glob.glob("*/README.md"))
    os.makedirs(out, exist_ok=True)
    toks = {"gpt2": gpt2(files), "llama3": llama3(files)}
    refs = []
    for s in CORPUS:
        r = {"text": s}
        for name, tok in toks.items():
            ids = tok.encode(s, add_special_tokens=False).ids
            r[name] = ids
            r[name + "_text"] = tok.decode(ids, skip_special_tokens=False)
        r["llama3_bos"] = toks["llama3"].encode(s, add_special_tokens=True).ids
        refs.append(r)
    for name, tok in toks.items():
        tok.save(os.path.join(out, name + ".json"), pretty=False)
        print(name, "vocab", tok.get_vocab_size())
    with open(os.path.join(out, "refs.json"), "w", encoding="utf-8") as f:
        json.dump(refs, f, ensure_ascii=False, indent=0)
    import tokenizers
    print("tokenizers", tokenizers.__version__, "trained on", len(files), "files")


if __name__ == "__main__":
    main()
