/* codec/flrep/flrep_encode.h — one tick's entity records, encoded (FORMAT-flrep.md §6.3-6.4), and
 * apply_delta, the predictor's arithmetic the decoder's general path and the encoder's self-check
 * share. Private to codec/flrep. Like flrep_fast.h it is included by flrep_tick.c (the portable
 * build) and by flrep_tick_avx2.c (built with -mavx2, picked at run time by ctx->fast_avx2): every
 * function here is static, so each file gets its own copy for its own instruction set. The AVX2
 * copy takes runs of the steady case (ids as the world's, each entity unchanged or a common record)
 * in a loop of their own (common_run), computes a common record with the three axes in vector lanes
 * (encode_common_avx2) and writes the run's records in batches (emit_commons). */
#ifndef DETGATE_FLREP_ENCODE_H
#define DETGATE_FLREP_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "flrep_bits.h"
#include "flrep_fast.h"
#include "flrep_internal.h"

typedef struct flrep_rec {
    uint32_t id;
    uint8_t kind;
    uint8_t motion, rot_full, attr_mask;
    dg_qentity full;             /* FULL: the state; DELTA with rotFull: rot + rot_largest */
    int64_t vres[3], pres[3], rres[3];
    uint16_t attrs[4];           /* type, faction, health, flags (present per attr_mask) */
} flrep_rec;
static inline bool fits_i32(int64_t v) { return ((uint64_t)v + UINT64_C(0x80000000)) >> 32 == 0; }
static inline bool fits_rot(int64_t v) { return v >= -DG_QROT_SCALE && v <= DG_QROT_SCALE; }

/* Same rule as dg_quant_rot_valid, inline: it runs for every DELTA record. */
static inline bool rot_valid(const int16_t rot[3])
{
    int64_t sum = (int64_t)rot[0] * rot[0] + (int64_t)rot[1] * rot[1] + (int64_t)rot[2] * rot[2];
    return sum <= 2 * (int64_t)DG_QROT_SCALE * DG_QROT_SCALE;
}

/* Applies a DELTA record to prev with its prediction context, writing the
 * result field by field straight into *out (a struct assembled on the stack and copied whole
 * stalls on store forwarding). out never aliases prev. Returns false (with *why set) when the
 * result leaves the quantized domain; *out is then garbage the caller discards. */

static inline __attribute__((always_inline)) bool
apply_delta(const dg_qentity *prev, const flrep_pred *pred, const flrep_rec *r,
            const flrep_tick_ctx *tc, dg_qentity *out, flrep_pred *out_pred, const char **why)
{
    bool ok = true;
    /* residuals are zero when motion = 0 (read_delta_fields clears them) */
    for (int i = 0; i < 3; i++) {
        int64_t v = (int64_t)prev->vel[i] + pred->dv[i] + r->vres[i];
        int64_t p = (int64_t)prev->pos[i] + flrep_rdiv(2 * v, tc) + r->pres[i];
        ok &= (int)fits_i32(v) & (int)fits_i32(p);
        out->vel[i] = (int32_t)v;
        out->pos[i] = (int32_t)p;
        out_pred->dv[i] = v - prev->vel[i];
    }
    if (!ok) {
        *why = "position or velocity leaves the i32 range";
        return false;
    }
    if (r->rot_full) {
        out->rot_largest = r->full.rot_largest;
        for (int i = 0; i < 3; i++) {
            out->rot[i] = r->full.rot[i];
            ok &= r->full.rot[i] != INT16_MIN;
            out_pred->drot[i] = 0;
        }
        out_pred->drot[3] = 0;   /* flrep_pred's fourth lane is 0 whichever way the rotation came */
        if (!ok) {
            *why = "rotation component leaves -32767..32767";
            return false;
        }
    } else {
        out->rot_largest = prev->rot_largest;
        for (int i = 0; i < 3; i++) {
            int64_t v = (int64_t)prev->rot[i] + pred->drot[i] + r->rres[i];
            ok &= fits_rot(v);
            out->rot[i] = (int16_t)v;
            out_pred->drot[i] = (int32_t)(v - prev->rot[i]);
        }
        out_pred->drot[3] = 0;
        if (!ok) {
            *why = "rotation component leaves -32767..32767";
            return false;
        }
    }
    /* components are within -32767..32767 here (checked above); rotLargest is 2 bits */
    if (!rot_valid(out->rot)) {
        *why = "rotation is not a unit quaternion";
        return false;
    }
    out->id = prev->id;
    out->pad_ = 0;
    if (__builtin_expect(r->attr_mask == 0, 1)) {   /* the common case: attributes unchanged */
        out->type_index = prev->type_index;
        out->faction_index = prev->faction_index;
        out->health = prev->health;
        out->flags = prev->flags;
        return true;
    }
    out->type_index = (r->attr_mask & 1) ? r->attrs[0] : prev->type_index;
    out->faction_index = (r->attr_mask & 2) ? r->attrs[1] : prev->faction_index;
    out->health = (r->attr_mask & 4) ? r->attrs[2] : prev->health;
    out->flags = (r->attr_mask & 8) ? r->attrs[3] : prev->flags;
    return true;
}

/* ---- encoding ---------------------------------------------------------------------------- */

static inline __attribute__((always_inline)) void write_rot(dg_bitw *b, const dg_qentity *q)
{
    dg_bitw_put(b, q->rot_largest, 2);
    for (int i = 0; i < 3; i++)
        dg_bitw_put(b, (uint16_t)q->rot[i], 16);
}

static inline __attribute__((always_inline)) void write_full(dg_bitw *b, const dg_qentity *q)
{
    dg_bitw_put(b, FLREP_REC_FULL, 2);
    dg_bitw_put(b, q->type_index, 16);
    dg_bitw_put(b, q->faction_index, 16);
    dg_bitw_put(b, q->health, 16);
    dg_bitw_put(b, q->flags, 16);
    for (int i = 0; i < 3; i++)
        dg_bitw_put(b, (uint32_t)q->pos[i], 32);
    for (int i = 0; i < 3; i++)
        dg_bitw_put(b, (uint32_t)q->vel[i], 32);
    write_rot(b, q);
}

/* Residuals that make apply_delta(prev) produce cur exactly. */
static inline __attribute__((always_inline)) void make_delta(const dg_qentity *prev, const flrep_pred *pred,
                                                             const dg_qentity *cur, const flrep_tick_ctx *tc,
                                                             flrep_rec *r)
{
    r->id = cur->id;
    r->kind = FLREP_REC_DELTA;
    int64_t any = 0;   /* non-zero when some residual is */
    for (int i = 0; i < 3; i++) {
        int64_t vp = (int64_t)prev->vel[i] + pred->dv[i];
        r->vres[i] = (int64_t)cur->vel[i] - vp;
        int64_t pp = (int64_t)prev->pos[i] + flrep_rdiv(2 * (int64_t)cur->vel[i], tc);
        r->pres[i] = (int64_t)cur->pos[i] - pp;
        any |= r->vres[i] | r->pres[i];
    }
    /* the rotation both ways, without a branch: rotFull takes full.rot, a delta the residuals
     * (apply_delta and write_delta read only the one rotFull names, so rres needs no clearing) */
    bool rot_full = cur->rot_largest != prev->rot_largest;
    r->rot_full = rot_full;
    r->full.rot_largest = cur->rot_largest;
    for (int i = 0; i < 3; i++) {
        r->full.rot[i] = cur->rot[i];
        r->rres[i] = (int64_t)cur->rot[i] - ((int64_t)prev->rot[i] + pred->drot[i]);
        any |= r->rres[i];   /* with rotFull, motion is set whatever the residuals */
    }
    r->motion = rot_full | (any != 0);
    /* the attributes as two words each (type, faction | health, flags): one compare for the
     * common "none changed" instead of four, and a mask only when one did */
    uint32_t tf_now, tf_was, hf_now, hf_was;
    memcpy(&tf_now, &cur->type_index, 4);
    memcpy(&tf_was, &prev->type_index, 4);
    memcpy(&hf_now, &cur->health, 4);
    memcpy(&hf_was, &prev->health, 4);
    uint32_t dtf = tf_now ^ tf_was, dhf = hf_now ^ hf_was;
    r->attr_mask = 0;
    if (__builtin_expect((dtf | dhf) != 0, 0)) {
        uint16_t now[4] = {cur->type_index, cur->faction_index, cur->health, cur->flags};
        uint16_t was[4] = {prev->type_index, prev->faction_index, prev->health, prev->flags};
        unsigned mask = 0;
        for (int i = 0; i < 4; i++) {
            mask |= (unsigned)(now[i] != was[i]) << i;
            r->attrs[i] = now[i];
        }
        r->attr_mask = (uint8_t)mask;
    }
}
_Static_assert(offsetof(dg_qentity, faction_index) == offsetof(dg_qentity, type_index) + 2 &&
                   offsetof(dg_qentity, flags) == offsetof(dg_qentity, health) + 2,
               "make_delta compares the attributes two at a time");

/* The head and all nine residual codes of a common record in one put, when every residual is
 * within -64..63 and it all fits in 56 bits (residuals of a quantum or two: 30-40 bits); false,
 * nothing written, otherwise. */
static inline __attribute__((always_inline)) bool write_seg9(dg_bitw *b, uint64_t head, unsigned head_len,
                                                             const flrep_rec *r)
{
    uint64_t z[9];
    uint64_t all = 0;
    for (int i = 0; i < 3; i++) {
        z[i] = dg_zigzag(r->vres[i]);
        z[3 + i] = dg_zigzag(r->pres[i]);
        z[6 + i] = dg_zigzag(r->rres[i]);
    }
    for (int i = 0; i < 9; i++)
        all |= z[i];
    if (__builtin_expect(all >= DG_EG_SMALL, 0))
        return false;
    uint64_t bits = head;
    unsigned at = head_len;
    for (int i = 0; i < 9; i++) {
        uint32_t e = dg_eg_small[z[i]];
        bits |= (uint64_t)(e & 0xFFFFFF) << (at & 63);   /* at <= 56 + 8 * 15: masked, checked below */
        at += e >> 24;
    }
    if (__builtin_expect(at > 56, 0))
        return false;
    dg_bitw_put_clean(b, bits, at);
    return true;
}

/* The id gap, kind and flags of a DELTA record, then its fields (FORMAT-flrep.md §6.3). */
static inline __attribute__((always_inline)) void write_delta(dg_bitw *b, uint64_t gap, const flrep_rec *r)
{
    uint64_t flags = (uint64_t)r->motion | (uint64_t)r->rot_full << 1 | (uint64_t)(r->attr_mask != 0) << 2;
    uint64_t head;
    unsigned head_len;
    if (__builtin_expect(gap < DG_EG_SMALL, 1)) {   /* ids a few apart: nearly always 0 */
        uint32_t e = dg_eg_small[gap];
        head_len = e >> 24;
        head = (e & 0xFFFFFF) | (uint64_t)FLREP_REC_DELTA << head_len | flags << (head_len + 2);
        head_len += 5;
    } else {
        dg_bitw_eg(b, gap);
        head = (uint64_t)FLREP_REC_DELTA | flags << 2;
        head_len = 5;
    }
    if (r->motion && !r->rot_full && write_seg9(b, head, head_len, r)) {
        /* the common record, whole */
    } else if (r->motion) {
        write_seg3(b, head, head_len, r->vres[0], r->vres[1], r->vres[2]);
        write_seg3(b, 0, 0, r->pres[0], r->pres[1], r->pres[2]);
        if (r->rot_full)
            write_rot(b, &r->full);
        else
            write_seg3(b, 0, 0, r->rres[0], r->rres[1], r->rres[2]);
    } else {
        dg_bitw_put_clean(b, head, head_len);
    }
    if (r->attr_mask) {
        dg_bitw_put(b, r->attr_mask, 4);
        for (int i = 0; i < 4; i++)
            if (r->attr_mask & (1u << i))
                dg_bitw_put(b, r->attrs[i], 16);
    }
}

/* Field-by-field equality folded with | (not &&): && over adjacent narrow fields lets the compiler
 * merge them into one wide load of a state it has just stored piecewise (rot[2], rot_largest,
 * pad_), which stalls on store forwarding — a tenth of the encoder's time. */
static inline bool same_fields(const dg_qentity *a, const dg_qentity *b)
{
    uint32_t d = a->id ^ b->id;
    d |= (uint32_t)(a->type_index ^ b->type_index) | (uint32_t)(a->faction_index ^ b->faction_index);
    for (int i = 0; i < 3; i++) {
        d |= (uint32_t)(a->pos[i] ^ b->pos[i]) | (uint32_t)(a->vel[i] ^ b->vel[i]);
        d |= (uint32_t)(uint16_t)(a->rot[i] ^ b->rot[i]);
    }
    d |= (uint32_t)(a->rot_largest ^ b->rot_largest) | (uint32_t)(a->pad_ ^ b->pad_);
    d |= (uint32_t)(a->health ^ b->health) | (uint32_t)(a->flags ^ b->flags);
    return d == 0;
}

/* The encoder tracks the world a reader will rebuild (its states are cur's, copied by the record
 * loop). A FULL record or none: the context cleared. */
static inline void track_record(flrep_world *next, size_t at) { memset(&next->pred[at], 0, sizeof next->pred[at]); }

static inline __attribute__((always_inline)) void write_remove(dg_bitw *b, uint32_t id, uint32_t *prev_id,
                                                               size_t *nrec)
{
    dg_bitw_eg(b, (uint64_t)id - *prev_id - 1);
    dg_bitw_put(b, FLREP_REC_REMOVE, 2);
    *prev_id = id;
    ++*nrec;
}

/* The DELTA record of a live entity whose state changed, appended to b; the context a reader will
 * have goes to *out_pred (its state is cur), computed with the decoder's own apply_delta: the
 * writer's prediction contexts are the reader's by construction, and a residual that does not
 * reproduce the state exactly is caught here rather than in a file (returns false: a codec bug).
 * The record and the rebuilt state are locals the compiler keeps in registers. */
static inline __attribute__((always_inline)) bool
encode_delta(dg_bitw *b, uint64_t gap, const dg_qentity *prev, const flrep_pred *pred, const dg_qentity *cur,
             const flrep_tick_ctx *tc, flrep_pred *out_pred)
{
    flrep_rec r;
    make_delta(prev, pred, cur, tc, &r);
    dg_qentity rebuilt;
    const char *why;
    bool same = apply_delta(prev, pred, &r, tc, &rebuilt, out_pred, &why) && same_fields(&rebuilt, cur);
    write_delta(b, gap, &r);   /* after every load: fewer values live across the bit writer */
    return same;
}

#if FLREP_FAST_AVX2
/* A common record between encode_common_avx2, which computes it, and emit_common, which writes it
 * with the rest of its batch. */
typedef struct common_rec {
    uint64_t z;     /* t3 DG_EG3_NONE: the nine zigzagged residuals, 7 bits each in stream order */
    uint32_t t3;    /* every zigzag < DG_EG3_SMALL: the three triples' dg_eg_trip indices, 9 bits each
                     * (velocity, position, rotation; 0: no motion); else DG_EG3_NONE */
    uint32_t gap;   /* < DG_EG_SMALL */
} common_rec;

/* write_delta's bits for a common record: head (gap, kind, flags), then the nine codes — one put when
 * they fit in 56 bits (nearly always), else a put whenever the next code would not fit: the same
 * bits either way. Residuals of a quantum or three (every zigzag < 8) take their codes three at a
 * time from dg_eg_trip: three loads instead of nine. */
static inline __attribute__((always_inline)) void emit_common(dg_bitw *b, const common_rec *rec)
{
    uint64_t motion = rec->t3 != DG_EG3_NONE ? rec->t3 != 0 : rec->z != 0;
    uint32_t eh = dg_eg_small[rec->gap];
    unsigned at = eh >> 24;
    uint64_t bits = (eh & 0xFFFFFF) | (uint64_t)FLREP_REC_DELTA << at | motion << (at + 2);
    at += 5;
    if (motion && __builtin_expect(rec->t3 != DG_EG3_NONE, 1)) {   /* (t3 0: no motion, head only) */
        uint32_t t = rec->t3;
        uint32_t e0 = dg_eg_trip[t & 511], e1 = dg_eg_trip[(t >> 9) & 511], e2 = dg_eg_trip[t >> 18];
        unsigned l0 = e0 >> 24, l1 = e1 >> 24, l2 = e2 >> 24;
        uint64_t c0 = e0 & 0xFFFFFF, c1 = e1 & 0xFFFFFF, c2 = e2 & 0xFFFFFF;
        unsigned at1 = at + l0, at2 = at1 + l1;   /* <= 20 + 21 + 21: no shift by 64 */
        if (__builtin_expect(at2 + l2 <= 56, 1)) {
            dg_bitw_put_clean(b, bits | c0 << at | c1 << at1 | c2 << at2, at2 + l2);
        } else {   /* head + 21 and 42 bits: two puts */
            dg_bitw_put_clean(b, bits | c0 << at, at1);
            dg_bitw_put_clean(b, c1 | c2 << l1, l1 + l2);
        }
        return;
    }
    if (motion) {
        uint64_t z = rec->z;
        unsigned at0 = at;
        uint64_t bits0 = bits;
        for (int i = 0; i < 9; i++) {
            uint32_t e = dg_eg_small[(z >> (7 * i)) & 127];
            bits |= (uint64_t)(e & 0xFFFFFF) << (at & 63);   /* at <= 20 + 9 * 15: masked, checked below */
            at += e >> 24;
        }
        if (__builtin_expect(at > 56, 0)) {
            bits = bits0;
            at = at0;
            for (int i = 0; i < 9; i++) {
                uint32_t e = dg_eg_small[(z >> (7 * i)) & 127];
                if (at + (e >> 24) > 56) {
                    dg_bitw_put_clean(b, bits, at);
                    bits = 0;
                    at = 0;
                }
                bits |= (uint64_t)(e & 0xFFFFFF) << at;
                at += e >> 24;
            }
        }
    }
    dg_bitw_put_clean(b, bits, at);
}

/* The common records the record loop has computed and not yet written (at most COMMON_BATCH), written
 * in order. Apart from the loop: the loop's arithmetic then runs without the bit writer's state in
 * its registers, and this loop without the arithmetic's. The writer is copied to a local so that its
 * word stores cannot alias its accumulator. */
#define COMMON_BATCH 64
static __attribute__((noinline)) void emit_commons(dg_bitw *b_out, const common_rec *recs, size_t n)
{
    dg_bitw bw = *b_out;
    for (size_t i = 0; i < n; i++)
        emit_common(&bw, &recs[i]);
    *b_out = bw;
}

/* The common DELTA record — rotation by residuals, attributes unchanged, the id gap and the nine SEG
 * codes from the small table — with make_delta's residuals computed three axes at a time: velocity
 * and position in four i64 lanes (lane 3 reads the next field and is never used), rotation in four
 * i32 lanes (lane 3: rotLargest and pad, residual 0); rdiv as `rate` says (the loop's copy knows the
 * tick rate). The record goes to *rec for emit_common; the context a reader will have to *out_pred.
 * Returns COMMON_REC for such a record, with lanes of *refused set when encode_delta's self-check
 * would refuse it (ORed in: the run tests them once); COMMON_SAME, the context cleared, when cur is
 * prev (same_state, here from the vectors the record needs: every field compared); COMMON_NONE,
 * nothing stored, for any other record (encode_delta takes it).
 *
 * No rebuild here: the residuals are exact i64 differences of cur and the prediction, so apply_delta
 * on them adds back what was subtracted and gives cur's velocity, position and rotation (rdiv_lanes
 * is flrep_rdiv lane by lane: test_flrep_encode_paths holds the two builds to the same bytes), and
 * the reader's context is the prediction plus the residual. What the self-check can refuse in such
 * a record is cur itself — a rotation component of -32768 or a rotation that is not a unit
 * quaternion (apply_delta's checks), a pad byte that is not 0 (same_fields against the rebuilt
 * state's 0) — and that is tested on cur. */
enum { COMMON_NONE, COMMON_REC, COMMON_SAME };
static inline __attribute__((always_inline)) int
encode_common_avx2(uint64_t gap, const dg_qentity *restrict prev, const flrep_pred *restrict pred,
                   const dg_qentity *restrict cur, const fast_rate *rt, rdiv_rate rate,
                   flrep_pred *restrict out_pred, __m128i *refused, common_rec *rec)
{
    uint32_t tf_now, tf_was, hf_now, hf_was;
    memcpy(&tf_now, &cur->type_index, 4);
    memcpy(&tf_was, &prev->type_index, 4);
    memcpy(&hf_now, &cur->health, 4);
    memcpy(&hf_was, &prev->health, 4);
    if (__builtin_expect(((tf_now ^ tf_was) | (hf_now ^ hf_was)) != 0 || cur->rot_largest != prev->rot_largest, 0))
        return COMMON_NONE;
    /* make_delta: the residuals */
    __m256i vel_c = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(const void *)cur->vel));
    __m256i pos_c = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(const void *)cur->pos));
    __m256i vel_p = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(const void *)prev->vel));
    __m256i pos_p = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(const void *)prev->pos));
    const __m256i lanes012_64 = _mm256_setr_epi64x(-1, -1, -1, 0);
    __m128i rot_c16 = _mm_loadl_epi64((const __m128i *)(const void *)cur->rot);   /* and rotLargest, pad */
    __m128i rot_p16 = _mm_loadl_epi64((const __m128i *)(const void *)prev->rot);
    /* id, attributes and rotLargest are equal here: the rest of same_state */
    if (__builtin_expect(_mm256_testz_si256(_mm256_or_si256(_mm256_xor_si256(vel_c, vel_p), _mm256_xor_si256(pos_c, pos_p)),
                                            lanes012_64) &&
                             _mm_cvtsi128_si64(_mm_xor_si128(rot_c16, rot_p16)) == 0,
                         0)) {
        memset(out_pred, 0, sizeof *out_pred);
        return COMMON_SAME;
    }
    if (__builtin_expect(gap >= DG_EG_SMALL, 0))
        return COMMON_NONE;
    __m256i dv = _mm256_loadu_si256((const __m256i *)(const void *)pred->dv);
    __m256i vres = _mm256_sub_epi64(vel_c, _mm256_add_epi64(vel_p, dv));
    __m256i pres = _mm256_sub_epi64(pos_c, _mm256_add_epi64(pos_p, rdiv_lanes(_mm256_add_epi64(vel_c, vel_c), rt, rate)));
    const __m128i lanes012 = _mm_setr_epi32(-1, -1, -1, 0);
    __m128i rot_c = _mm_srai_epi32(_mm_unpacklo_epi16(rot_c16, rot_c16), 16);
    __m128i rot_p = _mm_srai_epi32(_mm_unpacklo_epi16(rot_p16, rot_p16), 16);
    __m128i drot = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)pred->drot), lanes012);
    __m128i rres = _mm_and_si128(_mm_sub_epi32(rot_c, _mm_add_epi32(rot_p, drot)), lanes012);
    /* zigzag (dg_zigzag), each code's index one byte of its axis's lane: velocity, position, rotation */
    __m256i vz = _mm256_xor_si256(_mm256_add_epi64(vres, vres), _mm256_cmpgt_epi64(_mm256_setzero_si256(), vres));
    __m256i pz = _mm256_xor_si256(_mm256_add_epi64(pres, pres), _mm256_cmpgt_epi64(_mm256_setzero_si256(), pres));
    __m256i rz = _mm256_cvtepu32_epi64(_mm_xor_si128(_mm_add_epi32(rres, rres), _mm_srai_epi32(rres, 31)));
    __m256i all = _mm256_or_si256(_mm256_or_si256(vz, pz), rz);
    if (!_mm256_testz_si256(all, _mm256_and_si256(lanes012_64, _mm256_set1_epi64x(~(int64_t)(DG_EG_SMALL - 1)))))
        return COMMON_NONE;   /* a residual beyond -64..63 */
    /* the three dg_eg_trip indices when every zigzag is below 8: lane k holds axis k of velocity at
     * bit 0, of position at 9, of rotation at 18, shifted by 3k, the lanes ORed */
    if (__builtin_expect(_mm256_testz_si256(all, _mm256_and_si256(lanes012_64, _mm256_set1_epi64x(~(int64_t)(DG_EG3_SMALL - 1)))), 1)) {
        __m256i tri = _mm256_or_si256(_mm256_or_si256(vz, _mm256_slli_epi64(pz, 9)), _mm256_slli_epi64(rz, 18));
        tri = _mm256_sllv_epi64(tri, _mm256_setr_epi64x(0, 3, 6, 0));
        __m128i t01 = _mm256_castsi256_si128(tri);
        t01 = _mm_or_si128(_mm_or_si128(t01, _mm_unpackhi_epi64(t01, t01)), _mm256_extracti128_si256(tri, 1));
        rec->t3 = (uint32_t)_mm_cvtsi128_si32(t01);
        rec->z = 0;
    } else {
        /* the nine indices, 7 bits each, in stream order: velocity's at 0, 7, 14, position's at 21,
         * 28, 35, rotation's at 42, 49, 56 (lane k shifted by 7k, the lanes ORed) */
        __m256i fields = _mm256_or_si256(_mm256_or_si256(vz, _mm256_slli_epi64(pz, 21)), _mm256_slli_epi64(rz, 42));
        fields = _mm256_sllv_epi64(fields, _mm256_setr_epi64x(0, 7, 14, 0));
        __m128i f01 = _mm256_castsi256_si128(fields);
        f01 = _mm_or_si128(_mm_or_si128(f01, _mm_unpackhi_epi64(f01, f01)), _mm256_extracti128_si256(fields, 1));
        rec->t3 = DG_EG3_NONE;
        rec->z = (uint64_t)_mm_cvtsi128_si64(f01);
    }
    rec->gap = (uint32_t)gap;
    /* the self-check's refusals, on cur: a component of -32768, a squared norm above rot_valid's
     * bound (lane 0: c0^2 + c1^2 + c2^2, within u32), a pad byte */
    __m128i c16 = _mm_and_si128(rot_c16, _mm_setr_epi16(-1, -1, -1, 0, 0, 0, 0, 0));
    __m128i sq = _mm_madd_epi16(c16, c16);
    __m128i norm = _mm_add_epi32(sq, _mm_srli_si128(sq, 4));   /* u32; lanes 1-3: r2^2, 0, 0 */
    const __m128i above = _mm_set1_epi32((int)(2u * DG_QROT_SCALE * DG_QROT_SCALE + 1u));
    __m128i bad = _mm_cmpeq_epi32(_mm_max_epu32(norm, above), norm);   /* norm >= above, unsigned */
    bad = _mm_or_si128(bad, _mm_cmpeq_epi16(c16, _mm_set1_epi16(INT16_MIN)));
    bad = _mm_or_si128(bad, _mm_and_si128(rot_c16, _mm_setr_epi16(0, 0, 0, (short)0xFF00, 0, 0, 0, 0)));
    *refused = _mm_or_si128(*refused, bad);
    _mm256_storeu_si256((__m256i *)(void *)out_pred->dv, _mm256_sub_epi64(vel_c, vel_p));   /* lane 3 over drot[0..1] */
    _mm_storeu_si128((__m128i *)(void *)out_pred->drot, _mm_add_epi32(drot, rres));       /* lane 3: 0 + 0 */
    return COMMON_REC;
}

/* A run of the steady case: entity j of cur is entity j of the world (the same id), and each either
 * unchanged (no record, its context cleared) or a common record, computed into recs[*nrecs]. Stops
 * at lim, at an entity that is neither (not consumed: the record loop's general path takes it), or
 * when recs holds COMMON_BATCH. Returns the entities consumed; *prev_id is the last record's id,
 * *tracked folds the records' self-checks. Its own loop, with few values live, so that they stay
 * in registers (in the record loop's they are spilled). */
static inline __attribute__((always_inline)) size_t
common_run(const dg_qentity *restrict cur, const dg_qentity *restrict wents, const flrep_pred *restrict wpred,
           dg_qentity *restrict nents, flrep_pred *restrict npred, size_t lim, uint32_t *prev_id_io, const fast_rate *rt, rdiv_rate rate,
           common_rec *restrict recs, size_t *nrecs_io, bool *tracked_io)
{
    uint32_t prev_id = *prev_id_io;
    size_t nrecs = *nrecs_io;
    __m128i refused = _mm_setzero_si128();   /* the records' self-check refusals, ORed */
    size_t j = 0;
    for (; j < lim && nrecs < COMMON_BATCH; j++) {
        uint32_t id = cur[j].id;
        if (__builtin_expect(wents[j].id != id, 0))
            break;
        nents[j] = cur[j];   /* the next world's state (the portable loop copies the tick whole) */
        int kind = encode_common_avx2((uint64_t)id - prev_id - 1, &wents[j], &wpred[j], &cur[j], rt, rate, &npred[j],
                                      &refused, &recs[nrecs]);
        if (kind == COMMON_SAME)
            continue;   /* unchanged: no record */
        if (__builtin_expect(kind == COMMON_NONE, 0))
            break;
        nrecs++;
        prev_id = id;
    }
    *prev_id_io = prev_id;
    *nrecs_io = nrecs;
    *tracked_io &= _mm_testz_si128(refused, refused);
    return j;
}

static __attribute__((noinline)) size_t common_run_unit(const dg_qentity *cur, const dg_qentity *wents,
                                                        const flrep_pred *wpred, dg_qentity *nents, flrep_pred *npred, size_t lim,
                                                        uint32_t *prev_id, const fast_rate *rt, common_rec *recs,
                                                        size_t *nrecs, bool *tracked)
{
    return common_run(cur, wents, wpred, nents, npred, lim, prev_id, rt, RDIV_UNIT, recs, nrecs, tracked);
}

static __attribute__((noinline)) size_t common_run_mulhi(const dg_qentity *cur, const dg_qentity *wents,
                                                         const flrep_pred *wpred, dg_qentity *nents, flrep_pred *npred, size_t lim,
                                                         uint32_t *prev_id, const fast_rate *rt, common_rec *recs,
                                                         size_t *nrecs, bool *tracked)
{
    return common_run(cur, wents, wpred, nents, npred, lim, prev_id, rt, RDIV_MULHI, recs, nrecs, tracked);
}
#endif

/* One tick's entity records (FORMAT-flrep.md §6.3), the world after it tracked into *next (slot i:
 * cur[i]) with the contexts a reader will have. Returns false when some DELTA record failed its
 * self-check (a codec bug). unit_rate: the tick rate is 1 Hz (a constant in each copy of the AVX2
 * loop: rdiv is then the numerator, else the multiply-high alone; the portable loop ignores it). */
static inline __attribute__((always_inline)) bool encode_records_body(dg_bitw *b_out, const flrep_tick_ctx *tc,
                                                                      const flrep_world *world, size_t wn,
                                                                      flrep_world *next, const dg_qentity *cur,
                                                                      size_t n, size_t *nrec_out, bool unit_rate)
{
    /* the bit writer as a local: its word stores through p may alias *b_out's accumulator (both
     * uint64_t), which would send the accumulator through memory on every put */
    dg_bitw bw = *b_out, *const b = &bw;
    bool tracked = true;
    /* every entity of cur is in the next world, in cur's order: its slot there is i */
    size_t wi = 0, nrec = 0;
    uint32_t prev_id = 0;
    const dg_qentity *wents = world->ents;
    const flrep_pred *wpred = world->pred;
    const flrep_tick_ctx tcl = *tc;   /* a local: the bit writer's word stores cannot alias it */
#if FLREP_FAST_AVX2
    const fast_rate rt = fast_rate_of(tc);
    common_rec pending[COMMON_BATCH];   /* common records computed, not yet written */
    size_t npending = 0;
#define FLUSH_PENDING()                                                                                   \
    do {                                                                                                 \
        if (npending)                                                                                    \
            emit_commons(b, pending, npending);                                                          \
        npending = 0;                                                                                    \
    } while (0)
#else
    (void)unit_rate;
#define FLUSH_PENDING() ((void)0)
#endif
    /* the next world's states are cur's, slot for slot: in the portable loop one copy, not one per
     * record; in the AVX2 loop each entity as its record is made (common_run stores what it loads
     * anyway, and a tick's states are not read twice) */
    dg_qentity *nents = next->ents;
#if !FLREP_FAST_AVX2
    if (n)
        memcpy(nents, cur, n * sizeof *cur);
#endif
    flrep_pred *npred = next->pred;
    for (size_t i = 0; i < n; i++) {
#if FLREP_FAST_AVX2
        size_t lim = wn - wi < n - i ? wn - wi : n - i;
        if (lim) {
            size_t before = npending;
            size_t j = (unit_rate ? common_run_unit : common_run_mulhi)(&cur[i], &wents[wi], &wpred[wi], &nents[i],
                                                                      &npred[i], lim, &prev_id, &rt, pending, &npending,
                                                                      &tracked);
            nrec += npending - before;
            i += j;
            wi += j;
            if (npending == COMMON_BATCH) {
                FLUSH_PENDING();
                i--;   /* the loop's increment: the run goes on from i */
                continue;
            }
            if (i == n)
                break;
        }
        nents[i] = cur[i];   /* the general path's entity */
#endif
        uint32_t id = cur[i].id;
        /* entities that vanished before this id: REMOVE */
        if (wi < wn && wents[wi].id < id) {
            FLUSH_PENDING();
            while (wi < wn && wents[wi].id < id)
                write_remove(b, wents[wi++].id, &prev_id, &nrec);
        }
        bool present = wi < wn && wents[wi].id == id;
        if (present && same_state(&wents[wi], &cur[i])) {
            track_record(next, i);
            wi++;
            continue;  /* unchanged: no record */
        }
        uint64_t gap = (uint64_t)id - prev_id - 1;
        prev_id = id;
        nrec++;
        if (!present) {
            FLUSH_PENDING();
            dg_bitw_eg(b, gap);
            write_full(b, &cur[i]);
            track_record(next, i);
            continue;
        }
        FLUSH_PENDING();
        tracked &= encode_delta(b, gap, &wents[wi], &wpred[wi], &cur[i], &tcl, &npred[i]);
        wi++;
    }
    FLUSH_PENDING();
    while (wi < wn)
        write_remove(b, wents[wi++].id, &prev_id, &nrec);
    *b_out = bw;
    *nrec_out = nrec;
    return tracked;
#undef FLUSH_PENDING
}

/* The record loop built with -mavx2 (flrep_tick_avx2.c), when DG_FLREP_AVX2; dg_flrep__encode_tick calls
 * it when ctx->fast_avx2. */
bool dg_flrep__encode_records_avx2(dg_bitw *b, const flrep_tick_ctx *tc, const flrep_world *world, size_t wn,
                               flrep_world *next, const dg_qentity *cur, size_t n, size_t *nrec);

#endif
