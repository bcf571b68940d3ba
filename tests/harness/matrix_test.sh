#!/usr/bin/env bash
# tests/harness/matrix_test.sh — `detgate matrix` with three configurations: gcc -O2, the same with -g
# (a flag the old 7-character CC:-OPT:CONTRACT grammar refused, and one that changes no code, so
# both must land in one class), and gcc -O2 with -ffp-contract=fast (plus -mfma when the CPU has FMA).
# Checks the class line, one representative pair per pair of classes, raw-float drift as a note (raw
# groups; exit 0/1 by the quanta) or a failure with --strict-raw (exit 1; the second run reuses the
# kept builds),
# the summary line naming the scenario with its duration, and the reports. With FMA the fused build
# must differ at least in raw floats: that is what the matrix is for.
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

run_matrix() {
  "$DG" matrix --scenario "$SRC/corpus/scenarios/dogfight-40.scn" --source "$SRC" --work "$W/work" \
    --configs 'gcc:-O2:off,gcc:-O2 -g:off,gcc:-O2:fast' "$@" >"$W/out" 2>"$W/err"
}
run_matrix --report-dir "$W/rep"
rc=$?
cat "$W/out"
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] && ok || { bad "matrix exit $rc"; cat "$W/err"; }
grep -qE '^[0-9]+ class(es)?: \{gcc -O2 off, gcc -O2 -g off[,}]' "$W/out" && ok \
  || bad "gcc -O2 and gcc -O2 -g are not one class"
classes=$(sed -nE 's/^([0-9]+) class(es)?: .*/\1/p' "$W/out")
pairs=$(grep -cE '^gcc -O2 off +gcc -O2 fast ' "$W/out")
if [ "$classes" = 2 ]; then
  [ "$pairs" -eq 1 ] && ok || bad "2 classes but $pairs representative pair lines"
  [ "$rc" -eq 1 ] && ok || bad "2 classes, exit $rc"
else
  [ "$classes" = 1 ] && [ "$pairs" -eq 0 ] && [ "$rc" -eq 0 ] && ok || bad "classes=$classes pairs=$pairs exit $rc"
fi
grep -qE '^detgate matrix: scenario dogfight-40, 3 configurations, [0-9]+ class(es)?, [0-9.]+ s$' "$W/out" && ok \
  || bad "no summary line naming the scenario and its duration"
"$CHECK" "$SRC/docs/report-schema.json" "$W/rep" && ok || bad "matrix reports do not validate"
grep -q '"name": *"dogfight-40"' "$W/rep/report.json" && ok || bad "report.json does not name the scenario"
grep -qE '"durationSeconds": *[1-9]' "$W/rep/report.json" && ok || bad "report.json has no duration"
drift=$(grep -cE '^  gcc -O2 off ~ gcc -O2 (-g off|fast): raw floats first differ at tick [0-9]+$' "$W/out")
if [ "$drift" -ge 1 ]; then
  grep -qE '^raw floats \(same quanta, different floats\): class 1 in [0-9]+ groups: \{gcc -O2 off' "$W/out" && ok \
    || bad "raw drift without the line of raw groups"
fi
grep -q 'gcc -O2 off ~ gcc -O2 -g off' "$W/out" && bad "-g changed the raw floats" || ok
if grep -q -w fma /proc/cpuinfo; then
  [ "$classes" = 2 ] || [ "$drift" -ge 1 ] && ok || bad "fp-contract=fast with -mfma left the raw floats identical"
fi
if [ "$drift" -ge 1 ]; then
  # the same builds (kept in --work), now with raw drift as a failure
  run_matrix --strict-raw
  src=$?
  [ "$src" -eq 1 ] && ok || bad "--strict-raw with raw drift: exit $src"
  grep -q -- '--strict-raw: a failure' "$W/out" && ok || bad "--strict-raw output does not say the drift fails"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
