/* tests/codec/test_flrep_fsync.c — what the writer hands the kernel and when (docs/FORMAT-flrep.md
 * §9.1): every complete chunk is flushed out of stdio at once, whatever the policy, and fsync is
 * called per the policy: never, once at close (the default), or after every chunk and at close.
 * fflush and fsync are counted through the linker (--wrap). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flrep_testlib.h"

static int fsyncs, fflushes;

int __real_fsync(int fd);
int __wrap_fsync(int fd);
int __wrap_fsync(int fd)
{
    fsyncs++;
    return __real_fsync(fd);
}

int __real_fflush(FILE *f);
int __wrap_fflush(FILE *f);
int __wrap_fflush(FILE *f)
{
    fflushes++;
    return __real_fflush(f);
}

/* 40 ticks at keyframe interval 15: chunks 0..14, 15..29, 30..39. Returns the fflush count seen
 * right after tick 15 was written (chunk 0 complete). */
static int record(dg_flrep_fsync policy, const char *path)
{
    dg_flrep_header h = tl_header(60, 15);
    dg_flrep_writer_opts o = {.fsync = policy};
    dg_flrep_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    fsyncs = fflushes = 0;
    assert_int_equal(dg_flrep_writer_open(&w, path, &h, &o, &err), DG_OK);
    dg_qentity q;
    memset(&q, 0, sizeof q);
    q.id = 1;
    q.health = 10000;
    int after_first_chunk = -1;
    for (uint64_t t = 0; t < 40; t++) {
        q.pos[0] = (int32_t)t * 10;
        assert_int_equal(dg_flrep_writer_tick_q(w, t, &q, 1, NULL, 0, &err), DG_OK);
        if (t == 15)
            after_first_chunk = fflushes;
    }
    assert_int_equal(dg_flrep_writer_close(w, &err), DG_OK);
    return after_first_chunk;
}

static void test_each_policy_fsyncs_as_documented(void **state)
{
    (void)state;
    char path[256];
    tl_temp_path(path, sizeof path, ".flrep");
    const struct {
        dg_flrep_fsync policy;
        int fsyncs;
    } cases[] = {{DG_FLREP_FSYNC_NONE, 0}, {DG_FLREP_FSYNC_CLOSE, 1}, {DG_FLREP_FSYNC_CHUNK, 3 + 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int flushed = record(cases[i].policy, path);
        /* the complete chunk left stdio before the next tick (a SIGKILL then loses none) */
        assert_int_equal(flushed, 1);
        assert_int_equal(fsyncs, cases[i].fsyncs);
        dg_flrep_reader *r = NULL;
        dg_error err;
        dg_error_clear(&err);
        assert_int_equal(dg_flrep_reader_open_file(&r, path, NULL, &err), DG_OK);
        assert_int_equal(dg_flrep_reader_info(r)->tick_count, 40);
        dg_flrep_reader_close(r);
        remove(path);
    }
}

static void test_policy_names_parse(void **state)
{
    (void)state;
    dg_flrep_fsync p;
    assert_true(dg_flrep_fsync_parse("none", &p) && p == DG_FLREP_FSYNC_NONE);
    assert_true(dg_flrep_fsync_parse("close", &p) && p == DG_FLREP_FSYNC_CLOSE);
    assert_true(dg_flrep_fsync_parse("chunk", &p) && p == DG_FLREP_FSYNC_CHUNK);
    assert_false(dg_flrep_fsync_parse("always", &p));
    dg_flrep_header h = tl_header(60, 15);
    dg_flrep_writer_opts o = {.fsync = (dg_flrep_fsync)7};
    dg_flrep_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    char path[256];
    tl_temp_path(path, sizeof path, ".flrep");
    assert_int_equal(dg_flrep_writer_open(&w, path, &h, &o, &err), DG_E_USAGE);
    assert_null(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_policy_fsyncs_as_documented),
        cmocka_unit_test(test_policy_names_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
