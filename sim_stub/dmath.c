/* sim_stub/dmath.c — own sin/cos/atan2 (fdlibm-style reduction, plain Horner polynomials) and the
 * quaternion helpers the step needs. Deliberately not bit-identical to glibc: the libm-trig
 * injection must be able to show that swapping trig implementations changes the state. */
#include "dmath.h"

#include <stdint.h>

/* pi/2 split in three so k*pio2_n is exact for |k| < 2^20 (values from fdlibm e_rem_pio2.c). */
static const double pio2_1 = 1.57079632673412561417e+00;
static const double pio2_2 = 6.07710050630396597660e-11;
static const double pio2_3 = 2.02226624871116645580e-21;
static const double invpio2 = 6.36619772367581382433e-01;

/* Plain Taylor coefficients evaluated by Horner: accurate to about 1 ulp on |r| <= pi/4 but not
 * correctly rounded, so results differ from glibc in the last bit for a share of inputs (measured
 * in tests/sim/test_sim_dmath.c). */
static double kernel_sin(double r)
{
    double z = r * r;
    double p = 2.8114572543455206e-15;
    p = -7.647163731819816e-13 + z * p;
    p = 1.6059043836821613e-10 + z * p;
    p = -2.505210838544172e-08 + z * p;
    p = 2.7557319223985893e-06 + z * p;
    p = -0.0001984126984126984 + z * p;
    p = 0.008333333333333333 + z * p;
    p = -0.16666666666666666 + z * p;
    return r + r * z * p;
}

static double kernel_cos(double r)
{
    double z = r * r;
    double p = -1.5619206968586225e-16;
    p = 4.779477332387385e-14 + z * p;
    p = -1.1470745597729725e-11 + z * p;
    p = 2.08767569878681e-09 + z * p;
    p = -2.755731922398589e-07 + z * p;
    p = 2.48015873015873e-05 + z * p;
    p = -0.001388888888888889 + z * p;
    p = 0.041666666666666664 + z * p;
    return 1.0 - 0.5 * z + z * z * p;
}

/* Returns the quadrant (0..3) and the reduced argument in *r, |r| <= ~pi/4. */
static int reduce(double x, double *r)
{
    double kf = x * invpio2;
    /* round to nearest without libm: |kf| < 2^40 is guaranteed by the caller */
    int64_t k = (int64_t)(kf < 0.0 ? kf - 0.5 : kf + 0.5);
    double kd = (double)k;
    *r = ((x - kd * pio2_1) - kd * pio2_2) - kd * pio2_3;
    return (int)(k & 3);
}

static int trig_domain_ok(double x)
{
    return x == x && x > -1e12 && x < 1e12;
}

double dg_sim__sin(double x)
{
    if (!trig_domain_ok(x))
        return x != x ? x : 0.0;
    double r;
    switch (reduce(x, &r)) {
    case 0: return kernel_sin(r);
    case 1: return kernel_cos(r);
    case 2: return -kernel_sin(r);
    default: return -kernel_cos(r);
    }
}

double dg_sim__cos(double x)
{
    if (!trig_domain_ok(x))
        return x != x ? x : 1.0;
    double r;
    switch (reduce(x, &r)) {
    case 0: return kernel_cos(r);
    case 1: return -kernel_sin(r);
    case 2: return -kernel_cos(r);
    default: return kernel_sin(r);
    }
}

/* atan on [0, inf): fdlibm's breakpoints and coefficients (s_atan.c). */
static const double atanhi[] = {4.63647609000806093515e-01, 7.85398163397448278999e-01,
                                9.82793723247329054082e-01, 1.57079632679489655800e+00};
static const double atanlo[] = {2.26987774529616870924e-17, 3.06161699786838301793e-17,
                                1.39033110312309984516e-17, 6.12323399573676603587e-17};
static const double aT[] = {3.33333333333329318027e-01, -1.99999999998764832476e-01,
                            1.42857142725034663711e-01, -1.11111104054623557880e-01,
                            9.09088713343650656196e-02, -7.69187620504482999495e-02,
                            6.66107313738753120669e-02, -5.83357013379057348645e-02,
                            4.97687799461593236017e-02, -3.65315727442169155270e-02,
                            1.62858201153657823623e-02};

static double atan_pos(double x)
{
    int id;
    if (x > 1e300)
        return atanhi[3] + atanlo[3];
    if (x < 0.4375) {
        id = -1;
    } else if (x < 1.1875) {
        if (x < 0.6875) {
            id = 0;
            x = (2.0 * x - 1.0) / (2.0 + x);
        } else {
            id = 1;
            x = (x - 1.0) / (x + 1.0);
        }
    } else if (x < 2.4375) {
        id = 2;
        x = (x - 1.5) / (1.0 + 1.5 * x);
    } else {
        id = 3;
        x = -1.0 / x;
    }
    double z = x * x;
    double w = z * z;
    double s1 = z * (aT[0] + w * (aT[2] + w * (aT[4] + w * (aT[6] + w * (aT[8] + w * aT[10])))));
    double s2 = w * (aT[1] + w * (aT[3] + w * (aT[5] + w * (aT[7] + w * aT[9]))));
    if (id < 0)
        return x - x * (s1 + s2);
    return atanhi[id] - ((x * (s1 + s2) - atanlo[id]) - x);
}

double dg_sim__atan2(double y, double x)
{
    if (x != x || y != y)
        return x + y;
    if (y == 0.0)
        return x >= 0.0 && !(x == 0.0 && 1.0 / x < 0.0) ? y : (y < 0.0 || 1.0 / y < 0.0 ? -DG_SIM_PI : DG_SIM_PI);
    if (x == 0.0)
        return y > 0.0 ? DG_SIM_PI / 2.0 : -DG_SIM_PI / 2.0;
    double ay = y < 0.0 ? -y : y, ax = x < 0.0 ? -x : x;
    double a;
    if (ay > ax * 1e300)
        a = DG_SIM_PI / 2.0;
    else
        a = atan_pos(ay / ax);
    if (x < 0.0)
        a = DG_SIM_PI - a;
    return y < 0.0 ? -a : a;
}

void dg_sim__q_mul(const double a[4], const double b[4], double o[4])
{
    double w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    double x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    double y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    double z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
    o[0] = w;
    o[1] = x;
    o[2] = y;
    o[3] = z;
}

void dg_sim__q_rotate(const double q[4], const double v[3], double o[3])
{
    /* v' = v + 2w(u x v) + 2 u x (u x v), u = (x, y, z) */
    const double u[3] = {q[1], q[2], q[3]};
    double t[3], t2[3];
    dgv_cross(u, v, t);
    dgv_scale(t, 2.0);
    dgv_cross(u, t, t2);
    o[0] = v[0] + q[0] * t[0] + t2[0];
    o[1] = v[1] + q[0] * t[1] + t2[1];
    o[2] = v[2] + q[0] * t[2] + t2[2];
}

void dg_sim__q_normalize(double q[4])
{
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (n > 0.0) {
        double s = 1.0 / n;
        q[0] *= s;
        q[1] *= s;
        q[2] *= s;
        q[3] *= s;
    } else {
        q[0] = 1.0;
        q[1] = q[2] = q[3] = 0.0;
    }
}

void dg_sim__q_from_basis(const double f[3], const double l[3], const double u[3], double q[4])
{
    /* rotation matrix columns are f, l, u: m[row][col] */
    double m00 = f[0], m01 = l[0], m02 = u[0];
    double m10 = f[1], m11 = l[1], m12 = u[1];
    double m20 = f[2], m21 = l[2], m22 = u[2];
    double tr = m00 + m11 + m22;
    if (tr > 0.0) {
        double s = sqrt(tr + 1.0) * 2.0;
        q[0] = 0.25 * s;
        q[1] = (m21 - m12) / s;
        q[2] = (m02 - m20) / s;
        q[3] = (m10 - m01) / s;
    } else if (m00 > m11 && m00 > m22) {
        double s = sqrt(1.0 + m00 - m11 - m22) * 2.0;
        q[0] = (m21 - m12) / s;
        q[1] = 0.25 * s;
        q[2] = (m01 + m10) / s;
        q[3] = (m02 + m20) / s;
    } else if (m11 > m22) {
        double s = sqrt(1.0 + m11 - m00 - m22) * 2.0;
        q[0] = (m02 - m20) / s;
        q[1] = (m01 + m10) / s;
        q[2] = 0.25 * s;
        q[3] = (m12 + m21) / s;
    } else {
        double s = sqrt(1.0 + m22 - m00 - m11) * 2.0;
        q[0] = (m10 - m01) / s;
        q[1] = (m02 + m20) / s;
        q[2] = (m12 + m21) / s;
        q[3] = 0.25 * s;
    }
    if (q[0] < 0.0) {
        q[0] = -q[0];
        q[1] = -q[1];
        q[2] = -q[2];
        q[3] = -q[3];
    }
    dg_sim__q_normalize(q);
}
