/* fuzz/rply_index.c — target: the RPLY keyframe index and where its entries land. Input: u16
 * keyframeCount, u32 tickCount, then the index entries followed by the op stream; the target puts a
 * header in front (no strings, opBytes = what follows the entries), opens the file and walks the op
 * stream with the iterator, which checks that every entry lands on its TICK. */
#include "fuzz_common.h"
#include "rply_common.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 6)
        return 0;
    uint16_t kf = dg_le16(data);
    uint32_t ticks = dg_le32(data + 2);
    size_t rest = size - 6, idx = (size_t)kf * 8;
    uint32_t op_bytes = rest > idx ? (uint32_t)(rest - idx) : 0;
    size_t len = DG_RPLY_HEADER_SIZE + rest;
    uint8_t *file = malloc(len);
    dg_fuzz_rply_header(file, ticks, 0, kf, op_bytes);
    memcpy(file + DG_RPLY_HEADER_SIZE, data + 6, rest);
    dg_rply_file f;
    memset(&f, 0, sizeof f);
    dg_error err;
    dg_error_clear(&err);
    dg_status st = dg_rply_file_open(&f, file, len, 0, &err);
    if (st != DG_OK) {
        dg_fuzz_check_error(st, &err, len);
    } else {
        for (uint32_t i = 0; i < kf; i++) {
            dg_rply_keyframe k = dg_rply_file_keyframe(&f, i);
            FUZZ_ASSERT(k.tick < ticks && k.offset < op_bytes, "keyframe %u out of range accepted", i);
            if (i) {
                dg_rply_keyframe p = dg_rply_file_keyframe(&f, i - 1);
                FUZZ_ASSERT(p.tick < k.tick && p.offset < k.offset, "keyframe %u not increasing", i);
            }
        }
        dg_rply_iter it;
        dg_rply_iter_init(&it, &f);
        dg_rply_op op;
        int rc;
        uint32_t n = 0;
        while ((rc = dg_rply_iter_next(&it, &op, &err)) == 1 && n++ < 100000)
            FUZZ_ASSERT(op.offset + op.size <= op_bytes && op.tick < ticks, "op %u outside the stream or ticks", n);
        if (rc < 0)
            dg_fuzz_check_error(err.code, &err, UINT64_MAX);
    }
    dg_rply_file_close(&f);
    free(file);
    return 0;
}
