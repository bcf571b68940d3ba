#!/usr/bin/env bash
# tests/harness/project_line_test.sh DETGATE — a project file's line may hold up to 4094 bytes: a
# 300-byte and a 4094-byte [build] command are read whole (inih's first 200-byte buffer once made
# every line over 198 bytes "longer than 4094 bytes"); 4095 bytes are refused with file:line. A NUL
# byte is refused with its line and column (fgets once handed inih the line cut there, the rest of the
# line dropped: `run = cat {scenario}<NUL>; rm x` ran `cat {scenario}`).
set -uo pipefail
DG=$1
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
mkdir -p "$W/s"
printf '{"tick":0,"entities":[{"id":1,"pos":[1,2,3]}]}\n' >"$W/s/one.jsonl"
# project CMDLEN: a project whose [build] command is a line of exactly CMDLEN bytes (no newline)
project() {
  local pad=$(( $1 - 10 ))   # "command = " is 10 bytes
  { printf '[project]\nscenarios = s\n[engine]\nrun = cat {scenario}\n[build]\ncommand = '
    head -c "$pad" /dev/zero | tr '\0' x; printf '\n[gate]\njobs = 1\n'; } >"$W/detgate.ini"
}
for len in 199 300 4094; do
  project "$len"
  "$DG" matrix --project "$W/detgate.ini" --scenario one --configs 'gcc:-O2:off' --dry-run >"$W/out" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || fail "a $len-byte line: exit $rc: $(head -2 "$W/out")"
done
project 4095
"$DG" matrix --project "$W/detgate.ini" --scenario one --configs 'gcc:-O2:off' --dry-run >"$W/out" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "a 4095-byte line: exit $rc (expected 2)"
grep -qF "detgate.ini:6: syntax error: a line longer than 4094 bytes" "$W/out" || fail "4095 bytes: $(head -2 "$W/out")"
# nul_case NAME LINE COLUMN BYTES: a project whose fourth line is BYTES (printf) is refused at LINE:COLUMN
nul_case() {
  printf "[project]\nscenarios = s\n[engine]\n$4\n[gate]\njobs = 1\n" >"$W/detgate.ini"
  "$DG" matrix --project "$W/detgate.ini" --scenario one --configs 'gcc:-O2:off' --dry-run >"$W/out" 2>&1
  rc=$?
  [ "$rc" -eq 2 ] || fail "$1: exit $rc (expected 2): $(head -2 "$W/out")"
  grep -qF "detgate.ini:$2: syntax error: expected text, found a NUL byte (0x00) at column $3" "$W/out" \
    || fail "$1: $(head -2 "$W/out")"
}
nul_case "a NUL after a value" 4 21 'run = cat {scenario}\0; rm x'
nul_case "a line of a NUL alone" 4 1 '\0'
if [ "$fails" -ne 0 ]; then echo "project_line_test: $fails failure(s)" >&2; exit 1; fi
echo "project_line_test: all checks passed"
