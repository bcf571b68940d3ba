/* fuzz/rply_header.c — target: the 30-byte RPLY v3 header alone (dg_rply_read_header). */
#include "fuzz_common.h"

#include "detgate/rply.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dg_rply_header h;
    memset(&h, 0, sizeof h);
    dg_error err;
    dg_error_clear(&err);
    uint32_t expect = size >= 10 && (data[size - 1] & 1) ? dg_le32(data + 6) : 0;
    dg_status st = dg_rply_read_header(data, size, expect, &h, &err);
    if (st != DG_OK) {
        dg_fuzz_check_error(st, &err, size);
        return 0;
    }
    FUZZ_ASSERT(size >= DG_RPLY_HEADER_SIZE && memcmp(data, "RPLY", 4) == 0 && h.version == DG_RPLY_VERSION &&
                    h.tick_rate >= 1,
                "%s", "a header was accepted against its rules");
    FUZZ_ASSERT(expect == 0 || h.place_version == expect, "%s", "placeVersion mismatch accepted");
    return 0;
}
