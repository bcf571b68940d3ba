/* harness/format.h — the formats table: one row per recording format (flrep, rply) with the
 * operations the harness runs on its recordings and what the format can do. Commands and checks are
 * written once against a row; a third format is one file (format_NAME.c) and one row (format.c). */
#ifndef DETGATE_HARNESS_FORMAT_H
#define DETGATE_HARNESS_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness_internal.h"

typedef struct harness__format {
    const char *name;       /* --format NAME, a report scenario's format, a hash log's format= */
    const char *ext;        /* a recording's file name ending: ".flrep" */
    const char *log_suffix; /* a golden hash log's name after the scenario's: ".hashlog.zst" */
    const char *label;      /* how messages name its recordings: ".flrep", "RPLY" */
    char magic[4];          /* a recording's first four bytes */

    /* ---- capabilities ---- */
    bool replay_faults;   /* the --replay-fault test hooks reach its reader and writer */
    bool record_log;      /* its record side writes the hash log itself (record --hash-log, --entities);
                           * else a golden's log is written from the record-side stream */
    bool entity_views;    /* a recording's per-entity hashes and states can be read (hash views) */
    bool follow;          /* verify --jobs > 1 checks its file beside the recording (harness/verify_follow.c:
                           * the writer reports finished chunks, the reader follows a growing file) */

    /* ---- operations ---- */
    /* Source -> recording at path; fills out with the record-side stream. */
    dg_status (*record)(harness__source *src, const char *path, const harness__record_opts *o, harness__stream *out,
                        dg_error *err);
    /* Every tick of a recording replayed and hashed, in o->log too when it is set. */
    dg_status (*replay_hash)(const char *path, const harness__replay_opts *o, harness__stream *out, dg_error *err);
    /* The verify checks (record-vs-replay, seek, and what else the format has) on a recording whose
     * record side is rec: failed checks, or -1 when one could not run. */
    int (*verify)(dg_report_scenario *sc, harness__source *src, const char *path, const harness__stream *rec,
                  const harness__verify_opts *o);
    /* Lockstep comparison of two recordings (A the reference): divergent ticks, UINT64_MAX on error. */
    uint64_t (*compare_files)(dg_report_check *c, dg_report_scenario *sc, const char *a, const char *b,
                              dg_error *err);
    /* A "header" check of what is deterministic in two recordings' headers: 0 equal, 1 differ, -1 error. */
    int (*compare_headers)(dg_report_scenario *sc, const char *a, const char *b);
    /* Reads a recording whole (every tick decoded): DG_OK when this build reads it back. */
    dg_status (*validate)(const char *path, dg_error *err);
    /* Its tick count and last tick from its index or header, without reading the ticks; false when
     * they cannot be read. */
    bool (*span)(const char *path, uint64_t *ticks, uint64_t *last);
} harness__format;

extern const harness__format dg_harness__format_flrep; /* harness/format_flrep.c */
extern const harness__format dg_harness__format_rply;  /* harness/format_rply.c */

/* Every format, the default (flrep) first, NULL-terminated. */
extern const harness__format *const dg_harness__formats[];
/* The default format: what is recorded without --format. */
const harness__format *dg_harness__format_default(void);
/* The format called name, or NULL. */
const harness__format *dg_harness__format_find(const char *name);
/* The format whose recordings begin with the n bytes m (n >= 4), or NULL. */
const harness__format *dg_harness__format_of_magic(const unsigned char *m, size_t n);
/* What the hash views read of a recording of f (NULL: a hash log). */
harness__view_kind dg_harness__format_view(const harness__format *f);
/* Every format's name for a message: "flrep or rply" (three: "a, b or c"). */
const char *dg_harness__format_names(void);

#endif
