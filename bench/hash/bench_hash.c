/* bench/hash/bench_hash.c — throughput of the state hash alone (entity-ticks per second on one
 * core), plus the raw-float hash and the hash-log writer for context. Results go to
 * docs/PERFORMANCE.md "## State hash"; the target is >= 100 million entity-ticks/s.
 *
 *   bench_hash [--entities N] [--ticks T] [--reps R] [--log PATH]
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "detgate/hash.h"

#define BENCH_FRAMES 4 /* distinct states cycled through, so nothing is the same tick twice in a row */
#define BENCH_RAW_FIELDS 14 /* pos 3, vel 3, rot 4, health, plus 3 extras a simulation might keep */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void make_frames(dg_qentity *f, double *raw, size_t n)
{
    uint64_t s = 0x243f6a8885a308d3u;
    for (size_t k = 0; k < BENCH_FRAMES; k++) {
        for (size_t i = 0; i < n; i++) {
            dg_qentity *e = &f[k * n + i];
            memset(e, 0, sizeof *e);
            e->id = (uint32_t)(i * 2 + 1);
            e->type_index = (uint16_t)(rng(&s) % 12);
            e->faction_index = (uint16_t)(rng(&s) % 4);
            for (int a = 0; a < 3; a++) {
                e->pos[a] = (int32_t)(rng(&s) % 2000000) - 1000000;
                e->vel[a] = (int32_t)(rng(&s) % 4000) - 2000;
                e->rot[a] = (int16_t)(rng(&s) % 46000 - 23000);
            }
            e->rot_largest = (uint8_t)(rng(&s) % 4);
            e->health = (uint16_t)(rng(&s) % 10001);
            e->flags = (uint16_t)rng(&s);
            for (int j = 0; j < BENCH_RAW_FIELDS; j++)
                raw[(k * n + i) * BENCH_RAW_FIELDS + (size_t)j] = (double)(rng(&s) % 1000000) / 7.0;
        }
    }
}

typedef struct bench_ctx {
    const dg_qentity *frames;
    const double *raw;
    size_t n;
    uint64_t ticks;
    uint64_t *eh;
    uint64_t sink;
} bench_ctx;

/* Folds every result into one order-dependent checksum: keeps the work observable and lets two
 * builds (gcc/clang, -O0/-O3) show they computed the same hashes. */
static void bench_mix(bench_ctx *c, uint64_t h) { c->sink = (c->sink ^ h) * UINT64_C(0x100000001b3); }

static void run_tick_with_entity_hashes(bench_ctx *c)
{
    for (uint64_t t = 0; t < c->ticks; t++) {
        const dg_qentity *f = c->frames + (t % BENCH_FRAMES) * c->n;
        dg_tick_hash th = dg_hash_tick(t, f, c->n, NULL, 0, c->eh);
        bench_mix(c, th.combined ^ c->eh[t % c->n]);
    }
}

static void run_tick_only(bench_ctx *c)
{
    for (uint64_t t = 0; t < c->ticks; t++) {
        const dg_qentity *f = c->frames + (t % BENCH_FRAMES) * c->n;
        bench_mix(c, dg_hash_tick(t, f, c->n, NULL, 0, NULL).combined);
    }
}

static void run_tick_checked(bench_ctx *c)
{
    for (uint64_t t = 0; t < c->ticks; t++) {
        const dg_qentity *f = c->frames + (t % BENCH_FRAMES) * c->n;
        dg_tick_hash th;
        if (dg_hash_tick_checked(t, f, c->n, NULL, 0, c->eh, &th, NULL) != DG_OK)
            abort();
        bench_mix(c, th.combined);
    }
}

static void run_raw(bench_ctx *c)
{
    for (uint64_t t = 0; t < c->ticks; t++) {
        size_t k = (size_t)(t % BENCH_FRAMES);
        dg_hash_stream s;
        dg_hash_raw_begin(&s, t);
        for (size_t i = 0; i < c->n; i++)
            dg_hash_raw_entity(&s, c->frames[k * c->n + i].id, c->raw + (k * c->n + i) * BENCH_RAW_FIELDS,
                               BENCH_RAW_FIELDS);
        bench_mix(c, dg_hash_raw_end(&s));
    }
}

typedef struct bench_case {
    const char *name;
    void (*fn)(bench_ctx *);
} bench_case;

static double best_rate(const bench_case *bc, bench_ctx *c, int reps)
{
    double best = 0.0;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        bc->fn(c);
        double dt = now_s() - t0;
        double rate = (double)c->ticks * (double)c->n / dt;
        if (rate > best)
            best = rate;
    }
    return best;
}

/* Reads the log twice in lockstep (a log compared with itself): the gate's golden-vs-fresh step. */
static int bench_log_compare(const char *path, double entity_ticks)
{
    dg_hash_log_reader *a = NULL, *b = NULL;
    dg_error err;
    dg_error_clear(&err);
    double t0 = now_s();
    dg_hash_log_cmp cmp;
    dg_status st = dg_hash_log_reader_open(&a, path, &err);
    if (st == DG_OK)
        st = dg_hash_log_reader_open(&b, path, &err);
    if (st == DG_OK)
        st = dg_hash_log_compare(a, b, &cmp, &err);
    double dt = now_s() - t0;
    dg_hash_log_reader_close(a);
    dg_hash_log_reader_close(b);
    if (st != DG_OK || cmp.verdict != DG_HASH_SAME) {
        fprintf(stderr, "bench_hash: compare: %s %s\n", err.where, err.msg);
        return 1;
    }
    printf("%-40s %10.1f M entity-ticks/s  (both sides parsed)\n", "compare verbose log with itself",
           entity_ticks / dt / 1e6);
    return 0;
}

static int bench_log(bench_ctx *c, const char *path)
{
    dg_hash_log_header h = {.scenario = "bench", .format = "none", .entities = true, .raw = false};
    dg_hash_log_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    uint32_t *ids = malloc(c->n * sizeof *ids);
    if (!ids || dg_hash_log_writer_open(&w, path, &h, &err) != DG_OK) {
        fprintf(stderr, "bench_hash: %s\n", err.msg);
        free(ids);
        return 1;
    }
    for (size_t i = 0; i < c->n; i++)
        ids[i] = c->frames[i].id;
    uint64_t ticks = c->ticks / 10 ? c->ticks / 10 : 1;
    double t0 = now_s();
    for (uint64_t t = 0; t < ticks; t++) {
        const dg_qentity *f = c->frames + (t % BENCH_FRAMES) * c->n;
        dg_tick_hash th = dg_hash_tick(t, f, c->n, NULL, 0, c->eh);
        dg_hash_log_tick lt = {.tick = t, .entity_count = th.entity_count, .state = th.state,
                               .events = th.events, .ids = ids, .hashes = c->eh};
        if (dg_hash_log_writer_write(w, &lt, &err) != DG_OK)
            break;
    }
    dg_status st = dg_hash_log_writer_close(w, &err);
    double dt = now_s() - t0;
    free(ids);
    if (st != DG_OK || err.code != DG_OK) {
        fprintf(stderr, "bench_hash: log: %s\n", err.msg);
        return 1;
    }
    printf("%-40s %10.1f M entity-ticks/s  (%s)\n", "hash + verbose log write", (double)ticks * (double)c->n / dt / 1e6, path);
    return bench_log_compare(path, (double)ticks * (double)c->n);
}

int main(int argc, char **argv)
{
    size_t n = 1000;
    uint64_t ticks = 20000;
    int reps = 5;
    const char *log_path = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--entities"))
            n = (size_t)strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--ticks"))
            ticks = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--log"))
            log_path = argv[i + 1];
        else {
            fprintf(stderr, "usage: %s [--entities N] [--ticks T] [--reps R] [--log PATH]\n", argv[0]);
            return 2;
        }
    }
    if (n == 0 || ticks == 0 || reps <= 0) {
        fprintf(stderr, "bench_hash: entities, ticks and reps must be > 0\n");
        return 2;
    }
    dg_qentity *frames = malloc(BENCH_FRAMES * n * sizeof *frames);
    double *raw = malloc(BENCH_FRAMES * n * BENCH_RAW_FIELDS * sizeof *raw);
    uint64_t *eh = malloc(n * sizeof *eh);
    if (!frames || !raw || !eh) {
        fprintf(stderr, "bench_hash: out of memory\n");
        return 1;
    }
    make_frames(frames, raw, n);
    bench_ctx c = {.frames = frames, .raw = raw, .n = n, .ticks = ticks, .eh = eh, .sink = 0};
    static const bench_case cases[] = {
        {"dg_hash_tick (+ entity hashes out)", run_tick_with_entity_hashes},
        {"dg_hash_tick (tick hash only)", run_tick_only},
        {"dg_hash_tick_checked (+ entity hashes)", run_tick_checked},
    };
    printf("state hash: %zu entities x %" PRIu64 " ticks, best of %d\n", n, ticks, reps);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double r = best_rate(&cases[i], &c, reps);
        printf("%-40s %10.1f M entity-ticks/s  (%.2f ns/entity)\n", cases[i].name, r / 1e6, 1e9 / r);
    }
    bench_case raw_case = {"raw float hash (14 f64/entity)", run_raw};
    double r = best_rate(&raw_case, &c, reps);
    printf("%-40s %10.1f M entity-ticks/s  (%.2f ns/entity)\n", raw_case.name, r / 1e6, 1e9 / r);
    int rc = log_path ? bench_log(&c, log_path) : 0;
    printf("(checksum %016" PRIx64 ")\n", c.sink);
    free(frames);
    free(raw);
    free(eh);
    return rc;
}
