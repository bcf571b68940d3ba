#!/usr/bin/env bash
# tests/harness/binary_window_test.sh — a binary state stream whose ticks straddle the reader's
# 256 KiB window (700 bodies: 68,600 bytes of entities a tick) records the same file and hash log
# however it arrives: from the test engine through a pipe (read non-blocking into the window, the
# entities parsed where they lie), from a file (read(2) into the window) and from standard input
# (fread of exactly what each record needs: no window edge) — versions 1 and 2.
# usage: binary_window_test.sh DETGATE TEST_ENGINE
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains_text
DG=$(realpath "$1")
ENGINE=$(realpath "$2")
W=$(mktemp -d "${TMPDIR:-/tmp}/dg-binwin-test.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir "$W/scenarios"
printf 'bodies 700\nticks 40\nformat bin\n' >"$W/scenarios/v1.scn"
printf 'bodies 700\nticks 40\nformat bin2\nfields 1\n' >"$W/scenarios/v2.scn"
(cd "$W" && "$DG" init --run "$ENGINE {scenario}" --scenarios scenarios >/dev/null) || bad "init"
for s in v1 v2; do
  "$ENGINE" "$W/scenarios/$s.scn" >"$W/$s.states" || bad "$s: the engine alone"
  [ "$(wc -c <"$W/$s.states")" -gt $((4 * 262144)) ] && ok || bad "$s: the stream spans several windows"
  (cd "$W" && "$DG" record "$s" -o "$W/pipe.flrep" --hash-log "$W/pipe.log" 2>"$W/err") || bad "$s: pipe: $(cat "$W/err")"
  "$DG" record --states "$W/$s.states" -o "$W/file.flrep" --hash-log "$W/file.log" 2>"$W/err" || bad "$s: file: $(cat "$W/err")"
  "$DG" record --states - -o "$W/stdin.flrep" --hash-log "$W/stdin.log" <"$W/$s.states" 2>"$W/err" ||
    bad "$s: stdin: $(cat "$W/err")"
  for via in pipe file; do
    cmp -s "$W/$via.flrep" "$W/stdin.flrep" && ok || bad "$s: the .flrep from the $via differs from stdin's"
    # the logs' first line names the scenario (stdin has none)
    cmp -s <(tail -n +2 "$W/$via.log") <(tail -n +2 "$W/stdin.log") && ok ||
      bad "$s: the hash log from the $via differs from stdin's"
  done
  [ "$(wc -l <"$W/stdin.log")" -gt 40 ] && ok || bad "$s: the hash log has a line per tick"
done
echo "binary window: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
