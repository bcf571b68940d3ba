# tests/examples/engines_ode.sh — sourced by engines_test.sh: ODE's pitfall and its long scenario.
# dWorldQuickStep shuffles constraint rows with ODE's global dRand() (quickstep.cpp,
# RANDOMLY_REORDER_CONSTRAINTS): two runs in ONE process without dRandSetSeed diverge from tick 1.
p=$src/scenarios/pyramid.ode
expect_rc 0 "$out/p.log" "$adapter" "$p" --runs 2 -o "$out/run1.jsonl" -o "$out/run2.jsonl"
if diff_pair "$out/run1.jsonl" "$out/run2.jsonl" "$out/pitfall.diff" 1; then
  grep -q 'first divergent tick 1:' "$out/pitfall.diff" || fail "pitfall not caught at tick 1: $(head -3 "$out/pitfall.diff")"
  expect_first "$out/pitfall.diff" 1 vel.y
  report_first_tick "$out/pitfall.diff" 1
fi
# a fresh process starts from dRand's seed 0: its first run equals the first run above (why a repeat in
# separate processes would not show it)
expect_rc 0 "$out/p1.log" "$adapter" "$p" -o "$out/fresh.jsonl"
cmp -s "$out/fresh.jsonl" "$out/run1.jsonl" || fail "a fresh process's run differs from the first in-process run"
# the fix: dRandSetSeed(seed) before each run
expect_rc 0 "$out/p.log" "$adapter" "$p" --runs 2 --reset-seed -o "$out/fix1.jsonl" -o "$out/fix2.jsonl"
diff_pair "$out/fix1.jsonl" "$out/fix2.jsonl" "$out/fix.diff" 0

# the long scenario (thousands of ticks, hundreds of bodies), CSV, fixed, run twice in one process
expect_rc 0 "$out/long.log" "$adapter" "$src/scenarios/long.ode" --csv --runs 2 --reset-seed \
  -o "$out/long1.csv" -o "$out/long2.csv"
if diff_pair "$out/long1.csv" "$out/long2.csv" "$out/long.diff" 0; then
  grep -q 'PASS .*2400 ticks' "$out/long.diff" || fail "long: expected 2400 ticks: $(head -2 "$out/long.diff")"
fi
rm -f "$out"/long*.csv

# ---- the example's project file: `cd examples/engines/ode && detgate gate` against its goldens --------
# (its run writes binary stream v2, the goldens were blessed through CSV: passing shows the two carry
# the same state)
cd "$src" || exit 1
DETGATE_BUILD=${adapter%/*} expect_rc 0 "$out/gate.log" "$detgate" gate --report-dir "$out/gate" &&
  { grep -q 'PASS — 4 scenarios' "$out/gate.log" || fail "gate: expected 4 scenarios passed: $(head -1 "$out/gate.log")"; }
cd "$out" || exit 1
# the pitfall through the gate: a build that runs a second simulation in its process without
# dRandSetSeed (--runs 2, the first run to /dev/null, the second on stdout) fails at the tick the diff
# above found, naming entity 1's vel.y first; the same with --reset-seed passes
want=$(diff_first_tick "$out/pitfall.diff")
expect_rc 1 "$out/gate-noseed.log" "$detgate" --project "$(project '--runs 2 -o /dev/null -o /dev/fd/1')" gate \
  --scenario pyramid --report-dir "$out/gate-noseed" && {
  grep -q "golden: first divergent tick ${want:-?}:" "$out/gate-noseed.log" ||
    fail "gate without dRandSetSeed: not at tick ${want:-?}: $(sed -n 2p "$out/gate-noseed.log")"
  expect_first "$out/gate-noseed.log" 1 vel.y; }
expect_rc 0 "$out/gate-seed.log" "$detgate" --project "$(project '--runs 2 --reset-seed -o /dev/null -o /dev/fd/1')" gate \
  --scenario pyramid --report-dir "$out/gate-seed"
