#!/usr/bin/env bash
# tests/harness/inputs_test.sh — bad engine-state streams and scenarios, as a user writes them: every
# error names the file and line (and tick, entity, member) and what was expected against what was
# found, with exit 2; plus the build presets README.md shows (the fuzz preset configures on a clean
# tree) and `matrix --dry-run`'s reading of --configs.
# usage: inputs_test.sh DETGATE SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"   # ok, bad, expect, contains, lacks, same_file
DG=$1
SRC=$2
work_dir inputs
cd "$W" || exit 1

# expect NAME CODE SUBSTRING CMD...: CMD exits CODE and its stderr contains SUBSTRING (exactly).
expect() {
  local name=$1 code=$2 want=$3
  shift 3
  "$@" >"$W/out" 2>"$W/err"
  local rc=$?
  if [ "$rc" -ne "$code" ]; then
    bad "$name: exit $rc, expected $code"; sed 's/^/  | /' "$W/err"
  elif ! grep -qF -- "$want" "$W/err"; then
    bad "$name: stderr lacks: $want"; sed 's/^/  | /' "$W/err"
  else
    ok
  fi
}
rec() { "$DG" record --states "$1" -o "$W/o.flrep"; }

# ---- CSV: values the quantizer refuses, named by file, line, tick, entity and field ------------------
H='tick,id,px,py,pz,qw,qx,qy,qz,health'
for v in nan inf 1e300; do
  printf '%s\n0,1,0,0,0,1,0,0,0,1\n1,1,0,0,0,1,0,0,0,1\n1,2,%s,0,0,1,0,0,0,1\n' "$H" "$v" >"q_$v.csv"
done
expect csv-nan 2 'q_nan.csv:4:1: value out of range: tick 1, entity 2: pos[0] = nan: expected finite' rec q_nan.csv
expect csv-inf 2 'q_inf.csv:4:1: value out of range: tick 1, entity 2: pos[0] = inf: expected finite' rec q_inf.csv
expect csv-1e300 2 'q_1e300.csv:4:1: value out of range: tick 1, entity 2: pos[0] = 1e+300: expected finite' \
  rec q_1e300.csv
printf '%s\n0,1,0,0,0,1,0,0,0,1\n0,7,0,0,0,0,0,0,0,1\n' "$H" >zq.csv
expect csv-zero-quaternion 2 'zq.csv:3:1: value out of range: tick 0, entity 7: rot = (0, 0, 0, 0): expected a non-zero quaternion' \
  rec zq.csv
printf '%s\n0,1,0,0,0,1,0,0,0,1\n1,1,0,0,0,1,0,0,0,nan\n' "$H" >hn.csv
expect csv-nan-health 2 'hn.csv:3:1: value out of range: tick 1, entity 1: health = nan: expected a number in 0..1' \
  rec hn.csv
awk 'BEGIN { print "tick,id,px,py,pz"; for (i = 1; i <= 65536; i++) print "0," i ",0,0,0" }' >many.csv
expect csv-too-many-entities 2 'many.csv:65537:1: value out of range: tick 0: expected at most 65535 entities per tick, found more (entity 65536 is the 65536th)' \
  rec many.csv

# ---- CSV: a duplicate on its own row; an empty file ------------------------------------------------
printf '%s\n0,1,0,0,0,1,0,0,0,1\n0,2,0,0,0,1,0,0,0,1\n0,1,0,0,0,1,0,0,0,1\n1,1,0,0,0,1,0,0,0,1\n' "$H" >dup.csv
expect csv-duplicate-row 2 'dup.csv:4:1: syntax error: tick 0: entity 1 appears twice (first on line 2)' rec dup.csv
# the duplicate in the last tick (no next tick to read ahead)
printf '%s\n0,3,0,0,0,1,0,0,0,1\n0,3,0,0,0,1,0,0,0,1\n' "$H" >dup-last.csv
expect csv-duplicate-last-tick 2 'dup-last.csv:3:1: syntax error: tick 0: entity 3 appears twice (first on line 2)' \
  rec dup-last.csv
printf '%s\n0,1,0,0,0,1,0,0,0,1\n2,1,0,0,0,1,0,0,0,1\n1,1,0,0,0,1,0,0,0,1\n' "$H" >order.csv
expect csv-ticks-decrease 2 'order.csv:4:1: syntax error: ticks must increase: expected a tick after 2, found 1' \
  rec order.csv
: >empty.csv
expect csv-empty 2 'empty.csv: syntax error: empty, expected a header line' rec empty.csv
printf '# only a comment\n' >comment.csv
expect csv-comment-only 2 'comment.csv:1:1: syntax error: expected a header row' rec comment.csv

printf 'tick,id,px,py,pz,type\n0,1,0,0,0,0\n3,4,zero,0,0,0\n' >field.csv
expect csv-field-located 2 'field.csv:3:5: syntax error: tick 3, entity 4: column px: expected a number (within the double range), found "zero"' \
  rec field.csv
printf 'tick,id,px,py,pz,type\n0,1,0,0,0,70000\n' >type.csv
expect csv-type-range 2 'type.csv:2:11: syntax error: tick 0, entity 1: column type: expected an integer in 0..65535, found "70000"' \
  rec type.csv
printf 'tick,id,px,py,pz\n0,1,0,0\n' >few.csv
expect csv-few-fields 2 'few.csv:2:8: syntax error: expected 5 fields (one per header column), found 4' rec few.csv
printf 'tick,id,px,py,pz\n0,1,0,0,0,5\n' >more.csv
expect csv-more-fields 2 'more.csv:2:10: syntax error: expected 5 fields (one per header column), found 6' rec more.csv

# ---- JSON Lines: unknown members, values out of range ---------------------------------------------
E='{"id":1,"pos":[0,0,0]}'
j() { printf '%s\n' "$@" >"$J"; }
J=helth.jsonl j '{"tick":0,"entities":[{"id":1,"pos":[0,0,0],"helth":0.5}]}'
expect jsonl-helth 2 'helth.jsonl:1:1: syntax error: tick 0, entities[0]: unknown member "helth" (did you mean "health"?); expected one of: id, type, faction, pos, vel, rot, health, flags' \
  rec helth.jsonl
J=velocity.jsonl j "{\"tick\":0,\"entities\":[$E]}" '{"tick":1,"entities":[{"id":1,"pos":[0,0,0],"velocity":[1,0,0]}]}'
expect jsonl-velocity 2 'velocity.jsonl:2:1: syntax error: tick 1, entities[0]: unknown member "velocity" (did you mean "vel"?)' \
  rec velocity.jsonl
J=evnets.jsonl j "{\"tick\":0,\"entities\":[$E],\"evnets\":[]}"
expect jsonl-evnets 2 'evnets.jsonl:1:1: syntax error: tick object: unknown member "evnets" (did you mean "events"?); expected one of: tick, entities, events' \
  rec evnets.jsonl
J=rate.jsonl j '{"detgate_states":1,"tick_rate":30}' "{\"tick\":0,\"entities\":[$E]}"
expect jsonl-tick-rate 2 'rate.jsonl:1:1: syntax error: header: unknown member "tick_rate" (did you mean "tick_rate_hz"?)' \
  rec rate.jsonl
J=far.jsonl j "{\"tick\":0,\"entities\":[$E],\"events\":[{\"kind\":\"chat\",\"zzzzzz\":1}]}"
expect jsonl-no-near-name 2 'far.jsonl:1:1: syntax error: tick 0, events[0]: unknown member "zzzzzz"; expected one of: kind, a, b, c, d, text' \
  rec far.jsonl
J=longkey.jsonl j '{"tick":0,"entities":[{"id":1,"pos":[0,0,0],"\u0001aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa":1}]}'
expect jsonl-long-binary-key 2 'unknown member "?aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa..."; expected one of' rec longkey.jsonl
J=role.jsonl j '{"detgate_states":1,"participants":[{"callsign":"Viper 1","name":"x"}]}' "{\"tick\":0,\"entities\":[$E]}"
expect jsonl-table-member 2 'role.jsonl:1:1: syntax error: header participants[0]: unknown member "name"' rec role.jsonl
J=cat.jsonl j '{"detgate_states":1,"types":[{"index":0,"id":"f16","category":9}]}' "{\"tick\":0,\"entities\":[$E]}"
expect jsonl-category-range 2 'cat.jsonl:1:1: syntax error: header types[0] "category": expected an integer in 0..5, found 9' \
  rec cat.jsonl
J=rate0.jsonl j '{"detgate_states":1,"tick_rate_hz":0}' "{\"tick\":0,\"entities\":[$E]}"
expect jsonl-tick-rate-0 2 'rate0.jsonl:1:1: syntax error: header "tick_rate_hz": expected an integer in 1..100000, found 0' \
  rec rate0.jsonl
J=kf.jsonl j '{"detgate_states":1,"keyframe_interval":3}' "{\"tick\":0,\"entities\":[$E]}"
expect jsonl-keyframe-3 2 'kf.jsonl:1:1: syntax error: header "keyframe_interval": expected an integer in 15..3600, found 3' \
  rec kf.jsonl
J=ver.jsonl j '{"detgate_states":2}' "{\"tick\":0,\"entities\":[$E]}"
expect jsonl-version 2 'ver.jsonl:1:1: syntax error: header "detgate_states": expected an integer in 1..1, found 2' \
  rec ver.jsonl
J=scn.jsonl j '{"detgate_states":1,"scenario":7}' "{\"tick\":0,\"entities\":[$E]}"
expect jsonl-scenario-not-string 2 'scn.jsonl:1:1: syntax error: header "scenario": expected a string, found 7' \
  rec scn.jsonl
J=ftype.jsonl j '{"tick":0,"entities":[{"id":1,"pos":[0,0,0],"faction":70000}]}'
expect jsonl-faction-range 2 'ftype.jsonl:1:1: syntax error: tick 0, entities[0] "faction": expected an integer in 0..65535, found 70000' \
  rec ftype.jsonl
J=pos2.jsonl j '{"tick":5,"entities":[{"id":4,"pos":[0,0]}]}'
expect jsonl-pos-short 2 'pos2.jsonl:1:1: syntax error: tick 5, entity 4 (entities[0]) "pos": expected an array of 3 numbers, found an array of 2' \
  rec pos2.jsonl
J=jq.jsonl j "{\"tick\":0,\"entities\":[$E]}" '{"tick":1,"entities":[{"id":1,"pos":[0,0,0]},{"id":9,"pos":[1e300,0,0]}]}'
expect jsonl-quant-range 2 'jq.jsonl:2:1: value out of range: tick 1, entity 9 (entities[1]): pos[0] = 1e+300: expected finite' \
  rec jq.jsonl
J=jdup.jsonl j '{"tick":0,"entities":[{"id":2,"pos":[0,0,0]},{"id":1,"pos":[0,0,0]},{"id":2,"pos":[0,0,0]}]}'
expect jsonl-duplicate 2 'jdup.jsonl:1:1: syntax error: tick 0: entity 2 appears twice (entities[0] and entities[2])' \
  rec jdup.jsonl
: >empty.jsonl
expect jsonl-empty 2 'empty.jsonl: syntax error: empty, expected at least one tick' rec empty.jsonl
J=arr.jsonl j '[1,2]'
expect jsonl-not-object 2 'arr.jsonl:1:1: syntax error: expected a JSON object per line, found an array' rec arr.jsonl
J=late.jsonl j "{\"tick\":0,\"entities\":[$E]}" '{"detgate_states":1}'
expect jsonl-late-header 2 'late.jsonl:2:1: syntax error: expected the header object ("detgate_states") on line 1 only, found it on line 2' \
  rec late.jsonl
# a header that is right still records, at the rate it names
J=good.jsonl j '{"detgate_states":1,"tick_rate_hz":30,"keyframe_interval":15}' "{\"tick\":0,\"entities\":[$E]}"
expect jsonl-good-header 0 'o.flrep: 1 tick,' rec good.jsonl
"$DG" info "$W/o.flrep" >"$W/info" 2>&1
grep -qE 'tick rate[^0-9]*30' "$W/info" && ok || { bad "good.jsonl: the recording is not at 30 Hz"; cat "$W/info"; }

# ---- a NUL byte in a line is refused (it used to pass for a blank line and be skipped) ---------------
# (the NUL's byte offset: the bytes of the lines before it, and those of the row before it on its own)
printf 'tick,id,px,py,pz\n0,1,1,2,3\n\0garbage,,\n1,1,1,2,3\n' >nul.csv
off=$(head -n 2 nul.csv | wc -c)
rm -f "$W/o.flrep"
expect csv-nul-line 2 "nul.csv:3:1: syntax error: expected text, found a NUL byte (0x00) at byte offset $off" rec nul.csv
[ -e "$W/o.flrep" ] && bad "csv-nul-line: left o.flrep behind" || ok
expect csv-nul-stdin 2 "stdin:3:1: syntax error: expected text, found a NUL byte (0x00) at byte offset $off" rec - <nul.csv
printf 'tick,id,px,py,pz\n0,1,1,2,3\0junk\n' >nul-mid.csv
off=$(( $(head -n 1 nul-mid.csv | wc -c) + 9 ))
expect csv-nul-in-row 2 "nul-mid.csv:2:10: syntax error: expected text, found a NUL byte (0x00) at byte offset $off" \
  rec nul-mid.csv
printf '{"tick":0,"entities":[%s]}\n\0garbage\n{"tick":1,"entities":[%s]}\n' "$E" "$E" >nul.jsonl
off=$(head -n 1 nul.jsonl | wc -c)
expect jsonl-nul-line 2 "nul.jsonl:2:1: syntax error: expected text, found a NUL byte (0x00) at byte offset $off" \
  rec nul.jsonl
expect jsonl-nul-stdin 2 "stdin:2:1: syntax error: expected text, found a NUL byte (0x00) at byte offset $off" rec - <nul.jsonl
# through a process engine a malformed stream is the engine's failure: 125, the same place named
mkdir -p proj/s
cp nul.csv proj/s/one.csv
printf '[project]\nscenarios = s\n[engine]\nrun = cat {scenario}\n' >proj/detgate.ini
expect process-nul-line 125 'one (stdout):3:1: syntax error: expected text, found a NUL byte (0x00)' \
  "$DG" record one -o "$W/o.flrep" --project proj/detgate.ini

# ---- zstd told by its frame magic, not only by a .zst name: the same recording every way ------------
printf 'tick,id,px,py,pz\n0,1,1,2,3\n0,2,4,5,6\n1,1,1,2,4\n2,2,4,5,7\n' >z.csv
zstd -q -f z.csv -o z.csv.zst && cp z.csv.zst z-noext
"$DG" record --states z.csv -o "$W/z-plain.flrep" 2>/dev/null
for how in file stdin noext noext-stdin; do
  case $how in
    file) rec z.csv.zst ;; stdin) rec - <z.csv.zst ;; noext) rec z-noext ;; noext-stdin) rec - <z-noext ;;
  esac >/dev/null 2>"$W/err" && cmp -s "$W/o.flrep" "$W/z-plain.flrep" && ok \
    || { bad "zstd ($how): not the plain stream's recording"; sed 's/^/  | /' "$W/err"; }
  rm -f "$W/o.flrep"
done
cp z.csv.zst proj/s/two.zst   # a process engine's compressed stdout
"$DG" record two -o "$W/o.flrep" --project proj/detgate.ini 2>"$W/err" && cmp -s "$W/o.flrep" "$W/z-plain.flrep" && ok \
  || { bad "zstd (process engine): not the plain stream's recording"; sed 's/^/  | /' "$W/err"; }
rm -f "$W/o.flrep"
head -c 30 z.csv.zst >z-cut
expect zstd-cut-stdin 2 'stdin: malformed input: zstd: the stream ends inside a frame (cut short)' rec - <z-cut
[ -e "$W/o.flrep" ] && bad "zstd-cut-stdin: left o.flrep behind" || ok
expect zstd-cut-noext 2 'z-cut: malformed input: zstd: the stream ends inside a frame (cut short)' rec z-cut
[ -e "$W/o.flrep" ] && bad "zstd-cut-noext: left o.flrep behind" || ok
printf '(not zstd)\n' >paren.csv
expect zstd-not-magic 2 'zstd: expected the frame magic 28 b5 2f fd, found 28 6e 6f 74' rec - <paren.csv
# the same rule for a file as for a stream read once (docs/STATES-STREAM.md): its first byte
expect zstd-not-magic-file 2 'paren.csv at byte 0: malformed input: zstd: expected the frame magic 28 b5 2f fd, found 28 6e 6f 74' \
  rec paren.csv
[ -e "$W/o.flrep" ] && bad "zstd-not-magic-file: left o.flrep behind" || ok

# ---- scenarios: a file over the size limit is bad input (2), not "could not test" (125) ------------
truncate -s 1G big.scn
expect scn-1gib 2 'big.scn: size limit exceeded: expected a scenario of at most 16777216 bytes, found 1073741824 bytes' \
  "$DG" record big.scn -o "$W/o.flrep"

# ---- matrix --configs: any flags, parsed without building (--dry-run) ------------------------------
mx() { "$DG" matrix --scenario "$SRC/corpus/scenarios/dogfight-40.scn" --dry-run "$@"; }
mx --configs 'gcc:-O3 -march=native:off,clang::fast' --config 'gcc:-O2 -Wl,-O1:off' >"$W/plan" 2>"$W/err"
rc=$?
[ "$rc" -eq 0 ] && ok || { bad "matrix --dry-run exit $rc"; cat "$W/err"; }
grep -qF 'detgate matrix: scenario dogfight-40, 3 configurations (dry run: nothing is built)' "$W/plan" && ok \
  || bad "dry run: no plan line"
grep -qE '^ 1  gcc -O3 -march=native off +build-01-gcc-O3-march_native-off +CC=gcc  DETGATE_SIM_FLAGS=-O3;-march=native;-ffp-contract=off$' \
  "$W/plan" && ok || { bad "dry run: -march=native not taken as written"; cat "$W/plan"; }
grep -qE '^ 2  clang fast +build-02-clang-fast +CC=clang  DETGATE_SIM_FLAGS=-ffp-contract=fast(;-mfma)?$' "$W/plan" && ok \
  || { bad "dry run: empty FLAGS"; cat "$W/plan"; }
grep -qE '^ 3  gcc -O2 -Wl,-O1 off .*DETGATE_SIM_FLAGS=-O2;-Wl,-O1;-ffp-contract=off$' "$W/plan" && ok \
  || { bad "dry run: --config with a comma"; cat "$W/plan"; }
mx >"$W/plan" 2>&1
grep -qF '12 configurations' "$W/plan" && ok || bad "dry run without --configs: not the 12 defaults"
expect matrix-no-contract 2 "--configs: expected CC:FLAGS:off|fast, found 'gcc:-O2'" mx --configs gcc:-O2
expect matrix-not-a-flag 2 "--configs: expected compiler flags starting with '-' (no ';'), found 'O2'" mx --configs gcc:O2:off
expect matrix-bad-contract 2 "--configs: expected the contraction 'off' or 'fast' after the last ':', found 'slow'" \
  mx --configs gcc:-O2:slow
expect matrix-empty-item 2 "--configs: expected CC:FLAGS:off|fast, found an empty item" mx --configs 'gcc:-O2:off,,clang:-O2:off'
expect matrix-twice 2 "--configs: configuration 'gcc -O2 off' is given twice" mx --configs 'gcc:-O2:off,gcc: -O2 :off'

# a configuration that cannot be built: 125, named, and the work folder with its log kept
mkdir -p "$W/mtmp"
TMPDIR="$W/mtmp" "$DG" matrix --scenario "$SRC/corpus/scenarios/dogfight-40.scn" --source "$SRC" \
  --configs no-such-cc:-O2:off >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 125 ] && ok || { bad "matrix with an unbuildable configuration: exit $rc"; cat "$W/err"; }
grep -qE '^0 classes: \(no configuration recorded\)$' "$W/out" && ok || { bad "matrix: no '0 classes' line"; cat "$W/out"; }
grep -qF 'detgate matrix: scenario dogfight-40, 1 configuration, 0 classes, ' "$W/out" && ok || bad "matrix: no summary"
log=$(sed -nE 's/^not built: no-such-cc -O2 off \(see (.*)\)$/\1/p' "$W/out")
[ -n "$log" ] && [ -s "$log" ] && ok || { bad "matrix: the log it points to is gone: '$log'"; cat "$W/out"; }
grep -qF 'detgate matrix: work folder kept: ' "$W/err" && ok || bad "matrix: does not say the work folder is kept"

# ---- README's build commands: every preset they name configures on a clean tree ---------------------
# (the fuzz preset used to fail: "Target flrep_testlib links to PkgConfig::CMOCKA but the target was
# not found"); configure only, into this test's folder, so no build dir of the tree is touched.
presets=$("$SRC/ci/readme-commands" --list | grep -oE 'cmake --preset [a-z0-9_-]+' | awk '{print $3}' | sort -u)
echo "$presets" | grep -qx fuzz && ok || bad "README's commands name no fuzz preset: $presets"
for p in $presets; do
  if cmake -S "$SRC" --preset "$p" -B "$W/preset-$p" >"$W/preset-$p.log" 2>&1; then
    ok
  else
    bad "cmake --preset $p does not configure"; tail -n 8 "$W/preset-$p.log"
  fi
done

# the whole-file checks of a scenario say the end of the file (or an empty file), not "end of line"
printf 'scenario x\n' >nosession.scn
expect scn-whole-file 2 "nosession.scn:2:1: syntax error: expected session key 'tick_rate=' somewhere in the file, found the end of the file" \
  "$DG" record nosession.scn -o "$W/o.flrep"
: >empty.scn
expect scn-empty 2 "empty.scn:1:1: syntax error: expected 'scenario <name>' as the first statement, found an empty file" \
  "$DG" record empty.scn -o "$W/o.flrep"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
