#!/usr/bin/env bash
# tests/base/public_fields_test.sh — the public headers show no field a caller must not touch
# (docs/API.md, "Handles are opaque" and "Caller storage with a private layout"): no struct member
# with a trailing underscore except explicit padding (pad_, pad0_, ...: always 0), and no "do not
# touch" or "private" member comment; the one caller-storage state (dg_hash_stream) is a single
# opaque byte array.
# Usage: public_fields_test.sh SOURCE_DIR
set -u
src=$1
fail=0
hdrs=("$src"/include/detgate/*.h)
# a member declaration whose name ends in '_' (optionally an array): "uint32_t count_;", "char x_[8];"
hits=$(grep -nE '^[[:space:]]+[A-Za-z_].*[^A-Za-z0-9_][A-Za-z][A-Za-z0-9_]*_(\[[^]]*\])*;' "${hdrs[@]}" |
  grep -vE '[^A-Za-z0-9_]pad[0-9]*_(\[[^]]*\])*;')
if [ -n "$hits" ]; then echo "FAIL: public fields with a trailing underscore (private state shown):"; echo "$hits"; fail=1; fi
hits=$(grep -niE '/\*.*(do not touch|private field|fields are private)' "${hdrs[@]}")
if [ -n "$hits" ]; then echo "FAIL: public members marked private:"; echo "$hits"; fail=1; fi
body=$(sed -n '/^typedef struct dg_hash_stream {/,/^} dg_hash_stream;/p' "$src/include/detgate/hash.h")
members=$(printf '%s\n' "$body" | grep -cE '^[[:space:]]+.*;')
if [ "$members" -ne 1 ] || ! printf '%s\n' "$body" | grep -qE 'unsigned char opaque\[DG_HASH_STREAM_SIZE\];'; then
  echo "FAIL: dg_hash_stream is not one opaque byte array:"; printf '%s\n' "$body"; fail=1
fi
[ $fail -eq 0 ] && echo "no public header shows a private field (${#hdrs[@]} headers)"
exit $fail
