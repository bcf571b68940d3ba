#!/usr/bin/env bash
# bench/ingest/ingest_bench.sh — ingest through a pipe from a child process: the test engine
# (tests/engine/) writes a 1000-body world as a binary, CSV or JSON Lines stream, `detgate record`
# reads it from the pipe and records it (quantize, hash, write). Prints per form and run:
# detgate's own CPU (perf stat --no-inherit: the engine, its child, is not counted), M
# entity-ticks/s on that CPU, detgate's peak RSS, and the engine's own CPU writing the same stream
# into a pipe alone, with the ratio of the two.
#
#   bench/ingest/ingest_bench.sh [-t TICKS] [-r RUNS] [-b BODIES] [-f "bin csv jsonl"] DETGATE [DETGATE_B ...]
#
# Defaults: 3000 ticks, 3 runs, 1000 bodies (a stress-1000-sized world), all three forms.
#
# With several detgate builds the runs alternate (A B A B ...), so a shared machine's load falls on
# both alike. ENGINE (default build/release/tests/engine/detgate_test_engine) names the engine.
set -euo pipefail
ticks=3000 runs=3 forms="bin csv jsonl" bodies=1000
while getopts "t:r:f:b:" o; do
    case $o in
    t) ticks=$OPTARG ;; r) runs=$OPTARG ;; f) forms=$OPTARG ;; b) bodies=$OPTARG ;;
    *) sed -n '2,14p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n '2,14p' "$0"; exit 2; }
[ -x /usr/bin/time ] || { echo "ingest_bench: needs GNU time (/usr/bin/time)" >&2; exit 2; }
engine=$(realpath "${ENGINE:-build/release/tests/engine/detgate_test_engine}")
builds=()
for d in "$@"; do builds+=("$(realpath "$d")"); done
command -v perf >/dev/null || { echo "ingest_bench: needs perf (linux-perf)" >&2; exit 2; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/scenarios"
for f in $forms; do printf 'bodies %s\nticks %s\nformat %s\n' "$bodies" "$ticks" "$f" >"$dir/scenarios/$f.scn"; done
(cd "$dir" && "${builds[0]}" init --run "$engine {scenario}" --scenarios scenarios >/dev/null)

# CPU seconds (task-clock) of one command alone, not of its children (detgate records on one thread).
own_cpu() {
    perf stat --no-inherit -x, -e task-clock -o "$dir/stat" "$@" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; exit 1; }
    awk -F, '/task-clock/ { printf "%.3f", $1 / 1000 }' "$dir/stat"
}

et=$((ticks * bodies))
rss=()
echo "builds: $(for i in "${!builds[@]}"; do printf '%s=%s ' "$(printf "\\x$(printf %x $((65 + i)))")" "${builds[$i]}"; done)"
printf '%-6s %-10s %3s %9s %9s %8s %9s %7s\n' form build run cpu_s Met/s rss_MB engine_s ratio
for f in $forms; do
    # the engine alone: its own CPU, writing into a pipe as it does under detgate
    perf stat -x, -e task-clock -o "$dir/estat" -- "$engine" "$dir/scenarios/$f.scn" | cat >/dev/null
    ecpu=$(awk -F, '/task-clock/ { printf "%.3f", $1 / 1000 }' "$dir/estat")
    for r in $(seq 1 "$runs"); do
        for i in "${!builds[@]}"; do
            b=${builds[$i]} label=$(printf "\\x$(printf %x $((65 + i)))")
            cd "$dir"
            cpu=$(own_cpu "$b" record "$f" -o "$dir/out.flrep")
            # peak RSS in a run of its own (under perf, time would report perf's); the engine's is
            # far smaller, so the maximum over detgate and its children is detgate's
            if [ "$r" = 1 ]; then
                /usr/bin/time -f '%M' -o "$dir/rss" "$b" record "$f" -o "$dir/out.flrep" >/dev/null 2>&1
                rss[$i]=$(tail -1 "$dir/rss")
            fi
            cd - >/dev/null
            m=${rss[$i]}
            awk -v f="$f" -v b="$label" -v r="$r" -v c="$cpu" -v m="$m" \
                -v et="$et" -v e="$ecpu" 'BEGIN { printf "%-6s %-10s %3d %9.3f %9.2f %8.1f %9.3f %7.2f\n",
                f, b, r, c, et / c / 1e6, m / 1024, e, c / e }'
        done
    done
done
