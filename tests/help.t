#!/bin/sh
# help.t: every executable make builds (bin/*; the fuzz harnesses are
# fuzz.t's) and every devproc command answers --help with its usage on
# stdout, nothing on stderr, exit status 0.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh

helps() { # program [command]
	"$@" --help >"$tmp/out" 2>"$tmp/err" || { echo "exit status $?"; cat "$tmp/err"; return 1; }
	head -n 1 "$tmp/out" | grep -q '^usage: ' || { echo "no usage line on stdout:"; head -n 3 "$tmp/out"; return 1; }
	[ ! -s "$tmp/err" ] || { echo "stderr:"; cat "$tmp/err"; return 1; }
}

for b in bin/*; do
	[ -x "$b" ] || continue
	case ${b#bin/} in
	fuzz-*) ;;
	*) check "${b#bin/} --help" helps "$b" ;;
	esac
done
for c in $(./bin/devproc --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p; s/^  \([a-z][a-z]*\)$/\1/p' | sort -u); do
	case $c in
	*) check "devproc $c --help" helps ./bin/devproc "$c" ;;
	esac
done
echo "1..$n"
[ $fails -eq 0 ]
