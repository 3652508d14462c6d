#!/bin/sh
# golden.t: per-stage golden tests.  tests/golden/STAGE/NAME.ir is hand-written
# text IR; NAME.out is the exact text IR the stage must produce, NAME.err the
# exact error it must print (and then exit 1 and leave no output).  place
# cases use NAME.map as the target mapping when present, else targets/cpu;
# legalize errors name the parsed input in.dpir.
root=$(pwd)
bin=$root/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
fails=0
say() { # ok|not-ok description [diff file]
	n=$((n + 1))
	if [ "$1" = ok ]; then echo "ok $n - $2"; else
		echo "not ok $n - $2"; fails=$((fails + 1))
		[ -n "${3:-}" ] && sed 's/^/# /' "$3"
	fi
}

# run_stage STAGE NAME.ir OUT.dpir: the stage under test on a parsed input
run_stage() {
	case $1 in
	verify) "$bin/dp-verify" "$2" -o "$3" ;;
	parse) "$bin/devproc" parse "$2" -o "$3" ;;
	place)
		map=$root/targets/cpu
		[ -f "${2%.ir}.map" ] && map=${2%.ir}.map
		"$bin/devproc" parse "$2" -o "$tmp/in.dpir" && "$bin/dp-place" "$tmp/in.dpir" -t "$map" -o "$3" ;;
	legalize)   # run where the input is, so that errors name it in.dpir
		"$bin/devproc" parse "$2" -o "$tmp/in.dpir" && (cd "$tmp" && "$bin/dp-legalize" in.dpir -o "$3") ;;
	partition)
		"$bin/devproc" parse "$2" -o "$tmp/in.dpir" && "$bin/dp-partition" "$tmp/in.dpir" -o "$3" ;;
	esac
}

for stage in parse verify legalize place partition; do
	for ir in tests/golden/$stage/*.ir; do
		[ -f "$ir" ] || continue
		case=${ir%.ir}
		name="$stage/$(basename "$case")"
		rm -f "$tmp/out.dpir"
		(cd "$(dirname "$ir")" && run_stage "$stage" "$(basename "$ir")" "$tmp/out.dpir") \
			>"$tmp/stdout" 2>"$tmp/stderr"
		rc=$?
		if [ -f "$case.err" ]; then
			if [ $rc -eq 1 ] && [ ! -e "$tmp/out.dpir" ] && diff -u "$case.err" "$tmp/stderr" >"$tmp/diff"; then
				say ok "$name: rejected with the expected error"
			else
				echo "exit $rc" >>"$tmp/diff"
				say not-ok "$name: rejected with the expected error" "$tmp/diff"
			fi
		elif [ -f "$case.out" ]; then
			if [ $rc -eq 0 ] && "$bin/devproc" dump "$tmp/out.dpir" >"$tmp/got" 2>&1 &&
				diff -u "$case.out" "$tmp/got" >"$tmp/diff"; then
				say ok "$name: output matches"
			else
				cat "$tmp/stderr" >>"$tmp/diff"
				say not-ok "$name: output matches" "$tmp/diff"
			fi
			# the text form parses back to the same DPIR bytes
			if "$bin/devproc" parse "$case.out" -o "$tmp/re.dpir" 2>"$tmp/diff" && cmp -s "$tmp/re.dpir" "$tmp/out.dpir"; then
				say ok "$name: text -> DPIR -> text is the identity"
			else
				say not-ok "$name: text -> DPIR -> text is the identity" "$tmp/diff"
			fi
		else
			if [ $rc -eq 0 ]; then say ok "$name: accepted"; else say not-ok "$name: accepted" "$tmp/stderr"; fi
		fi
	done
done
echo "1..$n"
[ $fails -eq 0 ]
