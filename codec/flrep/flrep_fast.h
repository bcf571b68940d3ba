/* codec/flrep/flrep_fast.h — the tick decoder's fast path: the common DELTA records, decoded and
 * applied with every piece of state in locals (FORMAT-flrep.md §6.3-6.4). Private to codec/flrep.
 * Included by flrep_tick.c (the portable build: SSE2 where the target has it) and, on x86-64, by
 * flrep_tick_avx2.c, compiled with -mavx2, which the decoder picks at run time on a CPU that has it:
 * the same C, with the three axes of position and velocity in one vector. Every function here is
 * static, so each including file gets its own copy for its own instruction set. */
#ifndef DETGATE_FLREP_FAST_H
#define DETGATE_FLREP_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cpu_avx2.h"
#include "flrep_bits.h"
#include "flrep_internal.h"

#if defined(__AVX2__) && !defined(DG_FLREP_SCALAR)
#define FLREP_FAST_AVX2 1
#include <immintrin.h>
#elif defined(__SSE2__) && !defined(DG_FLREP_SCALAR)   /* the test builds the scalar path too */
#define FLREP_FAST_SSE2 1
#include <emmintrin.h>
#endif

/* Where decode_and_merge stands: the reader, the next previous-world entity, the next output slot,
 * the previous id of the tick. */
typedef struct merge_pos {
    dg_bitr b;
    size_t wi, out;
    uint64_t prev;
    uint32_t i;      /* records done */
} merge_pos;

/* The fast path's bit reader: the reader's state in locals, refilled once per record without a
 * branch on the fill level. Unlike dg_bitr it does not clear the bits above n after a refill: they
 * are the stream's next bits, the very ones the next refill ORs in again, so nothing changes; they
 * are cleared when fast_run hands the state back to the dg_bitr. */
typedef struct fast_bits {
    const uint8_t *p, *end;
    uint64_t acc;
    unsigned n;
} fast_bits;

static inline fast_bits fast_bits_of(const dg_bitr *b) { return (fast_bits){b->p, b->end, b->acc, b->n}; }

/* Tops up to >= 56 buffered bits; the caller has checked that 8 bytes remain at p. */
static inline __attribute__((always_inline)) void fast_refill(fast_bits *f)
{
    f->acc |= dg_le64(f->p) << f->n;
    f->p += (63 - f->n) >> 3;
    f->n |= 56;
}

/* The Exp-Golomb code at the bottom of bits, when it is at most 31 bits long (at most 15 zeros): its
 * value and length. The fast paths' one code reader: residuals, id gaps (fast_gap_head, and
 * full_gap_head in flrep_tick.c). */
static inline __attribute__((always_inline)) bool fast_eg_code(uint64_t bits, uint64_t *value, unsigned *len)
{
    unsigned zeros = (unsigned)__builtin_ctzll(bits | ((uint64_t)1 << 63));
    if (zeros > 15)
        return false;
    *value = dg_eg_value(bits, zeros);
    *len = 2 * zeros + 1;
    return true;
}

/* One SEG code of at most 31 bits (|v| < 2^15) from the bottom of *a. Whether it lay within the
 * buffered bits is checked once per record: past the stream's bits *a holds zeros (a run of zeros
 * too long to take here) or stream bits beyond n (caught by that check). */
static inline __attribute__((always_inline)) bool fast_seg1(uint64_t *a, unsigned *used, int64_t *v)
{
    uint64_t z;
    unsigned len;
    if (!fast_eg_code(*a, &z, &len))
        return false;
    *v = dg_unzigzag(z);
    *a >>= len;
    *used += len;
    return true;
}

/* A SEG triple as the fast path adds it. Velocity and position: three i64 lanes (AVX2; lane 3 is
 * zero) or three i64s. Rotation: three i32 lanes with a zero fourth (SSE2 and up) or three i32s.
 * From a table entry, loaded as one 32-bit word (the length in its low byte, then the three i8
 * values): the load's address is then the only one the lookup computes, and the word's low bits
 * are the shift count as they stand. */
_Static_assert(sizeof(dg_seg3_entry) == 4 && offsetof(dg_seg3_entry, bits) == 0 && offsetof(dg_seg3_entry, v) == 1,
               "the length, then three i8 values");
static inline __attribute__((always_inline)) uint32_t entry_word(const dg_seg3_entry *e)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return e->bits | (uint32_t)(uint8_t)e->v[0] << 8 | (uint32_t)(uint8_t)e->v[1] << 16 |
           (uint32_t)(uint8_t)e->v[2] << 24;
#else
    uint32_t w;
    memcpy(&w, e, sizeof w);
    return w;
#endif
}
#if FLREP_FAST_AVX2
typedef __m256i fast_triple;
static inline __attribute__((always_inline)) fast_triple triple_of_word(uint32_t w)
{
    return _mm256_cvtepi8_epi64(_mm_cvtsi32_si128((int32_t)(w >> 8)));
}
static inline __attribute__((always_inline)) fast_triple triple_of_values(const int64_t v[3])
{
    return _mm256_setr_epi64x(v[0], v[1], v[2], 0);
}
#else
typedef struct fast_triple {
    int64_t v[3];
} fast_triple;
static inline __attribute__((always_inline)) fast_triple triple_of_word(uint32_t w)
{
    return (fast_triple){{(int8_t)(w >> 8), (int8_t)(w >> 16), (int8_t)(w >> 24)}};
}
static inline __attribute__((always_inline)) fast_triple triple_of_values(const int64_t v[3])
{
    return (fast_triple){{v[0], v[1], v[2]}};
}
#endif

#if FLREP_FAST_AVX2 || FLREP_FAST_SSE2
typedef __m128i fast_rot_triple;
static inline __attribute__((always_inline)) fast_rot_triple rot_triple_of_word(uint32_t w)
{
    __m128i x = _mm_cvtsi32_si128((int32_t)(w >> 8));   /* the three values and a zero byte */
#if FLREP_FAST_AVX2
    return _mm_cvtepi8_epi32(x);
#else
    x = _mm_unpacklo_epi8(x, x);
    return _mm_srai_epi32(_mm_unpacklo_epi16(x, x), 24);   /* each byte sign-extended to its lane */
#endif
}
static inline __attribute__((always_inline)) fast_rot_triple rot_triple_of_values(const int64_t v[3])
{
    return _mm_setr_epi32((int32_t)v[0], (int32_t)v[1], (int32_t)v[2], 0);   /* |v| < 2^15 */
}
#else
typedef struct fast_rot_triple {
    int32_t v[3];
} fast_rot_triple;
static inline __attribute__((always_inline)) fast_rot_triple rot_triple_of_word(uint32_t w)
{
    return (fast_rot_triple){{(int8_t)(w >> 8), (int8_t)(w >> 16), (int8_t)(w >> 24)}};
}
static inline __attribute__((always_inline)) fast_rot_triple rot_triple_of_values(const int64_t v[3])
{
    return (fast_rot_triple){{(int32_t)v[0], (int32_t)v[1], (int32_t)v[2]}};   /* |v| < 2^15 */
}
#endif

/* Three SEG codes: from the table when they fit in DG_SEG3_BITS (*word is then the entry), else one
 * by one (*word 0). */
static inline __attribute__((always_inline)) bool fast_codes3(uint64_t *a, unsigned *used, const dg_seg3_entry *t3,
                                                              uint32_t *word, int64_t v[3])
{
    uint32_t w = entry_word(&t3[*a & ((1u << DG_SEG3_BITS) - 1)]);
    if (__builtin_expect((w & 0xFF) != 0, 1)) {
        *word = w;
        *a >>= w & 63;   /* the length (<= 12): as x86's shifts take their count, no instruction to mask it */
        *used += w & 0xFF;
        return true;
    }
    *word = 0;
    return fast_seg1(a, used, &v[0]) && fast_seg1(a, used, &v[1]) && fast_seg1(a, used, &v[2]);
}

static inline __attribute__((always_inline)) bool fast_seg3(uint64_t *a, unsigned *used, const dg_seg3_entry *t3,
                                                            fast_triple *out)
{
    uint32_t w;
    int64_t v[3] = {0, 0, 0};
    if (!fast_codes3(a, used, t3, &w, v))
        return false;
    *out = w ? triple_of_word(w) : triple_of_values(v);
    return true;
}

static inline __attribute__((always_inline)) bool fast_seg3_rot(uint64_t *a, unsigned *used,
                                                                const dg_seg3_entry *t3, fast_rot_triple *out)
{
    uint32_t w;
    int64_t v[3] = {0, 0, 0};
    if (!fast_codes3(a, used, t3, &w, v))
        return false;
    *out = w ? rot_triple_of_word(w) : rot_triple_of_values(v);
    return true;
}

/* The record prefixes the fast path takes (FORMAT-flrep.md §6.3, LSB first): the next id (gap code "1"),
 * DELTA ("00"), then motion, rotFull, attrs. Motion without rotFull or attrs is the moving entity's
 * record; no flags at all is the still one's (every residual zero). */
#define FLREP_PREFIX_MOVING 0x09u
#define FLREP_PREFIX_STILL 0x01u
#define FLREP_PREFIX_BITS 6u

/* The same two shapes after an id gap other than 0 (ids an engine hands out sparsely, or entities
 * removed before): the gap's Exp-Golomb code (at most 31 bits here), then kind 0 and the flags —
 * 0,0,1,0,0 moving, five zeros still. False for anything else. */
static inline __attribute__((always_inline)) bool fast_gap_head(uint64_t acc, uint64_t *gap, unsigned *head,
                                                                unsigned *shape)
{
    unsigned len;
    if ((acc & 1) || !fast_eg_code(acc, gap, &len))   /* a code "1" is gap 0: the dense prefixes' */
        return false;
    unsigned rest = (unsigned)(acc >> len) & 31;
    if (rest != 4 && rest != 0)
        return false;
    *head = len + 5;
    *shape = rest == 4 ? FLREP_PREFIX_MOVING : FLREP_PREFIX_STILL;
    return true;
}

/* flrep_tick_ctx's rdiv constants, copied into fast_run's frame (loaded through ctx they would be
 * reloaded after every store to the output world, which the compiler cannot prove apart); in the
 * AVX2 build already broadcast to the lanes, the multiplier split in halves for mulhi_u64. The
 * encoder's vector loop (flrep_encode.h) uses the same. */
#if FLREP_FAST_AVX2
typedef struct fast_rate {
    __m256i bias, even, magic_lo, magic_hi, pass, k;
} fast_rate;
static inline __attribute__((always_inline)) fast_rate fast_rate_of(const flrep_tick_ctx *ctx)
{
    return (fast_rate){_mm256_set1_epi64x((int64_t)ctx->rate_bias), _mm256_set1_epi64x((int64_t)ctx->rate_even),
                       _mm256_set1_epi64x((int64_t)(ctx->rate_magic & 0xFFFFFFFFu)),
                       _mm256_set1_epi64x((int64_t)(ctx->rate_magic >> 32)),
                       _mm256_set1_epi64x((int64_t)ctx->rate_pass), _mm256_set1_epi64x((int64_t)ctx->rate_k)};
}
#else
typedef struct fast_rate {
    uint64_t bias, even, magic, k;
} fast_rate;
static inline __attribute__((always_inline)) fast_rate fast_rate_of(const flrep_tick_ctx *ctx)
{
    return (fast_rate){ctx->rate_bias, ctx->rate_even, ctx->rate_magic, ctx->rate_k};
}
#endif


/* The rebuilt state of one common record: apply_delta's arithmetic (FORMAT-flrep.md §6.4) on values
 * in registers. Each part says when its result leaves the quantized domain (the general path then
 * names the error) — as a bool, or in the vector builds as lanes not zero, so that fast_apply tests
 * both parts at once; *o and *op are then garbage the caller overwrites. unit_rate (1 Hz, where
 * rdiv divides by one) is a constant in each copy of the loop. */
#if FLREP_FAST_AVX2
/* The high 64 bits of n x m in each lane, from four 32 x 32 multiplies: exact for n < 2^47, where
 * the middle sum stays below 2^64 (rdiv's numerator of a velocity in the i32 range; a larger one
 * gives a wrong quotient the range check then refuses anyway). */
static inline __attribute__((always_inline)) __m256i mulhi_u64(__m256i n, __m256i m_lo, __m256i m_hi)
{
    __m256i n_hi = _mm256_srli_epi64(n, 32);
    __m256i lo_lo = _mm256_mul_epu32(n, m_lo);
    __m256i mid = _mm256_add_epi64(_mm256_add_epi64(_mm256_mul_epu32(n_hi, m_lo), _mm256_mul_epu32(n, m_hi)),
                                   _mm256_srli_epi64(lo_lo, 32));
    return _mm256_add_epi64(_mm256_mul_epu32(n_hi, m_hi), _mm256_srli_epi64(mid, 32));
}

/* What a copy of a loop knows of its rate: 1 Hz (the numerator is the quotient), another rate (the
 * multiply-high), or not until run time (the multiply-high, 0 at 1 Hz, plus rate_pass's numerator). */
typedef enum rdiv_rate { RDIV_MULHI, RDIV_UNIT, RDIV_ANY } rdiv_rate;

/* flrep_rdiv (FORMAT-flrep.md §6.4) in four i64 lanes: the decoder's fast path and the encoder's
 * vector loop. Exact for numerators below 2^47 (mulhi_u64): a = 2 x a velocity in the i32 range. */
static inline __attribute__((always_inline)) __m256i rdiv_lanes(__m256i a, const fast_rate *rt, rdiv_rate rate)
{
    __m256i neg = _mm256_cmpgt_epi64(_mm256_setzero_si256(), a);
    __m256i n = _mm256_add_epi64(_mm256_add_epi64(a, rt->bias), _mm256_and_si256(neg, rt->even));
    __m256i q = rate == RDIV_UNIT ? n : mulhi_u64(n, rt->magic_lo, rt->magic_hi);
    if (rate == RDIV_ANY)
        q = _mm256_add_epi64(q, _mm256_and_si256(n, rt->pass));
    return _mm256_sub_epi64(q, rt->k);
}

/* The three axes in four i64 lanes. The loads and stores are 16 or 32 bytes where the fields are
 * 12 or 24: the extra lane reads the next field of the same struct and writes junk over it, which
 * the stores that follow (velocity after position, then fast_rotation's rotation and its context)
 * put right. */
_Static_assert(offsetof(dg_qentity, vel) == offsetof(dg_qentity, pos) + 12 &&
                   offsetof(dg_qentity, rot) == offsetof(dg_qentity, vel) + 12 &&
                   offsetof(flrep_pred, drot) == offsetof(flrep_pred, dv) + 24,
               "pos, vel, rot and dv, drot follow each other");
static inline __attribute__((always_inline)) __m256i fast_motion(const dg_qentity *restrict pe,
                                                                 const flrep_pred *restrict pp, fast_triple vres,
                                                                 fast_triple pres, const fast_rate *rt, bool unit_rate,
                                                                 dg_qentity *restrict o, flrep_pred *restrict op)
{
    __m256i vel = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(const void *)pe->vel));
    __m256i pos = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(const void *)pe->pos));
    __m256i dv = _mm256_loadu_si256((const __m256i *)(const void *)pp->dv);
    __m256i v = _mm256_add_epi64(_mm256_add_epi64(vel, dv), vres);
    __m256i q = rdiv_lanes(_mm256_add_epi64(v, v), rt, unit_rate ? RDIV_UNIT : RDIV_MULHI);
    __m256i p = _mm256_add_epi64(_mm256_add_epi64(pos, q), pres);
    const __m256i half = _mm256_set1_epi64x(INT64_C(0x80000000));
    __m256i range = _mm256_or_si256(_mm256_add_epi64(v, half), _mm256_add_epi64(p, half));
    const __m256i high012 = _mm256_setr_epi64x(INT64_C(-4294967296), INT64_C(-4294967296), INT64_C(-4294967296), 0);
    const __m256i low32 = _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0);
    _mm_storeu_si128((__m128i *)(void *)o->pos, _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(p, low32)));
    _mm_storeu_si128((__m128i *)(void *)o->vel, _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(v, low32)));
    _mm256_storeu_si256((__m256i *)(void *)op->dv, _mm256_sub_epi64(v, vel));
    return _mm256_and_si256(range, high012);   /* zero when every value + 2^31 is below 2^32: within i32 */
}
#else
static inline __attribute__((always_inline)) bool fast_motion(const dg_qentity *restrict pe,
                                                              const flrep_pred *restrict pp, fast_triple vres,
                                                              fast_triple pres, const fast_rate *rt, bool unit_rate,
                                                              dg_qentity *restrict o, flrep_pred *restrict op)
{
    uint64_t range = 0;   /* each value + 2^31, ORed: bit 32 or above set = some value left the i32 range */
    for (int k = 0; k < 3; k++) {
        int64_t v = (int64_t)pe->vel[k] + pp->dv[k] + vres.v[k];
        int64_t a = 2 * v;
        uint64_t n = (uint64_t)a + rt->bias + ((uint64_t)(a >> 63) & rt->even);
        uint64_t q = unit_rate ? n : (uint64_t)(((flrep_u128)n * rt->magic) >> 64);   /* flrep_rdiv */
        int64_t p = (int64_t)pe->pos[k] + (int64_t)(q - rt->k) + pres.v[k];
        range |= ((uint64_t)v + UINT64_C(0x80000000)) | ((uint64_t)p + UINT64_C(0x80000000));
        o->vel[k] = (int32_t)v;
        o->pos[k] = (int32_t)p;
        op->dv[k] = v - pe->vel[k];
    }
    return (range >> 32) == 0;
}
#endif

/* The rotation: rot' = rot + drot + rres, each component within +-32767, the three a unit
 * quaternion's smaller ones. Also carries rotLargest (and the zero pad) over. */
#if FLREP_FAST_AVX2 || FLREP_FAST_SSE2
/* Four 32-bit lanes: the three components and, in lane 3, the rotLargest/pad halfword that follows
 * them in dg_qentity, which passes through unchanged (drot and rres are 0 there) so that one 8-byte
 * store writes rot, rotLargest and pad. Lanes not zero in the result: out of range. */
_Static_assert(offsetof(dg_qentity, rot_largest) == offsetof(dg_qentity, rot) + 6 &&
                   offsetof(dg_qentity, pad_) == offsetof(dg_qentity, rot) + 7,
               "rot, rot_largest, pad_ are one 8-byte group");
static inline __attribute__((always_inline)) __m128i fast_rotation(const dg_qentity *restrict pe,
                                                                   const flrep_pred *restrict pp, fast_rot_triple res,
                                                                   dg_qentity *restrict o, flrep_pred *restrict op)
{
    const __m128i lanes012 = _mm_setr_epi32(-1, -1, -1, 0);
    __m128i prev16 = _mm_loadl_epi64((const __m128i *)(const void *)pe->rot);
    __m128i prev = _mm_srai_epi32(_mm_unpacklo_epi16(prev16, prev16), 16);
    __m128i drot = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)pp->drot), lanes012);
    __m128i c = _mm_add_epi32(_mm_add_epi32(prev, drot), res);   /* |each| < 2^17 */
    __m128i c16 = _mm_packs_epi32(c, c);   /* exact for the in-range lanes; lane 3 is rotLargest/pad */
    _mm_storel_epi64((__m128i *)(void *)o->rot, c16);
    _mm_storeu_si128((__m128i *)(void *)op->drot, _mm_sub_epi32(c, prev));   /* lane 3: 0 */
#if FLREP_FAST_AVX2
    __m128i out = _mm_cmpgt_epi32(_mm_abs_epi32(c), _mm_set1_epi32(DG_QROT_SCALE));
#else
    __m128i out = _mm_or_si128(_mm_cmpgt_epi32(c, _mm_set1_epi32(DG_QROT_SCALE)),
                               _mm_cmpgt_epi32(_mm_set1_epi32(-DG_QROT_SCALE), c));
#endif
    /* the norm c0^2 + c1^2 + c2^2 in lane 0 (lane 1 c2^2, lanes 2-3 zero): below 3 x 2^30 with the
     * components saturated to 16 bits, compared unsigned through the sign flip */
    __m128i r16 = _mm_and_si128(c16, _mm_setr_epi16(-1, -1, -1, 0, 0, 0, 0, 0));
    __m128i sq = _mm_madd_epi16(r16, r16);
    __m128i norm = _mm_add_epi32(sq, _mm_srli_si128(sq, 4));
    const int32_t flip = INT32_MIN;
    __m128i too_long = _mm_cmpgt_epi32(_mm_xor_si128(norm, _mm_set1_epi32(flip)),
                                       _mm_set1_epi32((int32_t)(2u * DG_QROT_SCALE * DG_QROT_SCALE ^ 0x80000000u)));
    return _mm_and_si128(_mm_or_si128(out, too_long), lanes012);
}
#else
static inline __attribute__((always_inline)) bool fast_rotation(const dg_qentity *restrict pe,
                                                                const flrep_pred *restrict pp, fast_rot_triple res,
                                                                dg_qentity *restrict o, flrep_pred *restrict op)
{
    bool out = false;
    uint32_t norm = 0;   /* the squares of three components within +-32767 sum below 2^32 */
    for (int k = 0; k < 3; k++) {
        int32_t c = pe->rot[k] + pp->drot[k] + res.v[k];   /* |each| < 2^17: no overflow */
        out |= (uint32_t)(c + DG_QROT_SCALE) > 2u * DG_QROT_SCALE;
        norm += (uint32_t)c * (uint32_t)c;   /* wraps only when c is out of range */
        o->rot[k] = (int16_t)c;
        op->drot[k] = c - pe->rot[k];
    }
    op->drot[3] = 0;
    o->rot_largest = pe->rot_largest;
    o->pad_ = 0;
    return !out && norm <= 2u * (uint32_t)DG_QROT_SCALE * DG_QROT_SCALE;
}
#endif

/* Motion first: its wide stores run past the position and velocity, and the rotation's put that right. */
static inline __attribute__((always_inline)) bool fast_apply(const dg_qentity *restrict pe,
                                                             const flrep_pred *restrict pp, fast_triple vres,
                                                             fast_triple pres, fast_rot_triple rres,
                                                             const fast_rate *rt, bool unit_rate,
                                                             dg_qentity *restrict o, flrep_pred *restrict op)
{
#if FLREP_FAST_AVX2
    __m256i motion_bad = fast_motion(pe, pp, vres, pres, rt, unit_rate, o, op);
    __m256i bad = _mm256_or_si256(motion_bad, _mm256_zextsi128_si256(fast_rotation(pe, pp, rres, o, op)));
    bool ok = _mm256_testz_si256(bad, bad);
#elif FLREP_FAST_SSE2
    bool motion_ok = fast_motion(pe, pp, vres, pres, rt, unit_rate, o, op);
    bool ok = motion_ok & (_mm_movemask_epi8(fast_rotation(pe, pp, rres, o, op)) == 0);
#else
    bool motion_ok = fast_motion(pe, pp, vres, pres, rt, unit_rate, o, op);
    bool ok = motion_ok & fast_rotation(pe, pp, rres, o, op);
#endif
    memcpy(o, pe, offsetof(dg_qentity, pos));   /* id, type, faction */
    o->health = pe->health;
    o->flags = pe->flags;
    return ok;
}

/* A common record longer than the refill's 56 counted bits (residuals of a few quanta on every axis):
 * the velocity and position triples from the refill's 64 bits, the rotation's from a second 8-byte
 * load at its bit offset, then the same apply. Out of line, so that the loop's common path is not
 * longer for it; f by value (its address taken, the loop's bit reader would live in memory). On
 * success *end_bit is the record's end, in bits from f.p; false leaves nothing changed that the
 * general path reads (the record is then its). */
static __attribute__((noinline, unused)) bool fast_long_record(fast_bits f, unsigned head, const dg_seg3_entry *t3,
                                                               const dg_qentity *pe, const flrep_pred *pp,
                                                               const fast_rate *rt, bool unit_rate, dg_qentity *o,
                                                               flrep_pred *op, uint64_t *end_bit)
{
    uint64_t a = f.acc >> head;   /* after fast_refill: 64 real stream bits, n of them counted */
    unsigned used = head;
    fast_triple vres, pres;
    if (!fast_seg3(&a, &used, t3, &vres) || !fast_seg3(&a, &used, t3, &pres) || used > 64)
        return false;
    ptrdiff_t rel = (ptrdiff_t)used - (ptrdiff_t)f.n;   /* the rotation triple's bit, from p */
    ptrdiff_t byte = rel >= 0 ? rel / 8 : -((-rel + 7) / 8);
    unsigned shift = (unsigned)(rel - byte * 8);
    const uint8_t *q = f.p + byte;   /* >= the bytes the refill loaded */
    if (f.end - q < 8)
        return false;
    uint64_t a2 = dg_le64(q) >> shift;
    unsigned used2 = 0;
    fast_rot_triple rres;
    if (!fast_seg3_rot(&a2, &used2, t3, &rres) || used2 > 64 - shift)
        return false;
    if (!fast_apply(pe, pp, vres, pres, rres, rt, unit_rate, o, op))
        return false;
    ptrdiff_t end_rel = rel + (ptrdiff_t)used2;   /* the record's end, in bits from p */
    if (end_rel <= 0)
        return false;   /* it fits the counted bits: not a long record (a gap record, say) */
    *end_bit = (uint64_t)end_rel;   /* inside the second load's 8 bytes */
    return true;
}

/* The hot path of a delta tick: the run of common records (FLREP_PREFIX_MOVING with its three SEG
 * triples, or FLREP_PREFIX_STILL) decoded and applied with every piece of state in locals. It stops
 * at the first record it does not take — another shape, a long code, the end of the block near, an
 * absent entity, a state out of range — leaving *m at that record, which the general path then
 * decodes (and, if bad, reports): the two paths accept exactly the same records with the same
 * result. unit_rate (1 Hz, where rdiv divides by one) and sparse (records after an id gap other
 * than 0 taken too) are constants in each copy: the dense copy runs first, and where it stops at a
 * gap the sparse one, a few instructions a record dearer, goes on. */
static inline __attribute__((always_inline)) void fast_run_body(merge_pos *m, uint32_t nrec,
                                                                const dg_seg3_entry *restrict t3,
                                                                const flrep_tick_ctx *ctx, const flrep_world *world,
                                                                flrep_world *nx, bool unit_rate, bool sparse)
{
    /* one record per entity at most: a run ends at the records' end or the world's, whichever is first */
    size_t budget = nrec - m->i;
    if (budget > world->n - m->wi)
        budget = world->n - m->wi;
    if (budget == 0)
        return;   /* and an empty world's arrays may be NULL: no pointer arithmetic on them */
    const fast_rate rt = fast_rate_of(ctx);
    const dg_qentity *restrict pe = world->ents + m->wi;
    const dg_qentity *const pe_first = pe;
    const flrep_pred *restrict pp = world->pred + m->wi;
    dg_qentity *restrict o = nx->ents + m->out;
    flrep_pred *restrict op = nx->pred + m->out;
    const dg_qentity *const pe_stop = pe + budget;
    fast_bits f = fast_bits_of(&m->b);
    uint64_t prev = m->prev;
    bool stopped = false;
    while (!stopped && pe != pe_stop && f.end - f.p >= 8) {
        /* A stretch of records whose refills all find 8 bytes, checked once for the stretch: a
         * refill moves p by at most 7 bytes. */
        size_t safe = (size_t)(f.end - f.p - 8) / 7 + 1;
        const dg_qentity *const stretch_stop = (size_t)(pe_stop - pe) > safe ? pe + safe : pe_stop;
        for (; pe != stretch_stop; pe++, pp++, o++, op++) {
            fast_refill(&f);
            static const int64_t zero[3] = {0, 0, 0};
            fast_triple vres = triple_of_values(zero), pres = vres;
            fast_rot_triple rres = rot_triple_of_values(zero);
            uint64_t gap = 0;
            unsigned used = FLREP_PREFIX_BITS;
            unsigned prefix = (unsigned)(f.acc & ((1u << FLREP_PREFIX_BITS) - 1));
            if (sparse && prefix != FLREP_PREFIX_MOVING && prefix != FLREP_PREFIX_STILL &&
                !fast_gap_head(f.acc, &gap, &used, &prefix))
                break;
            uint64_t a = f.acc >> used;
            if (prefix == FLREP_PREFIX_MOVING) {
                if (!fast_seg3(&a, &used, t3, &vres) || !fast_seg3(&a, &used, t3, &pres) ||
                    !fast_seg3_rot(&a, &used, t3, &rres) || used > f.n)
                    break;
            } else if (prefix != FLREP_PREFIX_STILL) {
                break;
            }
            /* Every world entity below the record's id was dealt with by the records before: it is
             * the one at pe, or pe's is an entity without a record, or it is absent — the last two
             * the general path's. An id past 2^32 - 1 matches no entity. */
            if (pe->id != prev + 1 + gap || !fast_apply(pe, pp, vres, pres, rres, &rt, unit_rate, o, op))
                break;
            f.acc = a;
            f.n -= used;
            prev += 1 + gap;
        }
        stopped = pe != stretch_stop;
    }
    m->b.p = f.p;
    /* dg_bitr keeps the bits above n clear; its byte-wise refill near the block's end (which this
     * loop never reaches) may leave all 64 buffered */
    m->b.acc = f.n < 64 ? f.acc & (((uint64_t)1 << f.n) - 1) : f.acc;
    m->b.n = f.n;
    m->prev = prev;
    m->i += (uint32_t)(pe - pe_first);
    m->wi += (size_t)(pe - pe_first);
    m->out += (size_t)(pe - pe_first);
}

/* One moving record where a run stopped, if it is a long one (fast_long_record): true, with *m past
 * it, when taken. Out of the loop: a call inside it would make the compiler keep the loop's vector
 * constants in memory (no vector register survives a call). */
static __attribute__((noinline, unused)) bool fast_long_step(merge_pos *m, uint32_t nrec, const dg_seg3_entry *t3,
                                                             const flrep_tick_ctx *ctx, const flrep_world *world,
                                                             flrep_world *nx)
{
    if (m->i >= nrec || m->wi >= world->n)
        return false;
    fast_bits f = fast_bits_of(&m->b);
    if (f.end - f.p < 8)
        return false;
    fast_refill(&f);
    uint64_t gap = 0;
    unsigned head = FLREP_PREFIX_BITS;
    unsigned prefix = (unsigned)(f.acc & ((1u << FLREP_PREFIX_BITS) - 1));
    if (prefix != FLREP_PREFIX_MOVING && !fast_gap_head(f.acc, &gap, &head, &prefix))
        return false;
    const dg_qentity *pe = world->ents + m->wi;
    if (prefix != FLREP_PREFIX_MOVING || pe->id != m->prev + 1 + gap)
        return false;
    const fast_rate rt = fast_rate_of(ctx);
    uint64_t end_bit;
    if (!fast_long_record(f, head, t3, pe, world->pred + m->wi, &rt, ctx->tick_rate_hz == 1, nx->ents + m->out,
                          nx->pred + m->out, &end_bit))
        return false;
    dg_bitr_seek(&m->b, f.p, end_bit);
    m->prev += 1 + gap;
    m->i++;
    m->wi++;
    m->out++;
    return true;
}

/* The four copies of the loop a file's instruction set gets (each its own function, so that each
 * gets its own register allocation), and the choice between them. */
static __attribute__((noinline, unused)) void fast_run_dense(merge_pos *m, uint32_t nrec, const dg_seg3_entry *t3,
                                                             const flrep_tick_ctx *ctx, const flrep_world *world,
                                                             flrep_world *nx)
{
    fast_run_body(m, nrec, t3, ctx, world, nx, false, false);
}
static __attribute__((noinline, unused)) void fast_run_sparse(merge_pos *m, uint32_t nrec, const dg_seg3_entry *t3,
                                                              const flrep_tick_ctx *ctx, const flrep_world *world,
                                                              flrep_world *nx)
{
    fast_run_body(m, nrec, t3, ctx, world, nx, false, true);
}
static __attribute__((noinline, unused)) void fast_run_dense_1hz(merge_pos *m, uint32_t nrec,
                                                                 const dg_seg3_entry *t3, const flrep_tick_ctx *ctx,
                                                                 const flrep_world *world, flrep_world *nx)
{
    fast_run_body(m, nrec, t3, ctx, world, nx, true, false);
}
static __attribute__((noinline, unused)) void fast_run_sparse_1hz(merge_pos *m, uint32_t nrec,
                                                                  const dg_seg3_entry *t3, const flrep_tick_ctx *ctx,
                                                                  const flrep_world *world, flrep_world *nx)
{
    fast_run_body(m, nrec, t3, ctx, world, nx, true, true);
}
static inline void fast_run_pick(merge_pos *m, uint32_t nrec, const dg_seg3_entry *t3, const flrep_tick_ctx *ctx,
                                 const flrep_world *world, flrep_world *nx, bool sparse)
{
    do {
        if (ctx->tick_rate_hz != 1)
            (sparse ? fast_run_sparse : fast_run_dense)(m, nrec, t3, ctx, world, nx);
        else
            (sparse ? fast_run_sparse_1hz : fast_run_dense_1hz)(m, nrec, t3, ctx, world, nx);
    } while (fast_long_step(m, nrec, t3, ctx, world, nx));
}

/* The fast path's entry points: one copy per instruction set. DG_FLREP_AVX2 (set by CMake when it
 * builds flrep_tick_avx2.c) says the AVX2 one exists; flrep_cpu_has_avx2 whether this CPU runs it
 * (AVX2 and the BMI1/BMI2 that file is built with). */
void dg_flrep__fast_run_avx2(merge_pos *m, uint32_t nrec, const dg_seg3_entry *t3, const flrep_tick_ctx *ctx,
                         const flrep_world *world, flrep_world *nx, bool sparse);

static inline bool flrep_cpu_has_avx2(void)
{
#if DG_FLREP_AVX2
    return dg_cpu__runs_avx2_builds();
#else
    return false;
#endif
}

#endif
