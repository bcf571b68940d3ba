/* tests/sim/test_sim_dmath.c — the sim's own sin/cos/atan2: accurate (within a few ulp of libm),
 * and not bit-identical to libm for typical inputs, which is what makes the libm-trig injection
 * visible. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "sim_stub/dmath.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static double ulp_diff(double a, double b)
{
    if (a == b)
        return 0.0;
    double scale = fabs(b) > 1e-300 ? fabs(b) : 1e-300;
    return fabs(a - b) / (scale * 2.220446049250313e-16);
}

static void test_sin_cos_accuracy_and_difference(void **st)
{
    (void)st;
    size_t differ = 0, n = 0;
    double worst = 0.0;
    for (int i = -200000; i <= 200000; i++) {
        double x = i * 1.2345e-4; /* about -24.7 .. 24.7 rad: the range the sim uses */
        double s = dg_sim__sin(x), c = dg_sim__cos(x);
        double ls = sin(x), lc = cos(x);
        /* absolute error near zero crossings, relative elsewhere */
        assert_true(fabs(s - ls) <= 4e-16 * (fabs(ls) > 1e-3 ? fabs(ls) : 1e-3) * 8);
        assert_true(fabs(c - lc) <= 4e-16 * (fabs(lc) > 1e-3 ? fabs(lc) : 1e-3) * 8);
        if (fabs(ls) > 0.1) {
            double u = ulp_diff(s, ls);
            worst = u > worst ? u : worst;
        }
        differ += (s != ls) + (c != lc);
        n += 2;
    }
    assert_true(worst <= 4.0);
    /* the injection must be observable: own trig differs from libm in the last bits somewhere */
    assert_true(differ > n / 1000);
    print_message("own sin/cos differ from libm on %zu of %zu samples; worst %.2f ulp\n", differ, n, worst);
}

static void test_atan2_accuracy_all_quadrants(void **st)
{
    (void)st;
    size_t differ = 0, n = 0;
    for (int i = -300; i <= 300; i++) {
        for (int j = -300; j <= 300; j++) {
            double y = i * 0.37, x = j * 0.53;
            double a = dg_sim__atan2(y, x), l = atan2(y, x);
            assert_true(fabs(a - l) <= 1e-15 * (fabs(l) > 1e-3 ? fabs(l) : 1e-3) * 4);
            differ += a != l;
            n++;
        }
    }
    print_message("own atan2 differs from libm on %zu of %zu samples\n", differ, n);
    assert_true(dg_sim__atan2(0.0, 1.0) == 0.0);
    assert_true(dg_sim__atan2(1.0, 0.0) == DG_SIM_PI / 2.0);
    assert_true(dg_sim__atan2(-1.0, 0.0) == -DG_SIM_PI / 2.0);
    assert_true(dg_sim__atan2(0.0, -1.0) == DG_SIM_PI);
    assert_true(dg_sim__atan2(1e-300, 1e300) >= 0.0);
    assert_true(isnan(dg_sim__atan2(NAN, 1.0)));
}

static void test_special_values(void **st)
{
    (void)st;
    assert_true(dg_sim__sin(0.0) == 0.0);
    assert_true(dg_sim__cos(0.0) == 1.0);
    assert_true(isnan(dg_sim__sin(NAN)));
    assert_true(isnan(dg_sim__cos(NAN)));
    /* outside the supported range the result is defined (no UB in the float->int conversion) */
    assert_true(dg_sim__sin(1e300) == 0.0);
    assert_true(dg_sim__cos(-INFINITY) == 1.0);
    assert_true(fabs(dg_sim__sin(DG_SIM_PI / 6.0) - 0.5) < 1e-16);
    assert_true(fabs(dg_sim__cos(DG_SIM_PI / 3.0) - 0.5) < 1e-15);
}

static void test_quaternion_basis_roundtrip(void **st)
{
    (void)st;
    /* a rotation built from a basis maps the body axes back onto that basis */
    double f[3] = {0.6, 0.8, 0.0}, u[3] = {0.0, 0.0, 1.0}, l[3], q[4], o[3];
    dgv_cross(u, f, l);
    dg_sim__q_from_basis(f, l, u, q);
    static const double xb[3] = {1, 0, 0}, yb[3] = {0, 1, 0}, zb[3] = {0, 0, 1};
    dg_sim__q_rotate(q, xb, o);
    for (int i = 0; i < 3; i++)
        assert_true(fabs(o[i] - f[i]) < 1e-15);
    dg_sim__q_rotate(q, yb, o);
    for (int i = 0; i < 3; i++)
        assert_true(fabs(o[i] - l[i]) < 1e-15);
    dg_sim__q_rotate(q, zb, o);
    for (int i = 0; i < 3; i++)
        assert_true(fabs(o[i] - u[i]) < 1e-15);
    assert_true(q[0] >= 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sin_cos_accuracy_and_difference),
        cmocka_unit_test(test_atan2_accuracy_all_quadrants),
        cmocka_unit_test(test_special_values),
        cmocka_unit_test(test_quaternion_basis_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
