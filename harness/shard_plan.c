/* harness/shard_plan.c — the shard plan (longest first over golden costs) and the corpus id of a
 * sharded gate run; see shard_plan.h. */
#include "shard_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

typedef struct plan_item {
    uint64_t cost;
    size_t index;
} plan_item;

/* Cost descending, then name order: a total order, so qsort's instability cannot show. */
static int cmp_costly_first(const void *a, const void *b)
{
    const plan_item *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost < y->cost ? 1 : -1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static uint32_t least_loaded(const uint64_t *load, uint32_t shards)
{
    uint32_t best = 0;
    for (uint32_t s = 1; s < shards; s++)
        if (load[s] < load[best])
            best = s;
    return best;
}

bool dg_harness__shard_plan(const uint64_t *cost, size_t n, uint32_t shards, uint32_t *shard_of, uint64_t *load)
{
    plan_item *items = malloc((n ? n : 1) * sizeof *items);
    uint64_t *sum = calloc(shards ? shards : 1, sizeof *sum);
    if (!items || !sum || shards == 0) {
        free(items);
        free(sum);
        return false;
    }
    for (size_t i = 0; i < n; i++)
        items[i] = (plan_item){cost[i], i};
    qsort(items, n, sizeof *items, cmp_costly_first);
    for (size_t k = 0; k < n; k++) {
        uint32_t s = least_loaded(sum, shards);
        shard_of[items[k].index] = s;
        sum[s] = sum[s] > UINT64_MAX - items[k].cost ? UINT64_MAX : sum[s] + items[k].cost;
    }
    if (load)
        memcpy(load, sum, shards * sizeof *sum);
    free(items);
    free(sum);
    return true;
}

bool dg_harness__corpus_id(const char *format, const char *const *names, const uint64_t *cost, size_t n, char out[17])
{
    static const unsigned char zero = 0;
    XXH3_state_t *xs = XXH3_createState();
    if (!xs)
        return false;
    XXH3_64bits_reset(xs);
    XXH3_64bits_update(xs, format, strlen(format));
    XXH3_64bits_update(xs, &zero, 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char le[8];
        for (int b = 0; b < 8; b++)
            le[b] = (unsigned char)(cost[i] >> (8 * b));
        XXH3_64bits_update(xs, names[i], strlen(names[i]));
        XXH3_64bits_update(xs, &zero, 1);
        XXH3_64bits_update(xs, le, sizeof le);
    }
    snprintf(out, 17, "%016llx", (unsigned long long)XXH3_64bits_digest(xs));
    XXH3_freeState(xs);
    return true;
}
