/* tests/sim/test_sim_scenarios.c — each bundled scenario exercises what its name says: counts,
 * rates, motion, events, planet radius, as measured on the sim's own output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "sim_test_util.h"
#include "detgate/quant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double len3(const double v[3]) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

static void body_axis(const double q[4], int axis, double out[3])
{
    /* column `axis` of the rotation matrix of q (w, x, y, z) */
    double w = q[0], x = q[1], y = q[2], z = q[3];
    if (axis == 0) {
        out[0] = 1 - 2 * (y * y + z * z), out[1] = 2 * (x * y + w * z), out[2] = 2 * (x * z - w * y);
    } else {
        out[0] = 2 * (x * z + w * y), out[1] = 2 * (y * z - w * x), out[2] = 1 - 2 * (x * x + y * y);
    }
}

static uint8_t category_of(const dg_sim_scenario *scn, uint16_t type)
{
    size_t n;
    const dg_sim_type *t = dg_sim_scenario_types(scn, &n);
    assert_true(type < n);
    return t[type].category;
}

static void test_dogfight_40(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("dogfight-40");
    const dg_sim_session *ss = dg_sim_scenario_session(scn);
    assert_int_equal(ss->tick_rate_hz, 60);
    assert_int_equal(ss->duration_ticks, 25 * 60);
    dg_sim *sim = sim_make(scn, NULL);
    for (;;) {
        size_t n;
        const dg_sim_entity *e = dg_sim_entities(sim, &n);
        assert_int_equal(n, 40);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(category_of(scn, e[i].type_index), DG_SIM_CAT_AIRCRAFT);
            double v = len3(e[i].vel), alt = len3(e[i].pos) - ss->planet_radius_m;
            assert_true(v > 150.0 && v < 400.0); /* all moving, at fighter speeds */
            assert_true(alt > 500.0 && alt < 15000.0);
        }
        if (dg_sim_done(sim))
            break;
        assert_int_equal(dg_sim_step(sim, NULL), DG_OK);
    }
    dg_sim_free(sim);
    dg_sim_scenario_free(scn);
}

static void test_walkers_20(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("walkers-20");
    const dg_sim_session *ss = dg_sim_scenario_session(scn);
    assert_int_equal(ss->tick_rate_hz, 15);
    assert_int_equal(ss->duration_ticks, 10 * 60 * 15);
    double o[3], east[3], north[3], up[3];
    dg_sim_scenario_local_frame(scn, o, east, north, up);
    const double walk = 16 * DG_SIM_STUD_M, run = 24 * DG_SIM_STUD_M;
    const double max_turn = 180.0 * 3.14159265358979323846 / 180.0 / 15.0;
    dg_sim *sim = sim_make(scn, NULL);
    double prev_fwd[21][3];
    memset(prev_fwd, 0, sizeof prev_fwd);
    uint64_t moving = 0, total = 0;
    double max_seen_turn = 0.0;
    for (;;) {
        size_t n;
        const dg_sim_entity *e = dg_sim_entities(sim, &n);
        assert_int_equal(n, 20);
        int tilted = 0;
        for (size_t i = 0; i < n; i++) {
            double v = len3(e[i].vel), fwd[3], bu[3];
            assert_true(v == 0.0 || fabs(v - walk) < 1e-9 || fabs(v - run) < 1e-9);
            moving += v > 0.0;
            total++;
            body_axis(e[i].rot, 0, fwd);
            body_axis(e[i].rot, 2, bu);
            double c = bu[0] * up[0] + bu[1] * up[1] + bu[2] * up[2];
            double lp[3], lq[4];
            dg_sim_local_pose(scn, &e[i], lp, lq);
            double tilt_xy = fabs(lq[1]) + fabs(lq[2]);
            if (e[i].flags & DG_SIM_FLAG_TILTED) {
                tilted++;
                assert_true(c < 1.0 - 1e-12); /* really tilted */
                assert_true(tilt_xy > 1e-9);
            } else {
                assert_true(c > 1.0 - 1e-12); /* upright: a pure yaw in the local frame */
                assert_true(tilt_xy < 1e-12);
                assert_true(fabs(lp[2]) < 1e-6); /* on the frame's ground plane */
                /* the local yaw is the heading: forward = (cos yaw, sin yaw) in east/north */
                double yaw = atan2(2.0 * lq[0] * lq[3], 1.0 - 2.0 * lq[3] * lq[3]);
                double fe = fwd[0] * east[0] + fwd[1] * east[1] + fwd[2] * east[2];
                double fn = fwd[0] * north[0] + fwd[1] * north[1] + fwd[2] * north[2];
                assert_true(fabs(cos(yaw) - fe) < 1e-9 && fabs(sin(yaw) - fn) < 1e-9);
            }
            uint32_t id = e[i].id;
            if (dg_sim_tick(sim) > 0) {
                double d = fwd[0] * prev_fwd[id][0] + fwd[1] * prev_fwd[id][1] + fwd[2] * prev_fwd[id][2];
                double ang = acos(d > 1.0 ? 1.0 : d);
                if (!(e[i].flags & DG_SIM_FLAG_TILTED)) {
                    assert_true(ang <= max_turn + 1e-9);
                    max_seen_turn = ang > max_seen_turn ? ang : max_seen_turn;
                }
            }
            memcpy(prev_fwd[id], fwd, sizeof fwd);
            double rel[3] = {e[i].pos[0] - o[0], e[i].pos[1] - o[1], e[i].pos[2] - o[2]};
            assert_true(len3(rel) < 1000.0);
        }
        assert_int_equal(tilted, 2);
        if (dg_sim_done(sim))
            break;
        assert_int_equal(dg_sim_step(sim, NULL), DG_OK);
    }
    double frac = (double)moving / (double)total;
    print_message("walkers-20: moving %.1f%% of entity-ticks, max turn %.1f deg/s\n", 100.0 * frac,
                  max_seen_turn * 15.0 * 180.0 / 3.14159265358979323846);
    assert_true(frac > 0.5 && frac < 0.7);
    assert_true(max_seen_turn > 0.5 * max_turn); /* sharp turns do happen */
    dg_sim_free(sim);
    dg_sim_scenario_free(scn);
}

typedef struct run_stats {
    uint64_t spawns_after_0, disappear, kills_by, kills_none, chats, alerts, admin[8], alert_level_seen[256];
    size_t max_missiles, max_n, min_n;
} run_stats;

static void collect(const dg_sim_scenario *scn, uint64_t max_ticks, run_stats *rs)
{
    memset(rs, 0, sizeof *rs);
    rs->min_n = SIZE_MAX;
    dg_sim *sim = sim_make(scn, NULL);
    uint32_t *prev = NULL;
    size_t nprev = 0;
    for (;;) {
        size_t n, ne;
        const dg_sim_entity *e = dg_sim_entities(sim, &n);
        const dg_sim_event *ev = dg_sim_events(sim, &ne);
        size_t missiles = 0, j = 0;
        for (size_t i = 0; i < n; i++)
            missiles += category_of(scn, e[i].type_index) == DG_SIM_CAT_MISSILE;
        /* ids present last tick and gone now (both lists are sorted) */
        for (size_t i = 0; i < nprev; i++) {
            while (j < n && e[j].id < prev[i])
                j++;
            rs->disappear += !(j < n && e[j].id == prev[i]);
        }
        for (size_t i = 0; i < ne; i++) {
            switch (ev[i].kind) {
            case DG_SIM_EV_SPAWN: rs->spawns_after_0 += dg_sim_tick(sim) > 0; break;
            case DG_SIM_EV_KILL: ev[i].a ? rs->kills_by++ : rs->kills_none++; break;
            case DG_SIM_EV_CHAT: rs->chats++; break;
            case DG_SIM_EV_ADMIN: rs->admin[ev[i].c & 7]++; break;
            case DG_SIM_EV_ALERT: rs->alerts++, rs->alert_level_seen[ev[i].d & 255]++; break;
            default: break;
            }
        }
        rs->max_missiles = missiles > rs->max_missiles ? missiles : rs->max_missiles;
        rs->max_n = n > rs->max_n ? n : rs->max_n;
        rs->min_n = n < rs->min_n ? n : rs->min_n;
        prev = realloc(prev, (n + 1) * sizeof *prev);
        assert_non_null(prev);
        for (size_t i = 0; i < n; i++)
            prev[i] = e[i].id;
        nprev = n;
        if (dg_sim_done(sim) || dg_sim_tick(sim) + 1 >= max_ticks)
            break;
        assert_int_equal(dg_sim_step(sim, NULL), DG_OK);
    }
    free(prev);
    dg_sim_free(sim);
}

static void test_churn(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("churn");
    run_stats rs;
    collect(scn, UINT64_MAX, &rs);
    print_message("churn: %llu spawns, %llu despawns, %llu kills, up to %zu missiles\n",
                  (unsigned long long)rs.spawns_after_0, (unsigned long long)rs.disappear,
                  (unsigned long long)rs.kills_by, rs.max_missiles);
    assert_true(rs.spawns_after_0 >= 1000);
    assert_true(rs.disappear >= 1000);
    assert_true(rs.kills_by >= 20);
    assert_true(rs.max_missiles >= 50);
    dg_sim_scenario_free(scn);
}

static void test_events(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("events");
    run_stats rs;
    collect(scn, UINT64_MAX, &rs);
    assert_true(rs.kills_by >= 5);    /* missile hits */
    assert_true(rs.kills_none >= 2);  /* admin slay and a crash */
    assert_true(rs.chats >= 60);      /* one a second and more */
    for (int a = DG_SIM_ADMIN_KICK; a <= DG_SIM_ADMIN_SLAY; a++)
        assert_int_equal(rs.admin[a], 1);
    assert_true(rs.alerts >= 8);
    for (int lvl = 0; lvl <= 3; lvl++)
        assert_true(rs.alert_level_seen[lvl] > 0);
    assert_true(rs.spawns_after_0 >= 10);
    dg_sim_scenario_free(scn);
}

static void test_static_500(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("static-500");
    dg_sim *sim = sim_make(scn, NULL);
    size_t n;
    const dg_sim_entity *e = dg_sim_entities(sim, &n);
    dg_sim_entity *first = malloc(n * sizeof *first);
    assert_non_null(first);
    memcpy(first, e, n * sizeof *first);
    size_t n0 = n, statics = 0;
    for (size_t i = 0; i < n; i++)
        statics += category_of(scn, e[i].type_index) == DG_SIM_CAT_STATIC;
    assert_true(statics >= 500);
    while (!dg_sim_done(sim)) {
        assert_int_equal(dg_sim_step(sim, NULL), DG_OK);
        e = dg_sim_entities(sim, &n);
        assert_int_equal(n, n0);
        size_t moving = 0;
        for (size_t i = 0; i < n; i++) {
            moving += (e[i].flags & DG_SIM_FLAG_MOVING) != 0;
            if (category_of(scn, e[i].type_index) == DG_SIM_CAT_STATIC)
                assert_memory_equal(&e[i], &first[i], sizeof e[i]); /* never changes, bit for bit */
        }
        assert_true(moving * 20 <= n); /* at most 5% move */
    }
    free(first);
    dg_sim_free(sim);
    dg_sim_scenario_free(scn);
}

static void test_stress_1000(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("stress-1000");
    run_stats rs;
    collect(scn, 120, &rs);
    assert_int_equal(rs.min_n, 1000);
    assert_int_equal(rs.max_n, 1000);
    dg_sim_scenario_free(scn);
}

static void test_long_1h(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("long-1h");
    const dg_sim_session *ss = dg_sim_scenario_session(scn);
    assert_int_equal(ss->tick_rate_hz, 60);
    assert_int_equal(ss->duration_ticks, 216000);
    run_stats rs;
    collect(scn, 600, &rs);
    assert_int_equal(rs.min_n, 100);
    /* the file stays small: behaviour comes from the seed and repeating patterns */
    const char *root = getenv("DETGATE_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/corpus/scenarios/long-1h.scn", root ? root : ".");
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    assert_true(size > 0 && size < 4096);
    dg_sim_scenario_free(scn);
}

static void test_mars(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("mars");
    const dg_sim_session *ss = dg_sim_scenario_session(scn);
    assert_true(ss->planet_radius_m == 3389500.0);
    assert_true(ss->gravity_mps2 == 3.721);
    dg_sim *sim = sim_make(scn, NULL);
    int air_seen = 0, tilted_seen = 0;
    for (;;) {
        size_t n;
        const dg_sim_entity *e = dg_sim_entities(sim, &n);
        for (size_t i = 0; i < n; i++) {
            double alt = len3(e[i].pos) - ss->planet_radius_m;
            if (category_of(scn, e[i].type_index) == DG_SIM_CAT_AIRCRAFT) {
                assert_true(alt > 300.0 && alt < 3000.0); /* flying, relative to Mars' radius */
                air_seen++;
            } else {
                assert_true(fabs(alt) < 50.0); /* on the surface */
            }
            tilted_seen += (e[i].flags & DG_SIM_FLAG_TILTED) != 0;
        }
        if (dg_sim_done(sim))
            break;
        assert_int_equal(dg_sim_step(sim, NULL), DG_OK);
    }
    assert_true(air_seen > 0);
    assert_true(tilted_seen > 0);
    dg_sim_free(sim);
    dg_sim_scenario_free(scn);
}

/* The same scenario on a planet twice the radius: different state (the radius is used), still
 * flying. */
static void test_radius_matters(void **st)
{
    (void)st;
    static const char a[] = "scenario r\nsession tick_rate=30 duration=60 seed=1 planet_radius=%s\n"
                            "type j category=aircraft name=\"J\"\nfaction f name=\"F\"\n"
                            "entity 1 type=j faction=f at=10,10,3000 speed=220\npilot 1 mode=cruise\n";
    char t1[512], t2[512];
    snprintf(t1, sizeof t1, a, "3389.5km");
    snprintf(t2, sizeof t2, a, "6779km");
    dg_sim_scenario *s1 = sim_parse_text(t1), *s2 = sim_parse_text(t2);
    dg_sim *x = sim_make(s1, NULL), *y = sim_make(s2, NULL);
    while (!dg_sim_done(x)) {
        assert_int_equal(dg_sim_step(x, NULL), DG_OK);
        assert_int_equal(dg_sim_step(y, NULL), DG_OK);
    }
    size_t n;
    const dg_sim_entity *ex = dg_sim_entities(x, &n), *ey = dg_sim_entities(y, &n);
    double ax = len3(ex[0].pos) - 3389500.0, ay = len3(ey[0].pos) - 6779000.0;
    assert_true(fabs(ax - 3000.0) < 100.0);
    assert_true(fabs(ay - 3000.0) < 100.0);
    assert_true(fabs(len3(ey[0].pos) / len3(ex[0].pos) - 2.0) < 0.01);
    dg_sim_free(x);
    dg_sim_free(y);
    dg_sim_scenario_free(s1);
    dg_sim_scenario_free(s2);
}

/* The sim's event kinds are the codec's (the harness copies them across unchanged). */
static void test_event_kinds_mirror_quant(void **st)
{
    (void)st;
    assert_int_equal(DG_SIM_EV_KILL, DG_EV_KILL);
    assert_int_equal(DG_SIM_EV_SPAWN, DG_EV_SPAWN);
    assert_int_equal(DG_SIM_EV_CHAT, DG_EV_CHAT);
    assert_int_equal(DG_SIM_EV_ADMIN, DG_EV_ADMIN);
    assert_int_equal(DG_SIM_EV_ALERT, DG_EV_ALERT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dogfight_40), cmocka_unit_test(test_walkers_20),   cmocka_unit_test(test_churn),
        cmocka_unit_test(test_events),      cmocka_unit_test(test_static_500),   cmocka_unit_test(test_stress_1000),
        cmocka_unit_test(test_long_1h),     cmocka_unit_test(test_mars),         cmocka_unit_test(test_radius_matters),
        cmocka_unit_test(test_event_kinds_mirror_quant),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
