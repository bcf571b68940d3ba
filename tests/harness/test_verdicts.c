/* tests/harness/test_verdicts.c — the verify checks' verdict when this build cannot read back its own
 * recording: a failure (FAIL, the build is broken), not a run that could not test (ERROR, 125). The
 * recording is made by the real record side, then its header is damaged before the checks reopen it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/format.h"

static const char *src_dir(void)
{
    const char *d = getenv("DETGATE_SOURCE_DIR");
    return d ? d : ".";
}

static const dg_report_check *find_check(const dg_report_scenario *sc, const char *name)
{
    for (uint32_t i = 0; i < sc->n_checks; i++)
        if (strcmp(sc->checks[i]->name, name) == 0)
            return sc->checks[i];
    return NULL;
}

/* Flips one byte of the file's magic: the reader refuses the file at open, as it would refuse a
 * recording written by a broken writer. */
static void break_magic(const char *path)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    assert_int_equal(fputc('X', f), 'X');
    assert_int_equal(fclose(f), 0);
}

static void unreadable_own_recording_fails_every_check(void **state)
{
    (void)state;
    char scn[1024], rec_path[512];
    snprintf(scn, sizeof scn, "%s/corpus/scenarios/mars.scn", src_dir());
    assert_true(dg_harness__temp_path(rec_path, sizeof rec_path, NULL, "verdicts", ".flrep"));
    harness__source *src = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_harness__source_scenario(&src, scn, NULL, 0, &err), DG_OK);
    harness__stream rec = {0};
    assert_int_equal(dg_harness__record(src, rec_path, NULL, &rec, &err), DG_OK);
    break_magic(rec_path);

    dg_report *rep = dg_report_new("verify", HARNESS_VERSION_NUMBER, NULL, &err);
    assert_non_null(rep);
    dg_report_scenario *sc = dg_report_add_scenario(rep, "mars", "flrep");
    assert_non_null(sc);
    harness__verify_opts vo = {.fault_tick = UINT64_MAX, .seek_fault_tick = UINT64_MAX, .seek_random = 4};
    int failed = dg_harness__verify_file(sc, src, rec_path, &rec, &vo);
    /* three failed checks, not -1 ("could not run") */
    assert_int_equal(failed, 3);
    static const char *const names[] = {"record-vs-replay", "seek", "recovery"};
    for (int i = 0; i < 3; i++) {
        const dg_report_check *c = find_check(sc, names[i]);
        assert_non_null(c);
        assert_int_equal(c->status, DG_REPORT_FAIL);
    }
    const dg_report_check *seek = find_check(sc, "seek");
    assert_non_null(strstr(seek->message, "refused this build's own recording"));
    assert_int_equal(dg_report_scenario_status(sc), DG_REPORT_FAIL);

    dg_report_free(rep);
    dg_harness__stream_free(&rec);
    dg_harness__source_free(src);
    remove(rec_path);
}

/* The same for an RPLY recording: the player refusing it is a failed seek check too. */
static void unreadable_own_rply_recording_fails(void **state)
{
    (void)state;
    char scn[1024], rec_path[512];
    snprintf(scn, sizeof scn, "%s/corpus/scenarios/mars.scn", src_dir());
    assert_true(dg_harness__temp_path(rec_path, sizeof rec_path, NULL, "verdicts", ".rply"));
    harness__source *src = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_harness__source_scenario(&src, scn, NULL, 0, &err), DG_OK);
    harness__stream rec = {0};
    const harness__format *f = dg_harness__format_find("rply");
    assert_non_null(f);
    assert_int_equal(f->record(src, rec_path, &(harness__record_opts){.format_name = "rply"}, &rec, &err), DG_OK);
    break_magic(rec_path);

    dg_report *rep = dg_report_new("verify", HARNESS_VERSION_NUMBER, NULL, &err);
    assert_non_null(rep);
    dg_report_scenario *sc = dg_report_add_scenario(rep, "mars", "rply");
    assert_non_null(sc);
    assert_int_equal(f->verify(sc, src, rec_path, &rec, &(harness__verify_opts){.seek_random = 4}), 2);
    const dg_report_check *seek = find_check(sc, "seek");
    assert_non_null(seek);
    assert_int_equal(seek->status, DG_REPORT_FAIL);
    assert_int_equal(dg_report_scenario_status(sc), DG_REPORT_FAIL);

    dg_report_free(rep);
    dg_harness__stream_free(&rec);
    dg_harness__source_free(src);
    remove(rec_path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unreadable_own_recording_fails_every_check),
        cmocka_unit_test(unreadable_own_rply_recording_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
