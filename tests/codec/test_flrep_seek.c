/* tests/codec/test_flrep_seek.c — seeking to every tick of a small recording yields exactly the state
 * linear playback has at that tick, forwards (ascending targets) and backwards (descending). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "flrep_testlib.h"

static void test_seek_every_tick_both_directions(void **state)
{
    (void)state;
    char path[256];
    tl_temp_path(path, sizeof path, ".flrep");
    tl_params p = {.seed = 11, .ticks = 200, .entities = 12, .churn = true, .events = true, .keyframe = 15};
    tl_session s;
    tl_record(path, &p, &s);
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_reader *r = NULL;
    assert_int_equal(dg_flrep_reader_open_file(&r, path, NULL, &err), DG_OK);
    assert_int_equal(dg_flrep_reader_info(r)->chunk_count, (200 + 14) / 15);
    for (size_t i = 0; i < s.count; i++)
        tl_seek_and_check(r, &s, i);
    for (size_t i = s.count; i-- > 0;)
        tl_seek_and_check(r, &s, i);
    /* jump around: far forward, back into an earlier chunk, into the same chunk */
    size_t order[] = {150, 3, 199, 0, 16, 14, 15, 120, 119};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
        tl_seek_and_check(r, &s, order[k]);
    /* after a seek, linear playback continues from there to the end */
    assert_int_equal(dg_flrep_reader_seek(r, s.ticks[100].tick, &err), DG_OK);
    dg_flrep_tick t;
    for (size_t i = 100; i < s.count; i++) {
        assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
        tl_assert_tick_equal(&s.ticks[i], &t);
    }
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 0);
    /* past the end: not found, and the reader is still usable */
    assert_int_equal(dg_flrep_reader_seek(r, s.ticks[s.count - 1].tick + 1, &err), DG_E_NOT_FOUND);
    tl_seek_and_check(r, &s, 42);
    dg_flrep_reader_close(r);
    tl_session_free(&s);
    remove(path);
}

static void test_seek_into_tick_gap_lands_on_next_tick(void **state)
{
    (void)state;
    char path[256];
    tl_temp_path(path, sizeof path, ".flrep");
    tl_params p = {.seed = 12, .ticks = 60, .entities = 5, .keyframe = 15, .tick_step = 3};
    tl_session s;
    tl_record(path, &p, &s);
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_reader *r = NULL;
    assert_int_equal(dg_flrep_reader_open_file(&r, path, NULL, &err), DG_OK);
    for (size_t i = 1; i < s.count; i++) {
        assert_int_equal(dg_flrep_reader_seek(r, s.ticks[i].tick - 1, &err), DG_OK);
        dg_flrep_tick t;
        assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
        tl_assert_tick_equal(&s.ticks[i], &t);
    }
    dg_flrep_reader_close(r);
    tl_session_free(&s);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seek_every_tick_both_directions),
        cmocka_unit_test(test_seek_into_tick_gap_lands_on_next_tick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
