/* codec/rply/rply_internal.h — private helpers shared by the RPLY reader, state, snapshot and writer. */
#ifndef DETGATE_RPLY_INTERNAL_H
#define DETGATE_RPLY_INTERNAL_H

#include <string.h>

#include "cursor.h"
#include "detgate/rply.h"

#if defined(__GNUC__)
#define RPLY_COLD __attribute__((cold, noinline))
#define RPLY_LIKELY(x) __builtin_expect(!!(x), 1)
#define RPLY_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define RPLY_COLD
#define RPLY_LIKELY(x) (x)
#define RPLY_UNLIKELY(x) (x)
#endif

static inline float rply__f32(const uint8_t *p)
{
    uint32_t b = dg_le32(p);
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}
static inline double rply__f64(const uint8_t *p)
{
    uint64_t b = dg_le64(p);
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}
static inline uint32_t rply__f32_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}
static inline uint64_t rply__f64_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* ---- the state's layout (opaque in detgate/rply.h) ------------------------------------------ */
/* A live entity: what callers see first (dg_rply_state_find returns &pub), then its list heads. */
typedef struct dg_rply__entity {
    dg_rply_entity pub;
    uint32_t props;        /* head of the property list (pool index + 1, 0 = none) */
    uint32_t anims;        /* head of the animation list */
} dg_rply__entity;
/* Pool nodes: the public value first, then the link (the next node, or the free list's). */
typedef struct dg_rply__prop {
    dg_rply_prop pub;
    uint32_t next;
} dg_rply__prop;
typedef struct dg_rply__anim {
    dg_rply_anim pub;
    uint32_t next;
} dg_rply__anim;

struct dg_rply_state {
    uint32_t tick;          /* the tick the state is complete through */
    bool started;           /* false before tick 0 was applied */
    uint32_t live_count;
    size_t live_cap;
    dg_rply__entity *live;  /* dense, in no useful order; by id through slot / bits */
    uint16_t *slot;         /* [65536] dense index + 1, 0 = not live */
    uint64_t *bits;         /* [1024] live bitmap, for id order */
    dg_rply__prop *props;   /* pools with free lists; indices are +1 so 0 means none */
    size_t props_cap;
    uint32_t props_used, props_free;
    dg_rply__anim *anims;
    size_t anims_cap;
    uint32_t anims_used, anims_free;
};

/* Sets up / releases a state the caller stores (the player embeds one). */
dg_status dg_rply__state_init(dg_rply_state *s, dg_error *err);
void dg_rply__state_fini(dg_rply_state *s);

typedef struct dg_rply_checkpoint dg_rply_checkpoint;
struct dg_rply_player {
    const dg_rply_file *f;
    dg_rply_iter it;
    dg_rply_state state;
    dg_rply_checkpoint *cps;   /* one per keyframe passed (state just before its TICK) */
    uint32_t cp_count;
    size_t cp_cap;
    size_t cp_bytes, cp_budget;
    dg_rply_op pending;        /* the decoded op that opens the next tick (saves decoding it twice) */
    dg_rply_iter pending_it;   /* the iterator after it */
    bool has_pending;
    uint64_t ops_applied;
};

/* Head sizes by opcode, -1 for undefined opcodes (generated from DG_RPLY_OP_LIST). */
extern const signed char dg_rply__head[256];

/* Bit-exact equality of two PROP values (NaN payloads included). */
bool dg_rply__value_equal(const dg_rply_value *a, const dg_rply_value *b);

/* Wrapping i32 add: accumulators are defined modulo 2^32 (docs/FORMAT-rply.md), so no UB. */
static inline int32_t rply__wrap_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* Applies XFORM / XFORM_D to a transform exactly as the reader rebuilds it (shared with the writer
 * so the recorder's tracked value and the player's can never differ). The preconditions (mask
 * rules, entity mode) are the caller's to check: rply__xstate_delta_refusal names a violation. */
static inline void rply__xstate_apply_xform(dg_rply_xstate *x, const dg_rply_op *op)
{
    uint8_t m = op->mask;
    if (m & DG_RPLY_XF_POS) {
        for (int i = 0; i < 3; i++)
            x->pos_bits[i] = rply__f32_bits(op->u.xform.pos[i]);
        x->xf |= DG_RPLY_HAS_POS;
    }
    if (m & DG_RPLY_XF_ROT) {
        for (int i = 0; i < 3; i++)
            x->rot[i] = op->u.xform.rot[i];
        x->xf = (uint8_t)((x->xf & DG_RPLY_HAS_POS) | DG_RPLY_HAS_ROT);
    }
    if (m & DG_RPLY_XF_YAW) {
        x->rot[0] = op->u.xform.yaw;
        x->rot[1] = x->rot[2] = 0;
        x->xf = (uint8_t)((x->xf & DG_RPLY_HAS_POS) | DG_RPLY_HAS_YAW);
    }
    /* The spec: "An XFORM resets the entity's accumulated deltas" — all of them, whatever it carries. */
    for (int i = 0; i < 3; i++)
        x->dpos[i] = x->drot[i] = 0;
}

static inline const char *rply__xstate_delta_refusal(const dg_rply_xstate *x, uint8_t mask)
{
    if (x->xf == 0)
        return "XFORM_D before any XFORM of this entity";
    if ((mask & (DG_RPLY_XD_POS8 | DG_RPLY_XD_POS16)) && !(x->xf & DG_RPLY_HAS_POS))
        return "position delta on an entity whose XFORMs carried no position";
    if (mask & DG_RPLY_XD_YAW) {
        if (x->xf & DG_RPLY_HAS_ROT)
            return "yaw delta on a tilted entity";
        if (!(x->xf & DG_RPLY_HAS_YAW))
            return "yaw delta on an entity whose XFORMs carried no rotation";
    }
    if (mask & DG_RPLY_XD_ROT) {
        if (x->xf & DG_RPLY_HAS_YAW)
            return "axis-angle delta on a yaw-only entity";
        if (!(x->xf & DG_RPLY_HAS_ROT))
            return "axis-angle delta on an entity whose XFORMs carried no rotation";
    }
    return NULL;
}

static inline void rply__xstate_apply_delta(dg_rply_xstate *x, const dg_rply_op *op)
{
    uint8_t m = op->mask;
    if (m & (DG_RPLY_XD_POS8 | DG_RPLY_XD_POS16))
        for (int i = 0; i < 3; i++)
            x->dpos[i] = rply__wrap_add(x->dpos[i], op->u.xform_d.dpos[i]);
    if (m & DG_RPLY_XD_YAW)
        x->drot[0] = rply__wrap_add(x->drot[0], op->u.xform_d.dyaw);
    if (m & DG_RPLY_XD_ROT)
        for (int i = 0; i < 3; i++)
            x->drot[i] = rply__wrap_add(x->drot[i], op->u.xform_d.drot[i]);
}

/* Every op but the hot ones below, with all state rules (rply_state.c). */
dg_status dg_rply__apply_other(dg_rply_state *s, const dg_rply_file *f, const dg_rply_op *op,
                            dg_error *err);

/* One op applied to the state: ticks and transforms inline, the rest out of line. */
static inline dg_status rply__apply(dg_rply_state *s, const dg_rply_file *f, const dg_rply_op *op,
                                    dg_error *err)
{
    s->tick = op->tick;
    s->started = true;
    if (op->code == DG_RPLY_OP_XFORM_D) {
        uint16_t k = s->slot[op->entity];
        if (RPLY_LIKELY(k != 0)) {
            dg_rply_xstate *x = &s->live[k - 1].pub.x;
            if (RPLY_LIKELY(rply__xstate_delta_refusal(x, op->mask) == NULL)) {
                rply__xstate_apply_delta(x, op);
                return DG_OK;
            }
        }
    } else if (op->code == DG_RPLY_OP_TICK_NEXT || op->code == DG_RPLY_OP_TICK) {
        return DG_OK;
    } else if (op->code == DG_RPLY_OP_XFORM) {
        uint16_t k = s->slot[op->entity];
        if (RPLY_LIKELY(k != 0)) {
            rply__xstate_apply_xform(&s->live[k - 1].pub.x, op);
            return DG_OK;
        }
    }
    return dg_rply__apply_other(s, f, op, err);
}

#endif
