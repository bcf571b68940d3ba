#!/usr/bin/env bash
# tests/install/test_install.sh BUILD_DIR SOURCE_DIR — installs the codec into a temporary prefix,
# then builds a consumer with find_package(detgate) and another with pkg-config, and runs both; the
# same for an engine running the gate in-process (detgate::harness, pkg-config detgate-harness).
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src/tests/install/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/consumer" "$tmp/a.flrep"
libdir=$(ls -d "$tmp"/prefix/lib*/pkgconfig | head -n 1)
PKG_CONFIG_PATH="$libdir" cc -std=c11 "$src/tests/install/consumer/main.c" -o "$tmp/pc-consumer" \
  $(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs --static detgate-codec)
"$tmp/pc-consumer" "$tmp/b.flrep"
# the libraries are static only: plain --libs (no --static) must link too, as README writes it
PKG_CONFIG_PATH="$libdir" cc -std=c11 "$src/tests/install/consumer/main.c" -o "$tmp/pc-consumer-plain" \
  $(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs detgate-codec)
"$tmp/pc-consumer-plain" "$tmp/c.flrep"
"$tmp/consumer/harness_consumer"
PKG_CONFIG_PATH="$libdir" cc -std=c11 "$src/tests/install/harness_consumer.c" -o "$tmp/pc-harness-consumer" \
  $(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs --static detgate-harness)
"$tmp/pc-harness-consumer"
PKG_CONFIG_PATH="$libdir" cc -std=c11 "$src/tests/install/harness_consumer.c" -o "$tmp/pc-harness-plain" \
  $(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs detgate-harness)
"$tmp/pc-harness-plain"
# the gate in-process through the new calls (golden compare, hash log, repeat), both ways
mkdir -p "$tmp/g1" "$tmp/g2"
"$tmp/consumer/harness_gate_consumer" "$tmp/g1"
PKG_CONFIG_PATH="$libdir" cc -std=c11 "$src/tests/install/harness_gate_consumer.c" -o "$tmp/pc-harness-gate" \
  $(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs --static detgate-harness)
"$tmp/pc-harness-gate" "$tmp/g2"
# a library engine built against the installed engine.h alone, blessed and gated by the installed detgate
mkdir -p "$tmp/team/scenarios"
cc -std=c11 -shared -fPIC -I"$tmp/prefix/include" "$src/tests/install/lib_engine_consumer.c" -o "$tmp/team/libball.so"
echo fall >"$tmp/team/scenarios/fall.txt"
printf '[project]\nscenarios = scenarios\n[engine]\nkind = library\nlibrary = libball.so\n' >"$tmp/team/detgate.ini"
(cd "$tmp/team" && "$tmp/prefix/bin/detgate" bless --all --reason first >/dev/null && "$tmp/prefix/bin/detgate" gate -q)
echo "install: find_package and pkg-config consumers both round-trip; the harness consumers verify, gate and repeat; an installed-header library engine gates"
