#!/usr/bin/env bash
# tests/harness/overlap_test.sh — work moved between threads changes no byte: the record side's raw
# float hash computed on the writer's thread (verify --jobs > 1) gives the hash log of one thread and
# of the golden, raw hashes included; `diff A.flrep B.flrep --jobs K` (both files replayed at once)
# gives the JSON, Markdown and HTML reports and the errors of one thread, for K = 1, 2 and 7; SIGINT
# while the writer's thread runs leaves no output and no temp.
# usage: overlap_test.sh DETGATE SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
G=$SRC/corpus/golden
work_dir overlap

# same_text A B: two Markdown or HTML reports are equal but for the run's duration ("N checks, 0.05 s")
# and start time ("started 2026-12-01 19:14:33 UTC")
untimed() { sed -E 's/checks?, [0-9.]+ s/checks, T/; s/started [0-9: -]+ UTC/started T/' "$1"; }
same_text() {
  if cmp -s <(untimed "$1") <(untimed "$2"); then ok; else bad "$1 and $2 differ beyond timing"; fi
}

# ---- the raw hash beside the writer --------------------------------------------------------------
# walkers-20 (9,000 ticks: the writer's thread takes over at the first 256-tick block edge), churn
# (entities come and go); the log's T and e lines carry the raw hashes
for name in walkers-20 churn; do
  for k in 1 2 7; do
    expect 0 "$DG" verify "$name" --no-recovery --hash-log "$W/$name.$k.log" --log-entities --jobs "$k" -q
  done
  same_file "$W/$name.1.log" "$W/$name.2.log"
  same_file "$W/$name.1.log" "$W/$name.7.log"
  # and the golden's raw hashes: a raw-only difference fails with --raw fail
  expect 0 "$DG" diff "$W/$name.2.log" "$G/$name.hashlog.zst" --raw fail -q
done

# ---- diff A.flrep B.flrep: both files replayed at once, the report of one thread -------------------
# equal; a bit flipped at tick 300 (entity 7, every tick after differs); B a damaged copy (the same
# error whatever the thread count); B a shorter recording (A's extra ticks counted)
expect 0 "$DG" record walkers-20 --inject bitflip:tick=300,entity=7,field=pos.x,bit=45 -o "$W/flip.flrep"
expect 0 "$DG" record walkers-20 -o "$W/same.flrep"
cp "$G/walkers-20.flrep" "$W/bad.flrep"
printf '\x55\xaa\x55\xaa' | dd of="$W/bad.flrep" bs=1 seek=$(($(stat -c %s "$W/bad.flrep") / 2)) conv=notrunc 2>/dev/null
sed 's/duration=[^ ]*/duration=90s/' "$SRC/corpus/scenarios/walkers-20.scn" >"$W/walkers-20.scn"
expect 0 "$DG" record "$W/walkers-20.scn" -o "$W/short.flrep"
for pair in same flip short; do
  want=1
  [ "$pair" = same ] && want=0
  for k in 1 2 7; do
    expect "$want" "$DG" diff "$G/walkers-20.flrep" "$W/$pair.flrep" --jobs "$k" --json "$W/$pair.$k.json" \
      --markdown "$W/$pair.$k.md" --html "$W/$pair.$k.html" -q
  done
  for k in 2 7; do
    same_report "$W/$pair.1.json" "$W/$pair.$k.json"
    same_text "$W/$pair.1.md" "$W/$pair.$k.md"
    same_text "$W/$pair.1.html" "$W/$pair.$k.html"
  done
done
grep -q '"firstTick": 300' "$W/flip.1.json" && ok || bad "flip: first divergent tick is not 300"
for k in 1 2 7; do
  expect 2 "$DG" diff "$G/walkers-20.flrep" "$W/bad.flrep" --jobs "$k"
  mv "$W/err" "$W/bad.$k.err"
done
[ -s "$W/bad.1.err" ] && ok || bad "no error for a damaged B"
same_file "$W/bad.1.err" "$W/bad.2.err"
same_file "$W/bad.1.err" "$W/bad.7.err"

# ---- SIGINT while the writer's thread hashes: no output, no temp, the process gone -----------------
# (verify long-1h --jobs 2 records for seconds; the signal lands while both threads run)
mkdir -p "$W/sig" "$W/tmp"
TMPDIR=$W/tmp "$DG" verify long-1h --jobs 2 --keep "$W/sig/K.flrep" --hash-log "$W/sig/H.log.zst" --log-entities \
  -q 2>/dev/null &
pid=$!
for _ in $(seq 200); do compgen -G "$W/sig/*" >/dev/null && break; sleep 0.1; done
sleep 1
kill -INT $pid
wait $pid
code=$?
[ $code -eq 130 ] && ok || bad "verify --jobs 2 after SIGINT exited $code, expected 130"
[ -z "$(ls -A "$W/sig")" ] && ok || bad "SIGINT left $(ls -A "$W/sig")"
[ -z "$(ls -A "$W/tmp")" ] && ok || bad "SIGINT left temps: $(ls -A "$W/tmp")"
kill -0 $pid 2>/dev/null && bad "verify still running after SIGINT" || ok

echo "overlap_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
