/* tests/codec/test_quant.c — the quantizer meets the precision shared/specs/flrep.md sets: position
 * step <= 1/64 m over +-20,000 km, velocity step <= 1/32 m/s over +-2,000 m/s, orientation error
 * <= 0.01 degrees; and it refuses what it cannot represent, naming entity and field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "detgate/quant.h"
#include "flrep_testlib.h"
#include "quant_internal.h"

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

/* ---- the quantizer against a straightforward reference ------------------------------------ */
/* FORMAT-flrep.md §6.1 written the plain way, with libm round() (half away from zero): the
 * quantizer's fast paths (32-bit truncation, one range test for NaN, infinity and overflow, one
 * finiteness test on the squared norm) must give the same quanta and refuse the same inputs. */

#define REF_SQRT2 1.41421356237309504880

/* The field the reference refuses, "" when it accepts. */
static const char *ref_axis(double v, double scale, const char *name, int32_t *out)
{
    if (!isfinite(v))
        return name;
    double s = v * scale;
    if (!(s > -2147483647.5 && s < 2147483647.5))
        return name;
    *out = (int32_t)round(s);
    return "";
}

static const char *ref_quant(const dg_entity_in *in, dg_qentity *q)
{
    static const char *pos_names[] = {"pos[0]", "pos[1]", "pos[2]"};
    static const char *vel_names[] = {"vel[0]", "vel[1]", "vel[2]"};
    static const char *rot_names[] = {"rot[0]", "rot[1]", "rot[2]", "rot[3]"};
    memset(q, 0, sizeof *q);
    if (in->id == 0)
        return "id >= 1";
    q->id = in->id;
    q->type_index = in->type_index;
    q->faction_index = in->faction_index;
    for (int i = 0; i < 3; i++) {
        const char *bad = ref_axis(in->pos[i], 64, pos_names[i], &q->pos[i]);
        if (!*bad)
            bad = ref_axis(in->vel[i], 32, vel_names[i], &q->vel[i]);
        if (*bad)
            return bad;
    }
    double n2 = 0;
    for (int i = 0; i < 4; i++) {
        if (!isfinite(in->rot[i]))
            return rot_names[i];
        n2 += in->rot[i] * in->rot[i];
    }
    if (!(n2 > 1e-30))
        return "non-zero quaternion";
    double inv = 1.0 / sqrt(n2), c[4];
    int largest = 0;
    for (int i = 0; i < 4; i++) {
        c[i] = in->rot[i] * inv;
        if (fabs(c[i]) > fabs(c[largest]))
            largest = i;
    }
    bool negate = c[largest] < 0;
    int k = 0;
    for (int i = 0; i < 4; i++) {
        if (i == largest)
            continue;
        double r = round((negate ? -c[i] : c[i]) * REF_SQRT2 * 32767);
        q->rot[k++] = (int16_t)(r > 32767 ? 32767 : r < -32767 ? -32767 : r);
    }
    q->rot_largest = (uint8_t)largest;
    if (isnan(in->health))
        return "health";
    double h = in->health < 0 ? 0 : in->health > 1 ? 1 : in->health;
    q->health = (uint16_t)round(h * 10000);
    q->flags = in->flags;
    return "";
}

static void expect_as_reference(const dg_entity_in *in)
{
    dg_qentity want, got;
    const char *bad = ref_quant(in, &want);
    memset(&got, 0x5A, sizeof got);
    dg_error err;
    dg_error_clear(&err);
    dg_status st = dg_quant_entity(in, &got, &err);
    if (*bad) {
        if (st != DG_E_RANGE || !strstr(err.msg, bad))
            fail_msg("pos %.17g %.17g %.17g vel %.17g %.17g %.17g rot %.17g %.17g %.17g %.17g health %.17g: "
                     "expected a refusal naming %s, found status %d '%s'",
                     in->pos[0], in->pos[1], in->pos[2], in->vel[0], in->vel[1], in->vel[2], in->rot[0], in->rot[1],
                     in->rot[2], in->rot[3], in->health, bad, st, err.msg);
        return;
    }
    if (st != DG_OK || memcmp(&got, &want, sizeof got) != 0)
        fail_msg("pos %.17g %.17g %.17g vel %.17g %.17g %.17g rot %.17g %.17g %.17g %.17g health %.17g: status %d; "
                 "pos %d %d %d / %d %d %d, vel %d %d %d / %d %d %d, rot %d %d %d L%u / %d %d %d L%u, health %u / %u",
                 in->pos[0], in->pos[1], in->pos[2], in->vel[0], in->vel[1], in->vel[2], in->rot[0], in->rot[1],
                 in->rot[2], in->rot[3], in->health, st, got.pos[0], got.pos[1], got.pos[2], want.pos[0], want.pos[1],
                 want.pos[2], got.vel[0], got.vel[1], got.vel[2], want.vel[0], want.vel[1], want.vel[2], got.rot[0],
                 got.rot[1], got.rot[2], got.rot_largest, want.rot[0], want.rot[1], want.rot[2], want.rot_largest,
                 got.health, want.health);
}

static double bits_to_double(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* A value of one of the kinds that break roundings: exact halves of a quantum and their
 * neighbours, 0.49999999999999994 quanta, the ends of the i32 range, non-finite, huge, tiny, any
 * bit pattern, or a plain random magnitude. `quanta` = quanta per unit. */
static double edge_value(tl_rng *r, double quanta)
{
    double half = ((double)(int64_t)(tl_next(r) % 2000001) - 1000000.0 + 0.5) / quanta;
    double sign = (tl_next(r) & 1) ? -1.0 : 1.0;
    switch (tl_next(r) % 12) {
    case 0: return half;
    case 1: return nextafter(half, INFINITY);
    case 2: return nextafter(half, -INFINITY);
    case 3: return sign * 0.49999999999999994 / quanta;
    case 4: return sign * 2147483647.5 / quanta;                       /* refused */
    case 5: return sign * nextafter(2147483647.5 / quanta, 0);         /* the last accepted */
    case 6: return sign * (2147483646.5 + (double)(tl_next(r) % 3)) / quanta;
    case 7: return (tl_next(r) & 1) ? NAN : sign * INFINITY;
    case 8: return sign * ldexp(1.0, (int)(tl_next(r) % 2100) - 1075); /* denormal .. overflow */
    case 9: return bits_to_double(tl_next(r));
    case 10: return sign * (double)(tl_next(r) % 1000) / quanta;      /* whole quanta */
    default: return (tl_unit(r) * 2 - 1) * ldexp(1.0, (int)(tl_next(r) % 30));
    }
}

static void test_matches_the_reference_on_edge_values(void **state)
{
    (void)state;
    tl_rng r = {2026};
    for (int i = 0; i < 400000; i++) {
        dg_entity_in in = {.id = 1 + (uint32_t)(tl_next(&r) % 1000), .type_index = 3, .faction_index = 1, .flags = 9};
        /* mostly one edge value among ordinary ones, so later fields are reached too */
        int edge_at = (int)(tl_next(&r) % 8);
        for (int k = 0; k < 3; k++) {
            in.pos[k] = edge_at == k ? edge_value(&r, 64) : (tl_unit(&r) * 2 - 1) * 1e5;
            in.vel[k] = edge_at == 3 + k ? edge_value(&r, 32) : (tl_unit(&r) * 2 - 1) * 500;
        }
        for (int k = 0; k < 4; k++)
            in.rot[k] = tl_unit(&r) * 2 - 1;
        if (edge_at == 6) {   /* ties, zeros, tiny and huge norms, non-finite components */
            int c = (int)(tl_next(&r) % 4);
            switch (tl_next(&r) % 6) {
            case 0: for (int k = 0; k < 4; k++) in.rot[k] = (tl_next(&r) & 1) ? 0.5 : -0.5; break;
            case 1: in.rot[c] = in.rot[(c + 1) % 4]; break;
            case 2: memset(in.rot, 0, sizeof in.rot); in.rot[c] = (tl_next(&r) & 1) ? -1e-15 : 1e-16; break;
            case 3: in.rot[c] = (tl_next(&r) & 1) ? 1e200 : -1e300; break;
            case 4: in.rot[c] = (tl_next(&r) & 1) ? NAN : -INFINITY; break;
            default: for (int k = 0; k < 4; k++) in.rot[k] = edge_value(&r, 1); break;
            }
        }
        if (edge_at != 7)
            in.health = tl_unit(&r);
        else if (tl_next(&r) & 1)
            in.health = edge_value(&r, 10000);
        else   /* exact halves of a health quantum, or as near as a double gets */
            in.health = ((double)(tl_next(&r) % 10001) + 0.5) / 10000;
        expect_as_reference(&in);
    }
}

/* dg_quant_entity_schema as it was before it computed the rest itself: each axis by trunc(v /
 * quantum) and its remainder, then id, rotation and health through dg_quant_entity on a copy with
 * position and velocity 0 (an absent rotation the identity, an absent health 0), absent attributes
 * cleared. The reference the fused quantizer must equal, status, quanta and message. */
static bool ref_axis_q(double v, double quantum, int32_t *out)
{
    double s = v / quantum;
    if (!(s > -2147483647.5 && s < 2147483647.5))
        return false;
    double t = trunc(s), r = s - t;
    *out = (int32_t)((int64_t)t + (r >= 0.5) - (r <= -0.5));
    return true;
}

static dg_status ref_quant_schema(const dg_schema *s, const dg_entity_in *in, dg_qentity *out, dg_error *err)
{
    int32_t pos[3] = {0, 0, 0}, vel[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
        if ((s->std_mask & DG_STD_POS) && !ref_axis_q(in->pos[i], s->pos_quantum_m, &pos[i]))
            return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "ref", "pos[%d]", i);
        if ((s->std_mask & DG_STD_VEL) && !ref_axis_q(in->vel[i], s->vel_quantum_mps, &vel[i]))
            return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "ref", "vel[%d]", i);
    }
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

/* Under random schemas (standard-field sets, power-of-two and decimal quanta) and the edge values
 * of their quanta (exact halves and their neighbours, 0.49999999999999994 quanta, the ends of the
 * i32 range, NaN, infinities, denormals, any bit pattern) plus rotation and health edges and id 0,
 * dg_quant_entity_schema gives the reference's quanta, or refuses where it refuses: the same status,
 * the same field named ("pos[1]", "health", ...), *out untouched. */
static void test_schema_quantizer_matches_the_copy_reference(void **state)
{
    (void)state;
    /* also powers of two to the ends of the exponent range (reciprocals the largest and smallest
     * normals, 2^1023's subnormal, 2^-1074's infinite) */
    static const double quanta[] = {1.0 / 1024, 1.0 / 64, 0.001, 0.01, 1.0 / 65536, 0.3, 2.0, 0x1p-1022,
                                    0x1p1022, 0x1p1023, 0x1p-1074, 0x1p-40, 0x1p30, 0x1.8p-10};
    enum { NQ = sizeof quanta / sizeof quanta[0] };
    tl_rng r = {4242};
    for (int i = 0; i < 300000; i++) {
        dg_schema s = {.std_mask = (uint32_t)(tl_next(&r) % 128),
                       .pos_quantum_m = quanta[tl_next(&r) % NQ],
                       .vel_quantum_mps = quanta[tl_next(&r) % NQ]};
        if (dg_schema_is_legacy(&s))
            s.pos_quantum_m = 0.001;
        dg_entity_in in = {.id = (tl_next(&r) % 50) ? 1 + (uint32_t)(tl_next(&r) % 1000) : 0,
                           .type_index = 3, .faction_index = 1, .flags = 9};
        int edge_at = (int)(tl_next(&r) % 8);
        for (int k = 0; k < 3; k++) {
            in.pos[k] = edge_at == k ? edge_value(&r, 1.0 / s.pos_quantum_m) : (tl_unit(&r) * 2 - 1) * 1e3;
            in.vel[k] = edge_at == 3 + k ? edge_value(&r, 1.0 / s.vel_quantum_mps) : (tl_unit(&r) * 2 - 1) * 50;
        }
        for (int k = 0; k < 4; k++)
            in.rot[k] = edge_at == 6 && tl_next(&r) % 4 == 0 ? edge_value(&r, 1) : tl_unit(&r) * 2 - 1;
        in.health = edge_at == 7 ? edge_value(&r, 10000) : tl_unit(&r);
        dg_qentity want, got;
        memset(&want, 0x5A, sizeof want);
        memset(&got, 0x5A, sizeof got);
        dg_error ew, eg;
        dg_error_clear(&ew);
        dg_error_clear(&eg);
        dg_status sw = ref_quant_schema(&s, &in, &want, &ew);
        dg_status sg = dg_quant_entity_schema(&s, &in, &got, &eg);
        if (sw != sg || memcmp(&got, &want, sizeof got) != 0)
            fail_msg("case %d (mask 0x%x, quanta %g %g, id %u): status %d / reference %d; pos %d %d %d / %d %d %d, "
                     "vel %d %d %d / %d %d %d, rot %d %d %d L%u / %d %d %d L%u, health %u / %u",
                     i, s.std_mask, s.pos_quantum_m, s.vel_quantum_mps, in.id, sg, sw, got.pos[0], got.pos[1],
                     got.pos[2], want.pos[0], want.pos[1], want.pos[2], got.vel[0], got.vel[1], got.vel[2],
                     want.vel[0], want.vel[1], want.vel[2], got.rot[0], got.rot[1], got.rot[2], got.rot_largest,
                     want.rot[0], want.rot[1], want.rot[2], want.rot_largest, got.health, want.health);
        if (sw != DG_OK) {
            /* the reference names the axis as "pos[1]"; the quantizer's message says "pos[1] = ..." */
            const char *name = strcmp(ew.where, "ref") == 0 ? ew.msg : NULL;
            if (name ? !strstr(eg.msg, name) : strcmp(eg.msg, ew.msg) != 0)
                fail_msg("case %d: message '%s', expected %s'%s'", i, eg.msg, name ? "one naming " : "", ew.msg);
        }
    }
}

static void test_matches_the_reference_on_random_states(void **state)
{
    (void)state;
    tl_rng r = {77};
    for (int i = 0; i < 400000; i++) {
        dg_entity_in in = {.id = 5, .health = tl_unit(&r) * 1.2 - 0.1};
        for (int k = 0; k < 3; k++) {
            in.pos[k] = (tl_unit(&r) * 2 - 1) * 3.4e7;   /* a little past the range now and then */
            in.vel[k] = (tl_unit(&r) * 2 - 1) * 3000;
        }
        for (int k = 0; k < 4; k++)
            in.rot[k] = (tl_unit(&r) * 2 - 1) * ldexp(1.0, (int)(tl_next(&r) % 8) - 4);
        expect_as_reference(&in);
    }
}

/* ---- dg_quant_entities against dg_quant_entity ------------------------------------------- */
/* The batch must give what the one-entity function gives, entity by entity in order: the same
 * quanta, the same refusal (status and message) of the first entity refused, nothing written from
 * that entity on. */

enum { BATCH_MAX = 41 };

/* One entity: ordinary, or (one time in `edge_every`) with one field from edge_value or a
 * degenerate quaternion, health or id. */
static dg_entity_in batch_entity(tl_rng *r, unsigned edge_every)
{
    dg_entity_in in = {.id = 1 + (uint32_t)(tl_next(r) % 100000), .type_index = (uint16_t)(tl_next(r) % 7),
                       .faction_index = (uint16_t)(tl_next(r) % 3), .flags = (uint16_t)tl_next(r),
                       .health = tl_unit(r) * 1.2 - 0.1};
    for (int k = 0; k < 3; k++) {
        in.pos[k] = (tl_unit(r) * 2 - 1) * 3e7;
        in.vel[k] = (tl_unit(r) * 2 - 1) * 3000;
    }
    for (int k = 0; k < 4; k++)
        in.rot[k] = (tl_unit(r) * 2 - 1) * ldexp(1.0, (int)(tl_next(r) % 8) - 4);
    if (tl_next(r) % edge_every)
        return in;
    int c = (int)(tl_next(r) % 4);
    switch (tl_next(r) % 12) {
    case 0: in.pos[c % 3] = edge_value(r, 64); break;
    case 1: in.vel[c % 3] = edge_value(r, 32); break;
    case 2: for (int k = 0; k < 4; k++) in.rot[k] = (tl_next(r) & 1) ? 0.5 : -0.5; break;   /* ties */
    case 3: in.rot[c] = in.rot[(c + 1) % 4]; break;
    case 4: in.rot[c] = -in.rot[(c + 2) % 4]; break;
    case 5: memset(in.rot, 0, sizeof in.rot); in.rot[c] = (tl_next(r) & 1) ? -1e-15 : 1e-16; break;
    case 6: in.rot[c] = (tl_next(r) & 1) ? 1e200 : -1e300; break;                         /* n2 overflows */
    case 7: in.rot[c] = (tl_next(r) & 1) ? NAN : -INFINITY; break;
    case 8: for (int k = 0; k < 4; k++) in.rot[k] = edge_value(r, 1); break;
    case 9: in.health = (tl_next(r) & 1) ? edge_value(r, 10000) : ((double)(tl_next(r) % 10001) + 0.5) / 10000; break;
    case 10: in.health = (tl_next(r) & 1) ? -0.0 : NAN; break;
    default: in.id = 0; break;
    }
    return in;
}

/* Runs the batch and one by one on in[0..n) from the same 0x5A-filled output, compares everything:
 * dg_quant_entities with dg_quant_entity (s NULL), or under schema s dg_quant_entities_schema with
 * dg_quant_entity_schema. */
static void expect_batch_as_one_by_one_under(const dg_schema *s, const dg_entity_in *in, size_t n)
{
    dg_qentity want[BATCH_MAX], got[BATCH_MAX];
    memset(want, 0x5A, sizeof want);
    memset(got, 0x5A, sizeof got);
    dg_error ew, eg;
    dg_error_clear(&ew);
    dg_error_clear(&eg);
    dg_status sw = DG_OK;
    size_t dw = 0;
    for (; dw < n; dw++)
        if ((sw = s ? dg_quant_entity_schema(s, &in[dw], &want[dw], &ew) : dg_quant_entity(&in[dw], &want[dw], &ew)) !=
            DG_OK)
            break;
    size_t dgot = 12345;
    dg_status sg = s ? dg_quant_entities_schema(s, in, got, n, &dgot, &eg) : dg_quant_entities(in, got, n, &dgot, &eg);
    assert_int_equal(sg, sw);
    assert_int_equal(dgot, dw);
    assert_string_equal(eg.msg, ew.msg);
    assert_string_equal(eg.where, ew.where);
    for (size_t i = 0; i < BATCH_MAX; i++)
        if (memcmp(&got[i], &want[i], sizeof got[i]) != 0)
            fail_msg("schema 0x%x quanta %g %g, batch of %zu, entity %zu (id %u): pos %d %d %d / %d %d %d, vel %d %d "
                     "%d / %d %d %d, rot %d %d %d L%u / %d %d %d L%u, health %u / %u, type %u / %u, flags %u / %u",
                     s ? s->std_mask : DG_STD_ALL, s ? s->pos_quantum_m : 1.0 / 64, s ? s->vel_quantum_mps : 1.0 / 32,
                     n, i, i < n ? in[i].id : 0, got[i].pos[0], got[i].pos[1], got[i].pos[2], want[i].pos[0],
                     want[i].pos[1], want[i].pos[2], got[i].vel[0], got[i].vel[1], got[i].vel[2], want[i].vel[0],
                     want[i].vel[1], want[i].vel[2], got[i].rot[0], got[i].rot[1], got[i].rot[2], got[i].rot_largest,
                     want[i].rot[0], want[i].rot[1], want[i].rot[2], want[i].rot_largest, got[i].health,
                     want[i].health, got[i].type_index, want[i].type_index, got[i].flags, want[i].flags);
}

static void expect_batch_as_one_by_one(const dg_entity_in *in, size_t n) { expect_batch_as_one_by_one_under(NULL, in, n); }

static void test_batch_matches_one_by_one_on_random_and_edge_inputs(void **state)
{
    (void)state;
    tl_rng r = {4242};
    dg_entity_in in[BATCH_MAX];
    for (int rep = 0; rep < 60000; rep++) {
        size_t n = (size_t)(tl_next(&r) % BATCH_MAX);
        /* from every entity ordinary (long runs through the paired path) to most of them odd */
        unsigned edge_every = 1u + (unsigned)(tl_next(&r) % 4) * 40;
        for (size_t i = 0; i < n; i++)
            in[i] = batch_entity(&r, edge_every);
        expect_batch_as_one_by_one(in, n);
    }
}

static void test_batch_matches_the_reference_on_random_states(void **state)
{
    (void)state;
    tl_rng r = {31};
    dg_entity_in in[BATCH_MAX - 1];
    dg_qentity got[BATCH_MAX - 1];
    for (int rep = 0; rep < 10000; rep++) {
        for (size_t i = 0; i < BATCH_MAX - 1; i++)
            in[i] = batch_entity(&r, 1u << 30);
        assert_int_equal(dg_quant_entities(in, got, BATCH_MAX - 1, NULL, NULL), DG_OK);
        for (size_t i = 0; i < BATCH_MAX - 1; i++) {
            dg_qentity want;
            assert_string_equal(ref_quant(&in[i], &want), "");
            assert_memory_equal(&got[i], &want, sizeof want);
        }
    }
}

/* Every kind of entity the batch must get right, at every place in batches of every length up to
 * 19: each of the eight lanes of the AVX2 build's two groups of four and of the portable build's two
 * pairs, the groups after them, the tails of 1..7 that go in fours, pairs and one by one. The kinds
 * the batch refuses (dg_quant_entity names them), the one it leaves to dg_quant_entity though that
 * accepts it (a finite quaternion whose squared norm overflows), and ordinary ones at the edges:
 * ties for the largest component, exact halves of a quantum, -0.0, the last value in range,
 * denormals. */
enum { LANE_KINDS = 22, LANE_MAX = 19 };

static void lane_kind(dg_entity_in *e, int kind)
{
    static const double tie[4][4] = {{0.5, -0.5, 0.5, -0.5}, {-0.5, 0.5, 0.5, 0.5},
                                      {0.1, 0.7, -0.7, 0.2}, {0.1, -0.7, 0.7, -0.2}};
    switch (kind) {
    case 0: e->id = 0; break;
    case 1: e->pos[1] = 2147483647.5 / 64; break;   /* the first value refused */
    case 2: e->vel[2] = NAN; break;
    case 3: e->rot[1] = -INFINITY; break;
    case 4: memset(e->rot, 0, sizeof e->rot); break;
    case 5: memset(e->rot, 0, sizeof e->rot); e->rot[3] = 1e-16; break;  /* n2 = 1e-32 */
    case 6: e->health = NAN; break;
    case 7: e->rot[2] = 1e200; break;   /* n2 overflows: accepted, by dg_quant_entity alone */
    case 8: case 9: case 10: case 11: memcpy(e->rot, tie[kind - 8], sizeof e->rot); break;
    case 12: e->pos[0] = 12.5 / 64; e->pos[1] = -7.5 / 64; e->vel[2] = -0.5 / 32; break;
    case 13: e->health = 0.00015; break;   /* 1.5 quanta, as near as a double gets */
    case 14: e->health = -0.0; e->pos[2] = -0.0; e->vel[0] = -0.0; break;
    case 15: e->rot[0] = -0.0; e->rot[1] = -0.0; break;
    case 16: e->pos[1] = nextafter(2147483647.5 / 64, 0); e->vel[1] = -nextafter(2147483647.5 / 32, 0); break;
    case 17: e->pos[0] = 4.9e-324; e->vel[1] = -2.2e-308; break;
    case 18: memset(e->rot, 0, sizeof e->rot); e->rot[1] = -4.9e-324; e->rot[2] = 1e-14; break;   /* denormal c */
    case 19: e->rot[0] = 1e-15; e->rot[1] = 1e-15; e->rot[2] = 0; e->rot[3] = -1e-15; break;   /* small n2, ties */
    case 20: e->health = 1e300; e->pos[2] = 0.49999999999999994 / 64; break;
    default: e->health = -1e-300; e->rot[0] = 1e150; e->rot[1] = -1e150; break;   /* big but n2 finite */
    }
}

static void test_batch_at_every_lane_and_length(void **state)
{
    (void)state;
    tl_rng r = {515};
    dg_entity_in in[LANE_MAX];
    for (size_t n = 1; n <= LANE_MAX; n++)
        for (size_t at = 0; at < n; at++)
            for (int kind = 0; kind < LANE_KINDS; kind++) {
                for (size_t i = 0; i < n; i++)
                    in[i] = batch_entity(&r, 1u << 30);
                lane_kind(&in[at], kind);
                expect_batch_as_one_by_one(in, n);
                if (at + 5 < n) {   /* and a second one, in the other group of the eight */
                    lane_kind(&in[at + 5], (kind * 7 + 3) % LANE_KINDS);
                    expect_batch_as_one_by_one(in, n);
                }
            }
}

/* Quaternions whose rotation quanta sit on a rounding tie to within an ulp or two: a component
 * nudged so that c * sqrt 2 * 32767 lands on m + 0.5, then stepped an ulp at a time through it.
 * On these, a batch that did not repeat dg_quant_entity's arithmetic exactly (the sum of squares in
 * another order, the products associated otherwise, a fused multiply-add, a reciprocal estimate)
 * gives another quantum for some entity, where random states almost never show it. */
enum { TIE_STEPS = 96 };

static double rot_scaled(const double rot[4], int k)
{
    double n2 = 0.0;
    for (int i = 0; i < 4; i++)
        n2 += rot[i] * rot[i];
    return rot[k] * (1.0 / sqrt(n2)) * REF_SQRT2 * 32767;
}

static void test_batch_matches_one_by_one_on_rounding_ties(void **state)
{
    (void)state;
    tl_rng r = {1009};
    dg_entity_in in[TIE_STEPS];
    dg_qentity got[TIE_STEPS], want;
    dg_qentity got_s[TIE_STEPS];
    const dg_schema tie_schema = {.std_mask = DG_STD_POS | DG_STD_VEL | DG_STD_ROT, .pos_quantum_m = 0.02,
                                  .vel_quantum_mps = 0.01};
    for (int rep = 0; rep < 300; rep++) {
        dg_entity_in e = batch_entity(&r, 1u << 30);
        int largest = 0;
        for (int i = 1; i < 4; i++)
            largest = fabs(e.rot[i]) > fabs(e.rot[largest]) ? i : largest;
        int k = (largest + 1 + (int)(tl_next(&r) % 3)) % 4;   /* one of the three stored */
        for (int it = 0; it < 3; it++) {   /* onto the tie; n2 moves with the component, so thrice */
            double v = rot_scaled(e.rot, k);
            e.rot[k] *= (floor(v) + 0.5) / v;
        }
        for (int i = 0; i < TIE_STEPS / 2; i++)
            e.rot[k] = nextafter(e.rot[k], -INFINITY);
        for (int i = 0; i < TIE_STEPS; i++) {
            in[i] = e;
            in[i].id = (uint32_t)(i + 1);
            e.rot[k] = nextafter(e.rot[k], INFINITY);
        }
        assert_int_equal(dg_quant_entities(in, got, TIE_STEPS, NULL, NULL), DG_OK);
        assert_int_equal(dg_quant_entities_schema(&tie_schema, in, got_s, TIE_STEPS, NULL, NULL), DG_OK);
        for (int i = 0; i < TIE_STEPS; i++) {
            assert_int_equal(dg_quant_entity(&in[i], &want, NULL), DG_OK);
            dg_qentity want_s;   /* the schema batch, under pos,vel,rot at other quanta */
            assert_int_equal(dg_quant_entity_schema(&tie_schema, &in[i], &want_s, NULL), DG_OK);
            if (memcmp(&got_s[i], &want_s, sizeof want_s) != 0)
                fail_msg("rot %.17g %.17g %.17g %.17g: schema batch rot %d %d %d L%u, one by one %d %d %d L%u",
                         in[i].rot[0], in[i].rot[1], in[i].rot[2], in[i].rot[3], got_s[i].rot[0], got_s[i].rot[1],
                         got_s[i].rot[2], got_s[i].rot_largest, want_s.rot[0], want_s.rot[1], want_s.rot[2],
                         want_s.rot_largest);
            if (memcmp(&got[i], &want, sizeof want) != 0)
                fail_msg("rot %.17g %.17g %.17g %.17g: batch rot %d %d %d L%u, one by one %d %d %d L%u", in[i].rot[0],
                         in[i].rot[1], in[i].rot[2], in[i].rot[3], got[i].rot[0], got[i].rot[1], got[i].rot[2],
                         got[i].rot_largest, want.rot[0], want.rot[1], want.rot[2], want.rot_largest);
        }
    }
}

/* The refused entity at every place in a pair and at the odd end: named, with what came before it
 * written and nothing after it. */
static void test_batch_stops_at_the_first_refused_entity(void **state)
{
    (void)state;
    tl_rng r = {8};
    dg_entity_in in[7];
    for (size_t bad = 0; bad < 7; bad++) {
        for (size_t i = 0; i < 7; i++) {
            in[i] = batch_entity(&r, 1u << 30);
            in[i].id = (uint32_t)(100 + i);
        }
        in[bad].vel[1] = INFINITY;
        if (bad + 1 < 7)
            in[bad + 1].pos[0] = NAN;   /* a second bad one after it is not the one named */
        dg_qentity out[7];
        memset(out, 0x5A, sizeof out);
        dg_error err;
        dg_error_clear(&err);
        size_t done = 99;
        assert_int_equal(dg_quant_entities(in, out, 7, &done, &err), DG_E_RANGE);
        assert_int_equal(done, bad);
        char where[32];
        snprintf(where, sizeof where, "entity %zu", 100 + bad);
        assert_string_equal(err.where, where);
        assert_non_null(strstr(err.msg, "vel[1]"));
        for (size_t i = 0; i < 7; i++) {
            if (i < bad) {
                assert_int_equal(out[i].id, 100 + i);
            } else {
                dg_qentity fill;
                memset(&fill, 0x5A, sizeof fill);
                assert_memory_equal(&out[i], &fill, sizeof fill);
            }
        }
        expect_batch_as_one_by_one(in, 7);
    }
    size_t done = 7;
    assert_int_equal(dg_quant_entities(in, NULL, 0, &done, NULL), DG_OK);
    assert_int_equal(done, 0);
}

/* ---- dg_quant_entities_schema against dg_quant_entity_schema ------------------------------ */
/* The schema batch (codec/quant_batch.h's quant_run_schema on a CPU with AVX2) must give what the
 * one-entity function gives under the same schema, entity by entity in order, as
 * expect_batch_as_one_by_one asks of dg_quant_entities. */
static const double schema_quanta[] = {0.001, 1.0 / 1024, 0.01, 0.3, 1e-5, 2.0, 0x1p-40, 0x1p30, 0x1.8p-10, 0x1p-1022,
                                       0x1p1023};
enum { SCHEMA_NQ = sizeof schema_quanta / sizeof schema_quanta[0] };

/* Mostly the batched schemas (position, velocity, rotation and any of the rest), now and then any. */
static dg_schema random_schema(tl_rng *r)
{
    uint32_t need = DG_STD_POS | DG_STD_VEL | DG_STD_ROT;
    dg_schema s = {.std_mask = (uint32_t)(tl_next(r) % 128), .pos_quantum_m = schema_quanta[tl_next(r) % SCHEMA_NQ],
                   .vel_quantum_mps = schema_quanta[tl_next(r) % SCHEMA_NQ]};
    if (tl_next(r) % 8)
        s.std_mask |= need;
    if (tl_next(r) % 4 == 0)
        s.std_mask = need;   /* the engines' pos,vel,rot */
    return s;
}

/* batch_entity's entity with its axes at the schema's scale, and (one time in `edge_every`) one
 * axis at an edge of its quantum: exact halves and their neighbours, the ends of the i32 range,
 * NaN, infinities, denormals. */
static dg_entity_in schema_entity(tl_rng *r, const dg_schema *s, unsigned edge_every)
{
    dg_entity_in in = batch_entity(r, edge_every);
    for (int k = 0; k < 3; k++) {
        in.pos[k] = (tl_unit(r) * 2 - 1) * 1e3;
        in.vel[k] = (tl_unit(r) * 2 - 1) * 50;
    }
    if (tl_next(r) % edge_every == 0) {
        int k = (int)(tl_next(r) % 3);
        if (tl_next(r) & 1)
            in.pos[k] = edge_value(r, 1.0 / s->pos_quantum_m);
        else
            in.vel[k] = edge_value(r, 1.0 / s->vel_quantum_mps);
    }
    return in;
}

static void test_schema_batch_matches_one_by_one_on_random_and_edge_inputs(void **state)
{
    (void)state;
    tl_rng r = {2020};
    dg_entity_in in[BATCH_MAX];
    for (int rep = 0; rep < 60000; rep++) {
        dg_schema s = random_schema(&r);
        size_t n = (size_t)(tl_next(&r) % BATCH_MAX);
        unsigned edge_every = 1u + (unsigned)(tl_next(&r) % 4) * 40;
        for (size_t i = 0; i < n; i++)
            in[i] = schema_entity(&r, &s, edge_every);
        expect_batch_as_one_by_one_under(&s, in, n);
    }
}

/* lane_kind's entities (refusals, ties for the largest component, signs, tiny and overflowing
 * norms, health edges) at every lane of batches up to 19 long, under pos,vel,rot schemas with and
 * without health, type, faction and flags; the axes edges at this schema's quanta. */
static void test_schema_batch_at_every_lane_and_length(void **state)
{
    (void)state;
    tl_rng r = {616};
    const uint32_t base = DG_STD_POS | DG_STD_VEL | DG_STD_ROT;
    const dg_schema schemas[] = {{.std_mask = base, .pos_quantum_m = 1.0 / 64, .vel_quantum_mps = 1.0 / 32},
                                 {.std_mask = DG_STD_ALL, .pos_quantum_m = 0.001, .vel_quantum_mps = 0.01},
                                 {.std_mask = base | DG_STD_HEALTH | DG_STD_FLAGS, .pos_quantum_m = 0.3,
                                  .vel_quantum_mps = 1e-5}};
    dg_entity_in in[LANE_MAX];
    for (size_t si = 0; si < sizeof schemas / sizeof schemas[0]; si++)
        for (size_t n = 1; n <= LANE_MAX; n++)
            for (size_t at = 0; at < n; at++)
                for (int kind = 0; kind < LANE_KINDS + 2; kind++) {
                    for (size_t i = 0; i < n; i++)
                        in[i] = schema_entity(&r, &schemas[si], 1u << 30);
                    if (kind < LANE_KINDS) {
                        lane_kind(&in[at], kind);
                    } else {   /* half a quantum each way, and the last value in range */
                        in[at].pos[1] = (kind == LANE_KINDS ? 12.5 : -7.5) * schemas[si].pos_quantum_m;
                        in[at].vel[2] = nextafter(2147483647.5 * schemas[si].vel_quantum_mps, 0) *
                                        (kind == LANE_KINDS ? 1 : -1);
                    }
                    expect_batch_as_one_by_one_under(&schemas[si], in, n);
                }
}

/* ---- the builds of dg_quant_entities ------------------------------------------------------- */
/* The batch tests run twice: with the build the CPU gets (AVX2 where there is one and the CPU has
 * it) and with the portable one forced, so both are compared with dg_quant_entity. */
static int use_portable_build(void **state)
{
    (void)state;
    dg_quant__allow_avx2(false);
    return dg_quant__avx2_in_use() ? -1 : 0;
}

static int use_the_cpus_build(void **state)
{
    (void)state;
    dg_quant__allow_avx2(true);
    return 0;
}

/* A build with the AVX2 batch uses it on a CPU that has AVX2, BMI1 and BMI2: otherwise the batch
 * tests would quietly compare the portable build twice. */
static void test_avx2_build_is_used_where_the_cpu_has_it(void **state)
{
    (void)state;
#if defined(DG_QUANT_AVX2_BUILT) && (defined(__x86_64__) || defined(_M_X64))
    __builtin_cpu_init();
    bool cpu_runs_it = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
    assert_int_equal(dg_quant__avx2_in_use(), cpu_runs_it);
    print_message("quantizer builds compared: portable%s\n", dg_quant__avx2_in_use() ? " and AVX2" : "");
#else
    assert_false(dg_quant__avx2_in_use());
#endif
    dg_quant__allow_avx2(false);
    assert_false(dg_quant__avx2_in_use());
    dg_quant__allow_avx2(true);
}

#define BATCH_TEST(f, setup, build) {#f " (" build ")", f, setup, use_the_cpus_build, NULL}
#define BATCH_TESTS(f) BATCH_TEST(f, use_the_cpus_build, "the CPU's build"), BATCH_TEST(f, use_portable_build, "portable")

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_precision_over_random_states),
        cmocka_unit_test(test_q_and_minus_q_quantize_the_same),
        cmocka_unit_test(test_unrepresentable_input_is_refused),
        cmocka_unit_test(test_rounding_is_half_away_from_zero),
        cmocka_unit_test(test_matches_the_reference_on_edge_values),
        cmocka_unit_test(test_matches_the_reference_on_random_states),
        cmocka_unit_test(test_schema_quantizer_matches_the_copy_reference),
        cmocka_unit_test(test_avx2_build_is_used_where_the_cpu_has_it),
        BATCH_TESTS(test_batch_matches_one_by_one_on_random_and_edge_inputs),
        BATCH_TESTS(test_batch_matches_the_reference_on_random_states),
        BATCH_TESTS(test_batch_at_every_lane_and_length),
        BATCH_TESTS(test_batch_matches_one_by_one_on_rounding_ties),
        BATCH_TESTS(test_batch_stops_at_the_first_refused_entity),
        BATCH_TESTS(test_schema_batch_matches_one_by_one_on_random_and_edge_inputs),
        BATCH_TESTS(test_schema_batch_at_every_lane_and_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
