#!/bin/sh
# help.t: every executable make builds (bin/*; the fuzz harnesses are
# fuzz.t's) and every devproc command answers --help with its usage on
# stdout, nothing on stderr, exit status 0.  Those known not to yet are
# TODO, with the reason (prove says when one passes; a unit test program
# whose main takes no arguments is not run, it would run its whole suite).
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh

helps() { # program [command]
	"$@" --help >"$tmp/out" 2>"$tmp/err" || { echo "exit status $?"; cat "$tmp/err"; return 1; }
	head -n 1 "$tmp/out" | grep -q '^usage: ' || { echo "no usage line on stdout:"; head -n 3 "$tmp/out"; return 1; }
	[ ! -s "$tmp/err" ] || { echo "stderr:"; cat "$tmp/err"; return 1; }
}
todo() { # reason description command...
	why=$1
	n=$((n + 1))
	shift
	desc=$1
	shift
	if "$@" >"$tmp/log" 2>&1; then
		echo "ok $n - $desc # TODO $why"
	else
		echo "not ok $n - $desc # TODO $why"
		sed 's/^/# /' "$tmp/log" | head -5
	fi
}

for b in bin/*; do
	[ -x "$b" ] || continue
	case ${b#bin/} in
	fuzz-*) ;;
	test-*)   # unit tests: those whose main takes no arguments are not run (they would run the suite)
		if ! grep -q '^main(void)' "tests/unit/${b#bin/test-}.c"; then
			check "${b#bin/} --help" helps "$b"
		else
			n=$((n + 1))
			echo "not ok $n - ${b#bin/} --help # TODO tests/unit/${b#bin/test-}.c runs its tests whatever the arguments"
		fi ;;
	*) check "${b#bin/} --help" helps "$b" ;;
	esac
done
for c in $(./bin/devproc --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p; s/^  \([a-z][a-z]*\)$/\1/p' | sort -u); do
	case $c in
	parse) todo "driver/dump.c prints the usage on stderr and exits 1" \
		"devproc $c --help" helps ./bin/devproc "$c" ;;
	*) check "devproc $c --help" helps ./bin/devproc "$c" ;;
	esac
done
echo "1..$n"
[ $fails -eq 0 ]
