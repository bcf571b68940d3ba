#!/usr/bin/env bash
# tests/examples-history/bisect_test.sh DETGATE ODE_EXAMPLE BUILD — a throwaway git history of the ODE
# example, made here: five commits, the third of which lowers the adapter's default solver
# iterations (20 -> 12, "faster") — a realistic break no scenario states. `detgate bisect` over the
# example's detgate.ini ([build] command, [engine] run) names that commit, its first divergent tick,
# entity and field; the tick and entity are derived here from the two revisions' own recordings.
set -uo pipefail
detgate=$1 src=$2 build=$3
case $detgate in /*) ;; *) detgate=$PWD/$detgate ;; esac
src=$(cd "$src" && pwd) || exit 1
case $build in /*) ;; *) build=$PWD/$build ;; esac
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
rm -rf "$build" && mkdir -p "$build/out"
out=$build/out repo=$build/repo
unset DETGATE_BUILD CFLAGS
expect_rc() {
  local want=$1 log=$2; shift 2
  "$@" >"$log" 2>&1; local rc=$?
  if [ "$rc" -ne "$want" ]; then fail "exit $rc (expected $want): $*"; sed -n 1,30p "$log" >&2; return 1; fi
}
expect_in() { grep -qF -- "$2" "$1" || { fail "$1 lacks '$2'"; sed -n 1,20p "$1" >&2; }; }
g() { git -C "$repo" -c user.name=t -c user.email=t@example.invalid -c commit.gpgsign=false "$@"; }

# ---- the history: the example as committed, then four commits ----------------------------------
mkdir -p "$repo/ode" && git init -q "$repo"
cp -r "$src/CMakeLists.txt" "$src/ode_adapter.c" "$src/detgate.ini" "$src/scenarios" "$repo/ode/"
printf 'build/\n' >"$repo/.gitignore"
g add -A && g commit -qm "ode example"
good=$(g rev-parse HEAD)
printf '# ODE example\n' >"$repo/ode/README.md" && g add -A && g commit -qm "ode: a README"
grep -q 'sc->iterations = 20;' "$repo/ode/ode_adapter.c" || { echo "FAIL: the adapter's default iterations moved" >&2; exit 1; }
sed -i 's/sc->iterations = 20;/sc->iterations = 12;/' "$repo/ode/ode_adapter.c"
g commit -qam "ode adapter: 12 solver iterations by default (faster)"
culprit=$(g rev-parse HEAD)
printf 'See docs.\n' >>"$repo/ode/README.md" && g commit -qam "ode: README points at the docs"
sed -i '1s/$/ /' "$repo/ode/scenarios/chain.ode" && g commit -qam "ode: chain.ode whitespace"

# ---- what bisect must find, from the revisions themselves: build the parent and the culprit, record
# pyramid with each, diff ----------------------------------------------------------------------------
for rev in "$culprit~1" "$culprit"; do
  tag=$([ "$rev" = "$culprit" ] && echo bad || echo good)
  g worktree add -q --detach "$build/wt-$tag" "$rev" &&
    cmake -S "$build/wt-$tag/ode" -B "$build/b-$tag" -DCMAKE_BUILD_TYPE=None >"$out/$tag-build.log" 2>&1 &&
    cmake --build "$build/b-$tag" >>"$out/$tag-build.log" 2>&1 || { cat "$out/$tag-build.log" >&2; fail "build $tag"; }
  "$build/b-$tag/ode_adapter" "$src/scenarios/pyramid.ode" --csv --reset-seed >"$out/$tag.csv" &&
    "$detgate" record --states "$out/$tag.csv" -o "$out/$tag.flrep" >/dev/null 2>&1 || fail "record $tag"
done
"$detgate" diff "$out/good.flrep" "$out/bad.flrep" --report-dir "$out/diff" >"$out/diff.log" 2>&1
want_tick=$(grep -Eo '"firstDivergentTick": *[0-9]+' "$out/diff/report.json" | head -1 | grep -Eo '[0-9]+$')
want_row=$(grep -E '^ +[0-9]+ +changed ' "$out/diff.log" | head -1 | awk '{print $1, $3}')
[ -n "$want_tick" ] && [ -n "$want_row" ] || fail "the culprit does not change pyramid: $(head -2 "$out/diff.log")"

# ---- bisect over the example's project file -----------------------------------------------------
cd "$repo/ode" || exit 1
expect_rc 1 "$out/bisect.log" "$detgate" bisect --good "$good" --bad HEAD --scenario pyramid \
  --report-dir "$out/bisect" && {
  expect_in "$out/bisect.log" "first bad commit: $culprit ode adapter: 12 solver iterations by default (faster)"
  expect_in "$out/bisect.log" "first divergent tick: $want_tick"
  grep -Eq "^ +${want_row% *} +changed ${want_row#* } " "$out/bisect.log" ||
    fail "bisect does not name entity ${want_row% *} ${want_row#* } first: $(grep -E 'changed' "$out/bisect.log" | head -2)"; }
# the history without the break: nothing to bisect (good and bad record the same)
expect_rc 0 "$out/bisect-same.log" "$detgate" bisect --good "$good" --bad "$culprit~1" --scenario pyramid
cd "$build" || exit 1

if [ "$fails" -ne 0 ]; then echo "bisect_test: $fails failure(s)" >&2; exit 1; fi
echo "bisect_test: all checks passed"
