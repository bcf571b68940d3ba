#!/usr/bin/env bash
# tests/harness/project_test.sh — a team's own engine through a project file (issue 13): detgate init,
# the project file's errors (file:line, nearest key, expected vs found), finding it upward and
# --project, then bless / gate / verify / record through the test engine (tests/engine/) as a process,
# every way that engine misbehaves (exit code, message, no file left behind, no child left running),
# a state stream on standard input, and the bundled corpus gated through the root detgate.ini.
# usage: project_test.sh DETGATE SOURCE_DIR TEST_ENGINE
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
ENGINE=$3
work_dir project
export TMPDIR=$W/tmp # detgate's temp recordings land here: "no file left behind" is checked on it
mkdir -p "$TMPDIR"
no_temp() { if [ -z "$(ls -A "$TMPDIR")" ]; then ok; else bad "files left behind ($1): $(ls -A "$TMPDIR")"; fi; }

# ---- the project file: every mistake refused with file:line -----------------------------------------
P=$W/bad
mkdir -p "$P"
bad_project() { # CONTENT EXPECTED-MESSAGE...
  printf '%b' "$1" >"$P/detgate.ini"
  shift
  expect 2 "$DG" gate --project "$P/detgate.ini"
  for m in "$@"; do contains "$W/err" "$m"; done
}
bad_project '[project]\nscenarioz = s\n' "detgate.ini:2" "unknown key 'scenarioz' in \[project\]" "nearest known key: \[project\] scenarios"
bad_project '[project]\nscenarios = s\n[engin]\nrun = x {scenario}\n' "detgate.ini:4" "unknown section \[engin\]" "nearest: \[engine\]"
bad_project '[project]\nformat = mp4\n' "detgate.ini:2" "format: expected flrep or rply, found 'mp4'"
bad_project '[project]\nkeyframe_interval = 7\n' "detgate.ini:2" "expected 15..3600 ticks, found '7'"
bad_project '[engine]\ntime_limit = soon\n' "detgate.ini:2" "time_limit: expected seconds > 0"
bad_project '[project]\ngolden = a\n\n# c\ngolden = b\n' "detgate.ini:5" "given twice (first on line 2)"
bad_project '[project]\nthis line has no equals sign\n' "detgate.ini:2" "expected \[section\], key = value"
bad_project '[engine]\nrun = ./sim --scenario {scenaro}\n' "detgate.ini:2" "unknown placeholder {scenaro}"
bad_project '[engine]\nrun = ./sim\n' "found no {scenario}"
bad_project '[engine]\nkind = process\n' "needs run = COMMAND"
bad_project '[engine]\nrun = ./sim {scenario}\n' "needs \[project\] scenarios"
bad_project '[build]\ncommand = make {target}\n' "unknown placeholder {target}"
bad_project 'scenarios = s\n' "detgate.ini:1" "before any section"
# a shell's own braces are not placeholders: this file loads (and then has no scenario folder)
bad_project '[project]\nscenarios = nowhere\n[engine]\nrun = ${SIM:-./sim} {scenario} | { cat; }\n' "no scenario (no file) in"
printf '[engine]\nrun = %s {scenario}\n' "$(head -c 5000 /dev/zero | tr '\0' x)" >"$P/detgate.ini" # not cut in two
expect 2 "$DG" gate --project "$P/detgate.ini"
contains "$W/err" "detgate.ini:2: syntax error: a line longer than 4094 bytes"
# values are verbatim: a ' ;' does not start a comment (a shell command needs it)
mkdir -p "$P/s"
printf '{"tick":0,"entities":[{"id":1,"pos":[1,2,3]}]}\n' >"$P/s/one.jsonl"
printf '[project]\nscenarios = s\n[engine]\nrun = true ; cat {scenario}\n' >"$P/detgate.ini"
expect 0 "$DG" record one -o "$W/one.flrep" --project "$P/detgate.ini"
printf '[project]\nscenarios = s\n[engine]\nrun = true {scenario}\n' >"$P/detgate.ini"
expect 125 "$DG" record one -o "$W/none.flrep" --project "$P/detgate.ini"
contains "$W/err" "the engine exited 0 without writing anything on its standard output"
# gate: the same failure is the scenario's "record" check (as a failure after the first tick is), untested
expect 125 "$DG" gate --project "$P/detgate.ini" --report-dir "$W/rep_none"
contains "$W/out" "ERROR one (flrep, 0 ticks, 0 entity-ticks) record: could not test: .*without writing anything"
printf '[project]\nscenarios = s\n[engine]\nrun = echo {\\"detgate_states\\":1} ; : {scenario}\n' >"$P/detgate.ini"
expect 125 "$DG" record one -o "$W/none.flrep" --project "$P/detgate.ini"
contains "$W/err" "the engine exited 0 without writing a tick"
rm -rf "$P/s"
expect 2 "$DG" gate --project "$P/detgate.ini"
contains "$W/err" "no scenario (no file) in"
expect 2 "$DG" gate --project "$W/nonexistent.ini"
contains "$W/err" "cannot open the project file"

# ---- detgate init ----------------------------------------------------------------------------------
T=$W/team
mkdir -p "$T/scenarios" "$T/src"
printf 'bodies 3\nticks 200\n' >"$T/scenarios/bounce.txt"
printf 'bodies 2\nticks 50\nformat csv\n' >"$T/scenarios/rows.txt"
cd "$T" || exit 1
expect 2 "$DG" init --run "$ENGINE" --scenarios scenarios # no {scenario}: refused, nothing written
contains "$W/err" "found no {scenario}"
[ ! -e detgate.ini ] && ok || bad "init left a project file it refused"
expect 0 "$DG" init --run "$ENGINE {scenario}" --scenarios scenarios
contains detgate.ini "run = $ENGINE {scenario}"
contains detgate.ini "^# "
expect 2 "$DG" init --run "$ENGINE {scenario}"
contains "$W/err" "already exists"
sed -i 's/^time_limit = 600/time_limit = 3/' detgate.ini

# ---- bless, gate, verify, record through the process engine ------------------------------------------
expect 125 "$DG" gate -q --report-dir "$W/r0"
contains "$W/r0/report.txt" "no golden for bounce in golden"
expect 0 "$DG" bless --all --reason "first goldens"
contains "$W/out" "blessed bounce: 200 ticks"
contains "$W/out" "blessed rows: 50 ticks"
contains golden/BLESS.log 'scenario=bounce first_changed_tick="new" ticks=200'
expect 0 "$DG" gate --report-dir "$W/r1"
contains "$W/r1/report.txt" "PASS bounce (flrep, 200 ticks, 600 entity-ticks)"
contains "$W/r1/report.txt" "PASS rows (flrep, 50 ticks, 100 entity-ticks)"
no_temp "gate"
expect 0 "$DG" gate --jobs 2 --report-dir "$W/r1j" -q # two engines at once: the same reports
cmp -s <(grep -v -E 'startedUnix|duration|"s"|M entity-ticks' "$W/r1/report.json") \
  <(grep -v -E 'startedUnix|duration|"s"|M entity-ticks' "$W/r1j/report.json") && ok || bad "gate --jobs 2 reported otherwise"
expect 0 "$DG" verify bounce -q
expect 0 "$DG" record rows -o "$W/rows.flrep" --hash-log "$W/rows.hashlog.zst"
expect 0 "$DG" diff golden/rows.flrep "$W/rows.flrep" -q
# found upward from a subfolder, and named with --project before or after the command
cd "$T/src" || exit 1
expect 0 "$DG" gate -q --scenario bounce --report-dir "$W/r2"
cd "$W" || exit 1
expect 0 "$DG" --project "$T/detgate.ini" gate -q --scenario rows --report-dir "$W/r3"
expect 0 "$DG" gate -q --scenario rows --report-dir "$W/r3" --project "$T/detgate.ini"
expect 2 "$DG" gate -q --scenario nosuch --project "$T/detgate.ini"
expect 2 "$DG" gate -q --inject fma --project "$T/detgate.ini" # sim_stub's switch: nothing to switch here
contains "$W/err" "--inject is sim_stub's switch"
expect 2 "$DG" verify bounce --inject fma --project "$T/detgate.ini"
cd "$T" || exit 1

# ---- the engine misbehaves: exit 125 (1 for a changed state), what went wrong, nothing left behind ----------
misbehave() { # MODE EXIT MESSAGE...
  local mode=$1 want=$2
  shift 2
  DG_TEST_ENGINE_MODE=$mode expect "$want" "$DG" gate --scenario bounce --report-dir "$W/m-$mode" -q
  for m in "$@"; do contains "$W/m-$mode/report.txt" "$m"; done
  no_temp "$mode"
}
misbehave exit3 125 "the engine exited with status 3 after 30 ticks" \
  'its stderr ended: engine: loading | engine: step failed at tick 30 | \\x1b\[31mgiving up'
misbehave segv 125 "the engine was killed by signal 11 (Segmentation fault" "after 30 ticks"
misbehave hang 125 "the engine ran past its time limit of 3 s (stopped) after 30 ticks"
rm -f "$W/orphan.pid"
DG_TEST_ENGINE_PIDFILE=$W/orphan.pid misbehave orphan 125 \
  "the engine exited (status 0) but its standard output stayed open until the time limit of 3 s: a process it started still held it"
process_gone "$W/orphan.pid" "the orphan" # the process left holding stdout is ended with the run
# ... and without a time limit: five silent seconds after the engine's exit end it, not forever
sed -i 's/^time_limit = 3/# time_limit = 3/' detgate.ini
rm -f "$W/orphan.pid"
DG_TEST_ENGINE_PIDFILE=$W/orphan.pid misbehave orphan 125 "the engine exited (status 0) but its standard output \
stayed open, nothing written on it for 5 s after: a process it started still held it (stopped; redirect that one's output) after 30 ticks"
process_gone "$W/orphan.pid" "the orphan (no time limit)"
sed -i 's/^# time_limit = 3/time_limit = 3/' detgate.ini
misbehave garbage 125 "the engine's stream is malformed after 30 ticks: bounce (stdout):32:1: syntax error: invalid JSON"
misbehave cut 125 "the engine's stream is malformed after 30 ticks: bounce (stdout):32:" "expected near end of file"
misbehave invalid 125 "bounce (stdout):[0-9]*:1: value out of range: tick 30, entity 1 (entities\[0\]): pos\[0\] = 1e+12"
misbehave nondet 1 "golden: first divergent tick 30"
misbehave flood 0 "PASS bounce"
[ "$(wc -c <"$W/m-flood/report.txt")" -lt 20000 ] && ok || bad "the stderr flood reached the report"
lacks "$W/m-flood/report.txt" "flood line"
# a bless that cannot record leaves the golden as it was
cp golden/bounce.hashlog.zst "$W/before.zst"
DG_TEST_ENGINE_MODE=exit3 expect 125 "$DG" bless bounce --reason "must not land"
cmp -s golden/bounce.hashlog.zst "$W/before.zst" && ok || bad "a failed bless changed the golden"
lacks golden/BLESS.log "must not land"
no_temp "bless"
ls golden | grep -q -v -E '^(BLESS.log|bounce.flrep|bounce.hashlog.zst|rows.flrep|rows.hashlog.zst)$' &&
  bad "golden holds a stray file: $(ls golden)" || ok
DG_TEST_ENGINE_MODE=exit3 expect 125 "$DG" record bounce -o "$W/never.flrep"
[ ! -e "$W/never.flrep" ] && ok || bad "record left a recording of a failed engine"

# an interrupt ends the engine too (its whole process group), and leaves nothing behind
sed -i 's/^time_limit = 3/time_limit = 60/' detgate.ini
interrupt_ends hang "the engine" "$W/r-int"
no_temp "interrupt"
# ... and what the engine left holding stdout after it exited (its group is ended, not only the engine)
interrupt_ends orphan "the orphan" "$W/r-int2"
no_temp "interrupt (orphan)"

# ---- verify --repeat N: every run must record what the first did -----------------------------------------
expect 0 "$DG" verify bounce --repeat 3 --json "$W/rep3.json" -q
contains "$W/rep3.json" "3 runs, 200 ticks each: every run recorded the same state"
DG_TEST_ENGINE_MODE=nondet expect 1 "$DG" verify bounce --repeat 3 --text "$W/rep-nd.txt" -q
contains "$W/rep-nd.txt" "bounce / repeat: first divergent tick 30: 1 entity changed"
contains "$W/rep-nd.txt" "run 2 recorded another state than run 1: 1 tick differs; first at tick 30"
contains "$W/rep-nd.txt" "1      changed pos.x"
# a run-to-run drift below the quantum (1e-15..1e-9 m at tick 30): WARN, named by entity, field and both
# raw values (the run-to-run raw floats are kept in a temporary version 3 hash log per run)
DG_TEST_ENGINE_MODE=nondet-raw expect 0 "$DG" verify bounce --repeat 2 --report-dir "$W/rep-raw" -q
contains "$W/rep-raw/report.txt" "^WARN bounce "
contains "$W/rep-raw/report.txt" "run 2: quantized state identical to run 1; raw floats differ from tick 30, first in entity 1, pos.x: raw A [-0-9.e]*, B [-0-9.e]* (B - A = "
contains "$W/rep-raw/report.json" '"firstRawDivergentTick": 30'
contains "$W/rep-raw/report.json" "tick 30 entity 1 pos.x: raw A "
DG_TEST_ENGINE_MODE=nondet-raw expect 1 "$DG" verify bounce --repeat 2 --raw fail -q
DG_TEST_ENGINE_MODE=exit3 DG_TEST_ENGINE_AT=150 expect 125 "$DG" verify bounce --repeat 2 -q
expect 2 "$DG" verify bounce --repeat 1
contains "$W/err" "expected a run count 2..1000, found '1'"
expect 2 "$DG" verify --states "$W/../team/golden/BLESS.log" --repeat 2
contains "$W/err" "a --states stream is the same every time"
no_temp "repeat"
cd "$SRC" || exit 1 # sim_stub through the root detgate.ini: a clock-seeded run differs from the next
expect 1 "$DG" verify events --repeat 2 --inject clock-seed -q --json "$W/rep-cs.json"
contains "$W/rep-cs.json" 'run 2 recorded another state than run 1'
expect 0 "$DG" verify events --repeat 2 -q
cd "$T" || exit 1

# ---- a state stream on standard input ------------------------------------------------------------------
"$ENGINE" scenarios/bounce.txt >"$W/bounce.jsonl"
expect 0 "$DG" verify --states - -q <"$W/bounce.jsonl"
expect 0 "$DG" record --states - -o "$W/stdin.flrep" <"$W/bounce.jsonl"
contains "$W/err" "200 ticks, 600 entity-ticks"
expect 0 "$DG" diff golden/bounce.flrep "$W/stdin.flrep" -q
printf 'tick,id,type,px,py,pz\n0,1,300,1,2,3\n' >"$W/t300.csv"
expect 2 "$DG" record --states - -o "$W/t300.flrep" <"$W/t300.csv"
contains "$W/err" "type/faction 300/0 is above 255 and not declared"
head -c 500 "$W/bounce.jsonl" >"$W/cut.jsonl"
expect 2 "$DG" verify --states - -q <"$W/cut.jsonl"
contains "$W/err" "stdin:3:"
no_temp "stdin"
# a zstd stream file, decompressed on the fly
zstd -q "$W/bounce.jsonl" -o "$W/bounce.jsonl.zst"
expect 0 "$DG" record --states "$W/bounce.jsonl.zst" -o "$W/zst.flrep"
expect 0 "$DG" diff golden/bounce.flrep "$W/zst.flrep" -q
expect 0 "$DG" verify --states "$W/bounce.jsonl.zst" -q
head -c 3000 "$W/bounce.jsonl.zst" >"$W/cut.jsonl.zst"
expect 2 "$DG" verify --states "$W/cut.jsonl.zst" -q
contains "$W/err" "zstd: the stream ends inside a frame (cut short)"
cp "$W/bounce.jsonl" "$W/plain.zst"
expect 2 "$DG" verify --states "$W/plain.zst" -q
contains "$W/err" "malformed input: zstd: expected the frame magic 28 b5 2f fd, found 7b 22 64 65"
no_temp "zst"

# ---- the binary state stream (docs/STATES-STREAM.md, "Binary") -----------------------------------------
printf 'bodies 3\nticks 200\nformat bin\n' >"$T/scenarios/binary.txt"
expect 0 "$DG" bless binary --reason "binary stream"
expect 0 "$DG" gate --scenario binary -q --report-dir "$W/r-bin"
expect 0 "$DG" record binary -o "$W/bin.flrep"
expect 0 "$DG" diff golden/bounce.hashlog.zst "$W/bin.flrep" -q # the same floats as the JSON Lines run
"$ENGINE" scenarios/binary.txt >"$W/b.bin"
expect 0 "$DG" verify --states "$W/b.bin" -q
expect 0 "$DG" verify --states - -q <"$W/b.bin"
head -c 500 "$W/b.bin" >"$W/bcut.bin"
expect 2 "$DG" verify --states "$W/bcut.bin" -q
contains "$W/err" "bcut.bin at byte 332: malformed input: binary state stream: the tick's entities: expected 294 bytes, found 168"
head -c -1 "$W/b.bin" >"$W/bnoend.bin"
expect 2 "$DG" verify --states - -q <"$W/bnoend.bin"
contains "$W/err" "a record kind: expected 1 bytes, found 0 (the stream ends)"
printf '\x89DGS\x03\x00\x00\x00\x3c\x00\x00\x00\x00' >"$W/bv2.bin"
expect 2 "$DG" verify --states "$W/bv2.bin" -q
contains "$W/err" "at byte 4: malformed input: binary state stream: version 3: this build reads versions 1 and 2"
printf '\x89DGS\x01\x00\x00\x00\x3c\x00\x00\x00\x01\x05\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00' >"$W/bid0.bin"
head -c 98 /dev/zero >>"$W/bid0.bin"
expect 2 "$DG" verify --states "$W/bid0.bin" -q
contains "$W/err" "tick 5: entity 0: id 0 (ids start at 1)"
DG_TEST_ENGINE_MODE=segv expect 125 "$DG" verify binary -q --text "$W/bsegv.txt"
contains "$W/bsegv.txt" "the engine was killed by signal 11 (Segmentation fault"
DG_TEST_ENGINE_MODE=nondet expect 1 "$DG" gate --scenario binary -q --report-dir "$W/r-bin-nd"
contains "$W/r-bin-nd/report.txt" "golden: first divergent tick 30"
no_temp "binary"

# ---- the bundled corpus gates through the repository's own detgate.ini, from any folder below it --------
cd "$SRC/corpus" || exit 1
expect 0 "$DG" gate --plan 2
contains "$W/out" "dogfight-40"
expect 0 "$DG" gate --scenario events -q --report-dir "$W/r-root"
cd "$SRC" || exit 1

echo "project_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
