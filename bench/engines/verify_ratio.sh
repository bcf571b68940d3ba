#!/usr/bin/env bash
# bench/engines/verify_ratio.sh — issue 15's figure for one real-engine example
# (examples/engines/{ode,chipmunk,bullet}): `detgate verify long -j 2` run from the example's folder
# against the adapter alone writing the same binary stream to /dev/null. Each round runs the engine
# alone and verify once per detgate build given (every other round in the reverse order, so a shared
# machine's load falls on all alike), each command in a session of its own with a nice -20 autogroup
# (docs/PERFORMANCE.md "Harness"; needs root for the -20). Prints every run, then per build the
# medians: wall of verify, the ratio (median of each round's verify / alone), and detgate's own CPU
# (user+sys of verify's process tree less the adapter's own, which a wrapper times: the steadier
# figure on a loaded machine), and where the rest goes: the adapter's own wall under verify against
# its wall alone, and verify's wall beyond the adapter's (start-up before it, the checks after it).
# The adapters must be built (cmake -S . -B build in the example).
#
#   bench/engines/verify_ratio.sh [-r ROUNDS] EXAMPLE DETGATE [DETGATE_B ...]
#
# EXAMPLE: ode, chipmunk or bullet (the folder under examples/engines/); ROUNDS default 9, after one
# warm-up round that is not counted.
set -euo pipefail
rounds=9
while getopts "r:" o; do
    case $o in
    r) rounds=$OPTARG ;;
    *) sed -n '2,18p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { sed -n '2,18p' "$0"; exit 2; }
[ -x /usr/bin/time ] || { echo "verify_ratio: needs GNU time (/usr/bin/time)" >&2; exit 2; }
ex=$1
shift
here=$(cd "$(dirname "$0")/../.." && pwd)
folder=$here/examples/engines/$ex
case $ex in
ode) adapter=ode_adapter args="scenarios/long.ode --bin --reset-seed" ;;
chipmunk) adapter=chipmunk_adapter args="scenarios/long.cp --bin --index bbtree" ;;
bullet) adapter=bullet_adapter args="scenarios/long.bt --format bin" ;;
*) echo "verify_ratio: EXAMPLE is ode, chipmunk or bullet" >&2; exit 2 ;;
esac
[ -x "$folder/build/$adapter" ] || { echo "verify_ratio: build the adapter first: cd $folder && cmake -S . -B build && cmake --build build" >&2; exit 2; }
builds=()
for d in "$@"; do builds+=("$(realpath "$d")"); done

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '#!/bin/bash\necho -20 > /proc/$$/autogroup\nexec "$@"\n' >"$dir/prio.sh"
# verify runs the adapter through DETGATE_BUILD (the project's run line): a wrapper that times it
# (bash's clock: GNU time's wall has 10 ms steps; the wrapper's own start-up is counted as verify's)
mkdir "$dir/wrap"
cat >"$dir/wrap/$adapter" <<EOF2
#!/bin/bash
s=\$EPOCHREALTIME
"$folder/build/$adapter" "\$@"
r=\$?
e=\$EPOCHREALTIME
times >"$dir/times"
set -- \$(tail -1 "$dir/times")
u=\${1#0m} k=\${2#0m}
echo "\$(echo "\$e - \$s" | bc) \${u%s} \${k%s}" >"$dir/adapter.cpu"
exit \$r
EOF2
chmod +x "$dir/prio.sh" "$dir/wrap/$adapter"
run() { # label command...: one line "label wall user sys [adapter_wall adapter_user adapter_sys]"
    local label=$1 s e
    shift
    rm -f "$dir/adapter.cpu"
    s=$EPOCHREALTIME
    /usr/bin/time -f "%U %S" -o "$dir/t" setsid -w "$dir/prio.sh" "$@" >/dev/null
    e=$EPOCHREALTIME
    printf '%s %s %s %s\n' "$label" "$(echo "$e - $s" | bc)" "$(cat "$dir/t")" "$(cat "$dir/adapter.cpu" 2>/dev/null || true)"
}
round() {
    local cmds=(alone)
    for i in "${!builds[@]}"; do cmds+=("$i"); done
    [ $(($1 % 2)) = 1 ] && cmds=($(printf '%s\n' "${cmds[@]}" | tac))
    for c in "${cmds[@]}"; do
        if [ "$c" = alone ]; then
            run "$1 alone" sh -c "exec ./build/$adapter $args >/dev/null"
        else
            DETGATE_BUILD=$dir/wrap run "$1 verify$c" "${builds[$c]}" verify long -j 2 -q
        fi
    done
}
cd "$folder"
echo "example $ex; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in "${!builds[@]}"; do echo "verify$i = ${builds[$i]}"; done
round 0 >/dev/null
for r in $(seq 1 "$rounds"); do round "$r"; done | tee "$dir/runs"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v nb="${#builds[@]}" '
function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
$2 == "alone" { alone[$1] = $3; aw[++na] = $3; next }
{ b = substr($2, 7); w[b, $1] = $3; cpu[b, $1] = $4 + $5 - $7 - $8; aw_v[b, $1] = $6; rnd[$1] = 1 }
END {
    printf "alone: median wall %.3f s\n", median(aw, na)
    for (b = 0; b < nb; b++) {
        n = 0
        for (r in rnd) {
            n++; vw[n] = w[b, r]; ra[n] = w[b, r] / alone[r]; c[n] = cpu[b, r]; if (b) pr[n] = w[b, r] / w[0, r]
            ea[n] = aw_v[b, r] / alone[r]; beyond[n] = w[b, r] - aw_v[b, r]
        }
        printf "verify%d: median wall %.3f s, ratio %.3f", b, median(vw, n), median(ra, n)
        printf " (rounds %.2f..%.2f), detgate CPU %.3f s; the adapter under verify %.3f x its wall alone, verify beyond the adapter %.3f s",
               ra[1], ra[n], median(c, n), median(ea, n), median(beyond, n)
        if (b) printf ", wall against verify0 %.3f", median(pr, n)
        printf "\n"
    }
}' "$dir/runs"
