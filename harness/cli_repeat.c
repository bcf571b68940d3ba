/* harness/cli_repeat.c — `detgate verify SCENARIO --repeat N`: the scenario runs N times in the same
 * build and every run must record what the first did (threads, uninitialised memory, clocks, hash-map
 * order change between runs). A run that differs is a failed "repeat" check, diffed against the first
 * run's recording down to tick, entity and field, like any other divergence. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* Records one more run of scenario into path; fills rec. */
static dg_status record_again(const char *scenario, const cli_run_opts *o, const char *path, harness__stream *rec,
                              dg_error *err)
{
    harness__source *src = NULL;
    dg_status st = cli_open_source(scenario, o, &src, err);
    harness__record_opts ro = {.format_name = "flrep"};
    if (st == DG_OK)
        st = o->rply ? harness__rply_record(src, path, o->keyframe, rec, err) : harness__record(src, path, &ro, rec, err);
    harness__source_free(src);
    return st;
}

/* Run k against run 1: 0 the same, 1 differs (c filled), -1 could not compare (c marked error). */
static int compare_run(dg_report_check *c, const char *first_path, const harness__stream *first, const char *path,
                       const harness__stream *rec, unsigned k, bool rply)
{
    uint64_t ft[1], first_raw;
    size_t nf;
    uint64_t nd = harness__compare_streams(NULL, first, rec, DG_REPORT_TICK_NONE, ft, 1, &nf, &first_raw);
    if (nd == 0) {
        if (first_raw != DG_REPORT_TICK_NONE && c->status == DG_REPORT_PASS && c->first_raw_tick == DG_REPORT_TICK_NONE)
            dg_report_check_set_raw_divergence(c, first_raw);
        return 0;
    }
    dg_error err;
    dg_error_clear(&err);
    /* the state diff of the two recordings: entity and field of every divergent tick (the first ones) */
    uint64_t n = rply ? harness__rply_compare_files(c, NULL, first_path, path, &err)
                      : harness__compare_files(c, NULL, first_path, path, &err);
    if (n == UINT64_MAX) {
        char buf[600];
        dg_error_format(&err, buf, sizeof buf);
        c->status = DG_REPORT_ERROR;
        dg_report_check_set_message(c, "run %u could not be compared with run 1: %s", k, buf);
        return -1;
    }
    if (n == 0) /* the hashes differ where the states do not: count the ticks by hash */
        harness__compare_streams(c, first, rec, DG_REPORT_TICK_NONE, ft, 1, &nf, &first_raw);
    c->status = DG_REPORT_FAIL;
    dg_report_check_set_message(c, "run %u recorded another state than run 1: %llu tick%s differ%s; first at tick %llu "
                                   "(the engine is not deterministic from run to run)",
                                k, (unsigned long long)c->divergent_ticks, dg_report_plural_s(c->divergent_ticks),
                                c->divergent_ticks == 1 ? "s" : "", (unsigned long long)c->first_tick);
    return 1;
}

int cli_verify_repeat(dg_report_scenario *sc, const char *scenario, const cli_run_opts *o, const char *first_path,
                      const harness__stream *first)
{
    double t0 = harness__now();
    dg_report_check *c = dg_report_add_check(sc, "repeat", DG_REPORT_PASS);
    if (!c)
        return -1;
    int result = 0;
    for (unsigned k = 2; k <= o->repeat && result == 0; k++) {
        char path[4096];
        harness__temp_path(path, sizeof path, NULL, sc->name, o->rply ? ".rply" : ".flrep");
        harness__stream rec = {0};
        dg_error err;
        dg_error_clear(&err);
        if (record_again(scenario, o, path, &rec, &err) != DG_OK) {
            char buf[600];
            dg_error_format(&err, buf, sizeof buf);
            c->status = DG_REPORT_ERROR;
            dg_report_check_set_message(c, "run %u of %u could not record: %s", k, o->repeat, buf);
            result = -1;
        } else {
            result = compare_run(c, first_path, first, path, &rec, k, o->rply);
        }
        harness__stream_free(&rec);
        remove(path);
    }
    if (result == 0 && c->first_raw_tick != DG_REPORT_TICK_NONE)
        dg_report_check_set_message(c, "%u runs: quantized state identical; raw floats differ from tick %llu "
                                       "(sub-quantum)", o->repeat, (unsigned long long)c->first_raw_tick);
    else if (result == 0)
        dg_report_check_set_message(c, "%u runs, %zu tick%s each: every run recorded the same state", o->repeat,
                                    first->n, dg_report_plural_s(first->n));
    c->duration_s = harness__now() - t0;
    return result;
}
