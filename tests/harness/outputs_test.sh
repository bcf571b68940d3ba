#!/usr/bin/env bash
# tests/harness/outputs_test.sh — what detgate does to the files its outputs name: a device, a FIFO,
# `-` and a symbolic link are written through (never replaced), a CI step summary is appended to, an
# output naming an input or a missing folder is refused with 2 before the run, a full disk leaves
# no output and no temp (exit 125), and SIGINT/SIGTERM leave nothing under any output name.
# usage: outputs_test.sh DETGATE SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
W=$(mktemp -d "${TMPDIR:-/tmp}/dg-outputs-test.XXXXXX")
MNT=""
cleanup() {
  [ -n "$MNT" ] && umount "$MNT" 2>/dev/null
  rm -rf "$W"
}
trap cleanup EXIT
private_tmp
absent() { if [ ! -e "$1" ] && [ ! -L "$1" ]; then ok; else bad "$1 exists"; fi; }
# no temp file of ours anywhere under $W (dg-*, *.tmp-PID)
no_temps() {
  local left
  left=$(find "$W" \( -name 'dg-out-*' -o -name 'dg-*.flrep*' -o -name '*.tmp-*' -o -name '*.tmp' \) -print)
  if [ -z "$left" ]; then ok; else bad "temp files left ($1): $left"; fi
}
SCN=$SRC/corpus/scenarios
cd "$W" || exit 1

# ---- a character device, a FIFO, /dev/fd/N, `-`: written in place -------------------------------
if mknod -m 666 "$W/null" c 1 3 2>/dev/null; then
  expect 0 "$DG" verify "$SCN/mars.scn" -q --no-recovery --text "$W/null"
  if [ -c "$W/null" ]; then ok; else bad "--text on a character device replaced it: $(ls -l "$W/null")"; fi
  expect 0 "$DG" record "$SCN/mars.scn" -o "$W/null" --hash-log "$W/null"
  if [ -c "$W/null" ]; then ok; else bad "record -o on a character device replaced it"; fi
  ln -s "$W/null" "$W/null-link"
  expect 0 "$DG" verify "$SCN/mars.scn" -q --no-recovery --markdown "$W/null-link"
  if [ -L "$W/null-link" ] && [ -c "$W/null" ]; then ok; else bad "a link to a device was replaced"; fi
else
  echo "SKIP: mknod not permitted here (not root): the character-device cases did not run"
fi
mkfifo "$W/fifo"
timeout 60 cat "$W/fifo" >"$W/fifo.out" &
reader=$!
expect 0 "$DG" verify "$SCN/mars.scn" -q --no-recovery --json "$W/fifo"
wait $reader
if [ -p "$W/fifo" ]; then ok; else bad "--json on a FIFO replaced it"; fi
contains "$W/fifo.out" '"schemaVersion"'
touch "$W/fd3.xml"
ino=$(stat -c %i "$W/fd3.xml")
expect 0 bash -c "\"$DG\" verify \"$SCN/mars.scn\" -q --no-recovery --junit /dev/fd/3 3>\"$W/fd3.xml\""
contains "$W/fd3.xml" '<testsuites'
# the file behind the descriptor is written through it, not replaced by a rename
if [ "$(stat -c %i "$W/fd3.xml")" = "$ino" ]; then ok; else bad "--junit /dev/fd/3 replaced the file behind fd 3"; fi
# /dev/stdout redirected to a file is standard output, as `-`: the report, no summary, the file kept
touch "$W/both.txt"
ino=$(stat -c %i "$W/both.txt")
expect 0 bash -c "\"$DG\" verify \"$SCN/mars.scn\" --no-recovery --markdown /dev/stdout >\"$W/both.txt\""
if [ "$(head -1 "$W/both.txt")" = "## detgate verify: ✅ pass" ]; then ok; else bad "--markdown /dev/stdout: $(head -2 "$W/both.txt")"; fi
if [ "$(stat -c %i "$W/both.txt")" = "$ino" ]; then ok; else bad "--markdown /dev/stdout replaced the file behind stdout"; fi
# a descriptor sharing stdout's file: the summary first, the report after it
expect 0 bash -c "\"$DG\" verify \"$SCN/mars.scn\" --no-recovery --markdown /dev/fd/3 >\"$W/both.txt\" 3>&1"
contains "$W/both.txt" '^detgate verify'
contains "$W/both.txt" '^## detgate verify'
# `-` is standard output, for a report (then no text summary mixes in) and for -o
expect 0 "$DG" verify "$SCN/mars.scn" --no-recovery --json -
if head -c 1 "$W/out" | grep -q '{'; then ok; else bad "--json - did not start stdout with the JSON"; fi
expect 0 "$DG" record "$SCN/mars.scn" -o -
if [ "$(head -c 4 "$W/out")" = FLRP ]; then ok; else bad "record -o - did not write the recording to stdout"; fi
mv "$W/out" "$W/stdout.flrep"
expect 0 "$DG" info "$W/stdout.flrep"
expect 0 "$DG" hash "$W/stdout.flrep" -o -
contains "$W/out" '^0000000000 T '
# the reader of stdout goes away (SIGPIPE): the temp the recording was copied from goes too
"$DG" record "$SCN/dogfight-40.scn" -o - 2>/dev/null | head -c 4 >/dev/null
if [ -z "$(ls -A "$TMPDIR")" ]; then ok; else bad "record -o - | head left in TMPDIR: $(ls -A "$TMPDIR")"; fi
no_temps "devices, FIFO, stdout"

# ---- a symbolic link to a regular file: the target is replaced, the link stays -------------------
"$DG" record "$SCN/mars.scn" -o "$W/old.flrep" --keyframe-interval 60 2>/dev/null
ln -s old.flrep "$W/link.flrep"
expect 0 "$DG" record "$SCN/mars.scn" -o "$W/link.flrep" --keyframe-interval 30
if [ -L "$W/link.flrep" ] && [ "$(readlink "$W/link.flrep")" = old.flrep ]; then ok; else bad "the link was replaced"; fi
"$DG" info "$W/old.flrep" >"$W/info" 2>&1
contains "$W/info" 'keyframe interval: *30'

# ---- a CI step summary is appended to ----------------------------------------------------------
printf '# earlier step\n' >"$W/summary.md"
expect 0 "$DG" verify "$SCN/mars.scn" -q --no-recovery --markdown-append "$W/summary.md"
expect 0 "$DG" verify "$SCN/walkers-20.scn" -q --no-recovery --markdown-append "$W/summary.md"
if [ "$(head -1 "$W/summary.md")" = "# earlier step" ]; then ok; else bad "--markdown-append replaced the file"; fi
if [ "$(grep -c '^## detgate verify' "$W/summary.md")" -eq 2 ]; then ok; else bad "two appends did not give two reports"; fi
expect 0 "$DG" verify "$SCN/mars.scn" -q --no-recovery --markdown-append "$W/new-summary.md"
contains "$W/new-summary.md" '^## detgate verify'

# ---- an output naming an input, a missing or unwritable folder: 2 before the run -----------------
cp "$W/old.flrep" "$W/a.flrep"
cp "$W/old.flrep" "$W/b.flrep"
sum_a=$(cksum <"$W/a.flrep")
expect 2 "$DG" diff "$W/a.flrep" "$W/b.flrep" --json "$W/a.flrep"
contains "$W/err" "names the input"
expect 2 "$DG" hash "$W/a.flrep" -o "$W/a.flrep"
contains "$W/err" "names the input"
ln -s a.flrep "$W/a-link.flrep"
expect 2 "$DG" hash "$W/a.flrep" -o "$W/a-link.flrep"
expect 2 "$DG" record "$W/old.scn" -o "$W/x.flrep" 2>/dev/null
cp "$SCN/mars.scn" "$W/m.scn"
expect 2 "$DG" record "$W/m.scn" -o "$W/m.scn"
contains "$W/err" "names the input"
if [ "$(cksum <"$W/a.flrep")" = "$sum_a" ]; then ok; else bad "an input was overwritten"; fi
expect 2 "$DG" verify "$SCN/mars.scn" -q --json "$W/same.json" --text "$W/same.json"
contains "$W/err" "name the same file"
for cmd in "record $SCN/mars.scn -o $W/no/such/x.flrep" "record $SCN/mars.scn -o $W/x.flrep --hash-log $W/no/x.log" \
  "hash $W/a.flrep -o $W/no/x.log" "verify $SCN/mars.scn --keep $W/no/x.flrep" \
  "verify $SCN/mars.scn --junit $W/no/x.xml" "diff $W/a.flrep $W/b.flrep --html $W/no/x.html" \
  "gate --scenario mars --corpus $SCN --golden $SRC/corpus/golden --json $W/no/x.json"; do
  # shellcheck disable=SC2086
  expect 2 "$DG" $cmd
  contains "$W/err" "does not exist"
  if grep -q 'tick\|scenario (' "$W/out"; then bad "$cmd ran before refusing its output"; else ok; fi
done
absent "$W/x.flrep"
expect 2 "$DG" verify "$SCN/mars.scn" --json "$W"
contains "$W/err" "is a folder"
expect 2 "$DG" verify "$SCN/mars.scn" --json ""
contains "$W/err" "an empty path"
ln -s no/such/target.json "$W/dangling.json"
expect 2 "$DG" verify "$SCN/mars.scn" --json "$W/dangling.json"
contains "$W/err" "symbolic link to a missing file"
# the gate reads the scenarios and the goldens: a report may not overwrite one
mkdir -p "$W/gold"
cp "$SRC/corpus/golden/mars.flrep" "$SRC/corpus/golden/mars.hashlog.zst" "$W/gold/"
sum_g=$(cksum <"$W/gold/mars.flrep")
expect 2 "$DG" gate --scenario mars --corpus "$SCN" --golden "$W/gold" --json "$W/gold/mars.flrep"
contains "$W/err" "names the input"
if [ "$(cksum <"$W/gold/mars.flrep")" = "$sum_g" ]; then ok; else bad "gate overwrote a golden"; fi

# a read-only folder (a read-only tmpfs: even root cannot write there)
mkdir -p "$W/ro"
if mount -t tmpfs -o size=64k,ro tmpfs "$W/ro" 2>/dev/null; then
  MNT=$W/ro
  expect 2 "$DG" verify "$SCN/mars.scn" --junit "$W/ro/x.xml"
  contains "$W/err" "not writable"
  expect 2 "$DG" record "$SCN/mars.scn" -o "$W/ro/x.flrep"
  expect 2 "$DG" verify "$SCN/mars.scn" --report-dir "$W/ro/reports/r"
  contains "$W/err" "not writable"
  umount "$W/ro"
  MNT=""
else
  echo "SKIP: cannot mount a tmpfs here: the read-only folder case did not run"
fi
# a report folder is made when the reports are written: deep and new works, a refused run makes none
expect 0 "$DG" verify "$SCN/mars.scn" -q --no-recovery --report-dir "$W/new/deeper/r"
if [ -f "$W/new/deeper/r/report.json" ]; then ok; else bad "--report-dir of a new nested folder wrote nothing"; fi
expect 2 "$DG" verify "$SCN/mars.scn" -q --report-dir "$W/never/r" --json "$W/no/x.json"
absent "$W/never"
expect 2 "$DG" verify "$SCN/mars.scn" -q --report-dir "$W/a.flrep/r"
contains "$W/err" "is not a folder"
no_temps "refusals"

# ---- a full disk: exit 125 from every command, no output, no temp --------------------------------
# a small tmpfs (root); without mount the fd-level case still runs against /dev/full
mkdir -p "$W/full"
if mount -t tmpfs -o size=64k tmpfs "$W/full" 2>/dev/null; then
  MNT=$W/full
  expect 125 "$DG" record "$SCN/mars.scn" -o "$W/full/x.flrep"
  expect 125 "$DG" record "$SCN/mars.scn" -o "$W/rec-ok.flrep" --hash-log "$W/full/h.log"
  absent "$W/rec-ok.flrep"
  expect 125 "$DG" hash "$W/a.flrep" -o "$W/full/h.log"
  expect 125 "$DG" verify "$SCN/mars.scn" --no-recovery --keep "$W/full/k.flrep"
  absent "$W/full/k.flrep"
  if [ -z "$(ls -A "$W/full")" ]; then ok; else bad "a full disk left files: $(ls -A "$W/full")"; fi
  # the recovery copy in TMPDIR hits the full disk: the check errors, the copy is removed
  expect 125 env TMPDIR="$W/full" "$DG" verify "$SCN/mars.scn" --keep "$W/kept-mars.flrep"
  contains "$W/out" "recovery"
  if [ -z "$(ls -A "$W/full")" ]; then ok; else bad "a recovery copy was left in TMPDIR: $(ls -A "$W/full")"; fi
  umount "$W/full"
  # five report files of one page each on three pages: all or none
  mount -t tmpfs -o size=12k tmpfs "$W/full"
  expect 125 "$DG" gate --scenario mars --corpus "$SCN" --golden "$SRC/corpus/golden" -q --report-dir "$W/full/r"
  if [ -z "$(ls -A "$W/full/r" 2>/dev/null)" ]; then ok; else bad "gate --report-dir on a full disk left: $(ls -A "$W/full/r")"; fi
  umount "$W/full"
  MNT=""
else
  echo "SKIP: cannot mount a tmpfs here: the full-disk file cases did not run (the /dev/full one does)"
fi
if [ -w /dev/full ]; then
  expect 125 bash -c "\"$DG\" hash \"$W/a.flrep\" >/dev/full"
  # a report flag naming a full device: a private node where mknod works, so a regression that renames
  # over the device replaces a file in $W, never the machine's /dev/full
  full=/dev/full
  mknod -m 666 "$W/full" c 1 7 2>/dev/null && full=$W/full
  expect 125 "$DG" verify "$SCN/mars.scn" -q --no-recovery --json "$full"
  [ "$full" = /dev/full ] || { [ -c "$W/full" ] && ok || bad "verify --json FULLDEV replaced the device node"; }
  # standard output on a full disk: the command did not do what it says, on every command
  expect 125 bash -c "\"$DG\" dump \"$W/a.flrep\" --json >/dev/full"
  contains "$W/err" "writing standard output failed"
  expect 125 bash -c "\"$DG\" info \"$W/a.flrep\" >/dev/full"
  expect 125 bash -c "\"$DG\" verify \"$SCN/mars.scn\" --no-recovery >/dev/full"
  expect 125 bash -c "\"$DG\" record \"$SCN/mars.scn\" -o - >/dev/full"
  expect 125 bash -c "\"$DG\" diff \"$W/a.flrep\" \"$W/b.flrep\" --json - >/dev/full"
fi
no_temps "full disk"

# ---- SIGINT / SIGTERM: nothing under any output name, no temp ----------------------------------------
# waits (up to 20 s) until a file matching the glob $1 exists
wait_for() {
  for _ in $(seq 200); do
    # shellcheck disable=SC2086
    if compgen -G "$1" >/dev/null; then return 0; fi
    sleep 0.1
  done
  return 1
}
for sig in INT TERM; do
  rm -rf "$W/sig"
  mkdir -p "$W/sig"
  "$DG" record "$SCN/long-1h.scn" -o "$W/sig/X.flrep" --hash-log "$W/sig/H.log.zst" 2>/dev/null &
  pid=$!
  if wait_for "$W/sig/dg-out-*.zst"; then ok; else bad "record never created its hash log's temp"; fi
  sleep 0.5
  kill -"$sig" $pid
  wait $pid
  code=$?
  want=$((128 + $(kill -l "$sig")))
  if [ $code -eq $want ]; then ok; else bad "record after SIG$sig exited $code, expected $want"; fi
  absent "$W/sig/X.flrep"
  absent "$W/sig/H.log.zst"
  if [ -z "$(ls -A "$W/sig")" ]; then ok; else bad "SIG$sig left in the output folder: $(ls -A "$W/sig")"; fi
  # gate: the temp recording in TMPDIR, the reports never written
  "$DG" gate --scenario long-1h --corpus "$SCN" --golden "$SRC/corpus/golden" -q --report-dir "$W/sig/r" 2>/dev/null &
  pid=$!
  if wait_for "$TMPDIR/dg-long-1h-*"; then ok; else bad "gate never created its temp recording"; fi
  sleep 0.5
  kill -"$sig" $pid
  wait $pid
  code=$?
  if [ $code -eq $want ]; then ok; else bad "gate after SIG$sig exited $code, expected $want"; fi
  if [ ! -e "$W/sig/r" ]; then ok; else bad "gate after SIG$sig left its report folder: $(ls -A "$W/sig/r")"; fi
  if [ -z "$(ls -A "$TMPDIR")" ]; then ok; else bad "gate after SIG$sig left in TMPDIR: $(ls -A "$TMPDIR")"; fi
done
no_temps "signals"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
