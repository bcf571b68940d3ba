/* tests/sim/test_sim_determinism.c — two runs of every bundled scenario give bit-identical state
 * at every tick (entities memcmp'd, events compared field by field). long-1h and stress-1000 run a
 * prefix so the whole suite stays well under a minute under ASan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "sim_test_util.h"

#include <string.h>

static void twice_identical(const char *name, uint64_t max_ticks)
{
    dg_sim_scenario *scn = sim_load_bundled(name);
    assert_int_equal(sim_first_diff(scn, NULL, NULL, max_ticks), SIM_NO_DIFF);
    /* and a third run, from a fresh world, reaches the same digest: no state leaks between runs */
    assert_int_equal(sim_run_digest(scn, NULL, max_ticks), sim_run_digest(scn, NULL, max_ticks));
    dg_sim_scenario_free(scn);
}

static void test_dogfight_40(void **st) { (void)st; twice_identical("dogfight-40", UINT64_MAX); }
static void test_walkers_20(void **st) { (void)st; twice_identical("walkers-20", UINT64_MAX); }
static void test_churn(void **st) { (void)st; twice_identical("churn", UINT64_MAX); }
static void test_static_500(void **st) { (void)st; twice_identical("static-500", 900); }
static void test_stress_1000(void **st) { (void)st; twice_identical("stress-1000", 240); }
static void test_long_1h(void **st) { (void)st; twice_identical("long-1h", 2400); }
static void test_events(void **st) { (void)st; twice_identical("events", UINT64_MAX); }
static void test_mars(void **st) { (void)st; twice_identical("mars", UINT64_MAX); }

/* The comparison itself must be able to fail: a one-bit difference is seen. */
static void test_comparison_sees_one_bit(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("dogfight-40");
    dg_sim_inject inj;
    memset(&inj, 0, sizeof inj);
    inj.flags = DG_SIM_INJ_BITFLIP;
    inj.bitflip_tick = 10;
    inj.bitflip_entity = 40;
    inj.bitflip_field = DG_SIM_FIELD_ROT_Z;
    inj.bitflip_bit = 0;
    assert_int_equal(sim_first_diff(scn, NULL, &inj, 20), 10);
    assert_int_not_equal(sim_run_digest(scn, NULL, 20), sim_run_digest(scn, &inj, 20));
    dg_sim_scenario_free(scn);
}

/* Stepping past the last tick is refused, and the world keeps its last state. */
static void test_step_past_end(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("mars");
    dg_sim *sim = sim_make(scn, NULL);
    uint64_t steps = 0;
    while (!dg_sim_done(sim)) {
        assert_int_equal(dg_sim_step(sim, NULL), DG_OK);
        steps++;
    }
    assert_int_equal(steps + 1, dg_sim_scenario_session(scn)->duration_ticks);
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_sim_step(sim, &err), DG_E_STATE);
    assert_int_equal(dg_sim_tick(sim), steps);
    dg_sim_free(sim);
    dg_sim_scenario_free(scn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dogfight_40), cmocka_unit_test(test_walkers_20), cmocka_unit_test(test_churn),
        cmocka_unit_test(test_static_500),  cmocka_unit_test(test_stress_1000), cmocka_unit_test(test_long_1h),
        cmocka_unit_test(test_events),      cmocka_unit_test(test_mars),
        cmocka_unit_test(test_comparison_sees_one_bit), cmocka_unit_test(test_step_past_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
