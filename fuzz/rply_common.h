/* fuzz/rply_common.h — a hand-built RPLY v3 header for the targets that fuzz one piece of the file
 * (string table, keyframe index) behind a header that fits it (docs/FORMAT-rply.md §2.1). */
#ifndef DETGATE_FUZZ_RPLY_COMMON_H
#define DETGATE_FUZZ_RPLY_COMMON_H

#include <stdint.h>
#include <string.h>

#include "detgate/rply.h"

static inline void dg_fuzz_rply_header(uint8_t out[DG_RPLY_HEADER_SIZE], uint32_t tick_count, uint16_t strings,
                                       uint16_t keyframes, uint32_t op_bytes)
{
    static const uint8_t fixed[18] = {'R', 'P', 'L', 'Y', 3, 15, 0xD2, 0x04, 0, 0, 0, 0, 0, 0, 0x10, 0xA4, 0xDA, 0x41};
    memcpy(out, fixed, sizeof fixed);  /* magic, version 3, 15 Hz, placeVersion 1234, startUnix */
    const uint32_t v32[2] = {tick_count, op_bytes};
    for (int i = 0; i < 4; i++) {
        out[18 + i] = (uint8_t)(v32[0] >> (8 * i));
        out[26 + i] = (uint8_t)(v32[1] >> (8 * i));
    }
    out[22] = (uint8_t)strings;
    out[23] = (uint8_t)(strings >> 8);
    out[24] = (uint8_t)keyframes;
    out[25] = (uint8_t)(keyframes >> 8);
}

#endif
