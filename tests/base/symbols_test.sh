#!/usr/bin/env bash
# tests/base/symbols_test.sh — the symbol rule of every library an engine links: each exported symbol
# starts with dg_ (nothing lands unprefixed in an engine's namespace); one that no public header
# (include/detgate/) declares is private and says so with a double underscore after its module
# (dg_flrep__, dg_harness__, ...), unless it is base/'s shared vocabulary (declared in base/*.h).
# Usage: symbols_test.sh SOURCE_DIR LIB.a...
set -u
src=$1; shift
fail=0
for lib in "$@"; do
  syms=$(nm -g --defined-only "$lib" | awk '$2 ~ /^[TDBRCV]$/ {print $3}' | sort -u)
  [ -n "$syms" ] || { echo "FAIL: $lib exports nothing (not a library, or nm failed)"; fail=1; continue; }
  for s in $syms; do
    case $s in
      __odr_asan.*) ;; # AddressSanitizer's one-definition-rule indicators (the asan preset), not ours
      dg_*__*) ;;
      dg_*) if ! grep -qE "\\b$s\\b" "$src"/include/detgate/*.h "$src"/base/*.h; then
              echo "FAIL: $(basename "$lib"): $s is exported, declared in no public header, and has no '__'"; fail=1
            fi ;;
      *) echo "FAIL: $(basename "$lib"): $s is exported without the dg_ prefix"; fail=1 ;;
    esac
  done
done
[ $fail -eq 0 ] && echo "every exported symbol of $# libraries follows the rule"
exit $fail
