/* codec/quant_internal.h — the quantizer's builds and which one runs (private to codec/ and its
 * tests). */
#ifndef DG_QUANT_INTERNAL_H
#define DG_QUANT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "detgate/quant.h"

/* dg_quant_entities built for AVX2 (codec/quant_avx2.c, compiled with -mavx2 -mbmi -mbmi2 where
 * CMake defines DG_QUANT_AVX2). Call it only on a CPU that has all three. */
dg_status dg_quant__entities_avx2(const dg_entity_in *in, dg_qentity *out, size_t n, size_t *done, dg_error *err);

/* dg_quant_entities_schema's batch built for AVX2 (codec/quant_batch.h's quant_run_schema), for a
 * schema with position, velocity and rotation; the same conditions as dg_quant__entities_avx2. */
dg_status dg_quant__entities_schema_avx2(const dg_schema *s, const dg_entity_in *in, dg_qentity *out, size_t n,
                                         size_t *done, dg_error *err);

/* True when dg_quant_entities runs the AVX2 build: there is one, this CPU runs it, and
 * dg_quant__allow_avx2(false) did not turn it off. */
bool dg_quant__avx2_in_use(void);

/* For tests: false makes dg_quant_entities run the portable build (SSE2 on x86-64) from now on,
 * true lets it choose by the CPU again. Not for use while another thread quantizes. */
void dg_quant__allow_avx2(bool allow);

/* dg_quant_entity's id, rotation and health (rot / health false: the field is absent, its quanta 0),
 * type, faction and flags copied, position and velocity not touched: dg_quant_entity_schema's rest
 * after its own axes. */
dg_status dg_quant__entity_rest(const dg_entity_in *in, bool rot, bool health, dg_qentity *out, dg_error *err);

#endif
