/* fuzz/flrep_roster.c — target: the roster / name table section payload (0x0003) alone. */
#include "fuzz_common.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static flrep_tables t;
    memset(&t, 0, sizeof t);
    dg_error err;
    dg_error_clear(&err);
    dg_status st = dg_flrep__parse_roster(data, size, 0, &t, &err);
    if (st != DG_OK) {
        dg_fuzz_check_error(st, &err, size);
        FUZZ_ASSERT(t.participants == NULL && t.mission_objects == NULL, "%s", "a failed parse left entries behind");
    } else {
        for (size_t i = 0; i < t.hdr.participant_count; i++) {
            const dg_flrep_participant *p = &t.hdr.participants[i];
            FUZZ_ASSERT(dg_utf8_valid((const uint8_t *)p->callsign.s, p->callsign.len), "participant %zu: callsign",
                        i);
            for (size_t j = 0; j < i && t.hdr.participant_count < 512; j++)
                FUZZ_ASSERT(t.hdr.participants[j].participant_id != p->participant_id, "duplicate participant %u",
                            p->participant_id);
        }
        for (size_t i = 0; i < t.hdr.mission_object_count; i++) {
            const dg_flrep_mission_object *m = &t.hdr.mission_objects[i];
            FUZZ_ASSERT(dg_utf8_valid((const uint8_t *)m->object_id.s, m->object_id.len), "mission object %zu", i);
        }
    }
    dg_flrep__tables_free(&t);
    return 0;
}
