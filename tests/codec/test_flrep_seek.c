/* tests/codec/test_flrep_seek.c — seeking to every tick of a small recording yields exactly the state
 * linear playback has at that tick, forwards (ascending targets) and backwards (descending); a seek
 * that goes on from the reader's position (a target ahead of it in its chunk) lands exactly where
 * a fresh reader's seek from the keyframe does, and plays on the same. */
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

/* The reader tick as a tl_tick, to compare two readers' ticks with tl_assert_tick_equal. */
static tl_tick as_tl_tick(const dg_flrep_tick *t)
{
    return (tl_tick){t->tick, (dg_qentity *)t->ents, t->ent_count, (dg_event *)t->events, t->event_count};
}

/* Seeks r to tick, plays up to `play` ticks and checks each against a fresh reader's seek to the same
 * tick (which has no position to go on from) and against the recording. The ticks after the target
 * carry the prediction contexts the seek handed over: a world copied without them plays on wrong. */
static void seek_like_fresh(dg_flrep_reader *r, const char *path, const tl_session *s, size_t i, int play)
{
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_reader *fresh = NULL;
    assert_int_equal(dg_flrep_reader_open_file(&fresh, path, NULL, &err), DG_OK);
    uint64_t tick = s->ticks[i].tick;
    if (dg_flrep_reader_seek(r, tick, &err) != DG_OK || dg_flrep_reader_seek(fresh, tick, &err) != DG_OK)
        fail_msg("seek %llu: %s: %s", (unsigned long long)tick, err.where, err.msg);
    for (int k = 0; k < play && i + (size_t)k < s->count; k++) {
        dg_flrep_tick a, b;
        assert_int_equal(dg_flrep_reader_next(r, &a, &err), 1);
        assert_int_equal(dg_flrep_reader_next(fresh, &b, &err), 1);
        tl_tick want = as_tl_tick(&b);
        tl_assert_tick_equal(&want, &a);
        tl_assert_tick_equal(&s->ticks[i + (size_t)k], &a);
        assert_int_equal(a.keyframe, b.keyframe);
    }
    dg_flrep_reader_close(fresh);
}

/* Records p to a fresh temp file (its name in path) and opens a reader on it. */
static dg_flrep_reader *record_and_open(char *path, size_t cap, const tl_params *p, tl_session *s)
{
    tl_temp_path(path, cap, ".flrep");
    tl_record(path, p, s);
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_reader *r = NULL;
    assert_int_equal(dg_flrep_reader_open_file(&r, path, NULL, &err), DG_OK);
    return r;
}

static void test_seek_going_on_lands_like_fresh_seek(void **state)
{
    (void)state;
    char path[256];
    tl_params p = {.seed = 13, .ticks = 400, .entities = 20, .churn = true, .events = true, .keyframe = 25};
    tl_session s;
    dg_flrep_reader *r = record_and_open(path, sizeof path, &p, &s);
    assert_int_equal(dg_flrep_reader_info(r)->chunk_count, 16);
    /* a walk of 600 seeks: mostly short steps ahead (in the same chunk, or over an edge), now and
     * then a step back, a jump to anywhere, or a seek to where the reader already stands */
    tl_rng rng = {0x5EEC};
    size_t i = 0;
    for (int n = 0; n < 600; n++) {
        uint64_t dice = tl_next(&rng) % 16;
        if (dice < 10)
            i += (size_t)(tl_next(&rng) % 9);
        else if (dice < 13)
            i -= i < 6 ? i : (size_t)(tl_next(&rng) % 6);
        else if (dice < 15)
            i = (size_t)(tl_next(&rng) % s.count);
        if (i >= s.count)
            i = (size_t)(tl_next(&rng) % s.count);
        seek_like_fresh(r, path, &s, i, dice == 15 ? 0 : (int)(tl_next(&rng) % 4));
    }
    /* every tick of one chunk ascending, each seek one tick ahead of where the last one's next left */
    for (i = 100; i < 125; i++)
        seek_like_fresh(r, path, &s, i, 1);
    dg_flrep_reader_close(r);
    tl_session_free(&s);
    remove(path);
}

/* A seek that fails (here: past the end) leaves the position and the world as they were, so a
 * later seek going on from there still lands right. */
static void test_failed_seek_then_going_on(void **state)
{
    (void)state;
    char path[256];
    tl_params p = {.seed = 14, .ticks = 90, .entities = 8, .churn = true, .keyframe = 30};
    tl_session s;
    dg_flrep_reader *r = record_and_open(path, sizeof path, &p, &s);
    dg_error err;
    dg_error_clear(&err);
    seek_like_fresh(r, path, &s, 40, 3);
    assert_int_equal(dg_flrep_reader_seek(r, s.ticks[s.count - 1].tick + 1, &err), DG_E_NOT_FOUND);
    seek_like_fresh(r, path, &s, 50, 2);
    seek_like_fresh(r, path, &s, 59, 1);
    dg_flrep_reader_close(r);
    tl_session_free(&s);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seek_every_tick_both_directions),
        cmocka_unit_test(test_seek_into_tick_gap_lands_on_next_tick),
        cmocka_unit_test(test_seek_going_on_lands_like_fresh_seek),
        cmocka_unit_test(test_failed_seek_then_going_on),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
