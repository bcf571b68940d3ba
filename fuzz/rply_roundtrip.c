/* fuzz/rply_roundtrip.c — target: whatever the RPLY reader accepts (the whole op stream validates),
 * written back op by op through the RPLY writer and read again, carries the same ops with the same
 * values (string ids compared as their text, TICK vs TICK_NEXT as the tick they open, empty ticks
 * dropped); and the file written from that second reading equals the first write byte for byte. */
#include "fuzz_common.h"

#include "detgate/rply.h"

#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

static uint64_t dg_fuzz_bytes_hash(const void *p, size_t n) { return XXH3_64bits(p, n); }

/* NUL-terminated copy of string id `id` of f (the writer's API takes C strings); false when the text
 * holds a NUL byte, which that API cannot carry. */
static bool text_of(const dg_rply_file *f, uint16_t id, char *out, size_t cap)
{
    dg_rply_str s = f->strings[id];
    if (s.len >= cap || (s.len && memchr(s.s, 0, s.len)))
        return false;
    memcpy(out, s.s, s.len);
    out[s.len] = 0;
    return true;
}

typedef struct rt_ctx {
    const dg_rply_file *f;
    dg_rply_writer *w;
    dg_error err;
    char a[65536 + 1], b[65536 + 1];
} rt_ctx;

/* Re-emits one op; -1 = the input uses something the writer's API cannot express (skip the input). */
static int emit(rt_ctx *c, const dg_rply_op *op)
{
    const dg_rply_file *f = c->f;
    dg_rply_writer *w = c->w;
    dg_error *err = &c->err;
    switch (op->code) {
    case 0: case 10: return dg_rply_writer_tick(w, op->tick, err) == DG_OK ? 0 : 1;
    case 1:
        if (!text_of(f, op->u.spawn.descriptor, c->a, sizeof c->a))
            return -1;
        return dg_rply_writer_spawn(w, op->entity, c->a, op->u.spawn.parent, err) == DG_OK ? 0 : 1;
    case 2: return dg_rply_writer_despawn(w, op->entity, err) == DG_OK ? 0 : 1;
    case 3:
        return dg_rply_writer_xform_raw(w, op->entity, op->mask, op->u.xform.pos, op->u.xform.rot, op->u.xform.yaw,
                                        err) == DG_OK ? 0 : 1;
    case 11: {
        return dg_rply_writer_xform_d_raw(w, op->entity, op->mask, op->u.xform_d.dpos, op->u.xform_d.dyaw,
                                          op->u.xform_d.drot, err) == DG_OK ? 0 : 1;
    }
    case 4: {
        if (!text_of(f, op->u.prop.name, c->a, sizeof c->a))
            return -1;
        const dg_rply_value *v = &op->u.prop.value;
        if (v->tag == DG_RPLY_PROP_STRING || v->tag == DG_RPLY_PROP_ENUM) {
            if (!text_of(f, v->u.str, c->b, sizeof c->b))
                return -1;
            return dg_rply_writer_prop_str(w, op->entity, c->a, v->tag, c->b, err) == DG_OK ? 0 : 1;
        }
        return dg_rply_writer_prop(w, op->entity, c->a, v, err) == DG_OK ? 0 : 1;
    }
    case 5:
        if (!text_of(f, op->u.anim.anim, c->a, sizeof c->a))
            return -1;
        return dg_rply_writer_anim_play(w, op->entity, c->a, op->u.anim.handle, op->u.anim.fade, op->u.anim.speed,
                                        err) == DG_OK ? 0 : 1;
    case 6: return dg_rply_writer_anim_stop(w, op->entity, op->u.anim.handle, op->u.anim.fade, err) == DG_OK ? 0 : 1;
    case 7: return dg_rply_writer_anim_speed(w, op->entity, op->u.anim.handle, op->u.anim.speed, err) == DG_OK ? 0 : 1;
    case 8:
        if (!text_of(f, op->u.event.name, c->a, sizeof c->a) || !text_of(f, op->u.event.payload, c->b, sizeof c->b))
            return -1;
        return dg_rply_writer_event(w, c->a, c->b, err) == DG_OK ? 0 : 1;
    case 9:
        if (!text_of(f, op->u.custom.channel, c->a, sizeof c->a))
            return -1;
        return dg_rply_writer_custom(w, c->a, op->u.custom.data, op->u.custom.len, err) == DG_OK ? 0 : 1;
    case 14:
        return dg_rply_writer_snapshot_raw(w, op->entity, op->u.snapshot.data, op->u.snapshot.len, err) == DG_OK ? 0
                                                                                                                : 1;
    default: return 1;
    }
}

/* Writes every op of f through a fresh writer. Returns the file (malloc'd) or NULL when the input
 * uses what the writer's C-string API cannot carry. */
static uint8_t *rewrite(const dg_rply_file *f, size_t *len)
{
    static rt_ctx c;
    memset(&c.err, 0, sizeof c.err);
    c.f = f;
    dg_rply_writer_config cfg;
    dg_rply_writer_config_default(&cfg);
    cfg.tick_rate = f->hdr.tick_rate;
    cfg.place_version = f->hdr.place_version;
    cfg.start_unix = f->hdr.start_unix;
    cfg.keyframe_every = 0;      /* the writer's own keyframe refresh would add ops */
    c.w = dg_rply_writer_new(&cfg, &c.err);
    FUZZ_ASSERT(c.w, "%s", "writer_new failed");
    dg_rply_iter it;
    dg_rply_iter_init(&it, f);
    dg_rply_op op;
    int rc, skip = 0;
    while (!skip && (rc = dg_rply_iter_next(&it, &op, &c.err)) == 1) {
        int e = emit(&c, &op);
        if (e < 0)
            skip = 1;
        else
            FUZZ_ASSERT(e == 0, "the writer refused op %s at stream offset %u the reader accepted: %s: %s",
                        dg_rply_op_name(op.code), op.offset, c.err.where, c.err.msg);
    }
    uint8_t *out = NULL;
    if (!skip) {
        FUZZ_ASSERT(rc == 0, "%s", "a validated stream failed on the second walk");
        dg_status st = dg_rply_writer_finish(c.w, f->hdr.tick_count, &out, len, &c.err);
        FUZZ_ASSERT(st == DG_OK, "finish failed: %s: %s", c.err.where, c.err.msg);
    }
    dg_rply_writer_free(c.w);
    return out;
}

/* The op sequence of a file in comparable form: ops other than TICK/TICK_NEXT, with their tick,
 * string ids replaced by the text's hash. */
static uint64_t op_digest(const dg_rply_file *f, size_t *count)
{
    dg_rply_iter it;
    dg_rply_iter_init(&it, f);
    dg_rply_op op;
    dg_error err;
    dg_error_clear(&err);
    uint64_t h = 1469598103934665603ull;
    size_t n = 0;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ull)
#define MIXS(id) MIX(dg_fuzz_bytes_hash(f->strings[id].s, f->strings[id].len))
    while (dg_rply_iter_next(&it, &op, &err) == 1) {
        if (op.code == 0 || op.code == 10)
            continue;
        n++;
        MIX(op.code); MIX(op.tick); MIX(op.entity); MIX(op.mask);
        switch (op.code) {
        case 1: MIXS(op.u.spawn.descriptor); MIX(op.u.spawn.parent); break;
        case 3: for (int i = 0; i < 3; i++) { uint32_t b; memcpy(&b, &op.u.xform.pos[i], 4); MIX(b); MIX((uint16_t)op.u.xform.rot[i]); } MIX((uint16_t)op.u.xform.yaw); break;
        case 11: for (int i = 0; i < 3; i++) { MIX((uint16_t)op.u.xform_d.dpos[i]); MIX((uint8_t)op.u.xform_d.drot[i]); } MIX((uint8_t)op.u.xform_d.dyaw); break;
        case 4: {
            MIXS(op.u.prop.name);
            const dg_rply_value *v = &op.u.prop.value;
            MIX(v->tag);
            if (v->tag == DG_RPLY_PROP_STRING || v->tag == DG_RPLY_PROP_ENUM) MIXS(v->u.str);
            else if (v->tag == DG_RPLY_PROP_BOOL) MIX(v->u.b);
            else if (v->tag == DG_RPLY_PROP_NUMBER) { uint64_t b; memcpy(&b, &v->u.num, 8); MIX(b); }
            else if (v->tag == DG_RPLY_PROP_COLOR3) { MIX(v->u.rgb[0]); MIX(v->u.rgb[1]); MIX(v->u.rgb[2]); }
            else for (int i = 0; i < 3; i++) { uint32_t b; memcpy(&b, &v->u.vec[i], 4); MIX(b); }
            break;
        }
        case 5: MIXS(op.u.anim.anim); MIX(op.u.anim.handle); MIX(op.u.anim.fade); MIX((uint16_t)op.u.anim.speed); break;
        case 6: MIX(op.u.anim.handle); MIX(op.u.anim.fade); break;
        case 7: MIX(op.u.anim.handle); MIX((uint16_t)op.u.anim.speed); break;
        case 8: MIXS(op.u.event.name); MIXS(op.u.event.payload); break;
        case 9: MIXS(op.u.custom.channel); MIX(dg_fuzz_bytes_hash(op.u.custom.data, op.u.custom.len)); break;
        case 14: MIX(dg_fuzz_bytes_hash(op.u.snapshot.data, op.u.snapshot.len)); break;
        default: break;
        }
    }
#undef MIXS
#undef MIX
    *count = n;
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dg_rply_file f;
    dg_error err;
    dg_error_clear(&err);
    /* tickCount 0 cannot be asked of dg_rply_writer_finish (0 there means "derive it") */
    if (dg_rply_file_open(&f, data, size, 0, &err) != DG_OK || dg_rply_validate(&f, &err) != DG_OK ||
        f.hdr.tick_count == 0) {
        dg_rply_file_close(&f);
        return 0;
    }
    size_t l1 = 0;
    uint8_t *b1 = rewrite(&f, &l1);
    if (b1) {
        dg_rply_file g;
        dg_status st = dg_rply_file_open(&g, b1, l1, 0, &err);
        FUZZ_ASSERT(st == DG_OK && dg_rply_validate(&g, &err) == DG_OK, "the rewritten file does not read: %s: %s",
                    err.where, err.msg);
        size_t n1, n2;
        uint64_t d1 = op_digest(&f, &n1), d2 = op_digest(&g, &n2);
        FUZZ_ASSERT(n1 == n2 && d1 == d2, "the rewritten file carries other ops (%zu vs %zu)", n1, n2);
        FUZZ_ASSERT(g.hdr.tick_count == f.hdr.tick_count && g.hdr.tick_rate == f.hdr.tick_rate &&
                        g.hdr.place_version == f.hdr.place_version,
                    "header changed: ticks %u/%u rate %u/%u place %u/%u", f.hdr.tick_count, g.hdr.tick_count, f.hdr.tick_rate, g.hdr.tick_rate, f.hdr.place_version, g.hdr.place_version);
        size_t l2 = 0;
        uint8_t *b2 = rewrite(&g, &l2);
        FUZZ_ASSERT(b2 && l1 == l2 && memcmp(b1, b2, l1) == 0, "the second write differs (%zu vs %zu bytes)", l1, l2);
        free(b2);
        dg_rply_file_close(&g);
        free(b1);
    }
    dg_rply_file_close(&f);
    return 0;
}
