#!/usr/bin/env bash
# tests/harness/project_bisect_test.sh — bisect and matrix of a team's own engine (issue 13): a
# throwaway git repository of the test engine's source (tests/engine/test_engine.c, copied) whose
# detgate.ini builds it with `[build] command` and runs it with `[engine] run`. bisect skips the
# commit that does not build (125) and names the commit that changes a value from tick 30 on, with
# its tick, entity and field; matrix over two -D flags the copied source honours gives 2 classes.
# usage: project_bisect_test.sh DETGATE SOURCE_DIR REPORT_CHECK
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
CHECK=$3
work_dir project-bisect
private_tmp
expect_rc() { if [ "$1" -eq "$2" ]; then ok; else bad "$3: exit $1, expected $2"; head -c 3000 "$W/err"; fi; }

# ---- the engine's repository -----------------------------------------------------------------------
R=$W/repo
mkdir -p "$R/scenarios"
cp "$SRC/tests/engine/test_engine.c" "$R/engine.c"
# matrix: a build with -DPERTURB records another state from tick 50 on (the source honours it)
sed -i 's|^        double jitter = 0;$|        double jitter = 0;\n#ifdef PERTURB\n        jitter = t >= 50 ? 0.25 : 0;\n#endif|' "$R/engine.c"
grep -q '#ifdef PERTURB' "$R/engine.c" && ok || bad "could not plant PERTURB"
printf 'bodies 3\nticks 80\n' >"$R/scenarios/bounce.txt"
cat >"$R/detgate.ini" <<'INI'
[project]
scenarios = scenarios
[engine]
kind = process
run = ${DETGATE_BUILD:-./build}/engine {scenario}
time_limit = 30
[build]
command = {cc} -O2 $CFLAGS -o {build}/engine engine.c && touch "$TMPDIR/dg-built-marker"
INI
git -C "$R" init -q
c1=$(commit "engine: bouncing bodies")
sed -i '1i // a comment: nothing changes' "$R/engine.c"
c2=$(commit "engine: a comment")
echo 'this is not C;' >>"$R/engine.c"
c3=$(commit "engine: half-done refactor (does not build)")
sed -i '$d' "$R/engine.c"
c4=$(commit "engine: refactor finished")
# body 2's x position is another value from tick 30 on
sed -i 's|^        double x = b\[i\].p\[0\] + (i == 0 ? jitter : 0);$|        double x = b[i].p[0] + (i == 0 ? jitter : 0) + (i == 1 \&\& t >= 30 ? 0.5 : 0);|' "$R/engine.c"
grep -q 't >= 30 ? 0.5' "$R/engine.c" && ok || bad "could not plant the change"
c5=$(commit "engine: faster integrator")
echo "notes" >"$R/NOTES.txt"
c6=$(commit "docs: notes")

# ---- bisect: C1 good, C6 bad ------------------------------------------------------------------------
(cd "$R" && "$DG" bisect --good "$c1" --bad "$c6" --scenario bounce --report-dir "$W/rep" -q --work "$W/bw" \
  >"$W/out" 2>"$W/err")
expect_rc $? 1 "bisect"
contains "$W/out" "first bad commit: $c5 engine: faster integrator"
contains "$W/out" "first divergent tick: 30"
contains "$W/rep/report.txt" "first divergent tick 30: 1 entity changed"
contains "$W/rep/report.txt" "^ *2 *changed pos.x 3.5 4  +0.5 m"
contains "$W/rep/report.json" "$c5"
"$CHECK" "$SRC/docs/report-schema.json" "$W/rep" && ok || bad "bisect reports do not validate"
# the commit that does not build was tested and skipped (125), never called good or bad
contains "$W/bw/steps.txt" "^$c3 125 "
contains "$W/bw/steps.txt" "^$c5 1 30 "
# the steps built with the project's command into their own folders, and ran the engine built there
[ -x "$W/bw/build-$c5/engine" ] && ok || bad "no engine built in build-$c5"
# a build's temporary files (a compiler's cc*.s) go into the work folder's tmp/, never the TMPDIR
# bisect was given: a build killed by an interrupt cannot leave them behind
[ -e "$W/bw/tmp/dg-built-marker" ] && ok || bad "the build command's TMPDIR is not the work folder's tmp/"
[ ! -e "$TMPDIR/dg-built-marker" ] && ok || bad "the build command wrote into bisect's own TMPDIR"
contains "$W/bw/build-$c3.log" "this is not C"
[ "$(git -C "$R" worktree list | wc -l)" -eq 1 ] && ok || bad "a worktree was left behind"
git -C "$R" bisect log >/dev/null 2>&1 && bad "the repository is left mid-bisect" || ok
[ -z "$(git -C "$R" status --porcelain)" ] && ok || bad "the working tree was touched"

# a bad end that does not build cannot be tested
(cd "$R" && "$DG" bisect --good "$c1" --bad "$c3" --scenario bounce --report-dir "$W/rep125" -q >"$W/out" 2>"$W/err")
expect_rc $? 125 "bisect to an unbuildable bad end"
contains "$W/err" "cannot be built or tested"
# ... and its report says so: not a PASS over no scenario
contains "$W/rep125/report.txt" "ERROR — 1 scenario (0 passed, 0 failed, 1 could not be tested)"
contains "$W/rep125/report.json" '"status": "error"'
# {cc} and {cflags} of bisect are $CC and $CFLAGS when set: a compiler that does not exist builds nothing
(cd "$R" && CC=no-such-cc-dg CFLAGS=-DMARK_dg "$DG" bisect --good "$c1" --bad "$c6" --scenario bounce \
  --report-dir "$W/repcc" -q >"$W/out" 2>"$W/err")
expect_rc $? 125 "bisect with CC=no-such-cc-dg"
contains "$W/err" "the good revision .* cannot be built"
contains "$W/repcc/bisect.log" "(CC=no-such-cc-dg CFLAGS=-DMARK_dg DETGATE_BUILD=.*/build-good): 'no-such-cc-dg' -O2 \$CFLAGS"
contains "$W/repcc/bisect.log" "no-such-cc-dg: .*not found"
# good and bad the same: nothing to bisect
(cd "$R" && "$DG" bisect --good "$c1" --bad "$c2" --scenario bounce -q >"$W/out" 2>"$W/err")
expect_rc $? 0 "bisect of two equal revisions"
# a process project without [build] command is refused before anything runs
sed '/^\[build\]/,$d' "$R/detgate.ini" >"$W/nobuild.ini"
cp "$W/nobuild.ini" "$R/nobuild.ini"
(cd "$R" && "$DG" bisect --good "$c1" --bad "$c6" --scenario bounce --project nobuild.ini >"$W/out" 2>"$W/err")
expect_rc $? 2 "bisect without a build command"
contains "$W/err" "\[build\] command is required to bisect a process engine"
contains "$W/err" "an engine with nothing to build, such as a script: command = true"
rm "$R/nobuild.ini"

# a commit that does not build right before the bad one: git cannot choose, detgate names both (125)
git -C "$R" checkout -q -b amb "$c3"
sed -i '$d' "$R/engine.c"
sed -i 's|^        double x = b\[i\].p\[0\] + (i == 0 ? jitter : 0);$|        double x = b[i].p[0] + (i == 0 ? jitter : 0) + (i == 1 \&\& t >= 30 ? 0.5 : 0);|' "$R/engine.c"
c3b=$(commit "engine: refactor finished, and faster")
(cd "$R" && "$DG" bisect --good "$c2" --bad "$c3b" --scenario bounce --report-dir "$W/repamb" -q >"$W/out" 2>"$W/err")
expect_rc $? 125 "bisect with a skipped commit next to the bad one"
contains "$W/err" "the first bad commit is one of"
contains "$W/err" "^  $c3$"
contains "$W/err" "^  $c3b$"
contains "$W/repamb/report.txt" "bisect: could not test: git bisect named no first bad commit"
lacks "$W/repamb/report.txt" "PASS — 0 scenarios"

# the raw policy: a sub-quantum change is nothing to bisect under warn (exit 0, said), bad under fail
git -C "$R" checkout -q -b raw "$c4"
sed -i 's|^        double x = b\[i\].p\[0\] + (i == 0 ? jitter : 0);$|        double x = b[i].p[0] + (i == 0 ? jitter : 0) + (i == 1 \&\& t >= 30 ? 1e-9 : 0);|' "$R/engine.c"
c5r=$(commit "engine: a sub-quantum change")
(cd "$R" && "$DG" bisect --good "$c1" --bad "$c5r" --scenario bounce -q >"$W/out" 2>"$W/err")
expect_rc $? 0 "bisect of a raw-only drift under --raw warn"
contains "$W/err" "its raw floats differ from tick 30"
(cd "$R" && "$DG" bisect --good "$c1" --bad "$c5r" --scenario bounce --raw fail -q >"$W/out" 2>"$W/err")
expect_rc $? 1 "bisect of a raw-only drift under --raw fail"
contains "$W/out" "first bad commit: $c5r engine: a sub-quantum change"
contains "$W/out" "raw floats first differ at tick 30, first in entity 2, pos.x: raw A [-0-9.e]*, B [-0-9.e]* (B - A = [-0-9.e]* nm, [0-9]* ulps) (quantized state identical"

# ---- matrix: the build command with {cc} and {cflags} ---------------------------------------------
git -C "$R" checkout -q "$c6"
(cd "$R" && "$DG" matrix --scenario bounce --configs 'cc:-O1:off,cc:-O1 -DPERTURB:off' --report-dir "$W/mrep" -q \
  >"$W/out" 2>"$W/err")
expect_rc $? 1 "matrix with -DPERTURB"
contains "$W/out" "^2 classes: {cc -O1 off} {cc -O1 -DPERTURB off}"
contains "$W/out" "cc -O1 off .* cc -O1 -DPERTURB off  50 "
"$CHECK" "$SRC/docs/report-schema.json" "$W/mrep" && ok || bad "matrix reports do not validate"
(cd "$R" && "$DG" matrix --scenario bounce --configs 'cc:-O1:off,cc:-O1 -DUNUSED:off' >"$W/out" 2>"$W/err")
expect_rc $? 0 "matrix with flags that change nothing"
contains "$W/out" "^1 class: {cc -O1 off, cc -O1 -DUNUSED off}"
(cd "$R" && "$DG" matrix --scenario bounce --configs 'cc:-O1 -DPERTURB:fast' --dry-run >"$W/out" 2>"$W/err")
expect_rc $? 0 "matrix --dry-run"
contains "$W/out" "CFLAGS=-O1 -DPERTURB -ffp-contract=fast"
# a configuration whose build fails is not built (125), its log kept
(cd "$R" && "$DG" matrix --scenario bounce --configs 'cc:-O1:off,no-such-cc-dg:-O1:off' --work "$W/mw" \
  >"$W/out" 2>"$W/err")
expect_rc $? 125 "matrix with a compiler that does not exist"
contains "$W/out" "not built: no-such-cc-dg -O1 off"
[ -z "$(git -C "$R" status --porcelain)" ] && ok || bad "matrix touched the source tree: $(git -C "$R" status --porcelain)"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
