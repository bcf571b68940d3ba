/* codec/flrep/flrep_schema.c — the entity schema section of format 2.0 (docs/FORMAT-flrep.md §12.2):
 * the codec's own copy of a schema, its prediction ratio, and the section both ways. */
#include "flrep_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dg_flrep__schema2_free(flrep_schema2 *s)
{
    if (!s)
        return;
    free(s->blob);
    memset(s, 0, sizeof *s);
}

/* predNum / predDen (§12.4): predDen = 2^k, the largest k <= 20 with predNum = round(ratio 2^k) <= 2^20,
 * then both halved while predNum is even. */
static void choose_pred_ratio(double vel_q, double pos_q, uint32_t *num, uint32_t *den)
{
    double ratio = vel_q / pos_q;
    uint32_t n = 0, d = 1;
    for (int k = 20; k >= 0; k--) {
        double v = round(ratio * ldexp(1.0, k));
        if (v <= (double)FLREP_PRED_MAX) {
            n = (uint32_t)v;
            d = 1u << k;
            break;
        }
    }
    if (ratio > (double)FLREP_PRED_MAX)   /* no k fits: the largest step the format carries */
        n = FLREP_PRED_MAX, d = 1;
    while (n != 0 && n % 2 == 0 && d > 1) {
        n /= 2;
        d /= 2;
    }
    if (n == 0)
        d = 1;
    *num = n;
    *den = d;
}

static size_t text_len(const char *s) { return s ? strlen(s) + 1 : 1; }

static char *put_text(char **at, const char *s)
{
    char *p = *at;
    size_t n = s ? strlen(s) : 0;
    memcpy(p, s ? s : "", n);
    p[n] = '\0';
    *at += n + 1;
    return p;
}

static void derive(flrep_schema2 *d)
{
    for (size_t f = 0; f < d->s.field_count; f++) {
        d->width[f] = (uint8_t)dg_schema_value_bits(&d->fields[f]);
        const dg_field_def *fd = &d->fields[f];
        d->is_signed[f] = fd->type == DG_FIELD_INT || fd->type == DG_FIELD_FLOAT;
        unsigned w = d->width[f];
        int64_t lo = 0;
        uint64_t hi;   /* the largest value, as u64 */
        switch (fd->type) {
        case DG_FIELD_INT:
            lo = w >= 64 ? INT64_MIN : -(INT64_C(1) << (w - 1));
            hi = w >= 64 ? (uint64_t)INT64_MAX : (UINT64_C(1) << (w - 1)) - 1;
            break;
        case DG_FIELD_FLOAT:
            lo = -(INT64_C(1) << 53);
            hi = UINT64_C(1) << 53;
            break;
        case DG_FIELD_ENUM:
            hi = fd->enum_count ? (uint64_t)fd->enum_count - 1 : 0;
            break;
        default:   /* uint, bool, bytes: every value of the width */
            hi = w >= 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1;
            break;
        }
        d->vlo[f] = (uint64_t)lo;
        d->vspan[f] = hi - (uint64_t)lo;
    }
}

/* The copy, without checks; pred ratio left to the caller. */
static dg_status copy_schema(flrep_schema2 *dst, const dg_schema *src, dg_error *err)
{
    memset(dst, 0, sizeof *dst);
    size_t ptrs = 0, chars = 0;
    for (size_t f = 0; f < src->field_count; f++) {
        const dg_field_def *fd = &src->fields[f];
        chars += text_len(fd->name) + text_len(fd->unit);
        if (fd->type == DG_FIELD_ENUM)
            for (size_t k = 0; k < fd->enum_count; k++) {
                chars += text_len(fd->enum_names[k]);
                ptrs++;
            }
    }
    dst->blob = malloc(ptrs * sizeof(char *) + chars + 1);
    if (!dst->blob)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "schema", "out of memory copying the schema");
    const char **ptr = (const char **)(void *)dst->blob;
    char *at = dst->blob + ptrs * sizeof(char *);
    dst->s = *src;
    dst->s.fields = dst->fields;
    for (size_t f = 0; f < src->field_count; f++) {
        dg_field_def *o = &dst->fields[f];
        *o = src->fields[f];
        o->name = put_text(&at, src->fields[f].name);
        o->unit = put_text(&at, src->fields[f].unit);
        if (o->type == DG_FIELD_ENUM) {
            o->enum_names = ptr;
            for (size_t k = 0; k < o->enum_count; k++)
                *ptr++ = put_text(&at, src->fields[f].enum_names[k]);
        } else {
            o->enum_names = NULL;
            o->enum_count = 0;
        }
        if (o->type != DG_FIELD_FLOAT)
            o->quantum = 0.0;
        if (o->type != DG_FIELD_INT && o->type != DG_FIELD_UINT && o->type != DG_FIELD_BYTES)
            o->bits = 0;
    }
    derive(dst);
    return DG_OK;
}

dg_status dg_flrep__schema2_from(flrep_schema2 *dst, const dg_schema *src, dg_error *err)
{
    dg_status st = dg_schema_check(src, err);
    if (st == DG_OK)
        st = copy_schema(dst, src, err);
    if (st == DG_OK)
        choose_pred_ratio(src->vel_quantum_mps, src->pos_quantum_m, &dst->pred_num, &dst->pred_den);
    return st;
}

static void put_cstr(dg_buf *b, const char *s) { dg_buf_str16(b, s ? s : "", s ? strlen(s) : 0); }

void dg_flrep__schema2_encode(dg_buf *b, const flrep_schema2 *s)
{
    dg_buf_u8(b, (uint8_t)s->s.std_mask);
    dg_buf_f64(b, s->s.pos_quantum_m);
    dg_buf_f64(b, s->s.vel_quantum_mps);
    dg_buf_u32(b, s->pred_num);
    dg_buf_u32(b, s->pred_den);
    dg_buf_u8(b, (uint8_t)s->s.field_count);
    for (size_t f = 0; f < s->s.field_count; f++) {
        const dg_field_def *fd = &s->fields[f];
        put_cstr(b, fd->name);
        put_cstr(b, fd->unit);
        dg_buf_u8(b, fd->type);
        dg_buf_u8(b, fd->bits);
        dg_buf_f64(b, fd->type == DG_FIELD_FLOAT ? fd->quantum : 0.0);
        dg_buf_u16(b, fd->type == DG_FIELD_ENUM ? fd->enum_count : 0);
        for (size_t k = 0; fd->type == DG_FIELD_ENUM && k < fd->enum_count; k++)
            put_cstr(b, fd->enum_names[k]);
    }
}

/* ---- parsing ------------------------------------------------------------------------------- */

#define SCHEMA_WHERE "section 0x0005 (entity schema)"

/* The strings of the section as NUL-terminated copies, parsed into a temporary schema whose
 * pointers are into `tmp` (one allocation, freed by the caller). */
typedef struct parse_tmp {
    dg_field_def fields[DG_SCHEMA_MAX_FIELDS];
    uint64_t field_at[DG_SCHEMA_MAX_FIELDS];
    char *chars;          /* every string, NUL-terminated */
    const char **names;   /* enum name pointers */
} parse_tmp;

static char *take_str(dg_cur *c, char **at, const char *what)
{
    dg_strview v = dg_cur_str16(c, what);
    if (!c->ok)
        return NULL;
    char *p = *at;
    memcpy(p, v.s, v.len);
    p[v.len] = '\0';
    *at += v.len + 1;
    return p;
}

/* One field entry; *names_used counts enum name pointers consumed. */
static void parse_field(dg_cur *c, dg_field_def *f, char **at, const char **names, size_t *names_used, size_t idx)
{
    char what[48];
    f->name = take_str(c, at, "string name");
    f->unit = take_str(c, at, "string unit");
    f->type = dg_cur_u8(c, "u8 type");
    f->bits = dg_cur_u8(c, "u8 bits");
    f->quantum = dg_cur_f64(c, "f64 quantum");
    uint16_t ne = dg_cur_u16(c, "u16 enumCount");
    if (!c->ok)
        return;
    if (f->type != DG_FIELD_ENUM && ne != 0) {
        dg_cur_fail(c, DG_E_MALFORMED, "schema field %zu: expected enumCount 0 for a field that is not an enum, found %u",
                    idx, ne);
        return;
    }
    if (ne > DG_FIELD_ENUM_MAX || (uint64_t)ne * 2 > dg_cur_left(c)) {
        dg_cur_fail(c, DG_E_MALFORMED, "schema field %zu: expected enumCount <= 256 names that fit in the %zu bytes "
                    "left, found %u", idx, dg_cur_left(c), ne);
        return;
    }
    f->enum_names = names + *names_used;
    f->enum_count = ne;
    for (uint16_t k = 0; k < ne && c->ok; k++) {
        snprintf(what, sizeof what, "string enum name %u", k);
        names[(*names_used)++] = take_str(c, at, what);
    }
}

/* dg_schema_check's message, moved to the section and the field's byte offset. */
static dg_status check_parsed(const dg_schema *s, const parse_tmp *t, uint64_t base, dg_error *err)
{
    dg_error e;
    dg_error_clear(&e);
    if (dg_schema_check(s, &e) == DG_OK)
        return DG_OK;
    uint64_t at = base;
    unsigned long idx;
    if (sscanf(e.where, "schema field %lu", &idx) == 1 && idx < s->field_count)
        at = t->field_at[idx];
    return dg_error_set(err, DG_E_MALFORMED, at, SCHEMA_WHERE, "%s: %s", e.where, e.msg);
}

static dg_status check_quantum_bits(uint64_t at, const char *what, double q, dg_error *err)
{
    if (isfinite(q) && q > 0.0)
        return DG_OK;
    return dg_error_set(err, DG_E_MALFORMED, at, SCHEMA_WHERE, "expected %s finite and > 0, found %g", what, q);
}

static dg_status parse_head(dg_cur *c, uint64_t base, dg_schema *s, uint32_t *num, uint32_t *den, uint8_t *nf,
                            dg_error *err)
{
    uint8_t mask = dg_cur_u8(c, "u8 stdMask");
    s->std_mask = mask;
    uint64_t pq_at = dg_cur_offset(c);
    s->pos_quantum_m = dg_cur_f64(c, "f64 posQuantum");
    s->vel_quantum_mps = dg_cur_f64(c, "f64 velQuantum");
    uint64_t ratio_at = dg_cur_offset(c);
    *num = dg_cur_u32(c, "u32 predNum");
    *den = dg_cur_u32(c, "u32 predDen");
    uint64_t nf_at = dg_cur_offset(c);
    *nf = dg_cur_u8(c, "u8 fieldCount");
    if (!c->ok)
        return err ? err->code : DG_E_TRUNCATED;
    if (mask & 0x80)
        return dg_error_set(err, DG_E_MALFORMED, base, SCHEMA_WHERE, "expected stdMask bit 7 clear, found 0x%02X", mask);
    if (check_quantum_bits(pq_at, "posQuantum", s->pos_quantum_m, err) ||
        check_quantum_bits(pq_at + 8, "velQuantum", s->vel_quantum_mps, err))
        return err ? err->code : DG_E_MALFORMED;
    if (*num > FLREP_PRED_MAX || *den < 1 || *den > FLREP_PRED_MAX)
        return dg_error_set(err, DG_E_MALFORMED, ratio_at, SCHEMA_WHERE,
                            "expected predNum in 0..1048576 and predDen in 1..1048576, found %u and %u", *num, *den);
    if (*nf > DG_SCHEMA_MAX_FIELDS)
        return dg_error_set(err, DG_E_LIMIT, nf_at, SCHEMA_WHERE, "expected fieldCount <= %d, found %u",
                            DG_SCHEMA_MAX_FIELDS, *nf);
    return DG_OK;
}

dg_status dg_flrep__parse_schema(const uint8_t *buf, size_t len, uint64_t base, flrep_schema2 *out, dg_error *err)
{
    dg_cur c;
    dg_cur_init(&c, buf, len, base, SCHEMA_WHERE, err);
    dg_schema s = {0, 0, 0, NULL, 0};
    uint32_t num = 0, den = 1;
    uint8_t nf = 0;
    dg_status st = parse_head(&c, base, &s, &num, &den, &nf, err);
    if (st != DG_OK)
        return st;
    parse_tmp *t = calloc(1, sizeof *t);
    /* every string's bytes come from the payload: its length bounds them (plus one NUL each, and at
     * most one per two bytes of payload) */
    if (t) {
        t->chars = malloc(len + len / 2 + 2);
        t->names = malloc((len / 2 + 1) * sizeof *t->names);
    }
    if (!t || !t->chars || !t->names) {
        if (t) {
            free(t->chars);
            free(t->names);
        }
        free(t);
        return dg_error_set(err, DG_E_NOMEM, base, SCHEMA_WHERE, "out of memory");
    }
    char *at = t->chars;
    size_t names_used = 0;
    for (size_t f = 0; f < nf && c.ok; f++) {
        t->field_at[f] = dg_cur_offset(&c);
        parse_field(&c, &t->fields[f], &at, t->names, &names_used, f);
    }
    st = c.ok ? DG_OK : (err ? err->code : DG_E_MALFORMED);
    s.fields = t->fields;
    s.field_count = nf;
    if (st == DG_OK)
        st = check_parsed(&s, t, base, err);
    if (st == DG_OK) {   /* a longer payload is a newer minor's: its tail is skipped */
        st = copy_schema(out, &s, err);
        out->pred_num = num;
        out->pred_den = den;
    }
    free(t->chars);
    free(t->names);
    free(t);
    return st;
}
