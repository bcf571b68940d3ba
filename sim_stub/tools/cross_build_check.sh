#!/bin/sh
# sim_stub/tools/cross_build_check.sh — builds the sim digest tool with every available compiler at
# -O0, -O2 and -O3 and checks that all builds produce the same state digest for every bundled
# scenario (or the ones given). Exit status 0 = all agree, 1 = a build disagrees, 2 = setup error.
#   sim_stub/tools/cross_build_check.sh [--ticks N] [--inject SPEC] [scenario.scn ...]
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${TMPDIR:-/tmp}/detgate-xbuild.$$
ticks=""
inject=""
while [ $# -gt 0 ]; do
  case "$1" in
    --ticks) ticks="--ticks $2"; shift 2 ;;
    --inject) inject="--inject $2"; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- "$root"/corpus/scenarios/*.scn
mkdir -p "$out" || exit 2
trap 'rm -rf "$out"' EXIT
builds=""
# The same flags sim_stub/CMakeLists.txt uses (gcc: no vectorizer, it ignores -ffp-contract=off);
# each compiler at -O0/-O2/-O3 for the baseline x86-64 and at -O3 for the build machine's -march
# (which enables FMA instructions where the CPU has them).
for cc in gcc clang; do
  command -v $cc >/dev/null 2>&1 || continue
  extra=""
  [ $cc = gcc ] && extra="-fno-tree-vectorize"
  for o in O0 O2 O3 O3-native; do
    opt="-${o%-native}"
    [ "$o" = O3-native ] && opt="$opt -march=native"
    # shellcheck disable=SC2086
    # (the build's own definitions too: CMakeLists.txt's _POSIX_C_SOURCE; the error type's escaping
    # lives beside the UTF-8 decoder in base/cursor.c)
    if $cc -std=c11 -D_POSIX_C_SOURCE=200809L -D_FILE_OFFSET_BITS=64 $opt -ffp-contract=off -fno-fast-math $extra \
        -I"$root/include" -I"$root/base" -I"$root/sim_stub" \
        "$root"/sim_stub/dmath.c "$root"/sim_stub/scenario.c "$root"/sim_stub/sim.c "$root"/sim_stub/inject.c \
        "$root"/base/error.c "$root"/base/cursor.c "$root"/sim_stub/tools/sim_digest.c -lm -lpthread \
        -o "$out/digest-$cc-$o"; then
      builds="$builds $cc-$o"
    else
      echo "build failed: $cc $opt" >&2; exit 2
    fi
  done
done
[ -n "$builds" ] || { echo "no compiler found" >&2; exit 2; }
status=0
for scn in "$@"; do
  ref=""
  for b in $builds; do
    # shellcheck disable=SC2086
    d=$("$out/digest-$b" $ticks $inject "$scn" | head -1)
    [ -n "$d" ] || { echo "run failed: $b $scn" >&2; exit 2; }
    printf '%-24s %-16s %s\n' "$(basename "$scn")" "$b" "$d"
    if [ -z "$ref" ]; then ref=$d; elif [ "$d" != "$ref" ]; then status=1; fi
  done
done
[ $status -eq 0 ] && echo "all builds agree" || echo "BUILDS DISAGREE"
exit $status
