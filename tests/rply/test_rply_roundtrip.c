/* tests/rply/test_rply_roundtrip.c — writer -> bytes -> reader: random sessions compared op by op
 * and state by state with a test-side model, XFORM_D accumulation over 100,000 ticks, seek versus
 * linear playback at every tick, the writer's policies, and the snapshot v10 round trip. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "rply_internal.h" /* state_equality_checks changes the state from inside */
#include "rply_test_util.h"

static uint64_t rng_state;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}
static uint32_t rnd_below(uint32_t n) { return rnd() % n; }
static double rnd_unit(void) { return (double)rnd() / 4294967296.0; }

#define OK(call)                                                                                    \
    do {                                                                                            \
        dg_error e_;                                                                                \
        dg_error_clear(&e_);                                                                        \
        dg_status s_ = (call);                                                                      \
        if (s_ != DG_OK) {                                                                          \
            char t_[600];                                                                           \
            dg_error_format(&e_, t_, sizeof t_);                                                    \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, t_);                                 \
            fail();                                                                                 \
        }                                                                                           \
    } while (0)
#define E (&e_)

/* ---- the test's own model of the rebuilt state (independent of the codec's) --------------- */
#define MAXE 400
#define NNAMES 12
#define NHANDLES 6
typedef struct model_ent {
    bool live;
    uint16_t parent, desc;
    uint32_t spawn_tick;
    uint32_t pos_bits[3];
    int32_t dpos[3];
    int16_t rot[3];
    int32_t drot[3];
    uint8_t xf;
    bool has_prop[NNAMES];
    dg_rply_value prop[NNAMES];
    uint16_t prop_name[NNAMES];
    bool has_anim[NHANDLES];
    uint16_t anim[NHANDLES];
    uint8_t fade[NHANDLES];
    int16_t speed[NHANDLES];
    bool has_snap;
    uint8_t snap[128];
    uint32_t snap_len;
} model_ent;

typedef struct model {
    model_ent e[MAXE];
    uint32_t live;
} model;

static void model_compare(const model *m, const dg_rply_state *s, const dg_rply_file *f)
{
    assert_int_equal(dg_rply_state_live_count(s), m->live);
    uint32_t seen = 0;
    for (uint16_t id = dg_rply_state_next_id(s, 0); id; id = dg_rply_state_next_id(s, id)) {
        assert_true(id < MAXE);
        const model_ent *me = &m->e[id];
        const dg_rply_entity *e = dg_rply_state_find(s, id);
        assert_true(me->live);
        assert_int_equal(e->parent, me->parent);
        assert_int_equal(e->descriptor, me->desc);
        assert_int_equal(e->spawn_tick, me->spawn_tick);
        assert_int_equal(e->x.xf, me->xf);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(e->x.pos_bits[i], me->pos_bits[i]);
            assert_int_equal(e->x.dpos[i], me->dpos[i]);
            assert_int_equal(e->x.rot[i], me->rot[i]);
            assert_int_equal(e->x.drot[i], me->drot[i]);
        }
        /* properties: the model's, in increasing name id */
        const dg_rply_prop *p = dg_rply_state_prop_first(s, e);
        uint16_t order[NNAMES];
        int n = 0;
        for (int k = 0; k < NNAMES; k++)
            if (me->has_prop[k])
                order[n++] = (uint16_t)k;
        for (int a = 0; a < n; a++)
            for (int b = a + 1; b < n; b++)
                if (me->prop_name[order[b]] < me->prop_name[order[a]]) {
                    uint16_t t = order[a];
                    order[a] = order[b];
                    order[b] = t;
                }
        for (int k = 0; k < n; k++, p = dg_rply_state_prop_next(s, p)) {
            assert_non_null(p);
            assert_int_equal(p->name, me->prop_name[order[k]]);
            const dg_rply_value *v = &me->prop[order[k]];
            assert_int_equal(p->value.tag, v->tag);
            switch (v->tag) {
            case 0: assert_int_equal(p->value.u.b, v->u.b); break;
            case 1: assert_memory_equal(&p->value.u.num, &v->u.num, 8); break;
            case 2: case 5: assert_int_equal(p->value.u.str, v->u.str); break;
            case 3: assert_memory_equal(p->value.u.rgb, v->u.rgb, 3); break;
            case 4: assert_memory_equal(p->value.u.vec, v->u.vec, 12); break;
            }
        }
        assert_null(p);
        const dg_rply_anim *a = dg_rply_state_anim_first(s, e);
        for (int h = 0; h < NHANDLES; h++) {
            if (!me->has_anim[h])
                continue;
            assert_non_null(a);
            assert_int_equal(a->handle, h);
            assert_int_equal(a->anim, me->anim[h]);
            assert_int_equal(a->fade, me->fade[h]);
            assert_int_equal(a->speed, me->speed[h]);
            a = dg_rply_state_anim_next(s, a);
        }
        assert_null(a);
        assert_int_equal(e->has_snapshot, me->has_snap);
        if (me->has_snap) {
            assert_int_equal(e->snap_len, me->snap_len);
            assert_memory_equal(f->ops + e->snap_offset, me->snap, me->snap_len);
        }
        seen++;
    }
    assert_int_equal(seen, m->live);
}

/* The expected ops, recorded as the session asks the writer for them. */
typedef struct expect_op {
    dg_rply_op op;
    uint8_t bytes[128]; /* CUSTOM / SNAPSHOT payload copy */
} expect_op;

typedef struct session {
    dg_rply_writer *w;
    model m;
    expect_op *ops;
    size_t nops, cap;
    uint32_t tick;
    uint32_t last_opened;
    bool tick_has_ops;
} session;

static expect_op *push_raw(session *s, uint8_t code, uint16_t entity);
static expect_op *push(session *s, uint8_t code, uint16_t entity)
{
    if (!s->tick_has_ops) {
        s->tick_has_ops = true;
        /* the writer opens a tick other than 0 before its first op */
        if (s->tick != 0)
            push_raw(s, s->tick == s->last_opened + 1 ? DG_RPLY_OP_TICK_NEXT : DG_RPLY_OP_TICK, 0);
        s->last_opened = s->tick;
    }
    return push_raw(s, code, entity);
}

static expect_op *push_raw(session *s, uint8_t code, uint16_t entity)
{
    if (s->nops == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->ops = realloc(s->ops, s->cap * sizeof *s->ops);
        assert_non_null(s->ops);
    }
    expect_op *x = &s->ops[s->nops++];
    memset(x, 0, sizeof *x);
    x->op.code = code;
    x->op.entity = entity;
    x->op.tick = s->tick;
    return x;
}

static uint16_t sid(session *s, const char *text)
{
    uint16_t id;
    OK(dg_rply_writer_string(s->w, text, strlen(text), &id, E));
    return id;
}

static uint16_t pick_live(session *s)
{
    if (s->m.live == 0)
        return 0;
    for (;;) {
        uint16_t id = (uint16_t)(1 + rnd_below(MAXE - 1));
        if (s->m.e[id].live)
            return id;
    }
}

static const char *names[NNAMES] = {"Color", "Size", "Transparency", "Body/Exhaust/Enabled",
                                    "@Team", "Scale", "Hat/Handle/Transparency", "Material",
                                    "Health", "Wheel#2/Transparency", "Name \"quoted\"", "Ünïcode"};

static void do_spawn(session *s)
{
    uint16_t id = (uint16_t)(1 + rnd_below(MAXE - 1));
    if (s->m.e[id].live)
        return;
    uint16_t parent = rnd_below(3) == 0 ? pick_live(s) : 0;
    static const char *descs[] = {"model:Prototypes.Car", "part:Ball", "char:123456", "sub:Body/Door",
                                  "asset:98765"};
    const char *d = descs[rnd_below(5)];
    OK(dg_rply_writer_spawn(s->w, id, d, parent, E));
    expect_op *x = push(s, DG_RPLY_OP_SPAWN, id);
    x->op.u.spawn.descriptor = sid(s, d);
    x->op.u.spawn.parent = parent;
    model_ent *me = &s->m.e[id];
    memset(me, 0, sizeof *me);
    me->live = true;
    me->parent = parent;
    me->desc = x->op.u.spawn.descriptor;
    me->spawn_tick = s->tick;
    s->m.live++;
}

static void do_despawn(session *s, uint16_t id)
{
    OK(dg_rply_writer_despawn(s->w, id, E));
    push(s, DG_RPLY_OP_DESPAWN, id);
    s->m.e[id].live = false;
    s->m.live--;
}

static void do_xform(session *s, uint16_t id)
{
    model_ent *me = &s->m.e[id];
    static const uint8_t masks[] = {1, 2, 3, 4, 5, 5, 3};
    uint8_t mask = masks[rnd_below(7)];
    float pos[3];
    int16_t rot[3];
    int16_t yaw = (int16_t)(rnd_below(65535) - 32767);
    for (int i = 0; i < 3; i++) {
        pos[i] = (float)((rnd_unit() - 0.5) * 2000.0);
        rot[i] = (int16_t)(rnd_below(65535) - 32767);
    }
    OK(dg_rply_writer_xform_raw(s->w, id, mask, pos, rot, yaw, E));
    expect_op *x = push(s, DG_RPLY_OP_XFORM, id);
    x->op.mask = mask;
    if (mask & 1) {
        memcpy(x->op.u.xform.pos, pos, sizeof pos);
        memcpy(me->pos_bits, pos, sizeof pos);
        me->xf |= 1;
    }
    if (mask & 2) {
        memcpy(x->op.u.xform.rot, rot, sizeof rot);
        memcpy(me->rot, rot, sizeof rot);
        me->xf = (uint8_t)((me->xf & 1) | 2);
    }
    if (mask & 4) {
        x->op.u.xform.yaw = yaw;
        me->rot[0] = yaw;
        me->rot[1] = me->rot[2] = 0;
        me->xf = (uint8_t)((me->xf & 1) | 4);
    }
    memset(me->dpos, 0, sizeof me->dpos);
    memset(me->drot, 0, sizeof me->drot);
}

static void do_xform_d(session *s, uint16_t id)
{
    model_ent *me = &s->m.e[id];
    uint8_t mask = 0;
    if (me->xf & 1)
        mask |= rnd_below(3) == 0 ? 0 : (rnd_below(2) ? 1 : 2);
    if (me->xf & 4)
        mask |= rnd_below(2) ? 4 : 0;
    if (me->xf & 2)
        mask |= rnd_below(2) ? 8 : 0;
    if (mask == 0)
        return;
    int16_t dpos[3];
    int8_t drot[3];
    int8_t dyaw = (int8_t)(rnd_below(256) - 128);
    for (int i = 0; i < 3; i++) {
        dpos[i] = (mask & 1) ? (int16_t)(rnd_below(256) - 128) : (int16_t)(rnd_below(65536) - 32768);
        drot[i] = (int8_t)(rnd_below(256) - 128);
    }
    OK(dg_rply_writer_xform_d_raw(s->w, id, mask, dpos, dyaw, drot, E));
    expect_op *x = push(s, DG_RPLY_OP_XFORM_D, id);
    x->op.mask = mask;
    if (mask & 3)
        for (int i = 0; i < 3; i++) {
            x->op.u.xform_d.dpos[i] = dpos[i];
            me->dpos[i] += dpos[i];
        }
    if (mask & 4) {
        x->op.u.xform_d.dyaw = dyaw;
        me->drot[0] += dyaw;
    }
    if (mask & 8)
        for (int i = 0; i < 3; i++) {
            x->op.u.xform_d.drot[i] = drot[i];
            me->drot[i] += drot[i];
        }
}

static void do_prop(session *s, uint16_t id)
{
    model_ent *me = &s->m.e[id];
    int k = (int)rnd_below(NNAMES);
    dg_rply_value v;
    memset(&v, 0, sizeof v);
    v.tag = (uint8_t)rnd_below(6);
    switch (v.tag) {
    case 0: v.u.b = (uint8_t)rnd_below(2); break;
    case 1: {
        uint64_t bits = ((uint64_t)rnd() << 32) | rnd();
        if (rnd_below(4) == 0)
            bits = 0x7FF8000000000001ull; /* a NaN payload must survive bit-exact */
        memcpy(&v.u.num, &bits, 8);
        break;
    }
    case 2: case 5: v.u.str = sid(s, rnd_below(2) ? "Enum.Material.Plastic" : "hello"); break;
    case 3: v.u.rgb[0] = (uint8_t)rnd(); v.u.rgb[1] = (uint8_t)rnd(); v.u.rgb[2] = (uint8_t)rnd(); break;
    case 4:
        for (int i = 0; i < 3; i++)
            v.u.vec[i] = (float)(rnd_unit() * 100.0 - 50.0);
        break;
    }
    OK(dg_rply_writer_prop(s->w, id, names[k], &v, E));
    expect_op *x = push(s, DG_RPLY_OP_PROP, id);
    x->op.u.prop.name = sid(s, names[k]);
    x->op.u.prop.value = v;
    me->has_prop[k] = true;
    me->prop[k] = v;
    me->prop_name[k] = x->op.u.prop.name;
}

static void do_anim(session *s, uint16_t id)
{
    model_ent *me = &s->m.e[id];
    uint8_t h = (uint8_t)rnd_below(NHANDLES);
    uint32_t kind = rnd_below(3);
    uint8_t fade = (uint8_t)rnd();
    int16_t speed = (int16_t)(rnd_below(65536) - 32768);
    if (kind == 0) {
        const char *anim = rnd_below(2) ? "rbxassetid://507777826" : "rbxassetid://913402848";
        OK(dg_rply_writer_anim_play(s->w, id, anim, h, fade, speed, E));
        expect_op *x = push(s, DG_RPLY_OP_ANIM_PLAY, id);
        x->op.u.anim.anim = sid(s, anim);
        x->op.u.anim.handle = h;
        x->op.u.anim.fade = fade;
        x->op.u.anim.speed = speed;
        me->has_anim[h] = true;
        me->anim[h] = x->op.u.anim.anim;
        me->fade[h] = fade;
        me->speed[h] = speed;
    } else if (kind == 1) {
        OK(dg_rply_writer_anim_stop(s->w, id, h, fade, E));
        expect_op *x = push(s, DG_RPLY_OP_ANIM_STOP, id);
        x->op.u.anim.handle = h;
        x->op.u.anim.fade = fade;
        me->has_anim[h] = false;
    } else {
        OK(dg_rply_writer_anim_speed(s->w, id, h, speed, E));
        expect_op *x = push(s, DG_RPLY_OP_ANIM_SPEED, id);
        x->op.u.anim.handle = h;
        x->op.u.anim.speed = speed;
        if (me->has_anim[h])
            me->speed[h] = speed;
    }
}

static void do_event_custom(session *s)
{
    if (rnd_below(2)) {
        OK(dg_rply_writer_event(s->w, "Goal", "{\"team\":\"red\",\"n\":3}", E));
        expect_op *x = push(s, DG_RPLY_OP_EVENT, 0);
        x->op.u.event.name = sid(s, "Goal");
        x->op.u.event.payload = sid(s, "{\"team\":\"red\",\"n\":3}");
    } else {
        uint8_t data[40];
        uint16_t n = (uint16_t)rnd_below(41);
        for (int i = 0; i < n; i++)
            data[i] = (uint8_t)rnd();
        OK(dg_rply_writer_custom(s->w, "Telemetry", data, n, E));
        expect_op *x = push(s, DG_RPLY_OP_CUSTOM, 0);
        x->op.u.custom.channel = sid(s, "Telemetry");
        x->op.u.custom.len = n;
        memcpy(x->bytes, data, n);
    }
}

/* A small snapshot: a non-model with one part of a random kind. */
static void do_snapshot(session *s, uint16_t id)
{
    dg_rply_snapshot snap;
    memset(&snap, 0, sizeof snap);
    dg_rply_part part;
    memset(&part, 0, sizeof part);
    dg_rply_str key = RS("U");
    part.kind = (uint8_t)rnd_below(6);
    part.name = RS("P");
    part.size[0] = (float)rnd_below(10);
    snap.name = RS("S");
    snap.union_count = 1;
    snap.union_keys = &key;
    snap.part_count = 1;
    snap.parts = &part;
    uint8_t bytes[128];
    size_t n;
    OK(dg_rply_snapshot_encode(&snap, bytes, sizeof bytes, &n, E));
    OK(dg_rply_writer_snapshot(s->w, id, &snap, E));
    expect_op *x = push(s, DG_RPLY_OP_SNAPSHOT, id);
    x->op.u.snapshot.len = (uint32_t)n;
    memcpy(x->bytes, bytes, n);
    model_ent *me = &s->m.e[id];
    me->has_snap = true;
    memcpy(me->snap, bytes, n);
    me->snap_len = (uint32_t)n;
}

static void compare_op(const expect_op *x, const dg_rply_op *op)
{
    assert_int_equal(op->code, x->op.code);
    assert_int_equal(op->tick, x->op.tick);
    assert_int_equal(op->entity, x->op.entity);
    switch (op->code) {
    case DG_RPLY_OP_SPAWN:
        assert_int_equal(op->u.spawn.descriptor, x->op.u.spawn.descriptor);
        assert_int_equal(op->u.spawn.parent, x->op.u.spawn.parent);
        break;
    case DG_RPLY_OP_XFORM:
        assert_int_equal(op->mask, x->op.mask);
        assert_memory_equal(&op->u.xform, &x->op.u.xform, sizeof op->u.xform);
        break;
    case DG_RPLY_OP_XFORM_D:
        assert_int_equal(op->mask, x->op.mask);
        assert_memory_equal(&op->u.xform_d, &x->op.u.xform_d, sizeof op->u.xform_d);
        break;
    case DG_RPLY_OP_PROP: {
        assert_int_equal(op->u.prop.name, x->op.u.prop.name);
        assert_int_equal(op->u.prop.value.tag, x->op.u.prop.value.tag);
        dg_rply_value a = op->u.prop.value, b = x->op.u.prop.value;
        switch (a.tag) {
        case 0: assert_int_equal(a.u.b, b.u.b); break;
        case 1: assert_memory_equal(&a.u.num, &b.u.num, 8); break;
        case 2: case 5: assert_int_equal(a.u.str, b.u.str); break;
        case 3: assert_memory_equal(a.u.rgb, b.u.rgb, 3); break;
        case 4: assert_memory_equal(a.u.vec, b.u.vec, 12); break;
        }
        break;
    }
    case DG_RPLY_OP_ANIM_PLAY:
    case DG_RPLY_OP_ANIM_STOP:
    case DG_RPLY_OP_ANIM_SPEED:
        assert_int_equal(op->u.anim.anim, x->op.u.anim.anim);
        assert_int_equal(op->u.anim.handle, x->op.u.anim.handle);
        assert_int_equal(op->u.anim.fade, x->op.u.anim.fade);
        assert_int_equal(op->u.anim.speed, x->op.u.anim.speed);
        break;
    case DG_RPLY_OP_EVENT:
        assert_int_equal(op->u.event.name, x->op.u.event.name);
        assert_int_equal(op->u.event.payload, x->op.u.event.payload);
        break;
    case DG_RPLY_OP_CUSTOM:
        assert_int_equal(op->u.custom.channel, x->op.u.custom.channel);
        assert_int_equal(op->u.custom.len, x->op.u.custom.len);
        if (op->u.custom.len)
            assert_memory_equal(op->u.custom.data, x->bytes, op->u.custom.len);
        break;
    case DG_RPLY_OP_SNAPSHOT:
        assert_int_equal(op->u.snapshot.len, x->op.u.snapshot.len);
        assert_memory_equal(op->u.snapshot.data, x->bytes, op->u.snapshot.len);
        break;
    default: break;
    }
}

/* dg_rply_state_equal sees every kind of difference, and a seek back and forth is equal again. */
static void state_equality_checks(dg_rply_player *p)
{
    dg_rply_state *copy = dg_rply_state_new(NULL);
    assert_non_null(copy);
    OK(dg_rply_state_copy(copy, dg_rply_player_state(p), E));
    uint32_t last = dg_rply_state_tick(copy);
    OK(dg_rply_player_seek(p, 0, E));
    OK(dg_rply_player_seek(p, last, E));
    assert_true(dg_rply_state_equal(dg_rply_player_state(p), copy));
    assert_true(dg_rply_state_equal(copy, dg_rply_player_state(p)));
    uint16_t id = dg_rply_state_next_id(copy, 0);
    assert_true(id != 0);
    for (int what = 0; what < 8; what++) {
        /* white box: the state's layout (rply_internal.h), to change one thing of every kind */
        dg_rply_state *ms = dg_rply_state_new(NULL);
        assert_non_null(ms);
        OK(dg_rply_state_copy(ms, copy, E));
        dg_rply_state m_ = *ms, *mp = &m_;
        dg_rply__entity *ie = &mp->live[mp->slot[id] - 1];
        dg_rply_entity *e = &ie->pub;
        bool changed = true;
        switch (what) {
        case 0: mp->tick++; break;
        case 1: e->parent++; break;
        case 2: e->x.dpos[1]++; break;
        case 3: e->x.rot[2] ^= 1; break;
        case 4: e->snap_len++; break;
        case 5: e->descriptor++; break;
        case 6:
            if (ie->props) {
                dg_rply_prop *pr = &mp->props[ie->props - 1].pub;
                const dg_rply_prop *got = dg_rply_state_prop_get(mp, e, pr->name);
                assert_ptr_equal(got, pr);
                if (pr->value.tag == 0) pr->value.u.b ^= 1;
                else if (pr->value.tag == 1) {
                    uint64_t bits;
                    memcpy(&bits, &pr->value.u.num, 8);
                    bits ^= 1; /* one ulp (or another NaN payload): still a difference */
                    memcpy(&pr->value.u.num, &bits, 8);
                }
                else if (pr->value.tag == 3) pr->value.u.rgb[1] ^= 1;
                else if (pr->value.tag == 4) {
                    uint32_t bits;
                    memcpy(&bits, &pr->value.u.vec[2], 4);
                    bits ^= 1;
                    memcpy(&pr->value.u.vec[2], &bits, 4);
                }
                else pr->value.u.str ^= 1;
            } else {
                changed = false;
            }
            break;
        case 7:
            if (ie->anims)
                mp->anims[ie->anims - 1].pub.speed ^= 1;
            else
                changed = false;
            break;
        }
        assert_int_equal(dg_rply_state_equal(mp, copy), !changed);
        *ms = m_;
        dg_rply_state_free(ms);
    }
    dg_rply_state_free(copy);
}

static void random_session(uint64_t seed, uint32_t ticks)
{
    rng_state = seed;
    session *s = calloc(1, sizeof *s);
    assert_non_null(s);
    dg_rply_writer_config cfg;
    dg_rply_writer_config_default(&cfg);
    cfg.keyframe_every = 0; /* raw ops only: keyframe refreshes would add ops the model did not ask */
    cfg.place_version = 42;
    OK((s->w = dg_rply_writer_new(&cfg, E)) ? DG_OK : DG_E_NOMEM);
    /* model snapshots of the whole world, one per tick, to compare with the player afterwards */
    model *per_tick = malloc(sizeof(model) * 8);
    uint32_t checkpoints[8];
    int ncp = 0;
    for (uint32_t t = 0; t < ticks; t++) {
        s->tick = t;
        s->tick_has_ops = false;
        OK(dg_rply_writer_tick(s->w, t, E));
        if (rnd_below(4) == 0)
            continue; /* an empty tick: nothing is written */
        int nops = (int)rnd_below(12);
        for (int k = 0; k < nops; k++) {
            uint32_t what = rnd_below(100);
            uint16_t id = pick_live(s);
            if (what < 15 || id == 0)
                do_spawn(s);
            else if (what < 20)
                do_despawn(s, id);
            else if (what < 40)
                do_xform(s, id);
            else if (what < 60 && s->m.e[id].xf)
                do_xform_d(s, id);
            else if (what < 75)
                do_prop(s, id);
            else if (what < 87)
                do_anim(s, id);
            else if (what < 95)
                do_event_custom(s);
            else
                do_snapshot(s, id);
        }
        if (ncp < 8 && rnd_below(ticks / 8 + 1) == 0) {
            checkpoints[ncp] = t;
            per_tick[ncp++] = s->m;
        }
    }
    uint8_t *buf;
    size_t len;
    OK(dg_rply_writer_finish(s->w, ticks + 3, &buf, &len, E));

    dg_rply_file f;
    OK(dg_rply_file_open(&f, buf, len, 42, E));
    assert_int_equal(f.hdr.tick_count, ticks + 3);
    assert_int_equal(f.hdr.place_version, 42);
    /* op by op */
    dg_rply_iter it;
    dg_rply_iter_init(&it, &f);
    dg_rply_op op;
    size_t i = 0;
    dg_error err;
    dg_error_clear(&err);
    int r;
    while ((r = dg_rply_iter_next(&it, &op, &err)) > 0) {
        assert_true(i < s->nops);
        compare_op(&s->ops[i], &op);
        i++;
    }
    assert_int_equal(r, 0);
    assert_int_equal(i, s->nops);
    OK(dg_rply_validate(&f, E));

    /* state by state: the model at the recorded ticks, and the final world */
    dg_rply_player *p;
    assert_non_null(p = dg_rply_player_new(&f, 0, NULL));
    for (int k = 0; k < ncp; k++) {
        OK(dg_rply_player_advance(p, checkpoints[k], E));
        model_compare(&per_tick[k], dg_rply_player_state(p), &f);
    }
    OK(dg_rply_player_advance(p, ticks + 2, E));
    model_compare(&s->m, dg_rply_player_state(p), &f);
    state_equality_checks(p);
    dg_rply_player_free(p);
    dg_rply_file_close(&f);
    free(buf);
    free(per_tick);
    free(s->ops);
    dg_rply_writer_free(s->w);
    free(s);
}

static void random_sessions_round_trip(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 12; seed++)
        random_session(0x9E3779B97F4A7C15ull * seed, 300 + (uint32_t)seed * 20);
}

/* Every tick compared, not just a few: model after each tick vs player advanced tick by tick. */
static void random_session_every_tick(void **state)
{
    (void)state;
    rng_state = 77;
    session *s = calloc(1, sizeof *s);
    dg_rply_writer_config cfg;
    dg_rply_writer_config_default(&cfg);
    cfg.keyframe_every = 0;
    OK((s->w = dg_rply_writer_new(&cfg, E)) ? DG_OK : DG_E_NOMEM);
    const uint32_t ticks = 120;
    model *hist = malloc(sizeof(model) * ticks);
    for (uint32_t t = 0; t < ticks; t++) {
        s->tick = t;
        s->tick_has_ops = false;
        OK(dg_rply_writer_tick(s->w, t, E));
        int nops = (int)rnd_below(8);
        for (int k = 0; k < nops; k++) {
            uint16_t id = pick_live(s);
            uint32_t what = rnd_below(100);
            if (what < 20 || id == 0)
                do_spawn(s);
            else if (what < 26)
                do_despawn(s, id);
            else if (what < 45)
                do_xform(s, id);
            else if (what < 65 && s->m.e[id].xf)
                do_xform_d(s, id);
            else if (what < 80)
                do_prop(s, id);
            else if (what < 92)
                do_anim(s, id);
            else
                do_snapshot(s, id);
        }
        hist[t] = s->m;
    }
    uint8_t *buf;
    size_t len;
    OK(dg_rply_writer_finish(s->w, 0, &buf, &len, E));
    dg_rply_file f;
    OK(dg_rply_file_open(&f, buf, len, 0, E));
    dg_rply_player *p;
    assert_non_null(p = dg_rply_player_new(&f, 0, NULL));
    for (uint32_t t = 0; t < ticks; t++) {
        OK(dg_rply_player_advance(p, t, E));
        model_compare(&hist[t], dg_rply_player_state(p), &f);
    }
    dg_rply_player_free(p);
    dg_rply_file_close(&f);
    free(buf);
    free(hist);
    free(s->ops);
    dg_rply_writer_free(s->w);
    free(s);
}

/* ---- transforms through the recorder policy ----------------------------------------------- */
typedef struct mover {
    double pos[3], vel[3];
    double yaw, yaw_rate;
    double axis[3], angle, tilt_rate;
    bool tilted;
} mover;

static void quat_from_yaw(double yaw, double q[4])
{
    q[0] = cos(yaw / 2);
    q[1] = 0;
    q[2] = sin(yaw / 2);
    q[3] = 0;
}
static void quat_from_axis(const double axis[3], double angle, double q[4])
{
    double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    q[0] = cos(angle / 2);
    for (int i = 0; i < 3; i++)
        q[i + 1] = axis[i] / n * sin(angle / 2);
}

static void mover_step(mover *m)
{
    if (rnd_below(30) == 0)
        for (int i = 0; i < 3; i++)
            m->vel[i] = (rnd_unit() - 0.5) * (rnd_below(10) == 0 ? 200.0 : 3.0);
    if (rnd_below(2000) == 0)
        m->pos[0] += 5000.0; /* a teleport: delta overflows, full XFORM forced */
    for (int i = 0; i < 3; i++)
        m->pos[i] += m->vel[i];
    if (rnd_below(20) == 0)
        m->yaw_rate = (rnd_unit() - 0.5) * 0.4;
    m->yaw += m->yaw_rate;
    if (rnd_below(500) == 0)
        m->tilted = !m->tilted; /* mode switch */
    if (rnd_below(25) == 0) {
        for (int i = 0; i < 3; i++)
            m->axis[i] = rnd_unit() - 0.5;
        m->axis[1] += 0.01;
        m->tilt_rate = (rnd_unit() - 0.5) * 0.1;
    }
    m->angle += m->tilt_rate;
    if (m->angle > 3.0 || m->angle < 0.05)
        m->tilt_rate = -m->tilt_rate;
}

static void mover_quat(const mover *m, double q[4])
{
    if (m->tilted)
        quat_from_axis(m->axis, m->angle, q);
    else
        quat_from_yaw(m->yaw, q);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

#define NMOVERS 8
#define DRIFT_TICKS 100000u

static double wrap(double a) { return remainder(a, 2 * 3.14159265358979323846); }

static void xform_d_never_drifts(void **state)
{
    (void)state;
    rng_state = 0xD1F7;
    dg_rply_writer_config cfg;
    dg_rply_writer_config_default(&cfg);
    dg_error err;
    dg_error_clear(&err);
    dg_rply_writer *w = dg_rply_writer_new(&cfg, &err);
    assert_non_null(w);
    mover mv[NMOVERS];
    memset(mv, 0, sizeof mv);
    for (int k = 0; k < NMOVERS; k++) {
        mv[k].axis[0] = 1;
        mv[k].angle = 0.5;
        mv[k].tilted = k < 2;
        OK(dg_rply_writer_spawn(w, (uint16_t)(k * 40 + 1), "char:1", 0, E)); /* ids past 255 too */
    }
    uint64_t *digest = malloc(sizeof(uint64_t) * DRIFT_TICKS);
    assert_non_null(digest);
    double worst_pos = 0, worst_rot = 0;
    for (uint32_t t = 0; t < DRIFT_TICKS; t++) {
        OK(dg_rply_writer_tick(w, t, E));
        uint64_t h = 1469598103934665603ull;
        for (int k = 0; k < NMOVERS; k++) {
            uint16_t id = (uint16_t)(k * 40 + 1);
            if (k == 7)
                id = 300;
            if (t == 0 && k == 7) {
                OK(dg_rply_writer_spawn(w, 300, "char:2", 0, E));
            }
            mover_step(&mv[k]);
            double q[4];
            mover_quat(&mv[k], q);
            OK(dg_rply_writer_transform(w, id, mv[k].pos, q, E));
            const dg_rply_xstate *x = dg_rply_writer_xstate(w, id);
            assert_non_null(x);
            h = fnv(h, x, sizeof *x);
            /* the player's picture stays within threshold + half a quantum of the truth */
            double shown[3], d2 = 0;
            dg_rply_xstate_position(x, shown);
            for (int i = 0; i < 3; i++)
                d2 += (shown[i] - mv[k].pos[i]) * (shown[i] - mv[k].pos[i]);
            double dpos = sqrt(d2);
            if (dpos > worst_pos)
                worst_pos = dpos;
            assert_true(dpos < cfg.pos_threshold + sqrt(3.0) / 64.0 + 1e-3 * (fabs(mv[k].pos[0]) / 1000.0 + 1));
            double rot[3];
            dg_rply_xstate_rotation(x, rot);
            double drot;
            if (x->xf & DG_RPLY_HAS_YAW) {
                assert_true(dg_rply_quat_up_y(q) >= 1.0 - 5e-5);
                drot = fabs(wrap(rot[0] - dg_rply_quat_yaw(q)));
            } else {
                double aa[3];
                dg_rply_quat_to_axis_angle(q, aa);
                double s2 = 0;
                for (int i = 0; i < 3; i++)
                    s2 += (rot[i] - aa[i]) * (rot[i] - aa[i]);
                drot = sqrt(s2);
            }
            if (drot > worst_rot)
                worst_rot = drot;
            if (!(drot < 0.03))
                fprintf(stderr, "tick %u mover %d drot %g xf %u tilted %d angle %g rot %g %g %g\n", t, k,
                        drot, x->xf, mv[k].tilted, mv[k].angle, rot[0], rot[1], rot[2]);
            assert_true(drot < cfg.rot_threshold_deg * 3.14159265358979323846 / 180.0 + 0.5 / 64.0 * 1.8 + 1e-4);
        }
        digest[t] = h;
    }
    uint8_t *buf;
    size_t len;
    OK(dg_rply_writer_finish(w, 0, &buf, &len, E));
    dg_rply_file f;
    OK(dg_rply_file_open(&f, buf, len, 0, E));
    dg_rply_player *p;
    assert_non_null(p = dg_rply_player_new(&f, 0, NULL));
    for (uint32_t t = 0; t < DRIFT_TICKS; t++) {
        OK(dg_rply_player_advance(p, t, E));
        uint64_t h = 1469598103934665603ull;
        for (int k = 0; k < NMOVERS; k++) {
            uint16_t id = k == 7 ? 300 : (uint16_t)(k * 40 + 1);
            const dg_rply_entity *e = dg_rply_state_find(dg_rply_player_state(p), id);
            assert_non_null(e);
            h = fnv(h, &e->x, sizeof e->x);
        }
        if (h != digest[t]) {
            fprintf(stderr, "quantized transform differs at tick %u\n", t);
            fail();
        }
    }
    /* the file used deltas, full XFORMs and both delta widths */
    uint64_t counts[16] = {0}, masks[16] = {0};
    dg_rply_iter it;
    dg_rply_iter_init(&it, &f);
    dg_rply_op op;
    while (dg_rply_iter_next(&it, &op, &err) > 0) {
        counts[op.code & 15]++;
        if (op.code == DG_RPLY_OP_XFORM_D)
            masks[op.mask & 15]++;
    }
    assert_true(counts[DG_RPLY_OP_XFORM_D] > counts[DG_RPLY_OP_XFORM]);
    assert_true(masks[1] + masks[5] + masks[9] > 0);
    assert_true(masks[2] + masks[6] + masks[10] > 0);
    assert_true(masks[8] + masks[9] + masks[10] > 0);
    assert_true(masks[4] + masks[5] + masks[6] > 0);
    fprintf(stderr, "drift: worst position error %.4f studs, rotation %.5f rad, %zu bytes\n",
            worst_pos, worst_rot, len);
    dg_rply_player_free(p);
    dg_rply_file_close(&f);
    free(buf);
    free(digest);
    dg_rply_writer_free(w);
}

/* ---- seek ---------------------------------------------------------------------------------- */
static uint64_t state_digest(const dg_rply_state *s)
{
    uint32_t tick = dg_rply_state_tick(s);
    uint64_t h = fnv(1469598103934665603ull, &tick, sizeof tick);
    for (uint16_t id = dg_rply_state_next_id(s, 0); id; id = dg_rply_state_next_id(s, id)) {
        const dg_rply_entity *e = dg_rply_state_find(s, id);
        h = fnv(h, &e->id, 6);
        h = fnv(h, &e->spawn_tick, 4);
        h = fnv(h, &e->x, sizeof e->x);
        h = fnv(h, &e->snap_offset, 8);
        h = fnv(h, &e->has_snapshot, 1);
        for (const dg_rply_prop *p = dg_rply_state_prop_first(s, e); p; p = dg_rply_state_prop_next(s, p)) {
            h = fnv(h, &p->name, 2);
            h = fnv(h, &p->value.tag, 1);
            h = fnv(h, &p->value.u, p->value.tag == 1 ? 8 : p->value.tag == 4 ? 12 : 3);
        }
        for (const dg_rply_anim *a = dg_rply_state_anim_first(s, e); a; a = dg_rply_state_anim_next(s, a)) {
            h = fnv(h, &a->handle, 1);
            h = fnv(h, &a->fade, 1);
            h = fnv(h, &a->anim, 2);
            h = fnv(h, &a->speed, 2);
        }
    }
    return h;
}

static uint8_t *policy_session(uint32_t ticks, uint32_t kf_every, size_t *len)
{
    rng_state = 4242;
    dg_rply_writer_config cfg;
    dg_rply_writer_config_default(&cfg);
    cfg.keyframe_every = kf_every;
    dg_error err;
    dg_error_clear(&err);
    dg_rply_writer *w = dg_rply_writer_new(&cfg, &err);
    assert_non_null(w);
    mover mv[20];
    memset(mv, 0, sizeof mv);
    bool live[20] = {false};
    for (uint32_t t = 0; t < ticks; t++) {
        OK(dg_rply_writer_tick(w, t, E));
        for (int k = 0; k < 20; k++) {
            uint16_t id = (uint16_t)(k + 1);
            if (!live[k] && rnd_below(40) == 0) {
                OK(dg_rply_writer_spawn(w, id, "char:7", 0, E));
                live[k] = true;
                mv[k].tilted = k % 7 == 0;
                mv[k].axis[2] = 1;
                mv[k].angle = 0.3;
            } else if (live[k] && rnd_below(300) == 0) {
                OK(dg_rply_writer_despawn(w, id, E));
                live[k] = false;
                continue;
            }
            if (!live[k])
                continue;
            if (rnd_below(3) != 0) {
                mover_step(&mv[k]);
                double q[4];
                mover_quat(&mv[k], q);
                OK(dg_rply_writer_transform(w, id, mv[k].pos, q, E));
            }
            if (rnd_below(50) == 0) {
                dg_rply_value v = {.tag = 1, .u.num = t * 0.5};
                OK(dg_rply_writer_prop(w, id, "Health", &v, E));
            }
            if (rnd_below(80) == 0)
                OK(dg_rply_writer_anim_play(w, id, "walk", (uint8_t)rnd_below(3), 10, 256, E));
            if (rnd_below(90) == 0)
                OK(dg_rply_writer_anim_stop(w, id, (uint8_t)rnd_below(3), 10, E));
        }
    }
    uint8_t *buf;
    OK(dg_rply_writer_finish(w, 0, &buf, len, E));
    dg_rply_writer_free(w);
    return buf;
}

static void seek_equals_linear(void **state)
{
    (void)state;
    const uint32_t ticks = 700;
    size_t len;
    uint8_t *buf = policy_session(ticks, 60, &len);
    dg_rply_file f;
    OK(dg_rply_file_open(&f, buf, len, 0, E));
    assert_true(f.hdr.keyframe_count >= 10);
    uint64_t *lin = malloc(sizeof(uint64_t) * ticks);
    dg_rply_state **samples = calloc(ticks / 50 + 1, sizeof *samples);
    for (uint32_t i = 0; i < ticks / 50 + 1; i++)
        assert_non_null(samples[i] = dg_rply_state_new(NULL));
    dg_rply_player *p;
    assert_non_null(p = dg_rply_player_new(&f, 0, NULL));
    for (uint32_t t = 0; t < ticks; t++) {
        OK(dg_rply_player_advance(p, t, E));
        lin[t] = state_digest(dg_rply_player_state(p));
        if (t % 50 == 0)
            OK(dg_rply_state_copy(samples[t / 50], dg_rply_player_state(p), E));
    }
    /* backwards through every tick, then random jumps, on the same player */
    for (uint32_t t = ticks; t-- > 0;) {
        OK(dg_rply_player_seek(p, t, E));
        assert_true(state_digest(dg_rply_player_state(p)) == lin[t]);
        if (t % 50 == 0)
            assert_true(dg_rply_state_equal(dg_rply_player_state(p), samples[t / 50]));
    }
    rng_state = 99;
    for (int i = 0; i < 2000; i++) {
        uint32_t t = rnd_below(ticks);
        OK(dg_rply_player_seek(p, t, E));
        assert_true(state_digest(dg_rply_player_state(p)) == lin[t]);
    }
    dg_rply_player_free(p);
    /* a fresh player seeking straight to each tick (no checkpoints yet) */
    for (uint32_t t = 0; t < ticks; t += 13) {
        dg_rply_player *q;
        assert_non_null(q = dg_rply_player_new(&f, 0, NULL));
        OK(dg_rply_player_seek(q, t, E));
        assert_true(state_digest(dg_rply_player_state(q)) == lin[t]);
        if (t % 50 == 0)
            assert_true(dg_rply_state_equal(dg_rply_player_state(q), samples[t / 50]));
        dg_rply_player_free(q);
    }
    /* prepared: one checkpoint per keyframe, then seeks land exactly */
    assert_non_null(p = dg_rply_player_new(&f, 0, NULL));
    OK(dg_rply_player_prepare(p, E));
    assert_int_equal(p->cp_count, f.hdr.keyframe_count);
    assert_false(dg_rply_state_started(dg_rply_player_state(p)));
    for (uint32_t t = ticks; t-- > 0;) {
        OK(dg_rply_player_seek(p, (t * 7919u) % ticks, E));
        assert_true(state_digest(dg_rply_player_state(p)) == lin[(t * 7919u) % ticks]);
    }
    dg_rply_player_free(p);
        /* a tiny checkpoint budget still seeks correctly (from the start) */
    assert_non_null(p = dg_rply_player_new(&f, 1, NULL));
    OK(dg_rply_player_advance(p, ticks - 1, E));
    assert_int_equal(p->cp_count, 0);
    OK(dg_rply_player_seek(p, 123, E));
    assert_true(state_digest(dg_rply_player_state(p)) == lin[123]);
    dg_rply_player_free(p);
    for (uint32_t i = 0; i <= ticks / 50; i++)
        dg_rply_state_free(samples[i]);
    free(samples);
    free(lin);
    dg_rply_file_close(&f);
    free(buf);
}

/* A failing tick leaves the player's state exactly as it was. */
static void failing_tick_leaves_state(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = policy_session(200, 40, &len);
    dg_rply_file f;
    OK(dg_rply_file_open(&f, buf, len, 0, E));
    /* find the first op of tick 150 and replace the op after it by a DESPAWN of a dead id */
    dg_rply_iter it;
    dg_rply_iter_init(&it, &f);
    dg_rply_op op;
    dg_error err;
    dg_error_clear(&err);
    uint32_t at = 0;
    while (dg_rply_iter_next(&it, &op, &err) > 0)
        if (op.tick == 150 && op.code == DG_RPLY_OP_XFORM_D) {
            at = op.offset;
            break;
        }
    assert_true(at > 0);
    uint8_t *bad = malloc(len);
    memcpy(bad, buf, len);
    size_t p0 = (size_t)f.ops_at + at;
    /* XFORM_D with the id byte changed to an id that is never spawned (250) */
    bad[p0 + 1] = 250;
    dg_rply_file g;
    OK(dg_rply_file_open(&g, bad, len, 0, E));
    dg_rply_player *p;
    assert_non_null(p = dg_rply_player_new(&g, 0, NULL));
    OK(dg_rply_player_advance(p, 149, E));
    dg_rply_state *before = dg_rply_state_new(NULL);
    assert_non_null(before);
    OK(dg_rply_state_copy(before, dg_rply_player_state(p), E));
    dg_error_clear(&err);
    assert_int_equal(dg_rply_player_advance(p, 160, &err), DG_E_STATE);
    assert_non_null(strstr(err.msg, "250"));
    assert_true(dg_rply_state_equal(dg_rply_player_state(p), before));
    /* and again (the iterator was put back too), then a seek backwards still works */
    dg_error_clear(&err);
    assert_int_equal(dg_rply_player_advance(p, 150, &err), DG_E_STATE);
    assert_true(dg_rply_state_equal(dg_rply_player_state(p), before));
    OK(dg_rply_player_seek(p, 100, E));
    dg_error_clear(&err);
    assert_int_equal(dg_rply_player_seek(p, 170, &err), DG_E_STATE);
    assert_int_equal(dg_rply_state_tick(dg_rply_player_state(p)), 100);
    dg_rply_player_free(p);
    /* prepare on the damaged file: the error, and the player back at the start */
    assert_non_null(p = dg_rply_player_new(&g, 0, NULL));
    dg_error_clear(&err);
    assert_int_equal(dg_rply_player_prepare(p, &err), DG_E_STATE);
    assert_false(dg_rply_state_started(dg_rply_player_state(p)));
    assert_int_equal(dg_rply_state_live_count(dg_rply_player_state(p)), 0);
    OK(dg_rply_player_advance(p, 149, E));
    assert_true(dg_rply_state_equal(dg_rply_player_state(p), before));
    dg_rply_player_free(p);
    dg_rply_state_free(before);
    dg_rply_file_close(&g);
    dg_rply_file_close(&f);
    free(bad);
    free(buf);
}

/* ---- writer policy ------------------------------------------------------------------------- */
static dg_rply_writer *new_writer(uint32_t kf, bool deltas, bool thresholds)
{
    dg_rply_writer_config cfg;
    dg_rply_writer_config_default(&cfg);
    cfg.keyframe_every = kf;
    cfg.use_deltas = deltas;
    cfg.use_thresholds = thresholds;
    dg_error err;
    dg_rply_writer *w = dg_rply_writer_new(&cfg, &err);
    assert_non_null(w);
    return w;
}

static size_t collect(dg_rply_writer *w, dg_rply_op *ops, size_t cap, dg_rply_file *f, uint8_t **buf)
{
    size_t len;
    OK(dg_rply_writer_finish(w, 0, buf, &len, E));
    OK(dg_rply_file_open(f, *buf, len, 0, E));
    OK(dg_rply_validate(f, E));
    dg_rply_iter it;
    dg_rply_iter_init(&it, f);
    size_t n = 0;
    dg_error err;
    while (n < cap && dg_rply_iter_next(&it, &ops[n], &err) > 0)
        n++;
    return n;
}

static void writer_tick_openers(void **state)
{
    (void)state;
    dg_rply_writer *w = new_writer(0, true, true);
    OK(dg_rply_writer_spawn(w, 1, "part:Ball", 0, E)); /* tick 0: no opener */
    OK(dg_rply_writer_tick(w, 1, E));
    OK(dg_rply_writer_tick(w, 2, E));                 /* ticks 1, 2: nothing happens */
    OK(dg_rply_writer_tick(w, 3, E));
    OK(dg_rply_writer_event(w, "a", "{}", E));        /* TICK 3 */
    OK(dg_rply_writer_tick(w, 4, E));
    OK(dg_rply_writer_event(w, "b", "{}", E));        /* TICK_NEXT */
    OK(dg_rply_writer_tick(w, 6, E));
    OK(dg_rply_writer_event(w, "c", "{}", E));        /* TICK 6 */
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_rply_writer_tick(w, 6, &err), DG_E_USAGE);
    dg_rply_op ops[16];
    dg_rply_file f;
    uint8_t *buf;
    size_t n = collect(w, ops, 16, &f, &buf);
    const uint8_t want[] = {DG_RPLY_OP_SPAWN, DG_RPLY_OP_TICK, DG_RPLY_OP_EVENT, DG_RPLY_OP_TICK_NEXT,
                            DG_RPLY_OP_EVENT, DG_RPLY_OP_TICK, DG_RPLY_OP_EVENT};
    assert_int_equal(n, sizeof want);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(ops[i].code, want[i]);
    assert_int_equal(ops[5].tick, 6);
    assert_int_equal(f.hdr.tick_count, 7);
    assert_int_equal(f.hdr.keyframe_count, 0);
    dg_rply_file_close(&f);
    free(buf);
    dg_rply_writer_free(w);
}

static void writer_keyframes(void **state)
{
    (void)state;
    dg_rply_writer *w = new_writer(10, true, true);
    double q[4] = {1, 0, 0, 0};
    double pos[3] = {0, 0, 0};
    OK(dg_rply_writer_spawn(w, 1, "char:1", 0, E));
    OK(dg_rply_writer_spawn(w, 2, "char:2", 0, E));
    OK(dg_rply_writer_transform(w, 1, pos, q, E));
    OK(dg_rply_writer_transform(w, 2, pos, q, E));
    for (uint32_t t = 1; t <= 25; t++) {
        OK(dg_rply_writer_tick(w, t, E));
        pos[0] = t * 1.0;
        OK(dg_rply_writer_transform(w, 1, pos, q, E)); /* entity 2 stands still, unsampled */
    }
    dg_rply_op ops[128];
    dg_rply_file f;
    uint8_t *buf;
    size_t n = collect(w, ops, 128, &f, &buf);
    assert_int_equal(f.hdr.keyframe_count, 3);
    for (uint32_t k = 0; k < 3; k++) {
        dg_rply_keyframe kf = dg_rply_file_keyframe(&f, k);
        assert_int_equal(kf.tick, k * 10);
        /* the op at the offset is TICK kf.tick, and both entities get a full XFORM in that tick */
        int fulls = 0;
        bool found = false;
        for (size_t i = 0; i < n; i++) {
            if (ops[i].offset == kf.offset) {
                assert_int_equal(ops[i].code, DG_RPLY_OP_TICK);
                assert_int_equal(ops[i].tick, kf.tick);
                found = true;
            }
            if (ops[i].tick == kf.tick && ops[i].code == DG_RPLY_OP_XFORM &&
                ops[i].mask == (DG_RPLY_XF_POS | DG_RPLY_XF_YAW))
                fulls++;
            assert_false(ops[i].tick == kf.tick && ops[i].code == DG_RPLY_OP_XFORM_D);
        }
        assert_true(found);
        assert_int_equal(fulls, 2);
    }
    /* between keyframes entity 1 moves by deltas (1 stud = 32 units, i8) */
    for (size_t i = 0; i < n; i++)
        if (ops[i].tick == 5 && ops[i].code == DG_RPLY_OP_XFORM_D) {
            assert_int_equal(ops[i].entity, 1);
            assert_int_equal(ops[i].mask, DG_RPLY_XD_POS8);
            assert_int_equal(ops[i].u.xform_d.dpos[0], 32);
        }
    dg_rply_file_close(&f);
    free(buf);
    dg_rply_writer_free(w);
}

/* Raw-driven entities are not refreshed at keyframes from a sample they never had. */
static void writer_keyframe_raw_entities(void **state)
{
    (void)state;
    dg_rply_writer *w = new_writer(5, true, true);
    OK(dg_rply_writer_spawn(w, 1, "part:Ball", 0, E));
    float pos[3] = {1, 2, 3};
    OK(dg_rply_writer_xform_raw(w, 1, DG_RPLY_XF_POS, pos, NULL, 0, E));
    for (uint32_t t = 1; t <= 12; t++) {
        OK(dg_rply_writer_tick(w, t, E));
        OK(dg_rply_writer_xform_d_raw(w, 1, DG_RPLY_XD_POS8, (int16_t[3]){1, 0, -1}, 0, NULL, E));
    }
    dg_rply_op ops[64];
    dg_rply_file f;
    uint8_t *buf;
    size_t n = collect(w, ops, 64, &f, &buf);
    int xforms = 0, deltas = 0;
    for (size_t i = 0; i < n; i++) {
        xforms += ops[i].code == DG_RPLY_OP_XFORM;
        deltas += ops[i].code == DG_RPLY_OP_XFORM_D;
    }
    assert_int_equal(xforms, 1);
    assert_int_equal(deltas, 12);
    assert_int_equal(f.hdr.keyframe_count, 3); /* ticks 0, 5, 10 */
    dg_rply_player *p;
    assert_non_null(p = dg_rply_player_new(&f, 0, NULL));
    OK(dg_rply_player_advance(p, 12, E));
    const dg_rply_entity *e = dg_rply_state_find(dg_rply_player_state(p), 1);
    assert_int_equal(e->x.dpos[0], 12);
    assert_int_equal(e->x.dpos[2], -12);
    assert_true(dg_rply_xstate_equal(&e->x, dg_rply_writer_xstate(w, 1)));
    dg_rply_player_free(p);
    dg_rply_file_close(&f);
    free(buf);
    dg_rply_writer_free(w);
}

static void writer_delta_widths_and_modes(void **state)
{
    (void)state;
    dg_rply_writer *w = new_writer(0, true, false);
    double q[4] = {1, 0, 0, 0}, pos[3] = {0, 0, 0};
    OK(dg_rply_writer_spawn(w, 1, "char:1", 0, E));
    OK(dg_rply_writer_transform(w, 1, pos, q, E));                   /* 0: full XFORM */
    const double steps[] = {127.0 / 32, 128.0 / 32, -32768.0 / 32, 1025.0, 0.0};
    for (int i = 0; i < 5; i++) {
        OK(dg_rply_writer_tick(w, (uint32_t)(i + 1), E));
        pos[1] += steps[i];
        OK(dg_rply_writer_transform(w, 1, pos, q, E));
    }
    /* 6: a tilt beyond 0.005% of up forces a full XFORM with axis-angle */
    OK(dg_rply_writer_tick(w, 6, E));
    double tilt[4];
    quat_from_axis((double[3]){1, 0, 0}, 0.02, tilt);
    OK(dg_rply_writer_transform(w, 1, pos, tilt, E));
    /* 7: small tilted change: axis delta */
    OK(dg_rply_writer_tick(w, 7, E));
    quat_from_axis((double[3]){1, 0, 0}, 0.05, tilt);
    OK(dg_rply_writer_transform(w, 1, pos, tilt, E));
    /* 8: upright again (within 0.005%): full XFORM with yaw */
    OK(dg_rply_writer_tick(w, 8, E));
    quat_from_axis((double[3]){1, 0, 0}, 0.009, tilt); /* up.y = cos(0.009) = 1 - 4.05e-5 */
    OK(dg_rply_writer_transform(w, 1, pos, tilt, E));
    /* 9: 0.0101 rad tilt: up.y = 1 - 5.1e-5, below the rule: tilted */
    OK(dg_rply_writer_tick(w, 9, E));
    quat_from_axis((double[3]){1, 0, 0}, 0.0101, tilt);
    OK(dg_rply_writer_transform(w, 1, pos, tilt, E));
    dg_rply_op ops[64];
    dg_rply_file f;
    uint8_t *buf;
    size_t n = collect(w, ops, 64, &f, &buf);
    dg_rply_op *by_tick[10] = {0};
    for (size_t i = 0; i < n; i++)
        if (ops[i].code == DG_RPLY_OP_XFORM || ops[i].code == DG_RPLY_OP_XFORM_D)
            by_tick[ops[i].tick] = &ops[i];
    assert_int_equal(by_tick[0]->code, DG_RPLY_OP_XFORM);
    assert_int_equal(by_tick[1]->mask, DG_RPLY_XD_POS8);
    assert_int_equal(by_tick[1]->u.xform_d.dpos[1], 127);
    assert_int_equal(by_tick[2]->mask, DG_RPLY_XD_POS16);
    assert_int_equal(by_tick[2]->u.xform_d.dpos[1], 128);
    assert_int_equal(by_tick[3]->mask, DG_RPLY_XD_POS16);
    assert_int_equal(by_tick[3]->u.xform_d.dpos[1], -32768);
    assert_int_equal(by_tick[4]->code, DG_RPLY_OP_XFORM);            /* 32800 units: too far */
    assert_null(by_tick[5]);                                          /* no change: nothing */
    assert_int_equal(by_tick[6]->code, DG_RPLY_OP_XFORM);
    assert_int_equal(by_tick[6]->mask, DG_RPLY_XF_POS | DG_RPLY_XF_ROT);
    assert_int_equal(by_tick[6]->u.xform.rot[0], dg_rply_rad_to_i16(0.02));
    assert_int_equal(by_tick[7]->code, DG_RPLY_OP_XFORM_D);
    assert_int_equal(by_tick[7]->mask, DG_RPLY_XD_ROT);
    assert_int_equal(by_tick[8]->code, DG_RPLY_OP_XFORM);
    assert_int_equal(by_tick[8]->mask, DG_RPLY_XF_POS | DG_RPLY_XF_YAW);
    assert_int_equal(by_tick[9]->code, DG_RPLY_OP_XFORM);
    assert_int_equal(by_tick[9]->mask, DG_RPLY_XF_POS | DG_RPLY_XF_ROT);
    dg_rply_file_close(&f);
    free(buf);
    dg_rply_writer_free(w);
}

static void writer_thresholds(void **state)
{
    (void)state;
    dg_rply_writer *w = new_writer(0, true, true);
    double q[4], pos[3] = {10, 0, 0};
    quat_from_yaw(0.0, q);
    OK(dg_rply_writer_spawn(w, 1, "char:1", 0, E));
    OK(dg_rply_writer_transform(w, 1, pos, q, E));
    size_t base = dg_rply_writer_op_bytes(w);
    for (uint32_t t = 1; t <= 20; t++) {
        OK(dg_rply_writer_tick(w, t, E));
        pos[0] += 0.002;                /* 0.04 studs after 20 ticks: below 0.05 */
        quat_from_yaw(t * 0.0004, q);   /* 0.008 rad = 0.46 deg: below 0.5 */
        OK(dg_rply_writer_transform(w, 1, pos, q, E));
    }
    assert_int_equal(dg_rply_writer_op_bytes(w), base);
    OK(dg_rply_writer_tick(w, 21, E));
    pos[0] += 0.02;                      /* now 0.06 from the shown position */
    OK(dg_rply_writer_transform(w, 1, pos, q, E));
    assert_int_equal(dg_rply_writer_op_bytes(w), base + 5 + 6); /* TICK 21 + XFORM_D with 3 x i8 */
    dg_rply_writer_free(w);
}

static void writer_full_every_tick(void **state)
{
    (void)state;
    dg_rply_writer_config cfg;
    dg_rply_writer_config_default(&cfg);
    cfg.keyframe_every = 0;
    cfg.use_deltas = false;
    cfg.use_thresholds = false;
    cfg.skip_unchanged = false;
    dg_error err;
    dg_rply_writer *w = dg_rply_writer_new(&cfg, &err);
    double q[4] = {1, 0, 0, 0}, pos[3] = {1, 2, 3};
    OK(dg_rply_writer_spawn(w, 1, "char:1", 0, E));
    for (uint32_t t = 0; t < 10; t++) {
        OK(dg_rply_writer_tick(w, t, E));
        OK(dg_rply_writer_transform(w, 1, pos, q, E));
    }
    dg_rply_op ops[64];
    dg_rply_file f;
    uint8_t *buf;
    size_t n = collect(w, ops, 64, &f, &buf);
    int full = 0;
    for (size_t i = 0; i < n; i++)
        full += ops[i].code == DG_RPLY_OP_XFORM;
    assert_int_equal(full, 10);
    dg_rply_file_close(&f);
    free(buf);
    dg_rply_writer_free(w);
}

static void writer_full_on_change(void **state)
{
    (void)state;
    dg_rply_writer *w = new_writer(0, false, true); /* full XFORMs, thresholds, skip unchanged */
    double q[4] = {1, 0, 0, 0}, pos[3] = {0, 0, 0};
    OK(dg_rply_writer_spawn(w, 1, "char:1", 0, E));
    OK(dg_rply_writer_spawn(w, 2, "model:Jeep", 0, E));
    double tilt[4];
    quat_from_axis((double[3]){0, 0, 1}, 0.3, tilt);
    for (uint32_t t = 0; t < 30; t++) {
        OK(dg_rply_writer_tick(w, t, E));
        if (t >= 10 && t < 20)
            pos[2] += 0.5;          /* moves for ten ticks */
        if (t == 25)
            pos[2] += 0.01;         /* below the threshold */
        OK(dg_rply_writer_transform(w, 1, pos, q, E));
        OK(dg_rply_writer_transform(w, 2, pos, tilt, E));
    }
    dg_rply_op ops[128];
    dg_rply_file f;
    uint8_t *buf;
    size_t n = collect(w, ops, 128, &f, &buf);
    int full1 = 0, full2 = 0, deltas = 0;
    for (size_t i = 0; i < n; i++) {
        full1 += ops[i].code == DG_RPLY_OP_XFORM && ops[i].entity == 1;
        full2 += ops[i].code == DG_RPLY_OP_XFORM && ops[i].entity == 2;
        deltas += ops[i].code == DG_RPLY_OP_XFORM_D;
    }
    assert_int_equal(deltas, 0);
    assert_int_equal(full1, 1 + 10); /* first sample, then each moving tick */
    assert_int_equal(full2, 1 + 10);
    dg_rply_file_close(&f);
    free(buf);
    dg_rply_writer_free(w);
}

static void writer_refuses_misuse(void **state)
{
    (void)state;
    dg_rply_writer *w = new_writer(0, true, true);
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_rply_writer_spawn(w, 0, "x", 0, &err), DG_E_USAGE);
    OK(dg_rply_writer_spawn(w, 1, "x", 0, E));
    dg_error_clear(&err);
    assert_int_equal(dg_rply_writer_spawn(w, 1, "x", 0, &err), DG_E_USAGE);
    dg_error_clear(&err);
    assert_int_equal(dg_rply_writer_spawn(w, 2, "x", 9, &err), DG_E_USAGE);
    dg_error_clear(&err);
    assert_int_equal(dg_rply_writer_despawn(w, 3, &err), DG_E_USAGE);
    dg_error_clear(&err);
    assert_int_equal(dg_rply_writer_xform_d_raw(w, 1, 1, (int16_t[3]){1, 1, 1}, 0, NULL, &err), DG_E_USAGE);
    dg_error_clear(&err);
    assert_int_equal(dg_rply_writer_xform_raw(w, 1, 6, NULL, NULL, 0, &err), DG_E_USAGE);
    dg_error_clear(&err);
    assert_int_equal(dg_rply_writer_string(w, "\xff", 1, &(uint16_t){0}, &err), DG_E_USAGE);
    dg_error_clear(&err);
    double bad[3] = {NAN, 0, 0}, q[4] = {1, 0, 0, 0};
    assert_int_equal(dg_rply_writer_transform(w, 1, bad, q, &err), DG_E_RANGE);
    dg_error_clear(&err);
    double zero_q[4] = {0, 0, 0, 0}, pos[3] = {0, 0, 0};
    assert_int_equal(dg_rply_writer_transform(w, 1, pos, zero_q, &err), DG_E_RANGE);
    dg_rply_value v;
    memset(&v, 0, sizeof v);
    v.tag = 6;
    dg_error_clear(&err);
    assert_int_equal(dg_rply_writer_prop(w, 1, "x", &v, &err), DG_E_USAGE);
    v.tag = 0;
    v.u.b = 2;
    dg_error_clear(&err);
    assert_int_equal(dg_rply_writer_prop(w, 1, "x", &v, &err), DG_E_USAGE);
    v.tag = 2;
    v.u.str = 999;
    dg_error_clear(&err);
    assert_int_equal(dg_rply_writer_prop(w, 1, "x", &v, &err), DG_E_USAGE);
    dg_error_clear(&err);
    assert_int_equal(dg_rply_writer_prop_str(w, 1, "x", 0, "y", &err), DG_E_USAGE);
    dg_error_clear(&err);
    assert_int_equal(dg_rply_writer_anim_play(w, 9, "a", 0, 0, 0, &err), DG_E_USAGE);
    dg_error_clear(&err);
    assert_int_equal(dg_rply_writer_anim_stop(w, 9, 0, 0, &err), DG_E_USAGE);
    dg_error_clear(&err);
    assert_int_equal(dg_rply_writer_anim_speed(w, 9, 0, 0, &err), DG_E_USAGE);
    dg_error_clear(&err);
    assert_int_equal(dg_rply_writer_snapshot_raw(w, 1, (const uint8_t *)"\x09", 1, &err), DG_E_VERSION);
    dg_error_clear(&err);
    uint8_t *out;
    size_t len;
    OK(dg_rply_writer_tick(w, 5, E));
    assert_int_equal(dg_rply_writer_finish(w, 3, &out, &len, &err), DG_E_USAGE); /* tickCount <= tick */
    /* nothing refused above reached the stream: the file reads back valid */
    OK(dg_rply_writer_finish(w, 0, &out, &len, E));
    dg_rply_file f;
    OK(dg_rply_file_open(&f, out, len, 0, E));
    OK(dg_rply_validate(&f, E));
    dg_rply_file_close(&f);
    free(out);
    dg_rply_writer_free(w);
    dg_rply_writer_config cfg;
    dg_rply_writer_config_default(&cfg);
    cfg.tick_rate = 0;
    dg_error_clear(&err);
    assert_null(dg_rply_writer_new(&cfg, &err));
    assert_int_equal(err.code, DG_E_USAGE);
}

static void writer_save_atomic(void **state)
{
    (void)state;
    dg_rply_writer *w = new_writer(5, true, true);
    OK(dg_rply_writer_spawn(w, 1, "model:Prototypes.Tree", 0, E));
    char path[] = "/tmp/rply_test_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    OK(dg_rply_writer_save(w, 0, path, E));
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_int_equal(access(tmp, F_OK), -1);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    uint8_t b[256];
    size_t n = fread(b, 1, sizeof b, fp);
    fclose(fp);
    uint8_t *mem;
    size_t len;
    OK(dg_rply_writer_finish(w, 0, &mem, &len, E));
    assert_int_equal(n, len);
    assert_memory_equal(b, mem, len);
    free(mem);
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_rply_writer_save(w, 0, "/nonexistent-dir/x.rply", &err), DG_E_IO);
    remove(path);
    dg_rply_writer_free(w);
}

/* ---- snapshot v10 round trip --------------------------------------------------------------- */
static void str_eq(dg_rply_str a, dg_rply_str b)
{
    assert_int_equal(a.len, b.len);
    if (a.len)
        assert_memory_equal(a.s, b.s, a.len);
}

static void snapshot_round_trip(void **state)
{
    (void)state;
    sample_snapshot x;
    sample_snapshot_init(&x);
    size_t n;
    OK(dg_rply_snapshot_encode(&x.s, NULL, 0, &n, E));
    uint8_t *b = malloc(n);
    OK(dg_rply_snapshot_encode(&x.s, b, n, &n, E));
    dg_rply_snapshot *dp;
    OK(dg_rply_snapshot_decode(b, n, 0, &dp, E));
    const dg_rply_snapshot d = *dp;
    const dg_rply_snapshot *s = &x.s;
    assert_int_equal(d.version, 10);
    assert_int_equal(d.is_model, 1);
    str_eq(d.name, s->name);
    str_eq(d.source_key, s->source_key);
    str_eq(d.root_path, s->root_path);
    assert_int_equal(d.union_count, 2);
    str_eq(d.union_keys[1], s->union_keys[1]);
    assert_int_equal(d.mesh_count, 1);
    str_eq(d.mesh_ids[0], s->mesh_ids[0]);
    assert_int_equal(d.rig.has_humanoid, 1);
    assert_int_equal(d.rig.rig_type, 1);
    str_eq(d.rig.shirt, s->rig.shirt);
    str_eq(d.rig.pants, s->rig.pants);
    assert_memory_equal(d.rig.body_colors, s->rig.body_colors, 18);
    assert_int_equal(d.rig.mesh_count, 2);
    assert_memory_equal(&d.rig.meshes[1].mesh_id, &s->rig.meshes[1].mesh_id, 8);
    assert_true(d.rig.meshes[0].overlay_texture_id == 1.5);
    assert_int_equal(d.part_count, 6);
    for (int i = 0; i < 6; i++) {
        const dg_rply_part *p = &d.parts[i], *q = &s->parts[i];
        assert_int_equal(p->kind, q->kind);
        str_eq(p->name, q->name);
        str_eq(p->parent_path, q->parent_path);
        assert_memory_equal(p->offset, q->offset, 12);
        assert_memory_equal(p->rotation, q->rotation, 6);
        assert_memory_equal(p->size, q->size, 12);
        assert_memory_equal(p->color, q->color, 3);
        assert_int_equal(p->material, q->material);
        assert_int_equal(p->transparency, q->transparency);
        assert_int_equal(p->reflectance, q->reflectance);
        assert_int_equal(p->shape, q->shape);
        assert_memory_equal(p->surfaces, q->surfaces, 6);
        assert_int_equal(p->has_special_mesh, q->has_special_mesh);
        assert_int_equal(p->has_surface_appearance, q->has_surface_appearance);
        assert_int_equal(p->decal_count, q->decal_count);
        assert_int_equal(p->effect_count, q->effect_count);
    }
    assert_int_equal(d.parts[5].union_key_index, 1);
    str_eq(d.parts[1].mesh_id, s->parts[1].mesh_id);
    str_eq(d.parts[1].texture_id, s->parts[1].texture_id);
    assert_memory_equal(d.parts[1].mesh_size, s->parts[1].mesh_size, 12);
    assert_int_equal(d.parts[2].special_mesh.mesh_type, 2);
    assert_memory_equal(d.parts[2].special_mesh.offset, s->parts[2].special_mesh.offset, 12);
    str_eq(d.parts[3].surface_appearance.roughness_map, s->parts[3].surface_appearance.roughness_map);
    assert_int_equal(d.parts[3].surface_appearance.alpha_mode, 2);
    assert_int_equal(d.parts[0].decals[1].kind, 1);
    assert_memory_equal(d.parts[0].decals[1].studs_per_tile, s->parts[0].decals[1].studs_per_tile, 8);
    assert_int_equal(d.parts[0].decals[0].face, 5);
    for (int c = 0; c < 11; c++) {
        const dg_rply_effect *e = &d.parts[0].effects[c];
        assert_int_equal(e->class_id, c + 1);
        assert_int_equal(e->parent_index, c == 0 ? 0 : 1);
        assert_int_equal(e->prop_count, 1);
        assert_int_equal(e->props[0].tag, c);
        assert_int_equal(e->props[0].index, c * 3);
    }
    assert_true(d.parts[0].effects[7].props[0].numseq[1].envelope == 0.1f);
    assert_int_equal(d.parts[0].effects[8].props[0].colorseq[1].rgb[2], 255);
    str_eq(d.parts[0].effects[10].props[0].s, RS("Att0"));
    assert_int_equal(d.joint_count, 4);
    for (int j = 0; j < 4; j++) {
        assert_int_equal(d.joints[j].kind, j + 1);
        assert_int_equal(d.joints[j].holder, j + 1);
        assert_int_equal(d.joints[j].part1, j + 2);
    }
    assert_memory_equal(&d.joints[1].c1, &s->joints[1].c1, sizeof d.joints[1].c1);
    str_eq(d.joints[3].attachment1, RS("Att1"));
    /* re-encoding the decoded snapshot gives the same bytes */
    size_t n2;
    uint8_t *b2 = malloc(n);
    OK(dg_rply_snapshot_encode(&d, b2, n, &n2, E));
    assert_int_equal(n2, n);
    assert_memory_equal(b2, b, n);
    dg_rply_snapshot_free(dp);
    /* the encoder refuses what the reader would refuse */
    x.joints[0].part1 = 7;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_rply_snapshot_encode(&x.s, NULL, 0, &n2, &err), DG_E_RANGE);
    free(b);
    free(b2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_sessions_round_trip),
        cmocka_unit_test(random_session_every_tick),
        cmocka_unit_test(xform_d_never_drifts),
        cmocka_unit_test(seek_equals_linear),
        cmocka_unit_test(failing_tick_leaves_state),
        cmocka_unit_test(writer_tick_openers),
        cmocka_unit_test(writer_keyframes),
        cmocka_unit_test(writer_keyframe_raw_entities),
        cmocka_unit_test(writer_delta_widths_and_modes),
        cmocka_unit_test(writer_thresholds),
        cmocka_unit_test(writer_full_every_tick),
        cmocka_unit_test(writer_full_on_change),
        cmocka_unit_test(writer_refuses_misuse),
        cmocka_unit_test(writer_save_atomic),
        cmocka_unit_test(snapshot_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
