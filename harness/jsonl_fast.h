/* harness/jsonl_fast.h — the common JSON Lines tick line parsed without jansson (harness/jsonl_fast.c);
 * any other line is left to jansson. */
#ifndef DETGATE_HARNESS_JSONL_FAST_H
#define DETGATE_HARNESS_JSONL_FAST_H

#include <detgate/quant.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct harness__jsonl_tick {
    uint64_t tick;
    dg_entity_in *ents; /* in the line's order, as source_states.c's json_entity would fill them */
    size_t n, cap;
} harness__jsonl_tick;

/* line (NUL-terminated, as jansson reads it) is {"tick":N,"entities":[...]} in any member order,
 * whose entities have only known members, each once, every value valid: true with t filled exactly
 * as jansson and source_states.c's checks would give it. False: parse the line with jansson. */
bool dg_harness__jsonl_fast_tick(const char *line, harness__jsonl_tick *t);
void dg_harness__jsonl_tick_free(harness__jsonl_tick *t);

/* Tests only: true makes dg_harness__jsonl_fast_tick decline every line (the jansson path alone). */
extern bool dg_harness__jsonl_fast_off;

#endif
