#!/usr/bin/env bash
# tests/harness/cli_test.sh — drives the `detgate` CLI like a user and a CI job would: exit codes for
# bad input and usage (2), help with an example on every subcommand, info/dump/hash on good and
# corrupted files, verify catching a replay-side codec fault at its tick, diff naming the tick,
# entity and field of an injected bit flip, gate/bless/--shard against a throwaway golden folder, the
# state-stream input, and the report files (JSON against its schema, JUnit and HTML well-formed).
# usage: cli_test.sh DETGATE SOURCE_DIR REPORT_CHECK
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
CHECK=$3
SCHEMA=$SRC/docs/report-schema.json
work_dir cli

empty() { if [ ! -s "$1" ]; then ok; else bad "$1 is not empty"; fi; }

# ---- usage and help -----------------------------------------------------------------------------
expect 2 "$DG"
expect 2 "$DG" frobnicate
contains "$W/err" "unknown command"
expect 0 "$DG" --help
for c in info dump record hash verify diff gate bless bisect matrix; do
  expect 0 "$DG" "$c" --help
  contains "$W/out" "Example"
done
expect 2 "$DG" verify --no-such-option dogfight-40
expect 2 "$DG" verify no-such-scenario
contains "$W/err" "no scenario"
expect 2 "$DG" verify dogfight-40 --keyframe-interval 5
expect 2 "$DG" record dogfight-40
contains "$W/err" "-o FILE is required"
expect 2 "$DG" record dogfight-40 -o "$W/nolog.flrep" --log-raw   # a hash log's shape, no hash log
contains "$W/err" "--log-raw shapes the hash log: it needs --hash-log LOG"
[ ! -e "$W/nolog.flrep" ] || { echo "FAIL: record --log-raw without --hash-log wrote $W/nolog.flrep"; exit 1; }
expect 2 "$DG" record dogfight-40 -o "$W/nolog.flrep" --log-entities
contains "$W/err" "--log-entities shapes the hash log: it needs --hash-log LOG"
expect 2 "$DG" verify dogfight-40 --log-raw
contains "$W/err" "--log-raw shapes the hash log: it needs --hash-log LOG"
expect 2 "$DG" record dogfight-40 --format rply -o "$W/nolog.rply" --hash-log "$W/nolog.log"
contains "$W/err" "--hash-log is for .flrep recordings"
expect 2 "$DG" gate --shard 0/2
expect 2 "$DG" diff only-one-file
expect 2 "$DG" bless dogfight-40
contains "$W/err" "reason"

# ---- info / dump / hash ---------------------------------------------------------------------------
G=$SRC/corpus/golden/dogfight-40.flrep
expect 2 "$DG" info "$W/missing.flrep"
printf 'not a recording at all' >"$W/garbage.bin"
expect 2 "$DG" info "$W/garbage.bin"
contains "$W/err" "not a recording"
expect 0 "$DG" info "$G"
contains "$W/out" "keyframes:"
contains "$W/out" "bytes per tick:"
contains "$W/out" "trailer valid"
expect 0 "$DG" dump "$G" --json
lines=$(wc -l <"$W/out")
[ "$lines" -eq $((1 + 3 + 1500)) ] && ok || bad "dump printed $lines lines, expected 1504"
contains "$W/out" '"type":"tick","tick":1499'
# a corrupted chunk: validation fails, nothing on stdout; --partial prints what was read before it
cp "$G" "$W/corrupt.flrep"
size=$(stat -c %s "$G")
printf '\xff\xff\xff\xff' | dd of="$W/corrupt.flrep" bs=1 seek=$((size / 2)) conv=notrunc status=none
expect 2 "$DG" dump "$W/corrupt.flrep" --json
empty "$W/out"
[ -s "$W/err" ] && ok || bad "dump of a corrupt file printed no error"
expect 2 "$DG" dump "$W/corrupt.flrep" --json --partial
contains "$W/out" '"type":"header"'
# RPLY files are detected by their magic and handed to harness/rply_dump.c
RP=$SRC/corpus/fuzz/rply_player/v3.rply
if [ -f "$SRC/harness/rply_dump.c" ] && [ -f "$RP" ]; then
  expect 0 "$DG" info "$RP"
  contains "$W/out" "RPLY version 3"
  expect 0 "$DG" dump "$RP" --json
  contains "$W/out" '"magic":"RPLY"'
fi
expect 0 "$DG" hash "$G"
cp "$W/out" "$W/h1.log"
expect 0 "$DG" hash "$G" -o "$W/h2.log"
cmp -s "$W/h1.log" "$W/h2.log" && ok || bad "hash to stdout and to -o differ"
contains "$W/h1.log" "# end ticks=1500"
[ "$(grep -c ' T ' "$W/h1.log")" -eq 1500 ] && ok || bad "hash log has not 1500 T lines"
expect 0 "$DG" hash "$G" --entities -o "$W/h3.log.zst"
zstd -dc "$W/h3.log.zst" >"$W/h3.log" 2>/dev/null || bad "hash -o .zst is not zstd"
[ "$(grep -c ' e ' "$W/h3.log")" -eq 60000 ] && ok || bad "--entities log has not 60000 e lines"
# a file whose trailer was cut off is still playable; info says so
head -c $((size - 100)) "$G" >"$W/cut.flrep"
expect 0 "$DG" info "$W/cut.flrep"
contains "$W/out" "RECOVERED by a forward scan"
expect 0 "$DG" diff "$W/h1.log" "$W/h2.log"
expect 0 "$DG" diff "$SRC/corpus/golden/dogfight-40.hashlog.zst" "$G"

# ---- verify: clean run, reports, a replay-side fault ------------------------------------------------
expect 0 "$DG" verify dogfight-40 --report-dir "$W/rep-verify" -q --seek-samples 5 --seek-edges 4
contains "$W/rep-verify/report.json" "5 random"
expect 0 "$DG" verify dogfight-40 -q --keep "$W/kept.flrep" --no-recovery --keyframe-interval 30
expect 0 "$DG" info "$W/kept.flrep"
contains "$W/out" "keyframe interval:  30 ticks"
expect 0 "$DG" verify dogfight-40 --report-dir "$W/rep-verify" -q
expect 0 "$CHECK" "$SCHEMA" "$W/rep-verify"
contains "$W/rep-verify/report.txt" "PASS dogfight-40"
expect 1 "$DG" verify dogfight-40 --replay-fault double-delta:130 --report-dir "$W/rep-fault" -q
expect 0 "$CHECK" "$SCHEMA" "$W/rep-fault"
contains "$W/rep-fault/report.txt" "record-vs-replay: first divergent tick 130"
# a fault on the seek path only (a seek landing on 239, a chunk's last tick, drops tick 238's delta):
# linear replay and recovery still pass, the seek check fails at exactly that tick
expect 1 "$DG" verify dogfight-40 --replay-fault seek-drop-delta:239 --report-dir "$W/rep-seekfault" -q
expect 0 "$CHECK" "$SCHEMA" "$W/rep-seekfault"
contains "$W/rep-seekfault/report.txt" "seek: first divergent tick 239: 40 entities changed"
python3 - "$W/rep-seekfault/report.json" <<'PY' && ok || bad "seek fault: expected only the seek check to fail, at tick 239"
import json, sys
checks = {c["name"]: c for c in json.load(open(sys.argv[1]))["scenarios"][0]["checks"]}
assert checks["record-vs-replay"]["status"] == "pass" and checks["recovery"]["status"] == "pass"
assert checks["seek"]["status"] == "fail" and checks["seek"]["firstDivergentTick"] == 239
assert checks["seek"]["divergentTicks"] == 1
PY
expect 2 "$DG" verify dogfight-40 --replay-fault seek-drop-delta:soon
contains "$W/err" "seek-drop-delta:TICK"
expect 2 "$DG" verify mars --format rply --replay-fault seek-drop-delta:100
contains "$W/err" "does nothing with --format rply"

# ---- record + diff: a bit flip is named by tick, entity and field -------------------------------------
expect 0 "$DG" record dogfight-40 -o "$W/good.flrep"
expect 0 "$DG" record dogfight-40 -o "$W/flip.flrep" --inject "bitflip:tick=300,entity=7,field=pos.x,bit=45"
expect 0 "$DG" diff "$W/good.flrep" "$W/good.flrep"
expect 1 "$DG" diff "$W/good.flrep" "$W/flip.flrep" --report-dir "$W/rep-diff" --json "$W/diff.json"
expect 0 "$CHECK" "$SCHEMA" "$W/rep-diff"
contains "$W/rep-diff/report.txt" "first divergent tick 300: 1 entity changed"
contains "$W/rep-diff/report.txt" "7 Viper 7 changed pos.x"
expect 1 "$DG" diff "$SRC/corpus/golden/dogfight-40.hashlog.zst" "$W/flip.flrep" --text "$W/dl.txt"
contains "$W/dl.txt" "first divergent tick 300"
cmp -s "$W/diff.json" "$W/rep-diff/report.json" || grep -q '"firstTick": *300' "$W/diff.json" && ok || bad "--json FILE"

# ---- RPLY: the same gate through the RPLY writer and player ------------------------------------------------
expect 0 "$DG" verify mars --format rply --report-dir "$W/rep-rply" -q
expect 0 "$CHECK" "$SCHEMA" "$W/rep-rply"
contains "$W/rep-rply/report.txt" "PASS mars (rply"
expect 0 "$DG" record mars --format rply -o "$W/m1.rply"
expect 0 "$DG" record mars --format rply -o "$W/m2.rply" --inject "bitflip:tick=57,entity=1,field=pos.y,bit=45"
expect 0 "$DG" diff "$W/m1.rply" "$W/m1.rply"
expect 1 "$DG" diff "$W/m1.rply" "$W/m2.rply" --text "$W/rd.txt"
contains "$W/rd.txt" "first divergent tick 57: 1 entity changed"
contains "$W/rd.txt" "1      changed pos"
expect 0 "$DG" hash "$W/m1.rply" -o "$W/m1.log"
expect 0 "$DG" hash "$W/m1.rply"
cmp -s "$W/out" "$W/m1.log" && ok || bad "RPLY hash log differs between runs"
contains "$W/m1.log" "format=rply"
expect 0 "$DG" diff "$W/m1.log" "$W/m1.rply"
expect 1 "$DG" diff "$W/m1.log" "$W/m2.rply"
expect 2 "$DG" diff "$W/m1.rply" "$G"
contains "$W/err" "expected two .flrep recordings, two RPLY recordings, or hash logs"
expect 2 "$DG" verify mars --format acmi

# ---- the formats table: every --format, file kind and golden name goes through its rows ----------------
for c in "record mars -o $W/x.out" "verify mars" "gate" "bless mars --reason r" "bisect --good a --bad b --scenario mars"; do
  # shellcheck disable=SC2086 # $c is a command line
  expect 2 "$DG" $c --format acmi
  contains "$W/err" "--format: expected flrep or rply, found 'acmi'"
done
for c in info hash; do
  expect 2 "$DG" "$c" "$W/garbage.bin"
  contains "$W/err" "not a recording (expected magic FLRP or RPLY)"
done
expect 2 "$DG" record mars --format rply -o "$W/x.rply" --hash-log "$W/x.log"
contains "$W/err" 'use `detgate hash FILE.rply`'
expect 2 "$DG" gate --format rply --replay-fault double-delta:3
contains "$W/err" "hooks the .flrep reader and writer; it does nothing with --format rply"
mkdir -p "$W/rcorpus" "$W/rgolden"
cp "$SRC/corpus/scenarios/mars.scn" "$W/rcorpus/m.scn"
expect 125 "$DG" gate --format rply --corpus "$W/rcorpus" --golden "$W/rgolden" --text "$W/rg0.txt" -q
contains "$W/rg0.txt" 'no golden for m in .*/rgolden (RPLY): record one with `detgate bless --format rply m --reason'
expect 0 "$DG" bless m --format rply --corpus "$W/rcorpus" --golden "$W/rgolden" --reason "rply goldens"
contains "$W/out" "rgolden/m.rply.hashlog.zst + .rply$"
[ -s "$W/rgolden/m.rply" ] && [ ! -e "$W/rgolden/m.flrep" ] && ok || bad "bless --format rply wrote no m.rply"
expect 0 "$DG" gate --format rply --corpus "$W/rcorpus" --golden "$W/rgolden" -q
# the default format's golden is another file: not there yet, and not named by a --format
expect 125 "$DG" gate --corpus "$W/rcorpus" --golden "$W/rgolden" --text "$W/rg1.txt" -q
contains "$W/rg1.txt" 'no golden for m in .*/rgolden: record one with `detgate bless m --reason'

# ---- a broken run against the committed golden -----------------------------------------------------------
expect 1 "$DG" gate --scenario dogfight-40 --inject "bitflip:tick=300,entity=7,field=pos.x,bit=45" \
  --report-dir "$W/rep-broken" -q
contains "$W/rep-broken/report.txt" "golden: first divergent tick 300: 1 entity changed"
contains "$W/rep-broken/report.txt" "7 Viper 7 changed pos.x"
# fma never crosses a quantum in dogfight-40: the raw float hashes catch it (a sub-quantum drift is
# reported and passes by default, fails with --strict-raw)
expect 0 "$DG" gate --scenario dogfight-40 --inject fma --json "$W/fma.json" -q
contains "$W/fma.json" "raw floats differ from tick 1 (sub-quantum drift; hashed raw floats pos.x,"
contains "$W/fma.json" '"subQuantum": true'
expect 1 "$DG" gate --scenario dogfight-40 --inject fma --strict-raw -q
# every other switch, each on a scenario where docs/SCENARIOS.md says it shows, against the committed golden
for pair in dogfight-40:libm-trig events:pointer-order mars:clock-seed dogfight-40:racy-threads; do
  expect 1 "$DG" gate --scenario "${pair%%:*}" --inject "${pair#*:}" --strict-raw -q --text "$W/inj.txt"
  contains "$W/inj.txt" "FAIL ${pair%%:*}"
done

# ---- gate / bless / shard on a throwaway corpus ---------------------------------------------------------
mkdir -p "$W/corpus" "$W/golden"
for n in a b c; do cp "$SRC/corpus/scenarios/mars.scn" "$W/corpus/$n.scn"; done
expect 125 "$DG" gate --corpus "$W/corpus" --golden "$W/golden" --report-dir "$W/rep-gate0" -q
contains "$W/rep-gate0/report.txt" "no golden"
expect 0 "$DG" bless a b c --corpus "$W/corpus" --golden "$W/golden" --reason "first goldens"
contains "$W/golden/BLESS.log" 'scenario=b first_changed_tick="new"'
contains "$W/golden/BLESS.log" 'reason="first goldens"'
[ -s "$W/golden/a.hashlog.zst" ] && [ -s "$W/golden/a.flrep" ] && ok || bad "bless wrote no golden"
expect 0 "$DG" gate --corpus "$W/corpus" --golden "$W/golden" --report-dir "$W/rep-gate1" -q
expect 0 "$CHECK" "$SCHEMA" "$W/rep-gate1"
# --jobs 2 verifies scenarios on two threads: the same report, in corpus order, and the same exit
expect 0 "$DG" gate --corpus "$W/corpus" --golden "$W/golden" --jobs 2 --report-dir "$W/rep-gate1j" -q
expect 0 "$CHECK" "$SCHEMA" "$W/rep-gate1j"
same_report "$W/rep-gate1/report.json" "$W/rep-gate1j/report.json"
expect 0 "$DG" gate --corpus "$W/corpus" --golden "$W/golden" -j 0 -q
expect 2 "$DG" gate --jobs 33
contains "$W/err" "--jobs: expected 0 (one per CPU) or 1..32"
expect 2 "$DG" gate --jobs two
expect 0 "$DG" gate --corpus "$W/corpus" --golden "$W/golden" --shard 1/2 --text "$W/s1.txt" -q
contains "$W/s1.txt" "PASS a "
contains "$W/s1.txt" "PASS c "
grep -q "PASS b " "$W/s1.txt" && bad "shard 1/2 ran b" || ok
expect 0 "$DG" gate --corpus "$W/corpus" --golden "$W/golden" --shard 2/2 --text "$W/s2.txt" -q
contains "$W/s2.txt" "PASS b "
# a behaviour change: a different seed diverges from the golden; bless records the first changed tick
sed 's/seed=[^ ]*/seed=12345/' "$SRC/corpus/scenarios/mars.scn" >"$W/corpus/b.scn"
expect 1 "$DG" gate --corpus "$W/corpus" --golden "$W/golden" --scenario b --report-dir "$W/rep-gate2" -q
expect 0 "$CHECK" "$SCHEMA" "$W/rep-gate2"
contains "$W/rep-gate2/report.txt" "golden: first divergent tick"
# one scenario of three diverges: exit 1 and the same report with one worker or two
expect 1 "$DG" gate --corpus "$W/corpus" --golden "$W/golden" --jobs 1 --json "$W/div1.json" -q
expect 1 "$DG" gate --corpus "$W/corpus" --golden "$W/golden" --jobs 2 --json "$W/div2.json" -q
same_report "$W/div1.json" "$W/div2.json"
python3 -c 'import json,sys; print(" ".join(s["name"] for s in json.load(open(sys.argv[1]))["scenarios"]))' \
  "$W/div2.json" >"$W/order.txt"
contains "$W/order.txt" "^a b c$"
expect 0 "$DG" bless b --corpus "$W/corpus" --golden "$W/golden" --reason "new seed for b"
contains "$W/golden/BLESS.log" 'scenario=b first_changed_tick="0"'
expect 0 "$DG" gate --corpus "$W/corpus" --golden "$W/golden" --scenario b -q --text "$W/g3.txt"
expect 2 "$DG" gate --corpus "$W/corpus" --golden "$W/golden" --scenario nope
printf 'scenario broken\nsession tick_rate=banana\n' >"$W/corpus/d.scn"
expect 2 "$DG" gate --corpus "$W/corpus" --golden "$W/golden" --scenario d -q
contains "$W/err" "d.scn:2:"
# two that do not parse, on two workers: their messages come out whole and in corpus order
printf 'scenario broken\nsession tick_rate=banana\n' >"$W/corpus/e.scn"
expect 2 "$DG" gate --corpus "$W/corpus" --golden "$W/golden" --scenario e --scenario d --jobs 2 -q
grep -o '[de]\.scn:2:' "$W/err" | tr '\n' ' ' >"$W/errorder.txt"
contains "$W/errorder.txt" "^d.scn:2: e.scn:2: $"
rm -f "$W/corpus/e.scn"

# ---- an engine's state stream -----------------------------------------------------------------------------
{
  echo "tick,id,type,faction,px,py,pz,vx,vy,vz,qw,qx,qy,qz,health,flags"
  for t in $(seq 0 99); do
    for id in 1 2 3; do echo "$t,$id,0,0,$((id * 100 + t)),0,6371000,60,0,0,1,0,0,0,1,0"; done
  done
} >"$W/engine.csv"
expect 0 "$DG" verify --states "$W/engine.csv" --report-dir "$W/rep-states" -q
expect 0 "$CHECK" "$SCHEMA" "$W/rep-states"
printf 'tick,id,px,py,pz\n0,1,0,0,0\n0,1,1,1,1\n' >"$W/dup.csv"
expect 2 "$DG" verify --states "$W/dup.csv"
contains "$W/err" "dup.csv:3:"

# ---- an interrupted run leaves nothing half-written ------------------------------------------------------
mkdir -p "$W/tmp"
# interrupt SIGNAL SECONDS CMD... — runs CMD (temp files in $W/tmp) and sends it SIGNAL after SECONDS;
# its exit status lands in $rc
interrupt() {
  local sig=$1 after=$2
  shift 2
  TMPDIR="$W/tmp" "$@" >/dev/null 2>&1 &
  local pid=$!
  sleep "$after"
  kill "-$sig" "$pid"
  wait "$pid"
  rc=$?
}
interrupt INT 1 "$DG" record long-1h -o "$W/int.flrep"
[ "$rc" -ne 0 ] && ok || bad "interrupted record exited 0"
[ ! -e "$W/int.flrep" ] && ok || bad "an interrupted record left $W/int.flrep"
[ -z "$(ls "$W" | grep 'int.flrep')" ] && ok || bad "an interrupted record left $(ls "$W" | grep int.flrep)"
interrupt TERM 1 "$DG" verify long-1h -q
[ -z "$(ls "$W/tmp")" ] && ok || bad "an interrupted verify left $(ls "$W/tmp")"
# a gate on two workers, interrupted while both record: no temp file, no report (not even half of one)
interrupt TERM 1.5 "$DG" gate --jobs 2 --scenario long-1h --scenario stress-1000 --report-dir "$W/rep-int" -q
[ "$rc" -eq 143 ] && ok || bad "an interrupted gate exited $rc, expected 143 (SIGTERM)"
[ -z "$(ls "$W/tmp")" ] && ok || bad "an interrupted gate --jobs 2 left $(ls "$W/tmp")"
[ -z "$(ls "$W/rep-int" 2>/dev/null)" ] && ok || bad "an interrupted gate left reports: $(ls "$W/rep-int")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
