#!/bin/sh
# nonzero.t: results whose leading size is known only at run time
# (formats/ops.md, "Bounded sizes"), beyond tests/conformance.t's cases:
#  - the C API of x[mask] (tests/conformance/c_mask_rows.pt2, x f32[5,3],
#    mask bool[5]) on the cpu and, with a GPU, on cuda: NAME_run fills
#    out_n with the row count and the first out_n rows with x's selected
#    rows, checked against the rows the test program picks itself, for a
#    mask with some, none and all rows; the header documents out_n;
#  - the executable printing and writing n rows of an output;
#  - the one error a model gets when it uses the bounded size where
#    DevProc does not keep it (tests/data/nonzero, made by make.py with
#    PyTorch): a reduction over the rows, a view merging them, and a size
#    computed from the length; exit 1 and no output.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
root=$(pwd)
cc=${DP_TEST_CC:-$(sed -n 's/^CC = //p' config.mk 2>/dev/null)}
nvcc=$(sed -n 's/^NVCC = //p' config.mk 2>/dev/null)
d=$tmp/m
mkdir -p "$d"
cp tests/conformance/c_mask_rows.pt2 "$d/"
printf 'input x: f32[5,3]\ninput m: bool[5]\nout = model("c_mask_rows.pt2", x, m)\noutput out\n' \
	>"$d/rows.dp"

cat >"$tmp/app.c" <<'EOF'
/* x[m] through the C API for three masks, against the rows picked here */
#include <stdio.h>
#include <string.h>
#include "rows.h"

int
main(void)
{
	float x[15], out[15], want[15];
	static const uint8_t masks[3][5] = { { 1, 0, 1, 1, 0 }, { 0 }, { 1, 1, 1, 1, 1 } };
	rows *r = rows_create();
	int i, k, bad = 0;

	for (i = 0; i < 15; i++)
		x[i] = (float)i * 0.5f - 3;
	for (k = 0; k < 3; k++) {
		int64_t n = -1, w = 0;
		memset(out, 0, sizeof out);
		if (r == NULL || rows_run(r, x, masks[k], out, &n) != 0) {
			printf("run: %s\n", rows_error(r));
			return 1;
		}
		for (i = 0; i < 5; i++)
			if (masks[k][i])
				memcpy(&want[3 * w++], &x[3 * i], 3 * sizeof *x);
		printf("mask %d: n %lld (want %lld)\n", k, (long long)n, (long long)w);
		bad |= n != w || memcmp(out, want, (size_t)(3 * w) * sizeof *out) != 0;
	}
	rows_destroy(r);
	return bad;
}
EOF

capi() { # TARGET: build rows.dp for it and run the app against its library
	(cd "$d" && "$root/bin/devproc" build rows.dp --target "$1" -C "b$1") >"$tmp/build.log" 2>&1 &&
	lib=$d/b$1/rows && extra= &&
	{ [ "$1" = cpu ] || extra="$(sed -n 's/^ \* Link with [^ ]* \(.*\)\.$/\1/p' "$lib/rows.h")"; } &&
	$cc -std=c11 -I"$lib" "$tmp/app.c" "$lib/librows.a" -lm -lpthread $extra -o "$tmp/app$1" \
		>>"$tmp/build.log" 2>&1 && "$tmp/app$1" || { cat "$tmp/build.log"; false; }
}
check "the C API gives x[mask]'s row count and rows on the cpu (some, none, all rows)" capi cpu
hdr=$d/bcpu/rows/rows.h
check "the header documents the row count: out's first *out_n rows, out_n the row count of out" \
	sh -c "grep -q 'its first \*out_n rows' '$hdr' && grep -q 'the row count of out' '$hdr' &&
	grep -q 'NAME_n) receives' '$hdr' || cat '$hdr'"
if [ -z "$gpu" ]; then
	skip "no CUDA device"
elif [ -z "$nvcc" ]; then
	skip "no nvcc"
else
	check "the C API gives x[mask]'s row count and rows on cuda (some, none, all rows)" capi cuda
fi

# the executable: --out writes n rows, the printout says n (the inputs and
# PyTorch's result of the mask_rows case)
exe() {
	e=$d/bcpu/rows/rows
	$cc -o "$tmp/npzx" tests/conformance/npzx.c && mkdir -p "$tmp/refs" &&
	"$tmp/npzx" tests/conformance/refs_nonzero.npz "$tmp/refs" &&
	"$e" --in x="$tmp/refs/mask_rows.in0.npy" --in m="$tmp/refs/mask_rows.in1.npy" >"$tmp/print" &&
	"$e" --in x="$tmp/refs/mask_rows.in0.npy" --in m="$tmp/refs/mask_rows.in1.npy" \
		--out out="$tmp/o.npy" --out out_n="$tmp/n.npy" >/dev/null &&
	"$root/bin/npycmp" "$tmp/o.npy" "$tmp/refs/mask_rows.out.npy" &&
	k=$("$root/bin/devproc" tensor "$tmp/refs/mask_rows.out.npy" | sed -n 's/.*f32\[\([0-9]*\),3\].*/\1/p') &&
	[ -n "$k" ] && grep -qx "out_n = $k" "$tmp/print" &&
	[ "$(grep -c '^out' "$tmp/print")" -eq 2 ] || { cat "$tmp/print"; false; }
}
check "the executable writes the n rows of x[mask] (as PyTorch's) and prints n" exe

# models that use the length where DevProc does not keep it: one error each
for m in mask_sum mask_sum_core nonzero_flat nonzero_flat_core; do
	cp "tests/data/nonzero/$m.pt2" "$d/"
	printf 'input x: f32[3,4]\ny = model("%s.pt2", x)\noutput y\n' "$m" >"$d/$m.dp"
done
err() { # NAME WANT: import of NAME.dp fails with WANT (after "NAME.dp:2:11: import: ")
	! (cd "$d" && "$root/bin/dp-import" "$1.dp" -o "$1.dpir" -w "$1.bin" 2>"$1.err") &&
	[ ! -e "$d/$1.dpir" ] && [ "$(head -n 1 "$d/$1.err")" = "$1.dp:2:11: import: $1.pt2: $2" ] ||
	{ cat "$d/$1.err"; false; }
}
tail='has a leading size known only at run time (at most 12 rows, from aten.nonzero or a boolean mask index), and'
why='DevProc keeps that length through elementwise ops, row gathers and views or reductions of the other dims only (formats/ops.md, "Bounded sizes")'
check "x[x > 0].sum(): one error naming aten.sum (training IR)" err mask_sum \
	"node 'sum_1' (aten.sum.default): aten.sum: operand 0 (f32[<=12]) $tail a reduction over its rows would need the run-time length; $why"
check "x[x > 0].sum(): one error naming aten.sum (Core ATen)" err mask_sum_core \
	"node 'sum_1' (aten.sum.dim_IntList): aten.sum: operand 0 (f32[<=12]) $tail a reduction over its rows would need the run-time length; $why"
check "nonzero(x).flatten(): one error naming flatten" err nonzero_flat \
	"node 'flatten' (aten.flatten.using_ints): flatten: operand 0 (i64[<=12,2]) $tail this reshaping would merge or move its rows; $why"
check "nonzero(x).flatten() as a view to 2*u0 (Core ATen): the size names the length" err nonzero_flat_core \
	"node 'view' (aten.view.default): a symbolic argument 'mul_1' is the run-time length of a data-dependent result (aten.nonzero, a boolean mask index), which DevProc keeps only as a bounded leading size, not as a value (formats/ops.md, \"Bounded sizes\")"

echo "1..$n"
[ $fails -eq 0 ]
