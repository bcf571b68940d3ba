/* bench/flrep/bench_flrep2d.c — format 2.0 on a Box2D-like stream (docs/PERFORMANCE.md "Declared
 * fields"): a pyramid of 1 m boxes settling under gravity, generated here. Schema: position,
 * velocity, rotation (no type, faction, health, flags), quanta 1/1024 m and 1/1024 m/s, declared
 * `angvel` (float, 1/4096 rad/s) and `awake` (bool). Prints the .flrep bytes/tick against zstd
 * level 19 of the same quantized values written as raw fixed-width records, and the replay side's
 * throughput (read + rebuild, extras present).
 *
 *   bench_flrep2d [ROWS [TICKS]]     size (default 25 rows = 325 boxes, 600 ticks = 10 s at 60 Hz)
 *   bench_flrep2d --read ROWS TICKS [awake]   throughput, best of 5 ("awake": boxes never settle) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "detgate/flrep.h"

#define BENCH_NAME "bench_flrep2d"
#include "bench_util.h"



/* ---- the world: boxes settling on the ones below ------------------------------------------------- */
typedef struct box {
    double rest_x, rest_y;
    double x, y, a;          /* position (m), angle (rad) */
    double vx, vy, w;        /* velocity (m/s), angular velocity (rad/s) */
    int still;               /* ticks below the sleep thresholds */
    bool awake;
} box;

static uint64_t g_rng = 0x2545F4914F6CDD1Du;
static double urand(void)   /* [-1, 1) */
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (double)(g_rng >> 11) / (double)(UINT64_C(1) << 52) - 1.0;
}

static box *pyramid(int rows, size_t *n)
{
    *n = (size_t)rows * (size_t)(rows + 1) / 2;
    box *b = calloc(*n, sizeof *b);
    size_t k = 0;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < rows - r; c++, k++) {
            b[k].rest_x = ((double)c - (double)(rows - r - 1) / 2.0) * 1.02;
            b[k].rest_y = 0.5 + (double)r;
            b[k].x = b[k].rest_x + 0.01 * urand();
            b[k].y = b[k].rest_y + 0.02 + 0.01 * (double)r;   /* dropped into place from a small gap */
            b[k].a = 0.05 * urand();
            b[k].awake = true;
        }
    return b;
}

/* One 1/60 s step: gravity, a stiff damped contact toward the rest pose, contact noise that dies
 * out; a box whose speeds stay below 1 cm/s and 0.01 rad/s for 30 ticks sleeps (speeds exactly 0).
 * `never_sleep` keeps every box jittering (the worst case for the codec). */
static void step(box *b, size_t n, bool never_sleep, int tick)
{
    const double dt = 1.0 / 60, k = 400.0, c = 12.0;
    double noise = never_sleep ? 0.02 : 0.02 * exp(-(double)tick / 60.0);
    for (size_t i = 0; i < n; i++) {
        box *q = &b[i];
        if (!q->awake)
            continue;
        double ay = -9.81, ax = 0, aw = 0;
        double pen = q->rest_y - q->y;   /* > 0: pressed into the box below */
        if (pen > -0.001)
            ay += k * pen - c * q->vy + 9.81;
        ax = -k * (q->x - q->rest_x) * 0.5 - c * q->vx;
        aw = -k * q->a - c * q->w;
        ax += noise * 30.0 * urand();
        aw += noise * 60.0 * urand();
        q->vx += ax * dt;
        q->vy += ay * dt;
        q->w += aw * dt;
        q->x += q->vx * dt;
        q->y += q->vy * dt;
        q->a += q->w * dt;
        bool slow = fabs(q->vx) < 0.01 && fabs(q->vy) < 0.01 && fabs(q->w) < 0.01;
        q->still = slow ? q->still + 1 : 0;
        if (q->still >= 30 && !never_sleep) {
            q->awake = false;
            q->vx = q->vy = q->w = 0.0;
        }
    }
}

enum { F_ANGVEL, F_AWAKE, NF };
static const dg_field_def k_fields[NF] = {
    {"angvel", "rad/s", DG_FIELD_FLOAT, 0, 1.0 / 4096, NULL, 0},
    {"awake", "", DG_FIELD_BOOL, 0, 0, NULL, 0},
};
static const dg_schema k_schema = {DG_STD_POS | DG_STD_VEL | DG_STD_ROT, 1.0 / 1024, 1.0 / 1024, k_fields, NF};

/* The raw fixed-width record of one box (40 bytes): u32 id, i32 pos[3], i32 vel[3], u8 rotLargest,
 * i16 rot[3], i32 angvel quanta, u8 awake, 2 bytes of zero padding. */
static void put_raw(uint8_t *o, const dg_qentity *q, const int64_t *x)
{
    uint8_t *p = o;
#define PUT(v, n) do { uint64_t v_ = (uint64_t)(v); for (int i_ = 0; i_ < (n); i_++) *p++ = (uint8_t)(v_ >> (8 * i_)); } while (0)
    PUT(q->id, 4);
    for (int i = 0; i < 3; i++)
        PUT((uint32_t)q->pos[i], 4);
    for (int i = 0; i < 3; i++)
        PUT((uint32_t)q->vel[i], 4);
    PUT(q->rot_largest, 1);
    for (int i = 0; i < 3; i++)
        PUT((uint16_t)q->rot[i], 2);
    PUT((uint32_t)(int32_t)x[F_ANGVEL], 4);
    PUT(x[F_AWAKE], 1);
    PUT(0, 2);
#undef PUT
}

/* Records the stream to path; the raw records of every tick go to *raw (u64 tick, u32 count, the
 * records) when raw is non-NULL. Returns the file size; *awake_et counts awake entity-ticks. */
static long record(const char *path, int rows, int ticks, bool never_sleep, int level, uint8_t **raw, size_t *raw_len,
                   uint64_t *awake_et)
{
    dg_flrep_writer_opts opts = {.zstd_level = level};
    size_t n;
    g_rng = 0x2545F4914F6CDD1Du;
    box *b = pyramid(rows, &n);
    dg_entity_in *in = calloc(n, sizeof *in);
    int64_t *x = calloc(n * NF, sizeof *x);
    dg_qentity *q = calloc(n, sizeof *q);
    int64_t *qx = calloc(n * NF, sizeof *qx);
    dg_flrep_header h;
    memset(&h, 0, sizeof h);
    h.engine_version = dg_flrep_cstr("detgate-bench-2d");
    h.tick_rate_hz = 60;
    h.planet_radius_m = 0.0;
    h.keyframe_interval_ticks = 120;
    h.schema = &k_schema;
    dg_flrep_writer *w;
    dg_error err;
    dg_error_clear(&err);
    if (dg_flrep_writer_open(&w, path, &h, &opts, &err))
        die(&err);
    size_t rec = 40, cap = raw ? (size_t)ticks * (12 + n * rec) : 0, len = 0;
    uint8_t *r = raw ? malloc(cap) : NULL;
    *awake_et = 0;
    for (int t = 0; t < ticks; t++) {
        step(b, n, never_sleep, t);
        for (size_t i = 0; i < n; i++) {
            memset(&in[i], 0, sizeof in[i]);
            in[i].id = (uint32_t)(i + 1);
            in[i].pos[0] = b[i].x;
            in[i].pos[1] = b[i].y;
            in[i].vel[0] = b[i].vx;
            in[i].vel[1] = b[i].vy;
            in[i].rot[0] = cos(b[i].a / 2);
            in[i].rot[3] = sin(b[i].a / 2);
            if (dg_schema_quant_float(&k_fields[F_ANGVEL], b[i].w, &x[i * NF + F_ANGVEL], &err))
                die(&err);
            x[i * NF + F_AWAKE] = b[i].awake;
            *awake_et += b[i].awake;
        }
        if (dg_flrep_writer_tick_x(w, (uint64_t)t, in, x, n, NULL, 0, q, qx, &err))
            die(&err);
        if (r) {
            for (int k = 0; k < 8; k++)
                r[len++] = (uint8_t)((uint64_t)t >> (8 * k));
            for (int k = 0; k < 4; k++)
                r[len++] = (uint8_t)((uint32_t)n >> (8 * k));
            for (size_t i = 0; i < n; i++, len += rec)
                put_raw(r + len, &q[i], qx + i * NF);
        }
    }
    if (dg_flrep_writer_close(w, &err))
        die(&err);
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    fclose(f);
    if (raw) {
        *raw = r;
        *raw_len = len;
    }
    free(b);
    free(in);
    free(x);
    free(q);
    free(qx);
    return bytes;
}

static double read_all(const char *path, uint64_t *et_out)
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
        sum += t.ent_count ? (uint64_t)t.extras[(t.ent_count - 1) * NF] : 0;
    }
    if (rc < 0)
        die(&err);
    dg_flrep_reader_close(r);
    double spent = now_s() - t0;
    *et_out = et + (sum & 0);
    return spent;
}

int main(int argc, char **argv)
{
    const char *path = "/tmp/bench_flrep2d.flrep";
    if (argc >= 4 && strcmp(argv[1], "--read") == 0) {
        int rows = atoi(argv[2]), ticks = atoi(argv[3]);
        bool never = argc > 4 && strcmp(argv[4], "awake") == 0;
        uint64_t awake = 0;
        long bytes = record(path, rows, ticks, never, 0, NULL, NULL, &awake);
        double best = 1e9;
        uint64_t et = 0;
        for (int rep = 0; rep < 5; rep++) {
            double s = read_all(path, &et);
            best = s < best ? s : best;
        }
        printf("read %s: %llu entity-ticks (%.0f %% awake), %ld bytes: %.1f M entity-ticks/s (best of 5)\n",
               never ? "never settling" : "settling", (unsigned long long)et, 100.0 * (double)awake / (double)et, bytes,
               (double)et / best / 1e6);
        remove(path);
        return 0;
    }
    int rows = argc > 1 ? atoi(argv[1]) : 25, ticks = argc > 2 ? atoi(argv[2]) : 600;
    uint8_t *raw = NULL;
    size_t raw_len = 0;
    uint64_t awake = 0;
    long bytes = record(path, rows, ticks, false, 0, &raw, &raw_len, &awake);
    uint64_t unused;
    long bytes19 = record(path, rows, ticks, false, 19, NULL, NULL, &unused);
    size_t bound = ZSTD_compressBound(raw_len);
    uint8_t *z = malloc(bound);
    size_t zlen = ZSTD_compress(z, bound, raw, raw_len, 19);
    if (ZSTD_isError(zlen)) {
        fprintf(stderr, "bench_flrep2d: zstd: %s\n", ZSTD_getErrorName(zlen));
        return 1;
    }
    size_t n = (size_t)rows * (size_t)(rows + 1) / 2;
    printf("boxes %zu, ticks %d (%.0f %% of entity-ticks awake)\n", n, ticks,
           100.0 * (double)awake / ((double)n * ticks));
    printf("| form | bytes | bytes/tick |\n|---|---|---|\n");
    printf("| .flrep 2.0 (whole file, zstd -1 inside) | %ld | %.1f |\n", bytes, (double)bytes / ticks);
    printf("| .flrep 2.0, the writer's zstd at level 19 | %ld | %.1f |\n", bytes19, (double)bytes19 / ticks);
    printf("| raw fixed-width records (40 B/box) | %zu | %.1f |\n", raw_len, (double)raw_len / ticks);
    printf("| raw records, zstd level 19 | %zu | %.1f |\n", zlen, (double)zlen / ticks);
    free(raw);
    free(z);
    remove(path);
    return 0;
}
