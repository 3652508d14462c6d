#!/bin/sh
# lower.t: tests of dp-lower_cpu, dp-lower_gpu and dp-link (TAP).  Inputs are
# hand-written text IR in tests/lower/NAME.ir:
#   NAME.cpu.err / NAME.gpu.err  the exact error of lower_cpu / lower_gpu
#                                (exit 1, no output left)
#   NAME.cpu.c / NAME.gpu.cu     the exact file lower_cpu / lower_gpu writes
#   NAME.main.c                  a driver of the typed C API: the program is
#                                lowered, compiled, linked, and the driver
#                                checks the outputs against values worked out
#                                by hand
# then checks of the executable, of determinism and of link's errors.
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
bin=$root/bin
dir=$root/tests/lower
cc=${DP_TEST_CC:-$(sed -n 's/^CC = //p' config.mk 2>/dev/null)}  # make check SAN=1: bin/san-cc
cc=${cc:-cc}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

n=0
fails=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() {
	n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; shift
	for f; do [ -f "$f" ] && sed 's/^/# /' "$f"; done
}

# f32 V...: the little-endian bytes of the small floats the blobs use
f32() {
	for v; do
		case $v in
		0) printf '\000\000\000\000' ;;
		1) printf '\000\000\200\077' ;;
		2) printf '\000\000\000\100' ;;
		3) printf '\000\000\100\100' ;;
		4) printf '\000\000\200\100' ;;
		*) echo "f32: no bytes for $v" >&2; exit 1 ;;
		esac
	done
}
zeros() { head -c "$1" /dev/zero; }

# parse NAME: tests/lower/NAME.ir -> $tmp/NAME/NAME.dpir (and its blob)
parse() {
	mkdir -p "$tmp/$1"
	"$bin/devproc" parse "$dir/$1.ir" -o "$tmp/$1/$1.dpir" 2>"$tmp/$1/parse.err" || return 1
	case $1 in
	mm) # W [4,3] at 0, b [4] at 64, m [2,3,2] at 128: 192 bytes
		{ f32 1 0 0  0 1 0  0 0 1  1 1 1; zeros 16; f32 1 2 3 4; zeros 48
		  f32 1 0  0 1  0 0  1 1  1 1  1 1; zeros 16; } >"$tmp/$1/weights.bin" ;;
	edge) { f32 1 2 3; zeros 52; } >"$tmp/$1/weights.bin" ;;
	cpu) zeros 6400 >"$tmp/$1/weights.bin" ;;
	esac
}

# errors: exit 1, the exact message, nothing written
for want in "$dir"/*.cpu.err "$dir"/*.gpu.err; do
	[ -f "$want" ] || continue
	name=$(basename "$want"); name=${name%%.*}
	case $want in *.cpu.err) tool=lower_cpu ext=c ;; *) tool=lower_gpu ext=cu ;; esac
	if ! parse "$name"; then fail "$tool $name: parse" "$tmp/$name/parse.err"; continue; fi
	(cd "$tmp/$name" && "$bin/dp-$tool" "$name.dpir" -o "out.$ext") 2>"$tmp/got" >/dev/null
	rc=$?
	if [ $rc -eq 1 ] && [ ! -e "$tmp/$name/out.$ext" ] && diff -u "$want" "$tmp/got" >"$tmp/diff"; then
		pass "$tool $name: rejected with the expected error"
	else
		echo "exit status $rc" >>"$tmp/diff"
		fail "$tool $name: rejected with the expected error" "$tmp/diff"
	fi
done

# golden outputs
for want in "$dir"/*.cpu.c "$dir"/*.gpu.cu; do
	[ -f "$want" ] || continue
	name=$(basename "$want"); name=${name%%.*}
	case $want in *.cpu.c) tool=lower_cpu out=5.cpu.c ;; *) tool=lower_gpu out=5.gpu.cu ;; esac
	if ! parse "$name"; then fail "$tool $name: parse" "$tmp/$name/parse.err"; continue; fi
	if (cd "$tmp/$name" && "$bin/dp-$tool" "$name.dpir" -o "$out") 2>"$tmp/diff" &&
		diff -u "$want" "$tmp/$name/$out" >>"$tmp/diff"; then
		pass "$tool $name: output matches"
	else
		fail "$tool $name: output matches" "$tmp/diff"
	fi
done

# build NAME: lower, compile and link $tmp/NAME/NAME.dpir in $tmp/NAME
build() {
	(cd "$tmp/$1" && "$bin/dp-lower_cpu" "$1.dpir" -o 5.cpu.c &&
		$cc -std=c11 -O2 -Wall -Wextra -Werror -I"$root/runtime" -c 5.cpu.c -o 5.cpu.o &&
		"$bin/dp-link" "$1.dpir" 5.cpu.o --runtime "$root/lib" --cc "$cc" -o "$1")
}

# programs run through the typed API
for drv in "$dir"/*.main.c; do
	name=$(basename "$drv" .main.c)
	if parse "$name" && build "$name" >"$tmp/log" 2>&1 &&
		$cc -std=c11 -Wall -Wextra -Werror -I"$tmp/$name" -I"$dir" "$drv" \
			"$tmp/$name/lib$name.a" -lm -o "$tmp/$name/drv" >>"$tmp/log" 2>&1 &&
		"$tmp/$name/drv" >>"$tmp/log" 2>&1; then
		pass "$name: lowered, linked and run through $name.h: outputs as worked out"
	else
		fail "$name: lowered, linked and run through $name.h: outputs as worked out" "$tmp/log"
	fi
done

# the executable: .npy in, .npy out (misc: img u8[1,2,3] -> norm f32[1,2,3])
m=$tmp/misc
{ printf '\223NUMPY\001\000\166\000'   # header: 118 bytes, to 128 in all
  printf "%-117s\n" "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 2, 3), }"
  printf '\002\004\036\010\012\014'; } >"$m/img.npy"
f32 0 0 3 3 >"$m/want"
printf '\000\000\300\077\000\000\100\077' >>"$m/want"   # 1.5, 0.75
if (cd "$m" && ./misc --in img=img.npy --out norm=norm.npy) >"$tmp/log" 2>&1 &&
	tail -c 24 "$m/norm.npy" | cmp -s - "$m/want"; then
	pass "misc: the executable reads .npy and writes .npy"
else
	fail "misc: the executable reads .npy and writes .npy" "$tmp/log"
fi

# the library: self-contained, no main()
if nm "$m/libmisc.a" 2>/dev/null | grep -q ' T main$'; then
	fail "misc: libmisc.a defines no main()"
elif nm "$m/libmisc.a" 2>/dev/null | grep -q ' T dprt_main$'; then
	pass "misc: libmisc.a defines no main() and holds the runtime"
else
	fail "misc: libmisc.a defines no main() and holds the runtime"
fi

# determinism: the same bytes from another folder; unchanged files untouched
mkdir -p "$tmp/again/deeper/misc"
cp "$m/misc.dpir" "$tmp/again/deeper/misc/"
(cd "$tmp/again/deeper/misc" && "$bin/dp-lower_cpu" misc.dpir -o 5.cpu.c &&
	$cc -std=c11 -O2 -I"$root/runtime" -c 5.cpu.c -o 5.cpu.o &&
	"$bin/dp-link" misc.dpir 5.cpu.o --runtime "$root/lib" --cc "$cc" -o out) >"$tmp/log" 2>&1
same=yes
for f in 5.cpu.c 5.cpu.o; do cmp -s "$m/$f" "$tmp/again/deeper/misc/$f" || same="no ($f)"; done
cmp -s "$m/misc" "$tmp/again/deeper/misc/out" || same="no (executable)"
cmp -s "$m/libmisc.a" "$tmp/again/deeper/misc/libout.a" || same="no (library)"
if [ "$same" = yes ]; then
	pass "lower_cpu and link give the same bytes in another folder"
else
	echo "same: $same" >>"$tmp/log"
	fail "lower_cpu and link give the same bytes in another folder" "$tmp/log"
fi
touch -t 200001010000 "$m/5.cpu.c" "$m/misc" "$m/libmisc.a" "$m/misc.h"
(cd "$m" && "$bin/dp-lower_cpu" misc.dpir -o 5.cpu.c &&
	"$bin/dp-link" misc.dpir 5.cpu.o --runtime "$root/lib" --cc "$cc" -o misc) >"$tmp/log" 2>&1
if [ $? -eq 0 ] && [ -z "$(find "$m/5.cpu.c" "$m/misc" "$m/libmisc.a" "$m/misc.h" -newer "$m/img.npy")" ]; then
	pass "rerunning lower_cpu and link leaves unchanged outputs alone"
else
	fail "rerunning lower_cpu and link leaves unchanged outputs alone" "$tmp/log"
fi
if [ -z "$(find "$tmp" -name '.*.link-*')" ]; then
	pass "link leaves no temporary folder behind"
else
	fail "link leaves no temporary folder behind"
fi

# link's errors: one line, exit 1, no output, no temporary folder
linkerr() { # DESCRIPTION WANT ARGS...
	desc=$1 want=$2; shift 2
	rm -rf "$tmp/le"; mkdir "$tmp/le"
	(cd "$tmp/mm" && "$bin/dp-link" "$@" -o "$tmp/le/mm") >/dev/null 2>"$tmp/got"
	rc=$?
	got=$(head -n 1 "$tmp/got")
	left=$(ls -A "$tmp/le")
	if [ $rc -eq 1 ] && [ "$got" = "$want" ] && [ -z "$left" ]; then
		pass "link: $desc"
	else
		printf 'exit status %s\ngot:  %s\nwant: %s\nleft: %s\n' "$rc" "$got" "$want" "$left" >"$tmp/diff"
		fail "link: $desc" "$tmp/diff"
	fi
}
head -c 128 "$tmp/mm/weights.bin" >"$tmp/mm/short.bin"
linkerr "a stale weight blob" \
	"mm.dpir: link: the weight blob short.bin holds 128 bytes, but the IR's weights.bin holds 192 (a stale blob?)" \
	mm.dpir 5.cpu.o --weights short.bin --runtime "$root/lib"
linkerr "a missing object" \
	"mm.dpir: link: cannot read object nothere.o: No such file or directory" \
	mm.dpir nothere.o --runtime "$root/lib"
linkerr "a missing fatbin (the kernels of a program's CUDA)" \
	"mm.dpir: link: cannot find the kernels nothere.fatbin: No such file or directory" \
	mm.dpir 5.cpu.o nothere.fatbin --runtime "$root/lib"
# a fatbin is embedded as NAME_gpu_fatbin, its bytes as they are
fatbin() {
	printf 'kernels, byte for byte\n' >"$tmp/mm/k.fatbin" &&
		(cd "$tmp/mm" && "$bin/dp-link" mm.dpir 5.cpu.o --fatbin k.fatbin --runtime "$root/lib" \
			--cc "$cc" -o "$tmp/mm/fb") >"$tmp/fb.log" 2>&1 &&
		nm "$tmp/mm/libfb.a" | grep -q ' R mm_gpu_fatbin$' &&
		ar p "$tmp/mm/libfb.a" mm_gpu_fatbin.o >"$tmp/fb.o" &&
		[ "$(nm -S "$tmp/fb.o" | awk '$4 == "mm_gpu_fatbin" { print $2 }')" = \
			"$(printf '%016x' "$(wc -c <"$tmp/mm/k.fatbin")")" ]
}
if fatbin; then pass "link: --fatbin FILE embedded as NAME_gpu_fatbin in libNAME.a"
else fail "link: --fatbin FILE embedded as NAME_gpu_fatbin in libNAME.a" "$tmp/fb.log"; fi
printf 'not an object\n' >"$tmp/mm/bad.o"
linkerr "a broken object (the archiver or linker fails)" \
	"mm.dpir: link: $cc failed linking the executable (exit status 1)" \
	mm.dpir bad.o --runtime "$root/lib" --cc "$cc"

echo "1..$n"
[ $fails -eq 0 ]
