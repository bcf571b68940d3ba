#!/usr/bin/env bash
# tests/codec/old_reader_test.sh — today's reader against files of the new writer (issue 14, the
# version rule of docs/FORMAT-flrep.md §3.1 and §12): builds the detgate CLI of commit OLD (default
# 25b37e5, the commit before format 2.0) from this checkout's git history into a temp dir, with the
# release preset's settings, then:
#   - a legacy-schema file from the new writer: the old build's `dump` equals the new build's;
#   - a format 2.0 file: the old build refuses it, exit 2, naming both versions ("format 2.0" and
#     "reads format 1.x"), and prints no tick; the new build reads it.
# Outside a git checkout, or without the commit, it fails (exit 1) — it never skips.
# Usage: old_reader_test.sh SOURCE_DIR NEW_DETGATE SAMPLE_WRITER [OLD_COMMIT]
set -u
src=$1 new=$2 writer=$3 old=${4:-25b37e5}
die() { echo "old_reader_test: FAIL: $*" >&2; exit 1; }

git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || die "$src is not a git checkout: this test builds the old reader from git history and cannot run without it"
git -C "$src" cat-file -e "$old^{commit}" 2>/dev/null || die "commit $old is not in the history of $src"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dg-oldreader.XXXXXX") || die "mktemp"
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
git -C "$src" archive "$old" | tar -x -C "$tmp/src" || die "git archive $old"
# the release preset's cache variables (CMakePresets.json "release"), tests and benchmarks off
cmake -S "$tmp/src" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc \
      -DDETGATE_TESTS=OFF -DDETGATE_BENCH=OFF >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log" >&2; die "configure of $old"; }
cmake --build "$tmp/build" --target detgate -j2 >"$tmp/build.log" 2>&1 || { tail -30 "$tmp/build.log" >&2; die "build of $old"; }
oldbin=$(find "$tmp/build" -type f -name detgate -perm -u+x | head -n 1)
[ -n "$oldbin" ] || die "no detgate binary in the build of $old"

"$writer" "$tmp/legacy.flrep" "$tmp/v2.flrep" || die "the sample writer failed"
[ "$(head -c 6 "$tmp/legacy.flrep" | od -An -tx1 | tr -d ' \n')" = "464c52500100" ] || die "the legacy file is not format 1"
[ "$(head -c 6 "$tmp/v2.flrep" | od -An -tx1 | tr -d ' \n')" = "464c52500200" ] || die "the 2.0 file is not format 2"

"$oldbin" dump --json "$tmp/legacy.flrep" >"$tmp/old.dump" 2>"$tmp/old.err"; rc_old=$?
"$new" dump --json "$tmp/legacy.flrep" >"$tmp/new.dump" 2>"$tmp/new.err"; rc_new=$?
[ "$rc_old" -eq 0 ] || { cat "$tmp/old.err" >&2; die "old dump of the 1.0 file exited $rc_old"; }
[ "$rc_new" -eq 0 ] || { cat "$tmp/new.err" >&2; die "new dump of the 1.0 file exited $rc_new"; }
[ -s "$tmp/old.dump" ] || die "old dump of the 1.0 file is empty"
cmp -s "$tmp/old.dump" "$tmp/new.dump" || { diff "$tmp/old.dump" "$tmp/new.dump" | head -20 >&2; die "old and new dump of the 1.0 file differ"; }
echo "1.0 file from the new writer: old and new dump equal ($(wc -l <"$tmp/old.dump") lines)"

"$oldbin" dump --json "$tmp/v2.flrep" >"$tmp/old2.dump" 2>"$tmp/old2.err"; rc=$?
[ "$rc" -eq 2 ] || { cat "$tmp/old2.err" >&2; die "old dump of the 2.0 file exited $rc, expected 2"; }
grep -q "(format 2\.0)" "$tmp/old2.err" || { cat "$tmp/old2.err" >&2; die "old reader's refusal does not name format 2.0"; }
grep -q "reads format 1\.x" "$tmp/old2.err" || { cat "$tmp/old2.err" >&2; die "old reader's refusal does not name format 1.x"; }
[ ! -s "$tmp/old2.dump" ] || die "old reader printed ticks of the 2.0 file before refusing it (a partial read)"
echo "2.0 file: old reader refuses it, exit 2: $(head -n 1 "$tmp/old2.err")"

"$new" dump --json "$tmp/v2.flrep" >"$tmp/new2.dump" 2>"$tmp/new2.err" || { cat "$tmp/new2.err" >&2; die "new dump of the 2.0 file failed"; }
echo "2.0 file: the new reader reads it ($(wc -l <"$tmp/new2.dump") lines)"
echo "old_reader_test: PASS"
