/* harness/api_internal.h — what the C API's two files share (harness/api.c: the session; harness/
 * api_gate.c: the golden compare, the hash log and repeat runs built on it). Private to harness/. */
#ifndef DETGATE_HARNESS_API_INTERNAL_H
#define DETGATE_HARNESS_API_INTERNAL_H

#include "detgate/harness.h"
#include "harness_internal.h"

/* After the verify checks of a finished session: the "golden" check (opts->golden_path) and the hash
 * log (opts->hash_log_path, temp + rename). golden_raw (may be NULL): the session's complete version
 * 3 log when the golden is a log with raw floats — a raw drift against it is named from it (entity,
 * field, both values into *rf). kept_log (may be NULL): that log when it is the hash log
 * (opts->hash_log_raw_values), renamed into place instead of written from rec. DG_OK, or why the
 * hash log could not be written. */
dg_status dg_harness__api_golden_and_log(dg_report_scenario *sc, const char *name, const char *rec_path,
                                         const harness__stream *rec, const dg_harness_options *opts,
                                         const char *golden_raw, const char *kept_log, harness__raw_first *rf,
                                         dg_error *err);
/* Whether opts->golden_path is a hash log with each entity's raw floats (version 3): the session then
 * keeps its own raw floats as one to compare with. */
bool dg_harness__api_golden_has_raw_values(const dg_harness_options *opts);
/* A temporary name beside the hash log at path (same folder, same compression), for temp + rename;
 * false when it does not fit in cap. */
bool dg_harness__api_log_temp_path(const char *path, char *out, size_t cap);
/* The raw drift's entity, field and both values (rf, when it names an entity) into out. */
void dg_harness__api_raw_first(dg_harness_result *out, const harness__raw_first *rf);
/* Fills out's first_divergent_entity / _field / _check from the check of sc whose first divergent
 * tick is out->first_divergent_tick. */
void dg_harness__api_first_entity(dg_harness_result *out, const dg_report_scenario *sc);
/* dg_harness_close that also moves the session's record-side stream into *keep_rec and the golden's
 * raw drift (dg_harness__api_golden_and_log) into *golden_rf (each may be NULL). */
dg_status dg_harness__session_finish(dg_harness_session *s, dg_report *report, dg_harness_result *out,
                                     harness__stream *keep_rec, harness__raw_first *golden_rf, dg_error *err);
/* *out from a scenario's checks (its ticks and entity-ticks, counts, the first divergence). */
void dg_harness__api_result(dg_harness_result *out, const dg_report_scenario *sc);
/* Keeps the session's raw floats tick by tick in a version 3 hash log at path (dg_harness_repeat:
 * run k against run 1 down to field and raw values); call before the first tick. The log is complete
 * once the session is finished, ended or aborted; the caller removes it. */
dg_status dg_harness__session_keep_raw(dg_harness_session *s, const char *path, dg_error *err);
/* Ends a session without its checks: closes the recording (left at its path, which *path gets; the
 * caller removes it) and moves its record-side stream into *rec. Frees s (always). */
dg_status dg_harness__session_end(dg_harness_session *s, harness__stream *rec, char *path, size_t cap, dg_error *err);

#endif
