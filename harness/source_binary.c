/* harness/source_binary.c — the binary state stream (docs/STATES-STREAM.md, "Binary"): little-endian
 * tick records an engine writes where text costs too much, read once from a FILE (a pipe, stdin, a
 * decompressed file) with memory for one tick; and the choice, by the stream's first byte, between it
 * and the text formats for every stream read once. */
#include "project.h"

#include <stdlib.h>
#include <string.h>

#define BIN_MAGIC0 0x89
#define BIN_VERSION 1
#define BIN_ENTITY_BYTES 98u
#define BIN_MAX_ENTITIES (1u << 24)
#define BIN_TABLE 256 /* type and faction indices 0..255, named type<N> / faction<N> */

typedef struct bin_impl {
    FILE *f;
    char label[DG_HASH_LOG_NAME_MAX + 16];
    uint64_t offset; /* bytes consumed: errors say where */
    bool have_last;
    uint64_t last_tick;
    dg_entity_in *ents;
    size_t cap;
    uint8_t *buf;
    size_t buf_cap;
    uint8_t *raw; /* the tick's raw hash records (dg_hash_raw_record), built as the entities decode */
    dg_flrep_type types[BIN_TABLE];
    dg_flrep_faction factions[BIN_TABLE];
    char names[2][BIN_TABLE][16];
} bin_impl;

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Fixed widths, written so that compilers merge them into one load (get_le's loop they do not). */
static inline uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static inline uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline double le_f64(const uint8_t *p)
{
    uint64_t u = (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static dg_status bin_err(bin_impl *b, uint64_t at, const char *what, dg_error *err)
{
    return dg_error_set(err, DG_E_MALFORMED, at, b->label, "binary state stream: %s", what);
}

/* Exactly n bytes, or an error naming what was cut. 1 read, 0 clean end (only when allow_end), -1. */
static int read_exact(bin_impl *b, void *dst, size_t n, bool allow_end, const char *what, dg_error *err)
{
    size_t got = fread(dst, 1, n, b->f);
    b->offset += got;
    if (got == n)
        return 1;
    if (got == 0 && allow_end && !ferror(b->f))
        return 0;
    char m[120];
    snprintf(m, sizeof m, "%s: expected %zu bytes, found %zu (%s)", what, n, got,
             ferror(b->f) ? "read failed" : "the stream ends");
    bin_err(b, b->offset - got, m, err);
    return -1;
}

static int cmp_id(const void *x, const void *y)
{
    uint32_t a = ((const dg_entity_in *)x)->id, c = ((const dg_entity_in *)y)->id;
    return a < c ? -1 : a > c;
}

#define BIN_RAW_BYTES (8u + 8u * HARNESS_RAW_FIELDS)

/* The entity's record for the tick's raw hash: the floats in the order every source hashes them. */
static inline void raw_record(uint8_t *out, const dg_entity_in *e)
{
    double raw[HARNESS_RAW_FIELDS] = {e->pos[0], e->pos[1], e->pos[2], e->vel[0], e->vel[1], e->vel[2],
                                      e->rot[0], e->rot[1], e->rot[2], e->rot[3], e->health};
    dg_hash_raw_record(out, e->id, raw, HARNESS_RAW_FIELDS);
}

static void decode_entity(const uint8_t *p, dg_entity_in *e)
{
    e->id = le32(p);
    e->type_index = le16(p + 4);
    e->faction_index = le16(p + 6);
    e->flags = le16(p + 8);
    p += 10;
    for (int k = 0; k < 3; k++)
        e->pos[k] = le_f64(p + 8 * k);
    for (int k = 0; k < 3; k++)
        e->vel[k] = le_f64(p + 24 + 8 * k);
    for (int k = 0; k < 4; k++)
        e->rot[k] = le_f64(p + 48 + 8 * k);
    e->health = le_f64(p + 80);
}

/* The tick's entities, sorted by id (unless they came sorted) and checked (ids >= 1 and distinct,
 * indices in the tables). */
static dg_status check_tick(bin_impl *b, uint64_t tick, size_t n, bool sorted, uint64_t at, dg_error *err)
{
    char m[160];
    if (b->have_last && tick <= b->last_tick) {
        snprintf(m, sizeof m, "ticks must increase: expected a tick after %llu, found %llu",
                 (unsigned long long)b->last_tick, (unsigned long long)tick);
        return bin_err(b, at, m, err);
    }
    if (!sorted)
        qsort(b->ents, n, sizeof *b->ents, cmp_id);
    for (size_t i = 0; i < n; i++) {
        const dg_entity_in *e = &b->ents[i];
        if (e->id == 0 || (i > 0 && e->id == b->ents[i - 1].id) || e->type_index >= BIN_TABLE ||
            e->faction_index >= BIN_TABLE) {
            snprintf(m, sizeof m, "tick %llu: entity %u: %s", (unsigned long long)tick, e->id,
                     e->id == 0 ? "id 0 (ids start at 1)"
                     : i > 0 && e->id == b->ents[i - 1].id ? "appears twice"
                                                           : "type or faction above 255");
            return bin_err(b, at, m, err);
        }
    }
    b->have_last = true;
    b->last_tick = tick;
    return DG_OK;
}

static int bin_next(harness__source *s, harness__frame *f, dg_error *err)
{
    bin_impl *b = s->impl;
    uint8_t kind;
    uint64_t at = b->offset;
    int rc = read_exact(b, &kind, 1, false, "a record kind", err);
    if (rc < 0)
        return -1;
    if (kind == 0x00) /* the end record: the stream is complete */
        return 0;
    if (kind != 0x01) {
        char m[80];
        snprintf(m, sizeof m, "expected a record kind 0x01 (tick) or 0x00 (end), found 0x%02x", kind);
        return bin_err(b, at, m, err), -1;
    }
    uint8_t h[12];
    if (read_exact(b, h, sizeof h, false, "a tick header", err) < 0)
        return -1;
    uint64_t tick = get_le(h, 8);
    uint32_t n = (uint32_t)get_le(h + 8, 4);
    if (n > BIN_MAX_ENTITIES) {
        char m[96];
        snprintf(m, sizeof m, "tick %llu: %u entities is more than the %u a tick may hold",
                 (unsigned long long)tick, n, BIN_MAX_ENTITIES);
        return bin_err(b, at, m, err), -1;
    }
    size_t bytes = (size_t)n * BIN_ENTITY_BYTES;
    if (n > b->cap) {
        dg_entity_in *e = realloc(b->ents, n * sizeof *e);
        uint8_t *q = realloc(b->buf, bytes), *r = realloc(b->raw, (size_t)n * BIN_RAW_BYTES);
        b->ents = e ? e : b->ents;
        b->buf = q ? q : b->buf;
        b->raw = r ? r : b->raw;
        if (!e || !q || !r)
            return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, b->label, "out of memory"), -1;
        b->cap = n;
    }
    if (n && read_exact(b, b->buf, bytes, false, "the tick's entities", err) < 0)
        return -1;
    bool sorted = true; /* engines mostly write ids in order: then no sort */
    for (uint32_t i = 0; i < n; i++) {
        decode_entity(b->buf + (size_t)i * BIN_ENTITY_BYTES, &b->ents[i]);
        raw_record(b->raw + (size_t)i * BIN_RAW_BYTES, &b->ents[i]);
        sorted = sorted && (i == 0 || b->ents[i - 1].id <= b->ents[i].id);
    }
    if (check_tick(b, tick, n, sorted, at, err) != DG_OK)
        return -1;
    if (!sorted) /* the records follow the sorted order */
        for (uint32_t i = 0; i < n; i++)
            raw_record(b->raw + (size_t)i * BIN_RAW_BYTES, &b->ents[i]);
    dg_hash_stream hs;
    dg_hash_raw_begin(&hs, tick);
    dg_hash_raw_records(&hs, b->raw, (size_t)n * BIN_RAW_BYTES);
    *f = (harness__frame){.tick = tick, .ents = b->ents, .n = n, .has_raw = true, .raw = dg_hash_raw_end(&hs)};
    return 1;
}

static dg_status bin_rewind(harness__source *s, dg_error *err)
{
    bin_impl *b = s->impl;
    return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, b->label, "a stream read once cannot be re-read");
}

static void bin_destroy(harness__source *s)
{
    bin_impl *b = s->impl;
    if (!b)
        return;
    free(b->ents);
    free(b->buf);
    free(b->raw);
    free(b);
}

static dg_status bin_open(harness__source *s, bin_impl *b, uint32_t keyframe, dg_error *err)
{
    uint8_t m[12];
    if (read_exact(b, m, sizeof m, false, "the stream header", err) < 0)
        return err->code;
    if (m[0] != BIN_MAGIC0 || memcmp(m + 1, "DGS", 3) != 0)
        return bin_err(b, 0, "expected the magic 89 44 47 53 (\\x89DGS)", err);
    unsigned version = (unsigned)get_le(m + 4, 2), flags = (unsigned)get_le(m + 6, 2);
    uint32_t rate = (uint32_t)get_le(m + 8, 4);
    char t[96];
    if (version != BIN_VERSION)
        snprintf(t, sizeof t, "version %u: this build reads version %d", version, BIN_VERSION);
    else if (flags != 0)
        snprintf(t, sizeof t, "flags 0x%04x: expected 0 (none is defined)", flags);
    else if (rate > 100000)
        snprintf(t, sizeof t, "tick rate %u Hz: expected 1..100000 (0 = 60)", (unsigned)rate);
    if (version != BIN_VERSION || flags != 0 || rate > 100000)
        return bin_err(b, version != BIN_VERSION ? 4 : flags ? 6 : 8, t, err);
    for (unsigned i = 0; i < BIN_TABLE; i++) {
        int nt = snprintf(b->names[0][i], sizeof b->names[0][i], "type%u", i);
        int nf = snprintf(b->names[1][i], sizeof b->names[1][i], "faction%u", i);
        b->types[i] = (dg_flrep_type){(uint16_t)i, {b->names[0][i], (uint16_t)nt}, {b->names[0][i], (uint16_t)nt}, 0, 0};
        b->factions[i] = (dg_flrep_faction){(uint16_t)i, {b->names[1][i], (uint16_t)nf}, {b->names[1][i], (uint16_t)nf}};
    }
    s->hdr.major = DG_FLREP_MAJOR;
    s->hdr.minor = DG_FLREP_MINOR;
    s->hdr.engine_version = dg_flrep_cstr(HARNESS_VERSION " states");
    s->hdr.tick_rate_hz = rate ? rate : 60;
    s->hdr.planet_radius_m = 6371000.0;
    if (keyframe)
        s->hdr.keyframe_interval_ticks = keyframe;
    s->hdr.types = b->types;
    s->hdr.type_count = BIN_TABLE;
    s->hdr.factions = b->factions;
    s->hdr.faction_count = BIN_TABLE;
    return DG_OK;
}

/* ---- a binary stream file: the FILE is the source's own ------------------------------------------ */

typedef struct owned_impl {
    harness__source *inner;
    FILE *f;
} owned_impl;

static int owned_next(harness__source *s, harness__frame *f, dg_error *err)
{
    owned_impl *o = s->impl;
    return o->inner->next(o->inner, f, err);
}

static dg_status owned_rewind(harness__source *s, dg_error *err)
{
    owned_impl *o = s->impl;
    return o->inner->rewind(o->inner, err);
}

static void owned_destroy(harness__source *s)
{
    owned_impl *o = s->impl;
    if (!o)
        return;
    harness__source_free(o->inner);
    if (o->f)
        fclose(o->f);
    free(o);
}

bool harness__is_binary_stream(const char *path)
{
    FILE *f = fopen(path, "rb");
    int c = f ? getc(f) : EOF;
    if (f)
        fclose(f);
    return c == BIN_MAGIC0;
}

dg_status harness__source_binary_file(harness__source **out, const char *path, uint32_t keyframe, dg_error *err)
{
    *out = NULL;
    harness__source *s = calloc(1, sizeof *s);
    owned_impl *o = calloc(1, sizeof *o);
    if (!s || !o) {
        free(s);
        free(o);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory");
    }
    *s = (harness__source){.impl = o, .next = owned_next, .rewind = owned_rewind, .destroy = owned_destroy};
    dg_status st = (o->f = fopen(path, "rb")) ? harness__source_stream(&o->inner, o->f, path, path, keyframe, err)
                                              : dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "cannot open");
    if (st != DG_OK) {
        harness__source_free(s);
        return st;
    }
    snprintf(s->name, sizeof s->name, "%s", o->inner->name);
    s->hdr = o->inner->hdr;
    *out = s;
    return DG_OK;
}

dg_status harness__source_stream(harness__source **out, FILE *f, const char *label, const char *name,
                                 uint32_t keyframe, dg_error *err)
{
    int c = getc(f);
    if (c != EOF)
        ungetc(c, f);
    if (c != BIN_MAGIC0)
        return harness__source_states_stream(out, f, label, name, keyframe, err);
    *out = NULL;
    harness__source *s = calloc(1, sizeof *s);
    bin_impl *b = calloc(1, sizeof *b);
    if (!s || !b) {
        free(s);
        free(b);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, label, "out of memory");
    }
    b->f = f;
    snprintf(b->label, sizeof b->label, "%s", label);
    *s = (harness__source){.impl = b, .next = bin_next, .rewind = bin_rewind, .destroy = bin_destroy};
    harness__scenario_name(name ? name : "stdin", s->name, sizeof s->name);
    dg_status st = bin_open(s, b, keyframe, err);
    if (st != DG_OK) {
        harness__source_free(s);
        return st;
    }
    *out = s;
    return DG_OK;
}
