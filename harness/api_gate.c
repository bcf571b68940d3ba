/* harness/api_gate.c — the gate in the C API (include/detgate/harness.h): a finished session compared
 * with a golden (.flrep: state diff; hash log: hashes and raw float hashes, a raw drift named down to
 * the value against a version 3 log), its record side written as a hash log (temp + rename), the
 * first divergent entity and field picked out of the report, and dg_harness_repeat (N runs that must
 * record the same, run k against run 1 as `verify --repeat`). */
#include "api_internal.h"
#include "format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define API_REPEAT_MAX 1000

/* ---- the golden ---------------------------------------------------------------------------------- */

static bool is_flrep(const char *path)
{
    FILE *f = fopen(path, "rb");
    char m[4] = {0};
    bool yes = f && fread(m, 1, 4, f) == 4 && memcmp(m, "FLRP", 4) == 0;
    if (f)
        fclose(f);
    return yes;
}

static void golden_error(dg_report_check *c, const char *golden, const dg_error *err)
{
    char buf[600];
    dg_error_format(err, buf, sizeof buf);
    c->status = DG_REPORT_ERROR;
    dg_report_check_set_message(c, "cannot compare with the golden %s: %s", golden, buf);
}

/* Divergent ticks against the golden (c filled), or UINT64_MAX when it could not compare. */
static uint64_t golden_compare(dg_report_check *c, const char *golden, bool flrep, const char *rec_path,
                               const harness__stream *rec, uint64_t *first_raw)
{
    dg_error err;
    dg_error_clear(&err);
    *first_raw = DG_REPORT_TICK_NONE;
    if (flrep) {
        uint64_t nd = dg_harness__compare_files(c, NULL, golden, rec_path, &err);
        if (nd == UINT64_MAX)
            golden_error(c, golden, &err);
        return nd;
    }
    harness__stream g = {0};
    uint64_t nd = UINT64_MAX, first[1];
    size_t nfirst;
    if (dg_harness__load_log(golden, &g, NULL, &err) != DG_OK)
        golden_error(c, golden, &err);
    else
        nd = dg_harness__compare_streams(c, &g, rec, DG_REPORT_TICK_NONE, first, 1, &nfirst, first_raw);
    dg_harness__stream_free(&g);
    return nd;
}

bool dg_harness__api_golden_has_raw_values(const dg_harness_options *opts)
{
    return opts->golden_path && !is_flrep(opts->golden_path) && dg_harness__log_has_raw_values(opts->golden_path);
}

/* fresh_raw (NULL unless the golden is a log with its own raw floats): this run's raw floats as a
 * version 3 log, to name a raw drift against it (into *rf). */
static void check_golden(dg_report_scenario *sc, const char *golden, const char *rec_path, const harness__stream *rec,
                         const char *fresh_raw, harness__raw_first *rf)
{
    double t0 = dg_harness__now();
    dg_report_check *c = dg_report_add_check(sc, "golden", DG_REPORT_PASS);
    if (!c)
        return;
    bool flrep = is_flrep(golden);
    uint64_t first_raw;
    uint64_t nd = golden_compare(c, golden, flrep, rec_path, rec, &first_raw);
    if (nd == UINT64_MAX)
        return;
    if (nd > 0) {
        c->status = DG_REPORT_FAIL;
        dg_report_check_set_message(c, "%llu tick%s differ%s from the golden (%s); first at tick %llu",
                                    (unsigned long long)c->divergent_ticks, dg_report_plural_s(c->divergent_ticks),
                                    c->divergent_ticks == 1 ? "s" : "", flrep ? "recording" : "hash log",
                                    (unsigned long long)c->first_tick);
    } else if (first_raw != DG_REPORT_TICK_NONE) {
        dg_report_check_set_raw_divergence(c, first_raw);
        c->status = DG_REPORT_WARN;
        /* the session's raw hash covers the entity's standard floats (its extras come quantized) */
        dg_harness__golden_raw_message(c, golden, fresh_raw, NULL, first_raw,
                                       "a golden hash log written with hash_log_raw_values (or by `detgate record "
                                       "--hash-log LOG --log-raw`) names them, and dg_harness_repeat names them "
                                       "between runs of one build",
                                       NULL, rf);
    } else {
        dg_report_check_set_message(c, "%zu tick%s identical to the golden (%s)", rec->n, dg_report_plural_s(rec->n),
                                    flrep ? "recording" : "hash log");
    }
    c->duration_s = dg_harness__now() - t0;
    if (flrep) /* after the golden check is complete: adding a check moves the array */
        dg_harness__compare_headers(sc, golden, rec_path);
}

/* ---- the hash log -------------------------------------------------------------------------------- */

static dg_status write_log(const char *path, const char *name, const harness__stream *rec, dg_error *err)
{
    dg_hash_log_header lh = {0};
    snprintf(lh.scenario, sizeof lh.scenario, "%s", name);
    snprintf(lh.format, sizeof lh.format, "flrep");
    lh.raw = rec->n > 0 && rec->v[0].has_raw;
    dg_hash_log_writer *w = NULL;
    dg_status st = dg_hash_log_writer_open(&w, path, &lh, err);
    for (size_t i = 0; st == DG_OK && i < rec->n; i++) {
        const harness__tickrec *t = &rec->v[i];
        dg_hash_log_tick lt = {.tick = t->tick, .entity_count = t->count, .state = t->state, .events = t->events,
                               .raw = t->raw, .has_raw = lh.raw && t->has_raw};
        st = dg_hash_log_writer_write(w, &lt, err);
    }
    dg_status cst = dg_hash_log_writer_close(w, st == DG_OK ? err : NULL);
    return st == DG_OK ? cst : st;
}

bool dg_harness__api_log_temp_path(const char *path, char *out, size_t cap)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (slash == path)
        snprintf(dir, sizeof dir, "/");
    size_t n = strlen(path);
    bool zst = n > 4 && strcmp(path + n - 4, ".zst") == 0;
    return dg_harness__temp_path(out, cap, dir, "hashlog", zst ? ".hashlog.zst" : ".hashlog");
}

/* Written beside its final name (same file system), renamed when complete: never half-written.
 * written (may be NULL): the log already complete under such a name (the session's version 3 log). */
static dg_status put_log(const char *path, const char *name, const harness__stream *rec, const char *written,
                         dg_error *err)
{
    char tmp[4096];
    if (written)
        snprintf(tmp, sizeof tmp, "%s", written);
    else if (!dg_harness__api_log_temp_path(path, tmp, sizeof tmp))
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, path, "the hash log's path is too long");
    dg_status st = written ? DG_OK : write_log(tmp, name, rec, err);
    if (st == DG_OK && rename(tmp, path) != 0)
        st = dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "cannot put the hash log in place: %s", strerror(errno));
    if (st != DG_OK)
        remove(tmp);
    return st;
}

dg_status dg_harness__api_golden_and_log(dg_report_scenario *sc, const char *name, const char *rec_path,
                                         const harness__stream *rec, const dg_harness_options *opts,
                                         const char *golden_raw, const char *kept_log, harness__raw_first *rf,
                                         dg_error *err)
{
    *rf = (harness__raw_first){0};
    if (opts->golden_path) /* before the log: a log written over the golden must not be compared with */
        check_golden(sc, opts->golden_path, rec_path, rec, golden_raw, rf);
    return opts->hash_log_path ? put_log(opts->hash_log_path, name, rec, kept_log, err) : DG_OK;
}

void dg_harness__api_raw_first(dg_harness_result *out, const harness__raw_first *rf)
{
    if (!rf->entity)
        return;
    out->first_raw_entity = rf->entity;
    snprintf(out->first_raw_field, sizeof out->first_raw_field, "%.*s", (int)sizeof out->first_raw_field - 1, rf->field);
    out->first_raw_a = rf->a;
    out->first_raw_b = rf->b;
}

/* ---- where it diverged first --------------------------------------------------------------------- */

void dg_harness__api_first_entity(dg_harness_result *out, const dg_report_scenario *sc)
{
    out->first_divergent_entity = 0;
    out->first_divergent_field[0] = 0;
    out->first_divergent_check[0] = 0;
    for (uint32_t i = 0; i < sc->n_checks && out->first_divergent_tick != DG_REPORT_TICK_NONE; i++) {
        const dg_report_check *c = sc->checks[i];
        if (c->first_tick != out->first_divergent_tick || out->first_divergent_check[0])
            continue;
        snprintf(out->first_divergent_check, sizeof out->first_divergent_check, "%s", c->name);
        for (uint32_t t = 0; t < c->n_ticks; t++) {
            const dg_report_tick *k = c->ticks[t];
            if (k->tick != c->first_tick || k->n_entities == 0)
                continue;
            const dg_report_entity *e = &k->entities[0];
            out->first_divergent_entity = e->id;
            const char *f = e->kind == DG_REPORT_ENTITY_ADDED ? "added"
                            : e->kind == DG_REPORT_ENTITY_LOST ? "lost"
                            : e->n_fields                      ? e->fields[0].name
                                                               : "";
            snprintf(out->first_divergent_field, sizeof out->first_divergent_field, "%s", f);
            break;
        }
    }
}

/* ---- repeat runs --------------------------------------------------------------------------------- */

/* One more run into a temp recording: its path and record-side stream; its raw floats into raw_log. */
static dg_status run_again(const dg_flrep_header *hdr, const dg_harness_options *opts, unsigned k,
                           dg_harness_run_fn fn, void *user, harness__stream *rec, char *path, size_t cap,
                           const char *raw_log, dg_error *err)
{
    dg_harness_options o = *opts;
    o.recording_path = NULL;
    o.keep_inputs = false;
    o.hash_log_path = NULL;
    o.hash_log_raw_values = false;
    o.golden_path = NULL;
    dg_harness_session *s = NULL;
    dg_status st = dg_harness_open(&s, hdr, &o, err);
    if (st == DG_OK && (st = dg_harness__session_keep_raw(s, raw_log, err)) != DG_OK)
        dg_harness_abort(s);
    else if (st == DG_OK && (st = fn(user, s, k, err)) != DG_OK)
        dg_harness_abort(s);
    else if (st == DG_OK)
        st = dg_harness__session_end(s, rec, path, cap, err);
    return st;
}

/* A temporary raw log's path for run k (dg_harness__session_keep_raw); false when it does not fit. */
static bool raw_log_path(char *out, size_t cap, unsigned k)
{
    char stem[32];
    snprintf(stem, sizeof stem, "repeat-raw-%u", k);
    return dg_harness__temp_path(out, cap, NULL, stem, ".hashlog");
}

/* Runs 2..runs against run 1 into the "repeat" check of sc. DG_OK, or the error of a run that did not
 * complete (the check then says which). */
static dg_status repeat_runs(dg_report_scenario *sc, const dg_flrep_header *hdr, const dg_harness_options *opts,
                             unsigned runs, dg_harness_run_fn fn, void *user, const char *first_path,
                             const harness__stream *first, const char *first_raw, harness__raw_first *rf,
                             dg_error *err)
{
    double t0 = dg_harness__now();
    dg_report_check *c = dg_report_add_check(sc, "repeat", DG_REPORT_PASS);
    if (!c)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "dg_harness_repeat", "out of memory");
    int result = 0;
    dg_status st = DG_OK;
    for (unsigned k = 2; k <= runs && result == 0; k++) {
        char path[4096], raw[4096];
        harness__stream rec = {0};
        if (!raw_log_path(raw, sizeof raw, k))
            st = dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_harness_repeat", "the temp folder's path is too long");
        else
            st = run_again(hdr, opts, k, fn, user, &rec, path, sizeof path, raw, err);
        if (st != DG_OK) {
            char buf[600];
            dg_error_format(err, buf, sizeof buf);
            c->status = DG_REPORT_ERROR;
            dg_report_check_set_message(c, "run %u of %u could not record: %s", k, runs, buf);
            result = -1;
        } else {
            const char *logs[2] = {first_raw, raw};
            result = dg_harness__repeat_compare(c, first_path, first, path, &rec, k, &dg_harness__format_flrep, logs, rf);
            remove(path);
        }
        remove(raw);
        dg_harness__stream_free(&rec);
    }
    dg_harness__repeat_conclude(c, runs, first, result);
    c->duration_s = dg_harness__now() - t0;
    return st;
}

dg_status dg_harness_repeat(const dg_flrep_header *hdr, const dg_harness_options *opts, unsigned runs,
                            dg_harness_run_fn fn, void *user, dg_report *report, dg_harness_result *out,
                            dg_error *err)
{
    if (!hdr || !fn || runs < 2 || runs > API_REPEAT_MAX)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_harness_repeat",
                            "expected a header, a run function and 2..%d runs, found %s%s%u runs", API_REPEAT_MAX,
                            hdr ? "" : "no header, ", fn ? "" : "no run function, ", runs);
    dg_harness_options o = opts ? *opts : dg_harness_default_options();
    char first_path[4096];
    bool temp_first = !o.recording_path; /* run 1's recording is what later runs are diffed against */
    if (temp_first && !dg_harness__temp_path(first_path, sizeof first_path, NULL, "repeat", ".flrep"))
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_harness_repeat", "the temp folder's path is too long");
    if (!temp_first)
        snprintf(first_path, sizeof first_path, "%s", o.recording_path);
    o.recording_path = first_path;
    dg_report *own = NULL;
    if (!report && !(report = own = dg_report_new("verify", HARNESS_VERSION_NUMBER, NULL, err)))
        return err->code;
    dg_harness_session *s = NULL;
    uint32_t before = report->n_scenarios;
    harness__stream first = {0};
    harness__raw_first golden_rf = {0};
    char first_raw[4096]; /* run 1's raw floats: what later runs' are compared with, value by value */
    dg_status st = raw_log_path(first_raw, sizeof first_raw, 1)
                       ? DG_OK
                       : dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_harness_repeat", "the temp folder's path is too long");
    if (st == DG_OK)
        st = dg_harness_open(&s, hdr, &o, err);
    if (st == DG_OK && (st = dg_harness__session_keep_raw(s, first_raw, err)) != DG_OK)
        dg_harness_abort(s);
    else if (st == DG_OK && (st = fn(user, s, 1, err)) != DG_OK)
        dg_harness_abort(s);
    else if (st == DG_OK)
        st = dg_harness__session_finish(s, report, NULL, &first, &golden_rf, err); /* run 1: verify checks, golden, log */
    if (st == DG_OK && report->n_scenarios > before) {
        dg_report_scenario *sc = report->scenarios[report->n_scenarios - 1];
        harness__raw_first rf = {0};
        st = repeat_runs(sc, hdr, &o, runs, fn, user, first_path, &first, first_raw, &rf, err);
        if (out) {
            dg_harness__api_result(out, sc);
            /* the raw drift named by the check that saw the first one: the golden's unless repeat's */
            bool by_repeat = false;
            for (uint32_t i = 0; i < sc->n_checks; i++)
                by_repeat |= strcmp(sc->checks[i]->name, "repeat") == 0 && sc->checks[i]->first_raw_tick == out->first_raw_tick;
            dg_harness__api_raw_first(out, by_repeat ? &rf : &golden_rf);
        }
    }
    dg_harness__stream_free(&first);
    remove(first_raw);
    if (temp_first)
        remove(first_path);
    dg_report_free(own);
    return st;
}
