#!/bin/sh
# build-times.sh: cold `devproc build --target cuda` wall times on this
# machine (nvcc present; no GPU needed) for the classify example and for a
# ResNet-50 archive, and the rebuild after a .dp edit that changes host code
# (an argmax added after the model).  Each cold build starts from an empty
# build folder; N runs each (default 3), every time printed, then the median.
#   sh bench/build-times.sh RESNET50.pt2 [N]
# RESNET50.pt2: torchvision's resnet50 exported with input f32[1,3,224,224]
# (tools/export_shells.py makes one with zeroed weights on the GPU machine,
# small enough to bring back; a build's time does not depend on the values).
# Run after ./configure && make.
set -e
cd "$(dirname "$0")/.."
[ $# -ge 1 ] && [ -f "$1" ] || { echo "usage: sh bench/build-times.sh RESNET50.pt2 [N]" >&2; exit 2; }
pt2=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
n=${2:-3}
root=$(pwd)
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
cp "$pt2" "$w/resnet50.pt2"
printf 'input x: f32[1,3,224,224]\ny = model("resnet50.pt2", x)\noutput y\n' >"$w/resnet50.dp"
cp examples/classify/classify.dp examples/classify/mlp.pt2 "$w/"
now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
cold() { # NAME: n cold builds of NAME.dp; prints each time and the median
	: >"$w/$1.times"
	i=0
	while [ $i -lt "$n" ]; do
		rm -rf "$w/b-$1"
		t0=$(now)
		(cd "$w" && "$root/bin/devproc" build "$1.dp" --target cuda -C "b-$1" >/dev/null)
		awk "BEGIN { printf \"%.3f\\n\", $(now) - $t0 }" >>"$w/$1.times"
		i=$((i + 1))
	done
	echo "cold devproc build --target cuda, $1: $(tr '\n' ' ' <"$w/$1.times")s; median $(median <"$w/$1.times") s"
}
echo "$(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $("$(sed -n 's/^NVCC = //p' config.mk)" --version | tail -1)"
cold classify
cold resnet50
# a .dp edit: an argmax after ResNet-50's output, rebuilt in the last folder
: >"$w/edit.times"
i=0
while [ $i -lt "$n" ]; do
	if [ $((i % 2)) -eq 0 ]; then
		printf 'input x: f32[1,3,224,224]\ny = model("resnet50.pt2", x)\nlabel = argmax(y, dim=1)\noutput y\noutput label\n' >"$w/resnet50.dp"
	else
		printf 'input x: f32[1,3,224,224]\ny = model("resnet50.pt2", x)\noutput y\n' >"$w/resnet50.dp"
	fi
	t0=$(now)
	(cd "$w" && "$root/bin/devproc" build resnet50.dp --target cuda -C b-resnet50 >/dev/null)
	awk "BEGIN { printf \"%.3f\\n\", $(now) - $t0 }" >>"$w/edit.times"
	i=$((i + 1))
done
echo "rebuild after a .dp edit (an argmax added or removed), resnet50: $(tr '\n' ' ' <"$w/edit.times")s; median $(median <"$w/edit.times") s"
