/* tests/codec/test_flrep_paths.c — the tick decoder's two paths agree. fast_run (the common DELTA
 * records, decoded and applied in registers) hands everything else to the general path; this test
 * decodes real chunks and thousands of damaged copies of them both ways (ctx.general_only)
 * and requires the same outcome tick by tick: the same worlds and events, or the same error at the
 * same offset. A fast path that accepted what the general one refuses, or decoded it differently,
 * fails here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "flrep_internal.h"
#include "flrep_testlib.h"

typedef struct chunk_set {
    uint8_t **content;
    size_t *len;
    size_t n;
    flrep_index_set types, factions;
    uint32_t rate;
} chunk_set;

/* Records a session and returns its chunks' decompressed contents. */
static void load_chunks(const tl_params *p, chunk_set *cs)
{
    char path[512];
    tl_temp_path(path, sizeof path, ".flrep");
    tl_session sess;
    tl_record(path, p, &sess);
    tl_session_free(&sess);
    size_t flen;
    uint8_t *file = tl_slurp(path, &flen);
    remove(path);
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(&r, file, flen, NULL, &err), DG_OK);
    const dg_flrep_file_info *fi = dg_flrep_reader_info(r);
    const dg_flrep_header *h = dg_flrep_reader_header(r);
    assert_int_equal(flrep_check_tables(h, &cs->types, &cs->factions, &err), DG_OK);
    cs->rate = h->tick_rate_hz;
    cs->n = fi->chunk_count;
    cs->content = calloc(cs->n, sizeof *cs->content);
    cs->len = calloc(cs->n, sizeof *cs->len);
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    for (size_t k = 0; k < cs->n; k++) {
        const dg_flrep_chunk_info *c = &fi->chunks[k];
        flrep_chunk_hdr ch;
        assert_int_equal(flrep_chunk_hdr_parse(file + c->offset, c->offset, flen - c->offset - FLREP_CHUNK_HDR_SIZE,
                                               h->keyframe_interval_ticks, DG_FLREP_DECOMP_CAP_DEFAULT, &ch, &err),
                         DG_OK);
        cs->len[k] = ch.decompressed_size;
        cs->content[k] = malloc(ch.decompressed_size);
        assert_int_equal(flrep_chunk_decompress(dctx, file + c->offset + FLREP_CHUNK_HDR_SIZE, &ch, cs->content[k],
                                                c->offset, &err),
                         DG_OK);
    }
    ZSTD_freeDCtx(dctx);
    dg_flrep_reader_close(r);
    free(file);
}

static void free_chunks(chunk_set *cs)
{
    for (size_t k = 0; k < cs->n; k++)
        free(cs->content[k]);
    free(cs->content);
    free(cs->len);
}

/* What decoding a tick stream produced, tick by tick, for comparison. */
typedef struct outcome {
    size_t ticks;              /* decoded */
    dg_status st;              /* of the tick that stopped it (DG_OK = the stream ended) */
    uint64_t err_offset;
    uint64_t hash;             /* over every world and event list handed out */
} outcome;

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001B3ull;
    return h;
}

static outcome decode_stream(const uint8_t *data, size_t size, const chunk_set *cs, bool general_only)
{
    flrep_tick_ctx ctx;
    flrep_tick_ctx_init(&ctx, cs->rate, &cs->types, &cs->factions);
    ctx.general_only = general_only;
    flrep_world w = {0};
    flrep_tick_scratch s;
    memset(&s, 0, sizeof s);
    dg_error err;
    dg_error_clear(&err);
    dg_cur c;
    dg_cur_init(&c, data, size, 0, "ticks", &err);
    outcome o = {0, DG_OK, 0, 0xCBF29CE484222325ull};
    for (uint32_t seq = 0; c.pos < size; seq++) {
        uint64_t tick;
        bool kf;
        const dg_event *ev;
        size_t nev;
        dg_status st = flrep_decode_tick(&c, seq, &ctx, &w, &s, &tick, &kf, &ev, &nev, &err);
        if (st != DG_OK) {
            o.st = st;
            o.err_offset = err.offset;
            break;
        }
        o.ticks++;
        o.hash = mix(o.hash, &tick, sizeof tick);
        o.hash = mix(o.hash, w.ents, w.n * sizeof *w.ents);
        for (size_t i = 0; i < nev; i++)
            o.hash = mix(o.hash, &ev[i].kind, sizeof ev[i].kind);
    }
    flrep_world_free(&w);
    flrep_tick_scratch_free(&s);
    return o;
}

static void assert_same_outcome(const uint8_t *data, size_t size, const chunk_set *cs, const char *what)
{
    outcome fast = decode_stream(data, size, cs, false), general = decode_stream(data, size, cs, true);
    if (fast.ticks != general.ticks || fast.st != general.st || fast.err_offset != general.err_offset ||
        fast.hash != general.hash)
        fail_msg("%s: fast path %zu ticks, status %d at %llu; general path %zu ticks, status %d at %llu%s", what,
                 fast.ticks, fast.st, (unsigned long long)fast.err_offset, general.ticks, general.st,
                 (unsigned long long)general.err_offset, fast.hash != general.hash ? "; states differ" : "");
}

static void check_paths_agree(const tl_params *p, int mutations_per_chunk)
{
    chunk_set cs;
    memset(&cs, 0, sizeof cs);
    load_chunks(p, &cs);
    tl_rng rng = {p->seed * 0x9E3779B97F4A7C15ull + 1};
    uint8_t *copy = NULL;
    size_t cap = 0;
    for (size_t k = 0; k < cs.n; k++) {
        assert_same_outcome(cs.content[k], cs.len[k], &cs, "intact chunk");
        assert_int_equal(decode_stream(cs.content[k], cs.len[k], &cs, false).st, DG_OK);
        if (cs.len[k] > cap) {
            cap = cs.len[k];
            copy = realloc(copy, cap);
        }
        for (int m = 0; m < mutations_per_chunk; m++) {
            memcpy(copy, cs.content[k], cs.len[k]);
            int flips = 1 + (int)(tl_next(&rng) % 3);
            for (int f = 0; f < flips; f++) {
                size_t at = (size_t)(tl_next(&rng) % cs.len[k]);
                if (tl_next(&rng) % 4 == 0)
                    copy[at] = (uint8_t)tl_next(&rng);       /* a whole byte */
                else
                    copy[at] ^= (uint8_t)(1u << (tl_next(&rng) % 8));
            }
            char what[96];
            snprintf(what, sizeof what, "chunk %zu, mutation %d", k, m);
            assert_same_outcome(copy, cs.len[k], &cs, what);
        }
    }
    free(copy);
    free_chunks(&cs);
}

static void test_paths_agree_on_moving_worlds(void **state)
{
    (void)state;
    tl_params p = {.seed = 11, .ticks = 720, .entities = 40, .churn = true, .events = true};
    check_paths_agree(&p, 1200);
}

static void test_paths_agree_at_odd_rates_and_one_hz(void **state)
{
    (void)state;
    tl_params p = {.seed = 12, .ticks = 240, .entities = 12, .churn = true, .keyframe = 15, .tick_rate = 7};
    check_paths_agree(&p, 600);
    tl_params q = {.seed = 13, .ticks = 240, .entities = 12, .churn = false, .keyframe = 15, .tick_rate = 1};
    check_paths_agree(&q, 600);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths_agree_on_moving_worlds),
        cmocka_unit_test(test_paths_agree_at_odd_rates_and_one_hz),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
