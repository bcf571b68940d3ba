/* codec/cpu.c — which build of the codec's hot loops this process runs (codec/cpu_avx2.h): the
 * CPU's answer unless DETGATE_CPU forces the portable one, so that a gate on an AVX2 machine can
 * test the decoder and quantizer a machine without AVX2 runs. Decided once; every later caller
 * gets the same answer (a relaxed atomic: two threads that both decide decide the same). */
#include "cpu_avx2.h"

#include "detgate/quant.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { CPU_UNKNOWN = 0, CPU_PORTABLE, CPU_AVX2 };
static atomic_int cpu_choice;

bool dg_cpu__env_forces_portable(const char *value)
{
    return value && value[0] != '\0' && strcmp(value, "auto") != 0;
}

bool dg_cpu__runs_avx2_builds(void)
{
    int c = atomic_load_explicit(&cpu_choice, memory_order_relaxed);
    if (__builtin_expect(c == CPU_UNKNOWN, 0)) {
        c = !dg_cpu__env_forces_portable(getenv("DETGATE_CPU")) && dg_cpu_supports_avx2_builds() ? CPU_AVX2
                                                                                                  : CPU_PORTABLE;
        atomic_store_explicit(&cpu_choice, c, memory_order_relaxed);
    }
    return c == CPU_AVX2;
}

const char *dg_codec_cpu_build(void)
{
#if DG_FLREP_AVX2 && DG_QUANT_AVX2
    return dg_cpu__runs_avx2_builds() ? "avx2" : "portable";
#else
    return "portable";
#endif
}
