/* codec/quant.c — float state to the quantized integer domain and back (see docs/FORMAT-flrep.md §6).
 * Only IEEE basic operations and sqrt (correctly rounded everywhere): every compiler and
 * optimisation level produces the same quanta for the same input bits. */
#include "detgate/quant.h"

#include <math.h>
#include <stdio.h>

#define DG_SQRT2 1.41421356237309504880

/* Round half away from zero, exactly, for finite |x| < 2^52 (truncation and the fraction are
 * exact there; adding 0.5 first would round 0.49999999999999994 up). */
static int64_t round_i64(double x)
{
    int64_t t = (int64_t)x;
    double frac = x - (double)t;
    return t + (frac >= 0.5) - (frac <= -0.5);
}

static bool quant_axis(double v, double scale, int32_t *out)
{
    if (!isfinite(v))
        return false;
    double s = v * scale;
    if (!(s > -2147483647.5 && s < 2147483647.5))
        return false;
    *out = (int32_t)round_i64(s);
    return true;
}

static dg_status fail_field(dg_error *err, uint32_t id, const char *field, int axis, double v,
                            const char *expected)
{
    char where[48];
    snprintf(where, sizeof where, "entity %u", id);
    return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, where, "%s[%d] = %g: expected %s", field,
                        axis, v, expected);
}

static dg_status quant_rot(const dg_entity_in *in, dg_qentity *out, dg_error *err)
{
    double q[4];
    double n2 = 0.0;
    for (int i = 0; i < 4; i++) {
        q[i] = in->rot[i];
        if (!isfinite(q[i]))
            return fail_field(err, in->id, "rot", i, q[i], "a finite quaternion component");
        n2 += q[i] * q[i];
    }
    if (!(n2 > 1e-30))
        return fail_field(err, in->id, "rot", 0, n2, "a non-zero quaternion");
    double inv = 1.0 / sqrt(n2);
    /* the largest magnitude, lowest index on a tie, chosen without branches: which component
     * wins is random per entity, and a branch on it mispredicts half the time */
    int largest = 0;
    double best = fabs(q[0] * inv);
    for (int i = 0; i < 4; i++) {
        q[i] *= inv;
        double a = fabs(q[i]);
        bool more = a > best;
        largest = more ? i : largest;
        best = more ? a : best;
    }
    double sign = q[largest] < 0.0 ? -1.0 : 1.0;
    int k = 0;
    for (int i = 0; i < 4; i++) {
        if (i == largest)
            continue;
        double s = sign * q[i] * DG_SQRT2 * DG_QROT_SCALE;
        int64_t r = round_i64(s);
        if (r > DG_QROT_SCALE)
            r = DG_QROT_SCALE;
        if (r < -DG_QROT_SCALE)
            r = -DG_QROT_SCALE;
        out->rot[k++] = (int16_t)r;
    }
    out->rot_largest = (uint8_t)largest;
    return DG_OK;
}

dg_status dg_quant_entity(const dg_entity_in *in, dg_qentity *out, dg_error *err)
{
    dg_qentity q = {0};
    if (in->id == 0)
        return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "entity 0", "expected an id >= 1, found 0");
    q.id = in->id;
    q.type_index = in->type_index;
    q.faction_index = in->faction_index;
    for (int i = 0; i < 3; i++) {
        if (!quant_axis(in->pos[i], DG_QPOS_PER_M, &q.pos[i]))
            return fail_field(err, in->id, "pos", i, in->pos[i], "finite and within +-33554431 m");
        if (!quant_axis(in->vel[i], DG_QVEL_PER_MPS, &q.vel[i]))
            return fail_field(err, in->id, "vel", i, in->vel[i], "finite and within +-67108863 m/s");
    }
    dg_status st = quant_rot(in, &q, err);
    if (st != DG_OK)
        return st;
    double h = in->health;
    if (isnan(h))
        return fail_field(err, in->id, "health", 0, h, "a number in 0..1");
    h = h < 0.0 ? 0.0 : (h > 1.0 ? 1.0 : h);
    q.health = (uint16_t)round_i64(h * DG_QHEALTH_FULL);
    q.flags = in->flags;
    /* field by field: a whole-struct copy of q reloads bytes just stored piecewise on the stack
     * and stalls on store forwarding (a fifth of the quantizer's time) */
    out->id = q.id;
    out->type_index = q.type_index;
    out->faction_index = q.faction_index;
    for (int i = 0; i < 3; i++) {
        out->pos[i] = q.pos[i];
        out->vel[i] = q.vel[i];
        out->rot[i] = q.rot[i];
    }
    out->rot_largest = q.rot_largest;
    out->pad_ = 0;
    out->health = q.health;
    out->flags = q.flags;
    return DG_OK;
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
