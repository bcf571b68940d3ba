/* harness/source_binary.c — the binary state stream (docs/STATES-STREAM.md, "Binary"): little-endian
 * tick records an engine writes where text costs too much, read once from a FILE (a pipe, stdin, a
 * decompressed file) with memory for one tick; and the choice, by the stream's first byte, between it
 * and the text formats for every stream read once. */
#define _GNU_SOURCE /* fopencookie */
#include "project.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define BIN_MAGIC0 0x89
#define BIN_VERSION 1
#define BIN_VERSION_MAX 2        /* version 2: a declared schema, tables and events (docs/STATES-STREAM.md) */
#define BIN_HEADER_MAX (1u << 20) /* version 2's header block, at most */
#define BIN_MAX_EVENTS 65535u
#define BIN_ENTITY_BYTES 98u
#define BIN_MAX_ENTITIES (1u << 24)
#define BIN_TABLE 256 /* type and faction indices 0..255, named type<N> / faction<N> */
#define BIN_WINDOW (1u << 18) /* raw reads go up to this size: a quarter of a core's L2, where the next parse finds it */

typedef struct bin_impl {
    FILE *f;
    char label[DG_HASH_LOG_NAME_MAX + 16];
    uint64_t offset; /* bytes consumed: errors say where */
    bool have_last;
    uint64_t last_tick;
    dg_entity_in *ents;
    size_t cap;
    /* the bytes read and not yet parsed are win[lo, hi); through f, exactly what a record needs is
     * read, through raw, what there is (up to the window's end) */
    uint8_t *win;
    size_t win_cap, lo, hi;
    harness__raw_reader rd;   /* a raw reader (rd.read == NULL: none) */
    uint64_t raw_got, f_got;  /* bytes the parser took from raw and from f */
    bool raw_failed;
    uint8_t *raw; /* the tick's raw hash records (dg_hash_raw_record), built as the entities decode */
    dg_flrep_type types[BIN_TABLE];
    dg_flrep_faction factions[BIN_TABLE];
    char names[2][BIN_TABLE][16];
    /* version 2 */
    unsigned version;
    harness__decl *decl;     /* = &source->decl */
    size_t nx;               /* declared extra fields: 8 bytes each after an entity's 98 */
    size_t ent_bytes;        /* 98 + 8 * nx */
    int64_t *xents;          /* the tick's slots, sorted like ents */
    uint32_t *order;         /* a sort of the tick by id (when it came unsorted) */
    int64_t *xtmp;
    dg_event *evs;
    size_t *ev_text_at;      /* where each event's text starts in text (text may move as it grows) */
    size_t cap_ev;
    uint8_t *text;           /* the tick's event texts */
    size_t text_cap;
    uint8_t *hblock;         /* the header block: table strings point into it */
    dg_flrep_type *dtypes;   /* declared tables (version 2) */
    dg_flrep_faction *dfactions;
    dg_flrep_participant *roster;
    bool declared_types, declared_factions; /* only the declared indices are valid */
    size_t s_nt, s_nf, s_np;                /* declared table sizes */
    size_t nxraw;                           /* declared float fields: their raw values join the raw hash */
    double *xraw, *xraw_tmp;                /* n * nxraw, sorted like ents */
    size_t raw_bytes;                       /* a raw hash record: 8 + 8 * (11 + nxraw) */
    uint8_t type_ok[BIN_TABLE], faction_ok[BIN_TABLE]; /* index_declared, looked up once per index */
    size_t batch; /* entities read at a time: a window's worth, a multiple of BIN_RAW_BLOCK */
} bin_impl;

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Fixed widths, written so that compilers merge them into one load (get_le's loop they do not). */
static inline uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static inline uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__ /* elsewhere the bytes are copied whole */
static inline double le_f64(const uint8_t *p)
{
    uint64_t u = (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}
#endif

static dg_status bin_err(bin_impl *b, uint64_t at, const char *what, dg_error *err)
{
    return dg_error_set(err, DG_E_MALFORMED, at, b->label, "binary state stream: %s", what);
}

/* Up to room bytes at dst, at least need unless the stream ends or fails first (how many, returned). */
static size_t fill(bin_impl *b, uint8_t *dst, size_t need, size_t room)
{
    if (!b->rd.read) {
        size_t got = fread(dst, 1, need, b->f);
        b->f_got += got;
        return got;
    }
    size_t got = 0;
    uint64_t held = b->rd.total(b->rd.cookie) - b->raw_got - b->f_got; /* in f's buffer: those come first */
    if (held) {
        got = fread(dst, 1, held < room ? (size_t)held : room, b->f);
        b->f_got += got;
    }
    while (got < need) {
        ssize_t r = b->rd.read(b->rd.cookie, (char *)dst + got, room - got);
        if (r <= 0) {
            b->raw_failed = r < 0;
            break;
        }
        got += (size_t)r;
        b->raw_got += (uint64_t)r;
    }
    return got;
}

/* Makes win[lo, hi) hold n bytes, or all the stream has left when that is fewer; false: out of memory. */
static bool refill(bin_impl *b, size_t n)
{
    size_t avail = b->hi - b->lo;
    if (b->lo && b->win_cap - b->lo < n) { /* what is left to the front (less than a record) */
        memmove(b->win, b->win + b->lo, avail);
        b->lo = 0;
        b->hi = avail;
    }
    size_t cap = b->rd.read && n < BIN_WINDOW ? BIN_WINDOW : n;
    if (cap > b->win_cap) {
        uint8_t *w = realloc(b->win, cap);
        if (!w)
            return false;
        if (b->rd.read) /* touched now: how much of it the reads touch depends on timing, and so would the peak RSS */
            memset(w + b->win_cap, 0, cap - b->win_cap);
        b->win = w;
        b->win_cap = cap;
    }
    b->hi += fill(b, b->win + b->hi, n - avail, b->win_cap - b->hi);
    return true;
}

/* The next n bytes of the stream, part of a record of whole bytes of which done are taken already, or
 * NULL and an error naming what was cut, where the record starts and how much of it the stream held;
 * valid until the next take. */
static const uint8_t *take_part(bin_impl *b, size_t n, const char *what, size_t whole, size_t done, dg_error *err)
{
    if (b->hi - b->lo < n) {
        if (!refill(b, n)) {
            dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, b->label, "out of memory");
            return NULL;
        }
        size_t got = b->hi - b->lo;
        if (got < n) {
            b->offset += got;
            b->lo = b->hi;
            char m[120];
            snprintf(m, sizeof m, "%s: expected %zu bytes, found %zu (%s)", what, whole, done + got,
                     b->raw_failed || ferror(b->f) ? "read failed" : "the stream ends");
            bin_err(b, b->offset - got - done, m, err);
            return NULL;
        }
    }
    const uint8_t *p = b->win + b->lo;
    b->lo += n;
    b->offset += n;
    return p;
}

/* The next n bytes of the stream (a record read whole), as take_part. */
static const uint8_t *take(bin_impl *b, size_t n, const char *what, dg_error *err)
{
    return take_part(b, n, what, n, 0, err);
}

/* Room for the first want entities of a tick that declares n (want <= n). The arrays grow with the
 * entities actually read, doubling, so a tick header's count costs memory only as its bytes arrive: a
 * stream cut after a header that declares 2^24 entities costs what it holds, not 2 GB. */
static bool grow_ents(bin_impl *b, size_t want, size_t n)
{
    bool v2 = b->version == 2;
    if (want <= b->cap && (!v2 || (b->xents && b->xraw)))
        return true;
    size_t c = b->cap * 2 < n ? b->cap * 2 : n;
    c = c > want ? c : want;
    c = c > b->cap ? c : b->cap;
    dg_entity_in *e = realloc(b->ents, (c + 1) * sizeof *e);
    b->ents = e ? e : b->ents;
    if (!e)
        return false;
    if (v2) {
        int64_t *x = realloc(b->xents, ((c + 1) * b->nx + 1) * sizeof *x);
        b->xents = x ? x : b->xents;
        double *xr = realloc(b->xraw, ((c + 1) * b->nxraw + 1) * sizeof *xr);
        b->xraw = xr ? xr : b->xraw;
        if (!x || !xr)
            return false;
    }
    b->cap = c;
    return true;
}

/* Up to cnt of the next entities (ent_bytes each) of a tick of n, the first done of them read, their
 * number in *got (at least one): the whole entities the window holds already, parsed where they lie,
 * else cnt of them read in (only the part of an entity left at the window's end moves to its front,
 * not a tick's worth of bytes). NULL and the error for the whole tick's entities when the stream is
 * cut. */
static const uint8_t *take_entities(bin_impl *b, size_t done, size_t cnt, size_t n, size_t *got, dg_error *err)
{
    if (!grow_ents(b, done + cnt, n)) {
        dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, b->label, "out of memory");
        return NULL;
    }
    size_t held = (b->hi - b->lo) / b->ent_bytes;
    if (held == 0) {
        *got = cnt;
        return take_part(b, cnt * b->ent_bytes, "the tick's entities", n * b->ent_bytes, done * b->ent_bytes, err);
    }
    *got = held < cnt ? held : cnt;
    const uint8_t *p = b->win + b->lo;
    b->lo += *got * b->ent_bytes;
    b->offset += *got * b->ent_bytes;
    return p;
}

/* Exactly n bytes copied to dst, or an error naming what was cut. 1 read, -1. */
static int read_exact(bin_impl *b, void *dst, size_t n, const char *what, dg_error *err)
{
    const uint8_t *p = take(b, n, what, err);
    if (!p)
        return -1;
    memcpy(dst, p, n);
    return 1;
}

static int cmp_id(const void *x, const void *y)
{
    uint32_t a = ((const dg_entity_in *)x)->id, c = ((const dg_entity_in *)y)->id;
    return a < c ? -1 : a > c;
}

#define BIN_RAW_BYTES (8u + 8u * HARNESS_RAW_FIELDS)
#define BIN_RAW_BLOCK 128u /* raw records hashed at a time (12 KiB) */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
_Static_assert(offsetof(dg_entity_in, type_index) == 4 && offsetof(dg_entity_in, faction_index) == 6 &&
                   offsetof(dg_entity_in, pos) == 8 && offsetof(dg_entity_in, vel) == 32 &&
                   offsetof(dg_entity_in, rot) == 56 && offsetof(dg_entity_in, health) == 88,
               "dg_entity_in: id, type, faction, then the eleven doubles as the stream lays them out");
#endif

/* The entity's record for the tick's raw hash (dg_hash_raw_record): u32 id, u32 11 + k, the standard
 * floats in the order every source hashes them, then its k declared float fields' raw values. */
static inline void raw_record(uint8_t *out, const dg_entity_in *e, const double *xraw, size_t k)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t head[2] = {e->id, (uint32_t)(HARNESS_RAW_FIELDS + k)};
    memcpy(out, head, sizeof head);
    memcpy(out + 8, e->pos, 8 * HARNESS_RAW_FIELDS); /* pos, vel, rot, health: contiguous (the assert below) */
    if (k)
        memcpy(out + 8 + 8 * HARNESS_RAW_FIELDS, xraw, 8 * k);
#else
    double raw[HARNESS_RAW_FIELDS + HARNESS_DECL_MAX_FIELDS];
    size_t m = dg_harness__raw_floats(e, k ? xraw : NULL, k, raw);
    dg_hash_raw_record(out, e->id, raw, m);
#endif
}

/* An entity's 98 standard bytes: on a little-endian host id, type, faction and the eleven doubles
 * are the stream's bytes, copied whole. */
static inline void decode_std(const uint8_t *p, dg_entity_in *e)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(e, p, 8);
    memcpy(e->pos, p + 10, 8 * HARNESS_RAW_FIELDS);
    e->flags = le16(p + 8);
#else
    e->id = le32(p);
    e->type_index = le16(p + 4);
    e->faction_index = le16(p + 6);
    e->flags = le16(p + 8);
    p += 10;
    for (int k = 0; k < 3; k++)
        e->pos[k] = le_f64(p + 8 * k);
    for (int k = 0; k < 3; k++)
        e->vel[k] = le_f64(p + 24 + 8 * k);
    for (int k = 0; k < 4; k++)
        e->rot[k] = le_f64(p + 48 + 8 * k);
    e->health = le_f64(p + 80);
#endif
}

/* The bits of an entity's first eight bytes, as decode_entity_raw returns them (id | type << 32 |
 * faction << 48), that a type or faction index above 255 sets. */
#define BIN_INDEX_HIGH 0xFF00FF0000000000u

/* decode_std and the entity's raw hash record at once, both from the stream's bytes: the record is
 * u32 id, u32 11, then the eleven binary64 exactly as the stream has them (both little-endian). */
#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The eleven doubles loaded once and stored twice (through memcpy the compiler loads them again for
 * the second copy: the first one's stores might alias the source). */
static inline uint64_t decode_entity_raw(const uint8_t *p, dg_entity_in *e, uint8_t *raw)
{
    __m128i d[5];
    uint64_t head, tail;
    for (int k = 0; k < 5; k++)
        d[k] = _mm_loadu_si128((const __m128i *)(const void *)(p + 10 + 16 * k));
    memcpy(&tail, p + 90, 8);
    memcpy(&head, p, 8); /* id, type, faction */
    memcpy(e, &head, 8);
    uint8_t *ep = (uint8_t *)e->pos;
    for (int k = 0; k < 5; k++)
        _mm_storeu_si128((__m128i *)(void *)(ep + 16 * k), d[k]);
    memcpy(ep + 80, &tail, 8);
    e->flags = le16(p + 8);
    uint64_t rh = (uint32_t)head | (uint64_t)HARNESS_RAW_FIELDS << 32; /* u32 id, u32 11 */
    memcpy(raw, &rh, 8);
    for (int k = 0; k < 5; k++)
        _mm_storeu_si128((__m128i *)(void *)(raw + 8 + 16 * k), d[k]);
    memcpy(raw + 88, &tail, 8);
    return head;
}
#else
static inline uint64_t decode_entity_raw(const uint8_t *p, dg_entity_in *e, uint8_t *raw)
{
    decode_std(p, e);
    static const uint8_t count[4] = {HARNESS_RAW_FIELDS, 0, 0, 0};
    memcpy(raw, p, 4);
    memcpy(raw + 4, count, 4);
    memcpy(raw + 8, p + 10, 8 * HARNESS_RAW_FIELDS);
    return (uint64_t)e->id | (uint64_t)e->type_index << 32 | (uint64_t)e->faction_index << 48;
}
#endif

/* The tick's entities, sorted by id (unless they came sorted) and checked (ids >= 1 and distinct,
 * indices in the tables), unless the caller found them all valid and strictly increasing (valid). */
static dg_status check_tick(bin_impl *b, uint64_t tick, size_t n, bool sorted, bool valid, uint64_t at,
                            dg_error *err)
{
    char m[160];
    if (b->have_last && tick <= b->last_tick) {
        snprintf(m, sizeof m, "ticks must increase: expected a tick after %llu, found %llu",
                 (unsigned long long)b->last_tick, (unsigned long long)tick);
        return bin_err(b, at, m, err);
    }
    if (!sorted)
        qsort(b->ents, n, sizeof *b->ents, cmp_id);
    for (size_t i = 0; !valid && i < n; i++) {
        const dg_entity_in *e = &b->ents[i];
        if (e->id == 0 || (i > 0 && e->id == b->ents[i - 1].id) || e->type_index >= BIN_TABLE ||
            e->faction_index >= BIN_TABLE) {
            snprintf(m, sizeof m, "tick %llu: entity %u: %s", (unsigned long long)tick, e->id,
                     e->id == 0 ? "id 0 (ids start at 1)"
                     : i > 0 && e->id == b->ents[i - 1].id ? "appears twice"
                                                           : "type or faction above 255");
            return bin_err(b, at, m, err);
        }
    }
    b->have_last = true;
    b->last_tick = tick;
    return DG_OK;
}

/* After the end record at byte end_at the stream must end: 0, or -1 and an error naming the first
 * byte past it (one byte read is enough to refuse: a tail that goes on is not read into memory). A
 * process engine's pipe is read to its end here, so the engine's exit is what follows. */
static int expect_stream_end(bin_impl *b, uint64_t end_at, dg_error *err)
{
    if (b->hi == b->lo && !refill(b, 1))
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, b->label, "out of memory"), -1;
    char m[160];
    if (b->hi > b->lo) {
        snprintf(m, sizeof m, "expected the stream to end after its end record (byte %llu), found byte 0x%02x and "
                 "maybe more", (unsigned long long)end_at, b->win[b->lo]);
        return bin_err(b, b->offset, m, err), -1;
    }
    if (b->raw_failed || ferror(b->f)) {
        snprintf(m, sizeof m, "after the end record (byte %llu): read failed", (unsigned long long)end_at);
        return bin_err(b, b->offset, m, err), -1;
    }
    return 0;
}

static int bin_next_v2(harness__source *s, harness__frame *f, dg_error *err);

static int bin_next(harness__source *s, harness__frame *f, dg_error *err)
{
    bin_impl *b = s->impl;
    if (b->version == 2)
        return bin_next_v2(s, f, err);
    uint8_t kind;
    uint64_t at = b->offset;
    int rc = read_exact(b, &kind, 1, "a record kind", err);
    if (rc < 0)
        return -1;
    if (kind == 0x00) /* the end record: the stream is complete, and must end there */
        return expect_stream_end(b, at, err);
    if (kind != 0x01) {
        char m[80];
        snprintf(m, sizeof m, "expected a record kind 0x01 (tick) or 0x00 (end), found 0x%02x", kind);
        return bin_err(b, at, m, err), -1;
    }
    uint8_t h[12];
    if (read_exact(b, h, sizeof h, "a tick header", err) < 0)
        return -1;
    uint64_t tick = get_le(h, 8);
    uint32_t n = (uint32_t)get_le(h + 8, 4);
    if (n > BIN_MAX_ENTITIES) {
        char m[96];
        snprintf(m, sizeof m, "tick %llu: %u entities is more than the %u a tick may hold",
                 (unsigned long long)tick, n, BIN_MAX_ENTITIES);
        return bin_err(b, at, m, err), -1;
    }
    /* bad: some id is 0 or not above the one before (unsorted, or twice), or an index is above 255.
     * Until one is, the raw records are hashed a block at a time as they are built, while the block
     * is in L1 (a block is 12 KiB, a tick's records 96 KiB); after, the tick goes the slow way. The
     * entities come a window's worth at a time (take_entities). */
    dg_hash_stream hs;
    dg_hash_raw_begin(&hs, tick);
    uint32_t prev = 0, bad = 0;
    for (uint32_t i0 = 0, cnt; i0 < n; i0 += cnt) {
        size_t got;
        const uint8_t *in = take_entities(b, i0, n - i0 < b->batch ? n - i0 : b->batch, n, &got, err);
        if (!in)
            return -1;
        cnt = (uint32_t)got;
        dg_entity_in *e = b->ents + i0; /* locals: the stores through e cannot make b's fields reload */
        uint8_t *const raw = b->raw;
        for (uint32_t i = 0; i < cnt; i += BIN_RAW_BLOCK) {
            uint32_t m = cnt - i < BIN_RAW_BLOCK ? cnt - i : BIN_RAW_BLOCK;
            uint8_t *r = raw;
            for (uint32_t k = 0; k < m; k++, e++, in += BIN_ENTITY_BYTES, r += BIN_RAW_BYTES) {
                /* from the entity's first eight bytes in a register, not reloaded from e: the id,
                 * and type and faction at most 255 (their high bytes 0) */
                uint64_t head = decode_entity_raw(in, e, r);
                uint32_t id = (uint32_t)head;
                bad |= (uint32_t)(id <= prev) | (uint32_t)((head & BIN_INDEX_HIGH) != 0);
                prev = id;
            }
            if (!bad) /* the order is checked: the hash need not walk the records again */
                dg_hash_raw_records_sorted(&hs, raw, (size_t)m * BIN_RAW_BYTES, m, prev);
        }
    }
    bool sorted = true; /* engines mostly write ids in order: then no sort */
    for (uint32_t i = 1; bad && i < n; i++)
        sorted = sorted && b->ents[i - 1].id <= b->ents[i].id;
    if (check_tick(b, tick, n, sorted, !bad, at, err) != DG_OK)
        return -1;
    if (bad) { /* valid once sorted (check_tick refuses the rest): the records follow the sorted order */
        dg_hash_raw_begin(&hs, tick);
        for (uint32_t i = 0; i < n; i += BIN_RAW_BLOCK) {
            uint32_t m = n - i < BIN_RAW_BLOCK ? n - i : BIN_RAW_BLOCK;
            for (uint32_t k = 0; k < m; k++)
                raw_record(b->raw + (size_t)k * BIN_RAW_BYTES, &b->ents[i + k], NULL, 0);
            dg_hash_raw_records(&hs, b->raw, (size_t)m * BIN_RAW_BYTES);
        }
    }
    *f = (harness__frame){.tick = tick, .ents = b->ents, .n = n, .has_raw = true, .raw = dg_hash_raw_end(&hs),
                          .at = {b->label, at, false, at + 13, bad ? 0 : BIN_ENTITY_BYTES}};
    return 1;
}

static dg_status bin_rewind(harness__source *s, dg_error *err)
{
    bin_impl *b = s->impl;
    return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, b->label, "a stream read once cannot be re-read");
}

static void bin_destroy(harness__source *s)
{
    bin_impl *b = s->impl;
    if (!b)
        return;
    free(b->ents);
    free(b->win);
    free(b->xents);
    free(b->order);
    free(b->xtmp);
    free(b->evs);
    free(b->ev_text_at);
    free(b->text);
    free(b->hblock);
    free(b->dtypes);
    free(b->dfactions);
    free(b->roster);
    free(b->xraw);
    free(b->xraw_tmp);
    free(b->raw);
    free(b);
}

static dg_status bin_open_v2(harness__source *s, bin_impl *b, dg_error *err);

static dg_status bin_open(harness__source *s, bin_impl *b, uint32_t keyframe, dg_error *err)
{
    uint8_t m[12];
    if (read_exact(b, m, sizeof m, "the stream header", err) < 0)
        return err->code;
    if (m[0] != BIN_MAGIC0 || memcmp(m + 1, "DGS", 3) != 0)
        return bin_err(b, 0, "expected the magic 89 44 47 53 (\\x89DGS)", err);
    unsigned version = (unsigned)get_le(m + 4, 2), flags = (unsigned)get_le(m + 6, 2);
    uint32_t rate = (uint32_t)get_le(m + 8, 4);
    char t[96];
    if (version < BIN_VERSION || version > BIN_VERSION_MAX)
        snprintf(t, sizeof t, "version %u: this build reads versions 1 and 2", version);
    else if (flags != 0)
        snprintf(t, sizeof t, "flags 0x%04x: expected 0 (none is defined)", flags);
    else if (rate > 100000)
        snprintf(t, sizeof t, "tick rate %u Hz: expected 1..100000 (0 = 60)", (unsigned)rate);
    bool bad_version = version < BIN_VERSION || version > BIN_VERSION_MAX;
    if (bad_version || flags != 0 || rate > 100000)
        return bin_err(b, bad_version ? 4 : flags ? 6 : 8, t, err);
    b->version = version;
    b->ent_bytes = BIN_ENTITY_BYTES;
    for (unsigned i = 0; i < BIN_TABLE; i++) {
        int nt = snprintf(b->names[0][i], sizeof b->names[0][i], "type%u", i);
        int nf = snprintf(b->names[1][i], sizeof b->names[1][i], "faction%u", i);
        b->types[i] = (dg_flrep_type){(uint16_t)i, {b->names[0][i], (uint16_t)nt}, {b->names[0][i], (uint16_t)nt}, 0, 0};
        b->factions[i] = (dg_flrep_faction){(uint16_t)i, {b->names[1][i], (uint16_t)nf}, {b->names[1][i], (uint16_t)nf}};
    }
    s->hdr.major = DG_FLREP_MAJOR;
    s->hdr.minor = DG_FLREP_MINOR;
    s->hdr.engine_version = dg_flrep_cstr(HARNESS_VERSION " states");
    s->hdr.tick_rate_hz = rate ? rate : 60;
    s->hdr.planet_radius_m = 6371000.0;
    if (keyframe)
        s->hdr.keyframe_interval_ticks = keyframe;
    s->hdr.types = b->types;
    s->hdr.type_count = BIN_TABLE;
    s->hdr.factions = b->factions;
    s->hdr.faction_count = BIN_TABLE;
    dg_status st = version == 2 ? bin_open_v2(s, b, err) : DG_OK;
    if (st == DG_OK && version == 1 && !(b->raw = malloc(BIN_RAW_BLOCK * BIN_RAW_BYTES)))
        st = dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, b->label, "out of memory");
    /* a window's worth of entities at a time, whole blocks of raw records (354-byte entities: 640) */
    b->batch = BIN_WINDOW / b->ent_bytes / BIN_RAW_BLOCK * BIN_RAW_BLOCK;
    return st == DG_OK ? dg_harness__source_schema_ready(s, err) : st;
}

/* ---- version 2: the header block (schema, tables) and ticks with extras and events ---------------- */

/* A bounded reader over the header block; the first short read or bad value stops it (why, at). */
typedef struct hcur {
    const uint8_t *p;
    size_t len, at;
    uint64_t base; /* the block's offset in the stream */
    const char *label;
    bool bad;
    char why[320];
    uint64_t bad_at;
} hcur;

static bool h_need(hcur *c, size_t n, const char *what)
{
    if (c->bad)
        return false;
    if (c->len - c->at >= n)
        return true;
    c->bad = true;
    c->bad_at = c->base + c->at;
    snprintf(c->why, sizeof c->why, "the header block: %s: expected %zu bytes, found %zu (the block ends)", what, n,
             c->len - c->at);
    return false;
}

static uint64_t h_u(hcur *c, int n, const char *what)
{
    if (!h_need(c, (size_t)n, what))
        return 0;
    uint64_t v = get_le(c->p + c->at, n);
    c->at += (size_t)n;
    return v;
}

static double h_f64(hcur *c, const char *what)
{
    uint64_t u = h_u(c, 8, what);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* A u8-length string, copied NUL-terminated into out (cap > 255). */
static void h_str(hcur *c, char *out, size_t cap, const char *what)
{
    size_t n = (size_t)h_u(c, 1, what);
    out[0] = 0;
    if (!h_need(c, n, what))
        return;
    snprintf(out, cap, "%.*s", (int)n, (const char *)c->p + c->at);
    if (memchr(c->p + c->at, 0, n)) {
        c->bad = true;
        c->bad_at = c->base + c->at;
        snprintf(c->why, sizeof c->why, "the header block: %s: a NUL byte inside the string", what);
    }
    c->at += n;
}

/* As h_str, pointing into the block (table strings live as long as the source). */
static dg_flrep_str h_str_ref(hcur *c, const char *what)
{
    size_t n = (size_t)h_u(c, 1, what);
    if (!h_need(c, n, what))
        return (dg_flrep_str){"", 0};
    dg_flrep_str v = {(const char *)c->p + c->at, (uint16_t)n};
    c->at += n;
    return v;
}

static bool h_fail(hcur *c, uint64_t at, const char *msg)
{
    if (c->bad)
        return false;
    c->bad = true;
    c->bad_at = at;
    snprintf(c->why, sizeof c->why, "the header block: %.280s", msg);
    return false;
}

/* The schema: std mask, quanta, the fields with their rules checked by harness/schema_decl.c. */
static bool h_schema(hcur *c, harness__decl *d)
{
    char msg[256], text[HARNESS_DECL_ENUM_MAX * (HARNESS_DECL_ENUM_NAME_MAX + 1) + 1], num[40];
    uint64_t at = c->base + c->at;
    unsigned mask = (unsigned)h_u(c, 1, "stdMask");
    double pq = h_f64(c, "posQuantum"), vq = h_f64(c, "velQuantum");
    unsigned nf = (unsigned)h_u(c, 1, "fieldCount");
    if (c->bad)
        return false;
    d->declared = true;
    snprintf(d->where, sizeof d->where, "%.120s at byte %llu", c->label, (unsigned long long)at);
    if (mask & 0x80)
        return h_fail(c, at, "stdMask: bit 7 is reserved (expected 0)");
    d->std_mask = mask;
    snprintf(num, sizeof num, "%.17g", pq); /* an absent field's quantum is not looked at */
    if ((mask & HARNESS_STD_POS) && !dg_harness__decl_schema_key(d, "position_quantum", num, msg, sizeof msg))
        return h_fail(c, at + 1, msg);
    snprintf(num, sizeof num, "%.17g", vq);
    if ((mask & HARNESS_STD_VEL) && !dg_harness__decl_schema_key(d, "velocity_quantum", num, msg, sizeof msg))
        return h_fail(c, at + 9, msg);
    if (nf > HARNESS_DECL_MAX_FIELDS)
        return snprintf(msg, sizeof msg, "fieldCount %u: expected at most %d", nf, HARNESS_DECL_MAX_FIELDS),
               h_fail(c, at + 17, msg);
    static const char *const types[] = {"", "int", "uint", "float", "bool", "enum", "bytes"};
    for (unsigned i = 0; i < nf && !c->bad; i++) {
        uint64_t fat = c->base + c->at;
        unsigned type = (unsigned)h_u(c, 1, "field type"), bits = (unsigned)h_u(c, 1, "field bits");
        double q = h_f64(c, "field quantum");
        char name[256], unit[256], where[HARNESS_DECL_WHERE_MAX];
        h_str(c, name, sizeof name, "field name");
        h_str(c, unit, sizeof unit, "field unit");
        unsigned ne = (unsigned)h_u(c, 2, "field enumCount");
        size_t tl = 0;
        text[0] = 0;
        for (unsigned k = 0; k < ne && !c->bad && k <= HARNESS_DECL_ENUM_MAX; k++) {
            char en[256];
            h_str(c, en, sizeof en, "enum value name");
            if (tl + strlen(en) + 2 < sizeof text)
                tl += (size_t)snprintf(text + tl, sizeof text - tl, "%s%s", k ? "," : "", en);
        }
        if (c->bad)
            return false;
        snprintf(where, sizeof where, "%.120s at byte %llu", c->label, (unsigned long long)fat);
        if (!dg_harness__decl_add_field(d, name, where, msg, sizeof msg))
            return h_fail(c, fat, msg);
        if (type < 1 || type > 6)
            return snprintf(msg, sizeof msg, "field \"%.63s\": type %u: expected 1..6 (int, uint, float, bool, enum, "
                            "bytes)", name, type), h_fail(c, fat, msg);
        bool ok = dg_harness__decl_field_key(d, "type", types[type], msg, sizeof msg);
        if (ok && unit[0])
            ok = dg_harness__decl_field_key(d, "unit", unit, msg, sizeof msg);
        if (ok && type == HARNESS_FT_FLOAT)
            snprintf(num, sizeof num, "%.17g", q), ok = dg_harness__decl_field_key(d, "quantum", num, msg, sizeof msg);
        if (ok && (type == HARNESS_FT_INT || type == HARNESS_FT_UINT || type == HARNESS_FT_BYTES))
            snprintf(num, sizeof num, "%u", bits),
                ok = dg_harness__decl_field_key(d, type == HARNESS_FT_BYTES ? "length" : "bits", num, msg, sizeof msg);
        if (ok && type == HARNESS_FT_ENUM)
            ok = dg_harness__decl_field_key(d, "values", text, msg, sizeof msg);
        if (ok && type != HARNESS_FT_ENUM && ne)
            ok = (snprintf(msg, sizeof msg, "field \"%.63s\": enumCount %u for a %s (expected 0)", name, ne,
                           types[type]), false);
        if (!ok)
            return h_fail(c, fat, msg);
    }
    size_t bad;
    if (!c->bad && !dg_harness__decl_finish(d, &bad, msg, sizeof msg))
        return h_fail(c, at, msg);
    return !c->bad;
}

/* The type, faction and participant tables (each may be empty: then v1's rule for types/factions). */
static dg_status h_tables(hcur *c, bin_impl *b)
{
    unsigned nt = (unsigned)h_u(c, 2, "typeCount");
    if (!c->bad && nt && !(b->dtypes = calloc(nt, sizeof *b->dtypes)))
        return DG_E_NOMEM;
    for (unsigned i = 0; i < nt && !c->bad; i++) {
        uint64_t at = c->base + c->at;
        dg_flrep_type *t = &b->dtypes[i];
        t->index = (uint16_t)h_u(c, 2, "type index");
        t->category = (uint8_t)h_u(c, 1, "type category");
        t->projectile_kind = (uint8_t)h_u(c, 1, "type projectile");
        t->id = h_str_ref(c, "type id");
        t->name = h_str_ref(c, "type name");
        char m[96];
        if (!c->bad && (t->category > 5 || t->projectile_kind > 4))
            snprintf(m, sizeof m, "type %u: category %u / projectile %u: expected 0..5 / 0..4", t->index, t->category,
                     t->projectile_kind), h_fail(c, at, m);
        for (unsigned k = 0; k < i && !c->bad; k++)
            if (b->dtypes[k].index == t->index)
                snprintf(m, sizeof m, "type index %u is declared twice", t->index), h_fail(c, at, m);
    }
    unsigned nf = (unsigned)h_u(c, 2, "factionCount");
    if (!c->bad && nf && !(b->dfactions = calloc(nf, sizeof *b->dfactions)))
        return DG_E_NOMEM;
    for (unsigned i = 0; i < nf && !c->bad; i++) {
        uint64_t at = c->base + c->at;
        dg_flrep_faction *f = &b->dfactions[i];
        f->index = (uint16_t)h_u(c, 2, "faction index");
        f->id = h_str_ref(c, "faction id");
        f->name = h_str_ref(c, "faction name");
        char m[96];
        for (unsigned k = 0; k < i && !c->bad; k++)
            if (b->dfactions[k].index == f->index)
                snprintf(m, sizeof m, "faction index %u is declared twice", f->index), h_fail(c, at, m);
    }
    unsigned np = (unsigned)h_u(c, 2, "participantCount");
    if (!c->bad && np && !(b->roster = calloc(np, sizeof *b->roster)))
        return DG_E_NOMEM;
    for (unsigned i = 0; i < np && !c->bad; i++) {
        b->roster[i].participant_id = (uint32_t)h_u(c, 4, "participant id");
        b->roster[i].entity_id = (uint32_t)h_u(c, 4, "participant entity id");
        b->roster[i].callsign = h_str_ref(c, "participant callsign");
    }
    if (!c->bad) {
        b->declared_types = nt > 0;
        b->declared_factions = nf > 0;
        b->s_nt = nt;
        b->s_nf = nf;
        b->s_np = np;
    }
    return DG_OK;
}

/* Whether entity index idx is in the header's table (any below 256 where the header declares none). */
static bool index_declared(const bin_impl *b, bool faction, unsigned idx)
{
    if (faction ? !b->declared_factions : !b->declared_types)
        return idx < BIN_TABLE;
    size_t n = faction ? b->s_nf : b->s_nt;
    for (size_t k = 0; k < n; k++)
        if ((faction ? b->dfactions[k].index : b->dtypes[k].index) == idx)
            return true;
    return false;
}

static dg_status bin_open_v2(harness__source *s, bin_impl *b, dg_error *err)
{
    uint8_t h[4];
    if (read_exact(b, h, 4, "the header block's length", err) < 0)
        return err->code;
    uint32_t len = le32(h);
    if (len > BIN_HEADER_MAX) {
        char m[96];
        snprintf(m, sizeof m, "header block length %u: expected at most %u", len, BIN_HEADER_MAX);
        return bin_err(b, 12, m, err);
    }
    if (!(b->hblock = malloc(len ? len : 1)))
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, b->label, "out of memory");
    if (len && read_exact(b, b->hblock, len, "the header block", err) < 0)
        return err->code;
    hcur c = {.p = b->hblock, .len = len, .base = 16, .label = b->label};
    double planet = h_f64(&c, "planetRadiusM");
    if (!c.bad && !(planet >= 0 && planet <= 1e12))
        h_fail(&c, 16, "planetRadiusM: expected 0 (none) or a radius in metres up to 1e12");
    h_schema(&c, b->decl);
    if (h_tables(&c, b) != DG_OK)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, b->label, "out of memory");
    if (!c.bad && c.at != c.len) {
        char m[96];
        snprintf(m, sizeof m, "%zu bytes after the tables (the block's length says %u)", c.len - c.at, len);
        h_fail(&c, c.base + c.at, m);
    }
    if (c.bad)
        return bin_err(b, c.bad_at, c.why, err);
    b->nx = b->decl->field_count;
    b->ent_bytes = BIN_ENTITY_BYTES + 8 * b->nx;
    for (size_t f = 0; f < b->nx; f++)
        b->nxraw += b->decl->fields[f].type == HARNESS_FT_FLOAT;
    for (unsigned i = 0; i < BIN_TABLE; i++) {
        b->type_ok[i] = index_declared(b, false, i);
        b->faction_ok[i] = index_declared(b, true, i);
    }
    b->raw_bytes = 8 + 8 * (HARNESS_RAW_FIELDS + b->nxraw);
    if (!(b->raw = malloc(BIN_RAW_BLOCK * b->raw_bytes)))
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, b->label, "out of memory");
    s->hdr.planet_radius_m = dg_harness__decl_is_legacy(b->decl) && planet == 0 ? 6371000.0 : planet;
    if (b->declared_types)
        s->hdr.types = b->dtypes, s->hdr.type_count = b->s_nt;
    if (b->declared_factions)
        s->hdr.factions = b->dfactions, s->hdr.faction_count = b->s_nf;
    s->hdr.participants = b->roster;
    s->hdr.participant_count = b->s_np;
    return DG_OK;
}

/* One entity's declared fields (8 bytes each: f64 for a float, the bit pattern for the others). */
static bool decode_extras(bin_impl *b, const uint8_t *p, int64_t *slot, double *xraw, uint32_t id, uint64_t tick,
                          uint64_t at, dg_error *err)
{
    char msg[200];
    for (size_t f = 0, k = 0; f < b->nx; f++) {
        const harness__field_decl *d = &b->decl->fields[f];
        uint64_t u = (uint64_t)le32(p + 8 * f) | (uint64_t)le32(p + 8 * f + 4) << 32;
        double v;
        memcpy(&v, &u, sizeof v);
        bool ok; /* a float quantized inline; decl_value_f64 only to say why it is refused */
        if (d->type == HARNESS_FT_FLOAT) {
            xraw[k++] = v;
            ok = dg_harness__decl_quantize(v, d->quantum, &slot[f]) ||
                 dg_harness__decl_value_f64(d, v, &slot[f], msg, sizeof msg);
        } else {
            ok = dg_harness__decl_value_bits(d, u, &slot[f], msg, sizeof msg);
        }
        if (!ok) {
            char m[320];
            snprintf(m, sizeof m, "tick %llu, entity %u: %.200s", (unsigned long long)tick, id, msg);
            bin_err(b, at + BIN_ENTITY_BYTES + 8 * f, m, err);
            return false;
        }
    }
    return true;
}

/* Entity j of a version 2 tick from its bytes p, in one pass: the standard fields (zeroed where the
 * schema has none), its declared fields' slots and float raw values, and its raw hash record at raw. */
static inline bool decode_entity_v2(bin_impl *b, const uint8_t *p, size_t j, uint8_t *raw, uint64_t tick,
                                    uint64_t at, dg_error *err)
{
    dg_entity_in *e = &b->ents[j];
    decode_std(p, e);
    if (b->decl->std_mask != HARNESS_STD_ALL)
        dg_harness__decl_zero_absent(b->decl, e);
    double *xr = b->xraw + j * b->nxraw;
    if (!decode_extras(b, p + BIN_ENTITY_BYTES, b->xents + j * b->nx, xr, e->id, tick, at, err))
        return false;
    raw_record(raw, e, xr, b->nxraw);
    return true;
}

/* Sorts the tick by id carrying the extras (an insertion of indices: ticks come sorted as a rule). */
static dg_status sort_with_extras(bin_impl *b, size_t n, dg_error *err)
{
    uint32_t *o = realloc(b->order, n * sizeof *o);
    int64_t *x = realloc(b->xtmp, (n * b->nx + 1) * sizeof *x);
    b->order = o ? o : b->order;
    b->xtmp = x ? x : b->xtmp;
    if (!o || !x)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, b->label, "out of memory");
    dg_entity_in *e = b->ents;
    for (size_t i = 0; i < n; i++)
        o[i] = (uint32_t)i;
    for (size_t i = 1; i < n; i++) { /* stable insertion by id */
        uint32_t v = o[i];
        size_t j = i;
        for (; j > 0 && e[o[j - 1]].id > e[v].id; j--)
            o[j] = o[j - 1];
        o[j] = v;
    }
    memcpy(x, b->xents, n * b->nx * sizeof *x);
    dg_entity_in *tmp = malloc(n * sizeof *tmp);
    double *xr = realloc(b->xraw_tmp, (n * b->nxraw + 1) * sizeof *xr);
    b->xraw_tmp = xr ? xr : b->xraw_tmp;
    if (!tmp || !xr) {
        free(tmp);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, b->label, "out of memory");
    }
    memcpy(tmp, e, n * sizeof *tmp);
    memcpy(xr, b->xraw, n * b->nxraw * sizeof *xr);
    for (size_t i = 0; i < n; i++) {
        e[i] = tmp[o[i]];
        memcpy(b->xents + i * b->nx, x + (size_t)o[i] * b->nx, b->nx * sizeof *x);
        memcpy(b->xraw + i * b->nxraw, xr + (size_t)o[i] * b->nxraw, b->nxraw * sizeof *xr);
    }
    free(tmp);
    return DG_OK;
}

/* The tick's events: 15 bytes each and their text (docs/STATES-STREAM.md, "Binary (version 2)"). */
/* Room for event i of a tick of nev: as grow_ents, doubling as the events arrive. */
static bool grow_events(bin_impl *b, size_t i, size_t nev)
{
    if (i < b->cap_ev)
        return true;
    size_t c = b->cap_ev * 2 > 64 ? b->cap_ev * 2 : 64;
    c = c < nev ? c : nev;
    dg_event *e = realloc(b->evs, c * sizeof *e);
    b->evs = e ? e : b->evs;
    size_t *o = realloc(b->ev_text_at, c * sizeof *o);
    b->ev_text_at = o ? o : b->ev_text_at;
    if (!e || !o)
        return false;
    b->cap_ev = c;
    return true;
}

static int read_events(bin_impl *b, uint64_t tick, uint32_t nev, dg_error *err)
{
    size_t text_n = 0;
    for (uint32_t i = 0; i < nev; i++) {
        uint8_t h[15];
        uint64_t at = b->offset;
        if (!grow_events(b, i, nev))
            return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, b->label, "out of memory"), -1;
        if (read_exact(b, h, sizeof h, "an event", err) < 0)
            return -1;
        unsigned kind = h[0], tl = le16(h + 13);
        if (kind < 1 || kind > 5) {
            char m[96];
            snprintf(m, sizeof m, "tick %llu, event %u: kind %u: expected 1..5", (unsigned long long)tick, i, kind);
            return bin_err(b, at, m, err), -1;
        }
        if (text_n + tl > b->text_cap) {
            size_t nc = (text_n + tl) * 2;
            uint8_t *t = realloc(b->text, nc);
            if (!t)
                return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, b->label, "out of memory"), -1;
            b->text = t;
            b->text_cap = nc;
        }
        if (tl && read_exact(b, b->text + text_n, tl, "an event's text", err) < 0)
            return -1;
        b->evs[i] = (dg_event){(uint8_t)kind, tick, le32(h + 1), le32(h + 5), le16(h + 9), le16(h + 11), NULL,
                               (uint16_t)tl};
        b->ev_text_at[i] = text_n;
        text_n += tl;
    }
    for (uint32_t i = 0; i < nev; i++)
        b->evs[i].text = b->evs[i].text_len ? (const char *)b->text + b->ev_text_at[i] : NULL;
    return 1;
}

static int bin_next_v2(harness__source *s, harness__frame *f, dg_error *err)
{
    bin_impl *b = s->impl;
    uint8_t kind;
    uint64_t at = b->offset;
    if (read_exact(b, &kind, 1, "a record kind", err) < 0)
        return -1;
    if (kind == 0x00)
        return expect_stream_end(b, at, err);
    if (kind != 0x01) {
        char m[80];
        snprintf(m, sizeof m, "expected a record kind 0x01 (tick) or 0x00 (end), found 0x%02x", kind);
        return bin_err(b, at, m, err), -1;
    }
    uint8_t h[16];
    if (read_exact(b, h, sizeof h, "a tick header", err) < 0)
        return -1;
    uint64_t tick = get_le(h, 8);
    uint32_t n = le32(h + 8), nev = le32(h + 12);
    if (n > BIN_MAX_ENTITIES || nev > BIN_MAX_EVENTS) {
        char m[120];
        snprintf(m, sizeof m, "tick %llu: %u entities / %u events is more than the %u / %u a tick may hold",
                 (unsigned long long)tick, n, nev, BIN_MAX_ENTITIES, BIN_MAX_EVENTS);
        return bin_err(b, at, m, err), -1;
    }
    if (!grow_ents(b, 0, n)) /* the arrays exist (the frame points at them) even for an empty tick */
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, b->label, "out of memory"), -1;
    uint64_t ents_at = b->offset;
    /* One pass, as for version 1: each entity decoded and its raw record built from its bytes, the
     * records hashed a block at a time while in L1, until an entity is out of order (bad: then the
     * tick is sorted and hashed the slow way below) or an index is not declared (undeclared). */
    dg_hash_stream hs;
    dg_hash_raw_begin(&hs, tick);
    uint32_t prev = 0, bad = 0, undeclared = 0;
    for (uint32_t i0 = 0, cnt; i0 < n; i0 += cnt) {
        size_t got;
        const uint8_t *in = take_entities(b, i0, n - i0 < b->batch ? n - i0 : b->batch, n, &got, err);
        if (!in)
            return -1;
        cnt = (uint32_t)got;
        for (uint32_t i = 0; i < cnt; i += BIN_RAW_BLOCK) {
            uint32_t m = cnt - i < BIN_RAW_BLOCK ? cnt - i : BIN_RAW_BLOCK;
            for (uint32_t k = 0; k < m; k++) {
                size_t j = (size_t)i0 + i + k;
                if (!decode_entity_v2(b, in + (size_t)(i + k) * b->ent_bytes, j, b->raw + (size_t)k * b->raw_bytes,
                                      tick, ents_at + (uint64_t)j * b->ent_bytes, err))
                    return -1;
                const dg_entity_in *e = &b->ents[j];
                bad |= (uint32_t)(e->id <= prev) | (uint32_t)(e->type_index >= BIN_TABLE) |
                       (uint32_t)(e->faction_index >= BIN_TABLE);
                undeclared |= bad || !b->type_ok[e->type_index] || !b->faction_ok[e->faction_index];
                prev = e->id;
            }
            if (!bad)
                dg_hash_raw_records_sorted(&hs, b->raw, (size_t)m * b->raw_bytes, m, prev);
        }
    }
    bool sorted = true;
    for (uint32_t i = 1; bad && i < n; i++)
        sorted = sorted && b->ents[i - 1].id <= b->ents[i].id;
    if (!sorted && b->nx && sort_with_extras(b, n, err) != DG_OK)
        return -1;
    if (check_tick(b, tick, n, sorted || b->nx, !bad, at, err) != DG_OK)
        return -1;
    for (uint32_t i = 0; undeclared && i < n; i++) {
        const dg_entity_in *e = &b->ents[i];
        if (!b->type_ok[e->type_index] || !b->faction_ok[e->faction_index]) {
            char m[160];
            snprintf(m, sizeof m, "tick %llu: entity %u: type %u / faction %u is not in the header's tables",
                     (unsigned long long)tick, e->id, e->type_index, e->faction_index);
            return bin_err(b, at, m, err), -1;
        }
    }
    if (read_events(b, tick, nev, err) < 0)
        return -1;
    if (bad) { /* sorted now (check_tick refused the rest): the raw hash follows the sorted order */
        dg_hash_raw_begin(&hs, tick);
        for (uint32_t i = 0; i < n; i++)
            dg_harness__raw_entity(&hs, &b->ents[i], b->nxraw ? b->xraw + (size_t)i * b->nxraw : NULL, b->nxraw);
    }
    *f = (harness__frame){.tick = tick, .ents = b->ents, .n = n, .events = b->evs, .nev = nev, .has_raw = true,
                          .raw = dg_hash_raw_end(&hs), .extras = b->nx ? b->xents : NULL,
                          .xraw = b->nxraw ? b->xraw : NULL, .nxraw = b->nxraw,
                          .at = {b->label, at, false, ents_at, bad ? 0 : b->ent_bytes}};
    return 1;
}

/* ---- a binary stream file: the FILE is the source's own ------------------------------------------ */

typedef struct owned_impl {
    harness__source *inner;
    FILE *f;   /* over fd through file_read (the header and text), as the raw reader is */
    int fd;
    uint64_t bytes; /* read from fd so far, by either */
} owned_impl;

/* The file's reads, for both its FILE and the parser's raw reader (read straight into its window:
 * one read per 256 KiB, not a read per tick and a copy through the FILE's buffer). */
static ssize_t file_read(void *cookie, char *buf, size_t size)
{
    owned_impl *o = cookie;
    for (;;) {
        ssize_t n = read(o->fd, buf, size);
        if (n >= 0) {
            o->bytes += (uint64_t)n;
            return n;
        }
        if (errno != EINTR)
            return -1;
    }
}

static uint64_t file_total(void *cookie)
{
    const owned_impl *o = cookie;
    return o->bytes;
}

static int owned_next(harness__source *s, harness__frame *f, dg_error *err)
{
    owned_impl *o = s->impl;
    return o->inner->next(o->inner, f, err);
}

static dg_status owned_rewind(harness__source *s, dg_error *err)
{
    owned_impl *o = s->impl;
    return o->inner->rewind(o->inner, err);
}

static void owned_destroy(harness__source *s)
{
    owned_impl *o = s->impl;
    if (!o)
        return;
    dg_harness__source_free(o->inner);
    if (o->f)
        fclose(o->f);
    if (o->fd >= 0)
        close(o->fd);
    free(o);
}

bool dg_harness__is_binary_stream(const char *path)
{
    FILE *f = fopen(path, "rb");
    int c = f ? getc(f) : EOF;
    if (f)
        fclose(f);
    return c == BIN_MAGIC0;
}

dg_status dg_harness__source_binary_file(harness__source **out, const char *path, uint32_t keyframe, dg_error *err)
{
    *out = NULL;
    harness__source *s = calloc(1, sizeof *s);
    owned_impl *o = calloc(1, sizeof *o);
    if (!s || !o) {
        free(s);
        free(o);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory");
    }
    *s = (harness__source){.impl = o, .next = owned_next, .rewind = owned_rewind, .destroy = owned_destroy};
    o->fd = -1;
    harness__raw_reader raw = {.read = file_read, .total = file_total, .cookie = o};
    dg_status st = DG_OK;
    if ((o->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        st = dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "cannot open");
    else if (!(o->f = fopencookie(o, "r", (cookie_io_functions_t){.read = file_read})))
        st = dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory");
    else
        st = dg_harness__source_stream_raw(&o->inner, o->f, &raw, path, path, keyframe, err);
    if (st != DG_OK) {
        dg_harness__source_free(s);
        return st;
    }
    snprintf(s->name, sizeof s->name, "%s", o->inner->name);
    s->hdr = o->inner->hdr;
    if (!dg_harness__decl_copy(&s->decl, &o->inner->decl)) {
        dg_harness__source_free(s);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory");
    }
    *out = s;
    return DG_OK;
}

dg_status dg_harness__source_stream(harness__source **out, FILE *f, const char *label, const char *name,
                                 uint32_t keyframe, dg_error *err)
{
    return dg_harness__source_stream_raw(out, f, NULL, label, name, keyframe, err);
}

dg_status dg_harness__source_stream_raw(harness__source **out, FILE *f, const harness__raw_reader *raw,
                                     const char *label, const char *name, uint32_t keyframe, dg_error *err)
{
    int c = getc(f);
    if (c != EOF)
        ungetc(c, f);
    if (c != BIN_MAGIC0)
        return dg_harness__source_states_stream(out, f, label, name, keyframe, err);
    *out = NULL;
    harness__source *s = calloc(1, sizeof *s);
    bin_impl *b = calloc(1, sizeof *b);
    if (!s || !b) {
        free(s);
        free(b);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, label, "out of memory");
    }
    b->f = f;
    if (raw)
        b->rd = *raw;
    snprintf(b->label, sizeof b->label, "%s", label);
    *s = (harness__source){.impl = b, .next = bin_next, .rewind = bin_rewind, .destroy = bin_destroy};
    dg_harness__decl_init(&s->decl);
    b->decl = &s->decl;
    dg_harness__scenario_name(name ? name : "stdin", s->name, sizeof s->name);
    dg_status st = bin_open(s, b, keyframe, err);
    if (st != DG_OK) {
        dg_harness__source_free(s);
        return st;
    }
    *out = s;
    return DG_OK;
}
