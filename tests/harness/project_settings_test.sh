#!/usr/bin/env bash
# tests/harness/project_settings_test.sh — every workflow takes the project file's settings for a team's
# engine, as it does for sim_stub, and an option given wins over the file (issue 13, "What a team does"
# 3): verify and bless take [gate] jobs (the checks follow the recording only with 2 or more threads:
# DETGATE_DEBUG_VERIFY says which way they went), verify [gate] raw; bisect takes [project] format and
# [gate] raw; matrix takes [gate] raw. The engine is the test engine (tests/engine/test_engine.c), in
# a throwaway git repository for bisect and matrix.
# usage: project_settings_test.sh DETGATE SOURCE_DIR TEST_ENGINE
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
ENGINE=$3
work_dir project-settings
private_tmp

# ---- verify: [gate] jobs, --jobs over it -------------------------------------------------------------
T=$W/team
mkdir -p "$T/scenarios"
printf 'bodies 3\nticks 200\n' >"$T/scenarios/bounce.txt"
printf 'bodies 3\nticks 200\nmode nondet-raw\nat 30\n' >"$T/scenarios/subq.txt"
cat >"$T/detgate.ini" <<INI
[project]
scenarios = scenarios
[engine]
run = $ENGINE {scenario}
time_limit = 30
[gate]
jobs = 2
raw = fail
INI
cd "$T" || exit 1
expect 0 env DETGATE_DEBUG_VERIFY=1 "$DG" verify bounce -q
contains "$W/err" "verify-debug: bounce: " # followed: the project's 2 threads
expect 0 env DETGATE_DEBUG_VERIFY=1 "$DG" verify bounce -q --jobs 1
lacks "$W/err" "verify-debug:" # one thread: nothing follows the recording

# ---- bless: [gate] jobs, --jobs over it (threads inside each recording and its checks, as verify's) -----
expect 0 env DETGATE_DEBUG_VERIFY=1 "$DG" bless bounce --reason "jobs" --golden "$W/g-bless"
contains "$W/err" "verify-debug: bounce: " # followed: the project's 2 threads
[ -s "$W/g-bless/bounce.hashlog.zst" ] && ok || bad "bless wrote no golden"
expect 0 env DETGATE_DEBUG_VERIFY=1 "$DG" bless bounce --reason "jobs" --golden "$W/g-bless" --jobs 1
lacks "$W/err" "verify-debug:"
expect 2 "$DG" bless bounce --reason "jobs" --golden "$W/g-bless" --jobs x
contains "$W/err" "bless: --jobs: expected 0 (one per CPU) or 1..32, found 'x'"

# ---- verify: [gate] raw, --raw over it ----------------------------------------------------------------
expect 1 "$DG" verify subq --repeat 2 -q # another run has other raw floats: a failure under the project's fail
expect 0 "$DG" verify subq --repeat 2 --raw warn -q
sed 's/^raw = fail/raw = warn/' "$T/detgate.ini" >"$T/warn.ini"
expect 0 "$DG" verify subq --repeat 2 -q --project "$T/warn.ini"

# ---- bisect and matrix of the engine's repository: [project] format, [gate] raw -----------------------
R=$W/repo
mkdir -p "$R/scenarios"
cp "$SRC/tests/engine/test_engine.c" "$R/engine.c"
# matrix: a build with -DSUBQ has other raw floats from tick 30 on, the same quantized state
sed -i 's|^        double jitter = 0;$|        double jitter = 0;\n#ifdef SUBQ\n        jitter = t >= 30 ? 1e-9 : 0;\n#endif|' "$R/engine.c"
grep -q '#ifdef SUBQ' "$R/engine.c" && ok || bad "could not plant SUBQ"
printf 'bodies 3\nticks 80\n' >"$R/scenarios/bounce.txt"
cat >"$R/detgate.ini" <<'INI'
[project]
scenarios = scenarios
format = rply
[engine]
run = ${DETGATE_BUILD:-./build}/engine {scenario}
time_limit = 30
[build]
command = {cc} -O2 $CFLAGS -o {build}/engine engine.c
[gate]
raw = fail
INI
git -C "$R" init -q
c1=$(commit "engine")
plant() { # DELTA: body 2's x position moves by DELTA from tick 30 on
  sed -i "s|^        double x = b\[i\].p\[0\] + (i == 0 ? jitter : 0);$|        double x = b[i].p[0] + (i == 0 ? jitter : 0) + (i == 1 \&\& t >= 30 ? $1 : 0);|" "$R/engine.c"
  grep -q "t >= 30 ? $1" "$R/engine.c" && ok || bad "could not plant $1"
}
plant 0.5
c2=$(commit "engine: a change from tick 30")
git -C "$R" checkout -q -b raw "$c1"
plant 1e-9
c2r=$(commit "engine: a sub-quantum change from tick 30")
git -C "$R" checkout -q master 2>/dev/null || git -C "$R" checkout -q main 2>/dev/null || git -C "$R" checkout -q "$c2"
sed 's/^format = rply/format = flrep/' "$R/detgate.ini" >"$R/flrep.ini" # untracked: read from this tree

cd "$R" || exit 1
expect 1 "$DG" bisect --good "$c1" --bad "$c2" --scenario bounce --work "$W/bw" -q
contains "$W/out" "first bad commit: $c2"
[ -e "$W/bw/good.rply" ] && ok || bad "bisect did not record the project's format (rply): $(ls "$W/bw")"
[ ! -e "$W/bw/good.flrep" ] && ok || bad "bisect recorded flrep under format = rply"
expect 1 "$DG" bisect --good "$c1" --bad "$c2" --scenario bounce --work "$W/bw2" --format flrep -q
[ -e "$W/bw2/good.flrep" ] && ok || bad "--format flrep did not win over the project's rply: $(ls "$W/bw2")"
# a raw-only drift: bad under the project's raw = fail, nothing to bisect under --raw warn
expect 1 "$DG" bisect --good "$c1" --bad "$c2r" --scenario bounce --project flrep.ini -q
contains "$W/out" "first bad commit: $c2r"
expect 0 "$DG" bisect --good "$c1" --bad "$c2r" --scenario bounce --project flrep.ini --raw warn -q
contains "$W/err" "its raw floats differ from tick 30"

# matrix: a configuration with other raw floats fails under the project's raw = fail
expect 1 "$DG" matrix --scenario bounce --configs 'cc:-O1:off,cc:-O1 -DSUBQ:off' --project flrep.ini -q
expect 0 "$DG" matrix --scenario bounce --configs 'cc:-O1:off,cc:-O1 -DSUBQ:off' --project flrep.ini --raw warn -q
[ -z "$(git -C "$R" status --porcelain | grep -v flrep.ini)" ] && ok || bad "the source tree was touched"

echo "project_settings: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
