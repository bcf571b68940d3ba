#!/usr/bin/env bash
# tests/harness/verdicts_test.sh — the CLI's verdicts (issue 12): exit codes that mean what they say
# (a recording this build cannot read back is 1, not 125; a run that tested nothing is not a pass),
# refused options named, recovered trailers and undecoded chunks said, and counts, plurals and
# version strings that agree everywhere.
# usage: verdicts_test.sh DETGATE SOURCE_DIR
set -u
DG=$1
SRC=$2
W=$(mktemp -d "${TMPDIR:-/tmp}/dg-verdicts-test.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$SRC" || exit 1
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# expect CODE CMD... — runs CMD (stdout to $W/out, stderr to $W/err) and checks its exit code
expect() {
  local want=$1
  shift
  "$@" >"$W/out" 2>"$W/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then ok; else bad "exit $got, expected $want: $* ($(head -c 300 "$W/err"))"; fi
}
contains() { if grep -q -- "$2" "$1"; then ok; else bad "$1 lacks '$2': $(head -c 400 "$1")"; fi; }
lacks() { if grep -q -- "$2" "$1"; then bad "$1 has '$2': $(grep -m1 -- "$2" "$1")"; else ok; fi; }
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
# a golden this build cannot open is what cannot be run: 125
mkdir -p "$W/nogolden"
expect 125 "$DG" gate --corpus "$C/scenarios" --golden "$W/nogolden" --scenario events -q
# a fault hook past the last tick would test nothing: refused, naming the last tick
expect 2 "$DG" verify events --corpus "$C/scenarios" --replay-fault double-delta:100000 -q
contains "$W/err" "last tick (3599)"
expect 2 "$DG" gate "${G[@]}" --scenario events --replay-fault seek-drop-delta:3600 -q
contains "$W/err" "last tick (3599)"

# ---- a run that tested nothing never passes silently -------------------------------------------
mkdir -p "$W/empty"
expect 2 "$DG" gate --corpus "$W/empty" --golden "$C/golden" -q
contains "$W/err" "nothing to test"
# name order: events (shard 1/2), mars (shard 2/2)
expect 2 "$DG" gate "${G[@]}" --scenario mars --shard 1/2 -q
contains "$W/err" "not in --shard 1/2"
# more shards than scenarios: this one is empty, says so in its reports, and passes
expect 0 "$DG" gate "${G[@]}" --shard 3/3 --text "$W/e.txt" --markdown "$W/e.md" --html "$W/e.html"
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

echo "verdicts_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
