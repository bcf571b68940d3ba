/* hash/hash.c — the state hash itself: canonical bytes of entities and events, XXH3-64 over them,
 * the per-tick hierarchy (entity -> state -> tick) and the raw-float side hash.
 * The byte layouts are normative in docs/STATE-HASH.md; change one and you change every golden. */
#include "detgate/hash.h"
#include "hash_internal.h"
#include "hash_reference.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* Inlined so the 43-byte entity hash compiles to straight-line code (the 100M entity-ticks/s
 * target leaves ~10 ns per entity); the algorithm and results are those of libxxhash. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#define HASH__STREAM_MAGIC 0x64674853u /* "SHgd": set by begin, checked by add/end in debug */

_Static_assert(sizeof(XXH3_state_t) <= sizeof(((hash__stream_state *)0)->xxh),
               "dg_hash_stream too small for XXH3_state_t");
_Static_assert(_Alignof(XXH3_state_t) <= 64, "XXH3_state_t needs more than 64-byte alignment");

static XXH3_state_t *hash__xxh(dg_hash_stream *s) { return (XXH3_state_t *)(void *)dg_hash__state(s)->xxh; }

/* ---- little-endian stores (never a struct copy: the layout is the document's, not the ABI's) --
 * Values are assembled in registers and stored whole: XXH3 then loads exactly the words that were
 * stored. Byte-by-byte stores followed by 8-byte loads defeat store forwarding and cost ~3x the
 * hash itself (measured: 16 ns vs 4.4 ns per entity). */
static inline void hash__put64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, sizeof v);
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
    memcpy(p, &v, sizeof v);
#else
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
#endif
}
static inline void hash__put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline void hash__put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline uint64_t hash__u32x2(uint32_t lo, uint32_t hi) { return (uint64_t)lo | (uint64_t)hi << 32; }
/* The little-endian u64 at p (one load where the host is little-endian). */
static inline uint64_t hash__get64(const uint8_t *p)
{
    uint64_t v;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(&v, p, sizeof v);
#else
    v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
#endif
    return v;
}

/* ---- entities ---------------------------------------------------------------------------------- */
/* The 48-byte record as six little-endian u64 words (byte offsets in docs/STATE-HASH.md §2). */
static inline void hash__entity_record(const dg_qentity *e, uint8_t out[DG_HASH_ENTITY_BYTES])
{
    hash__put64(out + 0, (uint64_t)e->id | (uint64_t)e->type_index << 32 | (uint64_t)e->faction_index << 48);
    hash__put64(out + 8, hash__u32x2((uint32_t)e->pos[0], (uint32_t)e->pos[1]));
    hash__put64(out + 16, hash__u32x2((uint32_t)e->pos[2], (uint32_t)e->vel[0]));
    hash__put64(out + 24, hash__u32x2((uint32_t)e->vel[1], (uint32_t)e->vel[2]));
    hash__put64(out + 32, (uint64_t)(uint16_t)e->rot[0] | (uint64_t)(uint16_t)e->rot[1] << 16 |
                              (uint64_t)(uint16_t)e->rot[2] << 32 | (uint64_t)e->health << 48);
    hash__put64(out + 40, (uint64_t)e->flags | (uint64_t)e->rot_largest << 16); /* bytes 43..47: 0 */
}

void dg_hash_entity_bytes(const dg_qentity *e, uint8_t out[DG_HASH_ENTITY_BYTES])
{
    hash__entity_record(e, out);
}

static inline uint64_t hash__entity(const dg_qentity *e)
{
    uint8_t rec[DG_HASH_ENTITY_BYTES];
    hash__entity_record(e, rec);
    return XXH3_64bits_withSeed(rec, sizeof rec, DG_HASH_SEED_ENTITY);
}

uint64_t dg_hash_entity(const dg_qentity *e)
{
    uint8_t rec[DG_HASH_ENTITY_BYTES];
    hash__entity_record(e, rec);
    return XXH3_64bits_withSeed(rec, sizeof rec, DG_HASH_SEED_ENTITY);
}

/* ---- batching into an XXH3 stream (one update per 256 bytes, not per field) -------------------- */
static void hash__flush(dg_hash_stream *s)
{
    if (dg_hash__state(s)->batch_len) {
        XXH3_64bits_update(hash__xxh(s), dg_hash__state(s)->batch, dg_hash__state(s)->batch_len);
        dg_hash__state(s)->batch_len = 0;
    }
}

/* Whether long updates take the AVX2 build (hash_avx2.c): where the codec runs its own AVX2 builds
 * (the CPU has them, DETGATE_CPU does not force the portable ones). Decided once; a relaxed atomic,
 * since two threads that both decide decide the same. */
#if DG_HASH_AVX2
static bool hash__avx2(void)
{
    static atomic_int choice; /* 0 unknown, 1 portable, 2 AVX2 */
    int c = atomic_load_explicit(&choice, memory_order_relaxed);
    if (__builtin_expect(c == 0, 0)) {
        c = strcmp(dg_codec_cpu_build(), "avx2") == 0 ? 2 : 1;
        atomic_store_explicit(&choice, c, memory_order_relaxed);
    }
    return c == 2;
}
#endif

/* A long input (a tick's raw records): XXH3's update, with AVX2 where it runs. */
static void hash__update_long(dg_hash_stream *s, const void *p, size_t n)
{
#if DG_HASH_AVX2
    if (hash__avx2()) {
        dg_hash__xxh3_update_avx2(hash__xxh(s), p, n);
        return;
    }
#endif
    XXH3_64bits_update(hash__xxh(s), p, n);
}

static void hash__feed(dg_hash_stream *s, const void *p, size_t n)
{
    if (n > sizeof dg_hash__state(s)->batch - dg_hash__state(s)->batch_len) {
        hash__flush(s);
        if (n > sizeof dg_hash__state(s)->batch) {
            hash__update_long(s, p, n);
            return;
        }
    }
    memcpy(dg_hash__state(s)->batch + dg_hash__state(s)->batch_len, p, n);
    dg_hash__state(s)->batch_len += (uint32_t)n;
}

static void hash__feed64(dg_hash_stream *s, uint64_t v)
{
    if (sizeof dg_hash__state(s)->batch - dg_hash__state(s)->batch_len < 8)
        hash__flush(s);
    hash__put64(dg_hash__state(s)->batch + dg_hash__state(s)->batch_len, v);
    dg_hash__state(s)->batch_len += 8;
}

static void hash__stream_begin(dg_hash_stream *s, uint64_t seed, uint64_t tick)
{
    /* A stack state holds garbage: reset_withSeed compares the old seed to skip regenerating the
     * secret, so without INITSTATE a stale match would hash with a garbage secret. */
    XXH3_INITSTATE(hash__xxh(s));
    XXH3_64bits_reset_withSeed(hash__xxh(s), seed);
    dg_hash__state(s)->batch_len = 0;
    dg_hash__state(s)->count = 0;
    dg_hash__state(s)->tick = tick;
    dg_hash__state(s)->last_id = 0;
    dg_hash__state(s)->order_errors = 0;
    dg_hash__state(s)->magic = HASH__STREAM_MAGIC;
}

static uint64_t hash__stream_digest(dg_hash_stream *s)
{
    hash__flush(s);
    dg_hash__state(s)->magic = 0;
    return XXH3_64bits_digest(hash__xxh(s));
}

/* ---- events ------------------------------------------------------------------------------------ */
/* The event's fixed 23 bytes (docs/STATE-HASH.md §3), its text following them. */
static void hash__event_record(const dg_event *e, uint8_t rec[DG_HASH_EVENT_FIXED_BYTES])
{
    rec[0] = e->kind;
    hash__put64(rec + 1, e->tick);
    hash__put32(rec + 9, e->a);
    hash__put32(rec + 13, e->b);
    hash__put16(rec + 17, e->c);
    hash__put16(rec + 19, e->d);
    hash__put16(rec + 21, e->text_len);
}

static void hash__feed_event(dg_hash_stream *s, const dg_event *e)
{
    uint8_t rec[DG_HASH_EVENT_FIXED_BYTES];
    hash__event_record(e, rec);
    hash__feed(s, rec, sizeof rec);
    assert(e->text_len == 0 || e->text != NULL);
    if (e->text_len && e->text)
        hash__feed(s, e->text, e->text_len);
}

/* The reference form: any number of events, any text length. */
static uint64_t hash__events_stream(const dg_event *ev, size_t n)
{
    dg_hash_stream s;
    hash__stream_begin(&s, DG_HASH_SEED_EVENTS, 0);
    hash__feed64(&s, (uint64_t)n);
    for (size_t i = 0; i < n; i++)
        hash__feed_event(&s, &ev[i]);
    return hash__stream_digest(&s);
}

/* Most ticks have no event or a few short ones: their bytes fit a small stack buffer and are hashed
 * one-shot, without a streaming state's reset (secret derived from the seed) and digest. The same
 * bytes, the same XXH3 value; anything larger goes through the stream. */
#define HASH__EVENTS_ONESHOT_BYTES 512

uint64_t dg_hash_events(const dg_event *ev, size_t n)
{
    uint8_t buf[HASH__EVENTS_ONESHOT_BYTES];
    size_t len = 8;
    hash__put64(buf, (uint64_t)n);
    for (size_t i = 0; i < n; i++) {
        const dg_event *e = &ev[i];
        size_t text = e->text_len && e->text ? e->text_len : 0;
        if (sizeof buf - len < DG_HASH_EVENT_FIXED_BYTES + text)
            return hash__events_stream(ev, n);
        hash__event_record(e, buf + len);
        if (text)
            memcpy(buf + len + DG_HASH_EVENT_FIXED_BYTES, e->text, text);
        len += DG_HASH_EVENT_FIXED_BYTES + text;
    }
    return XXH3_64bits_withSeed(buf, len, DG_HASH_SEED_EVENTS);
}

uint64_t dg_hash__events_reference(const dg_event *ev, size_t n) { return hash__events_stream(ev, n); }

static dg_status hash__check_events(uint64_t tick, const dg_event *ev, size_t n, dg_error *err)
{
    if (n && !ev)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_hash_events",
                            "events: expected an array of %zu events, found NULL", n);
    for (size_t i = 0; i < n; i++) {
        if (ev[i].text_len && !ev[i].text)
            return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_hash_events",
                                "event %zu: text_len %u but text is NULL", i, (unsigned)ev[i].text_len);
        if (ev[i].tick != tick)
            return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "dg_hash_events",
                                "event %zu: expected tick %llu, found tick %llu", i,
                                (unsigned long long)tick, (unsigned long long)ev[i].tick);
    }
    return DG_OK;
}

dg_status dg_hash_events_checked(uint64_t tick, const dg_event *ev, size_t n, uint64_t *out,
                                 dg_error *err)
{
    dg_status st = hash__check_events(tick, ev, n, err);
    if (st != DG_OK)
        return st;
    if (out)
        *out = dg_hash_events(ev, n);
    return DG_OK;
}

/* ---- the tick hierarchy --------------------------------------------------------------------------- */
void dg_hash_tick_begin(dg_hash_stream *s, uint64_t tick)
{
    hash__stream_begin(s, DG_HASH_SEED_STATE, tick);
    hash__feed64(s, tick);
}

uint64_t dg_hash_tick_add(dg_hash_stream *s, const dg_qentity *e)
{
    assert(dg_hash__state(s)->magic == HASH__STREAM_MAGIC);
    if ((uint64_t)e->id < dg_hash__state(s)->last_id || e->id == 0)
        dg_hash__state(s)->order_errors++;
    dg_hash__state(s)->last_id = (uint64_t)e->id + 1;
    uint64_t h = hash__entity(e);
    hash__feed64(s, h);
    dg_hash__state(s)->count++;
    return h;
}

static uint64_t hash__combine(uint64_t tick, uint32_t count, uint64_t state, uint64_t events)
{
    uint8_t rec[28];
    hash__put64(rec, tick);
    hash__put32(rec + 8, count);
    hash__put64(rec + 12, state);
    hash__put64(rec + 20, events);
    return XXH3_64bits_withSeed(rec, sizeof rec, DG_HASH_SEED_TICK);
}

dg_tick_hash dg_hash_tick_end(dg_hash_stream *s, uint64_t events_hash)
{
    assert(dg_hash__state(s)->magic == HASH__STREAM_MAGIC);
    uint8_t cnt[4];
    hash__put32(cnt, dg_hash__state(s)->count);
    hash__feed(s, cnt, sizeof cnt);
    dg_tick_hash t;
    t.tick = dg_hash__state(s)->tick;
    t.entity_count = dg_hash__state(s)->count;
    t.state = hash__stream_digest(s);
    t.events = events_hash;
    t.combined = hash__combine(t.tick, t.entity_count, t.state, t.events);
    return t;
}

uint32_t dg_hash_stream_order_errors(const dg_hash_stream *s) { return dg_hash__cstate(s)->order_errors; }

/* The reference form of dg_hash_tick: the streaming API, entity by entity. */
dg_tick_hash dg_hash__tick_reference(uint64_t tick, const dg_qentity *ents, size_t n, const dg_event *ev,
                                     size_t nev, uint64_t *entity_hashes_out)
{
    dg_hash_stream s;
    dg_hash_tick_begin(&s, tick);
    for (size_t i = 0; i < n; i++) {
        uint64_t h = dg_hash_tick_add(&s, &ents[i]);
        if (entity_hashes_out)
            entity_hashes_out[i] = h;
    }
    return dg_hash_tick_end(&s, hash__events_stream(ev, nev));
}

/* ---- the one-shot state hash (dg_hash_tick's fast path) -----------------------------------------
 * dg_hash_tick knows the entity count up front, so its state hash need not go through an XXH3
 * streaming state, which costs per tick a state reset, a secret derived from the seed and a digest,
 * and per 1024 bytes a copy through its internal buffer. Here the state bytes (tick, entity hashes,
 * count) are written into a one-block window on the stack and handed to XXH3's own long-input steps
 * (accumulate, scramble, merge: the functions XXH3_64bits_withSeed runs on a contiguous input,
 * reached through XXH_INLINE_ALL), block by block, in the same order as its one-shot walk:
 *   - every full 1024-byte block: 16 stripes accumulated, then scrambled (the input is 8n + 12
 *     bytes, never a multiple of 1024, so every full block is followed by more input);
 *   - the full stripes of the last block, then the input's last 64 bytes as the last stripe: they
 *     straddle the previous stripe, which is why the window keeps the last stripe of the previous
 *     block in front of the current one;
 *   - the accumulators merged with the input length.
 * Inputs of at most 240 bytes (n <= 28) take XXH3's short paths: XXH3_64bits_withSeed on the window.
 * dg_hash__tick_reference (the streaming form) is the reference; tests/hash compares the two. */
#define HASH__STRIPE 64u
#define HASH__BLOCK 1024u                         /* XXH3's block for a 192-byte secret */
#define HASH__SECRET XXH_SECRET_DEFAULT_SIZE      /* 192: the secret a seed derives */
#define HASH__SHORT_MAX XXH3_MIDSIZE_MAX          /* 240: longer inputs take the long path */

_Static_assert(HASH__BLOCK == HASH__STRIPE * ((HASH__SECRET - HASH__STRIPE) / XXH_SECRET_CONSUME_RATE),
               "XXH3 block size");

typedef struct hash__window {
    XXH_ALIGN(64) uint8_t bytes[HASH__STRIPE + HASH__BLOCK + 8]; /* previous stripe, block, count tail */
    XXH_ALIGN(64) xxh_u64 acc[XXH_ACC_NB];
    const uint8_t *secret;
} hash__window;

/* The secret DG_HASH_SEED_STATE derives, derived once for the process (the seed is a constant). */
static XXH_ALIGN(64) uint8_t hash__state_secret[HASH__SECRET];
static pthread_once_t hash__state_secret_once = PTHREAD_ONCE_INIT;

static void hash__derive_state_secret(void) { XXH3_initCustomSecret(hash__state_secret, DG_HASH_SEED_STATE); }

static inline uint8_t *hash__block(hash__window *w) { return w->bytes + HASH__STRIPE; }

static void hash__window_flush_block(hash__window *w)
{
    XXH3_accumulate(w->acc, hash__block(w), w->secret, HASH__BLOCK / HASH__STRIPE, XXH3_accumulate_512);
    XXH3_scrambleAcc(w->acc, w->secret + HASH__SECRET - HASH__STRIPE);
    memcpy(w->bytes, hash__block(w) + HASH__BLOCK - HASH__STRIPE, HASH__STRIPE);
}

/* len: the whole input's length; the block holds its last `used` bytes (the count tail last). */
static uint64_t hash__window_digest(hash__window *w, size_t used, uint64_t len)
{
    if (len <= HASH__SHORT_MAX) /* no block was flushed: the whole input is in the block */
        return XXH3_64bits_withSeed(hash__block(w), (size_t)len, DG_HASH_SEED_STATE);
    XXH3_accumulate(w->acc, hash__block(w), w->secret, used / HASH__STRIPE, XXH3_accumulate_512);
    XXH3_accumulate_512(w->acc, hash__block(w) + used - HASH__STRIPE,
                        w->secret + HASH__SECRET - HASH__STRIPE - XXH_SECRET_LASTACC_START);
    return XXH3_mergeAccs(w->acc, w->secret + XXH_SECRET_MERGEACCS_START, len * XXH_PRIME64_1);
}

#if defined(__GNUC__)
#define HASH__ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define HASH__ALWAYS_INLINE inline
#endif

/* state_hash (docs/STATE-HASH.md §4) of n entities with field_count extra fields each (§2.1; 0:
 * none); entity_hashes_out as for dg_hash_tick. The fill position is a local, not a field of w:
 * stores into w's bytes would otherwise force it through memory on every entity. Inlined into both
 * callers, so that dg_hash_tick's loop (field_count 0) keeps the entity hash inline. */
static HASH__ALWAYS_INLINE uint64_t hash__state_oneshot(uint64_t tick, const dg_qentity *ents, const int64_t *extras,
                                                        size_t field_count, size_t n, uint64_t *entity_hashes_out)
{
    hash__window w;
    uint64_t len = 8 + 8 * (uint64_t)n + 4;
    if (len > HASH__SHORT_MAX) {
        static const xxh_u64 init_acc[XXH_ACC_NB] = XXH3_INIT_ACC;
        memcpy(w.acc, init_acc, sizeof w.acc);
        pthread_once(&hash__state_secret_once, hash__derive_state_secret);
        w.secret = hash__state_secret;
    }
    uint8_t *block = hash__block(&w);
    hash__put64(block, tick);
    size_t used = 8;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = field_count ? dg_hash_entity_x(&ents[i], extras + i * field_count, field_count)
                                 : hash__entity(&ents[i]);
        if (entity_hashes_out)
            entity_hashes_out[i] = h;
        hash__put64(block + used, h);
        used += 8;
        if (used == HASH__BLOCK) {
            hash__window_flush_block(&w);
            used = 0;
        }
    }
    hash__put32(block + used, (uint32_t)n);
    return hash__window_digest(&w, used + 4, len);
}

dg_tick_hash dg_hash_tick(uint64_t tick, const dg_qentity *ents, size_t n, const dg_event *ev,
                          size_t nev, uint64_t *entity_hashes_out)
{
    dg_tick_hash t;
    t.tick = tick;
    t.entity_count = (uint32_t)n;
    t.state = hash__state_oneshot(tick, ents, NULL, 0, n, entity_hashes_out);
    t.events = dg_hash_events(ev, nev);
    t.combined = hash__combine(t.tick, t.entity_count, t.state, t.events);
    return t;
}

static dg_status hash__check_entities(const dg_qentity *ents, size_t n, dg_error *err)
{
    if (n > UINT32_MAX)
        return dg_error_set(err, DG_E_LIMIT, DG_OFFSET_NONE, "dg_hash_tick",
                            "entity count: expected <= %u, found %zu", (unsigned)UINT32_MAX, n);
    if (n && !ents)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_hash_tick",
                            "entities: expected an array of %zu, found NULL", n);
    for (size_t i = 0; i < n; i++) {
        if (ents[i].id == 0)
            return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_hash_tick",
                                "entity %zu: expected id >= 1, found id 0", i);
        if (i > 0 && ents[i].id <= ents[i - 1].id)
            return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_hash_tick",
                                "entity %zu: expected id > %u (strictly increasing), found id %u", i,
                                ents[i - 1].id, ents[i].id);
    }
    return DG_OK;
}

dg_status dg_hash_tick_checked(uint64_t tick, const dg_qentity *ents, size_t n, const dg_event *ev,
                               size_t nev, uint64_t *entity_hashes_out, dg_tick_hash *out,
                               dg_error *err)
{
    dg_status st = hash__check_entities(ents, n, err);
    if (st == DG_OK)
        st = hash__check_events(tick, ev, nev, err);
    if (st != DG_OK)
        return st;
    dg_tick_hash t = dg_hash_tick(tick, ents, n, ev, nev, entity_hashes_out);
    if (out)
        *out = t;
    return DG_OK;
}

/* ---- extra fields (docs/STATE-HASH.md §2.1) -------------------------------------------------------- */
#define HASH__EXTRAS_MAX 32 /* DG_SCHEMA_MAX_FIELDS; more are hashed through the stream */

uint64_t dg_hash_entity_x(const dg_qentity *e, const int64_t *extras, size_t field_count)
{
    if (field_count == 0)
        return dg_hash_entity(e);
    if (field_count > HASH__EXTRAS_MAX) {
        XXH3_state_t st;
        uint8_t rec[DG_HASH_ENTITY_BYTES];
        hash__entity_record(e, rec);
        XXH3_INITSTATE(&st);
        XXH3_64bits_reset_withSeed(&st, DG_HASH_SEED_ENTITY);
        XXH3_64bits_update(&st, rec, sizeof rec);
        for (size_t f = 0; f < field_count; f++) {
            uint8_t b[8];
            hash__put64(b, (uint64_t)extras[f]);
            XXH3_64bits_update(&st, b, sizeof b);
        }
        return XXH3_64bits_digest(&st);
    }
    uint8_t rec[DG_HASH_ENTITY_BYTES + 8 * HASH__EXTRAS_MAX];
    hash__entity_record(e, rec);
    for (size_t f = 0; f < field_count; f++)
        hash__put64(rec + DG_HASH_ENTITY_BYTES + 8 * f, (uint64_t)extras[f]);
    return XXH3_64bits_withSeed(rec, DG_HASH_ENTITY_BYTES + 8 * field_count, DG_HASH_SEED_ENTITY);
}

uint64_t dg_hash_tick_add_x(dg_hash_stream *s, const dg_qentity *e, const int64_t *extras, size_t field_count)
{
    if (field_count == 0)
        return dg_hash_tick_add(s, e);
    assert(dg_hash__state(s)->magic == HASH__STREAM_MAGIC);
    if ((uint64_t)e->id < dg_hash__state(s)->last_id || e->id == 0)
        dg_hash__state(s)->order_errors++;
    dg_hash__state(s)->last_id = (uint64_t)e->id + 1;
    uint64_t h = dg_hash_entity_x(e, extras, field_count);
    hash__feed64(s, h);
    dg_hash__state(s)->count++;
    return h;
}

dg_tick_hash dg_hash_tick_x(uint64_t tick, const dg_qentity *ents, const int64_t *extras, size_t field_count,
                            size_t n, const dg_event *ev, size_t nev, uint64_t *entity_hashes_out)
{
    if (field_count == 0)
        return dg_hash_tick(tick, ents, n, ev, nev, entity_hashes_out);
    dg_tick_hash t; /* the one-shot state hash, as dg_hash_tick's; dg_hash__tick_x_reference streams */
    t.tick = tick;
    t.entity_count = (uint32_t)n;
    t.state = hash__state_oneshot(tick, ents, extras, field_count, n, entity_hashes_out);
    t.events = dg_hash_events(ev, nev);
    t.combined = hash__combine(t.tick, t.entity_count, t.state, t.events);
    return t;
}

/* The reference form of dg_hash_tick_x: the streaming API, entity by entity (tests/hash compares). */
dg_tick_hash dg_hash__tick_x_reference(uint64_t tick, const dg_qentity *ents, const int64_t *extras,
                                       size_t field_count, size_t n, const dg_event *ev, size_t nev,
                                       uint64_t *entity_hashes_out)
{
    dg_hash_stream s;
    dg_hash_tick_begin(&s, tick);
    for (size_t i = 0; i < n; i++) {
        uint64_t h = dg_hash_tick_add_x(&s, &ents[i], extras + i * field_count, field_count);
        if (entity_hashes_out)
            entity_hashes_out[i] = h;
    }
    return dg_hash_tick_end(&s, hash__events_stream(ev, nev));
}

dg_status dg_hash_tick_checked_x(uint64_t tick, const dg_qentity *ents, const int64_t *extras, size_t field_count,
                                 size_t n, const dg_event *ev, size_t nev, uint64_t *entity_hashes_out,
                                 dg_tick_hash *out, dg_error *err)
{
    if (field_count == 0)
        return dg_hash_tick_checked(tick, ents, n, ev, nev, entity_hashes_out, out, err);
    if (n && !extras)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_hash_tick",
                            "extras: expected %zu x %zu values, found NULL", n, field_count);
    dg_status st = hash__check_entities(ents, n, err);
    if (st == DG_OK)
        st = hash__check_events(tick, ev, nev, err);
    if (st != DG_OK)
        return st;
    dg_tick_hash t = dg_hash_tick_x(tick, ents, extras, field_count, n, ev, nev, entity_hashes_out);
    if (out)
        *out = t;
    return DG_OK;
}

/* ---- raw floats ------------------------------------------------------------------------------------ */
void dg_hash_raw_begin(dg_hash_stream *s, uint64_t tick)
{
    hash__stream_begin(s, DG_HASH_SEED_RAW, tick);
    hash__feed64(s, tick);
}

static uint64_t hash__f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u); /* the value's bit pattern, not file bytes: memcpy is the portable way */
    return u;
}

void dg_hash_raw_entity(dg_hash_stream *s, uint32_t id, const double *fields, size_t n)
{
    assert(dg_hash__state(s)->magic == HASH__STREAM_MAGIC);
    assert(n <= UINT32_MAX && (n == 0 || fields));
    if ((uint64_t)id < dg_hash__state(s)->last_id || id == 0)
        dg_hash__state(s)->order_errors++;
    dg_hash__state(s)->last_id = (uint64_t)id + 1;
    hash__feed64(s, hash__u32x2(id, (uint32_t)n)); /* u32 id then u32 n, little-endian */
    for (size_t i = 0; i < n; i++)
        hash__feed64(s, hash__f64_bits(fields[i]));
    dg_hash__state(s)->count++;
}

void dg_hash_raw_records_sorted(dg_hash_stream *s, const void *records, size_t len, uint32_t count, uint32_t last_id)
{
    assert(dg_hash__state(s)->magic == HASH__STREAM_MAGIC);
    if (count) {
        dg_hash__state(s)->last_id = (uint64_t)last_id + 1;
        dg_hash__state(s)->count += count;
    }
    hash__feed(s, records, len);
}

void dg_hash_raw_records(dg_hash_stream *s, const void *records, size_t len)
{
    assert(dg_hash__state(s)->magic == HASH__STREAM_MAGIC);
    const uint8_t *r = records;
    /* the order check dg_hash_raw_entity makes. The step to the next record is the last one's
     * until a record's n says otherwise (a branch, not a sum of the loaded n): the walk then does not
     * wait on each record's load before the next */
    /* "id < last or id 0" is one comparison with the first record's bound at least 1: every later
     * one's (an id + 1) is */
    uint64_t last = dg_hash__state(s)->last_id ? dg_hash__state(s)->last_id : 1;
    uint32_t errors = 0, n_step = UINT32_MAX; /* step is always 8 + 8 * n_step */
    size_t step = 8 + 8 * (size_t)UINT32_MAX, count = 0;
    for (size_t at = 0; at + 8 <= len;) {
        uint64_t head = hash__get64(r + at); /* u32 id, u32 n */
        uint32_t id = (uint32_t)head, n = (uint32_t)(head >> 32);
        errors += (uint64_t)id < last;
        last = (uint64_t)id + 1;
        if (__builtin_expect(n != n_step, 0)) {
            n_step = n;
            step = 8 + 8 * (size_t)n;
        }
        at += step;
        count++;
        assert(at <= len);
        /* the records of the same n that follow, two at a time: both heads tested in one branch, and
         * the second's bound is the first's id + 1 (id2 < id1 + 1: id2 <= id1) */
        for (; at + step + 8 <= len; at += 2 * step, count += 2) {
            uint64_t h1 = hash__get64(r + at), h2 = hash__get64(r + at + step);
            if (((h1 >> 32) ^ n_step) | ((h2 >> 32) ^ n_step))
                break;
            uint32_t id1 = (uint32_t)h1, id2 = (uint32_t)h2;
            errors += ((uint64_t)id1 < last) + (id2 <= id1);
            last = (uint64_t)id2 + 1;
        }
    }
    dg_hash__state(s)->order_errors += errors;
    dg_hash_raw_records_sorted(s, records, len, (uint32_t)count, (uint32_t)(last - 1)); /* last: the last id + 1 */
}

uint64_t dg_hash_raw_end(dg_hash_stream *s)
{
    assert(dg_hash__state(s)->magic == HASH__STREAM_MAGIC);
    return hash__stream_digest(s);
}

/* ---- localization ----------------------------------------------------------------------------------- */
static dg_status hash__unsorted(dg_error *err, char side, size_t i, uint32_t prev, uint32_t id)
{
    return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_hash_diff_entities",
                        "side %c index %zu: expected id > %u (strictly increasing), found %u", side, i,
                        prev, id);
}

static bool hash__report(dg_hash_diff_fn fn, void *user, dg_hash_diff_kind k, uint32_t id,
                         uint64_t ha, uint64_t hb)
{
    return fn && fn(user, k, id, ha, hb) != 0;
}

dg_status dg_hash_diff_entities(const uint32_t *ids_a, const uint64_t *hashes_a, size_t na,
                                const uint32_t *ids_b, const uint64_t *hashes_b, size_t nb,
                                dg_hash_diff_fn fn, void *user, dg_hash_diff_counts *counts,
                                dg_error *err)
{
    dg_hash_diff_counts c = {0, 0, 0, 0};
    size_t i = 0, j = 0;
    bool stop = false;
    while (!stop && (i < na || j < nb)) {
        if (i < na && i > 0 && ids_a[i] <= ids_a[i - 1])
            return hash__unsorted(err, 'a', i, ids_a[i - 1], ids_a[i]);
        if (j < nb && j > 0 && ids_b[j] <= ids_b[j - 1])
            return hash__unsorted(err, 'b', j, ids_b[j - 1], ids_b[j]);
        if (j >= nb || (i < na && ids_a[i] < ids_b[j])) {
            c.lost++;
            stop = hash__report(fn, user, DG_HASH_DIFF_LOST, ids_a[i], hashes_a[i], 0);
            i++;
        } else if (i >= na || ids_b[j] < ids_a[i]) {
            c.added++;
            stop = hash__report(fn, user, DG_HASH_DIFF_ADDED, ids_b[j], 0, hashes_b[j]);
            j++;
        } else {
            if (hashes_a[i] != hashes_b[j]) {
                c.changed++;
                stop = hash__report(fn, user, DG_HASH_DIFF_CHANGED, ids_a[i], hashes_a[i], hashes_b[j]);
            } else {
                c.same++;
            }
            i++;
            j++;
        }
    }
    if (counts)
        *counts = c;
    return DG_OK;
}

void dg_hash_hex(uint64_t h, char out[17])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 15; i >= 0; i--) {
        out[i] = digits[h & 0xf];
        h >>= 4;
    }
    out[16] = '\0';
}
