/* tests/hash/test_hash_raw_records.c — dg_hash_raw_records (a tick's raw records fed at once) against
 * dg_hash_raw_entity one entity at a time: the same digest and the same order-error count for every
 * entity count (across the stream's 1 KiB batch and XXH3's block edges), field count, and order; and
 * dg_hash_raw_records_sorted on records in order: the same digest, and a stream that goes on as if
 * they had been fed one by one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "detgate/hash.h"

static uint64_t g_rng = 0x853c49e6748fea9bu;
static uint64_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

static void compare(size_t n, int order_mode, size_t fixed_fields)
{
    uint32_t *ids = malloc((n + 1) * sizeof *ids);
    size_t *nf = malloc((n + 1) * sizeof *nf);
    double *f = malloc((n + 1) * 16 * sizeof *f);
    uint8_t *rec = malloc((n + 1) * (8 + 16 * 8));
    assert_true(ids && nf && f && rec);
    uint32_t id = 0;
    for (size_t i = 0; i < n; i++) {
        id += 1 + (uint32_t)(rnd() % 3);
        ids[i] = order_mode == 1 && rnd() % 5 == 0 ? (uint32_t)(rnd() % (id + 1)) : id; /* some out of order, some 0 */
        nf[i] = fixed_fields ? fixed_fields : (size_t)(rnd() % 16);
        for (size_t k = 0; k < nf[i]; k++) {
            uint64_t u = rnd();
            memcpy(&f[i * 16 + k], &u, sizeof u); /* any bit pattern: NaNs, -0.0 */
        }
    }
    uint64_t tick = rnd();
    dg_hash_stream a, b;
    dg_hash_raw_begin(&a, tick);
    dg_hash_raw_begin(&b, tick);
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        dg_hash_raw_entity(&a, ids[i], &f[i * 16], nf[i]);
        len += dg_hash_raw_record(rec + len, ids[i], &f[i * 16], nf[i]);
    }
    dg_hash_raw_records(&b, rec, len);
    assert_int_equal(dg_hash_stream_order_errors(&a), dg_hash_stream_order_errors(&b));
    if (order_mode == 1 && n > 20)
        assert_true(dg_hash_stream_order_errors(&b) > 0);
    uint64_t da = dg_hash_raw_end(&a);
    assert_int_equal(da, dg_hash_raw_end(&b));
    if (order_mode == 0) { /* in order: the sorted form gives the same digest */
        dg_hash_stream c;
        dg_hash_raw_begin(&c, tick);
        dg_hash_raw_records_sorted(&c, rec, len, (uint32_t)n, n ? ids[n - 1] : 0);
        assert_int_equal(da, dg_hash_raw_end(&c));
    }
    free(ids);
    free(nf);
    free(f);
    free(rec);
}

static void test_counts(void **state)
{
    (void)state;
    for (size_t n = 0; n <= 400; n++) {
        compare(n, 0, 11);
        compare(n, 0, 0);
        compare(n, 1, 11);
    }
    compare(1000, 0, 11);
    compare(5000, 1, 0);
}

/* Records fed in pieces and mixed with single entities give the one stream too. */
static void test_mixed(void **state)
{
    (void)state;
    double v[11] = {1, -0.0, 2.5, 3, 4, 5, 6, 7, 8, 9, 10};
    uint8_t rec[64 * 96];
    for (int round = 0; round < 200; round++) {
        dg_hash_stream a, b;
        dg_hash_raw_begin(&a, 7);
        dg_hash_raw_begin(&b, 7);
        size_t len = 0;
        uint32_t id = 1;
        for (int k = 0; k < 64; k++, id++) {
            dg_hash_raw_entity(&a, id, v, 11);
            if (rnd() % 3 == 0) {
                dg_hash_raw_records(&b, rec, len);
                len = 0;
                dg_hash_raw_entity(&b, id, v, 11);
            } else {
                len += dg_hash_raw_record(rec + len, id, v, 11);
            }
        }
        dg_hash_raw_records(&b, rec, len);
        assert_int_equal(dg_hash_raw_end(&a), dg_hash_raw_end(&b));
    }
}

/* After the sorted form the stream knows the last id: an entity fed next at or below it is an order
 * error, one above it is not, as after dg_hash_raw_entity on each record. */
static void test_sorted_then_more(void **state)
{
    (void)state;
    double v[11] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    uint8_t rec[3 * 96];
    size_t len = 0;
    uint32_t ids[3] = {4, 9, 30};
    for (int k = 0; k < 3; k++)
        len += dg_hash_raw_record(rec + len, ids[k], v, 11);
    for (uint32_t next = 29; next <= 31; next++) {
        dg_hash_stream a, c;
        dg_hash_raw_begin(&a, 5);
        dg_hash_raw_begin(&c, 5);
        for (int k = 0; k < 3; k++)
            dg_hash_raw_entity(&a, ids[k], v, 11);
        dg_hash_raw_records_sorted(&c, rec, len, 3, 30);
        dg_hash_raw_entity(&a, next, v, 11);
        dg_hash_raw_entity(&c, next, v, 11);
        assert_int_equal(dg_hash_stream_order_errors(&c), next <= 30 ? 1 : 0);
        assert_int_equal(dg_hash_stream_order_errors(&a), dg_hash_stream_order_errors(&c));
        assert_int_equal(dg_hash_raw_end(&a), dg_hash_raw_end(&c));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_counts), cmocka_unit_test(test_mixed),
                                       cmocka_unit_test(test_sorted_then_more)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
