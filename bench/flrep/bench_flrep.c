/* bench/flrep/bench_flrep.c — the .flrep codec's figures: size on the seed's workload (40 aircraft
 * all moving, 60 Hz, 25 s) at keyframe intervals 60/120/300/600, and throughput of write (quantize
 * + encode + compress) and read (decompress + decode + rebuild) in entity-ticks per second.
 *
 * Usage: bench_flrep                          the tables of docs/PERFORMANCE.md
 *        bench_flrep --profile-read FILE [N]  write FILE once, read it N times (for perf/callgrind)
 *        bench_flrep --profile-write FILE [N [TICKS]]  write FILE N times (for perf/callgrind; FILE
 *                                             is kept, so `cmp` shows whether a writer change altered
 *                                             the bytes); TICKS (default 3000) shortens it for callgrind
 *        bench_flrep --stages                 the write path split: quantize, and encode + compress;
 *                                             then the 2.0 schema quantizer (pos, vel, rot at 2^-5 m
 *                                             and 2^-10 m/s) one by one and batched, on the same states
 *        bench_flrep --zstd-level L ...       any of the above with zstd level L (default: the writer's,
 *                                             DG_FLREP_ZSTD_LEVEL_DEFAULT)
 * The synthetic generator stands in for sim_stub here; `detgate record` gives the same size figures
 * on the dogfight-40 scenario. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "detgate/flrep.h"

#define BENCH_NAME "bench_flrep"
#include "bench_util.h"
#include "detgate/quant.h"
#include "quant_internal.h"   /* dg_quant__avx2_in_use: which build of the batch runs */

typedef struct craft {
    double pos[3], vel[3];
    double heading, pitch, roll, speed;
    double turn_rate, climb_rate, target_speed;
    uint64_t rng;
} craft;

static double rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* Aircraft-like motion: coordinated turns (bank from turn rate), climbs and dives, speed changes,
 * a new pilot input every few seconds; semi-implicit Euler like a real integrator. */
static void craft_init(craft *c, uint32_t i)
{
    memset(c, 0, sizeof *c);
    c->rng = 0x9E3779B97F4A7C15ull * (i + 1);
    c->heading = rnd(&c->rng) * 6.283185307179586;
    c->speed = 150 + 150 * rnd(&c->rng);
    c->target_speed = c->speed;
    double r = 6371000.0 + 2000 + 8000 * rnd(&c->rng);
    double lon = (rnd(&c->rng) - 0.5) * 0.02, lat = (rnd(&c->rng) - 0.5) * 0.02;
    c->pos[0] = r * cos(lat) * cos(lon);
    c->pos[1] = r * cos(lat) * sin(lon);
    c->pos[2] = r * sin(lat);
}

static void craft_step(craft *c, double dt)
{
    if (rnd(&c->rng) < dt / 3.0) { /* new pilot input about every 3 s */
        c->turn_rate = (rnd(&c->rng) - 0.5) * 0.5;
        c->climb_rate = (rnd(&c->rng) - 0.5) * 0.3;
        c->target_speed = 150 + 150 * rnd(&c->rng);
    }
    c->speed += (c->target_speed - c->speed) * 0.2 * dt;
    c->heading += c->turn_rate * dt;
    c->pitch += (c->climb_rate - c->pitch) * 0.5 * dt;
    c->roll += (atan(c->turn_rate * c->speed / 9.81) - c->roll) * 1.5 * dt;
    /* local frame ~ x east, y north, z up (a small patch of the planet) */
    double v[3] = {c->speed * cos(c->pitch) * sin(c->heading), c->speed * cos(c->pitch) * cos(c->heading),
                   c->speed * sin(c->pitch)};
    for (int k = 0; k < 3; k++) {
        c->vel[k] = v[k];
        c->pos[k] += c->vel[k] * dt;
    }
}

static void craft_state(const craft *c, uint32_t id, dg_entity_in *e)
{
    memset(e, 0, sizeof *e);
    e->id = id;
    e->type_index = 0;
    e->faction_index = (uint16_t)(id & 1);
    memcpy(e->pos, c->pos, sizeof e->pos);
    memcpy(e->vel, c->vel, sizeof e->vel);
    double cy = cos(c->heading / 2), sy = sin(c->heading / 2), cp = cos(c->pitch / 2), sp = sin(c->pitch / 2),
           cr = cos(c->roll / 2), sr = sin(c->roll / 2);
    e->rot[0] = cr * cp * cy + sr * sp * sy;
    e->rot[1] = sr * cp * cy - cr * sp * sy;
    e->rot[2] = cr * sp * cy + sr * cp * sy;
    e->rot[3] = cr * cp * sy - sr * sp * cy;
    e->health = 1.0;
}


static const dg_flrep_type k_types[] = {{0, {"f16c", 4}, {"F-16C", 5}, 1, 0}};
static const dg_flrep_faction k_factions[] = {{0, {"blue", 4}, {"Blue", 4}}, {1, {"red", 3}, {"Red", 3}}};

static dg_flrep_header header(uint32_t rate, uint32_t kf)
{
    dg_flrep_header h = {0};
    h.engine_version = dg_flrep_cstr("detgate-bench");
    h.tick_rate_hz = rate;
    h.planet_radius_m = 6371000.0;
    h.keyframe_interval_ticks = kf;
    h.types = k_types;
    h.type_count = 1;
    h.factions = k_factions;
    h.faction_count = 2;
    return h;
}

/* --zstd-level L (first argument) sets it for every writer below: what a level costs and saves */
static dg_flrep_writer_opts g_opts;


/* Records n aircraft for ticks ticks; returns write seconds, file size in *bytes. */
static double record(const char *path, uint32_t n, uint32_t ticks, uint32_t rate, uint32_t kf, long *bytes)
{
    craft *c = calloc(n, sizeof *c);
    dg_entity_in *in = calloc(n, sizeof *in);
    for (uint32_t i = 0; i < n; i++)
        craft_init(&c[i], i);
    dg_flrep_header h = header(rate, kf);
    dg_flrep_writer *w;
    dg_error err;
    dg_error_clear(&err);
    if (dg_flrep_writer_open(&w, path, &h, &g_opts, &err))
        die(&err);
    double spent = 0;
    for (uint32_t t = 0; t < ticks; t++) {
        for (uint32_t i = 0; i < n; i++) {
            craft_step(&c[i], 1.0 / rate);
            craft_state(&c[i], i + 1, &in[i]);
        }
        double t0 = now_s();
        if (dg_flrep_writer_tick(w, t, in, n, NULL, 0, NULL, &err))
            die(&err);
        spent += now_s() - t0;
    }
    double t0 = now_s();
    if (dg_flrep_writer_close(w, &err))
        die(&err);
    spent += now_s() - t0;
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    *bytes = ftell(f);
    fclose(f);
    free(c);
    free(in);
    return spent;
}

static double read_all(const char *path, uint64_t *entity_ticks)
{
    dg_flrep_reader *r;
    dg_error err;
    dg_error_clear(&err);
    double t0 = now_s();
    if (dg_flrep_reader_open_file(&r, path, NULL, &err))
        die(&err);
    dg_flrep_tick t;
    int rc;
    uint64_t et = 0, sum = 0;
    while ((rc = dg_flrep_reader_next(r, &t, &err)) == 1) {
        et += t.ent_count;
        sum += t.ent_count ? (uint64_t)t.ents[t.ent_count - 1].pos[0] : 0;
    }
    if (rc < 0)
        die(&err);
    dg_flrep_reader_close(r);
    double spent = now_s() - t0;
    *entity_ticks = et + (sum & 0); /* sum keeps the loop honest */
    return spent;
}

/* One tick of the n craft of the throughput workload, their states into in[0..n). */
static void fleet_step(craft *c, dg_entity_in *in, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        craft_step(&c[i], 1.0 / 60);
        craft_state(&c[i], i + 1, &in[i]);
    }
}

/* The schema quantizer as the 2.0 writer runs it (dg_flrep_writer_tick_x: the batch on a tick in id
 * order) against one dg_quant_entity_schema per entity, on the same states (CPU time, best of 5
 * runs of `ticks` ticks of the throughput workload, the simulation untimed between them); the
 * quanta are checked equal. */
static void schema_stage(craft *c, dg_entity_in *in, dg_qentity *q, uint32_t n, uint32_t ticks)
{
    const dg_schema s = {.std_mask = DG_STD_POS | DG_STD_VEL | DG_STD_ROT, .pos_quantum_m = 0x1p-5,
                         .vel_quantum_mps = 0x1p-10};
    dg_qentity *q1 = calloc(n, sizeof *q1);
    dg_error err;
    dg_error_clear(&err);
    double best_one = 1e9, best_batch = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        for (uint32_t i = 0; i < n; i++)
            craft_init(&c[i], i);
        double t_one = 0, t_batch = 0;
        for (uint32_t t = 0; t < ticks; t++) {
            fleet_step(c, in, n);
            double t0 = now_s();
            for (uint32_t i = 0; i < n; i++)
                if (dg_quant_entity_schema(&s, &in[i], &q1[i], &err))
                    die(&err);
            double t1 = now_s();
            if (dg_quant_entities_schema(&s, in, q, n, NULL, &err))
                die(&err);
            double t2 = now_s();
            t_one += t1 - t0;
            t_batch += t2 - t1;
            if (memcmp(q, q1, n * sizeof *q) != 0) {
                fprintf(stderr, "bench_flrep: the schema batch and one by one disagree at tick %u\n", t);
                exit(1);
            }
        }
        best_one = t_one < best_one ? t_one : best_one;
        best_batch = t_batch < best_batch ? t_batch : best_batch;
    }
    double et = (double)n * ticks;
    printf("schema quantize (pos, vel, rot): one by one %.1f ns/entity-tick, batched %.1f ns/entity-tick (%s)\n",
           best_one / et * 1e9, best_batch / et * 1e9, dg_quant__avx2_in_use() ? "AVX2" : "portable: one by one");
    free(q1);
}

/* The write path in two stages, each timed on its own (CPU time, best of 5 runs of 600 ticks of
 * the throughput workload): dg_quant_entities (what dg_flrep_writer_tick runs), then
 * dg_flrep_writer_tick_q on its output. The simulation runs between them untimed, as in the
 * whole-write figure, so the caches hold what they hold there. Steadier than the whole-write
 * figure for telling which stage a change moved. */
static void stages(const char *path)
{
    enum { N = 1000, TICKS = 600 };
    craft *c = calloc(N, sizeof *c);
    dg_entity_in *in = calloc(N, sizeof *in);
    dg_qentity *q = calloc(N, sizeof *q);
    dg_error err;
    dg_error_clear(&err);
    double best_q = 1e9, best_e = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        for (uint32_t i = 0; i < N; i++)
            craft_init(&c[i], i);
        dg_flrep_header h = header(60, 120);
        dg_flrep_writer *w;
        if (dg_flrep_writer_open(&w, path, &h, &g_opts, &err))
            die(&err);
        double tq = 0, te = 0;
        for (uint32_t t = 0; t < TICKS; t++) {
            fleet_step(c, in, N);
            double t0 = now_s();
            if (dg_quant_entities(in, q, N, NULL, &err))
                die(&err);
            double t1 = now_s();
            if (dg_flrep_writer_tick_q(w, t, q, N, NULL, 0, &err))
                die(&err);
            double t2 = now_s();
            tq += t1 - t0;
            te += t2 - t1;
        }
        double t0 = now_s();
        if (dg_flrep_writer_close(w, &err))
            die(&err);
        te += now_s() - t0;
        best_q = tq < best_q ? tq : best_q;
        best_e = te < best_e ? te : best_e;
    }
    double et = (double)N * TICKS;
    printf("quantize: %.1f ns/entity-tick\nencode + self-check + compress: %.1f ns/entity-tick\n", best_q / et * 1e9,
           best_e / et * 1e9);
    schema_stage(c, in, q, N, TICKS);
    remove(path);
    free(c);
    free(in);
    free(q);
}

int main(int argc, char **argv)
{
    char path[256];
    if (argc >= 3 && strcmp(argv[1], "--zstd-level") == 0) {
        g_opts.zstd_level = atoi(argv[2]);
        argc -= 2;
        argv += 2;
    }
    if (argc >= 3 && strcmp(argv[1], "--profile-read") == 0) { /* for perf: write once, read N times */
        long bytes;
        uint64_t et;
        int reps = argc > 3 ? atoi(argv[3]) : 20;
        record(argv[2], 1000, 3000, 60, 120, &bytes);
        double s = 0;
        for (int i = 0; i < reps; i++)
            s += read_all(argv[2], &et);
        if (reps > 0)
            printf("read: %.1f M entity-ticks/s\n", reps * (double)et / s / 1e6);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "--time-read") == 0) { /* an existing file (from --profile-read F 0): best of N reads, for A/B runs of two builds */
        uint64_t et = 0;
        int reps = argc > 3 ? atoi(argv[3]) : 10;
        double best = 1e9;
        for (int i = 0; i < reps; i++) {
            double s = read_all(argv[2], &et);
            best = s < best ? s : best;
        }
        printf("read: %.2f M entity-ticks/s (best of %d)\n", (double)et / best / 1e6, reps);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "--profile-write") == 0) { /* for perf: write N times */
        long bytes;
        int reps = argc > 3 ? atoi(argv[3]) : 5;
        uint32_t ticks = argc > 4 ? (uint32_t)atoi(argv[4]) : 3000;
        double s = 0;
        for (int i = 0; i < reps; i++)
            s += record(argv[2], 1000, ticks, 60, 120, &bytes);
        printf("write: %.1f M entity-ticks/s (%ld bytes)\n", reps * ticks * 1000.0 / s / 1e6, bytes);
        return 0;
    }
    snprintf(path, sizeof path, "%s/bench-flrep-%ld.flrep", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (long)getpid());
    if (argc >= 2 && strcmp(argv[1], "--stages") == 0) {
        stages(path);
        return 0;
    }
    printf("## size: 40 aircraft, all moving, 60 Hz, 25 s (1500 ticks), zstd level %d\n\n",
           g_opts.zstd_level ? g_opts.zstd_level : DG_FLREP_ZSTD_LEVEL_DEFAULT);
    printf("| keyframe interval | file bytes | bytes/tick | bytes/entity-tick |\n|---|---|---|---|\n");
    const uint32_t kfs[] = {60, 120, 300, 600};
    for (int k = 0; k < 4; k++) {
        long bytes;
        record(path, 40, 1500, 60, kfs[k], &bytes);
        printf("| %u | %ld | %.1f | %.2f |\n", kfs[k], bytes, bytes / 1500.0, bytes / 1500.0 / 40);
    }
    printf("\n## throughput (one core): 1000 aircraft x 3000 ticks at 60 Hz, keyframe 120\n\n");
    long bytes;
    double best_w = 1e9, best_r = 1e9;
    uint64_t et = 0;
    for (int rep = 0; rep < 3; rep++) {
        double w = record(path, 1000, 3000, 60, 120, &bytes);
        double r = read_all(path, &et);
        best_w = w < best_w ? w : best_w;
        best_r = r < best_r ? r : best_r;
    }
    printf("| direction | seconds (best of 3) | million entity-ticks/s |\n|---|---|---|\n");
    printf("| write (quantize + encode + self-check + compress) | %.3f | %.1f |\n", best_w, 3.0 / best_w);
    printf("| read (decompress + decode + rebuild) | %.3f | %.1f |\n", best_r, (double)et / best_r / 1e6);
    printf("\nfile: %ld bytes, %.2f bytes/entity-tick\n", bytes, bytes / 3e6);
    remove(path);
    return 0;
}
