/* harness/raw_values.c — an entity's raw floats by name: what a version 3 hash log carries (the
 * floats the raw hash covers, named), and what two such logs say about a drift: the entity whose raw
 * floats differ first, each differing field with both raw values, and a one-quantum difference that
 * a tiny raw change across a rounding edge made (docs/CLI.md "Raw-float drift"). */
#include "harness_internal.h"

#include <math.h>
#include <string.h>

/* The standard floats an entity_in hands to the quantizer, in the raw hash's order. */
static const char *const raw__std_names[HARNESS_RAW_FIELDS] = {"pos.x", "pos.y", "pos.z", "vel.x", "vel.y", "vel.z",
                                                              "rot.w", "rot.x", "rot.y", "rot.z", "health"};

size_t dg_harness__raw_floats(const dg_entity_in *e, const double *xraw, size_t k, double *out)
{
    const double std[HARNESS_RAW_FIELDS] = {e->pos[0], e->pos[1], e->pos[2], e->vel[0], e->vel[1], e->vel[2],
                                            e->rot[0], e->rot[1], e->rot[2], e->rot[3], e->health};
    memcpy(out, std, sizeof std);
    k = xraw ? (k > HARNESS_DECL_MAX_FIELDS ? HARNESS_DECL_MAX_FIELDS : k) : 0;
    for (size_t i = 0; i < k; i++)
        out[HARNESS_RAW_FIELDS + i] = xraw[i];
    return HARNESS_RAW_FIELDS + k;
}

uint32_t dg_harness__raw_value_names(const harness__decl *d, char *out, size_t cap)
{
    uint32_t n = 0;
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < HARNESS_RAW_FIELDS + (d ? d->field_count : 0); i++) {
        const char *name = i < HARNESS_RAW_FIELDS ? raw__std_names[i] : d->fields[i - HARNESS_RAW_FIELDS].name;
        if (i >= HARNESS_RAW_FIELDS && d->fields[i - HARNESS_RAW_FIELDS].type != HARNESS_FT_FLOAT)
            continue; /* only float fields have raw values (the sources' xraw, in declaration order) */
        int w = snprintf(out + at, cap - at, "%s%s", n ? "," : "", name);
        if (w < 0 || (size_t)w >= cap - at)
            return 0;
        at += (size_t)w;
        n++;
    }
    return n;
}

/* ---- two logs at one tick -------------------------------------------------------------------------- */

/* Reads a hash log up to `tick`; true with *t filled when the tick is there (its arrays stay valid
 * until the reader is freed or read on). */
static bool raw__log_at(dg_hash_log_reader *r, uint64_t tick, dg_hash_log_tick *t)
{
    dg_error err;
    dg_error_clear(&err);
    while (dg_hash_log_reader_next(r, t, &err) == 1)
        if (t->tick >= tick)
            return t->tick == tick;
    return false;
}

/* The k-th name of a values= list into out ("" when there is none). */
static void raw__name_at(const char *values, uint32_t k, char *out, size_t cap)
{
    const char *p = values;
    for (uint32_t i = 0; i < k && p; i++)
        p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
    size_t n = p ? strcspn(p, ",") : 0;
    snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), p ? p : "");
}

/* The index of `name` in a values= list, or -1. */
static int raw__index_of(const char *values, const char *name)
{
    size_t n = strlen(name);
    int k = 0;
    for (const char *p = values; p && *p; k++) {
        size_t len = strcspn(p, ",");
        if (len == n && memcmp(p, name, n) == 0)
            return k;
        p = p[len] ? p + len + 1 : NULL;
    }
    return -1;
}

static double raw__double(uint64_t bits)
{
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* Units in the raw hash's order for the standard floats (a declared float's unit is its schema's,
 * which a log does not carry: "" there). */
static const char *raw__unit_of(const char *name)
{
    return strncmp(name, "pos.", 4) == 0 ? "m" : strncmp(name, "vel.", 4) == 0 ? "m/s" : "";
}

/* A difference for a human: metres and m/s in mm, µm or nm when small (0.2 mm, not 200 µm); else
 * three digits in the unit itself. */
void dg_harness__raw_amount(double d, const char *unit, char *out, size_t cap)
{
    double a = fabs(d);
    bool metric = strcmp(unit, "m") == 0 || strcmp(unit, "m/s") == 0;
    const char *per = strcmp(unit, "m/s") == 0 ? "/s" : "";
    if (metric && a >= 1e-10 && a < 1e-7)
        snprintf(out, cap, "%.3g nm%s", d * 1e9, per);
    else if (metric && a >= 1e-7 && a < 1e-4)
        snprintf(out, cap, "%.3g µm%s", d * 1e6, per);
    else if (metric && a >= 1e-4 && a < 1)
        snprintf(out, cap, "%.3g mm%s", d * 1e3, per);
    else
        snprintf(out, cap, "%.3g%s%s", d, *unit ? " " : "", unit);
}

/* How many representable doubles lie between a and b (same sign, finite), or 0 when not counted. */
static uint64_t raw__ulps(uint64_t a, uint64_t b)
{
    if ((a >> 63) != (b >> 63) || !isfinite(raw__double(a)) || !isfinite(raw__double(b)))
        return 0;
    return a > b ? a - b : b - a;
}

/* One field's two raw values, exactly (%.17g and the hex float), as a detail line of c; the first
 * such field also into first ("vel.z: raw A ..., B ..., 1 ulp", for the check's message). */
static void raw__value_line(dg_report_check *c, uint64_t tick, uint32_t id, const char *name, uint64_t a, uint64_t b,
                            char *first, size_t cap, harness__raw_first *rf)
{
    double va = raw__double(a), vb = raw__double(b);
    char diff[64];
    dg_harness__raw_amount(vb - va, raw__unit_of(name), diff, sizeof diff);
    uint64_t ulps = raw__ulps(a, b);
    char ulp[48] = "";
    if (ulps)
        snprintf(ulp, sizeof ulp, ", %llu ulp%s", (unsigned long long)ulps, ulps == 1 ? "" : "s");
    dg_report_check_add_detail(c, "tick %llu entity %u %s: raw A %.17g (%a), B %.17g (%a): B - A = %s%s",
                               (unsigned long long)tick, (unsigned)id, name, va, va, vb, vb, diff, ulp);
    if (first && !first[0])
        snprintf(first, cap, "%s: raw A %.17g, B %.17g (B - A = %s%s)", name, va, vb, diff, ulp);
    if (rf && !rf->field[0]) {
        snprintf(rf->field, sizeof rf->field, "%s", name);
        rf->a = va;
        rf->b = vb;
    }
}

/* Entity `i` of ta and `j` of tb (the same id): every raw value that differs, as detail lines. */
static void raw__entity_values(dg_report_check *c, const dg_hash_log_header *ha, const dg_hash_log_tick *ta,
                               uint32_t i, const dg_hash_log_header *hb, const dg_hash_log_tick *tb, uint32_t j,
                               char *first, size_t cap, harness__raw_first *rf)
{
    for (uint32_t v = 0; v < ha->n_values; v++) {
        char name[DG_HASH_LOG_NAME_MAX + 1];
        raw__name_at(ha->values, v, name, sizeof name);
        int w = raw__index_of(hb->values, name); /* matched by name: the two logs may list others */
        if (w < 0)
            continue;
        uint64_t a = ta->raw_bits[(size_t)i * ha->n_values + v], b = tb->raw_bits[(size_t)j * hb->n_values + (uint32_t)w];
        if (a != b)
            raw__value_line(c, ta->tick, ta->ids[i], name, a, b, first, cap, rf);
    }
}

uint32_t dg_harness__raw_locate(dg_report_check *c, const char *log_a, const char *log_b, uint64_t tick, char *first_field,
                                size_t cap, harness__raw_first *rf)
{
    if (first_field && cap)
        first_field[0] = '\0';
    if (rf)
        *rf = (harness__raw_first){0};
    dg_hash_log_reader *ra = NULL, *rb = NULL;
    dg_error err;
    dg_error_clear(&err);
    uint32_t first = 0, n = 0, total = 0, fi = 0, fj = 0;
    char ids[160] = "";
    dg_hash_log_tick ta, tb;
    bool at = dg_hash_log_reader_open(&ra, log_a, &err) == DG_OK && dg_hash_log_reader_open(&rb, log_b, &err) == DG_OK &&
              raw__log_at(ra, tick, &ta) && raw__log_at(rb, tick, &tb) && ta.raw_hashes && tb.raw_hashes;
    for (uint32_t i = 0, j = 0; at && i < ta.entity_count && j < tb.entity_count;) {
        if (ta.ids[i] != tb.ids[j]) {
            ta.ids[i] < tb.ids[j] ? i++ : j++;
            continue;
        }
        if (ta.raw_hashes[i] != tb.raw_hashes[j]) {
            if (!n++)
                first = ta.ids[i], fi = i, fj = j;
            size_t len = strlen(ids);
            if (n <= 8)
                snprintf(ids + len, sizeof ids - len, "%s%u", n > 1 ? ", " : "", (unsigned)ta.ids[i]);
        }
        i++, j++;
    }
    total = at ? ta.entity_count : 0;
    if (n)
        dg_report_check_add_detail(c, "tick %llu: raw floats differ in %u of %u entit%s: %s%s",
                                   (unsigned long long)tick, (unsigned)n, (unsigned)total, total == 1 ? "y" : "ies",
                                   ids, n > 8 ? ", ..." : "");
    if (n && ta.raw_bits && tb.raw_bits) /* version 3 on both sides: the fields and both values */
        raw__entity_values(c, dg_hash_log_reader_header(ra), &ta, fi, dg_hash_log_reader_header(rb), &tb, fj, first_field, cap,
                           rf);
    if (rf)
        rf->entity = first;
    dg_hash_log_reader_close(ra);
    dg_hash_log_reader_close(rb);
    return first;
}

bool dg_harness__log_has_raw_values(const char *path)
{
    dg_hash_log_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    bool has = dg_hash_log_reader_open(&r, path, &err) == DG_OK && dg_hash_log_reader_header(r)->n_values > 0;
    dg_hash_log_reader_close(r);
    return has;
}

void dg_harness__golden_raw_message(dg_report_check *c, const char *gl, const char *fresh_raw, const harness__decl *d,
                                    uint64_t first_raw, const char *hint, const char *note, harness__raw_first *rf)
{
    char field[200] = "", where[260] = "", names[DG_HASH_LOG_VALUES_CAP] = "";
    if (rf)
        *rf = (harness__raw_first){0};
    uint32_t who = fresh_raw ? dg_harness__raw_locate(c, gl, fresh_raw, first_raw, field, sizeof field, rf) : 0;
    if (who) {
        snprintf(where, sizeof where, ", first in entity %u%s%s", (unsigned)who, field[0] ? ", " : "", field);
    } else {
        dg_harness__raw_value_names(d, names, sizeof names);
        snprintf(where, sizeof where, "; hashed raw floats %.200s", names);
        dg_report_check_add_detail(c, "the golden hash log keeps one raw hash per tick, not which entity or field "
                                      "drifted: %s", hint);
    }
    /* the entity before the parenthesis, the hashed floats inside it */
    dg_report_check_set_message(c, "quantized state identical to the golden; raw floats differ from tick %llu%s "
                                   "(sub-quantum drift%s)%s%s",
                                (unsigned long long)first_raw, who ? where : "", who ? "" : where, note ? ": " : "",
                                note ? note : "");
}

/* ---- a one-quantum difference and the raw change behind it ---------------------------------------- */

/* The raw bits of entity `id`'s value `name` in t (false when the log has neither). */
static bool raw__value_of(const dg_hash_log_header *h, const dg_hash_log_tick *t, uint32_t id, const char *name,
                          uint64_t *out)
{
    int k = t->raw_bits ? raw__index_of(h->values, name) : -1;
    for (uint32_t i = 0; k >= 0 && i < t->entity_count; i++)
        if (t->ids[i] == id) {
            *out = t->raw_bits[(size_t)i * h->n_values + (uint32_t)k];
            return true;
        }
    return false;
}

/* A field that moved one quantum: what the raw values did, as a detail line. */
static void raw__edge_line(dg_report_check *c, uint64_t tick, uint32_t id, const dg_report_field *f, uint64_t a,
                           uint64_t b)
{
    double va = raw__double(a), vb = raw__double(b);
    char q[64], r[64];
    dg_harness__raw_amount(fabs(f->delta), f->unit, q, sizeof q);
    dg_harness__raw_amount(fabs(vb - va), f->unit, r, sizeof r);
    bool tiny = fabs(vb - va) < fabs(f->delta) / 2;
    dg_report_check_add_detail(c, "tick %llu entity %u %s: 1 quantum (%s) from a raw change of %s%s: raw A %.17g, "
                                  "B %.17g",
                               (unsigned long long)tick, (unsigned)id, f->name, q, r,
                               tiny ? " across a rounding edge" : "", va, vb);
}

void dg_harness__raw_edges(dg_report_check *c, const char *log_a, const char *log_b)
{
    dg_hash_log_reader *ra = NULL, *rb = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (dg_hash_log_reader_open(&ra, log_a, &err) != DG_OK || dg_hash_log_reader_open(&rb, log_b, &err) != DG_OK ||
        !dg_hash_log_reader_header(ra)->n_values || !dg_hash_log_reader_header(rb)->n_values) {
        dg_hash_log_reader_close(ra);
        dg_hash_log_reader_close(rb);
        return;
    }
    dg_hash_log_tick ta, tb;
    bool open = true;
    for (uint32_t k = 0; open && k < c->n_ticks; k++) { /* the detailed ticks, in increasing order */
        const dg_report_tick *t = c->ticks[k];
        if (!raw__log_at(ra, t->tick, &ta) || !raw__log_at(rb, t->tick, &tb)) {
            open = false; /* a reader that passed or lost the tick cannot go back */
            break;
        }
        for (uint32_t e = 0; e < t->n_entities; e++)
            for (uint32_t f = 0; f < t->entities[e].n_fields; f++) {
                const dg_report_field *fd = &t->entities[e].fields[f];
                uint64_t a, b;
                if (t->entities[e].kind == DG_REPORT_ENTITY_CHANGED && fd->has_quanta && fd->has_values &&
                    (fd->delta_q == 1 || fd->delta_q == -1) &&
                    raw__value_of(dg_hash_log_reader_header(ra), &ta, t->entities[e].id, fd->name, &a) &&
                    raw__value_of(dg_hash_log_reader_header(rb), &tb, t->entities[e].id, fd->name, &b))
                    raw__edge_line(c, t->tick, t->entities[e].id, fd, a, b);
            }
    }
    dg_hash_log_reader_close(ra);
    dg_hash_log_reader_close(rb);
}
