/* codec/flrep/flrep_tick.c — one tick, both directions: the bit-packed entity records with their
 * predictor (docs/FORMAT-flrep.md §6) and the event records (§7). The decoder validates the whole
 * tick into scratch before it touches the caller's world, so a bad tick changes nothing. */
#include "flrep_bits.h"
#include "flrep_encode.h"
#include "flrep_fast.h"
#include "flrep_internal.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>


/* ---- worlds and scratch ------------------------------------------------------------------ */

void dg_flrep__world_free(flrep_world *w)
{
    free(w->ents);
    free(w->pred);
    free(w->extras);
    size_t nx = w->nx;
    memset(w, 0, sizeof *w);
    w->nx = nx;   /* what the owner set stays: the world may be used again */
}

bool dg_flrep__world_reserve(flrep_world *w, size_t n)
{
    if (n <= w->cap)
        return true;
    size_t cap = w->cap ? w->cap : 64;
    while (cap < n)
        cap *= 2;
    dg_qentity *e = realloc(w->ents, cap * sizeof *e);
    if (!e)
        return false;
    w->ents = e;
    flrep_pred *p = realloc(w->pred, cap * sizeof *p);
    if (!p)
        return false;
    w->pred = p;
    if (w->nx) {
        int64_t *x = realloc(w->extras, cap * w->nx * sizeof *x);
        if (!x)
            return false;
        w->extras = x;
    }
    w->cap = cap;
    return true;
}

void dg_flrep__world_swap(flrep_world *a, flrep_world *b)
{
    flrep_world t = *a;
    *a = *b;
    *b = t;
}

void dg_flrep__tick_scratch_free(flrep_tick_scratch *s)
{
    free(s->events);
    dg_flrep__world_free(&s->next);
    memset(s, 0, sizeof *s);
}

static bool reserve_events(flrep_tick_scratch *s, size_t n)
{
    return dg_grow((void **)&s->events, &s->ev_cap, n, sizeof *s->events);
}

/* ---- the predictor (shared by both directions, so they cannot disagree) ------------------ */

void dg_flrep__tick_ctx_init(flrep_tick_ctx *ctx, uint32_t tick_rate_hz, const flrep_index_set *types,
                         const flrep_index_set *factions)
{
    ctx->tick_rate_hz = tick_rate_hz;
    /* ceil(2^64 / b); for b = 1 (which has none in 64 bits) flrep_rdiv passes n through instead */
    ctx->rate_magic = tick_rate_hz > 1 ? UINT64_MAX / tick_rate_hz + 1 : 0;
    ctx->rate_pass = tick_rate_hz == 1 ? UINT64_MAX : 0;
    ctx->rate_k = tick_rate_hz ? (UINT64_C(1) << 45) / tick_rate_hz + 1 : 0;
    ctx->rate_bias = tick_rate_hz / 2 + ctx->rate_k * tick_rate_hz;
    ctx->rate_even = tick_rate_hz % 2 == 0 ? UINT64_MAX : 0;
    ctx->types = types;
    ctx->factions = factions;
    ctx->fault_double_delta_tick = 0;
    ctx->fault_double_delta = false;
    ctx->general_only = false;
    ctx->fast_avx2 = flrep_cpu_has_avx2();
    ctx->v2 = NULL;
    ctx->pred_b = 0;
}

void dg_flrep__tick_ctx_set_schema(flrep_tick_ctx *ctx, const flrep_schema2 *v2)
{
    ctx->v2 = v2;
    uint64_t b = v2 ? (uint64_t)v2->pred_den * ctx->tick_rate_hz : 0;
    ctx->pred_b = (int64_t)b;
    /* the constants of flrep_rdiv (exact for |a| < 2^45 and b < 2^17), computed for b */
    ctx->pred_fast = b >= 1 && b <= FLREP_TICK_RATE_MAX;
    if (ctx->pred_fast) {
        ctx->pred_magic = b > 1 ? UINT64_MAX / b + 1 : 0;
        ctx->pred_pass = b == 1 ? UINT64_MAX : 0;
        ctx->pred_k = (UINT64_C(1) << 45) / b + 1;
        ctx->pred_bias = b / 2 + ctx->pred_k * b;
        ctx->pred_even = b % 2 == 0 ? UINT64_MAX : 0;
    }
}

/* ---- decoding ---------------------------------------------------------------------------- */

static void read_full_fields(dg_bitr *b, dg_qentity *q)
{
    q->type_index = (uint16_t)dg_bitr_get(b, 16);
    q->faction_index = (uint16_t)dg_bitr_get(b, 16);
    q->health = (uint16_t)dg_bitr_get(b, 16);
    q->flags = (uint16_t)dg_bitr_get(b, 16);
    for (int i = 0; i < 3; i++)
        q->pos[i] = (int32_t)(uint32_t)dg_bitr_get(b, 32);
    for (int i = 0; i < 3; i++)
        q->vel[i] = (int32_t)(uint32_t)dg_bitr_get(b, 32);
}

static void read_rot(dg_bitr *b, dg_qentity *q)
{
    q->rot_largest = (uint8_t)dg_bitr_get(b, 2);
    for (int i = 0; i < 3; i++)
        q->rot[i] = (int16_t)(uint16_t)dg_bitr_get(b, 16);
}

/* ---- the SEG triple table ---- */

static dg_seg3_entry seg3_table[1u << DG_SEG3_BITS];
static pthread_once_t seg3_once = PTHREAD_ONCE_INIT;

/* Decodes up to three SEG codes from the low bits of `bits` with the reference decoder. */
static void seg3_fill(void)
{
    for (uint32_t idx = 0; idx < (1u << DG_SEG3_BITS); idx++) {
        uint8_t byte[8] = {(uint8_t)idx, (uint8_t)(idx >> 8)};
        dg_bitr b;
        dg_bitr_init(&b, byte, 2);
        dg_seg3_entry e = {0, {0, 0, 0}};
        unsigned used = 0;
        bool fits = true;
        for (int k = 0; k < 3 && fits; k++) {
            dg_bitr probe = b;
            int64_t v = dg_unzigzag(dg_bitr_eg(&probe));
            unsigned consumed = (unsigned)(16 - probe.n - (unsigned)(probe.end - probe.p) * 8);
            if (!probe.ok || consumed > DG_SEG3_BITS) {
                fits = false;
                break;
            }
            e.v[k] = (int8_t)v;
            used = consumed;
            b = probe;
        }
        e.bits = fits ? (uint8_t)used : 0;
        seg3_table[idx] = e;
    }
}

const dg_seg3_entry *dg_flrep__seg3_table(void)
{
    pthread_once(&seg3_once, seg3_fill);
    return seg3_table;
}

/* *bad names a rule the fields break (the reader stops there); a short block leaves b->ok false. */
static void read_delta_fields(dg_bitr *b, flrep_rec *r, const dg_seg3_entry *t3, const char **bad)
{
    uint32_t flags = (uint32_t)dg_bitr_get(b, 3);   /* motion, rotFull, attrs */
    r->motion = flags & 1;
    r->rot_full = (flags >> 1) & 1;
    if (b->ok && r->rot_full && !r->motion) {
        *bad = "rotFull = 0 when motion = 0 (rotFull belongs to the motion fields), found rotFull = 1";
        return;
    }
    if (!r->motion) {
        memset(r->vres, 0, sizeof r->vres);
        memset(r->pres, 0, sizeof r->pres);
        memset(r->rres, 0, sizeof r->rres);
    } else {
        dg_bitr_seg3(b, t3, r->vres);
        dg_bitr_seg3(b, t3, r->pres);
        if (r->rot_full) {
            read_rot(b, &r->full);
            memset(r->rres, 0, sizeof r->rres);
        } else {
            dg_bitr_seg3(b, t3, r->rres);
        }
    }
    r->attr_mask = 0;
    if (flags & 4) {
        r->attr_mask = (uint8_t)dg_bitr_get(b, 4);
        if (b->ok && r->attr_mask == 0) {
            *bad = "a non-zero attrs mask after attrs = 1, found mask 0";
            return;
        }
        for (int i = 0; i < 4; i++)
            if (r->attr_mask & (1u << i))
                r->attrs[i] = (uint16_t)dg_bitr_get(b, 16);
    }
}

typedef struct tick_hdr {
    uint64_t tick;
    uint16_t flags, nrec, nev;
    uint32_t rec_bytes;
    uint64_t block_offset;
} tick_hdr;

/* A record's error: where (its first byte, and the bit the reader had reached), which record and
 * entity, and the rule ("expected ..."); the tick is added by dg_flrep__decode_tick. */
__attribute__((cold, noinline)) static dg_status record_error(dg_error *err, dg_status code, uint64_t rec_at,
                                                              const dg_bitr *b, const uint8_t *block,
                                                              const tick_hdr *th, const char *where, uint32_t i,
                                                              uint32_t id, const char *rule)
{
    uint64_t bit = dg_bitr_tell(b, block);
    return dg_error_set(err, code, rec_at, where, "record %u of %u (entity %u, bit %llu of the record block): expected %s",
                        i, th->nrec, id, (unsigned long long)bit, rule);
}

/* Decodes one record of any shape at b (prev = previous id of the tick): the general path, for
 * keyframes, and for whatever fast_run does not take. Errors name the record's first byte. */
static dg_status decode_record(dg_bitr *b, const uint8_t *block, const tick_hdr *th, uint32_t i, bool keyframe,
                               uint64_t *prev, const dg_seg3_entry *t3, flrep_rec *r, const char *where,
                               dg_error *err)
{
    uint64_t rec_at = th->block_offset + ((uint64_t)(b->p - block) * 8 - b->n) / 8;
    uint64_t id = *prev + dg_bitr_eg(b) + 1;
    r->kind = (uint8_t)dg_bitr_get(b, 2);
    if (!b->ok)
        return dg_error_set(err, DG_E_MALFORMED, rec_at, where,
                            "record %u of %u: expected an id gap and kind, found the block exhausted or a bad code",
                            i, th->nrec);
    if (id > UINT32_MAX)
        return dg_error_set(err, DG_E_RANGE, rec_at, where,
                            "record %u: expected an entity id <= 4294967295, found %llu", i, (unsigned long long)id);
    r->id = (uint32_t)id;
    *prev = id;
    if (r->kind == 3 || (keyframe && r->kind != FLREP_REC_FULL))
        return dg_error_set(err, DG_E_MALFORMED, rec_at, where,
                            "record %u (entity %u): expected kind %s, found %u", i, r->id,
                            keyframe ? "FULL (1) in a keyframe tick" : "0, 1 or 2", r->kind);
    const char *bad = NULL;
    if (r->kind == FLREP_REC_FULL) {
        r->full.id = r->id;
        read_full_fields(b, &r->full);
        read_rot(b, &r->full);
        r->full.pad_ = 0;
        for (int k = 0; k < 3 && b->ok && !bad; k++)
            if (r->full.rot[k] == INT16_MIN)
                bad = "a rotation component in -32767..32767, found -32768";
    } else if (r->kind == FLREP_REC_DELTA) {
        read_delta_fields(b, r, t3, &bad);
    }
    if (bad)
        return record_error(err, DG_E_MALFORMED, rec_at, b, block, th, where, i, r->id, bad);
    if (!b->ok)
        return record_error(err, DG_E_MALFORMED, rec_at, b, block, th, where, i, r->id,
                            r->kind == FLREP_REC_FULL ? "a complete FULL record, found the record block exhausted"
                                                      : "a complete DELTA record, found the record block exhausted "
                                                        "or an Exp-Golomb code of more than 40 zero bits");
    return DG_OK;
}

static dg_status check_state(const dg_qentity *q, const flrep_tick_ctx *ctx, const char *where, uint64_t at,
                             dg_error *err)
{
    if (!flrep_set_has(ctx->types, q->type_index))
        return dg_error_set(err, DG_E_MALFORMED, at, where,
                            "entity %u: expected a typeIndex from the manifest, found %u", q->id, q->type_index);
    if (!flrep_set_has(ctx->factions, q->faction_index))
        return dg_error_set(err, DG_E_MALFORMED, at, where,
                            "entity %u: expected a factionIndex from the faction table, found %u", q->id,
                            q->faction_index);
    if (q->health > DG_QHEALTH_FULL)
        return dg_error_set(err, DG_E_RANGE, at, where, "entity %u: expected health <= 10000, found %u", q->id,
                            q->health);
    if (!dg_quant_rot_valid(q->rot, q->rot_largest))
        return dg_error_set(err, DG_E_RANGE, at, where,
                            "entity %u: expected a unit quaternion, found components %d %d %d", q->id, q->rot[0],
                            q->rot[1], q->rot[2]);
    return DG_OK;
}

/* The fast path (flrep_fast.h): the dense copy, then, where it stopped at a record after an id gap,
 * the sparse one; this file's copies, or flrep_tick_avx2.c's on a CPU with AVX2. */
static void fast_runs(merge_pos *m, uint32_t nrec, const dg_seg3_entry *t3, const flrep_tick_ctx *ctx,
                      const flrep_world *world, flrep_world *nx)
{
    for (int sparse = 0; sparse <= 1 && m->i < nrec; sparse++) {
        /* the sparse copy only where the dense one stopped at an id gap (its code starts with a 0) */
        if (sparse && m->b.n > 0 && (m->b.acc & 1))
            break;
#if DG_FLREP_AVX2
        if (ctx->fast_avx2) {
            dg_flrep__fast_run_avx2(m, nrec, t3, ctx, world, nx, sparse);
            continue;
        }
#endif
        fast_run_pick(m, nrec, t3, ctx, world, nx, sparse);   /* this file's copies */
    }
}

/* A keyframe's common record: FULL — an id gap code, kind 1 ("10" LSB first) — and its
 * fixed-width fields (FORMAT-flrep.md §6.3), read with 8-byte loads at their bit offsets instead of
 * field by field through the bit reader, and checked as decode_record and check_state check them.
 * Like fast_run it stops at the first record it does not take (another shape, the block's end
 * near, a state the general path refuses, which it then reports), leaving *m at that record. */
#define FLREP_PREFIX_FULL 0x03u
#define FLREP_PREFIX_FULL_BITS 3u
#define FLREP_FULL_BITS (FLREP_PREFIX_FULL_BITS + 4u * 16 + 6u * 32 + 2u + 3u * 16)

static inline uint64_t peek_bits(const uint8_t *block, uint64_t at)
{
    return dg_le64(block + (at >> 3)) >> (at & 7);   /* at least 57 bits from bit `at` */
}

/* An id gap other than 0 before a FULL record: its Exp-Golomb code (at most 31 bits here), then
 * kind 1 ("10"). */
static inline bool full_gap_head(uint64_t head, uint64_t *gap, unsigned *head_bits)
{
    unsigned len;
    if ((head & 1) || !fast_eg_code(head, gap, &len) || ((head >> len) & 3) != 1)
        return false;   /* a code "1" is gap 0: FLREP_PREFIX_FULL's */
    *head_bits = len + 2;
    return true;
}

static __attribute__((noinline)) void full_run(merge_pos *m, const uint8_t *block, const tick_hdr *th,
                                               const flrep_tick_ctx *ctx, flrep_world *nx)
{
    uint64_t at = dg_bitr_tell(&m->b, block);   /* the next record's first bit */
    const uint64_t block_bits = (uint64_t)th->rec_bytes * 8;
    /* a record with its gap code (at most 31 bits here) read with 8-byte loads ends 8 bytes before the block */
    while (m->i < th->nrec && at + 31 + FLREP_FULL_BITS + 64 <= block_bits) {
        uint64_t head = peek_bits(block, at), gap = 0;
        unsigned head_bits = FLREP_PREFIX_FULL_BITS;
        if ((head & 7) != FLREP_PREFIX_FULL && !full_gap_head(head, &gap, &head_bits))
            break;
        if (m->prev + 1 + gap > UINT32_MAX)
            break;
        uint64_t f = at + head_bits;
        uint64_t attrs = peek_bits(block, f), rot = peek_bits(block, f + 256);
        dg_qentity q;
        q.id = (uint32_t)(m->prev + 1 + gap);
        q.type_index = (uint16_t)attrs;
        q.faction_index = (uint16_t)(attrs >> 16);
        q.health = (uint16_t)(attrs >> 32);
        q.flags = (uint16_t)peek_bits(block, f + 48);
        for (int k = 0; k < 3; k++) {
            q.pos[k] = (int32_t)(uint32_t)peek_bits(block, f + 64 + 32 * (unsigned)k);
            q.vel[k] = (int32_t)(uint32_t)peek_bits(block, f + 160 + 32 * (unsigned)k);
            q.rot[k] = (int16_t)(uint16_t)(rot >> (2 + 16 * k));
        }
        q.rot_largest = (uint8_t)(rot & 3);
        q.pad_ = 0;
        if (!flrep_set_has(ctx->types, q.type_index) || !flrep_set_has(ctx->factions, q.faction_index) ||
            q.health > DG_QHEALTH_FULL || !dg_quant_rot_valid(q.rot, q.rot_largest))
            break;
        nx->ents[m->out] = q;
        memset(&nx->pred[m->out], 0, sizeof nx->pred[m->out]);
        m->out++;
        m->prev = q.id;
        m->i++;
        at = f + FLREP_FULL_BITS - FLREP_PREFIX_FULL_BITS;
    }
    dg_bitr_seek(&m->b, block, at);
}

/* Decodes the record block and builds the world after this tick into s->next, in one pass over
 * the records and the previous world (both sorted by id). *world is only read. */
static dg_status decode_and_merge(const uint8_t *block, const flrep_world *world, const tick_hdr *th,
                                  bool keyframe, const flrep_tick_ctx *ctx, flrep_tick_scratch *s, const char *where,
                                  dg_error *err)
{
    flrep_world *nx = &s->next;
    if (!dg_flrep__world_reserve(nx, (keyframe ? 0 : world->n) + th->nrec))
        return dg_error_set(err, DG_E_NOMEM, th->block_offset, where, "out of memory for %zu entities",
                            world->n + th->nrec);
    const dg_seg3_entry *t3 = dg_flrep__seg3_table();
    merge_pos m = {.wi = 0, .out = 0, .prev = 0, .i = 0};
    dg_bitr_init(&m.b, block, th->rec_bytes);
    size_t wn = keyframe ? 0 : world->n;
    bool twice = ctx->fault_double_delta && th->tick == ctx->fault_double_delta_tick;
    bool fast = !keyframe && !twice && !ctx->general_only;   /* the test hooks live on the general path */
    bool fast_full = keyframe && !ctx->general_only;
    flrep_rec rec, *r = &rec;
    for (;;) {
        if (fast_full)
            full_run(&m, block, th, ctx, nx);
        if (fast)
            fast_runs(&m, th->nrec, t3, ctx, world, nx);
        if (m.i == th->nrec)
            break;
        uint32_t i = m.i++;
        if (decode_record(&m.b, block, th, i, keyframe, &m.prev, t3, r, where, err))
            return err ? err->code : DG_E_MALFORMED;
        size_t run = m.wi;
        while (m.wi < wn && world->ents[m.wi].id < r->id)
            m.wi++;
        if (m.wi > run) {   /* entities without a record: unchanged, context cleared */
            memcpy(nx->ents + m.out, world->ents + run, (m.wi - run) * sizeof *nx->ents);
            memset(nx->pred + m.out, 0, (m.wi - run) * sizeof *nx->pred);
            m.out += m.wi - run;
        }
        bool present = m.wi < wn && world->ents[m.wi].id == r->id;
        if (r->kind == FLREP_REC_FULL) {
            if (check_state(&r->full, ctx, where, th->block_offset, err))
                return err ? err->code : DG_E_MALFORMED;
            nx->ents[m.out] = r->full;
            memset(&nx->pred[m.out], 0, sizeof nx->pred[m.out]);
            m.out++;
            m.wi += present;
            continue;
        }
        if (!present)
            return dg_error_set(err, DG_E_STATE, th->block_offset, where,
                                "record %u: expected entity %u to be live for a %s record, found it absent", i, r->id,
                                r->kind == FLREP_REC_REMOVE ? "REMOVE" : "DELTA");
        if (r->kind == FLREP_REC_REMOVE) {
            m.wi++;
            continue;
        }
        const char *why = NULL;
        dg_qentity *q = &nx->ents[m.out];
        flrep_pred *p = &nx->pred[m.out];
        bool ok = apply_delta(&world->ents[m.wi], &world->pred[m.wi], r, ctx, q, p, &why);
        if (ok && twice) {
            dg_qentity q2 = *q;
            flrep_pred p2 = *p;
            ok = apply_delta(&q2, &p2, r, ctx, q, p, &why);
        }
        if (!ok)
            return dg_error_set(err, DG_E_RANGE, th->block_offset, where, "record %u (entity %u): %s", i, r->id, why);
        /* apply_delta checked the rotation; only changed attributes need checking */
        if (r->attr_mask && check_state(q, ctx, where, th->block_offset, err))
            return err ? err->code : DG_E_MALFORMED;
        m.out++;
        m.wi++;
    }
    size_t wi = m.wi, out = m.out;
    if (wi < wn) {
        memcpy(nx->ents + out, world->ents + wi, (wn - wi) * sizeof *nx->ents);
        memset(nx->pred + out, 0, (wn - wi) * sizeof *nx->pred);
        out += wn - wi;
    }
    if (out > DG_FLREP_MAX_LIVE)   /* spawns on a full world: bounded as the writer bounds it */
        return dg_error_set(err, DG_E_LIMIT, th->block_offset, where,
                            "expected at most %u live entities after the tick (the writer's limit), found %zu",
                            DG_FLREP_MAX_LIVE, out);
    nx->n = out;
    if (!dg_bitr_at_clean_end(&m.b))
        return dg_error_set(err, DG_E_MALFORMED, th->block_offset + th->rec_bytes, where,
                            "expected the record block (%u bytes) to end after %u records with zero padding, "
                            "found unused bytes or non-zero padding bits",
                            th->rec_bytes, th->nrec);
    return DG_OK;
}

static dg_status decode_events(dg_cur *c, const tick_hdr *th, flrep_tick_scratch *s, size_t *nev_out)
{
    size_t n = 0;
    for (uint32_t i = 0; i < th->nev && c->ok; i++) {
        uint64_t at = dg_cur_offset(c);
        uint8_t kind = dg_cur_u8(c, "u8 event kind");
        uint64_t tick = dg_cur_u64(c, "u64 event tick");
        uint16_t plen = dg_cur_u16(c, "u16 payloadLength");
        const uint8_t *pl = dg_cur_bytes(c, plen, "event payload");
        if (!c->ok)
            break;
        if (kind == 0) {
            c->pos = (size_t)(at - c->base);
            dg_cur_fail(c, DG_E_MALFORMED, "event %u: expected kind 1..255, found 0", i);
            break;
        }
        if (tick != th->tick) {
            c->pos = (size_t)(at - c->base);
            dg_cur_fail(c, DG_E_MALFORMED, "event %u: expected its stamped tick to be %llu, found %llu", i,
                        (unsigned long long)th->tick, (unsigned long long)tick);
            break;
        }
        if (kind > DG_EV_ALERT)
            continue; /* a newer minor's event kind: skipped by its length */
        dg_cur p;
        dg_cur_init(&p, pl, plen, at + FLREP_EVENT_HDR_SIZE, c->where, c->err);
        dg_event *e = &s->events[n];
        memset(e, 0, sizeof *e);
        e->kind = kind;
        e->tick = tick;
        dg_strview text = {NULL, 0};
        switch (kind) {
        case DG_EV_KILL:
            e->a = dg_cur_u32(&p, "u32 killerId");
            e->b = dg_cur_u32(&p, "u32 victimId");
            e->c = dg_cur_u16(&p, "u16 weaponTypeIndex");
            break;
        case DG_EV_SPAWN:
            e->a = dg_cur_u32(&p, "u32 entityId");
            e->c = dg_cur_u16(&p, "u16 typeIndex");
            e->d = dg_cur_u16(&p, "u16 factionIndex");
            break;
        case DG_EV_CHAT:
            e->a = dg_cur_u32(&p, "u32 senderId");
            e->c = dg_cur_u16(&p, "u16 channel");
            text = dg_cur_str16(&p, "string text");
            break;
        case DG_EV_ADMIN:
            e->a = dg_cur_u32(&p, "u32 actorId");
            e->b = dg_cur_u32(&p, "u32 targetId");
            e->c = dg_cur_u16(&p, "u16 action");
            text = dg_cur_str16(&p, "string detail");
            break;
        default: /* DG_EV_ALERT */
            e->c = dg_cur_u16(&p, "u16 factionIndex");
            e->d = dg_cur_u16(&p, "u16 level");
            break;
        }
        if (!p.ok) {
            c->ok = false;
            break;
        }
        e->text = text.s;
        e->text_len = text.len;
        n++;
    }
    *nev_out = n;
    return c->ok ? DG_OK : (c->err ? c->err->code : DG_E_MALFORMED);
}

static void read_tick_hdr(dg_cur *c, tick_hdr *th)
{
    th->tick = dg_cur_u64(c, "u64 tickIndex");
    th->flags = dg_cur_u16(c, "u16 flags");
    th->nrec = dg_cur_u16(c, "u16 recordCount");
    th->nev = dg_cur_u16(c, "u16 eventCount");
    th->rec_bytes = dg_cur_u32(c, "u32 recordBytes");
    th->block_offset = dg_cur_offset(c);
}

/* Adds ", tick N" to the error's location — only on failure, so the hot path formats nothing. */
static void name_tick_in_error(dg_error *err, const char *where, uint64_t tick)
{
    if (!err || strcmp(err->where, where) != 0)
        return;
    size_t n = strlen(err->where);
    snprintf(err->where + n, sizeof err->where - n, ", tick %llu", (unsigned long long)tick);
}

dg_status dg_flrep__decode_tick(dg_cur *c, uint32_t seq, const flrep_tick_ctx *ctx, flrep_world *world,
                            flrep_tick_scratch *s, uint64_t *tick_out, bool *keyframe_out,
                            const dg_event **events_out, size_t *nev_out, dg_error *err)
{
    uint64_t start = dg_cur_offset(c);
    tick_hdr th;
    read_tick_hdr(c, &th);
    if (!c->ok)
        return err ? err->code : DG_E_TRUNCATED;
    bool keyframe = th.flags & 1;
    if ((th.flags & ~1u) != 0 || keyframe != (seq == 0)) {
        c->pos = (size_t)(start + 8 - c->base);
        dg_cur_fail(c, DG_E_MALFORMED, "tick %llu: expected flags %u (%s), found 0x%04X",
                    (unsigned long long)th.tick, seq == 0 ? 1u : 0u,
                    seq == 0 ? "keyframe: the first tick of a chunk" : "delta", th.flags);
        return err ? err->code : DG_E_MALFORMED;
    }
    if ((uint64_t)th.nrec * 3 > (uint64_t)th.rec_bytes * 8) {
        dg_cur_fail(c, DG_E_MALFORMED, "tick %llu: expected at most %llu records in %u record bytes, found %u",
                    (unsigned long long)th.tick, (unsigned long long)th.rec_bytes * 8 / 3, th.rec_bytes, th.nrec);
        return err ? err->code : DG_E_MALFORMED;
    }
    const uint8_t *block = dg_cur_bytes(c, th.rec_bytes, "record block");
    if (!block)
        return err ? err->code : DG_E_TRUNCATED;
    if ((uint64_t)th.nev * FLREP_EVENT_HDR_SIZE > dg_cur_left(c)) {
        dg_cur_fail(c, DG_E_TRUNCATED, "tick %llu: expected %u events (at least 11 bytes each), found %zu bytes left",
                    (unsigned long long)th.tick, th.nev, dg_cur_left(c));
        return err ? err->code : DG_E_TRUNCATED;
    }
    if (!reserve_events(s, th.nev))
        return dg_error_set(err, DG_E_NOMEM, start, c->where, "out of memory for tick %llu",
                            (unsigned long long)th.tick);
    dg_status st = ctx->v2 ? dg_flrep__decode_records2(block, th.rec_bytes, th.nrec, th.block_offset, keyframe, th.tick,
                                                   ctx, world, s, c->where, err)
                           : decode_and_merge(block, world, &th, keyframe, ctx, s, c->where, err);
    size_t nev = 0;
    if (st == DG_OK)
        st = decode_events(c, &th, s, &nev);
    if (st != DG_OK) {
        c->ok = false;
        name_tick_in_error(err, c->where, th.tick);
        return st;
    }
    dg_flrep__world_swap(world, &s->next);
    *tick_out = th.tick;
    *keyframe_out = keyframe;
    *events_out = s->events;
    *nev_out = nev;
    return DG_OK;
}

/* ---- encoding (the per-record part is flrep_encode.h) --------------------------------- */

void dg_flrep__write_events(dg_buf *out, uint64_t tick, const dg_event *ev, size_t nev)
{
    for (size_t i = 0; i < nev; i++) {
        const dg_event *e = &ev[i];
        dg_buf_u8(out, e->kind);
        dg_buf_u64(out, tick);
        size_t len_at = out->len;
        dg_buf_u16(out, 0);
        size_t start = out->len;
        switch (e->kind) {
        case DG_EV_KILL: dg_buf_u32(out, e->a); dg_buf_u32(out, e->b); dg_buf_u16(out, e->c); break;
        case DG_EV_SPAWN: dg_buf_u32(out, e->a); dg_buf_u16(out, e->c); dg_buf_u16(out, e->d); break;
        case DG_EV_CHAT:
            dg_buf_u32(out, e->a); dg_buf_u16(out, e->c); dg_buf_str16(out, e->text, e->text_len); break;
        case DG_EV_ADMIN:
            dg_buf_u32(out, e->a); dg_buf_u32(out, e->b); dg_buf_u16(out, e->c);
            dg_buf_str16(out, e->text, e->text_len); break;
        default: dg_buf_u16(out, e->c); dg_buf_u16(out, e->d); break;
        }
        if (out->ok)
            dg_put_le16(out->p + len_at, (uint16_t)(out->len - start));
    }
}

/* A field the kind does not store would be lost on the way through the file and break the gate
 * in a confusing way: refuse it at the writer instead. */
static bool event_fields_stored(const dg_event *e)
{
    switch (e->kind) {
    case DG_EV_KILL: return e->d == 0 && e->text_len == 0;
    case DG_EV_SPAWN: return e->b == 0 && e->text_len == 0;
    case DG_EV_CHAT: return e->b == 0 && e->d == 0;
    case DG_EV_ADMIN: return e->d == 0;
    default: return e->a == 0 && e->b == 0 && e->text_len == 0;
    }
}

dg_status dg_flrep__check_events(uint64_t tick, const dg_event *ev, size_t nev, dg_error *err)
{
    if (nev > UINT16_MAX)
        return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "writer", "tick %llu: expected at most 65535 events, found %zu",
                            (unsigned long long)tick, nev);
    for (size_t i = 0; i < nev; i++) {
        const dg_event *e = &ev[i];
        if (e->kind < DG_EV_KILL || e->kind > DG_EV_ALERT)
            return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "writer", "tick %llu event %zu: expected kind 1..5, found %u",
                                (unsigned long long)tick, i, e->kind);
        if (e->tick != tick)
            return dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "writer",
                                "tick %llu event %zu: expected the event stamped with this tick, found %llu",
                                (unsigned long long)tick, i, (unsigned long long)e->tick);
        if (!event_fields_stored(e))
            return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "writer",
                                "tick %llu event %zu (kind %u): expected only the fields its kind stores "
                                "(FORMAT-flrep.md section 7) to be set, found others non-zero",
                                (unsigned long long)tick, i, e->kind);
        if (e->text_len && !dg_utf8_valid((const uint8_t *)e->text, e->text_len))
            return dg_error_set(err, DG_E_UTF8, DG_OFFSET_NONE, "writer", "tick %llu event %zu: text is not UTF-8",
                                (unsigned long long)tick, i);
    }
    return DG_OK;
}

/* The record loop (flrep_encode.h) in this file's instruction set; the AVX2 copy is flrep_tick_avx2.c's. */
static __attribute__((noinline)) bool encode_records(dg_bitw *b, const flrep_tick_ctx *tc, const flrep_world *world,
                                                     size_t wn, flrep_world *next, const dg_qentity *cur, size_t n,
                                                     size_t *nrec)
{
    return encode_records_body(b, tc, world, wn, next, cur, n, nrec, false);
}

/* The end of a tick's encoding, for both formats' record layouts: the writer's self-check verdict,
 * the tick header, the record block, the events; then the encoded world becomes the current one. */
dg_status dg_flrep__tick_emit(dg_buf *out, uint64_t tick, bool keyframe, flrep_world *world, flrep_world *next,
                              const dg_buf *bits, size_t nrec, bool tracked, const dg_event *ev, size_t nev,
                              dg_error *err)
{
    if (!tracked)
        return dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "writer",
                            "tick %llu: a DELTA record does not reproduce the state it encodes (codec bug)",
                            (unsigned long long)tick);
    if (nrec > UINT16_MAX)
        return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "writer",
                            "tick %llu: expected at most 65535 entity records, found %zu", (unsigned long long)tick, nrec);
    dg_buf_u64(out, tick);
    dg_buf_u16(out, keyframe ? 1 : 0);
    dg_buf_u16(out, (uint16_t)nrec);
    dg_buf_u16(out, (uint16_t)nev);
    dg_buf_u32(out, (uint32_t)bits->len);
    dg_buf_put(out, bits->p, bits->len);
    dg_flrep__write_events(out, tick, ev, nev);
    if (!out->ok || !bits->ok)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "writer", "out of memory encoding tick %llu",
                            (unsigned long long)tick);
    dg_flrep__world_swap(world, next);
    return DG_OK;
}

dg_status dg_flrep__encode_tick(dg_buf *out, uint64_t tick, bool keyframe, const flrep_tick_ctx *tc,
                            flrep_world *world, flrep_world *next, const dg_qentity *cur, size_t n, const dg_event *ev,
                            size_t nev, dg_buf *bits, dg_error *err)
{
    if (dg_flrep__check_events(tick, ev, nev, err))
        return err ? err->code : DG_E_RANGE;
    if (!dg_flrep__world_reserve(next, n))
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "writer", "out of memory for %zu entities", n);
    next->n = 0;
    bool tracked;
    dg_buf_reset(bits);
    dg_bitw b;
    /* one record is at most 65 (id gap) + 2 + 9 * 71 (residuals) + 52 + 70 bits < 96 bytes */
    if (!dg_bitw_begin(&b, bits, (n + (keyframe ? 0 : world->n)) * 96))
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "writer", "out of memory encoding tick %llu",
                            (unsigned long long)tick);
    size_t nrec = 0;
    size_t wn = keyframe ? 0 : world->n;
#if DG_FLREP_AVX2
    if (tc->fast_avx2)
        tracked = dg_flrep__encode_records_avx2(&b, tc, world, wn, next, cur, n, &nrec);
    else
#endif
        tracked = encode_records(&b, tc, world, wn, next, cur, n, &nrec);
    /* test hook: from the hooked tick on, the writer's self-check fails (the reader's double delta) */
    tracked &= keyframe || !tc->fault_double_delta || tick < tc->fault_double_delta_tick;
    next->n = n;
    dg_bitw_flush(&b);
    return dg_flrep__tick_emit(out, tick, keyframe, world, next, bits, nrec, tracked, ev, nev, err);
}
