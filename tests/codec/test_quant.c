/* tests/codec/test_quant.c — the quantizer meets the precision shared/specs/flrep.md sets: position
 * step <= 1/64 m over +-20,000 km, velocity step <= 1/32 m/s over +-2,000 m/s, orientation error
 * <= 0.01 degrees; and it refuses what it cannot represent, naming entity and field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "detgate/quant.h"
#include "flrep_testlib.h"

static double quat_angle_deg(const double a[4], const double b[4])
{
    double dot = fabs(a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]);
    if (dot > 1.0)
        dot = 1.0;
    return 2.0 * acos(dot) * 180.0 / 3.14159265358979323846;
}

static void test_precision_over_random_states(void **state)
{
    (void)state;
    tl_rng r = {99};
    double worst_angle = 0, worst_pos = 0, worst_vel = 0;
    for (int i = 0; i < 200000; i++) {
        dg_entity_in in = {.id = 1, .health = tl_unit(&r)};
        double n = 0;
        for (int k = 0; k < 4; k++) {
            in.rot[k] = tl_unit(&r) * 2 - 1;
            n += in.rot[k] * in.rot[k];
        }
        for (int k = 0; k < 3; k++) {
            in.pos[k] = (tl_unit(&r) * 2 - 1) * 20e6;
            in.vel[k] = (tl_unit(&r) * 2 - 1) * 2000;
        }
        dg_qentity q;
        dg_error err;
        dg_error_clear(&err);
        assert_int_equal(dg_quant_entity(&in, &q, &err), DG_OK);
        double unit[4], back[4], pos[3], vel[3];
        for (int k = 0; k < 4; k++)
            unit[k] = in.rot[k] / sqrt(n);
        dg_quant_rot_quat(&q, back);
        dg_quant_pos_m(&q, pos);
        dg_quant_vel_mps(&q, vel);
        double a = quat_angle_deg(unit, back);
        worst_angle = a > worst_angle ? a : worst_angle;
        for (int k = 0; k < 3; k++) {
            worst_pos = fmax(worst_pos, fabs(pos[k] - in.pos[k]));
            worst_vel = fmax(worst_vel, fabs(vel[k] - in.vel[k]));
        }
        assert_true(dg_quant_rot_valid(q.rot, q.rot_largest));
        assert_true(q.health <= DG_QHEALTH_FULL);
    }
    print_message("worst: %.5f deg, %.6f m, %.6f m/s\n", worst_angle, worst_pos, worst_vel);
    assert_true(worst_angle <= 0.01);
    assert_true(worst_pos <= 1.0 / 128 + 1e-9);
    assert_true(worst_vel <= 1.0 / 64 + 1e-9);
}

static void test_q_and_minus_q_quantize_the_same(void **state)
{
    (void)state;
    dg_entity_in a = {.id = 3, .rot = {0.3, -0.5, 0.7, 0.1}}, b = a;
    for (int k = 0; k < 4; k++)
        b.rot[k] = -a.rot[k];
    dg_qentity qa, qb;
    assert_int_equal(dg_quant_entity(&a, &qa, NULL), DG_OK);
    assert_int_equal(dg_quant_entity(&b, &qb, NULL), DG_OK);
    assert_true(dg_qentity_equal(&qa, &qb));
    assert_int_equal(qa.rot_largest, 2);
}

static void expect_range_error(dg_entity_in in, const char *needle)
{
    dg_qentity q;
    memset(&q, 0x5A, sizeof q);
    dg_qentity before = q;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_quant_entity(&in, &q, &err), DG_E_RANGE);
    assert_non_null(strstr(err.msg, needle));
    assert_memory_equal(&q, &before, sizeof q); /* nothing half-written */
}

static void test_unrepresentable_input_is_refused(void **state)
{
    (void)state;
    dg_entity_in ok = {.id = 7, .rot = {1, 0, 0, 0}};
    dg_entity_in e = ok;
    e.pos[1] = 40e6;
    expect_range_error(e, "pos[1]");
    e = ok;
    e.vel[2] = NAN;
    expect_range_error(e, "vel[2]");
    e = ok;
    memset(e.rot, 0, sizeof e.rot);
    expect_range_error(e, "non-zero quaternion");
    e = ok;
    e.rot[3] = INFINITY;
    expect_range_error(e, "rot[3]");
    e = ok;
    e.health = NAN;
    expect_range_error(e, "health");
    e = ok;
    e.id = 0;
    expect_range_error(e, "id >= 1");
}

static void test_rounding_is_half_away_from_zero(void **state)
{
    (void)state;
    dg_entity_in in = {.id = 1, .rot = {1, 0, 0, 0}, .pos = {0.5 / 64, -0.5 / 64, 0.49999999999999994 / 64},
                       .vel = {2.5 / 32, -2.5 / 32, 1e-300}, .health = 0.00005};
    dg_qentity q;
    assert_int_equal(dg_quant_entity(&in, &q, NULL), DG_OK);
    assert_int_equal(q.pos[0], 1);
    assert_int_equal(q.pos[1], -1);
    assert_int_equal(q.pos[2], 0);
    assert_int_equal(q.vel[0], 3);
    assert_int_equal(q.vel[1], -3);
    assert_int_equal(q.vel[2], 0);
    assert_int_equal(q.health, 1);  /* 0.5 quantum */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_precision_over_random_states),
        cmocka_unit_test(test_q_and_minus_q_quantize_the_same),
        cmocka_unit_test(test_unrepresentable_input_is_refused),
        cmocka_unit_test(test_rounding_is_half_away_from_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
