#!/usr/bin/env bash
# fuzz/oss-fuzz-build.sh — builds every fuzz target the OSS-Fuzz / ClusterFuzzLite way, honouring
# $CC $CFLAGS $LIB_FUZZING_ENGINE $OUT (and $WORK, $SRC when set). Produces in $OUT, per target:
#   <target>                    the fuzzer (dependencies linked statically: the runner image has none)
#   <target>_seed_corpus.zip    committed seeds + reproducers + the generator's full set
#   <target>.dict, <target>.options
# Locally:  CC=clang CFLAGS="-O1 -g -fsanitize=address,undefined -fsanitize=fuzzer-no-link" \
#           LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT=/tmp/out fuzz/oss-fuzz-build.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/fuzz/fuzz-lib.sh"
: "${CC:=clang}" "${CFLAGS:=-O1 -g -fsanitize=address,undefined -fsanitize=fuzzer-no-link}"
: "${LIB_FUZZING_ENGINE:=-fsanitize=fuzzer}" "${OUT:=$root/build/oss-fuzz-out}"
work=${WORK:-$root/build}/detgate-oss-fuzz
mkdir -p "$OUT" "$work"

# zstd >= 1.4.7 and xxHash >= 0.8 (XXH3 frozen) are required, and for the harness targets jansson
# and inih (static libraries: the runner image has none). When the Dockerfile cloned zstd and xxHash
# into $SRC, build them static into $work/deps with the same compiler; otherwise use the system's.
deps=$work/deps
if [ -n "${SRC:-}" ] && [ -d "$SRC/zstd" ] && [ -d "$SRC/xxHash" ]; then
  make -C "$SRC/zstd/lib" -j"$(nproc)" CC="$CC" PREFIX="$deps" install-static install-includes install-pc >/dev/null
  make -C "$SRC/xxHash" -j"$(nproc)" CC="$CC" PREFIX="$deps" install >/dev/null
  export PKG_CONFIG_PATH="$deps/lib/pkgconfig:${PKG_CONFIG_PATH:-}"
fi
# inih is one source file (its build is meson, which the image lacks): compiled here when cloned.
if [ -n "${SRC:-}" ] && [ -f "$SRC/inih/ini.c" ]; then
  mkdir -p "$deps/lib/pkgconfig" "$deps/include"
  $CC $CFLAGS -c "$SRC/inih/ini.c" -o "$work/ini.o" && ar rcs "$deps/lib/libinih.a" "$work/ini.o"
  cp "$SRC/inih/ini.h" "$deps/include/"
  printf 'prefix=%s\nName: inih\nDescription: inih\nVersion: 58\nCflags: -I${prefix}/include\nLibs: -L${prefix}/lib -linih\n' \
    "$deps" >"$deps/lib/pkgconfig/inih.pc"
  export PKG_CONFIG_PATH="$deps/lib/pkgconfig:${PKG_CONFIG_PATH:-}"
fi

# The sanitizer and coverage flags come with $CFLAGS here, the engine with $LIB_FUZZING_ENGINE.
cmake -S "$root" -B "$work/build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$CFLAGS" \
  -DCMAKE_BUILD_TYPE=Release -DDETGATE_MODULES="codec;hash;sim_stub;reports;harness;fuzz" -DDETGATE_TESTS=OFF \
  -DDETGATE_BENCH=OFF \
  -DDETGATE_FUZZ=ON -DDETGATE_FUZZ_FLAGS="" -DDETGATE_FUZZ_ENGINE="$LIB_FUZZING_ENGINE" \
  -DDETGATE_FUZZ_REGRESS_LINK="" -DDETGATE_FUZZ_STATIC_DEPS=ON >"$work/configure.log"
targets=$(dg_fuzz_targets)
build_list=""
for t in $targets; do build_list="$build_list ${t}_fuzzer"; done
# shellcheck disable=SC2086
cmake --build "$work/build" -j"$(nproc)" --target gen_seeds dg_fuzz_harness_seeds $build_list

rm -rf "$work/seeds"
"$work/build/fuzz/gen_seeds" "$work/seeds" >/dev/null
for t in $targets; do
  cp "$work/build/fuzz/${t}_fuzzer" "$OUT/$t"
  [ ! -f "$root/fuzz/dict/$t.dict" ] || cp "$root/fuzz/dict/$t.dict" "$OUT/$t.dict"
  cp "$root/fuzz/options/$t.options" "$OUT/$t.options"
  dg_fuzz_seed_dir "$t" "$work/seeds/$t" "$work/build"
  rm -f "$OUT/${t}_seed_corpus.zip"
  if command -v zip >/dev/null; then
    (cd "$work/seeds/$t" && zip -q -j "$OUT/${t}_seed_corpus.zip" ./*)
  else
    python3 - "$work/seeds/$t" "$OUT/${t}_seed_corpus.zip" <<'PY'
import os, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
    for name in sorted(os.listdir(src)):
        z.write(os.path.join(src, name), name)
PY
  fi
done
echo "oss-fuzz-build: $(echo $targets | wc -w) targets in $OUT"
