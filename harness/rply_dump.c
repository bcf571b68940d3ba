/* harness/rply_dump.c — `detgate dump --json` / `detgate info` for RPLY files: the canonical JSON
 * Lines of shared/specs/rply.md (field order as listed there, %.9g f32, %.17g f64, NaN/Infinity as
 * strings) and a short human summary. Reading is the codec's; this file only prints. */
#include "rply_dump.h"

#include <math.h>
#include <string.h>

#include "detgate/rply.h"
#include "json.h"

/* ---- JSON atoms ---------------------------------------------------------------------------- */
static void j_view(FILE *o, dg_rply_str s) { dg_json_fput_str(o, s.s ? s.s : "", s.s ? s.len : 0); }

static bool j_nonfinite(FILE *o, double v)
{
    if (isnan(v))
        fputs("\"NaN\"", o);
    else if (isinf(v))
        fputs(v > 0 ? "\"Infinity\"" : "\"-Infinity\"", o);
    else
        return false;
    return true;
}
static void j_f32(FILE *o, float v)
{
    if (!j_nonfinite(o, v))
        fprintf(o, "%.9g", (double)v);
}
static void j_f64(FILE *o, double v)
{
    if (!j_nonfinite(o, v))
        fprintf(o, "%.17g", v);
}
static void j_f32s(FILE *o, const float *v, int n)
{
    fputc('[', o);
    for (int i = 0; i < n; i++) {
        if (i)
            fputc(',', o);
        j_f32(o, v[i]);
    }
    fputc(']', o);
}
static void j_ints(FILE *o, const long *v, int n)
{
    fputc('[', o);
    for (int i = 0; i < n; i++)
        fprintf(o, "%s%ld", i ? "," : "", v[i]);
    fputc(']', o);
}
static void j_i16s(FILE *o, const int16_t *v, int n)
{
    long t[8];
    for (int i = 0; i < n; i++)
        t[i] = v[i];
    j_ints(o, t, n);
}
static void j_u8s(FILE *o, const uint8_t *v, int n)
{
    long t[8];
    for (int i = 0; i < n; i++)
        t[i] = v[i];
    j_ints(o, t, n);
}
static void j_key(FILE *o, const char *k) { fprintf(o, ",\"%s\":", k); }

/* ---- snapshot ------------------------------------------------------------------------------ */
static void j_rig(FILE *o, const dg_rply_snapshot *s)
{
    if (!s->is_model) {
        fputs("null", o);
        return;
    }
    const dg_rply_rig *r = &s->rig;
    fprintf(o, "{\"hasHumanoid\":%u", r->has_humanoid);
    if (r->has_humanoid) {
        fprintf(o, ",\"rigType\":%u", r->rig_type);
        j_key(o, "shirt");
        j_view(o, r->shirt);
        j_key(o, "pants");
        j_view(o, r->pants);
        j_key(o, "shirtGraphic");
        j_view(o, r->shirt_graphic);
        fprintf(o, ",\"hasBodyColors\":%u", r->has_body_colors);
        if (r->has_body_colors) {
            fputs(",\"bodyColors\":[", o);
            for (int i = 0; i < 6; i++) {
                if (i)
                    fputc(',', o);
                j_u8s(o, r->body_colors[i], 3);
            }
            fputc(']', o);
        }
        fputs(",\"characterMeshes\":[", o);
        for (uint32_t i = 0; i < r->mesh_count; i++) {
            const dg_rply_char_mesh *m = &r->meshes[i];
            fprintf(o, "%s{\"bodyPart\":%u,\"meshId\":", i ? "," : "", m->body_part);
            j_f64(o, m->mesh_id);
            j_key(o, "baseTextureId");
            j_f64(o, m->base_texture_id);
            j_key(o, "overlayTextureId");
            j_f64(o, m->overlay_texture_id);
            fputc('}', o);
        }
        fputc(']', o);
    }
    fputc('}', o);
}

static void j_effect_value(FILE *o, const dg_rply_effect_prop *p)
{
    switch (p->tag) {
    case DG_RPLY_EV_BOOL: fputs(p->b ? "true" : "false", o); break;
    case DG_RPLY_EV_F32: j_f32(o, p->f[0]); break;
    case DG_RPLY_EV_STR:
    case DG_RPLY_EV_ENUM:
    case DG_RPLY_EV_ATTACHMENT: j_view(o, p->s); break;
    case DG_RPLY_EV_COLOR3: j_u8s(o, p->rgb, 3); break;
    case DG_RPLY_EV_VECTOR3: j_f32s(o, p->f, 3); break;
    case DG_RPLY_EV_VECTOR2:
    case DG_RPLY_EV_RANGE: j_f32s(o, p->f, 2); break;
    case DG_RPLY_EV_NUMSEQ:
        fputc('[', o);
        for (uint32_t i = 0; i < p->n; i++) {
            fputs(i ? ",{\"time\":" : "{\"time\":", o);
            j_f32(o, p->numseq[i].time);
            j_key(o, "value");
            j_f32(o, p->numseq[i].value);
            j_key(o, "envelope");
            j_f32(o, p->numseq[i].envelope);
            fputc('}', o);
        }
        fputc(']', o);
        break;
    case DG_RPLY_EV_COLORSEQ:
        fputc('[', o);
        for (uint32_t i = 0; i < p->n; i++) {
            fputs(i ? ",{\"time\":" : "{\"time\":", o);
            j_f32(o, p->colorseq[i].time);
            j_key(o, "color");
            j_u8s(o, p->colorseq[i].rgb, 3);
            fputc('}', o);
        }
        fputc(']', o);
        break;
    default: fputs("null", o);
    }
}

static void j_part_extras(FILE *o, const dg_rply_part *p)
{
    fputs(",\"specialMesh\":", o);
    if (p->has_special_mesh) {
        const dg_rply_special_mesh *m = &p->special_mesh;
        fprintf(o, "{\"meshType\":%u", m->mesh_type);
        j_key(o, "meshId");
        j_view(o, m->mesh_id);
        j_key(o, "textureId");
        j_view(o, m->texture_id);
        j_key(o, "scale");
        j_f32s(o, m->scale, 3);
        j_key(o, "offset");
        j_f32s(o, m->offset, 3);
        fputc('}', o);
    } else {
        fputs("null", o);
    }
    fputs(",\"surfaceAppearance\":", o);
    if (p->has_surface_appearance) {
        const dg_rply_surface_appearance *a = &p->surface_appearance;
        fputs("{\"colorMap\":", o);
        j_view(o, a->color_map);
        j_key(o, "normalMap");
        j_view(o, a->normal_map);
        j_key(o, "metalnessMap");
        j_view(o, a->metalness_map);
        j_key(o, "roughnessMap");
        j_view(o, a->roughness_map);
        fprintf(o, ",\"alphaMode\":%u}", a->alpha_mode);
    } else {
        fputs("null", o);
    }
    fputs(",\"decals\":[", o);
    for (uint32_t i = 0; i < p->decal_count; i++) {
        const dg_rply_decal *d = &p->decals[i];
        fprintf(o, "%s{\"kind\":%u,\"face\":%u,\"textureId\":", i ? "," : "", d->kind, d->face);
        j_view(o, d->texture_id);
        j_key(o, "color");
        j_u8s(o, d->color, 3);
        fprintf(o, ",\"transparency\":%u", d->transparency);
        if (d->kind == 1) {
            j_key(o, "studsPerTile");
            j_f32s(o, d->studs_per_tile, 2);
        }
        fputc('}', o);
    }
    fputs("],\"effects\":[", o);
    for (uint32_t i = 0; i < p->effect_count; i++) {
        const dg_rply_effect *e = &p->effects[i];
        fprintf(o, "%s{\"class\":%u,\"parentIndex\":%u,\"name\":", i ? "," : "", e->class_id,
                e->parent_index);
        j_view(o, e->name);
        fputs(",\"props\":[", o);
        for (uint32_t k = 0; k < e->prop_count; k++) {
            fprintf(o, "%s{\"index\":%u,\"tag\":%u,\"value\":", k ? "," : "", e->props[k].index,
                    e->props[k].tag);
            j_effect_value(o, &e->props[k]);
            fputc('}', o);
        }
        fputs("]}", o);
    }
    fputc(']', o);
}

static void j_part(FILE *o, const dg_rply_part *p)
{
    fprintf(o, "{\"kind\":%u,\"name\":", p->kind);
    j_view(o, p->name);
    j_key(o, "parentPath");
    j_view(o, p->parent_path);
    j_key(o, "offset");
    j_f32s(o, p->offset, 3);
    j_key(o, "rotation");
    j_i16s(o, p->rotation, 3);
    j_key(o, "size");
    j_f32s(o, p->size, 3);
    j_key(o, "color");
    j_u8s(o, p->color, 3);
    fprintf(o, ",\"material\":%u,\"transparency\":%u,\"reflectance\":%u,\"shape\":%u", p->material,
            p->transparency, p->reflectance, p->shape);
    j_key(o, "surfaces");
    j_u8s(o, p->surfaces, 6);
    if (p->kind == 5)
        fprintf(o, ",\"unionKeyIndex\":%u", p->union_key_index);
    if (p->kind == 1) {
        j_key(o, "meshId");
        j_view(o, p->mesh_id);
        j_key(o, "textureId");
        j_view(o, p->texture_id);
        j_key(o, "meshSize");
        j_f32s(o, p->mesh_size, 3);
    }
    j_part_extras(o, p);
    fputc('}', o);
}

static void j_cframe(FILE *o, const dg_rply_cframe *c)
{
    fputs("{\"pos\":", o);
    j_f32s(o, c->pos, 3);
    j_key(o, "rot");
    j_i16s(o, c->rot, 3);
    fputc('}', o);
}

static void j_joint(FILE *o, const dg_rply_joint *j)
{
    fprintf(o, "{\"kind\":%u,\"name\":", j->kind);
    j_view(o, j->name);
    fprintf(o, ",\"holder\":%u,\"part0\":%u,\"part1\":%u", j->holder, j->part0, j->part1);
    if (j->kind == 1 || j->kind == 2) {
        j_key(o, "c0");
        j_cframe(o, &j->c0);
        j_key(o, "c1");
        j_cframe(o, &j->c1);
    } else {
        j_key(o, "attachment0");
        j_view(o, j->attachment0);
        j_key(o, "attachment1");
        j_view(o, j->attachment1);
    }
    fputc('}', o);
}

static void j_snapshot(FILE *o, const dg_rply_snapshot *s)
{
    fprintf(o, "{\"version\":%u,\"isModel\":%u,\"name\":", s->version, s->is_model);
    j_view(o, s->name);
    j_key(o, "sourceKey");
    j_view(o, s->source_key);
    j_key(o, "rootPath");
    j_view(o, s->root_path);
    fputs(",\"unionKeys\":[", o);
    for (uint32_t i = 0; i < s->union_count; i++) {
        if (i)
            fputc(',', o);
        j_view(o, s->union_keys[i]);
    }
    fputs("],\"meshIds\":[", o);
    for (uint32_t i = 0; i < s->mesh_count; i++) {
        if (i)
            fputc(',', o);
        j_view(o, s->mesh_ids[i]);
    }
    fputs("],\"rig\":", o);
    j_rig(o, s);
    fputs(",\"parts\":[", o);
    for (uint32_t i = 0; i < s->part_count; i++) {
        if (i)
            fputc(',', o);
        j_part(o, &s->parts[i]);
    }
    fputs("],\"joints\":[", o);
    for (uint32_t i = 0; i < s->joint_count; i++) {
        if (i)
            fputc(',', o);
        j_joint(o, &s->joints[i]);
    }
    fputs("]}", o);
}

/* ---- ops ----------------------------------------------------------------------------------- */
static void j_prop_value(FILE *o, const dg_rply_value *v)
{
    switch (v->tag) {
    case DG_RPLY_PROP_BOOL: fputs(v->u.b ? "true" : "false", o); break;
    case DG_RPLY_PROP_NUMBER: j_f64(o, v->u.num); break;
    case DG_RPLY_PROP_STRING:
    case DG_RPLY_PROP_ENUM: fprintf(o, "%u", v->u.str); break;
    case DG_RPLY_PROP_COLOR3: j_u8s(o, v->u.rgb, 3); break;
    case DG_RPLY_PROP_VECTOR3: j_f32s(o, v->u.vec, 3); break;
    default: fputs("null", o);
    }
}

static int j_op(FILE *o, const dg_rply_file *f, const dg_rply_op *op, dg_error *err)
{
    fprintf(o, "{\"type\":\"op\",\"offset\":%u,\"tick\":%u,\"op\":\"%s\"", op->offset, op->tick,
            dg_rply_op_name(op->code));
    switch (op->code) {
    case DG_RPLY_OP_SPAWN:
        fprintf(o, ",\"entity\":%u,\"descriptor\":%u,\"parent\":%u", op->entity,
                op->u.spawn.descriptor, op->u.spawn.parent);
        break;
    case DG_RPLY_OP_DESPAWN: fprintf(o, ",\"entity\":%u", op->entity); break;
    case DG_RPLY_OP_XFORM:
        fprintf(o, ",\"entity\":%u,\"mask\":%u", op->entity, op->mask);
        if (op->mask & DG_RPLY_XF_POS) {
            j_key(o, "pos");
            j_f32s(o, op->u.xform.pos, 3);
        }
        if (op->mask & DG_RPLY_XF_ROT) {
            j_key(o, "rot");
            j_i16s(o, op->u.xform.rot, 3);
        }
        if (op->mask & DG_RPLY_XF_YAW)
            fprintf(o, ",\"yaw\":%d", op->u.xform.yaw);
        break;
    case DG_RPLY_OP_XFORM_D:
        fprintf(o, ",\"entity\":%u,\"mask\":%u", op->entity, op->mask);
        if (op->mask & (DG_RPLY_XD_POS8 | DG_RPLY_XD_POS16)) {
            j_key(o, "dpos");
            j_i16s(o, op->u.xform_d.dpos, 3);
        }
        if (op->mask & DG_RPLY_XD_YAW)
            fprintf(o, ",\"dyaw\":%d", op->u.xform_d.dyaw);
        if (op->mask & DG_RPLY_XD_ROT) {
            long t[3] = {op->u.xform_d.drot[0], op->u.xform_d.drot[1], op->u.xform_d.drot[2]};
            j_key(o, "drot");
            j_ints(o, t, 3);
        }
        break;
    case DG_RPLY_OP_PROP:
        fprintf(o, ",\"entity\":%u,\"name\":%u,\"typeTag\":%u,\"value\":", op->entity,
                op->u.prop.name, op->u.prop.value.tag);
        j_prop_value(o, &op->u.prop.value);
        break;
    case DG_RPLY_OP_ANIM_PLAY:
        fprintf(o, ",\"entity\":%u,\"anim\":%u,\"handle\":%u,\"fade\":%u,\"speed\":%d", op->entity,
                op->u.anim.anim, op->u.anim.handle, op->u.anim.fade, op->u.anim.speed);
        break;
    case DG_RPLY_OP_ANIM_STOP:
        fprintf(o, ",\"entity\":%u,\"handle\":%u,\"fade\":%u", op->entity, op->u.anim.handle,
                op->u.anim.fade);
        break;
    case DG_RPLY_OP_ANIM_SPEED:
        fprintf(o, ",\"entity\":%u,\"handle\":%u,\"speed\":%d", op->entity, op->u.anim.handle,
                op->u.anim.speed);
        break;
    case DG_RPLY_OP_EVENT:
        fprintf(o, ",\"name\":%u,\"payload\":%u", op->u.event.name, op->u.event.payload);
        break;
    case DG_RPLY_OP_CUSTOM:
        fprintf(o, ",\"channel\":%u,\"data\":\"", op->u.custom.channel);
        for (uint32_t i = 0; i < op->u.custom.len; i++)
            fprintf(o, "%02x", op->u.custom.data[i]);
        fputc('"', o);
        break;
    case DG_RPLY_OP_SNAPSHOT: {
        dg_rply_snapshot *s;
        uint64_t at = f->ops_at + (uint64_t)(op->u.snapshot.data - f->ops);
        if (dg_rply_snapshot_decode(op->u.snapshot.data, op->u.snapshot.len, at, &s, err) != DG_OK)
            return -1;
        fprintf(o, ",\"entity\":%u,\"byteLen\":%u,\"snapshot\":", op->entity, op->u.snapshot.len);
        j_snapshot(o, s);
        dg_rply_snapshot_free(s);
        break;
    }
    default: break;
    }
    fputs("}\n", o);
    return 0;
}

/* ---- the dump ------------------------------------------------------------------------------ */
static void j_header(FILE *o, const dg_rply_header *h)
{
    fprintf(o,
            "{\"type\":\"header\",\"magic\":\"RPLY\",\"version\":%u,\"tickRate\":%u,"
            "\"placeVersion\":%u,\"startUnix\":",
            h->version, h->tick_rate, h->place_version);
    j_f64(o, h->start_unix);
    fprintf(o, ",\"tickCount\":%u,\"stringCount\":%u,\"keyframeCount\":%u,\"opBytes\":%u}\n",
            h->tick_count, h->string_count, h->keyframe_count, h->op_bytes);
}

static dg_status dump_ops(const dg_rply_file *f, FILE *o, dg_error *err)
{
    dg_rply_state *s = dg_rply_state_new(err);
    if (!s)
        return DG_E_NOMEM;
    dg_status st = DG_OK;
    dg_rply_iter it;
    dg_rply_iter_init(&it, f);
    dg_rply_op op;
    int r;
    while ((r = dg_rply_iter_next(&it, &op, err)) > 0) {
        if ((st = dg_rply_state_apply(s, f, &op, err)) != DG_OK)
            break;
        if (j_op(o, f, &op, err) != 0) {
            st = err && err->code != DG_OK ? err->code : DG_E_MALFORMED;
            break;
        }
    }
    if (r < 0)
        st = err && err->code != DG_OK ? err->code : DG_E_MALFORMED;
    dg_rply_state_free(s);
    return st;
}

/* Prints as it reads; stops at the first failure (lines before it stay printed). */
static int dump_stream(const uint8_t *buf, size_t len, FILE *o, uint32_t pv, dg_error *err)
{
    dg_rply_file f;
    dg_status st = dg_rply_file_open(&f, buf, len, pv, err);
    dg_rply_header h;
    if (dg_rply_read_header(buf, len, pv, &h, NULL) == DG_OK) {
        j_header(o, &h);
        for (uint32_t i = 0; i < f.strings_read; i++) {
            fprintf(o, "{\"type\":\"string\",\"id\":%u,\"value\":", i);
            j_view(o, f.strings[i]);
            fputs("}\n", o);
        }
        for (uint32_t i = 0; i < f.keyframes_read; i++) {
            dg_rply_keyframe k = dg_rply_file_keyframe(&f, i);
            fprintf(o, "{\"type\":\"keyframe\",\"tick\":%u,\"offset\":%u}\n", k.tick, k.offset);
        }
    }
    if (st != DG_OK && f.ops_at == 0) {
        dg_rply_file_close(&f);
        return (int)st;
    }
    if (st != DG_OK) {
        /* The tables were read; only the stream's length disagrees with the file (cut short, or
         * bytes after it). The ops that are there were still read before the failure: print them,
         * and report the first error (the layout's). */
        uint64_t have = f.len - f.ops_at;
        if (have < f.hdr.op_bytes)
            f.hdr.op_bytes = (uint32_t)have;
        f.ops = f.buf + f.ops_at;
    }
    dg_status ops_st = dump_ops(&f, o, err);
    dg_rply_file_close(&f);
    return (int)(st != DG_OK ? st : ops_st);
}

static dg_status validate_all(const uint8_t *buf, size_t len, uint32_t pv, dg_rply_file *f,
                              dg_error *err)
{
    dg_status st = dg_rply_file_open(f, buf, len, pv, err);
    if (st == DG_OK)
        st = dg_rply_validate(f, err);
    return st;
}

int dg_rply_dump_json(const uint8_t *buf, size_t len, FILE *out, bool partial,
                      uint32_t expected_place_version, dg_error *err)
{
    if (!partial) {
        dg_rply_file f;
        dg_status st = validate_all(buf, len, expected_place_version, &f, err);
        dg_rply_file_close(&f);
        if (st != DG_OK)
            return (int)st;
    }
    return dump_stream(buf, len, out, expected_place_version, err);
}

/* ---- info ---------------------------------------------------------------------------------- */
int dg_rply_print_info(const uint8_t *buf, size_t len, FILE *out, dg_error *err)
{
    dg_rply_file f;
    dg_status st = validate_all(buf, len, 0, &f, err);
    if (st != DG_OK) {
        dg_rply_file_close(&f);
        return (int)st;
    }
    uint64_t counts[256] = {0}, total = 0;
    uint32_t first = 0, last = 0;
    dg_rply_iter it;
    dg_rply_iter_init(&it, &f);
    dg_rply_op op;
    while (dg_rply_iter_next(&it, &op, err) > 0) {
        if (total == 0)
            first = op.tick;
        last = op.tick;
        counts[op.code]++;
        total++;
    }
    const dg_rply_header *h = &f.hdr;
    double seconds = (double)h->tick_count / h->tick_rate;
    fprintf(out, "format:          RPLY version %u\n", h->version);
    fprintf(out, "tickRate:        %u Hz\n", h->tick_rate);
    fprintf(out, "placeVersion:    %u\n", h->place_version);
    fprintf(out, "startUnix:       %.17g\n", h->start_unix);
    fprintf(out, "tickCount:       %u\n", h->tick_count);
    fprintf(out, "strings:         %u\n", h->string_count);
    fprintf(out, "keyframes:       %u", h->keyframe_count);
    if (h->keyframe_count) {
        dg_rply_keyframe a = dg_rply_file_keyframe(&f, 0);
        dg_rply_keyframe b = dg_rply_file_keyframe(&f, h->keyframe_count - 1u);
        fprintf(out, " (ticks %u..%u)", a.tick, b.tick);
    }
    fprintf(out, "\nopBytes:         %u\n", h->op_bytes);
    fprintf(out, "file bytes:      %zu\n", len);
    fprintf(out, "ops:             %llu\n", (unsigned long long)total);
    for (unsigned c = 0; c < 256; c++)
        if (counts[c])
            fprintf(out, "  %-12s   %llu\n", dg_rply_op_name(c), (unsigned long long)counts[c]);
    if (total)
        fprintf(out, "op tick range:   %u..%u\n", first, last);
    else
        fprintf(out, "op tick range:   (no ops)\n");
    fprintf(out, "duration:        %.3f s\n", seconds);
    if (h->tick_count) {
        fprintf(out, "bytes per tick:  %.2f\n", (double)len / h->tick_count);
        fprintf(out, "bytes per second: %.1f\n", (double)len / seconds);
    }
    dg_rply_file_close(&f);
    return 0;
}
