/* codec/rply/rply_snapshot.c — SNAPSHOT version 10: one parser that checks (measure pass, no
 * allocation) and decodes (fill pass, one allocation sized by the measure pass), and the encoder.
 * Every count is compared with the bytes left before anything is sized from it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "rply_internal.h"

/* Smallest encodings, for "a count can never exceed the bytes left" checks. */
enum {
    MIN_STR = 2, MIN_CHAR_MESH = 25, MIN_PART = 52, MIN_DECAL = 8, MIN_EFFECT = 5, MIN_EPROP = 3,
    MIN_NUMKEY = 12, MIN_COLORKEY = 7, MIN_JOINT = 13
};

typedef struct snap_ctx {
    dg_cur c;
    char where[96];
    bool fill;        /* false: measure; true: fill from mem */
    size_t need;      /* measure: bytes of arrays */
    uint8_t *mem;
    size_t used;
} snap_ctx;

#define ALIGN8(n) (((n) + 7u) & ~(size_t)7u)

/* An array of n elements; in the measure pass only counts bytes and returns NULL. */
static void *arr(snap_ctx *x, size_t n, size_t elem)
{
    size_t bytes = ALIGN8(n * elem);
    if (!x->fill) {
        x->need += bytes;
        return NULL;
    }
    if (n == 0)
        return NULL;
    void *p = x->mem + x->used;
    x->used += bytes;
    memset(p, 0, bytes);
    return p;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void sfail(snap_ctx *x, dg_status code, const char *fmt, ...)
{
    if (!x->c.ok)
        return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    dg_cur_fail(&x->c, code, "%s", msg);
}

static void set_where(snap_ctx *x, const char *fmt, unsigned a, unsigned b)
{
    snprintf(x->where, sizeof x->where, fmt, a, b);
    x->c.where = x->where;
}

static dg_rply_str str16(snap_ctx *x, const char *what)
{
    dg_strview v = dg_cur_str16(&x->c, what);
    dg_rply_str s = {v.s, v.len};
    return s;
}

static uint8_t flag(snap_ctx *x, const char *what)
{
    uint8_t v = dg_cur_u8(&x->c, what);
    if (v > 1) {
        x->c.pos--;
        sfail(x, DG_E_RANGE, "%s must be 0 or 1, found %u", what, v);
    }
    return v;
}

static bool count_fits(snap_ctx *x, uint32_t n, uint32_t min, const char *what)
{
    if ((uint64_t)n * min > dg_cur_left(&x->c)) {
        sfail(x, DG_E_TRUNCATED, "%s %u needs at least %llu bytes, found %zu left", what, n,
              (unsigned long long)n * min, dg_cur_left(&x->c));
        return false;
    }
    return x->c.ok;
}

static void f32s(snap_ctx *x, float *out, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        out[i] = dg_cur_f32(&x->c, what);
}
static void i16s(snap_ctx *x, int16_t *out, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        out[i] = (int16_t)dg_cur_u16(&x->c, what);
}
static void u8s(snap_ctx *x, uint8_t *out, int n, const char *what)
{
    const uint8_t *p = dg_cur_bytes(&x->c, (size_t)n, what);
    if (p)
        memcpy(out, p, (size_t)n);
}

static void parse_rig(snap_ctx *x, dg_rply_rig *r)
{
    set_where(x, "snapshot rig block%.0u%.0u", 0, 0);
    r->has_humanoid = flag(x, "u8 hasHumanoid");
    if (!r->has_humanoid)
        return;
    r->rig_type = dg_cur_u8(&x->c, "u8 rigType");
    r->shirt = str16(x, "str16 shirt");
    r->pants = str16(x, "str16 pants");
    r->shirt_graphic = str16(x, "str16 shirtGraphic");
    r->has_body_colors = flag(x, "u8 hasBodyColors");
    if (r->has_body_colors)
        for (int i = 0; i < 6; i++)
            u8s(x, r->body_colors[i], 3, "body colour (3 x u8)");
    r->mesh_count = dg_cur_u8(&x->c, "u8 characterMeshCount");
    if (!count_fits(x, r->mesh_count, MIN_CHAR_MESH, "characterMeshCount"))
        return;
    r->meshes = arr(x, r->mesh_count, sizeof *r->meshes);
    for (uint32_t i = 0; i < r->mesh_count && x->c.ok; i++) {
        dg_rply_char_mesh tmp, *m = r->meshes ? &r->meshes[i] : &tmp;
        m->body_part = dg_cur_u8(&x->c, "u8 bodyPart");
        m->mesh_id = dg_cur_f64(&x->c, "f64 meshId");
        m->base_texture_id = dg_cur_f64(&x->c, "f64 baseTextureId");
        m->overlay_texture_id = dg_cur_f64(&x->c, "f64 overlayTextureId");
    }
}

static void parse_effect_prop(snap_ctx *x, dg_rply_effect_prop *p)
{
    p->index = dg_cur_u8(&x->c, "u8 propIndex");
    p->tag = dg_cur_u8(&x->c, "u8 tag");
    switch (p->tag) {
    case DG_RPLY_EV_BOOL:
        p->b = flag(x, "bool value");
        break;
    case DG_RPLY_EV_F32:
        f32s(x, p->f, 1, "f32 value");
        break;
    case DG_RPLY_EV_STR:
    case DG_RPLY_EV_ENUM:
    case DG_RPLY_EV_ATTACHMENT:
        p->s = str16(x, "str16 value");
        break;
    case DG_RPLY_EV_COLOR3:
        u8s(x, p->rgb, 3, "Color3 (3 x u8)");
        break;
    case DG_RPLY_EV_VECTOR3:
        f32s(x, p->f, 3, "Vector3 (3 x f32)");
        break;
    case DG_RPLY_EV_VECTOR2:
        f32s(x, p->f, 2, "Vector2 (2 x f32)");
        break;
    case DG_RPLY_EV_RANGE:
        f32s(x, p->f, 2, "NumberRange (2 x f32)");
        break;
    case DG_RPLY_EV_NUMSEQ:
        p->n = dg_cur_u8(&x->c, "u8 keypoint count");
        if (!count_fits(x, p->n, MIN_NUMKEY, "NumberSequence keypoint count"))
            return;
        p->numseq = arr(x, p->n, sizeof *p->numseq);
        for (uint32_t i = 0; i < p->n && x->c.ok; i++) {
            dg_rply_numkey tmp, *k = p->numseq ? &p->numseq[i] : &tmp;
            k->time = dg_cur_f32(&x->c, "f32 time");
            k->value = dg_cur_f32(&x->c, "f32 value");
            k->envelope = dg_cur_f32(&x->c, "f32 envelope");
        }
        break;
    case DG_RPLY_EV_COLORSEQ:
        p->n = dg_cur_u8(&x->c, "u8 keypoint count");
        if (!count_fits(x, p->n, MIN_COLORKEY, "ColorSequence keypoint count"))
            return;
        p->colorseq = arr(x, p->n, sizeof *p->colorseq);
        for (uint32_t i = 0; i < p->n && x->c.ok; i++) {
            dg_rply_colorkey tmp, *k = p->colorseq ? &p->colorseq[i] : &tmp;
            k->time = dg_cur_f32(&x->c, "f32 time");
            u8s(x, k->rgb, 3, "Color3 (3 x u8)");
        }
        break;
    default:
        x->c.pos--;
        sfail(x, DG_E_RANGE, "effect property tag %u is not 0..10", p->tag);
    }
}

static void parse_effects(snap_ctx *x, dg_rply_part *part, unsigned pi)
{
    part->effect_count = dg_cur_u8(&x->c, "u8 effect count");
    if (!count_fits(x, part->effect_count, MIN_EFFECT, "effect count"))
        return;
    part->effects = arr(x, part->effect_count, sizeof *part->effects);
    uint8_t classes[256];
    for (uint32_t i = 0; i < part->effect_count && x->c.ok; i++) {
        set_where(x, "snapshot part %u effect %u", pi, i + 1);
        dg_rply_effect tmp, *e = part->effects ? &part->effects[i] : &tmp;
        memset(&tmp, 0, sizeof tmp);
        e->class_id = dg_cur_u8(&x->c, "u8 class");
        if (x->c.ok && (e->class_id < 1 || e->class_id > 11)) {
            x->c.pos--;
            sfail(x, DG_E_RANGE, "effect class %u is not 1..11", e->class_id);
        }
        classes[i] = e->class_id;
        e->parent_index = dg_cur_u8(&x->c, "u8 parentIndex");
        if (x->c.ok && e->parent_index != 0 &&
            (e->parent_index > i || classes[e->parent_index - 1] != 1)) {
            x->c.pos--;
            sfail(x, DG_E_RANGE,
                  "parentIndex %u must be 0 (the part) or the 1-based index of an earlier "
                  "Attachment (this is effect %u)",
                  e->parent_index, i + 1);
        }
        e->name = str16(x, "str16 name");
        e->prop_count = dg_cur_u8(&x->c, "u8 propCount");
        if (!count_fits(x, e->prop_count, MIN_EPROP, "propCount"))
            return;
        e->props = arr(x, e->prop_count, sizeof *e->props);
        for (uint32_t k = 0; k < e->prop_count && x->c.ok; k++) {
            dg_rply_effect_prop ptmp, *p = e->props ? &e->props[k] : &ptmp;
            memset(&ptmp, 0, sizeof ptmp);
            parse_effect_prop(x, p);
        }
    }
}

static void parse_part_tail(snap_ctx *x, dg_rply_part *p, unsigned pi)
{
    p->has_special_mesh = flag(x, "u8 SpecialMesh present");
    if (p->has_special_mesh) {
        dg_rply_special_mesh *m = &p->special_mesh;
        m->mesh_type = dg_cur_u8(&x->c, "u8 meshType");
        m->mesh_id = str16(x, "str16 meshId");
        m->texture_id = str16(x, "str16 textureId");
        f32s(x, m->scale, 3, "3 x f32 scale");
        f32s(x, m->offset, 3, "3 x f32 offset");
    }
    p->has_surface_appearance = flag(x, "u8 SurfaceAppearance present");
    if (p->has_surface_appearance) {
        dg_rply_surface_appearance *a = &p->surface_appearance;
        a->color_map = str16(x, "str16 colorMap");
        a->normal_map = str16(x, "str16 normalMap");
        a->metalness_map = str16(x, "str16 metalnessMap");
        a->roughness_map = str16(x, "str16 roughnessMap");
        a->alpha_mode = dg_cur_u8(&x->c, "u8 alphaMode");
    }
    p->decal_count = dg_cur_u8(&x->c, "u8 decal count");
    if (!count_fits(x, p->decal_count, MIN_DECAL, "decal count"))
        return;
    p->decals = arr(x, p->decal_count, sizeof *p->decals);
    for (uint32_t i = 0; i < p->decal_count && x->c.ok; i++) {
        set_where(x, "snapshot part %u decal %u", pi, i + 1);
        dg_rply_decal tmp, *d = p->decals ? &p->decals[i] : &tmp;
        memset(&tmp, 0, sizeof tmp);
        d->kind = dg_cur_u8(&x->c, "u8 kind");
        if (x->c.ok && d->kind > 1) {
            x->c.pos--;
            sfail(x, DG_E_RANGE, "decal kind %u is not 0 (Decal) or 1 (Texture)", d->kind);
        }
        d->face = dg_cur_u8(&x->c, "u8 face");
        if (x->c.ok && d->face > 5) {
            x->c.pos--;
            sfail(x, DG_E_RANGE, "face %u is not 0..5", d->face);
        }
        d->texture_id = str16(x, "str16 textureId");
        u8s(x, d->color, 3, "3 x u8 color");
        d->transparency = dg_cur_u8(&x->c, "u8 transparency");
        if (d->kind == 1)
            f32s(x, d->studs_per_tile, 2, "2 x f32 studsPerTile");
    }
    set_where(x, "snapshot part %u%.0u", pi, 0);
    parse_effects(x, p, pi);
}

static void parse_part(snap_ctx *x, const dg_rply_snapshot *s, dg_rply_part *p, unsigned pi)
{
    set_where(x, "snapshot part %u%.0u", pi, 0);
    p->kind = dg_cur_u8(&x->c, "u8 kind");
    if (x->c.ok && p->kind > 5) {
        x->c.pos--;
        sfail(x, DG_E_RANGE, "part kind %u is not 0..5", p->kind);
    }
    if (p->kind == 5) {
        p->union_key_index = dg_cur_u16(&x->c, "u16 unionKeyIndex");
        if (x->c.ok && p->union_key_index >= s->union_count) {
            x->c.pos -= 2;
            sfail(x, DG_E_RANGE, "unionKeyIndex %u out of range (unionCount %u, 0-based)",
                  p->union_key_index, s->union_count);
        }
    }
    p->name = str16(x, "str16 name");
    p->parent_path = str16(x, "str16 parentPath");
    f32s(x, p->offset, 3, "3 x f32 offset");
    i16s(x, p->rotation, 3, "3 x i16 rotation");
    f32s(x, p->size, 3, "3 x f32 size");
    u8s(x, p->color, 3, "3 x u8 color");
    p->material = dg_cur_u16(&x->c, "u16 material");
    p->transparency = dg_cur_u8(&x->c, "u8 transparency");
    p->reflectance = dg_cur_u8(&x->c, "u8 reflectance");
    p->shape = dg_cur_u8(&x->c, "u8 shape");
    u8s(x, p->surfaces, 6, "6 x u8 surface types");
    if (p->kind == 1) {
        p->mesh_id = str16(x, "str16 meshId");
        p->texture_id = str16(x, "str16 textureId");
        f32s(x, p->mesh_size, 3, "3 x f32 meshSize");
    }
    parse_part_tail(x, p, pi);
}

static void joint_index(snap_ctx *x, uint16_t *out, uint16_t parts, const char *what)
{
    *out = dg_cur_u16(&x->c, what);
    if (x->c.ok && (*out < 1 || *out > parts)) {
        x->c.pos -= 2;
        sfail(x, DG_E_RANGE, "%s %u out of range (1-based, %u parts)", what, *out, parts);
    }
}

static void cframe(snap_ctx *x, dg_rply_cframe *c, const char *what)
{
    f32s(x, c->pos, 3, what);
    i16s(x, c->rot, 3, what);
}

static void parse_joint(snap_ctx *x, uint16_t parts, dg_rply_joint *j, unsigned ji)
{
    set_where(x, "snapshot joint %u%.0u", ji, 0);
    j->kind = dg_cur_u8(&x->c, "u8 kind");
    if (x->c.ok && (j->kind < 1 || j->kind > 4)) {
        x->c.pos--;
        sfail(x, DG_E_RANGE, "joint kind %u is not 1..4", j->kind);
    }
    j->name = str16(x, "str16 name");
    joint_index(x, &j->holder, parts, "holderIndex");
    if (j->kind == 1 || j->kind == 2) {
        joint_index(x, &j->part0, parts, "part0Index");
        joint_index(x, &j->part1, parts, "part1Index");
        cframe(x, &j->c0, "C0 (3 x f32 + 3 x i16)");
        cframe(x, &j->c1, "C1 (3 x f32 + 3 x i16)");
    } else {
        joint_index(x, &j->part0, parts, "part0Index");
        j->attachment0 = str16(x, "str16 attachment0Name");
        joint_index(x, &j->part1, parts, "part1Index");
        j->attachment1 = str16(x, "str16 attachment1Name");
    }
}

static void parse(snap_ctx *x, dg_rply_snapshot *s)
{
    set_where(x, "snapshot%.0u%.0u", 0, 0);
    s->version = dg_cur_u8(&x->c, "u8 version");
    if (x->c.ok && s->version != DG_RPLY_SNAPSHOT_VERSION) {
        x->c.pos--;
        sfail(x, DG_E_VERSION, "snapshot version %u, this reader reads version %d", s->version,
              DG_RPLY_SNAPSHOT_VERSION);
    }
    s->is_model = flag(x, "u8 isModel");
    s->name = str16(x, "str16 name");
    s->source_key = str16(x, "str16 sourceKey");
    s->root_path = str16(x, "str16 rootPath");
    s->union_count = dg_cur_u16(&x->c, "u16 unionCount");
    if (!count_fits(x, s->union_count, MIN_STR, "unionCount"))
        return;
    s->union_keys = arr(x, s->union_count, sizeof *s->union_keys);
    for (uint32_t i = 0; i < s->union_count && x->c.ok; i++) {
        dg_rply_str v = str16(x, "str16 union key");
        if (s->union_keys)
            s->union_keys[i] = v;
    }
    s->mesh_count = dg_cur_u16(&x->c, "u16 meshCount");
    if (!count_fits(x, s->mesh_count, MIN_STR, "meshCount"))
        return;
    s->mesh_ids = arr(x, s->mesh_count, sizeof *s->mesh_ids);
    for (uint32_t i = 0; i < s->mesh_count && x->c.ok; i++) {
        dg_rply_str v = str16(x, "str16 mesh id");
        if (s->mesh_ids)
            s->mesh_ids[i] = v;
    }
    if (s->is_model)
        parse_rig(x, &s->rig);
    set_where(x, "snapshot part list%.0u%.0u", 0, 0);
    s->part_count = dg_cur_u16(&x->c, "u16 part count");
    if (!count_fits(x, s->part_count, MIN_PART, "part count"))
        return;
    s->parts = arr(x, s->part_count, sizeof *s->parts);
    for (uint32_t i = 0; i < s->part_count && x->c.ok; i++) {
        dg_rply_part tmp, *p = s->parts ? &s->parts[i] : &tmp;
        memset(&tmp, 0, sizeof tmp);
        parse_part(x, s, p, i + 1);
    }
    set_where(x, "snapshot joint list%.0u%.0u", 0, 0);
    s->joint_count = dg_cur_u16(&x->c, "u16 joint count");
    if (!count_fits(x, s->joint_count, MIN_JOINT, "joint count"))
        return;
    s->joints = arr(x, s->joint_count, sizeof *s->joints);
    for (uint32_t i = 0; i < s->joint_count && x->c.ok; i++) {
        dg_rply_joint tmp, *j = s->joints ? &s->joints[i] : &tmp;
        memset(&tmp, 0, sizeof tmp);
        parse_joint(x, s->part_count, j, i + 1);
    }
    set_where(x, "snapshot%.0u%.0u", 0, 0);
    if (x->c.ok && x->c.pos != x->c.len)
        sfail(x, DG_E_MALFORMED, "snapshot ends %zu bytes before its byteLen %zu",
              x->c.len - x->c.pos, x->c.len);
}

static dg_status run_pass(snap_ctx *x, const uint8_t *bytes, size_t len, uint64_t base,
                          dg_rply_snapshot *s, dg_error *err)
{
    dg_cur_init(&x->c, bytes, len, base, "snapshot", err);
    memset(s, 0, sizeof *s);
    parse(x, s);
    if (!x->c.ok)
        return err && err->code != DG_OK ? err->code : DG_E_MALFORMED;
    return DG_OK;
}

dg_status dg_rply_snapshot_check(const uint8_t *bytes, size_t len, uint64_t base, dg_error *err)
{
    snap_ctx x;
    memset(&x, 0, sizeof x);
    dg_rply_snapshot s;
    return run_pass(&x, bytes, len, base, &s, err);
}

/* The struct heads its one allocation; the arrays follow it, 8-byte aligned. */
#define SNAP_HEAD ALIGN8(sizeof(dg_rply_snapshot))

dg_status dg_rply_snapshot_decode(const uint8_t *bytes, size_t len, uint64_t base,
                                  dg_rply_snapshot **out, dg_error *err)
{
    *out = NULL;
    snap_ctx x;
    memset(&x, 0, sizeof x);
    dg_rply_snapshot measured;
    dg_status st = run_pass(&x, bytes, len, base, &measured, err);
    if (st != DG_OK)
        return st;
    size_t need = x.need;
    memset(&x, 0, sizeof x);
    x.fill = true;
    uint8_t *block = malloc(SNAP_HEAD + need);
    if (!block)
        return dg_error_set(err, DG_E_NOMEM, base, "snapshot", "%zu bytes", SNAP_HEAD + need);
    dg_rply_snapshot *s = (dg_rply_snapshot *)(void *)block;
    x.mem = block + SNAP_HEAD;
    st = run_pass(&x, bytes, len, base, s, err);
    if (st != DG_OK) {
        free(block);
        return st;
    }
    *out = s;
    return DG_OK;
}

void dg_rply_snapshot_free(dg_rply_snapshot *s) { free(s); }

/* ---- encoder ------------------------------------------------------------------------------- */
static void put_str(dg_buf *b, dg_rply_str s) { dg_buf_str16(b, s.s ? s.s : "", s.s ? s.len : 0); }
static void put_f32s(dg_buf *b, const float *v, int n)
{
    for (int i = 0; i < n; i++)
        dg_buf_f32(b, v[i]);
}
static void put_i16s(dg_buf *b, const int16_t *v, int n)
{
    for (int i = 0; i < n; i++)
        dg_buf_u16(b, (uint16_t)v[i]);
}

static void put_effect_prop(dg_buf *b, const dg_rply_effect_prop *p)
{
    dg_buf_u8(b, p->index);
    dg_buf_u8(b, p->tag);
    switch (p->tag) {
    case DG_RPLY_EV_BOOL: dg_buf_u8(b, p->b); break;
    case DG_RPLY_EV_F32: put_f32s(b, p->f, 1); break;
    case DG_RPLY_EV_STR:
    case DG_RPLY_EV_ENUM:
    case DG_RPLY_EV_ATTACHMENT: put_str(b, p->s); break;
    case DG_RPLY_EV_COLOR3: dg_buf_put(b, p->rgb, 3); break;
    case DG_RPLY_EV_VECTOR3: put_f32s(b, p->f, 3); break;
    case DG_RPLY_EV_VECTOR2:
    case DG_RPLY_EV_RANGE: put_f32s(b, p->f, 2); break;
    case DG_RPLY_EV_NUMSEQ:
        dg_buf_u8(b, p->n);
        for (uint32_t i = 0; i < p->n; i++) {
            dg_buf_f32(b, p->numseq[i].time);
            dg_buf_f32(b, p->numseq[i].value);
            dg_buf_f32(b, p->numseq[i].envelope);
        }
        break;
    case DG_RPLY_EV_COLORSEQ:
        dg_buf_u8(b, p->n);
        for (uint32_t i = 0; i < p->n; i++) {
            dg_buf_f32(b, p->colorseq[i].time);
            dg_buf_put(b, p->colorseq[i].rgb, 3);
        }
        break;
    default: break; /* the check pass after encoding reports it */
    }
}

static void put_part(dg_buf *b, const dg_rply_part *p)
{
    dg_buf_u8(b, p->kind);
    if (p->kind == 5)
        dg_buf_u16(b, p->union_key_index);
    put_str(b, p->name);
    put_str(b, p->parent_path);
    put_f32s(b, p->offset, 3);
    put_i16s(b, p->rotation, 3);
    put_f32s(b, p->size, 3);
    dg_buf_put(b, p->color, 3);
    dg_buf_u16(b, p->material);
    dg_buf_u8(b, p->transparency);
    dg_buf_u8(b, p->reflectance);
    dg_buf_u8(b, p->shape);
    dg_buf_put(b, p->surfaces, 6);
    if (p->kind == 1) {
        put_str(b, p->mesh_id);
        put_str(b, p->texture_id);
        put_f32s(b, p->mesh_size, 3);
    }
    dg_buf_u8(b, p->has_special_mesh);
    if (p->has_special_mesh) {
        const dg_rply_special_mesh *m = &p->special_mesh;
        dg_buf_u8(b, m->mesh_type);
        put_str(b, m->mesh_id);
        put_str(b, m->texture_id);
        put_f32s(b, m->scale, 3);
        put_f32s(b, m->offset, 3);
    }
    dg_buf_u8(b, p->has_surface_appearance);
    if (p->has_surface_appearance) {
        const dg_rply_surface_appearance *a = &p->surface_appearance;
        put_str(b, a->color_map);
        put_str(b, a->normal_map);
        put_str(b, a->metalness_map);
        put_str(b, a->roughness_map);
        dg_buf_u8(b, a->alpha_mode);
    }
    dg_buf_u8(b, p->decal_count);
    for (uint32_t i = 0; i < p->decal_count; i++) {
        const dg_rply_decal *d = &p->decals[i];
        dg_buf_u8(b, d->kind);
        dg_buf_u8(b, d->face);
        put_str(b, d->texture_id);
        dg_buf_put(b, d->color, 3);
        dg_buf_u8(b, d->transparency);
        if (d->kind == 1)
            put_f32s(b, d->studs_per_tile, 2);
    }
    dg_buf_u8(b, p->effect_count);
    for (uint32_t i = 0; i < p->effect_count; i++) {
        const dg_rply_effect *e = &p->effects[i];
        dg_buf_u8(b, e->class_id);
        dg_buf_u8(b, e->parent_index);
        put_str(b, e->name);
        dg_buf_u8(b, e->prop_count);
        for (uint32_t k = 0; k < e->prop_count; k++)
            put_effect_prop(b, &e->props[k]);
    }
}

static void put_joint(dg_buf *b, const dg_rply_joint *j)
{
    dg_buf_u8(b, j->kind);
    put_str(b, j->name);
    dg_buf_u16(b, j->holder);
    dg_buf_u16(b, j->part0);
    if (j->kind == 1 || j->kind == 2) {
        dg_buf_u16(b, j->part1);
        put_f32s(b, j->c0.pos, 3);
        put_i16s(b, j->c0.rot, 3);
        put_f32s(b, j->c1.pos, 3);
        put_i16s(b, j->c1.rot, 3);
    } else {
        put_str(b, j->attachment0);
        dg_buf_u16(b, j->part1);
        put_str(b, j->attachment1);
    }
}

static void put_snapshot(dg_buf *b, const dg_rply_snapshot *s)
{
    dg_buf_u8(b, DG_RPLY_SNAPSHOT_VERSION);
    dg_buf_u8(b, s->is_model);
    put_str(b, s->name);
    put_str(b, s->source_key);
    put_str(b, s->root_path);
    dg_buf_u16(b, s->union_count);
    for (uint32_t i = 0; i < s->union_count; i++)
        put_str(b, s->union_keys[i]);
    dg_buf_u16(b, s->mesh_count);
    for (uint32_t i = 0; i < s->mesh_count; i++)
        put_str(b, s->mesh_ids[i]);
    if (s->is_model) {
        const dg_rply_rig *r = &s->rig;
        dg_buf_u8(b, r->has_humanoid);
        if (r->has_humanoid) {
            dg_buf_u8(b, r->rig_type);
            put_str(b, r->shirt);
            put_str(b, r->pants);
            put_str(b, r->shirt_graphic);
            dg_buf_u8(b, r->has_body_colors);
            if (r->has_body_colors)
                dg_buf_put(b, r->body_colors, 18);
            dg_buf_u8(b, r->mesh_count);
            for (uint32_t i = 0; i < r->mesh_count; i++) {
                dg_buf_u8(b, r->meshes[i].body_part);
                dg_buf_f64(b, r->meshes[i].mesh_id);
                dg_buf_f64(b, r->meshes[i].base_texture_id);
                dg_buf_f64(b, r->meshes[i].overlay_texture_id);
            }
        }
    }
    dg_buf_u16(b, s->part_count);
    for (uint32_t i = 0; i < s->part_count; i++)
        put_part(b, &s->parts[i]);
    dg_buf_u16(b, s->joint_count);
    for (uint32_t i = 0; i < s->joint_count; i++)
        put_joint(b, &s->joints[i]);
}

dg_status dg_rply_snapshot_encode(const dg_rply_snapshot *s, uint8_t *out, size_t cap,
                                  size_t *out_len, dg_error *err)
{
    dg_buf b;
    dg_buf_init(&b);
    put_snapshot(&b, s);
    if (!b.ok) {
        dg_buf_free(&b);
        return dg_error_set(err, DG_E_LIMIT, DG_OFFSET_NONE, "snapshot encoder",
                            "a string is longer than 65535 bytes or memory ran out");
    }
    /* Whatever the reader would refuse (bad kind, index out of range, invalid UTF-8...) is refused
     * here too, by the reader's own check. */
    dg_status st = dg_rply_snapshot_check(b.p, b.len, 0, err);
    if (st == DG_OK && b.len > UINT32_MAX)
        st = dg_error_set(err, DG_E_LIMIT, DG_OFFSET_NONE, "snapshot encoder",
                          "%zu bytes exceed a u32 byteLen", b.len);
    if (st == DG_OK) {
        if (out_len)
            *out_len = b.len;
        if (out) {
            if (cap < b.len)
                st = dg_error_set(err, DG_E_LIMIT, DG_OFFSET_NONE, "snapshot encoder",
                                  "needs %zu bytes, buffer holds %zu", b.len, cap);
            else
                memcpy(out, b.p, b.len);
        }
    }
    dg_buf_free(&b);
    return st;
}
