#!/usr/bin/env bash
# tests/harness/binary_cut_test.sh — a binary state stream cut after a tick header that declares the
# most entities a tick may hold (2^24): the reader's memory follows the bytes that arrive, not the
# count a header declares, so the few hundred bytes are read under a 256 MB address-space limit (an
# ASan build: a 256 MB allocation cap) and refused with where the entities start and how much of them
# the stream held — versions 1 and 2, from a file and from standard input. (Before the fix the
# reader allocated for 2^24 entities first: 1.7 GB, "out of memory" under the limit.)
# usage: binary_cut_test.sh DETGATE
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains_text
DG=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/dg-bincut-test.XXXXXX")
trap 'rm -rf "$W"' EXIT
limit_kb=262144
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=256:allocator_may_return_null=1"
# an ASan build reserves terabytes of shadow and cannot start under ulimit -v: it has the cap above
if (ulimit -v "$limit_kb" && "$DG" --version) >/dev/null 2>&1; then limited() { (ulimit -v "$limit_kb" && "$@"); }
else limited() { "$@"; }; fi

# three entities' worth (294 bytes) of the 2^24 the tick header declares, then the stream stops
entities() { head -c $((3 * $1)) /dev/zero; }
# version 1: magic, version 1, flags 0, 60 Hz; kind 1, tick 0 (u64), count 2^24 (u32)
{ printf '\x89DGS\x01\x00\x00\x00\x3c\x00\x00\x00'
  printf '\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01'
  entities 98; } >"$W/v1.bin"
# version 2: its header block (50 bytes at byte 16): planet 0, stdMask 0x7f, the legacy quanta, one
# float field "spin" (quantum 2^-10, no unit, no enum values), no tables; then kind 1, tick 0, count
# 2^24, 0 events; an entity is 98 + 8 bytes
{ printf '\x89DGS\x02\x00\x00\x00\x3c\x00\x00\x00\x32\x00\x00\x00'
  printf '\x00\x00\x00\x00\x00\x00\x00\x00\x7f'
  printf '\x00\x00\x00\x00\x00\x00\x90\x3f\x00\x00\x00\x00\x00\x00\xa0\x3f'
  printf '\x01\x03\x00\x00\x00\x00\x00\x00\x00\x50\x3f\x04spin\x00\x00\x00'
  printf '\x00\x00\x00\x00\x00\x00'
  printf '\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00'
  entities 106; } >"$W/v2.bin"
[ "$(wc -c <"$W/v1.bin")" -eq $((12 + 13 + 294)) ] && ok || bad "v1 stream size"
[ "$(wc -c <"$W/v2.bin")" -eq $((16 + 50 + 17 + 318)) ] && ok || bad "v2 stream size"

v1_msg="at byte 25: malformed input: binary state stream: the tick's entities: expected $((16777216 * 98)) bytes, found 294 (the stream ends)"
v2_msg="at byte 83: malformed input: binary state stream: the tick's entities: expected $((16777216 * 106)) bytes, found 318 (the stream ends)"
for v in 1 2; do
  eval "msg=\$v${v}_msg"
  expect 2 limited "$DG" verify --states "$W/v$v.bin" -q
  contains_text "$W/err" "v$v.bin $msg"
  expect 2 limited "$DG" record --states "$W/v$v.bin" -o "$W/v$v.flrep"
  contains_text "$W/err" "$msg"
  [ ! -e "$W/v$v.flrep" ] && ok || bad "record of the cut v$v stream left $W/v$v.flrep"
  expect 2 limited "$DG" verify --states - -q <"$W/v$v.bin"
  contains_text "$W/err" "$msg"
done

echo "binary cut: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
