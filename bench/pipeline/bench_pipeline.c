/* bench/pipeline/bench_pipeline.c — sim step + quantize + hash on a scenario (default
 * stress-1000), each stage timed in CPU time of this thread, in entity-ticks per second.
 * Usage: bench_pipeline [SCENARIO.scn] [TICKS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "detgate/hash.h"
#include "detgate/quant.h"
#include "detgate/sim.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const dg_error *e)
{
    char b[600];
    dg_error_format(e, b, sizeof b);
    fprintf(stderr, "bench_pipeline: %s\n", b);
    exit(1);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : DETGATE_SOURCE_DIR "/corpus/scenarios/stress-1000.scn";
    long max_ticks = argc > 2 ? atol(argv[2]) : 0;
    dg_error err;
    dg_error_clear(&err);
    dg_sim_scenario *scn;
    if (dg_sim_scenario_parse_file(path, &scn, &err))
        die(&err);
    dg_sim *sim;
    if (dg_sim_new(scn, NULL, &sim, &err))
        die(&err);
    size_t cap = 0;
    dg_qentity *q = NULL;
    uint64_t *eh = NULL;
    double t_step = 0, t_quant = 0, t_hash = 0;
    uint64_t et = 0, ticks = 0, fold = 0;
    while (!dg_sim_done(sim) && (max_ticks == 0 || (long)ticks < max_ticks)) {
        double t0 = cpu_now();
        if (dg_sim_step(sim, &err))
            die(&err);
        double t1 = cpu_now();
        size_t n;
        const dg_sim_entity *e = dg_sim_entities(sim, &n);
        if (n > cap) {
            cap = n;
            q = realloc(q, cap * sizeof *q);
            eh = realloc(eh, cap * sizeof *eh);
        }
        for (size_t i = 0; i < n; i++) {
            dg_entity_in in = {e[i].id, e[i].type_index, e[i].faction_index, {e[i].pos[0], e[i].pos[1], e[i].pos[2]},
                               {e[i].vel[0], e[i].vel[1], e[i].vel[2]}, {e[i].rot[0], e[i].rot[1], e[i].rot[2], e[i].rot[3]},
                               e[i].health, e[i].flags};
            if (dg_quant_entity(&in, &q[i], &err))
                die(&err);
        }
        double t2 = cpu_now();
        dg_tick_hash h = dg_hash_tick(dg_sim_tick(sim), q, n, NULL, 0, eh);
        fold ^= h.combined;
        double t3 = cpu_now();
        t_step += t1 - t0;
        t_quant += t2 - t1;
        t_hash += t3 - t2;
        et += n;
        ticks++;
    }
    double all = t_step + t_quant + t_hash;
    printf("scenario %s: %llu ticks, %llu entity-ticks (fold %016llx)\n\n", path, (unsigned long long)ticks,
           (unsigned long long)et, (unsigned long long)fold);
    printf("| stage | CPU s | M entity-ticks/s |\n|---|---|---|\n");
    printf("| sim step | %.3f | %.1f |\n", t_step, et / t_step / 1e6);
    printf("| quantize | %.3f | %.1f |\n", t_quant, et / t_quant / 1e6);
    printf("| state hash (entity + tick) | %.3f | %.1f |\n", t_hash, et / t_hash / 1e6);
    printf("| all three | %.3f | %.1f |\n", all, et / all / 1e6);
    free(q);
    free(eh);
    dg_sim_free(sim);
    dg_sim_scenario_free(scn);
    return 0;
}
