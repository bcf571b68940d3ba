/* fuzz/flrep_roundtrip.c — target: whatever the reader accepts (open and every tick plays), written
 * back by the writer and read again, rebuilds the same world every tick with the same header and
 * tables; the file written from that second reading equals the first write byte for byte. */
#include "flrep_mutator.h"
#include "fuzz_common.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    return dg_fuzz_flrep_mutate(data, size, max_size, seed);
}

typedef struct tick_sum {
    uint64_t tick, hash;
} tick_sum;

static tick_sum *g_sums;
static size_t g_cap;

static bool str_eq(dg_flrep_str a, dg_flrep_str b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.s, b.s, a.len) == 0);
}

static void check_same_header(const dg_flrep_header *a, const dg_flrep_header *b)
{
    FUZZ_ASSERT(str_eq(a->engine_version, b->engine_version) && a->tick_rate_hz == b->tick_rate_hz &&
                    memcmp(&a->planet_radius_m, &b->planet_radius_m, sizeof(double)) == 0 &&
                    a->start_unix_seconds == b->start_unix_seconds && str_eq(a->mission_id, b->mission_id) &&
                    a->session_flags == b->session_flags && a->keyframe_interval_ticks == b->keyframe_interval_ticks,
                "%s", "header fields changed on the way through the writer");
    FUZZ_ASSERT(a->type_count == b->type_count && a->faction_count == b->faction_count &&
                    a->participant_count == b->participant_count && a->mission_object_count == b->mission_object_count,
                "%s", "table sizes changed on the way through the writer");
    const dg_schema *sa = a->schema, *sb = b->schema;
    FUZZ_ASSERT(sa && sb && sa->std_mask == sb->std_mask && sa->field_count == sb->field_count &&
                    memcmp(&sa->pos_quantum_m, &sb->pos_quantum_m, 8) == 0 &&
                    memcmp(&sa->vel_quantum_mps, &sb->vel_quantum_mps, 8) == 0,
                "%s", "the entity schema changed on the way through the writer");
    for (size_t f = 0; f < sa->field_count; f++)
        FUZZ_ASSERT(strcmp(sa->fields[f].name, sb->fields[f].name) == 0 && sa->fields[f].type == sb->fields[f].type,
                    "schema field %zu changed on the way through the writer", f);
    for (size_t i = 0; i < a->type_count; i++) {
        const dg_flrep_type *x = &a->types[i], *y = &b->types[i];
        FUZZ_ASSERT(x->index == y->index && str_eq(x->id, y->id) && str_eq(x->name, y->name) &&
                        x->category == y->category && x->projectile_kind == y->projectile_kind,
                    "type entry %zu changed", i);
    }
    for (size_t i = 0; i < a->faction_count; i++)
        FUZZ_ASSERT(a->factions[i].index == b->factions[i].index && str_eq(a->factions[i].id, b->factions[i].id) &&
                        str_eq(a->factions[i].name, b->factions[i].name),
                    "faction entry %zu changed", i);
    for (size_t i = 0; i < a->participant_count; i++)
        FUZZ_ASSERT(a->participants[i].participant_id == b->participants[i].participant_id &&
                        a->participants[i].entity_id == b->participants[i].entity_id &&
                        str_eq(a->participants[i].callsign, b->participants[i].callsign),
                    "participant %zu changed", i);
    for (size_t i = 0; i < a->mission_object_count; i++)
        FUZZ_ASSERT(str_eq(a->mission_objects[i].object_id, b->mission_objects[i].object_id) &&
                        a->mission_objects[i].entity_id == b->mission_objects[i].entity_id,
                    "mission object %zu changed", i);
}

/* Plays every tick of r into a new file at path (and, when sums is non-NULL, checks each tick
 * against it). Returns the number of ticks, or -1 when the reader refused a tick (input not
 * accepted) or the writer refused the world for a documented reason (more than 65535 entities). */
static long long rewrite(dg_flrep_reader *r, const char *path, const tick_sum *sums, size_t nsums)
{
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_writer *w = NULL;
    dg_flrep_writer_opts wo = {.zstd_level = 1};
    const dg_flrep_header *hdr = dg_flrep_reader_header(r);
    /* a 2.0 file whose schema is the legacy one is rewritten as 1.0 (FORMAT-flrep.md §12.2), which
     * cannot say "no planet": the writer refuses planetRadiusM 0 there, as documented */
    if (dg_schema_is_legacy(hdr->schema) && hdr->planet_radius_m == 0)
        return -1;
    dg_status st = dg_flrep_writer_open(&w, path, hdr, &wo, &err);
    FUZZ_ASSERT(st == DG_OK, "the writer refused tables the reader accepted: %s: %s", err.where, err.msg);
    dg_flrep_tick t;
    int rc;
    size_t n = 0;
    while ((rc = dg_flrep_reader_next(r, &t, &err)) == 1) {
        uint64_t h = dg_fuzz_world_hash(t.ents, t.ent_count, t.events, t.event_count);
        size_t nx = dg_flrep_reader_header(r)->schema->field_count;
        for (size_t k = 0; t.extras && k < t.ent_count * nx; k++)   /* 2.0: the extra fields too */
            h = (h ^ (uint64_t)t.extras[k]) * 0x100000001B3ull;
        if (sums) {
            FUZZ_ASSERT(n < nsums && sums[n].tick == t.tick && sums[n].hash == h,
                        "tick %zu (%llu): the rewritten file rebuilds another world", n, (unsigned long long)t.tick);
        } else {
            if (n == g_cap) {
                g_cap = g_cap ? g_cap * 2 : 1024;
                g_sums = realloc(g_sums, g_cap * sizeof *g_sums);
            }
            g_sums[n] = (tick_sum){t.tick, h};
        }
        n++;
        if (t.ent_count > UINT16_MAX) {  /* a keyframe cannot list more: the format's own limit */
            dg_flrep_writer_abort(w);
            return -1;
        }
        st = dg_flrep_writer_tick_qx(w, t.tick, t.ents, t.extras, t.ent_count, t.events, t.event_count, &err);
        FUZZ_ASSERT(st == DG_OK, "the writer refused tick %llu the reader accepted: %s: %s",
                    (unsigned long long)t.tick, err.where, err.msg);
    }
    if (rc < 0) {
        FUZZ_ASSERT(!sums, "the rewritten file failed to play at tick %zu: %s: %s", n, err.where, err.msg);
        dg_flrep_writer_abort(w);
        return -1;
    }
    FUZZ_ASSERT(!sums || n == nsums, "the rewritten file has %zu ticks, the original %zu", n, nsums);
    st = dg_flrep_writer_close(w, &err);
    FUZZ_ASSERT(st == DG_OK, "writer close failed: %s: %s", err.where, err.msg);
    return (long long)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char p1[256], p2[256];
    dg_fuzz_temp_path(p1, sizeof p1, "rt1.flrep");
    dg_fuzz_temp_path(p2, sizeof p2, "rt2.flrep");
    dg_flrep_reader_opts opts = {.max_decompressed = DG_FUZZ_DECOMP_CAP};
    dg_flrep_reader *r1 = NULL, *r2 = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (dg_flrep_reader_open_mem(&r1, data, size, &opts, &err) != DG_OK)
        return 0;
    long long n = rewrite(r1, p1, NULL, 0);
    if (n >= 0) {
        size_t l1 = 0, l2 = 0;
        uint8_t *b1 = dg_fuzz_slurp(p1, &l1);
        FUZZ_ASSERT(b1, "%s", "the first rewrite is missing");
        dg_status st = dg_flrep_reader_open_mem(&r2, b1, l1, &opts, &err);
        FUZZ_ASSERT(st == DG_OK, "the rewritten file does not open: %s: %s", err.where, err.msg);
        FUZZ_ASSERT(!dg_flrep_reader_info(r2)->recovered, "the rewritten file needs recovery: %s",
                    dg_flrep_reader_info(r2)->recovery_reason);
        check_same_header(dg_flrep_reader_header(r1), dg_flrep_reader_header(r2));
        FUZZ_ASSERT(rewrite(r2, p2, g_sums, (size_t)n) == n, "%s", "second rewrite lost ticks");
        uint8_t *b2 = dg_fuzz_slurp(p2, &l2);
        FUZZ_ASSERT(b2 && l1 == l2 && memcmp(b1, b2, l1) == 0, "the second write differs from the first (%zu vs %zu bytes)",
                    l1, l2);
        dg_flrep_reader_close(r2);
        free(b1);
        free(b2);
    }
    dg_flrep_reader_close(r1);
    unlink(p1);
    unlink(p2);
    return 0;
}
