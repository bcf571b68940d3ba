/* fuzz/rply_snapshot.c — target: a SNAPSHOT v10 payload: the allocation-free check and the decoder
 * must agree; whatever decodes encodes back, and that encoding decodes and re-encodes to itself. */
#include "fuzz_common.h"

#include "detgate/rply.h"

#include <stdlib.h>
#include <string.h>

static uint8_t *encode(const dg_rply_snapshot *s, size_t *n)
{
    dg_error err;
    dg_error_clear(&err);
    if (dg_rply_snapshot_encode(s, NULL, 0, n, &err) != DG_OK)
        return NULL;
    uint8_t *b = malloc(*n ? *n : 1);
    dg_status st = dg_rply_snapshot_encode(s, b, *n, n, &err);
    FUZZ_ASSERT(st == DG_OK, "encode failed after its size query: %s", err.msg);
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dg_error e1, e2;
    dg_error_clear(&e1);
    dg_error_clear(&e2);
    dg_status chk = dg_rply_snapshot_check(data, size, 0, &e1);
    dg_rply_snapshot *s;
    dg_status dec = dg_rply_snapshot_decode(data, size, 0, &s, &e2);
    FUZZ_ASSERT((chk == DG_OK) == (dec == DG_OK), "check says %s (%s), decode says %s (%s)", dg_status_str(chk),
                e1.msg, dg_status_str(dec), e2.msg);
    if (dec != DG_OK) {
        dg_fuzz_check_error(dec, &e2, size);
        return 0;
    }
    size_t n1 = 0, n2 = 0;
    uint8_t *b1 = encode(s, &n1);
    if (b1) {
        dg_rply_snapshot *t;
        dg_error e3;
        dg_error_clear(&e3);
        dg_status st = dg_rply_snapshot_decode(b1, n1, 0, &t, &e3);
        FUZZ_ASSERT(st == DG_OK, "the encoder's output does not decode: %s: %s", e3.where, e3.msg);
        uint8_t *b2 = encode(t, &n2);
        FUZZ_ASSERT(b2 && n1 == n2 && memcmp(b1, b2, n1) == 0, "%s", "encode(decode(encode(x))) != encode(x)");
        free(b2);
        dg_rply_snapshot_free(t);
        free(b1);
    }
    dg_rply_snapshot_free(s);
    return 0;
}
