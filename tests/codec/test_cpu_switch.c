/* tests/codec/test_cpu_switch.c — DETGATE_CPU selects the build the codec dispatches to, for the
 * tick decoder and the quantizer alike (codec/cpu.c). Run as `test_cpu_switch MODE`: MODE "portable"
 * and "misspelt" set DETGATE_CPU (to "portable", "protable") before the codec's first call and
 * require the portable builds; "auto" clears it and requires the CPU's own answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cpu_avx2.h"
#include "flrep_internal.h"
#include "quant_internal.h"

static const char *mode = "auto";

static bool expect_avx2(void)
{
#ifdef DG_CODEC_AVX2_BUILT
    return strcmp(mode, "auto") == 0 && dg_cpu_supports_avx2_builds();
#else
    return false;
#endif
}

static void test_dispatch_follows_the_switch(void **state)
{
    (void)state;
    bool avx2 = expect_avx2();
    assert_string_equal(dg_codec_cpu_build(), avx2 ? "avx2" : "portable");
    assert_int_equal(dg_quant__avx2_in_use(), avx2);   /* the quantizer */
    static flrep_index_set none;
    flrep_tick_ctx ctx;
    dg_flrep__tick_ctx_init(&ctx, 60, &none, &none);       /* the decoder and encoder */
    assert_int_equal(ctx.fast_avx2, avx2);
    print_message("DETGATE_CPU %s: %s builds\n", getenv("DETGATE_CPU") ? getenv("DETGATE_CPU") : "(unset)",
                  dg_codec_cpu_build());
}

static void test_values(void **state)
{
    (void)state;
    assert_false(dg_cpu__env_forces_portable(NULL));
    assert_false(dg_cpu__env_forces_portable(""));
    assert_false(dg_cpu__env_forces_portable("auto"));
    assert_true(dg_cpu__env_forces_portable("portable"));
    assert_true(dg_cpu__env_forces_portable("protable"));
}

int main(int argc, char **argv)
{
    mode = argc > 1 ? argv[1] : "auto";
    if (strcmp(mode, "portable") == 0)
        setenv("DETGATE_CPU", "portable", 1);
    else if (strcmp(mode, "misspelt") == 0)
        setenv("DETGATE_CPU", "protable", 1);
    else
        unsetenv("DETGATE_CPU");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dispatch_follows_the_switch),
        cmocka_unit_test(test_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
