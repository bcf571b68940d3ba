# tests/lib.sh — the pass/fail counters, checks and prologue (work folder, private TMPDIR, a throwaway
# git repository of the source tree) the shell tests share (source it; needs $W for expect).
# Each check counts one pass or prints "FAIL: what" and counts one failure; a script ends with
#   echo "NAME: $pass passed, $fail failed"; [ "$fail" -eq 0 ]
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect CODE CMD... — runs CMD (stdout to $W/out, stderr to $W/err) and checks its exit code
expect() {
  local want=$1
  shift
  "$@" >"$W/out" 2>"$W/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then ok; else bad "exit $got, expected $want: $* ($(head -c 400 "$W/err"))"; fi
}

# contains FILE REGEX / lacks FILE REGEX (grep's basic regular expressions)
contains() { if grep -q -- "$2" "$1"; then ok; else bad "$1 lacks '$2': $(head -c 600 "$1")"; fi; }
lacks() { if grep -q -- "$2" "$1"; then bad "$1 has '$2': $(grep -m1 -- "$2" "$1")"; else ok; fi; }
# contains_text FILE TEXT / lacks_text FILE TEXT (TEXT taken literally)
contains_text() { if grep -qF -- "$2" "$1"; then ok; else bad "$1 lacks '$2': $(head -c 600 "$1")"; fi; }
lacks_text() { if grep -qF -- "$2" "$1"; then bad "$1 has '$2': $(grep -m1 -F -- "$2" "$1")"; else ok; fi; }

same_file() { if cmp -s "$1" "$2"; then ok; else bad "$1 and $2 differ"; fi; }

# process_gone PIDFILE WHAT — the process whose pid PIDFILE holds no longer runs: gone, or a zombie
# waiting for an init that may not reap (polled for up to 2 s)
process_gone() {
  local st=""
  for _ in $(seq 40); do
    st=$(ps -o stat= -p "$(cat "$1" 2>/dev/null || echo 0)" 2>/dev/null)
    if [ -s "$1" ] && { [ -z "$st" ] || [ "${st#Z}" != "$st" ]; }; then ok; return; fi
    sleep 0.05
  done
  bad "$2 outlived detgate ($st)"
}

# interrupt_ends MODE WHAT REPORT_DIR — `detgate gate` run with the test engine in MODE until the
# engine has written its pid to $W/MODE.pid, then SIGINT: detgate exits non-zero, writes no report, and
# the process WHAT names (the engine, or what it left holding stdout) no longer runs
interrupt_ends() {
  local mode=$1 what=$2 dir=$3 pidf=$W/$1.pid dg
  rm -f "$pidf"
  DG_TEST_ENGINE_MODE=$mode DG_TEST_ENGINE_PIDFILE=$pidf "$DG" gate -q --report-dir "$dir" &
  dg=$!
  for _ in $(seq 100); do [ -s "$pidf" ] && break; sleep 0.1; done
  sleep 0.2 # an orphan's engine has exited by now: only what it left holds the pipe
  kill -INT $dg
  wait $dg
  [ $? -ne 0 ] && ok || bad "an interrupted gate ($mode) exited 0"
  process_gone "$pidf" "$what (interrupted, $mode)"
  [ ! -e "$dir" ] && ok || bad "an interrupted gate ($mode) wrote a report"
}

# ---- the prologue the tests share -----------------------------------------------------------------------
# work_dir NAME — W: a fresh folder ${TMPDIR:-/tmp}/dg-NAME-test.XXXXXX, removed when the script exits
work_dir() {
  W=$(mktemp -d "${TMPDIR:-/tmp}/dg-$1-test.XXXXXX") || exit 1
  trap 'rm -rf "$W"' EXIT
}
# private_tmp — TMPDIR is $W/tmp from here on, so a test can see what a command left behind in it
private_tmp() {
  export TMPDIR=$W/tmp
  mkdir -p "$TMPDIR"
}
# source_repo SRC [PATH...] — R ($W/repo): a new git repository (no commit yet) holding the modules
# detgate is built from as they are now in SRC (tracked files and untracked ones git does not ignore),
# and PATH... too
source_repo() {
  local src=$1
  shift
  R=$W/repo
  mkdir -p "$R"
  (cd "$src" && git ls-files -z --cached --others --exclude-standard -- CMakeLists.txt CMakePresets.json cmake base \
    codec hash sim_stub reports harness include corpus/scenarios "$@") |
    (cd "$src" && tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -C "$R" -xf -
  git -C "$R" init -q
}
# commit MESSAGE — commits all of $R; prints the new HEAD
commit() {
  git -C "$R" add -A && git -C "$R" -c user.name=t -c user.email=t@example.com commit -q -m "$1" &&
    git -C "$R" rev-parse HEAD
}
# same_report A B — two JSON reports are equal once the timing (durations, rates in messages) is cut
same_report() {
  python3 - "$1" "$2" <<'PY' && ok || bad "reports $1 and $2 differ beyond timing"
import json, re, sys
def norm(v):
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items() if k not in ("durationSeconds", "startedUnix")}
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, str):
        return re.sub(r"[0-9.]+ (s|M entity-ticks/s)\b", "T", v)
    return v
a, b = (norm(json.load(open(p))) for p in sys.argv[1:3])
sys.exit(0 if a == b and a["scenarios"] else 1)
PY
}
