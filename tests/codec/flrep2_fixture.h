/* tests/codec/flrep2_fixture.h — a format 2.0 recording for the tests: a schema with every extra
 * field type (angular velocity at its own quantum, an RNG state as uint 64, a bool, an enum, bytes,
 * a narrow int), chosen quanta of 1/1024, no type, faction or health; and a deterministic world of
 * falling, spinning bodies whose fields change at different rates. Header-only. */
#ifndef DETGATE_TESTS_FLREP2_FIXTURE_H
#define DETGATE_TESTS_FLREP2_FIXTURE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "detgate/flrep.h"

static const char *const f2_kinds[] = {"static", "kinematic", "dynamic", "bullet"};

enum { F2_ANGVEL, F2_RNG, F2_AWAKE, F2_KIND, F2_TAG, F2_AMMO, F2_NF };

static const dg_field_def f2_fields[F2_NF] = {
    {"angvel", "rad/s", DG_FIELD_FLOAT, 0, 1.0 / 4096, NULL, 0},
    {"rng", "", DG_FIELD_UINT, 64, 0, NULL, 0},
    {"awake", "", DG_FIELD_BOOL, 0, 0, NULL, 0},
    {"body.kind", "", DG_FIELD_ENUM, 0, 0, f2_kinds, 4},
    {"tag", "", DG_FIELD_BYTES, 3, 0, NULL, 0},
    {"ammo", "rounds", DG_FIELD_INT, 12, 0, NULL, 0},
};

static inline dg_schema f2_schema(void)
{
    dg_schema s = {DG_STD_POS | DG_STD_VEL | DG_STD_ROT | DG_STD_FLAGS, 1.0 / 1024, 1.0 / 1024, f2_fields, F2_NF};
    return s;
}

static inline dg_flrep_header f2_header(const dg_schema *s, uint32_t keyframe)
{
    dg_flrep_header h;
    memset(&h, 0, sizeof h);
    h.engine_version = dg_flrep_cstr("detgate-test 2.0");
    h.tick_rate_hz = 60;
    h.planet_radius_m = 0.0;   /* no planet: format 2.0 allows it */
    h.keyframe_interval_ticks = keyframe;
    h.schema = s;
    return h;
}

static inline uint64_t f2_xorshift(uint64_t x)
{
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

/* Body i at tick t (ids 1..n, the float state and its extras). Bodies fall and spin; body 3 is
 * asleep from tick 40; the RNG of each body steps every tick; ammo drops every 7 ticks. */
static inline void f2_body(size_t i, uint64_t t, dg_entity_in *e, int64_t x[F2_NF])
{
    memset(e, 0, sizeof *e);
    e->id = (uint32_t)(i + 1);
    double dt = (double)t / 60.0;
    double fall = i == 3 && t >= 40 ? 40.0 / 60.0 : dt;
    e->pos[0] = (double)i * 1.5 + 0.01 * sin(dt * (double)(i + 1));
    e->pos[1] = 20.0 - 0.5 * 9.81 * fall * fall;
    e->vel[1] = i == 3 && t >= 40 ? 0.0 : -9.81 * dt;
    double a = 0.3 * dt * (double)(i % 5);
    e->rot[0] = cos(a / 2);
    e->rot[3] = sin(a / 2);
    e->flags = (uint16_t)(t >= 40 && i == 3 ? 1 : 0);
    x[F2_ANGVEL] = (int64_t)llround(0.3 * (double)(i % 5) * 4096.0) + (int64_t)(t % 3);
    uint64_t r = 0x9E3779B97F4A7C15u * (i + 1);
    for (uint64_t k = 0; k <= t % 64; k++)
        r = f2_xorshift(r);
    x[F2_RNG] = (int64_t)r;
    x[F2_AWAKE] = !(i == 3 && t >= 40);
    x[F2_KIND] = (int64_t)(i % 4);
    x[F2_TAG] = (int64_t)(0x0a0b0cu + (t >= 100 ? 1u : 0u));
    x[F2_AMMO] = 2047 - (int64_t)(t / 7) * 37;
    while (x[F2_AMMO] < -2048)
        x[F2_AMMO] += 4095;
}

#endif
