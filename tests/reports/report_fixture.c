/* tests/reports/report_fixture.c — the report room's test bench: builds the reports the render
 * and model tests look at, through the public builder API only (as the harness would). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "report_fixture.h"

/* A quantized entity whose position follows a circle; side B drifts by `drift` quanta in x. */
static dg_qentity fx__qentity(uint32_t id, uint64_t tick, int32_t drift)
{
    dg_qentity q;
    memset(&q, 0, sizeof q);
    q.id = id;
    q.type_index = (uint16_t)(id % 5);
    q.faction_index = (uint16_t)(id % 2);
    q.pos[0] = (int32_t)(id * 640 + tick % 97) + drift;
    q.pos[1] = (int32_t)(id * 320) - (int32_t)(tick % 89);
    q.pos[2] = 6400;
    q.vel[0] = 64 + drift;
    q.vel[1] = -32;
    q.vel[2] = 0;
    q.rot_largest = 0; /* w largest, identity-ish */
    q.health = 10000;
    return q;
}

static void fx__detail_tick(dg_report_check *c, uint64_t tick)
{
    dg_report_tick *t = dg_report_add_tick(c, tick);
    if (!t)
        return; /* beyond the cap: counted in ticks_cut */
    t->changed = FX_ENTITIES_PER_TICK - 2;
    t->added = 1;
    t->lost = 1;
    t->events_differ = tick == FX_FIRST_TICK;
    t->events_a = 3;
    t->events_b = t->events_differ ? 4 : 3;
    for (uint32_t i = 0; i < FX_ENTITIES_PER_TICK; i++) {
        uint32_t id = i == 0 ? FX_TRAJ_ENTITY : 100 + i;
        dg_report_entity_kind kind = i == FX_ENTITIES_PER_TICK - 2 ? DG_REPORT_ENTITY_ADDED
                                     : i == 1                       ? DG_REPORT_ENTITY_LOST
                                                                    : DG_REPORT_ENTITY_CHANGED;
        const char *name = i == 0 ? FX_CTRL_NAME : i == 2 ? FX_BAD_UTF8_NAME : i == 3 ? "\xCE\xA9mega & <b>" : NULL;
        dg_report_entity *e = dg_report_tick_add_entity(t, id, name, kind);
        if (!e || kind != DG_REPORT_ENTITY_CHANGED)
            continue;
        dg_qentity a = fx__qentity(id, tick, 0), b = fx__qentity(id, tick, 1 + (int32_t)(i % 3));
        if (i == 0) {
            b.health = 9950;
            b.rot[0] = 120; /* a small turn */
        }
        assert_true(dg_report_entity_diff_qentity(e, &a, &b) >= 2);
    }
}

static void fx__add_divergent(dg_report_check *c, uint64_t tick)
{
    uint32_t n = (uint32_t)(tick % 7) + 1;
    assert_int_equal(dg_report_check_add_divergent(c, tick, n), DG_OK);
    fx__detail_tick(c, tick);
}

/* Entity 7 flies a polygonal loop; side B leaves it at the first divergent tick and drifts. */
static void fx__trajectory(dg_report_check *c)
{
    assert_int_equal(dg_report_check_set_trajectory(c, FX_TRAJ_ENTITY, FX_CTRL_NAME), DG_OK);
    double x = 100, y = 50;
    for (uint64_t tick = FX_FIRST_TICK - 60; tick <= FX_FIRST_TICK + 60; tick++) {
        double k = (double)(tick - (FX_FIRST_TICK - 60));
        /* piecewise-straight legs: no libm needed for a recognisable shape */
        double dx = k < 40 ? 2.0 : k < 80 ? 0.5 : -1.5, dy = k < 40 ? 0.5 : k < 80 ? 2.0 : 1.0;
        x += dx;
        y += dy;
        double drift = tick < FX_FIRST_TICK ? 0 : (double)(tick - FX_FIRST_TICK) * 0.35;
        assert_int_equal(dg_report_check_add_point(c, 'A', tick, x, y, 100.0), DG_OK);
        assert_int_equal(dg_report_check_add_point(c, 'B', tick, x + drift, y - drift * 0.5, 100.0 + drift * 0.1),
                         DG_OK);
    }
}

static void fx__dogfight(dg_report *r)
{
    dg_report_scenario *s = dg_report_add_scenario(r, "dogfight-40", "flrep");
    assert_non_null(s);
    s->ticks = 1500;
    s->entity_ticks = 60000;
    s->file_bytes = 1051500;
    dg_report_check *c = dg_report_add_check(s, "record-vs-replay", DG_REPORT_PASS);
    c->duration_s = 0.25;
    c = dg_report_add_check(s, "seek", DG_REPORT_PASS);
    c->duration_s = 0.125;
    c = dg_report_add_check(s, "golden", DG_REPORT_PASS);
    dg_report_check_set_raw_divergence(c, FX_RAW_TICK);
}

static void fx__convoy(dg_report *r)
{
    dg_report_scenario *s = dg_report_add_scenario(r, FX_EVIL_SCENARIO, "rply");
    assert_non_null(s);
    s->ticks = 9000;
    s->entity_ticks = 9000u * 40u;
    s->file_bytes = 4200000;
    dg_report_add_check(s, "record-vs-replay", DG_REPORT_PASS)->duration_s = 1.5;
    dg_report_check *c = dg_report_add_check(s, "golden", DG_REPORT_FAIL);
    c->duration_s = 2.0;
    assert_int_equal(dg_report_check_set_message(c, "golden \"%s\" blessed by <ci@example.org> & co", "convoy-12"), DG_OK);
    dg_report_check_set_raw_divergence(c, FX_FIRST_TICK - 3);
    for (uint32_t i = 0; i < FX_RUN1_LEN; i++)
        fx__add_divergent(c, FX_FIRST_TICK + i);
    for (uint32_t i = 0; i < FX_RUN2_LEN; i++)
        fx__add_divergent(c, FX_RUN2_FIRST + i);
    for (uint32_t i = 0; i < FX_RUN3_LEN; i++)
        fx__add_divergent(c, FX_RUN3_FIRST + (uint64_t)i * FX_RUN3_STEP);
    fx__trajectory(c);
}

static void fx__broken_and_diff(dg_report *r)
{
    dg_report_scenario *s = dg_report_add_scenario(r, "broken-1", "flrep");
    assert_non_null(s);
    dg_report_check *c = dg_report_add_check(s, "record-vs-replay", DG_REPORT_ERROR);
    dg_report_check_set_message(c, "cannot read broken-1.flrep: chunk 3 at byte 4096: truncated input");

    s = dg_report_add_scenario(r, "a.flrep vs b.flrep", NULL);
    assert_non_null(s);
    s->ticks = 300;
    c = dg_report_add_check(s, "diff", DG_REPORT_FAIL);
    assert_int_equal(dg_report_check_add_divergent(c, 299, 0), DG_OK); /* events only, no detail */
}

static void fx__bisect(dg_report *r)
{
    assert_int_equal(dg_report_set_bisect(r, "convoy-12", "a1b2c3d4e5f6", "physics: fuse mul-add in integrator & <oops>",
                                          "v1.2.0", "HEAD", FX_FIRST_TICK),
                     DG_OK);
    assert_int_equal(dg_report_bisect_add_step(r, "0f0f0f0f", DG_REPORT_GOOD, DG_REPORT_TICK_NONE), DG_OK);
    assert_int_equal(dg_report_bisect_add_step(r, "deadbeef", DG_REPORT_SKIP, DG_REPORT_TICK_NONE), DG_OK);
    assert_int_equal(dg_report_bisect_add_step(r, "a1b2c3d4e5f6", DG_REPORT_BAD, FX_FIRST_TICK), DG_OK);
}

dg_report *fx_rich_report(const dg_report_limits *limits)
{
    dg_error err;
    dg_error_clear(&err);
    dg_report *r = dg_report_new("gate", "0.1.0-test", limits, &err);
    assert_non_null(r);
    r->started_unix = 1796000000; /* 2026-11-30 */
    r->duration_s = 12.5;
    fx__dogfight(r);
    fx__convoy(r);
    fx__broken_and_diff(r);
    fx__bisect(r);
    assert_false(r->nomem);
    return r;
}

dg_report *fx_many_failures(uint32_t n)
{
    dg_report *r = dg_report_new("gate", "0.1.0-test", NULL, NULL);
    assert_non_null(r);
    for (uint32_t i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "scenario-%05u", (unsigned)i);
        dg_report_scenario *s = dg_report_add_scenario(r, name, "flrep");
        assert_non_null(s);
        s->ticks = 1000;
        dg_report_add_check(s, "record-vs-replay", DG_REPORT_PASS);
        dg_report_check *c = dg_report_add_check(s, "golden", DG_REPORT_FAIL);
        assert_int_equal(dg_report_check_add_divergent(c, 100 + i, 3), DG_OK);
        fx__detail_tick(c, 100 + i);
    }
    return r;
}
