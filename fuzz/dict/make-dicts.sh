#!/usr/bin/env bash
# fuzz/dict/make-dicts.sh — rebuilds every <target>.dict from the _*.part files (which parts each
# target's parser reads). Run after editing a part; the results are committed.
set -euo pipefail
cd "$(dirname "$0")"
mk() {
  local out=$1; shift
  { echo "# fuzz/dict/$out.dict — libFuzzer dictionary for the $out target (built by make-dicts.sh from: $*)"
    for p in "$@"; do cat "_$p.part"; done; } | awk '!seen[$0]++ || /^#/' >"$out.dict"
}
mk flrep_header header strings
mk flrep_types sections strings
mk flrep_factions sections strings
mk flrep_roster sections strings
mk flrep_sections sections strings trailer
mk flrep_chunk chunk ticks
mk flrep_ticks ticks strings
mk flrep_trailer trailer chunk
mk flrep_recovery chunk ticks trailer
mk flrep_growing chunk ticks trailer
mk flrep_file header sections chunk ticks trailer strings
mk flrep_roundtrip header sections chunk ticks trailer strings
mk rply_header rply
mk rply_strings rply strings
mk rply_index rply
mk rply_ops rply snapshot
mk rply_snapshot snapshot strings
mk rply_player rply snapshot
mk rply_roundtrip rply snapshot strings
mk hash_log hashlog
mk states_stream states
mk states_file states
