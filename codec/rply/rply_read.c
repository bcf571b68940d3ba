/* codec/rply/rply_read.c — the RPLY reader's front door: header, string table, keyframe index,
 * and the op iterator (one switch over opcodes, inline little-endian loads, no allocation per op). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "rply_decode.h"

const signed char dg_rply__head[256] = {
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
    return opcode < 256 ? dg_rply__head[opcode] - 1 : -1;
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
    if (h.tick_count > dg_rply_max_tick_count(h.op_bytes))
        return dg_error_set(err, DG_E_LIMIT, 18, "header",
                            "expected tickCount <= %llu (2^20 + 256 per OpStream byte, opBytes %u), found %u",
                            (unsigned long long)dg_rply_max_tick_count(h.op_bytes), h.op_bytes, h.tick_count);
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
void dg_rply__load_keyframe(dg_rply_iter *it)
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
    dg_rply__load_keyframe(it);
}

/* Every op error goes through here: names the op, its ordinal, stream offset and tick, and puts the
 * absolute byte offset of the offending field in err->offset. */
RPLY_COLD int dg_rply__op_fail(const dg_rply_iter *it, dg_error *err, uint32_t at, unsigned code,
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

RPLY_COLD int dg_rply__kf_fail(const dg_rply_iter *it, dg_error *err)
{
    const dg_rply_file *f = it->f;
    const uint32_t pos = it->pos;
    dg_rply_keyframe k = dg_rply_file_keyframe(f, it->next_kf);
    char where[48];
    snprintf(where, sizeof where, "keyframe index entry %u", it->next_kf);
    dg_error_set(err, DG_E_MALFORMED, f->index_at + 8 * (uint64_t)it->next_kf + 4, where,
                 "offset %u (tick %u) does not land on an op: the op stream has an op at %u",
                 k.offset, k.tick, pos);
    return -1;
    }

int dg_rply_iter_next(dg_rply_iter *it, dg_rply_op *op, dg_error *err)
{
    return rply__iter_next(it, op, err);
}
