/* codec/rply/rply_write.c — the RPLY recorder: transform policy (full XFORM, XFORM_D or nothing),
 * keyframes, string interning, and the file layout (in memory, or to a path via temp + rename).
 * The writer keeps the same quantized transform as the reader (rply__xstate_apply_*), so what it
 * believes the player shows is exactly what the player shows: error never drifts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "rply_internal.h"

#define PI 3.14159265358979323846

typedef struct wr_ent {
    bool live;
    bool has_x;          /* a full XFORM was written since the spawn */
    bool kf_done;        /* a full XFORM was written in the current keyframe tick */
    bool has_sample;     /* pos/q hold a dg_rply_writer_transform sample (raw ops leave it false) */
    uint32_t live_at;    /* index in w->live */
    dg_rply_xstate x;    /* what the player rebuilds */
    double pos[3];       /* last sample (for keyframe refreshes) */
    double q[4];
} wr_ent;

struct dg_rply_writer {
    dg_rply_writer_config cfg;
    dg_buf ops;
    dg_buf str_bytes;           /* interned strings, back to back */
    uint32_t *str_off;
    uint16_t *str_len;
    uint32_t str_count, str_cap;
    uint32_t *hash;             /* open addressing: id + 1, 0 = empty */
    uint32_t hash_cap;
    dg_rply_keyframe *kfs;
    uint32_t kf_count, kf_cap;
    wr_ent *ent;                /* [65536] */
    uint16_t *live;             /* dense live ids */
    uint32_t live_count;
    uint32_t tick;              /* current tick */
    bool explicit_tick;         /* dg_rply_writer_tick was called at least once */
    bool tick_open;             /* the current tick's opener (if it needs one) is written */
    bool is_kf;                 /* the current tick is a keyframe */
    uint32_t prev_tick;         /* tick of the last opener written (0 = implicit start) */
};

/* ---- float side of quantization (libm is fine here: the gate compares only quantized state) --- */
double dg_rply_quat_up_y(const double q[4])
{
    return 1.0 - 2.0 * (q[1] * q[1] + q[3] * q[3]);
}

double dg_rply_quat_yaw(const double q[4])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    return atan2(2.0 * (x * z + w * y), 1.0 - 2.0 * (x * x + y * y));
}

void dg_rply_quat_to_axis_angle(const double q_in[4], double out[3])
{
    double q[4] = {q_in[0], q_in[1], q_in[2], q_in[3]};
    if (q[0] < 0.0)
        for (int i = 0; i < 4; i++)
            q[i] = -q[i];
    double s = sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (s < 1e-12) {
        for (int i = 0; i < 3; i++)
            out[i] = 2.0 * q[i + 1];
        return;
    }
    double angle = 2.0 * atan2(s, q[0]);
    for (int i = 0; i < 3; i++)
        out[i] = q[i + 1] / s * angle;
}

static double round_half_away(double v) { return v < 0.0 ? -floor(-v + 0.5) : floor(v + 0.5); }

int16_t dg_rply_rad_to_i16(double rad)
{
    double v = round_half_away(rad / PI * 32767.0);
    if (!(v > -32767.0))
        return -32767;
    if (v > 32767.0)
        return 32767;
    return (int16_t)v;
}

static double wrap_pi(double a)
{
    double r = remainder(a, 2.0 * PI);
    return r;
}

/* ---- construction -------------------------------------------------------------------------- */
void dg_rply_writer_config_default(dg_rply_writer_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->tick_rate = 15;
    cfg->keyframe_every = 150;
    cfg->use_deltas = true;
    cfg->use_thresholds = true;
    cfg->skip_unchanged = true;
    cfg->pos_threshold = 0.05;
    cfg->rot_threshold_deg = 0.5;
}

static void begin_tick(dg_rply_writer *w, uint32_t tick);

dg_rply_writer *dg_rply_writer_new(const dg_rply_writer_config *cfg, dg_error *err)
{
    if (!cfg || cfg->tick_rate == 0) {
        dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "rply writer", "tickRate must be 1..255");
        return NULL;
    }
    dg_rply_writer *w = calloc(1, sizeof *w);
    if (w) {
        w->ent = calloc(65536, sizeof *w->ent);
        w->live = calloc(65536, sizeof *w->live);
    }
    if (!w || !w->ent || !w->live) {
        dg_rply_writer_free(w);
        dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply writer", "entity tables");
        return NULL;
    }
    w->cfg = *cfg;
    dg_buf_init(&w->ops);
    dg_buf_init(&w->str_bytes);
    begin_tick(w, 0);
    return w;
}

void dg_rply_writer_free(dg_rply_writer *w)
{
    if (!w)
        return;
    dg_buf_free(&w->ops);
    dg_buf_free(&w->str_bytes);
    free(w->str_off);
    free(w->str_len);
    free(w->hash);
    free(w->kfs);
    free(w->ent);
    free(w->live);
    free(w);
}

size_t dg_rply_writer_op_bytes(const dg_rply_writer *w) { return w->ops.len; }

const dg_rply_xstate *dg_rply_writer_xstate(const dg_rply_writer *w, uint16_t id)
{
    return w->ent[id].live ? &w->ent[id].x : NULL;
}

/* ---- strings ------------------------------------------------------------------------------- */
static uint32_t fnv1a(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

static bool rehash(dg_rply_writer *w, uint32_t cap)
{
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t)
        return false;
    for (uint32_t id = 0; id < w->str_count; id++) {
        uint32_t h = fnv1a((const char *)w->str_bytes.p + w->str_off[id], w->str_len[id]) & (cap - 1);
        while (t[h])
            h = (h + 1) & (cap - 1);
        t[h] = id + 1;
    }
    free(w->hash);
    w->hash = t;
    w->hash_cap = cap;
    return true;
}

dg_status dg_rply_writer_string(dg_rply_writer *w, const char *s, size_t len, uint16_t *id,
                                dg_error *err)
{
    if (!s)
        s = "";
    if (len > UINT16_MAX || !dg_utf8_valid((const uint8_t *)s, len))
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "rply writer string table",
                            "a string must be valid UTF-8 of at most 65535 bytes (%zu bytes)", len);
    if (w->hash_cap) {
        uint32_t h = fnv1a(s, len) & (w->hash_cap - 1);
        while (w->hash[h]) {
            uint32_t k = w->hash[h] - 1;
            if (w->str_len[k] == len && memcmp(w->str_bytes.p + w->str_off[k], s, len) == 0) {
                *id = (uint16_t)k;
                return DG_OK;
            }
            h = (h + 1) & (w->hash_cap - 1);
        }
    }
    if (w->str_count >= 65535)
        return dg_error_set(err, DG_E_LIMIT, DG_OFFSET_NONE, "rply writer string table",
                            "more than 65535 distinct strings");
    if (w->str_count == w->str_cap) {
        uint32_t n = w->str_cap ? w->str_cap * 2 : 64;
        uint32_t *o = realloc(w->str_off, n * sizeof *o);
        if (o)
            w->str_off = o;
        uint16_t *l = o ? realloc(w->str_len, n * sizeof *l) : NULL;
        if (l)
            w->str_len = l;
        if (!o || !l)
            return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply writer", "strings");
        w->str_cap = n;
    }
    if (w->str_bytes.len > UINT32_MAX - len)
        return dg_error_set(err, DG_E_LIMIT, DG_OFFSET_NONE, "rply writer", "string bytes");
    uint32_t k = w->str_count;
    w->str_off[k] = (uint32_t)w->str_bytes.len;
    w->str_len[k] = (uint16_t)len;
    dg_buf_put(&w->str_bytes, s, len);
    if (!w->str_bytes.ok)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply writer", "strings");
    w->str_count++;
    if ((uint64_t)w->str_count * 2 > w->hash_cap) {
        if (!rehash(w, w->hash_cap ? w->hash_cap * 2 : 256)) {
            w->str_count--;
            return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply writer", "string hash");
        }
    } else {
        uint32_t h = fnv1a(s, len) & (w->hash_cap - 1);
        while (w->hash[h])
            h = (h + 1) & (w->hash_cap - 1);
        w->hash[h] = k + 1;
    }
    *id = (uint16_t)k;
    return DG_OK;
}

static dg_status intern(dg_rply_writer *w, const char *s, uint16_t *id, dg_error *err)
{
    return dg_rply_writer_string(w, s, s ? strlen(s) : 0, id, err);
}

/* ---- ticks --------------------------------------------------------------------------------- */
static void put_op_head(dg_rply_writer *w, unsigned code)
{
    dg_buf_reserve(&w->ops, 1 + (size_t)dg_rply_op_head_size(code) + 32);
    dg_buf_u8(&w->ops, (uint8_t)code);
}

/* Writes the opener of the current tick before its first op (TICK_NEXT when it follows the last
 * opened tick by one, else TICK; tick 0 needs none: ops before any opener belong to tick 0). */
static void open_tick(dg_rply_writer *w)
{
    if (w->tick_open)
        return;
    w->tick_open = true;
    if (w->tick == 0 && !w->is_kf)
        return;
    if (!w->is_kf && w->tick == w->prev_tick + 1) {
        put_op_head(w, DG_RPLY_OP_TICK_NEXT);
    } else {
        if (w->is_kf) {
            w->kfs[w->kf_count].tick = w->tick;
            w->kfs[w->kf_count].offset = (uint32_t)w->ops.len;
            w->kf_count++;
        }
        put_op_head(w, DG_RPLY_OP_TICK);
        dg_buf_u32(&w->ops, w->tick);
    }
    w->prev_tick = w->tick;
}

static void begin_tick(dg_rply_writer *w, uint32_t tick)
{
    w->tick = tick;
    w->tick_open = false;
    w->is_kf = false;
    if (w->cfg.keyframe_every && tick % w->cfg.keyframe_every == 0 && w->kf_count < 65535 &&
        w->ops.len < UINT32_MAX) {
        if (w->kf_count == w->kf_cap) {
            uint32_t n = w->kf_cap ? w->kf_cap * 2 : 64;
            dg_rply_keyframe *k = realloc(w->kfs, n * sizeof *k);
            if (!k)
                return; /* no room to index it: an ordinary tick */
            w->kfs = k;
            w->kf_cap = n;
        }
        w->is_kf = true;
        for (uint32_t i = 0; i < w->live_count; i++)
            w->ent[w->live[i]].kf_done = false;
        open_tick(w); /* keyframe ticks always open with an absolute TICK, even when empty */
    }
}

static dg_status emit_full(dg_rply_writer *w, wr_ent *e, uint16_t id, dg_error *err);

/* A keyframe promises a full XFORM of every live entity: refresh the ones the caller did not
 * sample this tick from their last sample. Entities driven only by raw XFORM/XFORM_D ops have no
 * sample to refresh from (their accumulated deltas cannot be re-based exactly), so they are the raw
 * caller's to write. */
static dg_status close_tick(dg_rply_writer *w, dg_error *err)
{
    if (!w->is_kf)
        return DG_OK;
    for (uint32_t i = 0; i < w->live_count; i++) {
        uint16_t id = w->live[i];
        wr_ent *e = &w->ent[id];
        if (e->has_x && e->has_sample && !e->kf_done && emit_full(w, e, id, err) != DG_OK)
            return err ? err->code : DG_E_USAGE;
    }
    return DG_OK;
}

dg_status dg_rply_writer_tick(dg_rply_writer *w, uint32_t tick, dg_error *err)
{
    if (tick == 0 && w->tick == 0 && !w->explicit_tick) {
        w->explicit_tick = true;
        return DG_OK;
    }
    if (tick <= w->tick)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "rply writer",
                            "tick %u does not follow tick %u", tick, w->tick);
    w->explicit_tick = true;
    dg_status st = close_tick(w, err);
    if (st != DG_OK)
        return st;
    begin_tick(w, tick);
    return w->ops.ok ? DG_OK : dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply writer", "ops");
}

/* ---- entity ops ---------------------------------------------------------------------------- */
static wr_ent *need_live(dg_rply_writer *w, uint16_t id, const char *op, dg_error *err)
{
    if (id == 0 || !w->ent[id].live) {
        dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "rply writer", "%s on entity %u, which is not live",
                     op, id);
        return NULL;
    }
    return &w->ent[id];
}

static dg_status done(dg_rply_writer *w, dg_error *err)
{
    if (!w->ops.ok)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply writer", "op stream");
    if (w->ops.len > UINT32_MAX)
        return dg_error_set(err, DG_E_LIMIT, DG_OFFSET_NONE, "rply writer",
                            "op stream exceeds 4 GiB (u32 opBytes)");
    return DG_OK;
}

dg_status dg_rply_writer_spawn(dg_rply_writer *w, uint16_t id, const char *descriptor,
                               uint16_t parent, dg_error *err)
{
    if (id == 0 || w->ent[id].live)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "rply writer",
                            "SPAWN of entity %u: %s", id, id == 0 ? "0 means none" : "already live");
    if (parent != 0 && !w->ent[parent].live)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "rply writer",
                            "SPAWN of entity %u: parent %u is not live", id, parent);
    uint16_t desc;
    if (intern(w, descriptor, &desc, err) != DG_OK)
        return err ? err->code : DG_E_USAGE;
    open_tick(w);
    put_op_head(w, DG_RPLY_OP_SPAWN);
    dg_buf_u16(&w->ops, id);
    dg_buf_u16(&w->ops, desc);
    dg_buf_u16(&w->ops, parent);
    wr_ent *e = &w->ent[id];
    memset(e, 0, sizeof *e);
    e->live = true;
    e->live_at = w->live_count;
    w->live[w->live_count++] = id;
    return done(w, err);
}

dg_status dg_rply_writer_despawn(dg_rply_writer *w, uint16_t id, dg_error *err)
{
    wr_ent *e = need_live(w, id, "DESPAWN", err);
    if (!e)
        return DG_E_USAGE;
    open_tick(w);
    put_op_head(w, DG_RPLY_OP_DESPAWN);
    dg_buf_u16(&w->ops, id);
    uint32_t k = e->live_at, last = w->live_count - 1;
    if (k != last) {
        w->live[k] = w->live[last];
        w->ent[w->live[k]].live_at = k;
    }
    w->live_count--;
    e->live = false;
    return done(w, err);
}

static void put_xform_d_id(dg_rply_writer *w, uint16_t id)
{
    if (id < 255) {
        dg_buf_u8(&w->ops, (uint8_t)id);
    } else {
        dg_buf_u8(&w->ops, 0xFF);
        dg_buf_u16(&w->ops, id);
    }
}

/* Writes an XFORM and applies it to the tracked state exactly as the reader does. */
static void write_xform(dg_rply_writer *w, wr_ent *e, uint16_t id, uint8_t mask, const float pos[3],
                        const int16_t rot[3], int16_t yaw)
{
    open_tick(w);
    put_op_head(w, DG_RPLY_OP_XFORM);
    dg_buf_u16(&w->ops, id);
    dg_buf_u8(&w->ops, mask);
    dg_rply_op op;
    memset(&op, 0, sizeof op);
    op.code = DG_RPLY_OP_XFORM;
    op.mask = mask;
    if (mask & DG_RPLY_XF_POS)
        for (int i = 0; i < 3; i++) {
            dg_buf_f32(&w->ops, pos[i]);
            op.u.xform.pos[i] = pos[i];
        }
    if (mask & DG_RPLY_XF_ROT)
        for (int i = 0; i < 3; i++) {
            dg_buf_u16(&w->ops, (uint16_t)rot[i]);
            op.u.xform.rot[i] = rot[i];
        }
    if (mask & DG_RPLY_XF_YAW) {
        dg_buf_u16(&w->ops, (uint16_t)yaw);
        op.u.xform.yaw = yaw;
    }
    rply__xstate_apply_xform(&e->x, &op);
    e->has_x = true;
}

static void write_xform_d(dg_rply_writer *w, wr_ent *e, uint16_t id, uint8_t mask,
                          const int32_t dpos[3], int32_t dyaw, const int32_t drot[3])
{
    open_tick(w);
    put_op_head(w, DG_RPLY_OP_XFORM_D);
    put_xform_d_id(w, id);
    dg_buf_u8(&w->ops, mask);
    dg_rply_op op;
    memset(&op, 0, sizeof op);
    op.code = DG_RPLY_OP_XFORM_D;
    op.mask = mask;
    if (mask & DG_RPLY_XD_POS8)
        for (int i = 0; i < 3; i++)
            dg_buf_u8(&w->ops, (uint8_t)(int8_t)dpos[i]);
    if (mask & DG_RPLY_XD_POS16)
        for (int i = 0; i < 3; i++)
            dg_buf_u16(&w->ops, (uint16_t)(int16_t)dpos[i]);
    if (mask & (DG_RPLY_XD_POS8 | DG_RPLY_XD_POS16))
        for (int i = 0; i < 3; i++)
            op.u.xform_d.dpos[i] = (int16_t)dpos[i];
    if (mask & DG_RPLY_XD_YAW) {
        dg_buf_u8(&w->ops, (uint8_t)(int8_t)dyaw);
        op.u.xform_d.dyaw = (int8_t)dyaw;
    }
    if (mask & DG_RPLY_XD_ROT)
        for (int i = 0; i < 3; i++) {
            dg_buf_u8(&w->ops, (uint8_t)(int8_t)drot[i]);
            op.u.xform_d.drot[i] = (int8_t)drot[i];
        }
    rply__xstate_apply_delta(&e->x, &op);
}

static bool is_upright(const double q[4]) { return dg_rply_quat_up_y(q) >= 1.0 - 5e-5; }

static dg_status emit_full(dg_rply_writer *w, wr_ent *e, uint16_t id, dg_error *err)
{
    float pos[3];
    for (int i = 0; i < 3; i++)
        pos[i] = (float)e->pos[i];
    int16_t rot[3] = {0, 0, 0}, yaw = 0;
    uint8_t mask = DG_RPLY_XF_POS;
    if (is_upright(e->q)) {
        mask |= DG_RPLY_XF_YAW;
        yaw = dg_rply_rad_to_i16(dg_rply_quat_yaw(e->q));
    } else {
        mask |= DG_RPLY_XF_ROT;
        double aa[3];
        dg_rply_quat_to_axis_angle(e->q, aa);
        for (int i = 0; i < 3; i++)
            rot[i] = dg_rply_rad_to_i16(aa[i]);
    }
    write_xform(w, e, id, mask, pos, rot, yaw);
    if (w->is_kf)
        e->kf_done = true;
    return done(w, err);
}

static bool fits(const int64_t *v, int n, int64_t lim)
{
    for (int i = 0; i < n; i++)
        if (v[i] < -lim - 1 || v[i] > lim)
            return false;
    return true;
}

/* Delta units from the tracked (quantized) value to the sample; false when beyond i32. */
static bool pos_delta(const dg_rply_xstate *x, const double pos[3], int64_t d[3], double *dist)
{
    double d2 = 0.0;
    for (int i = 0; i < 3; i++) {
        float base;
        memcpy(&base, &x->pos_bits[i], sizeof base);
        double target = round_half_away((pos[i] - (double)base) * 32.0);
        if (!(fabs(target) < 2147483647.0))
            return false;
        d[i] = (int64_t)target - x->dpos[i];
        double shown = (double)base + x->dpos[i] / 32.0;
        d2 += (pos[i] - shown) * (pos[i] - shown);
    }
    *dist = sqrt(d2);
    return true;
}

static bool yaw_delta(const dg_rply_xstate *x, const double q[4], int64_t *d, double *diff)
{
    double shown = x->rot[0] * (PI / 32767.0) + x->drot[0] / 64.0;
    double wrapped = wrap_pi(dg_rply_quat_yaw(q) - shown);
    *d = (int64_t)round_half_away(wrapped * 64.0);
    *diff = fabs(wrapped);
    return (double)x->drot[0] + (double)*d < 2147483647.0 && (double)x->drot[0] + (double)*d > -2147483647.0;
}

static bool axis_delta(const dg_rply_xstate *x, const double q[4], int64_t d[3], double *diff)
{
    double aa[3], d2 = 0.0;
    dg_rply_quat_to_axis_angle(q, aa);
    for (int i = 0; i < 3; i++) {
        double base = x->rot[i] * (PI / 32767.0);
        double target = round_half_away((aa[i] - base) * 128.0);
        if (!(fabs(target) < 2147483647.0))
            return false;
        d[i] = (int64_t)target - x->drot[i];
        double shown = base + x->drot[i] / 128.0;
        d2 += (aa[i] - shown) * (aa[i] - shown);
    }
    *diff = sqrt(d2);
    return true;
}

static bool full_unchanged(const wr_ent *e)
{
    for (int i = 0; i < 3; i++) {
        float f = (float)e->pos[i];
        if (rply__f32_bits(f) != e->x.pos_bits[i] || e->x.dpos[i] != 0 || e->x.drot[i] != 0)
            return false;
    }
    if (is_upright(e->q))
        return (e->x.xf & DG_RPLY_HAS_YAW) && e->x.rot[0] == dg_rply_rad_to_i16(dg_rply_quat_yaw(e->q));
    double aa[3];
    dg_rply_quat_to_axis_angle(e->q, aa);
    if (!(e->x.xf & DG_RPLY_HAS_ROT))
        return false;
    for (int i = 0; i < 3; i++)
        if (e->x.rot[i] != dg_rply_rad_to_i16(aa[i]))
            return false;
    return true;
}

dg_status dg_rply_writer_transform(dg_rply_writer *w, uint16_t id, const double pos[3],
                                   const double quat[4], dg_error *err)
{
    wr_ent *e = need_live(w, id, "transform", err);
    if (!e)
        return DG_E_USAGE;
    double n2 = 0.0;
    for (int i = 0; i < 4; i++)
        n2 += quat[i] * quat[i];
    for (int i = 0; i < 3; i++)
        if (!isfinite(pos[i]) || fabs(pos[i]) > 3.0e38)
            return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "rply writer",
                                "entity %u position[%d] = %g is not a finite f32", id, i, pos[i]);
    if (!isfinite(n2) || !(n2 > 1e-30))
        return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "rply writer",
                            "entity %u rotation is not a usable quaternion", id);
    double inv = 1.0 / sqrt(n2);
    e->has_sample = true;
    for (int i = 0; i < 3; i++)
        e->pos[i] = pos[i];
    for (int i = 0; i < 4; i++)
        e->q[i] = quat[i] * inv;

    bool upright = is_upright(e->q);
    bool mode_switch = e->has_x && (upright ? !(e->x.xf & DG_RPLY_HAS_YAW) : !(e->x.xf & DG_RPLY_HAS_ROT));
    bool kf_full = w->is_kf && !e->kf_done;
    if (!e->has_x || mode_switch || kf_full)
        return emit_full(w, e, id, err);

    int64_t dp[3], dr[3] = {0, 0, 0};
    double dist, rdiff;
    bool ok = pos_delta(&e->x, e->pos, dp, &dist);
    ok = ok && (upright ? yaw_delta(&e->x, e->q, &dr[0], &rdiff) : axis_delta(&e->x, e->q, dr, &rdiff));
    if (!ok)
        return emit_full(w, e, id, err);
    bool pos_moved = dp[0] || dp[1] || dp[2];
    bool rot_moved = dr[0] || dr[1] || dr[2];
    if (w->cfg.use_thresholds) {
        pos_moved = pos_moved && dist >= w->cfg.pos_threshold;
        rot_moved = rot_moved && rdiff >= w->cfg.rot_threshold_deg * (PI / 180.0);
    }
    if (!w->cfg.use_deltas) {
        if (!w->cfg.skip_unchanged || ((pos_moved || rot_moved) && !full_unchanged(e)))
            return emit_full(w, e, id, err);
        return DG_OK;
    }
    if (!pos_moved && !rot_moved)
        return DG_OK;
    uint8_t mask = 0;
    if (pos_moved) {
        if (fits(dp, 3, 127))
            mask |= DG_RPLY_XD_POS8;
        else if (fits(dp, 3, 32767))
            mask |= DG_RPLY_XD_POS16;
        else
            return emit_full(w, e, id, err);
    }
    if (rot_moved) {
        if (!fits(dr, upright ? 1 : 3, 127))
            return emit_full(w, e, id, err);
        mask |= upright ? DG_RPLY_XD_YAW : DG_RPLY_XD_ROT;
    }
    int32_t dp32[3] = {(int32_t)dp[0], (int32_t)dp[1], (int32_t)dp[2]};
    int32_t dr32[3] = {(int32_t)dr[0], (int32_t)dr[1], (int32_t)dr[2]};
    write_xform_d(w, e, id, mask, dp32, dr32[0], dr32);
    return done(w, err);
}

dg_status dg_rply_writer_xform_raw(dg_rply_writer *w, uint16_t id, uint8_t mask, const float pos[3],
                                   const int16_t rot[3], int16_t yaw, dg_error *err)
{
    wr_ent *e = need_live(w, id, "XFORM", err);
    if (!e)
        return DG_E_USAGE;
    if (mask == 0 || (mask & ~7u) || (mask & 6) == 6)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "rply writer", "XFORM mask 0x%02x", mask);
    static const float zf[3] = {0, 0, 0};
    static const int16_t zr[3] = {0, 0, 0};
    write_xform(w, e, id, mask, pos ? pos : zf, rot ? rot : zr, yaw);
    if (w->is_kf && (mask & DG_RPLY_XF_POS) && (mask & (DG_RPLY_XF_ROT | DG_RPLY_XF_YAW)))
        e->kf_done = true;
    return done(w, err);
}

dg_status dg_rply_writer_xform_d_raw(dg_rply_writer *w, uint16_t id, uint8_t mask,
                                     const int16_t dpos[3], int8_t dyaw, const int8_t drot[3],
                                     dg_error *err)
{
    wr_ent *e = need_live(w, id, "XFORM_D", err);
    if (!e)
        return DG_E_USAGE;
    if (mask == 0 || (mask & ~15u) || (mask & 3) == 3 || (mask & 12) == 12)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "rply writer", "XFORM_D mask 0x%02x", mask);
    const char *why = rply__xstate_delta_refusal(&e->x, mask);
    if (why)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "rply writer", "entity %u: %s", id, why);
    int32_t dp[3] = {0, 0, 0}, dr[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
        dp[i] = dpos ? dpos[i] : 0;
        dr[i] = drot ? drot[i] : 0;
        if ((mask & DG_RPLY_XD_POS8) && (dp[i] < -128 || dp[i] > 127))
            return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "rply writer",
                                "i8 position delta %d out of range", dp[i]);
    }
    write_xform_d(w, e, id, mask, dp, dyaw, dr);
    return done(w, err);
}

dg_status dg_rply_writer_prop(dg_rply_writer *w, uint16_t id, const char *name,
                              const dg_rply_value *v, dg_error *err)
{
    if (!need_live(w, id, "PROP", err))
        return DG_E_USAGE;
    if (v->tag > DG_RPLY_PROP_ENUM || (v->tag == DG_RPLY_PROP_BOOL && v->u.b > 1))
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "rply writer",
                            "PROP typeTag %u / value not writable", v->tag);
    if ((v->tag == DG_RPLY_PROP_STRING || v->tag == DG_RPLY_PROP_ENUM) && v->u.str >= w->str_count)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "rply writer",
                            "PROP string id %u is not interned", v->u.str);
    uint16_t nid;
    if (intern(w, name, &nid, err) != DG_OK)
        return err ? err->code : DG_E_USAGE;
    open_tick(w);
    put_op_head(w, DG_RPLY_OP_PROP);
    dg_buf_u16(&w->ops, id);
    dg_buf_u16(&w->ops, nid);
    dg_buf_u8(&w->ops, v->tag);
    switch (v->tag) {
    case DG_RPLY_PROP_BOOL: dg_buf_u8(&w->ops, v->u.b); break;
    case DG_RPLY_PROP_NUMBER: dg_buf_f64(&w->ops, v->u.num); break;
    case DG_RPLY_PROP_STRING:
    case DG_RPLY_PROP_ENUM: dg_buf_u16(&w->ops, v->u.str); break;
    case DG_RPLY_PROP_COLOR3: dg_buf_put(&w->ops, v->u.rgb, 3); break;
    case DG_RPLY_PROP_VECTOR3:
        for (int i = 0; i < 3; i++)
            dg_buf_f32(&w->ops, v->u.vec[i]);
        break;
    }
    return done(w, err);
}

dg_status dg_rply_writer_prop_str(dg_rply_writer *w, uint16_t id, const char *name, uint8_t tag,
                                  const char *text, dg_error *err)
{
    if (tag != DG_RPLY_PROP_STRING && tag != DG_RPLY_PROP_ENUM)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "rply writer",
                            "prop_str takes tag 2 (string) or 5 (enum), not %u", tag);
    dg_rply_value v;
    memset(&v, 0, sizeof v);
    v.tag = tag;
    if (intern(w, text, &v.u.str, err) != DG_OK)
        return err ? err->code : DG_E_USAGE;
    return dg_rply_writer_prop(w, id, name, &v, err);
}

dg_status dg_rply_writer_anim_play(dg_rply_writer *w, uint16_t id, const char *anim, uint8_t handle,
                                   uint8_t fade, int16_t speed, dg_error *err)
{
    if (!need_live(w, id, "ANIM_PLAY", err))
        return DG_E_USAGE;
    uint16_t aid;
    if (intern(w, anim, &aid, err) != DG_OK)
        return err ? err->code : DG_E_USAGE;
    open_tick(w);
    put_op_head(w, DG_RPLY_OP_ANIM_PLAY);
    dg_buf_u16(&w->ops, id);
    dg_buf_u16(&w->ops, aid);
    dg_buf_u8(&w->ops, handle);
    dg_buf_u8(&w->ops, fade);
    dg_buf_u16(&w->ops, (uint16_t)speed);
    return done(w, err);
}

dg_status dg_rply_writer_anim_stop(dg_rply_writer *w, uint16_t id, uint8_t handle, uint8_t fade,
                                   dg_error *err)
{
    if (!need_live(w, id, "ANIM_STOP", err))
        return DG_E_USAGE;
    open_tick(w);
    put_op_head(w, DG_RPLY_OP_ANIM_STOP);
    dg_buf_u16(&w->ops, id);
    dg_buf_u8(&w->ops, handle);
    dg_buf_u8(&w->ops, fade);
    return done(w, err);
}

dg_status dg_rply_writer_anim_speed(dg_rply_writer *w, uint16_t id, uint8_t handle, int16_t speed,
                                    dg_error *err)
{
    if (!need_live(w, id, "ANIM_SPEED", err))
        return DG_E_USAGE;
    open_tick(w);
    put_op_head(w, DG_RPLY_OP_ANIM_SPEED);
    dg_buf_u16(&w->ops, id);
    dg_buf_u8(&w->ops, handle);
    dg_buf_u16(&w->ops, (uint16_t)speed);
    return done(w, err);
}

dg_status dg_rply_writer_event(dg_rply_writer *w, const char *name, const char *payload_json,
                               dg_error *err)
{
    uint16_t n, p;
    if (intern(w, name, &n, err) != DG_OK || intern(w, payload_json, &p, err) != DG_OK)
        return err ? err->code : DG_E_USAGE;
    open_tick(w);
    put_op_head(w, DG_RPLY_OP_EVENT);
    dg_buf_u16(&w->ops, n);
    dg_buf_u16(&w->ops, p);
    return done(w, err);
}

dg_status dg_rply_writer_custom(dg_rply_writer *w, const char *channel, const void *data,
                                uint16_t len, dg_error *err)
{
    uint16_t c;
    if (intern(w, channel, &c, err) != DG_OK)
        return err ? err->code : DG_E_USAGE;
    open_tick(w);
    put_op_head(w, DG_RPLY_OP_CUSTOM);
    dg_buf_u16(&w->ops, c);
    dg_buf_u16(&w->ops, len);
    dg_buf_put(&w->ops, data, len);
    return done(w, err);
}

dg_status dg_rply_writer_snapshot_raw(dg_rply_writer *w, uint16_t id, const uint8_t *bytes,
                                      uint32_t len, dg_error *err)
{
    if (!need_live(w, id, "SNAPSHOT", err))
        return DG_E_USAGE;
    if (dg_rply_snapshot_check(bytes, len, 0, err) != DG_OK)
        return err ? err->code : DG_E_MALFORMED;
    open_tick(w);
    put_op_head(w, DG_RPLY_OP_SNAPSHOT);
    dg_buf_u16(&w->ops, id);
    dg_buf_u32(&w->ops, len);
    dg_buf_put(&w->ops, bytes, len);
    return done(w, err);
}

dg_status dg_rply_writer_snapshot(dg_rply_writer *w, uint16_t id, const dg_rply_snapshot *snap,
                                  dg_error *err)
{
    size_t n = 0;
    if (dg_rply_snapshot_encode(snap, NULL, 0, &n, err) != DG_OK)
        return err ? err->code : DG_E_MALFORMED;
    uint8_t *b = malloc(n ? n : 1);
    if (!b)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply writer", "snapshot");
    dg_status st = dg_rply_snapshot_encode(snap, b, n, &n, err);
    if (st == DG_OK)
        st = dg_rply_writer_snapshot_raw(w, id, b, (uint32_t)n, err);
    free(b);
    return st;
}

/* ---- layout -------------------------------------------------------------------------------- */
dg_status dg_rply_writer_finish(dg_rply_writer *w, uint32_t tick_count, uint8_t **out,
                                size_t *out_len, dg_error *err)
{
    *out = NULL;
    *out_len = 0;
    if (close_tick(w, err) != DG_OK)
        return err ? err->code : DG_E_USAGE;
    if (done(w, err) != DG_OK)
        return err ? err->code : DG_E_NOMEM;
    uint32_t min_count = w->tick + 1;
    if (w->tick == UINT32_MAX)
        return dg_error_set(err, DG_E_LIMIT, DG_OFFSET_NONE, "rply writer", "tick 4294967295");
    if (tick_count == 0)
        tick_count = min_count;
    if (tick_count < min_count)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "rply writer",
                            "tickCount %u must exceed the last tick %u", tick_count, w->tick);
    if (w->ops.len > UINT32_MAX || tick_count > dg_rply_max_tick_count((uint32_t)w->ops.len))
        return dg_error_set(err, DG_E_LIMIT, DG_OFFSET_NONE, "rply writer",
                            "expected tickCount <= %llu for %zu OpStream bytes (readers refuse more), found %u",
                            (unsigned long long)dg_rply_max_tick_count(w->ops.len > UINT32_MAX ? UINT32_MAX
                                                                                              : (uint32_t)w->ops.len),
                            w->ops.len, tick_count);
    dg_buf b;
    dg_buf_init(&b);
    dg_buf_reserve(&b, DG_RPLY_HEADER_SIZE + w->str_bytes.len + 2 * (size_t)w->str_count +
                           8 * (size_t)w->kf_count + w->ops.len);
    dg_buf_put(&b, "RPLY", 4);
    dg_buf_u8(&b, DG_RPLY_VERSION);
    dg_buf_u8(&b, w->cfg.tick_rate);
    dg_buf_u32(&b, w->cfg.place_version);
    dg_buf_f64(&b, w->cfg.start_unix);
    dg_buf_u32(&b, tick_count);
    dg_buf_u16(&b, (uint16_t)w->str_count);
    dg_buf_u16(&b, (uint16_t)w->kf_count);
    dg_buf_u32(&b, (uint32_t)w->ops.len);
    for (uint32_t i = 0; i < w->str_count; i++)
        dg_buf_str16(&b, (const char *)w->str_bytes.p + w->str_off[i], w->str_len[i]);
    for (uint32_t i = 0; i < w->kf_count; i++) {
        dg_buf_u32(&b, w->kfs[i].tick);
        dg_buf_u32(&b, w->kfs[i].offset);
    }
    dg_buf_put(&b, w->ops.p, w->ops.len);
    if (!b.ok) {
        dg_buf_free(&b);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply writer", "file layout");
    }
    *out = b.p;
    *out_len = b.len;
    return DG_OK;
}

dg_status dg_rply_writer_save(dg_rply_writer *w, uint32_t tick_count, const char *path,
                              dg_error *err)
{
    uint8_t *buf;
    size_t len;
    dg_status st = dg_rply_writer_finish(w, tick_count, &buf, &len, err);
    if (st != DG_OK)
        return st;
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 5);
    if (!tmp) {
        free(buf);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "temp path");
    }
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp", 5);
    FILE *fp = fopen(tmp, "wb");
    bool ok = fp && fwrite(buf, 1, len, fp) == len;
    if (fp && fclose(fp) != 0)
        ok = false;
    if (ok && rename(tmp, path) != 0)
        ok = false;
    if (!ok) {
        remove(tmp);
        st = dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "could not write %s and rename it",
                          tmp);
    }
    free(tmp);
    free(buf);
    return st;
}
