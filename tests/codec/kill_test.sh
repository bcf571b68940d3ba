#!/usr/bin/env bash
# tests/codec/kill_test.sh — a recorder killed with SIGKILL loses no complete chunk: N times (default
# 50), `detgate record long-1h -o X` is killed at a random moment; the writer's debug line
# (DETGATE_DEBUG_FLREP_CHUNKS, written after a chunk left the stdio buffer) says how many ticks
# the writer's temp file (WORK.tmp-PID, WORK being the name the CLI writes X under before its
# rename) holds in complete chunks, and `detgate info` on that temp file must
# recover at least that many. Prints the figure (kills, chunks lost).
# Usage: kill_test.sh DETGATE [N]
set -u
dg=$1
n=${2:-50}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dg-kill.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

kills=0 lost=0 finished=0
for i in $(seq 1 "$n"); do
    out=$tmp/k$i.flrep
    DETGATE_DEBUG_FLREP_CHUNKS=1 "$dg" record long-1h -o "$out" 2>"$tmp/err" >/dev/null &
    pid=$!
    # a random moment in 0.05 .. 6 s (the whole recording takes ~7 s on this machine)
    sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.2f", 0.05 + (r % 596) / 100 }')"
    if ! kill -KILL "$pid" 2>/dev/null; then
        wait "$pid"
        finished=$((finished + 1))
        rm -f "$out"
        continue
    fi
    wait "$pid" 2>/dev/null
    kills=$((kills + 1))
    want=$(sed -n 's/^flrep-debug: chunk .*(\([0-9]*\) ticks in the file)$/\1/p' "$tmp/err" | tail -n 1)
    want=${want:-0}
    part=$(find "$tmp" -maxdepth 1 -name "*.tmp-$pid" | head -n 1)
    if [ ! -f "$part" ]; then
        # killed before the writer created its file, or after the rename (a finished recording)
        if [ -f "$out" ]; then finished=$((finished + 1)); rm -f "$out"; continue; fi
        if [ "$want" != 0 ]; then
            echo "kill $i: $want ticks reported complete, but no temp file *.tmp-$pid"
            lost=$((lost + 1))
        fi
        continue
    fi
    got=$("$dg" info "$part" | sed -n 's/^ticks: .*(\([0-9]*\) ticks.*/\1/p')
    got=${got:-0}
    if [ "$got" -lt "$want" ]; then
        echo "kill $i: the writer had $want ticks in complete chunks, detgate info recovers $got"
        lost=$((lost + 1))
    fi
    # SIGKILL leaves the CLI's work files too (nothing can remove them): clear the folder
    find "$tmp" -maxdepth 1 -type f ! -name err -delete
done
echo "kill_test: $kills SIGKILLs ($finished runs finished first), $lost with a complete chunk lost"
[ "$lost" -eq 0 ] && [ "$kills" -gt 0 ]
