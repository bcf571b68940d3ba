#!/usr/bin/env bash
# tests/harness/diffs_test.sh — what a comparison names: `diff` of two recordings whose events differ
# names each differing event (kind, field, both values) in every report kind.
# `diff` and `gate` compare the header and tables as a check of their own (keyframe interval, a
# callsign, a type name, a faction row). The recovery check's cases each on their own line. Also: an error quoting the bytes of a binary file prints them escaped and cut short.
# usage: diffs_test.sh DETGATE SOURCE_DIR REPORT_CHECK
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
CHECK=$3
SCHEMA=$SRC/docs/report-schema.json
work_dir diffs

# states WEAPON CHAT [HEADER-JSON] — a 30-tick JSON Lines state stream, two entities; at tick 10 a
# kill (weapon index WEAPON) and a chat line CHAT
states() {
  local hdr=${3:-'"participants":[{"participant_id":101,"entity_id":1,"callsign":"Viper 1"}]'}
  printf '{"detgate_states":1,"scenario":"ev","types":[{"index":0,"id":"f16","name":"F-16C","category":1,"projectile":0}],"factions":[{"index":0,"id":"blue","name":"Blue"}],%s}\n' "$hdr"
  for t in $(seq 0 29); do
    local ev=""
    if [ "$t" -eq 10 ]; then
      ev=",\"events\":[{\"kind\":\"kill\",\"a\":1,\"b\":2,\"c\":$1},{\"kind\":\"chat\",\"a\":1,\"c\":0,\"text\":\"$2\"}]"
    fi
    printf '{"tick":%d,"entities":[{"id":1,"pos":[%d.5,0,0]},{"id":2,"pos":[6371100.5,0,0]}]%s}\n' "$t" $((6371000 + t)) "$ev"
  done
}

# ---- events: the differing event named, field by field -------------------------------------------
states 3 "hello world" >"$W/a.jsonl"
states 4 "hello worl" >"$W/b.jsonl"
expect 0 "$DG" record --states "$W/a.jsonl" -o "$W/a.flrep"
expect 0 "$DG" record --states "$W/b.jsonl" -o "$W/b.flrep"
expect 1 "$DG" diff "$W/a.flrep" "$W/b.flrep" --report-dir "$W/rep-ev"
for f in "$W/out" "$W/rep-ev/report.txt" "$W/rep-ev/report.md" "$W/rep-ev/report.html" "$W/rep-ev/report.xml"; do
  contains_text "$f" "event 0: kill: weapon (c) A 3, B 4"
  contains_text "$f" "event 1: chat: text A "
  contains_text "$f" "(11 bytes), B "
  contains_text "$f" "(10 bytes), first difference at byte 10"
done
lacks_text "$W/out" "events differ (2 vs 2)"
contains_text "$W/out" "first divergent tick 10: 2 events differ"
expect 0 "$CHECK" "$SCHEMA" "$W/rep-ev"
# jpath FILE EXPR — a Python expression over the parsed report (j), printed as compact JSON
jpath() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(json.dumps(eval(sys.argv[2]), separators=(",", ":")))' "$1" "$2"; }
ev=$(jpath "$W/rep-ev/report.json" '[(d["index"], d["a"]["kindName"], d["a"]["c"], d["b"]["c"], d["differ"]) for d in j["scenarios"][0]["checks"][0]["ticks"][0]["events"]["diffs"]][0]')
if [ "$ev" = '[0,"kill",3,4,["c"]]' ]; then ok; else bad "JSON event diff: $ev"; fi
ev=$(jpath "$W/rep-ev/report.json" '[(d["a"]["text"], d["b"]["text"], d["a"]["textBytes"], d["b"]["textBytes"], d["textDiffersAt"]) for d in j["scenarios"][0]["checks"][0]["ticks"][0]["events"]["diffs"]][1]')
if [ "$ev" = '["hello world","hello worl",11,10,10]' ]; then ok; else bad "JSON chat diff: $ev"; fi

# an extra event on one side: named as present on that side only
states 3 "hello world" | sed 's/"text":"hello world"}\]/"text":"hello world"},{"kind":"alert","c":0,"d":2}]/' >"$W/c.jsonl"
expect 0 "$DG" record --states "$W/c.jsonl" -o "$W/c.flrep"
expect 1 "$DG" diff "$W/a.flrep" "$W/c.flrep" --report-dir "$W/rep-extra"
contains_text "$W/out" "event 2: B only: alert {faction (c) 0, level (d) 2} (A has 2 events at this tick, B 3)"
expect 0 "$CHECK" "$SCHEMA" "$W/rep-extra"
ev=$(jpath "$W/rep-extra/report.json" '[(d["index"], d["a"], d["b"]["kindName"], d["differ"]) for d in j["scenarios"][0]["checks"][0]["ticks"][0]["events"]["diffs"]]')
if [ "$ev" = '[[2,null,"alert",[]]]' ]; then ok; else bad "JSON one-sided event: $ev"; fi

# ---- header and tables: a check of their own, each difference named with both values ---------------
expect 0 "$DG" record dogfight-40 -o "$W/k60.flrep" --keyframe-interval 60
expect 1 "$DG" diff "$SRC/corpus/golden/dogfight-40.flrep" "$W/k60.flrep" --json "$W/k60.json"
contains_text "$W/out" "FAIL k60"
contains_text "$W/out" "header: 1 header and table value differs: keyframe interval"
contains_text "$W/out" "keyframe interval: A 120, B 60"
hv=$(jpath "$W/k60.json" '[(c["name"], c["status"], c["values"]) for c in j["scenarios"][0]["checks"]]')
if [ "$hv" = '[["diff","pass",[]],["header","fail",[{"field":"keyframe interval","a":"120","b":"60"}]]]' ]; then ok; else bad "header check JSON: $hv"; fi
expect 0 "$CHECK" "$SCHEMA" "$W/rep-ev" # (a report without header differences still validates)
# the same recording again: the header check passes, start time and engine version only shown
expect 0 "$DG" record dogfight-40 -o "$W/k120.flrep"
expect 0 "$DG" diff "$SRC/corpus/golden/dogfight-40.flrep" "$W/k120.flrep" --json "$W/k120.json"
hv=$(jpath "$W/k120.json" '[c["status"] for c in j["scenarios"][0]["checks"]] + [d.split(" A ")[0] for d in j["scenarios"][0]["checks"][1]["details"]]')
if [ "$hv" = '["pass","pass","not compared: engine version","not compared: start time","not compared: format version"]' ]; then ok; else bad "header pass JSON: $hv"; fi
# gate against a golden folder whose recording was made with another keyframe interval
mkdir -p "$W/golden-k60"
cp "$W/k60.flrep" "$W/golden-k60/dogfight-40.flrep"
expect 1 "$DG" gate --scenario dogfight-40 --golden "$W/golden-k60" --json "$W/gate-k60.json"
hv=$(jpath "$W/gate-k60.json" '[(c["name"], c["status"]) for c in j["scenarios"][0]["checks"] if c["status"] != "pass"] + [c["values"] for c in j["scenarios"][0]["checks"] if c["name"] == "header"]')
if [ "$hv" = '[["header","fail"],[{"field":"keyframe interval","a":"60","b":"120"}]]' ]; then ok; else bad "gate header: $hv"; fi
# a roster callsign and a type name changed in a state stream
states 3 "hello world" '"participants":[{"participant_id":101,"entity_id":1,"callsign":"Viper 2"}]' >"$W/cs.jsonl"
expect 0 "$DG" record --states "$W/cs.jsonl" -o "$W/cs.flrep"
expect 1 "$DG" diff "$W/a.flrep" "$W/cs.flrep" --report-dir "$W/rep-cs"
contains_text "$W/out" 'participant[101].callsign: A "Viper 1", B "Viper 2"'
lacks_text "$W/out" "diff: first divergent tick"
for f in "$W/rep-cs/report.html" "$W/rep-cs/report.xml"; do contains_text "$f" "participant[101].callsign"; done
contains_text "$W/rep-cs/report.md" '| participant\[101\].callsign | "Viper 1" | "Viper 2" |'
expect 0 "$CHECK" "$SCHEMA" "$W/rep-cs"
sed '1s/"name":"F-16C"/"name":"F-16D"/' "$W/a.jsonl" >"$W/tn.jsonl"
expect 0 "$DG" record --states "$W/tn.jsonl" -o "$W/tn.flrep"
expect 1 "$DG" diff "$W/a.flrep" "$W/tn.flrep"
contains_text "$W/out" 'type[0].name: A "F-16C", B "F-16D"'
# Table rows are matched by index, the number a record refers to, not by their place in the table.
# A faction row present on one side only (a stream read once names every index 0..255 itself: the
# extra row is one above that, declared before the named ones, so by place every row after it shifts)
sed '1s/"factions":\[{"index":0,"id":"blue","name":"Blue"}\]/"factions":[{"index":0,"id":"blue","name":"Blue"},{"index":300,"id":"red","name":"Red"}]/' "$W/a.jsonl" >"$W/fx.jsonl"
expect 0 "$DG" record --states "$W/fx.jsonl" -o "$W/fx.flrep"
expect 1 "$DG" diff "$W/a.flrep" "$W/fx.flrep" --json "$W/fx.json"
contains_text "$W/out" "header: 2 header and table values differ: factions, faction[300]"
contains_text "$W/out" "factions: A 256, B 257"
contains_text "$W/out" 'faction[300]: A (none), B "red" "Red"'
lacks_text "$W/out" "faction[1]"
hv=$(jpath "$W/fx.json" '[c["values"] for c in j["scenarios"][0]["checks"] if c["name"] == "header"]')
if [ "$hv" = '[[{"field":"factions","a":"256","b":"257"},{"field":"faction[300]","a":null,"b":"\"red\" \"Red\""}]]' ]; then ok; else bad "faction row on one side, JSON: $hv"; fi
# types_recorded NAME TYPES-JSON — a.jsonl with its header's type table replaced, recorded to NAME.flrep
types_recorded() {
  python3 -c 'import json,sys; L=open(sys.argv[1]).read().split("\n",1); h=json.loads(L[0]); h["types"]=json.loads(sys.argv[2]); print(json.dumps(h)); sys.stdout.write(L[1])' "$W/a.jsonl" "$2" >"$W/$1.jsonl"
  expect 0 "$DG" record --states "$W/$1.jsonl" -o "$W/$1.flrep"
}
# two types declared in the other order: the same tables (each index means the same on both sides)
types_recorded t05 '[{"index":0,"id":"f16","name":"F-16C"},{"index":5,"id":"mig","name":"MiG-29"}]'
types_recorded t50 '[{"index":5,"id":"mig","name":"MiG-29"},{"index":0,"id":"f16","name":"F-16C"}]'
expect 0 "$DG" diff "$W/t05.flrep" "$W/t50.flrep"
lacks_text "$W/out" "type["
# a row above 255 declared under another index on each side: each side's row named, nothing shifted
types_recorded t300 '[{"index":300,"id":"x","name":"X"}]'
types_recorded t301 '[{"index":301,"id":"x","name":"X"}]'
expect 1 "$DG" diff "$W/t300.flrep" "$W/t301.flrep"
contains_text "$W/out" "header: 2 header and table values differ: type[300], type[301]"
contains_text "$W/out" 'type[300]: A "x" "X", B (none)'
contains_text "$W/out" 'type[301]: A (none), B "x" "X"'
lacks_text "$W/out" ".index"

# RPLY: the header's tick rate (byte 5) changed, the op stream the same
python3 - "$SRC/corpus/golden/walkers-20.rply" "$W/w30.rply" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[5] = 30 if b[5] != 30 else 31
open(sys.argv[2], "wb").write(b)
PY
expect 1 "$DG" diff "$SRC/corpus/golden/walkers-20.rply" "$W/w30.rply"
contains_text "$W/out" "header: 1 header value differs: tick rate"
contains_text "$W/out" "tick rate: A 15, B 30"

# ---- the recovery check: one line per case, nothing confusing when it holds ---------------------------
expect 0 "$DG" verify --states "$W/a.jsonl" --json "$W/rec.json"
lacks_text "$W/out" "recovery"
rv=$(jpath "$W/rec.json" '[(c["message"], [d.split(":")[0].split(" (")[0] for d in c["details"]]) for c in j["scenarios"][0]["checks"] if c["name"] == "recovery"]')
if [ "$rv" = '[["trailer cut off: every complete chunk recovered and played back identically",["trailer cut off","last chunk cut short"]]]' ]; then ok; else bad "recovery texts: $rv"; fi
lacks_text "$W/rec.json" "no second chunk to cut"
contains_text "$W/rec.json" "last chunk cut short: not run: the recording has one chunk"

# ---- an error never prints raw binary ---------------------------------------------------------------
# clean FILE — FILE is well-formed UTF-8 with no control character but newline, and under 400 bytes
clean() {
  python3 - "$1" <<'PY' && ok || bad "$1 is not one short line of clean text: $(head -c 400 "$1" | od -c | head -5)"
import sys
b = open(sys.argv[1], "rb").read()
t = b.decode("utf-8")  # raises on ill-formed UTF-8
bad = [c for c in t if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f]
sys.exit(1 if bad or len(b) >= 400 or not b else 0)
PY
}
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 16)' >"$W/every-byte.bin"
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(255, -1, -1)) * 16)' >"$W/every-byte-down.bin"
python3 -c 'import sys; sys.stdout.buffer.write(b"tick,id,px,py,pz\n0,1," + bytes(range(128, 256)) + b",0,0\n")' >"$W/bad-cell.csv"
python3 -c 'import sys; sys.stdout.buffer.write(b"{\"tick\":0,\"entities\":[" + bytes(range(1, 32)) + b"]}\n")' >"$W/bad-token.jsonl"
head -c 4096 /dev/urandom >"$W/random.bin"
for f in every-byte.bin every-byte-down.bin bad-cell.csv bad-token.jsonl random.bin; do
  expect 2 "$DG" record --states "$W/$f" -o "$W/never.flrep"
  clean "$W/err"
done
contains_text "$W/err" "random.bin"

echo "diffs_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
