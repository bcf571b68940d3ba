# tests/lib.sh — the pass/fail counters and checks the shell tests share (source it; needs $W for expect).
# Each check counts one pass or prints "FAIL: what" and counts one failure; a script ends with
#   echo "NAME: $pass passed, $fail failed"; [ "$fail" -eq 0 ]
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect CODE CMD... — runs CMD (stdout to $W/out, stderr to $W/err) and checks its exit code
expect() {
  local want=$1
  shift
  "$@" >"$W/out" 2>"$W/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then ok; else bad "exit $got, expected $want: $* ($(head -c 400 "$W/err"))"; fi
}

# contains FILE REGEX / lacks FILE REGEX (grep's basic regular expressions)
contains() { if grep -q -- "$2" "$1"; then ok; else bad "$1 lacks '$2': $(head -c 600 "$1")"; fi; }
lacks() { if grep -q -- "$2" "$1"; then bad "$1 has '$2': $(grep -m1 -- "$2" "$1")"; else ok; fi; }
# contains_text FILE TEXT / lacks_text FILE TEXT (TEXT taken literally)
contains_text() { if grep -qF -- "$2" "$1"; then ok; else bad "$1 lacks '$2': $(head -c 600 "$1")"; fi; }
lacks_text() { if grep -qF -- "$2" "$1"; then bad "$1 has '$2': $(grep -m1 -F -- "$2" "$1")"; else ok; fi; }

same_file() { if cmp -s "$1" "$2"; then ok; else bad "$1 and $2 differ"; fi; }
