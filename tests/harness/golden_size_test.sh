#!/usr/bin/env bash
# tests/harness/golden_size_test.sh — corpus/golden/ stays under 20 MB in total (the project's rule:
# goldens live in git), every file counted, the sampled entity logs of hash-log-only goldens too.
# usage: golden_size_test.sh SOURCE_DIR
set -u
G=$1/corpus/golden
LIMIT=20000000
total=$(find "$G" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
echo "corpus/golden: $total bytes (limit $LIMIT)"
if [ "$total" -ge "$LIMIT" ]; then
  echo "FAIL: corpus/golden holds $total bytes, expected under $LIMIT; the largest files:"
  find "$G" -type f -printf '%s %p\n' | sort -rn | head -5
  exit 1
fi
