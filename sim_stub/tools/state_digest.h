/* sim_stub/tools/state_digest.h — a stand-in state digest (FNV-1a 64 over every field's exact bits,
 * written in a fixed little-endian order) used by the digest tool and the sim tests until the real
 * state hash (hash/) is wired in; swap by replacing dg_sim_digest_tick. Not part of the public API. */
#ifndef DG_SIM_STATE_DIGEST_H
#define DG_SIM_STATE_DIGEST_H

#include "detgate/sim.h"

#include <string.h>

#define DG_SIM_FNV_OFFSET 0xcbf29ce484222325ull

static inline uint64_t dg_sim_fnv_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static inline uint64_t dg_sim_fnv_u64(uint64_t h, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    return dg_sim_fnv_bytes(h, b, 8);
}

static inline uint64_t dg_sim_fnv_f64(uint64_t h, double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    return dg_sim_fnv_u64(h, v);
}

/* Digest of one tick: tick number, every entity (all fields, exact bits) and every event. */
static inline uint64_t dg_sim_digest_tick(uint64_t h, uint64_t tick, const dg_sim_entity *ents, size_t n,
                                          const dg_sim_event *evs, size_t nev)
{
    h = dg_sim_fnv_u64(h, tick);
    h = dg_sim_fnv_u64(h, n);
    for (size_t i = 0; i < n; i++) {
        const dg_sim_entity *e = &ents[i];
        h = dg_sim_fnv_u64(h, ((uint64_t)e->id << 32) | ((uint64_t)e->type_index << 16) | e->faction_index);
        for (int k = 0; k < 3; k++)
            h = dg_sim_fnv_f64(h, e->pos[k]);
        for (int k = 0; k < 3; k++)
            h = dg_sim_fnv_f64(h, e->vel[k]);
        for (int k = 0; k < 4; k++)
            h = dg_sim_fnv_f64(h, e->rot[k]);
        h = dg_sim_fnv_f64(h, e->health);
        h = dg_sim_fnv_u64(h, e->flags);
    }
    h = dg_sim_fnv_u64(h, nev);
    for (size_t i = 0; i < nev; i++) {
        const dg_sim_event *v = &evs[i];
        h = dg_sim_fnv_u64(h, v->kind);
        h = dg_sim_fnv_u64(h, ((uint64_t)v->a << 32) | v->b);
        h = dg_sim_fnv_u64(h, ((uint64_t)v->c << 16) | v->d);
        h = dg_sim_fnv_u64(h, v->text_len);
        if (v->text_len)
            h = dg_sim_fnv_bytes(h, v->text, v->text_len);
    }
    return h;
}

#endif
