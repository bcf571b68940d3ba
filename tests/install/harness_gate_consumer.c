/* tests/install/harness_gate_consumer.c — an engine that runs the whole gate in-process through the
 * installed harness (pkg-config detgate-harness or find_package(detgate) -> detgate::harness): it
 * blesses a golden (.flrep + hash log), gates a run against each golden, catches a run that moved a
 * body at tick 40 (tick, entity, field), and requires 3 runs to record the same. Exit 0 when each
 * verdict is the expected one. usage: harness_gate_consumer FOLDER */
#include <stdio.h>
#include <string.h>

#include <detgate/harness.h>

#define TICKS 90

static dg_flrep_type g_type = {0, {"ball", 4}, {"Ball", 4}, 4, 0};
static dg_flrep_faction g_fac = {0, {"none", 4}, {"None", 4}};

static dg_flrep_header header(void)
{
    dg_flrep_header h = {0};
    h.engine_version = dg_flrep_cstr("harness gate consumer 1");
    h.tick_rate_hz = 60;
    h.planet_radius_m = 6371000;
    h.keyframe_interval_ticks = 30;
    h.types = &g_type;
    h.type_count = 1;
    h.factions = &g_fac;
    h.faction_count = 1;
    return h;
}

/* Two balls; with moved != 0, ball 2 is 2 m higher from tick 40 on. */
static dg_status run(void *user, dg_harness_session *s, unsigned k, dg_error *err)
{
    int moved = *(const int *)user;
    (void)k;
    for (uint64_t t = 0; t < TICKS; t++) {
        dg_entity_in e[2];
        for (uint32_t i = 0; i < 2; i++)
            e[i] = (dg_entity_in){.id = i + 1, .pos = {0.5 * (double)t + i, 10 + (moved && i == 1 && t >= 40 ? 2 : 0), 0},
                                  .vel = {30, 0, 0}, .rot = {1, 0, 0, 0}, .health = 1};
        if (dg_harness_tick(s, t, e, 2, NULL, 0, err) != DG_OK)
            return err->code;
    }
    return DG_OK;
}

static int session(const dg_harness_options *o, int moved, dg_harness_result *r)
{
    dg_flrep_header h = header();
    dg_error err;
    dg_error_clear(&err);
    dg_harness_session *s = NULL;
    if (dg_harness_open(&s, &h, o, &err) != DG_OK)
        return -1;
    if (run(&moved, s, 1, &err) != DG_OK) {
        dg_harness_abort(s);
        return -1;
    }
    return dg_harness_close(s, NULL, r, &err) == DG_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    char golden[1024], log[1024];
    snprintf(golden, sizeof golden, "%s/ball.flrep", argv[1]);
    snprintf(log, sizeof log, "%s/ball.hashlog.zst", argv[1]);
    dg_harness_result r;
    dg_harness_options o = dg_harness_default_options();
    o.recording_path = golden;
    o.hash_log_path = log;
    if (session(&o, 0, &r) != 0 || r.failed_checks)
        return 1;
    o = dg_harness_default_options();
    o.golden_path = golden;
    if (session(&o, 0, &r) != 0 || r.failed_checks || r.error_checks)
        return 1;
    dg_harness_result caught;
    if (session(&o, 1, &caught) != 0 || caught.failed_checks != 1 || caught.first_divergent_tick != 40 ||
        caught.first_divergent_entity != 2 || strcmp(caught.first_divergent_field, "pos.y") != 0)
        return 1;
    o.golden_path = log;
    if (session(&o, 1, &r) != 0 || r.failed_checks != 1 || r.first_divergent_tick != 40)
        return 1;
    dg_flrep_header h = header();
    dg_error err;
    dg_error_clear(&err);
    int moved = 0;
    if (dg_harness_repeat(&h, NULL, 3, run, &moved, NULL, &r, &err) != DG_OK || r.failed_checks || r.error_checks)
        return 1;
    printf("harness gate consumer: the golden caught tick %llu, entity %u, %s; 3 runs recorded the same\n",
           (unsigned long long)caught.first_divergent_tick, (unsigned)caught.first_divergent_entity,
           caught.first_divergent_field);
    return 0;
}
