#!/usr/bin/env bash
# tests/harness/bisect_cleanup_test.sh — what `detgate bisect` leaves behind when it is interrupted or
# fails, over a throwaway git history (no full build is needed: every case ends during the first
# configure): SIGINT/SIGTERM remove the worktree registration and the work folder (exit 128+sig); a
# work folder of an earlier killed run (its owner pid dead) is removed at the next start; a failed
# run keeps the log its message names.
# usage: bisect_cleanup_test.sh DETGATE SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
work_dir bisect-cleanup
private_tmp
worktrees() { git -C "$R" worktree list | wc -l; }

source_repo "$SRC"
c1=$(commit "base")
printf 'message(FATAL_ERROR "this revision does not configure")\n' >>"$R/CMakeLists.txt"
c2=$(commit "broken build")

# ---- interrupted: the worktree unregistered, the work folder gone, exit 128+sig ----------------------
for sig in INT TERM; do
  (cd "$R" && exec "$DG" bisect --good "$c1" --bad "$c2" --scenario corpus/scenarios/mars.scn -q \
    >"$W/out" 2>"$W/err") &
  pid=$!
  for _ in $(seq 300); do
    [ "$(worktrees)" -eq 2 ] && break
    sleep 0.1
  done
  if [ "$(worktrees)" -eq 2 ]; then ok; else bad "bisect never registered its worktree"; fi
  sleep 0.5
  kill -"$sig" $pid
  wait $pid
  code=$?
  want=$((128 + $(kill -l "$sig")))
  if [ $code -eq $want ]; then ok; else bad "bisect after SIG$sig exited $code, expected $want ($(cat "$W/err"))"; fi
  if [ "$(worktrees)" -eq 1 ]; then ok; else bad "SIG$sig left a worktree registered: $(git -C "$R" worktree list)"; fi
  if [ -z "$(ls -A "$TMPDIR")" ]; then ok; else bad "SIG$sig left in TMPDIR: $(ls -A "$TMPDIR")"; fi
  if pgrep -f "$W/" >/dev/null; then bad "SIG$sig left a child running: $(pgrep -af "$W/")"; else ok; fi
done

# ---- a stale work folder of a killed run (owner pid dead) is removed at the next start ----------------
stale=$TMPDIR/dg-bisect-stale1
mkdir -p "$stale"
sleep 0 &
dead=$!
wait $dead
echo "$dead" >"$stale/owner.pid"
git -C "$R" worktree add -q --detach "$stale/worktree" "$c1"
live=$TMPDIR/dg-bisect-live1 # a running bisect's folder (owner alive: this shell) stays
mkdir -p "$live"
echo $$ >"$live/owner.pid"
[ "$(worktrees)" -eq 2 ] && ok || bad "could not plant the stale worktree"

# ---- a failed run keeps its log where its message says ------------------------------------------------
mkdir -p "$W/cwd"
(cd "$W/cwd" && "$DG" bisect --repo "$R" --good "$c2" --bad "$c1" --scenario "$R/corpus/scenarios/mars.scn" -q \
  >"$W/out" 2>"$W/err")
code=$?
[ $code -eq 125 ] && ok || bad "bisect of an unbuildable good revision exited $code, expected 125"
if [ ! -e "$stale" ]; then ok; else bad "the stale work folder was not removed"; fi
if [ -e "$live" ]; then ok; else bad "a live run's work folder was removed"; fi
if [ "$(worktrees)" -eq 1 ]; then ok; else bad "the stale worktree is still registered: $(git -C "$R" worktree list)"; fi
grep -q "removed the work folder of an earlier run" "$W/err" && ok || bad "no message about the stale folder"
log=$(sed -n 's/.*(see \(.*\))$/\1/p' "$W/err" | head -1)
case "$log" in /*) ;; *) log=$W/cwd/$log ;; esac
if [ -f "$log" ]; then ok; else bad "the log named in '$(cat "$W/err")' does not exist"; fi
grep -q "this revision does not configure" "$log" && ok || bad "the kept log lacks the configure error"
rm -rf "$live"
if [ -z "$(ls -A "$TMPDIR")" ]; then ok; else bad "a failed bisect left in TMPDIR: $(ls -A "$TMPDIR")"; fi

# a --work folder that cannot be created is refused like any output: 2, before anything is built
touch "$W/plain-file"
(cd "$R" && "$DG" bisect --good "$c1" --bad "$c2" --scenario corpus/scenarios/mars.scn -q --work "$W/plain-file/w" \
  >"$W/out" 2>"$W/err")
code=$?
[ $code -eq 2 ] && ok || bad "bisect --work under a file exited $code, expected 2"
if [ "$(worktrees)" -eq 1 ]; then ok; else bad "a refused --work left a worktree"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
