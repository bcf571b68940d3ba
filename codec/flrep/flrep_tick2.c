/* codec/flrep/flrep_tick2.c — the record block of format 2.0 (docs/FORMAT-flrep.md §12.3–12.4): the
 * standard fields the schema has, its extra fields, and the prediction with the file's quanta. One
 * general path each way, and for the decoder a fast path (fast2_run) for the common DELTA record that
 * hands everything else to it; the 1.0 decoder's fast paths (flrep_fast.h) are not involved. The
 * decoder builds the whole tick in scratch before the caller's world changes, and the encoder rebuilds
 * every DELTA record with the decoder's own apply_delta2 (the writer's self-check, extras too). */
#include "flrep_bits.h"
#include "flrep_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct flrep_rec2 {
    uint32_t id;
    uint8_t kind, motion, rot_full, attr_mask;   /* attr_mask: type, faction, health, flags (§12.3) */
    dg_qentity full;                             /* FULL: the state; DELTA with rotFull: the rotation */
    int64_t vres[3], pres[3], rres[3];
    uint16_t attrs[4];                           /* type, faction, health, flags */
    uint32_t changed;                            /* extras changed (bit f) */
    uint8_t form[DG_SCHEMA_MAX_FIELDS];          /* 0: SEG (FULL: the value, DELTA: the change), 1: raw */
    int64_t xval[DG_SCHEMA_MAX_FIELDS];          /* per form: the value or the change */
} flrep_rec2;


static inline bool has(const flrep_schema2 *s, uint32_t bit) { return (s->s.std_mask & bit) != 0; }
static inline bool fits_i32_2(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/* rdiv of §6.4 for any b > 0 (|a| < 2^62 here). */
static inline int64_t rdiv_div(int64_t a, int64_t b)
{
    return a >= 0 ? (a + b / 2) / b : -((-a + b / 2) / b);
}

/* The same by flrep_rdiv's multiply, for b small and |a| < 2^45; `b_gt1`, a constant in each copy,
 * drops the b = 1 term (a fast path copy runs only for b > 1). */
static inline __attribute__((always_inline)) int64_t rdiv_mul(int64_t a, const flrep_tick_ctx *tc, bool b_gt1)
{
    uint64_t n = (uint64_t)a + tc->pred_bias + ((uint64_t)(a >> 63) & tc->pred_even);
    uint64_t q = (uint64_t)(((flrep_u128)n * tc->pred_magic) >> 64) + (b_gt1 ? 0 : n & tc->pred_pass);
    return (int64_t)(q - tc->pred_k);
}

static inline bool rdiv_small(int64_t a) { return (uint64_t)a + (UINT64_C(1) << 45) < (UINT64_C(1) << 46); }

/* rdiv by the multiply when b is small and |a| < 2^45 (nearly always: a tick of motion in position
 * quanta); an integer divide per axis was most of the 2.0 decoder's time. */
static inline int64_t rdiv2(int64_t a, const flrep_tick_ctx *tc)
{
    if (__builtin_expect(tc->pred_fast && rdiv_small(a), 1))
        return rdiv_mul(a, tc, false);
    return rdiv_div(a, tc->pred_b);
}

/* The same for the three axes, one test for the three; `mul` (a constant in each copy) says b is
 * known small and > 1. */
static inline __attribute__((always_inline)) void rdiv2_3(const int64_t a[3], const flrep_tick_ctx *tc, bool mul,
                                                          int64_t q[3])
{
    uint64_t span = ((uint64_t)a[0] + (UINT64_C(1) << 45)) | ((uint64_t)a[1] + (UINT64_C(1) << 45)) |
                    ((uint64_t)a[2] + (UINT64_C(1) << 45));
    if (__builtin_expect((mul || tc->pred_fast) && span < (UINT64_C(1) << 46), 1)) {
        for (int i = 0; i < 3; i++)
            q[i] = rdiv_mul(a[i], tc, mul);
        return;
    }
    for (int i = 0; i < 3; i++)
        q[i] = rdiv2(a[i], tc);
}

/* 1 when v is outside the i32 range, else 0, without a branch (ORed over several values). */
static inline uint64_t outside_i32(int64_t v) { return ((uint64_t)v + (UINT64_C(1) << 31)) >> 32 != 0; }

/* The standard attribute bits (mask bits 0..3) the schema has. */
static unsigned std_attr_bits(const flrep_schema2 *s)
{
    return (has(s, DG_STD_TYPE) ? 1u : 0u) | (has(s, DG_STD_FACTION) ? 2u : 0u) | (has(s, DG_STD_HEALTH) ? 4u : 0u) |
           (has(s, DG_STD_FLAGS) ? 8u : 0u);
}

/* ---- values of extra fields ------------------------------------------------------------------ */

static int64_t sign_extend(uint64_t v, unsigned w)
{
    if (w >= 64)
        return (int64_t)v;
    uint64_t m = UINT64_C(1) << (w - 1);
    v &= (UINT64_C(1) << w) - 1;
    return (int64_t)((v ^ m) - m);
}

static int64_t read_raw(dg_bitr *b, const flrep_schema2 *s, size_t f)
{
    unsigned w = s->width[f];
    uint64_t v = dg_bitr_get(b, w > 32 ? 32 : w);
    if (w > 32)
        v |= dg_bitr_get(b, w - 32) << 32;
    return s->is_signed[f] ? sign_extend(v, w) : (int64_t)v;
}

static void write_raw(dg_bitw *b, const flrep_schema2 *s, size_t f, int64_t value)
{
    unsigned w = s->width[f];
    uint64_t v = (uint64_t)value;
    dg_bitw_put(b, v & 0xFFFFFFFFu, w > 32 ? 32 : w);
    if (w > 32)
        dg_bitw_put(b, (v >> 32) & ((UINT64_C(1) << (w - 32)) - 1), w - 32);
}

/* True when v is a value of field f (§12.2): the bounds flrep_schema2 derived, one compare or two. */
static inline bool value_ok(const flrep_schema2 *s, size_t f, int64_t v)
{
    return (uint64_t)v - s->vlo[f] <= s->vspan[f];
}

/* ---- decoding ---------------------------------------------------------------------------------- */

static void read_rot2(dg_bitr *b, dg_qentity *q)
{
    q->rot_largest = (uint8_t)dg_bitr_get(b, 2);
    for (int i = 0; i < 3; i++)
        q->rot[i] = (int16_t)(uint16_t)dg_bitr_get(b, 16);
}

/* An extra field's value in a record: form u(1), then SEG (form 0) or raw(f) (form 1). */
static int64_t read_xval(dg_bitr *b, const flrep_schema2 *s, size_t f, uint8_t *form)
{
    *form = (uint8_t)dg_bitr_get(b, 1);
    return *form ? read_raw(b, s, f) : dg_bitr_seg(b);
}

/* A FULL record's fields (§12.3); *bad names a value outside its field's domain. */
static void read_full2(dg_bitr *b, const flrep_schema2 *s, flrep_rec2 *r, const char **bad)
{
    dg_qentity *q = &r->full;
    memset(q, 0, sizeof *q);
    q->id = r->id;
    if (has(s, DG_STD_TYPE))
        q->type_index = (uint16_t)dg_bitr_get(b, 16);
    if (has(s, DG_STD_FACTION))
        q->faction_index = (uint16_t)dg_bitr_get(b, 16);
    if (has(s, DG_STD_HEALTH))
        q->health = (uint16_t)dg_bitr_get(b, 16);
    if (has(s, DG_STD_FLAGS))
        q->flags = (uint16_t)dg_bitr_get(b, 16);
    bool wide = false, rot_out = false;
    for (int i = 0; i < 3 && has(s, DG_STD_POS); i++) {
        int64_t v = dg_bitr_seg(b);
        wide |= !fits_i32_2(v);
        q->pos[i] = (int32_t)v;
    }
    for (int i = 0; i < 3 && has(s, DG_STD_VEL); i++) {
        int64_t v = dg_bitr_seg(b);
        wide |= !fits_i32_2(v);
        q->vel[i] = (int32_t)v;
    }
    if (has(s, DG_STD_ROT)) {
        q->rot_largest = (uint8_t)dg_bitr_get(b, 2);
        for (int i = 0; i < 3; i++) {
            int64_t v = dg_bitr_seg(b);
            rot_out |= v < -DG_QROT_SCALE || v > DG_QROT_SCALE;
            q->rot[i] = (int16_t)v;
        }
    }
    for (size_t f = 0; f < s->s.field_count; f++)
        r->xval[f] = read_xval(b, s, f, &r->form[f]);
    if (b->ok && wide)
        *bad = "a FULL record's positions and velocities within the i32 range, found one outside";
    else if (b->ok && rot_out)
        *bad = "a rotation component in -32767..32767, found one outside";
}

/* *bad names the rule a DELTA breaks (the reader stops there); a short block leaves b->ok false. */
static inline __attribute__((always_inline)) void read_delta2(dg_bitr *b, const flrep_schema2 *s,
                                                              const dg_seg3_entry *t3, flrep_rec2 *r, const char **bad)
{
    uint32_t flags = (uint32_t)dg_bitr_get(b, 4);   /* motion, rotFull, attrs, extras */
    r->motion = flags & 1;
    r->rot_full = (flags >> 1) & 1;
    if (!b->ok)
        return;
    bool any_motion = has(s, DG_STD_POS) || has(s, DG_STD_VEL) || has(s, DG_STD_ROT);
    if (r->motion && !any_motion) {
        *bad = "motion = 0 (the schema has no position, velocity or rotation), found motion = 1";
        return;
    }
    if (r->rot_full && (!r->motion || !has(s, DG_STD_ROT))) {
        *bad = "rotFull = 0 (rotFull needs motion = 1 and rotation in the schema), found rotFull = 1";
        return;
    }
    if ((flags & 8) && s->s.field_count == 0) {
        *bad = "extras = 0 (the schema declares no extra field), found extras = 1";
        return;
    }
    if (!r->motion || !has(s, DG_STD_VEL))
        memset(r->vres, 0, sizeof r->vres);
    if (!r->motion || !has(s, DG_STD_POS))
        memset(r->pres, 0, sizeof r->pres);
    if (!r->motion || r->rot_full || !has(s, DG_STD_ROT))
        memset(r->rres, 0, sizeof r->rres);
    if (r->motion) {
        /* three codes at once, as the 1.0 decoder reads them */
        if (has(s, DG_STD_VEL))
            dg_bitr_seg3(b, t3, r->vres);
        if (has(s, DG_STD_POS))
            dg_bitr_seg3(b, t3, r->pres);
        if (r->rot_full)
            read_rot2(b, &r->full);
        else if (has(s, DG_STD_ROT))
            dg_bitr_seg3(b, t3, r->rres);
    }
    r->attr_mask = 0;
    r->changed = 0;
    if (flags & 4) {
        r->attr_mask = (uint8_t)dg_bitr_get(b, 4);
        if (!b->ok)
            return;
        if (r->attr_mask == 0) {
            *bad = "a non-zero attrs mask after attrs = 1, found mask 0";
            return;
        }
        if (r->attr_mask & ~std_attr_bits(s)) {
            *bad = "an attrs mask with bits only for fields the schema has (FORMAT-flrep.md 12.3), found another bit";
            return;
        }
        for (int i = 0; i < 4; i++)
            if (r->attr_mask & (1u << i))
                r->attrs[i] = (uint16_t)dg_bitr_get(b, 16);
    }
    if (!(flags & 8))
        return;
    size_t nf = s->s.field_count;
    r->changed = (uint32_t)dg_bitr_get(b, (unsigned)nf);
    if (b->ok && r->changed == 0) {
        *bad = "a non-zero changed mask after extras = 1, found 0";
        return;
    }
    for (size_t f = 0; f < nf && b->ok; f++)
        if (r->changed >> f & 1)
            r->xval[f] = read_xval(b, s, f, &r->form[f]);
}

/* Applies a DELTA record (§12.4) to prev (and its extras px) into out / out_pred / ox. Returns false
 * with *why (and *field for an extra field, else -1) when the result leaves the field's values. */
static inline __attribute__((always_inline)) bool
apply_delta2_std(const dg_qentity *prev, const flrep_pred *pred, const int64_t *px, const flrep_rec2 *r,
                 const flrep_tick_ctx *tc, uint32_t std, bool mul, size_t nf, dg_qentity *out, flrep_pred *out_pred,
                 int64_t *ox, const char **why, int *field)
{
    const flrep_schema2 *s = tc->v2;
    *field = -1;
    *out = *prev;
    memset(out_pred, 0, sizeof *out_pred);
    bool vel = (std & DG_STD_VEL) != 0, pos = (std & DG_STD_POS) != 0;
    /* the range tests ORed: one branch for the six values, one for the three rotation components */
    int64_t v[3], dv[3], a[3], p[3];
    for (int i = 0; i < 3; i++) {
        dv[i] = vel ? pred->dv[i] + r->vres[i] : -(int64_t)prev->vel[i];   /* the new context: v - prev */
        v[i] = (int64_t)prev->vel[i] + dv[i];
        a[i] = (int64_t)s->pred_num * v[i];
    }
    if (pos)
        rdiv2_3(a, tc, mul, p);
    uint64_t wide = 0;
    for (int i = 0; i < 3; i++) {
        p[i] = pos ? (int64_t)prev->pos[i] + p[i] + r->pres[i] : 0;
        wide |= outside_i32(v[i]) | outside_i32(p[i]);
    }
    if (wide) {
        *why = "position or velocity leaves the i32 range";
        return false;
    }
    for (int i = 0; i < 3; i++) {
        out->vel[i] = (int32_t)v[i];
        out->pos[i] = (int32_t)p[i];
        out_pred->dv[i] = dv[i];
    }
    if (std & DG_STD_ROT) {
        if (r->rot_full) {
            out->rot_largest = r->full.rot_largest;
            for (int i = 0; i < 3; i++) {
                if (r->full.rot[i] == INT16_MIN) {
                    *why = "rotation component leaves -32767..32767";
                    return false;
                }
                out->rot[i] = r->full.rot[i];
            }
        } else {
            uint64_t beyond = 0;
            for (int i = 0; i < 3; i++) {
                int64_t d = pred->drot[i] + r->rres[i], c = prev->rot[i] + d;
                beyond |= (uint64_t)(c + DG_QROT_SCALE) > 2 * (uint64_t)DG_QROT_SCALE;
                out->rot[i] = (int16_t)c;
                out_pred->drot[i] = (int32_t)d;   /* within +-65534 when c is in range */
            }
            if (beyond) {
                *why = "rotation component leaves -32767..32767";
                return false;
            }
        }
        int64_t n2 = (int64_t)out->rot[0] * out->rot[0] + (int64_t)out->rot[1] * out->rot[1] +
                     (int64_t)out->rot[2] * out->rot[2];
        if (n2 > 2 * (int64_t)DG_QROT_SCALE * DG_QROT_SCALE) {
            *why = "rotation is not a unit quaternion";
            return false;
        }
    }
    if (r->attr_mask & 1)
        out->type_index = r->attrs[0];
    if (r->attr_mask & 2)
        out->faction_index = r->attrs[1];
    if (r->attr_mask & 4)
        out->health = r->attrs[2];
    if (r->attr_mask & 8)
        out->flags = r->attrs[3];
    /* one loop, not a copy and then the changes: a copy of a few slots would be a call to memcpy */
    for (size_t f = 0; f < nf; f++) {
        int64_t xf = px[f];
        if (r->changed >> f & 1) {
            xf = r->form[f] ? r->xval[f] : (int64_t)((uint64_t)px[f] + (uint64_t)r->xval[f]);
            if (!value_ok(s, f, xf)) {
                *why = "a value of its type and width (FORMAT-flrep.md 12.2)";
                *field = (int)f;
                return false;
            }
        }
        ox[f] = xf;
    }
    return true;
}

/* The same with the schema's standard fields: the one the writer's self-check and the general path
 * run; the fast path passes its copy's constant (the motion bits, which are all std is read for). */
static inline __attribute__((always_inline)) bool apply_delta2(const dg_qentity *prev, const flrep_pred *pred,
                                                               const int64_t *px, const flrep_rec2 *r,
                                                               const flrep_tick_ctx *tc, dg_qentity *out,
                                                               flrep_pred *out_pred, int64_t *ox, const char **why,
                                                               int *field)
{
    return apply_delta2_std(prev, pred, px, r, tc, tc->v2->s.std_mask, false, tc->v2->s.field_count, out, out_pred,
                            ox, why, field);
}

typedef struct blk2 {
    const uint8_t *block;
    uint64_t block_offset, tick;
    uint32_t nrec;
    const char *where;
} blk2;

__attribute__((cold)) static dg_status rec_fail(dg_error *err, dg_status code, const blk2 *k, uint64_t rec_at,
                                                const dg_bitr *b, uint32_t i, uint32_t id, const char *rule)
{
    return dg_error_set(err, code, rec_at, k->where, "record %u of %u (entity %u, bit %llu of the record block): expected %s",
                        i, k->nrec, id, (unsigned long long)dg_bitr_tell(b, k->block), rule);
}

__attribute__((cold)) static dg_status field_fail(dg_error *err, const blk2 *k, uint64_t rec_at, const dg_bitr *b,
                                                  uint32_t i, uint32_t id, const dg_field_def *f, int64_t v)
{
    dg_error e;
    dg_error_clear(&e);
    dg_schema_check_value(f, v, &e);
    return dg_error_set(err, DG_E_RANGE, rec_at, k->where,
                        "record %u of %u (entity %u, bit %llu of the record block): field \"%s\": %.200s", i, k->nrec,
                        id, (unsigned long long)dg_bitr_tell(b, k->block), f->name, e.msg);
}

/* 1.0's state rules for the standard fields the schema has (§6.1, §12.3). */
static dg_status check_state2(const dg_qentity *q, const flrep_tick_ctx *ctx, const blk2 *k, dg_error *err)
{
    const flrep_schema2 *s = ctx->v2;
    if (has(s, DG_STD_TYPE) && !flrep_set_has(ctx->types, q->type_index))
        return dg_error_set(err, DG_E_MALFORMED, k->block_offset, k->where,
                            "entity %u: expected a typeIndex from the manifest, found %u", q->id, q->type_index);
    if (has(s, DG_STD_FACTION) && !flrep_set_has(ctx->factions, q->faction_index))
        return dg_error_set(err, DG_E_MALFORMED, k->block_offset, k->where,
                            "entity %u: expected a factionIndex from the faction table, found %u", q->id,
                            q->faction_index);
    if (q->health > DG_QHEALTH_FULL)
        return dg_error_set(err, DG_E_RANGE, k->block_offset, k->where, "entity %u: expected health <= 10000, found %u",
                            q->id, q->health);
    if (!dg_quant_rot_valid(q->rot, q->rot_largest))
        return dg_error_set(err, DG_E_RANGE, k->block_offset, k->where,
                            "entity %u: expected a unit quaternion, found components %d %d %d", q->id, q->rot[0],
                            q->rot[1], q->rot[2]);
    return DG_OK;
}

/* One record at b: id, kind and fields, checked for shape (not yet against the world). */
static inline __attribute__((always_inline)) dg_status
decode_record2(dg_bitr *b, const blk2 *k, uint32_t i, bool keyframe, uint64_t *prev, const flrep_schema2 *s,
               const dg_seg3_entry *t3, flrep_rec2 *r, uint64_t *rec_at, dg_error *err)
{
    *rec_at = k->block_offset + dg_bitr_tell(b, k->block) / 8;
    uint64_t id = *prev + dg_bitr_eg(b) + 1;
    r->kind = (uint8_t)dg_bitr_get(b, 2);
    if (!b->ok)
        return dg_error_set(err, DG_E_MALFORMED, *rec_at, k->where,
                            "record %u of %u: expected an id gap and kind, found the block exhausted or a bad code", i,
                            k->nrec);
    if (id > UINT32_MAX)
        return dg_error_set(err, DG_E_RANGE, *rec_at, k->where,
                            "record %u: expected an entity id <= 4294967295, found %llu", i, (unsigned long long)id);
    r->id = (uint32_t)id;
    *prev = id;
    if (r->kind == 3 || (keyframe && r->kind != FLREP_REC_FULL))
        return dg_error_set(err, DG_E_MALFORMED, *rec_at, k->where, "record %u (entity %u): expected kind %s, found %u",
                            i, r->id, keyframe ? "FULL (1) in a keyframe tick" : "0, 1 or 2", r->kind);
    const char *bad = NULL;
    if (r->kind == FLREP_REC_FULL) {
        read_full2(b, s, r, &bad);
        for (size_t f = 0; f < s->s.field_count && b->ok && !bad; f++)
            if (!value_ok(s, f, r->xval[f]))
                return field_fail(err, k, *rec_at, b, i, r->id, &s->fields[f], r->xval[f]);
    } else if (r->kind == FLREP_REC_DELTA) {
        read_delta2(b, s, t3, r, &bad);
    }
    if (bad)
        return rec_fail(err, DG_E_MALFORMED, k, *rec_at, b, i, r->id, bad);
    if (!b->ok)
        return rec_fail(err, DG_E_MALFORMED, k, *rec_at, b, i, r->id,
                        r->kind == FLREP_REC_FULL ? "a complete FULL record, found the record block exhausted"
                                                  : "a complete DELTA record, found the record block exhausted or an "
                                                    "Exp-Golomb code of more than 40 zero bits");
    return DG_OK;
}

/* Entities wi0..wi of the world without a record: into nx unchanged, context cleared. */
static void copy_unchanged(const flrep_world *w, size_t from, size_t to, flrep_world *nx, size_t *out)
{
    if (to <= from)
        return;
    size_t n = to - from, x = w->nx;
    memcpy(nx->ents + *out, w->ents + from, n * sizeof *nx->ents);
    memset(nx->pred + *out, 0, n * sizeof *nx->pred);
    if (x)
        memcpy(nx->extras + *out * x, w->extras + from * x, n * x * sizeof *nx->extras);
    *out += n;
}

/* ---- the fast path: the common DELTA record ------------------------------------------------------ */

/* The fast path's bit reader (flrep_fast.h's fast_bits): the reader's state in locals, topped up
 * to >= 56 counted bits without a branch on the fill level (once per record, or before each part
 * of a longer one). The bits above n are the stream's next bits or zero (a refill ORs the same
 * bits in again); they are cleared when fast2_body hands the state back to the dg_bitr. */
typedef struct f2_bits {
    const uint8_t *p, *end;
    uint64_t acc;
    unsigned n;
} f2_bits;

/* False when fewer than 8 bytes remain: the block's end is the general path's. With `once` (a
 * constant in each copy) nothing: the record is read from the bits of one refill, n counting down
 * past 0 (unsigned) where it is longer, which the caller checks once at its end. */
static inline __attribute__((always_inline)) bool f2_refill(f2_bits *f, bool once)
{
    if (once)
        return true;
    if (__builtin_expect(f->end - f->p < 8, 0))
        return false;
    f->acc |= dg_le64(f->p) << f->n;
    f->p += (63 - f->n) >> 3;
    f->n |= 56;
    return true;
}

static inline __attribute__((always_inline)) uint64_t f2_take(f2_bits *f, unsigned k)   /* k <= 56 */
{
    uint64_t v = f->acc & ((UINT64_C(1) << k) - 1);
    f->acc >>= k;
    f->n -= k;
    return v;
}

/* An Exp-Golomb code of at most 31 bits (15 zeros) from the buffered bits, which hold >= 31
 * counted ones after a refill (read `once`, the caller's end check catches a code past them);
 * false for a longer code (the general path reads those). */
static inline __attribute__((always_inline)) bool f2_eg_buffered(f2_bits *f, uint64_t *v)
{
    unsigned zeros = (unsigned)__builtin_ctzll(f->acc | (UINT64_C(1) << 63));
    if (__builtin_expect(zeros > 15, 0))
        return false;
    *v = dg_eg_value(f->acc, zeros);
    f->acc >>= 2 * zeros + 1;
    f->n -= 2 * zeros + 1;
    return true;
}

static inline __attribute__((always_inline)) bool f2_seg(f2_bits *f, bool once, int64_t *v)
{
    uint64_t z;
    if (!f2_refill(f, once) || !f2_eg_buffered(f, &z))
        return false;
    *v = dg_unzigzag(z);
    return true;
}

/* Three SEG codes: from the triple table when they fit in its bits, else one by one. */
static inline __attribute__((always_inline)) bool f2_seg3(f2_bits *f, bool once, const dg_seg3_entry *t3,
                                                          int64_t v[3])
{
    if (!f2_refill(f, once))
        return false;
    const dg_seg3_entry *e = &t3[f->acc & ((1u << DG_SEG3_BITS) - 1)];
    if (e->bits) {
        v[0] = e->v[0];
        v[1] = e->v[1];
        v[2] = e->v[2];
        f2_take(f, e->bits);
        return true;
    }
    /* one by one from the buffered bits, their lengths summed and checked once: a code that ran
     * into the bits shifted in above the 64 loaded ones ends past n; then a refill before each */
    uint64_t a = f->acc;
    unsigned used = 0;
    int64_t w[3];
    for (int k = 0; k < 3; k++) {
        unsigned zeros = (unsigned)__builtin_ctzll(a | (UINT64_C(1) << 63));
        if (__builtin_expect(zeros > 15, 0))
            return false;
        w[k] = dg_unzigzag(dg_eg_value(a, zeros));
        a >>= 2 * zeros + 1;
        used += 2 * zeros + 1;
    }
    if (__builtin_expect(once || used <= f->n, 1)) {
        memcpy(v, w, sizeof w);
        f->acc = a;
        f->n -= used;
        return true;
    }
    return f2_seg(f, once, &v[0]) && f2_seg(f, once, &v[1]) && f2_seg(f, once, &v[2]);
}

/* A DELTA record's changed extra fields (§12.3), as read_delta2 reads them; false for a changed
 * mask of 0 or a raw value wider than 55 bits (the general path's). */
static inline __attribute__((always_inline)) bool f2_extras(f2_bits *f, bool once, const flrep_schema2 *s,
                                                            size_t nf, flrep_rec2 *r)
{
    if (!f2_refill(f, once))
        return false;
    r->changed = (uint32_t)f2_take(f, (unsigned)nf);
    if (r->changed == 0)
        return false;
    for (uint32_t left = r->changed; left; left &= left - 1) {
        unsigned k = (unsigned)__builtin_ctz(left);
        if (!f2_refill(f, once))
            return false;
        r->form[k] = (uint8_t)f2_take(f, 1);
        if (r->form[k] == 0) {
            uint64_t z;
            if (!f2_eg_buffered(f, &z))
                return false;
            r->xval[k] = dg_unzigzag(z);
            continue;
        }
        unsigned w = s->width[k];
        if (w > 55)
            return false;
        uint64_t v = f2_take(f, w);
        r->xval[k] = s->is_signed[k] ? sign_extend(v, w) : (int64_t)v;
    }
    return true;
}

/* The head and fields of a DELTA record the fast path takes — kind DELTA, no rotFull, no attrs —
 * into r, with read_delta2's values; false for anything else, or an error read_delta2 names. */
static inline __attribute__((always_inline)) bool f2_delta(f2_bits *f, bool once, const flrep_schema2 *s,
                                                           uint32_t std, size_t nf, const dg_seg3_entry *t3,
                                                           unsigned flags, flrep_rec2 *r)
{
    bool vel = (std & DG_STD_VEL) != 0, pos = (std & DG_STD_POS) != 0, rot = (std & DG_STD_ROT) != 0;
    if (((flags & 1) && !(vel || pos || rot)) || ((flags & 8) && nf == 0))
        return false;   /* (rotFull and attrs are tested by f2_record) */
    r->motion = flags & 1;
    if (!r->motion || !vel)   /* the residuals f2_seg3 does not read, zero (the others it writes) */
        memset(r->vres, 0, sizeof r->vres);
    if (!r->motion || !pos)
        memset(r->pres, 0, sizeof r->pres);
    if (!r->motion || !rot)
        memset(r->rres, 0, sizeof r->rres);
    if (r->motion && ((vel && !f2_seg3(f, once, t3, r->vres)) || (pos && !f2_seg3(f, once, t3, r->pres)) ||
                      (rot && !f2_seg3(f, once, t3, r->rres))))
        return false;
    r->changed = 0;
    return !(flags & 8) || f2_extras(f, once, s, nf, r);
}

/* A whole record the fast path takes: the id gap (into *gap), kind DELTA, then f2_delta. */
static inline __attribute__((always_inline)) bool f2_record(f2_bits *f, bool once, const flrep_schema2 *s,
                                                            uint32_t std, size_t nf, const dg_seg3_entry *t3,
                                                            uint64_t *gap, flrep_rec2 *r)
{
    if (!f2_refill(f, once))
        return false;
    /* gap code, kind u(2), then motion, rotFull, attrs, extras; gap 0 (the dense ids' code "1")
     * taken with the head */
    unsigned head;
    *gap = 0;
    if (f->acc & 1) {
        head = (unsigned)f2_take(f, 7) >> 1;
    } else {
        if (!f2_eg_buffered(f, gap))
            return false;
        head = (unsigned)f2_take(f, 6);
    }
    /* kind DELTA, rotFull 0, attrs 0 */
    return (head & 0x1b) == FLREP_REC_DELTA && f2_delta(f, once, s, std, nf, t3, head >> 2, r);
}

/* Where a run stands: the next record, previous-world entity and output slot, the previous id. */
typedef struct f2_pos {
    uint32_t i;
    size_t wi, out;
    uint64_t prev;
} f2_pos;

/* The fast path of a delta tick: the run of DELTA records without rotFull or attrs, of live
 * entities, read with f2_bits and applied by apply_delta2 itself (so the arithmetic and its
 * checks are the general path's); entities without a record before one are copied as
 * copy_unchanged copies them. It stops at the first record it does not take — another kind or
 * shape, a long code, the block's last 8 bytes, an absent entity, a result out of range — leaving
 * *b and *m at that record, which the general path then decodes (and, if bad, reports): the two
 * accept the same records with the same results. */
static inline __attribute__((always_inline)) void fast2_body(dg_bitr *b, f2_pos *m, uint32_t nrec,
                                                             const flrep_tick_ctx *ctx, const flrep_world *world,
                                                             flrep_world *nx, const dg_seg3_entry *t3, uint32_t std,
                                                             bool mul, size_t nfk)
{
    if (b->n >= 64)
        return;   /* only after dg_bitr's byte-wise refill, at the block's end */
    /* Everything the loop reads again in locals: through pointers it would be reloaded after
     * every store to the output's extras (int64_t, which may alias any 64-bit integer). */
    const flrep_tick_ctx lc = *ctx;
    const flrep_schema2 *s = lc.v2;
    const size_t x = nfk ? nfk : s->s.field_count, wn = world->n;
    const dg_qentity *const we = world->ents;
    const flrep_pred *const wp = world->pred;
    const int64_t *const wx = world->extras;
    dg_qentity *const ne = nx->ents;
    flrep_pred *const np = nx->pred;
    int64_t *const nxx = nx->extras;
    uint32_t i = m->i;
    size_t wi = m->wi, out = m->out;
    uint64_t prev = m->prev;
    f2_bits f = {b->p, b->end, b->acc, b->n};
    flrep_rec2 r;
    r.rot_full = 0;
    r.attr_mask = 0;
    r.kind = FLREP_REC_DELTA;
    while (i < nrec) {
        /* the record from one refill's bits when it fits in them (most do), else refilled part by part */
        f2_bits at = f;
        uint64_t gap;
        if (!f2_refill(&f, false))
            break;
        unsigned n0 = f.n;
        bool ok = f2_record(&f, true, s, std, x, t3, &gap, &r) && f.n <= n0;
        if (!ok) {
            f = at;
            ok = f2_record(&f, false, s, std, x, t3, &gap, &r);
        }
        uint64_t id = prev + 1 + gap;
        size_t j = wi;
        if (!ok || j == wn || we[j].id != id) {   /* the next entity (dense ids) in one test */
            while (ok && j < wn && we[j].id < id)
                j++;
            if (!ok || j == wn || we[j].id != id) {
                f = at;
                break;
            }
        }
        size_t o = out + (j - wi);
        const char *why;
        int field;
        if (!apply_delta2_std(&we[j], &wp[j], x ? wx + j * x : NULL, &r, &lc, std, mul, x, &ne[o], &np[o],
                              x ? nxx + o * x : NULL, &why, &field)) {
            f = at;   /* slot o is the general path's to write again */
            break;
        }
        if (j > wi)
            copy_unchanged(world, wi, j, nx, &out);
        out++;
        wi = j + 1;
        prev = id;
        i++;
    }
    m->i = i;
    m->wi = wi;
    m->out = out;
    m->prev = prev;
    b->p = f.p;
    b->acc = f.acc & ((UINT64_C(1) << f.n) - 1);   /* n <= 63 */
    b->n = f.n;
}

/* Copies: position, velocity and rotation all in the schema and the prediction's divisor small and
 * > 1 (the bodies of a physics engine), with 1 to 4 extra fields or any count, all constants; and
 * any other case (read from the context). */
enum { F2_MOTION = DG_STD_POS | DG_STD_VEL | DG_STD_ROT, F2_NF_COPIES = 4 };
#define F2_RUN_PVR(k)                                                                                              \
    static __attribute__((noinline)) void fast2_run_pvr##k(dg_bitr *b, f2_pos *m, uint32_t nrec,                    \
                                                          const flrep_tick_ctx *ctx, const flrep_world *world,     \
                                                          flrep_world *nx, const dg_seg3_entry *t3)                \
    {                                                                                                              \
        fast2_body(b, m, nrec, ctx, world, nx, t3, F2_MOTION, true, k);                                            \
    }
F2_RUN_PVR(0)
F2_RUN_PVR(1)
F2_RUN_PVR(2)
F2_RUN_PVR(3)
F2_RUN_PVR(4)
static __attribute__((noinline)) void fast2_run_any(dg_bitr *b, f2_pos *m, uint32_t nrec, const flrep_tick_ctx *ctx,
                                                    const flrep_world *world, flrep_world *nx, const dg_seg3_entry *t3)
{
    fast2_body(b, m, nrec, ctx, world, nx, t3, ctx->v2->s.std_mask & F2_MOTION, false, 0);
}
static void fast2_run(dg_bitr *b, f2_pos *m, uint32_t nrec, const flrep_tick_ctx *ctx, const flrep_world *world,
                      flrep_world *nx, const dg_seg3_entry *t3)
{
    typedef void (*run_fn)(dg_bitr *, f2_pos *, uint32_t, const flrep_tick_ctx *, const flrep_world *, flrep_world *,
                           const dg_seg3_entry *);
    static const run_fn pvr[F2_NF_COPIES + 1] = {fast2_run_pvr0, fast2_run_pvr1, fast2_run_pvr2, fast2_run_pvr3,
                                                 fast2_run_pvr4};
    size_t nf = ctx->v2->s.field_count;
    if ((ctx->v2->s.std_mask & F2_MOTION) == F2_MOTION && ctx->pred_fast && ctx->pred_b > 1)
        pvr[nf <= F2_NF_COPIES ? nf : 0](b, m, nrec, ctx, world, nx, t3);
    else
        fast2_run_any(b, m, nrec, ctx, world, nx, t3);
}

dg_status dg_flrep__decode_records2(const uint8_t *block, uint32_t rec_bytes, uint32_t nrec, uint64_t block_offset,
                                bool keyframe, uint64_t tick, const flrep_tick_ctx *ctx, const flrep_world *world,
                                flrep_tick_scratch *s, const char *where, dg_error *err)
{
    (void)tick;
    const flrep_schema2 *sc = ctx->v2;
    flrep_world *nx = &s->next;
    nx->nx = sc->s.field_count;
    size_t wn = keyframe ? 0 : world->n;
    if (!dg_flrep__world_reserve(nx, wn + nrec))
        return dg_error_set(err, DG_E_NOMEM, block_offset, where, "out of memory for %zu entities", wn + nrec);
    blk2 k = {block, block_offset, tick, nrec, where};
    dg_bitr b;
    dg_bitr_init(&b, block, rec_bytes);
    size_t wi = 0, out = 0, x = sc->s.field_count;
    uint64_t prev = 0;
    bool twice = ctx->fault_double_delta && tick == ctx->fault_double_delta_tick;
    const dg_seg3_entry *t3 = dg_flrep__seg3_table();
    bool fast = !keyframe && !twice && !ctx->general_only;   /* the test hooks live on the general path */
    flrep_rec2 r;
    for (uint32_t i = 0;; i++) {
        if (fast) {   /* the common records, then one record here where the fast path stopped */
            f2_pos m = {i, wi, out, prev};
            fast2_run(&b, &m, nrec, ctx, world, nx, t3);
            i = m.i;
            wi = m.wi;
            out = m.out;
            prev = m.prev;
        }
        if (i >= nrec)
            break;
        uint64_t rec_at;
        if (decode_record2(&b, &k, i, keyframe, &prev, sc, t3, &r, &rec_at, err) != DG_OK)
            return err ? err->code : DG_E_MALFORMED;
        size_t run = wi;
        while (wi < wn && world->ents[wi].id < r.id)
            wi++;
        copy_unchanged(world, run, wi, nx, &out);
        bool present = wi < wn && world->ents[wi].id == r.id;
        if (r.kind == FLREP_REC_FULL) {
            if (check_state2(&r.full, ctx, &k, err) != DG_OK)
                return err ? err->code : DG_E_MALFORMED;
            nx->ents[out] = r.full;
            memset(&nx->pred[out], 0, sizeof nx->pred[out]);
            if (x)
                memcpy(nx->extras + out * x, r.xval, x * sizeof *r.xval);
            out++;
            wi += present;
            continue;
        }
        if (!present)
            return dg_error_set(err, DG_E_STATE, block_offset, where,
                                "record %u: expected entity %u to be live for a %s record, found it absent", i, r.id,
                                r.kind == FLREP_REC_REMOVE ? "REMOVE" : "DELTA");
        if (r.kind == FLREP_REC_REMOVE) {
            wi++;
            continue;
        }
        const char *why = NULL;
        int field = -1;
        int64_t *ox = x ? nx->extras + out * x : NULL;
        bool ok = apply_delta2(&world->ents[wi], &world->pred[wi], x ? world->extras + wi * x : NULL, &r, ctx,
                               &nx->ents[out], &nx->pred[out], ox, &why, &field);
        if (ok && twice) {   /* test hook: the delta applied twice */
            dg_qentity q2 = nx->ents[out];
            flrep_pred p2 = nx->pred[out];
            int64_t x2[DG_SCHEMA_MAX_FIELDS];
            if (x)
                memcpy(x2, ox, x * sizeof *x2);
            ok = apply_delta2(&q2, &p2, x2, &r, ctx, &nx->ents[out], &nx->pred[out], ox, &why, &field);
        }
        if (!ok && field >= 0)
            return dg_error_set(err, DG_E_RANGE, rec_at, where, "record %u of %u (entity %u): expected field \"%s\" to "
                                "hold %s, found a delta or value outside it", i, nrec, r.id, sc->fields[field].name,
                                why);
        if (!ok)
            return dg_error_set(err, DG_E_RANGE, block_offset, where, "record %u (entity %u): %s", i, r.id, why);
        if (r.attr_mask && check_state2(&nx->ents[out], ctx, &k, err) != DG_OK)
            return err ? err->code : DG_E_MALFORMED;
        out++;
        wi++;
    }
    copy_unchanged(world, wi, wn, nx, &out);
    if (out > DG_FLREP_MAX_LIVE)
        return dg_error_set(err, DG_E_LIMIT, block_offset, where,
                            "expected at most %u live entities after the tick (the writer's limit), found %zu",
                            DG_FLREP_MAX_LIVE, out);
    nx->n = out;
    if (!dg_bitr_at_clean_end(&b))
        return dg_error_set(err, DG_E_MALFORMED, block_offset + rec_bytes, where,
                            "expected the record block (%u bytes) to end after %u records with zero padding, found "
                            "unused bytes or non-zero padding bits", rec_bytes, nrec);
    return DG_OK;
}

/* ---- encoding ---------------------------------------------------------------------------------- */
/* Every writing helper is inline and takes the standard fields as `std`: encode_records2 builds one
 * copy for the usual physics schema (position, velocity, rotation) where std is a constant and the
 * schema's tests fold away, and one for any other; and it writes through a local copy of the bit
 * writer, which stays in registers because no call takes its address (the rare records go out of
 * line through the caller's writer, synced around the call). */
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define STD_PHYSICS (DG_STD_POS | DG_STD_VEL | DG_STD_ROT)

ALWAYS_INLINE void write_rot2(dg_bitw *b, const dg_qentity *q)
{
    dg_bitw_put(b, q->rot_largest, 2);
    for (int i = 0; i < 3; i++)
        dg_bitw_put(b, (uint16_t)q->rot[i], 16);
}

static inline unsigned eg_len(uint64_t z) { return 2 * dg_bit_floor_log2(z + 1) + 1; }

#define SEG_ZIGZAG_MAX (UINT64_C(1) << 39)

/* form and value of an extra field whose SEG form would code `seg` (the value or the change): SEG
 * when it is no longer than raw(f), raw otherwise (§12.3). */
ALWAYS_INLINE void choose_form(const flrep_schema2 *s, size_t f, int64_t seg, int64_t value, uint8_t *form,
                               int64_t *xval)
{
    uint64_t z = dg_zigzag(seg);
    bool use_seg = z < SEG_ZIGZAG_MAX && eg_len(z) <= s->width[f];
    *form = use_seg ? 0 : 1;
    *xval = use_seg ? seg : value;
}

/* The form bit and the value; a SEG code from the table (one put with its form bit) when small. */
ALWAYS_INLINE void write_xval(dg_bitw *b, const flrep_schema2 *s, size_t f, uint8_t form, int64_t xval)
{
    if (form) {
        dg_bitw_put_clean(b, 1, 1);
        write_raw(b, s, f, xval);
        return;
    }
    uint64_t z = dg_zigzag(xval);
    if (__builtin_expect(z < DG_EG_SMALL, 1)) {
        uint32_t e = dg_eg_small[z];
        dg_bitw_put_clean(b, (uint64_t)(e & 0xFFFFFF) << 1, (e >> 24) + 1);
        return;
    }
    dg_bitw_put_clean(b, 0, 1);
    dg_bitw_seg(b, xval);
}

/* A FULL record after its id gap (rare: a keyframe's, a spawn's): out of line. */
static __attribute__((noinline)) void write_full2(dg_bitw *b, const flrep_schema2 *s, const dg_qentity *q,
                                                  const int64_t *xv)
{
    dg_bitw_put(b, FLREP_REC_FULL, 2);
    if (has(s, DG_STD_TYPE))
        dg_bitw_put(b, q->type_index, 16);
    if (has(s, DG_STD_FACTION))
        dg_bitw_put(b, q->faction_index, 16);
    if (has(s, DG_STD_HEALTH))
        dg_bitw_put(b, q->health, 16);
    if (has(s, DG_STD_FLAGS))
        dg_bitw_put(b, q->flags, 16);
    if (has(s, DG_STD_POS))
        write_seg3(b, 0, 0, q->pos[0], q->pos[1], q->pos[2]);
    if (has(s, DG_STD_VEL))
        write_seg3(b, 0, 0, q->vel[0], q->vel[1], q->vel[2]);
    if (has(s, DG_STD_ROT)) {
        dg_bitw_put(b, q->rot_largest, 2);
        write_seg3(b, 0, 0, q->rot[0], q->rot[1], q->rot[2]);
    }
    for (size_t f = 0; f < s->s.field_count; f++) {
        uint8_t form;
        int64_t xval;
        choose_form(s, f, xv[f], xv[f], &form, &xval);
        write_xval(b, s, f, form, xval);
    }
}

/* The DELTA record that makes apply_delta2(prev) produce cur; false when some residual is too large
 * for a SEG code (the caller writes a FULL record instead). `std`: the schema's standard fields. */
ALWAYS_INLINE bool make_delta2(const dg_qentity *prev, const flrep_pred *pred, const int64_t *px, const dg_qentity *cur,
                               const int64_t *cx, const flrep_tick_ctx *tc, uint32_t std, size_t nf, flrep_rec2 *r)
{
    const flrep_schema2 *s = tc->v2;
    bool vel = (std & DG_STD_VEL) != 0, pos = (std & DG_STD_POS) != 0, rot = (std & DG_STD_ROT) != 0;
    r->id = cur->id;
    r->kind = FLREP_REC_DELTA;
    uint64_t big = 0;
    int64_t any = 0, a[3], pp[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++)
        a[i] = (int64_t)s->pred_num * (vel ? cur->vel[i] : 0);
    if (pos)
        rdiv2_3(a, tc, false, pp);
    for (int i = 0; i < 3; i++) {
        r->vres[i] = vel ? (int64_t)cur->vel[i] - ((int64_t)prev->vel[i] + pred->dv[i]) : 0;
        r->pres[i] = pos ? (int64_t)cur->pos[i] - ((int64_t)prev->pos[i] + pp[i]) : 0;
        big |= dg_zigzag(r->vres[i]) | dg_zigzag(r->pres[i]);
        any |= r->vres[i] | r->pres[i];
    }
    r->rot_full = rot && cur->rot_largest != prev->rot_largest;
    r->full.rot_largest = cur->rot_largest;
    for (int i = 0; i < 3; i++) {
        r->full.rot[i] = cur->rot[i];
        r->rres[i] = rot && !r->rot_full ? (int64_t)cur->rot[i] - ((int64_t)prev->rot[i] + pred->drot[i]) : 0;
        any |= r->rres[i];
    }
    if (big >= SEG_ZIGZAG_MAX)
        return false;
    r->motion = r->rot_full || any != 0;
    /* the attributes as two words each (type, faction | health, flags), as make_delta: one compare
     * for the common "none changed" */
    uint32_t tf_now, tf_was, hf_now, hf_was;
    memcpy(&tf_now, &cur->type_index, 4);
    memcpy(&tf_was, &prev->type_index, 4);
    memcpy(&hf_now, &cur->health, 4);
    memcpy(&hf_was, &prev->health, 4);
    r->attr_mask = 0;
    r->attrs[0] = cur->type_index;
    r->attrs[1] = cur->faction_index;
    r->attrs[2] = cur->health;
    r->attrs[3] = cur->flags;
    if (__builtin_expect(((tf_now ^ tf_was) | (hf_now ^ hf_was)) != 0, 0)) {
        uint16_t was[4] = {prev->type_index, prev->faction_index, prev->health, prev->flags};
        unsigned mask = 0;
        for (int i = 0; i < 4; i++)
            mask |= (unsigned)(r->attrs[i] != was[i]) << i;
        r->attr_mask = (uint8_t)mask;
    }
    uint32_t changed = 0;
    for (size_t f = 0; f < nf; f++) {
        r->form[f] = 0;   /* read only where changed; set so no path reads an unset slot */
        r->xval[f] = 0;
        if (cx[f] == px[f])
            continue;
        changed |= 1u << f;
        choose_form(s, f, (int64_t)((uint64_t)cx[f] - (uint64_t)px[f]), cx[f], &r->form[f], &r->xval[f]);
    }
    r->changed = changed;
    return true;
}
_Static_assert(offsetof(dg_qentity, faction_index) == offsetof(dg_qentity, type_index) + 2 &&
                   offsetof(dg_qentity, flags) == offsetof(dg_qentity, health) + 2,
               "make_delta2 compares the attributes two at a time");

/* The id gap, kind and flags of a DELTA record, then its fields (§12.3): the gap's code, the head
 * and the velocity residuals in one put when they are small (nearly every record). */
ALWAYS_INLINE void write_delta2(dg_bitw *b, const flrep_schema2 *s, uint32_t std, size_t nf, uint64_t gap,
                                const flrep_rec2 *r)
{
    uint64_t head = (uint64_t)FLREP_REC_DELTA | ((uint64_t)r->motion | (uint64_t)r->rot_full << 1 |
                                                 (uint64_t)(r->attr_mask != 0) << 2 | (uint64_t)(r->changed != 0) << 3)
                                                    << 2;
    unsigned head_len = 6;
    if (__builtin_expect(gap < DG_EG_SMALL, 1)) {   /* ids a few apart: nearly always 0 */
        uint32_t e = dg_eg_small[gap];
        head = (e & 0xFFFFFF) | head << (e >> 24);
        head_len += e >> 24;
    } else {
        dg_bitw_eg(b, gap);
    }
    if (!r->motion) {
        dg_bitw_put_clean(b, head, head_len);
    } else {
        if (std & DG_STD_VEL) {
            write_seg3(b, head, head_len, r->vres[0], r->vres[1], r->vres[2]);
            head = 0;
            head_len = 0;
        }
        if (std & DG_STD_POS) {
            write_seg3(b, head, head_len, r->pres[0], r->pres[1], r->pres[2]);
            head = 0;
            head_len = 0;
        }
        if (head_len)
            dg_bitw_put_clean(b, head, head_len);
        if (r->rot_full)
            write_rot2(b, &r->full);
        else if (std & DG_STD_ROT)
            write_seg3(b, 0, 0, r->rres[0], r->rres[1], r->rres[2]);
    }
    if (__builtin_expect(r->attr_mask != 0, 0)) {
        dg_bitw_put(b, r->attr_mask, 4);
        for (int i = 0; i < 4; i++)
            if (r->attr_mask & (1u << i))
                dg_bitw_put(b, r->attrs[i], 16);
    }
    if (!r->changed)
        return;
    dg_bitw_put_clean(b, r->changed, (unsigned)nf);
    for (size_t f = 0; f < nf; f++)
        if (r->changed >> f & 1)
            write_xval(b, s, f, r->form[f], r->xval[f]);
}

ALWAYS_INLINE bool same_extras(const int64_t *a, const int64_t *b, size_t n)
{
    uint64_t d = 0;
    for (size_t f = 0; f < n; f++)
        d |= (uint64_t)(a[f] ^ b[f]);
    return d == 0;
}

/* Copies n extra values (a few: a loop, not a call to memcpy). */
ALWAYS_INLINE void copy_extras(int64_t *to, const int64_t *from, size_t n)
{
    for (size_t f = 0; f < n; f++)
        to[f] = from[f];
}

ALWAYS_INLINE void track2(flrep_world *next, size_t at, const dg_qentity *q, const int64_t *xv, size_t x)
{
    next->ents[at] = *q;
    memset(&next->pred[at], 0, sizeof next->pred[at]);
    copy_extras(next->extras + at * x, xv, x);
}

ALWAYS_INLINE void write_id_gap(dg_bitw *b, uint32_t id, uint32_t *prev_id, size_t *nrec)
{
    dg_bitw_eg(b, (uint64_t)id - *prev_id - 1);
    *prev_id = id;
    ++*nrec;
}

/* The self-check of a DELTA record just written: the decoder's arithmetic on it, extras included,
 * must give cur; it leaves the reader's context in *out_pred. */
ALWAYS_INLINE bool check_delta2(const dg_qentity *prev, const flrep_pred *pred, const int64_t *px,
                                const flrep_rec2 *r, const flrep_tick_ctx *tc, uint32_t std, size_t nf,
                                const dg_qentity *cur, const int64_t *cx, uint64_t tick, flrep_pred *out_pred)
{
    int64_t rebuilt_x[DG_SCHEMA_MAX_FIELDS];
    dg_qentity rebuilt;
    const char *why;
    int field;
    bool ok = apply_delta2_std(prev, pred, px, r, tc, std, false, nf, &rebuilt, out_pred, rebuilt_x, &why, &field);
    if (ok && __builtin_expect(tc->fault_double_delta && tick >= tc->fault_double_delta_tick, 0)) {
        /* test hook: the record applied twice, as a broken decoder would (extras included) */
        dg_qentity q2 = rebuilt;
        flrep_pred p2 = *out_pred;
        int64_t x2[DG_SCHEMA_MAX_FIELDS];
        memcpy(x2, rebuilt_x, sizeof x2);
        ok = apply_delta2_std(&q2, &p2, x2, r, tc, std, false, nf, &rebuilt, out_pred, rebuilt_x, &why, &field);
    }
    return ok && same_state(&rebuilt, cur) && same_extras(rebuilt_x, cx, nf);
}

/* One tick's records; returns false when a DELTA record's rebuild differs from cur (a codec bug).
 * `std` is the schema's standard fields and `x` its extra field count (constants in encode_records2's
 * physics copies, which unroll the per-field loops as the decoder's fast path copies do). */
ALWAYS_INLINE bool encode_records2_body(dg_bitw *bw, const flrep_tick_ctx *tc, const flrep_world *world, size_t wn,
                                        flrep_world *next, const dg_qentity *cur, const int64_t *xcur, size_t n,
                                        uint64_t tick, uint32_t std, size_t x, size_t *nrec_out)
{
    const flrep_schema2 *s = tc->v2;
    size_t wi = 0, nrec = 0;
    uint32_t prev_id = 0;
    bool tracked = true;
    static const int64_t none[1] = {0};
    dg_bitw b = *bw;   /* in registers: only inline helpers see its address */
    const dg_qentity *wents = world->ents;
    for (size_t i = 0; i < n; i++) {
        const int64_t *cx = x ? xcur + i * x : none;
        while (wi < wn && wents[wi].id < cur[i].id) {
            write_id_gap(&b, wents[wi++].id, &prev_id, &nrec);
            dg_bitw_put_clean(&b, FLREP_REC_REMOVE, 2);
        }
        bool present = wi < wn && wents[wi].id == cur[i].id;
        const int64_t *px = present && x ? world->extras + wi * x : none;
        if (present && same_state(&wents[wi], &cur[i]) && same_extras(px, cx, x)) {
            track2(next, i, &cur[i], cx, x);
            wi++;
            continue;
        }
        flrep_rec2 r;
        if (!present || !make_delta2(&wents[wi], &world->pred[wi], px, &cur[i], cx, tc, std, x, &r)) {
            write_id_gap(&b, cur[i].id, &prev_id, &nrec);
            *bw = b;
            write_full2(bw, s, &cur[i], cx);
            b = *bw;
            track2(next, i, &cur[i], cx, x);
            wi += present;
            continue;
        }
        write_delta2(&b, s, std, x, (uint64_t)cur[i].id - prev_id - 1, &r);
        prev_id = cur[i].id;
        nrec++;
        tracked &= check_delta2(&wents[wi], &world->pred[wi], px, &r, tc, std, x, &cur[i], cx, tick, &next->pred[i]);
        next->ents[i] = cur[i];
        copy_extras(next->extras + i * x, cx, x);
        wi++;
    }
    while (wi < wn) {
        write_id_gap(&b, wents[wi++].id, &prev_id, &nrec);
        dg_bitw_put_clean(&b, FLREP_REC_REMOVE, 2);
    }
    *bw = b;
    *nrec_out = nrec;
    return tracked;
}

/* The copies: the physics schema with 0 to 4 extra fields (constant), with any count, and any schema. */
#define ENCODE2_COPY(name, std, x)                                                                            \
    static __attribute__((noinline)) bool name(dg_bitw *b, const flrep_tick_ctx *tc, const flrep_world *world,    \
                                               size_t wn, flrep_world *next, const dg_qentity *cur,                \
                                               const int64_t *xcur, size_t n, uint64_t tick, size_t *nrec)         \
    {                                                                                                          \
        return encode_records2_body(b, tc, world, wn, next, cur, xcur, n, tick, std, x, nrec);                \
    }
ENCODE2_COPY(encode2_physics0, STD_PHYSICS, 0)
ENCODE2_COPY(encode2_physics1, STD_PHYSICS, 1)
ENCODE2_COPY(encode2_physics2, STD_PHYSICS, 2)
ENCODE2_COPY(encode2_physics3, STD_PHYSICS, 3)
ENCODE2_COPY(encode2_physics4, STD_PHYSICS, 4)
ENCODE2_COPY(encode2_physics, STD_PHYSICS, tc->v2->s.field_count)
ENCODE2_COPY(encode2_any, tc->v2->s.std_mask, tc->v2->s.field_count)
#undef ENCODE2_COPY

static bool encode_records2(dg_bitw *b, const flrep_tick_ctx *tc, const flrep_world *world, size_t wn,
                            flrep_world *next, const dg_qentity *cur, const int64_t *xcur, size_t n, uint64_t tick,
                            size_t *nrec)
{
    if (tc->v2->s.std_mask != STD_PHYSICS || tc->general_only)   /* general_only: a test hook */
        return encode2_any(b, tc, world, wn, next, cur, xcur, n, tick, nrec);
    switch (tc->v2->s.field_count) {
    case 0: return encode2_physics0(b, tc, world, wn, next, cur, xcur, n, tick, nrec);
    case 1: return encode2_physics1(b, tc, world, wn, next, cur, xcur, n, tick, nrec);
    case 2: return encode2_physics2(b, tc, world, wn, next, cur, xcur, n, tick, nrec);
    case 3: return encode2_physics3(b, tc, world, wn, next, cur, xcur, n, tick, nrec);
    case 4: return encode2_physics4(b, tc, world, wn, next, cur, xcur, n, tick, nrec);
    default: return encode2_physics(b, tc, world, wn, next, cur, xcur, n, tick, nrec);
    }
}

dg_status dg_flrep__encode_tick2(dg_buf *out, uint64_t tick, bool keyframe, const flrep_tick_ctx *tc,
                             flrep_world *world, flrep_world *next, const dg_qentity *cur, const int64_t *xcur,
                             size_t n, const dg_event *ev, size_t nev, dg_buf *bits, dg_error *err)
{
    if (dg_flrep__check_events(tick, ev, nev, err))
        return err ? err->code : DG_E_RANGE;
    size_t x = tc->v2->s.field_count;
    next->nx = x;
    if (!dg_flrep__world_reserve(next, n))
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "writer", "out of memory for %zu entities", n);
    next->n = 0;
    dg_buf_reset(bits);
    dg_bitw b;
    /* a record is at most 65 (gap) + 5 + 9 x 79 (residuals) + 50 + 5 + 64 + 32 x (1 + 64) bits */
    size_t per = 128 + 9 * x;
    if (!dg_bitw_begin(&b, bits, (n + (keyframe ? 0 : world->n)) * per))
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "writer", "out of memory encoding tick %llu",
                            (unsigned long long)tick);
    size_t nrec = 0, wn = keyframe ? 0 : world->n;
    bool tracked = encode_records2(&b, tc, world, wn, next, cur, xcur, n, tick, &nrec);
    next->n = n;
    dg_bitw_flush(&b);
    return dg_flrep__tick_emit(out, tick, keyframe, world, next, bits, nrec, tracked, ev, nev, err);
}
