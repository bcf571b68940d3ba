/* hash/hash_rply.c — the RPLY v3 state hash: the canonical bytes of an RPLY entity and its properties,
 * XXH3-64 over them, and the state and tick hashes over those (docs/STATE-HASH.md §11). Change a byte
 * here and every RPLY golden hash log changes. */
#include "detgate/hash.h"
#include "hash_internal.h"

#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

_Static_assert(sizeof(XXH3_state_t) <= sizeof(((hash__stream_state *)0)->xxh),
               "dg_hash_stream too small for XXH3_state_t");

static XXH3_state_t *hash_rply__xxh(dg_hash_stream *s) { return (XXH3_state_t *)(void *)dg_hash__state(s)->xxh; }

static void hash_rply__put(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void dg_hash_rply_entity_bytes(const dg_hash_rply_entity *e, uint8_t b[DG_HASH_RPLY_ENTITY_BYTES])
{
    memset(b, 0, DG_HASH_RPLY_ENTITY_BYTES);
    hash_rply__put(b + 0, e->id, 2);
    hash_rply__put(b + 2, e->parent, 2);
    hash_rply__put(b + 4, e->descriptor, 2);
    b[6] = e->x.xf;
    for (int i = 0; i < 3; i++) {
        hash_rply__put(b + 8 + 4 * i, e->x.pos_bits[i], 4);
        hash_rply__put(b + 20 + 4 * i, (uint32_t)e->x.dpos[i], 4);
        hash_rply__put(b + 32 + 4 * i, (uint32_t)e->x.drot[i], 4);
        hash_rply__put(b + 44 + 2 * i, (uint16_t)e->x.rot[i], 2);
    }
    hash_rply__put(b + 50, e->nprops, 2);
}

void dg_hash_rply_prop_bytes(uint16_t name, const dg_rply_value *v, uint8_t b[DG_HASH_RPLY_PROP_BYTES])
{
    memset(b, 0, DG_HASH_RPLY_PROP_BYTES);
    hash_rply__put(b, name, 2);
    b[2] = v->tag;
    uint64_t bits;
    uint32_t f;
    switch (v->tag) {
    case DG_RPLY_PROP_BOOL: b[3] = v->u.b; break;
    case DG_RPLY_PROP_NUMBER: memcpy(&bits, &v->u.num, 8); hash_rply__put(b + 3, bits, 8); break;
    case DG_RPLY_PROP_STRING:
    case DG_RPLY_PROP_ENUM: hash_rply__put(b + 3, v->u.str, 2); break;
    case DG_RPLY_PROP_COLOR3: memcpy(b + 3, v->u.rgb, 3); break;
    case DG_RPLY_PROP_VECTOR3:
        for (int i = 0; i < 3; i++) {
            memcpy(&f, &v->u.vec[i], 4);
            hash_rply__put(b + 3 + 4 * i, f, 4);
        }
        break;
    default: break;
    }
}

void dg_hash_rply_entity_begin(dg_hash_stream *s, const dg_hash_rply_entity *e)
{
    uint8_t b[DG_HASH_RPLY_ENTITY_BYTES];
    XXH3_INITSTATE(hash_rply__xxh(s));
    XXH3_64bits_reset_withSeed(hash_rply__xxh(s), DG_HASH_RPLY_SEED_ENTITY);
    dg_hash_rply_entity_bytes(e, b);
    XXH3_64bits_update(hash_rply__xxh(s), b, sizeof b);
}

void dg_hash_rply_entity_prop(dg_hash_stream *s, uint16_t name, const dg_rply_value *v)
{
    uint8_t b[DG_HASH_RPLY_PROP_BYTES];
    dg_hash_rply_prop_bytes(name, v, b);
    XXH3_64bits_update(hash_rply__xxh(s), b, sizeof b);
}

uint64_t dg_hash_rply_entity_end(dg_hash_stream *s) { return XXH3_64bits_digest(hash_rply__xxh(s)); }

#define HASH_RPLY__ONE_SHOT_PROPS 8 /* a record this short is hashed whole: no streaming state to set up */

uint64_t dg_hash_rply_entity_hash(const dg_hash_rply_entity *e, const uint16_t *names, const dg_rply_value *values,
                                  size_t n)
{
    if (n > HASH_RPLY__ONE_SHOT_PROPS) {
        dg_hash_stream s;
        dg_hash_rply_entity_begin(&s, e);
        for (size_t i = 0; i < n; i++)
            dg_hash_rply_entity_prop(&s, names[i], &values[i]);
        return dg_hash_rply_entity_end(&s);
    }
    uint8_t b[DG_HASH_RPLY_ENTITY_BYTES + HASH_RPLY__ONE_SHOT_PROPS * DG_HASH_RPLY_PROP_BYTES];
    dg_hash_rply_entity_bytes(e, b);
    for (size_t i = 0; i < n; i++)
        dg_hash_rply_prop_bytes(names[i], &values[i], b + DG_HASH_RPLY_ENTITY_BYTES + i * DG_HASH_RPLY_PROP_BYTES);
    return XXH3_64bits_withSeed(b, DG_HASH_RPLY_ENTITY_BYTES + n * DG_HASH_RPLY_PROP_BYTES, DG_HASH_RPLY_SEED_ENTITY);
}

dg_tick_hash dg_hash_rply_tick(uint64_t tick, const uint64_t *entity_hashes, size_t n)
{
    /* the state hash streams its entity hashes: a world of any size, no allocation */
    XXH3_state_t xs;
    uint8_t b[28];
    XXH3_INITSTATE(&xs);
    XXH3_64bits_reset_withSeed(&xs, DG_HASH_RPLY_SEED_STATE);
    hash_rply__put(b, tick, 8);
    XXH3_64bits_update(&xs, b, 8);
    for (size_t i = 0; i < n; i++) {
        hash_rply__put(b, entity_hashes[i], 8);
        XXH3_64bits_update(&xs, b, 8);
    }
    hash_rply__put(b, (uint32_t)n, 4);
    XXH3_64bits_update(&xs, b, 4);
    dg_tick_hash h = {.tick = tick, .entity_count = (uint32_t)n, .state = XXH3_64bits_digest(&xs),
                      .events = dg_hash_events(NULL, 0)};
    hash_rply__put(b, tick, 8);
    hash_rply__put(b + 8, (uint32_t)n, 4);
    hash_rply__put(b + 12, h.state, 8);
    hash_rply__put(b + 20, h.events, 8);
    h.combined = XXH3_64bits_withSeed(b, 28, DG_HASH_RPLY_SEED_TICK);
    return h;
}
