/* codec/rply/rply_internal.h — private helpers shared by the RPLY reader, state, snapshot and writer. */
#ifndef DETGATE_RPLY_INTERNAL_H
#define DETGATE_RPLY_INTERNAL_H

#include <string.h>

#include "cursor.h"
#include "detgate/rply.h"

#if defined(__GNUC__)
#define RPLY_COLD __attribute__((cold, noinline))
#define RPLY_LIKELY(x) __builtin_expect(!!(x), 1)
#define RPLY_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define RPLY_COLD
#define RPLY_LIKELY(x) (x)
#define RPLY_UNLIKELY(x) (x)
#endif

static inline float rply__f32(const uint8_t *p)
{
    uint32_t b = dg_le32(p);
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}
static inline double rply__f64(const uint8_t *p)
{
    uint64_t b = dg_le64(p);
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}
static inline uint32_t rply__f32_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}
static inline uint64_t rply__f64_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* Head sizes by opcode, -1 for undefined opcodes (generated from DG_RPLY_OP_LIST). */
extern const signed char rply__head[256];

/* Bit-exact equality of two PROP values (NaN payloads included). */
bool rply__value_equal(const dg_rply_value *a, const dg_rply_value *b);

/* Wrapping i32 add: accumulators are defined modulo 2^32 (docs/FORMAT-rply.md), so no UB. */
static inline int32_t rply__wrap_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* Applies XFORM / XFORM_D to a transform exactly as the reader rebuilds it (shared with the writer
 * so the recorder's tracked value and the player's can never differ). The preconditions (mask
 * rules, entity mode) are the caller's to check. */
void rply__xstate_apply_xform(dg_rply_xstate *x, const dg_rply_op *op);
void rply__xstate_apply_delta(dg_rply_xstate *x, const dg_rply_op *op);
/* NULL when the delta may be applied to x, else the reason (for error messages). */
const char *rply__xstate_delta_refusal(const dg_rply_xstate *x, uint8_t mask);

#endif
