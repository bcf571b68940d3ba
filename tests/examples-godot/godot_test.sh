#!/usr/bin/env bash
# tests/examples-godot/godot_test.sh DETGATE SRC BUILD [PART] — gates examples/engines/godot (a Godot 3
# project run headless by Debian's godot3-server) through its own detgate.ini, checks that its
# recorder's floats are exact, and shows each pitfall failing the way a team sees it (exit 1 at the
# first tick, with entity and field) and its fix passing. godot3-server missing is a failure.
# PART: fixed (every check but the real-time ones), realtime (those only) or all (the default).
set -uo pipefail
detgate=$1 src=$2 build=$3 part=${4:-all}
case $part in fixed | realtime | all) ;; *) echo "godot_test: PART: expected fixed, realtime or all, found '$part'" >&2; exit 2 ;; esac
case $detgate in /*) ;; *) detgate=$PWD/$detgate ;; esac
src=$(cd "$src" && pwd) || exit 1
case $build in /*) ;; *) build=$PWD/$build ;; esac
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
rm -rf "$build" && mkdir -p "$build/out" "$build/home"
out=$build/out
export GODOT_HOME=$build/home   # run.sh: Godot's user data, away from the real HOME
unset GODOT_FLAGS GODOT_RECORDER

if ! command -v "${GODOT:-godot3-server}" >/dev/null; then
  echo "FAIL: godot3-server is not installed (run ci/setup-deps)" >&2
  exit 1
fi

# expect_rc WANT LOG CMD...: runs CMD with stdout+stderr to LOG, checks its exit code
expect_rc() {
  local want=$1 log=$2; shift 2
  "$@" >"$log" 2>&1; local rc=$?
  if [ "$rc" -ne "$want" ]; then fail "exit $rc (expected $want): $*"; sed -n 1,20p "$log" >&2; return 1; fi
}
# expect_rc_within N WANT LOG CMD...: of up to N attempts one exits WANT, and none exits anything but 0
# or WANT — for the real-time pitfalls, whose divergence is the wall clock's and so only likely per
# attempt (a loaded machine can interleave frames and physics ticks alike three runs in a row)
expect_rc_within() {
  local n=$1 want=$2 log=$3 i rc; shift 3
  for ((i = 1; i <= n; i++)); do
    "$@" >"$log" 2>&1; rc=$?
    [ "$rc" -eq "$want" ] && return 0
    if [ "$rc" -ne 0 ]; then fail "exit $rc (expected $want or 0): $*"; sed -n 1,20p "$log" >&2; return 1; fi
  done
  fail "$n attempts exited 0 (expected one to exit $want): $*"; return 1
}
# expect_in LOG TEXT: LOG contains TEXT
expect_in() { grep -qF -- "$2" "$1" || { fail "$1 lacks '$2'"; sed -n 1,12p "$1" >&2; }; }
# expect_changed LOG: the failure names an entity and a field (a row "ID changed FIELD A B ...")
expect_changed() {
  grep -Eq '^ +[0-9]+ +changed [a-z]+(\.[xyz])? ' "$1" || { fail "$1 names no entity and field"; sed -n 1,12p "$1" >&2; }
}
# run_scene SCENE OUT [options]: the recorder's stream of one scene
run_scene() { local scn=$1 o=$2; shift 2; "$src/run.sh" "$src/scenarios/$scn.tscn" "$@" >"$o" 2>"$o.err"; }
# first_raw_tick A.csv B.csv: the first tick whose rows differ in the recorder's own CSV (the
# expected first divergent tick, derived from Godot's output, not from detgate)
first_raw_tick() {
  awk -F, 'NR == FNR { a[FNR] = $0; next } FNR > 1 && a[FNR] != $0 { print $1; found = 1; exit }
           END { if (!found) print "none" }' "$1" "$2"
}
# copy_project NAME: a copy of the example (scenes, recorder, run.sh) without its goldens
copy_project() {
  local d=$out/$1
  mkdir -p "$d/golden" && cp -r "$src/project.godot" "$src/run.sh" "$src/detgate.ini" "$src/recorder" \
    "$src/scenario" "$src/scenarios" "$d/" && echo "$d"
}

# the checks at a fixed frame rate (--fixed-fps 60) and the recorder's own: the same outcome on
# any machine, however loaded
fixed_rate_checks() {
  # ---- 1. the example as committed: `cd examples/engines/godot && detgate gate` -------------------
  cd "$src" || exit 1
  expect_rc 0 "$out/gate.log" "$detgate" gate --report-dir "$out/gate" && expect_in "$out/gate.log" "PASS — 5 scenarios"
  cd "$out" || exit 1

  # ---- 2. the floats are exact: every hex float parsed back inside Godot is the captured value, and
  # each is a float32 (Godot 3's real_t) -------------------------------------------------------------
  expect_rc 0 "$out/check.log" run_scene projectile "$out/check.csv" --self-check
  python3 - "$out/check.csv" <<'PY' || fail "the stream holds a value that is not a float32"
import struct, sys
rows = [r for r in open(sys.argv[1]).read().split("\n") if r and r[0].isdigit()]
for r in rows:
    for t in r.split(",")[2:15]:   # pos, vel, rot and the declared angvel.x/y/z (then awake, kind)
        x = float.fromhex(t) if "x" in t else float(t)
        if struct.unpack("f", struct.pack("f", x))[0] != x:
            sys.exit("not a float32: " + t)
print(len(rows), "rows")
PY

  # ---- 3. get_instance_id() as the entity id (G59 section 11) -------------------------------------
  # Godot 3's instance ids are a counter: two fresh processes give the same ids, so a repeat passes ...
  GODOT_RECORDER='--ids instance' expect_rc 0 "$out/inst-repeat.log" "$detgate" verify pyramid \
    --project "$src/detgate.ini" --repeat 2 --report-dir "$out/inst-repeat"
  # ... but anything that creates one more object first moves every id: a golden blessed with instance
  # ids, and the next build adds a HUD node before the pyramid: every entity lost and added
  p=$(copy_project inst)
  GODOT_RECORDER='--ids instance' expect_rc 0 "$out/inst-bless.log" "$detgate" bless pyramid \
    --project "$p/detgate.ini" --reason "instance ids"
  sed -i 's/^\[node name="Pyramid"/[node name="HUD" type="Spatial" parent="."]\n\n&/' "$p/scenarios/pyramid.tscn"
  GODOT_RECORDER='--ids instance' expect_rc 1 "$out/inst-gate.log" "$detgate" gate --scenario pyramid \
    --project "$p/detgate.ini" --report-dir "$out/inst-gate" &&
    expect_in "$out/inst-gate.log" "golden: first divergent tick 0: 21 added, 21 lost"
  # the fix, stable ids: the same HUD node, gated against the committed goldens, passes
  cp "$src"/golden/* "$p/golden/"
  expect_rc 0 "$out/stable-hud.log" "$detgate" gate --scenario pyramid --project "$p/detgate.ini" \
    --report-dir "$out/stable-hud"
  # a level restarted in one process (reload_current_scene): instance ids never come back
  GODOT_RECORDER='--ids instance --runs 2' expect_rc 1 "$out/inst-runs.log" "$detgate" gate \
    --scenario pyramid --project "$src/detgate.ini" --report-dir "$out/inst-runs" &&
    expect_in "$out/inst-runs.log" "golden: first divergent tick 0: 21 added, 21 lost"

  # ---- 4. the restarted level with stable ids: the physics space is reused, and diverges --------
  run_scene pyramid "$out/one.csv"
  run_scene pyramid "$out/two.csv" --runs 2
  t=$(first_raw_tick "$out/one.csv" "$out/two.csv")
  [ "$t" != none ] || fail "a second run in the same process gave the first run's stream (expected a reused physics space to diverge)"
  # ... and nothing accumulates: a third run is the second (a reloaded level always records alike)
  run_scene pyramid "$out/three.csv" --runs 3
  cmp -s "$out/two.csv" "$out/three.csv" || fail "the third run in one process differs from the second"
  GODOT_RECORDER='--runs 2' expect_rc 1 "$out/runs.log" "$detgate" gate --scenario pyramid \
    --project "$src/detgate.ini" --report-dir "$out/runs" &&
    expect_in "$out/runs.log" "golden: first divergent tick $t:" && expect_changed "$out/runs.log"


  # ---- 5. a recording saved and played back twice: the recording, byte for byte ---------------------
  run_scene spawn-remove "$out/rec.csv" --save "$out/rec.replay"
  for i in 1 2; do
    run_scene spawn-remove "$out/replay$i.csv" --replay "$out/rec.replay"
    cmp -s "$out/rec.csv" "$out/replay$i.csv" || fail "playback $i differs from the recording"
  done
  GODOT_RECORDER="--replay $out/rec.replay" expect_rc 0 "$out/replay.log" "$detgate" gate \
    --scenario spawn-remove --project "$src/detgate.ini" --raw fail --report-dir "$out/replay"
  # the seed's apply_snapshot (position and rotation only): physics moves the bodies its own way
  run_scene spawn-remove "$out/seed.csv" --replay "$out/rec.replay" --apply seed
  t=$(first_raw_tick "$out/rec.csv" "$out/seed.csv")
  # (raw floats from that tick; at the declared 1/1024 m and 1/4096 rad/s a whole quantum at the same
  # tick, where 1/64 m showed it later: "raw floats already differed earlier" no longer applies)
  GODOT_RECORDER="--replay $out/rec.replay --apply seed" expect_rc 1 "$out/seed.log" "$detgate" gate \
    --scenario spawn-remove --project "$src/detgate.ini" --raw fail --report-dir "$out/seed" &&
    expect_in "$out/seed.log" "golden: first divergent tick $t:" && expect_changed "$out/seed.log" &&
    { grep -Eq "\"firstRawDivergentTick\": *$t([^0-9]|\$)" "$out/seed/report.json" ||
      fail "seed/report.json: firstRawDivergentTick is not $t"; }

  # ---- 6. bad options: the recorder says what and exits 3, the gate says could not test -------------
  expect_rc 3 "$out/bad.log" "$src/run.sh" "$src/scenarios/push.tscn" --ids random
  expect_in "$out/bad.log" "recording_manager: --ids: expected stable or instance, found 'random'"
  # CSV implies 60 Hz: a project stepping physics at another rate is refused, not written as 60 Hz
  p=$(copy_project hz)
  sed -i 's/^common\/physics_fps=60$/common\/physics_fps=120/' "$p/project.godot"
  grep -q 'physics_fps=120' "$p/project.godot" || fail "project.godot: no physics_fps=60 line to change"
  expect_rc 3 "$out/hz.log" "$p/run.sh" "$p/scenarios/push.tscn"
  expect_in "$out/hz.log" "recording_manager: the CSV state stream implies 60 Hz; physics/common/physics_fps is 120"
  GODOT_RECORDER='--ids random' expect_rc 125 "$out/bad-gate.log" "$detgate" gate --scenario push \
    --project "$src/detgate.ini" --report-dir "$out/bad-gate"
}

# the real-time checks: their divergence is the wall clock's (ctest runs them alone, RUN_SERIAL)
real_time_checks() {
  # ---- 7. frames vs physics ticks, in real time (no --fixed-fps) ------------------------------------
  # Godot 3 steps physics at a fixed 1/iterations_per_second whatever the frame rate: a real-time run
  # recorded in _physics_process is the --fixed-fps golden
  GODOT_FLAGS= expect_rc 0 "$out/realtime.log" "$detgate" gate --scenario push --project "$src/detgate.ini" \
    --report-dir "$out/realtime"
  # game logic pushed from _process with its variable delta: real-time runs differ (of three, one
  # at least: how they interleave frames and physics ticks is the wall clock's; up to five tries —
  # a loaded machine can lock frames to physics ticks one to one, and every run then agrees)
  GODOT_FLAGS= GODOT_RECORDER='--logic-in process' expect_rc_within 5 1 "$out/logic.log" "$detgate" verify push \
    --project "$src/detgate.ini" --repeat 3 --report-dir "$out/logic" &&
    expect_in "$out/logic.log" "first divergent tick" && expect_changed "$out/logic.log"
  # the recorder in _process: a tick is a frame, not a physics tick
  GODOT_FLAGS= GODOT_RECORDER='--record-in process' expect_rc_within 5 1 "$out/frames.log" "$detgate" verify push \
    --project "$src/detgate.ini" --repeat 3 --report-dir "$out/frames" &&
    expect_in "$out/frames.log" "first divergent tick" && expect_changed "$out/frames.log"
}

cd "$out" || exit 1
case $part in
  fixed) fixed_rate_checks ;;
  realtime) real_time_checks ;;
  all) fixed_rate_checks; real_time_checks ;;
esac

if [ "$fails" -ne 0 ]; then echo "godot_test: $fails failure(s)" >&2; exit 1; fi
echo "godot_test: all checks passed"
