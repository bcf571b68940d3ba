#!/usr/bin/env bash
# tests/harness/binary_order_test.sh — a binary state stream's ticks in any id order: ids written out of
# order record the same as in order (the reader sorts a tick only when it finds it unsorted), and an id
# written twice apart is still refused with its tick and id. After the end record the stream must end:
# two streams one after the other (cat a.bin b.bin) are refused at the first extra byte, versions 1
# and 2, from a file, standard input and a process engine (before, the second was silently dropped).
# usage: binary_order_test.sh DETGATE
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
work_dir binorder
# header: magic, version 1, flags 0, 60 Hz; a tick record: kind 1, tick (u64), count (u32)
header() { printf '\x89DGS\x01\x00\x00\x00\x3c\x00\x00\x00'; }
tick() { printf "\\x01\\x0$1\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x0$2\\x00\\x00\\x00"; }
# an entity: id (u32), type, faction, flags (u16), pos.x = the id as a double (1.0, 2.0,
# 3.0), rot the identity, the rest zeros
entity() {
  local hi
  case $1 in 1) hi='\xf0\x3f' ;; 2) hi='\x00\x40' ;; 3) hi='\x08\x40' ;; esac
  printf "\\x0$1\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00$hi"
  head -c 64 /dev/zero
  printf '\x00\x00\x00\x00\x00\x00\xf0\x3f' # rot.w = 1
  head -c 8 /dev/zero
}
stream() { # stream FILE IDS-OF-TICK-0 IDS-OF-TICK-1
  local f=$1
  header >"$f"
  set -- $2 "|" $3
  local t=0 ids=()
  for x in "$@" "|"; do
    if [ "$x" = "|" ]; then
      tick "$t" "${#ids[@]}" >>"$f"
      for i in "${ids[@]}"; do entity "$i" >>"$f"; done
      t=$((t + 1)) ids=()
    else ids+=("$x"); fi
  done
  printf '\x00' >>"$f"
}
stream "$W/in-order.bin" "1 2 3" "1 2 3"
stream "$W/reversed.bin" "3 2 1" "2 3 1"
stream "$W/twice.bin" "1 2 3" "2 1 2"
[ "$(wc -c <"$W/in-order.bin")" -eq $((12 + 2 * (13 + 3 * 98) + 1)) ] && ok || bad "stream size"

expect 0 "$DG" record --states "$W/in-order.bin" -o "$W/a.flrep"
expect 0 "$DG" record --states - -o "$W/b.flrep" <"$W/reversed.bin"
expect 0 "$DG" diff "$W/a.flrep" "$W/b.flrep" -q
stream "$W/other.bin" "1 2 3" "1 2" # the diff sees ticks: a tick with one body fewer differs
expect 0 "$DG" record --states "$W/other.bin" -o "$W/c.flrep"
expect 1 "$DG" diff "$W/a.flrep" "$W/c.flrep" -q
expect 2 "$DG" verify --states - -q <"$W/twice.bin"
contains "$W/err" "at byte 319: malformed input: binary state stream: tick 1: entity 2: appears twice"

# ---- bytes after the end record ------------------------------------------------------------------
# version 2 with no declared field and no tables (a 32-byte header block), one tick of entity 1
{ printf '\x89DGS\x02\x00\x00\x00\x3c\x00\x00\x00\x20\x00\x00\x00'
  printf '\x00\x00\x00\x00\x00\x00\x00\x00\x7f'
  printf '\x00\x00\x00\x00\x00\x00\x90\x3f\x00\x00\x00\x00\x00\x00\xa0\x3f\x00'
  printf '\x00\x00\x00\x00\x00\x00'
  printf '\x01\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00'
  entity 1; printf '\x00'; } >"$W/v2.bin"
stream "$W/v1.bin" "1" "1"
v1_end=$((12 + 2 * (13 + 98))) v2_end=$((16 + 32 + 17 + 98)) # the end record's offset
[ "$(wc -c <"$W/v2.bin")" -eq $((v2_end + 1)) ] && ok || bad "v2 stream size"
mkdir -p "$W/proj/s"
printf '[project]\nscenarios = s\n[engine]\nrun = cat {scenario}\n' >"$W/proj/detgate.ini"
for v in 1 2; do
  eval "end=\$v${v}_end"
  expect 0 "$DG" verify --states "$W/v$v.bin" -q
  cat "$W/v$v.bin" "$W/v$v.bin" >"$W/v${v}x2.bin"
  printf '\x07' | cat "$W/v$v.bin" - >"$W/v${v}x.bin" # a single stray byte
  cp "$W/v${v}x2.bin" "$W/proj/s/v${v}x2.bin"
  msg="at byte $((end + 1)): malformed input: binary state stream: expected the stream to end after its end record (byte $end), found byte"
  expect 2 "$DG" verify --states "$W/v${v}x2.bin" -q
  contains_text "$W/err" "v${v}x2.bin $msg 0x89"
  expect 2 "$DG" record --states "$W/v${v}x.bin" -o "$W/v${v}x.flrep"
  contains_text "$W/err" "v${v}x.bin $msg 0x07"
  [ ! -e "$W/v${v}x.flrep" ] && ok || bad "record of v${v}x.bin left its output"
  expect 2 "$DG" verify --states - -q <"$W/v${v}x2.bin"
  contains_text "$W/err" "stdin $msg 0x89"
  expect 125 "$DG" record --project "$W/proj/detgate.ini" "v${v}x2" -o "$W/v${v}p.flrep"
  ticks="2 ticks" && [ "$v" = 2 ] && ticks="1 tick"
  contains_text "$W/err" "the engine's stream is malformed after $ticks: v${v}x2 (stdout) $msg 0x89"
  [ ! -e "$W/v${v}p.flrep" ] && ok || bad "record of the process engine's v${v}x2 left its output"
done

echo "binary order: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
