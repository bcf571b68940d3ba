/* tests/harness/test_engines.c — the engines table (harness/engines.h): every row complete and named
 * once, sim_stub first (the default), only a process or library engine's failures its own; each row
 * opens a source that yields the first tick of what it was given; and a project file's `[engine] kind`
 * resolves through the table: every row a project may name loads as that row, and a bad kind lists
 * the table's names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/engines.h"
#include "harness/project.h"

static void every_row_is_complete_and_named_once(void **state)
{
    (void)state;
    assert_ptr_equal(dg_harness__engines[0], &dg_harness__engine_sim_stub);
    for (size_t i = 0; dg_harness__engines[i]; i++) {
        assert_non_null(dg_harness__engines[i]->name);
        assert_non_null(dg_harness__engines[i]->open);
        for (size_t j = i + 1; dg_harness__engines[j]; j++)
            assert_string_not_equal(dg_harness__engines[i]->name, dg_harness__engines[j]->name);
    }
    assert_false(dg_harness__engine_sim_stub.own_failures);
    assert_false(dg_harness__engine_stream.own_failures);
    assert_true(dg_harness__engine_process.own_failures);
    assert_true(dg_harness__engine_library.own_failures);
    for (size_t i = 0; dg_harness__engines[i]; i++)
        if (dg_harness__engines[i]->project_kind)
            assert_non_null(dg_harness__engines[i]->golden_default);
}

/* Parses text as a project file named dir/detgate.ini; the status, err filled. */
static dg_status parse_project(harness__project *p, const char *text, dg_error *err)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    assert_non_null(f);
    dg_error_clear(err);
    dg_status st = dg_harness__project_parse(p, f, "detgate.ini", err);
    fclose(f);
    if (st == DG_OK)
        dg_harness__decl_free(&p->decl);
    return st;
}

/* Every row a project may name is what `kind = NAME` (with the key it needs) loads; the table's own
 * rows, not a list in project.c: a row added to the table is a kind the project file takes. */
static void a_project_kind_is_a_row_of_the_table(void **state)
{
    (void)state;
    size_t kinds = 0;
    for (size_t i = 0; dg_harness__engines[i]; i++) {
        const harness__engine *e = dg_harness__engines[i];
        assert_ptr_equal(dg_harness__engine_find(e->name), e->project_kind ? e : NULL);
        if (!e->project_kind)
            continue;
        kinds++;
        char text[512];
        snprintf(text, sizeof text, "[project]\nscenarios = s\n[engine]\nkind = %s\n%s%s%s\n", e->name,
                 e->project_key ? e->project_key : "", e->project_key ? " = " : "",
                 !e->project_key ? "" : strcmp(e->project_key, "run") == 0 ? "cat {scenario}" : "x.so");
        harness__project p;
        dg_error err;
        assert_int_equal(parse_project(&p, text, &err), DG_OK);
        assert_ptr_equal(p.engine, e);
        assert_true(p.run[0] != 0 || !e->project_key); /* what its sources run */
        assert_string_equal(p.golden, e->golden_default);
    }
    assert_true(kinds >= 3); /* sim_stub, process, library */
    harness__project p;
    dg_error err;
    assert_int_equal(parse_project(&p, "[project]\nscenarios = s\n", &err), DG_OK);
    assert_ptr_equal(p.engine, dg_harness__engines[0]); /* no kind: the default */
}

/* A bad kind is refused with the table's names, in its order, as a message's list. */
static void a_bad_kind_lists_the_table(void **state)
{
    (void)state;
    char want[512] = "kind: expected ";
    size_t n = 0, total = 0;
    for (size_t i = 0; dg_harness__engines[i]; i++)
        total += dg_harness__engines[i]->project_kind;
    for (size_t i = 0; dg_harness__engines[i]; i++) {
        if (!dg_harness__engines[i]->project_kind)
            continue;
        strcat(want, n == 0 ? "" : n + 1 == total ? " or " : ", ");
        strcat(want, dg_harness__engines[i]->name);
        n++;
    }
    strcat(want, ", found 'plugin'");
    harness__project p;
    dg_error err;
    assert_int_equal(parse_project(&p, "[engine]\nkind = plugin\n", &err), DG_E_SYNTAX);
    assert_string_equal(err.msg, want);
    assert_string_equal(err.where, "detgate.ini:2");
    assert_int_equal(parse_project(&p, "[engine]\nkind = stream\n", &err), DG_E_SYNTAX); /* given, not declared */
}

static const char *src_dir(void)
{
    const char *d = getenv("DETGATE_SOURCE_DIR");
    return d ? d : ".";
}

static void first_tick(const harness__engine *e, const harness__engine_args *a)
{
    harness__source *s = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(e->open(&s, a, &err), DG_OK);
    harness__frame f;
    assert_int_equal(s->next(s, &f, &err), 1);
    assert_true(f.n > 0);
    dg_harness__source_free(s);
}

/* sim_stub runs the scenario; the process row runs a command whose output is a stream; the stream row
 * reads the same stream from a file. */
static void each_row_opens_what_it_is_given(void **state)
{
    (void)state;
    char scn[1024], csv[512], cmd[1400];
    snprintf(scn, sizeof scn, "%s/corpus/scenarios/mars.scn", src_dir());
    first_tick(&dg_harness__engine_sim_stub, &(harness__engine_args){.scenario = scn});
    assert_true(dg_harness__temp_path(csv, sizeof csv, NULL, "engines", ".csv"));
    FILE *f = fopen(csv, "w");
    assert_non_null(f);
    fputs("tick,id,px,py,pz\n0,1,0,0,0\n0,2,1,0,0\n1,1,0,0,1\n1,2,1,0,1\n", f);
    assert_int_equal(fclose(f), 0);
    first_tick(&dg_harness__engine_stream, &(harness__engine_args){.states = csv});
    snprintf(cmd, sizeof cmd, "cat '%s' # {scenario}", csv);
    first_tick(&dg_harness__engine_process, &(harness__engine_args){.run = cmd, .run_dir = ".", .scenario = scn});
    remove(csv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_row_is_complete_and_named_once),
        cmocka_unit_test(each_row_opens_what_it_is_given),
        cmocka_unit_test(a_project_kind_is_a_row_of_the_table),
        cmocka_unit_test(a_bad_kind_lists_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
