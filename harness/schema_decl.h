/* harness/schema_decl.h — declared entity fields as the harness reads them (docs/STATES-STREAM.md,
 * "Declared fields"): one set of rules for the project file's [schema] / [field NAME] sections, a
 * CSV stream's `#! schema` / `#! field` lines, a JSON Lines header's "schema" member and a binary
 * stream's version 2 header. Every source hands over KEY = VALUE text; the rules and messages are
 * here once. Private to harness/; names carry the harness__decl prefix. */
#ifndef DETGATE_HARNESS_SCHEMA_DECL_H
#define DETGATE_HARNESS_SCHEMA_DECL_H

#include "round.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detgate/quant.h"
#include "detgate/schema.h"

#define HARNESS_DECL_MAX_FIELDS 32 /* DG_SCHEMA_MAX_FIELDS */
#define HARNESS_DECL_NAME_MAX 63
#define HARNESS_DECL_UNIT_MAX 15
#define HARNESS_DECL_ENUM_MAX 256
#define HARNESS_DECL_ENUM_NAME_MAX 31
#define HARNESS_DECL_WHERE_MAX 160

/* The types (the values of dg_field_type). */
typedef enum harness__ftype { HARNESS_FT_NONE = 0, HARNESS_FT_INT = 1, HARNESS_FT_UINT, HARNESS_FT_FLOAT,
                              HARNESS_FT_BOOL, HARNESS_FT_ENUM, HARNESS_FT_BYTES } harness__ftype;

/* The standard fields (the values of DG_STD_*). */
enum { HARNESS_STD_TYPE = 1u << 0, HARNESS_STD_FACTION = 1u << 1, HARNESS_STD_POS = 1u << 2,
       HARNESS_STD_VEL = 1u << 3, HARNESS_STD_ROT = 1u << 4, HARNESS_STD_HEALTH = 1u << 5,
       HARNESS_STD_FLAGS = 1u << 6, HARNESS_STD_ALL = 0x7f };

#define HARNESS_DECL_POS_QUANTUM (1.0 / 64) /* the legacy quanta (format 1.0) */
#define HARNESS_DECL_VEL_QUANTUM (1.0 / 32)

typedef struct harness__field_decl {
    char name[HARNESS_DECL_NAME_MAX + 1];
    char unit[HARNESS_DECL_UNIT_MAX + 1];
    harness__ftype type;
    uint8_t bits;      /* int/uint: 1..64; bytes: the length 1..8 */
    double quantum;    /* float only */
    char **enum_names; /* enum only: enum_count names */
    uint16_t enum_count;
    uint8_t given;     /* the keys given so far (the order of keys is free; checked when finished) */
    char where[HARNESS_DECL_WHERE_MAX]; /* where it was declared: "detgate.ini:12", "run.csv:3" */
} harness__field_decl;

typedef struct harness__decl {
    bool declared;     /* a declaration was given (else: the legacy schema, nothing said) */
    uint32_t std_mask; /* HARNESS_STD_* present */
    double pos_quantum_m, vel_quantum_mps;
    harness__field_decl fields[HARNESS_DECL_MAX_FIELDS];
    size_t field_count;
    char where[HARNESS_DECL_WHERE_MAX]; /* where the declaration starts, for "X and Y disagree" */
} harness__decl;

/* A declaration as the codec's dg_schema (pointing into the declaration: valid while it lives). */
typedef struct harness__schema_view {
    dg_schema schema;
    dg_field_def defs[HARNESS_DECL_MAX_FIELDS];
} harness__schema_view;
void dg_harness__decl_view(const harness__decl *d, harness__schema_view *v);

/* The legacy schema: every standard field, 1/64 m and 1/32 m/s, no extra field, declared false. */
void dg_harness__decl_init(harness__decl *d);
void dg_harness__decl_free(harness__decl *d);
/* A deep copy (enum names included); false on out of memory (dst then freed and legacy). */
bool dg_harness__decl_copy(harness__decl *dst, const harness__decl *src);

/* The schema's own keys (standard, position_quantum, velocity_quantum). False with the rule broken
 * and the nearest known key in msg. */
bool dg_harness__decl_schema_key(harness__decl *d, const char *key, const char *value, char *msg, size_t cap);
/* Starts a new extra field NAME declared at `where`; false (msg) on a bad or repeated name, a
 * standard field's name, or more than HARNESS_DECL_MAX_FIELDS. */
bool dg_harness__decl_add_field(harness__decl *d, const char *name, const char *where, char *msg, size_t cap);
/* A key of the last field added (type, unit, quantum, bits, values). */
bool dg_harness__decl_field_key(harness__decl *d, const char *key, const char *value, char *msg, size_t cap);
/* After the last key: every field complete (a type; a quantum for float; values for enum; bits for
 * int/uint/bytes default 64/64/8). *bad gets the index of the field at fault, SIZE_MAX for the schema. */
bool dg_harness__decl_finish(harness__decl *d, size_t *bad, char *msg, size_t cap);

/* Whether a (finished) declaration is the legacy one: written as format 1.0. */
bool dg_harness__decl_is_legacy(const harness__decl *d);
/* Whether two declarations say the same; msg names the first difference (both values). */
bool dg_harness__decl_equal(const harness__decl *a, const harness__decl *b, char *msg, size_t cap);

/* Extra field f's value from text (a CSV cell, a JSON string/number printed back): into its int64
 * slot (float: round(v / quantum) half away from zero). False with the expected form in msg. */
bool dg_harness__decl_parse_value(const harness__field_decl *f, const char *text, int64_t *slot, double *raw,
                               char *msg, size_t cap);
/* Extra field f's value given as a binary64 (float fields) or an integer bit pattern (all others):
 * range-checked into its slot. */
bool dg_harness__decl_value_f64(const harness__field_decl *f, double v, int64_t *slot, char *msg, size_t cap);
bool dg_harness__decl_value_bits(const harness__field_decl *f, uint64_t v, int64_t *slot, char *msg, size_t cap);

/* A float field's slot: v / quantum rounded by base/round.h's rule (the codec's too), at most 2^53
 * quanta; false (slot untouched) for a value that is not finite or lies further out. Inline: the binary
 * stream quantizes every declared float of every entity here. */
static inline bool dg_harness__decl_quantize(double v, double quantum, int64_t *slot)
{
    return dg_round_half_away(v / quantum, slot);
}

/* Sets the standard fields the declaration lacks to what the recording holds for them (0; rotation
 * the identity), so the raw float hash does not see values that are not recorded. */
void dg_harness__decl_zero_absent(const harness__decl *d, dg_entity_in *e);

/* Index of the standard-field name ("type", "faction", "pos", "vel", "rot", "health", "flags"), -1. */
int dg_harness__decl_std_index(const char *name, size_t len);
extern const char *const dg_harness__decl_std_names[7];
/* The type's name ("float"), "?" for none. */
const char *dg_harness__decl_type_name(harness__ftype t);

#endif
