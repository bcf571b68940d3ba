/* fuzz/rply_ops.c — target: a whole RPLY file's op stream: every op decoded by the iterator and
 * applied to the rebuilt state; a file dg_rply_validate accepts must walk cleanly, and a failing op
 * leaves the iterator where it was. */
#include "fuzz_common.h"

#include "detgate/rply.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static dg_rply_state *s;
    dg_error err;
    dg_error_clear(&err);
    if (!s) {
        s = dg_rply_state_new(&err);
        FUZZ_ASSERT(s != NULL, "%s", "state new");
    }
    dg_rply_state_clear(s);
    dg_rply_file f;
    memset(&f, 0, sizeof f);
    dg_status st = dg_rply_file_open(&f, data, size, 0, &err);
    if (st != DG_OK) {
        dg_fuzz_check_error(st, &err, size);
        dg_rply_file_close(&f);
        return 0;
    }
    dg_rply_iter it;
    dg_rply_iter_init(&it, &f);
    dg_rply_op op;
    int rc;
    bool walk_ok = true;
    while ((rc = dg_rply_iter_next(&it, &op, &err)) == 1) {
        FUZZ_ASSERT(op.offset + op.size <= f.hdr.op_bytes && op.size >= 1, "op at %u overruns the stream", op.offset);
        FUZZ_ASSERT(op.tick < f.hdr.tick_count, "op at %u on tick %u >= tickCount", op.offset, op.tick);
        if (dg_rply_state_apply(s, &f, &op, &err) != DG_OK) {
            dg_fuzz_check_error(err.code, &err, UINT64_MAX);
            walk_ok = false;
            break;
        }
    }
    if (rc < 0) {
        walk_ok = false;
        dg_rply_iter before = it;
        dg_error e2;
        dg_error_clear(&e2);
        FUZZ_ASSERT(dg_rply_iter_next(&it, &op, &e2) == -1 && memcmp(&before, &it, sizeof it) == 0, "%s",
                    "a failing iterator moved");
    }
    dg_error verr;
    dg_error_clear(&verr);
    if (dg_rply_validate(&f, &verr) == DG_OK)
        FUZZ_ASSERT(walk_ok, "validate accepted a stream whose walk failed: %s: %s", err.where, err.msg);
    dg_rply_file_close(&f);
    return 0;
}
