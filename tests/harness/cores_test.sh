#!/usr/bin/env bash
# tests/harness/cores_test.sh — the thread count changes nothing but the time: `hash --jobs K` logs
# (with and without --entities, to stdout and to a .zst) are byte-identical for K = 1, 2 and 7; so
# are the error and the output for a recording with a damaged chunk; `verify`, `gate` and `diff`
# JSON reports are identical once timing is cut, with and without an injected replay-side fault,
# whether verify's file checks followed the recording (--jobs > 1) or ran on the finished file.
# usage: cores_test.sh DETGATE SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
G=$SRC/corpus/golden
work_dir cores

# ---- hash: byte-identical logs ------------------------------------------------------------------
# churn (entities come and go across chunk edges), walkers-20 (75 chunks), events (event lists)
for name in churn walkers-20 events; do
  for k in 1 2 7; do
    expect 0 "$DG" hash "$G/$name.flrep" --jobs "$k"
    mv "$W/out" "$W/$name.$k.log"
    expect 0 "$DG" hash "$G/$name.flrep" --entities -j "$k"
    mv "$W/out" "$W/$name.e$k.log"
    expect 0 "$DG" hash "$G/$name.flrep" --entities --jobs "$k" -o "$W/$name.e$k.log.zst"
  done
  for k in 2 7; do
    same_file "$W/$name.1.log" "$W/$name.$k.log"
    same_file "$W/$name.e1.log" "$W/$name.e$k.log"
    same_file "$W/$name.e1.log.zst" "$W/$name.e$k.log.zst"
  done
  # the tick lines written from the replayed stream are those the entity pass writes
  grep -v ' e ' "$W/$name.e1.log" | sed 's/entities=1/entities=0/' >"$W/$name.t.log"
  same_file "$W/$name.1.log" "$W/$name.t.log"
  # and they are the golden's hashes (the golden log also carries raw float hashes)
  expect 0 "$DG" diff "$W/$name.1.log" "$G/$name.hashlog.zst" -q
done

# ---- hash: a damaged chunk gives the same error, and no log, whatever the thread count ------------
size=$(stat -c %s "$G/walkers-20.flrep")
for at in $((size / 5)) $((size / 2)) $((size * 9 / 10)); do
  cp "$G/walkers-20.flrep" "$W/bad.flrep"
  printf '\x55\xaa\x55\xaa' | dd of="$W/bad.flrep" bs=1 seek="$at" conv=notrunc 2>/dev/null
  for k in 1 2 7; do
    expect 2 "$DG" hash "$W/bad.flrep" --entities --jobs "$k"
    mv "$W/err" "$W/bad.$k.err"
    [ -s "$W/out" ] && bad "hash of a damaged file printed a log (--jobs $k)" || ok
  done
  # a log file is written in one pass, to a temp name: the same error, and no file left
  expect 2 "$DG" hash "$W/bad.flrep" --jobs 2 -o "$W/bad.log.zst"
  same_file "$W/bad.1.err" "$W/err"
  [ -z "$(ls "$W" | grep '^bad\.log')" ] && ok || bad "hash -o of a damaged file left $(ls "$W" | grep '^bad\.log')"
  [ -s "$W/bad.1.err" ] && ok || bad "no error for a chunk damaged at byte $at"
  same_file "$W/bad.1.err" "$W/bad.2.err"
  same_file "$W/bad.1.err" "$W/bad.7.err"
done
expect 2 "$DG" hash "$G/churn.flrep" --jobs 33
grep -q -- "--jobs: expected 0 (one per CPU) or 1..32" "$W/err" && ok || bad "hash --jobs 33: $(cat "$W/err")"

# ---- verify: the same report with 1, 2 and 7 threads, faults included -----------------------------
for fault in "" "--replay-fault double-delta:130" "--replay-fault double-delta:485" "--replay-fault seek-drop-delta:239"; do
  want=0
  [ -n "$fault" ] && want=1
  for k in 1 2 7; do
    # shellcheck disable=SC2086
    expect "$want" "$DG" verify dogfight-40 --keyframe-interval 60 $fault --jobs "$k" --json "$W/v$k.json" -q
  done
  same_report "$W/v1.json" "$W/v2.json"
  same_report "$W/v1.json" "$W/v7.json"
done
expect 0 "$DG" verify churn --no-recovery --jobs 2 --json "$W/vn2.json" -q
expect 0 "$DG" verify churn --no-recovery --jobs 1 --json "$W/vn1.json" -q
same_report "$W/vn1.json" "$W/vn2.json"

# ---- verify beside the recording: with a spare thread the file checks follow the file as it is
# written (harness/verify_follow.c); the report is the one of the checks on the finished file ---------
for k in 1 2 7; do
  expect 0 env DETGATE_DEBUG_VERIFY=1 "$DG" verify walkers-20 --jobs "$k" --json "$W/w$k.json" -q
  mv "$W/err" "$W/w$k.err"
done
grep -q "verify-debug" "$W/w1.err" && bad "--jobs 1 followed the recording: $(cat "$W/w1.err")" || ok
for k in 2 7; do
  grep -qx "verify-debug: walkers-20: checked beside the recording" "$W/w$k.err" && ok ||
    bad "--jobs $k did not check beside the recording: $(cat "$W/w$k.err")"
  same_report "$W/w1.json" "$W/w$k.json"
done
# a seek fault at a chunk's last tick: the follower sees it, the checks of the finished file report it
expect 1 env DETGATE_DEBUG_VERIFY=1 "$DG" verify dogfight-40 --keyframe-interval 60 --replay-fault seek-drop-delta:239 \
  --jobs 2 -q
grep -q "checks on the finished file: a seek to tick 239 (chunk 3) of the growing recording" "$W/err" && ok ||
  bad "seek-drop-delta:239: the follower did not see it: $(cat "$W/err")"
# the same fault where the follower seeks no edge (--seek-edges: the capped sample, every edge here, is
# seeked on the finished file, forwards and rewinding on two readers at once): found there, and the
# report is --jobs 1's
for k in 1 2; do
  expect 1 env DETGATE_DEBUG_VERIFY=1 "$DG" verify dogfight-40 --keyframe-interval 60 \
    --replay-fault seek-drop-delta:239 --seek-edges 1000 --jobs "$k" --json "$W/se$k.json" -q
  mv "$W/err" "$W/se$k.err"
done
grep -q "checks on the finished file: a seek to tick 239 of the finished recording differs" "$W/se2.err" && ok ||
  bad "seek-drop-delta:239 --seek-edges: the finished file's seeks did not see it: $(cat "$W/se2.err")"
same_report "$W/se1.json" "$W/se2.json"
# a replay-side fault: the follower's playback is wrong, the checks of the finished file say where
# (the report is compared with --jobs 1's above)
expect 1 env DETGATE_DEBUG_VERIFY=1 "$DG" verify dogfight-40 --replay-fault double-delta:130 --jobs 2 -q
grep -q "checks on the finished file: the growing recording's playback differs from the record side" "$W/err" &&
  ok || bad "double-delta:130: the follower did not see it: $(cat "$W/err")"

# ---- the record side beside the writer: the same recording, log and errors -------------------------
# (verify --jobs > 1 writes on a second thread; events carries event texts through the hand-over)
for k in 1 2 7; do
  expect 0 "$DG" verify events --keep "$W/ev$k.flrep" --hash-log "$W/ev$k.log" --log-entities --jobs "$k" -q
done
same_file "$W/ev1.flrep" "$W/ev2.flrep"
same_file "$W/ev1.flrep" "$W/ev7.flrep"
same_file "$W/ev1.log" "$W/ev2.log"
same_file "$W/ev1.log" "$W/ev7.log"
# the writer refusing a tick (its self-check hook at tick 600), past the first blocks handed to the
# writer's thread: the same failure, the same report, and no recording or log left. (A state stream's
# out-of-range value no longer reaches the writer: the stream source refuses it while parsing.)
for k in 1 2 7; do
  expect 1 "$DG" verify mars --replay-fault self-check:600 --keep "$W/late$k.flrep" --hash-log "$W/late$k.log" \
    --jobs "$k" --json "$W/late$k.json" -q
  mv "$W/err" "$W/late$k.err"
  [ -e "$W/late$k.flrep" ] || [ -e "$W/late$k.log" ] && bad "a refused recording left a file (--jobs $k)" || ok
done
grep -q 'tick 600: a DELTA record does not reproduce the state it encodes' "$W/late1.json" && ok ||
  bad "self-check:600: not the writer's error: $(cat "$W/late1.json")"
for k in 2 7; do
  same_file "$W/late1.err" "$W/late$k.err"
  same_report "$W/late1.json" "$W/late$k.json"
done

# ---- gate: scenarios and threads inside them share the --jobs budget --------------------------------
for k in 1 2 7; do
  expect 0 "$DG" gate --scenario churn --scenario dogfight-40 --scenario events --jobs "$k" --json "$W/g$k.json" -q
done
same_report "$W/g1.json" "$W/g2.json"
same_report "$W/g1.json" "$W/g7.json"
# an injected break: the golden check fails the same way whatever the thread count
for k in 1 2 7; do
  expect 1 "$DG" gate --scenario walkers-20 --inject bitflip:tick=300,entity=7,field=pos.x,bit=45 --jobs "$k" \
    --json "$W/gb$k.json" -q
done
same_report "$W/gb1.json" "$W/gb2.json"
same_report "$W/gb1.json" "$W/gb7.json"

# ---- diff: a recording against a hash log, identical and divergent ----------------------------------
expect 0 "$DG" record walkers-20 --inject bitflip:tick=300,entity=7,field=pos.x,bit=45 -o "$W/flip.flrep"
for k in 1 2 7; do
  expect 0 "$DG" diff "$G/walkers-20.flrep" "$G/walkers-20.hashlog.zst" --jobs "$k" --json "$W/d$k.json" -q
  expect 1 "$DG" diff "$W/flip.flrep" "$G/walkers-20.hashlog.zst" --jobs "$k" --json "$W/df$k.json" -q
done
for k in 2 7; do
  same_report "$W/d1.json" "$W/d$k.json"
  same_report "$W/df1.json" "$W/df$k.json"
done

echo "cores_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
