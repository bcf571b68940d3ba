/* harness/schema_decl.c — the rules of a field declaration (harness/schema_decl.h), shared by every
 * place one is read, and the text form of a declared field's values. */
#include "schema_decl.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "harness_internal.h"

const char *const dg_harness__decl_std_names[7] = {"type", "faction", "pos", "vel", "rot", "health", "flags"};
static const char *const k_std_list[] = {"type", "faction", "pos", "vel", "rot", "health", "flags", NULL};
static const char *const k_type_names[] = {"?", "int", "uint", "float", "bool", "enum", "bytes"};
static const char *const k_schema_keys[] = {"standard", "position_quantum", "velocity_quantum", NULL};
static const char *const k_field_keys[] = {"type", "unit", "quantum", "bits", "length", "values", NULL};

enum { GIVEN_TYPE = 1, GIVEN_UNIT = 2, GIVEN_QUANTUM = 4, GIVEN_BITS = 8, GIVEN_LENGTH = 16, GIVEN_VALUES = 32 };

static bool say(char *msg, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool say(char *msg, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
    return false;
}

/* Text quoted in a message: printable ASCII, the rest escaped, cut. */
static const char *quoted(const char *s, char *buf, size_t cap)
{
    dg_escape_bytes(buf, cap, s, strlen(s));
    return buf;
}

static const char *nearest(const char *s, const char *const *names)
{
    size_t best = SIZE_MAX;
    const char *b = NULL;
    for (size_t i = 0; names[i]; i++) {
        size_t d = dg_harness__edit_distance(s, names[i]);
        if (d < best)
            best = d, b = names[i];
    }
    size_t len = strlen(s);
    return best <= (len < 4 ? 1 : 2) ? b : NULL;
}

const char *dg_harness__decl_type_name(harness__ftype t)
{
    return (unsigned)t < sizeof k_type_names / sizeof *k_type_names ? k_type_names[t] : "?";
}

int dg_harness__decl_std_index(const char *name, size_t len)
{
    for (int i = 0; i < 7; i++)
        if (strlen(dg_harness__decl_std_names[i]) == len && memcmp(dg_harness__decl_std_names[i], name, len) == 0)
            return i;
    return -1;
}

void dg_harness__decl_init(harness__decl *d)
{
    memset(d, 0, sizeof *d);
    d->std_mask = HARNESS_STD_ALL;
    d->pos_quantum_m = HARNESS_DECL_POS_QUANTUM;
    d->vel_quantum_mps = HARNESS_DECL_VEL_QUANTUM;
}

static void field_free(harness__field_decl *f)
{
    for (size_t i = 0; f->enum_names && i < f->enum_count; i++)
        free(f->enum_names[i]);
    free(f->enum_names);
    f->enum_names = NULL;
    f->enum_count = 0;
}

void dg_harness__decl_free(harness__decl *d)
{
    for (size_t i = 0; i < d->field_count; i++)
        field_free(&d->fields[i]);
    dg_harness__decl_init(d);
}

bool dg_harness__decl_copy(harness__decl *dst, const harness__decl *src)
{
    *dst = *src;
    for (size_t i = 0; i < src->field_count; i++) {
        harness__field_decl *f = &dst->fields[i];
        f->enum_names = NULL;
        if (!src->fields[i].enum_count)
            continue;
        f->enum_names = calloc(src->fields[i].enum_count, sizeof *f->enum_names);
        for (size_t k = 0; f->enum_names && k < f->enum_count; k++)
            if (!(f->enum_names[k] = strdup(src->fields[i].enum_names[k]))) {
                f->enum_count = (uint16_t)k;
                break;
            }
        if (!f->enum_names || f->enum_count != src->fields[i].enum_count) {
            if (!f->enum_names)
                f->enum_count = 0;
            dst->field_count = i + 1;
            dg_harness__decl_free(dst);
            return false;
        }
    }
    return true;
}

/* ---- parsing the values of keys ------------------------------------------------------------------- */

static bool parse_double(const char *v, double *out)
{
    char *end = NULL;
    errno = 0;
    double d = strtod(v, &end);
    if (!*v || *end || errno == ERANGE || !isfinite(d))
        return false;
    *out = d;
    return true;
}

static bool parse_uint(const char *v, uint64_t max, uint64_t *out)
{
    if (!*v || *v == '-' || *v == '+' || *v == ' ')
        return false;
    char *end = NULL;
    errno = 0;
    unsigned long long u = strtoull(v, &end, 0);
    if (*end || errno == ERANGE || u > max)
        return false;
    *out = u;
    return true;
}

/* The next comma-separated item of a list, spaces around it dropped; false at the end. */
static bool list_next(const char **s, const char **item, size_t *len)
{
    const char *p = *s;
    if (!p)
        return false;
    while (*p == ' ' || *p == '\t')
        p++;
    const char *e = strchr(p, ',');
    const char *end = e ? e : p + strlen(p);
    const char *q = end;
    while (q > p && (q[-1] == ' ' || q[-1] == '\t'))
        q--;
    *item = p;
    *len = (size_t)(q - p);
    *s = e ? e + 1 : NULL;
    return true;
}

static bool name_ok(const char *s, size_t len, size_t max)
{
    if (len == 0 || len > max || !(s[0] >= 'a' && s[0] <= 'z'))
        return false;
    for (size_t i = 1; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '.'))
            return false;
    return true;
}

/* A unit: at most 15 bytes of valid UTF-8 without control characters. */
static bool unit_ok(const char *s)
{
    size_t n = strlen(s);
    if (n > HARNESS_DECL_UNIT_MAX)
        return false;
    for (size_t i = 0; i < n;) {
        size_t k = dg_utf8_char((const uint8_t *)s + i, n - i); /* base/'s decoder: no overlong, no surrogate */
        unsigned char c = (unsigned char)s[i];
        if (k == 0 || (k == 1 && (c < 0x20 || c == 0x7f)))
            return false;
        i += k;
    }
    return true;
}

static bool set_standard(harness__decl *d, const char *v, char *msg, size_t cap)
{
    uint32_t mask = 0;
    const char *s = v[strspn(v, " \t")] ? v : NULL, *item; /* "standard =" (empty): none */
    size_t len;
    char b[80], one[80];
    while (list_next(&s, &item, &len)) {
        snprintf(one, sizeof one, "%.*s", (int)(len < 70 ? len : 70), item);
        int k = dg_harness__decl_std_index(item, len);
        if (k < 0) {
            const char *near = nearest(one, k_std_list);
            return say(msg, cap, "standard: unknown standard field \"%s\"%s%s%s; expected a comma-separated list of "
                       "type, faction, pos, vel, rot, health, flags", quoted(one, b, sizeof b),
                       near ? " (did you mean \"" : "", near ? near : "", near ? "\"?)" : "");
        }
        if (mask & (1u << k))
            return say(msg, cap, "standard: \"%s\" is listed twice", dg_harness__decl_std_names[k]);
        mask |= 1u << k;
    }
    d->std_mask = mask;
    return true;
}

bool dg_harness__decl_schema_key(harness__decl *d, const char *key, const char *value, char *msg, size_t cap)
{
    d->declared = true;
    double q;
    char b[80];
    if (strcmp(key, "standard") == 0)
        return set_standard(d, value, msg, cap);
    if (strcmp(key, "position_quantum") == 0 || strcmp(key, "velocity_quantum") == 0) {
        if (!parse_double(value, &q) || !(q > 0) || q > 1e6)
            return say(msg, cap, "%s: expected a number > 0 and <= 1e6 (%s), found \"%s\"", key,
                       key[0] == 'p' ? "metres per stored step" : "m/s per stored step", quoted(value, b, sizeof b));
        *(key[0] == 'p' ? &d->pos_quantum_m : &d->vel_quantum_mps) = q;
        return true;
    }
    const char *near = nearest(key, k_schema_keys);
    return say(msg, cap, "unknown schema key \"%s\"%s%s%s; expected one of: standard, position_quantum, "
               "velocity_quantum", quoted(key, b, sizeof b), near ? " (did you mean \"" : "", near ? near : "",
               near ? "\"?)" : "");
}

bool dg_harness__decl_add_field(harness__decl *d, const char *name, const char *where, char *msg, size_t cap)
{
    char b[80];
    size_t len = strlen(name);
    d->declared = true;
    if (!name_ok(name, len, HARNESS_DECL_NAME_MAX))
        return say(msg, cap, "field name \"%s\": expected [a-z][a-z0-9_.]*, at most %d bytes",
                   quoted(name, b, sizeof b), HARNESS_DECL_NAME_MAX);
    if (dg_harness__decl_std_index(name, len) >= 0 || strcmp(name, "tick") == 0 || strcmp(name, "id") == 0)
        return say(msg, cap, "field name \"%s\" is a standard field's name: list standard fields under "
                   "standard = ..., declare only extra fields by name", name);
    for (size_t i = 0; i < d->field_count; i++)
        if (strcmp(d->fields[i].name, name) == 0)
            return say(msg, cap, "field \"%s\" is declared twice (first at %s)", name, d->fields[i].where);
    if (d->field_count == HARNESS_DECL_MAX_FIELDS)
        return say(msg, cap, "field \"%s\": more than %d extra fields", name, HARNESS_DECL_MAX_FIELDS);
    harness__field_decl *f = &d->fields[d->field_count++];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    snprintf(f->where, sizeof f->where, "%s", where ? where : "");
    return true;
}

static unsigned given_of(const harness__field_decl *f) { return f->given; }
static void given_add(harness__field_decl *f, unsigned g) { f->given = (uint8_t)(f->given | g); }

static bool set_values(harness__field_decl *f, const char *v, char *msg, size_t cap)
{
    const char *s = v, *item;
    size_t len;
    char b[80];
    char **names = calloc(HARNESS_DECL_ENUM_MAX, sizeof *names);
    size_t n = 0;
    if (!names)
        return say(msg, cap, "out of memory");
    bool ok = true;
    while (ok && list_next(&s, &item, &len)) {
        char one[64];
        snprintf(one, sizeof one, "%.*s", (int)(len < 60 ? len : 60), item);
        if (n == HARNESS_DECL_ENUM_MAX)
            ok = say(msg, cap, "field \"%s\": values: more than %d names", f->name, HARNESS_DECL_ENUM_MAX);
        else if (!len || len > HARNESS_DECL_ENUM_NAME_MAX || strchr(one, ' ') || strchr(one, '"'))
            ok = say(msg, cap, "field \"%s\": values: \"%s\" is not a value name (1..%d bytes, no space or quote)",
                     f->name, quoted(one, b, sizeof b), HARNESS_DECL_ENUM_NAME_MAX);
        for (size_t k = 0; ok && k < n; k++)
            if (strcmp(names[k], one) == 0)
                ok = say(msg, cap, "field \"%s\": values: \"%s\" is listed twice", f->name, quoted(one, b, sizeof b));
        if (ok && !(names[n++] = strdup(one)))
            ok = say(msg, cap, "out of memory");
    }
    if (ok && n == 0)
        ok = say(msg, cap, "field \"%s\": values: expected a comma-separated list of names, found none", f->name);
    if (!ok) {
        for (size_t k = 0; k < n; k++)
            free(names[k]);
        free(names);
        return false;
    }
    field_free(f);
    f->enum_names = names;
    f->enum_count = (uint16_t)n;
    return true;
}

bool dg_harness__decl_field_key(harness__decl *d, const char *key, const char *value, char *msg, size_t cap)
{
    if (d->field_count == 0)
        return say(msg, cap, "\"%s\" outside a field declaration", key);
    harness__field_decl *f = &d->fields[d->field_count - 1];
    char b[80];
    uint64_t u;
    double q;
    static const unsigned bit_of[] = {GIVEN_TYPE, GIVEN_UNIT, GIVEN_QUANTUM, GIVEN_BITS, GIVEN_LENGTH, GIVEN_VALUES};
    int k = -1;
    for (int i = 0; k_field_keys[i]; i++)
        if (strcmp(key, k_field_keys[i]) == 0)
            k = i;
    if (k < 0) {
        const char *near = nearest(key, k_field_keys);
        return say(msg, cap, "field \"%s\": unknown key \"%s\"%s%s%s; expected one of: type, unit, quantum, bits, "
                   "length, values", f->name, quoted(key, b, sizeof b), near ? " (did you mean \"" : "",
                   near ? near : "", near ? "\"?)" : "");
    }
    if (given_of(f) & bit_of[k])
        return say(msg, cap, "field \"%s\": %s is given twice", f->name, key);
    switch (bit_of[k]) {
    case GIVEN_TYPE: {
        int t = -1;
        for (int i = 1; i < 7; i++)
            if (strcmp(value, k_type_names[i]) == 0)
                t = i;
        if (t < 0) {
            const char *near = nearest(value, (const char *const[]){"int", "uint", "float", "bool", "enum", "bytes",
                                                                   NULL});
            return say(msg, cap, "field \"%s\": type \"%s\"%s%s%s; expected int, uint, float, bool, enum or bytes",
                       f->name, quoted(value, b, sizeof b), near ? " (did you mean \"" : "", near ? near : "",
                       near ? "\"?)" : "");
        }
        f->type = (harness__ftype)t;
        break;
    }
    case GIVEN_UNIT:
        if (!unit_ok(value))
            return say(msg, cap, "field \"%s\": unit \"%s\": expected at most %d bytes of UTF-8 text", f->name,
                       quoted(value, b, sizeof b), HARNESS_DECL_UNIT_MAX);
        snprintf(f->unit, sizeof f->unit, "%s", value);
        break;
    case GIVEN_QUANTUM:
        if (!parse_double(value, &q) || !(q > 0))
            return say(msg, cap, "field \"%s\": quantum: expected a number > 0, found \"%s\"", f->name,
                       quoted(value, b, sizeof b));
        f->quantum = q;
        break;
    case GIVEN_BITS:
    case GIVEN_LENGTH: {
        bool bits = bit_of[k] == GIVEN_BITS;
        if (!parse_uint(value, bits ? 64 : 8, &u) || u == 0)
            return say(msg, cap, "field \"%s\": %s: expected %s, found \"%s\"", f->name, key,
                       bits ? "1..64" : "1..8 (bytes)", quoted(value, b, sizeof b));
        f->bits = (uint8_t)u;
        break;
    }
    default:
        if (!set_values(f, value, msg, cap))
            return false;
    }
    given_add(f, bit_of[k]);
    return true;
}

/* What a field's type needs and refuses, once all its keys are in. */
static bool field_finish(harness__field_decl *f, char *msg, size_t cap)
{
    unsigned g = given_of(f);
    const char *t = dg_harness__decl_type_name(f->type);
    if (!(g & GIVEN_TYPE))
        return say(msg, cap, "field \"%s\": no type: expected type = int, uint, float, bool, enum or bytes", f->name);
    if (f->type == HARNESS_FT_FLOAT && !(g & GIVEN_QUANTUM))
        return say(msg, cap, "field \"%s\": a float needs quantum = STEP (the value stored is round(v / STEP))",
                   f->name);
    if (f->type == HARNESS_FT_ENUM && !(g & GIVEN_VALUES))
        return say(msg, cap, "field \"%s\": an enum needs values = NAME, NAME, ...", f->name);
    if ((g & GIVEN_QUANTUM) && f->type != HARNESS_FT_FLOAT)
        return say(msg, cap, "field \"%s\": quantum is for a float, not a%s %s", f->name, f->type == HARNESS_FT_INT ||
                   f->type == HARNESS_FT_ENUM ? "n" : "", t);
    if ((g & GIVEN_VALUES) && f->type != HARNESS_FT_ENUM)
        return say(msg, cap, "field \"%s\": values is for an enum, not a%s %s", f->name,
                   f->type == HARNESS_FT_INT ? "n" : "", t);
    if ((g & GIVEN_BITS) && f->type != HARNESS_FT_INT && f->type != HARNESS_FT_UINT)
        return say(msg, cap, "field \"%s\": bits is for an int or a uint, not a%s %s%s", f->name,
                   f->type == HARNESS_FT_ENUM ? "n" : "", t, f->type == HARNESS_FT_BYTES ? " (use length)" : "");
    if ((g & GIVEN_LENGTH) && f->type != HARNESS_FT_BYTES)
        return say(msg, cap, "field \"%s\": length is for bytes, not a%s %s%s", f->name,
                   f->type == HARNESS_FT_INT || f->type == HARNESS_FT_ENUM ? "n" : "", t,
                   f->type == HARNESS_FT_INT || f->type == HARNESS_FT_UINT ? " (use bits)" : "");
    if (f->type == HARNESS_FT_FLOAT && !(f->quantum >= 1e-300))
        return say(msg, cap, "field \"%s\": quantum %g is too small", f->name, f->quantum);
    if (!(g & (GIVEN_BITS | GIVEN_LENGTH)))
        f->bits = f->type == HARNESS_FT_BYTES ? 8 : f->type == HARNESS_FT_INT || f->type == HARNESS_FT_UINT ? 64 : 0;
    return true;
}

bool dg_harness__decl_finish(harness__decl *d, size_t *bad, char *msg, size_t cap)
{
    *bad = SIZE_MAX;
    if (!(d->std_mask & HARNESS_STD_POS) && d->pos_quantum_m != HARNESS_DECL_POS_QUANTUM)
        return say(msg, cap, "position_quantum is given but pos is not a standard field of this schema");
    if (!(d->std_mask & HARNESS_STD_VEL) && d->vel_quantum_mps != HARNESS_DECL_VEL_QUANTUM)
        return say(msg, cap, "velocity_quantum is given but vel is not a standard field of this schema");
    for (size_t i = 0; i < d->field_count; i++)
        if (!field_finish(&d->fields[i], msg, cap))
            return *bad = i, false;
    return true;
}

bool dg_harness__decl_is_legacy(const harness__decl *d)
{
    return d->std_mask == HARNESS_STD_ALL && d->pos_quantum_m == HARNESS_DECL_POS_QUANTUM &&
           d->vel_quantum_mps == HARNESS_DECL_VEL_QUANTUM && d->field_count == 0;
}

static void std_list(uint32_t mask, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = 0;
    for (int i = 0; i < 7; i++)
        if (mask & (1u << i))
            n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s", n ? "," : "", dg_harness__decl_std_names[i]);
    if (!mask)
        snprintf(out, cap, "(none)");
}

static bool field_equal(const harness__field_decl *a, const harness__field_decl *b, char *msg, size_t cap)
{
    if (strcmp(a->name, b->name) != 0)
        return say(msg, cap, "field \"%s\" against field \"%s\"", a->name, b->name);
    if (a->type != b->type)
        return say(msg, cap, "field \"%s\": type %s against %s", a->name, dg_harness__decl_type_name(a->type),
                   dg_harness__decl_type_name(b->type));
    if (strcmp(a->unit, b->unit) != 0)
        return say(msg, cap, "field \"%s\": unit \"%s\" against \"%s\"", a->name, a->unit, b->unit);
    if (a->bits != b->bits)
        return say(msg, cap, "field \"%s\": %s %u against %u", a->name, a->type == HARNESS_FT_BYTES ? "length" : "bits",
                   a->bits, b->bits);
    if (a->quantum != b->quantum)
        return say(msg, cap, "field \"%s\": quantum %.17g against %.17g", a->name, a->quantum, b->quantum);
    if (a->enum_count != b->enum_count)
        return say(msg, cap, "field \"%s\": %u values against %u", a->name, a->enum_count, b->enum_count);
    for (size_t k = 0; k < a->enum_count; k++)
        if (strcmp(a->enum_names[k], b->enum_names[k]) != 0)
            return say(msg, cap, "field \"%s\": value %zu \"%s\" against \"%s\"", a->name, k, a->enum_names[k],
                       b->enum_names[k]);
    return true;
}

bool dg_harness__decl_equal(const harness__decl *a, const harness__decl *b, char *msg, size_t cap)
{
    char la[80], lb[80];
    if (a->std_mask != b->std_mask) {
        std_list(a->std_mask, la, sizeof la);
        std_list(b->std_mask, lb, sizeof lb);
        return say(msg, cap, "standard fields %s against %s", la, lb);
    }
    if (a->pos_quantum_m != b->pos_quantum_m)
        return say(msg, cap, "position_quantum %.17g against %.17g", a->pos_quantum_m, b->pos_quantum_m);
    if (a->vel_quantum_mps != b->vel_quantum_mps)
        return say(msg, cap, "velocity_quantum %.17g against %.17g", a->vel_quantum_mps, b->vel_quantum_mps);
    for (size_t i = 0; i < a->field_count && i < b->field_count; i++)
        if (!field_equal(&a->fields[i], &b->fields[i], msg, cap))
            return false;
    if (a->field_count != b->field_count) {
        const harness__decl *more = a->field_count > b->field_count ? a : b;
        return say(msg, cap, "%zu extra fields against %zu (field \"%s\" is declared on one side only)",
                   a->field_count, b->field_count, more->fields[a->field_count < b->field_count ? a->field_count
                                                                                                 : b->field_count].name);
    }
    return true;
}

/* ---- values ---------------------------------------------------------------------------------------- */

static bool int_in_bits(int64_t v, unsigned bits)
{
    if (bits >= 64)
        return true;
    int64_t lo = -((int64_t)1 << (bits - 1)), hi = ((int64_t)1 << (bits - 1)) - 1;
    return v >= lo && v <= hi;
}

static bool uint_in_bits(uint64_t v, unsigned bits)
{
    return bits >= 64 || v < ((uint64_t)1 << bits);
}

bool dg_harness__decl_value_f64(const harness__field_decl *f, double v, int64_t *slot, char *msg, size_t cap)
{
    if (f->type != HARNESS_FT_FLOAT)
        return say(msg, cap, "field \"%s\": expected a %s, found a number with a fraction", f->name,
                   dg_harness__decl_type_name(f->type));
    if (!dg_harness__decl_quantize(v, f->quantum, slot))
        return say(msg, cap, "field \"%s\" = %.17g: expected finite and within +-2^53 quanta of %.17g %s", f->name, v,
                   f->quantum, f->unit);
    return true;
}

bool dg_harness__decl_value_bits(const harness__field_decl *f, uint64_t v, int64_t *slot, char *msg, size_t cap)
{
    int64_t s = (int64_t)v;
    bool ok;
    switch (f->type) {
    case HARNESS_FT_INT: ok = int_in_bits(s, f->bits); break;
    case HARNESS_FT_UINT: ok = uint_in_bits(v, f->bits); break;
    case HARNESS_FT_BOOL: ok = v <= 1; break;
    case HARNESS_FT_ENUM: ok = v < f->enum_count; break;
    case HARNESS_FT_BYTES: ok = uint_in_bits(v, 8u * f->bits); break;
    default: return dg_harness__decl_value_f64(f, (double)s, slot, msg, cap);
    }
    if (!ok)
        return say(msg, cap, "field \"%s\" = 0x%016" PRIx64 ": out of range for %s", f->name, v,
                   f->type == HARNESS_FT_INT    ? "its signed bits"
                   : f->type == HARNESS_FT_BOOL ? "a bool (0 or 1)"
                   : f->type == HARNESS_FT_ENUM ? "its enum (an index below its value count)"
                                                : "its bits");
    *slot = s;
    return true;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

bool dg_harness__decl_parse_value(const harness__field_decl *f, const char *text, int64_t *slot, double *raw,
                               char *msg, size_t cap)
{
    char b[48];
    const char *t = quoted(text, b, sizeof b);
    char *end = NULL;
    *raw = 0;
    errno = 0;
    switch (f->type) {
    case HARNESS_FT_FLOAT: {
        double d = strtod(text, &end);
        if (!*text || *end || errno == ERANGE)
            return say(msg, cap, "field \"%s\": expected a number, found \"%s\"", f->name, t);
        *raw = d;
        return dg_harness__decl_value_f64(f, d, slot, msg, cap);
    }
    case HARNESS_FT_INT: {
        long long v = strtoll(text, &end, 10);
        if (!*text || *end || errno == ERANGE || !int_in_bits(v, f->bits))
            return say(msg, cap, "field \"%s\": expected an integer of %u signed bits, found \"%s\"", f->name, f->bits,
                       t);
        *slot = v;
        return true;
    }
    case HARNESS_FT_UINT: {
        uint64_t u;
        if (!parse_uint(text, UINT64_MAX, &u) || !uint_in_bits(u, f->bits))
            return say(msg, cap, "field \"%s\": expected an unsigned integer of %u bits (decimal or 0x hex), found "
                       "\"%s\"", f->name, f->bits, t);
        *slot = (int64_t)u;
        return true;
    }
    case HARNESS_FT_BOOL:
        if (strcmp(text, "true") == 0 || strcmp(text, "1") == 0)
            return *slot = 1, true;
        if (strcmp(text, "false") == 0 || strcmp(text, "0") == 0)
            return *slot = 0, true;
        return say(msg, cap, "field \"%s\": expected true, false, 1 or 0, found \"%s\"", f->name, t);
    case HARNESS_FT_ENUM:
        for (size_t k = 0; k < f->enum_count; k++)
            if (strcmp(text, f->enum_names[k]) == 0)
                return *slot = (int64_t)k, true;
        {
            uint64_t u; /* an index is accepted too (decimal) */
            if (text[0] >= '0' && text[0] <= '9' && parse_uint(text, f->enum_count - 1u, &u))
                return *slot = (int64_t)u, true;
            const char *const *names = (const char *const *)f->enum_names;
            char one[HARNESS_DECL_ENUM_NAME_MAX + 1];
            size_t best = SIZE_MAX, bk = 0;
            for (size_t k = 0; k < f->enum_count; k++) {
                size_t dd = dg_harness__edit_distance(text, names[k]);
                if (dd < best)
                    best = dd, bk = k;
            }
            snprintf(one, sizeof one, "%s", names[bk]);
            return say(msg, cap, "field \"%s\": \"%s\" is not one of its values%s%s%s (%s%s ...)", f->name, t,
                       best <= 2 ? " (did you mean \"" : "", best <= 2 ? one : "", best <= 2 ? "\"?)" : "", names[0],
                       f->enum_count > 1 ? "," : "");
        }
    case HARNESS_FT_BYTES: {
        size_t n = strlen(text);
        uint64_t v = 0;
        bool ok = n == 2 + 2u * f->bits && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
        for (size_t k = 0; ok && k < f->bits; k++) {
            int hi = hexval(text[2 + 2 * k]), lo = hexval(text[3 + 2 * k]);
            ok = hi >= 0 && lo >= 0;
            v |= (uint64_t)(hi << 4 | lo) << (8 * k); /* byte 0 (written first) in the low 8 bits */
        }
        if (!ok)
            return say(msg, cap, "field \"%s\": expected 0x and %u hex digits (%u bytes, first byte first), found "
                       "\"%s\"", f->name, 2u * f->bits, f->bits, t);
        *slot = (int64_t)v;
        return true;
    }
    default: return say(msg, cap, "field \"%s\" has no type", f->name);
    }
}

_Static_assert((int)HARNESS_FT_INT == (int)DG_FIELD_INT && (int)HARNESS_FT_BYTES == (int)DG_FIELD_BYTES, "one type numbering");
_Static_assert((int)HARNESS_STD_ALL == (int)DG_STD_ALL && (int)HARNESS_STD_HEALTH == (int)DG_STD_HEALTH, "one standard-field mask");
_Static_assert(HARNESS_DECL_MAX_FIELDS == DG_SCHEMA_MAX_FIELDS, "one field limit");

void dg_harness__decl_view(const harness__decl *d, harness__schema_view *v)
{
    memset(v, 0, sizeof *v);
    for (size_t i = 0; i < d->field_count; i++) {
        const harness__field_decl *f = &d->fields[i];
        v->defs[i] = (dg_field_def){.name = f->name, .unit = f->unit, .type = (uint8_t)f->type, .bits = f->bits,
                                    .quantum = f->quantum, .enum_names = (const char *const *)f->enum_names,
                                    .enum_count = f->enum_count};
    }
    v->schema = (dg_schema){.std_mask = d->std_mask, .pos_quantum_m = d->pos_quantum_m,
                            .vel_quantum_mps = d->vel_quantum_mps, .fields = v->defs, .field_count = d->field_count};
}

void dg_harness__decl_zero_absent(const harness__decl *d, dg_entity_in *e)
{
    uint32_t m = d->std_mask;
    if (!(m & HARNESS_STD_TYPE))
        e->type_index = 0;
    if (!(m & HARNESS_STD_FACTION))
        e->faction_index = 0;
    if (!(m & HARNESS_STD_POS))
        e->pos[0] = e->pos[1] = e->pos[2] = 0;
    if (!(m & HARNESS_STD_VEL))
        e->vel[0] = e->vel[1] = e->vel[2] = 0;
    if (!(m & HARNESS_STD_ROT)) {
        e->rot[0] = 1;
        e->rot[1] = e->rot[2] = e->rot[3] = 0;
    }
    if (!(m & HARNESS_STD_HEALTH))
        e->health = 0;
    if (!(m & HARNESS_STD_FLAGS))
        e->flags = 0;
}
