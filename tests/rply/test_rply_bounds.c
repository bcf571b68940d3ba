/* tests/rply/test_rply_bounds.c — a replay's work is bounded by what the file holds
 * (docs/FORMAT-rply.md §2.1): tickCount may not exceed 2^20 + 256 per OpStream byte. A 60-byte file
 * declaring tickCount 0xFFFFFFFF once made `detgate hash` play four billion empty ticks (hours,
 * ~11 MB/s of memory); now the reader refuses it at open and the writer never writes one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detgate/rply.h"

/* Spawns entity 1 at tick 0, one transform, nothing after: a few dozen op bytes. */
static uint8_t *small_file(uint32_t tick_count, size_t *len, dg_status *st, dg_error *err)
{
    dg_rply_writer_config cfg;
    dg_rply_writer_config_default(&cfg);
    cfg.keyframe_every = 0;
    dg_rply_writer *w = dg_rply_writer_new(&cfg, err);
    assert_non_null(w);
    double pos[3] = {1, 2, 3}, q[4] = {1, 0, 0, 0};
    assert_int_equal(dg_rply_writer_spawn(w, 1, "char:1", 0, err), DG_OK);
    assert_int_equal(dg_rply_writer_transform(w, 1, pos, q, err), DG_OK);
    uint8_t *buf = NULL;
    *st = dg_rply_writer_finish(w, tick_count, &buf, len, err);
    dg_rply_writer_free(w);
    return buf;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t op_bytes_of(const uint8_t *buf) { return buf[26] | buf[27] << 8 | buf[28] << 16 | (uint32_t)buf[29] << 24; }

static void test_tick_count_beyond_what_the_file_holds_is_refused(void **state)
{
    (void)state;
    dg_error err;
    dg_error_clear(&err);
    size_t len;
    dg_status st;
    uint8_t *buf = small_file(0, &len, &st, &err);
    assert_int_equal(st, DG_OK);
    uint32_t ob = op_bytes_of(buf);
    uint64_t bound = (1u << 20) + 256ull * ob;
    dg_rply_file f;
    /* at the bound: opens */
    put32(buf + 18, (uint32_t)bound);
    memset(&f, 0, sizeof f);
    assert_int_equal(dg_rply_file_open(&f, buf, len, 0, &err), DG_OK);
    dg_rply_file_close(&f);
    /* one past it, and the hostile 0xFFFFFFFF: refused, naming the field, the bound and the value */
    const uint32_t bad[] = {(uint32_t)bound + 1, 0xFFFFFFFFu};
    for (int i = 0; i < 2; i++) {
        put32(buf + 18, bad[i]);
        memset(&f, 0, sizeof f);
        dg_error_clear(&err);
        assert_int_equal(dg_rply_file_open(&f, buf, len, 0, &err), DG_E_LIMIT);
        assert_int_equal(err.offset, 18);
        char want[96];
        snprintf(want, sizeof want, "expected tickCount <= %llu", (unsigned long long)bound);
        assert_non_null(strstr(err.msg, want));
        snprintf(want, sizeof want, "found %u", bad[i]);
        assert_non_null(strstr(err.msg, want));
        dg_rply_file_close(&f);
    }
    free(buf);
}

static void test_writer_does_not_write_a_tick_count_readers_refuse(void **state)
{
    (void)state;
    dg_error err;
    dg_error_clear(&err);
    size_t len;
    dg_status st;
    uint8_t *buf = small_file(0, &len, &st, &err);
    uint32_t ob = op_bytes_of(buf);
    free(buf);
    buf = small_file((1u << 20) + 256u * ob, &len, &st, &err);
    assert_int_equal(st, DG_OK);
    free(buf);
    buf = small_file(0xFFFFFFFFu, &len, &st, &err);
    assert_int_equal(st, DG_E_LIMIT);
    assert_null(buf);
    assert_non_null(strstr(err.msg, "readers refuse more"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tick_count_beyond_what_the_file_holds_is_refused),
        cmocka_unit_test(test_writer_does_not_write_a_tick_count_readers_refuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
