/* codec/schema.c — the entity schema: the legacy one, its rules, float quantization of an extra
 * field, value bounds and display (include/detgate/schema.h, docs/FORMAT-flrep.md §12). */
#include "round.h"
#include "detgate/schema.h"

#include "cursor.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLOAT_SLOT_MAX (INT64_C(1) << 53)

static const dg_schema legacy_schema = {DG_STD_ALL, DG_SCHEMA_POS_QUANTUM_LEGACY, DG_SCHEMA_VEL_QUANTUM_LEGACY,
                                        NULL, 0};

const dg_schema *dg_schema_legacy(void) { return &legacy_schema; }

bool dg_schema_is_legacy(const dg_schema *s)
{
    return s == NULL || (s->std_mask == DG_STD_ALL && s->pos_quantum_m == DG_SCHEMA_POS_QUANTUM_LEGACY &&
                         s->vel_quantum_mps == DG_SCHEMA_VEL_QUANTUM_LEGACY && s->field_count == 0);
}

/* Names a standard field has in reports (an extra field may neither be one nor start "<one>."). */
static const char *const std_names[] = {"id", "tick", "type", "faction", "pos", "vel", "rot", "health", "flags",
                                        "position", "velocity", "rotation"};

static bool name_is_standard(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof std_names / sizeof std_names[0]; i++) {
        size_t k = strlen(std_names[i]);
        if (len >= k && memcmp(name, std_names[i], k) == 0 && (len == k || name[k] == '.'))
            return true;
    }
    return false;
}

static dg_status field_fail(dg_error *err, size_t index, const char *name, const char *fmt, const char *detail)
{
    char where[128];
    char shown[64];
    dg_escape_bytes(shown, sizeof shown, name ? name : "", name ? strlen(name) : 0);
    snprintf(where, sizeof where, "schema field %zu (\"%.64s\")", index, shown);
    return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, where, fmt, detail);
}

static dg_status check_name(const dg_field_def *f, size_t i, dg_error *err)
{
    if (f->name == NULL)
        return field_fail(err, i, NULL, "expected a name, found %s", "none");
    size_t len = strlen(f->name);
    if (len == 0 || len > DG_FIELD_NAME_MAX)
        return field_fail(err, i, f->name, "expected a name of 1..63 bytes, %s", "found another length");
    if (!(f->name[0] >= 'a' && f->name[0] <= 'z'))
        return field_fail(err, i, f->name, "expected a name matching [a-z][a-z0-9_.]*, %s",
                          "found a first byte that is not a-z");
    for (size_t k = 1; k < len; k++) {
        char c = f->name[k];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.'))
            return field_fail(err, i, f->name, "expected a name matching [a-z][a-z0-9_.]*, %s",
                              "found a byte outside a-z 0-9 _ .");
    }
    if (name_is_standard(f->name, len))
        return field_fail(err, i, f->name, "expected a name that is not a standard field's (%s), found one",
                          "id tick type faction pos vel rot health flags position velocity rotation, or one of them "
                          "followed by '.'");
    return DG_OK;
}

static bool text_ok(const char *s, size_t max)
{
    size_t len = strlen(s);
    if (len > max || !dg_utf8_valid((const uint8_t *)s, len))
        return false;
    for (size_t k = 0; k < len; k++)
        if ((unsigned char)s[k] < 0x20 || s[k] == 0x7f)
            return false;
    return true;
}

static dg_status check_enum(const dg_field_def *f, size_t i, dg_error *err)
{
    if (f->enum_count < 1 || f->enum_count > DG_FIELD_ENUM_MAX || f->enum_names == NULL)
        return field_fail(err, i, f->name, "expected an enum of 1..256 names, %s", "found another count or none");
    for (size_t k = 0; k < f->enum_count; k++) {
        const char *n = f->enum_names[k];
        if (n == NULL || n[0] == '\0' || !text_ok(n, DG_FIELD_ENUM_NAME_MAX))
            return field_fail(err, i, f->name, "expected each enum name to be 1..31 bytes of UTF-8 without control "
                              "characters, %s", "found one that is not");
        for (size_t j = 0; j < k; j++)
            if (strcmp(f->enum_names[j], n) == 0)
                return field_fail(err, i, f->name, "expected distinct enum names, found \"%s\" twice", n);
    }
    return DG_OK;
}

static dg_status check_type(const dg_field_def *f, size_t i, dg_error *err)
{
    switch (f->type) {
    case DG_FIELD_INT:
    case DG_FIELD_UINT:
        if (f->bits < 1 || f->bits > 64)
            return field_fail(err, i, f->name, "expected bits 1..64 for an int or uint field, %s", "found another");
        return DG_OK;
    case DG_FIELD_BYTES:
        if (f->bits < 1 || f->bits > 8)
            return field_fail(err, i, f->name, "expected a length (bits) of 1..8 bytes for a bytes field, %s",
                              "found another");
        return DG_OK;
    case DG_FIELD_FLOAT:
        if (!(isfinite(f->quantum) && f->quantum > 0.0))
            return field_fail(err, i, f->name, "expected a float field's quantum finite and > 0, %s",
                              "found 0, a negative number, NaN or infinity");
        return DG_OK;
    case DG_FIELD_BOOL:
        return DG_OK;
    case DG_FIELD_ENUM:
        return check_enum(f, i, err);
    default:
        return field_fail(err, i, f->name, "expected a type int, uint, float, bool, enum or bytes (1..6), %s",
                          "found another");
    }
}

static dg_status check_quantum(double q, const char *what, dg_error *err)
{
    if (isfinite(q) && q > 0.0)
        return DG_OK;
    return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "schema", "expected the %s quantum finite and > 0, found %g",
                        what, q);
}

dg_status dg_schema_check(const dg_schema *s, dg_error *err)
{
    if (s == NULL)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "schema", "expected a schema, found NULL");
    if (s->std_mask & ~(uint32_t)DG_STD_ALL)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "schema",
                            "expected a standard-field mask within 0x7f, found 0x%" PRIx32, s->std_mask);
    dg_status st = check_quantum(s->pos_quantum_m, "position", err);
    if (st == DG_OK)
        st = check_quantum(s->vel_quantum_mps, "velocity", err);
    if (st != DG_OK)
        return st;
    if (s->field_count > DG_SCHEMA_MAX_FIELDS || (s->field_count > 0 && s->fields == NULL))
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "schema", "expected at most %d extra fields, found %zu",
                            DG_SCHEMA_MAX_FIELDS, s->field_count);
    for (size_t i = 0; i < s->field_count; i++) {
        const dg_field_def *f = &s->fields[i];
        if ((st = check_name(f, i, err)) != DG_OK)
            return st;
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->fields[j].name, f->name) == 0)
                return field_fail(err, i, f->name, "expected distinct field names, found this one also at field %s",
                                  "before it");
        if (f->unit && !text_ok(f->unit, DG_FIELD_UNIT_MAX))
            return field_fail(err, i, f->name, "expected a unit of at most 15 bytes of UTF-8 without control "
                              "characters, %s", "found another");
        if ((st = check_type(f, i, err)) != DG_OK)
            return st;
    }
    return DG_OK;
}

static dg_status value_fail(dg_error *err, const dg_field_def *f, const char *fmt, int64_t slot, const char *bound)
{
    char where[96];
    snprintf(where, sizeof where, "field %.63s", f->name ? f->name : "?");
    return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, where, fmt, bound, slot);
}

dg_status dg_schema_quant_float(const dg_field_def *f, double v, int64_t *out, dg_error *err)
{
    if (f == NULL || f->type != DG_FIELD_FLOAT)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "schema", "expected a float field");
    int64_t n;
    if (!dg_round_half_away(v / f->quantum, &n)) { /* NaN too */
        char where[96];
        snprintf(where, sizeof where, "field %.63s", f->name ? f->name : "?");
        return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, where,
                            "expected a finite value within 2^53 quanta of %g, found %g", f->quantum, v);
    }
    *out = n;
    return DG_OK;
}

unsigned dg_schema_value_bits(const dg_field_def *f)
{
    switch (f->type) {
    case DG_FIELD_INT:
    case DG_FIELD_UINT:
        return f->bits;
    case DG_FIELD_FLOAT:
        return 55;
    case DG_FIELD_BOOL:
        return 1;
    case DG_FIELD_ENUM: {
        unsigned b = 1;
        while (b < 16 && (1u << b) < f->enum_count)
            b++;
        return b;
    }
    case DG_FIELD_BYTES:
        return 8u * f->bits;
    default:
        return 64;
    }
}

dg_status dg_schema_check_value(const dg_field_def *f, int64_t slot, dg_error *err)
{
    uint64_t u = (uint64_t)slot;
    char bound[64];
    switch (f->type) {
    case DG_FIELD_INT:
        if (f->bits < 64) {
            int64_t lo = -(INT64_C(1) << (f->bits - 1)), hi = (INT64_C(1) << (f->bits - 1)) - 1;
            if (slot < lo || slot > hi) {
                snprintf(bound, sizeof bound, "%" PRId64 "..%" PRId64 " (int, %u bits)", lo, hi, (unsigned)f->bits);
                return value_fail(err, f, "expected a value in %s, found %" PRId64, slot, bound);
            }
        }
        return DG_OK;
    case DG_FIELD_UINT:
    case DG_FIELD_BYTES: {
        unsigned w = dg_schema_value_bits(f);
        if (w < 64 && (u >> w) != 0) {
            snprintf(bound, sizeof bound, "%u bits (%s)", w, f->type == DG_FIELD_UINT ? "uint" : "bytes");
            return value_fail(err, f, "expected a value that fits %s, found %" PRId64, slot, bound);
        }
        return DG_OK;
    }
    case DG_FIELD_FLOAT:
        if (slot > FLOAT_SLOT_MAX || slot < -FLOAT_SLOT_MAX)
            return value_fail(err, f, "expected a float's quanta within %s, found %" PRId64, slot, "+-2^53");
        return DG_OK;
    case DG_FIELD_BOOL:
        if (u > 1)
            return value_fail(err, f, "expected a bool %s, found %" PRId64, slot, "0 or 1");
        return DG_OK;
    case DG_FIELD_ENUM:
        if (u >= f->enum_count) {
            snprintf(bound, sizeof bound, "0..%u", (unsigned)f->enum_count - 1u);
            return value_fail(err, f, "expected an enum index in %s, found %" PRId64, slot, bound);
        }
        return DG_OK;
    default:
        return value_fail(err, f, "expected a field of a known type %s, found slot %" PRId64, slot, "(1..6)");
    }
}

double dg_schema_value_double(const dg_field_def *f, int64_t slot)
{
    switch (f->type) {
    case DG_FIELD_FLOAT:
        return (double)slot * f->quantum;
    case DG_FIELD_UINT:
    case DG_FIELD_BYTES:
        return (double)(uint64_t)slot;
    default:
        return (double)slot;
    }
}

/* The shortest %.Ng (N = 1..17) that reads back as v. */
static void shortest_double(double v, char *out, size_t cap)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, cap, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

static size_t format_bare(const dg_field_def *f, int64_t slot, char *buf, size_t cap)
{
    char tmp[40];
    uint64_t u = (uint64_t)slot;
    switch (f->type) {
    case DG_FIELD_INT:
        return (size_t)snprintf(buf, cap, "%" PRId64, slot);
    case DG_FIELD_UINT:
        return (size_t)snprintf(buf, cap, "%" PRIu64, u);
    case DG_FIELD_FLOAT:
        shortest_double(dg_schema_value_double(f, slot), tmp, sizeof tmp);
        return (size_t)snprintf(buf, cap, "%s", tmp);
    case DG_FIELD_BOOL:
        return (size_t)snprintf(buf, cap, "%s", slot == 0 ? "false" : slot == 1 ? "true" : "#invalid");
    case DG_FIELD_ENUM:
        if (u < f->enum_count && f->enum_names)
            return (size_t)snprintf(buf, cap, "%s", f->enum_names[u]);
        return (size_t)snprintf(buf, cap, "#%" PRId64, slot);
    case DG_FIELD_BYTES: {
        char *p = tmp;
        *p++ = '0';
        *p++ = 'x';
        unsigned n = f->bits >= 1 && f->bits <= 8 ? f->bits : 8;
        for (unsigned k = 0; k < n; k++)
            p += snprintf(p, 3, "%02x", (unsigned)((u >> (8 * k)) & 0xff));
        return (size_t)snprintf(buf, cap, "%s", tmp);
    }
    default:
        return (size_t)snprintf(buf, cap, "%" PRId64, slot);
    }
}

size_t dg_schema_format_value(const dg_field_def *f, int64_t slot, char *buf, size_t cap)
{
    char tmp[128];
    size_t n = format_bare(f, slot, tmp, sizeof tmp);
    if (f->unit && f->unit[0] && f->type != DG_FIELD_BOOL && f->type != DG_FIELD_ENUM)
        n = (size_t)snprintf(buf, cap, "%s %s", tmp, f->unit);
    else
        n = (size_t)snprintf(buf, cap, "%s", tmp);
    return n;
}

const dg_field_def *dg_schema_find(const dg_schema *s, const char *name, size_t *index)
{
    if (s == NULL || name == NULL)
        return NULL;
    for (size_t i = 0; i < s->field_count; i++)
        if (s->fields[i].name && strcmp(s->fields[i].name, name) == 0) {
            if (index)
                *index = i;
            return &s->fields[i];
        }
    return NULL;
}
