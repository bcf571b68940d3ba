/* fuzz/flrep_types.c — target: the entity-type manifest section payload (0x0001) alone. */
#include "fuzz_common.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static flrep_tables t;  /* 16 KiB of index sets: static, cleared per run */
    memset(&t, 0, sizeof t);
    dg_error err;
    dg_error_clear(&err);
    dg_status st = dg_flrep__parse_types(data, size, 0, &t, &err);
    if (st != DG_OK) {
        dg_fuzz_check_error(st, &err, size);
        FUZZ_ASSERT(t.types == NULL && t.hdr.type_count == 0, "%s", "a failed parse left entries behind");
    } else {
        FUZZ_ASSERT(size >= 2 && t.hdr.type_count == dg_le16(data), "%s", "count disagrees");
        for (size_t i = 0; i < t.hdr.type_count; i++) {
            const dg_flrep_type *e = &t.hdr.types[i];
            FUZZ_ASSERT(flrep_set_has(&t.type_set, e->index), "type %u missing from the set", e->index);
            FUZZ_ASSERT(dg_utf8_valid((const uint8_t *)e->id.s, e->id.len) &&
                            dg_utf8_valid((const uint8_t *)e->name.s, e->name.len),
                        "type %zu: strings not UTF-8", i);
            FUZZ_ASSERT(e->name.len == 0 || ((const uint8_t *)e->name.s >= data &&
                                             (const uint8_t *)e->name.s + e->name.len <= data + size),
                        "type %zu: displayName points outside the payload", i);
        }
    }
    dg_flrep__tables_free(&t);
    return 0;
}
