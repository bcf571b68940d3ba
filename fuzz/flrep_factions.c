/* fuzz/flrep_factions.c — target: the faction table section payload (0x0002) alone. */
#include "fuzz_common.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static flrep_tables t;
    memset(&t, 0, sizeof t);
    dg_error err;
    dg_error_clear(&err);
    dg_status st = dg_flrep__parse_factions(data, size, 0, &t, &err);
    if (st != DG_OK) {
        dg_fuzz_check_error(st, &err, size);
        FUZZ_ASSERT(t.factions == NULL && t.hdr.faction_count == 0, "%s", "a failed parse left entries behind");
    } else {
        FUZZ_ASSERT(size >= 2 && t.hdr.faction_count == dg_le16(data), "%s", "count disagrees");
        for (size_t i = 0; i < t.hdr.faction_count; i++) {
            const dg_flrep_faction *e = &t.hdr.factions[i];
            FUZZ_ASSERT(flrep_set_has(&t.faction_set, e->index), "faction %u missing from the set", e->index);
            for (size_t j = 0; j < i; j++)
                FUZZ_ASSERT(t.hdr.factions[j].index != e->index, "duplicate faction %u accepted", e->index);
            FUZZ_ASSERT(dg_utf8_valid((const uint8_t *)e->id.s, e->id.len) &&
                            dg_utf8_valid((const uint8_t *)e->name.s, e->name.len),
                        "faction %zu: strings not UTF-8", i);
        }
    }
    dg_flrep__tables_free(&t);
    return 0;
}
