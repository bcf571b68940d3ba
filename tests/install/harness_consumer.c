/* tests/install/harness_consumer.c — an engine that links the installed harness library (the C API of
 * include/detgate/harness.h) through pkg-config detgate-harness or find_package(detgate): 60 ticks of
 * one body, verified in-process. Exit 0 when every check passes. */
#include <stdio.h>

#include <detgate/harness.h>

int main(void)
{
    dg_flrep_type type = {0, dg_flrep_cstr("ball"), dg_flrep_cstr("Ball"), 4, 0};
    dg_flrep_faction fac = {0, dg_flrep_cstr("none"), dg_flrep_cstr("None")};
    dg_flrep_header h = {0};
    h.engine_version = dg_flrep_cstr("harness consumer 1");
    h.tick_rate_hz = 60;
    h.planet_radius_m = 6371000;
    h.keyframe_interval_ticks = 30;
    h.types = &type;
    h.type_count = 1;
    h.factions = &fac;
    h.faction_count = 1;
    dg_error err;
    dg_error_clear(&err);
    dg_harness_session *s = NULL;
    if (dg_harness_open(&s, &h, NULL, &err) != DG_OK)
        return 1;
    for (uint64_t t = 0; t < 60; t++) {
        dg_entity_in e = {.id = 1, .pos = {0.5 * (double)t, 10, 0}, .vel = {30, 0, 0}, .rot = {1, 0, 0, 0}, .health = 1};
        if (dg_harness_tick(s, t, &e, 1, NULL, 0, &err) != DG_OK) {
            dg_harness_abort(s);
            return 1;
        }
    }
    dg_harness_result r;
    if (dg_harness_close(s, NULL, &r, &err) != DG_OK)
        return 1;
    printf("harness consumer: %llu ticks, %d failed, %d could not run\n", (unsigned long long)r.ticks,
           r.failed_checks, r.error_checks);
    return r.ticks == 60 && r.failed_checks == 0 && r.error_checks == 0 ? 0 : 1;
}
