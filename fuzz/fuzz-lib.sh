# fuzz/fuzz-lib.sh — shell helpers shared by ci/fuzz-smoke, ci/fuzz-nightly and fuzz/oss-fuzz-build.sh:
# the target list (read from fuzz/CMakeLists.txt, the one place it is written), the libFuzzer build,
# and the flags each target's .options file asks for. Source it; it defines functions only.

DG_ROOT=${DG_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}

# Targets, one per line: the codec's (the set(DG_FUZZ_TARGETS ...) block), then the harness's
# (set(DG_FUZZ_HARNESS_TARGETS ...), on one line).
dg_fuzz_targets() {
  awk '/^set\(DG_FUZZ_TARGETS/{on=1; next} on && /\)/{sub(/\).*/, ""); print; exit} on{print}' \
    "$DG_ROOT/fuzz/CMakeLists.txt" | tr ' ' '\n' | sed '/^$/d'
  sed -n 's/^set(DG_FUZZ_HARNESS_TARGETS \([^)]*\)).*/\1/p' "$DG_ROOT/fuzz/CMakeLists.txt" | tr ' ' '\n' | sed '/^$/d'
}

# dg_fuzz_build BUILD_DIR [extra cmake -D...]: the "fuzz" preset (clang + libFuzzer + ASan + UBSan;
# the codec, the hash log, the harness and what it needs, not bench or tests) in BUILD_DIR. The
# preset is the one way in: README's `cmake --preset fuzz` and CI configure the same build.
dg_fuzz_build() {
  local build=$1; shift
  local cc=${CC:-clang}
  command -v "$cc" >/dev/null || cc=clang-14
  cmake -S "$DG_ROOT" --preset fuzz -B "$build" -DCMAKE_C_COMPILER="$cc" "$@" >"$build.configure.log" 2>&1 \
    || { cat "$build.configure.log"; return 1; }
  cmake --build "$build" -j"${DG_JOBS:-2}" >"$build.build.log" 2>&1 || { tail -50 "$build.build.log"; return 1; }
}

# libFuzzer flags from fuzz/options/<target>.options ([libfuzzer] key = value lines).
dg_fuzz_flags() {
  local t=$1 opt="$DG_ROOT/fuzz/options/$1.options"
  [ -f "$opt" ] || return 0
  awk -F' *= *' -v dict="$DG_ROOT/fuzz/dict/" '/^[a-z_]+ *=/ {
      if ($1 == "dict") printf "-dict=%s%s ", dict, $2; else printf "-%s=%s ", $1, $2 }' "$opt"
}

# dg_fuzz_seed_dir TARGET DIR [BUILD_DIR]: copies committed seeds and regression reproducers into
# DIR, and the seeds the build generated (BUILD_DIR/fuzz/seeds/TARGET: gen_harness_seeds) when given.
dg_fuzz_seed_dir() {
  local t=$1 dir=$2 build=${3:-} d
  mkdir -p "$dir"
  for d in "$DG_ROOT/corpus/fuzz/$t" "$DG_ROOT/corpus/regressions/$t" ${build:+"$build/fuzz/seeds/$t"}; do
    [ -d "$d" ] && find "$d" -maxdepth 1 -type f ! -name '.*' -exec cp {} "$dir"/ \;
  done
  return 0
}

# Value of "stat::NAME:" in a libFuzzer log (-print_final_stats=1), or "-".
dg_fuzz_stat() {
  local v
  v=$(grep -a "stat::$2:" "$1" 2>/dev/null | tail -1 | awk '{print $2}')
  echo "${v:--}"
}
