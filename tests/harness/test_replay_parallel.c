/* tests/harness/test_replay_parallel.c — the replay side on several threads (harness/replay_parallel.c)
 * gives the one-pass result: the same hash records, entity-tick total, error and message, with a
 * fault hook set and on a damaged file; it really runs on the threads the budget spares, no more,
 * and gives them all back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness_internal.h"

static void golden(char *buf, size_t cap, const char *name)
{
    const char *d = getenv("DETGATE_SOURCE_DIR");
    snprintf(buf, cap, "%s/corpus/golden/%s.flrep", d ? d : ".", name);
}

static void assert_same_stream(const harness__stream *a, const harness__stream *b)
{
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->entity_ticks, b->entity_ticks);
    for (size_t i = 0; i < a->n; i++) {
        assert_int_equal(a->v[i].tick, b->v[i].tick);
        assert_int_equal(a->v[i].state, b->v[i].state);
        assert_int_equal(a->v[i].events, b->v[i].events);
        assert_int_equal(a->v[i].combined, b->v[i].combined);
        assert_int_equal(a->v[i].count, b->v[i].count);
        assert_false(b->v[i].has_raw);
    }
}

/* Replays path on `jobs` threads with a budget of `jobs`; returns the threads used. */
static unsigned replay_jobs(const char *path, uint64_t fault, unsigned jobs, harness__stream *out, dg_status *st,
                            dg_error *err)
{
    unsigned used = 0;
    dg_harness__cpu_init(jobs);
    harness__replay_opts o = {fault, NULL, false, jobs, NULL, &used};
    *st = dg_harness__replay_hash_jobs(path, &o, out, err);
    /* every thread taken is back in the budget */
    unsigned back = dg_harness__cpu_take(100);
    assert_int_equal(back, jobs - 1);
    dg_harness__cpu_init(1);
    return used;
}

static void test_same_stream_on_threads(void **state)
{
    (void)state;
    static const char *const names[] = {"churn", "walkers-20", "events", "static-500"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        char path[1024];
        golden(path, sizeof path, names[k]);
        dg_error err;
        dg_error_clear(&err);
        harness__stream lin = {0};
        assert_int_equal(dg_harness__replay_hash(path, UINT64_MAX, NULL, false, &lin, &err), DG_OK);
        assert_true(lin.n > 0);
        for (unsigned jobs = 2; jobs <= 7; jobs += 5) {
            harness__stream par = {0};
            dg_status st;
            unsigned used = replay_jobs(path, UINT64_MAX, jobs, &par, &st, &err);
            assert_int_equal(st, DG_OK);
            /* one run per chunk at most: as many threads as runs, up to jobs */
            size_t chunks = 0;
            dg_flrep_reader *r = NULL;
            assert_int_equal(dg_flrep_reader_open_file(&r, path, NULL, &err), DG_OK);
            chunks = dg_flrep_reader_info(r)->chunk_count;
            dg_flrep_reader_close(r);
            assert_true(chunks >= 2);
            assert_int_equal(used, chunks < jobs ? chunks : jobs);
            assert_same_stream(&lin, &par);
            dg_harness__stream_free(&par);
        }
        dg_harness__stream_free(&lin);
    }
}

/* A stream that already holds records is appended to, as one pass appends. */
static void test_appends_after_existing_records(void **state)
{
    (void)state;
    char a[1024], b[1024];
    golden(a, sizeof a, "dogfight-40");
    golden(b, sizeof b, "walkers-20");
    dg_error err;
    dg_error_clear(&err);
    harness__stream lin = {0}, par = {0};
    assert_int_equal(dg_harness__replay_hash(a, UINT64_MAX, NULL, false, &lin, &err), DG_OK);
    assert_int_equal(dg_harness__replay_hash(a, UINT64_MAX, NULL, false, &par, &err), DG_OK);
    assert_int_equal(dg_harness__replay_hash(b, UINT64_MAX, NULL, false, &lin, &err), DG_OK);
    dg_status st;
    assert_int_equal(replay_jobs(b, UINT64_MAX, 3, &par, &st, &err), 3);
    assert_int_equal(st, DG_OK);
    assert_same_stream(&lin, &par);
    dg_harness__stream_free(&lin);
    dg_harness__stream_free(&par);
}

/* The double-delta hook: where it only corrupts the world (to the end of its chunk) the records are
 * the one pass's; where the corrupted world fails the reader's range checks, so are the error and
 * the records before it. */
static void test_fault_hook_same_on_threads(void **state)
{
    (void)state;
    char path[1024];
    golden(path, sizeof path, "walkers-20");
    dg_error err;
    dg_error_clear(&err);
    harness__stream clean = {0};
    assert_int_equal(dg_harness__replay_hash(path, UINT64_MAX, NULL, false, &clean, &err), DG_OK);
    int fired = 0, failed = 0;
    for (uint64_t fault = 301; fault < 9000; fault += 577) {
        harness__stream lin = {0}, par = {0};
        dg_error e1, e2;
        dg_error_clear(&e1);
        dg_error_clear(&e2);
        dg_status s1 = dg_harness__replay_hash(path, fault, NULL, false, &lin, &e1), s2;
        assert_int_equal(replay_jobs(path, fault, 7, &par, &s2, &e2), 7);
        assert_int_equal(s1, s2);
        char m1[600] = "", m2[600] = "";
        if (s1 != DG_OK) {
            dg_error_format(&e1, m1, sizeof m1);
            dg_error_format(&e2, m2, sizeof m2);
            failed++;
        }
        assert_string_equal(m1, m2);
        assert_same_stream(&lin, &par);
        size_t k = dg_harness__stream_find(&par, fault);
        fired += k != SIZE_MAX && par.v[k].state != clean.v[dg_harness__stream_find(&clean, fault)].state;
        dg_harness__stream_free(&lin);
        dg_harness__stream_free(&par);
    }
    assert_true(fired > 0);  /* the hook did change states */
    assert_true(failed > 0); /* and some runs ended in the reader's error */
    dg_harness__stream_free(&clean);
}

/* A damaged chunk: the one pass's error, message and records before it. */
static void test_damaged_chunk_same_error(void **state)
{
    (void)state;
    char src[1024], bad[600];
    golden(src, sizeof src, "walkers-20");
    assert_true(dg_harness__temp_path(bad, sizeof bad, NULL, "damaged", ".flrep"));
    FILE *f = fopen(src, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    for (long at = size / 7; at < size * 9 / 10; at += size / 4) {
        dg_error err;
        dg_error_clear(&err);
        assert_int_equal(dg_harness__copy_prefix(src, bad, (uint64_t)size, &err), DG_OK);
        FILE *w = fopen(bad, "r+b");
        assert_non_null(w);
        fseek(w, at, SEEK_SET);
        fputs("\x55\xaa\x55\xaa", w);
        fclose(w);
        harness__stream lin = {0}, par = {0};
        dg_error e1, e2;
        dg_error_clear(&e1);
        dg_error_clear(&e2);
        dg_status s1 = dg_harness__replay_hash(bad, UINT64_MAX, NULL, false, &lin, &e1);
        dg_status s2;
        replay_jobs(bad, UINT64_MAX, 7, &par, &s2, &e2);
        assert_int_not_equal(s1, DG_OK);
        assert_int_equal(s1, s2);
        char m1[600], m2[600];
        dg_error_format(&e1, m1, sizeof m1);
        dg_error_format(&e2, m2, sizeof m2);
        assert_string_equal(m1, m2);
        assert_true(lin.n > 0);
        assert_same_stream(&lin, &par);
        dg_harness__stream_free(&lin);
        dg_harness__stream_free(&par);
    }
    remove(bad);
}

/* No spare thread in the budget: the pass runs on the caller alone, whatever jobs asks for. */
static void test_budget_is_respected(void **state)
{
    (void)state;
    char path[1024];
    golden(path, sizeof path, "walkers-20");
    dg_harness__cpu_init(2);
    assert_int_equal(dg_harness__cpu_take(1), 1); /* another part of the run holds the second thread */
    unsigned used = 0;
    harness__stream s = {0};
    dg_error err;
    dg_error_clear(&err);
    harness__replay_opts o = {UINT64_MAX, NULL, false, 7, NULL, &used};
    assert_int_equal(dg_harness__replay_hash_jobs(path, &o, &s, &err), DG_OK);
    assert_int_equal(used, 1);
    assert_int_equal(dg_harness__cpu_take(100), 0);
    dg_harness__cpu_give(1);
    dg_harness__cpu_init(1);
    dg_harness__stream_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_stream_on_threads),
        cmocka_unit_test(test_appends_after_existing_records),
        cmocka_unit_test(test_fault_hook_same_on_threads),
        cmocka_unit_test(test_damaged_chunk_same_error),
        cmocka_unit_test(test_budget_is_respected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
