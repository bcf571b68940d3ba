/* codec/rply/rply_state.c — the RPLY state rebuilder: applies decoded ops to the world (live
 * entities, quantized transforms, properties, animation handles, last snapshot) and the player on
 * top of it (tick-atomic advance, keyframe checkpoints, seek). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "rply_internal.h"

#define ID_SLOTS 65536u
#define BIT_WORDS (ID_SLOTS / 64u)

bool dg_rply_xstate_equal(const dg_rply_xstate *a, const dg_rply_xstate *b)
{
    if (a->xf != b->xf)
        return false;
    for (int i = 0; i < 3; i++)
        if (a->pos_bits[i] != b->pos_bits[i] || a->dpos[i] != b->dpos[i] || a->rot[i] != b->rot[i] ||
            a->drot[i] != b->drot[i])
            return false;
    return true;
}

void dg_rply_xstate_position(const dg_rply_xstate *x, double out[3])
{
    for (int i = 0; i < 3; i++) {
        float f;
        memcpy(&f, &x->pos_bits[i], sizeof f);
        out[i] = (double)f + (double)x->dpos[i] / 32.0;
    }
}

void dg_rply_xstate_rotation(const dg_rply_xstate *x, double out[3])
{
    const double unit = 3.14159265358979323846 / 32767.0;
    if (x->xf & DG_RPLY_HAS_YAW) {
        out[0] = x->rot[0] * unit + x->drot[0] / 64.0;
        out[1] = out[2] = 0.0;
        return;
    }
    for (int i = 0; i < 3; i++)
        out[i] = x->rot[i] * unit + x->drot[i] / 128.0;
}

bool dg_rply__value_equal(const dg_rply_value *a, const dg_rply_value *b)
{
    if (a->tag != b->tag)
        return false;
    switch (a->tag) {
    case DG_RPLY_PROP_BOOL: return a->u.b == b->u.b;
    case DG_RPLY_PROP_NUMBER: return rply__f64_bits(a->u.num) == rply__f64_bits(b->u.num);
    case DG_RPLY_PROP_STRING:
    case DG_RPLY_PROP_ENUM: return a->u.str == b->u.str;
    case DG_RPLY_PROP_COLOR3: return memcmp(a->u.rgb, b->u.rgb, 3) == 0;
    case DG_RPLY_PROP_VECTOR3:
        for (int i = 0; i < 3; i++)
            if (rply__f32_bits(a->u.vec[i]) != rply__f32_bits(b->u.vec[i]))
                return false;
        return true;
    }
    return false;
}

/* ---- state storage ------------------------------------------------------------------------- */
dg_status dg_rply__state_init(dg_rply_state *s, dg_error *err)
{
    memset(s, 0, sizeof *s);
    s->slot = calloc(ID_SLOTS, sizeof *s->slot);
    s->bits = calloc(BIT_WORDS, sizeof *s->bits);
    if (!s->slot || !s->bits) {
        dg_rply__state_fini(s);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply state", "id tables");
    }
    return DG_OK;
}

void dg_rply__state_fini(dg_rply_state *s)
{
    free(s->live);
    free(s->slot);
    free(s->bits);
    free(s->props);
    free(s->anims);
    memset(s, 0, sizeof *s);
}

dg_rply_state *dg_rply_state_new(dg_error *err)
{
    dg_rply_state *s = malloc(sizeof *s);
    if (!s) {
        dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply state", "state");
        return NULL;
    }
    if (dg_rply__state_init(s, err) != DG_OK) {
        free(s);
        return NULL;
    }
    return s;
}

void dg_rply_state_free(dg_rply_state *s)
{
    if (!s)
        return;
    dg_rply__state_fini(s);
    free(s);
}

uint32_t dg_rply_state_tick(const dg_rply_state *s) { return s->tick; }
bool dg_rply_state_started(const dg_rply_state *s) { return s->started; }
uint32_t dg_rply_state_live_count(const dg_rply_state *s) { return s->live_count; }

void dg_rply_state_clear(dg_rply_state *s)
{
    for (uint32_t i = 0; i < s->live_count; i++)
        s->slot[s->live[i].pub.id] = 0;
    memset(s->bits, 0, BIT_WORDS * sizeof *s->bits);
    s->live_count = 0;
    s->props_used = s->props_free = 0;
    s->anims_used = s->anims_free = 0;
    s->tick = 0;
    s->started = false;
}

dg_status dg_rply_state_copy(dg_rply_state *dst, const dg_rply_state *src, dg_error *err)
{
    if (!dg_grow((void **)&dst->live, &dst->live_cap, src->live_count, sizeof *dst->live) ||
        !dg_grow((void **)&dst->props, &dst->props_cap, src->props_used, sizeof *dst->props) ||
        !dg_grow((void **)&dst->anims, &dst->anims_cap, src->anims_used, sizeof *dst->anims))
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply state", "copy");
    dg_rply_state_clear(dst);
    if (src->live_count)
        memcpy(dst->live, src->live, src->live_count * sizeof *src->live);
    if (src->props_used)
        memcpy(dst->props, src->props, src->props_used * sizeof *src->props);
    if (src->anims_used)
        memcpy(dst->anims, src->anims, src->anims_used * sizeof *src->anims);
    memcpy(dst->slot, src->slot, ID_SLOTS * sizeof *src->slot);
    memcpy(dst->bits, src->bits, BIT_WORDS * sizeof *src->bits);
    dst->live_count = src->live_count;
    dst->props_used = src->props_used;
    dst->props_free = src->props_free;
    dst->anims_used = src->anims_used;
    dst->anims_free = src->anims_free;
    dst->tick = src->tick;
    dst->started = src->started;
    return DG_OK;
}

static inline dg_rply__entity *find_mut(dg_rply_state *s, uint16_t id)
{
    uint16_t k = s->slot[id];
    return k ? &s->live[k - 1] : NULL;
}

const dg_rply_entity *dg_rply_state_find(const dg_rply_state *s, uint16_t id)
{
    uint16_t k = s->slot[id];
    return k ? &s->live[k - 1].pub : NULL;
}

/* The entity a public pointer is the first member of. */
static inline const dg_rply__entity *entity_of(const dg_rply_entity *e)
{
    return (const dg_rply__entity *)(const void *)e;
}

uint16_t dg_rply_state_next_id(const dg_rply_state *s, uint16_t after)
{
    uint32_t i = (uint32_t)after + 1;
    while (i < ID_SLOTS) {
        uint64_t w = s->bits[i / 64] >> (i % 64);
        if (w)
            return (uint16_t)(i + (uint32_t)__builtin_ctzll(w));
        i = (i / 64 + 1) * 64;
    }
    return 0;
}

const dg_rply_prop *dg_rply_state_prop_first(const dg_rply_state *s, const dg_rply_entity *e)
{
    uint32_t k = entity_of(e)->props;
    return k ? &s->props[k - 1].pub : NULL;
}
const dg_rply_prop *dg_rply_state_prop_next(const dg_rply_state *s, const dg_rply_prop *p)
{
    uint32_t k = ((const dg_rply__prop *)(const void *)p)->next;
    return k ? &s->props[k - 1].pub : NULL;
}
const dg_rply_prop *dg_rply_state_prop_get(const dg_rply_state *s, const dg_rply_entity *e,
                                           uint16_t name)
{
    for (const dg_rply_prop *p = dg_rply_state_prop_first(s, e); p; p = dg_rply_state_prop_next(s, p))
        if (p->name == name)
            return p;
    return NULL;
}
const dg_rply_anim *dg_rply_state_anim_first(const dg_rply_state *s, const dg_rply_entity *e)
{
    uint32_t k = entity_of(e)->anims;
    return k ? &s->anims[k - 1].pub : NULL;
}
const dg_rply_anim *dg_rply_state_anim_next(const dg_rply_state *s, const dg_rply_anim *a)
{
    uint32_t k = ((const dg_rply__anim *)(const void *)a)->next;
    return k ? &s->anims[k - 1].pub : NULL;
}

static bool entity_equal(const dg_rply_state *sa, const dg_rply_entity *a, const dg_rply_state *sb,
                         const dg_rply_entity *b)
{
    if (a->id != b->id || a->parent != b->parent || a->descriptor != b->descriptor ||
        a->spawn_tick != b->spawn_tick || !dg_rply_xstate_equal(&a->x, &b->x) ||
        a->has_snapshot != b->has_snapshot || a->snap_offset != b->snap_offset ||
        a->snap_len != b->snap_len)
        return false;
    const dg_rply_prop *pa = dg_rply_state_prop_first(sa, a), *pb = dg_rply_state_prop_first(sb, b);
    for (; pa && pb; pa = dg_rply_state_prop_next(sa, pa), pb = dg_rply_state_prop_next(sb, pb))
        if (pa->name != pb->name || !dg_rply__value_equal(&pa->value, &pb->value))
            return false;
    if (pa || pb)
        return false;
    const dg_rply_anim *aa = dg_rply_state_anim_first(sa, a), *ab = dg_rply_state_anim_first(sb, b);
    for (; aa && ab; aa = dg_rply_state_anim_next(sa, aa), ab = dg_rply_state_anim_next(sb, ab))
        if (aa->handle != ab->handle || aa->anim != ab->anim || aa->fade != ab->fade ||
            aa->speed != ab->speed)
            return false;
    return !aa && !ab;
}

bool dg_rply_state_equal(const dg_rply_state *a, const dg_rply_state *b)
{
    if (a->tick != b->tick || a->started != b->started || a->live_count != b->live_count)
        return false;
    for (uint16_t id = dg_rply_state_next_id(a, 0); id; id = dg_rply_state_next_id(a, id)) {
        const dg_rply_entity *eb = dg_rply_state_find(b, id);
        if (!eb || !entity_equal(a, dg_rply_state_find(a, id), b, eb))
            return false;
    }
    return true;
}

/* ---- pools: singly linked lists kept sorted by key, free list threaded through `next` ------- */
static uint32_t prop_alloc(dg_rply_state *s)
{
    if (s->props_free) {
        uint32_t k = s->props_free;
        s->props_free = s->props[k - 1].next;
        return k;
    }
    if (s->props_used == UINT32_MAX - 1 ||
        !dg_grow((void **)&s->props, &s->props_cap, s->props_used + 1, sizeof *s->props))
        return 0;
    return ++s->props_used;
}

static uint32_t anim_alloc(dg_rply_state *s)
{
    if (s->anims_free) {
        uint32_t k = s->anims_free;
        s->anims_free = s->anims[k - 1].next;
        return k;
    }
    if (s->anims_used == UINT32_MAX - 1 ||
        !dg_grow((void **)&s->anims, &s->anims_cap, s->anims_used + 1, sizeof *s->anims))
        return 0;
    return ++s->anims_used;
}

/* Sorted insert into a pool list. The pool may move when it grows, so the insertion point is kept
 * as the index of the previous node (0 = the list head), never as a pointer into the pool. */
static bool prop_set(dg_rply_state *s, dg_rply__entity *e, uint16_t name, const dg_rply_value *v)
{
    uint32_t prev = 0, cur = e->props;
    while (cur && s->props[cur - 1].pub.name < name) {
        prev = cur;
        cur = s->props[cur - 1].next;
    }
    if (cur && s->props[cur - 1].pub.name == name) {
        s->props[cur - 1].pub.value = *v;
        return true;
    }
    uint32_t k = prop_alloc(s);
    if (!k)
        return false;
    dg_rply__prop *p = &s->props[k - 1];
    p->pub.name = name;
    p->pub.value = *v;
    p->next = cur;
    if (prev)
        s->props[prev - 1].next = k;
    else
        e->props = k;
    return true;
}

static bool anim_play(dg_rply_state *s, dg_rply__entity *e, const dg_rply_op *op)
{
    uint32_t prev = 0, cur = e->anims;
    while (cur && s->anims[cur - 1].pub.handle < op->u.anim.handle) {
        prev = cur;
        cur = s->anims[cur - 1].next;
    }
    if (!cur || s->anims[cur - 1].pub.handle != op->u.anim.handle) {
        uint32_t k = anim_alloc(s);
        if (!k)
            return false;
        s->anims[k - 1].next = cur;
        s->anims[k - 1].pub.handle = op->u.anim.handle;
        if (prev)
            s->anims[prev - 1].next = k;
        else
            e->anims = k;
        cur = k;
    }
    dg_rply_anim *a = &s->anims[cur - 1].pub;
    a->anim = op->u.anim.anim;
    a->fade = op->u.anim.fade;
    a->speed = op->u.anim.speed;
    return true;
}

static dg_rply__anim *anim_find(dg_rply_state *s, dg_rply__entity *e, uint8_t handle, uint32_t **link_out)
{
    uint32_t *link = &e->anims;
    while (*link && s->anims[*link - 1].pub.handle < handle)
        link = &s->anims[*link - 1].next;
    if (link_out)
        *link_out = link;
    return (*link && s->anims[*link - 1].pub.handle == handle) ? &s->anims[*link - 1] : NULL;
}

static void anim_stop(dg_rply_state *s, dg_rply__entity *e, uint8_t handle)
{
    uint32_t *link;
    dg_rply__anim *a = anim_find(s, e, handle, &link);
    if (!a)
        return;
    uint32_t k = *link;
    *link = a->next;
    a->next = s->anims_free;
    s->anims_free = k;
}

static void release_lists(dg_rply_state *s, dg_rply__entity *e)
{
    while (e->props) {
        uint32_t k = e->props;
        e->props = s->props[k - 1].next;
        s->props[k - 1].next = s->props_free;
        s->props_free = k;
    }
    while (e->anims) {
        uint32_t k = e->anims;
        e->anims = s->anims[k - 1].next;
        s->anims[k - 1].next = s->anims_free;
        s->anims_free = k;
    }
}

/* ---- applying ops -------------------------------------------------------------------------- */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
RPLY_COLD static dg_status state_fail(const dg_rply_file *f, const dg_rply_op *op, dg_error *err,
                                      const char *fmt, ...)
{
    char where[96];
    snprintf(where, sizeof where, "op %s at stream offset %u (tick %u)", dg_rply_op_name(op->code),
             op->offset, op->tick);
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return dg_error_set(err, DG_E_STATE, (f ? f->ops_at : 0) + op->offset, where, "%s", text);
}

RPLY_COLD static dg_status delta_fail(const dg_rply_file *f, const dg_rply_op *op, dg_error *err,
                                      const char *why)
{
    char where[96];
    snprintf(where, sizeof where, "op XFORM_D at stream offset %u (tick %u)", op->offset, op->tick);
    return dg_error_set(err, DG_E_STATE, (f ? f->ops_at : 0) + op->offset, where,
                        "entity %u: %s (mask 0x%02x)", op->entity, why, op->mask);
}

static dg_status apply_spawn(dg_rply_state *s, const dg_rply_file *f, const dg_rply_op *op,
                             dg_error *err)
{
    uint16_t id = op->entity, parent = op->u.spawn.parent;
    if (id == 0)
        return state_fail(f, op, err, "SPAWN of entity id 0 (0 means none)");
    if (s->slot[id])
        return state_fail(f, op, err, "SPAWN of entity %u, which is already live", id);
    if (parent != 0 && !s->slot[parent])
        return state_fail(f, op, err, "SPAWN of entity %u with parent %u, which is not live", id,
                          parent);
    if (!dg_grow((void **)&s->live, &s->live_cap, s->live_count + 1, sizeof *s->live))
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply state", "entities");
    dg_rply__entity *e = &s->live[s->live_count];
    memset(e, 0, sizeof *e);
    e->pub.id = id;
    e->pub.parent = parent;
    e->pub.descriptor = op->u.spawn.descriptor;
    e->pub.spawn_tick = op->tick;
    s->slot[id] = (uint16_t)++s->live_count;
    s->bits[id / 64] |= 1ull << (id % 64);
    return DG_OK;
}

static void despawn(dg_rply_state *s, dg_rply__entity *e)
{
    uint16_t id = e->pub.id;
    release_lists(s, e);
    uint32_t k = s->slot[id] - 1u, last = s->live_count - 1u;
    if (k != last) {
        s->live[k] = s->live[last];
        s->slot[s->live[k].pub.id] = (uint16_t)(k + 1);
    }
    s->live_count--;
    s->slot[id] = 0;
    s->bits[id / 64] &= ~(1ull << (id % 64));
}

dg_status dg_rply_state_apply(dg_rply_state *s, const dg_rply_file *f, const dg_rply_op *op,
                              dg_error *err)
{
    return rply__apply(s, f, op, err);
}

dg_status dg_rply__apply_other(dg_rply_state *s, const dg_rply_file *f, const dg_rply_op *op,
                            dg_error *err)
{
    switch (op->code) {
    case DG_RPLY_OP_TICK:
    case DG_RPLY_OP_TICK_NEXT:
    case DG_RPLY_OP_EVENT:
    case DG_RPLY_OP_CUSTOM:
        return DG_OK;
    case DG_RPLY_OP_SPAWN:
        return apply_spawn(s, f, op, err);
    default:
        break;
    }
    dg_rply__entity *ie = find_mut(s, op->entity);
    if (RPLY_UNLIKELY(!ie))
        return state_fail(f, op, err, "entity %u is not live", op->entity);
    dg_rply_entity *e = &ie->pub;
    switch (op->code) {
    case DG_RPLY_OP_XFORM_D: {
        const char *why = rply__xstate_delta_refusal(&e->x, op->mask);
        if (RPLY_UNLIKELY(why != NULL))
            return delta_fail(f, op, err, why);
        rply__xstate_apply_delta(&e->x, op);
        return DG_OK;
    }
    case DG_RPLY_OP_XFORM:
        rply__xstate_apply_xform(&e->x, op);
        return DG_OK;
    case DG_RPLY_OP_DESPAWN:
        despawn(s, ie);
        return DG_OK;
    case DG_RPLY_OP_PROP:
        if (!prop_set(s, ie, op->u.prop.name, &op->u.prop.value))
            return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply state", "properties");
        return DG_OK;
    case DG_RPLY_OP_ANIM_PLAY:
        if (!anim_play(s, ie, op))
            return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply state", "animations");
        return DG_OK;
    case DG_RPLY_OP_ANIM_STOP:
        anim_stop(s, ie, op->u.anim.handle);
        return DG_OK;
    case DG_RPLY_OP_ANIM_SPEED: {
        dg_rply__anim *a = anim_find(s, ie, op->u.anim.handle, NULL);
        if (a)
            a->pub.speed = op->u.anim.speed;
        return DG_OK;
    }
    case DG_RPLY_OP_SNAPSHOT:
        e->has_snapshot = 1;
        e->snap_offset = (uint32_t)(op->u.snapshot.data - (f ? f->ops : op->u.snapshot.data));
        e->snap_len = op->u.snapshot.len;
        return DG_OK;
    default:
        return state_fail(f, op, err, "opcode %u has no state rule", op->code);
    }
}
