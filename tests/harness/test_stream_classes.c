/* tests/harness/test_stream_classes.c — dg_harness__stream_classes, which `detgate matrix` groups its
 * configurations with: equal quantized hashes at every tick make one class whatever the raw floats
 * do; a different hash, a missing or an extra tick make another; a missing stream has no class. By
 * raw floats, the classes split further where the raw hashes differ. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "harness/harness_internal.h"

/* A stream of `ticks` ticks whose state hash is 100 + tick, except `odd_tick` (hash 1); raw hashes
 * from raw_seed (each tick different per seed). */
static void make_stream(harness__stream *s, uint64_t ticks, uint64_t odd_tick, uint64_t raw_seed)
{
    memset(s, 0, sizeof *s);
    for (uint64_t t = 0; t < ticks; t++) {
        harness__tickrec r = {0};
        r.tick = t;
        r.state = t == odd_tick ? 1 : 100 + t;
        r.events = 7;
        r.combined = r.state ^ r.events;
        r.raw = raw_seed * 1000 + t;
        r.has_raw = true;
        r.count = 3;
        dg_error err;
        dg_error_clear(&err);
        assert_int_equal(dg_harness__stream_push(s, &r, &err), DG_OK);
    }
}

static void test_classes_by_quantized_state(void **state)
{
    (void)state;
    enum { N = 6 };
    harness__stream v[N];
    make_stream(&v[0], 50, UINT64_MAX, 1);   /* class 0 */
    make_stream(&v[1], 50, 20, 1);           /* class 1: tick 20 differs */
    make_stream(&v[2], 50, UINT64_MAX, 2);   /* class 0: only raw floats differ */
    make_stream(&v[3], 49, UINT64_MAX, 1);   /* class 2: one tick short */
    make_stream(&v[5], 50, 20, 3);           /* class 1 (raw floats unlike 1's) */
    const harness__stream *s[N] = {&v[0], &v[1], &v[2], &v[3], NULL, &v[5]};   /* 4: not built */
    size_t cls[N], reps[N];
    assert_int_equal(dg_harness__stream_classes(s, N, false, cls, reps), 3);
    assert_int_equal(cls[0], 0);
    assert_int_equal(cls[1], 1);
    assert_int_equal(cls[2], 0);
    assert_int_equal(cls[3], 2);
    assert_int_equal(cls[4], SIZE_MAX);
    assert_int_equal(cls[5], 1);
    assert_int_equal(reps[0], 0);
    assert_int_equal(reps[1], 1);
    assert_int_equal(reps[2], 3);
    /* by raw floats: 0 | 1 | 2 (raw seed 2) | 3 | 5 (raw seed 3, unlike 1's) */
    assert_int_equal(dg_harness__stream_classes(s, N, true, cls, reps), 5);
    assert_int_equal(cls[0], 0);
    assert_int_equal(cls[1], 1);
    assert_int_equal(cls[2], 2);
    assert_int_equal(cls[3], 3);
    assert_int_equal(cls[4], SIZE_MAX);
    assert_int_equal(cls[5], 4);
    for (int i = 0; i < N; i++)
        if (i != 4)
            dg_harness__stream_free(&v[i]);
}

static void test_no_streams_no_classes(void **state)
{
    (void)state;
    const harness__stream *s[2] = {NULL, NULL};
    size_t cls[2], reps[2];
    assert_int_equal(dg_harness__stream_classes(s, 2, false, cls, reps), 0);
    assert_int_equal(cls[0], SIZE_MAX);
    assert_int_equal(cls[1], SIZE_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes_by_quantized_state),
        cmocka_unit_test(test_no_streams_no_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
