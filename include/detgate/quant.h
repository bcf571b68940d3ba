/* detgate — the quantized world state (prefix dg_quant_ / dg_q).
 *
 * This is the integer domain the .flrep codec writes, the reader rebuilds, and both sides of the
 * determinism gate hash. Precision (settled in shared/specs/flrep.md, laid out in
 * docs/FORMAT-flrep.md §6):
 *   position  int32 per axis, 1/64 m            (range ±33,554 km per axis)
 *   velocity  int32 per axis, 1/32 m/s
 *   rotation  smallest-three unit quaternion: index of the largest component (made >= 0) and the
 *             other three in index order as int16, value = c * sqrt(2) * 32767 (|c| <= 1/sqrt 2),
 *             angular error under 0.004 degrees (spec: <= 0.01)
 *   health    uint16, 1/10000 of full health (10000 = 100%)
 * Quantization is plain IEEE arithmetic (no libm transcendental), so every compiler agrees. */
#ifndef DETGATE_QUANT_H
#define DETGATE_QUANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detgate/error.h"
#include "detgate/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_QPOS_PER_M 64       /* position quanta per metre */
#define DG_QVEL_PER_MPS 32     /* velocity quanta per metre/second */
#define DG_QROT_SCALE 32767    /* smallest-three component scale (times sqrt 2) */
#define DG_QHEALTH_FULL 10000  /* health quanta at 100% */

/* The float-domain state a simulation or engine hands to the codec. */
typedef struct dg_entity_in {
    uint32_t id;            /* >= 1; 0 means "none" everywhere in the format */
    uint16_t type_index;    /* index into the entity-type manifest */
    uint16_t faction_index; /* index into the faction table */
    double pos[3];          /* metres, Cartesian world frame */
    double vel[3];          /* metres/second */
    double rot[4];          /* quaternion w, x, y, z (normalized by the quantizer) */
    double health;          /* 0..1, clamped */
    uint16_t flags;         /* engine-defined state flags, stored verbatim */
} dg_entity_in;

/* The quantized state: what goes to disk, what comes back, what is hashed. */
typedef struct dg_qentity {
    uint32_t id;
    uint16_t type_index;
    uint16_t faction_index;
    int32_t pos[3];
    int32_t vel[3];
    int16_t rot[3];         /* the three smaller quaternion components, index order */
    uint8_t rot_largest;    /* 0..3: which of w, x, y, z was dropped (it is >= 0) */
    uint8_t pad_;           /* always 0; keeps the struct free of indeterminate bytes */
    uint16_t health;
    uint16_t flags;
} dg_qentity;

/* Match events, each stamped with the tick it belongs to. */
typedef enum dg_event_kind {
    DG_EV_KILL = 1,   /* a = killer id (0 = none), b = victim id, c = weapon type index */
    DG_EV_SPAWN = 2,  /* a = entity id, c = type index, d = faction index */
    DG_EV_CHAT = 3,   /* a = sender id (0 = server), c = channel, text = the line */
    DG_EV_ADMIN = 4,  /* a = actor participant id, b = target entity id, c = action, text = detail */
    DG_EV_ALERT = 5,  /* c = faction index, d = new alert level (0..255), text unused */
} dg_event_kind;

typedef struct dg_event {
    uint8_t kind;       /* dg_event_kind */
    uint64_t tick;      /* the tick it was stamped with (equals its tick in a file) */
    uint32_t a, b;
    uint16_t c, d;
    const char *text;   /* UTF-8, may be NULL when text_len == 0; not NUL-terminated */
    uint16_t text_len;
} dg_event;

/* Quantizes one entity. Fails (DG_E_RANGE) on NaN/inf, a position or velocity outside the int32
 * range, a zero-length quaternion, or id 0; the error names the entity and field. */
dg_status dg_quant_entity(const dg_entity_in *in, dg_qentity *out, dg_error *err);

/* Quantizes one entity under a schema: position and velocity at the schema's quanta (round(v /
 * quantum), half away from zero, within the i32 range), and every standard field the schema lacks
 * set to 0 without being looked at (rotation: the identity, rot_largest 0, rot 0,0,0). With a NULL
 * or legacy schema the result equals dg_quant_entity's. Errors as dg_quant_entity's. */
dg_status dg_quant_entity_schema(const dg_schema *s, const dg_entity_in *in, dg_qentity *out, dg_error *err);

/* Back to metres and metres/second at a schema's quanta (NULL = legacy). */
void dg_quant_pos_m_schema(const dg_schema *s, const dg_qentity *q, double out_m[3]);
void dg_quant_vel_mps_schema(const dg_schema *s, const dg_qentity *q, double out_mps[3]);

/* Quantizes in[0..n) into out[0..n), with the same result as dg_quant_entity on each in order
 * (entities side by side in SIMD lanes, so their sqrt and division chains overlap: four at a time
 * as SSE2 pairs, or eight at a time as two groups of four on a CPU with AVX2; docs/PERFORMANCE.md
 * has the figures). Stops at the first entity dg_quant_entity refuses, with that entity's error:
 * out[0..k) hold the ones before it, out[k..n) are untouched, and *done (if non-NULL) is k — n on
 * success. */
dg_status dg_quant_entities(const dg_entity_in *in, dg_qentity *out, size_t n, size_t *done, dg_error *err);

/* dg_quant_entities under a schema: the same quanta as dg_quant_entity_schema on each in order, and
 * the same contract (stops at the first entity refused, with its error: out[0..k) hold the ones
 * before it, out[k..n) are untouched, *done (if non-NULL) is k — n on success). A NULL or legacy
 * schema is dg_quant_entities; one with position, velocity and rotation runs eight at a time on a
 * CPU with AVX2 (not under DETGATE_CPU=portable); any other schema, and every portable build,
 * quantizes one by one. */
dg_status dg_quant_entities_schema(const dg_schema *s, const dg_entity_in *in, dg_qentity *out, size_t n,
                                   size_t *done, dg_error *err);

/* Which build of the codec's hot loops (the .flrep tick decoder's fast path and encoder loop, the
 * batch quantizer) this process runs: "avx2" or "portable" (SSE2 on x86-64). The CPU decides,
 * unless the environment variable DETGATE_CPU forces "portable" (read once, at the first call of
 * anything that dispatches; docs/CLI.md "Environment"). */
const char *dg_codec_cpu_build(void);

/* Back to floats, for display and reports (not used by the gate's comparisons). */
void dg_quant_pos_m(const dg_qentity *q, double out_m[3]);
void dg_quant_vel_mps(const dg_qentity *q, double out_mps[3]);
void dg_quant_rot_quat(const dg_qentity *q, double out_wxyz[4]);
/* Angle in degrees between two quantized orientations (0..180). */
double dg_quant_rot_angle_deg(const dg_qentity *a, const dg_qentity *b);
double dg_quant_health_pct(const dg_qentity *q);

/* True when the three stored components describe a real unit quaternion (sum of squares fits). */
bool dg_quant_rot_valid(const int16_t rot[3], uint8_t largest);

static inline bool dg_qentity_equal(const dg_qentity *a, const dg_qentity *b)
{
    return a->id == b->id && a->type_index == b->type_index && a->faction_index == b->faction_index &&
           a->pos[0] == b->pos[0] && a->pos[1] == b->pos[1] && a->pos[2] == b->pos[2] &&
           a->vel[0] == b->vel[0] && a->vel[1] == b->vel[1] && a->vel[2] == b->vel[2] &&
           a->rot[0] == b->rot[0] && a->rot[1] == b->rot[1] && a->rot[2] == b->rot[2] &&
           a->rot_largest == b->rot_largest && a->health == b->health && a->flags == b->flags;
}

#ifdef __cplusplus
}
#endif
#endif
