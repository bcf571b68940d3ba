/* fuzz/flrep_file.c — target: a whole .flrep file through the public reader: open (header, sections,
 * trailer or recovery), linear playback of every tick, validate, and seeks — each seek must rebuild
 * exactly the world linear playback rebuilt at that tick, and one past the end must be refused.
 * Uses the structure-aware mutator (chunks re-compressed, framing and trailer fixed). */
#include "flrep_mutator.h"
#include "fuzz_common.h"

#include <stdlib.h>
#include <string.h>

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    return dg_fuzz_flrep_mutate(data, size, max_size, seed);
}

typedef struct played {
    uint64_t tick, hash;
} played;

static void check_seek(dg_flrep_reader *r, const played *p, size_t n, size_t k)
{
    dg_error err;
    dg_error_clear(&err);
    dg_status st = dg_flrep_reader_seek(r, p[k].tick, &err);
    FUZZ_ASSERT(st == DG_OK, "seek to played tick %llu failed: %s: %s", (unsigned long long)p[k].tick, err.where,
                err.msg);
    dg_flrep_tick t;
    int rc = dg_flrep_reader_next(r, &t, &err);
    FUZZ_ASSERT(rc == 1 && t.tick == p[k].tick, "after seek to %llu: next gave rc %d tick %llu",
                (unsigned long long)p[k].tick, rc, (unsigned long long)t.tick);
    FUZZ_ASSERT(dg_fuzz_world_hash(t.ents, t.ent_count, t.events, t.event_count) == p[k].hash,
                "seek to tick %llu rebuilt another world than playback", (unsigned long long)t.tick);
    (void)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static played *p;
    static size_t cap;
    dg_flrep_reader_opts opts = {DG_FUZZ_DECOMP_CAP};
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    dg_status st = dg_flrep_reader_open_mem(&r, data, size, &opts, &err);
    if (st != DG_OK) {
        dg_fuzz_check_error(st, &err, UINT64_MAX);
        FUZZ_ASSERT(r == NULL, "%s", "a failed open handed out a reader");
        return 0;
    }
    dg_fuzz_check_reader_info(r, size);
    const dg_flrep_file_info *fi = dg_flrep_reader_info(r);
    size_t n = 0;
    dg_flrep_tick t;
    int rc;
    uint64_t prev = 0;
    while ((rc = dg_flrep_reader_next(r, &t, &err)) == 1) {
        FUZZ_ASSERT(n == 0 || t.tick > prev, "tick %llu after %llu", (unsigned long long)t.tick,
                    (unsigned long long)prev);
        dg_fuzz_check_world(t.ents, t.ent_count);
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            p = realloc(p, cap * sizeof *p);
        }
        p[n++] = (played){t.tick, dg_fuzz_world_hash(t.ents, t.ent_count, t.events, t.event_count)};
        prev = t.tick;
    }
    dg_error verr;
    dg_error_clear(&verr);
    if (rc < 0) {
        dg_fuzz_check_error(err.code, &err, UINT64_MAX);
        /* a failed next leaves the position: asking again fails again */
        dg_error e2;
        dg_error_clear(&e2);
        FUZZ_ASSERT(dg_flrep_reader_next(r, &t, &e2) == -1, "%s", "a failed next moved the reader");
    } else {
        FUZZ_ASSERT(n == fi->tick_count, "played %zu ticks, the index promises %llu", n,
                    (unsigned long long)fi->tick_count);
    }
    st = dg_flrep_reader_validate(r, &verr);
    FUZZ_ASSERT((st == DG_OK) == (rc == 0), "validate says %d, playback ended with %d", (int)st, rc);
    if (n) {
        /* first, last and two input-chosen played ticks; seeks go backwards and forwards */
        size_t pick[4] = {n - 1, 0, (size_t)(data[size / 2] * 7919u) % n, (size_t)(data[size - 1] * 104729u) % n};
        for (int i = 0; i < 4; i++)
            check_seek(r, p, n, pick[i]);
    }
    if (fi->chunk_count) {
        uint64_t past = fi->last_tick;
        if (past != UINT64_MAX) {
            FUZZ_ASSERT(dg_flrep_reader_seek(r, past + 1, &err) == DG_E_NOT_FOUND, "%s",
                        "seek past the last tick was not refused");
        }
    }
    dg_flrep_reader_close(r);
    return 0;
}
