#!/usr/bin/env bash
# tests/harness/bisect_test.sh — builds a small throwaway git history from the current source tree in
# which one commit breaks determinism (it compiles a bit-flip injection into the harness, exactly as
# a simulation change would alter the state), runs `detgate bisect` over it, and checks that the
# bisection names that commit and, for it, the first divergent tick with the entity and field diff.
# usage: bisect_test.sh DETGATE SOURCE_DIR REPORT_CHECK
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
CHECK=$3
work_dir bisect

# The tree the builds need (the modules detgate is made of), as it is now in SRC.
source_repo "$SRC"
c1=$(commit "base")
echo "notes" >"$R/NOTES.txt"
c2=$(commit "docs: notes")
sed -i 's|#define DG_HARNESS_BUILTIN_INJECT ""|#define DG_HARNESS_BUILTIN_INJECT "bitflip:tick=57,entity=1,field=pos.y,bit=45"|' \
  "$R/harness/builtin_inject.h"
grep -q 'bitflip:tick=57' "$R/harness/builtin_inject.h" && ok || bad "could not plant the break"
c3=$(commit "sim: faster integrator")
echo "more notes" >>"$R/NOTES.txt"
c4=$(commit "docs: more notes")

(cd "$R" && "$DG" bisect --good "$c1" --bad "$c4" --scenario corpus/scenarios/mars.scn --build-type Debug \
  --report-dir "$W/rep" -q --work "$W/bw" >"$W/out" 2>"$W/err")
rc=$?
[ "$rc" -eq 1 ] && ok || { bad "bisect exit $rc, expected 1"; cat "$W/err"; }
# every git command in the log succeeded (`git bisect reset -q` used to end it with an error)
grep -q "is not a valid commit" "$W/bw/bisect.log" && bad "bisect.log ends in a git error: $(tail -1 "$W/bw/bisect.log")" || ok
contains "$W/out" "first bad commit: $c3 sim: faster integrator"
contains "$W/out" "first divergent tick: 57"
contains "$W/rep/report.txt" "first divergent tick 57: 1 entity changed"
contains "$W/rep/report.txt" "1 Drone 1 changed pos.y"
contains "$W/rep/report.json" "$c3"
"$CHECK" "$SRC/docs/report-schema.json" "$W/rep" && ok || bad "bisect reports do not validate"
# the user's worktree list is clean again and the throwaway repository is not left mid-bisect
[ "$(git -C "$R" worktree list | wc -l)" -eq 1 ] && ok || bad "a worktree was left behind"
git -C "$R" bisect log >/dev/null 2>&1 && bad "the repository is left mid-bisect" || ok

# the same bisection over RPLY recordings (issue 6: bisect works over RPLY too)
(cd "$R" && "$DG" bisect --good "$c1" --bad "$c4" --scenario corpus/scenarios/mars.scn --build-type Debug \
  --format rply --report-dir "$W/rep-rply" -q >"$W/out-rply" 2>"$W/err-rply")
rc=$?
[ "$rc" -eq 1 ] && ok || { bad "rply bisect exit $rc, expected 1"; cat "$W/err-rply"; }
contains "$W/out-rply" "first bad commit: $c3 sim: faster integrator"
contains "$W/out-rply" "first divergent tick: 57"
contains "$W/rep-rply/report.json" '"format": "rply"'
"$CHECK" "$SRC/docs/report-schema.json" "$W/rep-rply" && ok || bad "rply bisect reports do not validate"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
