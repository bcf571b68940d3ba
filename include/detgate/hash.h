/* detgate — the per-tick state hash and its text log (prefix dg_hash_).
 *
 * Every value here is defined byte by byte in docs/STATE-HASH.md so another implementation can
 * reproduce it: XXH3-64 over fixed-width little-endian serializations of the quantized state
 * (include/detgate/quant.h), never over structs or floats. The hashes are hierarchical:
 *
 *   entity hash  = XXH3-64(seed "dgH1ent.", 48-byte entity record)
 *   state hash   = XXH3-64(seed "dgH1sta.", tick ‖ entity hashes in id order ‖ entity count)
 *   events hash  = XXH3-64(seed "dgH1evt.", event count ‖ the tick's events in order)
 *   tick hash    = XXH3-64(seed "dgH1tik.", tick ‖ entity count ‖ state hash ‖ events hash)
 *   raw hash     = XXH3-64(seed "dgH1raw.", tick ‖ per entity: id ‖ n ‖ n raw f64 bit patterns)
 *
 * so two runs that disagree can be localized to tick, then entity, from hashes alone, and a
 * divergence that never crossed a quantization step (raw differs, state equal) is still seen.
 *
 * Nothing in this module allocates per tick; the log reader grows one entity array to the widest
 * tick it has seen. Functions never print. */
#ifndef DETGATE_HASH_H
#define DETGATE_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "detgate/error.h"
#include "detgate/quant.h"
#include "detgate/rply.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- domain-separation seeds: the ASCII text read as a little-endian u64 --------------------- */
#define DG_HASH_SEED_ENTITY UINT64_C(0x2e746e6531486764) /* "dgH1ent." */
#define DG_HASH_SEED_EVENTS UINT64_C(0x2e74766531486764) /* "dgH1evt." */
#define DG_HASH_SEED_STATE UINT64_C(0x2e61747331486764)  /* "dgH1sta." */
#define DG_HASH_SEED_TICK UINT64_C(0x2e6b697431486764)   /* "dgH1tik." */
#define DG_HASH_SEED_RAW UINT64_C(0x2e77617231486764)    /* "dgH1raw." */

#define DG_HASH_ENTITY_BYTES 48 /* canonical entity record size (docs/STATE-HASH.md §2) */
#define DG_HASH_EVENT_FIXED_BYTES 23 /* event record size before its text bytes (§3) */

/* ---- one entity, one event list -------------------------------------------------------------- */

/* Writes the canonical 48-byte record of e into out (explicit LE stores; bytes 43..47 are 0).
 * Precondition: e and out non-NULL. */
void dg_hash_entity_bytes(const dg_qentity *e, uint8_t out[DG_HASH_ENTITY_BYTES]);

/* XXH3-64 of the entity record with DG_HASH_SEED_ENTITY. Precondition: e non-NULL. */
uint64_t dg_hash_entity(const dg_qentity *e);

/* The entity hash with the schema's extra fields (docs/STATE-HASH.md §2.1): XXH3-64 with
 * DG_HASH_SEED_ENTITY over the 48-byte record followed by the field_count slots as little-endian
 * i64. With field_count 0 it is dg_hash_entity(e) exactly. extras may be NULL when field_count 0. */
uint64_t dg_hash_entity_x(const dg_qentity *e, const int64_t *extras, size_t field_count);

/* XXH3-64 of the tick's events in the order given (count first). ev may be NULL when n == 0.
 * Precondition: every event with text_len > 0 has non-NULL text (dg_hash_events_checked tests it). */
uint64_t dg_hash_events(const dg_event *ev, size_t n);

/* As dg_hash_events, but rejects (DG_E_USAGE) NULL text with text_len > 0, and (DG_E_RANGE) an event
 * whose stamped tick differs from `tick`; the error names the event index. *out untouched on error. */
dg_status dg_hash_events_checked(uint64_t tick, const dg_event *ev, size_t n, uint64_t *out,
                                 dg_error *err);

/* ---- a whole tick ------------------------------------------------------------------------------ */
typedef struct dg_tick_hash {
    uint64_t tick;
    uint32_t entity_count;
    uint64_t state;    /* entities only */
    uint64_t events;   /* events only */
    uint64_t combined; /* the tick hash: binds tick, count, state and events */
} dg_tick_hash;

/* Hashes one tick. ents must be sorted by strictly increasing id (precondition, not checked: use
 * dg_hash_tick_checked on untrusted input). When entity_hashes_out is non-NULL it receives the n
 * entity hashes, in the same order. ents may be NULL when n == 0, ev when nev == 0. */
dg_tick_hash dg_hash_tick(uint64_t tick, const dg_qentity *ents, size_t n, const dg_event *ev,
                          size_t nev, uint64_t *entity_hashes_out);

/* The validated variant: rejects (DG_E_USAGE) ids that are 0 or not strictly increasing (the error
 * names the index and both ids), n > UINT32_MAX, and the dg_hash_events_checked failures. On error
 * *out and entity_hashes_out are left untouched. */
dg_status dg_hash_tick_checked(uint64_t tick, const dg_qentity *ents, size_t n, const dg_event *ev,
                               size_t nev, uint64_t *entity_hashes_out, dg_tick_hash *out,
                               dg_error *err);

/* dg_hash_tick with extra fields: extras[i * field_count + j] belongs to ents[i]; each entity hash
 * is dg_hash_entity_x. With field_count 0 the result is dg_hash_tick's exactly. */
dg_tick_hash dg_hash_tick_x(uint64_t tick, const dg_qentity *ents, const int64_t *extras, size_t field_count,
                            size_t n, const dg_event *ev, size_t nev, uint64_t *entity_hashes_out);

/* dg_hash_tick_checked with extra fields (the same checks). */
dg_status dg_hash_tick_checked_x(uint64_t tick, const dg_qentity *ents, const int64_t *extras, size_t field_count,
                                 size_t n, const dg_event *ev, size_t nev, uint64_t *entity_hashes_out,
                                 dg_tick_hash *out, dg_error *err);

/* ---- streaming forms (for a caller that rebuilds the state entity by entity) -------------------- */

/* The streaming state: opaque (its layout is hash/'s, hash/hash_internal.h), but in the caller's
 * storage, not behind a _new/_free pair, for one reason: the streaming calls cannot fail and never
 * allocate (docs/STATE-HASH.md §10), and every recorded or replayed tick of every source runs one of
 * them — a state on the stack keeps the per-tick path free of the allocator and of an error path it
 * would need. Begin it before use (dg_hash_tick_begin, dg_hash_raw_begin, dg_hash_rply_entity_begin);
 * it owns nothing, so nothing ends it. Its size and alignment are ABI (docs/API.md, "Caller storage"):
 * 64-byte aligned, so a heap copy needs aligned_alloc(64, sizeof(dg_hash_stream)). */
#if defined(__cplusplus)
#define DG_HASH_ALIGN64 alignas(64)
#else
#define DG_HASH_ALIGN64 _Alignas(64)
#endif
#define DG_HASH_STREAM_SIZE 1728 /* bytes: the size it had when its fields were shown (ABI kept) */
typedef struct dg_hash_stream {
    DG_HASH_ALIGN64 unsigned char opaque[DG_HASH_STREAM_SIZE];
} dg_hash_stream;

/* Tick stream: begin, add each entity in id order, end with the events hash. The result equals
 * dg_hash_tick over the same entities. dg_hash_tick_add returns that entity's hash. */
void dg_hash_tick_begin(dg_hash_stream *s, uint64_t tick);
uint64_t dg_hash_tick_add(dg_hash_stream *s, const dg_qentity *e);
dg_tick_hash dg_hash_tick_end(dg_hash_stream *s, uint64_t events_hash);
/* dg_hash_tick_add with the entity's extra fields (dg_hash_entity_x). */
uint64_t dg_hash_tick_add_x(dg_hash_stream *s, const dg_qentity *e, const int64_t *extras, size_t field_count);
/* Number of entities that were added with id 0 or out of id order (0 when the input was valid).
 * Read it before the next begin. */
uint32_t dg_hash_stream_order_errors(const dg_hash_stream *s);

/* Raw (pre-quantization) float hash: hashes the IEEE-754 binary64 bit patterns exactly as given —
 * -0.0 differs from +0.0 and every NaN payload is its own value (docs/STATE-HASH.md §5). Feed the
 * entities in id order; fields are whatever the simulation has (n per entity, may vary). */
void dg_hash_raw_begin(dg_hash_stream *s, uint64_t tick);
void dg_hash_raw_entity(dg_hash_stream *s, uint32_t id, const double *fields, size_t n);
uint64_t dg_hash_raw_end(dg_hash_stream *s);

/* The same entities fed all at once: records[0..len) holds them laid out one after another, each as
 * dg_hash_raw_record writes it (what dg_hash_raw_entity feeds: u32 id, u32 n, n binary64, all
 * little-endian), in id order. Equal to dg_hash_raw_entity on each in turn (order errors counted
 * alike), in one XXH3 update instead of a feed per field. len must end on a record's end. */
void dg_hash_raw_records(dg_hash_stream *s, const void *records, size_t len);
/* dg_hash_raw_records for a caller that has checked the order itself: records holds `count` of them,
 * ids >= 1 and each above the one before (and above every id fed since dg_hash_raw_begin), the last
 * one's id last_id. The same digest, without the walk over the records that counts order errors
 * (none is counted: the caller vouches there are none). */
void dg_hash_raw_records_sorted(dg_hash_stream *s, const void *records, size_t len, uint32_t count, uint32_t last_id);

/* Writes one entity's raw record at out (8 + 8n bytes, returned). */
static inline size_t dg_hash_raw_record(uint8_t *out, uint32_t id, const double *fields, size_t n)
{
    uint64_t w = (uint64_t)id | (uint64_t)(uint32_t)n << 32;
    for (size_t i = 0;; i++) {
        for (int b = 0; b < 8; b++)
            out[8 * i + (size_t)b] = (uint8_t)(w >> (8 * b));
        if (i == n)
            return 8 + 8 * n;
        memcpy(&w, &fields[i], sizeof w); /* the value's bit pattern */
    }
}

/* ---- localization: which entities differ between two sides --------------------------------------- */
typedef enum dg_hash_diff_kind {
    DG_HASH_DIFF_CHANGED = 1, /* id on both sides, hashes differ */
    DG_HASH_DIFF_ADDED = 2,   /* id only on side b */
    DG_HASH_DIFF_LOST = 3,    /* id only on side a */
} dg_hash_diff_kind;

typedef struct dg_hash_diff_counts {
    size_t changed, added, lost, same;
} dg_hash_diff_counts;

/* Called once per differing id in increasing id order; hash_a / hash_b are 0 for the missing side.
 * Return nonzero to stop early. */
typedef int (*dg_hash_diff_fn)(void *user, dg_hash_diff_kind kind, uint32_t id, uint64_t hash_a,
                               uint64_t hash_b);

/* Merges two (id, hash) lists, each sorted by strictly increasing id, and reports every id that was
 * added, lost or changed. fn may be NULL (counts only); counts may be NULL. Fails (DG_E_USAGE) on
 * an unsorted list, naming the side and index; fn may have been called for ids before that point. */
dg_status dg_hash_diff_entities(const uint32_t *ids_a, const uint64_t *hashes_a, size_t na,
                                const uint32_t *ids_b, const uint64_t *hashes_b, size_t nb,
                                dg_hash_diff_fn fn, void *user, dg_hash_diff_counts *counts,
                                dg_error *err);

/* ---- the hash log (text, docs/STATE-HASH.md §7) --------------------------------------------------- */
#define DG_HASH_LOG_VERSION 1 /* a log without per-entity raw hashes (byte for byte as before) */
#define DG_HASH_LOG_VERSION_ENTITY_RAW 2 /* e lines also carry each entity's raw hash (§7) */
#define DG_HASH_LOG_VERSION_RAW_VALUES 3 /* e lines also carry the entity's raw floats' bits (§7) */
#define DG_HASH_LOG_VALUES_MAX 64        /* raw values per entity in a version 3 log */
#define DG_HASH_LOG_VALUES_CAP 2048      /* the header's values= list: names joined by ',', NUL */
#define DG_HASH_LOG_NAME_MAX 64 /* scenario / format tokens: [A-Za-z0-9._+/-]{1,64} */

typedef struct dg_hash_log_header {
    char scenario[DG_HASH_LOG_NAME_MAX + 1];
    char format[DG_HASH_LOG_NAME_MAX + 1];
    bool entities; /* the log carries per-entity hash lines */
    bool raw;      /* the log carries raw hashes (else "-" on every tick line) */
    bool entity_raw; /* version 2: each e line also carries the entity's raw hash (needs entities
                        and raw); false writes version 1 exactly as before */
    /* Version 3 (needs entity_raw): each e line also carries the n_values raw floats the entity's
     * raw hash covers, as binary64 bit patterns; values names them, in order, joined by ','
     * ("pos.x,pos.y,..."; each 1..64 of [A-Za-z0-9._+/-]). n_values 0 = version 1 or 2. */
    uint32_t n_values;
    char values[DG_HASH_LOG_VALUES_CAP];
} dg_hash_log_header;

/* One tick as written to / read from a log. */
typedef struct dg_hash_log_tick {
    uint64_t tick;
    uint32_t entity_count;
    uint64_t state, events;
    uint64_t raw;           /* meaningful only when has_raw */
    bool has_raw;
    const uint32_t *ids;    /* entity_count ids (NULL when the log has no entity lines) */
    const uint64_t *hashes; /* their entity hashes */
    const uint64_t *raw_hashes; /* their raw hashes (§6 over that one entity): only with entity_raw */
    const uint64_t *raw_bits;   /* version 3: entity_count * n_values bit patterns, entity by entity */
} dg_hash_log_tick;

typedef struct dg_hash_log_writer dg_hash_log_writer;
typedef struct dg_hash_log_reader dg_hash_log_reader;

/* Creates a log at path; a path ending in ".zst" is written zstd-compressed (level 3, checksum).
 * Writes the header line. Fails on an invalid header token (DG_E_USAGE) or I/O (DG_E_IO). */
dg_status dg_hash_log_writer_open(dg_hash_log_writer **out, const char *path, const dg_hash_log_header *h,
                             dg_error *err);
/* The same onto an open stream (not closed by dg_hash_log_writer_close), plain text or zstd. */
dg_status dg_hash_log_writer_open_fp(dg_hash_log_writer **out, FILE *fp, bool zstd,
                                const dg_hash_log_header *h, dg_error *err);
/* Appends one tick. Ticks must strictly increase; entity ids (when the header says entities) must
 * be given, strictly increasing, t->entity_count of them; has_raw must match the header, and with
 * entity_raw so must raw_hashes. */
dg_status dg_hash_log_writer_write(dg_hash_log_writer *w, const dg_hash_log_tick *t, dg_error *err);
/* Writes the trailer, flushes and frees w (also on error). w may be NULL. */
dg_status dg_hash_log_writer_close(dg_hash_log_writer *w, dg_error *err);

/* Opens a log; zstd is detected by its magic number, not the file name. Reads the header. */
dg_status dg_hash_log_reader_open(dg_hash_log_reader **out, const char *path, dg_error *err);
/* The same from an open stream (e.g. stdin; not closed by dg_hash_log_reader_close); name is used in errors. */
dg_status dg_hash_log_reader_open_fp(dg_hash_log_reader **out, FILE *fp, const char *name, dg_error *err);
/* The same over a caller-owned buffer (must outlive the reader); name is used in errors. */
dg_status dg_hash_log_reader_open_mem(dg_hash_log_reader **out, const void *buf, size_t len,
                               const char *name, dg_error *err);
const dg_hash_log_header *dg_hash_log_reader_header(const dg_hash_log_reader *r);
/* Reads the next tick into *t (its ids/hashes stay valid until the next call). Returns 1 with *t
 * filled, 0 after the trailer (then *t is untouched), -1 on error: err carries "name:line:col" in
 * where, the byte offset in the decompressed text, and expected vs found. */
int dg_hash_log_reader_next(dg_hash_log_reader *r, dg_hash_log_tick *t, dg_error *err);
void dg_hash_log_reader_close(dg_hash_log_reader *r);

/* ---- comparing two logs ------------------------------------------------------------------------- */
typedef enum dg_hash_verdict {
    DG_HASH_SAME = 0,       /* every tick equal (raw too, where both sides have it) */
    DG_HASH_SUBQUANTUM = 1, /* quantized state and events equal everywhere, raw floats differ */
    DG_HASH_DIVERGED = 2,   /* quantized state, events or the tick set differ */
} dg_hash_verdict;

#define DG_HASH_CMP_MAX_IDS 64

typedef struct dg_hash_log_cmp {
    dg_hash_verdict verdict;
    uint64_t ticks_a, ticks_b;     /* ticks read on each side */
    uint64_t ticks_differing;      /* ticks whose state or events differ, or present on one side */
    uint64_t ticks_subquantum;     /* ticks with equal state and events but different raw hashes */
    /* The first tick that differs in state/events/presence (valid when verdict == DIVERGED). */
    uint64_t first_tick;
    bool first_missing_a, first_missing_b; /* the tick exists only on the other side */
    bool first_state, first_events, first_count; /* which parts differ there */
    /* The first sub-quantum tick (valid when ticks_subquantum > 0). */
    uint64_t first_subquantum_tick;
    /* Entities at first_tick (when both logs carry entity lines): counts and the first ids. */
    bool entities_known;
    dg_hash_diff_counts entity_counts;
    size_t n_ids;
    uint32_t ids[DG_HASH_CMP_MAX_IDS];
    dg_hash_diff_kind id_kinds[DG_HASH_CMP_MAX_IDS];
} dg_hash_log_cmp;

/* Compares two logs tick by tick (merging on tick number). Reading or parse errors fail the call.
 * Headers may differ in scenario/format (the caller decides whether that matters). */
dg_status dg_hash_log_compare(dg_hash_log_reader *a, dg_hash_log_reader *b, dg_hash_log_cmp *out,
                              dg_error *err);

/* One line (no '\n') for a human: the verdict, the first differing tick, what differed there and
 * the entity ids, e.g. "diverged at tick 4312 (state differs): entities changed 7 19; 1 of 40 ticks
 * differ". Always NUL-terminated; truncated to cap. */
void dg_hash_log_cmp_summary(const dg_hash_log_cmp *c, char *buf, size_t cap);

/* 16 lowercase hex digits and a NUL. */
void dg_hash_hex(uint64_t h, char out[17]);

/* ---- the RPLY state hash (docs/STATE-HASH.md §11) ---------------------------------------------------
 * The same hierarchy over an RPLY v3 world (the player's rebuilt state, or the writer's tracked one):
 * entity hash = XXH3-64(seed "dgR1ent.", 52-byte record ‖ each property's 15 bytes in increasing name
 * id); state hash = XXH3-64(seed "dgR1sta.", tick ‖ entity hashes in id order ‖ count); events hash =
 * dg_hash_events of no event (RPLY events are not state); tick hash = XXH3-64(seed "dgR1tik.", tick ‖
 * count ‖ state ‖ events). */
#define DG_HASH_RPLY_SEED_ENTITY UINT64_C(0x2e746e6531526764) /* "dgR1ent." */
#define DG_HASH_RPLY_SEED_STATE UINT64_C(0x2e61747331526764)  /* "dgR1sta." */
#define DG_HASH_RPLY_SEED_TICK UINT64_C(0x2e6b697431526764)   /* "dgR1tik." */
#define DG_HASH_RPLY_ENTITY_BYTES 52 /* the fixed entity record (§11.1) */
#define DG_HASH_RPLY_PROP_BYTES 15   /* one property (§11.2) */

/* What an RPLY entity's fixed record holds. nprops counts every property the entity has. */
typedef struct dg_hash_rply_entity {
    uint16_t id, parent, descriptor;
    dg_rply_xstate x;
    uint16_t nprops;
} dg_hash_rply_entity;

/* The 52-byte record of e (explicit LE stores; bytes 7 and the xstate's padding are not read).
 * Precondition: e and out non-NULL. */
void dg_hash_rply_entity_bytes(const dg_hash_rply_entity *e, uint8_t out[DG_HASH_RPLY_ENTITY_BYTES]);
/* The 15 bytes of property `name` = *v (a tag this version does not know: its payload is zero). */
void dg_hash_rply_prop_bytes(uint16_t name, const dg_rply_value *v, uint8_t out[DG_HASH_RPLY_PROP_BYTES]);
/* Entity hash, streamed: begin with the fixed record, add e->nprops properties in increasing name id,
 * end. s lives on the caller's stack (no allocation); it is not a tick stream meanwhile. */
void dg_hash_rply_entity_begin(dg_hash_stream *s, const dg_hash_rply_entity *e);
void dg_hash_rply_entity_prop(dg_hash_stream *s, uint16_t name, const dg_rply_value *v);
uint64_t dg_hash_rply_entity_end(dg_hash_stream *s);
/* The same entity hash in one call, over e and its n properties names[i] = values[i] (increasing name
 * id; n == e->nprops for a complete entity). names and values may be NULL when n == 0. */
uint64_t dg_hash_rply_entity_hash(const dg_hash_rply_entity *e, const uint16_t *names, const dg_rply_value *values,
                                  size_t n);
/* The tick's state, events and tick hash from its n entity hashes in increasing id. entity_hashes may
 * be NULL when n == 0. Precondition: n <= UINT32_MAX (RPLY ids are 16-bit). */
dg_tick_hash dg_hash_rply_tick(uint64_t tick, const uint64_t *entity_hashes, size_t n);

#ifdef __cplusplus
}
#endif
#endif
