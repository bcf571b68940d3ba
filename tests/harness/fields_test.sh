#!/usr/bin/env bash
# tests/harness/fields_test.sh — declared entity fields end to end (issue 14): a stream with an
# angular velocity at its own quantum, a u64 RNG state and a bool, from the test engine
# (tests/engine/) in CSV, JSON Lines and binary version 2, and the same fields declared in the project
# file: the same recording from each, an exact round trip, a change in each field caught at its tick
# and named with its field, unit and both values in every report format (gate against goldens,
# diff of two recordings and of two hash logs, verify --repeat), hostile declarations refused with
# file:line (byte offset) and the rule; binary version 2's events and tables (issue 13).
# usage: fields_test.sh DETGATE SOURCE_DIR TEST_ENGINE REPORT_FILES_CHECK
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
ENGINE=$3
CHECK=$4
work_dir fields
private_tmp
same() { if cmp -s "$1" "$2"; then ok; else bad "$1 and $2 differ: $(cmp "$1" "$2" 2>&1)"; fi; }
no_temp() { if [ -z "$(ls -A "$TMPDIR")" ]; then ok; else bad "files left behind ($1): $(ls -A "$TMPDIR")"; fi; }
cd "$W" || exit 1

# ---- one body set, four ways of declaring it: the same recording -----------------------------------
for f in csv jsonl bin2; do
  printf 'bodies 3\nticks 90\nat 30\nfields 1\nformat %s\n' "$f" >"$W/f_$f.scn"
  "$ENGINE" "$W/f_$f.scn" >"$W/f_$f.stream"
  expect 0 "$DG" record --states "$W/f_$f.stream" -o "$W/f_$f.flrep"
done
same "$W/f_csv.flrep" "$W/f_jsonl.flrep"
# binary version 2 declares its type table (type 0 only) where a text stream read once names 0..255:
# the ticks are the same
ticks_of() { "$DG" dump --json "$1" | grep '^{"type":"tick"' >"$2"; }
ticks_of "$W/f_csv.flrep" "$W/f_csv.ticks"
ticks_of "$W/f_bin2.flrep" "$W/f_bin2.ticks"
if [ -s "$W/f_csv.ticks" ]; then same "$W/f_csv.ticks" "$W/f_bin2.ticks"; else bad "no tick dumped from f_csv.flrep"; fi
# binary version 2 with its entities written in reverse id order: the reader sorts the tick (and the
# declared fields and raw floats with it) and records, hashes and raw-hashes it as in order
mkdir -p "$W/rev"
python3 - "$W/f_bin2.stream" "$W/rev/f_bin2.stream" <<'PY'
import sys, struct
d = open(sys.argv[1], 'rb').read()
at = 16 + struct.unpack_from('<I', d, 12)[0]
out = bytearray(d[:at])
while d[at] == 1:  # kind 1, tick u64, entities u32, events u32 (none with fields), 98 + 3 * 8 bytes each
    n, nev = struct.unpack_from('<II', d, at + 9)
    assert nev == 0
    ents = [d[at + 17 + 122 * i:at + 17 + 122 * (i + 1)] for i in range(n)]
    out += d[at:at + 17] + b''.join(reversed(ents))
    at += 17 + 122 * n
out += d[at:]
open(sys.argv[2], 'wb').write(out)
PY
expect 0 "$DG" record --states "$W/f_bin2.stream" -o "$W/f_bin2.flrep" --hash-log "$W/f_bin2.log" --log-entities --log-raw
expect 0 "$DG" record --states "$W/rev/f_bin2.stream" -o "$W/rev/f_bin2.flrep" --hash-log "$W/rev/f_bin2.log" \
  --log-entities --log-raw
same "$W/f_bin2.flrep" "$W/rev/f_bin2.flrep"
same "$W/f_bin2.log" "$W/rev/f_bin2.log"
expect 0 "$DG" info "$W/f_csv.flrep"
contains "$W/out" "format:             .flrep 2.0"
contains "$W/out" "standard fields pos, vel, rot; position quantum 0.001 m; velocity quantum 0.001 m/s"
contains "$W/out" "field angvel               float, quantum 0.000244140625, unit rad/s"
contains "$W/out" "field rng                  uint, 64 bits"
contains "$W/out" "field awake                bool"
lacks "$W/out" "planet radius" # a 2D-ish engine without a planet: none shown
lacks "$W/out" "tables:.*faction"
# the project file declares the fields; the CSV carries only the columns (no #! lines)
P=$W/proj
mkdir -p "$P/scenarios"
cat >"$P/detgate.ini" <<EOF
[project]
scenarios = scenarios
[engine]
run = "$ENGINE" {scenario}
[schema]
standard = pos, vel, rot
position_quantum = 0.001
velocity_quantum = 0.001
[field angvel]
type = float
unit = rad/s
quantum = 0.000244140625
[field rng]
type = uint
bits = 64
[field awake]
type = bool
EOF
grep -v '^#!' "$W/f_csv.stream" >"$W/bare.csv"
expect 0 "$DG" record --project "$P/detgate.ini" --states "$W/bare.csv" -o "$W/f_proj.flrep"
same "$W/f_csv.flrep" "$W/f_proj.flrep"
# ... and agrees with a stream that declares the same
expect 0 "$DG" record --project "$P/detgate.ini" --states "$W/f_jsonl.stream" -o "$W/f_proj2.flrep"
same "$W/f_csv.flrep" "$W/f_proj2.flrep"
# without the project file the bare CSV's extra columns are refused, not dropped
expect 2 "$DG" record --states "$W/bare.csv" -o "$W/x.flrep"
contains "$W/err" 'expected a column name (tick,id,type,faction,px,py,pz'

# ---- round trip exact: every value read back as written -------------------------------------------
expect 0 "$DG" verify --states "$W/f_csv.stream" -q
expect 0 "$DG" dump --json "$W/f_csv.flrep"
contains "$W/out" '"type":"schema","standard":\["pos","vel","rot"\]'
contains "$W/out" '"tickRateHz":60,"planetRadiusM":null,'

# body 1 at tick 0: angvel -0.25 rad/s = -1024 quanta; rng the seed 0x9E3779B97F4A7C15 (above 2^63);
# awake true (the test engine's extras_of)
contains "$W/out" '{"type":"tick","tick":0,"keyframe":true,"entities":\[{"id":1,"pos":\[0,10000,0\],"vel":\[1000,0,0\],"rot":\[0,0,0\],"rotLargest":0,"angvel":0,"rng":11400714819323198485,"awake":1}'
lacks "$W/out" '"health"'

# ---- a change in each field, caught at its tick and named in every report --------------------------
for m in angvel rng awake; do
  DG_TEST_ENGINE_MODE=change-$m "$ENGINE" "$W/f_csv.scn" >"$W/c_$m.csv"
  expect 0 "$DG" record --states "$W/c_$m.csv" -o "$W/c_$m.flrep"
  expect 1 "$DG" diff "$W/f_csv.flrep" "$W/c_$m.flrep" --report-dir "$W/rep_$m"
  contains "$W/out" "first divergent tick 30: 1 entity changed"
  "$CHECK" "$SRC/docs/report-schema.json" "$W/rep_$m" >"$W/chk" 2>&1 && ok || bad "report files: $(cat "$W/chk")"
done
# body 1's values at tick 30 (tests/engine/test_engine.c extras_of): angvel (30 % 8) * 0.125 = 0.75
# rad/s, one quantum more in change-angvel; rng the seed after 30 xorshift64 steps, its low bit
# flipped in change-rng; awake (30 / 10) % 2 == 0: false
read -r RNG_A RNG_B < <(python3 -c '
x = 0x9E3779B97F4A7C15
for _ in range(30):
    x ^= (x << 13) & (2**64 - 1); x ^= x >> 7; x ^= (x << 17) & (2**64 - 1)
print(x, x ^ 1)')
# text (stdout and report.txt), JSON, JUnit, Markdown, HTML: field, unit, both values
for r in report.txt report.md report.html report.json report.xml; do
  contains "$W/rep_angvel/$r" "angvel"
  contains "$W/rep_angvel/$r" "0.75 rad/s"
  contains "$W/rep_angvel/$r" "0.750244140625 rad/s"
  contains "$W/rep_rng/$r" "rng"
  contains "$W/rep_rng/$r" "$RNG_A"
  contains "$W/rep_rng/$r" "$RNG_B"
  contains "$W/rep_awake/$r" "awake"
  contains "$W/rep_awake/$r" "false"
done
contains "$W/rep_angvel/report.json" '"field": "angvel",'
contains "$W/rep_angvel/report.json" '"unit": "rad/s",'
contains "$W/rep_angvel/report.json" '"aText": "0.75 rad/s",'
contains "$W/rep_angvel/report.json" '"firstDivergentTick": 30'
contains "$W/rep_awake/report.json" '"aText": "false",'
contains "$W/rep_awake/report.json" '"bText": "true"'
contains "$W/rep_rng/report.json" "\"deltaQ\": $([ $((RNG_A & 1)) -eq 1 ] && echo -1 || echo 1),"

# hash logs: the tick and the entity of the change
expect 0 "$DG" record --states "$W/f_csv.stream" -o "$W/a.flrep" --hash-log "$W/a.log" --log-entities
expect 0 "$DG" record --states "$W/c_rng.csv" -o "$W/b.flrep" --hash-log "$W/b.log" --log-entities
expect 1 "$DG" diff "$W/a.log" "$W/b.log"
contains "$W/out" "first divergent tick 30: state differs"

# ---- gate against goldens, and verify --repeat, through the project's process engine ---------------
printf 'bodies 3\nticks 90\nat 30\nformat csv\n' >"$P/scenarios/rows.scn"
printf 'bodies 2\nticks 60\nat 20\nformat jsonl\n' >"$P/scenarios/lines.scn"
printf 'bodies 2\nticks 60\nat 25\nformat bin2\nfields 1\n' >"$P/scenarios/packed.scn"
cd "$P" || exit 1
export DG_TEST_ENGINE_FIELDS=1 # the csv and jsonl scenarios emit the fields too (in-stream they agree)
expect 0 "$DG" bless --all --reason "first goldens with declared fields"
expect 0 "$DG" gate -q --report-dir "$W/gate_ok"
for m in angvel rng awake; do
  DG_TEST_ENGINE_MODE=change-$m expect 1 "$DG" gate -q --report-dir "$W/gate_$m"
  contains "$W/gate_$m/report.txt" "$m"
  contains "$W/gate_$m/report.json" "\"field\": \"$m\","
  contains "$W/gate_$m/report.xml" "$m"
done
contains "$W/gate_angvel/report.md" "0.750244140625 rad/s"
contains "$W/gate_angvel/report.json" '"firstDivergentTick": 20'
# detgate merge keeps a declared field's values (report schema 3)
DG_TEST_ENGINE_MODE=change-angvel expect 1 "$DG" gate -q --shard 1/1 --report-dir "$W/shard"
expect 1 "$DG" merge "$W/shard/report.json" --report-dir "$W/merged"
contains "$W/merged/report.json" '"aText": "0.75 rad/s",'
contains "$W/merged/report.json" '"schemaVersion": 3'
contains "$W/merged/report.txt" "0.750244140625 rad/s"
# a drift of a declared float below its quantum: the raw float hash sees it (WARN by default, FAIL
# under --raw fail), the quantized state does not
DG_TEST_ENGINE_MODE=drift-angvel expect 0 "$DG" gate -q --scenario rows --report-dir "$W/gate_drift"
contains "$W/gate_drift/report.json" '"status": "warn"'
DG_TEST_ENGINE_MODE=drift-angvel expect 1 "$DG" gate -q --scenario rows --raw fail
# the WARN names the raw floats the golden's per-tick raw hash covers, the declared float included;
# against a golden log with each entity's raw floats (version 3), the entity, angvel and both values
contains "$W/gate_drift/report.json" "sub-quantum drift; hashed raw floats pos.x,pos.y,pos.z,vel.x,vel.y,vel.z,rot.w,rot.x,rot.y,rot.z,health,angvel)"
cp -r golden "$W/golden3"
expect 0 "$DG" record rows -o "$W/golden3/rows.flrep" --hash-log "$W/golden3/rows.hashlog.zst" --log-raw
DG_TEST_ENGINE_MODE=drift-angvel expect 0 "$DG" gate -q --scenario rows --golden "$W/golden3" --report-dir "$W/gate_drift3"
for f in txt json md html; do
  contains "$W/gate_drift3/report.$f" "raw floats differ from tick 30, first in entity 1, angvel: raw A 0.75, B 0.750030517578125"
done
# a stream declaring other fields than the project's: exit 2 naming both places (from a process
# engine it is a malformed stream: 125, with the same words)
DG_TEST_ENGINE_FIELDS=0 expect 125 "$DG" gate -q --scenario packed
contains "$W/err" "(stdout) at byte 24: syntax error: the stream's declared fields disagree with the project file's (.*detgate.ini:6)"
contains "$W/err" "standard fields type,faction,pos,vel,rot,health,flags against pos,vel,rot"
printf 'bodies 2\nticks 10\nformat bin2\n' >"$W/legacy2.scn"
DG_TEST_ENGINE_FIELDS=0 "$ENGINE" "$W/legacy2.scn" >"$W/legacy2.bin"
expect 2 "$DG" record --project "$P/detgate.ini" --states "$W/legacy2.bin" -o "$W/x.flrep"
contains "$W/err" "legacy2.bin at byte 24: syntax error: the stream's declared fields disagree with the project file's (.*detgate.ini:6): standard fields type,faction"
# verify --repeat: a run that records another rng state than the first is named by field
expect 0 "$DG" verify --repeat 3 rows -q
DG_TEST_ENGINE_MODE=nondet-rng expect 1 "$DG" verify --repeat 2 rows --report-dir "$W/repeat"
contains "$W/repeat/report.txt" "rng"
contains "$W/repeat/report.json" '"field": "rng",'
unset DG_TEST_ENGINE_FIELDS
cd "$W" || exit 1
no_temp "gate and repeat"

# two recordings of other schemas: the header check names the difference, positions are compared in
# metres at each side's own quanta (1/64 m against 1 mm: body 1 at y = 10 m is 640 and 10000 quanta)
printf 'bodies 3\nticks 90\nformat csv\n' >"$W/plain.scn"
"$ENGINE" "$W/plain.scn" >"$W/plain.csv"
expect 0 "$DG" record --states "$W/plain.csv" -o "$W/plain.flrep"
expect 1 "$DG" diff "$W/plain.flrep" "$W/f_csv.flrep" --report-dir "$W/rep_schemas"
contains "$W/rep_schemas/report.json" '{"field": "pos.y", "unit": "m", "aQ": 640, "bQ": 10000, "deltaQ": 9360, "a": 10, "b": 10, "delta": 0}'
contains "$W/rep_schemas/report.txt" "standard fields"
contains "$W/rep_schemas/report.txt" "field\[0\]"

# an enum shown by its value names, bytes in hex (first byte first), a position-only schema
Q=$W/enum
mkdir -p "$Q/s"
printf '[project]\nscenarios = s\n[engine]\nrun = cat {scenario}\n[schema]\nstandard = pos\n[field body]\ntype = enum\nvalues = static, kinematic, dynamic\n[field tag]\ntype = bytes\nlength = 2\n' >"$Q/detgate.ini"
printf 'tick,id,px,py,pz,body,tag\n0,1,1,2,3,dynamic,0x0a0b\n1,1,1,2,3,kinematic,0x0a0c\n' >"$Q/s/one.csv"
printf 'tick,id,px,py,pz,body,tag\n0,1,1,2,3,dynamic,0x0a0b\n1,1,1,2,3,static,0x0a0d\n' >"$Q/s/two.csv"
expect 0 "$DG" record --project "$Q/detgate.ini" one -o "$W/one.flrep"
expect 0 "$DG" record --project "$Q/detgate.ini" two -o "$W/two.flrep"
expect 1 "$DG" diff "$W/one.flrep" "$W/two.flrep" --report-dir "$W/rep_enum"
contains "$W/out" "1      changed body  kinematic static"
contains "$W/out" "changed tag      0x0a0c 0x0a0d     -      3082 -> 3338 (+256 q)" # 0x0c0a -> 0x0d0a: byte 0 low
contains "$W/rep_enum/report.json" '"field": "body", "unit": "", "aQ": 1, "bQ": 0, "deltaQ": -1, "a": null, "b": null, "delta": 0, "aText": "kinematic", "bText": "static"'
contains "$W/rep_enum/report.md" "0x0a0c"
printf 'tick,id,px,py,pz,body,tag\n0,1,1,2,3,dynamo,0x0a0b\n' >"$Q/bad.csv"
expect 2 "$DG" record --project "$Q/detgate.ini" --states "$Q/bad.csv" -o "$W/bad.flrep"
contains "$W/err" 'field "body": "dynamo" is not one of its values (did you mean "dynamic"?)'
printf 'tick,id,px,py,pz,body,tag\n0,1,1,2,3,dynamic,0x0a0b0c\n' >"$Q/bad.csv"
expect 2 "$DG" record --project "$Q/detgate.ini" --states "$Q/bad.csv" -o "$W/bad.flrep"
contains "$W/err" 'field "tag": expected 0x and 4 hex digits (2 bytes, first byte first), found "0x0a0b0c"'

# RPLY cannot carry a declared schema: said, not dropped
expect 2 "$DG" record --format rply --states "$W/f_csv.stream" -o "$W/f.rply"
contains "$W/err" "that an RPLY recording cannot carry: record it as flrep"
if [ -e "$W/f.rply" ]; then bad "f.rply written"; else ok; fi
# a version 1 binary stream cannot carry the project's fields
printf 'bodies 2\nticks 5\nformat bin\n' >"$W/v1.scn"
"$ENGINE" "$W/v1.scn" >"$W/v1.bin"
expect 2 "$DG" record --project "$P/detgate.ini" --states "$W/v1.bin" -o "$W/x.flrep"
contains "$W/err" "the project file declares fields (.*detgate.ini:6) that this stream cannot carry (a binary stream of version 1: write version 2)"

# ---- binary version 2 without fields: events and tables, format 1.0 --------------------------------
printf 'bodies 3\nticks 50\nformat bin2\n' >"$W/legacy.scn"
"$ENGINE" "$W/legacy.scn" >"$W/legacy.bin"
expect 0 "$DG" record --states "$W/legacy.bin" -o "$W/legacy.flrep"
expect 0 "$DG" info "$W/legacy.flrep"
contains "$W/out" "format:             .flrep 1.0"
contains "$W/out" "tables:             1 type, 256 factions"
expect 0 "$DG" dump --json "$W/legacy.flrep"
contains "$W/out" '"types":\[{"index":0,"id":"ball","name":"Ball","category":4,"projectileKind":0}\]'
contains "$W/out" '"events":\[{"kind":2,"tick":0,"a":1,"b":0,"c":0,"d":0,"text":""},{"kind":2,"tick":0,"a":2'
expect 0 "$DG" verify --states "$W/legacy.bin" -q

# ---- hostile declarations: exit 2, where, the rule ----------------------------------------------
csv_bad() { # SED-EXPR EXPECTED...
  sed "$1" "$W/f_csv.stream" >"$W/bad.csv"
  shift
  expect 2 "$DG" record --states "$W/bad.csv" -o "$W/bad.flrep"
  for m in "$@"; do contains "$W/err" "$m"; done
  if [ -e "$W/bad.flrep" ]; then bad "bad.flrep written"; else ok; fi
}
csv_bad 's/quantum=0.000244140625/quantun=0.000244140625/' 'bad.csv:2:' 'unknown key "quantun" (did you mean "quantum"?)'
csv_bad 's/type=float/type=flaot/' 'bad.csv:2:' 'type "flaot" (did you mean "float"?)'
csv_bad 's/,awake$/,awak/' 'bad.csv:5:' 'found "awak" (did you mean the declared field "awake"?)'
csv_bad 's/standard=pos,vel,rot/standard=pos,vel,rots/' 'bad.csv:1:' 'unknown standard field "rots" (did you mean "rot"?)'
csv_bad 's/ unit=rad\/s quantum=0.000244140625//' 'bad.csv:2:' 'a float needs quantum'
# a unit that is not UTF-8 (an encoded surrogate, an overlong '/'): refused where it stands, by base/'s decoder
csv_bad 's/unit=rad\/s/unit=rad\xed\xa0\x80/' 'bad.csv:2:' 'unit "rad\\xed\\xa0\\x80": expected at most 15 bytes of UTF-8 text'
csv_bad 's/unit=rad\/s/unit=rad\xe0\x80\xaf/' 'bad.csv:2:' 'expected at most 15 bytes of UTF-8 text'
csv_bad 's/^tick,id,/tick,id,health,/; s/^\([0-9]*\),\([0-9]*\),/\1,\2,1,/' 'bad.csv:5:' 'health is not a standard field of the declared schema'
csv_bad 's/#! field rng type=uint bits=64/#! field rng type=uint bits=65/' 'bits: expected 1..64, found "65"'
csv_bad 's/#! field awake type=bool/#! field pos type=bool/' 'is a standard field'"'"'s name'
csv_bad 's/#! field awake type=bool/#! field angvel type=bool/' 'field "angvel" is declared twice (first at '
csv_bad '6s/,true$/,maybe/' 'bad.csv:6:' 'expected true, false, 1 or 0, found "maybe"'
csv_bad '6s/,[0-9]*,true$/,-1,true/' 'bad.csv:6:' 'expected an unsigned integer of 64 bits'
csv_bad 's/#! field awake type=bool/#! field Awake type=bool/' 'field name "Awake": expected \[a-z\]\[a-z0-9_.\]\*'
csv_bad 's/#! field awake type=bool/#! field awake type=bool quantum=1/' 'quantum is for a float, not a bool'
csv_bad 's/#! field awake type=bool/#! fields awake type=bool/' 'expected "#! schema KEY=VALUE ..." or "#! field NAME'
long=$(head -c 70 /dev/zero | tr '\0' a)
csv_bad "s/#! field awake type=bool/#! field $long type=bool/" 'at most 63 bytes'
json_bad() { # SED-EXPR EXPECTED...
  sed "$1" "$W/f_jsonl.stream" >"$W/bad.jsonl"
  shift
  expect 2 "$DG" record --states "$W/bad.jsonl" -o "$W/bad.flrep"
  for m in "$@"; do contains "$W/err" "$m"; done
}
json_bad '1s/"quantum":0.000244140625/"quantun":0.000244140625/' 'bad.jsonl:1:1:' 'unknown member "quantun" (did you mean "quantum"?)'
json_bad '1s/"type":"bool"/"type":"boolean"/' 'bad.jsonl:1:1:' 'type "boolean"'
json_bad '2s/"awake":true/"awak":true/' 'bad.jsonl:2:1:' 'unknown member "awak" (did you mean "awake"?)'
json_bad '2s/,"awake":true//' 'bad.jsonl:2:1:' 'the declared field "awake" is required'
json_bad '2s/"angvel":[-0-9.e]*/"angvel":"fast"/' 'bad.jsonl:2:1:' 'field "angvel": expected a number, found "fast"'
json_bad '1s/"standard":\["pos","vel","rot"\]/"standard":["pos","rot"]/' 'bad.jsonl:1: syntax error: velocity_quantum is given but vel is not a standard field'
json_bad '1s/"standard":\["pos","vel","rot"\]/"standard":["pos","rot"]/; 1s/,"velocity_quantum":0.001//' 'bad.jsonl:2:1:' 'member "vel": vel is not a standard field of the declared schema'
# binary: a header block that lies about its length, a bad type, too many fields
printf '\x89DGS\x02\x00\x00\x00\x3c\x00\x00\x00\xff\xff\xff\x7f' >"$W/b1.bin"
expect 2 "$DG" record --states "$W/b1.bin" -o "$W/bad.flrep"
contains "$W/err" "at byte 12: malformed input: binary state stream: header block length 2147483647: expected at most 1048576"
python3 - "$W/f_bin2.stream" "$W" <<'PY'
import sys, struct
data = open(sys.argv[1], 'rb').read()
out = sys.argv[2]
# the block starts at byte 16; the first field's type byte is at 16 + 8 + 1 + 8 + 8 + 1 = 42
b = bytearray(data); b[42] = 9
open(out + '/b2.bin', 'wb').write(b)
b = bytearray(data); b[41] = 33          # fieldCount
open(out + '/b3.bin', 'wb').write(b)
b = bytearray(data); b[16 + 8] |= 0x80   # stdMask's reserved bit
open(out + '/b4.bin', 'wb').write(b)
open(out + '/b5.bin', 'wb').write(data[:30])  # cut inside the header block
PY
expect 2 "$DG" record --states "$W/b2.bin" -o "$W/bad.flrep"
contains "$W/err" "at byte 42: malformed input: binary state stream: the header block: field \"angvel\": type 9: expected 1..6"
expect 2 "$DG" record --states "$W/b3.bin" -o "$W/bad.flrep"
contains "$W/err" "fieldCount 33: expected at most 32"
expect 2 "$DG" record --states "$W/b4.bin" -o "$W/bad.flrep"
contains "$W/err" "at byte 24: .*stdMask: bit 7 is reserved"
expect 2 "$DG" record --states "$W/b5.bin" -o "$W/bad.flrep"
contains "$W/err" "at byte 16: malformed input: binary state stream: the header block: expected"
# a project file's bad declaration: file:line and the rule
printf '[project]\nscenarios = s\n[engine]\nrun = x {scenario}\n[schema]\nstandrd = pos\n' >"$P/bad.ini"
expect 2 "$DG" gate --project "$P/bad.ini"
contains "$W/err" 'bad.ini:6: syntax error: unknown schema key "standrd" (did you mean "standard"?)'
printf '[project]\nscenarios = s\n[engine]\nrun = x {scenario}\n[field spin]\ntype = float\nunit = rad/s\n' >"$P/bad.ini"
expect 2 "$DG" gate --project "$P/bad.ini"
contains "$W/err" 'bad.ini:6: syntax error: field "spin": a float needs quantum'
printf '[project]\nscenarios = s\n[engine]\nrun = x {scenario}\n[field kind]\ntype = enum\nvalues = a, b, a\n' >"$P/bad.ini"
expect 2 "$DG" gate --project "$P/bad.ini"
contains "$W/err" 'bad.ini:7: syntax error: field "kind": values: "a" is listed twice'
printf '[project]\n[schema]\nstandard = pos\n' >"$P/bad.ini"
expect 2 "$DG" gate --project "$P/bad.ini"
contains "$W/err" 'whose fields are fixed'
no_temp "hostile declarations"

# ---- the detail pass quantizes the re-derived record side in batches: the quanta one by one gives ---
# 40 bodies under pos,vel,rot at 1 mm (the schema the AVX2 batch takes, eight at a time); under
# DETGATE_CPU=portable every entity goes one by one. Both reports, every aQ of the entity tables
# included, are the same but for the clock.
printf 'bodies 40\nticks 60\nat 30\nfields 1\nformat jsonl\n' >"$W/q.scn"
"$ENGINE" "$W/q.scn" >"$W/q.jsonl"
expect 1 "$DG" verify --states "$W/q.jsonl" --replay-fault double-delta:20 --json "$W/q-auto.json" -q
DETGATE_CPU=portable expect 1 "$DG" verify --states "$W/q.jsonl" --replay-fault double-delta:20 \
  --json "$W/q-port.json" -q
python3 - "$W/q-auto.json" "$W/q-port.json" <<'PY' && ok || bad "batch and one-by-one detail passes differ"
import json, sys
def load(f):
    def strip(o):
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items() if "uration" not in k and k != "startedUnix"}
        return [strip(x) for x in o] if isinstance(o, list) else o
    return strip(json.load(open(f)))
a, b = load(sys.argv[1]), load(sys.argv[2])
ticks = [c for c in a["scenarios"][0]["checks"] if c["name"] == "record-vs-replay"][0]["ticks"]
quanta = [f["aQ"] for t in ticks for e in t["entities"] for f in e["fields"]]
sys.exit(0 if a == b and len(quanta) > 40 else 1)
PY
# The record side checks a declared schema's values a tick at a time, in batches: a refused value is
# still named at its own row, the first in the order the rows came (the tick here in reverse id
# order, a second refused row after it), and before a later row's syntax error in the same tick.
printf 'bodies 40\nticks 60\nat 30\nfields 1\nformat csv\n' >"$W/qc.scn"
"$ENGINE" "$W/qc.scn" >"$W/qc.csv"
python3 - "$W/q.jsonl" "$W/qc.csv" "$W" <<'PY'
import json, sys
L = open(sys.argv[1]).read().splitlines()
t = json.loads(L[6]); t["entities"].reverse(); t["entities"][2]["pos"][0] = 1e7; t["entities"][30]["vel"][2] = -3e7
L[6] = json.dumps(t); open(sys.argv[3] + "/qbad.jsonl", "w").write("\n".join(L) + "\n")
C = open(sys.argv[2]).read().splitlines()
at = [i for i, l in enumerate(C) if l.startswith("5,")]
rows = [C[i].split(",") for i in at][::-1]
rows[2][2] = "1e7"; rows[30][7] = "-3e7"
for i, r in zip(at, rows): C[i] = ",".join(r)
open(sys.argv[3] + "/qbad.csv", "w").write("\n".join(C) + "\n")
rows[35][3] = "abc"; C[at[35]] = ",".join(rows[35])
open(sys.argv[3] + "/qbad2.csv", "w").write("\n".join(C) + "\n")
PY
expect 2 "$DG" record --states "$W/qbad.jsonl" -o "$W/qbad.flrep"
contains "$W/err" 'qbad.jsonl:7:1: value out of range: tick 5, entity 38 (entities\[2\]): pos\[0\] = 1e+07: expected finite'
for f in qbad qbad2; do
  expect 2 "$DG" record --states "$W/$f.csv" -o "$W/qbad.flrep"
  contains "$W/err" "$f.csv:208:1: value out of range: tick 5, entity 38: pos\[0\] = 1e+07: expected finite"
done
if [ -e "$W/qbad.flrep" ]; then bad "a refused stream left qbad.flrep"; else ok; fi

echo "fields_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
