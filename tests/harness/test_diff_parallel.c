/* tests/harness/test_diff_parallel.c — two recordings diffed with threads to spare
 * (harness/diff_parallel.c): both replayed at once, the lockstep readers sought to the first tick
 * that differs (or to the end of the side that has none left), B's entity-ticks before it counted;
 * with no spare thread or a damaged file nothing is skipped; and dg_harness__compare_files gives the
 * one-thread result either way. */
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

/* A copy of src's ticks before `stop`, with entity `id`'s x moved by one quantum at tick `at`. */
static void write_variant(const char *src, const char *dst, uint64_t at, uint32_t id, uint64_t stop)
{
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_reader *r = NULL;
    assert_int_equal(dg_flrep_reader_open_file(&r, src, NULL, &err), DG_OK);
    dg_flrep_writer *w = NULL;
    assert_int_equal(dg_flrep_writer_open(&w, dst, dg_flrep_reader_header(r), NULL, &err), DG_OK);
    dg_flrep_tick t;
    dg_qentity q[4096];
    while (dg_flrep_reader_next(r, &t, &err) == 1 && t.tick < stop) {
        assert_true(t.ent_count <= 4096);
        memcpy(q, t.ents, t.ent_count * sizeof *q);
        for (size_t i = 0; t.tick == at && i < t.ent_count; i++)
            if (q[i].id == id)
                q[i].pos[0] += 1;
        assert_int_equal(dg_flrep_writer_tick_q(w, t.tick, q, t.ent_count, t.events, t.event_count, &err), DG_OK);
    }
    assert_int_equal(dg_flrep_writer_close(w, &err), DG_OK);
    dg_flrep_reader_close(r);
}

/* Runs the skip with a budget of `jobs`; returns the tick each reader gives next (UINT64_MAX: at its end). */
static void skip_with(unsigned jobs, const char *pa, const char *pb, harness__diff_skip *sk, uint64_t next[2])
{
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_reader *ra = NULL, *rb = NULL;
    assert_int_equal(dg_flrep_reader_open_file(&ra, pa, NULL, &err), DG_OK);
    assert_int_equal(dg_flrep_reader_open_file(&rb, pb, NULL, &err), DG_OK);
    dg_harness__cpu_init(jobs);
    assert_int_equal(dg_harness__diff_skip_equal(pa, pb, &ra, &rb, sk, &err), DG_OK);
    assert_int_equal(dg_harness__cpu_take(100), jobs - 1); /* every thread taken is back */
    dg_harness__cpu_init(1);
    dg_flrep_reader *rd[2] = {ra, rb};
    bool end[2] = {sk->a_end, sk->b_end};
    for (int s = 0; s < 2; s++) {
        dg_flrep_tick t;
        next[s] = UINT64_MAX;
        if (!end[s] && dg_flrep_reader_next(rd[s], &t, &err) == 1)
            next[s] = t.tick;
    }
    dg_flrep_reader_close(ra);
    dg_flrep_reader_close(rb);
}

static uint64_t entity_ticks_before(const char *path, uint64_t tick)
{
    dg_error err;
    dg_error_clear(&err);
    harness__stream s = {0};
    assert_int_equal(dg_harness__replay_hash(path, UINT64_MAX, NULL, false, &s, &err), DG_OK);
    uint64_t n = 0;
    for (size_t i = 0; i < s.n && s.v[i].tick < tick; i++)
        n += s.v[i].count;
    dg_harness__stream_free(&s);
    return n;
}

static void test_skips_to_first_difference(void **state)
{
    (void)state;
    char g[1024], v[1024], shorter[1024];
    golden(g, sizeof g, "walkers-20");
    assert_true(dg_harness__temp_path(v, sizeof v, NULL, "diffpar", ".flrep"));
    assert_true(dg_harness__temp_path(shorter, sizeof shorter, NULL, "diffpar", ".flrep"));
    write_variant(g, v, 4321, 7, UINT64_MAX);
    write_variant(g, shorter, UINT64_MAX, 0, 5000);
    harness__diff_skip sk;
    uint64_t next[2];
    for (unsigned jobs = 2; jobs <= 7; jobs += 5) {
        skip_with(jobs, g, v, &sk, next); /* a difference mid-chunk: both sides land on it */
        assert_false(sk.a_end);
        assert_false(sk.b_end);
        assert_int_equal(next[0], 4321);
        assert_int_equal(next[1], 4321);
        assert_int_equal(sk.b_entity_ticks, entity_ticks_before(v, 4321));
        skip_with(jobs, g, shorter, &sk, next); /* B ends first: A lands on its first extra tick */
        assert_false(sk.a_end);
        assert_true(sk.b_end);
        assert_int_equal(next[0], 5000);
        assert_int_equal(sk.b_entity_ticks, entity_ticks_before(shorter, 5000));
        skip_with(jobs, shorter, g, &sk, next);
        assert_true(sk.a_end);
        assert_false(sk.b_end);
        assert_int_equal(next[1], 5000);
        skip_with(jobs, g, g, &sk, next); /* equal throughout: both at their ends */
        assert_true(sk.a_end);
        assert_true(sk.b_end);
        assert_int_equal(sk.b_entity_ticks, entity_ticks_before(g, UINT64_MAX));
    }
    skip_with(1, g, v, &sk, next); /* no spare thread: nothing skipped */
    assert_false(sk.a_end || sk.b_end);
    assert_int_equal(sk.b_entity_ticks, 0);
    assert_int_equal(next[0], 0);
    assert_int_equal(next[1], 0);
    remove(v);
    remove(shorter);
}

static void test_damaged_file_skips_nothing(void **state)
{
    (void)state;
    char g[1024], bad[1024];
    golden(g, sizeof g, "walkers-20");
    assert_true(dg_harness__temp_path(bad, sizeof bad, NULL, "diffpar", ".flrep"));
    FILE *in = fopen(g, "rb");
    assert_non_null(in);
    static unsigned char buf[4 << 20];
    size_t n = fread(buf, 1, sizeof buf, in);
    fclose(in);
    assert_true(n > 1000 && n < sizeof buf);
    memset(buf + n / 2, 0x55, 8);
    FILE *o = fopen(bad, "wb");
    assert_non_null(o);
    assert_int_equal(fwrite(buf, 1, n, o), n);
    fclose(o);
    harness__diff_skip sk;
    uint64_t next[2];
    skip_with(2, g, bad, &sk, next);
    assert_false(sk.a_end || sk.b_end);
    assert_int_equal(sk.b_entity_ticks, 0);
    assert_int_equal(next[0], 0);
    assert_int_equal(next[1], 0);
    remove(bad);
}

/* dg_harness__compare_files with a budget of 1 and of `jobs`: the same counts, ranges and spread. */
static void compare_with(unsigned jobs, const char *pa, const char *pb, dg_report **rep, dg_report_check **c,
                         dg_report_scenario **sc, uint64_t *nd)
{
    dg_error err;
    dg_error_clear(&err);
    *rep = dg_report_new("diff", "test", NULL, &err);
    assert_non_null(*rep);
    *sc = dg_report_add_scenario(*rep, "x", "flrep");
    *c = dg_report_add_check(*sc, "diff", DG_REPORT_PASS);
    dg_harness__cpu_init(jobs);
    *nd = dg_harness__compare_files(*c, *sc, pa, pb, &err);
    dg_harness__cpu_init(1);
}

static void test_compare_files_same_on_threads(void **state)
{
    (void)state;
    char g[1024], v[1024];
    golden(g, sizeof g, "walkers-20");
    assert_true(dg_harness__temp_path(v, sizeof v, NULL, "diffpar", ".flrep"));
    write_variant(g, v, 4321, 7, 8000);
    dg_report *r1, *r2;
    dg_report_check *c1, *c2;
    dg_report_scenario *s1, *s2;
    uint64_t n1, n2;
    compare_with(1, g, v, &r1, &c1, &s1, &n1);
    compare_with(2, g, v, &r2, &c2, &s2, &n2);
    assert_true(n1 > 1000); /* every tick from 4321 on (entity 7 stays one quantum off), then A's tail */
    assert_int_equal(n1, n2);
    assert_int_equal(c1->first_tick, 4321);
    assert_int_equal(c1->first_tick, c2->first_tick);
    assert_int_equal(c1->divergent_ticks, c2->divergent_ticks);
    assert_int_equal(c1->n_ranges, c2->n_ranges);
    assert_int_equal(c1->n_spread, c2->n_spread);
    assert_int_equal(s1->ticks, s2->ticks);
    assert_int_equal(s1->entity_ticks, s2->entity_ticks);
    assert_int_equal(s2->entity_ticks, entity_ticks_before(v, UINT64_MAX));
    dg_report_free(r1);
    dg_report_free(r2);
    remove(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skips_to_first_difference),
        cmocka_unit_test(test_damaged_file_skips_nothing),
        cmocka_unit_test(test_compare_files_same_on_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
