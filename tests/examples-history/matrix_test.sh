#!/usr/bin/env bash
# tests/examples-history/matrix_test.sh DETGATE EXAMPLES BUILD — `detgate matrix` over the ODE,
# Chipmunk2D and Bullet examples through their detgate.ini's [build] command: only the adapter is
# rebuilt (the distro's library is prebuilt). -O0 and -O2 record alike; -ffp-contract=fast with FMA
# contracts the adapters' body placement (base + (k + 0.5) * link) and splits the chains in two
# classes, raw floats from tick 0 — checked against the two adapters' own CSV.
set -uo pipefail
detgate=$1 ex=$2 build=$3
case $detgate in /*) ;; *) detgate=$PWD/$detgate ;; esac
ex=$(cd "$ex" && pwd) || exit 1
case $build in /*) ;; *) build=$PWD/$build ;; esac
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
rm -rf "$build" && mkdir -p "$build/out"
out=$build/out
unset DETGATE_BUILD CFLAGS
expect_rc() {
  local want=$1 log=$2; shift 2
  "$@" >"$log" 2>&1; local rc=$?
  if [ "$rc" -ne "$want" ]; then fail "exit $rc (expected $want): $*"; sed -n 1,20p "$log" >&2; return 1; fi
}
expect_in() { grep -qF -- "$2" "$1" || { fail "$1 lacks '$2'"; sed -n 1,12p "$1" >&2; }; }
first_raw_tick() {
  awk -F, 'NR == FNR { a[FNR] = $0; next } FNR > 1 && a[FNR] != $0 { print $1; found = 1; exit }
           END { if (!found) print "none" }' "$1" "$2"
}
have_fma=0
grep -qw fma /proc/cpuinfo && have_fma=1

# matrix ENGINE SCENARIO CONFIGS WANT_RC: detgate matrix in the example's folder, work kept in $out/ENGINE-SCENARIO
matrix() {
  local e=$1 s=$2 cfg=$3 want=$4
  (cd "$ex/$e" && expect_rc "$want" "$out/$e-$s.log" "$detgate" matrix --scenario "$s" --configs "$cfg" \
     --work "$out/$e-$s" --report-dir "$out/$e-$s.report") || fail "matrix $e $s"
}

# ---- -O0 vs -O2 (no contraction): one class, one raw group, on each example ---------------------
matrix ode chain 'gcc:-O0:off,gcc:-O2:off,clang:-O2:off' 0 && expect_in "$out/ode-chain.log" "1 class: {gcc -O0 off, gcc -O2 off, clang -O2 off}"
matrix chipmunk pyramid 'gcc:-O0:off,gcc:-O2:off' 0 && expect_in "$out/chipmunk-pyramid.log" "1 class: {gcc -O0 off, gcc -O2 off}"
matrix bullet chain-p2p 'gcc:-O0:off,gcc:-O2:off' 0 && expect_in "$out/bullet-chain-p2p.log" "1 class: {gcc -O0 off, gcc -O2 off}"
grep -q "raw floats" "$out/ode-chain.log" "$out/chipmunk-pyramid.log" "$out/bullet-chain-p2p.log" &&
  fail "-O0 vs -O2 without contraction: the raw floats drifted"

# ---- -ffp-contract=fast -mfma: the chains' link placement is fused, two classes ------------------
if [ "$have_fma" = 1 ]; then
  for eb in ode:chain:ode_adapter:.ode bullet:chain-p2p:bullet_adapter:.bt; do
    IFS=: read -r e s bin ext <<<"$eb"
    matrix "$e" "$s" 'gcc:-O2:off,gcc:-O2:fast' 1 && expect_in "$out/$e-$s.log" "2 classes: {gcc -O2 off} {gcc -O2 fast}"
    # the raw tick the matrix names is the first tick whose rows differ in the two adapters' CSV
    fmt=--csv; [ "$e" = bullet ] && fmt=
    "$out/$e-$s/build-01-gcc-O2-off/$bin" "$ex/$e/scenarios/$s$ext" $fmt >"$out/$e-off.csv" 2>/dev/null
    "$out/$e-$s/build-02-gcc-O2-fast/$bin" "$ex/$e/scenarios/$s$ext" $fmt >"$out/$e-fast.csv" 2>/dev/null
    t=$(first_raw_tick "$out/$e-off.csv" "$out/$e-fast.csv")
    [ "$t" != none ] || fail "$e $s: the fast build's CSV is the off build's"
    grep -Eq "^gcc -O2 off +gcc -O2 fast +[0-9]+ +$t\$" "$out/$e-$s.log" ||
      fail "$e $s: the matrix does not name raw tick $t: $(grep 'gcc -O2 fast  ' "$out/$e-$s.log")"
  done
else
  echo "matrix_test: this CPU has no FMA: -ffp-contract=fast has no fused instruction to contract into; not checked"
fi

# ---- the build command's failure is reported per configuration, not hidden -----------------------
matrix ode pyramid 'gcc:-O2:off,nosuchcc:-O2:off' 125 && expect_in "$out/ode-pyramid.log" "not built: nosuchcc -O2 off"

if [ "$fails" -ne 0 ]; then echo "matrix_test: $fails failure(s)" >&2; exit 1; fi
echo "matrix_test: all checks passed"
