#!/bin/sh
# tokenize.t: the runtime's byte-level BPE tokenizer against the `tokenizers`
# library's ids and text on a corpus (tests/unit/tokenize.c; TAP).
exec ./bin/test-tokenize
