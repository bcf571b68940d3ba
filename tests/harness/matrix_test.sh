#!/usr/bin/env bash
# tests/harness/matrix_test.sh — `detgate matrix` with four configurations: gcc -O2; the same with -g
# (a flag the old 7-character CC:-OPT:CONTRACT grammar refused, and one that changes no code, so
# both must land in one class); gcc -O2 with -ffp-contract=fast (plus -mfma when the CPU has FMA: the
# same quanta, raw floats that drift); and a compiler wrapper that builds sim_stub/sim.c with its
# dynamic pressure 2% higher (a build that records differently: a class of its own).
#   run 1, all four: 2 classes, one representative pair, exit 1, the summary names the scenario and
#          its duration, the reports validate and name the scenario;
#   run 2, the first three (builds reused from --work): 1 class, the drift as a note, exit 0;
#   run 3, the same with --strict-raw: the drift fails, exit 1.
# usage: matrix_test.sh DETGATE SOURCE_DIR REPORT_CHECK
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
CHECK=$3
work_dir matrix

# gcc, except that sim_stub/sim.c is compiled from a copy with the dynamic pressure 0.5 rho V^2 made
# 0.51 rho V^2 (the copy finds its headers through -iquote); fails when the line is not there.
cat >"$W/perturb-cc" <<'EOF'
#!/usr/bin/env bash
out=()
for a in "$@"; do
  case "$a" in
    */sim_stub/sim.c)
      grep -q 'ae\.qd = 0\.5 \* rho' "$a" || { echo "perturb-cc: no 'ae.qd = 0.5 * rho' in $a" >&2; exit 1; }
      copy="$(dirname "$0")/perturbed-sim.c"
      sed 's/ae\.qd = 0\.5 \* rho/ae.qd = 0.51 * rho/' "$a" >"$copy"
      out+=(-iquote "$(dirname "$a")" "$copy") ;;
    *) out+=("$a") ;;
  esac
done
exec gcc "${out[@]}"
EOF
chmod +x "$W/perturb-cc"
three='gcc:-O2:off,gcc:-O2 -g:off,gcc:-O2:fast'
run_matrix() {
  "$DG" matrix --scenario "$SRC/corpus/scenarios/dogfight-40.scn" --source "$SRC" --work "$W/work" "$@" \
    >"$W/out" 2>"$W/err"
}

# ---- run 1: four configurations, two classes ----------------------------------------------------------
run_matrix --configs "$three" --config "$W/perturb-cc:-O2:off" --report-dir "$W/rep"
rc=$?
cat "$W/out"
P="$W/perturb-cc -O2 off"
[ "$rc" -eq 1 ] && ok || { bad "two classes: exit $rc"; cat "$W/err"; }
grep -qxF "2 classes: {gcc -O2 off, gcc -O2 -g off, gcc -O2 fast} {$P}" "$W/out" && ok \
  || bad "not the two classes {gcc -O2 off, gcc -O2 -g off, gcc -O2 fast} {perturbed}"
pairs=$(grep -cE '^gcc -O2 off +.*perturb-cc -O2 off +[0-9]+ +[0-9]+$' "$W/out")
[ "$pairs" -eq 1 ] && ok || bad "$pairs representative pair lines, expected 1"
[ "$(grep -c ' ~ ' "$W/out")" -le 1 ] && ok || bad "pairs inside a class are listed"
grep -qE '^detgate matrix: scenario dogfight-40, 4 configurations, 2 classes, [0-9.]+ s$' "$W/out" && ok \
  || bad "no summary line naming the scenario and its duration"
"$CHECK" "$SRC/docs/report-schema.json" "$W/rep" && ok || bad "matrix reports do not validate"
grep -q '"name": *"dogfight-40"' "$W/rep/report.json" && ok || bad "report.json does not name the scenario"
grep -qE '"durationSeconds": *[1-9]' "$W/rep/report.json" && ok || bad "report.json has no duration"
grep -qE '"firstDivergentTick": *[0-9]+' "$W/rep/report.json" && ok || bad "report.json has no divergent tick"

# ---- runs 2 and 3: the first three again (same build folders), raw drift a note, then a failure -------
run_matrix --configs "$three"
rc=$?
cat "$W/out"
[ "$rc" -eq 0 ] && ok || { bad "one class: exit $rc"; cat "$W/err"; }
grep -qxF '1 class: {gcc -O2 off, gcc -O2 -g off, gcc -O2 fast}' "$W/out" && ok || bad "not one class"
grep -q 'gcc -O2 off ~ gcc -O2 -g off' "$W/out" && bad "-g changed the raw floats" || ok
drift=$(grep -cE '^  gcc -O2 off ~ gcc -O2 fast: raw floats first differ at tick [0-9]+$' "$W/out")
if grep -q -w fma /proc/cpuinfo; then
  [ "$drift" -eq 1 ] && ok || bad "fp-contract=fast with -mfma left the raw floats identical"
fi
if [ "$drift" -eq 1 ]; then
  grep -qxF 'raw floats (same quanta, different floats): class 1 in 2 groups: {gcc -O2 off, gcc -O2 -g off} {gcc -O2 fast}' \
    "$W/out" && ok || bad "raw drift without the line of raw groups"
  run_matrix --configs "$three" --strict-raw
  rc=$?
  [ "$rc" -eq 1 ] && ok || bad "--strict-raw with raw drift: exit $rc"
  grep -q -- '--raw fail: a failure' "$W/out" && ok || bad "--strict-raw output does not say the drift fails"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
