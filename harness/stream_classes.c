/* harness/stream_classes.c — groups hash streams into classes of streams that are equal tick for tick
 * (`detgate matrix`: the configurations that record identically, and inside those the ones whose raw
 * floats are identical too). */
#include "harness_internal.h"

static bool streams_equal(const harness__stream *a, const harness__stream *b, bool by_raw)
{
    uint64_t first[1], first_raw;
    size_t nf;
    uint64_t nd = dg_harness__compare_streams(NULL, a, b, DG_REPORT_TICK_NONE, first, 1, &nf, &first_raw);
    return nd == 0 && (!by_raw || first_raw == DG_REPORT_TICK_NONE);
}

size_t dg_harness__stream_classes(const harness__stream *const *s, size_t n, bool by_raw, size_t *cls, size_t *reps)
{
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) {
        cls[i] = SIZE_MAX;
        if (!s[i])
            continue;
        /* equality is transitive: comparing with each class's first member is enough */
        for (size_t c = 0; c < nc && cls[i] == SIZE_MAX; c++)
            if (streams_equal(s[reps[c]], s[i], by_raw))
                cls[i] = c;
        if (cls[i] == SIZE_MAX) {
            reps[nc] = i;
            cls[i] = nc++;
        }
    }
    return nc;
}
