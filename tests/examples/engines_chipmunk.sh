# tests/examples/engines_chipmunk.sh — sourced by engines_test.sh: Chipmunk2D's pitfalls and its long
# scenario. The solver applies impulses in the order of space->arbiters, which is the order the spatial
# index reports colliding pairs (cpSpaceStep.c): another index, or another shape insertion order,
# changes that order and so the result, from tick 1.
p=$src/scenarios/pyramid.cp
# Debian's library prints a debug banner to stdout at the first cpSpaceNew; the stream on stdout must
# still start with its header (the adapter sends the banner to stderr)
"$adapter" "$p" >"$out/stdout.jsonl" 2>"$out/stdout.err"
head -1 "$out/stdout.jsonl" | grep -q '^{"detgate_states":1,' ||
  fail "stdout stream does not start with its header: $(head -1 "$out/stdout.jsonl" | cut -c1-80)"
expect_rc 0 "$out/stdout.verify" "$detgate" verify --states "$out/stdout.jsonl" --report-dir "$out/verify-stdout"

# pitfall 1: cpSpaceUseSpatialHash in one build, the default BB tree in the other
expect_rc 0 "$out/p.log" "$adapter" "$p" --index bbtree -o "$out/bbtree.jsonl"
expect_rc 0 "$out/p.log" "$adapter" "$p" --index hash -o "$out/hash.jsonl"
if diff_pair "$out/bbtree.jsonl" "$out/hash.jsonl" "$out/index.diff" 1; then
  grep -q 'first divergent tick 1:' "$out/index.diff" || fail "index pitfall not caught at tick 1"
  expect_first "$out/index.diff" 1 vel.y
  report_first_tick "$out/index.diff" 1
fi
# pitfall 2: the same bodies added to the space in another order (an unordered container)
expect_rc 0 "$out/p.log" "$adapter" "$p" --reverse-insert -o "$out/reverse.jsonl"
if diff_pair "$out/bbtree.jsonl" "$out/reverse.jsonl" "$out/order.diff" 1; then
  grep -q 'first divergent tick 1:' "$out/order.diff" || fail "insertion-order pitfall not caught at tick 1"
  expect_first "$out/order.diff" 1 vel.x
  report_first_tick "$out/order.diff" 1
fi
# the fix: one index and one insertion order (by id) in every build; two such runs match
expect_rc 0 "$out/p.log" "$adapter" "$p" --index bbtree -o "$out/bbtree2.jsonl"
diff_pair "$out/bbtree.jsonl" "$out/bbtree2.jsonl" "$out/fix.diff" 0

# the long scenario (thousands of ticks, hundreds of bodies), CSV, run twice
expect_rc 0 "$out/long.log" "$adapter" "$src/scenarios/long.cp" --csv -o "$out/long1.csv"
expect_rc 0 "$out/long.log" "$adapter" "$src/scenarios/long.cp" --csv -o "$out/long2.csv"
if diff_pair "$out/long1.csv" "$out/long2.csv" "$out/long.diff" 0; then
  grep -q 'PASS .*2400 ticks' "$out/long.diff" || fail "long: expected 2400 ticks: $(head -2 "$out/long.diff")"
fi
rm -f "$out"/long*.csv

# ---- the example's project file: `cd examples/engines/chipmunk && detgate gate` against its goldens ----
# (its run writes binary stream v2, the goldens were blessed through CSV: passing shows the two carry
# the same state)
cd "$src" || exit 1
export DETGATE_BUILD=${adapter%/*}   # detgate.ini's run command: the adapter's folder
expect_rc 0 "$out/gate.log" "$detgate" gate --report-dir "$out/gate" &&
  { grep -q 'PASS — 4 scenarios' "$out/gate.log" || fail "gate: expected 4 scenarios passed: $(head -1 "$out/gate.log")"; }
# the pitfalls through the gate: the run command passes CHIPMUNK_FLAGS on, so a build that switches to
# the spatial hash, or adds bodies in another order, fails at the tick its diff above found, naming
# the same first entity and field
for pit in "index:vel.y:--index hash" "order:vel.x:--reverse-insert"; do
  tag=${pit%%:*} rest=${pit#*:}; field=${rest%%:*} flags=${rest#*:}
  want=$(diff_first_tick "$out/$tag.diff")
  CHIPMUNK_FLAGS=$flags expect_rc 1 "$out/gate-$tag.log" "$detgate" gate --scenario pyramid --report-dir "$out/gate-$tag" && {
    grep -q "golden: first divergent tick ${want:-?}:" "$out/gate-$tag.log" ||
      fail "gate with $flags: not at tick ${want:-?}: $(sed -n 2p "$out/gate-$tag.log")"
    expect_first "$out/gate-$tag.log" 1 "$field"; }
done
unset DETGATE_BUILD
cd "$out" || exit 1
