/* sim_stub/tools/sim_digest.c — runs a scenario through the sim and prints state digests, so two
 * builds (gcc -O0, clang -O3, ...) can be compared with diff. Usage:
 *   detgate_sim_digest [--inject SPEC] [--ticks N] [--every K] [--entities] file.scn
 * prints "tick <t> n=<entities> ev=<events> digest=<running fnv>" every K ticks (default: only the
 * last), and with --entities the last tick's entities with their exact double bits. */
#include "detgate/sim.h"
#include "state_digest.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_entities(const dg_sim *sim)
{
    size_t n;
    const dg_sim_entity *e = dg_sim_entities(sim, &n);
    for (size_t i = 0; i < n; i++) {
        printf("  id=%u type=%u fac=%u pos=%.17g,%.17g,%.17g vel=%.17g,%.17g,%.17g rot=%.17g,%.17g,%.17g,%.17g "
               "health=%.17g flags=0x%04x\n",
               e[i].id, e[i].type_index, e[i].faction_index, e[i].pos[0], e[i].pos[1], e[i].pos[2], e[i].vel[0],
               e[i].vel[1], e[i].vel[2], e[i].rot[0], e[i].rot[1], e[i].rot[2], e[i].rot[3], e[i].health,
               e[i].flags);
    }
}

int main(int argc, char **argv)
{
    const char *path = NULL, *inj_spec = NULL;
    uint64_t max_ticks = UINT64_MAX, every = 0;
    int show = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--inject") == 0 && i + 1 < argc)
            inj_spec = argv[++i];
        else if (strcmp(argv[i], "--ticks") == 0 && i + 1 < argc)
            max_ticks = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--every") == 0 && i + 1 < argc)
            every = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--entities") == 0)
            show = 1;
        else if (argv[i][0] != '-' && !path)
            path = argv[i];
        else {
            fprintf(stderr, "usage: %s [--inject SPEC] [--ticks N] [--every K] [--entities] file.scn\n", argv[0]);
            return 2;
        }
    }
    if (!path) {
        fprintf(stderr, "usage: %s [--inject SPEC] [--ticks N] [--every K] [--entities] file.scn\n", argv[0]);
        return 2;
    }
    dg_error err;
    dg_error_clear(&err);
    char msg[512];
    dg_sim_inject inj;
    dg_sim_scenario *scn = NULL;
    dg_sim *sim = NULL;
    if (dg_sim_inject_parse(inj_spec, &inj, &err) || dg_sim_scenario_parse_file(path, &scn, &err) ||
        dg_sim_new(scn, &inj, &sim, &err)) {
        dg_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "%s\n", msg);
        dg_sim_scenario_free(scn);
        return 1;
    }
    uint64_t h = DG_SIM_FNV_OFFSET, ent_ticks = 0, events = 0;
    for (;;) {
        size_t n, nev;
        const dg_sim_entity *e = dg_sim_entities(sim, &n);
        const dg_sim_event *ev = dg_sim_events(sim, &nev);
        uint64_t t = dg_sim_tick(sim);
        h = dg_sim_digest_tick(h, t, e, n, ev, nev);
        ent_ticks += n;
        events += nev;
        int last = dg_sim_done(sim) || t + 1 >= max_ticks;
        if ((every && t % every == 0) || last)
            printf("tick %" PRIu64 " n=%zu ev=%zu digest=%016" PRIx64 "\n", t, n, nev, h);
        if (last)
            break;
        if (dg_sim_step(sim, &err)) {
            dg_error_format(&err, msg, sizeof msg);
            fprintf(stderr, "%s\n", msg);
            dg_sim_free(sim);
            dg_sim_scenario_free(scn);
            return 1;
        }
    }
    printf("total entity-ticks=%" PRIu64 " events=%" PRIu64 "\n", ent_ticks, events);
    if (show)
        print_entities(sim);
    dg_sim_free(sim);
    dg_sim_scenario_free(scn);
    return 0;
}
