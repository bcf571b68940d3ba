#!/usr/bin/env bash
# tests/harness/library_test.sh — a library engine (include/detgate/engine.h) through a project file with
# [engine] kind = library (issue 13): the project file's library errors, then bless / gate / verify
# --repeat / record / diff through the test library (tests/engine/test_lib_engine.c) run in
# `detgate engine-host`, every way it misbehaves (exit code, message, no file left behind, no child
# left running), a library that is not there, one with a wrong ABI version, one without the symbol, one without a step, and
# matrix and bisect building the library with the project's [build] command.
# usage: library_test.sh DETGATE SOURCE_DIR LIB_OK LIB_ABI LIB_NO_SYMBOL LIB_NO_STEP
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
work_dir library
export TMPDIR=$W/tmp # detgate's temp recordings land here: "no file left behind" is checked on it
mkdir -p "$TMPDIR"
T=$W/team
mkdir -p "$T/scenarios" "$T/lib"
cp "$3" "$T/lib/libengine.so"
cp "$4" "$T/lib/libabi.so"
cp "$5" "$T/lib/libnosym.so"
cp "$6" "$T/lib/libnostep.so"
no_temp() { if [ -z "$(ls -A "$TMPDIR")" ]; then ok; else bad "files left behind ($1): $(ls -A "$TMPDIR")"; fi; }

# ---- the project file: a library engine's keys checked ------------------------------------------------
P=$W/bad
mkdir -p "$P/s"
printf 'bodies 1\n' >"$P/s/one.txt"
bad_project() { # CONTENT EXPECTED-MESSAGE...
  printf '%b' "$1" >"$P/detgate.ini"
  shift
  expect 2 "$DG" gate --project "$P/detgate.ini"
  for m in "$@"; do contains "$W/err" "$m"; done
}
bad_project '[project]\nscenarios = s\n[engine]\nkind = library\n' "detgate.ini:4" "kind = library needs library = PATH"
bad_project '[project]\nscenarios = s\n[engine]\nkind = library\nlibrary = x.so\nrun = ./sim {scenario}\n' \
  "detgate.ini:6" "run is for kind = process; a library engine names its shared object with \[engine\] library"
bad_project '[project]\nscenarios = s\n[engine]\nlibrary = x.so\n' "detgate.ini:4" "library is for kind = library"
bad_project '[project]\nscenarios = s\n[engine]\nkind = library\nlibrary = a"b.so\n' "detgate.ini:5" \
  "library: expected a shared object's path"
bad_project '[engine]\nkind = library\nlibrary = x.so\n' "a library engine needs \[project\] scenarios"
bad_project '[engine]\nkind = plugin\n' "kind: expected sim_stub, process or library, found 'plugin'"
bad_project '[engine]\nlibary = x.so\n' "unknown key 'libary' in \[engine\] (nearest known key: \[engine\] library)"

# ---- bless, gate, verify, record, diff through the library engine --------------------------------------
printf 'bodies 3\nticks 200\n' >"$T/scenarios/bounce.txt"
printf 'bodies 2\nticks 50\n' >"$T/scenarios/rows.txt"
cat >"$T/detgate.ini" <<'INI'
[project]
scenarios = scenarios
[engine]
kind = library
# relative to this file
library = lib/libengine.so
time_limit = 3
INI
cd "$T/scenarios" || exit 1 # found upward; the library path is the project file's, not the current folder's
expect 0 "$DG" bless --all --reason "first goldens"
contains "$W/out" "blessed bounce: 200 ticks"
contains "$W/out" "blessed rows: 50 ticks"
cd "$T" || exit 1
contains golden/BLESS.log 'scenario=bounce first_changed_tick="new" ticks=200'
expect 0 "$DG" gate --report-dir "$W/r1"
contains "$W/r1/report.txt" "PASS bounce (flrep, 200 ticks, 600 entity-ticks)"
contains "$W/r1/report.txt" "PASS rows (flrep, 50 ticks, 100 entity-ticks)"
no_temp "gate"
expect 0 "$DG" gate --jobs 2 -q --report-dir "$W/r1j"
expect 0 "$DG" verify bounce --repeat 3 --json "$W/rep3.json" -q
contains "$W/rep3.json" "3 runs, 200 ticks each: every run recorded the same state"
expect 0 "$DG" record rows -o "$W/rows.flrep" --hash-log "$W/rows.hashlog.zst"
expect 0 "$DG" diff golden/rows.flrep "$W/rows.flrep" -q
expect 0 "$DG" diff golden/rows.hashlog.zst "$W/rows.hashlog.zst" -q
# the library's printf on stdout goes to stderr: the stream, and so the recording, is the same
DG_TEST_ENGINE_MODE=stdout expect 0 "$DG" gate -q --scenario bounce
lacks "$W/out" "engine log"
no_temp "stdout"

# ---- the library misbehaves: exit 125 (1 for a changed state), what went wrong, nothing left behind ----------
misbehave() { # MODE EXIT MESSAGE...
  local mode=$1 want=$2
  shift 2
  DG_TEST_ENGINE_MODE=$mode expect "$want" "$DG" gate --scenario bounce --report-dir "$W/m-$mode" -q
  for m in "$@"; do contains "$W/m-$mode/report.txt" "$m"; done
  no_temp "$mode"
}
misbehave openfail 125 "the engine exited with status 3 after 0 ticks" \
  "library engine: open failed: scenario refused on purpose"
misbehave error 125 "the engine exited with status 3 after 30 ticks" \
  'library engine: step failed: step failed at tick 30: \\x1b\[31msolver diverged\\x1b\[0m'
misbehave segv 125 "the engine was killed by signal 11 (Segmentation fault) after 30 ticks"
misbehave hang 125 "the engine ran past its time limit of 3 s (stopped) after 30 ticks"
misbehave invalid 125 "bounce (stdout) at byte [0-9]*: value out of range: tick 30 (its record at byte [0-9]*), entity 1: pos\[0\] = 1e+12: expected finite"
misbehave backwards 125 "the engine's stream is malformed after 30 ticks" "ticks must increase: expected a tick after 29, found 0"
misbehave nondet 1 "golden: first divergent tick 30"
# a bless that cannot record leaves the golden as it was; a failed record leaves no recording
cp golden/bounce.hashlog.zst "$W/before.zst"
DG_TEST_ENGINE_MODE=segv expect 125 "$DG" bless bounce --reason "must not land"
cmp -s golden/bounce.hashlog.zst "$W/before.zst" && ok || bad "a failed bless changed the golden"
lacks golden/BLESS.log "must not land"
no_temp "bless"
ls golden | grep -q -v -E '^(BLESS.log|bounce.flrep|bounce.hashlog.zst|rows.flrep|rows.hashlog.zst)$' &&
  bad "golden holds a stray file: $(ls golden)" || ok
DG_TEST_ENGINE_MODE=error expect 125 "$DG" record bounce -o "$W/never.flrep" --hash-log "$W/never.hashlog"
[ ! -e "$W/never.flrep" ] && [ ! -e "$W/never.hashlog" ] && ok || bad "record left a recording of a failed engine"
contains "$W/err" "library engine: step failed"

# ---- verify --repeat catches a run-to-run difference the library makes on purpose ---------------------
DG_TEST_ENGINE_MODE=nondet expect 1 "$DG" verify bounce --repeat 3 --text "$W/rep-nd.txt" -q
contains "$W/rep-nd.txt" "bounce / repeat: first divergent tick 30: 1 entity changed"
contains "$W/rep-nd.txt" "run 2 recorded another state than run 1: 170 ticks differ; first at tick 30"
contains "$W/rep-nd.txt" "1      changed pos.x"
no_temp "repeat"

# ---- libraries that cannot be used: refused on load, exit 125, each saying why -------------------------------
lib_project() { # LIBRARY
  sed -i "s|^library = .*|library = $1|" detgate.ini
}
lib_project lib/libabi.so
expect 125 "$DG" record bounce -o "$W/never.flrep"
contains "$W/err" "library engine: libabi.so has ABI version 99; this detgate takes 1"
lib_project lib/libnosym.so
expect 125 "$DG" gate -q --report-dir "$W/r-nosym"
contains "$W/r-nosym/report.txt" "library engine: libnosym.so exports no detgate_engine"
lib_project lib/libnostep.so
expect 125 "$DG" record bounce -o "$W/never.flrep"
contains "$W/err" "its stderr ended: library engine: libnostep.so: detgate_engine.step is NULL"
lib_project lib/missing.so
expect 125 "$DG" verify bounce -q
contains "$W/err" "the engine exited with status 4 after 0 ticks; its stderr ended: cannot load missing.so: cannot open shared object file"
[ ! -e "$W/never.flrep" ] && ok || bad "a refused library left a recording"
no_temp "refused libraries"
lib_project lib/libengine.so

# ---- an interrupt ends the engine-host too, and leaves nothing behind ---------------------------------
sed -i 's/^time_limit = 3/time_limit = 60/' detgate.ini
interrupt_ends hang "the library engine" "$W/r-int"
no_temp "interrupt"

# ---- matrix: the library built by the project's [build] command, loaded from {build} -----------------------
R=$W/repo
mkdir -p "$R/scenarios"
cp "$SRC/tests/engine/test_lib_engine.c" "$R/engine.c"
printf 'bodies 3\nticks 80\n' >"$R/scenarios/bounce.txt"
cat >"$R/detgate.ini" <<INI
[project]
scenarios = scenarios
[engine]
kind = library
library = \${DETGATE_BUILD:-./build}/libengine.so
time_limit = 30
[build]
command = {cc} -O2 -fPIC -shared \$CFLAGS -I'$SRC/include' -o {build}/libengine.so engine.c
INI
(cd "$R" && "$DG" matrix --scenario bounce --configs 'cc:-O1:off,cc:-O1 -DTEST_LIB_PERTURB:off' --work "$W/mw" \
  >"$W/out" 2>"$W/err")
rc=$?
[ $rc -eq 1 ] && ok || bad "matrix with -DTEST_LIB_PERTURB: exit $rc, expected 1 ($(head -c 600 "$W/err"))"
contains "$W/out" "2 classes"
contains "$W/out" "cc -O1 -DTEST_LIB_PERTURB off  50"
(cd "$R" && "$DG" matrix --scenario bounce --configs 'cc:-O1:off,cc:-O2:off' >"$W/out" 2>"$W/err")
rc=$?
[ $rc -eq 0 ] && ok || bad "matrix of two equal builds: exit $rc, expected 0 ($(head -c 600 "$W/err"))"

# ---- bisect: the library's own history, built at each revision, loaded from that revision's {build} ---------
git -C "$R" init -q
c1=$(commit "engine: bouncing bodies")
sed -i '1i // a comment: nothing changes' "$R/engine.c"
c2=$(commit "engine: a comment")
echo 'this is not C;' >>"$R/engine.c"
c3=$(commit "engine: half-done refactor (does not build)")
sed -i '$d' "$R/engine.c"
c4=$(commit "engine: refactor finished")
sed -i '1i #define TEST_LIB_PERTURB 1' "$R/engine.c" # body 1 moves from tick 50 on
c5=$(commit "engine: faster integrator")
echo notes >"$R/NOTES.txt"
c6=$(commit "docs: notes")
(cd "$R" && "$DG" bisect --good "$c1" --bad "$c6" --scenario bounce --report-dir "$W/brep" -q --work "$W/bw" \
  >"$W/out" 2>"$W/err")
rc=$?
[ $rc -eq 1 ] && ok || bad "bisect of a library engine: exit $rc, expected 1 ($(head -c 600 "$W/err"))"
contains "$W/out" "first bad commit: $c5 engine: faster integrator"
contains "$W/out" "first divergent tick: 50"
contains "$W/brep/report.txt" "changed pos.x"
contains "$W/bw/steps.txt" "^$c3 125 "
[ -f "$W/bw/build-$c5/libengine.so" ] && ok || bad "no library built in build-$c5"
[ -z "$(git -C "$R" status --porcelain)" ] && ok || bad "bisect touched the working tree"

echo "library_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
