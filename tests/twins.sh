#!/bin/sh
# twins.sh B FILE...: the conformance cases built in B that are another
# case's program again.  Most ops have two cases, NAME (training IR) and
# NAME_core (Core ATen IR), and after legalize most pairs lower to the same
# code.  For each B/NAME_core whose B/NAME is there too, prints
# "NAME_core NAME" when every FILE of the two (paths under the case's
# folder: 5.cpu.c, 5.gpu.cu, weights.bin) is the same bytes, once each
# mention of NAME_core in the first is read as NAME (files ending in .bin
# are compared as they are), and when the two pipelines tests/conformance/
# NAME.dp and NAME_core.dp read the same reference, tolerance and inputs.
# The suites then compile, link and run one of the two: the other's
# program is the same.
dir=$(dirname "$0")/conformance
b=$1
shift
for d in "$b"/*_core; do
	[ -d "$d" ] || continue
	twin=${d##*/}
	name=${twin%_core}
	[ -d "$b/$name" ] || continue
	same=yes
	# the pipelines, but for their first line (a comment naming the export)
	if ! sed -e 1d -e "s/$twin/$name/g" "$dir/$twin.dp" >"$b/.twin.dp" 2>/dev/null ||
		! sed 1d "$dir/$name.dp" | cmp -s - "$b/.twin.dp"; then
		same=
	fi
	for f in "$@"; do
		[ -n "$same" ] || break
		[ -s "$d/$f" ] && [ -s "$b/$name/$f" ] || { same=; break; }
		case $f in
		*.bin) cmp -s "$d/$f" "$b/$name/$f" || same= ;;
		*) sed "s/$twin/$name/g" "$d/$f" | cmp -s - "$b/$name/$f" || same= ;;
		esac
	done
	[ -z "$same" ] || echo "$twin $name"
done
rm -f "$b/.twin.dp"
