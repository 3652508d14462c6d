#!/bin/sh
# weights-mmap.sh: resident memory of programs whose 3.2 GB weight blob is
# mapped at run time (dp-link --apart, --weights FILE).  The blob is a
# sparse file (a valid header, then zeros); program K sums the first K
# floats of its one 3.2 GB constant, so it touches 4·K bytes of the blob.
# Prints each program's peak resident set over 3 runs: it grows with the
# pages touched, not with the blob.  Run from the repository root after
# make:   sh bench/weights-mmap.sh [GB]
set -e
gb=${1:-3.2}
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=$(awk "BEGIN { printf \"%d\", $gb * 250000000 }")   # f32 elements
bytes=$((n * 4))
size=$((bytes + 64))
# the header (formats/weights.md), then zeros: a sparse file
perl -e 'print "DPWB", pack("vvVV", 1, 1, 1, 0), pack("Q<Q<", $ARGV[0], 64), "\0" x 32' "$size" >"$tmp/weights.bin"
truncate -s "$size" "$tmp/weights.bin"
echo "blob: $size bytes apparent, $(du -k "$tmp/weights.bin" | cut -f1) KiB on disk"
for k in 1024 4194304 67108864; do
	d=$tmp/k$k
	mkdir -p "$d"
	cat >"$d/big.ir" <<IR
dpir 1.0 big partition
weights "weights.bin" "0000000000000000" $size
part 0 @cpu
%0 = const {hash="0", nbytes=$bytes, offset=64} : f32[$n] @cpu part=0
%1 = aten.slice %0 {dim=0, end=$k, start=0, step=1} : f32[$k] @cpu part=0
%2 = aten.sum %1 {dim=[0], keepdim=0} : f32[] @cpu part=0
return s=%2
IR
	(cd "$d" && "$root/bin/devproc" parse big.ir -o big.dpir &&
		"$root/bin/dp-lower_cpu" big.dpir -o 5.cpu.c &&
		cc -std=c11 -O2 -I"$root/runtime" -c 5.cpu.c -o 5.cpu.o &&
		"$root/bin/dp-link" big.dpir 5.cpu.o --weights ../weights.bin --apart --runtime "$root/lib" -o big)
	for i in 1 2 3; do
		/usr/bin/time -f "$k floats touched ($((k * 4 / 1024)) KiB): peak RSS %M KiB, %e s" \
			"$d/big" --weights "$tmp/weights.bin" >"$tmp/out"
	done
	cat "$tmp/out"
done
