/* tests/harness/test_engines.c — the engines table (harness/engines.h): every row complete and named
 * once, sim_stub first (the default), only a process engine's failures its own; and each row opens a
 * source that yields the first tick of what it was given. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/engines.h"

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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
