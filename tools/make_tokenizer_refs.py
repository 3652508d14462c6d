#!/usr/bin/env python3
"""Makes the tokenizer fixtures of tests/tokenize.t with the `tokenizers`
library (Hugging Face), which the GPU machine has (no hub access needed).

    python3 tools/make_tokenizer_refs.py OUT_DIR [TEXT_FILE...]

Trains small tokenizers of the styles real checkpoints use on the
TEXT_FILEs (the repository's own Markdown, by default: text we ship) plus
the test corpus, each written as STYLE.json:

  gpt2      GPT-2: ByteLevel pre-tokenizer with GPT-2's regex, no prefix
            space, the <|endoftext|> special token
  llama3    Llama-3: a Split on Llama-3's regex then ByteLevel without its
            regex, ignore_merges, <|begin_of_text|>, <|end_of_text|>,
            <|eot_id|> and a non-special added token, a TemplateProcessing
            post-processor adding <|begin_of_text|>
  qwen2     Qwen2: an NFC normalizer, a Split on Qwen2's regex (digits one
            at a time), ByteLevel, a ByteLevel post-processor, chat tokens
  llama2    Llama-2 (SentencePiece converted, "legacy"): a normalizer that
            prepends U+2581 and replaces spaces with it, no pre-tokenizer,
            BPE over characters with byte fallback (<0x00>..<0xFF>) and
            <unk>, the Replace/ByteFallback/Fuse/Strip decoder, <s> first
  mistral   SentencePiece BPE the newer way: a Metaspace pre-tokenizer
            (prepend first, no split), byte fallback, a ByteFallback then
            Metaspace decoder, <s> first
  multi     DeepSeek-like: a sequence of Splits (line breaks, letters with
            a space, ASCII and fullwidth punctuation, digits in threes, CJK
            ranges), then Digits, then ByteLevel
  behaviors every Split behavior (removed, merged with the previous or the
            next, contiguous, inverted), an NFKC, StripAccents and Lowercase
            normalizer, ByteLevel with its regex and a prefix space
  bert      BERT: WordPiece, the BertNormalizer (lowercase, accents
            stripped, CJK spaced), BertPreTokenizer, [CLS] and [SEP]

and writes refs.json: {"styles": [...], "cases": [...]}, for every string
of the corpus (Unicode, emoji, whitespace runs, CJK, numbers, punctuation,
special tokens in the text, combining marks) and every style STYLE:
STYLE = encode(add_special_tokens=False).ids, STYLE_text = decode of those
(skip_special_tokens=False), STYLE_special = encode(add_special_tokens=True)
.ids and STYLE_skip = its decode with skip_special_tokens=True.
"""
import glob
import json
import os
import sys

from tokenizers import (Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers,
                        processors, trainers)

GPT2_RE = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA3_RE = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"""
             r""" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
QWEN2_RE = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"""
            r""" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
SPACE = "\u2581"

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
    "NFC: e\u0301 vs \u00e9, A\u030a vs \u00c5, a\u0323\u0301 vs a\u0301\u0323, \u1100\u1161\u11a8 vs \uac01",
    "NFKC: \ufb01 ligature \u2460 \u338f \u216b \uff21\uff22 x\u00b2 \u2126 \u212b",
    "\u039f\u0394\u03a5\u03a3\u03a3\u0395\u03a5\u03a3 \u03a3\u0391\u03a3 \u0130stanbul \u00df \u1e9e",
    "<s>Hello</s> <unk> and <0x41> literally [CLS] [UNK] un\u00e4ffable",
    "<|im_start|>user\nhi there<|im_end|>\n<|im_start|>assistant\n",
    "  two leading, two trailing  ",
    "price: $1,234.56 - 7-8-9 x-y ABC-DEF xxhixx",
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


def qwen2(files):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_RE), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tr = trainers.BpeTrainer(vocab_size=3000, min_frequency=2, show_progress=False,
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                             special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    tok.train_from_iterator(texts(files), tr)
    return tok


def sentencepiece(files):
    """A BPE over characters trained on words with U+2581 for spaces, then
    given the 256 byte-fallback tokens after <unk>, <s>, </s> (as a
    converted SentencePiece model has them); a small alphabet, so that rare
    characters fall back to bytes."""
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPACE, prepend_scheme="always",
                                                 split=True)
    tr = trainers.BpeTrainer(vocab_size=2500, min_frequency=2, show_progress=False,
                             limit_alphabet=120, special_tokens=["<unk>", "<s>", "</s>"])
    tok.train_from_iterator(texts(files), tr)
    j = json.loads(tok.to_str())
    old = j["model"]["vocab"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab["<0x%02X>" % b] = 3 + b
    for t, _ in sorted(old.items(), key=lambda kv: kv[1]):
        if t not in vocab:
            vocab[t] = len(vocab)
    j["model"]["vocab"] = vocab
    j["model"]["byte_fallback"] = True
    j["model"]["fuse_unk"] = True
    for a in j["added_tokens"]:
        a["id"] = vocab[a["content"]]
    return j


def llama2(files):
    j = sentencepiece(files)
    j["normalizer"] = None
    j["pre_tokenizer"] = None
    tok = Tokenizer.from_str(json.dumps(j))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend(SPACE),
                                           normalizers.Replace(" ", SPACE)])
    tok.decoder = decoders.Sequence([decoders.Replace(SPACE, " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 1)])
    return tok


def mistral(files):
    j = sentencepiece(files)
    j["normalizer"] = None
    tok = Tokenizer.from_str(json.dumps(j))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPACE, prepend_scheme="first",
                                                 split=False)
    tok.decoder = decoders.Sequence([decoders.ByteFallback(),
                                     decoders.Metaspace(replacement=SPACE, prepend_scheme="first",
                                                        split=False)])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 1)])
    return tok


def bytelevel(files, normalizer, pre, vocab_size, specials):
    tok = Tokenizer(models.BPE())
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    tr = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, show_progress=False,
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                             special_tokens=specials)
    tok.train_from_iterator(texts(files), tr)
    return tok


def multi(files):
    split = lambda r: pre_tokenizers.Split(Regex(r), behavior="isolated", invert=False)
    return bytelevel(files, None, pre_tokenizers.Sequence([
        split(r"[\r\n]"),
        split("\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u0370-\u03ff\u0400-\u04ff]+"),  # literal characters
        split("\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+"),
        split(r"\p{N}{1,3}"),
        split("[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"),
        pre_tokenizers.Digits(individual_digits=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
    ]), 3000, ["<|begin_of_sentence|>", "<|end_of_sentence|>"])


def behaviors(files):
    return bytelevel(files, normalizers.Sequence([normalizers.NFKC(), normalizers.StripAccents(),
                                                  normalizers.Lowercase()]),
                     pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"\d"), behavior="merged_with_previous"),
        pre_tokenizers.Split(",", behavior="removed"),
        pre_tokenizers.Split("-", behavior="contiguous"),
        pre_tokenizers.Split(Regex(r"[.:;]"), behavior="merged_with_next"),
        pre_tokenizers.Split(Regex(r"x+"), behavior="isolated", invert=True),
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True),
    ]), 2000, ["<|endoftext|>"])


def bert(files):
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                                strip_accents=None, lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    tr = trainers.WordPieceTrainer(vocab_size=3000, min_frequency=2, show_progress=False,
                                   limit_alphabet=200,
                                   special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tok.train_from_iterator(texts(files), tr)
    tok.post_processor = processors.BertProcessing(("[SEP]", tok.token_to_id("[SEP]")),
                                                   ("[CLS]", tok.token_to_id("[CLS]")))
    return tok


STYLES = {"gpt2": gpt2, "llama3": llama3, "qwen2": qwen2, "llama2": llama2,
          "mistral": mistral, "multi": multi, "behaviors": behaviors, "bert": bert}


def main():
    out = sys.argv[1]
    files = sys.argv[2:] or sorted(glob.glob("*.md") + glob.glob("formats/*.md") +
                                   glob.glob("*/README.md"))
    os.makedirs(out, exist_ok=True)
    toks = {name: make(files) for name, make in STYLES.items()}
    cases = []
    for s in CORPUS:
        r = {"text": s}
        for name, tok in toks.items():
            ids = tok.encode(s, add_special_tokens=False).ids
            r[name] = ids
            r[name + "_text"] = tok.decode(ids, skip_special_tokens=False)
            ids = tok.encode(s, add_special_tokens=True).ids
            r[name + "_special"] = ids
            r[name + "_skip"] = tok.decode(ids, skip_special_tokens=True)
        cases.append(r)
    for name, tok in toks.items():
        tok.save(os.path.join(out, name + ".json"), pretty=False)
        print(name, "vocab", tok.get_vocab_size())
    with open(os.path.join(out, "refs.json"), "w", encoding="utf-8") as f:
        json.dump({"styles": list(toks), "cases": cases}, f, ensure_ascii=False, indent=0)
    import tokenizers
    print("tokenizers", tokenizers.__version__, "trained on", len(files), "files")


if __name__ == "__main__":
    main()
