/* codec/quant_batch.h — the quantizer's arithmetic, one entity and many at a time (private to
 * codec/). Static code included twice: by quant.c (the portable build: SSE2 on every x86-64, plain C
 * elsewhere) and by quant_avx2.c, which CMake compiles with -mavx2 -mbmi -mbmi2 and quant.c calls only
 * on a CPU that has them (the flrep codec's pattern, codec/flrep/flrep_fast.h). Only IEEE basic
 * operations and sqrt, in the same order in every path, so every path gives the same quanta. */
#ifndef DG_QUANT_BATCH_H
#define DG_QUANT_BATCH_H

#include "detgate/quant.h"

#include <float.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DG_SQRT2 1.41421356237309504880

/* Round half away from zero, exactly, for |x| < 2^31 - 0.5 (every caller's range is checked or
 * bounded first): the 32-bit truncation and the fraction are exact there (adding 0.5 first would
 * round 0.49999999999999994 up), and t +- 1 stays in range because the fraction is < 0.5 at the
 * ends. */
static inline int32_t round_i32(double x)
{
    int32_t t = (int32_t)x;
    double frac = x - (double)t;
    return t + (frac >= 0.5) - (frac <= -0.5);
}

/* v * scale rounded; *ok cleared when it is not finite or leaves the i32 range (a NaN or an
 * infinity fails both comparisons, so no separate finiteness test). */
static inline int32_t quant_axis(double v, double scale, bool *ok)
{
    double s = v * scale;
    bool in = s > -2147483647.5 && s < 2147483647.5;
    *ok = *ok && in;
    return round_i32(in ? s : 0.0);
}

/* The six position and velocity quanta, computed before anything is stored (quant_axes) and
 * stored once every other check passed (store_axes). With SSE2 (every x86-64) two axes at a
 * time: the same IEEE multiply, truncation, subtraction and comparisons lane by lane as
 * quant_axis, so the same quanta; one by one the axes were a third of the quantizer's time. */
#if defined(__SSE2__) && !defined(DG_QUANT_SCALAR)   /* the test builds the scalar path too */
#include <emmintrin.h>

typedef struct axes {
    __m128i q[3];   /* low 64 bits: pos0 pos1 | pos2 vel0 | vel1 vel2 */
} axes;

/* round_i32 on both lanes of s, |s| < 2^31 - 0.5 known; the results in the low two int32 lanes.
 * round_i32's adjustment (frac >= 0.5) - (frac <= -0.5) is the truncation of frac + frac: the sum is
 * exact and within (-2, 2), so it truncates to 1 exactly when frac >= 0.5, to -1 when frac <= -0.5,
 * else to 0 — one conversion, already in int32 lanes, for two comparisons and a shuffle. */
static inline __m128i round_pair_bounded(__m128d s)
{
    __m128i t = _mm_cvttpd_epi32(s);   /* truncation; both results in the low 64 bits */
    __m128d frac = _mm_sub_pd(s, _mm_cvtepi32_pd(t));
    return _mm_add_epi32(t, _mm_cvttpd_epi32(_mm_add_pd(frac, frac)));
}

/* round_i32 on both lanes; a lane out of range is cleared in *in_range and its result is garbage
 * nobody stores (the conversion of an out-of-range double is defined for the instruction: it
 * gives 0x80000000). |s| < 2^31 - 0.5 in one compare: the magnitude is exact, and a NaN fails. */
static inline __m128i round_pair(__m128d s, __m128d *in_range)
{
    __m128d mag = _mm_and_pd(s, _mm_castsi128_pd(_mm_set1_epi64x(INT64_MAX)));
    *in_range = _mm_and_pd(*in_range, _mm_cmplt_pd(mag, _mm_set1_pd(2147483647.5)));
    return round_pair_bounded(s);
}

static inline bool quant_axes(const dg_entity_in *in, axes *a)
{
    __m128d ok = _mm_castsi128_pd(_mm_set1_epi32(-1));
    a->q[0] = round_pair(_mm_mul_pd(_mm_loadu_pd(&in->pos[0]), _mm_set1_pd(DG_QPOS_PER_M)), &ok);
    a->q[1] = round_pair(_mm_mul_pd(_mm_set_pd(in->vel[0], in->pos[2]), _mm_set_pd(DG_QVEL_PER_MPS, DG_QPOS_PER_M)),
                         &ok);
    a->q[2] = round_pair(_mm_mul_pd(_mm_loadu_pd(&in->vel[1]), _mm_set1_pd(DG_QVEL_PER_MPS)), &ok);
    return _mm_movemask_pd(ok) == 3;
}

static inline void store_axes(const axes *a, dg_qentity *out)
{
    _mm_storel_epi64((__m128i *)(void *)&out->pos[0], a->q[0]);
    out->pos[2] = _mm_cvtsi128_si32(a->q[1]);
    out->vel[0] = _mm_cvtsi128_si32(_mm_shuffle_epi32(a->q[1], 1));
    _mm_storel_epi64((__m128i *)(void *)&out->vel[1], a->q[2]);
}
#else
typedef struct axes {
    int32_t pos[3], vel[3];
} axes;

static inline bool quant_axes(const dg_entity_in *in, axes *a)
{
    bool ok = true;
    for (int i = 0; i < 3; i++) {
        a->pos[i] = quant_axis(in->pos[i], DG_QPOS_PER_M, &ok);
        a->vel[i] = quant_axis(in->vel[i], DG_QVEL_PER_MPS, &ok);
    }
    return ok;
}

static inline void store_axes(const axes *a, dg_qentity *out)
{
    for (int i = 0; i < 3; i++) {
        out->pos[i] = a->pos[i];
        out->vel[i] = a->vel[i];
    }
}
#endif

/* ---- many entities per call ---------------------------------------------------------------- */
/* One entity's quantization is a chain of dependent latencies (squared norm, sqrt, division, the
 * roundings after them) that leaves the core mostly waiting. With SSE2, a pair of entities runs
 * side by side, one per lane, and quant_quad computes two pairs before it stores either, so four
 * chains overlap: the same IEEE operations in the same order as dg_quant_entity (sums, sqrt,
 * division, multiplies, truncation, comparisons are exact lane by lane), so the same quanta. Only
 * the ordinary case — ids >= 1, every axis in range, a finite squared norm above 1e-30, a health
 * that is a number — is stored; otherwise the caller quantizes the entities one by one, which
 * finds and names the error exactly as before. */
#if defined(__SSE2__) && !defined(DG_QUANT_SCALAR)

/* a in lane 0, b in lane 1 */
static inline __m128d lanes(double a, double b) { return _mm_set_pd(b, a); }

/* mask ? x : y, lane by lane (mask lanes all ones or all zeros) */
static inline __m128d pick(__m128d mask, __m128d x, __m128d y)
{
    return _mm_or_pd(_mm_and_pd(mask, x), _mm_andnot_pd(mask, y));
}

/* quant_rot for two entities: the smallest three as int16 in *rot16 (lanes a0 b0 a1 b1 a2 b2),
 * the largest's index in la and lb. A lane whose n2 is not finite and > 1e-30 computes garbage
 * (without trapping) that the caller does not store. */
static inline void quant_rot_pair(const dg_entity_in *a, const dg_entity_in *b, __m128d n2, __m128i *rot16,
                                  unsigned *la, unsigned *lb)
{
    __m128d inv = _mm_div_pd(_mm_set1_pd(1.0), _mm_sqrt_pd(n2));
    __m128d abs_mask = _mm_castsi128_pd(_mm_set1_epi64x(INT64_MAX));
    __m128d q[4], best;
    for (int i = 0; i < 4; i++)
        q[i] = _mm_mul_pd(lanes(a->rot[i], b->rot[i]), inv);
    /* the largest magnitude, lowest index on a tie: more_i = |q_i| beats all before it; then
     * "largest > k" is more_(k+1) | ... | more_3 */
    best = _mm_and_pd(q[0], abs_mask);
    __m128d m1 = _mm_cmpgt_pd(_mm_and_pd(q[1], abs_mask), best);
    best = _mm_max_pd(best, _mm_and_pd(q[1], abs_mask));   /* no NaN here: max is the scalar's pick */
    __m128d m2 = _mm_cmpgt_pd(_mm_and_pd(q[2], abs_mask), best);
    best = _mm_max_pd(best, _mm_and_pd(q[2], abs_mask));
    __m128d m3 = _mm_cmpgt_pd(_mm_and_pd(q[3], abs_mask), best);
    __m128d gt2 = m3, gt1 = _mm_or_pd(m2, m3), gt0 = _mm_or_pd(m1, gt1);
    __m128d top = pick(gt2, q[3], pick(gt1, q[2], pick(gt0, q[1], q[0])));
    /* sign * c is c with its sign bit flipped where the largest is negative (exact either way) */
    __m128d flip = _mm_and_pd(_mm_cmplt_pd(top, _mm_setzero_pd()), _mm_set1_pd(-0.0));
    __m128d c[3] = {pick(gt0, q[0], q[1]), pick(gt1, q[1], q[2]), pick(gt2, q[2], q[3])};
    __m128i r[3];
    for (int k = 0; k < 3; k++) {
        __m128d v = _mm_mul_pd(_mm_mul_pd(_mm_xor_pd(c[k], flip), _mm_set1_pd(DG_SQRT2)),
                               _mm_set1_pd(DG_QROT_SCALE));
        r[k] = round_pair_bounded(v);
    }
    /* int32 -> int16 with saturation, then the clamp to +-32767 */
    __m128i packed = _mm_packs_epi32(_mm_unpacklo_epi64(r[0], r[1]), r[2]);
    packed = _mm_min_epi16(_mm_max_epi16(packed, _mm_set1_epi16(-DG_QROT_SCALE)), _mm_set1_epi16(DG_QROT_SCALE));
    *rot16 = packed;
    int g0 = _mm_movemask_pd(gt0), g1 = _mm_movemask_pd(gt1), g2 = _mm_movemask_pd(gt2);
    *la = (unsigned)((g0 & 1) + (g1 & 1) + (g2 & 1));
    *lb = (unsigned)((g0 >> 1) + (g1 >> 1) + (g2 >> 1));
}

static inline void store_common(const dg_entity_in *in, const axes *ax, dg_qentity *out)
{
    out->id = in->id;
    out->type_index = in->type_index;
    out->faction_index = in->faction_index;
    store_axes(ax, out);
    out->pad_ = 0;
    out->flags = in->flags;
}

/* Two entities quantized into registers (pair_compute), stored by pair_store. */
typedef struct pair_q {
    axes xa, xb;
    __m128i rot16, hq;
    unsigned la, lb;
} pair_q;

/* Two entities into *p; false when either is not the ordinary case (*p is then garbage nobody
 * stores: a bad lane's sqrt, division and conversions compute without trapping). Computed whole,
 * without a branch, so the chains of two pairs overlap in quant_quad. */
static inline __attribute__((always_inline)) bool pair_compute(const dg_entity_in *a, const dg_entity_in *b,
                                                               pair_q *p)
{
    bool axes_a = quant_axes(a, &p->xa), axes_b = quant_axes(b, &p->xb);   /* both, always: no && */
    bool ok = (a->id != 0) & (b->id != 0) & axes_a & axes_b;
    __m128d n2 = _mm_setzero_pd();
    for (int i = 0; i < 4; i++) {
        __m128d c = lanes(a->rot[i], b->rot[i]);
        n2 = _mm_add_pd(n2, _mm_mul_pd(c, c));
    }
    __m128d h = lanes(a->health, b->health);
    /* n2 in (1e-30, DBL_MAX] (NaN fails both), health not NaN */
    __m128d good = _mm_and_pd(_mm_and_pd(_mm_cmpgt_pd(n2, _mm_set1_pd(1e-30)), _mm_cmple_pd(n2, _mm_set1_pd(DBL_MAX))),
                              _mm_cmpord_pd(h, h));
    quant_rot_pair(a, b, n2, &p->rot16, &p->la, &p->lb);
    /* clamp to 0..1 (-0 becomes +0: the same quantum) */
    h = _mm_min_pd(_mm_max_pd(h, _mm_setzero_pd()), _mm_set1_pd(1.0));
    p->hq = round_pair_bounded(_mm_mul_pd(h, _mm_set1_pd(DG_QHEALTH_FULL)));
    return ok & (_mm_movemask_pd(good) == 3);
}

static inline __attribute__((always_inline)) void pair_store(const dg_entity_in *a, const dg_entity_in *b,
                                                             const pair_q *p, dg_qentity *oa, dg_qentity *ob)
{
    store_common(a, &p->xa, oa);
    store_common(b, &p->xb, ob);
    oa->rot[0] = (int16_t)_mm_extract_epi16(p->rot16, 0);
    ob->rot[0] = (int16_t)_mm_extract_epi16(p->rot16, 1);
    oa->rot[1] = (int16_t)_mm_extract_epi16(p->rot16, 2);
    ob->rot[1] = (int16_t)_mm_extract_epi16(p->rot16, 3);
    oa->rot[2] = (int16_t)_mm_extract_epi16(p->rot16, 4);
    ob->rot[2] = (int16_t)_mm_extract_epi16(p->rot16, 5);
    oa->rot_largest = (uint8_t)p->la;
    ob->rot_largest = (uint8_t)p->lb;
    oa->health = (uint16_t)_mm_cvtsi128_si32(p->hq);
    ob->health = (uint16_t)_mm_cvtsi128_si32(_mm_shuffle_epi32(p->hq, 1));
}

/* Two entities, or false (nothing stored) when either is not the ordinary case. */
static inline bool quant_pair(const dg_entity_in *a, const dg_entity_in *b, dg_qentity *oa, dg_qentity *ob)
{
    pair_q p;
    if (!pair_compute(a, b, &p))
        return false;
    pair_store(a, b, &p, oa, ob);
    return true;
}

/* Four entities, both pairs computed before either is stored, or false with nothing stored. */
static inline bool quant_quad(const dg_entity_in *in, dg_qentity *out)
{
    pair_q p, q;
    bool p_ok = pair_compute(&in[0], &in[1], &p), q_ok = pair_compute(&in[2], &in[3], &q);   /* both, always */
    if (!(p_ok & q_ok))
        return false;
    pair_store(&in[0], &in[1], &p, &out[0], &out[1]);
    pair_store(&in[2], &in[3], &q, &out[2], &out[3]);
    return true;
}
#else   /* the portable build quantizes one by one */
static inline bool quant_pair(const dg_entity_in *a, const dg_entity_in *b, dg_qentity *oa, dg_qentity *ob)
{
    (void)a, (void)b, (void)oa, (void)ob;
    return false;
}

static inline bool quant_quad(const dg_entity_in *in, dg_qentity *out)
{
    (void)in, (void)out;
    return false;
}
#endif

/* ---- AVX2: four entities per register, eight per step -------------------------------------- */
/* Built only into quant_avx2.c. The rotation and health of four entities go one per 64-bit lane of
 * a ymm register (the rows of their quaternions transposed on the way in), so one sqrt and one
 * division serve four entities, and quant_eight computes two such groups before it stores either,
 * so two of those chains overlap. Position and velocity need no transposition: rounding is lane by
 * lane, so each pair of entities' twelve axes go as they lie in memory, three registers of four.
 * The same IEEE operations in the same order as dg_quant_entity lane by lane (no FMA: the file is
 * built without -mfma), so the same quanta; the same ordinary case as pair_compute, so the same
 * fallback to one entity at a time. */
#if defined(__AVX2__) && !defined(DG_QUANT_SCALAR)
#include <immintrin.h>
#define QUANT_AVX2 1

/* The loads and stores below take neighbouring fields as one vector. */
_Static_assert(offsetof(dg_entity_in, vel) == offsetof(dg_entity_in, pos) + 3 * sizeof(double),
               "dg_entity_in: vel follows pos");
_Static_assert(offsetof(dg_entity_in, health) == offsetof(dg_entity_in, rot) + 4 * sizeof(double),
               "dg_entity_in: health follows rot");
_Static_assert(offsetof(dg_qentity, vel) == offsetof(dg_qentity, pos) + 3 * sizeof(int32_t),
               "dg_qentity: vel follows pos");
_Static_assert(offsetof(dg_qentity, rot_largest) == offsetof(dg_qentity, rot) + 3 * sizeof(int16_t) &&
               offsetof(dg_qentity, pad_) == offsetof(dg_qentity, rot_largest) + 1,
               "dg_qentity: rot, rot_largest, pad_ are eight bytes");
_Static_assert(offsetof(dg_entity_in, type_index) == offsetof(dg_qentity, type_index) &&
               offsetof(dg_entity_in, faction_index) == offsetof(dg_qentity, faction_index) &&
               offsetof(dg_entity_in, pos) == 8 && offsetof(dg_qentity, pos) == 8,
               "dg_entity_in and dg_qentity: id, type_index, faction_index are the same first eight bytes");

/* Byte addresses of fields, for loads and stores that span neighbouring fields. */
static inline const double *in_at(const dg_entity_in *e, size_t off)
{
    return (const double *)(const void *)((const char *)e + off);
}

static inline void *out_at(dg_qentity *o, size_t off) { return (char *)o + off; }
/* (the stores of a high half use _mm_storeh_pi, a builtin: _mm_storeh_pd is a C store through a
 * double *, and these addresses are only 4-byte aligned) */

/* Two doubles of lo's in lanes 0-1 and the same two of hi's in lanes 2-3. */
static inline __m256d rows2(const dg_entity_in *lo, const dg_entity_in *hi, size_t off)
{
    return _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(in_at(lo, off))), _mm_loadu_pd(in_at(hi, off)), 1);
}

/* The low 32 bits of each 64-bit lane (a comparison mask or a small integer made of them). */
static inline __m128i low_dwords(__m256i v)
{
    return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
}

/* round_i32 on four lanes, |s| < 2^31 - 0.5 known (round_pair_bounded, four wide: the adjustment is
 * the truncation of frac + frac). */
static inline __m128i round4_bounded(__m256d s)
{
    __m128i t = _mm256_cvttpd_epi32(s);
    __m256d frac = _mm256_sub_pd(s, _mm256_cvtepi32_pd(t));
    return _mm_add_epi32(t, _mm256_cvttpd_epi32(_mm256_add_pd(frac, frac)));
}

/* The twelve axes of a and b as they lie in memory: pos0 pos1 pos2 vel0 of a | vel1 vel2 of a, pos0
 * pos1 of b | pos2 vel0 vel1 vel2 of b. */
static inline void axes_loaded2(const dg_entity_in *a, const dg_entity_in *b, __m256d x[3])
{
    const size_t pos = offsetof(dg_entity_in, pos), vel = offsetof(dg_entity_in, vel);
    x[0] = _mm256_loadu_pd(in_at(a, pos));
    x[1] = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(in_at(a, vel + 8))), _mm_loadu_pd(in_at(b, pos)),
                                1);
    x[2] = _mm256_loadu_pd(in_at(b, pos + 16));
}

/* The twelve axes of a and b, scaled (v * quanta per unit), laid out as axes_loaded2's. */
static inline void axes_scaled2(const dg_entity_in *a, const dg_entity_in *b, __m256d s[3])
{
    const double P = DG_QPOS_PER_M, V = DG_QVEL_PER_MPS;
    __m256d x[3];
    axes_loaded2(a, b, x);
    s[0] = _mm256_mul_pd(x[0], _mm256_setr_pd(P, P, P, V));
    s[1] = _mm256_mul_pd(x[1], _mm256_setr_pd(V, V, P, P));
    s[2] = _mm256_mul_pd(x[2], _mm256_setr_pd(P, V, V, V));
}

/* All-ones lanes where |s| < 2^31 - 0.5 (quant_axis's range test; a NaN fails). */
static inline __m256d axes_in_range(__m256d s)
{
    __m256d mag = _mm256_and_pd(s, _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MAX)));
    return _mm256_cmp_pd(mag, _mm256_set1_pd(2147483647.5), _CMP_LT_OQ);
}

/* a and b's rounded axes r0 r1 r2 (laid out as axes_loaded2's) stored. */
static inline void axes_store_rounded2(__m128i r0, __m128i r1, __m128i r2, dg_qentity *oa, dg_qentity *ob)
{
    const size_t pos = offsetof(dg_qentity, pos), vel = offsetof(dg_qentity, vel);
    _mm_storeu_si128((__m128i *)out_at(oa, pos), r0);                      /* a: pos0 pos1 pos2 vel0 */
    _mm_storel_epi64((__m128i *)out_at(oa, vel + 4), r1);                  /* a: vel1 vel2 */
    _mm_storeh_pi((__m64 *)out_at(ob, pos), _mm_castsi128_ps(r1));         /* b: pos0 pos1 */
    _mm_storeu_si128((__m128i *)out_at(ob, pos + 8), r2);                  /* b: pos2 vel0 vel1 vel2 */
}

/* a and b's axes rounded and stored (their range checked before). */
static inline void axes_store2(const dg_entity_in *a, const dg_entity_in *b, dg_qentity *oa, dg_qentity *ob)
{
    __m256d s[3];
    axes_scaled2(a, b, s);
    axes_store_rounded2(round4_bounded(s[0]), round4_bounded(s[1]), round4_bounded(s[2]), oa, ob);
}

/* What quad_compute leaves for quad_store: the four entities' rotation quanta as int16 (rot[0] of
 * the four, then rot[2] of the four | rot[1] of the four, then rot_largest | pad_ = 0) and their
 * health quanta as int32. */
typedef struct quad_q {
    __m128i rot02, rot1l, health;
} quad_q;

/* quant_rot for the four entities whose components are w x y z, n2 their squared norms, into *q. A
 * lane whose n2 is not in (1e-30, DBL_MAX] computes garbage (without trapping) nobody stores. */
static inline __attribute__((always_inline)) void quant_rot_quad(const __m256d rot[4], __m256d n2, quad_q *q)
{
    __m256d inv = _mm256_div_pd(_mm256_set1_pd(1.0), _mm256_sqrt_pd(n2));
    __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MAX));
    __m256d c[4], a[4];
    for (int i = 0; i < 4; i++) {
        c[i] = _mm256_mul_pd(rot[i], inv);
        a[i] = _mm256_and_pd(c[i], abs_mask);
    }
    /* the largest magnitude, lowest index on a tie, as in quant_rot_pair: more_i = |c_i| beats all
     * before it (strictly), "largest > k" = more_(k+1) | ... | more_3; no NaN here, so max is the
     * scalar's pick */
    __m256d m1 = _mm256_cmp_pd(a[1], a[0], _CMP_GT_OQ), best = _mm256_max_pd(a[0], a[1]);
    __m256d m2 = _mm256_cmp_pd(a[2], best, _CMP_GT_OQ);
    best = _mm256_max_pd(best, a[2]);
    __m256d m3 = _mm256_cmp_pd(a[3], best, _CMP_GT_OQ);
    __m256d gt2 = m3, gt1 = _mm256_or_pd(m2, m3), gt0 = _mm256_or_pd(m1, gt1);
    /* blendv(x, y, m) = m ? y : x */
    __m256d top = _mm256_blendv_pd(_mm256_blendv_pd(_mm256_blendv_pd(c[0], c[1], gt0), c[2], gt1), c[3], gt2);
    __m256d flip = _mm256_and_pd(_mm256_cmp_pd(top, _mm256_setzero_pd(), _CMP_LT_OQ), _mm256_set1_pd(-0.0));
    __m256d other[3] = {_mm256_blendv_pd(c[1], c[0], gt0), _mm256_blendv_pd(c[2], c[1], gt1),
                        _mm256_blendv_pd(c[3], c[2], gt2)};
    __m128i r[3];
    for (int k = 0; k < 3; k++) {
        __m256d v = _mm256_mul_pd(_mm256_mul_pd(_mm256_xor_pd(other[k], flip), _mm256_set1_pd(DG_SQRT2)),
                                  _mm256_set1_pd(DG_QROT_SCALE));
        r[k] = round4_bounded(v);   /* |v| <= sqrt 2 * 32767 */
    }
    /* largest = how many of gt0 gt1 gt2 hold: 0 - (-1) - ... on the 64-bit masks */
    __m256i neg = _mm256_add_epi64(_mm256_add_epi64(_mm256_castpd_si256(gt0), _mm256_castpd_si256(gt1)),
                                   _mm256_castpd_si256(gt2));
    __m128i largest = low_dwords(_mm256_sub_epi64(_mm256_setzero_si256(), neg));
    /* int32 -> int16 with saturation, then the clamp to +-32767 (largest, 0..3, passes unchanged) */
    __m128i lo = _mm_set1_epi16(-DG_QROT_SCALE), hi = _mm_set1_epi16(DG_QROT_SCALE);
    q->rot02 = _mm_min_epi16(_mm_max_epi16(_mm_packs_epi32(r[0], r[2]), lo), hi);
    q->rot1l = _mm_min_epi16(_mm_max_epi16(_mm_packs_epi32(r[1], largest), lo), hi);
}

/* The rotation and health part of quad_compute (health false: absent, its quanta 0 and nothing
 * checked), ok the axes' range masks: true when all four are the ordinary case. */
static inline __attribute__((always_inline)) bool quad_rest_compute(const dg_entity_in *e, __m256d ok, bool health,
                                                                    quad_q *q)
{
    bool ids = (e[0].id != 0) & (e[1].id != 0) & (e[2].id != 0) & (e[3].id != 0);
    /* the quaternions and healths transposed, entity k in lane k: rows of entities 0 and 2 in the
     * low and high halves, of 1 and 3 likewise, interleaved (unpacklo/hi work within each half) */
    const size_t rot = offsetof(dg_entity_in, rot);
    __m256d wx02 = rows2(&e[0], &e[2], rot), wx13 = rows2(&e[1], &e[3], rot);
    __m256d yz02 = rows2(&e[0], &e[2], rot + 16), yz13 = rows2(&e[1], &e[3], rot + 16);
    __m256d zh02 = rows2(&e[0], &e[2], rot + 24), zh13 = rows2(&e[1], &e[3], rot + 24);
    __m256d r[4] = {_mm256_unpacklo_pd(wx02, wx13), _mm256_unpackhi_pd(wx02, wx13), _mm256_unpacklo_pd(yz02, yz13),
                    _mm256_unpackhi_pd(yz02, yz13)};
    __m256d h = health ? _mm256_unpackhi_pd(zh02, zh13) : _mm256_setzero_pd();
    /* rot_norm2's sum, in its order (from 0.0) */
    __m256d n2 = _mm256_setzero_pd();
    for (int i = 0; i < 4; i++)
        n2 = _mm256_add_pd(n2, _mm256_mul_pd(r[i], r[i]));
    ok = _mm256_and_pd(ok, _mm256_and_pd(_mm256_cmp_pd(n2, _mm256_set1_pd(1e-30), _CMP_GT_OQ),
                                         _mm256_cmp_pd(n2, _mm256_set1_pd(DBL_MAX), _CMP_LE_OQ)));
    ok = _mm256_and_pd(ok, _mm256_cmp_pd(h, h, _CMP_ORD_Q));
    quant_rot_quad(r, n2, q);
    /* clamp to 0..1 (-0 becomes +0: the same quantum) */
    h = _mm256_min_pd(_mm256_max_pd(h, _mm256_setzero_pd()), _mm256_set1_pd(1.0));
    q->health = round4_bounded(_mm256_mul_pd(h, _mm256_set1_pd(DG_QHEALTH_FULL)));
    return ids & (_mm256_movemask_pd(ok) == 0xF);
}

/* Four entities' checks and rotation and health quanta into *q; false when one of them is not the
 * ordinary case (pair_compute's: id >= 1, every axis in range, n2 in (1e-30, DBL_MAX], health a
 * number). Computed whole, without a branch. The axes are only checked here: quad_store computes
 * them again (the same multiplications) where it stores them, rather than holding twelve
 * registers across quant_eight's branch. */
static inline __attribute__((always_inline)) bool quad_compute(const dg_entity_in *e, quad_q *q)
{
    __m256d s[6];
    axes_scaled2(&e[0], &e[1], &s[0]);
    axes_scaled2(&e[2], &e[3], &s[3]);
    __m256d ok = _mm256_and_pd(_mm256_and_pd(axes_in_range(s[0]), axes_in_range(s[1])),
                               _mm256_and_pd(axes_in_range(s[2]), axes_in_range(s[3])));
    ok = _mm256_and_pd(ok, _mm256_and_pd(axes_in_range(s[4]), axes_in_range(s[5])));
    return quad_rest_compute(e, ok, true, q);
}

/* Four entities' id, type_index and faction_index: the same eight bytes in and out. */
static inline __attribute__((always_inline)) void quad_store_ids(const dg_entity_in *e, dg_qentity *o)
{
    for (int k = 0; k < 4; k++)
        _mm_storel_epi64((__m128i *)(void *)&o[k], _mm_loadl_epi64((const __m128i *)(const void *)&e[k]));
}

/* Stores what quad_rest_compute computed for four entities it accepted, and their flags. */
static inline __attribute__((always_inline)) void quad_store_rest(const dg_entity_in *e, const quad_q *q,
                                                                  dg_qentity *o)
{
    /* rot[0] rot[1] rot[2] rot_largest|pad_ of each entity: the int16 columns interleaved */
    __m128i lo = _mm_unpacklo_epi16(q->rot02, q->rot1l);   /* r0 r1 of entities 0 1 2 3 */
    __m128i hi = _mm_unpackhi_epi16(q->rot02, q->rot1l);   /* r2 largest of entities 0 1 2 3 */
    __m128i e01 = _mm_unpacklo_epi32(lo, hi), e23 = _mm_unpackhi_epi32(lo, hi);
    const size_t rot = offsetof(dg_qentity, rot);
    _mm_storel_epi64((__m128i *)out_at(&o[0], rot), e01);
    _mm_storeh_pi((__m64 *)out_at(&o[1], rot), _mm_castsi128_ps(e01));
    _mm_storel_epi64((__m128i *)out_at(&o[2], rot), e23);
    _mm_storeh_pi((__m64 *)out_at(&o[3], rot), _mm_castsi128_ps(e23));
    o[0].health = (uint16_t)_mm_extract_epi16(q->health, 0);
    o[1].health = (uint16_t)_mm_extract_epi16(q->health, 2);
    o[2].health = (uint16_t)_mm_extract_epi16(q->health, 4);
    o[3].health = (uint16_t)_mm_extract_epi16(q->health, 6);
    for (int k = 0; k < 4; k++)
        o[k].flags = e[k].flags;
}

/* Stores the four entities quad_compute accepted: what it computed, and their axes. */
static inline __attribute__((always_inline)) void quad_store(const dg_entity_in *e, const quad_q *q, dg_qentity *o)
{
    quad_store_ids(e, o);
    axes_store2(&e[0], &e[1], &o[0], &o[1]);
    axes_store2(&e[2], &e[3], &o[2], &o[3]);
    quad_store_rest(e, q, o);
}

/* Four entities, or false with nothing stored. */
static inline bool quant_four(const dg_entity_in *in, dg_qentity *out)
{
    quad_q q;
    if (!quad_compute(in, &q))
        return false;
    quad_store(in, &q, out);
    return true;
}

/* Eight entities, both groups of four computed before either is stored, or false with nothing
 * stored. */
static inline bool quant_eight(const dg_entity_in *in, dg_qentity *out)
{
    quad_q p, q;
    bool p_ok = quad_compute(&in[0], &p), q_ok = quad_compute(&in[4], &q);   /* both, always */
    if (!(p_ok & q_ok))
        return false;
    quad_store(&in[0], &p, &out[0]);
    quad_store(&in[4], &q, &out[4]);
    return true;
}

/* ---- the schema quantizer's batch ------------------------------------------------------------ */
/* dg_quant_entity_schema's common case, a schema with position, velocity and rotation (health,
 * type, faction and flags present or not): quad_compute with each axis divided by its quantum
 * (quant_axis_q's v / quantum, the same IEEE division lane by lane) where the legacy batch
 * multiplies by quanta per unit; an absent health is 0 (unchecked, quantum 0), absent type,
 * faction and flags are stored as 0. The axes are rounded in the compute step and kept: a division
 * costs more than holding them across quant_eight_schema's branch. The same ordinary case as
 * quad_compute (a finite squared norm above 1e-30: dg_quant_entity_schema alone takes the rest). */
typedef struct schema_q {
    __m256d quanta[3];   /* the divisors, laid out as axes_loaded2's */
    bool health, type, faction, flags;
} schema_q;

static inline schema_q schema_q_of(const dg_schema *s)
{
    const double P = s->pos_quantum_m, V = s->vel_quantum_mps;
    return (schema_q){.quanta = {_mm256_setr_pd(P, P, P, V), _mm256_setr_pd(V, V, P, P), _mm256_setr_pd(P, V, V, V)},
                      .health = (s->std_mask & DG_STD_HEALTH) != 0, .type = (s->std_mask & DG_STD_TYPE) != 0,
                      .faction = (s->std_mask & DG_STD_FACTION) != 0, .flags = (s->std_mask & DG_STD_FLAGS) != 0};
}

/* quad_q and the four entities' rounded axes (two per axes_loaded2 layout of three). */
typedef struct quad_sq {
    quad_q q;
    __m128i ax[6];
} quad_sq;

/* quad_compute under a schema: false when one of the four is not the ordinary case (*q is then
 * garbage nobody stores: an out-of-range lane converts to 0x80000000 without trapping). */
static inline __attribute__((always_inline)) bool quad_compute_schema(const dg_entity_in *e, const schema_q *sq,
                                                                      quad_sq *q)
{
    __m256d x[6], ok = _mm256_castsi256_pd(_mm256_set1_epi32(-1));
    axes_loaded2(&e[0], &e[1], &x[0]);
    axes_loaded2(&e[2], &e[3], &x[3]);
    for (int k = 0; k < 6; k++) {
        __m256d s = _mm256_div_pd(x[k], sq->quanta[k % 3]);
        ok = _mm256_and_pd(ok, axes_in_range(s));
        q->ax[k] = round4_bounded(s);
    }
    return quad_rest_compute(e, ok, sq->health, &q->q);
}

static inline __attribute__((always_inline)) void quad_store_schema(const dg_entity_in *e, const schema_q *sq,
                                                                    const quad_sq *q, dg_qentity *o)
{
    quad_store_ids(e, o);
    axes_store_rounded2(q->ax[0], q->ax[1], q->ax[2], &o[0], &o[1]);
    axes_store_rounded2(q->ax[3], q->ax[4], q->ax[5], &o[2], &o[3]);
    quad_store_rest(e, &q->q, o);
    for (int k = 0; k < 4; k++) {
        o[k].type_index = sq->type ? o[k].type_index : 0;
        o[k].faction_index = sq->faction ? o[k].faction_index : 0;
        o[k].flags = sq->flags ? o[k].flags : 0;
    }
}

/* Four entities under the schema, or false with nothing stored. */
static inline bool quant_four_schema(const dg_entity_in *in, const schema_q *sq, dg_qentity *out)
{
    quad_sq q;
    if (!quad_compute_schema(in, sq, &q))
        return false;
    quad_store_schema(in, sq, &q, out);
    return true;
}

/* Eight entities under the schema, both groups computed before either is stored, or false with
 * nothing stored. */
static inline bool quant_eight_schema(const dg_entity_in *in, const schema_q *sq, dg_qentity *out)
{
    quad_sq p, q;
    bool p_ok = quad_compute_schema(&in[0], sq, &p), q_ok = quad_compute_schema(&in[4], sq, &q);   /* both */
    if (!(p_ok & q_ok))
        return false;
    quad_store_schema(&in[0], sq, &p, &out[0]);
    quad_store_schema(&in[4], sq, &q, &out[4]);
    return true;
}

/* dg_quant_entities_schema under a schema with position, velocity and rotation: eights, fours, and one by one
 * (dg_quant_entity_schema) through a group the batch did not take, which finds and names the
 * first error exactly as the one-by-one loop does. */
static inline dg_status quant_run_schema(const dg_schema *s, const dg_entity_in *in, dg_qentity *out, size_t n,
                                         size_t *done, dg_error *err)
{
    schema_q sq = schema_q_of(s);
    size_t i = 0;
    dg_status st = DG_OK;
    while (i < n && st == DG_OK) {
        if (i + 8 <= n && quant_eight_schema(&in[i], &sq, &out[i])) {
            i += 8;
        } else if (i + 4 <= n && quant_four_schema(&in[i], &sq, &out[i])) {
            i += 4;
        } else {
            for (size_t end = i + 4 < n ? i + 4 : n; i < end && st == DG_OK; i += st == DG_OK)
                st = dg_quant_entity_schema(s, &in[i], &out[i], err);
        }
    }
    if (done)
        *done = i;
    return st;
}
#endif

/* Entities i and i + 1 (pair) or i alone, with dg_quant_entity when quant_pair does not take them;
 * the entities done go to *i. */
static dg_status quant_some(const dg_entity_in *in, dg_qentity *out, size_t *i, bool pair, dg_error *err)
{
    if (pair && quant_pair(&in[*i], &in[*i + 1], &out[*i], &out[*i + 1])) {
        *i += 2;
        return DG_OK;
    }
    for (size_t end = *i + (pair ? 2 : 1); *i < end; ++*i) {
        dg_status st = dg_quant_entity(&in[*i], &out[*i], err);
        if (st != DG_OK)
            return st;
    }
    return DG_OK;
}

/* dg_quant_entities as this build runs it (quant.c's, or quant_avx2.c's on a CPU with AVX2). */
static inline dg_status quant_run(const dg_entity_in *in, dg_qentity *out, size_t n, size_t *done, dg_error *err)
{
    size_t i = 0;
    dg_status st = DG_OK;
    while (i < n && st == DG_OK) {
#if QUANT_AVX2
        if (i + 8 <= n && quant_eight(&in[i], &out[i]))
            i += 8;
        else if (i + 4 <= n && quant_four(&in[i], &out[i]))
            i += 4;
#else
        if (i + 4 <= n && quant_quad(&in[i], &out[i]))
            i += 4;
#endif
        else
            st = quant_some(in, out, &i, i + 2 <= n, err);
    }
    if (done)
        *done = i;
    return st;
}


#endif
