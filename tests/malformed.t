#!/bin/sh
# malformed.t: the malformed-input corpus (TAP).  Every reader gets inputs
# broken on purpose, and each case names the exact stderr it must give (the
# test oracle): one error naming the file and the stage (and line:col in
# text), exit status 1, and no output file left.  In tests/malformed/:
#   dp/NAME.dp + NAME.err    pipelines, through dp-import (beside a copy of
#                            fuzz/seeds/pt2/core.pt2)
#   pt2/NAME.err             archives broken at test time from core.pt2 by
#                            the recipes below (tests/import/zpatch.c makes
#                            same-length edits and fixes the CRCs)
#   dpir/NAME.err            DPIR broken at test time (recipes below), or
#   dpir/NAME.ir + NAME.err  text IR parsed without verifying, both through
#                            dp-place
#   text/NAME.ir + NAME.err  text IR, through devproc parse
#   map/NAME.map + NAME.err  target mappings, through dp-place
#   npy/NAME.err             inputs of a built program (recipes below)
#   safetensors/NAME.err     checkpoints and weight blobs given to a built
#                            program with --weights (recipes below)
#   accept/NAME.ir           text IR that must parse, and dump and parse back
#                            to the same DPIR (fuzz findings on valid input)
# Then torn writes: tear.c, an LD_PRELOAD shim, kills a stage half-way
# through writing (SIGKILL) or fails the write (ENOSPC); the previous
# artifact, or none, must remain, and ninja must rebuild what was torn.
# Cases found by fuzzing are named fuzz_*.  DP_BLESS=1 prove tests/malformed.t
# writes each case's actual stderr into its .err (review the diff!).
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
bin=$root/bin
dir=$root/tests/malformed
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cc=${DP_TEST_CC:-$(sed -n 's/^CC = //p' config.mk 2>/dev/null)}
cc=${cc:-cc}

n=0
fails=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() {
	n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; shift
	for l; do printf '%s\n' "$l" | sed 's/^/# /'; done
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

w=$tmp/w         # every case runs in here, with relative paths
out=$w/out       # and writes its outputs in here, which must stay empty
mkdir -p "$w"
cp fuzz/seeds/pt2/core.pt2 "$w/core.pt2"

# expect NAME ERRFILE COMMAND...: COMMAND (run in $w) must exit 1 with
# exactly ERRFILE on stderr and leave $out empty
expect() {
	name=$1 errf=$2
	shift 2
	rm -rf "$out"
	mkdir "$out"
	(cd "$w" && "$@") >"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
	left=$(ls -A "$out")
	[ -n "${DP_BLESS:-}" ] && cp "$tmp/stderr" "$errf"   # DP_BLESS=1: record what it says
	if [ "$rc" -eq 1 ] && cmp -s "$errf" "$tmp/stderr" && [ -z "$left" ]; then
		pass "$name"
	else
		fail "$name" "exit status $rc (want 1)" "got:" "$(cat "$tmp/stderr")" \
			"want:" "$(cat "$errf")" "left behind: $left"
	fi
}

import() { "$bin/dp-import" "$1" -o out/1.import.dpir -w out/weights.bin -d out/1.import.d; }
place() { "$bin/dp-place" "$1" -t "$2" -o out/3.place.dpir; }

# ---- .dp pipelines ----
for f in "$dir"/dp/*.dp; do
	name=$(basename "$f" .dp)
	cp "$f" "$w/$name.dp"
	expect "dp/$name" "$dir/dp/$name.err" import "$name.dp"
done

# ---- .pt2 archives ----
zp=
if $cc -o "$tmp/zpatch" tests/import/zpatch.c 2>"$tmp/cc.log"; then
	zp=$tmp/zpatch
fi
printf '# calls the broken archive\ny = model("bad.pt2", x)\noutput y\n' >"$tmp/call"
{ echo 'input x: f32[1,8]'; cat "$tmp/call"; } >"$w/pt2.dp"
core=$w/core.pt2
size=$(wc -c <"$core")
for e in "$dir"/pt2/*.err; do
	name=$(basename "$e" .err)
	rm -f "$w/bad.pt2"
	case $name in
	truncated_directory) head -c $((size - 10)) "$core" >"$w/bad.pt2" ;;
	bad_directory)   # the end record's offset of the central directory
		cp "$core" "$w/bad.pt2"
		printf '\377\377\377\017' | dd of="$w/bad.pt2" bs=1 seek=$((size - 6)) conv=notrunc 2>/dev/null ;;
	not_zip) printf 'this is not an archive\n' >"$w/bad.pt2" ;;
	empty) : >"$w/bad.pt2" ;;
	*)
		if [ -z "$zp" ]; then
			skip "pt2/$name" "cannot compile tests/import/zpatch.c"
			continue
		fi
		case $name in
		no_program) set -- 'models/model.json' 'models/modelXjson' ;;
		json_syntax) set -- '{"graph_module": {"graph"' '{"graph_module": ("graph"' ;;
		json_type) set -- '"x": {"dtype": 7' '"x": {"dtype":{}' ;;
		json_list) set -- '"as_ints": [1, 0]' '"as_ints": "1, 0"' ;;
		dtype_enum) set -- '"x": {"dtype": 7' '"x": {"dtype": 9' ;;
		duplicate_spec) set -- '{"parameter": {"arg": {"name": "b1"}' '{"parameter": {"arg": {"name": "w1"}' ;;
		duplicate_node) set -- '{"name": "relu"}' '{"name":"addmm"}' ;;
		dangling) set -- '"mat1", "arg": {"as_tensor": {"name": "relu"' '"mat1", "arg": {"as_tensor": {"name": "relx"' ;;
		huge) set -- '"sizes": [{"as_int": 4}, {"as_int": 8}], "requires_grad": false' \
			'"sizes": [{"as_int": 4611686018427387904}, {"as_int": 2}]      ' ;;
		big_endian) set -- 'little' 'big   ' ;;
		*) fail "pt2/$name" "no recipe for $name in tests/malformed.t"; continue ;;
		esac
		"$zp" "$core" "$w/bad.pt2" "$@" || { fail "pt2/$name" "zpatch failed"; continue; } ;;
	esac
	expect "pt2/$name" "$e" import pt2.dp
done

# ---- DPIR ----
"$bin/devproc" parse "$dir/dpir/base.txt" -o "$w/base.dpir" 2>"$tmp/stderr" ||
	fail "dpir: the base IR parses" "$(cat "$tmp/stderr")"
cp targets/cpu "$w/cpu"
bsize=$(wc -c <"$w/base.dpir")
# sub FROM TO: base.dpir with the byte string FROM replaced by TO (perl)
sub() { perl -0777 -pe "s/$1/$2/" "$w/base.dpir"; }
for e in "$dir"/dpir/*.err; do
	name=$(basename "$e" .err)
	rm -f "$w/bad.dpir"
	if [ -f "$dir/dpir/$name.ir" ]; then
		"$bin/devproc" parse --no-verify "$dir/dpir/$name.ir" -o "$w/bad.dpir" 2>"$tmp/stderr" ||
			{ fail "dpir/$name" "cannot parse $name.ir" "$(cat "$tmp/stderr")"; continue; }
	else
		case $name in
		magic) sub '\A\x95\xa4DPIR' '\x95\xa4DPIX' ;;
		future) sub '\A\x95\xa4DPIR\x01' '\x95\xa4DPIR\x02' ;;
		truncated) head -c $((bsize - 9)) "$w/base.dpir" ;;
		empty) : ;;
		stray) cat "$w/base.dpir"; printf '\300' ;;
		not_msgpack) sub '\xa4vals' '\xa4vals\xc1' ;;
		wrong_type) sub '\xa3f32' '\x93\x01\x02\x03' ;;
		wrong_map) sub '\x83\xa5stage' '\x96\xa5stage' ;;
		missing_key) sub '\xa5parts' '\xa5party' ;;
		unknown_dtype) sub '\xa3f32' '\xa3f33' ;;
		unknown_op) sub '\xa7softmax' '\xa7softmix' ;;
		nul_string) sub '\xa4prog' '\xa4pr\x00g' ;;
		fuzz_huge_array) sub '\xa4vals[\x90-\x9f]' '\xa4vals\xdd\xff\xff\xff\xff' ;;
		huge_string) sub '\xa4prog' '\xdb\x7f\xff\xff\xffprog' ;;
		fuzz_name) sub '\xa4prog' '\xa4pr\/g' ;;
		fuzz_stage) sub '\xa6import' '\xa6imp rt' ;;
		ssa_use) sub '\xa7softmax\x91\x00\x91\x01' '\xa7softmax\x91\x01\x91\x01' ;;
		ssa_twice) sub '\xa7softmax\x91\x00\x91\x01' '\xa7softmax\x91\x00\x91\x00' ;;
		dangling_operand) sub '\xa7softmax\x91\x00' '\xa7softmax\x91\x07' ;;
		dangling_output) sub '\xa1y\x01' '\xa1y\x09' ;;
		*) fail "dpir/$name" "no recipe for $name in tests/malformed.t"; continue ;;
		esac >"$w/bad.dpir"
	fi
	expect "dpir/$name" "$e" place bad.dpir cpu
done

# ---- text IR, through devproc parse ----
for f in "$dir"/text/*.ir; do
	name=$(basename "$f" .ir)
	cp "$f" "$w/$name.ir"
	expect "text/$name" "$dir/text/$name.err" "$bin/devproc" parse "$name.ir" -o out/x.dpir
done

# ---- target mappings ----
for f in "$dir"/map/*.map; do
	name=$(basename "$f" .map)
	cp "$f" "$w/$name.map"
	expect "map/$name" "$dir/map/$name.err" place base.dpir "$name.map"
done

# ---- runtime inputs of a built program ----
printf 'pipeline prog\ninput x: f32[2,3]\ny = softmax(x, dim=1)\noutput y\n' >"$tmp/prog.dp"
if "$bin/devproc" build "$tmp/prog.dp" -C "$tmp/b" >"$tmp/build.log" 2>&1; then
	prog=$tmp/b/prog/prog
	# npy V DICT DATA: an .npy file of version V with header DICT, then the
	# bytes printf makes of DATA
	npy() {
		len=$(printf '%s' "$2" | wc -c)
		printf '\223NUMPY'
		printf "\\00$1\\000\\$(printf %03o $((len % 256)))\\$(printf %03o $((len / 256)))"
		[ "$1" = 1 ] || printf '\000\000'
		printf '%s' "$2"
		printf "$3"
	}
	f6='\0\0\200\77\0\0\0\100\0\0\100\100\0\0\200\100\0\0\240\100\0\0\300\100'
	good="{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
	npy 1 "$good" "$f6" >"$w/good.npy"
	for e in "$dir"/npy/*.err; do
		name=$(basename "$e" .err)
		args="--in x=bad.npy --out y=out/y.npy"
		rm -f "$w/bad.npy"
		case $name in
		shape) npy 1 "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }" "$f6" ;;
		rank) npy 1 "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }" "$f6" ;;
		dtype) npy 1 "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }" "$f6$f6" ;;
		not_npy) printf 'x,y\n1,2\n' ;;
		empty) : ;;
		truncated_data) head -c $(($(wc -c <"$w/good.npy") - 8)) "$w/good.npy" ;;
		truncated_header) head -c 40 "$w/good.npy" ;;
		header_length) npy 2 "$good" "$f6" | head -c 12; printf 'garbage' ;;
		version) npy 4 "$good" "$f6" ;;
		fortran) npy 1 "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }" "$f6" ;;
		huge_shape) npy 1 "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 2), }" "" ;;
		overflow_shape) npy 1 "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 3), }" "" ;;
		bad_dict) npy 1 "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)" "$f6" ;;
		structured) npy 1 "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3), }" "$f6" ;;
		missing_in) args="--out y=out/y.npy" ;;
		unknown_in) args="--in x=good.npy --in z=good.npy --out y=out/y.npy" ;;
		twice) args="--in x=good.npy --in x=good.npy --out y=out/y.npy" ;;
		missing_file) args="--in x=none.npy --out y=out/y.npy" ;;
		directory) args="--in x=out --out y=out/y.npy" ;;
		out_dir) args="--in x=good.npy --out y=out/none/y.npy" ;;
		*) fail "npy/$name" "no recipe for $name in tests/malformed.t"; continue ;;
		esac >"$w/bad.npy"
		# shellcheck disable=SC2086
		expect "npy/$name" "$e" "$prog" $args
	done
else
	fail "a program for the runtime cases builds" "$(cat "$tmp/build.log")"
fi

# ---- .safetensors checkpoints and weight blobs given to a built program
# (examples/classify: fc1.weight f32[512,3072], fc1.bias f32[512],
# fc2.weight f32[10,512], fc2.bias f32[10]); tests/st.pl writes them ----
if "$bin/devproc" build "$root/examples/classify/classify.dp" -C "$tmp/c" >"$tmp/build.log" 2>&1; then
	cprog=$tmp/c/classify/classify
	cp "$root/examples/classify/image.npy" "$w/image.npy"
	st() { perl "$root/tests/st.pl" "$w/bad.safetensors" "$@"; }
	w1=fc1.weight:F32:512,3072:- b1=fc1.bias:F32:512:- w2=fc2.weight:F32:10,512:- b2=fc2.bias:F32:10:-
	hdr() { printf '{"fc2.bias":{"dtype":"%s","shape":[%s],"data_offsets":[%s]}}' "$@"; }
	for e in "$dir"/safetensors/*.err; do
		name=$(basename "$e" .err)
		files=bad.safetensors
		rm -f "$w/bad.safetensors"
		case $name in
		missing_tensor) st $w1 $b1 $w2 ;;
		dtype) st $w1 fc1.bias:I32:512:- $w2 $b2 ;;
		shape) st $w1 $b1 $w2 fc2.bias:F32:11:- ;;
		unsupported_dtype) st $w1 $b1 $w2 fc2.bias:U16:10:- ;;
		unknown_dtype) st --header "$(hdr Q7 10 0,40)" $b2 ;;
		truncated) st $w1 $b1 $w2 $b2 --cut 100 ;;
		header_size) st $b2 --size 99999999 ;;
		not_json) st --header 'not json' $b2 ;;
		not_object) st --header '[1, 2]' $b2 ;;
		duplicate) st --header '{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}' $b2 ;;
		bad_offsets) st --header "$(hdr F32 10 40,0)" $b2 ;;
		span) st --header "$(hdr F32 10 0,36)" $b2 ;;
		negative_size) st --header "$(hdr F32 -10 0,40)" $b2 ;;
		rank) st --header "$(hdr F32 1,1,1,1,1,1,1,1,10 0,40)" $b2 ;;
		no_dtype) st --header '{"fc2.bias":{"shape":[10],"data_offsets":[0,40]}}' $b2 ;;
		empty) : >"$w/bad.safetensors" ;;
		missing_file) files=none.safetensors ;;
		two_blobs) cp "$tmp/c/classify/weights.bin" "$w/bad.safetensors"; files="bad.safetensors bad.safetensors" ;;
		blob_size) head -c 128 "$tmp/c/classify/weights.bin" >"$w/bad.safetensors" ;;
		*) fail "safetensors/$name" "no recipe for $name in tests/malformed.t"; continue ;;
		esac
		set -- --in image=image.npy --out label=out/label.npy
		for f in $files; do set -- "$@" --weights "$f"; done
		expect "safetensors/$name" "$e" "$cprog" "$@"
	done
else
	fail "a program with weights for the checkpoint cases builds" "$(cat "$tmp/build.log")"
fi

# ---- inputs that must be accepted: text IR that parses, dumps and parses
# back to the same DPIR (regressions of fuzz findings on valid input) ----
for f in "$dir"/accept/*.ir; do
	name=$(basename "$f" .ir)
	if "$bin/devproc" parse "$f" -o "$tmp/a.dpir" 2>"$tmp/stderr" &&
		"$bin/devproc" dump "$tmp/a.dpir" >"$tmp/a.txt" 2>>"$tmp/stderr" &&
		"$bin/devproc" parse "$tmp/a.txt" -o "$tmp/b.dpir" 2>>"$tmp/stderr" &&
		cmp -s "$tmp/a.dpir" "$tmp/b.dpir"; then
		pass "accept/$name"
	else
		fail "accept/$name" "$(cat "$tmp/stderr")"
	fi
done

# ---- torn writes ----
# torn NAME PROG HOW AT COMMAND...: runs COMMAND (in $w) with the shim
# tearing PROG's AT-th write (HOW: kill or full)
torn() {
	tprog=$2 thow=$3 tat=$4
	shift 4
	# the outer subshell reports "Killed" to /dev/null, not to the TAP stream
	( (cd "$w" && LD_PRELOAD=$tmp/tear.so TEAR_PROG=$tprog TEAR=$thow TEAR_AT=$tat \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" "$@") \
		>"$tmp/stdout" 2>"$tmp/stderr"; echo $? >"$tmp/rc") 2>/dev/null
	return "$(cat "$tmp/rc")"
}
# same NAME FILE WANT: FILE holds WANT's bytes
same() {
	if cmp -s "$2" "$3"; then pass "$1"; else fail "$1" "$2 is not $3: $(ls -l "$2" "$3" 2>&1)"; fi
}
# notmp NAME FOLDER WANT: FOLDER holds exactly the files WANT (no temporaries)
notmp() {
	got=$(cd "$2" && ls -A | tr '\n' ' ')
	if [ "$got" = "$3" ]; then pass "$1"; else fail "$1" "in $2: $got" "want: $3"; fi
}
if ! $cc -shared -fPIC -o "$tmp/tear.so" "$dir/tear.c" -ldl 2>"$tmp/cc.log"; then
	skip "torn writes" "cannot build tests/malformed/tear.c: $(head -1 "$tmp/cc.log")"
else
	t=$w/torn
	mkdir -p "$t/prev" "$t/new"
	cp fuzz/seeds/pt2/ops.pt2 "$w/ops.pt2"
	printf 'input x: f32[1,8]\ny = model("core.pt2", x)\noutput y\n' >"$w/a.dp"
	printf 'input x: f32[1,8]\ny = model("ops.pt2", x)\noutput y\n' >"$w/b.dp"
	"$bin/dp-import" "$w/a.dp" -o "$t/prev/1.dpir" -w "$t/prev/w.bin" &&
		"$bin/dp-import" "$w/b.dp" -o "$t/new/1.dpir" -w "$t/new/w.bin" ||
		fail "torn: the imports to tear build"

	# import killed writing weights.bin: both outputs stay the previous ones
	rm -rf "$t/o" && cp -R "$t/prev" "$t/o"
	torn x dp-import kill 1 "$bin/dp-import" b.dp -o torn/o/1.dpir -w torn/o/w.bin
	rc=$?
	[ $rc -eq 137 ] && pass "import killed (SIGKILL) writing the weights" ||
		fail "import killed (SIGKILL) writing the weights" "exit status $rc (want 137)"
	same "killed import: weights.bin is the previous one, whole" "$t/o/w.bin" "$t/prev/w.bin"
	same "killed import: the IR is the previous one, whole" "$t/o/1.dpir" "$t/prev/1.dpir"
	# killed writing the IR, after the new weights are in place: each file whole
	rm -rf "$t/o" && cp -R "$t/prev" "$t/o"
	export TEAR_PATH=1.dpir   # the first write into the IR, however many the blob took
	torn x dp-import kill 1 "$bin/dp-import" b.dp -o torn/o/1.dpir -w torn/o/w.bin
	unset TEAR_PATH
	same "import killed writing the IR: the new weights.bin, whole" "$t/o/w.bin" "$t/new/w.bin"
	same "import killed writing the IR: the previous IR, whole" "$t/o/1.dpir" "$t/prev/1.dpir"
	# a full disk: an error; import then removes all its outputs (none is
	# left rather than a set that does not belong together), temporaries too
	rm -rf "$t/o" && cp -R "$t/prev" "$t/o"
	torn x dp-import full 1 "$bin/dp-import" b.dp -o torn/o/1.dpir -w torn/o/w.bin
	rc=$?
	if [ $rc -eq 1 ] && [ "$(cat "$tmp/stderr")" = "torn/o/w.bin: import: cannot write torn/o/w.bin: No space left on device" ]; then
		pass "import on a full disk: one error, exit 1"
	else
		fail "import on a full disk: one error, exit 1" "exit status $rc" "$(cat "$tmp/stderr")"
	fi
	notmp "import on a full disk: no output and no temporary file left" "$t/o" ""

	# place: killed, and on a full disk
	"$bin/dp-place" "$t/prev/1.dpir" -t targets/cpu -o "$t/prev/3.dpir" &&
		cp targets/cpu "$w/other" && rm -rf "$t/o" && cp -R "$t/prev" "$t/o" ||
		fail "torn: place runs"
	torn x dp-place kill 1 "$bin/dp-place" torn/o/1.dpir -t other -o torn/o/3.dpir
	same "place killed (SIGKILL) writing: the previous output, whole" "$t/o/3.dpir" "$t/prev/3.dpir"
	# what a killed writer cannot remove, its temporary file, the next writer does
	ls "$t"/o/3.dpir.tmp* >/dev/null 2>&1 && pass "place killed: its temporary file is there" ||
		fail "place killed: its temporary file is there" "$(ls -A "$t/o")"
	(cd "$w" && "$bin/dp-place" torn/o/1.dpir -t other -o torn/o/3.dpir) ||
		fail "torn: place runs again"
	notmp "the next place removes the killed one's temporary file" "$t/o" "1.dpir 3.dpir w.bin "
	cp "$t/prev/3.dpir" "$t/o/3.dpir"
	torn x dp-place full 1 "$bin/dp-place" torn/o/1.dpir -t other -o torn/o/3.dpir
	rc=$?
	[ $rc -eq 1 ] && pass "place on a full disk: exit 1" || fail "place on a full disk: exit 1" "exit status $rc"
	same "place on a full disk: the previous output" "$t/o/3.dpir" "$t/prev/3.dpir"
	notmp "place on a full disk: no temporary file left" "$t/o" "1.dpir 3.dpir w.bin "

	# the runtime's --out: killed, and on a full disk
	if [ -n "${prog:-}" ]; then
		mkdir -p "$t/r"
		(cd "$w" && "$prog" --in x=good.npy --out y=torn/r/y.npy) >/dev/null &&
			cp "$t/r/y.npy" "$t/prev.npy" ||
			fail "torn: the program runs"
		npy 1 "$good" '\0\0\200\77\0\0\200\77\0\0\200\77\0\0\200\77\0\0\200\77\0\0\200\77' >"$w/ones.npy"
		torn x prog kill 1 "$prog" --in x=ones.npy --out y=torn/r/y.npy
		same "program killed writing --out: the previous file, whole" "$t/r/y.npy" "$t/prev.npy"
		# what a killed writer cannot remove, its temporary file, the next run does
		ls "$t"/r/y.npy.*.tmp >/dev/null 2>&1 && pass "program killed: its --out temporary file is there" ||
			fail "program killed: its --out temporary file is there" "$(ls -A "$t/r")"
		(cd "$w" && "$prog" --in x=good.npy --out y=torn/r/y.npy) >/dev/null ||
			fail "torn: the program runs again"
		notmp "the next run removes the killed one's --out temporary file" "$t/r" "y.npy "
		torn x prog full 1 "$prog" --in x=ones.npy --out y=torn/r/y.npy
		rc=$?
		[ $rc -eq 1 ] && pass "program on a full disk: exit 1" || fail "program on a full disk: exit 1" "exit status $rc"
		same "program on a full disk: the previous --out file" "$t/r/y.npy" "$t/prev.npy"
		notmp "program on a full disk: no temporary file left" "$t/r" "y.npy "
	fi

	# ninja: a stage killed mid-write fails the build; the next build
	# reruns it and ends as a clean build does
	nb=$tmp/nb
	printf 'pipeline p\ninput x: f32[1,8]\ny = model("core.pt2", x)\noutput y\n' >"$w/p.dp"
	if "$bin/devproc" build "$w/p.dp" -C "$nb" >"$tmp/log" 2>&1; then
		printf 'pipeline p\ninput x: f32[1,8]\ny = model("ops.pt2", x)\noutput y\n' >"$w/p.dp"
		(LD_PRELOAD=$tmp/tear.so TEAR_PROG=dp-place TEAR=kill TEAR_AT=1 \
			ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
			ninja -C "$nb") >"$tmp/log" 2>&1
		rc=$?
		[ $rc -ne 0 ] && pass "ninja: the build with place killed fails" ||
			fail "ninja: the build with place killed fails" "exit status $rc"
		ninja -C "$nb" >"$tmp/log" 2>&1
		rc=$?
		if [ $rc -eq 0 ] && grep -q "place" "$tmp/log"; then
			pass "ninja: the next build reruns place and succeeds"
		else
			fail "ninja: the next build reruns place and succeeds" "exit status $rc" "$(cat "$tmp/log")"
		fi
		"$bin/devproc" build "$w/p.dp" -C "$tmp/clean" >"$tmp/log" 2>&1
		for f in 1.import.dpir weights.bin 3.place.dpir 4.partition.dpir 5.cpu.c; do
			cmp -s "$nb/p/$f" "$tmp/clean/p/$f" || break
		done
		same "ninja: after the torn build, $f equals a clean build's" "$nb/p/$f" "$tmp/clean/p/$f"
	else
		fail "torn: a pipeline builds with ninja" "$(cat "$tmp/log")"
	fi
fi

echo "1..$n"
[ $fails -eq 0 ]
