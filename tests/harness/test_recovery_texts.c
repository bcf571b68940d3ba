/* tests/harness/test_recovery_texts.c — the recovery check's words: one detail line per case (trailer
 * cut off, last chunk cut short), each starting with its label and holding nothing of the other; the
 * first thing that went wrong named (a rebuilt index that does not cover the complete chunks, a
 * playback that differs), a case that was not run saying why, and a passing run saying plainly that
 * every complete chunk came back. The record side is faked by editing the recorded hash stream. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness_internal.h"

#define LABEL1 "trailer cut off"
#define LABEL2 "last chunk cut short"

/* A state stream of `ticks` ticks, one moving entity (chunks of 120 ticks at the default interval). */
static void write_states(const char *path, unsigned ticks)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (unsigned t = 0; t < ticks; t++)
        fprintf(f, "{\"tick\":%u,\"entities\":[{\"id\":1,\"pos\":[%u.5,0,0]}]}\n", t, 6371000u + t);
    fclose(f);
}

typedef struct run {
    char states[512], rec[512];
    harness__source *src;
    harness__stream stream;
    dg_report *rep;
} run;

static void run_record(run *r, unsigned ticks)
{
    memset(r, 0, sizeof *r);
    assert_true(dg_harness__temp_path(r->states, sizeof r->states, NULL, "rtexts", ".jsonl"));
    assert_true(dg_harness__temp_path(r->rec, sizeof r->rec, NULL, "rtexts", ".flrep"));
    write_states(r->states, ticks);
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_harness__source_states(&r->src, r->states, 0, &err), DG_OK);
    assert_int_equal(dg_harness__record(r->src, r->rec, NULL, &r->stream, &err), DG_OK);
    r->rep = dg_report_new("verify", "test", NULL, &err);
    assert_non_null(r->rep);
}

/* Verifies the recording against the (possibly edited) record-side stream; the recovery check. */
static const dg_report_check *run_verify(run *r)
{
    dg_report_scenario *sc = dg_report_add_scenario(r->rep, "rtexts", "flrep");
    assert_non_null(sc);
    harness__verify_opts vo = {.fault_tick = UINT64_MAX, .seek_fault_tick = UINT64_MAX, .seek_random = 2};
    dg_harness__verify_file(sc, r->src, r->rec, &r->stream, &vo);
    for (uint32_t i = 0; i < sc->n_checks; i++)
        if (strcmp(sc->checks[i]->name, "recovery") == 0)
            return sc->checks[i];
    fail_msg("no recovery check");
    return NULL;
}

static void run_free(run *r)
{
    dg_harness__stream_free(&r->stream);
    dg_harness__source_free(r->src);
    dg_report_free(r->rep);
    remove(r->states);
    remove(r->rec);
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Two lines, the first case's then the second's, neither running into the other. */
static void assert_two_case_lines(const dg_report_check *c)
{
    assert_int_equal(c->n_details, 2);
    assert_true(starts_with(c->details[0], LABEL1 " "));
    assert_true(starts_with(c->details[1], LABEL2 " ") || starts_with(c->details[1], LABEL2 ":"));
    assert_null(strstr(c->details[0], LABEL2));
    assert_null(strstr(c->details[1], LABEL1));
    for (int i = 0; i < 2; i++)
        assert_null(strchr(c->details[i], '\n'));
}

static void test_a_passing_run_says_each_case_held(void **state)
{
    (void)state;
    run r;
    run_record(&r, 300);
    const dg_report_check *c = run_verify(&r);
    assert_int_equal(c->status, DG_REPORT_PASS);
    assert_two_case_lines(c);
    assert_non_null(strstr(c->details[0], "index rebuilt with ticks 0..299 (300 ticks); playback from tick 0 identical"));
    assert_non_null(strstr(c->details[1], "index rebuilt with ticks 0..239 (240 ticks); playback from tick 120 identical"));
    assert_string_equal(c->message, LABEL1 " and " LABEL2 ": every complete chunk recovered and played back identically");
    run_free(&r);
}

static void test_one_chunk_says_why_the_second_case_did_not_run(void **state)
{
    (void)state;
    run r;
    run_record(&r, 50);
    const dg_report_check *c = run_verify(&r);
    assert_int_equal(c->status, DG_REPORT_PASS);
    assert_two_case_lines(c);
    assert_string_equal(c->details[1], LABEL2 ": not run: the recording has one chunk");
    assert_null(strstr(c->message, LABEL2));
    run_free(&r);
}

/* The record side claims one more tick than the file holds: the rebuilt index is named wrong, with
 * both spans, and nothing about a seek or playback that never made sense. */
static void test_an_index_short_of_the_record_side_names_both_spans(void **state)
{
    (void)state;
    run r;
    run_record(&r, 300);
    harness__tickrec extra = r.stream.v[r.stream.n - 1];
    extra.tick++;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_harness__stream_push(&r.stream, &extra, &err), DG_OK);
    const dg_report_check *c = run_verify(&r);
    assert_int_equal(c->status, DG_REPORT_FAIL);
    assert_two_case_lines(c);
    assert_non_null(strstr(c->details[0], "the rebuilt index holds ticks 0..299 (300 ticks); expected ticks 0..300 "
                                          "(301 ticks), the complete chunks"));
    assert_null(strstr(c->details[0], "not found"));
    assert_string_equal(c->details[1], LABEL2 ": not run: the first case failed");
    assert_string_equal(c->message, LABEL1 " failed (each case on its own line below)");
    run_free(&r);
}

/* A record-side hash edited at tick 50: the trailer case plays back and names the tick it differs at. */
static void test_a_playback_that_differs_names_the_tick(void **state)
{
    (void)state;
    run r;
    run_record(&r, 300);
    r.stream.v[50].state ^= 1;
    const dg_report_check *c = run_verify(&r);
    assert_int_equal(c->status, DG_REPORT_FAIL);
    assert_two_case_lines(c);
    assert_non_null(strstr(c->details[0], "playback from tick 0 differs from the recording at tick 50 (300 ticks "
                                          "played, 300 expected)"));
    assert_int_equal(c->first_tick, 50);
    run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_passing_run_says_each_case_held),
        cmocka_unit_test(test_one_chunk_says_why_the_second_case_did_not_run),
        cmocka_unit_test(test_an_index_short_of_the_record_side_names_both_spans),
        cmocka_unit_test(test_a_playback_that_differs_names_the_tick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
