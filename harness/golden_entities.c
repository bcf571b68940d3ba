/* harness/golden_entities.c — the sampled entity log a hash-log-only golden keeps beside its hash
 * log (NAME.entities.hashlog.zst): the entity hashes of every K-th tick of the blessed recording,
 * K chosen so the file holds at most DG_HARNESS_ENTITY_LINES_MAX entity lines, so a gate that
 * fails against such a golden can still say which entities diverged and how the divergence spread
 * (harness/hash_views.c). docs/CLI.md ("bless") says why sampled and how large. */
#include "harness_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dg_harness__entities_log_path(char *buf, size_t cap, const char *dir, const char *name)
{
    snprintf(buf, cap, "%.3900s/%s.entities.hashlog.zst", dir, name);
}

uint64_t dg_harness__entity_every(uint64_t entity_ticks)
{
    uint64_t k = (entity_ticks + DG_HARNESS_ENTITY_LINES_MAX - 1) / DG_HARNESS_ENTITY_LINES_MAX;
    return k ? k : 1;
}

/* Every tick of the recording at path whose number is a multiple of every, with its entity lines. */
static dg_status write_samples(const char *rec_path, const char *log_path, const char *name, uint64_t every,
                               dg_error *err)
{
    dg_flrep_reader *r = NULL;
    dg_status st = dg_flrep_reader_open_file(&r, rec_path, NULL, err);
    if (st != DG_OK)
        return st;
    dg_hash_log_header lh = {.entities = true};
    snprintf(lh.scenario, sizeof lh.scenario, "%s", name);
    snprintf(lh.format, sizeof lh.format, "flrep");
    dg_hash_log_writer *w = NULL;
    st = dg_hash_log_writer_open(&w, log_path, &lh, err);
    size_t nx = dg_harness__reader_fields(r), cap = 0;
    uint32_t *ids = NULL;
    uint64_t *eh = NULL;
    dg_flrep_tick t;
    int rc = 1;
    while (st == DG_OK && (rc = dg_flrep_reader_next(r, &t, err)) == 1) {
        if (t.tick % every != 0)
            continue;
        if (t.ent_count > cap) {
            free(ids);
            free(eh);
            cap = t.ent_count;
            ids = malloc(cap * sizeof *ids);
            eh = malloc(cap * sizeof *eh);
            if (!ids || !eh) {
                st = dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, log_path, "out of memory for %zu entities", cap);
                break;
            }
        }
        dg_tick_hash th = dg_harness__hash_read_tick(&t, nx, eh);
        for (size_t i = 0; i < t.ent_count; i++)
            ids[i] = t.ents[i].id;
        dg_hash_log_tick lt = {.tick = t.tick, .entity_count = (uint32_t)t.ent_count, .state = th.state,
                               .events = th.events, .ids = ids, .hashes = eh};
        st = dg_hash_log_writer_write(w, &lt, err);
    }
    if (st == DG_OK && rc < 0)
        st = err->code;
    dg_status cst = w ? dg_hash_log_writer_close(w, st == DG_OK ? err : NULL) : DG_OK;
    free(ids);
    free(eh);
    dg_flrep_reader_close(r);
    return st == DG_OK ? cst : st;
}

dg_status dg_harness__bless_entities(const char *golden, const char *name, const char *rec_path, bool wanted,
                                     uint64_t entity_ticks, uint64_t *every, dg_error *err)
{
    char final[4096], tmp[4200];
    dg_harness__entities_log_path(final, sizeof final, golden, name);
    *every = 0;
    if (!wanted) { /* the recording is the golden: a sampled log of an earlier bless would go stale */
        if (remove(final) != 0 && errno != ENOENT)
            return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, final, "cannot remove the stale entity log: %s",
                                strerror(errno));
        return DG_OK;
    }
    if (!dg_harness__temp_path(tmp, sizeof tmp, golden, name, ".entities.hashlog.zst"))
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, golden, "expected a shorter golden folder path");
    uint64_t k = dg_harness__entity_every(entity_ticks);
    dg_status st = write_samples(rec_path, tmp, name, k, err);
    if (st == DG_OK && rename(tmp, final) != 0)
        st = dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, final, "cannot rename %s to it: %s", tmp, strerror(errno));
    if (st != DG_OK)
        remove(tmp);
    else
        *every = k;
    return st;
}
