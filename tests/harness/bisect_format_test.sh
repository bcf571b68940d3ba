#!/usr/bin/env bash
# tests/harness/bisect_format_test.sh — the recording format of a sim_stub bisect: the option, else the
# project file's `[project] format`, else the default. Each revision's own detgate records, and it
# reads the project file it finds from the current folder: bisect must name the format it chose, or a
# project's `format = rply` would record RPLY bytes under a --format flrep run. Two revisions that
# record the same (nothing to bisect, exit 0), built once and reused by the second run (label slow).
# usage: bisect_format_test.sh DETGATE SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
DG=$1
SRC=$2
work_dir bisect-format

source_repo "$SRC" detgate.ini
sed -i 's/^format = flrep$/format = rply/' "$R/detgate.ini"
grep -q '^format = rply$' "$R/detgate.ini" && ok || bad "could not set the project's format"
c1=$(commit "base")
echo "notes" >"$R/NOTES.txt"
c2=$(commit "docs: notes")

# the option wins over the project file
cd "$R" || exit 1
expect 0 "$DG" bisect --good "$c1" --bad "$c2" --scenario corpus/scenarios/mars.scn --build-type Debug \
  --format flrep --work "$W/bw" --json "$W/flrep.json"
contains "$W/err" "records the same as the good one"
contains "$W/flrep.json" '"format": *"flrep"'
for f in "$W/bw/good.flrep" "$W/bw/rec-$c2.flrep"; do
  expect 0 "$DG" info "$f"
  contains "$W/out" "format: *.flrep"
done
# without the option the project's format: RPLY recordings
rm -f "$W/bw"/good.* "$W/bw"/rec-*
expect 0 "$DG" bisect --good "$c1" --bad "$c2" --scenario corpus/scenarios/mars.scn --build-type Debug \
  --work "$W/bw" --json "$W/rply.json"
contains "$W/err" "records the same as the good one"
contains "$W/rply.json" '"format": *"rply"'
if [ -s "$W/bw/good.rply" ] && [ ! -e "$W/bw/good.flrep" ]; then ok; else bad "no good.rply: $(ls "$W/bw")"; fi
expect 0 "$DG" info "$W/bw/good.rply"
contains "$W/out" "RPLY"

echo "bisect_format_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
