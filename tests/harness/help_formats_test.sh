#!/usr/bin/env bash
# tests/harness/help_formats_test.sh — every help text names the formats the formats table has
# (harness/format.c), not a list written into it: each usage line's --format alternatives are the
# table's names (as --format's own error lists them), the "(A or B)" lists its labels and magics, and
# harness/cli_main.c holds no literal list that a third format would leave stale.
# usage: help_formats_test.sh DETGATE SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
work_dir help-formats

# the table's names, from --format's refusal (format.c's list): "flrep or rply" -> "flrep|rply"
expect 2 "$DG" record x -o "$W/x" --format no-such-format
list=$(sed -n "s/.*--format: expected \(.*\), found 'no-such-format'.*/\1/p" "$W/err")
[ -n "$list" ] && ok || bad "no list in --format's refusal: $(cat "$W/err")"
bar=$(printf '%s' "$list" | sed 's/, /|/g; s/ or /|/g')
case "$bar" in *"|"*) ok ;; *) bad "fewer than two formats in '$bar'" ;; esac

for cmd in record verify gate bless bisect; do
  expect 0 "$DG" "$cmd" --help
  contains_text "$W/out" "[--format $bar]"
  lacks "$W/out" "{format" # every token replaced
done
for cmd in hash diff info; do
  expect 0 "$DG" "$cmd" --help
  lacks "$W/out" "{format"
done
expect 0 "$DG" hash --help
contains_text "$W/out" "(FILE: .flrep or RPLY)"
expect 0 "$DG" info --help
contains_text "$W/out" "detected by its magic (FLRP or RPLY)"
expect 0 "$DG" help matrix # help COMMAND goes through the same text
contains_text "$W/out" "{cc} and {cflags}" # a brace that is the text's own stays
# nothing in the source names the list: a third format is one file and one row
lacks "$SRC/harness/cli_main.c" "flrep|rply"
lacks "$SRC/harness/cli_main.c" ".flrep or RPLY"
lacks "$SRC/harness/cli_main.c" "FLRP or RPLY"

echo "help_formats: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
