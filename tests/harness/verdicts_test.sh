#!/usr/bin/env bash
# tests/harness/verdicts_test.sh — the CLI's verdicts (issue 12): exit codes that mean what they say
# (a recording this build cannot read back is 1, not 125; a run that tested nothing is not a pass),
# refused options named, recovered trailers and undecoded chunks said, and counts, plurals and
# version strings that agree everywhere.
# usage: verdicts_test.sh DETGATE SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
work_dir verdicts
cd "$SRC" || exit 1

# a small corpus of its own: one short scenario (events: 3600 ticks) and its golden
C=$W/corpus
mkdir -p "$C/scenarios" "$C/golden"
cp corpus/scenarios/events.scn corpus/scenarios/mars.scn "$C/scenarios/"
cp corpus/golden/events.* corpus/golden/mars.* "$C/golden/"
G=(--corpus "$C/scenarios" --golden "$C/golden")

# ---- a recording this build wrote and cannot read back is a failure (1), not "could not test" ------
# self-check:T makes the writer's self-check fail at T, as a decoder that applies a delta twice does
# (the writer rebuilds every DELTA record with the decoder's arithmetic).
expect 1 "$DG" gate "${G[@]}" --scenario events --replay-fault self-check:300 -q --json "$W/sc.json"
contains "$W/sc.json" '"status": *"fail"'
contains "$W/sc.json" "cannot read back its own recording"
expect 1 "$DG" verify events --corpus "$C/scenarios" --replay-fault self-check:300 -q
expect 1 "$DG" record events --corpus "$C/scenarios" -o "$W/sc.flrep" --replay-fault self-check:300
# hooks that would do nothing are refused
expect 2 "$DG" record events --corpus "$C/scenarios" -o "$W/dd.flrep" --replay-fault double-delta:300
expect 2 "$DG" gate "${G[@]}" --format rply --scenario events --replay-fault self-check:300 -q
# a golden this build cannot open is what cannot be run: 125
mkdir -p "$W/nogolden"
expect 125 "$DG" gate --corpus "$C/scenarios" --golden "$W/nogolden" --scenario events -q
# a golden that does not decode (one flipped bit in a chunk) while the new recording does: nothing to
# compare with, 125, and the message says it is the golden
mkdir -p "$W/g-bad"
python3 -c "import sys; d=bytearray(open(sys.argv[1],'rb').read()); d[20000]^=0x40; open(sys.argv[2],'wb').write(d)" \
  corpus/golden/mars.flrep "$W/g-bad/mars.flrep"
expect 125 "$DG" gate --corpus "$C/scenarios" --golden "$W/g-bad" --scenario mars -q --text "$W/gb.txt"
contains "$W/gb.txt" "cannot compare with the golden .*g-bad/mars.flrep: chunk frame at byte 17534"
# a fault hook past the last tick would test nothing: refused, naming the last tick
expect 2 "$DG" verify events --corpus "$C/scenarios" --replay-fault double-delta:100000 -q
contains "$W/err" "last tick (3599)"
expect 2 "$DG" gate "${G[@]}" --scenario events --replay-fault seek-drop-delta:3600 -q
contains "$W/err" "last tick (3599)"

# ---- a run that tested nothing never passes silently -------------------------------------------
mkdir -p "$W/empty"
expect 2 "$DG" gate --corpus "$W/empty" --golden "$C/golden" -q
contains "$W/err" "nothing to test"
# the plan is made over the scenarios given: mars alone goes to shard 1/2, so shard 2/2 excludes it
expect 2 "$DG" gate "${G[@]}" --scenario mars --shard 2/2 -q
contains "$W/err" "not in --shard 2/2"
expect 0 "$DG" gate "${G[@]}" --scenario mars --shard 1/2 -q
# more shards than scenarios: this one is empty, says so in its reports, and passes
expect 0 "$DG" gate "${G[@]}" --shard 3/3 --text "$W/e.txt" --markdown "$W/e.md" --html "$W/e.html" --json "$W/e.json"
contains "$W/e.json" '"note": "shard 3/3 of 2 scenarios: empty"'
for f in "$W/out" "$W/e.txt" "$W/e.md" "$W/e.html"; do contains "$f" "shard 3/3 of 2 scenarios: empty"; done

# ---- the version once; startedUnix set ------------------------------------------------------------
expect 0 "$DG" --version
contains "$W/out" "^detgate 0\.1\.0$"
expect 0 "$DG" gate "${G[@]}" --scenario mars --json "$W/v.json" --markdown "$W/v.md" --text "$W/v.txt"
for f in "$W/out" "$W/v.md" "$W/v.txt" "$W/v.json"; do lacks "$f" "detgate detgate"; done
contains "$W/v.json" '"version": *"0\.1\.0"'
started=$(sed -n 's/.*"startedUnix": *\([0-9-]*\).*/\1/p' "$W/v.json" | head -1)
now=$(date +%s)
if [ -n "$started" ] && [ "$started" -le "$now" ] && [ "$started" -gt $((now - 600)) ]; then ok; else
  bad "startedUnix '$started' is not the run's start (now $now)"; fi

# ---- refusals name what they refuse ------------------------------------------------------------
expect 2 "$DG" bless --all mars --corpus "$C/scenarios" --golden "$W/bless-golden" --reason "test"
contains "$W/err" "not both"
[ ! -e "$W/bless-golden/mars.hashlog.zst" ] && ok || bad "bless --all NAME blessed"
# every command's unknown option is named on stderr (bisect-step is git bisect run's: 125)
for c in info dump record hash verify diff gate bless bisect matrix bisect-step; do
  want=2; [ "$c" = bisect-step ] && want=125
  expect $want "$DG" $c --bogus F
  contains "$W/err" "'--bogus'"
done

# ---- dump and hash say when the trailer was recovered; info says what it checked -------------------
sz=$(stat -c %s corpus/golden/mars.flrep)
head -c $((sz - 40)) corpus/golden/mars.flrep >"$W/cut.flrep"
for c in hash "dump --json"; do
  expect 0 "$DG" $c "$W/cut.flrep"
  contains "$W/err" "cut.flrep: trailer missing or invalid; recovered 3600 ticks from 40 chunks"
done
expect 0 "$DG" hash corpus/golden/mars.flrep
lacks "$W/err" "recovered"
# a file cut inside a chunk: the scan stops at the cut chunk, and info and hash say where
head -c $((sz * 2 / 3)) corpus/golden/mars.flrep >"$W/cut2.flrep"
expect 0 "$DG" hash "$W/cut2.flrep"
contains "$W/err" "cut2.flrep: scan stopped at byte [0-9]*: chunk framing"
expect 0 "$DG" info "$W/cut2.flrep"
contains "$W/out" "^recovery: *scan stopped at byte"
# one flipped bit inside a chunk's zstd frame: the trailer is valid, the chunk is not
python3 -c "import sys; d=bytearray(open(sys.argv[1],'rb').read()); d[20000]^=0x40; open(sys.argv[2],'wb').write(d)" \
  corpus/golden/mars.flrep "$W/flip.flrep"
expect 0 "$DG" info "$W/flip.flrep"
contains "$W/out" "chunks not decoded (use --check)"
expect 2 "$DG" info --check "$W/flip.flrep"
contains "$W/out" "check: *FAILED: chunk frame at byte 17534"
expect 0 "$DG" info --check corpus/golden/mars.flrep
contains "$W/out" "check: *OK: 40 chunks and 3600 ticks decoded"
expect 0 "$DG" info --check corpus/golden/dogfight-40.rply
contains "$W/out" "check: *OK"

# ---- a recording that ends early is told as a length; counts come from one side ------------------
head -c 60000 corpus/golden/mars.flrep >"$W/short.flrep" # recovered: ticks 0..1799
expect 1 "$DG" diff corpus/golden/mars.flrep "$W/short.flrep" --text "$W/len.txt" --json "$W/len.json"
contains "$W/len.txt" "B ends at tick 1799, A at 3599; 1800 ticks differ; first at tick 1800"
lacks "$W/len.txt" " lost "
lacks "$W/len.txt" "events differ (0 vs 0)"
contains "$W/len.txt" "short (flrep, 1800 ticks, 18000 entity-ticks)" # both B's (was 3600 ticks from A)
expect 1 "$DG" diff "$W/short.flrep" corpus/golden/mars.flrep -q --text "$W/len2.txt"
contains "$W/len2.txt" "A ends at tick 1799, B at 3599"
"$DG" hash corpus/golden/mars.flrep -o "$W/long.log" 2>/dev/null
"$DG" hash "$W/short.flrep" -o "$W/short.log" 2>/dev/null
expect 1 "$DG" diff "$W/long.log" "$W/short.log" -q --text "$W/len3.txt" --junit "$W/len3.xml"
contains "$W/len3.txt" "B ends at tick 1799, A at 3599; 1800 ticks differ (hash logs)"
contains "$W/len3.txt" "short (hashlog, 1800 ticks, 18000 entity-ticks)"
# JUnit fileBytes is B's size for hash logs too (it was 0)
contains "$W/len3.xml" "name=\"fileBytes\" value=\"$(stat -c %s "$W/short.log")\""
# the gate against a golden that is longer than the new recording... and shorter
mkdir -p "$W/g-short"
cp "$W/short.flrep" "$W/g-short/mars.flrep"
expect 1 "$DG" gate --corpus "$C/scenarios" --golden "$W/g-short" --scenario mars -q --text "$W/gl.txt"
contains "$W/gl.txt" "the golden ends at tick 1799, the new recording at 3599; 1800 ticks differ from the golden"

# ---- one number for divergent ticks: the message's count is the check's ---------------------------
expect 1 "$DG" verify dogfight-40 --replay-fault double-delta:300 --no-recovery -q --text "$W/n.txt"
msg=$(grep -o '[0-9]* of 1500 ticks differ between the record side' "$W/n.txt" | head -1 | cut -d' ' -f1)
rng=$(grep -o 'divergent ticks: [0-9]*' "$W/n.txt" | head -1 | cut -d' ' -f3)
if [ -n "$msg" ] && [ "$msg" = "$rng" ]; then ok; else bad "record-vs-replay says '$msg' ticks differ, its ranges '$rng'"; fi

# ---- singular and plural --------------------------------------------------------------------------
printf 'tick,id,px,py,pz\n0,1,6371000,0,0\n' >"$W/one.csv"
printf 'tick,id,px,py,pz\n0,1,6371001,0,0\n' >"$W/one-b.csv"
# (--no-recovery: the recovery check's messages are worded elsewhere)
expect 0 "$DG" verify --states "$W/one.csv" --no-recovery --text "$W/p.txt" --markdown "$W/p.md" --html "$W/p.html" \
  --junit "$W/p.xml" --json "$W/p.json"
contains "$W/p.txt" "(flrep, 1 tick, 1 entity-tick)"
contains "$W/p.json" "1 tick, 1 entity-tick: record and replay hashes identical"
contains "$W/p.json" "1 tick sampled"
expect 0 "$DG" record --states "$W/one.csv" -o "$W/one.flrep"
contains "$W/err" "1 tick, 1 entity-tick"
expect 0 "$DG" record --states "$W/one-b.csv" -o "$W/one-b.flrep"
expect 1 "$DG" diff "$W/one.flrep" "$W/one-b.flrep" --text "$W/p2.txt" --html "$W/p2.html"
contains "$W/p2.txt" "1 tick differs; first at tick 0"
contains "$W/p2.html" "1 divergent tick in 1 range"
# a tick where 33 entities changed keeps 32 (the cap): "1 more entity"; 21 changed rows against the
# Markdown's 20: "1 more row"
for n in 33 21; do
  for side in a b; do
    { echo "tick,id,px,py,pz"
      for id in $(seq 1 $n); do echo "0,$id,$([ $side = a ] && echo 6371000 || echo 6371001),$id,0"; done
    } >"$W/m$n$side.csv"
    "$DG" record --states "$W/m$n$side.csv" -o "$W/m$n$side.flrep" 2>/dev/null
  done
done
expect 1 "$DG" diff "$W/m33a.flrep" "$W/m33b.flrep" --text "$W/c.txt" --junit "$W/c.xml" --html "$W/c.html"
contains "$W/c.txt" "1 more entity not kept"
contains "$W/c.xml" "1 more entity$"
contains "$W/c.html" "1 more entity beyond"
expect 1 "$DG" diff "$W/m21a.flrep" "$W/m21b.flrep" -q --markdown "$W/c.md"
contains "$W/c.md" "1 more row$"
expect 0 "$DG" info corpus/golden/mars.flrep
contains "$W/out" "1 faction,"
expect 0 "$DG" info "$W/one.flrep"
contains "$W/out" "(1 tick, "
for f in "$W/p.txt" "$W/p.md" "$W/p.html" "$W/p.xml" "$W/p.json" "$W/p2.txt" "$W/p2.html" "$W/out"; do
  lacks "$f" "[^0-9]1 ticks"
  lacks "$f" "[^0-9]1 entity-ticks"
done

# record --fsync: the writer's disk policy (the codec's test_flrep_fsync counts the calls per policy)
expect 2 "$DG" record mars -o "$W/fs.flrep" --fsync sometimes
contains "$W/err" "expected close, chunk or none, found 'sometimes'"
[ ! -e "$W/fs.flrep" ] && ok || bad "record --fsync sometimes wrote a file"
for p in close chunk none; do
  expect 0 "$DG" record mars -o "$W/fs-$p.flrep" --fsync "$p"
  expect 0 "$DG" info --check "$W/fs-$p.flrep"
done
expect 0 "$DG" diff "$W/fs-close.flrep" "$W/fs-chunk.flrep" -q

echo "verdicts_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
