#!/usr/bin/env bash
# tests/harness/bisect_raw_test.sh — a raw-only break (issue 14): a throwaway history in which one
# commit compiles the fma injection into the harness (sub-quantum in mars: the quantized state stays
# equal, the raw floats differ from an early tick on, as a reordered float sum in the flight model does).
# Under the default policy bisect says there is nothing to bisect but shows the drift (WARN, exit 0);
# under --raw fail it finds that commit and names the tick, the entity, the field and both raw values.
# usage: bisect_raw_test.sh DETGATE SOURCE_DIR REPORT_CHECK
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
CHECK=$3
work_dir bisect-raw

source_repo "$SRC"
c1=$(commit "base")
echo "notes" >"$R/NOTES.txt"
c2=$(commit "docs: notes")
sed -i 's|#define DG_HARNESS_BUILTIN_INJECT ""|#define DG_HARNESS_BUILTIN_INJECT "fma"|' "$R/harness/builtin_inject.h"
grep -q '"fma"' "$R/harness/builtin_inject.h" && ok || bad "could not plant the break"
c3=$(commit "sim: side force before lift")
echo "more notes" >>"$R/NOTES.txt"
c4=$(commit "docs: more notes")
# the tick the drift starts at, as this build's gate sees fma in mars against the committed golden
(cd "$SRC" && "$DG" gate --scenario mars --inject fma -q --json "$W/gate.json") || bad "gate --inject fma failed"
T=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([c for c in d["scenarios"][0]["checks"] if c["name"]=="golden"][0]["firstRawDivergentTick"])' "$W/gate.json")
case "$T" in '' | *[!0-9]*) bad "no raw tick from the gate: '$T'" ;; *) ok ;; esac
# the entity and value bisect must name: this build's mars with and without fma, logged with raw values
(cd "$SRC" && "$DG" record mars -o "$W/m0.flrep" --hash-log "$W/m0.hashlog" --log-raw &&
  "$DG" record mars -o "$W/m1.flrep" --hash-log "$W/m1.hashlog" --log-raw --inject fma) >/dev/null 2>&1 ||
  bad "cannot record mars with --log-raw"
WHERE=$(python3 - "$W/m0.hashlog" "$W/m1.hashlog" "$T" <<'PY'
import struct, sys
def ents(p, t):
    names = open(p).readline().split("values=")[1].strip().split(",")
    return names, {int(f[2]): f for f in (l.split() for l in open(p)) if f[0] != "#" and f[1] == "e" and int(f[0]) == t}
names, a = ents(sys.argv[1], int(sys.argv[3]))
_, b = ents(sys.argv[2], int(sys.argv[3]))
e = min(i for i in a if i in b and a[i][4] != b[i][4])
k = next(i for i in range(len(names)) if a[e][5 + i] != b[e][5 + i])
d = lambda h: "%.17g" % struct.unpack("<d", struct.pack("<Q", int(h, 16)))[0]
print("first in entity %d, %s: raw A %s, B %s" % (e, names[k], d(a[e][5 + k]), d(b[e][5 + k])))
PY
)
[ -n "$WHERE" ] && ok || bad "no drifting entity found in this build's logs"

# default policy (warn): the bad end records the same quantized state: nothing to bisect, drift shown
(cd "$R" && "$DG" bisect --good "$c1" --bad "$c4" --scenario corpus/scenarios/mars.scn --build-type Debug \
  --report-dir "$W/warn" -q >"$W/out-w" 2>"$W/err-w")
rc=$?
[ "$rc" -eq 0 ] && ok || { bad "bisect (warn) exit $rc, expected 0"; cat "$W/err-w"; }
contains "$W/err-w" "raw floats differ from tick $T (sub-quantum drift, a warning under --raw warn, the default)"
contains "$W/err-w" "nothing to bisect under --raw warn; --raw fail bisects the drift"
contains "$W/warn/report.json" '"status": "warn"'
contains "$W/warn/report.json" '"firstRawDivergentTick": '"$T"
"$CHECK" "$SRC/docs/report-schema.json" "$W/warn" && ok || bad "bisect (warn) reports do not validate"

# --raw fail: a raw-only drift is a bad step; the bisection names the commit and the tick
(cd "$R" && "$DG" bisect --good "$c1" --bad "$c4" --scenario corpus/scenarios/mars.scn --build-type Debug \
  --raw fail --report-dir "$W/fail" -q >"$W/out-f" 2>"$W/err-f")
rc=$?
[ "$rc" -eq 1 ] && ok || { bad "bisect --raw fail exit $rc, expected 1"; cat "$W/err-f"; }
contains "$W/out-f" "first bad commit: $c3 sim: side force before lift"
contains "$W/out-f" "raw floats first differ at tick $T, $WHERE (B - A = .*) (quantized state identical: a sub-quantum drift)"
contains "$W/fail/report.json" "raw floats differ from tick $T, $WHERE"
contains "$W/fail/report.json" "\"firstBadCommit\": \"$c3\""
contains "$W/fail/report.txt" "^FAIL mars .*raw floats differ from tick $T, $WHERE (B - A = .*) (sub-quantum drift): a failure under --raw fail"
contains "$W/fail/report.json" '"firstRawDivergentTick": '"$T"
"$CHECK" "$SRC/docs/report-schema.json" "$W/fail" && ok || bad "bisect --raw fail reports do not validate"
[ "$(git -C "$R" worktree list | wc -l)" -eq 1 ] && ok || bad "a worktree was left behind"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
