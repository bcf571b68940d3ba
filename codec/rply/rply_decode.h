/* codec/rply/rply_decode.h — the RPLY op decoder, inlined where ops are read in bulk (the iterator
 * and the player): one switch over opcodes, little-endian loads straight from the buffer, every
 * syntax rule, tick order and keyframe landing checked; failures leave through cold functions. */
#ifndef DETGATE_RPLY_DECODE_H
#define DETGATE_RPLY_DECODE_H

#include <stdio.h>

#include "rply_internal.h"

void dg_rply__load_keyframe(dg_rply_iter *it);
int dg_rply__op_fail(const dg_rply_iter *it, dg_error *err, uint32_t at, unsigned code, dg_status st,
                  const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
int dg_rply__kf_fail(const dg_rply_iter *it, dg_error *err);

#define NEED(n)                                                                                      \
    do {                                                                                             \
        if (RPLY_UNLIKELY((uint64_t)(n) > left))                                                     \
            return dg_rply__op_fail(it, err, pos + (uint32_t)left, code, DG_E_TRUNCATED,                      \
                           "expected %llu bytes of op, found %u left in the OpStream",               \
                           (unsigned long long)(n), left);                                           \
    } while (0)
#define STRID(v, at, what)                                                                           \
    do {                                                                                             \
        if (RPLY_UNLIKELY((v) >= nstr))                                                              \
            return dg_rply__op_fail(it, err, pos + (at), code, DG_E_RANGE,                                    \
                           "%s string id %u out of range (stringCount %u)", what, (unsigned)(v),     \
                           nstr);                                                                    \
    } while (0)

static inline int decode_prop(const dg_rply_iter *it, const uint8_t *p, uint32_t pos, uint32_t left,
                       dg_rply_op *op, dg_error *err)
{
    const unsigned code = DG_RPLY_OP_PROP;
    const uint32_t nstr = it->f->hdr.string_count;
    dg_rply_value *v = &op->u.prop.value;
    memset(v, 0, sizeof *v);
    v->tag = p[5];
    const uint8_t *q = p + 6;
    switch (v->tag) {
    case DG_RPLY_PROP_BOOL:
        NEED(7);
        if (q[0] > 1)
            return dg_rply__op_fail(it, err, pos + 6, code, DG_E_RANGE, "bool value must be 0 or 1, found %u",
                           q[0]);
        v->u.b = q[0];
        op->size = 7;
        break;
    case DG_RPLY_PROP_NUMBER:
        NEED(14);
        v->u.num = rply__f64(q);
        op->size = 14;
        break;
    case DG_RPLY_PROP_STRING:
    case DG_RPLY_PROP_ENUM:
        NEED(8);
        v->u.str = dg_le16(q);
        STRID(v->u.str, 6, v->tag == DG_RPLY_PROP_ENUM ? "enum value" : "string value");
        op->size = 8;
        break;
    case DG_RPLY_PROP_COLOR3:
        NEED(9);
        memcpy(v->u.rgb, q, 3);
        op->size = 9;
        break;
    case DG_RPLY_PROP_VECTOR3:
        NEED(18);
        for (int i = 0; i < 3; i++)
            v->u.vec[i] = rply__f32(q + 4 * i);
        op->size = 18;
        break;
    default:
        return dg_rply__op_fail(it, err, pos + 5, code, DG_E_RANGE, "typeTag %u is not 0..5", v->tag);
    }
    return 1;
}

static inline int decode_xform(const dg_rply_iter *it, const uint8_t *p, uint32_t pos, uint32_t left,
                        dg_rply_op *op, dg_error *err)
{
    const unsigned code = DG_RPLY_OP_XFORM;
    uint8_t m = p[3];
    if (m == 0 || (m & ~7u) || (m & 6) == 6)
        return dg_rply__op_fail(it, err, pos + 3, code, DG_E_MALFORMED,
                       "mask 0x%02x: expected bits 1|2|4, not zero, not 2 and 4 together", m);
    uint32_t size = 4 + ((m & 1) ? 12 : 0) + ((m & 2) ? 6 : 0) + ((m & 4) ? 2 : 0);
    NEED(size);
    const uint8_t *q = p + 4;
    if (m & 1) {
        for (int i = 0; i < 3; i++)
            op->u.xform.pos[i] = rply__f32(q + 4 * i);
        q += 12;
    } else {
        op->u.xform.pos[0] = op->u.xform.pos[1] = op->u.xform.pos[2] = 0.0f;
    }
    op->u.xform.rot[0] = op->u.xform.rot[1] = op->u.xform.rot[2] = 0;
    op->u.xform.yaw = 0;
    if (m & 2) {
        for (int i = 0; i < 3; i++)
            op->u.xform.rot[i] = (int16_t)dg_le16(q + 2 * i);
        q += 6;
    }
    if (m & 4)
        op->u.xform.yaw = (int16_t)dg_le16(q);
    op->mask = m;
    op->size = size;
    return 1;
}

static inline int decode_xform_d(const dg_rply_iter *it, const uint8_t *p, uint32_t pos, uint32_t left,
                          dg_rply_op *op, dg_error *err)
{
    const unsigned code = DG_RPLY_OP_XFORM_D;
    uint32_t at = 1;
    if (p[1] == 0xFF) {
        NEED(5);
        op->entity = dg_le16(p + 2);
        at = 4;
    } else {
        op->entity = p[1];
        at = 2;
    }
    uint8_t m = p[at];
    if (m == 0 || (m & ~15u) || (m & 3) == 3 || (m & 12) == 12)
        return dg_rply__op_fail(it, err, pos + at, code, DG_E_MALFORMED,
                       "mask 0x%02x: expected bits 1|2|4|8, not zero, not 1 and 2 together, not 4 "
                       "and 8 together",
                       m);
    uint32_t size = at + 1 + ((m & 1) ? 3 : 0) + ((m & 2) ? 6 : 0) + ((m & 4) ? 1 : 0) +
                    ((m & 8) ? 3 : 0);
    NEED(size);
    const uint8_t *q = p + at + 1;
    memset(&op->u.xform_d, 0, sizeof op->u.xform_d);
    if (m & 1) {
        for (int i = 0; i < 3; i++)
            op->u.xform_d.dpos[i] = (int8_t)q[i];
        q += 3;
    }
    if (m & 2) {
        for (int i = 0; i < 3; i++)
            op->u.xform_d.dpos[i] = (int16_t)dg_le16(q + 2 * i);
        q += 6;
    }
    if (m & 4) {
        op->u.xform_d.dyaw = (int8_t)q[0];
        q += 1;
    }
    if (m & 8)
        for (int i = 0; i < 3; i++)
            op->u.xform_d.drot[i] = (int8_t)q[i];
    op->mask = m;
    op->size = size;
    return 1;
}

static inline int rply__iter_next(dg_rply_iter *it, dg_rply_op *op, dg_error *err)
{
    const dg_rply_file *f = it->f;
    const uint32_t pos = it->pos;
    if (RPLY_UNLIKELY(it->kf_offset < pos))
        return dg_rply__kf_fail(it, err);
    const uint32_t total = f->hdr.op_bytes;
    if (pos >= total)
        return 0; /* every keyframe offset is < opBytes, so all were matched by now */
    const uint8_t *p = f->ops + pos;
    const uint32_t left = total - pos;
    const unsigned code = p[0];
    const int head = dg_rply__head[code] - 1;
    const uint32_t nstr = f->hdr.string_count;
    if (RPLY_UNLIKELY(head < 0))
        return dg_rply__op_fail(it, err, pos, code, DG_E_MALFORMED,
                       "opcode %u is not an RPLY v3 op (0..11 and 14 are)", code);
    NEED(1 + (uint32_t)head);
    uint32_t tick = it->tick;
    op->code = (uint8_t)code;
    op->mask = 0;
    op->entity = 0;
    op->offset = pos;
    op->size = 1 + (uint32_t)head;
    switch (code) {
    case DG_RPLY_OP_TICK: {
        uint32_t t = dg_le32(p + 1);
        if (it->opened && t <= tick)
            return dg_rply__op_fail(it, err, pos + 1, code, DG_E_STATE,
                           "TICK %u does not move past the current tick %u", t, tick);
        tick = t;
        break;
    }
    case DG_RPLY_OP_TICK_NEXT:
        if (tick == UINT32_MAX)
            return dg_rply__op_fail(it, err, pos, code, DG_E_RANGE, "TICK_NEXT past tick 4294967295");
        tick++;
        break;
    case DG_RPLY_OP_SPAWN:
        op->entity = dg_le16(p + 1);
        op->u.spawn.descriptor = dg_le16(p + 3);
        op->u.spawn.parent = dg_le16(p + 5);
        STRID(op->u.spawn.descriptor, 3, "descriptor");
        break;
    case DG_RPLY_OP_DESPAWN:
        op->entity = dg_le16(p + 1);
        break;
    case DG_RPLY_OP_XFORM:
        op->entity = dg_le16(p + 1);
        if (decode_xform(it, p, pos, left, op, err) < 0)
            return -1;
        break;
    case DG_RPLY_OP_XFORM_D:
        if (decode_xform_d(it, p, pos, left, op, err) < 0)
            return -1;
        break;
    case DG_RPLY_OP_PROP:
        op->entity = dg_le16(p + 1);
        op->u.prop.name = dg_le16(p + 3);
        STRID(op->u.prop.name, 3, "property name");
        if (decode_prop(it, p, pos, left, op, err) < 0)
            return -1;
        break;
    case DG_RPLY_OP_ANIM_PLAY:
        op->entity = dg_le16(p + 1);
        op->u.anim.anim = dg_le16(p + 3);
        op->u.anim.handle = p[5];
        op->u.anim.fade = p[6];
        op->u.anim.speed = (int16_t)dg_le16(p + 7);
        STRID(op->u.anim.anim, 3, "animation");
        break;
    case DG_RPLY_OP_ANIM_STOP:
        op->entity = dg_le16(p + 1);
        op->u.anim.anim = 0;
        op->u.anim.handle = p[3];
        op->u.anim.fade = p[4];
        op->u.anim.speed = 0;
        break;
    case DG_RPLY_OP_ANIM_SPEED:
        op->entity = dg_le16(p + 1);
        op->u.anim.anim = 0;
        op->u.anim.handle = p[3];
        op->u.anim.fade = 0;
        op->u.anim.speed = (int16_t)dg_le16(p + 4);
        break;
    case DG_RPLY_OP_EVENT:
        op->u.event.name = dg_le16(p + 1);
        op->u.event.payload = dg_le16(p + 3);
        STRID(op->u.event.name, 1, "event name");
        STRID(op->u.event.payload, 3, "event payload");
        break;
    case DG_RPLY_OP_CUSTOM:
        op->u.custom.channel = dg_le16(p + 1);
        op->u.custom.len = dg_le16(p + 3);
        STRID(op->u.custom.channel, 1, "channel");
        NEED(5 + (uint32_t)op->u.custom.len);
        op->u.custom.data = p + 5;
        op->size = 5 + (uint32_t)op->u.custom.len;
        break;
    case DG_RPLY_OP_SNAPSHOT: {
        op->entity = dg_le16(p + 1);
        uint32_t n = dg_le32(p + 3);
        NEED(7 + (uint64_t)n);
        op->u.snapshot.len = n;
        op->u.snapshot.data = p + 7;
        op->size = 7 + n;
        if (dg_rply_snapshot_check(p + 7, n, f->ops_at + pos + 7, err) != DG_OK) {
            /* Re-label the snapshot's own error with the op that carried it. */
            if (err) {
                char where[200];
                snprintf(where, sizeof where, "op #%u SNAPSHOT at stream offset %u (tick %u): %s",
                         it->count, pos, tick, err->where);
                memcpy(err->where, where, sizeof err->where - 1);
                err->where[sizeof err->where - 1] = '\0';
            }
            return -1;
        }
        break;
    }
    default:
        return dg_rply__op_fail(it, err, pos, code, DG_E_MALFORMED, "opcode %u is not an RPLY v3 op", code);
    }
    if (RPLY_UNLIKELY(tick >= f->hdr.tick_count))
        return dg_rply__op_fail(it, err, pos, code, DG_E_RANGE,
                       "op belongs to tick %u, expected tick < tickCount %u", tick,
                       f->hdr.tick_count);
    if (RPLY_UNLIKELY(it->kf_offset == pos)) {
        if (code != DG_RPLY_OP_TICK || tick != it->kf_tick)
            return dg_rply__op_fail(it, err, pos, code, DG_E_MALFORMED,
                           "keyframe index entry %u (tick %u, offset %u) must land on a TICK %u, "
                           "found %s",
                           it->next_kf, it->kf_tick, pos, it->kf_tick,
                           code == DG_RPLY_OP_TICK ? "a TICK of another tick" : dg_rply_op_name(code));
        it->next_kf++;
        dg_rply__load_keyframe(it);
    }
    op->tick = tick;
    it->tick = tick;
    it->opened = true;
    it->pos = pos + op->size;
    it->count++;
    return 1;
}

#endif
