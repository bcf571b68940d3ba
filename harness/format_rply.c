/* harness/format_rply.c — the RPLY v3 row of the formats table (format.h): record, replay-hash, the
 * verify checks, the comparisons of two recordings and of two headers. The record side runs a source
 * through the real RPLY writer and hashes the writer's tracked quantized state (dg_rply_xstate,
 * descriptor, parent, properties) once each tick has closed; the replay side rebuilds every tick with
 * the real player and hashes the same fields. The hash is hash/hash_rply.c's, defined byte by byte in
 * docs/STATE-HASH.md §11; it has the .flrep tick-hash shape so logs, streams and comparisons are
 * shared. */
#include "format.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detgate/rply.h"

#define RG_STUD_M 0.28
#define TRAJ_BEFORE 120 /* the trajectory window around the first divergence, as compare.c's */
#define TRAJ_AFTER 240
#define RG_PROPS_SHOWN 4

typedef struct rg_ent {
    uint16_t id, parent, descriptor;
    dg_rply_xstate x;
    uint16_t nprops, shown;
    uint16_t prop_name[RG_PROPS_SHOWN];
    dg_rply_value prop_val[RG_PROPS_SHOWN];
} rg_ent;

typedef struct rg_world {
    rg_ent *v;
    size_t n, cap;
    dg_hash_stream hs; /* the entity hash's state */
    uint64_t *eh;
    size_t eh_cap;
} rg_world;

/* ---- the hashes (hash/hash_rply.c, docs/STATE-HASH.md §11) -------------------------------------- */

static dg_status world_fit(rg_world *w, size_t n, dg_error *err)
{
    if (!dg_grow((void **)&w->v, &w->cap, n, sizeof *w->v) ||
        !dg_grow((void **)&w->eh, &w->eh_cap, n, sizeof *w->eh))
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply gate", "out of memory");
    return DG_OK;
}

static void world_free(rg_world *w)
{
    free(w->v);
    free(w->eh);
    w->v = NULL;
    w->eh = NULL;
    w->n = w->cap = w->eh_cap = 0;
}

/* Entity hash over the fixed record and the properties (all of them, in increasing name id): the
 * shown ones kept in e, then those from `more` on in s (NULL: none), which are not kept. */
static uint64_t entity_hash(dg_hash_stream *hs, const rg_ent *e, const dg_rply_state *s, const dg_rply_prop *more)
{
    dg_hash_rply_entity h = {.id = e->id, .parent = e->parent, .descriptor = e->descriptor, .x = e->x,
                             .nprops = e->nprops};
    if (!more) /* every property is in e: one call, no streaming state */
        return dg_hash_rply_entity_hash(&h, e->prop_name, e->prop_val, e->shown);
    dg_hash_rply_entity_begin(hs, &h);
    for (uint16_t i = 0; i < e->shown; i++)
        dg_hash_rply_entity_prop(hs, e->prop_name[i], &e->prop_val[i]);
    for (const dg_rply_prop *p = more; p; p = dg_rply_state_prop_next(s, p))
        dg_hash_rply_entity_prop(hs, p->name, &p->value);
    return dg_hash_rply_entity_end(hs);
}

static harness__tickrec tick_record(const rg_world *w, uint64_t tick)
{
    dg_tick_hash h = dg_hash_rply_tick(tick, w->eh, w->n);
    harness__tickrec r = {tick, h.state, h.events, h.combined, 0, h.entity_count, false};
    return r;
}

/* ---- the replay side: a player's state as a world ---------------------------------------------- */

static dg_status world_from_state(rg_world *w, const dg_rply_state *s, dg_error *err)
{
    w->n = 0;
    for (uint16_t id = dg_rply_state_next_id(s, 0); id; id = dg_rply_state_next_id(s, id)) {
        if (world_fit(w, w->n + 1, err) != DG_OK)
            return err->code;
        const dg_rply_entity *e = dg_rply_state_find(s, id);
        rg_ent *r = &w->v[w->n];
        memset(r, 0, sizeof *r);
        r->id = id;
        r->parent = e->parent;
        r->descriptor = e->descriptor;
        r->x = e->x;
        const dg_rply_prop *p = dg_rply_state_prop_first(s, e);
        for (const dg_rply_prop *q = p; q; q = dg_rply_state_prop_next(s, q))
            r->nprops++;
        for (; p && r->shown < RG_PROPS_SHOWN; p = dg_rply_state_prop_next(s, p)) {
            r->prop_name[r->shown] = p->name;
            r->prop_val[r->shown++] = p->value;
        }
        w->eh[w->n++] = entity_hash(&w->hs, r, s, p);
    }
    return DG_OK;
}

typedef struct rg_file {
    uint8_t *buf;
    size_t len;
    dg_rply_file f;
    dg_rply_player *p;
    bool f_open, p_open;
} rg_file;

static void rg_close(rg_file *r)
{
    if (r->p_open)
        dg_rply_player_free(r->p);
    if (r->f_open)
        dg_rply_file_close(&r->f);
    free(r->buf);
    memset(r, 0, sizeof *r);
}

static dg_status rg_open(rg_file *r, const char *path, dg_error *err)
{
    memset(r, 0, sizeof *r);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "cannot open: %s", strerror(errno));
    size_t cap = 1 << 16;
    r->buf = malloc(cap);
    size_t got;
    while (r->buf && (got = fread(r->buf + r->len, 1, cap - r->len, fp)) > 0) {
        r->len += got;
        if (r->len == cap) {
            uint8_t *nb = realloc(r->buf, cap * 2);
            if (!nb) {
                free(r->buf);
                r->buf = NULL;
            }
            r->buf = nb;
            cap *= 2;
        }
    }
    fclose(fp);
    if (!r->buf)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory reading the file");
    r->f_open = true;
    dg_status st = dg_rply_file_open(&r->f, r->buf, r->len, 0, err);
    if (st == DG_OK && (r->p = dg_rply_player_new(&r->f, 0, err)) == NULL)
        st = DG_E_NOMEM;
    if (st == DG_OK)
        r->p_open = true;
    if (st != DG_OK)
        rg_close(r);
    return st;
}

static dg_status log_world(dg_hash_log_writer *log, bool entities, const harness__tickrec *rec, const rg_world *w,
                           uint32_t **ids, size_t *ids_cap, dg_error *err)
{
    dg_hash_log_tick lt = {rec->tick, rec->count, rec->state, rec->events, 0, false, NULL, NULL, NULL, NULL};
    if (entities) {
        if (!dg_grow((void **)ids, ids_cap, w->n, sizeof **ids))
            return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply gate", "out of memory");
        for (size_t i = 0; i < w->n; i++)
            (*ids)[i] = w->v[i].id;
        lt.ids = *ids;
        lt.hashes = w->eh;
    }
    return dg_hash_log_writer_write(log, &lt, err);
}

/* Replays an RPLY file and hashes every tick's rebuilt state. */
static dg_status replay_hash(const char *path, dg_hash_log_writer *log, bool log_entities, harness__stream *out,
                             dg_error *err)
{
    rg_file r;
    rg_world w = {0};
    uint32_t *ids = NULL;
    size_t ids_cap = 0;
    dg_status st = rg_open(&r, path, err);
    if (st != DG_OK)
        return st;
    uint32_t n = r.f.hdr.tick_count;
    st = dg_harness__stream_reserve(out, out->n + n, err);
    for (uint32_t t = 0; st == DG_OK && t < n; t++) {
        if ((st = dg_rply_player_advance(r.p, t, err)) != DG_OK ||
            (st = world_from_state(&w, dg_rply_player_state(r.p), err)) != DG_OK)
            break;
        harness__tickrec rec = tick_record(&w, t);
        if ((st = dg_harness__stream_push(out, &rec, err)) == DG_OK && log)
            st = log_world(log, log_entities, &rec, &w, &ids, &ids_cap, err);
    }
    free(ids);
    world_free(&w);
    rg_close(&r);
    return st;
}

/* ---- the record side ------------------------------------------------------------------------------- */

typedef struct rg_track {
    bool live;
    uint16_t descriptor;
    double health, flags;
} rg_track;

typedef struct rg_rec {
    dg_rply_writer *w;
    rg_track *track; /* by id, 65536 */
    uint16_t *ids;   /* ids live at the previous tick, increasing */
    size_t n_ids, cap_ids;
    uint16_t name_health, name_flags;
    double frame_q[4]; /* world -> studs space rotation */
    rg_world world;
} rg_rec;

static void quat_mul(const double a[4], const double b[4], double out[4])
{
    out[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    out[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    out[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    out[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

/* Rotation matrix (rows r0, r1, r2) to a quaternion (w, x, y, z); sqrt only (correctly rounded). */
static void quat_from_rows(const double r0[3], const double r1[3], const double r2[3], double q[4])
{
    double tr = r0[0] + r1[1] + r2[2];
    if (tr > 0) {
        double s = sqrt(tr + 1.0) * 2;
        q[0] = 0.25 * s, q[1] = (r2[1] - r1[2]) / s, q[2] = (r0[2] - r2[0]) / s, q[3] = (r1[0] - r0[1]) / s;
    } else if (r0[0] > r1[1] && r0[0] > r2[2]) {
        double s = sqrt(1.0 + r0[0] - r1[1] - r2[2]) * 2;
        q[0] = (r2[1] - r1[2]) / s, q[1] = 0.25 * s, q[2] = (r0[1] + r1[0]) / s, q[3] = (r0[2] + r2[0]) / s;
    } else if (r1[1] > r2[2]) {
        double s = sqrt(1.0 + r1[1] - r0[0] - r2[2]) * 2;
        q[0] = (r0[2] - r2[0]) / s, q[1] = (r0[1] + r1[0]) / s, q[2] = 0.25 * s, q[3] = (r1[2] + r2[1]) / s;
    } else {
        double s = sqrt(1.0 + r2[2] - r0[0] - r1[1]) * 2;
        q[0] = (r1[0] - r0[1]) / s, q[1] = (r0[2] + r2[0]) / s, q[2] = (r1[2] + r2[1]) / s, q[3] = 0.25 * s;
    }
}

/* Studs space: x = east, y = up, z = -north (Roblox: +Y up, look along -Z). */
static void to_studs(const harness__source *src, const double pos[3], double out[3])
{
    if (!src->has_frame) {
        for (int i = 0; i < 3; i++)
            out[i] = pos[i] / RG_STUD_M;
        return;
    }
    double d[3] = {pos[0] - src->frame_origin[0], pos[1] - src->frame_origin[1], pos[2] - src->frame_origin[2]};
    const double *e = src->frame_east, *n = src->frame_north, *u = src->frame_up;
    out[0] = (d[0] * e[0] + d[1] * e[1] + d[2] * e[2]) / RG_STUD_M;
    out[1] = (d[0] * u[0] + d[1] * u[1] + d[2] * u[2]) / RG_STUD_M;
    out[2] = -(d[0] * n[0] + d[1] * n[1] + d[2] * n[2]) / RG_STUD_M;
}

static const char *descriptor_of(const harness__source *src, uint16_t type, char *buf, size_t cap)
{
    for (size_t i = 0; i < src->hdr.type_count; i++)
        if (src->hdr.types[i].index == type && src->hdr.types[i].id.len) {
            size_t n = src->hdr.types[i].id.len < cap - 1 ? src->hdr.types[i].id.len : cap - 1;
            memcpy(buf, src->hdr.types[i].id.s, n);
            buf[n] = 0;
            return buf;
        }
    snprintf(buf, cap, "type%u", type);
    return buf;
}

static dg_status put_number(rg_rec *r, uint16_t id, const char *name, double v, dg_error *err)
{
    dg_rply_value val;
    memset(&val, 0, sizeof val);
    val.tag = DG_RPLY_PROP_NUMBER;
    val.u.num = v;
    return dg_rply_writer_prop(r->w, id, name, &val, err);
}

/* The world as the writer tracks it for the ids live at the tick that just closed. */
static dg_status hash_closed_tick(rg_rec *r, uint64_t tick, uint64_t raw, harness__stream *out, dg_error *err)
{
    rg_world *w = &r->world;
    if (world_fit(w, r->n_ids, err) != DG_OK)
        return err->code;
    w->n = 0;
    for (size_t i = 0; i < r->n_ids; i++) {
        uint16_t id = r->ids[i];
        const dg_rply_xstate *x = dg_rply_writer_xstate(r->w, id);
        rg_ent *e = &w->v[w->n];
        memset(e, 0, sizeof *e);
        e->id = id;
        e->descriptor = r->track[id].descriptor;
        if (x)
            e->x = *x;
        /* properties in increasing name id, as the reader keeps them */
        bool hf = r->name_health < r->name_flags;
        e->nprops = e->shown = 2;
        e->prop_name[hf ? 0 : 1] = r->name_health;
        e->prop_name[hf ? 1 : 0] = r->name_flags;
        e->prop_val[hf ? 0 : 1] = (dg_rply_value){.tag = DG_RPLY_PROP_NUMBER, .u.num = r->track[id].health};
        e->prop_val[hf ? 1 : 0] = (dg_rply_value){.tag = DG_RPLY_PROP_NUMBER, .u.num = r->track[id].flags};
        w->eh[w->n++] = entity_hash(&w->hs, e, NULL, NULL);
    }
    harness__tickrec rec = tick_record(w, tick);
    rec.raw = raw;
    rec.has_raw = true;
    return dg_harness__stream_push(out, &rec, err);
}

static dg_status apply_frame(rg_rec *r, const harness__source *src, const harness__frame *f, dg_error *err)
{
    /* despawn what is gone (both id lists increase) */
    size_t j = 0;
    for (size_t i = 0; i < r->n_ids; i++) {
        while (j < f->n && f->ents[j].id < r->ids[i])
            j++;
        if (j >= f->n || f->ents[j].id != r->ids[i]) {
            if (dg_rply_writer_despawn(r->w, r->ids[i], err) != DG_OK)
                return err->code;
            r->track[r->ids[i]].live = false;
        }
    }
    if (!dg_grow((void **)&r->ids, &r->cap_ids, f->n, sizeof *r->ids))
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply gate", "out of memory");
    for (size_t i = 0; i < f->n; i++) {
        const dg_entity_in *e = &f->ents[i];
        if (e->id > DG_RPLY_MAX_ID)
            return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "rply gate",
                                "entity %u: RPLY ids end at %u", e->id, DG_RPLY_MAX_ID);
        uint16_t id = (uint16_t)e->id;
        rg_track *t = &r->track[id];
        char dbuf[80];
        if (!t->live) {
            const char *desc = descriptor_of(src, e->type_index, dbuf, sizeof dbuf);
            if (dg_rply_writer_string(r->w, desc, strlen(desc), &t->descriptor, err) != DG_OK ||
                dg_rply_writer_spawn(r->w, id, desc, 0, err) != DG_OK)
                return err->code;
            t->live = true;
            t->health = t->flags = -1; /* forces both properties on the spawn tick */
        }
        double p[3], q[4];
        to_studs(src, e->pos, p);
        quat_mul(r->frame_q, e->rot, q);
        if (dg_rply_writer_transform(r->w, id, p, q, err) != DG_OK)
            return err->code;
        if (e->health != t->health && put_number(r, id, "health", e->health, err) != DG_OK)
            return err->code;
        if ((double)e->flags != t->flags && put_number(r, id, "flags", (double)e->flags, err) != DG_OK)
            return err->code;
        t->health = e->health;
        t->flags = (double)e->flags;
        r->ids[i] = id;
    }
    r->n_ids = f->n;
    return DG_OK;
}

static dg_status rec_open(rg_rec *r, const harness__source *src, uint32_t keyframe, dg_error *err)
{
    memset(r, 0, sizeof *r);
    if (src->hdr.tick_rate_hz == 0 || src->hdr.tick_rate_hz > 255)
        return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "rply gate",
                            "RPLY tick rates are 1..255 Hz, the source runs at %u Hz", src->hdr.tick_rate_hz);
    dg_rply_writer_config cfg;
    dg_rply_writer_config_default(&cfg);
    cfg.tick_rate = (uint8_t)src->hdr.tick_rate_hz;
    cfg.start_unix = (double)src->hdr.start_unix_seconds;
    cfg.keyframe_every = keyframe ? keyframe : src->hdr.keyframe_interval_ticks ? src->hdr.keyframe_interval_ticks : 120;
    r->track = calloc(65536, sizeof *r->track);
    r->w = r->track ? dg_rply_writer_new(&cfg, err) : NULL;
    if (!r->w)
        return err->code != DG_OK ? err->code
                                  : dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "rply gate", "out of memory");
    if (dg_rply_writer_string(r->w, "health", 6, &r->name_health, err) != DG_OK ||
        dg_rply_writer_string(r->w, "flags", 5, &r->name_flags, err) != DG_OK)
        return err->code;
    double ident[4] = {1, 0, 0, 0};
    if (src->has_frame) {
        double mn[3] = {-src->frame_north[0], -src->frame_north[1], -src->frame_north[2]};
        quat_from_rows(src->frame_east, src->frame_up, mn, r->frame_q);
    } else {
        memcpy(r->frame_q, ident, sizeof ident);
    }
    return DG_OK;
}

static void rec_close(rg_rec *r)
{
    dg_rply_writer_free(r->w);
    free(r->track);
    free(r->ids);
    world_free(&r->world);
}

/* Records src as RPLY (positions in studs in the local frame, +Y up; health and flags as number
 * properties) and hashes the writer's tracked quantized state after every tick closes. Events are
 * not RPLY state and are not recorded. o->keyframe 0 = the header's interval. */
static dg_status rply_record(harness__source *src, const char *path, const harness__record_opts *o,
                             harness__stream *out, dg_error *err)
{
    if (src->hdr.schema && !dg_schema_is_legacy(src->hdr.schema)) /* RPLY's PROPs are number properties */
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, src->name, "the stream declares an entity schema "
                            "(docs/STATES-STREAM.md, \"Declared fields\") that an RPLY recording cannot carry: "
                            "record it as flrep");
    rg_rec r;
    dg_status st = rec_open(&r, src, o->keyframe, err);
    harness__frame f;
    uint64_t expect = 0, prev_raw = 0;
    int rc = 0;
    while (st == DG_OK && (rc = src->next(src, &f, err)) == 1) {
        if (f.tick != expect || f.tick > UINT32_MAX - 1) {
            st = dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, src->name,
                              "RPLY recording needs consecutive ticks from 0: expected %llu, found %llu",
                              (unsigned long long)expect, (unsigned long long)f.tick);
            break;
        }
        /* starting tick t closes tick t-1: only then is the writer's state for it final */
        st = dg_rply_writer_tick(r.w, (uint32_t)f.tick, err);
        if (st == DG_OK && f.tick > 0)
            st = hash_closed_tick(&r, f.tick - 1, prev_raw, out, err);
        if (st == DG_OK)
            st = apply_frame(&r, src, &f, err);
        prev_raw = f.raw;
        expect++;
    }
    if (st == DG_OK && rc < 0)
        st = err->code;
    if (st == DG_OK && expect == 0)
        st = dg_error_set(err, DG_E_MALFORMED, DG_OFFSET_NONE, src->name, "the source produced no tick");
    if (st == DG_OK && expect > UINT32_MAX)
        st = dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, src->name, "too many ticks for RPLY");
    if (st == DG_OK)
        st = dg_rply_writer_save(r.w, (uint32_t)expect, path, err);
    if (st == DG_OK)
        st = hash_closed_tick(&r, expect - 1, prev_raw, out, err);
    rec_close(&r);
    return st;
}

/* ---- checks and diffs ------------------------------------------------------------------------------ */

static double prop_number(const rg_ent *e, size_t k)
{
    const dg_rply_value *v = &e->prop_val[k];
    switch (v->tag) {
    case DG_RPLY_PROP_NUMBER: return v->u.num;
    case DG_RPLY_PROP_BOOL: return v->u.b;
    case DG_RPLY_PROP_STRING:
    case DG_RPLY_PROP_ENUM: return v->u.str;
    default: return NAN;
    }
}

static void diff_entity(dg_report_entity *re, const rg_ent *a, const rg_ent *b, const dg_rply_file *fa)
{
    static const char *const pn[3] = {"pos.x", "pos.y", "pos.z"}, *const rn[3] = {"rot.0", "rot.1", "rot.2"};
    double pa[3], pb[3], ra[3], rb[3];
    dg_rply_xstate_position(&a->x, pa);
    dg_rply_xstate_position(&b->x, pb);
    dg_rply_xstate_rotation(&a->x, ra);
    dg_rply_xstate_rotation(&b->x, rb);
    for (int i = 0; i < 3; i++)
        if (a->x.pos_bits[i] != b->x.pos_bits[i] || a->x.dpos[i] != b->x.dpos[i])
            dg_report_entity_add_field_real(re, pn[i], "m", true, pa[i] * RG_STUD_M, pb[i] * RG_STUD_M,
                                            (pb[i] - pa[i]) * RG_STUD_M);
    for (int i = 0; i < 3; i++)
        if (a->x.rot[i] != b->x.rot[i] || a->x.drot[i] != b->x.drot[i] || a->x.xf != b->x.xf)
            dg_report_entity_add_field_real(re, rn[i], "deg", true, ra[i] * 57.29577951308232,
                                            rb[i] * 57.29577951308232, (rb[i] - ra[i]) * 57.29577951308232);
    if (a->descriptor != b->descriptor)
        dg_report_entity_add_field(re, "type", "", a->descriptor, b->descriptor, a->descriptor, b->descriptor);
    if (a->parent != b->parent)
        dg_report_entity_add_field(re, "parent", "", a->parent, b->parent, a->parent, b->parent);
    for (size_t k = 0; k < a->shown && k < b->shown; k++) {
        char name[DG_REPORT_FIELD_NAME_CAP];
        uint16_t nid = a->prop_name[k];
        const dg_rply_str *s = nid < fa->hdr.string_count ? &fa->strings[nid] : NULL;
        snprintf(name, sizeof name, "%.*s", s ? (int)s->len : 0, s ? s->s : "");
        if (a->prop_name[k] != b->prop_name[k] || memcmp(&a->prop_val[k], &b->prop_val[k], sizeof a->prop_val[k]))
            dg_report_entity_add_field_real(re, name[0] ? name : "prop", "", true, prop_number(a, k),
                                            prop_number(b, k), prop_number(b, k) - prop_number(a, k));
    }
}

static void diff_worlds(dg_report_tick *t, const rg_world *a, const rg_world *b, const dg_rply_file *fa)
{
    size_t i = 0, j = 0;
    while (i < a->n || j < b->n) {
        if (j >= b->n || (i < a->n && a->v[i].id < b->v[j].id)) {
            t->lost++;
            dg_report_tick_add_entity(t, a->v[i++].id, NULL, DG_REPORT_ENTITY_LOST);
        } else if (i >= a->n || b->v[j].id < a->v[i].id) {
            t->added++;
            dg_report_tick_add_entity(t, b->v[j++].id, NULL, DG_REPORT_ENTITY_ADDED);
        } else {
            if (a->eh[i] != b->eh[j]) {
                t->changed++;
                dg_report_entity *re = dg_report_tick_add_entity(t, a->v[i].id, NULL, DG_REPORT_ENTITY_CHANGED);
                if (re)
                    diff_entity(re, &a->v[i], &b->v[j], fa);
            }
            i++;
            j++;
        }
    }
}

/* ---- spread and trajectory of an RPLY diff ------------------------------------------------------- */

/* Which entities have diverged so far (RPLY ids are 16-bit: a bit each), and the one followed: of
 * the first divergent tick's, the one on both sides with the largest position difference (m), one
 * present on one side only after any on both (as harness/compare.c ranks), the lowest id on a tie. */
typedef struct rg_follow {
    uint8_t seen[65536 / 8];
    uint32_t n_seen;
    bool picked;
    uint16_t id;
    double d; /* its position difference, m; < 0: one-sided */
    uint64_t tick;
} rg_follow;

static void rg_follow_one(rg_follow *fw, bool pick, uint16_t id, double d)
{
    if (!(fw->seen[id >> 3] & (1u << (id & 7)))) {
        fw->seen[id >> 3] |= (uint8_t)(1u << (id & 7));
        fw->n_seen++;
    }
    if (pick && (!fw->picked || d > fw->d)) {
        fw->picked = true;
        fw->id = id;
        fw->d = d;
    }
}

static void rg_follow_tick(dg_report_check *c, rg_follow *fw, uint64_t tick, const rg_world *a, const rg_world *b)
{
    uint32_t before = fw->n_seen;
    bool pick = !fw->picked;
    size_t i = 0, j = 0;
    while (i < a->n || j < b->n) {
        if (j >= b->n || (i < a->n && a->v[i].id < b->v[j].id)) {
            rg_follow_one(fw, pick, a->v[i++].id, -1);
        } else if (i >= a->n || b->v[j].id < a->v[i].id) {
            rg_follow_one(fw, pick, b->v[j++].id, -1);
        } else {
            if (a->eh[i] != b->eh[j]) {
                double pa[3], pb[3], d2 = 0;
                dg_rply_xstate_position(&a->v[i].x, pa);
                dg_rply_xstate_position(&b->v[j].x, pb);
                for (int k = 0; k < 3; k++)
                    d2 += (pb[k] - pa[k]) * (pb[k] - pa[k]);
                rg_follow_one(fw, pick, a->v[i].id, sqrt(d2) * RG_STUD_M);
            }
            i++;
            j++;
        }
    }
    if (pick && fw->picked)
        fw->tick = tick;
    if (fw->n_seen > before)
        dg_report_check_add_spread(c, tick, fw->n_seen);
}

/* The followed entity's path on both sides (metres in the session's frame), around its first
 * divergence. Best effort: a read error only shortens a side. */
static void rg_trajectory(dg_report_check *c, const char *pa, const char *pb, const rg_follow *fw)
{
    if (!fw->picked || dg_report_check_set_trajectory(c, fw->id, NULL) != DG_OK)
        return;
    if (fw->d >= 0)
        dg_report_check_set_trajectory_reason(c, fw->tick, "pos", "m", fw->d);
    else
        dg_report_check_set_trajectory_reason(c, fw->tick, NULL, NULL, 0);
    const char *paths[2] = {pa, pb};
    uint64_t from = fw->tick > TRAJ_BEFORE ? fw->tick - TRAJ_BEFORE : 0, to = fw->tick + TRAJ_AFTER;
    for (int s = 0; s < 2; s++) {
        rg_file f;
        dg_error err;
        dg_error_clear(&err);
        if (rg_open(&f, paths[s], &err) != DG_OK)
            continue;
        for (uint64_t t = from; t <= to && t < f.f.hdr.tick_count; t++) {
            if (dg_rply_player_advance(f.p, (uint32_t)t, &err) != DG_OK)
                break;
            const dg_rply_entity *e = dg_rply_state_find(dg_rply_player_state(f.p), fw->id);
            if (!e)
                continue;
            double p[3];
            dg_rply_xstate_position(&e->x, p);
            dg_report_check_add_point(c, s == 0 ? 'A' : 'B', t, p[0] * RG_STUD_M, p[1] * RG_STUD_M, p[2] * RG_STUD_M);
        }
        rg_close(&f);
    }
}

/* Lockstep comparison of two RPLY files, as dg_harness__compare_files. */
static uint64_t rply_compare_files(dg_report_check *c, dg_report_scenario *sc, const char *pa, const char *pb,
                                   dg_error *err)
{
    rg_file a, b;
    rg_world wa = {0}, wb = {0};
    if (rg_open(&a, pa, err) != DG_OK)
        return UINT64_MAX;
    if (rg_open(&b, pb, err) != DG_OK) {
        rg_close(&a);
        return UINT64_MAX;
    }
    uint32_t na = a.f.hdr.tick_count, nb = b.f.hdr.tick_count, n = na > nb ? na : nb;
    uint64_t diverged = 0, entity_ticks = 0;
    rg_follow *fw = calloc(1, sizeof *fw); /* out of memory: the diff without its spread and trajectory */
    dg_status st = DG_OK;
    for (uint32_t t = 0; t < n && st == DG_OK; t++) {
        wa.n = wb.n = 0;
        if (t < na && ((st = dg_rply_player_advance(a.p, t, err)) != DG_OK ||
                       (st = world_from_state(&wa, dg_rply_player_state(a.p), err)) != DG_OK))
            break;
        if (t < nb && ((st = dg_rply_player_advance(b.p, t, err)) != DG_OK ||
                       (st = world_from_state(&wb, dg_rply_player_state(b.p), err)) != DG_OK))
            break;
        entity_ticks += wb.n;
        harness__tickrec ra = tick_record(&wa, t), rb = tick_record(&wb, t);
        if (t < na && t < nb && ra.state == rb.state)
            continue;
        diverged++;
        /* a tick past one side's end is counted and told as a length by the caller, not detailed */
        dg_report_tick *rt = t < na && t < nb ? dg_report_add_tick(c, t) : NULL;
        uint32_t before = rt ? rt->added + rt->lost + rt->changed : 0;
        if (rt)
            diff_worlds(rt, &wa, &wb, &a.f);
        if (t < na && t < nb && fw)
            rg_follow_tick(c, fw, t, &wa, &wb);
        dg_report_check_add_divergent(c, t, rt ? rt->added + rt->lost + rt->changed - before : 0);
    }
    if (st == DG_OK && fw)
        rg_trajectory(c, pa, pb, fw);
    free(fw);
    if (sc) { /* both counts are B's, the side the scenario is named after */
        sc->ticks = nb;
        sc->entity_ticks = entity_ticks;
    }
    world_free(&wa);
    world_free(&wb);
    rg_close(&a);
    rg_close(&b);
    return st == DG_OK ? diverged : UINT64_MAX;
}

static int check_rply_seek(dg_report_scenario *sc, const char *path, const harness__stream *rec, size_t nrandom)
{
    double t0 = dg_harness__now();
    dg_report_check *c = dg_report_add_check(sc, "seek", DG_REPORT_PASS);
    rg_file r;
    rg_world w = {0};
    dg_error err;
    dg_error_clear(&err);
    if (!c || rg_open(&r, path, &err) != DG_OK) {
        /* the player refusing this build's own recording is a failure; I/O or memory: untested */
        bool untested = !c || err.code == DG_E_IO || err.code == DG_E_NOMEM;
        if (c) {
            char buf[600];
            dg_error_format(&err, buf, sizeof buf);
            c->status = untested ? DG_REPORT_ERROR : DG_REPORT_FAIL;
            dg_report_check_set_message(c, "%s%s", untested ? "" : "the RPLY player refused this build's own recording: ",
                                        buf);
        }
        return untested ? -1 : 1;
    }
    /* first, last, every keyframe and the tick before it, a reproducible random handful */
    size_t cap = 2 + 2 * r.f.hdr.keyframe_count + nrandom, n = 0;
    uint64_t *v = malloc(cap * sizeof *v), seed = rec->n * 0x9E3779B97F4A7C15ull;
    if (v) {
        v[n++] = 0;
        v[n++] = rec->n - 1;
        for (uint32_t k = 0; k < r.f.hdr.keyframe_count; k++) {
            uint32_t kt = dg_rply_file_keyframe(&r.f, k).tick;
            v[n++] = kt;
            v[n++] = kt ? kt - 1 : 0;
        }
        for (size_t k = 0; k < nrandom; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            v[n++] = (seed >> 33) % rec->n;
        }
    }
    size_t bad = 0, seeks = 0;
    uint64_t first_bad = DG_REPORT_TICK_NONE;
    for (int pass = 0; v && pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            uint64_t t = v[pass == 0 ? i : n - 1 - i];
            size_t k = dg_harness__stream_find(rec, t);
            seeks++;
            bool same = k != SIZE_MAX && dg_rply_player_seek(r.p, (uint32_t)t, &err) == DG_OK &&
                        world_from_state(&w, dg_rply_player_state(r.p), &err) == DG_OK &&
                        tick_record(&w, t).state == rec->v[k].state;
            if (!same) {
                bad++;
                first_bad = t < first_bad ? t : first_bad;
            }
        }
    if (!v) {
        c->status = DG_REPORT_ERROR;
        dg_report_check_set_message(c, "out of memory");
    } else if (bad) {
        c->status = DG_REPORT_FAIL;
        dg_report_check_add_divergent(c, first_bad, 0);
        dg_report_check_set_message(c, "%zu of %zu seeks landed on a state that differs from the record side; first "
                                       "at tick %llu",
                                    bad, seeks, (unsigned long long)first_bad);
    } else {
        dg_report_check_set_message(c, "%zu seeks forwards and backwards (first, last, keyframes and the ticks "
                                       "before them, %zu random): all equal to the record side",
                                    seeks, nrandom);
    }
    free(v);
    world_free(&w);
    rg_close(&r);
    c->duration_s = dg_harness__now() - t0;
    return c->status == DG_REPORT_PASS ? 0 : c->status == DG_REPORT_FAIL ? 1 : -1;
}

/* Record-vs-replay and seek (RPLY keeps no trailer to lose: no recovery check). */
static int rply_verify(dg_report_scenario *sc, harness__source *src, const char *path, const harness__stream *rec,
                       const harness__verify_opts *o)
{
    (void)src; /* the record side is rec, whatever source made it */
    double t0 = dg_harness__now();
    dg_report_check *c = dg_report_add_check(sc, "record-vs-replay", DG_REPORT_PASS);
    if (!c)
        return -1;
    harness__stream rp = {0};
    dg_error err;
    dg_error_clear(&err);
    dg_status st = replay_hash(path, NULL, false, &rp, &err);
    uint64_t first[1], first_raw;
    size_t nf;
    uint64_t nd = dg_harness__compare_streams(c, rec, &rp, DG_REPORT_TICK_NONE, first, 1, &nf, &first_raw);
    int failed = 0;
    if (st != DG_OK) {
        char buf[600];
        dg_error_format(&err, buf, sizeof buf);
        c->status = DG_REPORT_FAIL;
        dg_report_check_set_message(c, "the RPLY player rejected the recording after %zu tick%s: %s", rp.n,
                                    dg_report_plural_s(rp.n), buf);
        failed = 1;
    } else if (nd) {
        c->status = DG_REPORT_FAIL;
        dg_report_check_set_message(c, "%llu of %zu tick%s differ between the writer's tracked state and the "
                                       "player's; first at tick %llu",
                                    (unsigned long long)c->divergent_ticks, rec->n, dg_report_plural_s(rec->n),
                                    (unsigned long long)first[0]);
        failed = 1;
    } else {
        dg_report_check_set_message(c, "%zu tick%s, %llu entity-tick%s: writer state and replayed state hash "
                                       "identically",
                                    rec->n, dg_report_plural_s(rec->n), (unsigned long long)rec->entity_ticks,
                                    dg_report_plural_s(rec->entity_ticks));
    }
    dg_harness__stream_free(&rp);
    c->duration_s = dg_harness__now() - t0;
    int s = check_rply_seek(sc, path, rec, o->seek_random);
    return s < 0 ? -1 : failed + s;
}

/* ---- header ----------------------------------------------------------------------------------- */

static dg_status rg_read_header(const char *path, dg_rply_header *h, dg_error *err)
{
    uint8_t b[64];
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "cannot open: %s", strerror(errno));
    size_t n = fread(b, 1, sizeof b, fp);
    fclose(fp);
    return dg_rply_read_header(b, n, 0, h, err);
}

/* The header's comparable fields (tick rate, place version) as a "header" check, as
 * dg_harness__compare_headers; version and start time shown, not compared. */
static int rply_compare_headers(dg_report_scenario *sc, const char *pa, const char *pb)
{
    double t0 = dg_harness__now();
    dg_report_check *c = dg_report_add_check(sc, "header", DG_REPORT_PASS);
    if (!c)
        return -1;
    dg_rply_header a, b;
    dg_error err;
    dg_error_clear(&err);
    if (rg_read_header(pa, &a, &err) != DG_OK || rg_read_header(pb, &b, &err) != DG_OK) {
        char buf[512];
        dg_error_format(&err, buf, sizeof buf);
        c->status = DG_REPORT_ERROR;
        dg_report_check_set_message(c, "%s", buf);
        return -1;
    }
    char va[24], vb[24];
    if (a.tick_rate != b.tick_rate) {
        snprintf(va, sizeof va, "%u", (unsigned)a.tick_rate);
        snprintf(vb, sizeof vb, "%u", (unsigned)b.tick_rate);
        dg_report_check_add_value(c, "tick rate", va, vb);
    }
    if (a.place_version != b.place_version) {
        snprintf(va, sizeof va, "%lu", (unsigned long)a.place_version);
        snprintf(vb, sizeof vb, "%lu", (unsigned long)b.place_version);
        dg_report_check_add_value(c, "place version", va, vb);
    }
    if (c->n_values + c->values_cut)
        dg_report_check_set_message(c, "%u header value%s differ%s: %s", (unsigned)(c->n_values + c->values_cut),
                                    c->n_values + c->values_cut == 1 ? "" : "s",
                                    c->n_values + c->values_cut == 1 ? "s" : "", c->values[0].field);
    else
        dg_report_check_set_message(c, "tick rate and place version equal");
    dg_report_check_add_detail(c, "not compared: RPLY version A %u, B %u", (unsigned)a.version, (unsigned)b.version);
    dg_report_check_add_detail(c, "not compared: start time A %.17g, B %.17g (Unix seconds)", a.start_unix,
                               b.start_unix);
    c->duration_s = dg_harness__now() - t0;
    return c->status == DG_REPORT_FAIL;
}

/* ---- the row ---------------------------------------------------------------------------------- */

static dg_status rply_replay_hash(const char *path, const harness__replay_opts *o, harness__stream *out, dg_error *err)
{
    return replay_hash(path, o->log, o->log_entities, out, err); /* one linear pass: no fault hook, no jobs */
}

static dg_status rply_validate(const char *path, dg_error *err)
{
    harness__stream s = {0};
    dg_status st = replay_hash(path, NULL, false, &s, err);
    dg_harness__stream_free(&s);
    return st;
}

static bool rply_span(const char *path, uint64_t *ticks, uint64_t *last)
{
    dg_rply_header h;
    dg_error err;
    dg_error_clear(&err);
    if (rg_read_header(path, &h, &err) != DG_OK)
        return false;
    *ticks = h.tick_count;
    *last = h.tick_count ? h.tick_count - 1u : 0;
    return true;
}

const harness__format dg_harness__format_rply = {
    .name = "rply",
    .ext = ".rply",
    .log_suffix = ".rply.hashlog.zst",
    .label = "RPLY",
    .magic = {'R', 'P', 'L', 'Y'},
    .replay_faults = false,
    .record_log = false,
    .entity_views = false,
    .record = rply_record,
    .replay_hash = rply_replay_hash,
    .verify = rply_verify,
    .compare_files = rply_compare_files,
    .compare_headers = rply_compare_headers,
    .validate = rply_validate,
    .span = rply_span,
};
