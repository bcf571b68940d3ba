#!/usr/bin/env bash
# tests/harness/binary_order_test.sh — a binary state stream's ticks in any id order: ids written out of
# order record the same as in order (the reader sorts a tick only when it finds it unsorted), and an id
# written twice apart is still refused with its tick and id.
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

echo "binary order: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
