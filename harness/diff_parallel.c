/* harness/diff_parallel.c — two .flrep recordings diffed with threads to spare: both are replayed at
 * once (each cut by chunks, harness/replay_parallel.c) and their hash streams merged on tick number;
 * the lockstep diff (compare.c) then starts at the first tick that differs, its readers sought
 * there. Before that tick the two sides are equal, so the lockstep pass has nothing to add there:
 * the report is the one-thread pass's. Any read error in the replays leaves the whole file to the
 * lockstep pass, which says what went wrong exactly as it would alone. */
#include "harness_internal.h"

#include <string.h>

typedef struct pre_job {
    const char *path[2];
    unsigned jobs;
    harness__stream s[2];
    dg_status st[2];
} pre_job;

static void pre_replay(void *arg, size_t i)
{
    pre_job *j = arg;
    dg_error err; /* not reported: the lockstep pass reads the file again and names any error */
    dg_error_clear(&err);
    harness__replay_opts ro = {UINT64_MAX, NULL, false, j->jobs, NULL, NULL};
    j->st[i] = dg_harness__replay_hash_jobs(j->path[i], &ro, &j->s[i], &err);
}

/* Where the lockstep walk of sa and sb finds its first difference: *ia, *ib index it (n = ended). */
static void first_difference(const harness__stream *sa, const harness__stream *sb, size_t *ia, size_t *ib,
                             uint64_t *b_entity_ticks)
{
    size_t i = 0, j = 0;
    uint64_t et = 0;
    while (i < sa->n && j < sb->n && sa->v[i].tick == sb->v[j].tick && sa->v[i].combined == sb->v[j].combined) {
        et += sb->v[j].count;
        i++;
        j++;
    }
    *ia = i;
    *ib = j;
    *b_entity_ticks = et;
}

/* Both readers again from the start (a seek the replays did not need failed: start over). */
static dg_status reopen(const char *pa, const char *pb, dg_flrep_reader **ra, dg_flrep_reader **rb, dg_error *err)
{
    dg_flrep_reader_close(*ra);
    dg_flrep_reader_close(*rb);
    *ra = *rb = NULL;
    dg_status st = dg_flrep_reader_open_file(ra, pa, NULL, err);
    return st == DG_OK ? dg_flrep_reader_open_file(rb, pb, NULL, err) : st;
}

dg_status dg_harness__diff_skip_equal(const char *pa, const char *pb, dg_flrep_reader **ra, dg_flrep_reader **rb,
                                   harness__diff_skip *out, dg_error *err)
{
    memset(out, 0, sizeof *out);
    unsigned spare = dg_harness__cpu_spare();
    if (spare == 0)
        return DG_OK;
    pre_job j = {{pa, pb}, (spare + 1) / 2 + 1, {{0}, {0}}, {DG_OK, DG_OK}};
    dg_harness__run_parallel(pre_replay, &j, 2);
    dg_status st = DG_OK;
    size_t ia = 0, ib = 0;
    uint64_t et = 0;
    if (j.st[0] == DG_OK && j.st[1] == DG_OK)
        first_difference(&j.s[0], &j.s[1], &ia, &ib, &et);
    if (ia > 0) { /* else nothing to skip: the lockstep pass starts at the first tick anyway */
        uint64_t ta = ia < j.s[0].n ? j.s[0].v[ia].tick : UINT64_MAX;
        uint64_t tb = ib < j.s[1].n ? j.s[1].v[ib].tick : UINT64_MAX;
        uint64_t at = ta < tb ? ta : tb; /* the first divergent tick; past both ends: none */
        dg_error scratch;
        dg_error_clear(&scratch);
        out->a_end = ia == j.s[0].n;
        out->b_end = ib == j.s[1].n;
        bool moved = (out->a_end || dg_flrep_reader_seek(*ra, at, &scratch) == DG_OK) &&
                     (out->b_end || dg_flrep_reader_seek(*rb, at, &scratch) == DG_OK);
        if (moved) {
            out->b_entity_ticks = et;
        } else {
            memset(out, 0, sizeof *out);
            st = reopen(pa, pb, ra, rb, err);
        }
    }
    dg_harness__stream_free(&j.s[0]);
    dg_harness__stream_free(&j.s[1]);
    return st;
}
