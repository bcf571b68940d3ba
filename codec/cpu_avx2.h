/* codec/cpu_avx2.h — whether the codec runs its AVX2 builds (private to codec/). The files built
 * for them — codec/flrep/flrep_tick_avx2.c (the tick decoder's fast path, the encoder's record
 * loop) and codec/quant_avx2.c (the batch quantizer) — are compiled with -mavx2 -mbmi -mbmi2, so a
 * CPU runs them when it has all three: every x86-64 since Haswell (2013) and Zen (2017). The tests
 * that check the dispatch ask the CPU themselves, so that a wrong answer here fails them. */
#ifndef DG_CPU_AVX2_H
#define DG_CPU_AVX2_H

#include <stdbool.h>

/* The CPU's own answer. */
static inline bool dg_cpu_supports_avx2_builds(void)
{
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();   /* needed only before constructors run; harmless after */
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
#else
    return false;
#endif
}

/* The dispatch's answer (codec/cpu.c): the CPU's, unless the environment variable DETGATE_CPU
 * forces the portable builds of the decoder and the quantizer (docs/CLI.md, "Environment"). Read
 * once per process. */
bool dg_cpu__runs_avx2_builds(void);

/* DETGATE_CPU's value -> true when it forces the portable builds: unset, empty or "auto" leave the
 * choice to the CPU; "portable", and any other value (a misspelt one must not silently leave a
 * gate on the AVX2 build), force it. */
bool dg_cpu__env_forces_portable(const char *value);

#endif
