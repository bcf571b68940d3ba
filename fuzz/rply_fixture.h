/* fuzz/rply_fixture.h — synthetic RPLY v3 recordings and a SNAPSHOT v10 payload made through the
 * public writer / encoder: the seeds of the RPLY targets. */
#ifndef DETGATE_FUZZ_RPLY_FIXTURE_H
#define DETGATE_FUZZ_RPLY_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "detgate/rply.h"

/* Variant 0..3: 0 deltas + thresholds + keyframes + every op kind and a snapshot; 1 full XFORMs only,
 * no keyframes; 2 a long run with churn; 3 one tick. Returns a malloc'd file or NULL. */
uint8_t *dg_fuzz_rply_record(int variant, size_t *len);
#define DG_FUZZ_RPLY_VARIANTS 4

/* A model snapshot using every part kind, decal, effect class and joint kind (encoded, malloc'd). */
uint8_t *dg_fuzz_rply_snapshot_bytes(size_t *len);

#endif
