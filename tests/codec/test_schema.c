/* tests/codec/test_schema.c — the entity schema (include/detgate/schema.h): the legacy schema, every
 * rule dg_schema_check enforces (each with the field and rule named), float quantization of an
 * extra field, value bounds, display and lookup. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "detgate/schema.h"

static const char *const body_kinds[] = {"static", "kinematic", "dynamic"};

static dg_field_def sample_fields[] = {
    {"angvel", "rad/s", DG_FIELD_FLOAT, 0, 1.0 / 4096, NULL, 0},
    {"rng", "", DG_FIELD_UINT, 64, 0, NULL, 0},
    {"awake", NULL, DG_FIELD_BOOL, 0, 0, NULL, 0},
    {"body.kind", "", DG_FIELD_ENUM, 0, 0, body_kinds, 3},
    {"tag", "", DG_FIELD_BYTES, 2, 0, NULL, 0},
    {"ammo", "rounds", DG_FIELD_INT, 12, 0, NULL, 0},
};

static dg_schema sample_schema(void)
{
    dg_schema s = {DG_STD_POS | DG_STD_VEL | DG_STD_ROT | DG_STD_FLAGS, 1.0 / 1024, 1.0 / 1024, sample_fields,
                   sizeof sample_fields / sizeof sample_fields[0]};
    return s;
}

static void test_legacy_schema_is_the_1_0_one(void **state)
{
    (void)state;
    const dg_schema *l = dg_schema_legacy();
    assert_int_equal(l->std_mask, DG_STD_ALL);
    assert_true(l->pos_quantum_m == 1.0 / 64 && l->vel_quantum_mps == 1.0 / 32);
    assert_int_equal(l->field_count, 0);
    assert_true(dg_schema_is_legacy(l));
    assert_true(dg_schema_is_legacy(NULL));
    dg_schema s = *l;
    s.std_mask &= ~(uint32_t)DG_STD_HEALTH;
    assert_false(dg_schema_is_legacy(&s));
    s = *l;
    s.pos_quantum_m = 1.0 / 1024;
    assert_false(dg_schema_is_legacy(&s));
    s = sample_schema();
    assert_false(dg_schema_is_legacy(&s));
    dg_error e;
    dg_error_clear(&e);
    assert_int_equal(dg_schema_check(l, &e), DG_OK);
}

static void test_sample_schema_passes(void **state)
{
    (void)state;
    dg_schema s = sample_schema();
    dg_error e;
    dg_error_clear(&e);
    assert_int_equal(dg_schema_check(&s, &e), DG_OK);
}

/* Checks one broken copy of the sample: refused with DG_E_USAGE, and the message holds `needle`. */
static void expect_refused(const dg_schema *s, const char *needle)
{
    dg_error e;
    dg_error_clear(&e);
    assert_int_equal(dg_schema_check(s, &e), DG_E_USAGE);
    char line[512];
    dg_error_format(&e, line, sizeof line);
    if (strstr(line, needle) == NULL)
        fail_msg("expected \"%s\" in \"%s\"", needle, line);
}

static void test_each_rule_is_named(void **state)
{
    (void)state;
    dg_field_def f[DG_SCHEMA_MAX_FIELDS + 1];
    dg_schema s = sample_schema();
    memcpy(f, sample_fields, sizeof sample_fields);
    s.fields = f;

    f[2].name = "angvel";
    expect_refused(&s, "distinct field names");
    f[2] = sample_fields[2];

    f[0].type = 9;
    expect_refused(&s, "expected a type int, uint");
    f[0] = sample_fields[0];

    f[0].quantum = 0.0;
    expect_refused(&s, "quantum finite and > 0");
    f[0].quantum = NAN;
    expect_refused(&s, "quantum finite and > 0");
    f[0].quantum = INFINITY;
    expect_refused(&s, "quantum finite and > 0");
    f[0] = sample_fields[0];

    f[1].bits = 65;
    expect_refused(&s, "bits 1..64");
    f[1].bits = 0;
    expect_refused(&s, "bits 1..64");
    f[1] = sample_fields[1];

    f[4].bits = 9;
    expect_refused(&s, "1..8 bytes");
    f[4] = sample_fields[4];

    f[3].enum_count = 0;
    expect_refused(&s, "1..256 names");
    f[3] = sample_fields[3];
    static const char *const twice[] = {"a", "b", "a"};
    f[3].enum_names = twice;
    expect_refused(&s, "distinct enum names");
    f[3] = sample_fields[3];

    f[5].name = "Ammo";
    expect_refused(&s, "[a-z][a-z0-9_.]*");
    f[5].name = "health";
    expect_refused(&s, "standard field");
    f[5].name = "pos.x";
    expect_refused(&s, "standard field");
    f[5].name = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"; /* 64 */
    expect_refused(&s, "1..63 bytes");
    f[5] = sample_fields[5];

    f[5].unit = "a unit far too long";
    expect_refused(&s, "unit of at most 15 bytes");
    f[5] = sample_fields[5];

    for (size_t i = 0; i <= DG_SCHEMA_MAX_FIELDS; i++)
        f[i] = (dg_field_def){"f", "", DG_FIELD_BOOL, 0, 0, NULL, 0};
    s.field_count = DG_SCHEMA_MAX_FIELDS + 1;
    expect_refused(&s, "at most 32 extra fields");

    s = sample_schema();
    s.std_mask = 0x80;
    expect_refused(&s, "mask within 0x7f");
    s = sample_schema();
    s.pos_quantum_m = 0;
    expect_refused(&s, "position quantum");
    s = sample_schema();
    s.vel_quantum_mps = NAN;
    expect_refused(&s, "velocity quantum");
}

static void test_float_quantization_rounds_half_away(void **state)
{
    (void)state;
    const dg_field_def *f = &sample_fields[0]; /* 1/4096 */
    int64_t n = 0;
    assert_int_equal(dg_schema_quant_float(f, 0.125, &n, NULL), DG_OK);
    assert_int_equal(n, 512);
    assert_int_equal(dg_schema_quant_float(f, 0.5 / 4096, &n, NULL), DG_OK);
    assert_int_equal(n, 1);
    assert_int_equal(dg_schema_quant_float(f, -0.5 / 4096, &n, NULL), DG_OK);
    assert_int_equal(n, -1);
    assert_int_equal(dg_schema_quant_float(f, 0.49 / 4096, &n, NULL), DG_OK);
    assert_int_equal(n, 0);
    n = 77;
    dg_error e;
    dg_error_clear(&e);
    assert_int_equal(dg_schema_quant_float(f, NAN, &n, &e), DG_E_RANGE);
    assert_non_null(strstr(e.where, "angvel"));
    assert_int_equal(dg_schema_quant_float(f, INFINITY, &n, NULL), DG_E_RANGE);
    assert_int_equal(dg_schema_quant_float(f, 0x1p53 / 4096 * 2, &n, NULL), DG_E_RANGE);
    assert_int_equal(n, 77);
    assert_int_equal(dg_schema_quant_float(f, 0x1p53 / 4096, &n, NULL), DG_OK);
    assert_true(n == (INT64_C(1) << 53));
    assert_int_equal(dg_schema_quant_float(&sample_fields[1], 1.0, &n, NULL), DG_E_USAGE);
}

static void test_value_bounds(void **state)
{
    (void)state;
    const dg_field_def *ammo = &sample_fields[5]; /* int 12 bits */
    assert_int_equal(dg_schema_check_value(ammo, 2047, NULL), DG_OK);
    assert_int_equal(dg_schema_check_value(ammo, -2048, NULL), DG_OK);
    assert_int_equal(dg_schema_check_value(ammo, 2048, NULL), DG_E_RANGE);
    assert_int_equal(dg_schema_check_value(ammo, -2049, NULL), DG_E_RANGE);
    assert_int_equal(dg_schema_check_value(&sample_fields[1], -1, NULL), DG_OK); /* uint 64: every pattern */
    assert_int_equal(dg_schema_check_value(&sample_fields[2], 2, NULL), DG_E_RANGE);
    assert_int_equal(dg_schema_check_value(&sample_fields[3], 2, NULL), DG_OK);
    assert_int_equal(dg_schema_check_value(&sample_fields[3], 3, NULL), DG_E_RANGE);
    assert_int_equal(dg_schema_check_value(&sample_fields[4], 0xffff, NULL), DG_OK);
    assert_int_equal(dg_schema_check_value(&sample_fields[4], 0x10000, NULL), DG_E_RANGE);
    assert_int_equal(dg_schema_check_value(&sample_fields[0], INT64_C(1) << 53, NULL), DG_OK);
    assert_int_equal(dg_schema_check_value(&sample_fields[0], (INT64_C(1) << 53) + 1, NULL), DG_E_RANGE);
    assert_int_equal(dg_schema_value_bits(&sample_fields[3]), 2);
    assert_int_equal(dg_schema_value_bits(&sample_fields[4]), 16);
    assert_int_equal(dg_schema_value_bits(&sample_fields[0]), 55);
}

static void test_format_and_find(void **state)
{
    (void)state;
    char b[64];
    dg_schema_format_value(&sample_fields[0], 512, b, sizeof b);
    assert_string_equal(b, "0.125 rad/s");
    dg_schema_format_value(&sample_fields[2], 1, b, sizeof b);
    assert_string_equal(b, "true");
    dg_schema_format_value(&sample_fields[3], 2, b, sizeof b);
    assert_string_equal(b, "dynamic");
    dg_schema_format_value(&sample_fields[3], 7, b, sizeof b);
    assert_string_equal(b, "#7");
    dg_schema_format_value(&sample_fields[4], 0x0b0a, b, sizeof b);
    assert_string_equal(b, "0x0a0b");
    dg_schema_format_value(&sample_fields[5], -3, b, sizeof b);
    assert_string_equal(b, "-3 rounds");
    dg_schema_format_value(&sample_fields[1], -1, b, sizeof b);
    assert_string_equal(b, "18446744073709551615");
    assert_true(dg_schema_value_double(&sample_fields[0], 512) == 0.125);
    dg_schema s = sample_schema();
    size_t idx = 99;
    assert_ptr_equal(dg_schema_find(&s, "body.kind", &idx), &sample_fields[3]);
    assert_int_equal(idx, 3);
    assert_null(dg_schema_find(&s, "body", &idx));
    assert_null(dg_schema_find(dg_schema_legacy(), "angvel", NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_legacy_schema_is_the_1_0_one),
        cmocka_unit_test(test_sample_schema_passes),
        cmocka_unit_test(test_each_rule_is_named),
        cmocka_unit_test(test_float_quantization_rounds_half_away),
        cmocka_unit_test(test_value_bounds),
        cmocka_unit_test(test_format_and_find),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
