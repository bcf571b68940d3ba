/* detgate — the entity schema: which standard fields a recording has, their quanta, and its
 * declared extra fields (prefix dg_schema_ / dg_field_). Layout on disk: docs/FORMAT-flrep.md §4.5.
 *
 * A schema with every standard field, the default quanta (1/64 m, 1/32 m/s) and no extra field is
 * the legacy one: such a recording is .flrep format 1.0, byte for byte; any other is format 2.0.
 * Extra field values travel as one int64_t slot per entity and field, entity-major beside the
 * entities (extras[i * field_count + f] belongs to ents[i]); dg_qentity does not change. */
#ifndef DETGATE_SCHEMA_H
#define DETGATE_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detgate/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dg_field_type {
    DG_FIELD_INT = 1,   /* signed, `bits` 1..64 (two's complement range of that width) */
    DG_FIELD_UINT = 2,  /* unsigned, `bits` 1..64; the slot holds the bit pattern */
    DG_FIELD_FLOAT = 3, /* `quantum` > 0: slot = round(v / quantum) half away from zero, |slot| <= 2^53 */
    DG_FIELD_BOOL = 4,  /* slot 0 or 1 */
    DG_FIELD_ENUM = 5,  /* slot 0 .. enum_count - 1, shown by its name */
    DG_FIELD_BYTES = 6, /* `bits` = length 1..8 bytes; byte 0 in the slot's low 8 bits */
} dg_field_type;

/* The standard fields a recording may have (dg_schema.std_mask). An absent one is not stored and
 * reads back as 0 (rotation: the identity, rot_largest 0 and rot 0,0,0) in dg_qentity. */
enum {
    DG_STD_TYPE = 1u << 0,
    DG_STD_FACTION = 1u << 1,
    DG_STD_POS = 1u << 2,
    DG_STD_VEL = 1u << 3,
    DG_STD_ROT = 1u << 4,
    DG_STD_HEALTH = 1u << 5,
    DG_STD_FLAGS = 1u << 6,
    DG_STD_ALL = 0x7f
};

#define DG_SCHEMA_MAX_FIELDS 32
#define DG_FIELD_NAME_MAX 63       /* bytes, [a-z][a-z0-9_.]* */
#define DG_FIELD_UNIT_MAX 15       /* bytes of UTF-8, may be empty */
#define DG_FIELD_ENUM_MAX 256      /* names per enum field */
#define DG_FIELD_ENUM_NAME_MAX 31  /* bytes per enum name */
#define DG_SCHEMA_POS_QUANTUM_LEGACY (1.0 / 64.0)
#define DG_SCHEMA_VEL_QUANTUM_LEGACY (1.0 / 32.0)

/* One declared extra field. Strings are NUL-terminated; the reader's copies live as long as it. */
typedef struct dg_field_def {
    const char *name;   /* [a-z][a-z0-9_.]*, <= 63 bytes, unique, not a standard field's name */
    const char *unit;   /* <= 15 bytes of UTF-8, "" or NULL for none */
    uint8_t type;       /* dg_field_type */
    uint8_t bits;       /* int/uint: width 1..64; bytes: length 1..8; other types: 0 */
    double quantum;     /* float only: the value of one step, finite and > 0 */
    const char *const *enum_names; /* enum only: enum_count names, each 1..31 bytes, unique */
    uint16_t enum_count;           /* enum only: 1..256 */
} dg_field_def;

typedef struct dg_schema {
    uint32_t std_mask;       /* DG_STD_* present */
    double pos_quantum_m;    /* metres per position step (legacy 1/64); finite, > 0 */
    double vel_quantum_mps;  /* metres/second per velocity step (legacy 1/32); finite, > 0 */
    const dg_field_def *fields;
    size_t field_count;      /* 0 .. DG_SCHEMA_MAX_FIELDS */
} dg_schema;

/* The 1.0 schema: every standard field, quanta 1/64 m and 1/32 m/s, no extra field. */
const dg_schema *dg_schema_legacy(void);

/* True when s is NULL or equal in meaning to the legacy schema (what format 1.0 can carry). */
bool dg_schema_is_legacy(const dg_schema *s);

/* Checks every rule above (std_mask, quanta, and per field: name, uniqueness, unit, type, bits,
 * quantum, enum names). The error names the field (index and name) and the rule with expected vs
 * found. DG_E_USAGE for a NULL schema. */
dg_status dg_schema_check(const dg_schema *s, dg_error *err);

/* Quantizes a float value for a DG_FIELD_FLOAT field: round(v / quantum), half away from zero.
 * DG_E_RANGE (naming the field) on NaN, infinity, or |result| > 2^53; DG_E_USAGE when f is not a
 * float field. *out untouched on error. */
dg_status dg_schema_quant_float(const dg_field_def *f, double v, int64_t *out, dg_error *err);

/* DG_E_RANGE (naming the field and the bound) when slot is not a value of f: int outside its
 * two's complement width, uint or bytes with bits above the width, float |slot| > 2^53, bool not
 * 0/1, enum >= enum_count. */
dg_status dg_schema_check_value(const dg_field_def *f, int64_t slot, dg_error *err);

/* Bits of the value's fixed-width form in a .flrep 2.0 record (FORMAT-flrep.md §12.3): int/uint
 * `bits`, float 55, bool 1, enum the bits of enum_count - 1 (at least 1), bytes 8 × length. */
unsigned dg_schema_value_bits(const dg_field_def *f);

/* The value as a double, for display (float: slot × quantum; uint and bytes: unsigned). */
double dg_schema_value_double(const dg_field_def *f, int64_t slot);

/* Writes the value for a human into buf (always NUL-terminated when cap > 0): "-3 rounds",
 * "0.125 rad/s" (float: the shortest decimal that reads back as slot × quantum), "true",
 * "asleep" (enum name; "#7" when out of range), "0x0a0b" (bytes, byte 0 first). The unit follows
 * after one space when not empty (not after a bool or an enum). Returns the length it would have (like snprintf). */
size_t dg_schema_format_value(const dg_field_def *f, int64_t slot, char *buf, size_t cap);

/* The extra field named `name` (NUL-terminated), or NULL; *index (if non-NULL) gets its position. */
const dg_field_def *dg_schema_find(const dg_schema *s, const char *name, size_t *index);

#ifdef __cplusplus
}
#endif
#endif
