#!/bin/sh
# build.t: DevProc as a build-graph citizen (TAP).  Which edges each kind of
# edit reruns, counted from ninja's status lines and cross-checked against
# the entries the build added to .ninja_log; determinism across build and
# source folders; several pipelines in one graph; a subninja; the CMake and
# Make integrations (examples/); the inspection commands (dump of every
# artifact kind, --dot, stages, trace).  Data: tests/build/.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh   # $tmp, n, fails, check, skip, gpu

# A private copy of the DevProc folder (tools, runtime, rules, targets,
# cmake/), so that tests can touch a tool or a runtime header, and a
# concurrent make in the repository cannot disturb the counts.
dpr=$tmp/devproc
mkdir -p "$dpr/bin" "$dpr/lib"
cp -p bin/devproc bin/dp-* "$dpr/bin/" && cp -p lib/libdprt*.a "$dpr/lib/" &&
	cp -pR runtime targets cmake rules.ninja config.mk "$dpr/" || exit 1
dp=$dpr/bin/devproc

# Sources, laid out as in the repository (the .dp files name their archives
# by relative paths): $src is edited by the tests, $src2 stays pristine.
for s in src src2; do
	d=$tmp/$s
	mkdir -p "$d/examples/classify" "$d/examples/two_models" "$d/tests/data"
	cp examples/classify/classify.dp examples/classify/mlp.pt2 examples/classify/image.npy \
		"$d/examples/classify/" &&
		cp examples/two_models/two_models.dp "$d/examples/two_models/" &&
		cp tests/data/mlp_core.pt2 "$d/tests/data/" && cp targets/cpu "$d/map" || exit 1
done
src=$tmp/src
src2=$tmp/src2
cc=${DP_TEST_CC:-cc}   # make SAN=1: the examples must compile with the sanitizers too
image=$src2/examples/classify/image.npy
pipes="$src/examples/classify/classify.dp $src/examples/two_models/two_models.dp"
b1=$tmp/b1

# tick: waits long enough that a file written next gets a later mtime than
# every file written before (0.05 s where mtimes have sub-second
# resolution, else 1 s)
tickwait=1
: >"$tmp/t1"
if sleep 0.05 2>/dev/null; then
	: >"$tmp/t2"
	[ -n "$(find "$tmp/t2" -newer "$tmp/t1")" ] && tickwait=0.05
fi
tick() { sleep "$tickwait"; }

# build DIR COMMAND...: runs a build whose ninja runs in DIR; the edges it
# ran go to $tmp/ran, one "STAGE PIPELINE" a line, sorted (from ninja's
# status lines, NINJA_STATUS-marked).  Their number must equal that of the
# edge runs the build added to DIR/.ninja_log (new lines, told apart by
# start, end and command hash).
build() {
	bdir=$1
	shift
	sort "$bdir/.ninja_log" >"$tmp/log.before" 2>/dev/null || : >"$tmp/log.before"
	NINJA_STATUS='@@ ' "$@" >"$tmp/out" 2>&1 || { cat "$tmp/out"; return 1; }
	sed -n 's/^@@ //p' "$tmp/out" | sed 's/^DevProc //' |
		awk '{ p = $2; sub(/\/.*/, "", p); print $1, p }' | sort >"$tmp/ran"
	logged=$(sort "$bdir/.ninja_log" | comm -13 "$tmp/log.before" - | grep -v '^#' |
		awk -F '\t' '{ print $1, $2, $5 }' | sort -u | wc -l)
	if [ "$logged" -ne "$(wc -l <"$tmp/ran")" ]; then
		echo "ninja ran $(wc -l <"$tmp/ran") edges but .ninja_log got $logged new edge runs"
		cat "$tmp/out"
		return 1
	fi
}
# want EDGE...: the edges that ran are exactly these ("STAGE PIPELINE")
want() { printf '%s\n' "$@" | sed '/^$/d' | sort >"$tmp/want"; samewant; }
samewant() {
	diff "$tmp/want" "$tmp/ran" >/dev/null || {
		echo "edges that ran differ from those wanted (< wanted, > ran):"
		diff "$tmp/want" "$tmp/ran"
		return 1
	}
}

# snap FILE: every artifact's mtime (ns) in $b1
snap() { (cd "$b1" && find . -type f ! -name '.ninja_*' -exec stat -c '%n %y' {} + | sort) >"$1"; }
# changed PATH: whether the build rewrote $b1/PATH (between before and after)
changed() { [ "$(grep "^\./$1 " "$tmp/before")" != "$(grep "^\./$1 " "$tmp/after")" ]; }
# chain ENTRY...: the edges that must rerun when each ENTRY (STAGE:PIPELINE)
# was put out of date by an edit: those, and each edge one of whose inputs
# the build rewrote (restat: an unchanged artifact stops the rebuild)
chain() {
	for p in classify two_models; do
		for s in import verify legalize place partition lower_cpu cc link; do
			case " $* " in *" $s:$p "*) echo "$s $p"; continue ;; esac
			case $s in
			verify | legalize) changed $p/1.import.dpir ;;
			place) changed $p/2.legalize.dpir ;;
			partition) changed $p/3.place.dpir ;;
			lower_cpu) changed $p/4.partition.dpir ;;
			cc) changed $p/5.cpu.c ;;
			link) changed $p/4.partition.dpir || changed $p/5.cpu.o || changed $p/weights.bin ;;
			*) false ;;
			esac && echo "$s $p"
		done
	done
}
# wantchain ENTRY... [-- EDGE...]: want the chain of the ENTRYs, and EDGEs
wantchain() {
	entries=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		entries="$entries $1"
		shift
	done
	[ $# -gt 0 ] && shift
	# shellcheck disable=SC2086
	{ chain $entries; printf '%s\n' "$@"; } | sed '/^$/d' | sort >"$tmp/want"
	samewant
}
rebuild() { # EDIT...: snapshot, tick, run the edit, ninja in $b1, snapshot
	snap "$tmp/before"
	tick
	"$@" || return 1
	build "$b1" ninja -C "$b1" || return 1
	snap "$tmp/after"
}

# ---- one graph, two pipelines, two models in one of them

cold() {
	# shellcheck disable=SC2086
	build "$b1" "$dp" build $pipes --target "$src/map" -C "$b1" || return 1
	[ "$(wc -l <"$tmp/ran")" -eq 16 ] || { echo "want 16 edges:"; cat "$tmp/ran"; return 1; }
	[ "$(grep -c '^include ' "$b1/build.ninja")" -eq 1 ] &&
		grep -q '^build classify/1.import.dpir classify/weights.bin: dp_import' "$b1/build.ninja" &&
		grep -q '^build two_models/1.import.dpir two_models/weights.bin: dp_import' "$b1/build.ninja" &&
		grep -q '^default classify/classify two_models/two_models$' "$b1/build.ninja"
}
check "cold build: classify and two_models in one build.ninja (one rules.ninja, shared tools), 8 edges each" cold

label=$("$b1/classify/classify" --in image="$image" | sed -n 's/^label = \[\(.*\)\]$/\1/p')
runs() {
	[ -n "$label" ] || { echo "classify printed no label"; return 1; }
	"$b1/two_models/two_models" --in image="$image" --out a="$tmp/a.npy" --out b="$tmp/b.npy" \
		>"$tmp/two" || return 1
	cat "$tmp/two"
	grep -qx "label_a = \[$label\]" "$tmp/two" && grep -qx "label_b = \[$label\]" "$tmp/two" || return 1
	[ ! -x bin/npycmp ] || { bin/npycmp --tol 1e-5 "$tmp/a.npy" "$tmp/b.npy" &&
		bin/npycmp --tol 1e-5 "$tmp/a.npy" tests/data/classify/logits.npy; }
}
check "two_models runs both archives (training IR and Core ATen) on one input: equal logits and labels" runs

dups() {
	mkdir -p "$tmp/dup"
	cp "$src/examples/classify/classify.dp" "$tmp/dup/"
	! "$dp" gen "$src/examples/classify/classify.dp" "$tmp/dup/classify.dp" -C "$tmp/dupb" 2>"$tmp/err" &&
		grep -q "two pipelines are named 'classify'" "$tmp/err"
}
check "two pipelines with one name: an error" dups

# ---- e: determinism across folders

b2=$tmp/elsewhere/deeper/b2
same() {
	mkdir -p "$tmp/elsewhere"
	(cd "$tmp/elsewhere" && "$dp" build ../src2/examples/classify/classify.dp \
		../src2/examples/two_models/two_models.dp --target ../src2/map -C deeper/b2) || return 1
	bad=
	for p in classify two_models; do
		[ "$(ls "$b1/$p")" = "$(ls "$b2/$p")" ] || { echo "$p: different files"; return 1; }
		for f in "$b1/$p"/*; do
			cmp "$f" "$b2/$p/${f##*/}" || bad="$bad $p/${f##*/}"
		done
	done
	[ -z "$bad" ] || { echo "differ:$bad"; return 1; }
}
check "e: two clean builds (other source, build and working folders) are byte-identical: DPIR, weights, stamp, .c, .o, .h, .a, executable" same

# ---- a: no-op

noop() {
	snap "$tmp/before"
	build "$b1" ninja -C "$b1" || return 1
	want || return 1
	grep -q 'no work to do' "$tmp/out" || return 1
	# shellcheck disable=SC2086
	build "$b1" "$dp" build $pipes --target "$src/map" -C "$b1" || return 1
	want || return 1
	snap "$tmp/after"
	cmp "$tmp/before" "$tmp/after" || { echo "files rewritten"; diff "$tmp/before" "$tmp/after"; return 1; }
}
check "a: a no-op build (ninja, and devproc build) runs no edge and writes no file" noop

# ---- b: edits of the .dp

addout() { printf 'probs = softmax(logits, dim=1)\noutput probs\n' >>"$src/examples/classify/classify.dp"; }
post() {
	cp "$b1/classify/weights.bin" "$tmp/weights.before"
	rebuild addout || return 1
	wantchain import:classify || return 1
	want "import classify" "verify classify" "legalize classify" "place classify" "partition classify" \
		"lower_cpu classify" "cc classify" "link classify" || return 1
	! changed classify/weights.bin || { echo "weights.bin was rewritten"; return 1; }
	cmp "$tmp/weights.before" "$b1/classify/weights.bin" || return 1
	"$b1/classify/classify" --in image="$image" | grep -q '^probs'
}
check "b: a new postprocessing output reruns classify's chain, none of two_models; weights.bin same bytes, same mtime" post

stages_after_post() {
	"$dp" stages "$b1" >"$tmp/st" || return 1
	cat "$tmp/st"
	for p in classify two_models; do
		for f in 1.import.dpir weights.bin 2.verify.stamp 2.legalize.dpir 3.place.dpir 4.partition.dpir 5.cpu.c 5.cpu.o \
			$p lib$p.a $p.h; do
			size=$(wc -c <"$b1/$p/$f")
			line=$(sed -n "/^$p (/,/^[^ ]/p" "$tmp/st" | grep " $f ") || { echo "no row for $p/$f"; return 1; }
			echo "$line" | grep -Eq " $size  [0-9a-f]{16}  [0-9]+ ms" || { echo "bad row: $line"; return 1; }
			# * marks the artifacts of the edges the last build ran
			case $p in classify) echo "$line" | grep -q ' \*$' ;; *) ! echo "$line" | grep -q '\*' ;; esac ||
				{ echo "wrong mark: $line"; return 1; }
		done
	done
	whash=$("$dp" dump "$b1/classify/1.import.dpir" | sed -n 's/^weights "weights.bin" "\([0-9a-f]*\)".*/\1/p')
	grep -Eq "^  import +weights.bin +[0-9]+  $whash " "$tmp/st"
}
check "stages: every artifact's size, hash (weights.bin's is the IR's) and last run time; * on those the last build ran" stages_after_post

trace_after_post() {
	"$dp" trace "$b1" -o "$tmp/trace.json" || return 1
	perl -MJSON::PP -e 'local $/; open my $f, "<", $ARGV[0] or die "$!\n";
		my $j = JSON::PP->new->utf8->decode(<$f>);
		my @x = grep { $_->{ph} eq "X" } @{$j->{traceEvents}};
		for (@x) { die "bad event\n" unless $_->{dur} >= 0 && defined $_->{tid} && $_->{cat} eq "devproc" }
		print "$_->{name}\n" for @x' "$tmp/trace.json" | sort >"$tmp/names" || return 1
	diff "$tmp/names" "$tmp/ran"
}
check "trace: valid Chrome trace JSON with one complete event per edge of the last build" trace_after_post

comment() { printf '# a comment only\n' >>"$src/examples/classify/classify.dp"; }
comment_edit() {
	rebuild comment || return 1
	want "import classify" || return 1
	! changed classify/1.import.dpir || { echo "1.import.dpir rewritten for a comment"; return 1; }
}
check "b: a comment-only .dp edit reruns import alone (the IR's .dp hash leaves comments out: same bytes, restat stops)" comment_edit

# ---- c: edits of the target mapping

maprule() { printf 'op argmax cpu\n' >>"$src/map"; }
mapping() {
	rebuild maprule || return 1
	wantchain place:classify place:two_models -- "regenerate build.ninja" || return 1
	! grep -q '^import \|^verify ' "$tmp/ran" || return 1
	"$dp" dump "$b1/classify/3.place.dpir" | grep -q 'op argmax -> cpu'
}
check "c: a new mapping rule reruns place and what it changed for both pipelines (and build.ninja's check), not import" mapping

mapcomment() { printf '# a comment only\n' >>"$src/map"; }
mapping_comment() {
	rebuild mapcomment || return 1
	want "regenerate build.ninja" "place classify" "place two_models"
}
check "c: a comment-only mapping edit reruns place only (its outputs are unchanged)" mapping_comment

# ---- d: touched archives

touchpt2() {
	rebuild touch "$src/examples/classify/mlp.pt2" || return 1
	want "import classify" "import two_models" || return 1
	rebuild touch "$src/tests/data/mlp_core.pt2" || return 1
	want "import two_models"
}
check "d: touching a .pt2 (same bytes) reruns the imports that read it and nothing else" touchpt2

# ---- a rebuilt tool reruns exactly its edges

tool() { # STAGE
	rebuild touch "$dpr/bin/dp-$1" || return 1
	want "$1 classify" "$1 two_models"
}
for s in import verify legalize place partition lower_cpu link; do
	check "rebuilt dp-$s: its two edges rerun, nothing else" tool $s
done
runtime_header() {
	rebuild touch "$dpr/runtime/dprt.h" || return 1
	want "cc classify" "cc two_models" "link classify" "link two_models"
}
check "a changed runtime header recompiles (through cc's depfile) and relinks; nothing else" runtime_header
runtime_lib() {
	rebuild touch "$dpr/lib/libdprt.a" || return 1
	want "link classify" "link two_models"
}
check "a changed runtime library relinks; nothing else" runtime_lib
driver() {
	rebuild touch "$dpr/bin/devproc" || return 1
	want "regenerate build.ninja"
}
check "a rebuilt devproc reruns only build.ninja's regeneration" driver

# ---- the generated file: relative paths, a subninja

reloc() {
	mkdir -p "$tmp/proj"
	cp "$src2/examples/classify/classify.dp" "$src2/examples/classify/mlp.pt2" "$tmp/proj/"
	(cd "$tmp/proj" && "$dp" gen classify.dp -C .) || return 1
	grep -q '^build classify/1.import.dpir classify/weights.bin: dp_import classify.dp ' \
		"$tmp/proj/build.ninja" || return 1
	ninja -C "$tmp/proj" >/dev/null || return 1
	mv "$tmp/proj" "$tmp/proj-moved"
	build "$tmp/proj-moved" ninja -C "$tmp/proj-moved" || return 1
	want && grep -q 'no work to do' "$tmp/out"
}
check "paths under -C are relative: a build folder with its sources moves and stays up to date" reloc

nin=$src2/examples/ninja
subninja() {
	mkdir -p "$nin"
	sed "s|^cc = cc\$|cc = $cc|" examples/ninja/build.ninja >"$nin/build.ninja" && cp examples/ninja/app.c "$nin/"
	(cd "$nin" && "$dp" gen ../classify/classify.dp -C . -o devproc.ninja) || return 1
	! grep -q '^default\|^build build.ninja\|: phony' "$nin/devproc.ninja" ||
		{ echo "devproc.ninja has a default, an alias or a regeneration edge"; return 1; }
	(cd "$tmp" && "$dp" gen src2/examples/classify/classify.dp -C src2/examples/ninja -o "$tmp/other.ninja") &&
		cmp "$nin/devproc.ninja" "$tmp/other.ninja" || { echo "depends on the working folder"; return 1; }
	build "$nin" ninja -C "$nin" || return 1
	grep -q '^cc app.o$' "$tmp/ran" && grep -q '^ld app$' "$tmp/ran" && grep -q '^link classify$' "$tmp/ran" ||
		return 1
	"$nin/app" "$image" | grep "^label $label " || return 1
	build "$nin" ninja -C "$nin" && want
}
check "examples/ninja: a hand-written build.ninja subninjas devproc gen -o; app links libclassify.a, runs; no-op after" subninja

# ---- CMake and Make

cxx=$(sed -n 's/^CXX = //p' config.mk 2>/dev/null)   # the host half's compiler (launch.cuh)

cmb=$tmp/cmake-build
if command -v cmake >/dev/null 2>&1; then
	cmake_build() {
		cp -R examples/cmake "$src2/examples/" || return 1
		cmake -S "$src2/examples/cmake" -B "$cmb" -G Ninja -DDEVPROC_ROOT="$dpr" \
			${DP_TEST_CC:+-DCMAKE_C_COMPILER="$DP_TEST_CC"} || return 1
		build "$cmb" ninja -C "$cmb" || return 1
		for s in import verify legalize place partition lower_cpu cc link; do
			grep -q "^$s classify$" "$tmp/ran" || { echo "no $s edge"; return 1; }
		done
		"$cmb/app" "$image" | grep "^label $label "
	}
	check "examples/cmake: cmake -G Ninja builds the pipeline one stage per edge, links app; app runs" cmake_build
	cmake_incr() {
		build "$cmb" ninja -C "$cmb" && want || return 1
		tick
		touch "$src2/examples/classify/mlp.pt2"
		build "$cmb" ninja -C "$cmb" && want "import classify" || return 1
		# the same commands as devproc gen's, in the same relative form: the
		# same bytes (objects too, when CMake's C compiler is configure's)
		files="1.import.dpir weights.bin 2.verify.stamp 2.legalize.dpir 3.place.dpir 4.partition.dpir 5.cpu.c classify.h"
		[ -n "${DP_TEST_CC:-}" ] || files="$files 5.cpu.o libclassify.a classify"
		for f in $files; do
			cmp "$cmb/classify/$f" "$nin/classify/$f" || return 1
		done
	}
	check "CMake: no-op runs nothing; a touched .pt2 reruns import only (DEPFILE); artifacts equal devproc gen's" cmake_incr
	# TARGET cuda (no GPU needed to build): the same lowering (the
	# mapping's tune lines) and the same compiles as devproc build's
	if grep -q '^NVCC = .' config.mk; then
		cmake_cuda() {
			cs=$tmp/cmake-cuda
			mkdir -p "$cs" && cp -R "$src2/examples/cmake" "$cs/src" && mkdir -p "$cs/classify" &&
				cp "$src2/examples/classify/classify.dp" "$src2/examples/classify/mlp.pt2" "$cs/classify/" &&
				sed -i 's/TARGET cpu)/TARGET cuda)/' "$cs/src/CMakeLists.txt" &&
				grep -q 'TARGET cuda)' "$cs/src/CMakeLists.txt" &&
				cmake -S "$cs/src" -B "$cs/b" -G Ninja -DDEVPROC_ROOT="$dpr" \
					${DP_TEST_CC:+-DCMAKE_C_COMPILER="$DP_TEST_CC"} >"$cs/log" 2>&1 &&
				ninja -C "$cs/b" >>"$cs/log" 2>&1 &&
				(cd "$cs" && "$dp" build classify/classify.dp --target cuda -C dv >>"$cs/log" 2>&1) ||
				{ cat "$cs/log"; return 1; }
			files="5.gpu.cu 5.gpu.o classify.h"
			[ -z "$cxx" ] || files="$files 5.gpu.fatbin"
			[ -n "${DP_TEST_CC:-}" ] || files="$files libclassify.a classify"
			for f in $files; do
				cmp "$cs/b/classify/$f" "$cs/dv/classify/$f" || return 1
			done
		}
		check "CMake, TARGET cuda: the .cu lowered with the mapping, compiled as devproc build compiles it; the same bytes" cmake_cuda
	else
		skip "configure found no nvcc"
	fi
else
	skip "no cmake"
	skip "no cmake"
	skip "no cmake"
fi

mkd=$src2/examples/make
make_build() {
	cp -R examples/make "$src2/examples/" || return 1
	build "$mkd/devproc-out" make -C "$mkd" DEVPROC="$dp" CC="$cc" || return 1
	"$mkd/app" "$image" | grep "^label $label " || return 1
	stat -c %y "$mkd/app" "$mkd/app.o" >"$tmp/mt"
	build "$mkd/devproc-out" make -C "$mkd" DEVPROC="$dp" CC="$cc" && want || return 1
	tick
	touch "$src2/examples/classify/mlp.pt2"
	build "$mkd/devproc-out" make -C "$mkd" DEVPROC="$dp" CC="$cc" && want "import classify" || return 1
	stat -c %y "$mkd/app" "$mkd/app.o" | cmp - "$tmp/mt" || { echo "app rebuilt"; return 1; }
}
check "examples/make: a Makefile calls devproc build and links libclassify.a; reruns rebuild nothing needless" make_build

# ---- CUDA graphs: lower_gpu and nvcc edges (no GPU needed to build)

nvcc=$(sed -n 's/^NVCC = //p' config.mk 2>/dev/null)
if [ -n "$nvcc" ]; then
	cudahost() {
		bc=$tmp/bcuda
		build "$bc" "$dp" build "$src2/examples/classify/classify.dp" --target tests/build/cudahost -C "$bc" ||
			return 1
		if [ -n "$cxx" ]; then   # the .cu's halves side by side (runtime/cuda/launch.cuh)
			want "import classify" "verify classify" "legalize classify" "place classify" "partition classify" \
				"lower_cpu classify" "lower_gpu classify" "cc classify" "nvcc classify" "c++ classify" \
				"link classify" || return 1
			grep -q '^build classify/5.gpu.fatbin: dp_nvcc_device classify/5.gpu.cu$' "$bc/build.ninja" &&
				grep -q '^build classify/5.gpu.o: dp_cxx_host classify/5.gpu.cu$' "$bc/build.ninja" &&
				grep -q '^build classify/classify .*: dp_link .* classify/5.gpu.o classify/5.gpu.fatbin' \
					"$bc/build.ninja" || { echo "no halves in build.ninja"; return 1; }
		else
			want "import classify" "verify classify" "legalize classify" "place classify" "partition classify" \
				"lower_cpu classify" "lower_gpu classify" "cc classify" "nvcc classify" "link classify" ||
				return 1
		fi
		"$bc/classify/classify" --in image="$image" | grep -qx "label = \[$label\]" || return 1
		build "$bc" ninja -C "$bc" && want
	}
	check "a mapping with a cuda device adds lower_gpu, nvcc (-fatbin: the kernels) and c++ (the host half) edges (pool dp_compile); runs; no-op after" cudahost
	if [ -f targets/cuda ]; then
		cudasame() {
			for d in "$tmp/cu1" "$tmp/elsewhere/cu2"; do
				(cd "$tmp" && "$dp" build "$src2/examples/classify/classify.dp" --target cuda -C "$d") || return 1
			done
			grep -q 'k[0-9]' "$tmp/cu1/classify/5.gpu.cu" || { echo "no kernels in 5.gpu.cu"; return 1; }
			for f in "$tmp/cu1/classify"/*; do
				cmp "$f" "$tmp/elsewhere/cu2/classify/${f##*/}" || return 1
			done
		}
		check "e: --target cuda builds in two folders are byte-identical too (5.gpu.cu, 5.gpu.o, 5.gpu.fatbin)" cudasame
	else
		skip "no targets/cuda"
	fi
else
	skip "configure found no nvcc"
	skip "configure found no nvcc"
fi

# ---- inspection: dump of every artifact kind

dump_weights() {
	(cd "$b2" && "$dp" dump classify/weights.bin) >"$tmp/w" || { cat "$tmp/w"; return 1; }
	cat "$tmp/w"
	size=$(wc -c <"$b2/classify/weights.bin")
	grep -qx '  magic         DPWB' "$tmp/w" && grep -qx '  version       1.2' "$tmp/w" &&
		grep -qx "  file size     $size bytes in the header, $size on disk" "$tmp/w" &&
		grep -qx '  first tensor  at offset 64' "$tmp/w" && grep -q '^tensors (from classify/1.import.dpir):' "$tmp/w" &&
		grep -q ': this blob$' "$tmp/w" || return 1
	nt=$(sed -n 's/^  tensors       \([0-9]*\) distinct$/\1/p' "$tmp/w")
	[ "$nt" -gt 0 ] && [ "$(grep -c ' ok$' "$tmp/w")" -eq "$nt" ] || return 1
	grep -Eq "^  total: [0-9]+ bytes of tensor data in $nt tensors .* [0-9]+ with 64-byte alignment" "$tmp/w"
}
check "dump weights.bin: header fields, sizes, each tensor (from the IR beside it) with its hash checked" dump_weights

dump_bad_weights() {
	mkdir -p "$tmp/badw"
	cp "$b2/classify/weights.bin" "$b2/classify/1.import.dpir" "$tmp/badw/"
	printf '\377' | dd of="$tmp/badw/weights.bin" bs=1 seek=100 conv=notrunc 2>/dev/null
	! "$dp" dump "$tmp/badw/weights.bin" >"$tmp/w" && grep -q 'HASH OR BOUNDS MISMATCH' "$tmp/w" &&
		grep -q 'NOT this blob' "$tmp/w"
}
check "dump of a damaged blob names the mismatch and exits 1" dump_bad_weights

dump_map() {
	"$dp" dump tests/build/gpu >"$tmp/m" || return 1
	cat "$tmp/m"
	sed -n '/^rules/,/^placement/p' "$tmp/m" >"$tmp/rules"
	cat >"$tmp/want" <<-'EOF'
	rules, in file order:
	  line 6    default                 cpu
	  line 7    class    matmul         cuda
	  line 8    class    elementwise    cuda
	  line 9    op       aten.relu      cuda
	  line 10   op       argmax         cpu
	tunables:
	  gemm_tile = 128
	placement of each op (the last matching op rule, else the last class rule,
	EOF
	diff "$tmp/want" "$tmp/rules" || return 1
	grep -qx 'devices: cpu cuda sm_90' "$tmp/m" &&
		grep -Eq '^  aten.linear +matmul +cuda +gpu:7: class matmul -> cuda$' "$tmp/m" &&
		grep -Eq '^  aten.relu +elementwise +cuda +gpu:9: op aten.relu -> cuda$' "$tmp/m" &&
		grep -Eq '^  argmax +index +cpu +gpu:10: op argmax -> cpu$' "$tmp/m" || return 1
	printf 'target t\ndevice cpu\ndefault gpu\n' >"$tmp/badmap"
	! "$dp" dump "$tmp/badmap" 2>"$tmp/err" && grep -q "^$tmp/badmap:3:9: dump: " "$tmp/err"
}
check "dump of a target mapping: devices, rules as parsed, tunables, where each op goes; errors at line:col" dump_map

dump_other() {
	"$dp" dump "$b2/classify/libclassify.a" | grep -Eq '^  5.cpu.o +[0-9]+  [0-9a-f]{16}$' || return 1
	"$dp" dump "$b2/classify/classify" | grep -q ': ELF .*, [0-9]* bytes, hash [0-9a-f]*$' || return 1
	"$dp" dump "$b2/classify/5.cpu.c" | cmp - "$b2/classify/5.cpu.c" || return 1
	"$dp" dump "$b2/classify/2.verify.stamp" | grep -q '^verified ' || return 1
	"$dp" dump "$b2/classify/4.partition.dpir" | head -1 | grep -qx 'dpir 1.0 classify partition'
}
check "dump of the other artifacts: archive members, executables, generated text, stamps, DPIR" dump_other

dot_cuda() {
	mkdir -p "$tmp/g"
	"$dpr/bin/dp-place" "$b2/classify/1.import.dpir" -t tests/build/gpu -o "$tmp/g/3.place.dpir" &&
		"$dpr/bin/dp-partition" "$tmp/g/3.place.dpir" -o "$tmp/g/4.partition.dpir" || return 1
	"$dp" dump "$tmp/g/4.partition.dpir" >"$tmp/g/text" && "$dp" dump --dot "$tmp/g/4.partition.dpir" >"$tmp/g/dot" ||
		return 1
	cat "$tmp/g/dot"
	nparts=$(grep -c '^part ' "$tmp/g/text")
	ncopy=$(grep -c ' = copy ' "$tmp/g/text")
	ncuda=$(grep '@cuda part=' "$tmp/g/text" | grep -vc ' = copy ')
	[ "$nparts" -ge 2 ] && [ "$ncopy" -ge 2 ] && [ "$ncuda" -ge 1 ] || { echo "mapping placed too little on cuda"; return 1; }
	head -1 "$tmp/g/dot" | grep -qx 'digraph "classify" {' || return 1
	[ "$(grep -c 'subgraph cluster_part' "$tmp/g/dot")" -eq "$nparts" ] || return 1
	[ "$(grep '^    op' "$tmp/g/dot" | grep -c 'shape=cds')" -eq "$ncopy" ] || return 1
	[ "$(grep '^    op' "$tmp/g/dot" | grep -c 'fillcolor="#b2df8a"')" -eq "$ncuda" ] || return 1
	[ "$(grep -c 'color=red' "$tmp/g/dot")" -eq "$ncopy" ] || return 1   # crossings: into copies only
	if command -v dot >/dev/null 2>&1; then
		dot -Tsvg "$tmp/g/dot" >/dev/null || return 1
		"$dp" dump --dot "$b2/classify/1.import.dpir" | dot -Tsvg >/dev/null || return 1
	fi
	! "$dp" dump --dot "$b2/classify/weights.bin" 2>/dev/null
}
check "dump --dot: partitions as clusters, nodes coloured by device, copies marked, crossings red$(command -v dot >/dev/null 2>&1 || echo ' (no Graphviz here to render)')" dot_cuda

trace_escape() {
	mkdir -p "$tmp/tr"
	printf '# ninja log v5\n5\t50\t0\told.o\t1\n0\t10\t0\tweird"q\\b\001\377.o\tabc\n0\t10\t0\tcls/3.place.dpir\tdef\n' \
		>"$tmp/tr/.ninja_log"
	"$dp" trace "$tmp/tr" >"$tmp/tr/t.json" || return 1
	cat "$tmp/tr/t.json"
	perl -MJSON::PP -e 'local $/; open my $f, "<", $ARGV[0] or die; my $j = JSON::PP->new->utf8->decode(<$f>);
		my @x = sort { $a->{name} cmp $b->{name} } grep { $_->{ph} eq "X" } @{$j->{traceEvents}};
		exit !(@x == 2 && $x[0]{name} eq "place cls" && $x[1]{name} eq "weird\"q\\b\x{1}\x{fffd}.o" &&
		       $x[1]{ts} == 0 && $x[1]{dur} == 10000 && $x[0]{tid} != $x[1]{tid})' "$tmp/tr/t.json"
}
check "trace: only the last run; quotes, backslashes, control bytes and bad UTF-8 escaped; overlapping edges on separate lanes" trace_escape

help() {
	"$dp" --help >"$tmp/h" || return 1
	for c in build gen dump parse stages trace; do
		grep -q "^  $c " "$tmp/h" || { echo "--help lacks $c"; return 1; }
	done
	! "$dp" nosuch 2>/dev/null && ! "$dp" gen 2>/dev/null
}
check "devproc --help lists every command" help

echo "1..$n"
[ $fails -eq 0 ]
