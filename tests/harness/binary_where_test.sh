#!/usr/bin/env bash
# tests/harness/binary_where_test.sh — what the quantizer and the writer refuse while recording says
# where, as a parse error does: a binary stream's label, the tick and its record's byte offset (and the
# entity's own offset when the tick came in id order), a text stream's FILE:LINE. NaN in versions 1
# and 2, a tick of 65,536 entities, a JSON Lines event the writer refuses; from a file and standard
# input (exit 2) and a process engine (exit 125, docs/CLI.md). (Before: `entity 1: value out of range:
# pos[0] = nan ...` and `writer: value out of range: tick 0 ...`, no file, offset or line.)
# usage: binary_where_test.sh DETGATE
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains_text
DG=$1
work_dir binwhere
# the streams (docs/STATES-STREAM.md): v1 header 12 bytes, tick record 13 + 98 per entity; v2 header
# 16 + a 32-byte block (no field, no table), tick record 17 + 98 per entity (+ events, none here)
python3 - "$W" <<'PY'
import struct, sys
w = sys.argv[1]
def ent(i, px=0.0):
    return struct.pack('<IHHH', i, 0, 0, 0) + struct.pack('<11d', px, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0)
def tick(v, t, ids, nan_id=0):
    head = struct.pack('<QI', t, len(ids)) + (struct.pack('<I', 0) if v == 2 else b'')
    return b'\x01' + head + b''.join(ent(i, float('nan') if i == nan_id else 0.0) for i in ids)
hdr = {1: b'\x89DGS' + struct.pack('<HHI', 1, 0, 60),
       2: b'\x89DGS' + struct.pack('<HHII', 2, 0, 60, 32) + struct.pack('<dBdd', 0, 0x7f, 1 / 64, 1 / 32)
          + b'\x00' + struct.pack('<HHH', 0, 0, 0)}
def write(name, body):
    open(f'{w}/{name}', 'wb').write(body + b'\x00')
for v in (1, 2):
    write(f'nan{v}.bin', hdr[v] + tick(v, 0, [1, 2, 3]) + tick(v, 1, [1, 2, 3], nan_id=3))
    write(f'nan{v}u.bin', hdr[v] + tick(v, 0, [1, 2, 3]) + tick(v, 1, [3, 1, 2], nan_id=3)) # not in id order
write('many.bin', hdr[1] + tick(1, 0, list(range(1, 65537))))
# the offsets the messages must name: tick 1's record, and entity 3 (the third) in it
with open(f'{w}/offsets', 'w') as f:
    for v, th in ((1, 13), (2, 17)):
        rec = len(hdr[v]) + th + 3 * 98
        print(f'rec{v}={rec} ent{v}={rec + th + 2 * 98}', file=f)
PY
. "$W/offsets"
mkdir -p "$W/p/s"
printf '[project]\nscenarios = s\n[engine]\nrun = cat {scenario}\n' >"$W/p/detgate.ini"
nan_msg="value out of range: tick 1 (its record at byte %s), entity 3: pos[0] = nan: expected finite and within +-33554431 m"
for v in 1 2; do
  eval "rec=\$rec$v ent=\$ent$v"
  msg="at byte $ent: $(printf "$nan_msg" "$rec")"
  expect 2 "$DG" record --states "$W/nan$v.bin" -o "$W/o.flrep"
  contains_text "$W/err" "detgate record: $W/nan$v.bin $msg"
  [ ! -e "$W/o.flrep" ] && ok || bad "a refused recording left its output"
  expect 2 "$DG" verify --states - -q <"$W/nan$v.bin"
  contains_text "$W/err" "detgate verify: stdin $msg"
  expect 2 "$DG" verify --states "$W/nan$v.bin" -q --jobs 2 # the writer on its own thread
  contains_text "$W/err" "$W/nan$v.bin $msg"
  cp "$W/nan$v.bin" "$W/p/s/"
  expect 125 "$DG" record --project "$W/p/detgate.ini" "nan$v" -o "$W/o.flrep"
  contains_text "$W/err" "detgate record: nan$v (stdout) $msg"
  # out of id order, the entity's place is not kept: the tick's record is named
  expect 2 "$DG" record --states "$W/nan${v}u.bin" -o "$W/o.flrep"
  contains_text "$W/err" "$W/nan${v}u.bin at byte $rec: value out of range: tick 1, entity 3: pos[0] = nan"
done
many_msg="at byte 12: value out of range: tick 0: expected at most 65535 entities, found 65536"
expect 2 "$DG" record --states "$W/many.bin" -o "$W/o.flrep"
contains_text "$W/err" "detgate record: $W/many.bin $many_msg"
cp "$W/many.bin" "$W/p/s/"
expect 125 "$DG" record --project "$W/p/detgate.ini" many -o "$W/o.flrep"
contains_text "$W/err" "detgate record: many (stdout) $many_msg"

# a JSON Lines event the writer refuses (spawn stores no text): its tick's line
{ for t in 0 1; do printf '{"tick":%d,"entities":[{"id":1,"pos":[0,0,0]}]}\n' "$t"; done
  printf '{"tick":2,"entities":[{"id":1,"pos":[0,0,0]}],"events":[{"kind":"spawn","text":"hi"}]}\n'
  printf '{"tick":3,"entities":[{"id":1,"pos":[0,0,0]}]}\n'; } >"$W/ev.jsonl"
ev_msg=":3:1: invalid argument: tick 2 event 0 (kind 2): expected only the fields its kind stores"
expect 2 "$DG" record --states "$W/ev.jsonl" -o "$W/o.flrep"
contains_text "$W/err" "detgate record: $W/ev.jsonl$ev_msg"
expect 2 "$DG" verify --states - -q <"$W/ev.jsonl"
contains_text "$W/err" "detgate verify: stdin$ev_msg"

echo "binary where: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
