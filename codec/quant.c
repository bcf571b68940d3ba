/* codec/quant.c — float state to the quantized integer domain and back (see docs/FORMAT-flrep.md §6).
 * Only IEEE basic operations and sqrt (correctly rounded everywhere): every compiler and
 * optimisation level produces the same quanta for the same input bits. */
#include "cpu_avx2.h"
#include "quant_batch.h"
#include "quant_internal.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>

/* The error paths are cold and out of line: inlined, they made the quantizer save and restore
 * three more registers on every call. */
__attribute__((cold, noinline)) static dg_status fail_field(dg_error *err, uint32_t id, const char *field,
                                                            int axis, double v, const char *expected)
{
    char where[48], name[24];
    snprintf(where, sizeof where, "entity %u", id);
    if (axis < 0)   /* a scalar field: no index */
        snprintf(name, sizeof name, "%s", field);
    else
        snprintf(name, sizeof name, "%s[%d]", field, axis);
    return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, where, "%s = %g: expected %s", name, v, expected);
}

/* Names the first axis quant_axis refused (the slow path of an error). */
__attribute__((cold, noinline)) static dg_status fail_axes(const dg_entity_in *in, dg_error *err)
{
    for (int i = 0; i < 3; i++) {
        bool ok = true;
        (void)quant_axis(in->pos[i], DG_QPOS_PER_M, &ok);
        if (!ok)
            return fail_field(err, in->id, "pos", i, in->pos[i], "finite and within +-33554431 m");
        (void)quant_axis(in->vel[i], DG_QVEL_PER_MPS, &ok);
        if (!ok)
            return fail_field(err, in->id, "vel", i, in->vel[i], "finite and within +-67108863 m/s");
    }
    /* quant_axes refused an axis that quant_axis accepts: the two paths disagree (a bug) */
    return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "quantizer", "entity %u: position or velocity refused "
                        "without a field found out of range", in->id);
}

__attribute__((cold, noinline)) static dg_status fail_rot_zero(const dg_entity_in *in, dg_error *err)
{
    char where[48];
    snprintf(where, sizeof where, "entity %u", in->id);
    return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, where, "rot = (%g, %g, %g, %g): expected a non-zero "
                        "quaternion (squared norm above 1e-30)", in->rot[0], in->rot[1], in->rot[2], in->rot[3]);
}

/* The quaternion's squared norm, or an error when a component is not finite or it is ~zero. A
 * non-finite component makes the sum NaN or infinite, so one test covers the common case; only
 * then are the components looked at one by one (a finite quaternion whose squared norm overflows
 * is accepted, as it always was). */
static dg_status rot_norm2(const dg_entity_in *in, double *n2_out, dg_error *err)
{
    double n2 = 0.0;
    for (int i = 0; i < 4; i++)
        n2 += in->rot[i] * in->rot[i];
    if (__builtin_expect(!isfinite(n2), 0)) {
        for (int i = 0; i < 4; i++)
            if (!isfinite(in->rot[i]))
                return fail_field(err, in->id, "rot", i, in->rot[i], "a finite quaternion component");
    }
    if (!(n2 > 1e-30))
        return fail_rot_zero(in, err);
    *n2_out = n2;
    return DG_OK;
}

/* Smallest three (FORMAT-flrep.md §6.1). */
static void quant_rot(const double rot[4], double n2, int16_t out[3], uint8_t *largest_out)
{
    double q[4];
    double inv = 1.0 / sqrt(n2);
    /* the largest magnitude, lowest index on a tie, chosen without branches: which component
     * wins is random per entity, and a branch on it mispredicts half the time */
    int largest = 0;
    double best = fabs(rot[0] * inv);
    for (int i = 0; i < 4; i++) {
        q[i] = rot[i] * inv;
        double a = fabs(q[i]);
        bool more = a > best;
        largest = more ? i : largest;
        best = more ? a : best;
    }
    double sign = q[largest] < 0.0 ? -1.0 : 1.0;
    /* the three others in index order, picked without a branch on `largest` */
    for (int k = 0; k < 3; k++) {
        double c = q[k + (k >= largest)];
        /* |s| <= sqrt 2 * 32767: within round_i32's range */
        int32_t r = round_i32(sign * c * DG_SQRT2 * DG_QROT_SCALE);
        r = r > DG_QROT_SCALE ? DG_QROT_SCALE : r;
        r = r < -DG_QROT_SCALE ? -DG_QROT_SCALE : r;
        out[k] = (int16_t)r;
    }
    *largest_out = (uint8_t)largest;
}

/* The rotation (rot false: the identity, quanta all 0, nothing checked) and the health (health
 * false: 0), checked; then *out's fields other than position and velocity, stored field by field (a
 * struct built on the stack and copied whole stalls on store forwarding). Inline: with constant rot
 * and health, dg_quant_entity's copy has no test of them. */
static inline __attribute__((always_inline)) dg_status quant_rest(const dg_entity_in *in, bool rot, bool health,
                                                                  dg_qentity *out, dg_error *err)
{
    double n2 = 0.0;
    if (rot) {
        dg_status st = rot_norm2(in, &n2, err);
        if (st != DG_OK)
            return st;
    }
    double h = health ? in->health : 0.0;
    if (isnan(h))
        return fail_field(err, in->id, "health", -1, h, "a number in 0..1");
    h = h < 0.0 ? 0.0 : (h > 1.0 ? 1.0 : h);
    out->id = in->id;
    out->type_index = in->type_index;
    out->faction_index = in->faction_index;
    if (rot) {
        quant_rot(in->rot, n2, out->rot, &out->rot_largest);
    } else {
        out->rot[0] = out->rot[1] = out->rot[2] = 0;
        out->rot_largest = 0;
    }
    out->pad_ = 0;
    out->health = (uint16_t)round_i32(h * DG_QHEALTH_FULL);
    out->flags = in->flags;
    return DG_OK;
}

__attribute__((cold, noinline)) static dg_status id_zero(dg_error *err)
{
    return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "entity 0", "expected an id >= 1, found 0");
}

dg_status dg_quant_entity(const dg_entity_in *in, dg_qentity *out, dg_error *err)
{
    if (in->id == 0)
        return id_zero(err);
    axes ax;
    if (!quant_axes(in, &ax))
        return fail_axes(in, err);
    /* everything checked before *out is written: the axes after the rest */
    dg_status st = quant_rest(in, true, true, out, err);
    if (st == DG_OK)
        store_axes(&ax, out);
    return st;
}

/* dg_quant_entity without position and velocity (*out's are left as they are), for
 * dg_quant_entity_schema: the id, then the rotation and the health, checked in dg_quant_entity's
 * order, so the same error for the same entity. */
dg_status dg_quant__entity_rest(const dg_entity_in *in, bool rot, bool health, dg_qentity *out, dg_error *err)
{
    if (in->id == 0)
        return id_zero(err);
    return quant_rest(in, rot, health, out, err);
}

/* ---- which build of dg_quant_entities runs --------------------------------------------------- */
/* DG_QUANT_AVX2 (set by CMake when it builds quant_avx2.c) says the AVX2 build exists; the CPU is
 * asked once whether it runs it (AVX2 and the BMI1/BMI2 that file is also built with), and the
 * answer kept: a relaxed atomic, since two threads that both ask get the same answer. */
#if DG_QUANT_AVX2 && !defined(DG_QUANT_SCALAR) && (defined(__GNUC__) || defined(__clang__))
#define QUANT_HAS_AVX2_BUILD 1
#endif

enum { QUANT_PATH_UNKNOWN = 0, QUANT_PATH_PORTABLE, QUANT_PATH_AVX2 };
static atomic_int quant_path;   /* QUANT_PATH_UNKNOWN until the first call */

static int quant_path_of_this_cpu(void)
{
#ifdef QUANT_HAS_AVX2_BUILD
    if (dg_cpu__runs_avx2_builds())
        return QUANT_PATH_AVX2;
#endif
    return QUANT_PATH_PORTABLE;
}

static int quant_path_chosen(void)
{
    int path = atomic_load_explicit(&quant_path, memory_order_relaxed);
    if (__builtin_expect(path == QUANT_PATH_UNKNOWN, 0)) {
        path = quant_path_of_this_cpu();
        atomic_store_explicit(&quant_path, path, memory_order_relaxed);
    }
    return path;
}

bool dg_quant__avx2_in_use(void) { return quant_path_chosen() == QUANT_PATH_AVX2; }

void dg_quant__allow_avx2(bool allow)
{
    atomic_store_explicit(&quant_path, allow ? QUANT_PATH_UNKNOWN : QUANT_PATH_PORTABLE, memory_order_relaxed);
}

dg_status dg_quant_entities(const dg_entity_in *in, dg_qentity *out, size_t n, size_t *done, dg_error *err)
{
#ifdef QUANT_HAS_AVX2_BUILD
    if (quant_path_chosen() == QUANT_PATH_AVX2)
        return dg_quant__entities_avx2(in, out, n, done, err);
#endif
    return quant_run(in, out, n, done, err);
}

void dg_quant_pos_m(const dg_qentity *q, double out_m[3])
{
    for (int i = 0; i < 3; i++)
        out_m[i] = (double)q->pos[i] / DG_QPOS_PER_M;
}

void dg_quant_vel_mps(const dg_qentity *q, double out_mps[3])
{
    for (int i = 0; i < 3; i++)
        out_mps[i] = (double)q->vel[i] / DG_QVEL_PER_MPS;
}

void dg_quant_rot_quat(const dg_qentity *q, double out[4])
{
    double sum = 0.0;
    int k = 0;
    for (int i = 0; i < 4; i++) {
        if (i == q->rot_largest)
            continue;
        out[i] = (double)q->rot[k++] / (DG_SQRT2 * DG_QROT_SCALE);
        sum += out[i] * out[i];
    }
    out[q->rot_largest] = sum < 1.0 ? sqrt(1.0 - sum) : 0.0;
}

double dg_quant_rot_angle_deg(const dg_qentity *a, const dg_qentity *b)
{
    double qa[4], qb[4], dot = 0.0;
    dg_quant_rot_quat(a, qa);
    dg_quant_rot_quat(b, qb);
    for (int i = 0; i < 4; i++)
        dot += qa[i] * qb[i];
    dot = fabs(dot);
    if (dot > 1.0)
        dot = 1.0;
    return 2.0 * acos(dot) * (180.0 / 3.14159265358979323846);
}

double dg_quant_health_pct(const dg_qentity *q) { return (double)q->health * 100.0 / DG_QHEALTH_FULL; }

bool dg_quant_rot_valid(const int16_t rot[3], uint8_t largest)
{
    if (largest > 3)
        return false;
    int64_t sum = 0;
    for (int i = 0; i < 3; i++) {
        if (rot[i] < -DG_QROT_SCALE)
            return false;
        sum += (int64_t)rot[i] * rot[i];
    }
    return sum <= 2 * (int64_t)DG_QROT_SCALE * DG_QROT_SCALE;
}
