/* tests/codec/test_flrep_rotation.c — a recording split by max_file_mb yields files that each play on
 * their own and together hold every tick exactly once; max_files bounds the series. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flrep_testlib.h"

static void series_path(char *out, size_t cap, const char *base, size_t i)
{
    if (i == 0) {
        snprintf(out, cap, "%s", base);
        return;
    }
    size_t stem = strlen(base) - strlen(".flrep");
    snprintf(out, cap, "%.*s.%03zu.flrep", (int)stem, base, i);
}

static void test_rotation_files_play_alone_and_cover_every_tick_once(void **state)
{
    (void)state;
    char base[256];
    tl_temp_path(base, sizeof base, ".flrep");
    /* 1 MiB files: enough entities that a few chunks fill one */
    tl_params p = {.seed = 21, .ticks = 6000, .entities = 400, .churn = true, .events = true, .max_file_mb = 1};
    tl_session s;
    tl_record(base, &p, &s);
    size_t next = 0, files = 0;
    dg_error err;
    dg_error_clear(&err);
    for (size_t i = 0;; i++) {
        char path[300];
        series_path(path, sizeof path, base, i);
        if (access(path, F_OK) != 0)
            break;
        files++;
        dg_flrep_reader *r = NULL;
        if (dg_flrep_reader_open_file(&r, path, NULL, &err) != DG_OK)
            fail_msg("%s: %s: %s", path, err.where, err.msg);
        assert_false(dg_flrep_reader_info(r)->recovered);
        assert_true(dg_flrep_reader_info(r)->file_size <= (1u << 20) + (1u << 20)); /* one chunk past the limit at most */
        dg_flrep_tick t;
        int rc;
        bool first = true;
        while ((rc = dg_flrep_reader_next(r, &t, &err)) == 1) {
            assert_true(next < s.count);
            if (first)
                assert_true(t.keyframe); /* every file starts with a keyframe */
            first = false;
            tl_assert_tick_equal(&s.ticks[next], &t);
            next++;
        }
        assert_int_equal(rc, 0);
        dg_flrep_reader_close(r);
        remove(path);
    }
    assert_true(files >= 3);
    assert_int_equal(next, s.count);
    tl_session_free(&s);
}

static void test_max_files_keeps_the_newest(void **state)
{
    (void)state;
    char base[256];
    tl_temp_path(base, sizeof base, ".flrep");
    dg_flrep_header h = tl_header(60, 15);
    dg_flrep_writer_opts o = {.max_file_mb = 1, .max_files = 2};
    dg_flrep_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_writer_open(&w, base, &h, &o, &err), DG_OK);
    tl_rng rng = {3};
    dg_entity_in in[300];
    for (uint64_t t = 0; t < 3000; t++) {
        for (uint32_t i = 0; i < 300; i++) {
            /* noise defeats compression so files fill quickly */
            in[i] = (dg_entity_in){.id = i + 1, .type_index = 0, .faction_index = 0,
                                   .pos = {tl_unit(&rng) * 1e5, tl_unit(&rng) * 1e5, tl_unit(&rng) * 1e5},
                                   .vel = {tl_unit(&rng) * 300, 0, 0}, .rot = {1, 0, 0, 0}, .health = 1};
        }
        assert_int_equal(dg_flrep_writer_tick(w, t, in, 300, NULL, 0, NULL, &err), DG_OK);
    }
    size_t total = dg_flrep_writer_file_count(w);
    assert_int_equal(dg_flrep_writer_close(w, &err), DG_OK);
    assert_true(total > 2);
    size_t present = 0;
    for (size_t i = 0; i < total + 1; i++) {
        char path[300];
        series_path(path, sizeof path, base, i);
        if (access(path, F_OK) == 0) {
            present++;
            assert_true(i >= total - 2); /* only the newest two remain */
            remove(path);
        }
    }
    assert_int_equal(present, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rotation_files_play_alone_and_cover_every_tick_once),
        cmocka_unit_test(test_max_files_keeps_the_newest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
