# tap.sh: what the shell tests share, sourced after they cd to the
# repository root: a scratch folder $tmp (removed on exit), the TAP counters
# n and fails, check and skip, and gpu (yes where nvidia-smi lists a CUDA
# device; DP_TEST_NO_GPU=1 pretends there is none), sofresh (yes while
# lib/libdprt.so, which make check builds after lib/libdprt.a, is the
# newer of the two: never a copy older than the archive) and shared
# (--shared-runtime where DP_TEST_SHARED_RUNTIME is set, as make check
# SAN=1 sets it, and sofresh: the test's programs then link in a fraction
# of the time).  The test prints its plan, "1..$n", at the end and exits
# with [ $fails -eq 0 ].
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
fails=0
check() { # description command...
	desc=$1
	shift
	n=$((n + 1))
	if "$@" >"$tmp/log" 2>&1; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		fails=$((fails + 1))
		sed 's/^/# /' "$tmp/log" | head -40
	fi
}
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
gpu=
if [ -z "${DP_TEST_NO_GPU:-}" ] && command -v nvidia-smi >/dev/null 2>&1 &&
	nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
	gpu=yes
fi
sofresh=
if [ lib/libdprt.so -nt lib/libdprt.a ]; then
	sofresh=yes
fi
shared=
if [ -n "${DP_TEST_SHARED_RUNTIME:-}" ] && [ -n "$sofresh" ]; then
	shared=--shared-runtime
fi
