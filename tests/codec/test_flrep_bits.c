/* tests/codec/test_flrep_bits.c — the record block's bit coder on its own (FORMAT-flrep.md §6.2):
 * every Exp-Golomb code length at every bit alignment and every buffer fill, written by the writer
 * and read back by the reader, including through the SEG triple table. Regression for the bug the
 * round-trip fuzzer found (corpus/regressions/flrep_roundtrip/eg-long-zero-run-unbuffered): a code
 * whose run of zeros reached past the buffered bits was refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "flrep_bits.h"
#include "flrep_internal.h"

/* Writes `lead` one-bit codes (EG(0)) to shift the alignment, then EG(v), then a marker, and reads
 * them back; the lead also drains the reader's buffer to every fill level. */
static void roundtrip_one(unsigned lead, uint64_t v)
{
    dg_buf out;
    dg_buf_init(&out);
    dg_bitw w;
    assert_true(dg_bitw_begin(&w, &out, 64 + lead));
    for (unsigned i = 0; i < lead; i++)
        dg_bitw_eg(&w, 0);
    dg_bitw_eg(&w, v);
    dg_bitw_put(&w, 0x5, 3);
    dg_bitw_flush(&w);
    dg_bitr r;
    dg_bitr_init(&r, out.p, out.len);
    for (unsigned i = 0; i < lead; i++)
        assert_int_equal(dg_bitr_eg(&r), 0);
    uint64_t got = dg_bitr_eg(&r);
    if (!r.ok || got != v)
        fail_msg("lead %u, v %llu: read %llu (ok %d)", lead, (unsigned long long)v, (unsigned long long)got, r.ok);
    assert_int_equal(dg_bitr_get(&r, 3), 0x5);
    assert_true(dg_bitr_at_clean_end(&r));
    dg_buf_free(&out);
}

static void test_every_code_length_at_every_alignment(void **state)
{
    (void)state;
    for (unsigned n = 0; n <= 40; n++) {
        uint64_t lo = ((uint64_t)1 << n) - 1;          /* smallest value with n zeros */
        uint64_t hi = ((uint64_t)1 << (n + 1)) - 2;    /* largest */
        for (unsigned lead = 0; lead < 130; lead++) {
            roundtrip_one(lead, lo);
            roundtrip_one(lead, hi);
        }
    }
}

static void test_seg_triples_match_single_decodes(void **state)
{
    (void)state;
    const dg_seg3_entry *t3 = dg_flrep__seg3_table();
    static const int64_t vals[] = {0, 1, -1, 2, -2, 3, -7, 15, -16, 31, -32, 100, -1000, 70000, -(1LL << 33)};
    size_t nv = sizeof vals / sizeof vals[0];
    for (unsigned lead = 0; lead < 70; lead++)
        for (size_t a = 0; a < nv; a++)
            for (size_t b = 0; b < nv; b += 3) {
                int64_t trip[3] = {vals[a], vals[b], vals[(a + b) % nv]};
                dg_buf out;
                dg_buf_init(&out);
                dg_bitw w;
                assert_true(dg_bitw_begin(&w, &out, 128 + lead));
                for (unsigned i = 0; i < lead; i++)
                    dg_bitw_put(&w, 1, 1);
                for (int k = 0; k < 3; k++)
                    dg_bitw_seg(&w, trip[k]);
                dg_bitw_flush(&w);
                dg_bitr r;
                dg_bitr_init(&r, out.p, out.len);
                for (unsigned i = 0; i < lead; i++)
                    assert_int_equal(dg_bitr_get(&r, 1), 1);
                int64_t got[3];
                dg_bitr_seg3(&r, t3, got);
                assert_true(r.ok);
                for (int k = 0; k < 3; k++)
                    assert_int_equal(got[k], trip[k]);
                assert_true(dg_bitr_at_clean_end(&r));
                dg_buf_free(&out);
            }
}

/* The writer's constant table of short codes is the EG of §6.2, bit for bit. */
static void test_small_code_table_matches_the_definition(void **state)
{
    (void)state;
    for (uint32_t v = 0; v < DG_EG_SMALL; v++) {
        uint32_t x = v + 1, n = 0;
        while ((x >> (n + 1)) != 0)
            n++;
        /* n zeros, a one, the low n bits of x: as an LSB-first value */
        uint32_t want = (1u << n) | ((x & ((1u << n) - 1)) << (n + 1));
        uint32_t e = dg_eg_small[v];
        if ((e & 0xFFFFFF) != want || e >> 24 != 2 * n + 1)
            fail_msg("v %u: table has code 0x%X length %u, expected 0x%X length %u", v, e & 0xFFFFFF, e >> 24, want,
                     2 * n + 1);
    }
}

/* The encoder's table of code triples is three codes of dg_eg_small one after another, LSB first. */
static void test_triple_code_table_matches_three_codes(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < 512; i++) {
        uint32_t v[3] = {i & 7, (i >> 3) & 7, i >> 6};
        uint64_t want = 0;
        unsigned len = 0;
        for (int k = 0; k < 3; k++) {
            uint32_t e = dg_eg_small[v[k]];
            want |= (uint64_t)(e & 0xFFFFFF) << len;
            len += e >> 24;
        }
        uint32_t t = dg_eg_trip[i];
        if ((t & 0xFFFFFF) != want || t >> 24 != len)
            fail_msg("%u %u %u: table has code 0x%X length %u, expected 0x%llX length %u", v[0], v[1], v[2],
                     t & 0xFFFFFF, t >> 24, (unsigned long long)want, len);
    }
}

static void test_reader_fails_closed_on_a_run_of_zeros(void **state)
{
    (void)state;
    uint8_t zeros[16] = {0};
    dg_bitr r;
    dg_bitr_init(&r, zeros, sizeof zeros);
    (void)dg_bitr_eg(&r);   /* more than 40 zeros: not a code */
    assert_false(r.ok);
    assert_int_equal(dg_bitr_get(&r, 8), 0);
    uint8_t cut[2] = {0x00, 0x01};  /* 8 zeros, the one, but the 8 low bits are missing */
    dg_bitr_init(&r, cut, sizeof cut);
    (void)dg_bitr_eg(&r);
    assert_false(r.ok);
}

/* The predictor's rounding division (FORMAT-flrep.md §6.4), done by multiply, against the page's
 * definition with C's truncating division, at 1 Hz (no 64-bit magic: passed through), odd and
 * even rates and the largest, for dividends around every multiple and half-multiple, at zero and
 * at the extremes a record can produce. */
static int64_t rdiv_by_the_page(int64_t a, int64_t b)
{
    return a >= 0 ? (a + b / 2) / b : -((-a + b / 2) / b);
}

static void test_rdiv_matches_the_page_at_every_rate(void **state)
{
    (void)state;
    static const uint32_t rates[] = {1, 2, 3, 7, 30, 60, 64, 120, 99991, 100000};
    const int64_t far = (INT64_C(1) << 42) - 1;   /* 2 x (2^31 + 2^32 + 2^40): see flrep_rdiv */
    const int64_t limit = (INT64_C(1) << 45) - 1;  /* the domain flrep_rdiv promises */
    for (size_t k = 0; k < sizeof rates / sizeof rates[0]; k++) {
        flrep_tick_ctx ctx;
        dg_flrep__tick_ctx_init(&ctx, rates[k], NULL, NULL);
        int64_t b = rates[k];
        for (int64_t m = -40; m <= 40; m++)
            for (int64_t d = -2; d <= 2; d++) {
                int64_t a = m * b / 2 + d;
                assert_int_equal(flrep_rdiv(a, &ctx), rdiv_by_the_page(a, b));
            }
        const int64_t edges[] = {0, 1, -1, INT32_MAX, INT32_MIN, 2 * (int64_t)INT32_MAX, far, -far,
                                 far - b / 2, -far + b / 2, limit, -limit, limit - b / 2, -limit + b / 2};
        for (size_t e = 0; e < sizeof edges / sizeof edges[0]; e++)
            assert_int_equal(flrep_rdiv(edges[e], &ctx), rdiv_by_the_page(edges[e], b));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_code_length_at_every_alignment),
        cmocka_unit_test(test_seg_triples_match_single_decodes),
        cmocka_unit_test(test_small_code_table_matches_the_definition),
        cmocka_unit_test(test_triple_code_table_matches_three_codes),
        cmocka_unit_test(test_reader_fails_closed_on_a_run_of_zeros),
        cmocka_unit_test(test_rdiv_matches_the_page_at_every_rate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
