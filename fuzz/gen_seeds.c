/* fuzz/gen_seeds.c — the seed generator: records synthetic sessions through the public .flrep writer
 * and writes every target's seed corpus from them: whole files (plus truncated, trailer-damaged and
 * extra-section variants) for the reader-level targets, and each header / section / chunk / tick
 * stream / trailer cut out for the per-parser targets.
 *
 *   gen_seeds OUTDIR          the full set (what the nightly and OSS-Fuzz builds seed with)
 *   gen_seeds --small OUTDIR  the small set committed under corpus/fuzz/ */
#include "fuzz_common.h"
#include "rply_fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

static const char *g_out;
static unsigned g_written;

static void put_seed(const char *target, const char *name, const uint8_t *buf, size_t len)
{
    char dir[1024], path[1200];
    snprintf(dir, sizeof dir, "%s/%s", g_out, target);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "gen_seeds: cannot create %s\n", dir);
        exit(1);
    }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!dg_fuzz_write_file(path, buf, len)) {
        fprintf(stderr, "gen_seeds: cannot write %s\n", path);
        exit(1);
    }
    g_written++;
}

typedef struct rec {
    const char *name;
    dg_fuzz_rec_params p;
    bool fixture_compatible;   /* same tables, rate and interval as the fixture */
    uint8_t *buf;
    size_t len;
    dg_fuzz_layout lay;
} rec;

/* The file with extra sections inserted before the end marker; chunks moved, trailer rebuilt. */
static uint8_t *with_sections(const rec *r, const uint8_t *extra, size_t extra_len, bool reverse, size_t *out_len)
{
    dg_buf b;
    dg_buf_init(&b);
    dg_buf_put(&b, r->buf, r->lay.header_end);
    if (extra_len)
        dg_buf_put(&b, extra, extra_len);
    for (size_t i = 0; i < r->lay.nsections; i++) {
        size_t k = reverse ? r->lay.nsections - 1 - i : i;
        dg_buf_put(&b, r->buf + r->lay.sections[k].offset - 6, r->lay.sections[k].length + 6);
    }
    dg_buf_u16(&b, 0);
    dg_buf_u32(&b, 0);
    dg_flrep_chunk_info ci[256];
    for (size_t i = 0; i < r->lay.nchunks; i++) {
        const uint8_t *c = r->buf + r->lay.chunks[i].offset;
        ci[i] = (dg_flrep_chunk_info){b.len, dg_le64(c + 8), dg_le64(c + 16), dg_le32(c + 4), dg_le32(c + 24),
                                      dg_le32(c + 28)};
        dg_buf_put(&b, c, r->lay.chunks[i].length);
    }
    dg_flrep__trailer_encode(&b, ci, r->lay.nchunks, b.len);
    *out_len = b.len;
    return b.p;
}

static void file_seeds(const rec *r, bool small)
{
    static const char *targets[] = {"flrep_file", "flrep_roundtrip"};
    char name[128];
    for (int t = 0; t < 2; t++) {
        snprintf(name, sizeof name, "%s.flrep", r->name);
        put_seed(targets[t], name, r->buf, r->len);
        if (r->lay.nchunks < 2 || (small && t == 1))
            continue;
        /* cut inside the second chunk: recovery keeps the first */
        size_t cut = r->lay.chunks[1].offset + r->lay.chunks[1].length / 2;
        snprintf(name, sizeof name, "%s-cut.flrep", r->name);
        put_seed(targets[t], name, r->buf, cut);
        /* damaged trailer entry: recovery over the whole file */
        uint8_t *d = malloc(r->len);
        memcpy(d, r->buf, r->len);
        d[r->lay.table_offset + 40] ^= 0x01;
        snprintf(name, sizeof name, "%s-badindex.flrep", r->name);
        put_seed(targets[t], name, d, r->len);
        free(d);
    }
}

static void header_seeds(const rec *r)
{
    char name[128];
    snprintf(name, sizeof name, "%s.hdr", r->name);
    put_seed("flrep_header", name, r->buf, r->lay.header_end);
    uint8_t *d = malloc(r->lay.header_end + 8);
    memcpy(d, r->buf, r->lay.header_end);
    d[4] = 2;  /* a newer major: refused with the version message */
    snprintf(name, sizeof name, "%s-major2.hdr", r->name);
    put_seed("flrep_header", name, d, r->lay.header_end);
    d[4] = 0;
    snprintf(name, sizeof name, "%s-major0.hdr", r->name);
    put_seed("flrep_header", name, d, r->lay.header_end);
    /* a newer minor with 8 appended body bytes: read, tail skipped */
    d[4] = 1;
    d[6] = 3;
    size_t lpos = 10 + dg_le16(r->buf + 8);
    dg_put_le32(d + lpos, dg_le32(d + lpos) + 8);
    memset(d + r->lay.header_end, 0xAB, 8);
    snprintf(name, sizeof name, "%s-minor3.hdr", r->name);
    put_seed("flrep_header", name, d, r->lay.header_end + 8);
    free(d);
}

static void section_seeds(const rec *r, bool fixture_compatible)
{
    static const char *by_id[] = {NULL, "flrep_types", "flrep_factions", "flrep_roster"};
    char name[128];
    for (size_t i = 0; i < r->lay.nsections; i++) {
        uint16_t id = r->lay.sections[i].id;
        if (id < 1 || id > 3)
            continue;
        snprintf(name, sizeof name, "%s.sec%u", r->name, id);
        put_seed(by_id[id], name, r->buf + r->lay.sections[i].offset, r->lay.sections[i].length);
    }
    if (!fixture_compatible)
        return;
    /* the section list as the flrep_sections target sees it (after the fixture's header) */
    snprintf(name, sizeof name, "%s.sections", r->name);
    put_seed("flrep_sections", name, r->buf + r->lay.header_end, r->lay.data_start - r->lay.header_end);
    snprintf(name, sizeof name, "%s-withdata.sections", r->name);
    put_seed("flrep_sections", name, r->buf + r->lay.header_end, r->len - r->lay.header_end);
    /* a camera track (0x0004) and an unknown section (0x1234), and the sections reversed */
    static const uint8_t extra[] = {0x04, 0x00, 0x03, 0x00, 0x00, 0x00, 0xCA, 0x4D, 0x01,
                                    0x34, 0x12, 0x02, 0x00, 0x00, 0x00, 0xFF, 0xEE};
    size_t len;
    uint8_t *f = with_sections(r, extra, sizeof extra, true, &len);
    snprintf(name, sizeof name, "%s-camera-unknown.sections", r->name);
    put_seed("flrep_sections", name, f + r->lay.header_end, len - r->lay.header_end);
    snprintf(name, sizeof name, "%s-camera-unknown.flrep", r->name);
    put_seed("flrep_file", name, f, len);
    free(f);
}

static void chunk_seeds(const rec *r, size_t max_chunks)
{
    char name[128];
    for (size_t i = 0; i < r->lay.nchunks && i < max_chunks; i++) {
        const uint8_t *c = r->buf + r->lay.chunks[i].offset;
        snprintf(name, sizeof name, "%s.chunk%zu", r->name, i);
        put_seed("flrep_chunk", name, c, r->lay.chunks[i].length);
        size_t dsize = dg_le32(c + 28);
        uint8_t *content = malloc(dsize ? dsize : 1);
        size_t got = ZSTD_decompress(content, dsize, c + 36, dg_le32(c + 24));
        if (ZSTD_isError(got) || got != dsize) {
            fprintf(stderr, "gen_seeds: %s chunk %zu does not decompress\n", r->name, i);
            exit(1);
        }
        snprintf(name, sizeof name, "%s.ticks%zu", r->name, i);
        put_seed("flrep_ticks", name, content, dsize);
        free(content);
    }
}

static void trailer_and_recovery_seeds(const rec *r)
{
    char name[128];
    size_t tl = r->len - r->lay.table_offset;
    const uint8_t *t = r->buf + r->lay.table_offset;
    if (strcmp(r->name, "fixture") == 0) {  /* the trailer target appends to the fixture's chunks */
        put_seed("flrep_trailer", "fixture.trailer", t, tl);
        uint8_t *d = malloc(tl);
        memcpy(d, t, tl);
        d[tl - 16] ^= 0x80;  /* indexCheck */
        put_seed("flrep_trailer", "fixture-badcheck.trailer", d, tl);
        memcpy(d, t, tl);
        d[4] ^= 0x01;  /* entryCount */
        put_seed("flrep_trailer", "fixture-badcount.trailer", d, tl);
        put_seed("flrep_trailer", "fixture-cut.trailer", t, tl / 2);
        free(d);
    }
    /* the growing reader's target reads the same input (chunk bytes after the preamble) */
    static const char *const targets[2] = {"flrep_recovery", "flrep_growing"};
    for (int k = 0; k < 2; k++) {
        snprintf(name, sizeof name, "%s.chunks", r->name);
        put_seed(targets[k], name, r->buf + r->lay.data_start, r->lay.table_offset - r->lay.data_start);
        snprintf(name, sizeof name, "%s-trailer.chunks", r->name);
        put_seed(targets[k], name, r->buf + r->lay.data_start, r->len - r->lay.data_start);
        if (r->lay.nchunks >= 2) {
            snprintf(name, sizeof name, "%s-cut.chunks", r->name);
            put_seed(targets[k], name, r->buf + r->lay.data_start,
                     r->lay.chunks[1].offset + r->lay.chunks[1].length / 2 - r->lay.data_start);
        }
    }
}

/* ---- RPLY ------------------------------------------------------------------------------------ */

static void rply_seeds(int variant, const uint8_t *buf, size_t len)
{
    char name[128];
    dg_rply_file f;
    memset(&f, 0, sizeof f);
    dg_error err;
    dg_error_clear(&err);
    if (dg_rply_file_open(&f, buf, len, 0, &err) != DG_OK) {
        fprintf(stderr, "gen_seeds: rply variant %d does not open: %s\n", variant, err.msg);
        exit(1);
    }
    snprintf(name, sizeof name, "v%d.rply", variant);
    put_seed("rply_ops", name, buf, len);
    put_seed("rply_player", name, buf, len);
    snprintf(name, sizeof name, "v%d.hdr", variant);
    put_seed("rply_header", name, buf, DG_RPLY_HEADER_SIZE);
    uint8_t h[DG_RPLY_HEADER_SIZE];
    memcpy(h, buf, sizeof h);
    h[4] = 2;
    snprintf(name, sizeof name, "v%d-version2.hdr", variant);
    put_seed("rply_header", name, h, sizeof h);
    /* string table: u16 count + its bytes */
    size_t tl = (size_t)f.index_at - DG_RPLY_HEADER_SIZE;
    uint8_t *t = malloc(tl + 6);
    dg_put_le16(t, f.hdr.string_count);
    memcpy(t + 2, buf + DG_RPLY_HEADER_SIZE, tl);
    snprintf(name, sizeof name, "v%d.strings", variant);
    put_seed("rply_strings", name, t, tl + 2);
    free(t);
    /* keyframe index: u16 count, u32 tickCount, entries + op stream */
    size_t il = len - (size_t)f.index_at;
    uint8_t *x = malloc(il + 6);
    dg_put_le16(x, f.hdr.keyframe_count);
    dg_put_le32(x + 2, f.hdr.tick_count);
    memcpy(x + 6, buf + f.index_at, il);
    snprintf(name, sizeof name, "v%d.index", variant);
    put_seed("rply_index", name, x, il + 6);
    free(x);
    /* every SNAPSHOT payload */
    dg_rply_iter it;
    dg_rply_iter_init(&it, &f);
    dg_rply_op op;
    int k = 0;
    while (dg_rply_iter_next(&it, &op, &err) == 1)
        if (op.code == DG_RPLY_OP_SNAPSHOT) {
            snprintf(name, sizeof name, "v%d-op%d.snap", variant, k++);
            put_seed("rply_snapshot", name, op.u.snapshot.data, op.u.snapshot.len);
        }
    dg_rply_file_close(&f);
}

static void all_rply_seeds(void)
{
    for (int v = 0; v < DG_FUZZ_RPLY_VARIANTS; v++) {
        size_t len = 0;
        uint8_t *buf = dg_fuzz_rply_record(v, &len);
        if (!buf) {
            fprintf(stderr, "gen_seeds: rply variant %d failed\n", v);
            exit(1);
        }
        rply_seeds(v, buf, len);
        free(buf);
    }
    size_t n = 0;
    uint8_t *s = dg_fuzz_rply_snapshot_bytes(&n);
    if (!s)
        exit(1);
    put_seed("rply_snapshot", "model.snap", s, n);
    free(s);
}

/* A format 2.0 recording (docs/FORMAT-flrep.md §12): a schema with every extra field type, no type,
 * faction or health, quanta 1/1024; its whole file for the reader-level targets and its schema
 * section payload for flrep_schema. */
static void schema2_seeds(void)
{
    static const char *const kinds[] = {"static", "kinematic", "dynamic"};
    const dg_field_def fields[] = {
        {"angvel", "rad/s", DG_FIELD_FLOAT, 0, 1.0 / 4096, NULL, 0}, {"rng", "", DG_FIELD_UINT, 64, 0, NULL, 0},
        {"awake", "", DG_FIELD_BOOL, 0, 0, NULL, 0},                {"kind", "", DG_FIELD_ENUM, 0, 0, kinds, 3},
        {"tag", "", DG_FIELD_BYTES, 2, 0, NULL, 0},                 {"ammo", "", DG_FIELD_INT, 12, 0, NULL, 0},
    };
    dg_schema sc = {DG_STD_POS | DG_STD_VEL | DG_STD_ROT | DG_STD_FLAGS, 1.0 / 1024, 1.0 / 1024, fields, 6};
    dg_flrep_header h = dg_fuzz_header(60, 15);
    h.schema = &sc;
    h.planet_radius_m = 0.0;
    char path[256];
    dg_fuzz_temp_path(path, sizeof path, "schema2.flrep");
    dg_flrep_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (dg_flrep_writer_open(&w, path, &h, NULL, &err) != DG_OK) {
        fprintf(stderr, "gen_seeds: schema2: %s\n", err.msg);
        exit(1);
    }
    uint64_t rng = 0x9E3779B97F4A7C15u;
    for (uint64_t t = 0; t < 40; t++) {
        dg_qentity q[4];
        int64_t x[4 * 6];
        memset(q, 0, sizeof q);
        for (size_t i = 0; i < 4; i++) {
            q[i].id = (uint32_t)(i * 3 + 1);
            q[i].pos[0] = (int32_t)(i * 1024 + t * 17);
            q[i].pos[1] = (int32_t)(20480 - t * t * 3);
            q[i].vel[1] = -(int32_t)(t * 6);
            q[i].rot[2] = (int16_t)(t * 40 * i);
            q[i].flags = (uint16_t)(t > 20 && i == 2);
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            int64_t v[6] = {(int64_t)(i * 300 + t), (int64_t)rng, t < 30, (int64_t)(i % 3), 0x0a0b, 2047 - (int64_t)t};
            memcpy(x + i * 6, v, sizeof v);
        }
        if (dg_flrep_writer_tick_qx(w, t, q, x, 4, NULL, 0, &err) != DG_OK) {
            fprintf(stderr, "gen_seeds: schema2 tick %llu: %s\n", (unsigned long long)t, err.msg);
            exit(1);
        }
    }
    if (dg_flrep_writer_close(w, &err) != DG_OK) {
        fprintf(stderr, "gen_seeds: schema2: %s\n", err.msg);
        exit(1);
    }
    size_t len = 0;
    uint8_t *buf = dg_fuzz_slurp(path, &len);
    remove(path);
    dg_fuzz_layout lay;
    if (!buf || !dg_fuzz_layout_of(buf, len, &lay)) {
        fprintf(stderr, "gen_seeds: schema2 file unreadable\n");
        exit(1);
    }
    put_seed("flrep_file", "schema2.flrep", buf, len);
    put_seed("flrep_roundtrip", "schema2.flrep", buf, len);
    for (size_t i = 0; i < lay.nsections; i++)
        if (dg_le16(buf + lay.sections[i].offset - 6) == 5)
            put_seed("flrep_schema", "schema2.bin", buf + lay.sections[i].offset, lay.sections[i].length);
    free(buf);
}

int main(int argc, char **argv)
{
    bool small = argc == 3 && strcmp(argv[1], "--small") == 0;
    if (argc != 2 && !small) {
        fprintf(stderr, "usage: gen_seeds [--small] OUTDIR\n");
        return 2;
    }
    g_out = argv[argc - 1];
    if (mkdir(g_out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "gen_seeds: cannot create %s\n", g_out);
        return 1;
    }
    dg_fuzz_rec_params fx = dg_fuzz_fixture_params();
    /* name, {seed, ticks, entities, keyframe, rate, step, churn, events}, fixture-compatible */
    rec recs[] = {
        {"fixture", fx, true, NULL, 0, {0}},
        {"empty", {1, 0, 0, 15, 60, 1, false, false}, true, NULL, 0, {0}},
        {"one-tick", {2, 1, 1, 15, 60, 1, false, true}, true, NULL, 0, {0}},
        {"churn60", {3, small ? 45 : 150, small ? 6 : 24, 15, 60, 1, true, true}, true, NULL, 0, {0}},
        {"steady30", {4, small ? 40 : 300, small ? 3 : 12, small ? 16 : 120, 30, 3, false, false}, false, NULL, 0, {0}},
        {"slow7", {5, 30, 4, 3600, 7, 1, true, true}, false, NULL, 0, {0}},
        {"busy60", {6, 300, 32, 120, 60, 1, true, true}, false, NULL, 0, {0}},  /* full set only */
    };
    size_t nrec = sizeof recs / sizeof recs[0] - (small ? 1 : 0);
    for (size_t i = 0; i < nrec; i++) {
        rec *r = &recs[i];
        r->buf = dg_fuzz_record(&r->p, &r->len);
        if (!r->buf || !dg_fuzz_layout_of(r->buf, r->len, &r->lay)) {
            fprintf(stderr, "gen_seeds: recording %s failed\n", r->name);
            return 1;
        }
        file_seeds(r, small);
        header_seeds(r);
        section_seeds(r, r->fixture_compatible);
        chunk_seeds(r, small ? 3 : 256);
        if (r->fixture_compatible)
            trailer_and_recovery_seeds(r);
    }
    for (size_t i = 0; i < nrec; i++)
        free(recs[i].buf);
    schema2_seeds();
    all_rply_seeds();
    printf("gen_seeds: %u seeds in %s\n", g_written, g_out);
    return 0;
}
