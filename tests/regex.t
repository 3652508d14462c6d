#!/bin/sh
# regex.t: the runtime's regular expressions, Oniguruma's syntax and
# semantics as the tokenizers library's Split patterns use them: every
# construct, the tokenizers' patterns, long subjects and the errors (a C
# program speaking TAP).
cd "$(dirname "$0")/.." || exit 1
exec ./bin/test-regex
