/* codec/rply/rply_read.c — the RPLY reader's front door: header, string table, keyframe index,
 * and the op iterator (one switch over opcodes, inline little-endian loads, no allocation per op). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "rply_internal.h"

const signed char rply__head[256] = {
#define RPLY_HEAD_ENTRY(name, code, head) [code] = (signed char)((head) + 1),
    DG_RPLY_OP_LIST(RPLY_HEAD_ENTRY)
#undef RPLY_HEAD_ENTRY
};
/* The table above stores head + 1 so that the zero-initialised entries mean "undefined". */

const char *dg_rply_op_name(unsigned opcode)
{
    switch (opcode) {
#define RPLY_NAME_CASE(name, code, head) \
    case code:                           \
        return #name;
        DG_RPLY_OP_LIST(RPLY_NAME_CASE)
#undef RPLY_NAME_CASE
    }
    return NULL;
}

int dg_rply_op_head_size(unsigned opcode)
{
    return opcode < 256 ? rply__head[opcode] - 1 : -1;
}

/* ---- header, strings, keyframe index ------------------------------------------------------- */
dg_status dg_rply_read_header(const uint8_t *buf, size_t len, uint32_t expected_place_version,
                              dg_rply_header *out, dg_error *err)
{
    if (!buf || len < DG_RPLY_HEADER_SIZE)
        return dg_error_set(err, DG_E_TRUNCATED, buf ? len : 0, "header",
                            "expected a %d-byte header, found %zu bytes", DG_RPLY_HEADER_SIZE,
                            buf ? len : 0);
    if (memcmp(buf, "RPLY", 4) != 0)
        return dg_error_set(err, DG_E_MAGIC, 0, "header",
                            "expected magic \"RPLY\" (52 50 4c 59), found %02x %02x %02x %02x", buf[0],
                            buf[1], buf[2], buf[3]);
    dg_rply_header h;
    h.version = buf[4];
    h.tick_rate = buf[5];
    h.place_version = dg_le32(buf + 6);
    h.start_unix = rply__f64(buf + 10);
    h.tick_count = dg_le32(buf + 18);
    h.string_count = dg_le16(buf + 22);
    h.keyframe_count = dg_le16(buf + 24);
    h.op_bytes = dg_le32(buf + 26);
    if (h.version != DG_RPLY_VERSION)
        return dg_error_set(err, DG_E_VERSION, 4, "header",
                            "file is RPLY version %u, this reader reads version %d", h.version,
                            DG_RPLY_VERSION);
    if (h.tick_rate == 0)
        return dg_error_set(err, DG_E_RANGE, 5, "header", "expected tickRate 1..255, found 0");
    if (expected_place_version != 0 && h.place_version != expected_place_version)
        return dg_error_set(err, DG_E_VERSION, 6, "header",
                            "file has placeVersion %u, expected placeVersion %u", h.place_version,
                            expected_place_version);
    if (out)
        *out = h;
    return DG_OK;
}

static dg_status read_strings(dg_rply_file *f, dg_error *err)
{
    uint32_t n = f->hdr.string_count;
    uint64_t left = f->len - DG_RPLY_HEADER_SIZE;
    if ((uint64_t)n * 2 > left)
        return dg_error_set(err, DG_E_TRUNCATED, DG_RPLY_HEADER_SIZE, "string table",
                            "stringCount %u needs at least %u bytes, found %llu left", n, n * 2,
                            (unsigned long long)left);
    f->index_at = DG_RPLY_HEADER_SIZE;
    if (n == 0)
        return DG_OK;
    f->strings = calloc(n, sizeof *f->strings);
    if (!f->strings)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "string table", "%u strings", n);
    dg_cur c;
    dg_cur_init(&c, f->buf + DG_RPLY_HEADER_SIZE, f->len - DG_RPLY_HEADER_SIZE, DG_RPLY_HEADER_SIZE,
                "string table", err);
    for (uint32_t i = 0; i < n; i++) {
        dg_strview v = dg_cur_str16(&c, "str16 string");
        if (!c.ok)
            return err ? err->code : DG_E_MALFORMED;
        f->strings[i].s = v.s;
        f->strings[i].len = v.len;
        f->strings_read = i + 1;
    }
    f->index_at = DG_RPLY_HEADER_SIZE + c.pos;
    return DG_OK;
}

static dg_status read_index(dg_rply_file *f, dg_error *err)
{
    uint32_t n = f->hdr.keyframe_count;
    uint64_t at = f->index_at;
    if ((uint64_t)n * 8 > f->len - at)
        return dg_error_set(err, DG_E_TRUNCATED, at, "keyframe index",
                            "keyframeCount %u needs %u bytes, found %llu left", n, n * 8,
                            (unsigned long long)(f->len - at));
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *p = f->buf + at + 8 * (uint64_t)i;
        uint32_t tick = dg_le32(p), off = dg_le32(p + 4);
        char where[48];
        snprintf(where, sizeof where, "keyframe index entry %u", i);
        if (i > 0) {
            uint32_t pt = dg_le32(p - 8), po = dg_le32(p - 4);
            if (tick <= pt)
                return dg_error_set(err, DG_E_MALFORMED, at + 8 * (uint64_t)i, where,
                                    "expected tick > %u (strictly increasing), found %u", pt, tick);
            if (off <= po)
                return dg_error_set(err, DG_E_MALFORMED, at + 8 * (uint64_t)i + 4, where,
                                    "expected offset > %u (strictly increasing), found %u", po, off);
        }
        if (tick >= f->hdr.tick_count)
            return dg_error_set(err, DG_E_RANGE, at + 8 * (uint64_t)i, where,
                                "expected tick < tickCount %u, found %u", f->hdr.tick_count, tick);
        if (off >= f->hdr.op_bytes)
            return dg_error_set(err, DG_E_RANGE, at + 8 * (uint64_t)i + 4, where,
                                "expected an offset inside the OpStream (< opBytes %u), found %u",
                                f->hdr.op_bytes, off);
        f->keyframes_read = i + 1;
    }
    f->ops_at = at + 8 * (uint64_t)n;
    return DG_OK;
}

dg_status dg_rply_file_open(dg_rply_file *f, const uint8_t *buf, size_t len,
                            uint32_t expected_place_version, dg_error *err)
{
    memset(f, 0, sizeof *f);
    f->buf = buf;
    f->len = buf ? len : 0;
    dg_status st = dg_rply_read_header(buf, len, expected_place_version, &f->hdr, err);
    if (st == DG_OK)
        st = read_strings(f, err);
    if (st == DG_OK)
        st = read_index(f, err);
    if (st != DG_OK)
        return st;
    uint64_t left = f->len - f->ops_at;
    if (left < f->hdr.op_bytes)
        return dg_error_set(err, DG_E_TRUNCATED, f->len, "op stream",
                            "opBytes is %u, found %llu bytes", f->hdr.op_bytes,
                            (unsigned long long)left);
    if (left > f->hdr.op_bytes)
        return dg_error_set(err, DG_E_MALFORMED, f->ops_at + f->hdr.op_bytes, "end of file",
                            "expected the file to end after opBytes %u, found %llu trailing bytes",
                            f->hdr.op_bytes, (unsigned long long)(left - f->hdr.op_bytes));
    f->ops = f->buf + f->ops_at;
    return DG_OK;
}

void dg_rply_file_close(dg_rply_file *f)
{
    if (!f)
        return;
    free(f->strings);
    f->strings = NULL;
}

dg_rply_keyframe dg_rply_file_keyframe(const dg_rply_file *f, uint32_t index)
{
    dg_rply_keyframe k = {0, 0};
    if (index < f->hdr.keyframe_count) {
        const uint8_t *p = f->buf + f->index_at + 8 * (uint64_t)index;
        k.tick = dg_le32(p);
        k.offset = dg_le32(p + 4);
    }
    return k;
}

/* ---- op iterator --------------------------------------------------------------------------- */
static void load_keyframe(dg_rply_iter *it)
{
    if (it->next_kf < it->f->hdr.keyframe_count) {
        dg_rply_keyframe k = dg_rply_file_keyframe(it->f, it->next_kf);
        it->kf_offset = k.offset;
        it->kf_tick = k.tick;
    } else {
        it->kf_offset = UINT32_MAX;
        it->kf_tick = 0;
    }
}

void dg_rply_iter_init(dg_rply_iter *it, const dg_rply_file *f)
{
    memset(it, 0, sizeof *it);
    it->f = f;
    load_keyframe(it);
}

/* Every op error goes through here: names the op, its ordinal, stream offset and tick, and puts the
 * absolute byte offset of the offending field in err->offset. */
RPLY_COLD static int op_fail(const dg_rply_iter *it, dg_error *err, uint32_t at, unsigned code,
                             dg_status st, const char *fmt, ...)
{
    if (!err || err->code != DG_OK)
        return -1;
    const char *name = dg_rply_op_name(code);
    char where[96];
    if (name)
        snprintf(where, sizeof where, "op #%u %s at stream offset %u (tick %u)", it->count, name,
                 it->pos, it->tick);
    else
        snprintf(where, sizeof where, "op #%u at stream offset %u (tick %u)", it->count, it->pos,
                 it->tick);
    char msg[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    dg_error_set(err, st, it->f->ops_at + at, where, "%s", msg);
    return -1;
}

#define NEED(n)                                                                                      \
    do {                                                                                             \
        if (RPLY_UNLIKELY((uint64_t)(n) > left))                                                     \
            return op_fail(it, err, pos + (uint32_t)left, code, DG_E_TRUNCATED,                      \
                           "expected %llu bytes of op, found %u left in the OpStream",               \
                           (unsigned long long)(n), left);                                           \
    } while (0)
#define STRID(v, at, what)                                                                           \
    do {                                                                                             \
        if (RPLY_UNLIKELY((v) >= nstr))                                                              \
            return op_fail(it, err, pos + (at), code, DG_E_RANGE,                                    \
                           "%s string id %u out of range (stringCount %u)", what, (unsigned)(v),     \
                           nstr);                                                                    \
    } while (0)

static int decode_prop(const dg_rply_iter *it, const uint8_t *p, uint32_t pos, uint32_t left,
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
            return op_fail(it, err, pos + 6, code, DG_E_RANGE, "bool value must be 0 or 1, found %u",
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
        return op_fail(it, err, pos + 5, code, DG_E_RANGE, "typeTag %u is not 0..5", v->tag);
    }
    return 1;
}

static int decode_xform(const dg_rply_iter *it, const uint8_t *p, uint32_t pos, uint32_t left,
                        dg_rply_op *op, dg_error *err)
{
    const unsigned code = DG_RPLY_OP_XFORM;
    uint8_t m = p[3];
    if (m == 0 || (m & ~7u) || (m & 6) == 6)
        return op_fail(it, err, pos + 3, code, DG_E_MALFORMED,
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

static int decode_xform_d(const dg_rply_iter *it, const uint8_t *p, uint32_t pos, uint32_t left,
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
        return op_fail(it, err, pos + at, code, DG_E_MALFORMED,
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

int dg_rply_iter_next(dg_rply_iter *it, dg_rply_op *op, dg_error *err)
{
    const dg_rply_file *f = it->f;
    const uint32_t pos = it->pos;
    if (RPLY_UNLIKELY(it->kf_offset < pos)) {
        dg_rply_keyframe k = dg_rply_file_keyframe(f, it->next_kf);
        char where[48];
        snprintf(where, sizeof where, "keyframe index entry %u", it->next_kf);
        dg_error_set(err, DG_E_MALFORMED, f->index_at + 8 * (uint64_t)it->next_kf + 4, where,
                     "offset %u (tick %u) does not land on an op: the op stream has an op at %u",
                     k.offset, k.tick, pos);
        return -1;
    }
    const uint32_t total = f->hdr.op_bytes;
    if (pos >= total)
        return 0; /* every keyframe offset is < opBytes, so all were matched by now */
    const uint8_t *p = f->ops + pos;
    const uint32_t left = total - pos;
    const unsigned code = p[0];
    const int head = rply__head[code] - 1;
    const uint32_t nstr = f->hdr.string_count;
    if (RPLY_UNLIKELY(head < 0))
        return op_fail(it, err, pos, code, DG_E_MALFORMED,
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
            return op_fail(it, err, pos + 1, code, DG_E_STATE,
                           "TICK %u does not move past the current tick %u", t, tick);
        tick = t;
        break;
    }
    case DG_RPLY_OP_TICK_NEXT:
        if (tick == UINT32_MAX)
            return op_fail(it, err, pos, code, DG_E_RANGE, "TICK_NEXT past tick 4294967295");
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
        return op_fail(it, err, pos, code, DG_E_MALFORMED, "opcode %u is not an RPLY v3 op", code);
    }
    if (RPLY_UNLIKELY(tick >= f->hdr.tick_count))
        return op_fail(it, err, pos, code, DG_E_RANGE,
                       "op belongs to tick %u, expected tick < tickCount %u", tick,
                       f->hdr.tick_count);
    if (RPLY_UNLIKELY(it->kf_offset == pos)) {
        if (code != DG_RPLY_OP_TICK || tick != it->kf_tick)
            return op_fail(it, err, pos, code, DG_E_MALFORMED,
                           "keyframe index entry %u (tick %u, offset %u) must land on a TICK %u, "
                           "found %s",
                           it->next_kf, it->kf_tick, pos, it->kf_tick,
                           code == DG_RPLY_OP_TICK ? "a TICK of another tick" : dg_rply_op_name(code));
        it->next_kf++;
        load_keyframe(it);
    }
    op->tick = tick;
    it->tick = tick;
    it->opened = true;
    it->pos = pos + op->size;
    it->count++;
    return 1;
}
