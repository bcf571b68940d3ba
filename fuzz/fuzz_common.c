/* fuzz/fuzz_common.c — shared pieces of the fuzz targets: the always-on assertion, the synthetic
 * recording made through the public writer (fixture and seed source), the file cutter, and the
 * invariant checks every reader-level target applies. */
#include "fuzz_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void dg_fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FUZZ_ASSERT failed at %s:%d: %s\n  ", file, line, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

/* ---- synthetic world ------------------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* [-1, 1) */
static double rng_signed(uint64_t *s) { return (double)(rng_next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0; }

static const dg_flrep_type k_types[] = {
    {0, {"f16c", 4}, {"F-16C Viper", 11}, 1, 0},
    {1, {"aim120", 6}, {"AIM-120", 7}, 2, 1},
    {2, {"t72", 3}, {"T-72", 4}, 3, 0},
    {7, {"hangar", 6}, {"Hangar \xC3\xA9", 9}, 4, 0},
};
static const dg_flrep_faction k_factions[] = {
    {0, {"blue", 4}, {"Blue", 4}}, {1, {"red", 3}, {"Red", 3}}, {5, {"neutral", 7}, {"Neutral", 7}}};
static const dg_flrep_participant k_roster[] = {{100, 1, {"Maverick", 8}}, {101, 0, {"Goose", 5}}};
static const dg_flrep_mission_object k_objects[] = {{{"target-a", 8}, 3}, {{"", 0}, 0}};

dg_flrep_header dg_fuzz_header(uint32_t tick_rate, uint32_t keyframe)
{
    dg_flrep_header h;
    memset(&h, 0, sizeof h);
    h.engine_version = dg_flrep_cstr("detgate-fuzz 0.1");
    h.tick_rate_hz = tick_rate ? tick_rate : 60;
    h.planet_radius_m = 6371000.0;
    h.start_unix_seconds = 1764460800;
    h.mission_id = dg_flrep_cstr("fuzz-mission");
    h.session_flags = 3;
    h.keyframe_interval_ticks = keyframe;
    h.types = k_types;
    h.type_count = 4;
    h.factions = k_factions;
    h.faction_count = 3;
    h.participants = k_roster;
    h.participant_count = 2;
    h.mission_objects = k_objects;
    h.mission_object_count = 2;
    return h;
}

dg_fuzz_rec_params dg_fuzz_fixture_params(void)
{
    dg_fuzz_rec_params p = {0x5EED, 31, 3, 15, 60, 1, true, true};
    return p;
}

/* Plain arithmetic only (no libm): a body drifts, turns a little and sometimes changes attributes. */
static void init_body(uint64_t *r, dg_entity_in *e, uint32_t id)
{
    static const uint16_t types[] = {0, 1, 2, 7};
    static const uint16_t factions[] = {0, 1, 5};
    memset(e, 0, sizeof *e);
    e->id = id;
    e->type_index = types[rng_next(r) % 4];
    e->faction_index = factions[rng_next(r) % 3];
    for (int i = 0; i < 3; i++) {
        e->pos[i] = rng_signed(r) * 100000.0;
        e->vel[i] = e->type_index == 7 ? 0.0 : rng_signed(r) * 300.0;
    }
    e->rot[0] = 1.0;
    e->rot[3] = rng_signed(r) * 0.5;
    e->health = 1.0;
}

static void move_body(uint64_t *r, dg_entity_in *e, double dt)
{
    if (e->type_index != 7)
        for (int i = 0; i < 3; i++) {
            e->vel[i] += rng_signed(r) * 2.0;
            e->pos[i] += e->vel[i] * dt;
        }
    e->rot[1] += rng_signed(r) * 0.01;
    e->rot[3] += rng_signed(r) * 0.01;
    if (rng_next(r) % 50 == 0)   /* a sudden attitude change exercises the rotFull path */
        e->rot[rng_next(r) % 4] += 2.0;
    if (rng_next(r) % 40 == 0)
        e->health = (double)(rng_next(r) % 1001) / 1000.0;
    if (rng_next(r) % 60 == 0)
        e->flags ^= (uint16_t)(1u << (rng_next(r) % 16));
    if (rng_next(r) % 80 == 0)
        e->faction_index = (uint16_t)(e->faction_index == 0 ? 1 : 0);
}

static size_t make_events(uint64_t *r, uint64_t tick, const dg_entity_in *b, size_t nb, dg_event *ev)
{
    static const char *lines[] = {"fox three", "splash one, \xC3\xA9l\xC3\xA8ve", "RTB", ""};
    size_t n = rng_next(r) % 3 == 0 ? 1 + rng_next(r) % 3 : 0;
    for (size_t i = 0; i < n; i++) {
        dg_event *e = &ev[i];
        memset(e, 0, sizeof *e);
        e->kind = (uint8_t)(1 + rng_next(r) % 5);
        e->tick = tick;
        uint32_t who = nb ? b[rng_next(r) % nb].id : 0;
        const char *text = lines[rng_next(r) % 4];
        switch (e->kind) {
        case DG_EV_KILL: e->a = who; e->b = (uint32_t)(rng_next(r) % 50); e->c = 1; break;
        case DG_EV_SPAWN: e->a = who; e->c = 0; e->d = 5; break;
        case DG_EV_CHAT: e->a = who; e->c = 2; e->text = text; e->text_len = (uint16_t)strlen(text); break;
        case DG_EV_ADMIN:
            e->a = 100; e->b = who; e->c = 3; e->text = text; e->text_len = (uint16_t)strlen(text); break;
        default: e->c = 1; e->d = (uint16_t)(rng_next(r) % 6); break;
        }
    }
    return n;
}

uint8_t *dg_fuzz_record(const dg_fuzz_rec_params *p, size_t *len)
{
    char path[256];
    dg_fuzz_temp_path(path, sizeof path, "rec.flrep");
    uint32_t rate = p->tick_rate ? p->tick_rate : 60;
    dg_flrep_header h = dg_fuzz_header(rate, p->keyframe);
    dg_flrep_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    /* level 3, not the writer's default: the committed seeds (gen_seeds --small) were written at 3
     * and stay reproducible byte for byte, and their frames keep Huffman-coded literals, a part of
     * zstd's decoder the default level's frames never reach */
    dg_flrep_writer_opts o = {.zstd_level = 3};
    if (dg_flrep_writer_open(&w, path, &h, &o, &err) != DG_OK) {
        fprintf(stderr, "fixture: writer_open: %s: %s\n", err.where, err.msg);
        return NULL;
    }
    size_t cap = (size_t)p->entities * 2 + 8, nb = 0;
    dg_entity_in *b = calloc(cap, sizeof *b);
    uint64_t r = p->seed;
    uint32_t next_id = 0;
    for (uint32_t i = 0; i < p->entities; i++) {
        next_id += 1 + (uint32_t)(rng_next(&r) % 3);
        init_body(&r, &b[nb++], next_id);
    }
    uint64_t tick = 100;
    dg_status st = DG_OK;
    for (uint32_t t = 0; t < p->ticks && st == DG_OK; t++) {
        tick += p->tick_step ? p->tick_step : 1;
        for (size_t i = 0; i < nb; i++)
            move_body(&r, &b[i], 1.0 / rate);
        if (p->churn && nb > 0 && rng_next(&r) % 8 == 0) {
            size_t k = rng_next(&r) % nb;
            memmove(&b[k], &b[k + 1], (nb - k - 1) * sizeof *b);
            nb--;
        }
        if (p->churn && nb < cap && rng_next(&r) % 6 == 0) {
            next_id += 1 + (uint32_t)(rng_next(&r) % 1000);
            init_body(&r, &b[nb++], next_id);
        }
        dg_event ev[4];
        size_t nev = p->events ? make_events(&r, tick, b, nb, ev) : 0;
        st = dg_flrep_writer_tick(w, tick, b, nb, ev, nev, NULL, &err);
    }
    free(b);
    if (st != DG_OK) {
        fprintf(stderr, "fixture: writer_tick: %s: %s\n", err.where, err.msg);
        dg_flrep_writer_abort(w);
        return NULL;
    }
    if (dg_flrep_writer_close(w, &err) != DG_OK) {
        fprintf(stderr, "fixture: writer_close: %s: %s\n", err.where, err.msg);
        return NULL;
    }
    uint8_t *buf = dg_fuzz_slurp(path, len);
    unlink(path);
    return buf;
}

/* ---- cutting a file into pieces ------------------------------------------------------------- */

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

bool dg_fuzz_layout_of(const uint8_t *buf, size_t len, dg_fuzz_layout *out)
{
    memset(out, 0, sizeof *out);
    if (len < 10 + 4 + 48 || memcmp(buf, "FLRP", 4) != 0)
        return false;
    size_t pos = 10 + (size_t)le(buf + 8, 2);
    if (pos + 4 > len)
        return false;
    pos += 4 + (size_t)le(buf + pos, 4);
    out->header_end = pos;
    for (;;) {
        if (pos + 6 > len)
            return false;
        uint16_t id = (uint16_t)le(buf + pos, 2);
        size_t sl = (size_t)le(buf + pos + 2, 4);
        if (id == 0)
            break;
        if (sl > len - pos - 6 || out->nsections == 8)
            return false;
        out->sections[out->nsections].id = id;
        out->sections[out->nsections].offset = pos + 6;
        out->sections[out->nsections].length = sl;
        out->nsections++;
        pos += 6 + sl;
    }
    out->data_start = pos + 6;
    uint64_t toff = le(buf + len - 8, 8);
    if (toff < out->data_start || toff > len - 48)
        return false;
    out->table_offset = (size_t)toff;
    for (pos = out->data_start; pos < out->table_offset;) {
        if (pos + 36 > out->table_offset || out->nchunks == 256)
            return false;
        size_t cl = 36 + (size_t)le(buf + pos + 24, 4);
        out->chunks[out->nchunks].offset = pos;
        out->chunks[out->nchunks].length = cl;
        out->nchunks++;
        pos += cl;
    }
    return pos == out->table_offset;
}

const dg_fuzz_fixture *dg_fuzz_fixture_get(void)
{
    static dg_fuzz_fixture fx;
    static bool made;
    if (!made) {
        dg_fuzz_rec_params p = dg_fuzz_fixture_params();
        fx.file = dg_fuzz_record(&p, &fx.len);
        FUZZ_ASSERT(fx.file && dg_fuzz_layout_of(fx.file, fx.len, &fx.layout), "%s", "fixture recording failed");
        made = true;
    }
    return &fx;
}

/* ---- helpers -------------------------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) {
        h ^= (v >> (8 * i)) & 0xFF;
        h *= 0x100000001B3ull;
    }
    return h;
}

uint64_t dg_fuzz_world_hash(const dg_qentity *e, size_t n, const dg_event *ev, size_t nev)
{
    uint64_t h = 0xCBF29CE484222325ull;
    h = fnv(h, n, 8);
    for (size_t i = 0; i < n; i++) {
        const dg_qentity *q = &e[i];
        h = fnv(h, q->id, 4);
        h = fnv(h, q->type_index, 2);
        h = fnv(h, q->faction_index, 2);
        for (int k = 0; k < 3; k++)
            h = fnv(fnv(fnv(h, (uint32_t)q->pos[k], 4), (uint32_t)q->vel[k], 4), (uint16_t)q->rot[k], 2);
        h = fnv(fnv(fnv(h, q->rot_largest, 1), q->health, 2), q->flags, 2);
    }
    h = fnv(h, nev, 8);
    for (size_t i = 0; i < nev; i++) {
        const dg_event *x = &ev[i];
        h = fnv(fnv(fnv(fnv(h, x->kind, 1), x->tick, 8), x->a, 4), x->b, 4);
        h = fnv(fnv(fnv(h, x->c, 2), x->d, 2), x->text_len, 2);
        for (uint16_t k = 0; k < x->text_len; k++)
            h = fnv(h, (uint8_t)x->text[k], 1);
    }
    return h;
}

void dg_fuzz_temp_path(char *buf, size_t cap, const char *suffix)
{
    struct stat st;
    const char *dir = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
    const char *env = getenv("DG_FUZZ_TMPDIR");
    snprintf(buf, cap, "%s/detgate-fuzz-%ld-%s", env && *env ? env : dir, (long)getpid(), suffix);
}

uint8_t *dg_fuzz_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

bool dg_fuzz_write_file(const char *path, const uint8_t *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(buf, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

void dg_fuzz_check_world(const dg_qentity *e, size_t n)
{
    FUZZ_ASSERT(n <= DG_FLREP_MAX_LIVE, "%zu live entities reached the caller (at most %u)", n, DG_FLREP_MAX_LIVE);
    for (size_t i = 0; i < n; i++) {
        FUZZ_ASSERT(e[i].id >= 1 && (i == 0 || e[i].id > e[i - 1].id), "entity %zu: id %u not sorted/distinct", i,
                    e[i].id);
        FUZZ_ASSERT(e[i].health <= DG_QHEALTH_FULL, "entity %u: health %u", e[i].id, e[i].health);
        FUZZ_ASSERT(e[i].rot_largest <= 3 && dg_quant_rot_valid(e[i].rot, e[i].rot_largest),
                    "entity %u: invalid rotation reached the caller", e[i].id);
    }
}

void dg_fuzz_check_reader_info(const dg_flrep_reader *r, size_t input_len)
{
    const dg_flrep_file_info *fi = dg_flrep_reader_info(r);
    const dg_flrep_header *h = dg_flrep_reader_header(r);
    FUZZ_ASSERT(fi->file_size == input_len, "file_size %llu != %zu", (unsigned long long)fi->file_size, input_len);
    FUZZ_ASSERT(fi->data_start <= fi->file_size, "%s", "data_start past the end");
    FUZZ_ASSERT(h->major == DG_FLREP_MAJOR || h->major == DG_FLREP_MAJOR_SCHEMA, "major %u accepted", h->major);
    FUZZ_ASSERT(h->schema != NULL && (h->major == DG_FLREP_MAJOR_SCHEMA || dg_schema_is_legacy(h->schema)) &&
                    dg_schema_check(h->schema, NULL) == DG_OK,
                "%s", "the header's schema is missing, invalid, or not the legacy one in a 1.x file");
    FUZZ_ASSERT(h->tick_rate_hz >= 1 && h->keyframe_interval_ticks >= DG_FLREP_KEYFRAME_MIN &&
                    h->keyframe_interval_ticks <= DG_FLREP_KEYFRAME_MAX,
                "%s", "header fields out of range were accepted");
    uint64_t ticks = 0, end = fi->data_start;
    for (size_t k = 0; k < fi->chunk_count; k++) {
        const dg_flrep_chunk_info *c = &fi->chunks[k];
        FUZZ_ASSERT(c->offset == end, "chunk %zu at %llu, expected %llu", k, (unsigned long long)c->offset,
                    (unsigned long long)end);
        FUZZ_ASSERT(c->tick_count >= 1 && c->first_tick <= c->last_tick, "chunk %zu: bad tick range", k);
        FUZZ_ASSERT(k == 0 || c->first_tick > fi->chunks[k - 1].last_tick, "chunk %zu: ticks not increasing", k);
        FUZZ_ASSERT(c->decompressed_size <= DG_FUZZ_DECOMP_CAP, "chunk %zu: cap not enforced", k);
        end = c->offset + 36 + c->compressed_size;
        FUZZ_ASSERT(end <= fi->file_size, "chunk %zu ends past the file", k);
        ticks += c->tick_count;
    }
    FUZZ_ASSERT(ticks == fi->tick_count, "%s", "tick_count disagrees with the chunks");
    FUZZ_ASSERT(fi->recovered || end + 48 + 16 * fi->chunk_count == fi->file_size,
                "%s", "a trailer was accepted that does not end the file");
}

void dg_fuzz_check_error(dg_status st, const dg_error *err, uint64_t max_offset)
{
    FUZZ_ASSERT(st != DG_OK && err->code == st, "returned %d (%s) but the error says %d", (int)st, dg_status_str(st),
                (int)err->code);
    FUZZ_ASSERT(err->msg[0] != '\0', "%s", "an error without a message");
    FUZZ_ASSERT(max_offset == UINT64_MAX || err->offset == DG_OFFSET_NONE || err->offset <= max_offset,
                "error offset %llu beyond %llu (%s: %s)", (unsigned long long)err->offset,
                (unsigned long long)max_offset, err->where, err->msg);
}

void dg_fuzz_tick_ctx(uint32_t rate, flrep_index_set *types, flrep_index_set *factions, flrep_tick_ctx *ctx)
{
    dg_flrep_header h = dg_fuzz_header(rate, DG_FLREP_KEYFRAME_DEFAULT);
    dg_error err;
    dg_error_clear(&err);
    FUZZ_ASSERT(dg_flrep__check_tables(&h, types, factions, &err) == DG_OK, "%s", err.msg);
    dg_flrep__tick_ctx_init(ctx, h.tick_rate_hz, types, factions);
}

dg_status dg_fuzz_open_behind_prefix(size_t prefix, const uint8_t *data, size_t size, bool require_trailer,
                                     uint8_t **file, size_t *len, dg_flrep_reader **r, dg_error *err)
{
    const dg_fuzz_fixture *fx = dg_fuzz_fixture_get();
    *len = prefix + size;
    *file = malloc(*len ? *len : 1);
    FUZZ_ASSERT(*file, "%s", "out of memory");
    memcpy(*file, fx->file, prefix);
    if (size)
        memcpy(*file + prefix, data, size);
    dg_flrep_reader_opts opts = {.max_decompressed = DG_FUZZ_DECOMP_CAP, .require_trailer = require_trailer};
    *r = NULL;
    dg_error_clear(err);
    return dg_flrep_reader_open_mem(r, *file, *len, &opts, err);
}
