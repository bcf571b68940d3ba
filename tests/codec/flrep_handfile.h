/* tests/codec/flrep_handfile.h — a .flrep file builder written from docs/FORMAT-flrep.md alone
 * (its own byte writer, zstd call and XXH3 checks; records through flrep_handbits.h): the contract
 * tests build hostile and edge-case files with it, any number of chunks, with or without a
 * trailer. Header-only so each test file stays independent of the others. */
#ifndef DETGATE_TESTS_FLREP_HANDFILE_H
#define DETGATE_TESTS_FLREP_HANDFILE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <zstd.h>

#include "flrep_handbits.h"

typedef struct hf_bytes {
    uint8_t *b;
    size_t n, cap;
} hf_bytes;

static inline void hf_raw(hf_bytes *o, const void *p, size_t n)
{
    if (o->n + n > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->n + n)
            cap *= 2;
        o->b = realloc(o->b, cap);
        if (!o->b)
            abort();
        o->cap = cap;
    }
    if (n)
        memcpy(o->b + o->n, p, n);
    o->n += n;
}
static inline void hf_u8(hf_bytes *o, uint8_t v) { hf_raw(o, &v, 1); }
static inline void hf_u16(hf_bytes *o, uint16_t v) { hf_u8(o, (uint8_t)v); hf_u8(o, (uint8_t)(v >> 8)); }
static inline void hf_u32(hf_bytes *o, uint32_t v) { hf_u16(o, (uint16_t)v); hf_u16(o, (uint16_t)(v >> 16)); }
static inline void hf_u64(hf_bytes *o, uint64_t v) { hf_u32(o, (uint32_t)v); hf_u32(o, (uint32_t)(v >> 32)); }
static inline void hf_strn(hf_bytes *o, const char *s, size_t n) { hf_u16(o, (uint16_t)n); hf_raw(o, s, n); }
static inline void hf_str(hf_bytes *o, const char *s) { hf_strn(o, s, strlen(s)); }
static inline void hf_free(hf_bytes *o) { free(o->b); memset(o, 0, sizeof *o); }

/* §3-4: header (rate R, keyframe interval K), one type (index 3), one faction (index 2), a roster
 * with one participant; `callsign` lets a test put any bytes in a string. */
static inline void hf_preamble_named(hf_bytes *o, uint32_t rate, uint32_t keyframe, const char *callsign,
                                     size_t callsign_len)
{
    hf_raw(o, "FLRP", 4);
    hf_u16(o, 1);
    hf_u16(o, 0);
    hf_str(o, "hand 2");
    hf_bytes body = {0};
    hf_u32(&body, rate);
    double radius = 6371000.0;
    uint64_t rb;
    memcpy(&rb, &radius, 8);
    hf_u64(&body, rb);
    hf_u64(&body, 7);
    hf_str(&body, "");
    hf_u32(&body, 0);
    hf_u32(&body, keyframe);
    hf_u32(o, (uint32_t)body.n);
    hf_raw(o, body.b, body.n);
    hf_free(&body);
    hf_bytes s = {0};
    hf_u16(&s, 1); hf_u16(&s, 3); hf_str(&s, "jet"); hf_str(&s, "Jet"); hf_u8(&s, 1); hf_u8(&s, 0);
    hf_u16(o, 1); hf_u32(o, (uint32_t)s.n); hf_raw(o, s.b, s.n);
    s.n = 0;
    hf_u16(&s, 1); hf_u16(&s, 2); hf_str(&s, "red"); hf_str(&s, "Red");
    hf_u16(o, 2); hf_u32(o, (uint32_t)s.n); hf_raw(o, s.b, s.n);
    s.n = 0;
    hf_u16(&s, 1); hf_u32(&s, 500); hf_u32(&s, 10); hf_strn(&s, callsign, callsign_len); hf_u16(&s, 0);
    hf_u16(o, 3); hf_u32(o, (uint32_t)s.n); hf_raw(o, s.b, s.n);
    hf_free(&s);
    hf_u16(o, 0);
    hf_u32(o, 0);
}
static inline void hf_preamble(hf_bytes *o, uint32_t rate, uint32_t keyframe)
{
    hf_preamble_named(o, rate, keyframe, "Iceman", 6);
}

/* §6.3 FULL record of type 3, faction 2, health 10000, rotation (0, 0, 0) with w dropped. */
static inline void hf_full(bits *w, uint64_t gap, int32_t px, int32_t vx)
{
    beg(w, gap);
    bput(w, 1, 2);
    bput(w, 3, 16); bput(w, 2, 16); bput(w, 10000, 16); bput(w, 0, 16);
    bput(w, (uint32_t)px, 32); bput(w, 0, 32); bput(w, 0, 32);
    bput(w, (uint32_t)vx, 32); bput(w, 0, 32); bput(w, 0, 32);
    bput(w, 0, 2); bput(w, 0, 16); bput(w, 0, 16); bput(w, 0, 16);
}

/* §6.3 DELTA record with motion: velocity residual vres0 on x, all others zero. */
static inline void hf_delta_vx(bits *w, uint64_t gap, int64_t vres0)
{
    beg(w, gap);
    bput(w, 0, 2);
    bput(w, 1, 3);                    /* motion, no rotFull, no attrs */
    bseg(w, vres0);
    for (int i = 0; i < 8; i++)
        bseg(w, 0);
}

/* §5.2 tick header + its record block (events, if any, the caller appends after). */
static inline void hf_tick(hf_bytes *o, uint64_t t, uint16_t flags, uint16_t nrec, uint16_t nev, const bits *w)
{
    hf_u64(o, t);
    hf_u16(o, flags);
    hf_u16(o, nrec);
    hf_u16(o, nev);
    hf_u32(o, (uint32_t)((w->nbits + 7) / 8));
    hf_raw(o, w->b, (w->nbits + 7) / 8);
}

/* The same with a record block of any size (bits is capped at 1 KiB). */
static inline void hf_tick_block(hf_bytes *o, uint64_t t, uint16_t flags, uint16_t nrec, const uint8_t *block,
                                 size_t len)
{
    hf_u64(o, t);
    hf_u16(o, flags);
    hf_u16(o, nrec);
    hf_u16(o, 0);
    hf_u32(o, (uint32_t)len);
    hf_raw(o, block, len);
}

/* What the trailer needs to know of each chunk. */
typedef struct hf_chunk {
    uint64_t offset, first, last;
    uint32_t ticks;
} hf_chunk;

/* §5.1: framing + one zstd frame (with content size and checksum) of `content`. */
static inline hf_chunk hf_append_chunk(hf_bytes *fp, const hf_bytes *content, uint64_t first, uint64_t last,
                                       uint32_t nticks)
{
    size_t bound = ZSTD_compressBound(content->n);
    uint8_t *frame = malloc(bound);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
    size_t fsize = ZSTD_compress2(cc, frame, bound, content->b, content->n);
    ZSTD_freeCCtx(cc);
    if (!frame || ZSTD_isError(fsize))
        abort();
    hf_chunk c = {fp->n, first, last, nticks};
    hf_raw(fp, "FLCK", 4);
    hf_u32(fp, nticks);
    hf_u64(fp, first);
    hf_u64(fp, last);
    hf_u32(fp, (uint32_t)fsize);
    hf_u32(fp, (uint32_t)content->n);
    hf_u32(fp, (uint32_t)XXH3_64bits(fp->b + c.offset, 32));
    hf_raw(fp, frame, fsize);
    free(frame);
    return c;
}

/* §8: the index trailer for chunks[0..n). */
static inline void hf_trailer(hf_bytes *fp, const hf_chunk *chunks, size_t n)
{
    size_t table = fp->n;
    uint64_t ticks = 0;
    for (size_t i = 0; i < n; i++)
        ticks += chunks[i].ticks;
    hf_raw(fp, "FLIX", 4);
    hf_u32(fp, (uint32_t)n);
    hf_u64(fp, n ? chunks[0].first : 0);
    hf_u64(fp, n ? chunks[n - 1].last : 0);
    hf_u64(fp, ticks);
    for (size_t i = 0; i < n; i++) {
        hf_u64(fp, chunks[i].first);
        hf_u64(fp, chunks[i].offset);
    }
    hf_u64(fp, XXH3_64bits(fp->b + table, fp->n - table));
    hf_u64(fp, table);
}

#endif
