/* sim_stub/dmath.h — the simulation's own trigonometry and small vector/quaternion algebra.
 *
 * Why its own: libm's sin/cos/atan2 differ between libm versions and vendors in the last bit, so a
 * step that called them would be deterministic only on one machine. These use + - * / only (and
 * sqrt, which IEEE rounds correctly), evaluated in a fixed order under -ffp-contract=off. */
#ifndef DG_SIM_DMATH_H
#define DG_SIM_DMATH_H

#include <math.h>

double dg_sim__sin(double x);
double dg_sim__cos(double x);
double dg_sim__atan2(double y, double x);

#define DG_SIM_PI 3.14159265358979311600e+00
#define DG_SIM_DEG (DG_SIM_PI / 180.0)

static inline double dgv_dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
static inline void dgv_cross(const double a[3], const double b[3], double o[3])
{
    double x = a[1] * b[2] - a[2] * b[1];
    double y = a[2] * b[0] - a[0] * b[2];
    double z = a[0] * b[1] - a[1] * b[0];
    o[0] = x;
    o[1] = y;
    o[2] = z;
}
static inline double dgv_len(const double a[3]) { return sqrt(dgv_dot(a, a)); }
static inline void dgv_scale(double a[3], double s)
{
    a[0] *= s;
    a[1] *= s;
    a[2] *= s;
}
/* o = a + b*s */
static inline void dgv_madd(const double a[3], const double b[3], double s, double o[3])
{
    o[0] = a[0] + b[0] * s;
    o[1] = a[1] + b[1] * s;
    o[2] = a[2] + b[2] * s;
}
static inline void dgv_set(double o[3], double x, double y, double z)
{
    o[0] = x;
    o[1] = y;
    o[2] = z;
}
static inline void dgv_copy(double o[3], const double a[3]) { dgv_set(o, a[0], a[1], a[2]); }
/* Normalises in place; leaves a zero vector alone and returns its former length. */
static inline double dgv_normalize(double a[3])
{
    double l = dgv_len(a);
    if (l > 0.0)
        dgv_scale(a, 1.0 / l);
    return l;
}
static inline double dg_clamp(double x, double lo, double hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

/* Quaternions are w, x, y, z. */
void dg_sim__q_mul(const double a[4], const double b[4], double o[4]);
void dg_sim__q_rotate(const double q[4], const double v[3], double o[3]);
void dg_sim__q_normalize(double q[4]);
/* Rotation whose body axes (x forward, y left, z up) are the given orthonormal world vectors. */
void dg_sim__q_from_basis(const double fwd[3], const double left[3], const double up[3], double q[4]);

#endif
