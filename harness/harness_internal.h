/* harness/harness_internal.h — the harness room's private wiring: tick sources (a scenario through
 * sim_stub, an engine's state stream), the record side (source -> quantizer/writer -> hash), the
 * replay side (reader -> rebuilt state -> hash), and the comparisons that fill a dg_report, for
 * .flrep; every format's row, RPLY's too, is in format.h.
 * Private names carry the harness__ prefix; the public C API is include/detgate/harness.h. */
#ifndef DETGATE_HARNESS_INTERNAL_H
#define DETGATE_HARNESS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cursor.h"
#include "detgate/error.h"
#include "detgate/flrep.h"
#include "detgate/hash.h"
#include "detgate/quant.h"
#include "detgate/report.h"
#include "schema_decl.h"

#define HARNESS_VERSION_NUMBER "0.1.0" /* a report's tool.version: the tool's name is said beside it */
#define HARNESS_VERSION "detgate " HARNESS_VERSION_NUMBER
#define HARNESS_RAW_FIELDS 11 /* pos 3, vel 3, rot 4, health: the floats an entity_in carries */

/* ---- a source of ticks ---------------------------------------------------------------------- */

/* Where a tick came from, for the errors the record side finds later (the quantizer's, the writer's:
 * dg_harness__frame_locate): the stream's label (NULL: not known), and the tick's line (text, line)
 * or its record's byte offset (binary). Binary ticks whose entities came in id order also give where
 * those start (ents_at) and their size (ent_bytes; 0: not known). */
typedef struct harness__at {
    const char *label;
    uint64_t at;
    bool line;
    uint64_t ents_at;
    size_t ent_bytes;
} harness__at;

/* One tick as the source hands it over: the whole live world (sorted by id) and its events.
 * Arrays belong to the source and stay valid until its next call. */
typedef struct harness__frame {
    uint64_t tick;
    const dg_entity_in *ents;
    size_t n;
    const dg_event *events;
    size_t nev;
    bool has_raw;
    uint64_t raw; /* raw float hash (docs/STATE-HASH.md §6) of the floats handed to the quantizer */
    /* The declared extra fields' slots, extras[i * field_count + f] for ents[i] (field_count = the
     * source's decl.field_count); NULL when it is 0. */
    const int64_t *extras;
    /* The raw binary64 values of the declared float fields as the source read them (nxraw per entity,
     * in declaration order, sorted like ents): they join the raw float hash. NULL / 0 when none. */
    const double *xraw;
    size_t nxraw;
    /* has_raw, but raw is left to the consumer: dg_harness__raw_hash of ents. Only for frames without
     * declared float fields (sim_stub's), whose raw hash is over the standard floats alone. */
    bool raw_later;
    harness__at at; /* where the tick came from */
} harness__frame;

/* err (from the quantizer or the writer, for frame f) rewritten to say where in f's stream: the
 * label, the tick's line or record offset, an entity's own offset when err names one the frame can
 * place. Nothing when f's place is not known. */
void dg_harness__frame_locate(const harness__frame *f, dg_error *err);

/* The raw float hash of a frame's entities (docs/STATE-HASH.md §6), in their order. */
uint64_t dg_harness__raw_hash(uint64_t tick, const dg_entity_in *ents, size_t n);

typedef struct harness__source harness__source;
struct harness__source {
    char name[DG_HASH_LOG_NAME_MAX + 1]; /* scenario name, a hash-log token */
    dg_flrep_header hdr;                 /* tables point into the source */
    uint64_t expected_ticks;             /* 0 when unknown (progress display only) */
    /* The session's local tangent frame (origin on the surface, unit east/north/up) when the
     * source has one: flat-world formats (RPLY) record positions in it. has_frame false: the
     * positions are already local (an engine's stream). */
    bool has_frame;
    double frame_origin[3], frame_east[3], frame_north[3], frame_up[3];
    /* Set by the record side while another thread consumes the frames: a source may then leave the
     * raw hash to it (frame.raw_later) instead of computing it on the simulation's thread. */
    bool raw_later_ok;
    /* 1 = *f filled, 0 = end, -1 = error (err set). */
    int (*next)(harness__source *s, harness__frame *f, dg_error *err);
    /* Starts again from the first tick (the record side is re-derived this way for a diff). */
    dg_status (*rewind)(harness__source *s, dg_error *err);
    void (*destroy)(harness__source *s);
    void *impl;
    /* The entity schema the source declares (docs/STATES-STREAM.md, "Declared fields"); legacy and
     * declared false when it says nothing. hdr.schema points at schema_view when it is not legacy. */
    harness__decl decl;
    harness__schema_view schema_view;
};

/* Scenario file through sim_stub; inject may be NULL or "" for none. keyframe 0 = the scenario's. */
dg_status dg_harness__source_scenario(harness__source **out, const char *path, const char *inject,
                                   uint32_t keyframe, dg_error *err);
/* A per-tick entity state stream file (CSV or JSON Lines, docs/STATES-STREAM.md), read once and
 * recorded as it is read; rewound (a detail pass) by seeking. */
dg_status dg_harness__source_states(harness__source **out, const char *path, uint32_t keyframe,
                                 dg_error *err);
/* The same stream read once from f (a pipe, stdin; not closed by the source): no rewind; label names it in errors, name (NULL = the header's or "stdin") is the scenario name. */
dg_status dg_harness__source_states_stream(harness__source **out, FILE *f, const char *label, const char *name,
                                        uint32_t keyframe, dg_error *err);
void dg_harness__source_free(harness__source *s);

/* ---- the record side ------------------------------------------------------------------------ */

typedef struct harness__tickrec {
    uint64_t tick;
    uint64_t state, events, combined, raw;
    uint32_t count;
    bool has_raw;
} harness__tickrec;

/* The per-tick hash stream of one side (never the entity states: those are re-derived on demand). */
typedef struct harness__stream {
    harness__tickrec *v;
    size_t n, cap;
    uint64_t entity_ticks;
    bool count_only; /* keep n and entity_ticks, not the records (`record`: memory flat in the length) */
} harness__stream;

void dg_harness__stream_free(harness__stream *s);
dg_status dg_harness__stream_push(harness__stream *s, const harness__tickrec *r, dg_error *err);
/* Room for n ticks up front (a hint: a count above 2^28 is ignored), so a known-length run never
 * reallocates per tick. */
dg_status dg_harness__stream_reserve(harness__stream *s, uint64_t n, dg_error *err);
/* Index of tick in s (binary search), or SIZE_MAX. */
size_t dg_harness__stream_find(const harness__stream *s, uint64_t tick);

typedef struct harness__record_opts {
    const char *hash_log;      /* also write a hash log here (".zst" compresses); NULL = none */
    bool log_entities;         /* the log carries entity lines */
    bool log_raw;              /* ... and each entity's raw floats (version 3; implies log_entities) */
    /* A second log, version 3 (entity lines with raw values), beside hash_log: what `verify --repeat`
     * compares run by run to name a raw drift's field and values. It keeps the ticks up to
     * HARNESS_RAW_LOG_CAP entity-ticks (a later drift is named by tick alone). NULL = none. */
    const char *raw_log;
    const char *format_name;   /* the hash log's format= ("flrep") */
    uint32_t keyframe;         /* formats whose writer takes it (RPLY): 0 = the source header's interval */
    void (*progress)(void *user, uint64_t tick, uint64_t total);
    void *progress_user;
    bool fault_self_check;        /* test hook: the writer's self-check fails at fault_self_check_tick */
    uint64_t fault_self_check_tick;
    dg_flrep_fsync fsync;         /* when the writer asks the kernel to put the file on disk */
    unsigned jobs;             /* > 1: the writer may run beside the source on a spare thread */
    dg_flrep_chunk_fn on_chunk;   /* the writer's chunk notification (NULL = none): verify's follower */
    void *on_chunk_user;
} harness__record_opts;

/* Source -> writer (path) -> quantized state -> hash. Fills *out (the record-side stream). */
dg_status dg_harness__record(harness__source *src, const char *path, const harness__record_opts *o,
                          harness__stream *out, dg_error *err);

/* ---- the replay side ------------------------------------------------------------------------- */

/* Every tick of a recording, hashed; optional hash log writer. fault_tick != UINT64_MAX applies the
 * reader's double-delta fault at that tick (tests). */
dg_status dg_harness__replay_hash(const char *path, uint64_t fault_tick, dg_hash_log_writer *log,
                               bool log_entities, harness__stream *out, dg_error *err);

/* The same from an open reader, linearly from where it stands: the first `skip` ticks are read but
 * not hashed or logged (the parallel replay's fallback: they are already in out). */
dg_status dg_harness__replay_hash_from(dg_flrep_reader *r, size_t skip, dg_hash_log_writer *log, bool log_entities,
                                    harness__stream *out, dg_error *err);

typedef struct harness__replay_opts {
    uint64_t fault_tick;       /* as for dg_harness__replay_hash */
    dg_hash_log_writer *log;   /* NULL = no log */
    bool log_entities;
    unsigned jobs;             /* threads at most (1 = one linear pass); only spare ones are started */
    double *cpu_s;             /* if non-NULL: CPU seconds of every thread of the pass */
    unsigned *threads;         /* if non-NULL: threads that ran the pass (1 = linear, on the caller) */
} harness__replay_opts;

/* dg_harness__replay_hash on up to o->jobs threads (harness/replay_parallel.c): the same stream, the
 * same log bytes, the same error and message whatever the thread count. */
dg_status dg_harness__replay_hash_jobs(const char *path, const harness__replay_opts *o, harness__stream *out,
                                    dg_error *err);

/* ---- the thread budget (harness/replay_parallel.c) ------------------------------------------- */

/* The process may run `total` busy threads (--jobs); the calling thread holds one. Until it is
 * called there are no spare threads: everything runs on the caller. */
void dg_harness__cpu_init(unsigned total);
/* Takes up to want spare threads from the budget; returns how many it took. */
unsigned dg_harness__cpu_take(unsigned want);
void dg_harness__cpu_give(unsigned n);
/* Spare threads at this moment (a hint: another thread may take them first). */
unsigned dg_harness__cpu_spare(void);
/* Runs fn(arg, i) for i in 0..n-1, in index order, on the calling thread and as many helpers as
 * the budget spares (none: all on the caller); returns when all have returned. */
void dg_harness__run_parallel(void (*fn)(void *arg, size_t i), void *arg, size_t n);

/* ---- comparisons ----------------------------------------------------------------------------- */

/* Merges two sorted quantized worlds into the report tick: counts and per-entity field diffs. */
void dg_harness__diff_worlds(dg_report_tick *t, const dg_qentity *a, size_t na, const dg_qentity *b,
                          size_t nb, const dg_flrep_header *names);
/* Counts only (added + lost + changed). */
uint32_t dg_harness__count_diff(const dg_qentity *a, size_t na, const dg_qentity *b, size_t nb);

/* One side of a world diff with its declared fields: ents sorted by id, x[i * nx + f] (NULL when the
 * schema has none). */
typedef struct harness__xworld {
    const dg_qentity *ents;
    const int64_t *x;
    size_t n;
    const dg_schema *schema; /* this side's (NULL = legacy): its pos/vel quanta give the metres */
} harness__xworld;
/* dg_harness__diff_worlds / _count_diff under a schema (NULL = legacy): positions and velocities in
 * metres at its quanta, every declared field that differs named with its unit and both values as
 * the schema shows them. */
void dg_harness__diff_worlds_x(dg_report_tick *t, harness__xworld a, harness__xworld b, const dg_schema *schema,
                            const dg_flrep_header *names);
uint32_t dg_harness__count_diff_x(harness__xworld a, harness__xworld b, const dg_schema *schema);
/* The schema two recordings share for a diff (NULL = legacy or they differ: then only the standard
 * fields are diffed, the header check names the difference). */
const dg_schema *dg_harness__common_schema(const dg_flrep_header *a, const dg_flrep_header *b);

/* Compares two hash streams tick by tick (merged on tick number). Returns the number of divergent
 * ticks; the first max_first of them go to first_ticks; *first_raw gets the first tick whose raw
 * hashes differ (both sides carrying one), DG_REPORT_TICK_NONE if none. When c is non-NULL every
 * divergent tick after add_after (all when add_after is DG_REPORT_TICK_NONE) is added to c. */
uint64_t dg_harness__compare_streams(dg_report_check *c, const harness__stream *a, const harness__stream *b,
                                  uint64_t add_after, uint64_t *first_ticks, size_t max_first, size_t *n_first,
                                  uint64_t *first_raw);

/* Groups n streams (s[i] NULL: none, e.g. a build that failed) into classes of streams equal at every
 * tick: their quantized hashes, and with by_raw their raw float hashes too (ticks where both carry
 * one). cls[i] gets i's class (SIZE_MAX for NULL), reps[c] the first member of class c (room for n).
 * Returns the number of classes. */
size_t dg_harness__stream_classes(const harness__stream *const *s, size_t n, bool by_raw, size_t *cls, size_t *reps);

/* Re-runs the source and diffs its quantized worlds with the recording's rebuilt worlds at the
 * given ticks (increasing), adding the detail to c. fault_tick as for dg_harness__replay_hash.
 * *not_reproduced gets the first of those ticks where the re-run's hashes differ from rec (the
 * source is not deterministic), DG_REPORT_TICK_NONE when it reproduced them all. */
dg_status dg_harness__detail_source_vs_file(dg_report_check *c, harness__source *src, const char *path,
                                         uint64_t fault_tick, const uint64_t *ticks, size_t n,
                                         const harness__stream *rec, uint64_t *not_reproduced,
                                         dg_error *err);

/* Lockstep comparison of two recordings (A reference, B the other): hash first, state diff on every
 * divergent tick (the first limits' worth in detail). Fills check c; returns divergent tick count
 * or UINT64_MAX on error (err set, c marked error). */
/* What each side of a comparison by hash is (harness/hash_views.c). */
typedef enum harness__view_kind {
    HARNESS_VIEW_LOG,   /* a hash log: per-entity hashes when it has entity lines */
    HARNESS_VIEW_FLREP, /* a .flrep recording: per-entity hashes and states */
    HARNESS_VIEW_OTHER  /* anything else (an RPLY recording): neither is read */
} harness__view_kind;
/* After a comparison by hash filled c's divergent ticks: the spread from per-entity hashes where
 * both sides have them, the trajectory of the entity that diverged first from each side holding
 * states, and one detail line for what the data does not allow, naming the sides names[0] and
 * names[1] (NULL: "side A", "side B"). Best effort (a read error only leaves a view out, with its line);
 * nothing when c has no divergent tick. */
void dg_harness__hash_views(dg_report_check *c, const char *a, harness__view_kind ka, const char *b,
                         harness__view_kind kb, const char *const names[2]);

/* With spare threads (harness/diff_parallel.c): replays both recordings at once, then seeks ra
 * and rb to the first tick where they differ, so a lockstep pass from there makes the report of one
 * from the start. a_end / b_end: that side has no tick left (do not read it); b_entity_ticks: B's
 * before the readers' position. No spare thread, a read error, or no equal tick first: the readers
 * stay at the start and *out is zero. An error only if the readers could not be opened again. */
typedef struct harness__diff_skip {
    bool a_end, b_end;
    uint64_t b_entity_ticks;
} harness__diff_skip;
dg_status dg_harness__diff_skip_equal(const char *pa, const char *pb, dg_flrep_reader **ra, dg_flrep_reader **rb,
                                   harness__diff_skip *out, dg_error *err);
uint64_t dg_harness__compare_files(dg_report_check *c, dg_report_scenario *sc, const char *a,
                                const char *b, dg_error *err);

/* Adds a "header" check to sc comparing what is deterministic in two .flrep headers (tick rate,
 * planet radius, keyframe interval, session flags, mission id, the type, faction, roster and mission
 * object tables), each difference named with both values; engine version, start time and format
 * version are shown as detail lines, never compared. 0 equal, 1 differ, -1 could not read (ERROR). */
int dg_harness__compare_headers(dg_report_scenario *sc, const char *a, const char *b);

/* Reads a whole hash log (plain or zstd) into a stream (a few dozen bytes per tick). */
dg_status dg_harness__load_log(const char *log, harness__stream *out, dg_hash_log_header *hdr, dg_error *err);
/* Ticks diffed in detail when the record side must be re-derived from its source. */
size_t dg_harness__detail_max(void);

/* ---- repeat runs (harness/repeat.c) ------------------------------------------------------------ */

/* A raw drift's first differing value (dg_harness__raw_locate): entity, field, both raw values. */
typedef struct harness__raw_first {
    uint32_t entity;                        /* 0: not known */
    char field[DG_HASH_LOG_NAME_MAX + 1];   /* "": not known */
    double a, b;
} harness__raw_first;

/* Run k (its recording path, its record-side stream rec) against run 1 (first_path, first) into the
 * "repeat" check c: 0 the same (a raw-only drift is noted on c), 1 differs (c FAIL, diffed to entity
 * and field), -1 could not compare (c ERROR), in format f. raw_logs (may be NULL): run 1's and run k's
 * version 3 hash logs (harness__record_opts.raw_log), which name a raw drift's entity, field and both
 * values, and the raw change behind a one-quantum step; rf (may be NULL) gets that entity and field. */
struct harness__format; /* harness/format.h: the recordings' format, for the state diff */
int dg_harness__repeat_compare(dg_report_check *c, const char *first_path, const harness__stream *first,
                            const char *path, const harness__stream *rec, unsigned k,
                            const struct harness__format *f, const char *const raw_logs[2], harness__raw_first *rf);
/* The "repeat" check's message once every run compared equal (result 0); else leaves it. */
void dg_harness__repeat_conclude(dg_report_check *c, unsigned runs, const harness__stream *first, int result);

/* ---- the verify checks ---------------------------------------------------------------------- */

/* ---- verify beside the recording (harness/verify_follow.c) ------------------------------------ */

/* A thread that follows a recording as the writer finishes each chunk (the growing reader,
 * docs/FORMAT-flrep.md §9.2): the recovery scan of each chunk (and of the chunk cut in half before
 * it), its playback hashed tick by tick, and seeks to its first and last tick in both directions.
 * It runs at the lowest priority, on what the simulation and the writer leave of the cores, until
 * the recording is finished: then the caller takes the chunks still waiting. */
typedef struct harness__follow harness__follow;

typedef struct harness__follow_result {
    bool followed;                /* every chunk reported was scanned, played and seeked */
    bool disagreed;               /* ... and something was not as it must be: why */
    char why[700];
    const dg_flrep_reader *r;     /* the growing reader, every chunk scanned (owned by the follower) */
    const harness__stream *rp;    /* the playback's hashes, every tick */
    double replay_cpu_s;          /* CPU seconds of the playback and its hashing */
    bool edges;                   /* every chunk's first and last tick were seeked, both ways */
    uint64_t torn_cut;            /* the last chunk cut in half: the size the scan was given, */
    size_t torn_chunks;           /* the chunks it then held */
    uint64_t torn_ticks, torn_first, torn_last;
} harness__follow_result;

/* NULL when verify should not follow: jobs <= 1, or no thread. fault_tick, seek_fault_tick: the
 * replay-side and seek-only test hooks (UINT64_MAX = none), set on the follower's reader (what they
 * break, the follower sees: the checks then run on the finished file, where the recovery check's
 * reader has no hook); edges: seek every chunk's edges (no --seek-edges cap). */
harness__follow *dg_harness__follow_start(unsigned jobs, uint64_t fault_tick, uint64_t seek_fault_tick, bool edges);
/* The writer's chunk notification (dg_flrep_chunk_fn), user = the follower. */
void dg_harness__follow_chunk(void *user, const dg_flrep_chunk_done *d);
/* Stops the thread after its chunk in progress and does the chunks still waiting on the calling
 * thread; the result stays valid until dg_harness__follow_free (which, unfinished, drops them). */
const harness__follow_result *dg_harness__follow_finish(harness__follow *f);
/* The edges flag it was started with (what the result's `edges` will say), known before it finishes. */
bool dg_harness__follow_edges(const harness__follow *f);
void dg_harness__follow_free(harness__follow *f);
/* Two index entries are the same chunk (every field; the struct has padding, so not memcmp). */
bool dg_harness__chunk_equal(const dg_flrep_chunk_info *a, const dg_flrep_chunk_info *b);

typedef struct harness__verify_opts {
    uint64_t fault_tick;       /* replay-side double-delta fault; UINT64_MAX = none */
    uint64_t seek_fault_tick;  /* seek-only fault: a seek to this tick drops the delta before it; UINT64_MAX = none */
    size_t seek_random;        /* random sample ticks besides edges (default 32) */
    size_t seek_max_edges;     /* cap on chunk edges sampled (0 = all) */
    bool skip_recovery;
    unsigned jobs;             /* threads at most for the checks and the replay inside them (0 or 1 = one) */
    void (*progress)(void *user, uint64_t tick, uint64_t total);
    void *progress_user;
    harness__follow *follow;   /* the recording was followed as it was written (NULL = not); not freed here */
} harness__verify_opts;

/* Runs record-vs-replay, seek and recovery on a recording whose record side is `rec` (and whose
 * source is src, for diffs). Adds checks to sc. Returns the number of failed checks, or -1 when a
 * check could not run (error check added). */
int dg_harness__verify_file(dg_report_scenario *sc, harness__source *src, const char *path,
                         const harness__stream *rec, const harness__verify_opts *o);

/* ---- declared fields ------------------------------------------------------------------------ */

/* One entity into a raw float hash: its 11 standard floats, then its k declared float fields' raw
 * values (docs/STATE-HASH.md §6 over 11 + k floats; k = 0 is the hash of before). */
void dg_harness__raw_entity(dg_hash_stream *hs, const dg_entity_in *e, const double *xraw, size_t k);

/* The entity-ticks a run's temporary raw log keeps (about 250 bytes each: at most ~65 MB a log). */
#define HARNESS_RAW_LOG_CAP (UINT64_C(1) << 18)

/* A version 3 hash log of a record side that is not a source (the C API's sessions): per tick the
 * entities (sorted by id, as the writer handed them back: q, and the declared slots xq, nx per
 * entity) with their standard floats; capped, the first HARNESS_RAW_LOG_CAP entity-ticks (a
 * temporary log to compare with), else every tick (a hash log to keep). open creates it at path
 * (scenario name), close writes the trailer and frees l (l may be NULL). */
typedef struct harness__raw_logger harness__raw_logger;
dg_status dg_harness__raw_logger_open(harness__raw_logger **out, const char *path, const char *name, bool capped,
                                      dg_error *err);
dg_status dg_harness__raw_logger_tick(harness__raw_logger *l, uint64_t tick, const dg_entity_in *sorted,
                                      const dg_qentity *q, const int64_t *xq, size_t nx, size_t n,
                                      const dg_event *ev, size_t nev, dg_error *err);
dg_status dg_harness__raw_logger_close(harness__raw_logger *l, dg_error *err);

/* ---- raw values by name (harness/raw_values.c) ---------------------------------------------------- */

/* The floats dg_harness__raw_entity hashes, in its order, into out (room for HARNESS_RAW_FIELDS +
 * HARNESS_DECL_MAX_FIELDS): the standard 11, then k declared float values (none when xraw is NULL).
 * Returns how many. */
size_t dg_harness__raw_floats(const dg_entity_in *e, const double *xraw, size_t k, double *out);
/* Their names joined by ',' into out (a version 3 hash log's values=): pos.x ... health, then d's
 * float fields in declaration order (d may be NULL). Returns how many, 0 when out is too small. */
uint32_t dg_harness__raw_value_names(const harness__decl *d, char *out, size_t cap);
/* A difference d in unit for a human ("15.6 mm", "0.2 mm/s", "3e-05 rad"). */
void dg_harness__raw_amount(double d, const char *unit, char *out, size_t cap);
/* Two record-side hash logs at a tick whose raw hashes differ: a detail line naming the entities whose
 * raw floats differ and, when both logs are version 3, one line per differing value of the first of
 * them with both raw values exactly; first_field (may be NULL) gets the first of those values in
 * short ("vel.z: raw A ..., B ... (B - A = ...)"), "" when none. Returns that entity's id (0 when the
 * logs cannot say). rf (may be NULL) gets the same as data. */
uint32_t dg_harness__raw_locate(dg_report_check *c, const char *log_a, const char *log_b, uint64_t tick, char *first_field,
                                size_t cap, harness__raw_first *rf);
/* Whether the hash log at path carries each entity's raw floats (version 3: `record --hash-log
 * --log-raw`), so that a raw drift against it can be named down to the entity and field. */
bool dg_harness__log_has_raw_values(const char *path);
/* A raw-only drift against a golden hash log gl, into c's message (and details), worded with what the
 * golden allows: against a version 3 log (fresh_raw, this run's raw floats as a version 3 log; may be
 * NULL) the first drifting entity, its differing fields and both raw values, as `diff` of two such
 * logs names them; else the raw floats that one hash per tick covers (d's float fields included; d
 * may be NULL) and `hint`, how to get the rest. note (may be NULL) ends the message (": note"). rf
 * (may be NULL) gets the entity, field and values. */
void dg_harness__golden_raw_message(dg_report_check *c, const char *gl, const char *fresh_raw, const harness__decl *d,
                                    uint64_t first_raw, const char *hint, const char *note, harness__raw_first *rf);
/* For every field of c's detailed ticks that differs by exactly one quantum, and whose raw values both
 * version 3 logs hold: a detail line with the raw change behind it ("1 quantum (15.6 mm) from a raw
 * change of 0.2 mm across a rounding edge"). Nothing when a log is not version 3. */
void dg_harness__raw_edges(dg_report_check *c, const char *log_a, const char *log_b);

/* Declared extra fields of a recording (0 for format 1.x). */
size_t dg_harness__reader_fields(const dg_flrep_reader *r);
/* A read tick's hash with its extras (nx = dg_harness__reader_fields). */
dg_tick_hash dg_harness__hash_read_tick(const dg_flrep_tick *t, size_t nx, uint64_t *entity_hashes);
/* Declared extra fields of a source (0 when it declares none). */
size_t dg_harness__source_fields(const harness__source *s);
/* After a source is opened: hdr.schema set from its declaration (NULL when legacy), the project's
 * declaration (dg_harness__decl_preset) applied or checked against the stream's. */
dg_status dg_harness__source_schema_ready(harness__source *s, dg_error *err);
/* The project file's declaration, for every stream the process reads (NULL = none): a stream that
 * declares nothing takes it, one that declares must agree (exit 2 naming both). Not copied: d must
 * live as long as the process reads streams. */
void dg_harness__decl_preset(const harness__decl *d);
const harness__decl *dg_harness__decl_preset_get(void);

/* ---- the sampled entity log of a hash-log-only golden (harness/golden_entities.c) ------------ */

/* At most this many entity lines in NAME.entities.hashlog.zst (about 9 compressed bytes each). */
#define DG_HARNESS_ENTITY_LINES_MAX 100000
/* dir/NAME.entities.hashlog.zst */
void dg_harness__entities_log_path(char *buf, size_t cap, const char *dir, const char *name);
/* K, the sampling interval: the smallest that keeps entity_ticks / K within the limit (>= 1). */
uint64_t dg_harness__entity_every(uint64_t entity_ticks);
/* bless: with `wanted`, writes golden/NAME.entities.hashlog.zst from the recording at rec_path, the
 * ticks that are multiples of K with their entity lines (*every = K); without, removes a stale one
 * (*every = 0). The old file is replaced only by a complete new one. */
dg_status dg_harness__bless_entities(const char *golden, const char *name, const char *rec_path, bool wanted,
                                     uint64_t entity_ticks, uint64_t *every, dg_error *err);

/* ---- small utilities ------------------------------------------------------------------------ */
double dg_harness__now(void);
/* CPU seconds used by the calling thread (wall seconds where the platform has no thread CPU clock):
 * a throughput figure that other processes on a shared machine do not move. */
double dg_harness__thread_cpu_now(void);
/* A temp path in dir (NULL = $TMPDIR or /tmp) with the given suffix; returns false on overflow.
 * The last 128 such paths whose files exist are remembered for dg_harness__temp_cleanup. */
bool dg_harness__temp_path(char *buf, size_t cap, const char *dir, const char *stem, const char *suffix);
/* Removes every remembered temp file (and the writer's in-progress name for it). Only unlink():
 * safe in a signal handler. */
void dg_harness__temp_cleanup(void);
/* Remembers a temp path chosen earlier once more, just before it is written (a slot whose file does
 * not exist yet may have been reused by a long run in between). */
void dg_harness__temp_remember(const char *path);
/* Copies the first len bytes of src to dst. */
dg_status dg_harness__copy_prefix(const char *src, const char *dst, uint64_t len, dg_error *err);
/* Entity display name from the roster (callsign), or NULL. */
const char *dg_harness__entity_name(const dg_flrep_header *h, uint32_t id, char *buf, size_t cap);
/* Basename of path without the extension, sanitized to a hash-log token. */
void dg_harness__scenario_name(const char *path, char *out, size_t cap);
/* Levenshtein distance of two short names (64 when either is 64 bytes or longer): "did you mean". */
size_t dg_harness__edit_distance(const char *a, const char *b);
/* names[0..n) joined into out (cut to cap): sep between them, last before the last one —
 * (", ", " or ") gives a message's "a, b or c", ("|", "|") a usage line's "a|b|c". */
void dg_harness__join_names(char *out, size_t cap, const char *const *names, size_t n, const char *sep,
                            const char *last);

#endif
