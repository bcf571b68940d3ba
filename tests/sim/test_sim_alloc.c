/* tests/sim/test_sim_alloc.c — no allocation per tick: once a world has reached its peak entity
 * and event counts, stepping it does not call malloc/calloc/realloc. The library's calls are
 * counted through the linker's --wrap (see CMakeLists.txt). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "sim_test_util.h"

#include <stdlib.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);

static unsigned long allocations;

void *__wrap_malloc(size_t n)
{
    allocations++;
    return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
    allocations++;
    return __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
    allocations++;
    return __real_realloc(p, n);
}

static void steady_state_without_allocation(const char *name, uint64_t warmup, uint64_t ticks)
{
    dg_sim_scenario *scn = sim_load_bundled(name);
    unsigned long before_create = allocations;
    dg_sim *sim = sim_make(scn, NULL);
    assert_true(allocations > before_create); /* the counter does see the library's allocations */
    for (uint64_t t = 0; t < warmup; t++)
        assert_int_equal(dg_sim_step(sim, NULL), DG_OK);
    unsigned long before = allocations;
    for (uint64_t t = 0; t < ticks && !dg_sim_done(sim); t++)
        assert_int_equal(dg_sim_step(sim, NULL), DG_OK);
    assert_int_equal(allocations - before, 0);
    dg_sim_free(sim);
    dg_sim_scenario_free(scn);
}

static void test_dogfight_40(void **st) { (void)st; steady_state_without_allocation("dogfight-40", 1, 1500); }
static void test_stress_1000(void **st) { (void)st; steady_state_without_allocation("stress-1000", 1, 200); }
static void test_walkers_20(void **st) { (void)st; steady_state_without_allocation("walkers-20", 1, 9000); }
static void test_static_500(void **st) { (void)st; steady_state_without_allocation("static-500", 1, 600); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dogfight_40), cmocka_unit_test(test_stress_1000),
        cmocka_unit_test(test_walkers_20),  cmocka_unit_test(test_static_500),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
