#!/usr/bin/env bash
# tests/harness/matrix_test.sh — `detgate matrix` with two configurations that differ only in
# -ffp-contract (plus -mfma when the CPU has FMA): both build, both record, the pair is printed with
# its first divergent tick and raw-float tick, and the reports validate. With FMA available the
# fused build must show at least a raw (sub-quantum) difference: that is what the matrix is for.
# usage: matrix_test.sh DETGATE SOURCE_DIR REPORT_CHECK
set -u
DG=$1
SRC=$2
CHECK=$3
W=$(mktemp -d "${TMPDIR:-/tmp}/dg-matrix-test.XXXXXX")
trap 'rm -rf "$W"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

"$DG" matrix --scenario "$SRC/corpus/scenarios/dogfight-40.scn" --source "$SRC" \
  --configs gcc:-O2:off,gcc:-O2:fast --report-dir "$W/rep" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] && ok || { bad "matrix exit $rc"; cat "$W/err"; }
line=$(grep -E '^gcc-O2-off +gcc-O2-fast ' "$W/out")
[ -n "$line" ] && ok || { bad "no line for the pair"; cat "$W/out"; }
"$CHECK" "$SRC/docs/report-schema.json" "$W/rep" && ok || bad "matrix reports do not validate"
if grep -q -w fma /proc/cpuinfo; then
  raw=$(echo "$line" | awk '{print $NF}')
  [ "$raw" != "identical" ] && ok || bad "fp-contract=fast with -mfma left the raw floats identical: $line"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
