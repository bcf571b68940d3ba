/* bench/flrep/bench_seek.c — the cost of verify's seeks on a real recording (docs/PERFORMANCE.md
 * "Real engines"): N reproducible random ticks, sorted, seeked and read forwards (ascending: a tick
 * ahead in the reader's chunk is reached from where it stands) and rewinding (descending: each a
 * roll from the chunk's keyframe), and one seek to every chunk's first and last tick, on one
 * reader. Prints milliseconds of CPU per pass, best of 20.
 *
 *   detgate verify long -j 2 -q --keep /tmp/long.flrep     # in examples/engines/<name>
 *   bench_seek /tmp/long.flrep [N]                         # N random ticks, default 32 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "detgate/flrep.h"

#define BENCH_NAME "bench_seek"
#include "bench_util.h"



static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Seeks to and reads each of ticks[0..n) in order; CPU seconds. */
static double pass(dg_flrep_reader *r, const uint64_t *ticks, size_t n, int step)
{
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_tick t;
    double t0 = now_s();
    for (size_t i = 0; i < n; i++) {
        uint64_t tick = ticks[step > 0 ? i : n - 1 - i];
        if (dg_flrep_reader_seek(r, tick, &err) != DG_OK || dg_flrep_reader_next(r, &t, &err) != 1)
            die(&err);
    }
    return now_s() - t0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_seek FILE.flrep [N]\n");
        return 2;
    }
    size_t n = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 32;
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_reader *r = NULL;
    if (dg_flrep_reader_open_file(&r, argv[1], NULL, &err) != DG_OK)
        die(&err);
    const dg_flrep_file_info *in = dg_flrep_reader_info(r);
    if (in->tick_count == 0 || n == 0)
        return 0;
    uint64_t *ticks = malloc((n > 2 * in->chunk_count ? n : 2 * in->chunk_count) * sizeof *ticks);
    if (!ticks)
        return 1;
    uint64_t z = 0x5EEC;
    for (size_t i = 0; i < n; i++) { /* a tick of the index's range: the recordings here have no gaps */
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        ticks[i] = in->first_tick + (z >> 33) % in->tick_count;
    }
    qsort(ticks, n, sizeof *ticks, cmp_u64);
    double fwd = 1e9, back = 1e9, edges = 1e9;
    for (int rep = 0; rep < 20; rep++) {
        double f = pass(r, ticks, n, 1), b = pass(r, ticks, n, -1);
        fwd = f < fwd ? f : fwd;
        back = b < back ? b : back;
    }
    for (size_t k = 0; k < in->chunk_count; k++) {
        ticks[2 * k] = in->chunks[k].first_tick;
        ticks[2 * k + 1] = in->chunks[k].last_tick;
    }
    for (int rep = 0; rep < 20; rep++) {
        double e = pass(r, ticks, 2 * in->chunk_count, 1);
        edges = e < edges ? e : edges;
    }
    printf("%s: %zu chunks, %llu ticks; %zu random ticks: forwards %.2f ms, rewinding %.2f ms; every chunk's first "
           "and last tick: %.2f ms (CPU, best of 20)\n",
           argv[1], in->chunk_count, (unsigned long long)in->tick_count, n, fwd * 1e3, back * 1e3, edges * 1e3);
    free(ticks);
    dg_flrep_reader_close(r);
    return 0;
}
