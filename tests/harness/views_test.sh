#!/usr/bin/env bash
# tests/harness/views_test.sh — a comparison that has no states on a side still gets the views its
# data allows: the spread from per-entity hashes (a hash log with entity lines against a recording
# or another such log), the trajectory from the side that holds states, the RPLY lockstep diff both;
# and where a view cannot be drawn, one detail line says why (a log without entity lines, the
# bundled hash-log goldens, an RPLY recording against a log).
# usage: views_test.sh DETGATE SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
G=$SRC/corpus/golden
work_dir views
# views JSON CHECK WANT: WANT is a Python expression over c (the check) that must hold
views() {
  python3 - "$1" "$2" "$3" <<'PY' && ok || bad "$1 ($2): $3"
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for s in d["scenarios"] for c in s["checks"] if c["name"] == sys.argv[2]][0]
t = c.get("trajectory") or {}
steps = (c.get("spread") or {}).get("steps", [])
details = c.get("details") or []
ok = eval(sys.argv[3], {"c": c, "t": t, "steps": steps, "details": details, "any": any, "len": len})
if not ok:
    print(json.dumps({"spread": steps[:5], "trajectory": {k: v for k, v in t.items() if k not in ("a", "b")},
                      "points": [len(t.get("a") or []), len(t.get("b") or [])], "details": details}))
sys.exit(0 if ok else 1)
PY
}
FLIP="bitflip:tick=300,entity=7,field=pos.x,bit=45"
expect 0 "$DG" record walkers-20 -o "$W/good.flrep" --hash-log "$W/good.log" --log-entities
expect 0 "$DG" record walkers-20 --inject "$FLIP" -o "$W/flip.flrep" --hash-log "$W/flip.log" --log-entities
expect 0 "$DG" record walkers-20 --format rply --inject "$FLIP" -o "$W/flip.rply"

# a log with entity lines against a recording: spread from the entity hashes, B's trajectory
expect 1 "$DG" diff "$W/good.log" "$W/flip.flrep" --json "$W/lf.json" --html "$W/lf.html" -q
views "$W/lf.json" diff 'steps == [{"tick": 300, "entities": 1}]'
views "$W/lf.json" diff 't.get("entityId") == 7 and t.get("firstTick") == 300 and not t["a"] and len(t["b"]) > 300'
views "$W/lf.json" diff 'any("on side B only: side A is a hash log" in x for x in details)'
grep -q '<h3>Trajectory on side B (side A has no states)</h3>' "$W/lf.html" && ok || bad "lf.html: no one-sided trajectory heading"
# the other way round: A's trajectory
expect 1 "$DG" diff "$W/flip.flrep" "$W/good.log" --json "$W/fl.json" -q
views "$W/fl.json" diff 't.get("entityId") == 7 and len(t["a"]) > 300 and not t["b"]'
# two logs with entity lines: the spread, and a line for the trajectory neither has
expect 1 "$DG" diff "$W/good.log" "$W/flip.log" --json "$W/ll.json" -q
views "$W/ll.json" diff 'steps == [{"tick": 300, "entities": 1}] and not t'
views "$W/ll.json" diff 'any(x.startswith("no trajectory: neither side holds entity states") for x in details)'
# a log without entity lines (the bundled golden): neither view, and the line saying why
expect 1 "$DG" diff "$G/walkers-20.hashlog.zst" "$W/flip.flrep" --json "$W/gf.json" --html "$W/gf.html" -q
views "$W/gf.json" diff 'not steps and not t and any("side A is a hash log without entity lines" in x for x in details)'
grep -q 'side A is a hash log without entity lines' "$W/gf.html" && ok || bad "gf.html does not say why it has no chart"
# equal ticks: no line at all
expect 0 "$DG" diff "$W/good.log" "$W/good.flrep" --json "$W/eq.json" -q
views "$W/eq.json" diff 'not details and not steps and not t'

# two RPLY recordings: the spread and the followed entity's path on both sides (metres)
expect 1 "$DG" diff "$G/walkers-20.rply" "$W/flip.rply" --json "$W/rr.json" -q
views "$W/rr.json" diff 'steps == [{"tick": 300, "entities": 1}]'
views "$W/rr.json" diff 't.get("entityId") == 7 and t.get("firstTick") == 300 and len(t["a"]) == len(t["b"]) > 300'
views "$W/rr.json" diff '(t.get("largest") or {}).get("field") == "pos" and (t.get("largest") or {}).get("unit") == "m"'
# gate against an RPLY recording golden: the same views
expect 1 "$DG" gate --format rply --scenario walkers-20 --inject "$FLIP" --json "$W/gr.json" -q
views "$W/gr.json" golden 'steps == [{"tick": 300, "entities": 1}] and t.get("entityId") == 7'

# gate against a hash-log golden (stress-1000 keeps only its log) and the sampled entity log bless
# keeps beside it (stress-1000.entities.hashlog.zst: every K-th tick, K = ceil(3600 x 1000 / 100000)
# = 36): the spread from tick 324, the first sample after the flip at 300, naming entity 7 first,
# and the line that says the entity hashes are sampled
K=36
FIRST=$(( (300 + K - 1) / K * K ))
expect 1 "$DG" gate --scenario stress-1000 --inject "$FLIP" --json "$W/gs.json" --html "$W/gs.html" -q
views "$W/gs.json" golden "steps[0] == {\"tick\": $FIRST, \"entities\": 1} and all(s[\"tick\"] % $K == 0 for s in steps)"
views "$W/gs.json" golden "t.get(\"entityId\") == 7 and t.get(\"firstTick\") == $FIRST and not t[\"a\"] and len(t[\"b\"]) > 300"
views "$W/gs.json" golden 'any(x.startswith("the golden (A) holds entity hashes every 36 ticks only") for x in details)'
grep -q 'holds entity hashes every 36 ticks only' "$W/gs.html" && ok || bad "gs.html does not say the entity hashes are sampled"
# without that file the gate says why there is no chart (a copy of the goldens without it)
mkdir -p "$W/g1"
cp "$G/stress-1000.hashlog.zst" "$W/g1/"
expect 1 "$DG" gate --scenario stress-1000 --golden "$W/g1" --inject "$FLIP" --json "$W/gs1.json" -q
views "$W/gs1.json" golden 'not steps and any(x.startswith("no spread or trajectory: the golden (A) is a hash log without entity lines") for x in details)'
# bless writes that file only when the golden is a hash log only: a small --flrep-max-bytes makes
# walkers-20 one, and blessing it again with the default limit removes the file again
mkdir -p "$W/g2"
expect 0 "$DG" bless walkers-20 --golden "$W/g2" --flrep-max-bytes 1000 --reason "test: hash log only"
[ -s "$W/g2/walkers-20.entities.hashlog.zst" ] && [ ! -e "$W/g2/walkers-20.flrep" ] && ok || bad "bless wrote no entity log beside a hash-log-only golden"
grep -q 'entity lines every 2 ticks' "$W/out" && ok || bad "bless did not say the entity lines' interval ($(cat "$W/out"))"
expect 1 "$DG" gate --scenario walkers-20 --golden "$W/g2" --inject "$FLIP" --json "$W/gw.json" -q
views "$W/gw.json" golden 'steps and steps[0]["tick"] == 300 and t.get("entityId") == 7'
expect 0 "$DG" bless walkers-20 --golden "$W/g2" --reason "test: recording golden again"
[ -s "$W/g2/walkers-20.flrep" ] && [ ! -e "$W/g2/walkers-20.entities.hashlog.zst" ] && ok || bad "bless left a stale entity log beside a recording golden"
# and an RPLY hash-log golden (churn keeps only its log in RPLY)
expect 1 "$DG" gate --format rply --scenario churn --inject "$FLIP" --json "$W/gc.json" -q
views "$W/gc.json" golden 'any("the golden (A) is a hash log without entity lines" in x for x in details)'

# verify's record side keeps hashes only: its failing check says why it has no chart
expect 1 "$DG" verify dogfight-40 --replay-fault double-delta:130 --no-recovery --json "$W/vf.json" -q
views "$W/vf.json" record-vs-replay 'not steps and not t and any(x.startswith("no spread or trajectory: the record side keeps only its hashes") for x in details)'

echo "views_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
