/* codec/flrep/flrep_bits.h — the LSB-first bit stream of the record block (FORMAT-flrep.md §6.2).
 * Writer appends to a dg_buf; reader is fail-closed like dg_cur: the first overrun or malformed
 * code sets ok = false and later reads return 0. Inline because it is the reader's inner loop. */
#ifndef DETGATE_FLREP_BITS_H
#define DETGATE_FLREP_BITS_H

#include <stdbool.h>
#include <stdint.h>

#include "cursor.h"

#define DG_EG_MAX_ZEROS 40

/* ---- writer ---- */
/* Writes into memory the caller reserved (dg_bitw_begin) for the most the records can take. Every
 * put stores the whole 64-bit accumulator and advances by the whole bytes it holds: no branch per
 * put (a branch on "a word is full" mispredicts on random code lengths); the 8 bytes begin
 * reserves beyond the caller's bound absorb the store past the last byte. */
typedef struct dg_bitw {
    dg_buf *out;
    uint8_t *p;     /* next byte to store */
    uint64_t acc;   /* pending bits, LSB = next bit to emit; bits from n up are zero */
    unsigned n;     /* number of pending bits (< 8 between puts) */
} dg_bitw;

/* Reserves `max_bytes` in out (false if out of memory) and starts writing at its end. */
static inline bool dg_bitw_begin(dg_bitw *w, dg_buf *out, size_t max_bytes)
{
    w->out = out;
    w->acc = 0;
    w->n = 0;
    w->p = NULL;
    if (!dg_buf_reserve(out, max_bytes + 8))
        return false;
    w->p = out->p + out->len;
    return true;
}

/* The accumulator's bytes, stored as one 64-bit word where the byte order allows: a store of
 * bytes may alias anything, and the compiler would reload every state field the encoder read
 * before it. aligned(1): the stream has no alignment. */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
typedef uint64_t dg_bitw_word __attribute__((aligned(1)));
static inline void dg_bitw_store(uint8_t *p, uint64_t v) { *(dg_bitw_word *)(void *)p = v; }
#else
static inline void dg_bitw_store(uint8_t *p, uint64_t v) { dg_put_le64(p, v); }
#endif

/* Appends the k bits of v (k <= 56; v has no bits at k or above), least significant first. */
static inline void dg_bitw_put_clean(dg_bitw *w, uint64_t v, unsigned k)
{
    w->acc |= v << w->n;
    w->n += k;                      /* <= 63 */
    dg_bitw_store(w->p, w->acc);
    unsigned whole = w->n >> 3;
    w->p += whole;
    w->acc >>= whole * 8;           /* <= 56: no shift by 64 */
    w->n &= 7;
}

/* Appends the low k bits of v (k <= 56), least significant first. */
static inline void dg_bitw_put(dg_bitw *w, uint64_t v, unsigned k)
{
    dg_bitw_put_clean(w, v & (((uint64_t)1 << k) - 1), k);
}

static inline unsigned dg_bit_floor_log2(uint64_t x)
{
    return 63u - (unsigned)__builtin_clzll(x);
}

/* The Exp-Golomb code of v when it is at most 31 bits (v + 1 < 2^16): its bits in stream order
 * (LSB first) in *code, and its length. False for a longer code. n zeros, the one, then the low n
 * bits of x = v + 1: x << (n + 1) puts those bits above the one and x's leading one at bit 2n + 1,
 * which the length drops. */
static inline bool dg_eg_short(uint64_t v, uint64_t *code, unsigned *len)
{
    bool fits = v < 0xFFFF;
    uint64_t x = fits ? v + 1 : 1;      /* a long code computes nothing here (no shift by >= 64) */
    unsigned n = dg_bit_floor_log2(x);
    *len = 2 * n + 1;
    *code = ((x << (n + 1)) | ((uint64_t)1 << n)) & ((((uint64_t)1) << *len) - 1);
    return fits;
}

/* The Exp-Golomb codes of 0..127 as constants, code | length << 24 (at most 15 bits): one load per
 * code instead of a count of leading zeros and four shifts. */
#define DG_EG_N(x)                                                                                      \
    ((x) >= 128 ? 7 : (x) >= 64 ? 6 : (x) >= 32 ? 5 : (x) >= 16 ? 4 : (x) >= 8 ? 3 : (x) >= 4 ? 2 : (x) >= 2 ? 1 : 0)
#define DG_EG_ENTRY(v)                                                                                   \
    ((((((uint32_t)(v) + 1) << (DG_EG_N((v) + 1) + 1)) | (1u << DG_EG_N((v) + 1))) &                     \
      ((1u << (2 * DG_EG_N((v) + 1) + 1)) - 1)) |                                                      \
     (uint32_t)(2 * DG_EG_N((v) + 1) + 1) << 24)
#define DG_EG_4(v) DG_EG_ENTRY(v), DG_EG_ENTRY((v) + 1), DG_EG_ENTRY((v) + 2), DG_EG_ENTRY((v) + 3)
#define DG_EG_16(v) DG_EG_4(v), DG_EG_4((v) + 4), DG_EG_4((v) + 8), DG_EG_4((v) + 12)
#define DG_EG_SMALL 128u
static const uint32_t dg_eg_small[DG_EG_SMALL] = {DG_EG_16(0),  DG_EG_16(16), DG_EG_16(32), DG_EG_16(48),
                                                   DG_EG_16(64), DG_EG_16(80), DG_EG_16(96), DG_EG_16(112)};

/* The codes of three values 0..7 one after another (a residual triple of a quantum or three: the
 * encoder's common record), indexed a | b << 3 | c << 6: code | length << 24 (at most 21 bits) — one
 * load per triple instead of three. */
#define DG_EG8_N(v) ((v) >= 7 ? 3u : (v) >= 3 ? 2u : (v) >= 1 ? 1u : 0u)   /* floor(log2(v + 1)) */
#define DG_EG8_LEN(v) (2u * DG_EG8_N(v) + 1u)
#define DG_EG8_CODE(v) (((((uint32_t)(v) + 1u) << (DG_EG8_N(v) + 1u)) | (1u << DG_EG8_N(v))) & ((1u << DG_EG8_LEN(v)) - 1u))
#define DG_EG3_ENTRY(i)                                                                                  \
    (DG_EG8_CODE((i) & 7) | DG_EG8_CODE(((i) >> 3) & 7) << DG_EG8_LEN((i) & 7) |                         \
     DG_EG8_CODE((i) >> 6) << (DG_EG8_LEN((i) & 7) + DG_EG8_LEN(((i) >> 3) & 7)) |                        \
     (DG_EG8_LEN((i) & 7) + DG_EG8_LEN(((i) >> 3) & 7) + DG_EG8_LEN((i) >> 6)) << 24)
#define DG_EG3_8(i) DG_EG3_ENTRY(i), DG_EG3_ENTRY((i) + 1), DG_EG3_ENTRY((i) + 2), DG_EG3_ENTRY((i) + 3),     \
                    DG_EG3_ENTRY((i) + 4), DG_EG3_ENTRY((i) + 5), DG_EG3_ENTRY((i) + 6), DG_EG3_ENTRY((i) + 7)
#define DG_EG3_64(i) DG_EG3_8(i), DG_EG3_8((i) + 8), DG_EG3_8((i) + 16), DG_EG3_8((i) + 24), DG_EG3_8((i) + 32), \
                     DG_EG3_8((i) + 40), DG_EG3_8((i) + 48), DG_EG3_8((i) + 56)
#define DG_EG3_SMALL 8u     /* each of the three values below this */
#define DG_EG3_NONE UINT32_MAX   /* a triple index word when some value is not below DG_EG3_SMALL */
static const uint32_t dg_eg_trip[512] = {DG_EG3_64(0),   DG_EG3_64(64),  DG_EG3_64(128), DG_EG3_64(192),
                                         DG_EG3_64(256), DG_EG3_64(320), DG_EG3_64(384), DG_EG3_64(448)};

/* Inline whole, slow path included: a call would take the writer's address and keep its state in
 * memory instead of registers for the whole record block. */
static inline __attribute__((always_inline)) void dg_bitw_eg(dg_bitw *w, uint64_t v)
{
    uint64_t code;
    unsigned len;
    if (dg_eg_short(v, &code, &len)) {  /* zeros, the one, and the low bits in one put */
        dg_bitw_put_clean(w, code, len);
        return;
    }
    uint64_t x = v + 1;                 /* v < 2^64 - 1: callers pass 36-bit zigzags and 32-bit gaps */
    unsigned n = dg_bit_floor_log2(x);
    dg_bitw_put_clean(w, 0, n > 32 ? 32 : n);
    if (n > 32)
        dg_bitw_put_clean(w, 0, n - 32);
    dg_bitw_put_clean(w, 1, 1);
    dg_bitw_put(w, x & 0xFFFFFFFFu, n > 32 ? 32 : n);
    if (n > 32)
        dg_bitw_put(w, (x >> 32) & ((1u << (n - 32)) - 1), n - 32);
}

static inline uint64_t dg_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (0 - ((uint64_t)v >> 63));   /* v >= 0: 2v; v < 0: -2v - 1 */
}
static inline int64_t dg_unzigzag(uint64_t z)
{
    return (int64_t)((z >> 1) ^ (0 - (z & 1)));
}

static inline void dg_bitw_seg(dg_bitw *w, int64_t v) { dg_bitw_eg(w, dg_zigzag(v)); }

/* write_seg3 for codes longer than the table's or too long together: one put after another. */
static inline __attribute__((always_inline)) void write_seg3_long(dg_bitw *b, uint64_t lead, unsigned lead_len,
                                                                  int64_t r0, int64_t r1, int64_t r2)
{
    if (lead_len)
        dg_bitw_put_clean(b, lead, lead_len);
    dg_bitw_seg(b, r0);
    dg_bitw_seg(b, r1);
    dg_bitw_seg(b, r2);
}

/* Appends `lead` (lead_len bits, the record's head) and the SEG codes of a residual triple. One
 * put, codes from a table, when each residual is within -64..63 and all of it fits in 56 bits —
 * residuals of a quantum or two, nearly every record — so the common record costs a few shifts
 * and one predictable branch. The residuals come by value: a pointer into the record would keep
 * the record in memory instead of registers. */
static inline __attribute__((always_inline)) void write_seg3(dg_bitw *b, uint64_t lead, unsigned lead_len,
                                                             int64_t r0, int64_t r1, int64_t r2)
{
    uint64_t z0 = dg_zigzag(r0), z1 = dg_zigzag(r1), z2 = dg_zigzag(r2);
    if (__builtin_expect((z0 | z1 | z2) < DG_EG_SMALL, 1)) {
        uint32_t e0 = dg_eg_small[z0], e1 = dg_eg_small[z1], e2 = dg_eg_small[z2];
        unsigned at1 = lead_len + (e0 >> 24), at2 = at1 + (e1 >> 24), total = at2 + (e2 >> 24);
        if (__builtin_expect(total <= 56, 1)) {   /* 45 bits of codes: the lead is what can overflow */
            uint64_t m = 0xFFFFFF;
            dg_bitw_put_clean(b, lead | (e0 & m) << lead_len | (e1 & m) << at1 | (e2 & m) << at2, total);
            return;
        }
    }
    write_seg3_long(b, lead, lead_len, r0, r1, r2);
}

/* Pads the last byte with zero bits and commits the bytes to the buffer. */
static inline void dg_bitw_flush(dg_bitw *w)
{
    if (w->n > 0)
        *w->p++ = (uint8_t)w->acc;   /* bits above n are zero: the padding */
    w->acc = 0;
    w->n = 0;
    w->out->len = (size_t)(w->p - w->out->p);
}

/* ---- reader ---- */
typedef struct dg_bitr {
    const uint8_t *p, *end;  /* next unread byte, end of block */
    uint64_t acc;            /* buffered bits, LSB = next bit */
    unsigned n;              /* buffered bit count */
    bool ok;
} dg_bitr;

static inline void dg_bitr_init(dg_bitr *r, const uint8_t *p, size_t len)
{
    r->p = p;
    r->end = p + len;
    r->acc = 0;
    r->n = 0;
    r->ok = true;
}

/* Tops the buffer up to at least 57 bits when the bytes exist. */
static inline void dg_bitr_refill(dg_bitr *r)
{
    if (r->end - r->p >= 8) {
        uint64_t w = dg_le64(r->p);
        unsigned take = (63 - r->n) >> 3;
        r->acc |= w << r->n;
        r->p += take;
        r->n += take * 8;
        /* Only `take` bytes were consumed: clear the bits that came from the bytes after them. */
        r->acc &= ((uint64_t)1 << r->n) - 1;
        return;
    }
    while (r->n <= 56 && r->p < r->end) {
        r->acc |= (uint64_t)*r->p++ << r->n;
        r->n += 8;
    }
}

/* Reads k bits (k <= 32). */
static inline uint64_t dg_bitr_get(dg_bitr *r, unsigned k)
{
    if (r->n < k) {
        dg_bitr_refill(r);
        if (r->n < k) {
            r->ok = false;
            r->n = 0;
            r->acc = 0;
            return 0;
        }
    }
    uint64_t v = r->acc & (((uint64_t)1 << k) - 1);
    r->acc >>= k;
    r->n -= k;
    return v;
}

/* Slow path: long codes, or the end of the block is near. */
static inline uint64_t dg_bitr_eg_slow(dg_bitr *r)
{
    /* a long code's run of zeros may reach past what the fast path keeps buffered (>= 32 bits):
     * top the buffer up before looking for its one (found by the round-trip fuzzer) */
    dg_bitr_refill(r);
    unsigned zeros;
    if (r->acc != 0) {
        zeros = (unsigned)__builtin_ctzll(r->acc);
        if (zeros >= r->n) {   /* the 1 we saw is not a real buffered bit */
            r->ok = false;
            return 0;
        }
    } else {
        r->ok = false;
        return 0;
    }
    if (zeros > DG_EG_MAX_ZEROS) {
        r->ok = false;
        return 0;
    }
    r->acc >>= zeros + 1;
    r->n -= zeros + 1;
    if (zeros == 0)
        return 0;
    uint64_t low;
    if (zeros > 32) {
        low = dg_bitr_get(r, 32);
        low |= dg_bitr_get(r, zeros - 32) << 32;
    } else {
        low = dg_bitr_get(r, zeros);
    }
    return (((uint64_t)1 << zeros) | low) - 1;
}

/* The value of the EG code at the bottom of `bits` whose run of zeros is `zeros` long (< 32):
 * (2^zeros | info) - 1 with info < 2^zeros, i.e. info + (2^zeros - 1), one mask for both. */
static inline uint64_t dg_eg_value(uint64_t bits, unsigned zeros)
{
    uint64_t mask = ((uint64_t)1 << zeros) - 1;
    return ((bits >> (zeros + 1)) & mask) + mask;
}

/* The common case without data-dependent branches: residuals are mostly 0 and +-1, and a branch
 * on the code length would mispredict half the time. */
static inline uint64_t dg_bitr_eg(dg_bitr *r)
{
    if (r->n < 32)   /* refill rarely: most codes are 1-3 bits */
        dg_bitr_refill(r);
    unsigned zeros = (unsigned)__builtin_ctzll(r->acc | ((uint64_t)1 << 63));
    unsigned len = 2 * zeros + 1;
    if (__builtin_expect(zeros <= 15 && len <= r->n, 1)) {
        uint64_t v = dg_eg_value(r->acc, zeros);
        r->acc >>= len;
        r->n -= len;
        return v;
    }
    return dg_bitr_eg_slow(r);
}

static inline int64_t dg_bitr_seg(dg_bitr *r) { return dg_unzigzag(dg_bitr_eg(r)); }

/* Three consecutive SEG codes at once when they fit in the next DG_SEG3_BITS bits (the common
 * case: residuals of a quantum or two). One table lookup replaces three dependent decodes. */
#define DG_SEG3_BITS 12
typedef struct dg_seg3_entry {
    uint8_t bits;   /* 0 = the three codes do not fit: decode one by one */
    int8_t v[3];
} dg_seg3_entry;

extern const dg_seg3_entry *dg_flrep__seg3_table(void);

/* The rare case: some code of the triple is longer. By value in and out, so that the caller's
 * reader never has its address taken and stays in registers. */
static __attribute__((noinline, unused)) dg_bitr dg_bitr_seg3_slow(dg_bitr r, int64_t out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = dg_bitr_seg(&r);
    return r;
}

static inline __attribute__((always_inline)) void dg_bitr_seg3(dg_bitr *r, const dg_seg3_entry *table,
                                                               int64_t out[3])
{
    if (r->n < 32)
        dg_bitr_refill(r);
    const dg_seg3_entry *e = &table[r->acc & ((1u << DG_SEG3_BITS) - 1)];
    if (__builtin_expect(e->bits != 0 && e->bits <= r->n, 1)) {
        out[0] = e->v[0];
        out[1] = e->v[1];
        out[2] = e->v[2];
        r->acc >>= e->bits;
        r->n -= e->bits;
        return;
    }
    *r = dg_bitr_seg3_slow(*r, out);
}

/* The reader's position as a bit offset from base, the start of its block: its buffered bits are
 * the last n of the bytes before p. */
static inline uint64_t dg_bitr_tell(const dg_bitr *r, const uint8_t *base)
{
    return (uint64_t)(r->p - base) * 8 - r->n;
}

/* Puts the reader at bit `bit` from base (a bit inside the block): the whole bytes from there on
 * unread, the rest of a partial byte buffered, the bits above n clear. */
static inline void dg_bitr_seek(dg_bitr *r, const uint8_t *base, uint64_t bit)
{
    r->p = base + bit / 8;
    unsigned part = (unsigned)(bit % 8);
    r->acc = part ? (uint64_t)(*r->p++ >> part) : 0;
    r->n = part ? 8 - part : 0;
}

/* True when everything was consumed except zero padding bits in the last byte. */
static inline bool dg_bitr_at_clean_end(dg_bitr *r)
{
    if (!r->ok)
        return false;
    if (r->p != r->end)
        return false;      /* whole unread bytes */
    if (r->n >= 8)
        return false;
    return r->acc == 0;    /* padding bits must be zero */
}

#endif
