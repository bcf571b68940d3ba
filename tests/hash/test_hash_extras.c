/* tests/hash/test_hash_extras.c — the entity hash with declared fields (docs/STATE-HASH.md §2.1),
 * rebuilt from the page with this file's own byte writer and libxxhash: record ‖ each slot as LE i64;
 * with no extra field the hash is §2's exactly; every field's change changes the hash at its tick. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>
#include <xxhash.h>

#include "detgate/hash.h"

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* §2's 48-byte record, offset by offset from the table. */
static void page_record(const dg_qentity *e, uint8_t r[48])
{
    memset(r, 0, 48);
    put_le(r + 0, e->id, 4);
    put_le(r + 4, e->type_index, 2);
    put_le(r + 6, e->faction_index, 2);
    for (int i = 0; i < 3; i++) {
        put_le(r + 8 + 4 * i, (uint32_t)e->pos[i], 4);
        put_le(r + 20 + 4 * i, (uint32_t)e->vel[i], 4);
        put_le(r + 32 + 2 * i, (uint16_t)e->rot[i], 2);
    }
    put_le(r + 38, e->health, 2);
    put_le(r + 40, e->flags, 2);
    r[42] = e->rot_largest;
}

static uint64_t page_hash(const dg_qentity *e, const int64_t *x, size_t n)
{
    uint8_t buf[48 + 8 * 40];
    page_record(e, buf);
    for (size_t f = 0; f < n; f++)
        put_le(buf + 48 + 8 * f, (uint64_t)x[f], 8);
    return XXH3_64bits_withSeed(buf, 48 + 8 * n, UINT64_C(0x2e746e6531486764)); /* "dgH1ent." */
}

static dg_qentity sample(void)
{
    dg_qentity e;
    memset(&e, 0, sizeof e);
    e.id = 77;
    e.pos[0] = -5;
    e.pos[1] = 123456;
    e.vel[2] = -1024;
    e.rot[1] = 300;
    e.flags = 1;
    return e;
}

static void test_extras_hash_is_the_page_bytes(void **state)
{
    (void)state;
    dg_qentity e = sample();
    const int64_t x[5] = {512, (int64_t)UINT64_C(0xfedcba9876543210), 1, 2, 0x0b0a};
    for (size_t n = 0; n <= 5; n++)
        assert_true(dg_hash_entity_x(&e, x, n) == page_hash(&e, x, n));
    int64_t many[40];
    for (size_t f = 0; f < 40; f++)
        many[f] = (int64_t)(f * 0x0101010101010101u);
    assert_true(dg_hash_entity_x(&e, many, 40) == page_hash(&e, many, 40)); /* the streamed form */
}

static void test_no_extras_is_todays_hash(void **state)
{
    (void)state;
    dg_qentity e[3] = {sample(), sample(), sample()};
    e[1].id = 78;
    e[2].id = 90;
    assert_true(dg_hash_entity_x(&e[0], NULL, 0) == dg_hash_entity(&e[0]));
    dg_tick_hash a = dg_hash_tick(5, e, 3, NULL, 0, NULL);
    dg_tick_hash b = dg_hash_tick_x(5, e, NULL, 0, 3, NULL, 0, NULL);
    assert_true(a.combined == b.combined && a.state == b.state);
    dg_hash_stream s;
    dg_hash_tick_begin(&s, 5);
    for (int i = 0; i < 3; i++)
        dg_hash_tick_add_x(&s, &e[i], NULL, 0);
    assert_true(dg_hash_tick_end(&s, dg_hash_events(NULL, 0)).combined == a.combined);
}

/* The tick hash with extras: §4's state hash over the §2.1 entity hashes (the streaming form and the
 * one-shot agree), and each field's change at one tick changes that tick's hash. */
static void test_each_field_change_is_caught(void **state)
{
    (void)state;
    dg_qentity e[2] = {sample(), sample()};
    e[1].id = 80;
    int64_t x[2 * 4] = {512, -1, 1, 3, 0, 7, 0, 0};
    uint64_t eh[2];
    dg_tick_hash base = dg_hash_tick_x(9, e, x, 4, 2, NULL, 0, eh);
    assert_true(eh[0] == page_hash(&e[0], x, 4) && eh[1] == page_hash(&e[1], x + 4, 4));
    dg_hash_stream s;
    dg_hash_tick_begin(&s, 9);
    dg_hash_tick_add_x(&s, &e[0], x, 4);
    dg_hash_tick_add_x(&s, &e[1], x + 4, 4);
    assert_true(dg_hash_tick_end(&s, dg_hash_events(NULL, 0)).combined == base.combined);
    for (size_t k = 0; k < 8; k++) {
        int64_t y[8];
        memcpy(y, x, sizeof y);
        y[k] ^= 1;   /* one quantum (or one bit) of one field of one entity */
        dg_tick_hash t = dg_hash_tick_x(9, e, y, 4, 2, NULL, 0, NULL);
        assert_true(t.combined != base.combined);
    }
    dg_tick_hash checked;
    assert_int_equal(dg_hash_tick_checked_x(9, e, x, 4, 2, NULL, 0, NULL, &checked, NULL), DG_OK);
    assert_true(checked.combined == base.combined);
    assert_int_equal(dg_hash_tick_checked_x(9, e, NULL, 4, 2, NULL, 0, NULL, &checked, NULL), DG_E_USAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extras_hash_is_the_page_bytes),
        cmocka_unit_test(test_no_extras_is_todays_hash),
        cmocka_unit_test(test_each_field_change_is_caught),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
