/* codec/quant_schema.c — quantization under an entity schema: chosen position and velocity quanta,
 * absent standard fields as 0 (docs/FORMAT-flrep.md §12.1). The legacy schema takes dg_quant_entity
 * itself, so a 1.0 recording's integers are exactly today's. */
#include "detgate/quant.h"
#include "quant_internal.h"

#include <math.h>
#include <stdio.h>

/* round(v / quantum) half away from zero into an i32, refusing NaN, infinity and |v / quantum| >=
 * 2^31 - 0.5 (the legacy quantizer's bound). Without a branch: the i32 truncation is trunc() there
 * (exact, and no libm call), and a refused axis computes from 0 what nobody stores. */
static inline bool quant_axis_q(double v, double quantum, int32_t *out)
{
    double s = v / quantum;
    bool in = s > -2147483647.5 && s < 2147483647.5;
    s = in ? s : 0.0;
    int32_t t = (int32_t)s;
    double r = s - (double)t;
    *out = t + (r >= 0.5) - (r <= -0.5);
    return in;
}

static dg_status axis_fail(dg_error *err, uint32_t id, const char *field, int axis, double v, double quantum,
                           const char *unit)
{
    char where[48];
    snprintf(where, sizeof where, "entity %u", id);
    return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, where,
                        "%s[%d] = %g: expected finite and within +-(2^31 - 1) quanta of %g %s", field, axis, v, quantum,
                        unit);
}

/* The axes a refused, in the order they are checked (pos[i], then vel[i]): the slow path of an error. */
__attribute__((cold, noinline)) static dg_status axes_fail(const dg_schema *s, const dg_entity_in *in, dg_error *err)
{
    int32_t q;
    for (int i = 0; i < 3; i++) {
        if ((s->std_mask & DG_STD_POS) && !quant_axis_q(in->pos[i], s->pos_quantum_m, &q))
            return axis_fail(err, in->id, "pos", i, in->pos[i], s->pos_quantum_m, "m");
        if ((s->std_mask & DG_STD_VEL) && !quant_axis_q(in->vel[i], s->vel_quantum_mps, &q))
            return axis_fail(err, in->id, "vel", i, in->vel[i], s->vel_quantum_mps, "m/s");
    }
    return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "quantizer", "entity %u: position or velocity refused "
                        "without an axis found out of range", in->id);
}

/* Position and velocity quanta (absent: 0), or false: the six axes' checks folded into one branch. */
static inline bool quant_axes_q(const dg_schema *s, const dg_entity_in *in, int32_t pos[3], int32_t vel[3])
{
    bool has_pos = (s->std_mask & DG_STD_POS) != 0, has_vel = (s->std_mask & DG_STD_VEL) != 0;
    bool ok = true;
    for (int i = 0; i < 3; i++) {
        pos[i] = vel[i] = 0;
        if (has_pos)
            ok &= quant_axis_q(in->pos[i], s->pos_quantum_m, &pos[i]);
        if (has_vel)
            ok &= quant_axis_q(in->vel[i], s->vel_quantum_mps, &vel[i]);
    }
    return ok;
}

/* The legacy schema takes dg_quant_entity; any other the schema's axes, then dg_quant_entity's id,
 * rotation and health checks and quanta (dg_quant__entity_rest) — what dg_quant_entity gives on a
 * copy of the entity with position and velocity 0, an absent rotation the identity and an absent
 * health 0, without the copy. *out is written only when every check passed. */
dg_status dg_quant_entity_schema(const dg_schema *s, const dg_entity_in *in, dg_qentity *out, dg_error *err)
{
    if (dg_schema_is_legacy(s))
        return dg_quant_entity(in, out, err);
    int32_t pos[3], vel[3];
    if (!quant_axes_q(s, in, pos, vel))
        return axes_fail(s, in, err);
    dg_status st = dg_quant__entity_rest(in, (s->std_mask & DG_STD_ROT) != 0, (s->std_mask & DG_STD_HEALTH) != 0, out,
                                         err);
    if (st != DG_OK)
        return st;
    for (int i = 0; i < 3; i++) {
        out->pos[i] = pos[i];
        out->vel[i] = vel[i];
    }
    if (!(s->std_mask & DG_STD_TYPE))
        out->type_index = 0;
    if (!(s->std_mask & DG_STD_FACTION))
        out->faction_index = 0;
    if (!(s->std_mask & DG_STD_FLAGS))
        out->flags = 0;
    return DG_OK;
}

/* The schemas the batch takes: position, velocity and rotation present (the rest any). */
static bool schema_batches(const dg_schema *s)
{
    const uint32_t need = DG_STD_POS | DG_STD_VEL | DG_STD_ROT;
    return (s->std_mask & need) == need;
}

dg_status dg_quant_entities_schema(const dg_schema *s, const dg_entity_in *in, dg_qentity *out, size_t n,
                                   size_t *done, dg_error *err)
{
    if (dg_schema_is_legacy(s))
        return dg_quant_entities(in, out, n, done, err);
#if DG_QUANT_AVX2 && !defined(DG_QUANT_SCALAR)
    if (schema_batches(s) && dg_quant__avx2_in_use())
        return dg_quant__entities_schema_avx2(s, in, out, n, done, err);
#endif
    size_t i = 0;
    dg_status st = DG_OK;
    for (; i < n; i++)
        if ((st = dg_quant_entity_schema(s, &in[i], &out[i], err)) != DG_OK)
            break;
    if (done)
        *done = i;
    return st;
}

void dg_quant_pos_m_schema(const dg_schema *s, const dg_qentity *q, double out_m[3])
{
    double quantum = s ? s->pos_quantum_m : DG_SCHEMA_POS_QUANTUM_LEGACY;
    for (int i = 0; i < 3; i++)
        out_m[i] = (double)q->pos[i] * quantum;
}

void dg_quant_vel_mps_schema(const dg_schema *s, const dg_qentity *q, double out_mps[3])
{
    double quantum = s ? s->vel_quantum_mps : DG_SCHEMA_VEL_QUANTUM_LEGACY;
    for (int i = 0; i < 3; i++)
        out_mps[i] = (double)q->vel[i] * quantum;
}
