/* fuzz/flrep_header.c — target: the .flrep header alone (frozen prefix with its version check, then
 * the length-prefixed body), through dg_flrep__parse_prefix and dg_flrep__parse_header_body. */
#include "fuzz_common.h"

#include <math.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dg_flrep_header h;
    memset(&h, 0, sizeof h);
    dg_error err;
    dg_error_clear(&err);
    size_t used = 0;
    dg_status st = dg_flrep__parse_prefix(data, size, 0, &h, &used, &err);
    if (st != DG_OK) {
        dg_fuzz_check_error(st, &err, size);
        return 0;
    }
    FUZZ_ASSERT((h.major == DG_FLREP_MAJOR || h.major == DG_FLREP_MAJOR_SCHEMA) && used == 10u + h.engine_version.len && used <= size,
                "prefix accepted with major %u, %zu bytes used", h.major, used);
    FUZZ_ASSERT(dg_utf8_valid((const uint8_t *)h.engine_version.s, h.engine_version.len), "%s",
                "engineVersion is not UTF-8");
    if (size - used < 4)
        return 0;
    uint32_t blen = dg_le32(data + used);
    if (blen > size - used - 4)
        return 0;  /* the reader refuses a body longer than the file before parsing it */
    st = dg_flrep__parse_header_body(data + used + 4, blen, used + 4, &h, &err);
    if (st != DG_OK) {
        dg_fuzz_check_error(st, &err, size);
        return 0;
    }
    FUZZ_ASSERT(h.tick_rate_hz >= 1 && h.tick_rate_hz <= FLREP_TICK_RATE_MAX, "tickRateHz %u", h.tick_rate_hz);
    FUZZ_ASSERT(isfinite(h.planet_radius_m) &&
                    (h.planet_radius_m > 0 || (h.major == DG_FLREP_MAJOR_SCHEMA && h.planet_radius_m == 0)),
                "%s", "planetRadiusM accepted out of range");
    FUZZ_ASSERT(h.keyframe_interval_ticks >= DG_FLREP_KEYFRAME_MIN &&
                    h.keyframe_interval_ticks <= DG_FLREP_KEYFRAME_MAX,
                "keyframe interval %u", h.keyframe_interval_ticks);
    FUZZ_ASSERT(dg_utf8_valid((const uint8_t *)h.mission_id.s, h.mission_id.len), "%s", "missionId is not UTF-8");
    return 0;
}
