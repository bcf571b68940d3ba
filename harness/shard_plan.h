/* harness/shard_plan.h — how `detgate gate --shard I/N` splits a corpus: a longest-first plan over
 * each scenario's cost, and the corpus id a sharded report carries (docs/CI.md, docs/REPORT-SCHEMA.md).
 * Pure functions of their inputs: every machine given the same corpus computes the same plan. */
#ifndef DETGATE_HARNESS_SHARD_PLAN_H
#define DETGATE_HARNESS_SHARD_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Assigns n scenarios (given in name order, cost[i] >= 0) to `shards` shards, longest first (LPT):
 * scenarios sorted by cost descending, ties by name order (index ascending); each goes to the
 * shard with the least cost so far, the lowest index on ties. shard_of[i] gets 0..shards-1;
 * load (may be NULL, `shards` entries) gets each shard's total cost. shards >= 1. Returns false
 * only when it cannot allocate (shard_of untouched). */
bool dg_harness__shard_plan(const uint64_t *cost, size_t n, uint32_t shards, uint32_t *shard_of, uint64_t *load);

/* The corpus id: XXH3-64 (seed 0) over the format token, a 0 byte, then for each scenario in the
 * order given (name order) its name, a 0 byte and its cost as 8 little-endian bytes. Written as
 * 16 lowercase hex digits and a NUL into out (17 bytes). False only when it cannot allocate. */
bool dg_harness__corpus_id(const char *format, const char *const *names, const uint64_t *cost, size_t n, char out[17]);

#endif
