#!/usr/bin/env bash
# tests/examples/engines_test.sh ENGINE DETGATE SRC BUILD — builds examples/engines/ENGINE with cmake,
# verifies its scenarios through `detgate verify --states`, and shows the engine's documented
# determinism pitfall caught by `detgate diff` (exit 1, first tick, entity, field) and its fix passing.
set -uo pipefail
engine=$1 detgate=$2 src=$3 build=$4
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
rm -rf "$build" && mkdir -p "$build/out"
out=$build/out

# ---- build: a project of its own, against the distro package (ci/setup-deps installs it) ----------
if ! cmake -S "$src" -B "$build/cmake" -DCMAKE_BUILD_TYPE=Release >"$out/configure.log" 2>&1; then
  cat "$out/configure.log" >&2
  echo "FAIL: $engine example does not configure (is its -dev package installed? run ci/setup-deps)" >&2
  exit 1
fi
if ! cmake --build "$build/cmake" >"$out/build.log" 2>&1; then
  cat "$out/build.log" >&2; echo "FAIL: $engine example does not build" >&2; exit 1
fi
if grep -q -i 'warning' "$out/build.log"; then grep -i warning "$out/build.log" >&2; fail "build warnings"; fi
adapter=$build/cmake/${engine}_adapter
ext=$engine
[ "$engine" = chipmunk ] && ext=cp

# expect_rc WANT LOG CMD...: runs CMD with stdout+stderr to LOG, checks its exit code
expect_rc() {
  local want=$1 log=$2; shift 2
  "$@" >"$log" 2>&1; local rc=$?
  if [ "$rc" -ne "$want" ]; then fail "exit $rc (expected $want): $*"; sed -n 1,20p "$log" >&2; return 1; fi
}

# ---- every short scenario: the adapter's stream through the recorder, replay, seek and recovery --------
for scn in "$src"/scenarios/*."$ext"; do
  name=$(basename "$scn" ."$ext")
  [ "$name" = long ] && continue
  expect_rc 0 "$out/$name.adapter.log" "$adapter" "$scn" -o "$out/$name.jsonl" || continue
  expect_rc 0 "$out/$name.verify.log" "$detgate" verify --states "$out/$name.jsonl" --report-dir "$out/verify-$name"
done

# ---- bad input: a clear error and exit 2 ---------------------------------------------------------------
# bad_scenario TEXT EXPECTED: the adapter refuses TEXT with exit 2 and a message containing EXPECTED
bad_scenario() {
  printf '%b' "$1" >"$out/bad.$ext"
  expect_rc 2 "$out/bad.log" "$adapter" "$out/bad.$ext" -o "$out/bad.jsonl" &&
    { grep -qF "$2" "$out/bad.log" || fail "bad scenario: expected '$2', got: $(cat "$out/bad.log")"; }
}
bad_scenario 'hz 60\nbox 1 0 0\n' "bad.$ext:2: box: expected 6 numbers, found 3"
bad_scenario 'box 1 0 0 1 1 1\n# again\nbox 1 0 0 1 1 1\n' "bad.$ext:3: body id 1 declared twice (first on line 1)"
bad_scenario 'box 1 0 0 1 1 1\nremove 1 x\n' "bad.$ext:2: remove: expected 2 numbers, found \"x\""
bad_scenario 'hz 0\n' "expected an integer hz in 1..100000"
bad_scenario 'hz 59.94\n' "expected an integer hz in 1..100000"
bad_scenario 'name a"b\n' "bad.$ext:1: name: expected one word"

# diff_pair A B LOG WANT: records both streams and diffs them, expecting exit WANT
diff_pair() {
  local a=$1 b=$2 log=$3 want=$4
  expect_rc 0 "$log.rec" "$detgate" record --states "$a" -o "${a%.*}.flrep" || return 1
  expect_rc 0 "$log.rec" "$detgate" record --states "$b" -o "${b%.*}.flrep" || return 1
  expect_rc "$want" "$log" "$detgate" diff "${a%.*}.flrep" "${b%.*}.flrep" --report-dir "$log.report"
}

# report_first_tick DIFFLOG T: the diff's report.json says the first divergent tick is T
report_first_tick() {
  grep -Eq "\"firstDivergentTick\": *$2([^0-9]|\$)" "$1.report/report.json" ||
    fail "$1.report/report.json: firstDivergentTick is not $2"
}

# diff_first_tick DIFFLOG: the first divergent tick the diff's report.json gives (the tick a gate of
# the same two states must name)
diff_first_tick() {
  grep -Eo '"firstDivergentTick": *[0-9]+' "$1.report/report.json" | head -1 | grep -Eo '[0-9]+$'
}

# first_row LOG: the first entity row of LOG's first diff table (the first divergent entity and field)
first_row() { sed -n '/entity kind *field/{n;p;q}' "$1" | tr -s ' ' | sed 's/^ //'; }
# expect_first LOG ENTITY FIELD: the diff in LOG names ENTITY's FIELD first, and that entity's angular
# velocity too (a declared field, angvel or angvel.x/y/z: the solver's order turns the bodies too)
expect_first() {
  local row; row=$(first_row "$1")
  case "$row" in "$2 changed $3 "*) ;; *) fail "$1: first divergent row is not entity $2 $3: $row" ;; esac
  grep -Eq "^ +$2 +changed angvel(\.[xyz])? .* rad/s " "$1" || fail "$1: names no entity $2 angvel (rad/s)"
}
# project EXTRA: a project file beside $out running the adapter with EXTRA flags (CSV), with the
# example's scenarios and goldens: what a team's build with another setting gates against them
nproj=0
project() {
  local ini=$out/p$((++nproj)).ini
  printf '[project]\nscenarios = %s/scenarios/*.%s\ngolden = %s/golden\n[engine]\nkind = process\nrun = %s {scenario} --csv %s\n' \
    "$src" "$ext" "$src" "$adapter" "$1" >"$ini"
  echo "$ini"
}

# shellcheck source=/dev/null
. "$(dirname "$0")/engines_${engine}.sh"
[ "$fails" -eq 0 ] && echo "PASS: $engine example" || echo "$fails failure(s)" >&2
[ "$fails" -eq 0 ]
