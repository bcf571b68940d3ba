/* harness/format_flrep.c — the .flrep row of the formats table: the record side (engine.c), the
 * replay side (replay_parallel.c), the verify checks (verify.c: record-vs-replay, seek, recovery) and
 * the comparisons (compare.c) of the codec's own format, plus its whole-file read and its index. */
#include "format.h"

static dg_status flrep_validate(const char *path, dg_error *err)
{
    dg_flrep_reader *r = NULL;
    dg_status st = dg_flrep_reader_open_file(&r, path, NULL, err);
    if (st == DG_OK)
        st = dg_flrep_reader_validate(r, err);
    dg_flrep_reader_close(r);
    return st;
}

static bool flrep_span(const char *path, uint64_t *ticks, uint64_t *last)
{
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_reader *r = NULL;
    bool ok = dg_flrep_reader_open_file(&r, path, NULL, &err) == DG_OK;
    if (ok) {
        const dg_flrep_file_info *in = dg_flrep_reader_info(r);
        *ticks = in->tick_count;
        *last = in->last_tick;
    }
    dg_flrep_reader_close(r);
    return ok;
}

const harness__format dg_harness__format_flrep = {
    .name = "flrep",
    .ext = ".flrep",
    .log_suffix = ".hashlog.zst",
    .label = ".flrep",
    .magic = {'F', 'L', 'R', 'P'},
    .replay_faults = true,
    .record_log = true,
    .entity_views = true,
    .follow = true,
    .record = dg_harness__record,
    .replay_hash = dg_harness__replay_hash_jobs,
    .verify = dg_harness__verify_file,
    .compare_files = dg_harness__compare_files,
    .compare_headers = dg_harness__compare_headers,
    .validate = flrep_validate,
    .span = flrep_span,
};
