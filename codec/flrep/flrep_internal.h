/* codec/flrep/flrep_internal.h — what the .flrep writer and reader share inside codec/flrep/:
 * constants of docs/FORMAT-flrep.md, the header/section codec, the tick codec with its predictor,
 * and the chunk framing. Nothing here is public API. */
#ifndef DETGATE_FLREP_INTERNAL_H
#define DETGATE_FLREP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>   /* same_state */
#endif

#include "cursor.h"
#include "detgate/flrep.h"
#include "test_hooks.h"

#define FLREP_CHUNK_HDR_SIZE 36u
#define FLREP_TRAILER_FIXED 48u
#define FLREP_TICK_HDR_SIZE 18u
#define FLREP_EVENT_HDR_SIZE 11u
#define FLREP_TICK_RATE_MAX 100000u

enum flrep_section_id {
    FLREP_SEC_END = 0x0000,
    FLREP_SEC_TYPES = 0x0001,
    FLREP_SEC_FACTIONS = 0x0002,
    FLREP_SEC_ROSTER = 0x0003,
    FLREP_SEC_CAMERA = 0x0004,
    FLREP_SEC_SCHEMA = 0x0005,   /* format 2.0 only (FORMAT-flrep.md §12.2) */
};

/* ---- the entity schema of a 2.0 file (flrep_schema.c) -------------------------------------- */

/* A schema the codec owns (deep copy: every string in one blob), with what the record codec
 * derives from it. */
typedef struct flrep_schema2 {
    dg_schema s;                              /* s.fields points at fields */
    dg_field_def fields[DG_SCHEMA_MAX_FIELDS];
    uint8_t width[DG_SCHEMA_MAX_FIELDS];      /* W(f), §12.2 */
    bool is_signed[DG_SCHEMA_MAX_FIELDS];     /* raw(f) is s(W): int, float */
    /* the values of field f: vlo[f] .. vlo[f] + vspan[f] as u64 (a signed field's bounds as their
     * two's complement), so one unsigned compare tests a value: (uint64_t)v - vlo[f] <= vspan[f] */
    uint64_t vlo[DG_SCHEMA_MAX_FIELDS], vspan[DG_SCHEMA_MAX_FIELDS];
    uint32_t pred_num, pred_den;              /* §12.4 */
    char *blob;                               /* names, units, enum names and their pointer arrays */
} flrep_schema2;

#define FLREP_PRED_MAX (1u << 20)

/* Copies src (checked with dg_schema_check first) into *dst, with pred_num/pred_den as the writer
 * chooses them (§12.4). */
dg_status dg_flrep__schema2_from(flrep_schema2 *dst, const dg_schema *src, dg_error *err);
void dg_flrep__schema2_free(flrep_schema2 *s);
/* The section 0x0005 payload. */
void dg_flrep__schema2_encode(dg_buf *b, const flrep_schema2 *s);
/* Parses section 0x0005 (base: absolute offset of buf[0]); on success *out is owned by the caller. */
dg_status dg_flrep__parse_schema(const uint8_t *buf, size_t len, uint64_t base, flrep_schema2 *out, dg_error *err);

enum flrep_rec_kind { FLREP_REC_DELTA = 0, FLREP_REC_FULL = 1, FLREP_REC_REMOVE = 2 };

const char *dg_flrep__section_name(uint16_t id);

/* The public functions accept err == NULL (error.h allows it); inside, code reads err->code, so
 * they substitute a local one. */
static inline dg_error *flrep_err(dg_error *err, dg_error *local)
{
    if (err)
        return err;
    dg_error_clear(local);
    return local;
}

/* ---- header and sections (flrep_sections.c) ---------------------------------------------- */

/* Presence bitmaps of type / faction indices, for O(1) validation of every record. */
typedef struct flrep_index_set {
    uint8_t bits[65536 / 8];
} flrep_index_set;

static inline bool flrep_set_has(const flrep_index_set *s, uint16_t i) { return (s->bits[i >> 3] >> (i & 7)) & 1; }
static inline void flrep_set_add(flrep_index_set *s, uint16_t i) { s->bits[i >> 3] |= (uint8_t)(1u << (i & 7)); }

/* Serializes header + all sections + end marker (what every rotated file starts with). */
dg_status dg_flrep__encode_preamble(dg_buf *out, const dg_flrep_header *hdr, dg_error *err);
/* The same for format 2.0 (§12.1): major 2, the schema section, tables only where required or given. */
dg_status dg_flrep__encode_preamble2(dg_buf *out, const dg_flrep_header *hdr, const flrep_schema2 *schema, dg_error *err);

/* Validates the writer's tables (unique indices, string lengths) and fills the index sets. */
dg_status dg_flrep__check_tables(const dg_flrep_header *hdr, flrep_index_set *types, flrep_index_set *factions,
                             dg_error *err);

/* Decoded tables owned by the reader: arrays allocated here, strings point into `keep` buffers. */
typedef struct flrep_tables {
    dg_flrep_header hdr;
    dg_flrep_type *types;
    dg_flrep_faction *factions;
    dg_flrep_participant *participants;
    dg_flrep_mission_object *mission_objects;
    uint8_t *keep[8];     /* owned byte buffers the strings point into */
    size_t keep_count;
    flrep_index_set type_set, faction_set;
    flrep_schema2 *schema2;   /* format 2.x: the parsed schema section; NULL for 1.x */
} flrep_tables;

void dg_flrep__tables_free(flrep_tables *t);

/* Parsers of one piece each (the fuzz targets call them directly). `base` is the absolute offset
 * of buf[0] for error messages. On success the arrays are owned by t. */
dg_status dg_flrep__parse_prefix(const uint8_t *buf, size_t len, uint64_t base, dg_flrep_header *hdr,
                             size_t *consumed, dg_error *err);
dg_status dg_flrep__parse_header_body(const uint8_t *buf, size_t len, uint64_t base, dg_flrep_header *hdr,
                                  dg_error *err);
dg_status dg_flrep__parse_types(const uint8_t *buf, size_t len, uint64_t base, flrep_tables *t, dg_error *err);
dg_status dg_flrep__parse_factions(const uint8_t *buf, size_t len, uint64_t base, flrep_tables *t, dg_error *err);
dg_status dg_flrep__parse_roster(const uint8_t *buf, size_t len, uint64_t base, flrep_tables *t, dg_error *err);

/* ---- the tick codec (flrep_tick.c) -------------------------------------------------------- */

/* Per-entity prediction context (FORMAT-flrep.md §6.4), always the one for the next tick: every
 * tick rewrites it for every live entity (zero after a FULL record or no record, the changes after a
 * DELTA), and a chunk starts from a keyframe of FULL records. */
typedef struct flrep_pred {
    int64_t dv[3];     /* the change of two i32 velocities: 33 bits (a 32-bit context broke §6.4) */
    int32_t drot[4];   /* rotation components are within +-32767: 17 bits; [3] is 0 (four lanes) */
} flrep_pred;

/* The rebuilt world: entities sorted by id with their prediction contexts, and (format 2.0) each
 * entity's nx extra field values, extras[i * nx + f]. nx is set by the owner before first use. */
typedef struct flrep_world {
    dg_qentity *ents;
    flrep_pred *pred;
    size_t n, cap;
    int64_t *extras;
    size_t nx;
} flrep_world;

void dg_flrep__world_free(flrep_world *w);
bool dg_flrep__world_reserve(flrep_world *w, size_t n);
void dg_flrep__world_swap(flrep_world *a, flrep_world *b);

/* Everything a tick decoder needs besides the bytes. */
typedef struct flrep_tick_ctx {
    uint32_t tick_rate_hz;
    uint64_t rate_magic;                /* ceil(2^64 / tick_rate_hz): exact division by multiply */
    uint64_t rate_pass;                 /* all ones when tick_rate_hz = 1, else 0 (see rdiv) */
    uint64_t rate_k;                    /* 2^45 / tick_rate_hz + 1: the multiple rdiv adds */
    uint64_t rate_bias;                 /* tick_rate_hz / 2 + rate_k x tick_rate_hz */
    uint64_t rate_even;                 /* all ones when tick_rate_hz is even, else 0 */
    const flrep_index_set *types, *factions;
    uint64_t fault_double_delta_tick;   /* test hook: the tick it fires at, when fault_double_delta is set */
    bool fault_double_delta;            /* a flag of its own: every u64, UINT64_MAX too, is a tick */
    bool general_only;                  /* test hook: every record through the general path */
    bool fast_avx2;                     /* decoder fast path and encoder loop: the AVX2 build (flrep_tick_avx2.c); tests clear it */
    const flrep_schema2 *v2;            /* format 2.0: records per §12.3 (flrep_tick2.c); NULL: 1.0 */
    int64_t pred_b;                     /* 2.0: predDen x tickRateHz */
    bool pred_fast;                     /* 2.0: pred_b <= 100000: rdiv by the multiply below */
    uint64_t pred_magic, pred_pass, pred_k, pred_bias, pred_even;   /* flrep_rdiv's constants for pred_b */
} flrep_tick_ctx;

/* Makes ctx decode and encode format 2.0 records of schema v2 (v2 must outlive ctx). */
void dg_flrep__tick_ctx_set_schema(flrep_tick_ctx *ctx, const flrep_schema2 *v2);

__extension__ typedef unsigned __int128 flrep_u128;

/* rdiv of FORMAT-flrep.md §6.4: round(a / b) half away from zero, for |a| < 2^45 (here a = 2 x vel'
 * with |vel'| < 2^31 + 2^32 + 2^40: velocity, its last change, a residual). Without a branch or a
 * sign fold: rounding half away from zero is floor((a + b/2) / b), less one in the numerator when a
 * is negative and b even (the one case with exact halves below zero); a multiple of b, rate_k x b,
 * added to the numerator and rate_k taken from the quotient keep the division unsigned. The
 * quotient comes from one multiply by ceil(2^64 / b), exact while n x b < 2^64 (Granlund–Montgomery):
 * n < 2^47 and b <= 100000 < 2^17. An integer divide here was a third of the decoder's time; for
 * b = 1 the product is 0 and rate_pass adds n itself. */
static inline int64_t flrep_rdiv(int64_t a, const flrep_tick_ctx *ctx)
{
    uint64_t n = (uint64_t)a + ctx->rate_bias + ((uint64_t)(a >> 63) & ctx->rate_even);
    uint64_t q = (uint64_t)(((flrep_u128)n * ctx->rate_magic) >> 64) + (n & ctx->rate_pass);
    return (int64_t)(q - ctx->rate_k);
}

/* Scratch the decoder reuses from tick to tick (no allocation per tick once warm). */
typedef struct flrep_tick_scratch {
    dg_event *events;
    size_t ev_cap;
    flrep_world next;
} flrep_tick_scratch;

void dg_flrep__tick_scratch_free(flrep_tick_scratch *s);

/* Decodes one tick at c (its position) and, only if every byte of it is valid, replaces *world by
 * the world after it (the previous world is left untouched on error). seq is the tick's index within
 * its chunk. Outputs tick index, keyframe flag and the events (pointing into c's buffer). */
dg_status dg_flrep__decode_tick(dg_cur *c, uint32_t seq, const flrep_tick_ctx *ctx, flrep_world *world,
                            flrep_tick_scratch *s, uint64_t *tick_out, bool *keyframe_out,
                            const dg_event **events_out, size_t *nev_out, dg_error *err);

/* Encodes one tick: on success the world moves from *world to `cur` (sorted, distinct ids), with
 * the prediction contexts a reader will have; `next` is scratch. On error *world is unchanged. */
dg_status dg_flrep__encode_tick(dg_buf *out, uint64_t tick, bool keyframe, const flrep_tick_ctx *ctx,
                            flrep_world *world, flrep_world *next, const dg_qentity *cur, size_t n,
                            const dg_event *ev, size_t nev, dg_buf *scratch_bits, dg_error *err);

/* ---- the 2.0 record block (flrep_tick2.c) ------------------------------------------------- */

/* Decodes a 2.0 record block (§12.3) and builds the world after the tick in s->next, as
 * decode_and_merge does for 1.0; *world is only read. */
dg_status dg_flrep__decode_records2(const uint8_t *block, uint32_t rec_bytes, uint32_t nrec, uint64_t block_offset,
                                bool keyframe, uint64_t tick, const flrep_tick_ctx *ctx, const flrep_world *world,
                                flrep_tick_scratch *s, const char *where, dg_error *err);

/* The tail both encoders share: self-check verdict, tick header, record block, events, world swap. */
dg_status dg_flrep__tick_emit(dg_buf *out, uint64_t tick, bool keyframe, flrep_world *world, flrep_world *next,
                              const dg_buf *bits, size_t nrec, bool tracked, const dg_event *ev, size_t nev,
                              dg_error *err);
/* Encodes one 2.0 tick (header, records, events) as dg_flrep__encode_tick does; xcur: n x nx extras. */
dg_status dg_flrep__encode_tick2(dg_buf *out, uint64_t tick, bool keyframe, const flrep_tick_ctx *ctx,
                             flrep_world *world, flrep_world *next, const dg_qentity *cur, const int64_t *xcur,
                             size_t n, const dg_event *ev, size_t nev, dg_buf *scratch_bits, dg_error *err);

/* Shared by both record formats (flrep_tick.c). */
dg_status dg_flrep__check_events(uint64_t tick, const dg_event *ev, size_t nev, dg_error *err);
void dg_flrep__write_events(dg_buf *out, uint64_t tick, const dg_event *ev, size_t nev);

/* ---- chunks and trailer (flrep_chunk.c) --------------------------------------------------- */
typedef struct flrep_chunk_hdr {
    uint32_t tick_count;
    uint64_t first_tick, last_tick;
    uint32_t compressed_size, decompressed_size;
} flrep_chunk_hdr;

void dg_flrep__chunk_hdr_encode(uint8_t out[FLREP_CHUNK_HDR_SIZE], const flrep_chunk_hdr *h);
/* Checks magic, check value, field rules (keyframe interval, cap) and that the compressed bytes fit
 * in `bytes_left` (what follows the framing). */
dg_status dg_flrep__chunk_hdr_parse(const uint8_t in[FLREP_CHUNK_HDR_SIZE], uint64_t offset, uint64_t bytes_left,
                                uint32_t keyframe_interval, uint32_t cap, flrep_chunk_hdr *h, dg_error *err);

/* Decompresses exactly h->decompressed_size bytes into out (capacity >= that), verifying the
 * frame's declared content size and checksum. */
dg_status dg_flrep__chunk_decompress(void *dctx, const uint8_t *src, const flrep_chunk_hdr *h, uint8_t *out,
                                 uint64_t offset, dg_error *err);

/* Decodes every tick of a decompressed chunk against its header's promises; world ends as the
 * world after the chunk's last tick. */
dg_status dg_flrep__chunk_validate(const uint8_t *content, const flrep_chunk_hdr *h, uint64_t offset,
                               size_t chunk_no, const flrep_tick_ctx *ctx, flrep_world *world,
                               flrep_tick_scratch *s, dg_error *err);

/* Fills ctx (rate, magic, sets, fault hook off). */
void dg_flrep__tick_ctx_init(flrep_tick_ctx *ctx, uint32_t tick_rate_hz, const flrep_index_set *types,
                         const flrep_index_set *factions);

void dg_flrep__chunk_where(char *buf, size_t cap, size_t chunk_no, const flrep_chunk_hdr *h);

typedef struct flrep_trailer {
    uint32_t entry_count;
    uint64_t first_tick, last_tick, tick_count;
    uint64_t table_offset;
} flrep_trailer;

/* Appends the trailer for these chunks (offsets absolute) at table_offset. */
void dg_flrep__trailer_encode(dg_buf *out, const dg_flrep_chunk_info *chunks, size_t n, uint64_t table_offset);

/* Test hook: the reader decodes every record through the general path (ctx.general_only), so
 * that a test compares it with the fast paths on whole files. */
void dg_flrep__reader_set_general_only(dg_flrep_reader *r, bool on);
/* Test hook: a 2.0 writer encodes every tick with encode_records2's copy for any schema, not the one
 * for position, velocity and rotation (ctx.general_only), so a test can compare their bytes. */
void dg_flrep__writer_set_general_only(dg_flrep_writer *w, bool on);

/* A growing reader (dg_flrep_reader_open_growing) over a caller's buffer: dg_flrep_reader_refresh
 * then scans up to `size` <= len, as if the buffer ended there (the fuzz target and tests cut one
 * buffer at many sizes). */
dg_status dg_flrep__reader_open_growing_mem(dg_flrep_reader **out, const uint8_t *buf, size_t len,
                                           const dg_flrep_reader_opts *opts, dg_error *err);

/* ---- state equality (both encoders' "unchanged" test) ---- */

/* Whole-state equality without a branch per field: the first differing field of a moving entity
 * varies from record to record, and a chain of compares mispredicts on it. Both states are in
 * memory (the world, the caller's array) and have pad_ = 0 (apply_delta, check_input). With SSE2,
 * three 16-byte compares (the last overlapping the second) instead of six word pairs. */
#if defined(__SSE2__)
_Static_assert(sizeof(dg_qentity) > 32 && sizeof(dg_qentity) <= 48, "same_state compares three 16-byte blocks");
static inline bool same_state(const dg_qentity *a, const dg_qentity *b)
{
    const unsigned char *pa = (const unsigned char *)a, *pb = (const unsigned char *)b;
    const size_t last = sizeof *a - 16;
    int m = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)pa),
                                             _mm_loadu_si128((const __m128i *)(const void *)pb))) &
            _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(pa + 16)),
                                             _mm_loadu_si128((const __m128i *)(const void *)(pb + 16)))) &
            _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(pa + last)),
                                             _mm_loadu_si128((const __m128i *)(const void *)(pb + last))));
    return m == 0xFFFF;
}
#else
_Static_assert(sizeof(dg_qentity) % 4 == 0, "same_state compares whole words");

static inline bool same_state(const dg_qentity *a, const dg_qentity *b)
{
    const unsigned char *pa = (const unsigned char *)a, *pb = (const unsigned char *)b;
    uint64_t diff = 0;
    for (size_t at = 0; at + 8 <= sizeof *a; at += 8) {
        uint64_t x, y;
        memcpy(&x, pa + at, 8);
        memcpy(&y, pb + at, 8);
        diff |= x ^ y;
    }
    uint32_t x, y;   /* the last word (44 bytes: not a multiple of 8) */
    memcpy(&x, pa + sizeof *a - 4, 4);
    memcpy(&y, pb + sizeof *a - 4, 4);
    return (diff | (x ^ y)) == 0;
}
#endif

#endif
