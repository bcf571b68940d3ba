/* tests/hash/test_hash_rply.c — the RPLY state hash (hash/hash_rply.c) against an independent route:
 * the byte layout of docs/STATE-HASH.md §11 built here by hand and hashed by libxxhash directly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <xxhash.h>

#include "detgate/hash.h"

typedef struct tbuf {
    uint8_t b[512];
    size_t n;
} tbuf;

static void tb_le(tbuf *t, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        t->b[t->n++] = (uint8_t)(v >> (8 * i));
}

static uint64_t seed_of(const char text[8])
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | (uint8_t)text[i];
    return v;
}

static uint64_t f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* §11.1, field by field. */
static void doc_record(tbuf *t, const dg_hash_rply_entity *e)
{
    tb_le(t, e->id, 2);
    tb_le(t, e->parent, 2);
    tb_le(t, e->descriptor, 2);
    tb_le(t, e->x.xf, 1);
    tb_le(t, 0, 1);
    for (int i = 0; i < 3; i++)
        tb_le(t, e->x.pos_bits[i], 4);
    for (int i = 0; i < 3; i++)
        tb_le(t, (uint32_t)e->x.dpos[i], 4);
    for (int i = 0; i < 3; i++)
        tb_le(t, (uint32_t)e->x.drot[i], 4);
    for (int i = 0; i < 3; i++)
        tb_le(t, (uint16_t)e->x.rot[i], 2);
    tb_le(t, e->nprops, 2);
}

/* §11.2: u16 name, u8 tag, 12 payload bytes. */
static void doc_prop(tbuf *t, uint16_t name, uint8_t tag, const uint8_t *payload, size_t n)
{
    tb_le(t, name, 2);
    tb_le(t, tag, 1);
    for (size_t i = 0; i < 12; i++)
        tb_le(t, i < n ? payload[i] : 0, 1);
}

static dg_hash_rply_entity sample_entity(void)
{
    dg_hash_rply_entity e;
    memset(&e, 0, sizeof e);
    e.id = 0x1234;
    e.parent = 7;
    e.descriptor = 3;
    e.x.xf = 5;
    e.x.pos_bits[0] = f32_bits(1.5f), e.x.pos_bits[1] = f32_bits(-2.25f), e.x.pos_bits[2] = 0x7fc00001u;
    e.x.dpos[0] = -1, e.x.dpos[1] = 32, e.x.dpos[2] = 1 << 20;
    e.x.drot[0] = -64, e.x.drot[1] = 0, e.x.drot[2] = 128;
    e.x.rot[0] = -3, e.x.rot[1] = 32767, e.x.rot[2] = 0;
    e.nprops = 3;
    return e;
}

static void test_seeds_are_the_documented_ascii(void **state)
{
    (void)state;
    assert_true(DG_HASH_RPLY_SEED_ENTITY == seed_of("dgR1ent."));
    assert_true(DG_HASH_RPLY_SEED_STATE == seed_of("dgR1sta."));
    assert_true(DG_HASH_RPLY_SEED_TICK == seed_of("dgR1tik."));
}

static void test_entity_record_is_the_documented_layout(void **state)
{
    (void)state;
    dg_hash_rply_entity e = sample_entity();
    tbuf t = {.n = 0};
    doc_record(&t, &e);
    assert_int_equal(t.n, DG_HASH_RPLY_ENTITY_BYTES);
    uint8_t got[DG_HASH_RPLY_ENTITY_BYTES];
    dg_hash_rply_entity_bytes(&e, got);
    assert_memory_equal(got, t.b, sizeof got);
}

static void test_entity_hash_matches_independent_route(void **state)
{
    (void)state;
    dg_hash_rply_entity e = sample_entity();
    dg_rply_value num = {.tag = DG_RPLY_PROP_NUMBER, .u.num = -0.0};
    dg_rply_value vec = {.tag = DG_RPLY_PROP_VECTOR3, .u.vec = {1.0f, -1.0f, 0.5f}};
    dg_rply_value str = {.tag = DG_RPLY_PROP_STRING, .u.str = 0xbeef};

    tbuf t = {.n = 0};
    doc_record(&t, &e);
    uint8_t p[12];
    uint64_t nb = f64_bits(-0.0);
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(nb >> (8 * i));
    doc_prop(&t, 2, DG_RPLY_PROP_NUMBER, p, 8);
    for (int k = 0; k < 3; k++) {
        uint32_t fb = f32_bits(vec.u.vec[k]);
        for (int i = 0; i < 4; i++)
            p[4 * k + i] = (uint8_t)(fb >> (8 * i));
    }
    doc_prop(&t, 5, DG_RPLY_PROP_VECTOR3, p, 12);
    p[0] = 0xef, p[1] = 0xbe;
    doc_prop(&t, 9, DG_RPLY_PROP_STRING, p, 2);
    assert_int_equal(t.n, DG_HASH_RPLY_ENTITY_BYTES + 3 * DG_HASH_RPLY_PROP_BYTES);

    dg_hash_stream hs;
    dg_hash_rply_entity_begin(&hs, &e);
    dg_hash_rply_entity_prop(&hs, 2, &num);
    dg_hash_rply_entity_prop(&hs, 5, &vec);
    dg_hash_rply_entity_prop(&hs, 9, &str);
    uint64_t want = XXH3_64bits_withSeed(t.b, t.n, seed_of("dgR1ent."));
    assert_true(dg_hash_rply_entity_end(&hs) == want);
    const uint16_t names[3] = {2, 5, 9};
    const dg_rply_value values[3] = {num, vec, str};
    assert_true(dg_hash_rply_entity_hash(&e, names, values, 3) == want); /* the one-call form */
}

/* The one-call form over more properties than it hashes whole (it streams them): the same value. */
static void test_one_call_equals_streaming_for_many_properties(void **state)
{
    (void)state;
    dg_hash_rply_entity e = sample_entity();
    uint16_t names[12];
    dg_rply_value values[12];
    for (int n = 0; n <= 12; n++) {
        e.nprops = (uint16_t)n;
        dg_hash_stream hs;
        dg_hash_rply_entity_begin(&hs, &e);
        for (int i = 0; i < n; i++) {
            names[i] = (uint16_t)(3 * i + 1);
            values[i] = (dg_rply_value){.tag = DG_RPLY_PROP_NUMBER, .u.num = i * 0.5};
            dg_hash_rply_entity_prop(&hs, names[i], &values[i]);
        }
        assert_true(dg_hash_rply_entity_hash(&e, names, values, (size_t)n) == dg_hash_rply_entity_end(&hs));
    }
}

static void test_a_changed_byte_changes_the_entity_hash(void **state)
{
    (void)state;
    dg_hash_rply_entity e = sample_entity(), f = e;
    f.x.dpos[2] ^= 1;
    dg_hash_stream hs;
    dg_hash_rply_entity_begin(&hs, &e);
    uint64_t a = dg_hash_rply_entity_end(&hs);
    dg_hash_rply_entity_begin(&hs, &f);
    assert_true(dg_hash_rply_entity_end(&hs) != a);
}

static void test_tick_hash_matches_independent_route(void **state)
{
    (void)state;
    const uint64_t eh[3] = {UINT64_C(0x0102030405060708), UINT64_C(0xfffefdfcfbfaf9f8), 42};
    uint64_t tick = UINT64_C(4312);
    dg_tick_hash h = dg_hash_rply_tick(tick, eh, 3);

    tbuf t = {.n = 0};
    tb_le(&t, tick, 8);
    for (int i = 0; i < 3; i++)
        tb_le(&t, eh[i], 8);
    tb_le(&t, 3, 4);
    uint64_t st = XXH3_64bits_withSeed(t.b, t.n, seed_of("dgR1sta."));
    assert_true(h.state == st);
    assert_true(h.events == dg_hash_events(NULL, 0));
    assert_int_equal(h.entity_count, 3);
    assert_true(h.tick == tick);

    tbuf k = {.n = 0};
    tb_le(&k, tick, 8);
    tb_le(&k, 3, 4);
    tb_le(&k, st, 8);
    tb_le(&k, h.events, 8);
    assert_true(h.combined == XXH3_64bits_withSeed(k.b, k.n, seed_of("dgR1tik.")));
}

static void test_empty_world_is_hashed(void **state)
{
    (void)state;
    dg_tick_hash h = dg_hash_rply_tick(0, NULL, 0);
    tbuf t = {.n = 0};
    tb_le(&t, 0, 8);
    tb_le(&t, 0, 4);
    assert_true(h.state == XXH3_64bits_withSeed(t.b, t.n, seed_of("dgR1sta.")));
    assert_int_equal(h.entity_count, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seeds_are_the_documented_ascii),
        cmocka_unit_test(test_entity_record_is_the_documented_layout),
        cmocka_unit_test(test_entity_hash_matches_independent_route),
        cmocka_unit_test(test_a_changed_byte_changes_the_entity_hash),
        cmocka_unit_test(test_one_call_equals_streaming_for_many_properties),
        cmocka_unit_test(test_tick_hash_matches_independent_route),
        cmocka_unit_test(test_empty_world_is_hashed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
