#!/usr/bin/env bash
# tests/examples-bullet/bullet_test.sh DETGATE SRC BUILD — builds examples/engines/bullet against the
# system Bullet, gates it through its own detgate.ini, and shows each documented pitfall failing the
# way a team sees it (exit 1 at the first tick, with entity and field) and its fix passing.
set -uo pipefail
detgate=$1 src=$2 build=$3
case $detgate in /*) ;; *) detgate=$PWD/$detgate ;; esac
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
rm -rf "$build" && mkdir -p "$build/out"
out=$build/out

# ---- build: its own project, against Debian's libbullet-dev (ci/setup-deps installs it) ----------
if ! cmake -S "$src" -B "$build/cmake" -DCMAKE_BUILD_TYPE=Release >"$out/configure.log" 2>&1; then
  cat "$out/configure.log" >&2
  echo "FAIL: the Bullet example does not configure (is libbullet-dev installed? run ci/setup-deps)" >&2
  exit 1
fi
if ! cmake --build "$build/cmake" >"$out/build.log" 2>&1; then
  cat "$out/build.log" >&2; echo "FAIL: the Bullet example does not build" >&2; exit 1
fi
if grep -q -i 'warning' "$out/build.log"; then grep -i warning "$out/build.log" >&2; fail "build warnings"; fi
adapter=$build/cmake/bullet_adapter
export DETGATE_BUILD=$build/cmake   # detgate.ini's run command: the adapter's folder

# expect_rc WANT LOG CMD...: runs CMD with stdout+stderr to LOG, checks its exit code
expect_rc() {
  local want=$1 log=$2; shift 2
  "$@" >"$log" 2>&1; local rc=$?
  if [ "$rc" -ne "$want" ]; then fail "exit $rc (expected $want): $*"; sed -n 1,20p "$log" >&2; return 1; fi
}
# expect_in LOG TEXT: LOG contains TEXT
expect_in() { grep -qF -- "$2" "$1" || { fail "$1 lacks '$2'"; sed -n 1,12p "$1" >&2; }; }

# project EXTRA: a project file beside $out running the adapter with EXTRA flags, same scenarios
# and goldens — what a team's build with another setting gates against the committed goldens
project() {
  local ini=$out/p$((++nproj)).ini
  printf '[project]\nscenarios = %s/scenarios/*.bt\ngolden = %s/golden\n[engine]\nkind = process\nrun = %s {scenario} --format bin %s\n' \
    "$src" "$src" "$adapter" "$1" >"$ini"
  echo "$ini"
}
nproj=0

# first_raw_tick A.csv B.csv: the first tick whose rows differ in the adapter's own CSV (the
# expected first divergent tick, derived from the engine's output, not from detgate)
first_raw_tick() {
  awk -F, 'NR == FNR { a[FNR] = $0; next } FNR > 1 && a[FNR] != $0 { print $1; found = 1; exit }
           END { if (!found) print "none" }' "$1" "$2"
}

# ---- 1. the example as committed: `cd examples/engines/bullet && detgate gate` ------------------
cd "$src" || exit 1
expect_rc 0 "$out/gate.log" "$detgate" gate --report-dir "$out/gate" && expect_in "$out/gate.log" "PASS — 7 scenarios"
# run to run, one process each: deterministic
expect_rc 0 "$out/repeat.log" "$detgate" verify stack --repeat 3 --report-dir "$out/repeat"
cd "$out" || exit 1

# ---- 2. reusing the world after resetting its bodies (bullet3 #2442, #127) -----------------------
"$adapter" "$src/scenarios/stack.bt" >"$out/one.csv"
"$adapter" "$src/scenarios/stack.bt" --runs 2 --reuse-world >"$out/reuse.csv"
"$adapter" "$src/scenarios/stack.bt" --runs 2 >"$out/fresh.csv"
want=$(first_raw_tick "$out/one.csv" "$out/reuse.csv")
[ "$want" = 0 ] || fail "reuse-world: expected the raw state to differ from tick 0, found $want"
[ "$(first_raw_tick "$out/one.csv" "$out/fresh.csv")" = none ] || fail "a re-created world differs"
for k in one reuse fresh; do
  expect_rc 0 "$out/rec-$k.log" "$detgate" record --states "$out/$k.csv" -o "$out/$k.flrep"
done
expect_rc 1 "$out/diff-reuse.log" "$detgate" diff "$out/one.flrep" "$out/reuse.flrep" --report-dir "$out/diff-reuse" &&
  { expect_in "$out/diff-reuse.log" "first divergent tick $want"; grep -qE '^ +[0-9]+ +changed (pos|vel|rot)' "$out/diff-reuse.log" ||
    fail "diff names no entity and field"; }
# the declared fields (format 2.0, 1/1024 m): the first row is box 2's rotation, and its angular velocity
# (a declared field, rad/s) is named too; the CSV stream carries the schema the project file declares
row=$(sed -n '/entity kind *field/{n;p;q}' "$out/diff-reuse.log" | tr -s ' ' | sed 's/^ //')
case "$row" in "2 changed rot "*) ;; *) fail "diff-reuse: first divergent row is not entity 2 rot: $row" ;; esac
grep -Eq '^ +2 +changed angvel\.x .* rad/s ' "$out/diff-reuse.log" || fail "diff-reuse names no entity 2 angvel.x (rad/s)"
expect_rc 0 "$out/diff-fresh.log" "$detgate" diff "$out/one.flrep" "$out/fresh.flrep" --report-dir "$out/diff-fresh"
# the same through the project: a second session in one process gated against the goldens
expect_rc 1 "$out/gate-reuse.log" "$detgate" --project "$(project '--runs 2 --reuse-world')" gate --scenario stack \
  --report-dir "$out/gate-reuse" && expect_in "$out/gate-reuse.log" "golden: first divergent tick $want"
expect_rc 0 "$out/gate-fresh.log" "$detgate" --project "$(project '--runs 2')" gate --report-dir "$out/gate-fresh"
# reusing it takes both: each half of the reset alone still diverges (pairs only: the raw floats
# from tick 0, a whole quantum from a later tick — the report says both)
expect_rc 1 "$out/gate-rp.log" "$detgate" --project "$(project '--runs 2 --reuse-world --reset-pairs')" gate --scenario stack \
  --report-dir "$out/gate-rp" && expect_in "$out/gate-rp.log" "raw floats already differed earlier"
expect_rc 1 "$out/gate-ri.log" "$detgate" --project "$(project '--runs 2 --reuse-world --reset-inertia')" gate --scenario stack \
  --report-dir "$out/gate-ri" && expect_in "$out/gate-ri.log" "golden: first divergent tick 0"
expect_rc 0 "$out/gate-rpi.log" "$detgate" --project "$(project '--runs 2 --reuse-world --reset-pairs --reset-inertia')" gate \
  --report-dir "$out/gate-rpi"

# ---- 3. solver settings changed between builds: blessed with the scenario's, gated with another --
for setting in "--iterations 20" "--warm-starting off" "--split-impulse off"; do
  tag=$(echo "$setting" | tr -c 'a-z0-9\n' _)
  "$adapter" "$src/scenarios/stack.bt" $setting >"$out/$tag.csv"
  want=$(first_raw_tick "$out/one.csv" "$out/$tag.csv")
  expect_rc 1 "$out/gate$tag.log" "$detgate" --project "$(project "$setting")" gate --scenario stack \
    --report-dir "$out/gate$tag" && expect_in "$out/gate$tag.log" "golden: first divergent tick $want"
done
# the fix: the setting the goldens were blessed with, stated explicitly, passes
expect_rc 0 "$out/gate-same.log" "$detgate" --project "$(project '--iterations 10 --warm-starting on --split-impulse on')" \
  gate --scenario stack --report-dir "$out/gate-same"

# ---- 4. the multi-threaded world: Debian builds Bullet without BT_THREADSAFE --------------------
# btCreateDefaultTaskScheduler() is NULL there, so the adapter cannot run btDiscreteDynamicsWorldMt
# threaded; the gate must say "could not test" (125), never pass it as if it had been tested
expect_rc 125 "$out/gate-mt.log" "$detgate" --project "$(project '--mt 2')" gate --scenario stack --report-dir "$out/gate-mt" &&
  expect_in "$out/gate-mt.log" "built without BT_THREADSAFE"

# ---- 5. the adapter rebuilt with FMA contraction (-mfma -ffp-contract=fast): Bullet's library is
# prebuilt, but its inline headers (btVector3, btTransform, btQuaternion) compile into the adapter —
# chain-p2p's link placement alone moves the raw state from tick 0 and a quantum by tick 14 (1/1024 m)
if grep -qw fma /proc/cpuinfo; then
  if cmake -S "$src" -B "$build/fma" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS="-mfma -ffp-contract=fast" \
       >"$out/fma-configure.log" 2>&1 && cmake --build "$build/fma" >"$out/fma-build.log" 2>&1; then
    "$build/fma/bullet_adapter" "$src/scenarios/chain-p2p.bt" >"$out/fma.csv"
    "$adapter" "$src/scenarios/chain-p2p.bt" >"$out/nofma.csv"
    [ "$(first_raw_tick "$out/nofma.csv" "$out/fma.csv")" = 0 ] || fail "fma: chain-p2p's raw state should differ from tick 0"
    DETGATE_BUILD=$build/fma expect_rc 1 "$out/gate-fma.log" "$detgate" --project "$src/detgate.ini" gate \
      --scenario chain-p2p --report-dir "$out/gate-fma" && expect_in "$out/gate-fma.log" "raw floats already differed earlier"
  else
    cat "$out/fma-build.log" >&2; fail "the FMA build of the adapter"
  fi
else
  echo "note: this CPU has no FMA; the -ffp-contract=fast check did not run"
fi

# ---- 6. bad scenario input: exit 2 with file:line --------------------------------------------------
printf 'ticks 10\nground\nbox 0 1 0 0.5 0.5 0.5\n' >"$out/bad.bt"
expect_rc 2 "$out/bad.log" "$adapter" "$out/bad.bt" && expect_in "$out/bad.log" "bad.bt:3: expected mass"
# a remove of a body already removed is refused while reading, before the stream starts
printf 'ground\nbox 0 1 0 0.5 0.5 0.5 1\nat 5 remove 2\nat 9 remove 2\n' >"$out/bad2.bt"
"$adapter" "$out/bad2.bt" >"$out/bad2.out" 2>"$out/bad2.log"; rc=$?
[ "$rc" -eq 2 ] || fail "double remove: exit $rc, expected 2"
expect_in "$out/bad2.log" "bad2.bt:4: remove: body 2 is already removed"
[ -s "$out/bad2.out" ] && fail "double remove: the adapter printed a stream before refusing it"

[ "$fails" -eq 0 ] && echo "bullet example: all checks passed"
exit $((fails > 0))
