/* fuzz/flrep_file.c — target: a whole .flrep file through the public reader: open (header, sections,
 * trailer or recovery), linear playback of every tick, validate, and seeks — each seek must rebuild
 * exactly the world linear playback rebuilt at that tick, and one past the end must be refused.
 * Uses the structure-aware mutator (chunks re-compressed, framing and trailer fixed). */
#include "flrep_mutator.h"
#include "fuzz_common.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    return dg_fuzz_flrep_mutate(data, size, max_size, seed);
}

typedef struct played {
    uint64_t tick, hash;
} played;

/* The world hash with a 2.0 file's extra field values folded in (each checked to be a value of its
 * field: the reader never delivers one that is not). */
static uint64_t tick_hash(const dg_flrep_reader *r, const dg_flrep_tick *t)
{
    uint64_t h = dg_fuzz_world_hash(t->ents, t->ent_count, t->events, t->event_count);
    const dg_schema *s = dg_flrep_reader_header(r)->schema;
    FUZZ_ASSERT(s != NULL, "%s", "the reader's header has no schema");
    FUZZ_ASSERT((t->extras != NULL) == (s->field_count > 0 && t->ent_count > 0) || (t->ent_count == 0),
                "extras %s with %zu declared fields", t->extras ? "given" : "missing", s->field_count);
    for (size_t i = 0; i < t->ent_count && s->field_count; i++)
        for (size_t f = 0; f < s->field_count; f++) {
            int64_t v = t->extras[i * s->field_count + f];
            FUZZ_ASSERT(dg_schema_check_value(&s->fields[f], v, NULL) == DG_OK,
                        "entity %u field %s: delivered value %lld is not one of the field", t->ents[i].id,
                        s->fields[f].name, (long long)v);
            h = (h ^ (uint64_t)v) * 0x100000001B3ull;
        }
    return h;
}

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
    FUZZ_ASSERT(tick_hash(r, &t) == p[k].hash,
                "seek to tick %llu rebuilt another world than playback", (unsigned long long)t.tick);
    (void)n;
}

/* The same bytes through the file source (fseeko/fread instead of the caller's buffer): the reader
 * must rebuild exactly the worlds the memory source rebuilt. Done for a quarter of the inputs. */
static void check_file_source(const uint8_t *data, size_t size, const played *p, size_t n, int mem_rc)
{
    char path[256];
    dg_fuzz_temp_path(path, sizeof path, "src.flrep");
    FUZZ_ASSERT(dg_fuzz_write_file(path, data, size), "cannot write %s", path);
    dg_flrep_reader_opts opts = {.max_decompressed = DG_FUZZ_DECOMP_CAP};
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    dg_status st = dg_flrep_reader_open_file(&r, path, &opts, &err);
    FUZZ_ASSERT(st == DG_OK, "opens from memory but not from a file: %s: %s", err.where, err.msg);
    dg_flrep_tick t;
    size_t k = 0;
    int rc;
    while ((rc = dg_flrep_reader_next(r, &t, &err)) == 1) {
        FUZZ_ASSERT(k < n && p[k].tick == t.tick &&
                        p[k].hash == tick_hash(r, &t),
                    "tick %zu differs between the file and the memory source", k);
        k++;
    }
    FUZZ_ASSERT(rc == mem_rc && k == n, "the file source played %zu ticks (rc %d), memory %zu (rc %d)", k, rc, n,
                mem_rc);
    if (n)
        check_seek(r, p, n, n / 2);
    dg_flrep_reader_close(r);
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static played *p;
    static size_t cap;
    dg_flrep_reader_opts opts = {.max_decompressed = DG_FUZZ_DECOMP_CAP};
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
        p[n++] = (played){t.tick, tick_hash(r, &t)};
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
    if (fi->chunk_count && size >= 2) {
        /* an arbitrary tick inside the index: may land in a chunk that does not decode; a failed
         * seek must leave a reader that still answers */
        uint64_t span = fi->last_tick - fi->first_tick;
        uint64_t target = fi->first_tick + (span ? dg_le16(data + size - 2) % (span + 1) : 0);
        dg_error_clear(&err);
        st = dg_flrep_reader_seek(r, target, &err);
        if (st != DG_OK)
            dg_fuzz_check_error(st, &err, UINT64_MAX);
        else if (dg_flrep_reader_next(r, &t, &err) == 1)
            FUZZ_ASSERT(t.tick >= target, "seek to %llu then next gave %llu", (unsigned long long)target,
                        (unsigned long long)t.tick);
    }
    if (size % 4 == 0)
        check_file_source(data, size, p, n, rc);
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
