#!/usr/bin/env bash
# tests/reports/follow_roundtrip_test.sh — what the reports gained for issue 16 survives detgate
# merge (which rebuilds a report from its JSON): the followed entities and why, the spread, the
# rotation rows' quaternions. A 1/1 gate report merged alone renders every kind byte for byte.
# Usage: follow_roundtrip_test.sh DETGATE SOURCE_DIR
set -u
DG=$1
SRC=$2
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
cd "$SRC" || exit 2
for field in pos.x rot.w; do
  d=$W/$field
  "$DG" gate --scenario dogfight-40 --inject "bitflip:tick=300,entity=7,field=$field,bit=45" --report-dir "$d" -q
  [ $? -eq 1 ] || bad "$field: gate with a bit flip did not exit 1"
  python3 - "$d/report.json" "$field" <<'PY' || bad "$field: the JSON lacks what the HTML follows"
import json, sys
doc = json.load(open(sys.argv[1]))
c = [c for c in doc['scenarios'][0]['checks'] if c['name'] == 'golden'][0]
t = c['trajectory']
assert t['entityId'] == 7 and t['firstTick'] == 300, t['entityId']
assert t['largest']['field'] == sys.argv[2].split('.')[0], t['largest']
assert all(m['firstTick'] >= 300 for m in c['moreTrajectories'])
if sys.argv[2] == 'pos.x':  # a 16 km jump: the dogfight around it diverges too
    assert len(c['moreTrajectories']) == 15 and c['trajectoriesCut'] == 0, len(c['moreTrajectories'])
steps = c['spread']['steps']
assert steps[0] == {'tick': 300, 'entities': 1}, steps[0]
assert all(a['tick'] < b['tick'] and a['entities'] < b['entities'] for a, b in zip(steps, steps[1:]))
if sys.argv[2] == 'rot.w':
    f = c['ticks'][0]['entities'][0]['fields'][0]
    assert f['field'] == 'rot' and len(f['quatA']) == 4 and len(f['quatB']) == 4, f
PY
  "$DG" merge "$d/report.json" --report-dir "$d-again" -q
  [ $? -eq 1 ] || bad "$field: merge of a failing report did not exit 1"
  for f in report.txt report.json report.xml report.md report.html; do
    cmp -s "$d/$f" "$d-again/$f" || bad "$field: $f read back by merge differs from the original"
  done
done
[ $fails -eq 0 ] && echo "follow_roundtrip_test: all checks passed" && exit 0
exit 1
