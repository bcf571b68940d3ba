/* tests/harness/test_formats.c — the formats table (harness/format.h): every row complete and distinct
 * (so a third format's row cannot leave an operation or a name out), the look-ups by name and by
 * magic, the names listed in usage errors, and each row's own recording read back through its row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/format.h"

static size_t row_count(void)
{
    size_t n = 0;
    while (dg_harness__formats[n])
        n++;
    return n;
}

static void every_row_is_complete(void **state)
{
    (void)state;
    assert_true(row_count() >= 2);
    for (size_t i = 0; dg_harness__formats[i]; i++) {
        const harness__format *f = dg_harness__formats[i];
        assert_non_null(f->name);
        assert_true(f->name[0] != 0);
        assert_non_null(f->ext);
        assert_true(f->ext[0] == '.');
        assert_non_null(f->log_suffix);
        assert_non_null(strstr(f->log_suffix, ".hashlog"));
        assert_non_null(f->label);
        assert_non_null(f->record);
        assert_non_null(f->replay_hash);
        assert_non_null(f->verify);
        assert_non_null(f->compare_files);
        assert_non_null(f->compare_headers);
        assert_non_null(f->validate);
        assert_non_null(f->span);
    }
}

/* Two rows sharing a name, an extension, a golden log name or a magic would shadow each other. */
static void rows_are_distinct(void **state)
{
    (void)state;
    for (size_t i = 0; dg_harness__formats[i]; i++)
        for (size_t j = i + 1; dg_harness__formats[j]; j++) {
            const harness__format *a = dg_harness__formats[i], *b = dg_harness__formats[j];
            assert_string_not_equal(a->name, b->name);
            assert_string_not_equal(a->ext, b->ext);
            assert_string_not_equal(a->log_suffix, b->log_suffix);
            assert_memory_not_equal(a->magic, b->magic, 4);
        }
}

static void lookups_find_each_row(void **state)
{
    (void)state;
    assert_ptr_equal(dg_harness__format_default(), dg_harness__formats[0]);
    assert_string_equal(dg_harness__format_default()->name, "flrep");
    for (size_t i = 0; dg_harness__formats[i]; i++) {
        const harness__format *f = dg_harness__formats[i];
        assert_ptr_equal(dg_harness__format_find(f->name), f);
        assert_ptr_equal(dg_harness__format_of_magic((const unsigned char *)f->magic, 4), f);
        assert_null(dg_harness__format_of_magic((const unsigned char *)f->magic, 3));
    }
    assert_null(dg_harness__format_find("acmi"));
    assert_null(dg_harness__format_find(""));
    assert_null(dg_harness__format_find(NULL));
    assert_null(dg_harness__format_of_magic((const unsigned char *)"# de", 4));
}

static void names_list_every_row(void **state)
{
    (void)state;
    assert_string_equal(dg_harness__format_names(), "flrep or rply");
    for (size_t i = 0; dg_harness__formats[i]; i++)
        assert_non_null(strstr(dg_harness__format_names(), dg_harness__formats[i]->name));
}

static const char *src_dir(void)
{
    const char *d = getenv("DETGATE_SOURCE_DIR");
    return d ? d : ".";
}

/* Each row records a scenario, and its own replay, validate and span agree with what it recorded. */
static void each_row_reads_back_its_own_recording(void **state)
{
    (void)state;
    char scn[1024];
    snprintf(scn, sizeof scn, "%s/corpus/scenarios/mars.scn", src_dir());
    for (size_t i = 0; dg_harness__formats[i]; i++) {
        const harness__format *f = dg_harness__formats[i];
        char path[512];
        assert_true(dg_harness__temp_path(path, sizeof path, NULL, "formats", f->ext));
        harness__source *src = NULL;
        dg_error err;
        dg_error_clear(&err);
        assert_int_equal(dg_harness__source_scenario(&src, scn, NULL, 0, &err), DG_OK);
        harness__stream rec = {0}, rp = {0};
        harness__record_opts ro = {.format_name = f->name, .fault_self_check_tick = UINT64_MAX, .jobs = 1};
        assert_int_equal(f->record(src, path, &ro, &rec, &err), DG_OK);
        assert_true(rec.n > 0);
        harness__replay_opts po = {.fault_tick = UINT64_MAX, .jobs = 1};
        assert_int_equal(f->replay_hash(path, &po, &rp, &err), DG_OK);
        assert_int_equal(rp.n, rec.n);
        for (size_t k = 0; k < rec.n; k++)
            assert_true(rp.v[k].state == rec.v[k].state);
        assert_int_equal(f->validate(path, &err), DG_OK);
        uint64_t ticks = 0, last = 0;
        assert_true(f->span(path, &ticks, &last));
        assert_int_equal(ticks, rec.n);
        assert_int_equal(last, rec.v[rec.n - 1].tick);
        dg_report *rep = dg_report_new("verify", HARNESS_VERSION_NUMBER, NULL, &err);
        dg_report_scenario *sc = rep ? dg_report_add_scenario(rep, "mars", f->name) : NULL;
        assert_non_null(sc);
        harness__verify_opts vo = {.fault_tick = UINT64_MAX, .seek_fault_tick = UINT64_MAX, .seek_random = 4,
                                   .jobs = 1};
        assert_int_equal(f->verify(sc, src, path, &rec, &vo), 0);
        dg_report_check *c = dg_report_add_check(sc, "diff", DG_REPORT_PASS);
        assert_non_null(c);
        assert_int_equal(f->compare_files(c, NULL, path, path, &err), 0);
        assert_int_equal(f->compare_headers(sc, path, path), 0);
        dg_report_free(rep);
        dg_harness__stream_free(&rec);
        dg_harness__stream_free(&rp);
        dg_harness__source_free(src);
        remove(path);
        assert_false(f->span(path, &ticks, &last)); /* gone: not known */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_row_is_complete),
        cmocka_unit_test(rows_are_distinct),
        cmocka_unit_test(lookups_find_each_row),
        cmocka_unit_test(names_list_every_row),
        cmocka_unit_test(each_row_reads_back_its_own_recording),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
