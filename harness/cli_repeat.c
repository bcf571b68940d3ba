/* harness/cli_repeat.c — `detgate verify SCENARIO --repeat N`: the scenario runs N times in the same
 * build and every run must record what the first did (threads, uninitialised memory, clocks, hash-map
 * order change between runs). A run that differs is a failed "repeat" check, diffed against the first
 * run's recording down to tick, entity and field, like any other divergence. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* Records one more run of scenario into path (and its raw floats into raw_log, may be NULL); fills rec. */
static dg_status record_again(const char *scenario, const cli_run_opts *o, const char *path, const char *raw_log,
                              harness__stream *rec, dg_error *err)
{
    harness__source *src = NULL;
    dg_status st = cli_open_source(scenario, o, &src, err);
    /* a temporary recording, removed once compared: not forced to disk */
    harness__record_opts ro = {.format_name = o->format->name, .keyframe = o->keyframe, .raw_log = raw_log,
                               .fsync = DG_FLREP_FSYNC_NONE};
    if (st == DG_OK)
        st = o->format->record(src, path, &ro, rec, err);
    dg_harness__source_free(src);
    return st;
}

int cli_verify_repeat(dg_report_scenario *sc, const char *scenario, const cli_run_opts *o, const char *first_path,
                      const harness__stream *first)
{
    double t0 = dg_harness__now();
    dg_report_check *c = dg_report_add_check(sc, "repeat", DG_REPORT_PASS);
    if (!c)
        return -1;
    int result = 0;
    for (unsigned k = 2; k <= o->repeat && result == 0; k++) {
        char path[4096], raw_log[4096] = "";
        dg_harness__temp_path(path, sizeof path, NULL, sc->name, o->format->ext);
        if (o->raw_log) /* run 1 kept its raw floats: so does this run */
            dg_harness__temp_path(raw_log, sizeof raw_log, NULL, sc->name, ".raw.hashlog");
        const char *raw_logs[2] = {o->raw_log, raw_log};
        harness__stream rec = {0};
        dg_error err;
        dg_error_clear(&err);
        if (record_again(scenario, o, path, raw_log[0] ? raw_log : NULL, &rec, &err) != DG_OK) {
            char buf[600];
            dg_error_format(&err, buf, sizeof buf);
            c->status = DG_REPORT_ERROR;
            dg_report_check_set_message(c, "run %u of %u could not record: %s", k, o->repeat, buf);
            result = -1;
        } else {
            result = dg_harness__repeat_compare(c, first_path, first, path, &rec, k, o->format,
                                                raw_log[0] ? raw_logs : NULL, NULL);
        }
        dg_harness__stream_free(&rec);
        remove(path);
        if (raw_log[0])
            remove(raw_log);
    }
    dg_harness__repeat_conclude(c, o->repeat, first, result);
    c->duration_s = dg_harness__now() - t0;
    return result;
}
