#!/usr/bin/env bash
# tests/harness/ci_test.sh — the gate as a CI matrix runs it: `gate --plan N` (deterministic, each
# scenario once, balanced by the rule, and the plan --shard I/N then runs), shard reports that name
# their shard and corpus, and `detgate merge` (a complete set gives the unsharded run's report; a
# missing or repeated shard, another corpus, a non-report is refused with exit 2 and writes nothing;
# the merged exit is the worst shard's; a report read back renders byte for byte the same).
# usage: ci_test.sh DETGATE SOURCE_DIR REPORT_CHECK
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
CHECK=$3
SCHEMA=$SRC/docs/report-schema.json
work_dir ci

absent() { if [ ! -e "$1" ]; then ok; else bad "$1 was written"; fi; }

# ---- the plan over the bundled corpus -------------------------------------------------------------
cd "$SRC" || exit 1
expect 0 "$DG" gate --plan 3
cp "$W/out" "$W/plan-a"
expect 0 "$DG" gate --plan 3
cmp -s "$W/plan-a" "$W/out" && ok || bad "two --plan 3 runs differ"
# every scenario of the corpus exactly once; the longest shard within 1.3 x max(ideal, largest)
# (recomputed here from the shard costs the plan prints and the goldens' entity-ticks)
python3 - "$W/plan-a" "$SRC/corpus/scenarios" <<'PY' && ok || bad "the bundled plan breaks the rule"
import os, re, sys
lines = open(sys.argv[1]).read().splitlines()
shards = [l for l in lines if l.startswith("shard ") and "/" in l.split()[1]]
assert len(shards) == 3, lines
names, loads = [], []
for l in shards:
    m = re.match(r"shard (\d+)/3 cost (\d+) share [0-9.]+%:(.*)$", l)
    assert m, l
    loads.append(int(m.group(2)))
    names += m.group(3).split()
corpus = sorted(f[:-4] for f in os.listdir(sys.argv[2]) if f.endswith(".scn"))
assert sorted(n.rstrip("*") for n in names) == corpus, (names, corpus)
largest = int(re.search(r"largest scenario (\d+)", lines[-1]).group(1))
assert max(loads) <= 1.3 * max(sum(loads) / 3, largest), (loads, largest)
PY
contains "$W/plan-a" "shard 1/3 cost [0-9]* share [0-9.]*%: long-1h$"
expect 2 "$DG" gate --plan 2 --shard 1/2
contains "$W/err" "without --shard"
expect 2 "$DG" gate --plan 0
expect 2 "$DG" gate --shard 1/5000
cd "$W" || exit 1

# ---- a throwaway corpus of four bundled scenarios with their goldens ------------------------------
# entity-ticks: walkers-20 180000, events 103895, dogfight-40 60000, mars 36000; longest first on
# three shards: walkers-20 -> 1, events -> 2, dogfight-40 -> 3, mars -> 3 (the least loaded).
mkdir -p corpus golden
for n in dogfight-40 events mars walkers-20; do
  cp "$SRC/corpus/scenarios/$n.scn" corpus/
  cp "$SRC/corpus/golden/$n.hashlog.zst" "$SRC/corpus/golden/$n.flrep" golden/
done
G=(--corpus corpus --golden golden)
expect 0 "$DG" gate "${G[@]}" --plan 3
contains "$W/out" "shard 1/3 cost 180000 share [0-9.]*%: walkers-20$"
contains "$W/out" "shard 2/3 cost 103895 share [0-9.]*%: events$"
contains "$W/out" "shard 3/3 cost 96000 share [0-9.]*%: dogfight-40 mars$"
for i in 1 2 3; do
  expect 0 "$DG" gate "${G[@]}" --shard "$i/3" --report-dir "s$i" -q
  expect 0 "$CHECK" "$SCHEMA" "s$i"
  contains "s$i/report.json" "\"shard\": {\"index\": $i, \"count\": 3}"
done
names() { python3 -c 'import json,sys; print(" ".join(s["name"] for s in json.load(open(sys.argv[1]))["scenarios"]))' "$1"; }
[ "$(names s3/report.json)" = "dogfight-40 mars" ] && ok || bad "shard 3/3 ran $(names s3/report.json), not the plan's"
expect 0 "$DG" gate "${G[@]}" --report-dir all -q
# a scenario without a golden costs the mean of the others, marked in the plan
cp "$SRC/corpus/scenarios/mars.scn" corpus/zeta.scn
expect 0 "$DG" gate "${G[@]}" --plan 2
contains "$W/out" "zeta\*"
contains "$W/out" "cost assumed"
rm corpus/zeta.scn

# ---- merge: the complete set -----------------------------------------------------------------------
expect 0 "$DG" merge s3/report.json s1/report.json s2/report.json --report-dir merged -q
expect 0 "$CHECK" "$SCHEMA" merged
[ "$(names merged/report.json)" = "dogfight-40 events mars walkers-20" ] && ok || bad "merged: $(names merged/report.json)"
same_report all/report.json merged/report.json
for f in report.txt report.json report.xml report.md report.html; do [ -s "merged/$f" ] && ok || bad "merge wrote no $f"; done
expect 0 "$DG" merge s1/report.json s2/report.json s3/report.json --markdown merged.md --junit merged.xml -q
contains merged.md "dogfight-40"

# ---- merge refuses an incomplete, repeated or mixed set, and what is not a gate report ---------------
expect 2 "$DG" merge s1/report.json s3/report.json --report-dir refused1
contains "$W/err" "shard 2/3 of corpus [0-9a-f]* is missing"
absent refused1
expect 2 "$DG" merge s1/report.json s2/report.json s2/report.json s3/report.json --report-dir refused2
contains "$W/err" "shard 2/3 given twice: s2/report.json and s2/report.json"
absent refused2
# another corpus: the same scenarios with one golden changed is another cost, another id
mkdir -p golden2 && cp golden/* golden2/ && cp "$SRC/corpus/golden/static-500.hashlog.zst" golden2/mars.hashlog.zst
rm golden2/mars.flrep
expect 0 "$DG" gate --corpus corpus --golden golden2 --shard 2/3 --report-dir f2 -q  # walkers-20 alone now
expect 2 "$DG" merge s1/report.json f2/report.json s3/report.json --report-dir refused3
contains "$W/err" "f2/report.json sharded corpus [0-9a-f]* but s1/report.json sharded corpus"
absent refused3
expect 2 "$DG" merge s1/report.json all/report.json --report-dir refused4
contains "$W/err" "not shards of one plan"
echo '{"hello": "world"}' >not-report.json
expect 2 "$DG" merge not-report.json --report-dir refused5
contains "$W/err" 'not-report.json: top level: key "schemaVersion" missing'
absent refused5
echo '{"schemaVersion": 1,' >broken.json
expect 2 "$DG" merge broken.json
contains "$W/err" "broken.json:[0-9]*:[0-9]*: not JSON"
expect 0 "$DG" verify corpus/mars.scn --json verify.json -q
expect 2 "$DG" merge verify.json
contains "$W/err" 'expected "gate"'
# a damaged value is named by its path in the report
python3 - s1/report.json damaged.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["scenarios"][0]["checks"][1]["divergentTicks"] = "many"
json.dump(d, open(sys.argv[2], "w"))
PY
expect 2 "$DG" merge damaged.json s2/report.json s3/report.json --report-dir refused6
contains "$W/err" 'damaged.json: scenarios\[0\].checks\[1\]: "divergentTicks": expected an integer, found a string'
absent refused6
expect 2 "$DG" merge
expect 2 "$DG" merge --no-such-flag s1/report.json

# ---- the merged verdict is the worst shard's; a report read back renders the same ----------------------
expect 1 "$DG" gate "${G[@]}" --shard 1/3 --inject 'bitflip:tick=300,entity=7,field=pos.x,bit=40' --report-dir b1 -q
expect 1 "$DG" merge b1/report.json s2/report.json s3/report.json --report-dir merged-bad -q
contains merged-bad/report.json '"firstDivergentTick": 300'
expect 2 "$DG" merge b1/report.json
contains "$W/err" "shard 2/3 of corpus"
# a 1/1 run is a complete set of its own: merged, every rendering is the original byte for byte
expect 1 "$DG" gate "${G[@]}" --scenario walkers-20 --inject 'bitflip:tick=300,entity=7,field=pos.x,bit=40' --report-dir one -q
expect 1 "$DG" merge one/report.json --report-dir one-again -q
for f in report.txt report.json report.xml report.md report.html; do
  cmp -s "one/$f" "one-again/$f" && ok || bad "$f of a report read back differs from the original"
done
# header values, detail lines and event diffs are read back too: a golden recorded from a scenario whose
# chat line is one word longer, against a golden folder made with another keyframe interval
mkdir -p corpus-ev golden-ev
sed 's/tally ho/tally ho now/' "$SRC/corpus/scenarios/events.scn" >corpus-ev/events.scn
expect 0 "$DG" record corpus-ev/events.scn -o golden-ev/events.flrep --hash-log golden-ev/events.hashlog.zst \
  --keyframe-interval 60
expect 1 "$DG" gate --corpus corpus --golden golden-ev --scenario events --report-dir ev -q
contains ev/report.json '"field": "keyframe interval"'
contains ev/report.json '"kindName": "chat"'
expect 1 "$DG" merge ev/report.json --report-dir ev-again -q
for f in report.txt report.json report.xml report.md report.html; do
  cmp -s "ev/$f" "ev-again/$f" && ok || bad "$f of a report with values and event diffs read back differs"
done
# the restored timeline must be in order: two buckets swapped are refused with their path
python3 - one/report.json swapped.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = d["scenarios"][0]["checks"][3]["timeline"]["buckets"]
b[0], b[1] = b[1], b[0]
json.dump(d, open(sys.argv[2], "w"))
PY
expect 2 "$DG" merge swapped.json --report-dir refused7
contains "$W/err" 'swapped.json: scenarios\[0\].checks\[3\].timeline.buckets\[1\]: bucket out of order'
absent refused7
expect 0 "$DG" merge --help
contains "$W/out" "Example"
mkdir -p nogolden
expect 125 "$DG" gate --corpus corpus --golden nogolden --scenario mars --report-dir ng -q
expect 125 "$DG" merge ng/report.json --report-dir ng-again -q

# ---- action.yml's gate step as the runner runs it: inputs in env, GITHUB_OUTPUT and the summary out ----
python3 - "$SRC/action.yml" >action-steps.txt <<'PY' && ok || bad "action.yml has no gate or exit step"
import sys, yaml
steps = {s.get("id", s.get("name")): s for s in yaml.safe_load(open(sys.argv[1]))["runs"]["steps"]}
open("gate-step.sh", "w").write(steps["gate"]["run"])
open("exit-step.sh", "w").write(steps["Exit with detgate's code"]["run"])
print(sorted(steps["gate"]["env"]))
PY
# gate_step SHARD RAW PROJECT GOLDEN REPORTS: the step's own exit status (detgate's is in gh-out)
gate_step() {
  : >gh-out
  env DG="$DG" DG_CORPUS=corpus DG_GOLDEN="$4" DG_PROJECT="$3" DG_SHARD="$1" DG_JOBS=1 DG_RAW="$2" \
    DG_FORMAT=flrep DG_REPORTS="$5" GITHUB_OUTPUT=gh-out GITHUB_STEP_SUMMARY=gh-summary bash gate-step.sh \
    >"$W/out" 2>"$W/err"
}
contains action-steps.txt "'DG_CORPUS', 'DG_FORMAT', 'DG_GOLDEN', 'DG_JOBS', 'DG_PROJECT', 'DG_RAW', 'DG_REPORTS', 'DG_SHARD'"
echo "## earlier step" >gh-summary
gate_step 3/3 report "" golden act3 && ok || bad "the gate step itself failed"
contains gh-out "^exit-code=0$"
contains gh-summary "dogfight-40"
[ "$(head -n 1 gh-summary)" = "## earlier step" ] && ok || bad "the gate step overwrote the step summary"
contains act3/report.json '"shard": {"index": 3, "count": 3}'
[ "$(names act3/report.json)" = "dogfight-40 mars" ] && ok || bad "the action's shard 3/3 ran $(names act3/report.json)"
gate_step "" fail "" golden2 act-bad && ok || bad "the gate step itself failed"
contains gh-out "^exit-code=1$"
contains gh-summary "mars"
RC=1 bash exit-step.sh; [ $? -eq 1 ] && ok || bad "the exit step does not end with detgate's 1"
RC= bash exit-step.sh; [ $? -eq 125 ] && ok || bad "the exit step without a gate result is not 125"
gate_step "" lenient "" golden act-x
contains gh-out "^exit-code=2$"
contains "$W/out" "raw-policy: expected warn, fail or ignore"
gate_step "" report detgate.toml golden act-p
contains gh-out "^exit-code=2$"
contains "$W/out" "no --project option yet"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
