/* tests/hash/test_hash.c — the state hash against an independent route (the documented byte layout
 * built here by hand, hashed by libxxhash directly), plus sensitivity, ordering, events, raw floats
 * and entity localization. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <xxhash.h>

#include "detgate/hash.h"
#include "hash_reference.h"

/* ---- the test's own byte builder (deliberately not the module's helpers) ----------------------- */
typedef struct tbuf {
    uint8_t b[4096];
    size_t n;
} tbuf;

static void tb_u8(tbuf *t, unsigned v) { t->b[t->n++] = (uint8_t)v; }
static void tb_le(tbuf *t, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        t->b[t->n++] = (uint8_t)(v >> (8 * i));
}
static void tb_bytes(tbuf *t, const void *p, size_t n)
{
    if (n)
        memcpy(t->b + t->n, p, n);
    t->n += n;
}

/* docs/STATE-HASH.md §1: the seed is the ASCII text read as a little-endian u64. */
static uint64_t seed_of(const char text[8])
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | (uint8_t)text[i];
    return v;
}

/* §2, field by field, in the documented byte order. */
static void doc_entity_record(tbuf *t, const dg_qentity *e)
{
    tb_le(t, e->id, 4);
    tb_le(t, e->type_index, 2);
    tb_le(t, e->faction_index, 2);
    for (int i = 0; i < 3; i++)
        tb_le(t, (uint32_t)e->pos[i], 4);
    for (int i = 0; i < 3; i++)
        tb_le(t, (uint32_t)e->vel[i], 4);
    for (int i = 0; i < 3; i++)
        tb_le(t, (uint16_t)e->rot[i], 2);
    tb_le(t, e->health, 2);
    tb_le(t, e->flags, 2);
    tb_u8(t, e->rot_largest);
    tb_le(t, 0, 5); /* reserved */
}

static uint64_t doc_entity_hash(const dg_qentity *e)
{
    tbuf t = {.n = 0};
    doc_entity_record(&t, e);
    assert_int_equal(t.n, 48);
    return XXH3_64bits_withSeed(t.b, t.n, seed_of("dgH1ent."));
}

static uint64_t doc_events_hash(const dg_event *ev, size_t n)
{
    tbuf t = {.n = 0};
    tb_le(&t, n, 8);
    for (size_t i = 0; i < n; i++) {
        tb_u8(&t, ev[i].kind);
        tb_le(&t, ev[i].tick, 8);
        tb_le(&t, ev[i].a, 4);
        tb_le(&t, ev[i].b, 4);
        tb_le(&t, ev[i].c, 2);
        tb_le(&t, ev[i].d, 2);
        tb_le(&t, ev[i].text_len, 2);
        tb_bytes(&t, ev[i].text, ev[i].text_len);
    }
    return XXH3_64bits_withSeed(t.b, t.n, seed_of("dgH1evt."));
}

static uint64_t doc_state_hash(uint64_t tick, const dg_qentity *e, size_t n)
{
    tbuf t = {.n = 0};
    tb_le(&t, tick, 8);
    for (size_t i = 0; i < n; i++)
        tb_le(&t, doc_entity_hash(&e[i]), 8);
    tb_le(&t, n, 4);
    return XXH3_64bits_withSeed(t.b, t.n, seed_of("dgH1sta."));
}

static uint64_t doc_tick_hash(uint64_t tick, uint32_t count, uint64_t state, uint64_t events)
{
    tbuf t = {.n = 0};
    tb_le(&t, tick, 8);
    tb_le(&t, count, 4);
    tb_le(&t, state, 8);
    tb_le(&t, events, 8);
    return XXH3_64bits_withSeed(t.b, t.n, seed_of("dgH1tik."));
}

/* ---- a small hand-built state: signs, extremes, every field non-zero somewhere ------------------ */
static const dg_qentity k_ents[3] = {
    {.id = 7, .type_index = 2, .faction_index = 1, .pos = {64, -128, 2147483647},
     .vel = {-1, 0, 32}, .rot = {-32767, 12, 5000}, .rot_largest = 0, .health = 10000, .flags = 0x8001},
    {.id = 19, .type_index = 0xffff, .faction_index = 0, .pos = {-2147483647 - 1, 0, 1},
     .vel = {2147483647, -2147483647 - 1, 7}, .rot = {1, -1, 0}, .rot_largest = 3, .health = 0, .flags = 0},
    {.id = 4000000000u, .type_index = 1, .faction_index = 0x1234, .pos = {100, 200, 300},
     .vel = {3, 2, 1}, .rot = {300, -300, 32767}, .rot_largest = 2, .health = 1, .flags = 0xffff},
};

static const dg_event k_events[2] = {
    {.kind = DG_EV_KILL, .tick = 4312, .a = 7, .b = 19, .c = 3, .d = 0, .text = NULL, .text_len = 0},
    {.kind = DG_EV_CHAT, .tick = 4312, .a = 0, .b = 0, .c = 1, .d = 0, .text = "gg \xc3\xa9t\xc3\xa9", .text_len = 9},
};

static void test_seeds_are_the_documented_ascii(void **state)
{
    (void)state;
    assert_true(DG_HASH_SEED_ENTITY == seed_of("dgH1ent."));
    assert_true(DG_HASH_SEED_EVENTS == seed_of("dgH1evt."));
    assert_true(DG_HASH_SEED_STATE == seed_of("dgH1sta."));
    assert_true(DG_HASH_SEED_TICK == seed_of("dgH1tik."));
    assert_true(DG_HASH_SEED_RAW == seed_of("dgH1raw."));
}

static void test_entity_bytes_match_documented_layout(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++) {
        tbuf t = {.n = 0};
        doc_entity_record(&t, &k_ents[i]);
        uint8_t got[DG_HASH_ENTITY_BYTES];
        dg_hash_entity_bytes(&k_ents[i], got);
        assert_memory_equal(got, t.b, DG_HASH_ENTITY_BYTES);
    }
    /* Spot-check a few offsets with literal bytes, so a layout bug shared by both builders shows. */
    uint8_t b[DG_HASH_ENTITY_BYTES];
    dg_hash_entity_bytes(&k_ents[0], b);
    assert_int_equal(b[0], 7);            /* id */
    assert_int_equal(b[4], 2);            /* type_index */
    assert_int_equal(b[6], 1);            /* faction_index */
    assert_int_equal(b[8], 64);           /* pos[0] low byte */
    assert_int_equal(b[12], 0x80);        /* pos[1] = -128 = 0xffffff80 */
    assert_int_equal(b[15], 0xff);
    assert_int_equal(b[19], 0x7f);        /* pos[2] top byte */
    assert_int_equal(b[20], 0xff);        /* vel[0] = -1 */
    assert_int_equal(b[28], 32);          /* vel[2] */
    assert_int_equal(b[32], 0x01);        /* rot[0] = -32767 = 0x8001 */
    assert_int_equal(b[33], 0x80);
    assert_int_equal(b[34], 12);          /* rot[1] */
    assert_int_equal(b[38], 0x10);        /* health 10000 = 0x2710 */
    assert_int_equal(b[39], 0x27);
    assert_int_equal(b[40], 0x01);        /* flags 0x8001 */
    assert_int_equal(b[41], 0x80);
    dg_hash_entity_bytes(&k_ents[1], b);
    assert_int_equal(b[42], 3);           /* rot_largest */
    for (int i = 43; i < 48; i++)
        assert_int_equal(b[i], 0);        /* reserved */
}

static void test_tick_hash_matches_independent_route(void **state)
{
    (void)state;
    uint64_t eh[3];
    dg_tick_hash th = dg_hash_tick(4312, k_ents, 3, k_events, 2, eh);
    for (int i = 0; i < 3; i++)
        assert_true(eh[i] == doc_entity_hash(&k_ents[i]));
    uint64_t want_state = doc_state_hash(4312, k_ents, 3);
    uint64_t want_events = doc_events_hash(k_events, 2);
    assert_true(th.tick == 4312);
    assert_int_equal(th.entity_count, 3);
    assert_true(th.state == want_state);
    assert_true(th.events == want_events);
    assert_true(th.combined == doc_tick_hash(4312, 3, want_state, want_events));
    /* Empty tick: count 0, no entity hashes. */
    dg_tick_hash e = dg_hash_tick(0, NULL, 0, NULL, 0, NULL);
    assert_true(e.state == doc_state_hash(0, NULL, 0));
    assert_true(e.events == doc_events_hash(NULL, 0));
}

static void test_many_entities_match_independent_route(void **state)
{
    (void)state;
    /* 300 entities (2412 state bytes): crosses the module's 1024-byte batching twice and XXH3's
     * 240-byte short-input limit, so the streaming path is compared with the one-shot library call. */
    static dg_qentity e[300];
    for (int i = 0; i < 300; i++) {
        e[i] = k_ents[i % 3];
        e[i].id = (uint32_t)(i * 3 + 1);
        e[i].pos[0] = i * 1000 - 7;
    }
    dg_tick_hash th = dg_hash_tick(99, e, 300, NULL, 0, NULL);
    assert_true(th.state == doc_state_hash(99, e, 300));
    /* Event text longer than the batch goes to XXH3 directly; same value. */
    static char text[2000];
    for (int i = 0; i < 2000; i++)
        text[i] = (char)('a' + i % 26);
    dg_event ev[3] = {k_events[0], k_events[1], k_events[1]};
    ev[1].text = text;
    ev[1].text_len = 2000;
    assert_true(dg_hash_events(ev, 3) == doc_events_hash(ev, 3));
}

/* The opaque state keeps the ABI of the header that showed its fields: 640 (XXH3 state) + 1024 (batch)
 * + 4 + 4 + 8 + 8 + 4 + 4 = 1696 bytes, rounded up to its 64-byte alignment: 1728 (docs/API.md). */
static void test_stream_state_size_is_abi(void **state)
{
    (void)state;
    assert_int_equal(sizeof(dg_hash_stream), 1728);
    assert_int_equal(DG_HASH_STREAM_SIZE, 1728);
    assert_int_equal(_Alignof(dg_hash_stream), 64);
}

static void test_stream_equals_one_shot(void **state)
{
    (void)state;
    dg_hash_stream s;
    dg_hash_tick_begin(&s, 4312);
    for (int i = 0; i < 3; i++)
        assert_true(dg_hash_tick_add(&s, &k_ents[i]) == dg_hash_entity(&k_ents[i]));
    assert_int_equal(dg_hash_stream_order_errors(&s), 0);
    dg_tick_hash a = dg_hash_tick_end(&s, dg_hash_events(k_events, 2));
    dg_tick_hash b = dg_hash_tick(4312, k_ents, 3, k_events, 2, NULL);
    assert_true(a.tick == b.tick && a.entity_count == b.entity_count && a.state == b.state &&
                a.events == b.events && a.combined == b.combined);
}

/* ---- the fast paths against their references ------------------------------------------------------ */
static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void random_entities(dg_qentity *e, size_t n, uint64_t seed)
{
    uint32_t id = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t a = splitmix64(&seed), b = splitmix64(&seed), c = splitmix64(&seed);
        id += 1 + (uint32_t)(a % 5);
        e[i] = (dg_qentity){.id = id, .type_index = (uint16_t)(a >> 16), .faction_index = (uint16_t)(a >> 32),
                            .pos = {(int32_t)b, (int32_t)(b >> 32), (int32_t)c},
                            .vel = {(int32_t)(c >> 32), (int32_t)(a >> 8), (int32_t)(b >> 8)},
                            .rot = {(int16_t)(c >> 8), (int16_t)(c >> 24), (int16_t)(c >> 40)},
                            .rot_largest = (uint8_t)(a >> 60 & 3), .health = (uint16_t)(b >> 48),
                            .flags = (uint16_t)(c >> 48)};
    }
}

static void expect_tick_equals_reference(uint64_t tick, const dg_qentity *e, size_t n, uint64_t *ha, uint64_t *hb)
{
    dg_tick_hash a = dg_hash_tick(tick, e, n, k_events, 2, ha);
    dg_tick_hash b = dg_hash__tick_reference(tick, e, n, k_events, 2, hb);
    if (a.tick != b.tick || a.entity_count != b.entity_count || a.state != b.state || a.events != b.events ||
        a.combined != b.combined)
        fail_msg("%zu entities: one-shot state %016llx, reference %016llx", n, (unsigned long long)a.state,
                 (unsigned long long)b.state);
    for (size_t i = 0; i < n; i++)
        if (ha[i] != hb[i])
            fail_msg("%zu entities: entity %zu hash differs from the reference", n, i);
}

static void test_tick_fast_path_equals_reference(void **state)
{
    (void)state;
    /* Every count to 1100 crosses the 240-byte short limit (28/29 entities), the first block edges
     * (127/128 words: the count tail alone in a block, the last stripe straddling into the previous
     * block) and the later ones; then a few large counts. */
    enum { MAXN = 5000 };
    static dg_qentity e[MAXN];
    static uint64_t ha[MAXN], hb[MAXN];
    random_entities(e, MAXN, 42);
    for (size_t n = 0; n <= 1100; n++)
        expect_tick_equals_reference(n * 7919u, e, n, ha, hb);
    const size_t big[] = {1151, 1152, 1153, 2047, 2048, 2049, 4095, 4096, 4999, 5000};
    for (size_t k = 0; k < sizeof big / sizeof big[0]; k++)
        expect_tick_equals_reference(UINT64_MAX - k, e, big[k], ha, hb);
    /* and against the independent route of this file, past two blocks */
    assert_true(dg_hash_tick(5, e, 300, NULL, 0, NULL).state == doc_state_hash(5, e, 300));
    /* NULL entity_hashes_out: the same values */
    dg_tick_hash a = dg_hash_tick(3, e, 777, NULL, 0, NULL);
    dg_tick_hash b = dg_hash__tick_reference(3, e, 777, NULL, 0, NULL);
    assert_true(a.state == b.state && a.combined == b.combined);
}

/* dg_hash_tick_x's one-shot state hash against its streaming reference: field counts 1..33 (33: past
 * the 32 the entity hash takes on the stack), entity counts across the short limit and block edges. */
static void test_tick_x_fast_path_equals_reference(void **state)
{
    (void)state;
    enum { MAXN = 2100, MAXF = 33 };
    static dg_qentity e[MAXN];
    static int64_t x[MAXN * MAXF];
    static uint64_t ha[MAXN], hb[MAXN];
    random_entities(e, MAXN, 7);
    uint64_t seed = 11;
    for (size_t i = 0; i < MAXN * MAXF; i++)
        x[i] = (int64_t)splitmix64(&seed);
    const size_t fcs[] = {1, 2, 4, 7, 32, 33};
    const size_t ns[] = {0, 1, 2, 28, 29, 30, 126, 127, 128, 129, 255, 256, 257, 1000, 2047, 2048, 2100};
    for (size_t a = 0; a < sizeof fcs / sizeof fcs[0]; a++)
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
            size_t n = ns[k], fc = fcs[a];
            dg_tick_hash p = dg_hash_tick_x(n * 31u, e, x, fc, n, k_events, 2, ha);
            dg_tick_hash q = dg_hash__tick_x_reference(n * 31u, e, x, fc, n, k_events, 2, hb);
            if (p.state != q.state || p.events != q.events || p.combined != q.combined ||
                p.entity_count != q.entity_count)
                fail_msg("%zu entities x %zu fields: one-shot state %016llx, reference %016llx", n, fc,
                         (unsigned long long)p.state, (unsigned long long)q.state);
            for (size_t i = 0; i < n; i++)
                if (ha[i] != hb[i])
                    fail_msg("%zu entities x %zu fields: entity %zu hash differs from the reference", n, fc, i);
        }
    /* NULL entity_hashes_out: the same state */
    assert_true(dg_hash_tick_x(3, e, x, 4, 777, NULL, 0, NULL).state ==
                dg_hash__tick_x_reference(3, e, x, 4, 777, NULL, 0, NULL).state);
}

static void test_events_fast_path_equals_reference(void **state)
{
    (void)state;
    /* Event lists growing past the one-shot buffer, text lengths 0..40 */
    static char text[4096];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = (char)(' ' + i % 90);
    enum { MAXEV = 40 };
    dg_event ev[MAXEV];
    uint64_t seed = 7;
    for (size_t i = 0; i < MAXEV; i++) {
        uint64_t r = splitmix64(&seed);
        ev[i] = (dg_event){.kind = (uint8_t)(1 + r % 4), .tick = 99, .a = (uint32_t)(r >> 8), .b = (uint32_t)(r >> 24),
                           .c = (uint16_t)(r >> 40), .d = (uint16_t)(r >> 48), .text = text + (r >> 56),
                           .text_len = (uint16_t)(i % 41)};
    }
    for (size_t n = 0; n <= MAXEV; n++) {
        if (dg_hash_events(ev, n) != dg_hash__events_reference(ev, n))
            fail_msg("%zu events: one-shot and reference hashes differ", n);
        assert_true(dg_hash_events(ev, n) == doc_events_hash(ev, n));
    }
    ev[0].text_len = 2000; /* one event larger than the buffer */
    assert_true(dg_hash_events(ev, 3) == dg_hash__events_reference(ev, 3));
    assert_true(dg_hash_events(NULL, 0) == dg_hash__events_reference(NULL, 0));
}

/* ---- sensitivity ---------------------------------------------------------------------------------- */
static void expect_changes(const dg_qentity *base, const dg_qentity *mod, const char *what)
{
    dg_qentity pair[2] = {k_ents[0], *base};
    dg_qentity pair2[2] = {k_ents[0], *mod};
    uint64_t h0 = dg_hash_entity(base), h1 = dg_hash_entity(mod);
    if (h0 == h1)
        fail_msg("entity hash unchanged by %s", what);
    dg_tick_hash t0 = dg_hash_tick(1, pair, 2, NULL, 0, NULL);
    dg_tick_hash t1 = dg_hash_tick(1, pair2, 2, NULL, 0, NULL);
    if (t0.state == t1.state || t0.combined == t1.combined)
        fail_msg("tick hash unchanged by %s", what);
    assert_true(t0.events == t1.events);
}

static void test_every_field_and_position_bit_matters(void **state)
{
    (void)state;
    const dg_qentity base = k_ents[1];
    char what[64];
    for (int axis = 0; axis < 3; axis++) {
        for (int bit = 0; bit < 32; bit++) {
            dg_qentity m = base;
            m.pos[axis] = (int32_t)((uint32_t)m.pos[axis] ^ (1u << bit));
            snprintf(what, sizeof what, "pos[%d] bit %d", axis, bit);
            expect_changes(&base, &m, what);
            m = base;
            m.vel[axis] = (int32_t)((uint32_t)m.vel[axis] ^ (1u << bit));
            snprintf(what, sizeof what, "vel[%d] bit %d", axis, bit);
            expect_changes(&base, &m, what);
        }
        for (int bit = 0; bit < 16; bit++) {
            dg_qentity m = base;
            m.rot[axis] = (int16_t)((uint16_t)m.rot[axis] ^ (1u << bit));
            snprintf(what, sizeof what, "rot[%d] bit %d", axis, bit);
            expect_changes(&base, &m, what);
        }
    }
    dg_qentity m;
    m = base; m.id = 20; expect_changes(&base, &m, "id");
    m = base; m.type_index ^= 1; expect_changes(&base, &m, "type_index");
    m = base; m.faction_index ^= 0x100; expect_changes(&base, &m, "faction_index");
    m = base; m.rot_largest = 2; expect_changes(&base, &m, "rot_largest");
    m = base; m.health = 1; expect_changes(&base, &m, "health");
    m = base; m.flags = 0x4000; expect_changes(&base, &m, "flags");
    /* pad_ is not part of the record: it must NOT change the hash. */
    m = base; m.pad_ = 0x5a;
    assert_true(dg_hash_entity(&m) == dg_hash_entity(&base));
}

static void test_tick_number_and_membership_matter(void **state)
{
    (void)state;
    dg_tick_hash a = dg_hash_tick(10, k_ents, 3, NULL, 0, NULL);
    dg_tick_hash b = dg_hash_tick(11, k_ents, 3, NULL, 0, NULL);
    dg_tick_hash c = dg_hash_tick(10, k_ents, 2, NULL, 0, NULL);
    dg_tick_hash d = dg_hash_tick(10, k_ents + 1, 2, NULL, 0, NULL);
    assert_true(a.state != b.state && a.combined != b.combined);
    assert_true(a.state != c.state && c.state != d.state);
    assert_int_equal(c.entity_count, 2);
}

static void test_events_change_events_hash_only(void **state)
{
    (void)state;
    dg_tick_hash base = dg_hash_tick(4312, k_ents, 3, k_events, 2, NULL);
    dg_event ev[2];
    memcpy(ev, k_events, sizeof ev);
    ev[1].text = "gg \xc3\xa9t\xc3\xa8"; /* last character differs */
    dg_tick_hash m = dg_hash_tick(4312, k_ents, 3, ev, 2, NULL);
    assert_true(m.state == base.state);
    assert_true(m.events != base.events);
    assert_true(m.combined != base.combined);
    /* Order of events matters; so does dropping one. */
    dg_event sw[2] = {k_events[1], k_events[0]};
    assert_true(dg_hash_events(sw, 2) != base.events);
    assert_true(dg_hash_events(k_events, 1) != base.events);
    /* Each fixed field matters. */
    uint64_t h0 = dg_hash_events(k_events, 1);
    dg_event e;
    e = k_events[0]; e.kind = DG_EV_SPAWN; assert_true(dg_hash_events(&e, 1) != h0);
    e = k_events[0]; e.a = 8; assert_true(dg_hash_events(&e, 1) != h0);
    e = k_events[0]; e.b = 20; assert_true(dg_hash_events(&e, 1) != h0);
    e = k_events[0]; e.c = 4; assert_true(dg_hash_events(&e, 1) != h0);
    e = k_events[0]; e.d = 1; assert_true(dg_hash_events(&e, 1) != h0);
    e = k_events[0]; e.tick = 4313; assert_true(dg_hash_events(&e, 1) != h0);
}

static void test_checked_rejects_unsorted_and_zero_ids(void **state)
{
    (void)state;
    dg_qentity e[3] = {k_ents[0], k_ents[1], k_ents[2]};
    dg_tick_hash out = {.tick = 77};
    uint64_t hs[3] = {1, 2, 3};
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_hash_tick_checked(4312, e, 3, k_events, 2, hs, &out, &err), DG_OK);
    assert_true(out.combined == dg_hash_tick(4312, e, 3, k_events, 2, NULL).combined);

    e[2].id = 19; /* duplicate */
    out.tick = 77;
    hs[0] = 1;
    dg_error_clear(&err);
    assert_int_equal(dg_hash_tick_checked(4312, e, 3, NULL, 0, hs, &out, &err), DG_E_USAGE);
    assert_non_null(strstr(err.msg, "entity 2"));
    assert_non_null(strstr(err.msg, "found id 19"));
    assert_true(out.tick == 77 && hs[0] == 1); /* untouched */

    e[2] = k_ents[2];
    e[0].id = 0;
    dg_error_clear(&err);
    assert_int_equal(dg_hash_tick_checked(4312, e, 3, NULL, 0, NULL, &out, &err), DG_E_USAGE);
    assert_non_null(strstr(err.msg, "id 0"));

    /* The stream counts the same mistakes instead of failing. */
    dg_hash_stream s;
    dg_hash_tick_begin(&s, 1);
    dg_hash_tick_add(&s, &k_ents[1]);
    dg_hash_tick_add(&s, &k_ents[0]);
    dg_hash_tick_add(&s, &k_ents[0]);
    dg_hash_tick_add(&s, &k_ents[2]);
    assert_int_equal(dg_hash_stream_order_errors(&s), 2);
    (void)dg_hash_tick_end(&s, 0);
}

static void test_checked_rejects_bad_events(void **state)
{
    (void)state;
    dg_error err;
    uint64_t h = 5;
    dg_event ev[2] = {k_events[0], k_events[1]};
    ev[1].text = NULL;
    dg_error_clear(&err);
    assert_int_equal(dg_hash_events_checked(4312, ev, 2, &h, &err), DG_E_USAGE);
    assert_non_null(strstr(err.msg, "event 1"));
    assert_true(h == 5);
    ev[1] = k_events[1];
    ev[0].tick = 4311;
    dg_error_clear(&err);
    assert_int_equal(dg_hash_events_checked(4312, ev, 2, &h, &err), DG_E_RANGE);
    assert_non_null(strstr(err.msg, "expected tick 4312, found tick 4311"));
    dg_error_clear(&err);
    assert_int_equal(dg_hash_events_checked(4312, k_events, 2, &h, &err), DG_OK);
    assert_true(h == doc_events_hash(k_events, 2));
}

/* ---- raw floats ------------------------------------------------------------------------------------ */
static uint64_t raw_one(uint32_t id, const double *f, size_t n)
{
    dg_hash_stream s;
    dg_hash_raw_begin(&s, 5);
    dg_hash_raw_entity(&s, id, f, n);
    return dg_hash_raw_end(&s);
}

static void test_raw_hash_matches_independent_route(void **state)
{
    (void)state;
    const double f7[4] = {1.5, -0.0, 1e300, -3.25};
    const double f9[2] = {0.1, 2.0};
    dg_hash_stream s;
    dg_hash_raw_begin(&s, 4312);
    dg_hash_raw_entity(&s, 7, f7, 4);
    dg_hash_raw_entity(&s, 9, f9, 2);
    dg_hash_raw_entity(&s, 11, NULL, 0);
    uint64_t got = dg_hash_raw_end(&s);

    tbuf t = {.n = 0};
    tb_le(&t, 4312, 8);
    tb_le(&t, 7, 4);
    tb_le(&t, 4, 4);
    for (int i = 0; i < 4; i++) {
        uint64_t u;
        memcpy(&u, &f7[i], 8);
        tb_le(&t, u, 8);
    }
    tb_le(&t, 9, 4);
    tb_le(&t, 2, 4);
    for (int i = 0; i < 2; i++) {
        uint64_t u;
        memcpy(&u, &f9[i], 8);
        tb_le(&t, u, 8);
    }
    tb_le(&t, 11, 4);
    tb_le(&t, 0, 4);
    assert_true(got == XXH3_64bits_withSeed(t.b, t.n, seed_of("dgH1raw.")));
    /* Literal bits of -0.0 reach the hash: 0x8000000000000000 little-endian. */
    assert_int_equal(t.b[8 + 8 + 8 + 7], 0x80);
}

static void test_raw_hash_sees_sub_quantum_differences(void **state)
{
    (void)state;
    /* Two positions 1e-9 m apart quantize to the same 1/64 m step: the quantized state hash is equal,
     * the raw hash is not. */
    dg_entity_in in = {.id = 3, .pos = {10.0, 20.0, 30.0}, .vel = {1, 0, 0}, .rot = {1, 0, 0, 0}, .health = 1.0};
    dg_entity_in in2 = in;
    in2.pos[0] = 10.0 + 1e-9;
    dg_qentity q1, q2;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_quant_entity(&in, &q1, &err), DG_OK);
    assert_int_equal(dg_quant_entity(&in2, &q2, &err), DG_OK);
    assert_true(dg_hash_entity(&q1) == dg_hash_entity(&q2));
    assert_true(raw_one(3, in.pos, 3) != raw_one(3, in2.pos, 3));

    /* Exact bits: -0.0 vs +0.0, and two NaN payloads, are different values. */
    const double pz = 0.0, nz = -0.0;
    assert_true(raw_one(1, &pz, 1) != raw_one(1, &nz, 1));
    uint64_t b1 = UINT64_C(0x7ff8000000000001), b2 = UINT64_C(0x7ff8000000000002);
    double n1, n2;
    memcpy(&n1, &b1, 8);
    memcpy(&n2, &b2, 8);
    assert_true(raw_one(1, &n1, 1) != raw_one(1, &n2, 1));
    assert_true(raw_one(1, &n1, 1) == raw_one(1, &n1, 1));
    /* Id and tick are part of it. */
    assert_true(raw_one(1, &pz, 1) != raw_one(2, &pz, 1));
}

/* ---- localization -------------------------------------------------------------------------------- */
typedef struct rec {
    dg_hash_diff_kind kind[600];
    uint32_t id[600];
    size_t n;
} rec;

static int record_diff(void *user, dg_hash_diff_kind k, uint32_t id, uint64_t ha, uint64_t hb)
{
    rec *r = user;
    (void)ha;
    (void)hb;
    r->kind[r->n] = k;
    r->id[r->n] = id;
    r->n++;
    return 0;
}

static void test_diff_entities_names_7_and_19(void **state)
{
    (void)state;
    dg_qentity b[3] = {k_ents[0], k_ents[1], k_ents[2]};
    b[0].pos[0]++;
    b[1].health = 2;
    uint64_t ha[3], hb[3];
    uint32_t ids[3] = {k_ents[0].id, k_ents[1].id, k_ents[2].id};
    dg_tick_hash ta = dg_hash_tick(4312, k_ents, 3, NULL, 0, ha);
    dg_tick_hash tb = dg_hash_tick(4312, b, 3, NULL, 0, hb);
    assert_true(ta.state != tb.state);
    rec r = {.n = 0};
    dg_hash_diff_counts c;
    assert_int_equal(dg_hash_diff_entities(ids, ha, 3, ids, hb, 3, record_diff, &r, &c, NULL), DG_OK);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.id[0], 7);
    assert_int_equal(r.id[1], 19);
    assert_int_equal(r.kind[0], DG_HASH_DIFF_CHANGED);
    assert_int_equal(c.changed, 2);
    assert_int_equal(c.same, 1);
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_diff_entities_random_sets(void **state)
{
    (void)state;
    uint64_t seed = 0x9e3779b97f4a7c15u;
    for (int round = 0; round < 200; round++) {
        /* ids 1..300; each present on a, b, both (hash equal or not), or neither. */
        uint32_t ia[300], ib[300];
        uint64_t ha[300], hb[300];
        size_t na = 0, nb = 0;
        int expect_kind[301] = {0};
        size_t want_changed = 0, want_added = 0, want_lost = 0, want_same = 0;
        for (uint32_t id = 1; id <= 300; id++) {
            unsigned r = (unsigned)(rng_next(&seed) % 5);
            uint64_t h = rng_next(&seed);
            if (r == 1 || r == 3 || r == 4) { ia[na] = id; ha[na++] = h; }
            if (r == 2 || r == 3 || r == 4) { ib[nb] = id; hb[nb++] = r == 4 ? h ^ 1 : h; }
            expect_kind[id] = r == 1 ? DG_HASH_DIFF_LOST : r == 2 ? DG_HASH_DIFF_ADDED
                            : r == 4 ? DG_HASH_DIFF_CHANGED : 0;
            want_lost += r == 1; want_added += r == 2; want_same += r == 3; want_changed += r == 4;
        }
        rec r = {.n = 0};
        dg_hash_diff_counts c;
        assert_int_equal(dg_hash_diff_entities(ia, ha, na, ib, hb, nb, record_diff, &r, &c, NULL), DG_OK);
        assert_int_equal(c.changed, want_changed);
        assert_int_equal(c.added, want_added);
        assert_int_equal(c.lost, want_lost);
        assert_int_equal(c.same, want_same);
        size_t k = 0;
        for (uint32_t id = 1; id <= 300; id++) {
            if (!expect_kind[id])
                continue;
            assert_true(k < r.n);
            assert_int_equal(r.id[k], id);
            assert_int_equal(r.kind[k], expect_kind[id]);
            k++;
        }
        assert_int_equal(k, r.n);
    }
}

static void test_diff_entities_rejects_unsorted(void **state)
{
    (void)state;
    uint32_t ia[3] = {1, 5, 4}, ib[2] = {1, 2};
    uint64_t h[3] = {0, 0, 0};
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_hash_diff_entities(ia, h, 3, ib, h, 2, NULL, NULL, NULL, &err), DG_E_USAGE);
    assert_non_null(strstr(err.msg, "side a index 2"));
}

static void test_hex(void **state)
{
    (void)state;
    char s[17];
    dg_hash_hex(UINT64_C(0x0123456789abcdef), s);
    assert_string_equal(s, "0123456789abcdef");
    dg_hash_hex(0, s);
    assert_string_equal(s, "0000000000000000");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seeds_are_the_documented_ascii),
        cmocka_unit_test(test_stream_state_size_is_abi),
        cmocka_unit_test(test_entity_bytes_match_documented_layout),
        cmocka_unit_test(test_tick_hash_matches_independent_route),
        cmocka_unit_test(test_many_entities_match_independent_route),
        cmocka_unit_test(test_stream_equals_one_shot),
        cmocka_unit_test(test_tick_fast_path_equals_reference),
        cmocka_unit_test(test_tick_x_fast_path_equals_reference),
        cmocka_unit_test(test_events_fast_path_equals_reference),
        cmocka_unit_test(test_every_field_and_position_bit_matters),
        cmocka_unit_test(test_tick_number_and_membership_matter),
        cmocka_unit_test(test_events_change_events_hash_only),
        cmocka_unit_test(test_checked_rejects_unsorted_and_zero_ids),
        cmocka_unit_test(test_checked_rejects_bad_events),
        cmocka_unit_test(test_raw_hash_matches_independent_route),
        cmocka_unit_test(test_raw_hash_sees_sub_quantum_differences),
        cmocka_unit_test(test_diff_entities_names_7_and_19),
        cmocka_unit_test(test_diff_entities_random_sets),
        cmocka_unit_test(test_diff_entities_rejects_unsorted),
        cmocka_unit_test(test_hex),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
