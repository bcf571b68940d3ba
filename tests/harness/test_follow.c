/* tests/harness/test_follow.c — which divergent entity a golden/diff comparison follows
 * (dg_harness__compare_files): the earliest, then the largest difference by field kind (a position
 * difference outranks any rotation, whatever the ids), the others kept in the order they diverged,
 * and the spread of distinct entities diverged by tick. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detgate/flrep.h"
#include "harness/harness_internal.h"

#define TICKS 20
#define ROT_TICK 5 /* entity 1: a tiny rotation; entity 2: half a metre of pos.x, same tick */
#define VEL_TICK 8 /* entity 3: 1 m/s more vel.y */
#define HEALTH_TICK 10 /* entity 4, turned off the axes: health only (its rotation is no difference) */

/* Entity id's state at tick t on side B (b) or A: three bodies moving along x. */
static dg_entity_in body(uint32_t id, int t, bool b)
{
    dg_entity_in e = {.id = id, .pos = {t * 2.0 + id * 100.0, id * 10.0, 6.4e6}, .vel = {120, 0, 0},
                      .rot = {1, 0, 0, 0}, .health = 1};
    if (b && id == 1 && t >= ROT_TICK) {
        double n = sqrt(1 + 0.002 * 0.002);
        e.rot[0] = 1 / n, e.rot[1] = 0.002 / n;
    }
    if (b && id == 2 && t >= ROT_TICK)
        e.pos[0] += 0.5;
    if (b && id == 3 && t >= VEL_TICK)
        e.vel[1] = 1;
    if (id == 4) {
        /* an orientation whose quantized self-dot-product rounds below 1: acos gives 2.4e-6 deg */
        e.rot[0] = 0.93232734560603447, e.rot[1] = 0.21696925917897719;
        e.rot[2] = 0.17357540734318175, e.rot[3] = 0.23143387645757568;
        if (b && t >= HEALTH_TICK)
            e.health = 0.5;
    }
    return e;
}

static void write_side(const char *path, bool b)
{
    dg_flrep_type type = {0, dg_flrep_cstr("jet"), dg_flrep_cstr("Jet"), 1, 0};
    dg_flrep_faction fac = {0, dg_flrep_cstr("blue"), dg_flrep_cstr("Blue")};
    dg_flrep_header h = {0};
    h.engine_version = dg_flrep_cstr("test_follow");
    h.tick_rate_hz = 60;
    h.planet_radius_m = 6371000;
    h.types = &type;
    h.type_count = 1;
    h.factions = &fac;
    h.faction_count = 1;
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_writer *w = NULL;
    assert_int_equal(dg_flrep_writer_open(&w, path, &h, NULL, &err), DG_OK);
    for (int t = 0; t < TICKS; t++) {
        dg_entity_in e[4] = {body(1, t, b), body(2, t, b), body(3, t, b), body(4, t, b)};
        assert_int_equal(dg_flrep_writer_tick(w, (uint64_t)t, e, 4, NULL, 0, NULL, &err), DG_OK);
    }
    assert_int_equal(dg_flrep_writer_close(w, &err), DG_OK);
}

static void test_follows_the_largest_difference_not_the_lowest_id(void **state)
{
    (void)state;
    char pa[512], pb[512];
    assert_true(dg_harness__temp_path(pa, sizeof pa, NULL, "follow-a", ".flrep"));
    assert_true(dg_harness__temp_path(pb, sizeof pb, NULL, "follow-b", ".flrep"));
    write_side(pa, false);
    write_side(pb, true);
    dg_error err;
    dg_error_clear(&err);
    dg_report *r = dg_report_new("diff", "test", NULL, &err);
    assert_non_null(r);
    dg_report_scenario *sc = dg_report_add_scenario(r, "follow", "flrep");
    dg_report_check *c = dg_report_add_check(sc, "diff", DG_REPORT_PASS);
    uint64_t nd = dg_harness__compare_files(c, sc, pa, pb, &err);
    assert_int_equal(nd, TICKS - ROT_TICK);
    assert_int_equal(c->first_tick, ROT_TICK);
    /* entity 1 (lowest id) differs first too, by a rotation only: entity 2's position wins */
    const dg_report_trajectory *t = &c->trajectory;
    assert_true(t->present);
    assert_int_equal(t->entity_id, 2);
    assert_int_equal(t->first_tick, ROT_TICK);
    assert_string_equal(t->why_field, "pos");
    assert_string_equal(t->why_unit, "m");
    assert_true(fabs(t->why_delta - 0.5) < 1e-9);
    assert_true(t->n_a > 0 && t->n_b > 0);
    /* the others, in the order they diverged: entity 1 (rot, same tick), entity 3 (vel, later) */
    assert_int_equal(c->n_more_trajectories, 3);
    assert_int_equal(c->more_trajectories[0].entity_id, 1);
    assert_string_equal(c->more_trajectories[0].why_field, "rot");
    assert_string_equal(c->more_trajectories[0].why_unit, "deg");
    assert_true(c->more_trajectories[0].why_delta > 0 && c->more_trajectories[0].why_delta < 1);
    assert_int_equal(c->more_trajectories[1].entity_id, 3);
    assert_int_equal(c->more_trajectories[1].first_tick, VEL_TICK);
    assert_string_equal(c->more_trajectories[1].why_field, "vel");
    assert_true(fabs(c->more_trajectories[1].why_delta - 1.0) < 1e-9);
    assert_true(c->more_trajectories[1].n_a > 0);
    /* equal rotation quanta are no rotation difference (not the acos rounding of a dot product
     * of 0.9999999999999998): entity 4 differs in health */
    assert_int_equal(c->more_trajectories[2].entity_id, 4);
    assert_int_equal(c->more_trajectories[2].first_tick, HEALTH_TICK);
    assert_string_equal(c->more_trajectories[2].why_field, "health");
    assert_true(fabs(c->more_trajectories[2].why_delta - 50.0) < 1e-9);
    assert_int_equal(c->trajectories_cut, 0);
    /* the spread: two entities at the first divergent tick, the third at VEL_TICK, the fourth at HEALTH_TICK */
    assert_int_equal(c->n_spread, 3);
    assert_int_equal(c->spread[2].tick, HEALTH_TICK);
    assert_int_equal(c->spread[2].entities, 4);
    assert_int_equal(c->spread[0].tick, ROT_TICK);
    assert_int_equal(c->spread[0].entities, 2);
    assert_int_equal(c->spread[1].tick, VEL_TICK);
    assert_int_equal(c->spread[1].entities, 3);
    /* the rotation row carries both orientations: A the identity, B turned about x */
    const dg_report_entity *e1 = &c->ticks[0]->entities[0];
    assert_int_equal(e1->id, 1);
    assert_string_equal(e1->fields[0].name, "rot");
    assert_true(e1->fields[0].has_quats);
    assert_true(fabs(e1->fields[0].quat_a[0] - 1) < 1e-4 && fabs(e1->fields[0].quat_a[1]) < 1e-4);
    assert_true(fabs(e1->fields[0].quat_b[1] - 0.002) < 2e-4);
    dg_report_free(r);
    remove(pa);
    remove(pb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_follows_the_largest_difference_not_the_lowest_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
