/* codec/quant_avx2.c — dg_quant_entities and the schema quantizer's batch built for AVX2 (codec/quant_batch.h): CMake compiles this
 * file alone with -mavx2 -mbmi -mbmi2 (never -mfma: a fused multiply-add would round once where
 * dg_quant_entity rounds twice), and quant.c calls it only on a CPU that has all three. */
#include "quant_batch.h"
#include "quant_internal.h"

#if !QUANT_AVX2 || !defined(__BMI__) || !defined(__BMI2__)
#error "quant_avx2.c is built with -mavx2 -mbmi -mbmi2 (see codec/CMakeLists.txt)"
#endif
#ifdef __FMA__
#error "quant_avx2.c must be built without FMA: the quanta depend on every product being rounded"
#endif

dg_status dg_quant__entities_avx2(const dg_entity_in *in, dg_qentity *out, size_t n, size_t *done, dg_error *err)
{
    return quant_run(in, out, n, done, err);
}

dg_status dg_quant__entities_schema_avx2(const dg_schema *s, const dg_entity_in *in, dg_qentity *out, size_t n,
                                         size_t *done, dg_error *err)
{
    return quant_run_schema(s, in, out, n, done, err);
}
