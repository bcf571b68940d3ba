/* detgate — the report room: the result model a verify/gate/diff/bisect run fills, and the five
 * renderers that turn it into what a team reads (prefix dg_report_).
 *
 * reports/ only renders a result it is handed. The harness builds a dg_report with the small
 * builder API below (every string is copied into the report; every array is report-owned), then
 * calls a renderer:
 *   text      terminal summary (ANSI colour only when the caller asks, e.g. after isatty)
 *   json      versioned, documented schema: docs/REPORT-SCHEMA.md, docs/report-schema.json
 *   junit     JUnit XML, one <testcase> per scenario and check
 *   markdown  a pull-request comment / CI step summary, hard size cap
 *   html      one self-contained page (inline CSS + SVG, a few lines of inline script, no network)
 *
 * Memory stays bounded however large the divergence: the builder keeps at most the configured
 * number of detailed ticks, entities per tick, ranges, timeline buckets and trajectory points per
 * check and counts what it cut (dg_report_limits, fixed at dg_report_new).
 *
 * The report owns everything in it. A scenario, a check and a detailed tick are objects of their
 * own (the arrays hold pointers to them): the pointer a builder returns stays valid until
 * dg_report_free. An entity diff points into its tick's array and stays valid until the next
 * dg_report_tick_add_entity on the same tick. Every field of the structs below is the caller's to
 * read; the builder's bookkeeping lives in reports/, not here. All builders fail closed on
 * out-of-memory: they return NULL / DG_E_NOMEM and mark the report (dg_report_nomem), never leave a
 * half-added item. */
#ifndef DETGATE_REPORT_H
#define DETGATE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "detgate/error.h"
#include "detgate/quant.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_REPORT_SCHEMA_VERSION 3 /* 3: declared fields (a field's aText / bText) */
#define DG_REPORT_TICK_NONE UINT64_MAX /* "no such tick" (no divergence, not known) */

typedef enum dg_report_status {
    DG_REPORT_PASS = 0,  /* checked, equal */
    DG_REPORT_FAIL = 1,  /* checked, diverged */
    DG_REPORT_ERROR = 2, /* could not be checked (unreadable file, missing golden, ...) */
    DG_REPORT_WARN = 3,  /* checked, quantized state equal, raw floats drifted (sub-quantum, under the
                            raw policy "warn"); ranks between PASS and FAIL: PASS < WARN < FAIL < ERROR */
} dg_report_status;

typedef enum dg_report_entity_kind {
    DG_REPORT_ENTITY_CHANGED = 0, /* present on both sides, some field differs */
    DG_REPORT_ENTITY_ADDED = 1,   /* present on side B only */
    DG_REPORT_ENTITY_LOST = 2,    /* present on side A only */
} dg_report_entity_kind;

typedef enum dg_report_kind {
    DG_REPORT_TEXT = 0,
    DG_REPORT_JSON = 1,
    DG_REPORT_JUNIT = 2,
    DG_REPORT_MARKDOWN = 3,
    DG_REPORT_HTML = 4,
} dg_report_kind;

/* One differing field. Side A is the reference (recording / golden / first file), B the other.
 * Quanta are the integer domain that is hashed; real values are for humans. */
#define DG_REPORT_FIELD_NAME_CAP 64 /* a declared field's name: up to 63 bytes */
#define DG_REPORT_UNIT_CAP 16       /* a declared field's unit: up to 15 bytes */
#define DG_REPORT_VALUE_TEXT_CAP 48
typedef struct dg_report_field {
    char name[DG_REPORT_FIELD_NAME_CAP]; /* "pos.x", "vel.z", "rot", "health", "flags", "type", "faction" */
    char unit[DG_REPORT_UNIT_CAP];       /* "m", "m/s", "deg", "%", "" */
    bool has_quanta;                     /* false for "rot" (a quaternion has no single quantum value) */
    int64_t a_q, b_q, delta_q;           /* delta_q = b_q - a_q, saturated to the int64 range */
    bool has_values;                     /* false when only the delta is meaningful ("rot": angle A->B) */
    double a, b;                         /* real units; non-finite values render as null / "n/a" */
    double delta;                        /* real units; b - a, or the angle for "rot" */
    bool has_quats;                      /* "rot": both sides' orientations are known (quat_a, quat_b) */
    double quat_a[4], quat_b[4];         /* unit quaternions w, x, y, z of side A / B */
    bool has_text;                       /* a declared field: both values as the schema shows them */
    char a_text[DG_REPORT_VALUE_TEXT_CAP], b_text[DG_REPORT_VALUE_TEXT_CAP]; /* "0.125 rad/s", "asleep", "0x0a0b" */
} dg_report_field;

#define DG_REPORT_FIELDS_MAX 16 /* more fields than any entity has (pos 3, vel 3, rot, health, ...) */
#define DG_REPORT_NAME_CAP 48
typedef struct dg_report_entity {
    uint32_t id;
    char name[DG_REPORT_NAME_CAP]; /* callsign or name, UTF-8, "" when unknown (truncated on a
                                      character boundary) */
    dg_report_entity_kind kind;
    uint32_t n_fields;
    uint32_t fields_cut; /* fields beyond DG_REPORT_FIELDS_MAX */
    dg_report_field fields[DG_REPORT_FIELDS_MAX];
} dg_report_entity;

/* One match event as a report shows it: dg_event's fields, its text cut to a readable excerpt. */
#define DG_REPORT_EVENT_TEXT_CAP 96
typedef struct dg_report_event {
    uint8_t kind; /* dg_event_kind (1..5); another value is shown as a number */
    uint32_t a, b;
    uint16_t c, d;
    uint32_t text_len;                   /* the whole text's length in bytes */
    char text[DG_REPORT_EVENT_TEXT_CAP]; /* its first bytes, cut on a character boundary, NUL-terminated
                                            (an embedded NUL byte is kept as U+FFFD) */
} dg_report_event;

/* One position in a tick's event list where the two sides differ (events are aligned by index:
 * the hash covers them in order). */
typedef struct dg_report_event_diff {
    uint32_t index;        /* 0-based position in the tick's events */
    bool in_a, in_b;       /* false: that side has no event at this index (the other has more) */
    dg_report_event a, b;  /* valid when in_a / in_b */
    uint32_t text_diff_at; /* first byte at which the two texts differ, UINT32_MAX when equal or one-sided */
} dg_report_event_diff;

/* One divergent tick in detail. */
typedef struct dg_report_tick {
    uint64_t tick;
    uint32_t added, lost, changed; /* full counts at this tick (not capped) */
    bool events_differ;            /* the tick's events hashed differently */
    uint32_t events_a, events_b;   /* events stamped with this tick on each side */
    uint32_t n_entities;
    uint32_t entities_cut; /* entities beyond limits.entities_per_tick */
    dg_report_entity *entities;
    uint32_t n_event_diffs;
    uint32_t event_diffs_cut; /* differing event positions beyond limits.events_per_tick */
    dg_report_event_diff *event_diffs;
} dg_report_tick;

/* A named value that differs between the two sides where there is no tick to pin it to: a header
 * field or a table row ("keyframe interval", "type[2].name", "participant[101].callsign"). */
typedef struct dg_report_value {
    char *field;
    char *a, *b; /* both values as text; NULL when that side has no such row */
} dg_report_value;

/* Divergent ticks folded into ranges. count <= last - first + 1; it is smaller only when the
 * range cap was reached and later ticks were absorbed into the last range (coalesced). */
typedef struct dg_report_range {
    uint64_t first, last, count;
} dg_report_range;

/* A timeline bucket: the divergent ticks in [first, last] and the largest number of divergent
 * entities at any one of them. Buckets are merged pairwise when the cap is reached, so the
 * picture of a million-tick run stays a few thousand bars. */
typedef struct dg_report_bucket {
    uint64_t first, last;
    uint32_t entities; /* max divergent entities in one tick of the bucket */
    uint32_t ticks;    /* divergent ticks in the bucket */
} dg_report_bucket;

typedef struct dg_report_point {
    uint64_t tick;
    double x, y, z; /* metres */
} dg_report_point;

/* One divergent entity's path on both sides, around its divergence, and why it was picked. */
typedef struct dg_report_trajectory {
    bool present;
    uint32_t entity_id;
    char name[DG_REPORT_NAME_CAP];
    /* Why (dg_report_check_set_trajectory_reason): the entity's first divergent tick
     * (TICK_NONE: not told) and its largest difference there, in one field kind's own units:
     * why_field "pos" / "vel" (Euclidean, m / m/s), "rot" (deg), "health" (%), "flags", "type",
     * "faction" (unitless), "added" / "lost" (present on one side only, why_delta 0); "" = not told. */
    uint64_t first_tick;
    char why_field[DG_REPORT_FIELD_NAME_CAP];
    char why_unit[DG_REPORT_UNIT_CAP];
    double why_delta;
    uint32_t n_a, n_b;       /* points on side A / B (a side may have fewer: entity lost/added) */
    uint32_t cut_a, cut_b;   /* points beyond limits.trajectory_points */
    dg_report_point *a, *b;
} dg_report_trajectory;

/* The spread of a divergence: by tick `tick`, `entities` distinct entities had diverged at least
 * once (a step each time the count grows). */
typedef struct dg_report_spread_point {
    uint64_t tick;
    uint32_t entities;
} dg_report_spread_point;

typedef struct dg_report_check {
    char *name;    /* "record-vs-replay", "seek", "recovery", "golden", "diff", ... */
    dg_report_status status;
    char *message; /* one line, may be NULL (e.g. the error for DG_REPORT_ERROR) */
    double duration_s;

    uint64_t first_tick;     /* first divergent tick (quantized state), DG_REPORT_TICK_NONE if none */
    uint64_t first_raw_tick; /* first tick whose raw float hashes differed, TICK_NONE if none/unknown */
    bool sub_quantum;        /* raw hashes differed from first_raw_tick while quantized state equal */
    uint64_t divergent_ticks; /* total, never capped */

    uint32_t n_ranges;
    bool ranges_coalesced; /* the range cap was hit; the last range absorbed later ticks */
    dg_report_range *ranges;

    uint32_t n_ticks;   /* detailed ticks kept (the first limits.ticks_per_check divergent ones) */
    uint64_t ticks_cut; /* detailed ticks offered beyond the cap */
    dg_report_tick **ticks;

    uint32_t n_buckets;
    uint64_t bucket_width; /* ticks per bucket: 1, 2, 4, ... (doubles at each pairwise merge) */
    dg_report_bucket *buckets;

    dg_report_trajectory trajectory; /* the entity that diverged first and most */
    uint32_t n_more_trajectories;    /* further divergent entities, in the order they diverged */
    uint32_t trajectories_cut;       /* entities offered beyond limits.trajectory_entities */
    dg_report_trajectory *more_trajectories;

    uint32_t n_spread;   /* steps of "entities diverged so far" (dg_report_check_add_spread) */
    uint32_t spread_cut; /* steps beyond limits.spread_points (the last step then moves on) */
    dg_report_spread_point *spread;

    uint32_t n_values;
    uint32_t values_cut; /* differing values beyond limits.values_per_check */
    dg_report_value *values;

    uint32_t n_details;
    uint32_t details_cut; /* lines beyond limits.details_per_check */
    char **details;       /* one line each: what a check with several cases found in each */
} dg_report_check;

typedef struct dg_report_scenario {
    char *name;
    char *format;          /* "flrep", "rply", or NULL when unknown */
    uint64_t ticks;        /* ticks in the recording */
    uint64_t entity_ticks; /* sum over ticks of live entities */
    uint64_t file_bytes;
    uint32_t n_checks;
    dg_report_check **checks;
} dg_report_scenario;

typedef enum dg_report_verdict {
    DG_REPORT_GOOD = 0,   /* exit status 0 in git bisect run */
    DG_REPORT_BAD = 1,    /* 1..124, 126, 127 */
    DG_REPORT_SKIP = 125, /* could not test this commit */
} dg_report_verdict;

typedef struct dg_report_bisect_step {
    char *commit; /* sha */
    dg_report_verdict verdict;
    uint64_t first_tick; /* first divergent tick seen at this commit, TICK_NONE if none */
} dg_report_bisect_step;

typedef struct dg_report_bisect {
    bool present;
    char *scenario;          /* which scenario drove the bisection, may be NULL */
    char *first_bad_commit;  /* NULL when the bisection did not conclude */
    char *subject;           /* its commit subject line */
    char *good_rev, *bad_rev;
    uint64_t first_tick;     /* first divergent tick at the first bad commit */
    uint32_t n_steps;
    dg_report_bisect_step *steps;
} dg_report_bisect;

/* Builder caps, fixed when the report is created (0 in a field = the default). */
typedef struct dg_report_limits {
    uint32_t ticks_per_check;    /* detailed divergent ticks kept per check (default 64) */
    uint32_t entities_per_tick;  /* entity diffs kept per detailed tick (default 32) */
    uint32_t ranges_per_check;   /* folded ranges kept per check (default 256) */
    uint32_t timeline_buckets;   /* timeline buckets per check (default 2048, power of two) */
    uint32_t trajectory_points;  /* points per side of the trajectory (default 2048) */
    uint32_t events_per_tick;    /* differing event positions kept per detailed tick (default 4) */
    uint32_t values_per_check;   /* differing header/table values kept per check (default 64) */
    uint32_t details_per_check;  /* detail lines kept per check (default 16) */
    uint32_t trajectory_entities; /* trajectories kept per check, the first one included (default 16) */
    uint32_t spread_points;      /* steps of the spread series kept per check (default 1024) */
} dg_report_limits;

typedef struct dg_report {
    char *tool_version;
    char *command;           /* "verify", "gate", "diff", "bisect" */
    int64_t started_unix;    /* seconds since 1970 (UTC) */
    double duration_s;
    uint32_t n_scenarios;
    dg_report_scenario **scenarios;
    dg_report_bisect bisect;
    dg_report_limits limits; /* effective caps (defaults filled in) */
    bool nomem;              /* some builder call ran out of memory; the report is incomplete */
    /* gate: which shard of which scenario list this run covered (dg_report_set_shard); a count of
     * 0 means the run was not a gate (JSON null). corpus_id: 16 hex digits, docs/REPORT-SCHEMA.md. */
    uint32_t shard_index, shard_count;
    char corpus_id[17];
    char *note;              /* one line about the run as a whole (e.g. an empty shard), or NULL */
} dg_report;

/* Render-time options (NULL = defaults). */
typedef struct dg_report_opts {
    bool colour;              /* text: ANSI colour (the caller decides, e.g. isatty(fileno(f))) */
    uint32_t rows_per_check;  /* text/markdown/html: field rows shown per check (default 20 for
                                 markdown, 40 for text, 200 for html) */
    size_t markdown_max_bytes; /* markdown: hard size cap including the "... N more" note
                                  (default 60000; GitHub comments stop at 65536 characters) */
    uint32_t max_sections;    /* text/html: failing checks shown in detail, in report order
                                 (default 10 for text, 100 for html; the rest are counted) */
} dg_report_opts;

/* "" when n is 1, else "s": "1 tick", "2 ticks", "0 ticks" (every count in every message). */
const char *dg_report_plural_s(uint64_t n);

/* ---- building ------------------------------------------------------------------------------- */

/* A new empty report. command and tool_version are copied (may be NULL). limits may be NULL.
 * Returns NULL on out of memory (err filled). Free with dg_report_free. */
dg_report *dg_report_new(const char *command, const char *tool_version, const dg_report_limits *limits,
                         dg_error *err);
void dg_report_free(dg_report *r);

/* Replaces the report's one-line note (printf format): text, Markdown and HTML show it under the
 * tally line, JSON as "note". DG_E_NOMEM on out of memory. */
dg_status dg_report_set_note(dg_report *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Appends a scenario (name, format copied; format may be NULL). NULL on out of memory. */
dg_report_scenario *dg_report_add_scenario(dg_report *r, const char *name, const char *format);

/* Appends a check with the given status; first_tick and first_raw_tick start as TICK_NONE. */
dg_report_check *dg_report_add_check(dg_report_scenario *s, const char *name, dg_report_status status);

/* Replaces the check's one-line message (printf format). DG_E_NOMEM on out of memory. */
dg_status dg_report_check_set_message(dg_report_check *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Records one divergent tick: counts it, folds it into the ranges, feeds the timeline, sets
 * first_tick if this is the first, and turns a PASS check into FAIL (an ERROR stays ERROR). Ticks must be offered in strictly increasing order
 * (DG_E_USAGE otherwise, nothing changed). n_entities = divergent entities at that tick. */
dg_status dg_report_check_add_divergent(dg_report_check *c, uint64_t tick, uint32_t n_entities);

/* Notes that raw (unquantized) float hashes first differed at `tick`. If the check has no
 * quantized divergence (first_tick is TICK_NONE) the check is flagged sub_quantum. */
void dg_report_check_set_raw_divergence(dg_report_check *c, uint64_t tick);

/* Starts the detail of one divergent tick. Returns NULL when the per-check cap is reached (then
 * ticks_cut counts it) or on out of memory (then dg_report_nomem is true). */
dg_report_tick *dg_report_add_tick(dg_report_check *c, uint64_t tick);

/* Appends an entity diff to a detailed tick; NULL when capped (entities_cut counts it) or out of
 * memory. name may be NULL. Does not touch t->added/lost/changed: the caller sets the totals. */
dg_report_entity *dg_report_tick_add_entity(dg_report_tick *t, uint32_t id, const char *name,
                                            dg_report_entity_kind kind);

/* Diffs two sides' event lists of one tick, aligned by index: every position whose events differ
 * (any field, the text, or present on one side only) is counted and, while limits.events_per_tick
 * allows, kept in t->event_diffs (the rest in event_diffs_cut). Sets events_a, events_b, and
 * events_differ when something differs. Returns the number of differing positions. Texts are
 * copied (the caller's buffers may go away). a / b may be NULL when the count is 0. */
uint32_t dg_report_tick_diff_events(dg_report_tick *t, const dg_event *a, size_t n_a, const dg_event *b,
                                    size_t n_b);
/* "kill", "spawn", "chat", "admin", "alert", or NULL for another kind. */
const char *dg_report_event_kind_name(uint8_t kind);
/* What a payload field ('a', 'b', 'c', 'd') means for an event kind ("killer", "weapon", ...,
 * dg_event_kind in detgate/quant.h), or NULL when the kind does not use it. */
const char *dg_report_event_field_name(uint8_t kind, char field);

/* Appends a value that differs (field name and both sides' values copied; a or b NULL = that side
 * has no such row) and turns a PASS check into FAIL. Beyond limits.values_per_check it is only
 * counted (values_cut). DG_E_NOMEM on out of memory (nothing added), DG_E_USAGE without a field. */
dg_status dg_report_check_add_value(dg_report_check *c, const char *field, const char *a, const char *b);

/* Appends one detail line (printf format) — for checks made of several cases, one line per case.
 * Beyond limits.details_per_check it is only counted (details_cut). Leaves the status alone. */
dg_status dg_report_check_add_detail(dg_report_check *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Appends a field diff with integer quanta and their real-unit values (delta computed here).
 * Returns false when the entity already has DG_REPORT_FIELDS_MAX fields (fields_cut counts it). */
bool dg_report_entity_add_field(dg_report_entity *e, const char *name, const char *unit, int64_t a_q,
                                int64_t b_q, double a, double b);
/* A declared field's difference: its stored slots (quanta), its values as numbers when it has them
 * (has_values false for bool / enum / bytes), and both values as the schema formats them. */
bool dg_report_entity_add_field_text(dg_report_entity *e, const char *name, const char *unit, int64_t a_q,
                                     int64_t b_q, bool has_values, double a, double b, const char *a_text,
                                     const char *b_text);
/* A field with real values only (no quantum), e.g. an angle: delta given by the caller. */
bool dg_report_entity_add_field_real(dg_report_entity *e, const char *name, const char *unit,
                                     bool has_values, double a, double b, double delta);

/* Fills e with every field that differs between two quantized states of the same entity, in the
 * units of detgate/quant.h (pos m, vel m/s, rot deg, health %, flags/type/faction raw). Returns
 * the number of fields added. */
uint32_t dg_report_entity_diff_qentity(dg_report_entity *e, const dg_qentity *a, const dg_qentity *b);

/* Two sides' quantized states at one tick, for dg_report_check_add_states. */
typedef struct dg_report_tick_states {
    uint64_t tick;
    const dg_qentity *a; /* side A, sorted by id, strictly ascending */
    size_t n_a;
    const dg_qentity *b; /* side B, same order */
    size_t n_b;
    bool events_differ;  /* the tick's events hashed differently */
    uint32_t events_a, events_b;
    /* Optional: the name (callsign) of an entity, or NULL; called only for kept entity diffs. */
    const char *(*name_of)(void *ctx, uint32_t id);
    void *name_ctx;
} dg_report_tick_states;

/* Diffs one tick's two states into the check in one call: counts the entities added (in B only),
 * lost (in A only) and changed; if anything differs (or events_differ) records the tick as
 * divergent (dg_report_check_add_divergent) and, while the detail cap allows, as a detailed tick
 * with its entity and field diffs (in id order). *n_divergent (may be NULL) gets added + lost +
 * changed. Equal states record nothing. DG_E_USAGE, with nothing changed, when an array is not
 * strictly ascending by id or the tick is not after the last divergent one. Allocates nothing
 * per entity; only the kept detail grows report-owned arrays. */
dg_status dg_report_check_add_states(dg_report_check *c, const dg_report_tick_states *st, uint32_t *n_divergent);

/* Trajectories. set_trajectory resets the main one (the entity followed first: the harness picks
 * the one that diverged first and most) and drops every further one; add_trajectory starts the
 * next further one (beyond limits.trajectory_entities in all it is only counted in
 * trajectories_cut, and its points are ignored; with no main one yet it starts the main one).
 * add_point appends to the trajectory started last, on side 'A' or 'B' (points beyond the cap
 * are counted in cut_a/cut_b); set_trajectory_reason tells why that one was picked (field and
 * unit copied, cut to their caps; may be NULL). DG_E_USAGE for a side other than 'A'/'B' or with
 * no trajectory started. */
dg_status dg_report_check_set_trajectory(dg_report_check *c, uint32_t entity_id, const char *name);
dg_status dg_report_check_add_trajectory(dg_report_check *c, uint32_t entity_id, const char *name);
dg_status dg_report_check_add_point(dg_report_check *c, char side, uint64_t tick, double x, double y,
                                    double z);
dg_status dg_report_check_set_trajectory_reason(dg_report_check *c, uint64_t first_tick, const char *field,
                                                const char *unit, double delta);

/* Appends a step of the spread: by `tick`, `entities` distinct entities had diverged. Ticks
 * strictly increasing, counts never decreasing (DG_E_USAGE otherwise, nothing changed). Beyond
 * limits.spread_points the last step is moved to the new tick and count (spread_cut counts it),
 * so the final count is always right. DG_E_NOMEM on out of memory. */
dg_status dg_report_check_add_spread(dg_report_check *c, uint64_t tick, uint32_t entities);

/* Bisect section: set_bisect fills the strings (each may be NULL) and marks it present. */
dg_status dg_report_set_bisect(dg_report *r, const char *scenario, const char *first_bad_commit,
                               const char *subject, const char *good_rev, const char *bad_rev,
                               uint64_t first_tick);
dg_status dg_report_bisect_add_step(dg_report *r, const char *commit, dg_report_verdict verdict,
                                    uint64_t first_tick);

/* Gate shard I/N (1 <= index <= count) and the id of the scenario list it was cut from (16 hex
 * digits, copied; may be NULL for none). DG_E_USAGE, nothing changed, for a bad index or id. */
dg_status dg_report_set_shard(dg_report *r, uint32_t index, uint32_t count, const char *corpus_id);

/* Restoring a rendered report (detgate merge reads JSON back): appends a range or a timeline
 * bucket exactly as given, without folding. DG_E_USAGE when it does not follow the last one
 * (first > last, or not after the previous range/bucket), DG_E_NOMEM on out of memory. */
dg_status dg_report_check_restore_range(dg_report_check *c, const dg_report_range *rg);
dg_status dg_report_check_restore_bucket(dg_report_check *c, const dg_report_bucket *b);
/* Appends one event position as written (detgate merge): DG_E_USAGE when neither side has it or its
 * index is not after the one before, DG_E_NOMEM on out of memory (nothing added). */
dg_status dg_report_tick_restore_event_diff(dg_report_tick *t, const dg_report_event_diff *d);

/* ---- reading the model ------------------------------------------------------------------------ */

/* Worst status of a scenario's checks (ERROR > FAIL > WARN > PASS; a scenario with no check passes). */
dg_report_status dg_report_scenario_status(const dg_report_scenario *s);
/* Worst status over the whole report; a bisect that named a first bad commit counts as FAIL. */
dg_report_status dg_report_overall_status(const dg_report *r);
/* The worse of two statuses by PASS < WARN < FAIL < ERROR (a value outside the enum counts as ERROR). */
dg_report_status dg_report_status_worse(dg_report_status a, dg_report_status b);
/* "pass", "warn", "fail", "error"; "added", "lost", "changed"; "text", "json", ... (never NULL). */
const char *dg_report_status_name(dg_report_status s);
const char *dg_report_entity_kind_name(dg_report_entity_kind k);
const char *dg_report_kind_name(dg_report_kind k);
/* Parses "text", "json", "junit", "markdown" (or "md"), "html"; DG_E_USAGE otherwise. */
dg_status dg_report_kind_from_name(const char *name, dg_report_kind *out);

/* ---- rendering -------------------------------------------------------------------------------- */

/* Each renders the whole report to f. opts may be NULL. On a write error: DG_E_IO (err filled).
 * Rendering never changes the report and never allocates per tick of the run (only per kept item). */
dg_status dg_report_write_text(const dg_report *r, FILE *f, const dg_report_opts *opts, dg_error *err);
dg_status dg_report_write_json(const dg_report *r, FILE *f, const dg_report_opts *opts, dg_error *err);
dg_status dg_report_write_junit(const dg_report *r, FILE *f, const dg_report_opts *opts, dg_error *err);
dg_status dg_report_write_markdown(const dg_report *r, FILE *f, const dg_report_opts *opts, dg_error *err);
dg_status dg_report_write_html(const dg_report *r, FILE *f, const dg_report_opts *opts, dg_error *err);
dg_status dg_report_write(const dg_report *r, dg_report_kind kind, FILE *f, const dg_report_opts *opts,
                          dg_error *err);

/* Renders into a new malloc'd NUL-terminated buffer (*out, *len without the NUL); caller frees. */
dg_status dg_report_render(const dg_report *r, dg_report_kind kind, const dg_report_opts *opts, char **out,
                           size_t *len, dg_error *err);

/* Writes the rendering to `path` atomically: a temporary file in the same folder, flushed and
 * synced, then renamed over path. On any failure the temporary is removed and path is untouched. */
dg_status dg_report_write_file(const dg_report *r, dg_report_kind kind, const char *path,
                               const dg_report_opts *opts, dg_error *err);

#ifdef __cplusplus
}
#endif
#endif
