#!/bin/sh
# ops.t: devproc ops and its Core ATen report agree with ops.h, ops.md, dp-import's table (TAP).
cd "$(dirname "$0")/.." || exit 1
dp=./bin/devproc
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

echo "1..20"
n=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l; do printf '%s\n' "$l" | sed 's/^/# /'; done; }
check() { # check DESCRIPTION DETAIL...: passes when rc is 0, else prints the details
	d=$1
	shift
	if [ "$rc" -eq 0 ]; then pass "$d"; else fail "$d" "$@"; fi
}

# 1. devproc ops: one line per op of formats/ops.h, and the count line
$dp ops >"$tmp/ops" 2>"$tmp/err"; rc=$?
nops=$(grep -c '^[[:space:]]*X([OA][A-Za-z0-9]*, *"' formats/ops.h)
sed '$d' "$tmp/ops" >"$tmp/oplines"
awk '{print $1}' "$tmp/oplines" >"$tmp/opnames"
nlines=$(wc -l <"$tmp/oplines")
ncpu=$(awk '$4 ~ /(^|,)cpu(,|$)/' "$tmp/oplines" | wc -l)
ncuda=$(awk '$4 ~ /(^|,)cuda(,|$)/' "$tmp/oplines" | wc -l)
last=$(tail -n 1 "$tmp/ops")
want="$nops ops (cpu $ncpu, cuda $ncuda)"
[ "$rc" -eq 0 ] && [ "$nlines" -eq "$nops" ] && [ "$last" = "$want" ]; rc=$?
check "devproc ops lists the $nops ops of formats/ops.h" "exit/lines: $nlines, want $nops" \
	"last line: $last" "want:      $want" "$(cat "$tmp/err")"

# 2. every line is OP CLASS FORM DEVICES with a known class, form and devices
bad=$(awk 'NF != 4 || $2 !~ /^(io|const|copy|elementwise|normalize|matmul|conv|reduce|index|shape|attention|source|image)$/ ||
	$3 !~ /^(io|const|copy|cast|unary|unary-int|binary|binary-int|compare|logic|where|view|move|gather|scatter|reduce|scan|sort|matmul|conv|pool|norm|attention|source|image|composite)$/ || $4 !~ /^(cpu|cuda|cpu,cuda)$/' "$tmp/oplines")
[ -z "$bad" ]; rc=$?
check "each op line is OP CLASS FORM DEVICES" "bad lines:" "$bad"

# 3. every op appears in the tables of formats/ops.md (their first column;
# in "`aten.eq` `ne`" or "`aten.logical_and` `or`" a short name stands for
# aten.ne, aten.logical_or)
sed -n 's/^| \([^|]*\) |.*/\1/p' formats/ops.md | awk '{
	first = ""
	while (match($0, /`[^`]*`/)) {
		name = substr($0, RSTART + 1, RLENGTH - 2)
		$0 = substr($0, RSTART + RLENGTH)
		if (first == "" || index(name, ".") || first !~ /^aten\./) {
			print name
			if (first == "") first = name
			continue
		}
		print "aten." name
		pre = first
		if (sub(/_[^_]*$/, "_", pre)) print pre name
	}
}' >"$tmp/mdops"
missing=$(awk '$3 != "unary" && $3 != "unary-int" {print $1}' "$tmp/oplines" |
	grep -vxF -f "$tmp/mdops" | tr '\n' ' ')
[ -z "$missing" ]; rc=$?
check "every op but the unary ones (their formula documents them) is in formats/ops.md's tables" \
	"missing: $missing"

# 4. the cpu-only ops are the ones formats/ops.md names
tr '\n' ' ' <formats/ops.md | sed -n 's/.*but these, cpu only:\([^.]*\)\..*/\1/p' |
	grep -o '`[^`]*`' | tr -d '`' | sort >"$tmp/mdcpu"
awk '$4 !~ /cuda/ {print $1}' "$tmp/oplines" | sort >"$tmp/cpuonly"
[ -s "$tmp/mdcpu" ] && cmp -s "$tmp/mdcpu" "$tmp/cpuonly"; rc=$?
check "the cpu-only ops are those formats/ops.md names" "$(diff "$tmp/mdcpu" "$tmp/cpuonly")"

# 5. formats/core_aten_ops.txt: 193 distinct overloads
grep -v '^#' formats/core_aten_ops.txt | grep . >"$tmp/core"
ncore=$(wc -l <"$tmp/core")
ndup=$(sort "$tmp/core" | uniq -d | wc -l)
[ "$ncore" -eq 193 ] && [ "$ndup" -eq 0 ]; rc=$?
check "formats/core_aten_ops.txt lists 193 distinct overloads" "entries: $ncore, duplicates: $ndup"

# 6. dp-import --targets: TARGET OP [NOTE], each TARGET namespace.op.overload
# (aten's, or a library's own op such as transformers'), each OP an op of devproc ops
./bin/dp-import --targets >"$tmp/targets" 2>"$tmp/err"; rc=$?
badop=$(awk -F '\t' '{print $2}' "$tmp/targets" | grep -v '^(alias)$' | grep -v '^(dropped)$' | grep -v '^(folded)$' |
	sort -u | grep -vxF -f "$tmp/opnames")
badline=$(awk -F '\t' 'NF < 2 || NF > 3 || $1 !~ /^[a-z_][a-z0-9_]*\.[A-Za-z0-9_]+\.[A-Za-z0-9_]+$/' "$tmp/targets")
dups=$(cut -f 1 "$tmp/targets" | sort | uniq -d)
[ "$rc" -eq 0 ] && [ -s "$tmp/targets" ] && [ -z "$badop$badline$dups" ]; rc=$?
check "dp-import --targets maps each target once onto an op of formats/ops.h" \
	"unknown ops: $badop" "bad lines: $badline" "duplicates: $dups" "$(cat "$tmp/err")"

# 7. devproc ops --aten runs
$dp ops --aten >"$tmp/aten" 2>"$tmp/err"; rc=$?
check "devproc ops --aten" "$(cat "$tmp/err")"

section() { # the entry lines of one section of the report
	awk -v s="$1" '/^[^ ]/ { on = index($0, s) == 1 } on && /^  / { sub(/^  /, ""); print }' "$tmp/aten"
}
section "supported (" >"$tmp/sup"
section "unsupported (" >"$tmp/unsup"
section "training-IR" >"$tmp/other"
nsup=$(wc -l <"$tmp/sup")
nunsup=$(wc -l <"$tmp/unsup")
nother=$(wc -l <"$tmp/other")

# 8. supported + unsupported = the core list, each overload once
{ awk '{print $1}' "$tmp/sup"; cat "$tmp/unsup"; } | sort >"$tmp/both"
sed -e 's/^aten\.//' -e '/\./!s/$/.default/' -e 's/^/aten./' "$tmp/core" | sort >"$tmp/corefull"
[ $((nsup + nunsup)) -eq 193 ] && cmp -s "$tmp/both" "$tmp/corefull"; rc=$?
check "supported ($nsup) + unsupported ($nunsup) = the 193 Core ATen overloads" \
	"$(diff "$tmp/corefull" "$tmp/both")"

# 9. the summary line's numbers are the supported section's
scpu=$(awk '$3 ~ /cpu/' "$tmp/sup" | wc -l)
scuda=$(awk '$3 ~ /cuda/' "$tmp/sup" | wc -l)
want="Core ATen coverage: $nsup/193 overloads (cpu $scpu, cuda $scuda)"
last=$(tail -n 1 "$tmp/aten")
[ "$last" = "$want" ]; rc=$?
check "summary: $last" "got:  $last" "want: $want"

# 10. the supported core overloads and the non-core targets are exactly dp-import's table
cut -f 1 "$tmp/targets" | sort >"$tmp/tnames"
awk '{print $1}' "$tmp/sup" "$tmp/other" | sort >"$tmp/listed"
ntargets=$(wc -l <"$tmp/tnames")
line=$(grep '^Import converts' "$tmp/aten")
wantline="Import converts $ntargets ATen targets: $nsup Core ATen, $nother training-IR (non-core)."
cmp -s "$tmp/tnames" "$tmp/listed" && [ "$line" = "$wantline" ] &&
	[ -z "$(awk '{print $1}' "$tmp/other" | grep -xF -f "$tmp/corefull")" ]; rc=$?
check "supported + non-core ($nother) = dp-import's $ntargets targets" "got:  $line" "want: $wantline" \
	"$(diff "$tmp/tnames" "$tmp/listed")"

# 11. each entry's devices are its IR op's, all of them for an op-less one
bad=$(awk 'NR == FNR { dev[$1] = $4; next }
	{ want = ($2 ~ /^\(/) ? "cpu,cuda" : dev[$2]; if ($3 != want) print }' \
	"$tmp/oplines" "$tmp/sup" "$tmp/other")
[ -z "$bad" ]; rc=$?
check "each target's devices are its IR op's" "$bad"

# 12-15. known entries
entry() { awk -v t="$1" '$1 == t' "$tmp/sup"; }
e=$(entry aten.convolution.default)
echo "$e" | awk '$2 == "aten.convolution" && $3 == "cpu,cuda" { ok = 1 } END { exit !ok }'; rc=$?
check "aten.convolution.default: supported, aten.convolution, cpu and cuda" "got: $e"
e=$(entry aten.add.Tensor)
echo "$e" | awk '$2 == "aten.add" && $3 == "cpu,cuda" { ok = 1 } END { exit !ok }'; rc=$?
check "aten.add.Tensor: supported, aten.add, cpu and cuda" "got: $e"
e=$(entry aten.clone.default)
echo "$e" | awk '$2 == "(alias)" && $3 == "cpu,cuda" { ok = 1 } END { exit !ok }'; rc=$?
check "aten.clone.default: supported with no op" "got: $e"
! grep -v '_backward\.' "$tmp/unsup" | grep -q . &&
	grep -q '^aten.nonzero.default  *aten.nonzero  *cpu,cuda' "$tmp/sup" &&
	grep -q '^aten.sort.default  *aten.sort  *cpu,cuda' "$tmp/sup"; rc=$?
check "only backward ops are unsupported; aten.nonzero.default, aten.sort.default supported on cpu and cuda" \
	"$(cat "$tmp/unsup")"

# 16. devproc --help documents the command
$dp --help | grep -q '^  ops \[--aten\]'; rc=$?
check "devproc --help documents ops [--aten]"

# 17-18. each lowering's own list of the ops it has kernels for is the
# devices column of formats/ops.h (composite ops reach no lowering)
for st in cpu:lower_cpu cuda:lower_gpu; do
	dev=${st%%:*}
	./bin/dp-${st#*:} --supports 2>"$tmp/err" | sort >"$tmp/sup.$dev"; rc=$?
	awk -v d="$dev" '$3 != "composite" && $4 ~ d {print $1}' "$tmp/oplines" | sort >"$tmp/want.$dev"
	[ "$rc" -eq 0 ] && cmp -s "$tmp/sup.$dev" "$tmp/want.$dev"; rc=$?
	check "dp-${st#*:} --supports is the ops.h rows with $dev" "$(diff "$tmp/want.$dev" "$tmp/sup.$dev")" \
		"$(cat "$tmp/err")"
done

# 19. every formula an elementwise unary row names is defined in runtime/dpscalar.h
# (dps_NAME for f32, dps_NAME_i64 too for the unary-int form)
missing=$(sed -n 's/.*X(A[A-Za-z0-9]*, *"[^"]*", *-\{0,1\}[0-9]*, *[0-9]*, *K[a-z]*, *\(Funaryn\{0,1\}\), *"\([a-z0-9_]*\).*/\1 \2/p' formats/ops.h |
	while read -r form f; do
		grep -q "^DPS_U($f," runtime/dpscalar.h || echo "dps_$f"
		[ "$form" = Funaryn ] && ! grep -q "^DPS_UI($f," runtime/dpscalar.h && echo "dps_${f}_i64"
	done)
nun=$(grep -c 'K[a-z]*, *Funaryn\{0,1\},' formats/ops.h)
[ -z "$missing" ] && [ "$nun" -gt 10 ]; rc=$?
check "the $nun unary formulas are in runtime/dpscalar.h" "missing: $missing"

# 20. devproc dump of a .pt2: its signature, and its op histogram marking
# what dp-import lacks (an archive with two targets renamed by zpatch)
if cc -o "$tmp/zpatch" tests/import/zpatch.c 2>"$tmp/err" &&
	"$tmp/zpatch" tests/data/mlp_core.pt2 "$tmp/bad.pt2" aten.relu.default aten.sinc.default \
		aten.permute.default aten.permutx.default 2>>"$tmp/err"; then
	$dp dump "$tmp/bad.pt2" >"$tmp/dump" 2>>"$tmp/err"; rc=$?
	[ "$rc" -eq 0 ] && grep -q '^  input  x  *f32\[1,3072\]$' "$tmp/dump" &&
		grep -q '^  output addmm_1  *f32\[1,10\]$' "$tmp/dump" &&
		grep -q '^  (4 parameters, 0 buffers, 0 other constants)$' "$tmp/dump" &&
		grep -q '^       2  aten.addmm.default$' "$tmp/dump" &&
		grep -q '^       2  aten.permutx.default  *UNSUPPORTED$' "$tmp/dump" &&
		grep -q '^       1  aten.sinc.default  *UNSUPPORTED$' "$tmp/dump" &&
		grep -q '^2 targets dp-import does not convert' "$tmp/dump"; rc=$?
else
	rc=1
fi
check "devproc dump X.pt2: signature and op histogram, unsupported targets marked" \
	"$(cat "$tmp/dump" "$tmp/err" 2>/dev/null)"
