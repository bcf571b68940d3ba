/* detgate — the harness C API for engines that link the library (prefix dg_harness_).
 *
 * An engine opens a session with its recording header, hands over its whole world tick by tick
 * (float-domain dg_entity_in + match events, as it would to the .flrep writer), and closes it: the
 * session has then done what `detgate verify --states` does — each tick went through the real
 * quantizer and writer and its quantized state was hashed (record side); the file is read back,
 * every tick rebuilt and hashed (replay side); the two hash streams are compared tick by tick; seek
 * consistency and crash recovery are checked; on a mismatch the states behind the hashes are
 * diffed down to entity and field. The result lands in a dg_report (detgate/report.h) that any of
 * the five renderers can write.
 *
 *     dg_harness_session *s;
 *     dg_harness_open(&s, &hdr, NULL, &err);
 *     for (tick ...) dg_harness_tick(s, tick, ents, n, events, nev, &err);
 *     dg_report *rep = dg_report_new("verify", "my-engine 1.2", NULL, &err);
 *     dg_harness_result res;
 *     dg_harness_close(s, rep, &res, &err);          // res.failed_checks == 0: deterministic codec path
 *     dg_report_write_file(rep, DG_REPORT_JUNIT, "verify.xml", NULL, &err);
 *
 * The gate in-process: set opts.golden_path to a golden .flrep or hash log (res then names the first
 * divergent tick, entity and field), opts.hash_log_path to bless a hash log, and dg_harness_repeat to
 * require N runs to record the same. A session lives from dg_harness_open to dg_harness_close (or
 * dg_harness_abort); every call reports failure as a dg_status with err filled.
 *
 * Memory: the session keeps a few dozen bytes of hashes per tick. To diff the record side after a
 * mismatch it keeps the ticks' inputs in a temporary spill file (about 100 bytes per entity-tick,
 * removed by close/abort); set keep_inputs = false to skip it (a mismatch is then reported by tick
 * only). Not thread-safe: one session per thread. */
#ifndef DETGATE_HARNESS_H
#define DETGATE_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detgate/error.h"
#include "detgate/flrep.h"
#include "detgate/quant.h"
#include "detgate/report.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dg_harness_session dg_harness_session;

typedef struct dg_harness_options {
    const char *name;           /* scenario name in the report (default "engine") */
    const char *recording_path; /* keep the .flrep here; NULL = a temporary file, removed by close */
    bool keep_inputs;           /* spill inputs for record-side diffs (dg_harness_default_options: true) */
    uint32_t seek_random;       /* random seek samples besides chunk edges/first/last (default 32) */
    bool skip_recovery;         /* skip the crash-recovery check */
    /* Also write the record side's hash log here (a name ending in ".zst" compresses it), as
     * `detgate record --hash-log` and `detgate bless` write it: per tick the state, event and raw
     * float hashes. Written under a temp name in its folder and renamed by close when complete;
     * NULL = none. */
    const char *hash_log_path;
    /* Compare the run with this golden, as `detgate gate` does: a .flrep recording (state diff down to
     * tick, entity and field, plus a "header" check) or a hash log (tick level). Adds a "golden" check;
     * a raw-float-only drift is WARN: against a hash log written with hash_log_raw_values (or by
     * `detgate record --hash-log LOG --log-raw`) naming the first drifting entity, its field and both
     * raw values (in the check and in dg_harness_result's first_raw_*), against any other hash log the
     * raw floats its one hash per tick covers. NULL = none. */
    const char *golden_path;
    /* With hash_log_path: write it as `detgate record --hash-log LOG --log-raw` does (version 3,
     * docs/STATE-HASH.md §7): besides each tick's hashes, each entity's state hash, raw float hash and
     * raw floats, so that a gate against it names a raw drift down to the entity, field and value.
     * About 250 bytes per entity-tick before compression; default false (one line per tick). Set
     * without hash_log_path, dg_harness_open refuses it (DG_E_USAGE). */
    bool hash_log_raw_values;
} dg_harness_options;

typedef struct dg_harness_result {
    uint64_t ticks;         /* ticks recorded */
    uint64_t entity_ticks;  /* sum over ticks of live entities */
    int failed_checks;      /* checks that found a divergence (0 = all equal) */
    int error_checks;       /* checks that could not run */
    uint64_t first_divergent_tick; /* DG_REPORT_TICK_NONE when none */
    /* Where, at that tick, in the check that found it first (when that check diffed states): the
     * first divergent entity (0 when not known) and its first differing field ("pos.x", "rot", ...;
     * "added" / "lost" for an entity on one side only; "" when not known). */
    uint32_t first_divergent_entity;
    char first_divergent_field[DG_REPORT_FIELD_NAME_CAP];
    char first_divergent_check[DG_REPORT_NAME_CAP]; /* that check's name ("golden", "repeat", ...); "" when none */
    /* A drift of the raw floats (docs/CLI.md "Raw-float drift"): the first tick whose raw float hashes
     * differed in any check (DG_REPORT_TICK_NONE when none). Where that check has the raw floats of
     * both sides — dg_harness_repeat (every run's), a golden hash log with them (hash_log_raw_values)
     * — also that drift's first entity (0 when not known), its first differing value ("pos.x" ...
     * "health"; "" when not known) and that value on the reference side (a: run 1, the golden) and
     * the other (b), exactly as the engine handed them over. */
    uint64_t first_raw_tick;
    uint32_t first_raw_entity;
    char first_raw_field[DG_REPORT_FIELD_NAME_CAP];
    double first_raw_a, first_raw_b;
} dg_harness_result;

/* The defaults: name "engine", temporary recording, keep_inputs true, 32 random seek samples. */
dg_harness_options dg_harness_default_options(void);

/* Starts a session. hdr as for dg_flrep_writer_open; hdr and its tables must stay valid until
 * dg_harness_close (the roster names the entities in diffs). opts may be NULL (defaults). */
dg_status dg_harness_open(dg_harness_session **out, const dg_flrep_header *hdr, const dg_harness_options *opts,
                          dg_error *err);

/* One tick: ents is the whole live world (any order, distinct ids >= 1), events the tick's match
 * events (their tick field must equal tick). Ticks must increase strictly. On error the session is
 * unusable except for dg_harness_abort. */
dg_status dg_harness_tick(dg_harness_session *s, uint64_t tick, const dg_entity_in *ents, size_t n,
                          const dg_event *events, size_t nev, dg_error *err);

/* dg_harness_tick for a header whose schema (hdr->schema, include/detgate/schema.h) declares extra
 * fields: extras[i * field_count + f] is field f of ents[i] (field_count = hdr->schema->field_count),
 * one int64 slot each — a float field's already quantized (dg_schema_quant_float), a uint's or
 * bytes' bit pattern. The standard fields the schema lacks are not looked at. The recording is
 * format 2.0; a divergence names the field with its unit and both values. With no extra field it
 * is dg_harness_tick. (With keep_inputs false the raw float hash is not kept.) */
dg_status dg_harness_tick_x(dg_harness_session *s, uint64_t tick, const dg_entity_in *ents, const int64_t *extras,
                            size_t n, const dg_event *events, size_t nev, dg_error *err);

/* Closes the recording and runs the checks; adds one scenario with its checks to report (may be
 * NULL) and fills *out (may be NULL). Frees s (always). Returns DG_OK when the checks ran, whatever
 * they found; an error when the recording could not be completed. */
dg_status dg_harness_close(dg_harness_session *s, dg_report *report, dg_harness_result *out, dg_error *err);

/* Abandons the session: removes the temporary files, frees s. s may be NULL. */
void dg_harness_abort(dg_harness_session *s);

/* One run of the engine for dg_harness_repeat: hand every tick of the scenario to s with
 * dg_harness_tick (run is 1..runs). DG_OK when the run completed; an error ends the repeat. Never
 * close or abort s: the harness does. */
typedef dg_status (*dg_harness_run_fn)(void *user, dg_harness_session *s, unsigned run, dg_error *err);

/* `detgate verify --repeat N` in-process: runs the scenario `runs` times (2..1000) through fn, each in
 * a session of its own opened with hdr and opts. Run 1 is checked as dg_harness_close checks it
 * (the verify checks, opts->golden_path, opts->hash_log_path); every later run must record what run 1
 * recorded (threads, uninitialised memory, clocks, hash-map order), else a failed "repeat" check
 * names the first run that differs, its first divergent tick, entity and field. Adds one scenario to
 * report (may be NULL) and fills *out (may be NULL). DG_OK when every run completed, whatever the
 * checks found; the run's error (from fn or dg_harness_tick) when one did not. */
dg_status dg_harness_repeat(const dg_flrep_header *hdr, const dg_harness_options *opts, unsigned runs,
                            dg_harness_run_fn fn, void *user, dg_report *report, dg_harness_result *out,
                            dg_error *err);

/* Compares two .flrep recordings tick by tick (A is the reference): hash first, state diff on every
 * divergent tick. Adds a scenario named `name` with one "diff" check to report (may be NULL). */
dg_status dg_harness_diff_files(const char *a, const char *b, const char *name, dg_report *report,
                                dg_harness_result *out, dg_error *err);

#ifdef __cplusplus
}
#endif
#endif
