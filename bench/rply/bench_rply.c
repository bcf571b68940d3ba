/* bench/rply/bench_rply.c — the RPLY bench: the synthetic "walkers-20" session (20 characters,
 * 15 Hz, 10 minutes, ~60% moving at 16 or 24 studs/s turning up to 180 deg/s, 2 tilted vehicles)
 * recorded three ways (full XFORM every tick / deltas / deltas + thresholds) for bytes per second,
 * then read + rebuild throughput in ops per second on one core.
 *
 * usage: bench_rply [min_seconds_per_timing]   (default 1.0) */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "detgate/rply.h"

#define PI 3.14159265358979323846
#define WALKERS 20
#define VEHICLES 2
#define HZ 15
#define SECONDS 600
#define TICKS (HZ * SECONDS)

static uint64_t rng = 0x5EED5EED12345678ull;
static double unit(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* One character: alternates between moving segments (60% of the time on average) and standing
 * segments, each 1..8 s long. Moving: walk 16 or run 24 studs/s; per segment a turn rate drawn
 * uniformly in [-180, 180] deg/s half of the time, straight ahead otherwise. Vehicles also pitch
 * and roll with the terrain, so they are tilted at every moment. */
typedef struct walker {
    double pos[3];
    double heading;
    double speed, turn;
    int segment_left;
    bool moving, vehicle;
    double phase;
} walker;

static void new_segment(walker *w)
{
    w->moving = unit() < 0.6;
    w->segment_left = (int)(HZ * (1.0 + 7.0 * unit()));
    w->speed = unit() < 0.5 ? 16.0 : 24.0;
    w->turn = unit() < 0.5 ? (unit() * 2.0 - 1.0) * PI : 0.0;
}

static void step(walker *w, double t)
{
    if (--w->segment_left <= 0)
        new_segment(w);
    if (w->moving) {
        w->heading += w->turn / HZ;
        w->pos[0] += -sin(w->heading) * w->speed / HZ;
        w->pos[2] += -cos(w->heading) * w->speed / HZ;
        if (w->vehicle)
            w->pos[1] = 3.0 + 2.0 * sin(0.05 * w->pos[0]) * cos(0.04 * w->pos[2]);
    }
    (void)t;
}

static void quat_mul(const double a[4], const double b[4], double out[4])
{
    out[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    out[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    out[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    out[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

static void orientation(const walker *w, double t, double q[4])
{
    double yaw[4] = {cos(w->heading / 2), 0, sin(w->heading / 2), 0};
    if (!w->vehicle) {
        memcpy(q, yaw, sizeof yaw);
        return;
    }
    double pitch = 0.12 + 0.08 * sin(0.3 * t + w->phase);
    double roll = 0.06 * sin(0.5 * t + 2.0 * w->phase);
    double qp[4] = {cos(pitch / 2), sin(pitch / 2), 0, 0};
    double qr[4] = {cos(roll / 2), 0, 0, sin(roll / 2)};
    double tmp[4];
    quat_mul(yaw, qp, tmp);
    quat_mul(tmp, qr, q);
}

static uint64_t moving_samples, turning_samples, total_samples;

static uint8_t *record(const dg_rply_writer_config *cfg, size_t *len)
{
    moving_samples = turning_samples = total_samples = 0;
    dg_error err;
    dg_error_clear(&err);
    dg_rply_writer *w = dg_rply_writer_new(cfg, &err);
    if (!w)
        abort();
    rng = 0x5EED5EED12345678ull;
    walker wk[WALKERS];
    memset(wk, 0, sizeof wk);
    for (int i = 0; i < WALKERS; i++) {
        wk[i].pos[0] = 40.0 * i;
        wk[i].pos[1] = 3.0;
        wk[i].heading = unit() * 2 * PI;
        wk[i].vehicle = i < VEHICLES;
        wk[i].phase = unit() * 6.0;
        new_segment(&wk[i]);
        char desc[32];
        snprintf(desc, sizeof desc, i < VEHICLES ? "model:Prototypes.Jeep" : "char:%d", 1000 + i);
        if (dg_rply_writer_spawn(w, (uint16_t)(i + 1), desc, 0, &err) != DG_OK)
            abort();
    }
    for (uint32_t t = 0; t < TICKS; t++) {
        if (dg_rply_writer_tick(w, t, &err) != DG_OK)
            abort();
        double secs = (double)t / HZ;
        for (int i = 0; i < WALKERS; i++) {
            step(&wk[i], secs);
            total_samples++;
            moving_samples += wk[i].moving;
            turning_samples += wk[i].moving && wk[i].turn != 0.0;
            double q[4];
            orientation(&wk[i], secs, q);
            if (dg_rply_writer_transform(w, (uint16_t)(i + 1), wk[i].pos, q, &err) != DG_OK)
                abort();
        }
    }
    uint8_t *buf;
    if (dg_rply_writer_finish(w, TICKS, &buf, len, &err) != DG_OK)
        abort();
    dg_rply_writer_free(w);
    return buf;
}

/* CPU time of this thread: the machine is shared, and wall time would count other processes. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct timing {
    double ops_per_s;
    uint64_t ops;
} timing;

static volatile uint64_t sink;

/* Decode only: the op iterator over the whole stream. */
static timing time_decode(const dg_rply_file *f, double min_s)
{
    uint64_t ops = 0;
    int reps = 0;
    double t0 = now(), t;
    do {
        dg_rply_iter it;
        dg_rply_iter_init(&it, f);
        dg_rply_op op;
        while (dg_rply_iter_next(&it, &op, NULL) > 0) {
            ops++;
            sink += op.entity;
        }
        reps++;
    } while ((t = now() - t0) < min_s);
    return (timing){ops / t, ops / (uint64_t)reps};
}

/* Read + rebuild: a player advanced tick by tick through every tick (what a determinism gate does
 * to hash each tick), including opening the file. */
static timing time_rebuild(const uint8_t *buf, size_t len, double min_s)
{
    uint64_t ops = 0;
    int reps = 0;
    double t0 = now(), t;
    do {
        dg_rply_file f;
        if (dg_rply_file_open(&f, buf, len, 0, NULL) != DG_OK)
            abort();
        dg_rply_player *p = dg_rply_player_new(&f, 0, NULL);
        if (!p)
            abort();
        for (uint32_t tick = 0; tick < f.hdr.tick_count; tick++)
            if (dg_rply_player_advance(p, tick, NULL) != DG_OK)
                abort();
        ops += dg_rply_player_ops_applied(p);
        sink += dg_rply_state_live_count(dg_rply_player_state(p));
        dg_rply_player_free(p);
        dg_rply_file_close(&f);
        reps++;
    } while ((t = now() - t0) < min_s);
    return (timing){ops / t, ops / (uint64_t)reps};
}

/* Validation: the whole stream through every rule, with its own scratch state. */
static timing time_validate(const dg_rply_file *f, uint64_t ops_per_rep, double min_s)
{
    int reps = 0;
    double t0 = now(), t;
    do {
        if (dg_rply_validate(f, NULL) != DG_OK)
            abort();
        reps++;
    } while ((t = now() - t0) < min_s);
    return (timing){(double)ops_per_rep * reps / t, ops_per_rep};
}

int main(int argc, char **argv)
{
    double min_s = argc > 1 ? atof(argv[1]) : 1.0;
    if (!(min_s > 0))
        min_s = 1.0;
    struct {
        const char *name;
        bool deltas, thresholds, skip;
    } modes[3] = {
        {"full XFORM every tick", false, false, false},
        {"deltas (XFORM_D)", true, false, true},
        {"deltas + thresholds", true, true, true},
    };
    uint8_t *files[3];
    size_t lens[3];
    printf("walkers-20: %d characters (%d tilted vehicles), %d Hz, %d s, ~60%% moving at 16/24 "
           "studs/s, turning up to 180 deg/s; keyframe every 150 ticks\n\n",
           WALKERS, VEHICLES, HZ, SECONDS);
    printf("| mode | file bytes | bytes/s | KB/s (1024) | bytes/tick |\n|---|---:|---:|---:|---:|\n");
    for (int m = 0; m < 3; m++) {
        dg_rply_writer_config cfg;
        dg_rply_writer_config_default(&cfg);
        cfg.use_deltas = modes[m].deltas;
        cfg.use_thresholds = modes[m].thresholds;
        cfg.skip_unchanged = modes[m].skip;
        files[m] = record(&cfg, &lens[m]);
        printf("| %s | %zu | %.0f | %.3f | %.1f |\n", modes[m].name, lens[m],
               (double)lens[m] / SECONDS, (double)lens[m] / SECONDS / 1024.0,
               (double)lens[m] / TICKS);
    }
    printf("\nsession: %.1f%% of samples moving, %.1f%% moving and turning\n",
           100.0 * moving_samples / total_samples, 100.0 * turning_samples / total_samples);
    printf("target: deltas + thresholds <= 1.3 KB/s -> %s\n\n",
           (double)lens[2] / SECONDS / 1024.0 <= 1.3 ? "met" : "NOT met");

    printf("| file | ops/file | decode ops/s | validate ops/s | read+rebuild ops/s |\n"
           "|---|---:|---:|---:|---:|\n");
    for (int m = 0; m < 3; m++) {
        dg_rply_file f;
        if (dg_rply_file_open(&f, files[m], lens[m], 0, NULL) != DG_OK)
            abort();
        timing d = time_decode(&f, min_s);
        timing v = time_validate(&f, d.ops, min_s);
        timing r = time_rebuild(files[m], lens[m], min_s);
        printf("| %s | %llu | %.1f M | %.1f M | %.1f M |\n", modes[m].name,
               (unsigned long long)d.ops, d.ops_per_s / 1e6, v.ops_per_s / 1e6,
               r.ops_per_s / 1e6);
        dg_rply_file_close(&f);
    }
    printf("\ntarget: read+rebuild >= 30 M ops/s on one core\n");
    for (int m = 0; m < 3; m++)
        free(files[m]);
    return 0;
}
