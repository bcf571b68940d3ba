#!/usr/bin/env bash
# tests/harness/matrix_raw_test.sh — `detgate matrix` under the raw policy (issue 14): two builds of
# sim_stub that differ only in -ffp-contract (with -mfma where the CPU has FMA) drift below the
# quantum in dogfight-40. That pair is WARN and exit 0 by default, FAIL and exit 1 under --raw fail
# (and --strict-raw), PASS under --raw ignore. The second and later runs reuse the builds (--work).
# usage: matrix_raw_test.sh DETGATE SOURCE_DIR REPORT_CHECK
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
CHECK=$3
work_dir matrix-raw
# the pair's check: the first after `classes` (a `matrix A ~ B` or `raw floats A ~ B` check), else `classes`
status_of() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); cs=d["scenarios"][0]["checks"]; c=([x for x in cs if x["name"] != "classes"] or cs)[0]; print(d["status"], c["firstDivergentTick"], c["firstRawDivergentTick"])' "$1"; }
# run POLICY_ARGS... : exit code of one matrix run into $rc, its reports in $W/rep
run() {
  "$DG" matrix --scenario "$SRC/corpus/scenarios/dogfight-40.scn" --source "$SRC" --work "$W/work" \
    --configs gcc:-O2:off,gcc:-O2:fast --report-dir "$W/rep" -q "$@" >"$W/out" 2>"$W/err"
  rc=$?
}

run
read -r st first raw <<<"$(status_of "$W/rep/report.json")"
if [ "$first" != None ]; then
  bad "the pair diverged in the quantized state (tick $first): this test needs a raw-only pair"
elif [ "$raw" = None ]; then
  # without FMA there is no fused instruction to contract into: the builds agree bit for bit
  grep -q -w fma /proc/cpuinfo && bad "FMA available but the raw floats are identical" || ok
  [ "$rc" -eq 0 ] && [ "$st" = pass ] && ok || bad "identical pair: exit $rc, status $st"
  run --raw fail
  [ "$rc" -eq 0 ] && ok || bad "identical pair under --raw fail: exit $rc"
else
  [ "$rc" -eq 0 ] && [ "$st" = warn ] && ok || bad "raw-only pair by default: exit $rc, status $st (expected 0, warn)"
  "$CHECK" "$SRC/docs/report-schema.json" "$W/rep" && ok || bad "a WARN matrix report does not validate"
  run --raw fail
  read -r st first raw2 <<<"$(status_of "$W/rep/report.json")"
  [ "$rc" -eq 1 ] && [ "$st" = fail ] && [ "$raw2" = "$raw" ] && ok ||
    bad "raw-only pair under --raw fail: exit $rc, status $st, raw tick $raw2 (expected 1, fail, $raw)"
  run --strict-raw
  [ "$rc" -eq 1 ] && ok || bad "raw-only pair under --strict-raw: exit $rc"
  run --raw ignore
  read -r st first raw3 <<<"$(status_of "$W/rep/report.json")"
  [ "$rc" -eq 0 ] && [ "$st" = pass ] && [ "$raw3" = "$raw" ] && ok ||
    bad "raw-only pair under --raw ignore: exit $rc, status $st, raw tick $raw3 (expected 0, pass, $raw)"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
