/* tests/codec/test_flrep_paths.c — the tick decoder's paths agree. The fast path (the common DELTA
 * records, decoded and applied in registers; codec/flrep/flrep_fast.h) hands everything else to the
 * general path; this test decodes real chunks and thousands of damaged copies of them every way —
 * the general path alone (ctx.general_only), the fast path's portable build, and its AVX2 build
 * where the CPU has one (ctx.fast_avx2) — and requires the same outcome tick by tick: the same
 * worlds and events, or the same error at the same offset. A fast path that accepted what the
 * general one refuses, or decoded it differently, fails here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "flrep_handbits.h"
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
    assert_int_equal(dg_flrep__check_tables(h, &cs->types, &cs->factions, &err), DG_OK);
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
    dg_qentity fourth;         /* the last good world's entity at index 3, when it has one */
} outcome;

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001B3ull;
    return h;
}

typedef enum path { PATH_GENERAL, PATH_PORTABLE, PATH_AVX2 } path;

static outcome decode_stream(const uint8_t *data, size_t size, const chunk_set *cs, path which)
{
    flrep_tick_ctx ctx;
    dg_flrep__tick_ctx_init(&ctx, cs->rate, &cs->types, &cs->factions);
    ctx.general_only = which == PATH_GENERAL;
    if (which == PATH_PORTABLE)
        ctx.fast_avx2 = false;
    flrep_world w = {0};
    flrep_tick_scratch s;
    memset(&s, 0, sizeof s);
    dg_error err;
    dg_error_clear(&err);
    dg_cur c;
    dg_cur_init(&c, data, size, 0, "ticks", &err);
    outcome o = {0, DG_OK, 0, 0xCBF29CE484222325ull, {0}};
    for (uint32_t seq = 0; c.pos < size; seq++) {
        uint64_t tick;
        bool kf;
        const dg_event *ev;
        size_t nev;
        dg_status st = dg_flrep__decode_tick(&c, seq, &ctx, &w, &s, &tick, &kf, &ev, &nev, &err);
        if (st != DG_OK) {
            o.st = st;
            o.err_offset = err.offset;
            break;
        }
        o.ticks++;
        if (w.n > 3)
            o.fourth = w.ents[3];
        o.hash = mix(o.hash, &tick, sizeof tick);
        o.hash = mix(o.hash, w.ents, w.n * sizeof *w.ents);
        for (size_t i = 0; i < nev; i++)
            o.hash = mix(o.hash, &ev[i].kind, sizeof ev[i].kind);
    }
    dg_flrep__world_free(&w);
    dg_flrep__tick_scratch_free(&s);
    return o;
}

static void assert_same(const outcome *fast, const outcome *general, const char *name, const char *what)
{
    if (fast->ticks != general->ticks || fast->st != general->st || fast->err_offset != general->err_offset ||
        fast->hash != general->hash)
        fail_msg("%s: %s fast path %zu ticks, status %d at %llu; general path %zu ticks, status %d at %llu%s", what,
                 name, fast->ticks, fast->st, (unsigned long long)fast->err_offset, general->ticks, general->st,
                 (unsigned long long)general->err_offset, fast->hash != general->hash ? "; states differ" : "");
}

/* Whether the decoder picked the fast path's AVX2 build (what ctx init decides for this CPU). */
static bool avx2_in_use(void)
{
    flrep_tick_ctx ctx;
    dg_flrep__tick_ctx_init(&ctx, 60, NULL, NULL);
    return ctx.fast_avx2;
}

/* Every fast build this CPU runs against the general path; returns the portable one's outcome. */
static outcome assert_same_outcome(const uint8_t *data, size_t size, const chunk_set *cs, const char *what)
{
    outcome general = decode_stream(data, size, cs, PATH_GENERAL);
    outcome portable = decode_stream(data, size, cs, PATH_PORTABLE);
    assert_same(&portable, &general, "portable", what);
    if (avx2_in_use()) {
        outcome avx2 = decode_stream(data, size, cs, PATH_AVX2);
        assert_same(&avx2, &general, "AVX2", what);
    }
    return portable;
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
        assert_int_equal(decode_stream(cs.content[k], cs.len[k], &cs, PATH_PORTABLE).st, DG_OK);
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

/* Damaged copies per chunk. Each is decoded two or three ways (the sanitizer build runs this for
 * minutes): two thirds of the count that first found the fast path's offset bug, and a quarter for
 * the build without SIMD (DG_FLREP_SCALAR), which differs from the others only in its arithmetic. */
#ifdef DG_FLREP_SCALAR
#define MUTATIONS(n) ((n) / 4)
#else
#define MUTATIONS(n) ((n) * 2 / 3)
#endif

static void test_paths_agree_on_moving_worlds(void **state)
{
    (void)state;
    tl_params p = {.seed = 11, .ticks = 720, .entities = 40, .churn = true, .events = true};
    check_paths_agree(&p, MUTATIONS(1200));
}

static void test_paths_agree_at_odd_rates_and_one_hz(void **state)
{
    (void)state;
    tl_params p = {.seed = 12, .ticks = 240, .entities = 12, .churn = true, .keyframe = 15, .tick_rate = 7};
    check_paths_agree(&p, MUTATIONS(600));
    tl_params q = {.seed = 13, .ticks = 240, .entities = 12, .churn = false, .keyframe = 15, .tick_rate = 1};
    check_paths_agree(&q, MUTATIONS(600));
}

/* ---- hand-built edges: each limit a common record can cross, crossed in the middle of a block ---- */

typedef struct stream {
    uint8_t b[16384];
    size_t n;
} stream;

static void put_le(stream *s, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        s->b[s->n++] = (uint8_t)(v >> (8 * i));
}

/* FORMAT-flrep.md §6.1: tick, flags, recordCount, eventCount, recordBytes, the record block. */
static void put_tick(stream *s, uint64_t tick, bool keyframe, uint16_t nrec, const bits *w)
{
    put_le(s, tick, 8);
    put_le(s, keyframe ? 1 : 0, 2);
    put_le(s, nrec, 2);
    put_le(s, 0, 2);
    put_le(s, (w->nbits + 7) / 8, 4);
    memcpy(s->b + s->n, w->b, (w->nbits + 7) / 8);
    s->n += (w->nbits + 7) / 8;
}

static void put_full(bits *w, int32_t pos0, int32_t vel0, const int16_t rot[3])
{
    beg(w, 0);                /* the next id */
    bput(w, 1, 2);            /* FULL */
    bput(w, 0, 16); bput(w, 0, 16); bput(w, 10000, 16); bput(w, 0, 16);   /* type, faction, health, flags */
    bput(w, (uint32_t)pos0, 32); bput(w, 0, 32); bput(w, 0, 32);
    bput(w, (uint32_t)vel0, 32); bput(w, 0, 32); bput(w, 0, 32);
    bput(w, 0, 2);
    for (int k = 0; k < 3; k++)
        bput(w, (uint16_t)rot[k], 16);
}

/* A DELTA record of the next id: motion with these residuals, or (res == NULL) the still record. */
static void put_delta(bits *w, const int64_t res[9])
{
    beg(w, 0);
    bput(w, 0, 2);                     /* DELTA */
    bput(w, res ? 1 : 0, 3);           /* motion, no rotFull, no attrs */
    for (int k = 0; res && k < 9; k++)
        bseg(w, res[k]);               /* vres[3], pres[3], rres[3] */
}

#define EDGE_ENTS 16
#define EDGE_AT 3   /* the entity under test: records before and after it keep fast_run going */

typedef struct edge_case {
    const char *name;
    int32_t pos0, vel0;
    int16_t rot[3];
    int64_t res[9];      /* its residuals in tick 1 */
    bool still_after;    /* tick 2: its still record (the prediction alone) */
    size_t good_ticks;   /* ticks that decode before the error; 3 = no error */
} edge_case;

static void build_edge(const edge_case *e, stream *s)
{
    static const int16_t level[3] = {0, 0, 0};
    s->n = 0;
    bits w;
    memset(&w, 0, sizeof w);
    for (int i = 0; i < EDGE_ENTS; i++)
        put_full(&w, i == EDGE_AT ? e->pos0 : 1000 * i, i == EDGE_AT ? e->vel0 : 300, i == EDGE_AT ? e->rot : level);
    put_tick(s, 0, true, EDGE_ENTS, &w);
    static const int64_t none[9] = {0};
    for (int t = 1; t <= 2; t++) {
        memset(&w, 0, sizeof w);
        for (int i = 0; i < EDGE_ENTS; i++)
            put_delta(&w, i != EDGE_AT ? none : t == 1 ? e->res : e->still_after ? NULL : none);
        put_tick(s, (uint64_t)t, false, EDGE_ENTS, &w);
    }
}

static int64_t rdiv_page(int64_t a, int64_t b)
{
    return a >= 0 ? (a + b / 2) / b : -((-a + b / 2) / b);
}

/* Both paths reach the same verdict on every edge, and it is the page's: the state out of the
 * quantized domain is an error at its tick, the one inside it decodes to the §6.4 values. */
static void test_paths_agree_on_the_edges_of_the_quantized_domain(void **state)
{
    (void)state;
    static const edge_case cases[] = {
        {"velocity leaves i32", 0, INT32_MAX - 10, {0, 0, 0}, {100, 0, 0, 0, 0, 0, 0, 0, 0}, false, 1},
        {"position leaves i32", INT32_MAX - 5, 0, {0, 0, 0}, {0, 0, 0, 100, 0, 0, 0, 0, 0}, false, 1},
        {"velocity leaves i32 below", 0, INT32_MIN + 10, {0, 0, 0}, {-100, 0, 0, 0, 0, 0, 0, 0, 0}, false, 1},
        {"rotation component past 32767", 0, 0, {32000, 0, 0}, {0, 0, 0, 0, 0, 0, 1000, 0, 0}, false, 1},
        {"rotation component past -32767", 0, 0, {0, -32000, 0}, {0, 0, 0, 0, 0, 0, 0, -1000, 0}, false, 1},
        {"rotation not a unit quaternion", 0, 0, {32000, 32000, 0}, {0, 0, 0, 0, 0, 0, 0, 0, 10000}, false, 1},
        {"still record's velocity leaves i32", 0, INT32_MAX - 150, {0, 0, 0}, {100, 0, 0, 0, 0, 0, 0, 0, 0}, true, 2},
        {"still record's rotation leaves range", 0, 0, {32000, 0, 0}, {0, 0, 0, 0, 0, 0, 500, 0, 0}, true, 2},
        /* the rotation's limits exactly (tick 2 adds the residual again): 32767 in, 32768 out, the
         * norm at 2 x 32767^2 in and one more out (the third component's square counts too) */
        {"rotation component at 32767", 0, 0, {32001, 0, 0}, {0, 0, 0, 0, 0, 0, 383, 0, 0}, true, 3},
        {"rotation component at 32768", 0, 0, {32002, 0, 0}, {0, 0, 0, 0, 0, 0, 383, 0, 0}, true, 2},
        {"rotation component at -32767", 0, 0, {0, -32001, 0}, {0, 0, 0, 0, 0, 0, 0, -383, 0}, false, 3},
        {"rotation component at -32768", 0, 0, {0, -32002, 0}, {0, 0, 0, 0, 0, 0, 0, -383, 0}, false, 2},
        {"rotation norm at its limit", 0, 0, {32001, 32001, 0}, {0, 0, 0, 0, 0, 0, 383, 383, 0}, true, 3},
        {"rotation norm one past its limit", 0, 0, {32001, 32001, 1}, {0, 0, 0, 0, 0, 0, 383, 383, 0}, true, 2},
        {"still record inside the domain", 500, 1000, {100, -200, 300}, {30, 0, 0, 2, 0, 0, 5, -5, 7}, true, 3},
        {"exact halves below zero", 0, -1020, {0, 0, 0}, {-15, 0, 0, 0, 0, 0, 0, 0, 0}, true, 3},
        /* nine 9-bit codes: longer than one refill's 56 counted bits (the fast path's second load) */
        {"long record inside the domain", 500, 1000, {100, -200, 300}, {10, -10, 9, -9, 10, -10, 10, 9, -9}, true, 3},
        {"long record leaving the domain", 0, INT32_MAX - 5, {0, 0, 0}, {10, -10, 9, -9, 10, -10, 10, 9, -9}, false, 1},
    };
    chunk_set cs;
    memset(&cs, 0, sizeof cs);
    tl_params p = {.seed = 14, .ticks = 20, .entities = 4};
    load_chunks(&p, &cs);   /* for its type and faction tables; the rate is 60 Hz */
    assert_int_equal(cs.rate, 60);
    static stream s;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const edge_case *e = &cases[c];
        build_edge(e, &s);
        outcome o = assert_same_outcome(s.b, s.n, &cs, e->name);
        if (o.ticks != e->good_ticks)
            fail_msg("%s: expected %zu good ticks, decoded %zu (status %d)", e->name, e->good_ticks, o.ticks, o.st);
        if (e->good_ticks < 3) {
            assert_int_equal(o.st, DG_E_RANGE);
            continue;
        }
        /* §6.4 by hand: tick 1 applies the residuals, tick 2 the prediction from tick 1's changes */
        int64_t v1 = e->vel0 + e->res[0], v2 = v1 + (v1 - e->vel0);
        int64_t x1 = e->pos0 + rdiv_page(2 * v1, 60) + e->res[3], x2 = x1 + rdiv_page(2 * v2, 60);
        assert_int_equal(o.fourth.vel[0], v2);
        assert_int_equal(o.fourth.pos[0], x2);
        for (int k = 0; k < 3; k++)
            assert_int_equal(o.fourth.rot[k], e->rot[k] + 2 * e->res[6 + k]);
    }
    free_chunks(&cs);
}

/* A build with the AVX2 fast path uses it on a CPU that has AVX2 (and BMI1/BMI2, which that build
 * also takes): otherwise the comparisons above would quietly test the portable build twice. */
static void test_avx2_build_is_used_where_the_cpu_has_it(void **state)
{
    (void)state;
#if defined(DG_FLREP_AVX2_BUILT) && (defined(__x86_64__) || defined(_M_X64))
    __builtin_cpu_init();
    bool cpu_runs_it = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
    assert_int_equal(avx2_in_use(), cpu_runs_it);
    print_message("fast path builds compared: portable%s\n", avx2_in_use() ? " and AVX2" : "");
#else
    assert_false(avx2_in_use());
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths_agree_on_moving_worlds),
        cmocka_unit_test(test_paths_agree_at_odd_rates_and_one_hz),
        cmocka_unit_test(test_paths_agree_on_the_edges_of_the_quantized_domain),
        cmocka_unit_test(test_avx2_build_is_used_where_the_cpu_has_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
