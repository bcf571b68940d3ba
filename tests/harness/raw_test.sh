#!/usr/bin/env bash
# tests/harness/raw_test.sh — the raw-float drift policy (issue 14, docs/CLI.md "Raw-float drift"):
# a sub-quantum drift (quantized state equal, raw float hashes differ) is WARN and exit 0 by default,
# FAIL and exit 1 under --raw fail / --strict-raw, PASS under --raw ignore (still in the JSON), the
# same in gate, diff and verify; every report format shows WARN; merge reads WARN back unchanged.
# usage: raw_test.sh DETGATE SOURCE_DIR REPORT_FILES_CHECK
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
CHECK=$3
SCHEMA=$SRC/docs/report-schema.json
work_dir raw
cd "$SRC" || exit 1

# jq_is FILE PYEXPR WANT — a value of a JSON report, by a Python expression over d
jq_is() {
  local got
  got=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>&1)
  if [ "$got" = "$3" ]; then ok; else bad "$1: $2 is '$got', expected '$3'"; fi
}
GOLDEN_CHECK='[c for c in d["scenarios"][0]["checks"] if c["name"]=="golden"][0]'

# ---- gate: fma in dogfight-40 never crosses a quantum; the raw float hashes differ from tick 1 --------
expect 0 "$DG" gate --scenario dogfight-40 --inject fma --report-dir "$W/warn" -q
expect 0 "$CHECK" "$SCHEMA" "$W/warn"
contains "$W/warn/report.txt" "detgate gate .*: WARN — 1 scenario (0 passed, 1 warned, 0 failed"
contains "$W/warn/report.txt" "^WARN dogfight-40 "
# the committed golden's log has one raw hash per tick: the WARN names the raw floats it covers, in
# every report format, and a detail line says how to get the entity and field
WARN_V1="raw floats differ from tick 1 (sub-quantum drift; hashed raw floats pos.x,pos.y,pos.z,vel.x,vel.y,vel.z,rot.w,rot.x,rot.y,rot.z,health): a warning under --raw warn"
for f in txt json md html; do contains "$W/warn/report.$f" "$WARN_V1"; done
contains "$W/warn/report.json" "the golden hash log keeps one raw hash per tick, not which entity or field drifted"
jq_is "$W/warn/report.json" 'd["status"]' warn
jq_is "$W/warn/report.json" 'd["summary"]["scenariosWarned"], d["summary"]["checksWarned"]' "1 1"
jq_is "$W/warn/report.json" "$GOLDEN_CHECK[\"status\"], $GOLDEN_CHECK[\"firstRawDivergentTick\"]" "warn 1"
contains "$W/warn/report.xml" '<property name="detgate.warn" value="raw floats differ from tick 1"/>'
contains "$W/warn/report.xml" 'WARN: sub-quantum drift: quantized state equal, raw floats differ from tick 1'
contains "$W/warn/report.xml" 'failures="0" errors="0"'
contains "$W/warn/report.md" '| dogfight-40 | golden | ⚠️ warn | — (sub-quantum from 1) |'
contains "$W/warn/report.html" '<span class="badge warn">WARN</span>'

# a golden whose log carries each entity's raw floats (record --hash-log --log-raw, version 3): the
# WARN names the first drifting entity, its field and both raw values, as diff of two such logs does,
# in every report format, with one detail line per differing field; nothing is left in TMPDIR
mkdir -p "$W/g3"
expect 0 "$DG" record dogfight-40 -o "$W/g3/dogfight-40.flrep" --hash-log "$W/g3/dogfight-40.hashlog.zst" --log-raw
mkdir -p "$W/tmp3"
TMPDIR="$W/tmp3" expect 0 "$DG" gate --scenario dogfight-40 --golden "$W/g3" --inject fma --report-dir "$W/warn3" -q
if [ -z "$(ls -A "$W/tmp3")" ]; then ok; else bad "gate left $(ls -A "$W/tmp3")"; fi
WARN_V3="raw floats differ from tick 1, first in entity 16, vel.z: raw A -0.039707768449134484, B -0.039707768449134491 (B - A = -6.94e-18 m/s, 1 ulp) (sub-quantum drift): a warning"
for f in txt json md html; do contains "$W/warn3/report.$f" "$WARN_V3"; done
contains "$W/warn3/report.json" "tick 1 entity 16 vel.z: raw A -0.039707768449134484 (-0x1.454939dc5b88p-5), B"
lacks "$W/warn3/report.json" "keeps one raw hash per tick"
expect 0 "$CHECK" "$SCHEMA" "$W/warn3"

# --raw fail and its alias --strict-raw: the same drift fails
expect 1 "$DG" gate --scenario dogfight-40 --inject fma --raw fail --json "$W/fail.json" -q
jq_is "$W/fail.json" "d[\"status\"], $GOLDEN_CHECK[\"status\"], $GOLDEN_CHECK[\"firstRawDivergentTick\"]" "fail fail 1"
contains "$W/fail.json" "a failure under --raw fail"
expect 1 "$DG" gate --scenario dogfight-40 --inject fma --strict-raw -q
# the last policy given wins (a project default overridden on the command line)
expect 0 "$DG" gate --scenario dogfight-40 --inject fma --strict-raw --raw warn -q
# --raw ignore: not a status, but the JSON still carries the drift
expect 0 "$DG" gate --scenario dogfight-40 --inject fma --raw ignore --report-dir "$W/ign" -q
jq_is "$W/ign/report.json" "d[\"status\"], $GOLDEN_CHECK[\"status\"], $GOLDEN_CHECK[\"firstRawDivergentTick\"], $GOLDEN_CHECK[\"subQuantum\"]" "pass pass 1 True"
lacks "$W/ign/report.txt" "WARN"
lacks "$W/ign/report.xml" "detgate.warn"
# a real divergence stays FAIL whatever the policy
expect 1 "$DG" gate --scenario dogfight-40 --inject "bitflip:tick=300,entity=7,field=pos.x,bit=45" --raw ignore -q
# a bad policy is a usage error, named
expect 2 "$DG" gate --scenario dogfight-40 --raw amber
contains "$W/err" "--raw: expected fail, warn or ignore, found 'amber'"
# no drift at all: PASS under every policy
expect 0 "$DG" gate --scenario walkers-20 --raw fail --json "$W/clean.json" -q
jq_is "$W/clean.json" 'd["status"]' pass

# ---- each injection that stays below the quantum: WARN by default, FAIL under --raw fail -----------------
# (docs/SCENARIOS.md: fma and libm-trig cross a quantum only in long-1h; fma leaves walkers-20 unchanged)
for pair in churn:fma churn:libm-trig dogfight-40:libm-trig events:fma events:libm-trig mars:fma mars:libm-trig \
  static-500:fma static-500:libm-trig stress-1000:fma stress-1000:libm-trig walkers-20:libm-trig; do
  s=${pair%%:*} inj=${pair#*:}
  expect 0 "$DG" gate --scenario "$s" --inject "$inj" -q --json "$W/inj.json"
  jq_is "$W/inj.json" 'd["status"]' warn
  expect 1 "$DG" gate --scenario "$s" --inject "$inj" --raw fail -q --text "$W/inj.txt"
  contains "$W/inj.txt" "^FAIL $s "
done

# ---- merge reads a WARN report back: every rendering byte for byte the same ----------------------------
expect 0 "$DG" merge "$W/warn/report.json" --report-dir "$W/warn-again" -q
for f in report.txt report.json report.xml report.md report.html; do
  cmp -s "$W/warn/$f" "$W/warn-again/$f" && ok || bad "$f of a WARN report read back differs from the original"
done

# ---- diff: hash logs carry the raw hashes, recordings do not -------------------------------------------
expect 0 "$DG" record dogfight-40 -o "$W/a.flrep" --hash-log "$W/a.hashlog"
expect 0 "$DG" record dogfight-40 -o "$W/b.flrep" --hash-log "$W/b.hashlog" --inject fma
expect 0 "$DG" diff "$W/a.hashlog" "$W/b.hashlog" --json "$W/dh.json" -q
jq_is "$W/dh.json" 'd["status"], d["scenarios"][0]["checks"][0]["firstRawDivergentTick"]' "warn 1"
expect 1 "$DG" diff "$W/a.hashlog" "$W/b.hashlog" --raw fail -q
expect 1 "$DG" diff "$W/a.hashlog" "$W/b.hashlog" --strict-raw -q
expect 0 "$DG" diff "$W/a.hashlog" "$W/b.hashlog" --raw ignore --json "$W/dhi.json" -q
jq_is "$W/dhi.json" 'd["status"], d["scenarios"][0]["checks"][0]["firstRawDivergentTick"]' "pass 1"
# two recordings hold quantized state only: equal, whatever the policy (docs/CLI.md says why)
expect 0 "$DG" diff "$W/a.flrep" "$W/b.flrep" --raw fail --json "$W/df.json" -q
jq_is "$W/df.json" 'd["status"], d["scenarios"][0]["checks"][0]["firstRawDivergentTick"]' "pass None"
# ... unless their hash logs come along: the state diff, and the raw verdict from the logs
expect 0 "$DG" diff "$W/a.flrep" "$W/b.flrep" --log-a "$W/a.hashlog" --log-b "$W/b.hashlog" --json "$W/dl.json" -q
jq_is "$W/dl.json" 'd["status"], d["scenarios"][0]["checks"][0]["firstRawDivergentTick"]' "warn 1"
contains "$W/dl.json" "raw floats differ from tick 1 (sub-quantum, from the hash logs)"
expect 1 "$DG" diff "$W/a.flrep" "$W/b.flrep" --log-a "$W/a.hashlog" --log-b "$W/b.hashlog" --raw fail -q
expect 0 "$DG" diff "$W/a.flrep" "$W/a.flrep" --log-a "$W/a.hashlog" --log-b "$W/a.hashlog" --raw fail -q
# logs of another run (a bit flip the recordings do not have) are refused; one log alone is usage
expect 0 "$DG" record dogfight-40 -o "$W/c.flrep" --hash-log "$W/c.hashlog" \
  --inject "bitflip:tick=300,entity=7,field=pos.x,bit=45"
expect 2 "$DG" diff "$W/a.flrep" "$W/b.flrep" --log-a "$W/a.hashlog" --log-b "$W/c.hashlog" -q
contains "$W/err" "they are not these recordings' logs"
expect 2 "$DG" diff "$W/a.flrep" "$W/b.flrep" --log-a "$W/a.hashlog" -q
contains "$W/err" "--log-a and --log-b go together"
expect 2 "$DG" diff "$W/a.hashlog" "$W/b.hashlog" --log-a "$W/a.hashlog" --log-b "$W/b.hashlog" -q
expect 2 "$DG" diff "$W/a.hashlog" "$W/b.hashlog" --raw
expect 2 "$DG" diff "$W/a.hashlog" "$W/b.hashlog" --raw sometimes

# ---- localised: with entity lines the hash log (version 2) carries each entity's raw hash --------------
head -n 1 "$W/a.hashlog" | grep -q '^# detgate-hashlog 1 ' && ok || bad "a log without entity lines is not version 1"
expect 0 "$DG" record dogfight-40 -o "$W/ea.flrep" --hash-log "$W/ea.hashlog" --log-entities
expect 0 "$DG" record dogfight-40 -o "$W/eb.flrep" --hash-log "$W/eb.hashlog" --log-entities --inject fma
head -n 1 "$W/ea.hashlog" | grep -q '^# detgate-hashlog 2 .* entities=1 raw=1$' && ok || bad "no version 2 header"
# the first tick whose T line's raw hash differs, and there the e lines whose raw hash (4th column) does
read -r WT WE WN <<<"$(python3 - "$W/ea.hashlog" "$W/eb.hashlog" <<'PY'
import sys
def ticks(p):
    t, out = None, {}
    for line in open(p):
        f = line.split()
        if f[0] == "#": continue
        if f[1] == "T": t = int(f[0]); out[t] = [f[5], {}]
        else: out[t][1][int(f[2])] = f[4]
    return out
a, b = ticks(sys.argv[1]), ticks(sys.argv[2])
t = min(k for k in a if a[k][0] != b[k][0])
ids = sorted(i for i in a[t][1] if a[t][1][i] != b[t][1][i])
print(t, ids[0], len(ids))
PY
)"
expect 0 "$DG" diff "$W/ea.hashlog" "$W/eb.hashlog" --json "$W/de.json" -q
contains "$W/de.json" "raw floats differ from tick $WT, first in entity $WE (sub-quantum)"
contains "$W/de.json" "tick $WT: raw floats differ in $WN of 40 entities: $WE"
jq_is "$W/de.json" 'd["status"], d["scenarios"][0]["checks"][0]["firstRawDivergentTick"]' "warn $WT"
# ---- with --log-raw the e lines carry the raw floats too (version 3): the field and both values named ----
expect 0 "$DG" record dogfight-40 -o "$W/ra.flrep" --hash-log "$W/ra.hashlog" --log-raw
expect 0 "$DG" record dogfight-40 -o "$W/rb.flrep" --hash-log "$W/rb.hashlog" --log-raw --inject fma
head -n 1 "$W/ra.hashlog" | grep -q '^# detgate-hashlog 3 .* entities=1 raw=1 values=pos.x,pos.y,pos.z,vel.x,vel.y,vel.z,rot.w,rot.x,rot.y,rot.z,health$' \
  && ok || bad "no version 3 header: $(head -n 1 "$W/ra.hashlog")"
# the same T lines and entity hashes as the version 2 log: only the values are added
cmp -s <(cut -d' ' -f1-5 "$W/ea.hashlog" | tail -n +2) <(cut -d' ' -f1-5 "$W/ra.hashlog" | tail -n +2) && ok \
  || bad "the version 3 log's hashes differ from the version 2 log's"
# the first differing value of the first drifting entity, decoded from the logs' bit patterns here
read -r RF RA RB <<<"$(python3 - "$W/ra.hashlog" "$W/rb.hashlog" "$WT" "$WE" <<'PY'
import struct, sys
def ent(p, t, e):
    names = open(p).readline().split("values=")[1].strip().split(",")
    for line in open(p):
        f = line.split()
        if f[0] != "#" and f[1] == "e" and int(f[0]) == t and int(f[2]) == e:
            return names, f[5:]
names, a = ent(sys.argv[1], int(sys.argv[3]), int(sys.argv[4]))
_, b = ent(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
k = next(i for i in range(len(a)) if a[i] != b[i])
d = lambda h: "%.17g" % struct.unpack("<d", struct.pack("<Q", int(h, 16)))[0]
print(names[k], d(a[k]), d(b[k]))
PY
)"
expect 0 "$DG" diff "$W/ra.hashlog" "$W/rb.hashlog" --report-dir "$W/dr" -q
contains "$W/dr/report.json" "raw floats differ from tick $WT, first in entity $WE, $RF: raw A $RA, B $RB"
contains "$W/dr/report.json" "tick $WT entity $WE $RF: raw A $RA (-\\{0,1\\}0x1\\.[0-9a-f]*p[-+][0-9]*), B $RB ("
contains "$W/dr/report.txt" "first in entity $WE, $RF: raw A $RA, B $RB"
contains "$W/dr/report.xml" "first in entity $WE, $RF: raw A $RA, B $RB"
contains "$W/dr/report.html" "first in entity $WE, $RF: raw A $RA, B $RB"
contains "$W/dr/report.md" "^- ⚠️ rb / diff: quantized state identical; raw floats differ from tick $WT, first in entity $WE, $RF: raw A $RA, B $RB"
expect 0 "$CHECK" "$SCHEMA" "$W/dr"
# recordings with their version 3 logs: the same
expect 0 "$DG" diff "$W/ra.flrep" "$W/rb.flrep" --log-a "$W/ra.hashlog" --log-b "$W/rb.hashlog" --json "$W/drl.json" -q
contains "$W/drl.json" "first in entity $WE, $RF: raw A $RA, B $RB"
# a version 2 log on one side: the entity, not the values
expect 0 "$DG" diff "$W/ea.hashlog" "$W/rb.hashlog" --json "$W/dr2.json" -q
contains "$W/dr2.json" "first in entity $WE (sub-quantum)"
lacks "$W/dr2.json" "raw A "

# ---- one quantum from a tiny raw change: x = 0.0077 m and 0.0079 m lie on both sides of the rounding
# edge 0.5 / 64 = 0.0078125 m, so the quantized positions are 0 and 1 (1/64 m = 15.6 mm apart) ----------
H='tick,id,px,py,pz,qw,qx,qy,qz,health'
printf '%s\n0,1,0,0,0,1,0,0,0,1\n1,1,0.0077,0,0,1,0,0,0,1\n' "$H" >"$W/edge-a.csv"
printf '%s\n0,1,0,0,0,1,0,0,0,1\n1,1,0.0079,0,0,1,0,0,0,1\n' "$H" >"$W/edge-b.csv"
for s in a b; do
  expect 0 "$DG" record --states "$W/edge-$s.csv" -o "$W/edge-$s.flrep" --hash-log "$W/edge-$s.hashlog" --log-raw
done
read -r EA EB <<<"$(python3 -c 'print("%.17g %.17g" % (0.0077, 0.0079))')"
expect 1 "$DG" diff "$W/edge-a.flrep" "$W/edge-b.flrep" --log-a "$W/edge-a.hashlog" --log-b "$W/edge-b.hashlog" \
  --report-dir "$W/edge" -q
EDGE="tick 1 entity 1 pos.x: 1 quantum (15.6 mm) from a raw change of 0.2 mm across a rounding edge: raw A $EA, B $EB"
for f in report.txt report.json report.md report.html report.xml; do contains "$W/edge/$f" "$EDGE"; done
expect 0 "$CHECK" "$SCHEMA" "$W/edge"
# without the logs' raw values the same step is only a quantum
expect 1 "$DG" diff "$W/edge-a.flrep" "$W/edge-b.flrep" --json "$W/edge-noraw.json" -q
lacks "$W/edge-noraw.json" "rounding edge"

# a version 1 log on one side: the tick only, no entity named
expect 0 "$DG" diff "$W/a.hashlog" "$W/eb.hashlog" --json "$W/de1.json" -q
contains "$W/de1.json" "raw floats differ from tick $WT (sub-quantum)"
lacks "$W/de1.json" "first in entity"

# ---- verify takes the option too (its replay side has no raw floats: nothing to judge) -----------------
expect 0 "$DG" verify dogfight-40 --inject fma --raw fail --no-recovery --seek-samples 0 -q
expect 2 "$DG" verify dogfight-40 --raw nope -q

# ---- action.yml's raw-policy input reaches the gate as --raw -------------------------------------------
# a golden recorded with fma: the quantized state equals today's build, the raw hashes do not
mkdir -p "$W/act/scenarios" "$W/act/golden"
cp corpus/scenarios/dogfight-40.scn "$W/act/scenarios/"
expect 0 "$DG" record dogfight-40 -o "$W/act/golden/dogfight-40.flrep" --hash-log "$W/act/golden/dogfight-40.hashlog.zst" \
  --inject fma
python3 - "$SRC/action.yml" "$W/gate-step.sh" <<'PY' && ok || bad "action.yml has no gate step"
import sys, yaml
steps = {s.get("id", s.get("name")): s for s in yaml.safe_load(open(sys.argv[1]))["runs"]["steps"]}
open(sys.argv[2], "w").write(steps["gate"]["run"])
PY
# action_gate RAW REPORTS: detgate's exit code as the step writes it to GITHUB_OUTPUT
action_gate() {
  : >"$W/gh-out"
  env DG="$DG" DG_CORPUS="$W/act/scenarios" DG_GOLDEN="$W/act/golden" DG_PROJECT= DG_SHARD= DG_JOBS=1 DG_RAW="$1" \
    DG_FORMAT=flrep DG_REPORTS="$2" GITHUB_OUTPUT="$W/gh-out" GITHUB_STEP_SUMMARY="$W/gh-summary" \
    bash "$W/gate-step.sh" >"$W/out" 2>"$W/err"
  sed -n 's/^exit-code=//p' "$W/gh-out"
}
for case in ":0:warn" "report:0:warn" "warn:0:warn" "fail:1:fail" "ignore:0:pass"; do
  IFS=: read -r raw code status <<<"$case"
  got=$(action_gate "$raw" "$W/act-$raw")
  [ "$got" = "$code" ] && ok || bad "raw-policy '$raw': exit-code '$got', expected $code ($(head -c 300 "$W/err"))"
  jq_is "$W/act-$raw/report.json" 'd["status"]' "$status"
done
got=$(action_gate amber "$W/act-amber")
[ "$got" = 2 ] && ok || bad "raw-policy amber: exit-code '$got', expected 2"
contains "$W/out" "raw-policy: expected warn, fail or ignore"

# ---- the project file's [gate] raw is gate's default; --raw / --strict-raw win over it -----------------
P=$W/proj
mkdir -p "$P/c" "$P/g"
cp "$SRC/corpus/scenarios/walkers-20.scn" "$P/c/"
cp "$SRC/corpus/golden/walkers-20.flrep" "$SRC/corpus/golden/walkers-20.hashlog.zst" "$P/g/"
for pol in fail warn ignore; do
  printf '[project]\nscenarios = c/*.scn\ngolden = g\n[engine]\nkind = sim_stub\n[gate]\nraw = %s\n' "$pol" \
    >"$P/detgate.ini"
  want=0; [ "$pol" = fail ] && want=1
  cd "$P" && expect $want "$DG" gate --inject libm-trig -q --json "$W/p-$pol.json"; cd "$SRC" || exit 1
done
contains "$W/p-warn.json" '"status": "warn"'
printf '[project]\nscenarios = c/*.scn\ngolden = g\n[engine]\nkind = sim_stub\n[gate]\nraw = fail\n' >"$P/detgate.ini"
cd "$P" && expect 0 "$DG" gate --inject libm-trig -q --raw warn; cd "$SRC" || exit 1
sed -i 's/^raw = fail$/raw = report/' "$P/detgate.ini"
cd "$P" && expect 2 "$DG" gate -q; cd "$SRC" || exit 1
contains "$W/err" "detgate.ini:7: syntax error: raw: expected warn, fail or ignore, found 'report'"

# ---- a process engine whose raw floats drift from tick 4 and whose quantized state follows at tick 7:
# the golden check's message names the tick the raw drift began ----
E=$W/cat-engine
mkdir -p "$E/s"
mk_stream() { # FILE RAW_FROM QUANT_FROM: body 1's x nudged by 1e-9 m from RAW_FROM, by 1 m from QUANT_FROM
  python3 - "$@" <<'PY'
import json, sys
out, raw_from, q_from = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(out, "w") as f:
    f.write(json.dumps({"detgate_states": 1, "scenario": "drift", "tick_rate_hz": 60}) + "\n")
    for t in range(12):
        x = 0.5 * t + (1e-9 if t >= raw_from else 0.0) + (1.0 if t >= q_from else 0.0)
        f.write(json.dumps({"tick": t, "entities": [{"id": 1, "pos": [x, 1.0, 0.0], "vel": [0.5, 0.0, 0.0]}]}) + "\n")
PY
}
mk_stream "$E/s/drift.jsonl" 99 99
printf '[project]\nscenarios = s/*.jsonl\ngolden = g\n[engine]\nrun = cat {scenario}\n' >"$E/detgate.ini"
cd "$E" && expect 0 "$DG" bless --all --reason "raw note test"; cd "$SRC" || exit 1
mk_stream "$E/s/drift.jsonl" 4 7
cd "$E" && expect 1 "$DG" gate -q --report-dir "$W/rawnote"; cd "$SRC" || exit 1
contains "$W/rawnote/report.txt" "first at tick 7; raw floats already differed earlier, from tick 4 (firstRawDivergentTick)"
jq_is "$W/rawnote/report.json" "$GOLDEN_CHECK[\"firstRawDivergentTick\"]" 4

echo "raw_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
