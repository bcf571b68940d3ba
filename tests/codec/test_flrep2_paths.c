/* tests/codec/test_flrep2_paths.c — format 2.0's two tick decoders agree: the fast path for the
 * common DELTA record (fast2_run in codec/flrep/flrep_tick2.c) hands everything else to the general
 * path, and must give the same worlds, extras and events, or the same error with the same message,
 * as the general path alone (the reader's general_only hook). On files the writer makes with random
 * schemas (field sets, quanta, absent standard fields, extras constant, stepping or random, spawns
 * and removes, teleports, attribute changes), on thousands of damaged copies of their chunks, and on
 * every hand-built file of test_flrep2_bytes.c (included below, its reader calls wrapped). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "detgate/flrep.h"
#include "flrep_internal.h"

/* ---- reading a file both ways ------------------------------------------------------------------- */

typedef struct outcome {
    size_t ticks;
    dg_status st;          /* of the call that stopped it (DG_OK: the file ended) */
    uint64_t err_offset;
    char msg[512];
    uint64_t hash;         /* over every tick handed out: tick, entities, extras, events */
} outcome;

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001B3ull;
    return h;
}

static outcome read_mem(const uint8_t *buf, size_t len, bool general_only)
{
    outcome o;
    memset(&o, 0, sizeof o);
    o.hash = 0xCBF29CE484222325ull;
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    o.st = dg_flrep_reader_open_mem(&r, buf, len, NULL, &err);
    if (o.st != DG_OK) {
        o.err_offset = err.offset;
        dg_error_format(&err, o.msg, sizeof o.msg);
        return o;
    }
    dg_flrep__reader_set_general_only(r, general_only);
    size_t nx = dg_flrep_reader_header(r)->schema->field_count;
    dg_flrep_tick t;
    int rc;
    while ((rc = dg_flrep_reader_next(r, &t, &err)) == 1) {
        o.ticks++;
        o.hash = mix(o.hash, &t.tick, sizeof t.tick);
        o.hash = mix(o.hash, &t.keyframe, sizeof t.keyframe);
        o.hash = mix(o.hash, t.ents, t.ent_count * sizeof *t.ents);
        if (nx && t.ent_count)
            o.hash = mix(o.hash, t.extras, t.ent_count * nx * sizeof *t.extras);
        for (size_t i = 0; i < t.event_count; i++)
            o.hash = mix(o.hash, &t.events[i].kind, sizeof t.events[i].kind);
    }
    if (rc < 0) {
        o.st = err.code;
        o.err_offset = err.offset;
        dg_error_format(&err, o.msg, sizeof o.msg);
    }
    dg_flrep_reader_close(r);
    return o;
}

static size_t g_files_compared;

/* Both ways; the outcomes must be equal in every part. */
static void assert_paths_agree(const uint8_t *buf, size_t len, const char *what)
{
    outcome f = read_mem(buf, len, false), g = read_mem(buf, len, true);
    if (f.ticks != g.ticks || f.st != g.st || f.err_offset != g.err_offset || f.hash != g.hash ||
        strcmp(f.msg, g.msg) != 0)
        fail_msg("%s: fast %zu ticks, status %d at %llu (%s); general %zu ticks, status %d at %llu (%s)", what,
                 f.ticks, f.st, (unsigned long long)f.err_offset, f.msg, g.ticks, g.st,
                 (unsigned long long)g.err_offset, g.msg);
    g_files_compared++;
}

/* ---- test_flrep2_bytes.c's files, each read both ways where it opens one ----------------------- */

static dg_status open_mem_both_ways(dg_flrep_reader **out, const uint8_t *buf, size_t len,
                                    const dg_flrep_reader_opts *opts, dg_error *err)
{
    assert_paths_agree(buf, len, "test_flrep2_bytes file");
    return dg_flrep_reader_open_mem(out, buf, len, opts, err);
}

int flrep2_bytes_main(void);
#define main flrep2_bytes_main
#define dg_flrep_reader_open_mem open_mem_both_ways
#include "test_flrep2_bytes.c"
#undef dg_flrep_reader_open_mem
#undef main

/* ---- random schemas and worlds ------------------------------------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rnext(rng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}
static uint32_t rbelow(rng *r, uint32_t n) { return (uint32_t)(rnext(r) % n); }
static double runit(rng *r) { return (double)(rnext(r) >> 11) / (double)(UINT64_C(1) << 53) * 2.0 - 1.0; }

typedef struct gen_schema {
    dg_schema s;
    dg_field_def f[8];
    char names[8][24];
    int rate[8];   /* 0 constant, 1 steps by small changes, 2 random over its domain */
} gen_schema;

static const char *const k_enum_names[] = {"a", "b", "c", "d", "e"};

static double quantum_of(rng *r)
{
    static const double q[] = {1.0 / 1024, 1.0 / 64, 1.0 / 4096, 1.0 / 32, 0.001, 0.01, 1.0 / 65536};
    return q[rbelow(r, sizeof q / sizeof q[0])];
}

static void random_schema(rng *r, gen_schema *g)
{
    memset(g, 0, sizeof *g);
    g->s.std_mask = rbelow(r, 4) == 0 ? DG_STD_ALL : (uint32_t)rbelow(r, 128);
    g->s.pos_quantum_m = quantum_of(r);
    g->s.vel_quantum_mps = quantum_of(r);
    size_t nf = rbelow(r, 7);
    if (nf == 0 && g->s.std_mask == DG_STD_ALL)
        nf = 1;   /* not the legacy schema: a 2.0 file */
    for (size_t k = 0; k < nf; k++) {
        dg_field_def *f = &g->f[k];
        snprintf(g->names[k], sizeof g->names[k], "f%zu", k);
        f->name = g->names[k];
        f->unit = "";
        f->type = (uint8_t)(1 + rbelow(r, 6));
        if (f->type == DG_FIELD_INT || f->type == DG_FIELD_UINT)
            f->bits = (uint8_t)(rbelow(r, 3) == 0 ? 64 : 1 + rbelow(r, 64));
        else if (f->type == DG_FIELD_BYTES)
            f->bits = (uint8_t)(1 + rbelow(r, 8));
        else if (f->type == DG_FIELD_FLOAT)
            f->quantum = quantum_of(r);
        else if (f->type == DG_FIELD_ENUM) {
            f->enum_names = k_enum_names;
            f->enum_count = (uint16_t)(2 + rbelow(r, 4));
        }
        g->rate[k] = (int)rbelow(r, 3);
    }
    g->s.fields = g->f;
    g->s.field_count = nf;
}

/* A value of field f near old (rate 1) or anywhere in its domain (rate 2). */
static int64_t field_value(rng *r, const dg_field_def *f, int rate, int64_t old)
{
    uint64_t u = rnext(r);
    switch (f->type) {
    case DG_FIELD_INT:
    case DG_FIELD_UINT: {
        unsigned w = f->bits;
        if (rate == 1 && w > 8) {   /* a small step, back to 0 near the edge of the domain */
            int64_t v = old + (int64_t)rbelow(r, 9) - (f->type == DG_FIELD_INT ? 4 : 0);
            return v < 0 || v >= (INT64_C(1) << (w - 2)) ? 0 : v;
        }
        uint64_t v = w == 64 ? u : u & ((UINT64_C(1) << w) - 1);
        if (f->type == DG_FIELD_UINT || w == 64)
            return (int64_t)v;
        uint64_t m = UINT64_C(1) << (w - 1);
        return (int64_t)((v ^ m) - m);
    }
    case DG_FIELD_FLOAT:
        if (rate == 1)
            return old + (int64_t)rbelow(r, 41) - 20;
        return (int64_t)(u % (UINT64_C(1) << 53)) - (INT64_C(1) << 52);
    case DG_FIELD_BOOL:
        return (int64_t)(u & 1);
    case DG_FIELD_ENUM:
        return (int64_t)(u % f->enum_count);
    default:   /* bytes */
        return f->bits == 8 ? (int64_t)u : (int64_t)(u & ((UINT64_C(1) << (8 * f->bits)) - 1));
    }
}

typedef struct body {
    dg_entity_in e;
    double angle, spin;
    int64_t x[8];
} body;

/* One tick of the world: most bodies jitter or move, some sleep, a few teleport, change
 * attributes or tumble (the rotation's largest component changes), one is removed or spawned. */
static void step_world(rng *r, const gen_schema *g, body *b, size_t *n, uint32_t *next_id, size_t cap, int move_pct)
{
    const double dt = 1.0 / 60;
    for (size_t i = 0; i < *n; i++) {
        body *q = &b[i];
        uint32_t roll = rbelow(r, 100);
        if (roll < (uint32_t)move_pct) {
            for (int k = 0; k < 3; k++) {
                q->e.vel[k] += runit(r) * 0.05 * (k == 2 && rbelow(r, 2) ? 0 : 1);
                q->e.pos[k] += q->e.vel[k] * dt;
            }
            q->spin += runit(r) * 0.02;
            q->angle += q->spin * dt;
        }
        if (rbelow(r, 200) == 0)
            for (int k = 0; k < 3; k++)
                q->e.pos[k] = runit(r) * 200.0;   /* a teleport: residuals beyond the fast codes */
        if (rbelow(r, 300) == 0)
            q->angle += 2.5;                      /* the largest component changes: rotFull */
        if (rbelow(r, 150) == 0)
            q->e.flags ^= (uint16_t)(1u << rbelow(r, 16));
        if (rbelow(r, 400) == 0)
            q->e.health = rbelow(r, 2) ? 0.5 : 1.0;
        if (rbelow(r, 500) == 0)
            q->e.type_index = (uint16_t)rbelow(r, 3);
        q->e.rot[0] = cos(q->angle / 2);
        q->e.rot[1] = 0.1 * sin(q->angle / 3);
        q->e.rot[2] = 0;
        q->e.rot[3] = sin(q->angle / 2);
        for (size_t f = 0; f < g->s.field_count; f++)
            if (g->rate[f] == 2 || (g->rate[f] == 1 && rbelow(r, 3) != 0))
                q->x[f] = field_value(r, &g->f[f], g->rate[f], q->x[f]);
    }
    if (*n > 2 && rbelow(r, 4) == 0) {   /* a remove */
        size_t k = rbelow(r, (uint32_t)*n);
        b[k] = b[--*n];
    }
    if (*n < cap && rbelow(r, 4) == 0) {   /* a spawn, after an id gap sometimes */
        body *q = &b[(*n)++];
        memset(q, 0, sizeof *q);
        q->e.id = (*next_id += 1 + rbelow(r, 3));
        q->e.health = 1.0;
        for (int k = 0; k < 3; k++)
            q->e.pos[k] = runit(r) * 50.0;
        q->e.rot[0] = 1.0;
        for (size_t f = 0; f < g->s.field_count; f++)
            q->x[f] = field_value(r, &g->f[f], 2, 0);
    }
}

/* Drops the fields the schema lacks (the writer refuses them), as the harness would. */
static void schema_entity(const gen_schema *g, const body *q, dg_entity_in *e)
{
    *e = q->e;
    uint32_t m = g->s.std_mask;
    if (!(m & DG_STD_TYPE))
        e->type_index = 0;
    if (!(m & DG_STD_FACTION))
        e->faction_index = 0;
    if (!(m & DG_STD_POS))
        memset(e->pos, 0, sizeof e->pos);
    if (!(m & DG_STD_VEL))
        memset(e->vel, 0, sizeof e->vel);
    if (!(m & DG_STD_ROT)) {
        memset(e->rot, 0, sizeof e->rot);
        e->rot[0] = 1.0;
    }
    if (!(m & DG_STD_HEALTH))
        e->health = 0;
    if (!(m & DG_STD_FLAGS))
        e->flags = 0;
}

/* `physics`: the schema's standard fields are position, velocity and rotation (the writer's own copy
 * for them); `writer_general`: the writer's hook that encodes with its copy for any schema. */
static uint8_t *record_file_with(uint64_t seed, gen_schema *g, int ticks, int move_pct, bool physics,
                                 bool writer_general, size_t *len)
{
    rng r = {seed * 0x9E3779B97F4A7C15ull + 1};
    random_schema(&r, g);
    if (physics)
        g->s.std_mask = DG_STD_POS | DG_STD_VEL | DG_STD_ROT;
    static const dg_flrep_type types[3] = {{0, {"a", 1}, {"a", 1}, 1, 0}, {1, {"b", 1}, {"b", 1}, 1, 0},
                                           {2, {"c", 1}, {"c", 1}, 1, 0}};
    static const dg_flrep_faction factions[1] = {{0, {"blue", 4}, {"blue", 4}}};
    dg_flrep_header h;
    memset(&h, 0, sizeof h);
    h.engine_version = dg_flrep_cstr("detgate-test paths2");
    h.tick_rate_hz = rbelow(&r, 4) == 0 ? 1 + rbelow(&r, 240) : 60;
    h.keyframe_interval_ticks = 20 + rbelow(&r, 60);
    h.types = types;
    h.type_count = 3;
    h.factions = factions;
    h.faction_count = 1;
    h.schema = &g->s;
    char path[256];
    snprintf(path, sizeof path, "test_flrep2_paths_%llu.flrep", (unsigned long long)seed);
    dg_flrep_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (dg_flrep_writer_open(&w, path, &h, NULL, &err) != DG_OK)
        fail_msg("seed %llu: writer open: %s", (unsigned long long)seed, err.msg);
    dg_flrep__writer_set_general_only(w, writer_general);
    enum { CAP = 160 };
    body *b = calloc(CAP, sizeof *b);
    size_t n = 0;
    uint32_t next_id = 0;
    for (int k = 0; k < 40 + (int)rbelow(&r, 60); k++)
        step_world(&r, g, b, &n, &next_id, CAP, 100);   /* spawns first */
    dg_entity_in ents[CAP];
    int64_t x[CAP * 8];
    size_t nx = g->s.field_count;
    for (int t = 0; t < ticks; t++) {
        step_world(&r, g, b, &n, &next_id, CAP, move_pct);
        for (size_t i = 0; i < n; i++) {
            schema_entity(g, &b[i], &ents[i]);
            memcpy(x + i * nx, b[i].x, nx * sizeof *x);
        }
        if (dg_flrep_writer_tick_x(w, (uint64_t)t, ents, nx ? x : NULL, n, NULL, 0, NULL, NULL, &err) != DG_OK)
            fail_msg("seed %llu tick %d: %s", (unsigned long long)seed, t, err.msg);
    }
    free(b);
    if (dg_flrep_writer_close(w, &err) != DG_OK)
        fail_msg("seed %llu: close: %s", (unsigned long long)seed, err.msg);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long sz = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)sz);
    assert_int_equal(fread(buf, 1, (size_t)sz, fp), (size_t)sz);
    fclose(fp);
    remove(path);
    *len = (size_t)sz;
    return buf;
}

static uint8_t *record_file(uint64_t seed, gen_schema *g, int ticks, int move_pct, size_t *len)
{
    return record_file_with(seed, g, ticks, move_pct, false, false, len);
}

/* The writer's two copies of the record loop (the physics schema's, with its standard fields
 * constant, and any schema's) write the same bytes: on random worlds under random extra fields with
 * position, velocity and rotation as the standard fields (spawns after id gaps, removes, teleports
 * beyond the short codes, rotFull, attribute changes, extras constant, stepping or random over their
 * whole domain, raw and SEG forms), and the file reads back. */
static void test_writer_paths_agree(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        gen_schema g1, g2;
        size_t len1, len2;
        int move = seed % 3 == 0 ? 30 : 100;
        uint8_t *fast = record_file_with(seed, &g1, 120, move, true, false, &len1);
        uint8_t *general = record_file_with(seed, &g2, 120, move, true, true, &len2);
        if (len1 != len2 || memcmp(fast, general, len1) != 0)
            fail_msg("seed %llu: the physics copy wrote %zu bytes, the general copy %zu, not the same bytes",
                     (unsigned long long)seed, len1, len2);
        outcome o = read_mem(fast, len1, false);
        if (o.st != DG_OK)
            fail_msg("seed %llu: the writer's file does not read back: %s", (unsigned long long)seed, o.msg);
        free(fast);
        free(general);
    }
}

static void test_random_schemas_agree(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 120; seed++) {
        gen_schema g;
        size_t len;
        uint8_t *buf = record_file(seed, &g, 150, seed % 3 == 0 ? 50 : 100, &len);
        char what[64];
        snprintf(what, sizeof what, "seed %llu", (unsigned long long)seed);
        outcome o = read_mem(buf, len, false);
        if (o.st != DG_OK)
            fail_msg("%s: the writer's file does not read back: %s", what, o.msg);
        assert_paths_agree(buf, len, what);
        free(buf);
    }
}

/* ---- damaged chunk contents, decoded tick by tick both ways ------------------------------------- */

typedef struct chunks {
    uint8_t **content;
    size_t *len, n;
    flrep_index_set types, factions;
    flrep_schema2 v2;
    uint32_t rate;
} chunks;

static void load_chunks(const uint8_t *file, size_t flen, chunks *cs)
{
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(&r, file, flen, NULL, &err), DG_OK);
    const dg_flrep_file_info *fi = dg_flrep_reader_info(r);
    const dg_flrep_header *h = dg_flrep_reader_header(r);
    assert_int_equal(dg_flrep__check_tables(h, &cs->types, &cs->factions, &err), DG_OK);
    assert_int_equal(dg_flrep__schema2_from(&cs->v2, h->schema, &err), DG_OK);
    cs->rate = h->tick_rate_hz;
    cs->n = fi->chunk_count;
    cs->content = calloc(cs->n, sizeof *cs->content);
    cs->len = calloc(cs->n, sizeof *cs->len);
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    for (size_t k = 0; k < cs->n; k++) {
        const dg_flrep_chunk_info *c = &fi->chunks[k];
        flrep_chunk_hdr ch;
        assert_int_equal(dg_flrep__chunk_hdr_parse(file + c->offset, c->offset, flen - c->offset - FLREP_CHUNK_HDR_SIZE,
                                               h->keyframe_interval_ticks, DG_FLREP_DECOMP_CAP_DEFAULT, &ch, &err),
                         DG_OK);
        cs->len[k] = ch.decompressed_size;
        cs->content[k] = malloc(ch.decompressed_size);
        assert_int_equal(dg_flrep__chunk_decompress(dctx, file + c->offset + FLREP_CHUNK_HDR_SIZE, &ch, cs->content[k],
                                                c->offset, &err),
                         DG_OK);
    }
    ZSTD_freeDCtx(dctx);
    dg_flrep_reader_close(r);
}

static void free_chunks(chunks *cs)
{
    for (size_t k = 0; k < cs->n; k++)
        free(cs->content[k]);
    free(cs->content);
    free(cs->len);
    dg_flrep__schema2_free(&cs->v2);
}

static outcome decode_content(const uint8_t *data, size_t size, chunks *cs, bool general_only)
{
    flrep_tick_ctx ctx;
    dg_flrep__tick_ctx_init(&ctx, cs->rate, &cs->types, &cs->factions);
    dg_flrep__tick_ctx_set_schema(&ctx, &cs->v2);
    ctx.general_only = general_only;
    flrep_world w;
    memset(&w, 0, sizeof w);
    w.nx = cs->v2.s.field_count;
    flrep_tick_scratch s;
    memset(&s, 0, sizeof s);
    dg_error err;
    dg_error_clear(&err);
    dg_cur c;
    dg_cur_init(&c, data, size, 0, "ticks", &err);
    outcome o;
    memset(&o, 0, sizeof o);
    o.hash = 0xCBF29CE484222325ull;
    for (uint32_t seq = 0; c.pos < size; seq++) {
        uint64_t tick;
        bool kf;
        const dg_event *ev;
        size_t nev;
        dg_status st = dg_flrep__decode_tick(&c, seq, &ctx, &w, &s, &tick, &kf, &ev, &nev, &err);
        if (st != DG_OK) {
            o.st = st;
            o.err_offset = err.offset;
            dg_error_format(&err, o.msg, sizeof o.msg);
            break;
        }
        o.ticks++;
        o.hash = mix(o.hash, &tick, sizeof tick);
        o.hash = mix(o.hash, w.ents, w.n * sizeof *w.ents);
        o.hash = mix(o.hash, w.pred, w.n * sizeof *w.pred);
        if (w.nx && w.n)
            o.hash = mix(o.hash, w.extras, w.n * w.nx * sizeof *w.extras);
    }
    dg_flrep__world_free(&w);
    dg_flrep__tick_scratch_free(&s);
    return o;
}

static void test_damaged_chunks_agree(void **state)
{
    (void)state;
    size_t decoded = 0, refused = 0;
    for (uint64_t seed = 200; seed < 230; seed++) {
        gen_schema g;
        size_t len;
        uint8_t *buf = record_file(seed, &g, 90, 100, &len);
        chunks cs;
        memset(&cs, 0, sizeof cs);
        load_chunks(buf, len, &cs);
        rng r = {seed};
        for (size_t k = 0; k < cs.n; k++) {
            outcome f0 = decode_content(cs.content[k], cs.len[k], &cs, false);
            outcome g0 = decode_content(cs.content[k], cs.len[k], &cs, true);
            assert_int_equal(g0.st, DG_OK);
            assert_true(f0.hash == g0.hash && f0.ticks == g0.ticks && f0.st == DG_OK);
            uint8_t *copy = malloc(cs.len[k]);
            for (int d = 0; d < 60; d++) {
                memcpy(copy, cs.content[k], cs.len[k]);
                int flips = 1 + (int)rbelow(&r, 3);
                for (int b = 0; b < flips; b++) {
                    size_t at = rbelow(&r, (uint32_t)cs.len[k]);
                    copy[at] ^= (uint8_t)(1u << rbelow(&r, 8));
                }
                outcome f = decode_content(copy, cs.len[k], &cs, false);
                outcome gg = decode_content(copy, cs.len[k], &cs, true);
                if (f.ticks != gg.ticks || f.st != gg.st || f.err_offset != gg.err_offset || f.hash != gg.hash ||
                    strcmp(f.msg, gg.msg) != 0)
                    fail_msg("seed %llu chunk %zu damage %d: fast %zu ticks, status %d (%s); general %zu ticks, "
                             "status %d (%s)",
                             (unsigned long long)seed, k, d, f.ticks, f.st, f.msg, gg.ticks, gg.st, gg.msg);
                decoded++;
                refused += gg.st != DG_OK;
            }
            free(copy);
        }
        free_chunks(&cs);
        free(buf);
    }
    /* the damage reaches the records: most copies are refused somewhere */
    assert_true(refused > decoded / 4);
}

/* the hand-built files: test_flrep2_bytes.c's own tests, run here with every file they open read
 * both ways first (open_mem_both_ways) */
static void test_bytes_files_agree(void **state)
{
    g_files_compared = 0;
    test_reader_rebuilds_what_the_page_says(state);
    test_hostile_schema_sections(state);
    test_records_whose_extras_break_bounds(state);
    test_a_schema_without_motion_fields(state);
    assert_true(g_files_compared >= 13);
}

int main(void)
{
    (void)flrep2_bytes_main;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_schemas_agree),
        cmocka_unit_test(test_writer_paths_agree),
        cmocka_unit_test(test_damaged_chunks_agree),
        cmocka_unit_test(test_bytes_files_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
