/* codec/quant_schema.c — quantization under an entity schema: chosen position and velocity quanta,
 * absent standard fields as 0 (docs/FORMAT-flrep.md §12.1). The legacy schema takes dg_quant_entity
 * itself, so a 1.0 recording's integers are exactly today's. */
#include "detgate/quant.h"

#include <math.h>
#include <stdio.h>

/* round(v / quantum) half away from zero into an i32, refusing NaN, infinity and |v / quantum| >=
 * 2^31 - 0.5 (the legacy quantizer's bound). */
static bool quant_axis_q(double v, double quantum, int32_t *out)
{
    double s = v / quantum;
    if (!(s > -2147483647.5 && s < 2147483647.5))
        return false;
    double t = trunc(s), r = s - t;
    int64_t n = (int64_t)t + (r >= 0.5) - (r <= -0.5);
    *out = (int32_t)n;
    return true;
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

dg_status dg_quant_entity_schema(const dg_schema *s, const dg_entity_in *in, dg_qentity *out, dg_error *err)
{
    if (dg_schema_is_legacy(s))
        return dg_quant_entity(in, out, err);
    int32_t pos[3] = {0, 0, 0}, vel[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
        if ((s->std_mask & DG_STD_POS) && !quant_axis_q(in->pos[i], s->pos_quantum_m, &pos[i]))
            return axis_fail(err, in->id, "pos", i, in->pos[i], s->pos_quantum_m, "m");
        if ((s->std_mask & DG_STD_VEL) && !quant_axis_q(in->vel[i], s->vel_quantum_mps, &vel[i]))
            return axis_fail(err, in->id, "vel", i, in->vel[i], s->vel_quantum_mps, "m/s");
    }
    /* id, rotation and health through the legacy quantizer, on a copy without position and velocity */
    dg_entity_in t = *in;
    for (int i = 0; i < 3; i++)
        t.pos[i] = t.vel[i] = 0.0;
    if (!(s->std_mask & DG_STD_ROT)) {
        t.rot[0] = 1.0;
        t.rot[1] = t.rot[2] = t.rot[3] = 0.0;
    }
    if (!(s->std_mask & DG_STD_HEALTH))
        t.health = 0.0;
    dg_qentity q;
    dg_status st = dg_quant_entity(&t, &q, err);
    if (st != DG_OK)
        return st;
    for (int i = 0; i < 3; i++) {
        q.pos[i] = pos[i];
        q.vel[i] = vel[i];
    }
    if (!(s->std_mask & DG_STD_TYPE))
        q.type_index = 0;
    if (!(s->std_mask & DG_STD_FACTION))
        q.faction_index = 0;
    if (!(s->std_mask & DG_STD_FLAGS))
        q.flags = 0;
    *out = q;
    return DG_OK;
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
