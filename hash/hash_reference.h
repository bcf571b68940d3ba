/* hash/hash_reference.h — the reference forms behind dg_hash_tick and dg_hash_events' fast paths,
 * private to hash/ and its tests (tests/hash compares each fast path with its reference over many
 * sizes). Both give the values docs/STATE-HASH.md defines, through the XXH3 streaming API. */
#ifndef DETGATE_HASH_REFERENCE_H
#define DETGATE_HASH_REFERENCE_H

#include "detgate/hash.h"

/* dg_hash_tick through dg_hash_tick_begin/add/end and a streamed events hash. */
dg_tick_hash dg_hash__tick_reference(uint64_t tick, const dg_qentity *ents, size_t n, const dg_event *ev,
                                     size_t nev, uint64_t *entity_hashes_out);
/* dg_hash_tick_x the same way (dg_hash_tick_add_x per entity). */
dg_tick_hash dg_hash__tick_x_reference(uint64_t tick, const dg_qentity *ents, const int64_t *extras,
                                       size_t field_count, size_t n, const dg_event *ev, size_t nev,
                                       uint64_t *entity_hashes_out);
/* dg_hash_events through the XXH3 streaming API, whatever the size. */
uint64_t dg_hash__events_reference(const dg_event *ev, size_t n);

#endif
