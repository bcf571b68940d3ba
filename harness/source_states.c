/* harness/source_states.c — the harness's engine-state source: a per-tick entity state stream from
 * any engine, as CSV or JSON Lines (schema: docs/STATES-STREAM.md; JSON parsed by jansson). A file,
 * a pipe or standard input is read once, tick by tick, and recorded as it is read (memory holds one
 * tick, never the stream); a bad line fails the recording, whose temp file the writer removes. */
#include "harness_internal.h"
#include "jsonl_fast.h"
#include "numparse.h"

#include <errno.h>
#include <jansson.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define ST_MAX_COLS (16 + HARNESS_DECL_MAX_FIELDS) /* the standard columns and one per declared field */
#define ST_NAME_MAX 64
#define ST_READ_BLOCK (1 << 16) /* bytes asked of the FILE at a time */

enum { COL_TICK, COL_ID, COL_TYPE, COL_FACTION, COL_PX, COL_PY, COL_PZ, COL_VX, COL_VY, COL_VZ, COL_QW, COL_QX,
       COL_QY, COL_QZ, COL_HEALTH, COL_FLAGS, COL_COUNT_ };
static const char *const k_cols[COL_COUNT_] = {"tick", "id", "type", "faction", "px", "py", "pz", "vx",
                                               "vy", "vz", "qw", "qx", "qy", "qz", "health", "flags"};

/* An entity as parsed, with where it came from (errors found after sorting still name its row). */
typedef struct st_row {
    dg_entity_in e;
    uint64_t line;
    uint32_t index; /* JSONL: its place in "entities" */
    uint32_t slot;  /* its place in the tick as parsed: where its declared fields' slots are (xrows) */
} st_row;

typedef struct st_event {
    dg_event ev;
    char *text;
} st_event;

typedef struct st_source {
    char *path;
    FILE *f;
    bool jsonl;
    char *line;              /* the current line, NUL-terminated in place in buf */
    size_t line_len;         /* its bytes (up to the cut '\r' / '\n') */
    uint64_t buf_base;       /* the stream's byte offset of buf[0] (for a NUL's offset) */
    char *buf;               /* the stream's bytes as read, ST_READ_BLOCK at a time */
    size_t buf_cap, buf_pos, buf_len;
    bool buf_end;            /* the stream is read to its end (or to a read error, in buf_errno) */
    int buf_errno;
    uint64_t lineno;
    int colmap[ST_MAX_COLS]; /* CSV: column position -> COL_* */
    int ncols;
    bool pending;            /* CSV: a row read ahead belongs to the next tick */
    uint64_t pending_tick;
    st_row pending_row;
    uint64_t tick_line;      /* the line the current tick starts on */
    bool have_last_tick;
    uint64_t last_tick;
    st_row *rows;            /* the current tick as parsed; sorted by id into ents */
    dg_entity_in *ents;
    size_t n, cap, cap_ents;
    st_event *events;
    size_t nev, cap_ev;
    dg_event *evs;
    size_t cap_evs;
    /* A declared schema's quantizer check runs per tick, in batches (quant_check_tick): rows_tick is
     * the tick the rows belong to, rows_checked whether that check ran, q its output (discarded). */
    uint64_t rows_tick;
    bool rows_checked;
    dg_qentity *q;
    size_t cap_q;
    bool header_done;        /* the JSONL header line is read once (tables must not move after) */
    bool once;               /* read once (always now): tables fixed before the first tick */
    bool owns_file;          /* a --states FILE: closed by the source, rewound by seeking (detail pass) */
    bool any_tick;           /* a tick was handed out (a file without one is an error of its own) */
    bool unread;             /* the line in `line` is handed out again by the next read_line */
    /* tables (from the JSONL header line, completed with every index the stream uses). Indices 0..255
     * are always in the tables; one above 255 is only when declared: a bitmap (2^16 bits) of those,
     * allocated only when the header declares one (an open costs what was declared, not 2^16). */
    uint64_t *type_high, *faction_high;
    dg_flrep_type *types;
    dg_flrep_faction *factions;
    dg_flrep_participant *roster;
    size_t ntypes, nfactions, nroster;
    char *strings;           /* one arena for every table string */
    size_t strings_len, strings_cap;
    char scenario[ST_NAME_MAX + 1];
    /* declared fields (harness/schema_decl.c): the schema lives in the source's decl */
    harness__decl *decl;     /* = &source->decl */
    bool planet_given;       /* the JSONL header gave planet_radius_m */
    const dg_schema *schema; /* its codec form once read (quanta for the quantizer's checks), else NULL */
    harness__schema_view view;
    bool decl_read;          /* the declaration lines were read (a rewind does not read them again) */
    size_t nx;               /* declared extra fields: slots per entity */
    int64_t cur_x[HARNESS_DECL_MAX_FIELDS];     /* the row being parsed */
    int64_t pending_x[HARNESS_DECL_MAX_FIELDS]; /* CSV: the row read ahead */
    int64_t *xrows, *xents;  /* the tick's slots as parsed / sorted like ents */
    size_t cap_xrows, cap_xents;
    int xfloat[HARNESS_DECL_MAX_FIELDS]; /* a field's place among the float fields, -1 for another type */
    size_t nxraw;            /* float fields: their raw values join the raw float hash */
    double cur_xraw[HARNESS_DECL_MAX_FIELDS], pending_xraw[HARNESS_DECL_MAX_FIELDS];
    double *xrows_raw, *xents_raw;
    size_t cap_xrows_raw, cap_xents_raw;
    harness__jsonl_tick fast; /* JSONL: the common tick line, parsed without jansson */
} st_source;

/* ---- errors and small parsers ------------------------------------------------------------------ */

static dg_status st_err(st_source *p, dg_error *err, unsigned col, const char *fmt, const char *a, const char *b)
{
    char where[96];
    snprintf(where, sizeof where, "%s:%llu:%u", p->path, (unsigned long long)p->lineno, col);
    return dg_error_set(err, DG_E_SYNTAX, DG_OFFSET_NONE, where, fmt, a ? a : "", b ? b : "");
}

static dg_status st_verr(st_source *p, dg_error *err, dg_status code, uint64_t line, unsigned col, const char *fmt,
                         va_list ap)
{
    char where[96], msg[sizeof err->msg];
    snprintf(where, sizeof where, "%s:%llu:%u", p->path, (unsigned long long)line, col);
    vsnprintf(msg, sizeof msg, fmt, ap);
    return dg_error_set(err, code, DG_OFFSET_NONE, where, "%s", msg);
}

/* An error at a given line (column 1): "FILE:LINE:1", the status, the message. */
__attribute__((format(printf, 5, 6))) static dg_status st_err_at(st_source *p, dg_error *err, dg_status code,
                                                                 uint64_t line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dg_status st = st_verr(p, err, code, line, 1, fmt, ap);
    va_end(ap);
    return st;
}

/* A syntax error at the current line and a column. */
__attribute__((format(printf, 4, 5))) static dg_status st_err_col(st_source *p, dg_error *err, unsigned col,
                                                                  const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dg_status st = st_verr(p, err, DG_E_SYNTAX, p->lineno, col, fmt, ap);
    va_end(ap);
    return st;
}

/* Text safe to quote in a message (cap >= 8): printable ASCII kept, anything else '?', text longer
 * than the room cut with "...". */
static void printable(const char *s, char *out, size_t cap)
{
    size_t len = strlen(s), keep = len < cap ? len : cap - 4;
    for (size_t i = 0; i < keep; i++)
        out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    if (keep < len)
        memcpy(out + keep, "...", 4);
    else
        out[keep] = 0;
}

static bool parse_u64(const char *s, size_t len, uint64_t *out)
{
    if (len == 0 || len > 20)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static bool parse_f64(const char *s, size_t len, double *out)
{
    return dg_harness__parse_f64(s, len, out); /* strtod's value; plain decimals without strtod */
}

/* ---- growing arrays ----------------------------------------------------------------------------- */

static dg_status grow(void **arr, size_t *cap, size_t need, size_t elem, dg_error *err)
{
    return dg_grow(arr, cap, need, elem)
               ? DG_OK
               : dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "state stream", "out of memory");
}

static void clear_tick(st_source *p)
{
    for (size_t i = 0; i < p->nev; i++)
        free(p->events[i].text);
    p->n = 0;
    p->nev = 0;
    p->rows_checked = false;
}

/* "entity 7" for a CSV row, "entity 7 (entities[2])" for a JSONL one. */
static void entity_name(const st_source *p, const st_row *r, char *out, size_t cap)
{
    if (p->jsonl)
        snprintf(out, cap, "entity %u (entities[%u])", r->e.id, r->index);
    else
        snprintf(out, cap, "entity %u", r->e.id);
}

/* The row's declared-field slots (cur_x), kept by its place in the tick until the tick is sorted. */
static dg_status add_extras(st_source *p, dg_error *err)
{
    if (grow((void **)&p->xrows, &p->cap_xrows, (p->n + 1) * p->nx, sizeof *p->xrows, err) != DG_OK ||
        grow((void **)&p->xrows_raw, &p->cap_xrows_raw, (p->n + 1) * p->nxraw + 1, sizeof *p->xrows_raw, err))
        return err->code;
    memcpy(p->xrows + p->n * p->nx, p->cur_x, p->nx * sizeof *p->xrows);
    memcpy(p->xrows_raw + p->n * p->nxraw, p->cur_xraw, p->nxraw * sizeof *p->xrows_raw);
    return DG_OK;
}

/* The sorted tick's slots (xents[i * nx + f] for ents[i]). */
static dg_status sort_extras(st_source *p, dg_error *err)
{
    if (grow((void **)&p->xents, &p->cap_xents, p->n * p->nx, sizeof *p->xents, err) != DG_OK ||
        grow((void **)&p->xents_raw, &p->cap_xents_raw, p->n * p->nxraw + 1, sizeof *p->xents_raw, err) != DG_OK)
        return err->code;
    for (size_t i = 0; i < p->n; i++) {
        memcpy(p->xents + i * p->nx, p->xrows + (size_t)p->rows[i].slot * p->nx, p->nx * sizeof *p->xents);
        memcpy(p->xents_raw + i * p->nxraw, p->xrows_raw + (size_t)p->rows[i].slot * p->nxraw,
               p->nxraw * sizeof *p->xents_raw);
    }
    return DG_OK;
}

/* True when dg_quant_entity (the legacy schema) certainly accepts e: its comparisons on position and
 * velocity (a product by a power of two, exact), a squared rotation norm ten times above its 1e-30
 * floor (so no difference of rounding between two sums matters), a health that is a number. The
 * record side quantizes every entity anyway; the quantizer runs here only when this says no, to
 * accept what it accepts or to name the field it refuses — quantizing each row twice was a tenth
 * of a CSV stream's time. */
static bool legacy_certainly_quantizes(const dg_entity_in *e)
{
    bool ok = e->id != 0 && !isnan(e->health);
    for (int i = 0; i < 3; i++) {
        double sp = e->pos[i] * DG_QPOS_PER_M, sv = e->vel[i] * DG_QVEL_PER_MPS;
        ok &= sp > -2147483647.5 && sp < 2147483647.5 && sv > -2147483647.5 && sv < 2147483647.5;
    }
    double n2 = e->rot[0] * e->rot[0] + e->rot[1] * e->rot[1] + e->rot[2] * e->rot[2] + e->rot[3] * e->rot[3];
    return ok && n2 > 1e-29 && n2 < DBL_MAX;
}

/* The error of a row the quantizer refuses: the row's line, the tick, the entity, the quantizer's words. */
static dg_status quant_error(st_source *p, uint64_t tick, const st_row *r, const dg_error *qerr, dg_error *err)
{
    char who[64];
    entity_name(p, r, who, sizeof who);
    dg_error_clear(err);
    return st_err_at(p, err, qerr->code, r->line, "tick %llu, %s: %s", (unsigned long long)tick, who, qerr->msg);
}

/* The row the quantizer refuses first in the order the rows came (slot), one by one: the error the
 * rows would have given checked as they were read. DG_OK (err untouched) when it takes them all. */
static dg_status quant_first_refused(st_source *p, dg_error *err)
{
    const st_row *first = NULL;
    dg_error qerr, ferr;
    dg_error_clear(&ferr);
    for (size_t i = 0; i < p->n; i++) {
        dg_qentity q;
        dg_error_clear(&qerr);
        if (dg_quant_entity_schema(p->schema, &p->rows[i].e, &q, &qerr) != DG_OK &&
            (!first || p->rows[i].slot < first->slot)) {
            first = &p->rows[i];
            ferr = qerr;
        }
    }
    return first ? quant_error(p, p->rows_tick, first, &ferr, err) : DG_OK;
}

/* A declared schema: the tick's entities (ents, in id order) through the batch quantizer, which takes
 * what dg_quant_entity_schema takes; when it refuses one, the first refused in the rows' own order is
 * named, as a check row by row would have named it. */
static dg_status quant_check_tick(st_source *p, dg_error *err)
{
    if (!p->schema || p->n == 0)
        return DG_OK;
    if (grow((void **)&p->q, &p->cap_q, p->n, sizeof *p->q, err) != DG_OK)
        return err->code;
    p->rows_checked = true; /* from here its verdict is this function's */
    dg_error qerr;
    dg_error_clear(&qerr);
    if (dg_quant_entities_schema(p->schema, p->ents, p->q, p->n, NULL, &qerr) != DG_OK &&
        quant_first_refused(p, err) != DG_OK)
        return err->code;
    return DG_OK;
}

/* Checks an entity as the quantizer will (the record side quantizes it later, where its row is no
 * longer known), and the per-tick entity limit of the .flrep writer, then adds it to the tick. */
static dg_status add_entity(st_source *p, uint64_t tick, const dg_entity_in *e, uint64_t line, uint32_t index,
                            dg_error *err)
{
    st_row r = {*e, line, index, (uint32_t)p->n};
    if (p->decl->declared && p->decl->std_mask != HARNESS_STD_ALL)
        dg_harness__decl_zero_absent(p->decl, &r.e);
    e = &r.e;
    char who[64];
    if (p->n == UINT16_MAX) {
        entity_name(p, &r, who, sizeof who);
        return st_err_at(p, err, DG_E_RANGE, line, "tick %llu: expected at most 65535 entities per tick, found "
                         "more (%s is the 65536th)", (unsigned long long)tick, who);
    }
    dg_qentity q;
    dg_error qerr;
    dg_error_clear(&qerr);
    /* a declared schema is checked when the tick is complete (quant_check_tick), in batches */
    if (p->schema == NULL && !legacy_certainly_quantizes(e) && dg_quant_entity_schema(NULL, e, &q, &qerr) != DG_OK)
        return quant_error(p, tick, &r, &qerr, err);
    p->rows_tick = tick;
    if (grow((void **)&p->rows, &p->cap, p->n + 1, sizeof *p->rows, err) != DG_OK)
        return err->code;
    if (p->nx && add_extras(p, err) != DG_OK)
        return err->code;
    if (p->n == 0)
        p->tick_line = line;
    p->rows[p->n++] = r;
    return DG_OK;
}

/* Whether a type / faction index has a table entry: 0..255 always, one above only when declared. */
static bool index_known(const uint64_t *high, uint16_t i)
{
    return i < 256 || (high && (high[i >> 6] >> (i & 63) & 1));
}

/* By id, then by where it came from: of two rows with one id, the later one is the duplicate. */
static int cmp_row(const void *a, const void *b)
{
    const st_row *x = a, *y = b;
    if (x->e.id != y->e.id)
        return x->e.id < y->e.id ? -1 : 1;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Sorts the tick's entities by id into ents and rejects duplicates (at the duplicate's row) and ticks
 * that do not increase (at the tick's first row). */
static dg_status finish_tick(st_source *p, uint64_t tick, dg_error *err)
{
    bool sorted = true;   /* engines usually dump in id order: no sort then */
    for (size_t i = 1; i < p->n && sorted; i++)
        sorted = cmp_row(&p->rows[i - 1], &p->rows[i]) < 0;
    if (!sorted)
        qsort(p->rows, p->n, sizeof *p->rows, cmp_row);
    if (grow((void **)&p->ents, &p->cap_ents, p->n, sizeof *p->ents, err) != DG_OK)
        return err->code;
    for (size_t i = 0; i < p->n; i++)
        p->ents[i] = p->rows[i].e;
    if (quant_check_tick(p, err) != DG_OK) /* a refused value comes before what the tick as a whole breaks */
        return err->code;
    for (size_t i = 0; i < p->n; i++) {
        const st_row *r = &p->rows[i];
        if (i > 0 && r->e.id == r[-1].e.id) {
            if (p->jsonl)
                return st_err_at(p, err, DG_E_SYNTAX, r->line, "tick %llu: entity %u appears twice (entities[%u] and "
                                 "entities[%u])", (unsigned long long)tick, r->e.id, r[-1].index, r->index);
            return st_err_at(p, err, DG_E_SYNTAX, r->line, "tick %llu: entity %u appears twice (first on line %llu)",
                             (unsigned long long)tick, r->e.id, (unsigned long long)r[-1].line);
        }
        if (p->once && (!index_known(p->type_high, r->e.type_index) ||
                        !index_known(p->faction_high, r->e.faction_index)))
            return st_err_at(p, err, DG_E_SYNTAX, r->line, "tick %llu, entity %u: type/faction %u/%u is above 255 "
                             "and not declared in the header line (a stream read once declares its tables before "
                             "its first tick)", (unsigned long long)tick, r->e.id, r->e.type_index, r->e.faction_index);
    }
    if (p->have_last_tick && tick <= p->last_tick)
        return st_err_at(p, err, DG_E_SYNTAX, p->tick_line, "ticks must increase: expected a tick after %llu, "
                         "found %llu", (unsigned long long)p->last_tick, (unsigned long long)tick);
    if (p->nx && sort_extras(p, err) != DG_OK)
        return err->code;
    p->have_last_tick = true;
    p->last_tick = tick;
    return DG_OK;
}

/* Makes room for ST_READ_BLOCK more bytes (and the NUL after them) behind buf_len, the unread bytes
 * moved to the front. */
static bool buf_room(st_source *p)
{
    if (p->buf_pos)
        memmove(p->buf, p->buf + p->buf_pos, p->buf_len - p->buf_pos);
    p->buf_base += p->buf_pos;
    p->buf_len -= p->buf_pos;
    p->buf_pos = 0;
    size_t need = p->buf_len + ST_READ_BLOCK + 1;
    return dg_grow((void **)&p->buf, &p->buf_cap, need, 1);
}

/* The next line, in place in buf ('\n' and any '\r' before it cut): 1, 0 at the end, -1 on a read
 * error. Lines are cut from large reads, not through getline and the FILE's lock line by line; a
 * last line without '\n' is handed out as getline would, then the read error if one ended it. */
static int read_line(st_source *p, dg_error *err)
{
    if (p->unread)
        return p->unread = false, 1;
    if (!p->buf && !buf_room(p)) /* the first read: the buffer, before any pointer into it */
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, p->path, "out of memory"), -1;
    for (;;) {
        char *start = p->buf + p->buf_pos;
        size_t avail = p->buf_len - p->buf_pos;
        char *nl = avail ? memchr(start, '\n', avail) : NULL;
        if (nl || (p->buf_end && avail)) {
            size_t n = nl ? (size_t)(nl - start) : avail;
            p->buf_pos += nl ? n + 1 : n;
            p->lineno++;
            /* the parsers read a line as a C string: a NUL would end it early, a line holding only
             * NULs would pass for blank */
            const char *nul = memchr(start, 0, n);
            if (nul)
                return st_err_col(p, err, (unsigned)(nul - start) + 1,
                                  "expected text, found a NUL byte (0x00) at byte offset %llu",
                                  (unsigned long long)(p->buf_base + (uint64_t)(nul - p->buf))), -1;
            start[n] = 0; /* buf_room keeps a byte behind the data for it */
            while (n > 0 && start[n - 1] == '\r')
                start[--n] = 0;
            p->line = start;
            p->line_len = n;
            return 1;
        }
        if (p->buf_end && p->buf_errno)
            return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, p->path, "read failed: %s", strerror(p->buf_errno)), -1;
        if (p->buf_end)
            return 0;
        if (!buf_room(p))
            return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, p->path, "out of memory"), -1;
        errno = 0;
        size_t want = p->buf_cap - 1 - p->buf_len, got = fread(p->buf + p->buf_len, 1, want, p->f);
        p->buf_len += got;
        if (got < want) { /* fread stops short only at the end or on an error */
            p->buf_end = true;
            p->buf_errno = ferror(p->f) ? (errno ? errno : EIO) : 0;
        }
    }
}

/* Forgets what was read ahead (the stream was moved: a rewind). */
static void buf_reset(st_source *p)
{
    p->buf_pos = p->buf_len = 0;
    p->buf_base = 0;
    p->buf_end = false;
    p->buf_errno = 0;
}

/* ---- CSV --------------------------------------------------------------------------------------- */

/* The standard field a column belongs to (HARNESS_STD_* bit), 0 for tick and id. */
static uint32_t col_std(int k)
{
    return k == COL_TYPE ? HARNESS_STD_TYPE : k == COL_FACTION ? HARNESS_STD_FACTION
           : k >= COL_PX && k <= COL_PZ ? HARNESS_STD_POS : k >= COL_VX && k <= COL_VZ ? HARNESS_STD_VEL
           : k >= COL_QW && k <= COL_QZ ? HARNESS_STD_ROT : k == COL_HEALTH ? HARNESS_STD_HEALTH
           : k == COL_FLAGS ? HARNESS_STD_FLAGS : 0;
}

/* A header-row name that is not a standard column: a declared field's, or an error. */
static dg_status csv_header_extra(st_source *p, const char *s, size_t len, unsigned col, int *k, dg_error *err)
{
    char name[64];
    dg_escape_bytes(name, sizeof name, s, len);
    for (size_t f = 0; f < p->nx; f++)
        if (strlen(p->decl->fields[f].name) == len && memcmp(p->decl->fields[f].name, s, len) == 0)
            return *k = COL_COUNT_ + (int)f, DG_OK;
    if (!p->nx)
        return st_err(p, err, col, "expected a column name (tick,id,type,faction,px,py,pz,vx,vy,vz,qw,qx,qy,qz,"
                                   "health,flags), found \"%s\"%s", name, NULL);
    const char *near = NULL;
    size_t best = 3;
    for (size_t f = 0; f < p->nx; f++) {
        size_t d = dg_harness__edit_distance(name, p->decl->fields[f].name);
        if (d < best)
            best = d, near = p->decl->fields[f].name;
    }
    char hint[128] = "";
    if (near)
        snprintf(hint, sizeof hint, " (did you mean the declared field \"%s\"?)", near);
    return st_err_col(p, err, col, "expected a column name (a standard one or a declared field's), found \"%s\"%s",
                      name, hint);
}

static dg_status csv_header(st_source *p, dg_error *err)
{
    const char *s = p->line;
    int seen[COL_COUNT_ + HARNESS_DECL_MAX_FIELDS] = {0};
    p->ncols = 0;
    unsigned col = 1;
    uint32_t mask = p->decl->declared ? p->decl->std_mask : HARNESS_STD_ALL;
    for (;;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        int k = -1;
        for (int c = 0; c < COL_COUNT_; c++)
            if (strlen(k_cols[c]) == len && memcmp(k_cols[c], s, len) == 0)
                k = c;
        char name[64];
        dg_escape_bytes(name, sizeof name, s, len);
        if (k < 0 && csv_header_extra(p, s, len, col, &k, err) != DG_OK)
            return err->code;
        if (k < COL_COUNT_ && col_std(k) && !(mask & col_std(k)))
            return st_err_col(p, err, col, "column \"%s\": %s is not a standard field of the declared schema "
                              "(add it to standard = ...)", name, dg_harness__decl_std_names[__builtin_ctz(col_std(k))]);
        if (seen[k]++)
            return st_err(p, err, col, "column \"%s\" appears twice%s", name, NULL);
        if (p->ncols == ST_MAX_COLS)
            return st_err(p, err, col, "too many columns%s%s", NULL, NULL);
        p->colmap[p->ncols++] = k;
        if (!e)
            break;
        col += (unsigned)len + 1;
        s = e + 1;
    }
    static const int required[] = {COL_TICK, COL_ID, COL_PX, COL_PY, COL_PZ};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!seen[required[i]] && (mask & HARNESS_STD_POS || i < 2))
            return st_err(p, err, 1, "the header row lacks the required column \"%s\"%s", k_cols[required[i]], NULL);
    for (size_t f = 0; f < p->nx; f++)
        if (!seen[COL_COUNT_ + f])
            return st_err(p, err, 1, "the header row lacks the column of the declared field \"%s\"%s",
                          p->decl->fields[f].name, NULL);
    return DG_OK;
}

/* "#! schema KEY=VALUE ..." or "#! field NAME KEY=VALUE ...": a declaration line before the header
 * row (tokens separated by spaces; a value holds no space). */
static dg_status csv_decl_line(st_source *p, dg_error *err)
{
    char *line = p->line + 2, msg[256], where[HARNESS_DECL_WHERE_MAX];
    snprintf(where, sizeof where, "%.120s:%llu", p->path, (unsigned long long)p->lineno);
    char *save = NULL, *kind = strtok_r(line, " \t", &save);
    bool schema = kind && strcmp(kind, "schema") == 0, field = kind && strcmp(kind, "field") == 0;
    if (!schema && !field)
        return st_err_col(p, err, 3, "a declaration line: expected \"#! schema KEY=VALUE ...\" or \"#! field NAME "
                          "KEY=VALUE ...\", found \"#!%.40s\"", kind ? kind : "");
    if (!p->decl->where[0])
        snprintf(p->decl->where, sizeof p->decl->where, "%s", where);
    bool ok = true;
    if (field) {
        char *name = strtok_r(NULL, " \t", &save);
        ok = name ? dg_harness__decl_add_field(p->decl, name, where, msg, sizeof msg)
                  : (snprintf(msg, sizeof msg, "#! field: expected a field name"), false);
    } else {
        p->decl->declared = true;
    }
    for (char *tok; ok && (tok = strtok_r(NULL, " \t", &save)) != NULL;) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            snprintf(msg, sizeof msg, "expected KEY=VALUE, found \"%.40s\"", tok);
            ok = false;
            break;
        }
        *eq = 0;
        ok = schema ? dg_harness__decl_schema_key(p->decl, tok, eq + 1, msg, sizeof msg)
                    : dg_harness__decl_field_key(p->decl, tok, eq + 1, msg, sizeof msg);
        if (!ok)
            return st_err_col(p, err, (unsigned)(tok - p->line) + 1, "%s", msg);
    }
    return ok ? DG_OK : st_err_col(p, err, 1, "%s", msg);
}

/* The declaration is complete (after the last "#!" line or the JSONL header): its rules checked. */
static dg_status decl_done(st_source *p, dg_error *err)
{
    char msg[256];
    size_t bad;
    p->decl_read = true;
    const harness__decl *pre = dg_harness__decl_preset_get();
    if (!p->decl->declared && pre) { /* the project file's declaration, for a stream that says nothing */
        if (!dg_harness__decl_copy(p->decl, pre))
            return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, p->path, "out of memory");
    } else if (!p->decl->declared) {
        return DG_OK;
    } else if (!dg_harness__decl_finish(p->decl, &bad, msg, sizeof msg)) {
        return dg_error_set(err, DG_E_SYNTAX, DG_OFFSET_NONE, bad != SIZE_MAX ? p->decl->fields[bad].where
                            : p->decl->where, "%s", msg);
    }
    p->nx = p->decl->field_count;
    p->nxraw = 0;
    for (size_t f = 0; f < p->nx; f++)
        p->xfloat[f] = p->decl->fields[f].type == HARNESS_FT_FLOAT ? (int)p->nxraw++ : -1;
    dg_harness__decl_view(p->decl, &p->view);
    p->schema = dg_harness__decl_is_legacy(p->decl) ? NULL : &p->view.schema;
    return DG_OK;
}

/* A row with more or fewer fields than the header has columns. */
static dg_status csv_count_error(st_source *p, dg_error *err, unsigned col)
{
    size_t nfields = 1;
    for (const char *q = p->line; (q = strchr(q, ',')) != NULL; q++)
        nfields++;
    return st_err_col(p, err, col, "expected %d fields (one per header column), found %zu", p->ncols, nfields);
}

/* A field that does not parse: its column and range, and the row's tick and entity when the columns
 * before it gave them. */
static dg_status csv_field_error(st_source *p, dg_error *err, unsigned col, int k, const char *field, size_t len,
                                 const uint64_t *tick, uint32_t id)
{
    char row[64] = "", found[40];
    dg_escape_bytes(found, sizeof found, field, len);
    if (tick && id)
        snprintf(row, sizeof row, "tick %llu, entity %u: ", (unsigned long long)*tick, id);
    else if (tick)
        snprintf(row, sizeof row, "tick %llu: ", (unsigned long long)*tick);
    const char *range = k == COL_TICK                        ? "an unsigned integer"
                        : k == COL_ID                        ? "an integer in 1..4294967295"
                        : k <= COL_FACTION || k == COL_FLAGS ? "an integer in 0..65535"
                                                             : "a number (within the double range)";
    return st_err_col(p, err, col, "%scolumn %s: expected %s, found \"%s\"", row, k_cols[k], range, found);
}

/* A declared field's cell into the row's slot. */
static dg_status csv_extra(st_source *p, int f, const char *s, size_t len, unsigned col, const uint64_t *tick,
                           uint32_t id, dg_error *err)
{
    char text[96], msg[256], row[64] = "";
    double raw;
    snprintf(text, sizeof text, "%.*s", (int)(len < 95 ? len : 95), s);
    if (dg_harness__decl_parse_value(&p->decl->fields[f], text, &p->cur_x[f], &raw, msg, sizeof msg)) {
        if (p->xfloat[f] >= 0)
            p->cur_xraw[p->xfloat[f]] = raw;
        return DG_OK;
    }
    if (tick && id)
        snprintf(row, sizeof row, "tick %llu, entity %u: ", (unsigned long long)*tick, id);
    return st_err_col(p, err, col, "%s%s", row, msg);
}

static dg_status csv_row(st_source *p, uint64_t *tick, dg_entity_in *e, dg_error *err)
{
    bool seen_tick = false, seen_id = false;
    memset(e, 0, sizeof *e);
    e->rot[0] = 1.0;
    e->health = 1.0;
    const char *s = p->line, *line_end = p->line + p->line_len;
    unsigned col = 1;
    for (int c = 0; c < p->ncols; c++) {
        int k = p->colmap[c];
        double d = 0;
        size_t len = 0;
        /* a float cell the fast paths take, up to its ',' or the line's end: found and parsed in
         * one scan; an integer cell's digits found by their scan; any other cell is cut at its ','
         * (and parsed, or refused, below) */
        bool parsed = k >= COL_PX && k <= COL_HEALTH && dg_harness__decimal_prefix(s, (size_t)(line_end - s), &d, &len) &&
                      len < 64 && (s[len] == ',' || s[len] == 0);
        bool digits = false;
        if (!parsed && k < COL_COUNT_ && !(k >= COL_PX && k <= COL_HEALTH)) {
            while (s[len] >= '0' && s[len] <= '9')
                len++;
            digits = s[len] == ',' || s[len] == 0;
        }
        const char *end = parsed || digits ? (s[len] == ',' ? s + len : NULL) : strchr(s, ',');
        if (!end && c + 1 < p->ncols)
            return csv_count_error(p, err, col + (unsigned)strlen(s));
        if (end && c + 1 == p->ncols)
            return csv_count_error(p, err, col + (unsigned)(end - s));
        if (!parsed && !digits)
            len = end ? (size_t)(end - s) : strlen(s);
        uint64_t u = 0;
        bool ok;
        switch (k) {
        case COL_TICK: ok = parse_u64(s, len, tick); break;
        case COL_ID: ok = parse_u64(s, len, &u) && u >= 1 && u <= UINT32_MAX; e->id = (uint32_t)u; break;
        case COL_TYPE: ok = parse_u64(s, len, &u) && u <= 65535; e->type_index = (uint16_t)u; break;
        case COL_FACTION: ok = parse_u64(s, len, &u) && u <= 65535; e->faction_index = (uint16_t)u; break;
        case COL_FLAGS: ok = parse_u64(s, len, &u) && u <= 65535; e->flags = (uint16_t)u; break;
        default:
            if (k >= COL_COUNT_) {
                if (csv_extra(p, k - COL_COUNT_, s, len, col, seen_tick ? tick : NULL, seen_id ? e->id : 0, err))
                    return err->code;
                ok = true;
                break;
            }
            ok = parsed || parse_f64(s, len, &d);
            if (k >= COL_PX && k <= COL_PZ)
                e->pos[k - COL_PX] = d;
            else if (k >= COL_VX && k <= COL_VZ)
                e->vel[k - COL_VX] = d;
            else if (k >= COL_QW && k <= COL_QZ)
                e->rot[k - COL_QW] = d;
            else
                e->health = d;
        }
        if (!ok)
            return csv_field_error(p, err, col, k, s, len, seen_tick ? tick : NULL, seen_id ? e->id : 0);
        seen_tick = seen_tick || k == COL_TICK;
        seen_id = seen_id || k == COL_ID;
        col += (unsigned)len + 1;
        s = end ? end + 1 : s + len;
    }
    return DG_OK;
}

/* Reads the next CSV tick (rows until the tick number changes). 1 / 0 end / -1 error. */
static int csv_tick(st_source *p, uint64_t *tick, dg_error *err)
{
    clear_tick(p);
    if (p->pending) {
        *tick = p->pending_tick;
        memcpy(p->cur_x, p->pending_x, p->nx * sizeof *p->cur_x);
        memcpy(p->cur_xraw, p->pending_xraw, p->nxraw * sizeof *p->cur_xraw);
        if (add_entity(p, *tick, &p->pending_row.e, p->pending_row.line, 0, err) != DG_OK)
            return -1;
        p->pending = false;
    }
    int rc;
    while ((rc = read_line(p, err)) == 1) {
        if (p->line[0] == '#' || p->line[0] == 0)
            continue;
        uint64_t t = 0;
        dg_entity_in e;
        if (csv_row(p, &t, &e, err) != DG_OK)
            return -1;
        if (p->n > 0 && t != *tick) {
            p->pending = true;
            p->pending_tick = t;
            p->pending_row = (st_row){e, p->lineno, 0, 0};
            memcpy(p->pending_x, p->cur_x, p->nx * sizeof *p->cur_x);
            memcpy(p->pending_xraw, p->cur_xraw, p->nxraw * sizeof *p->cur_xraw);
            break;
        }
        *tick = t;
        if (add_entity(p, t, &e, p->lineno, 0, err) != DG_OK)
            return -1;
    }
    if (rc < 0)
        return -1;
    if (p->n == 0)
        return 0;
    return finish_tick(p, *tick, err) == DG_OK ? 1 : -1;
}

/* ---- JSON Lines -------------------------------------------------------------------------------- */

/* The members each kind of object accepts: anything else is an error (a typo must not silently drop a
 * value, as CSV's header row refuses an unknown column). */
static const char *const k_header_members[] = {"detgate_states", "scenario", "tick_rate_hz", "planet_radius_m", "schema",
                                               "keyframe_interval", "types", "factions", "participants", NULL};
static const char *const k_tick_members[] = {"tick", "entities", "events", NULL};
static const char *const k_entity_members[] = {"id", "type", "faction", "pos", "vel", "rot", "health", "flags", NULL};
static const char *const k_event_members[] = {"kind", "a", "b", "c", "d", "text", NULL};
static const char *const k_type_members[] = {"index", "id", "name", "category", "projectile", NULL};
static const char *const k_faction_members[] = {"index", "id", "name", NULL};
static const char *const k_participant_members[] = {"participant_id", "entity_id", "callsign", NULL};

/* Edit distance (Levenshtein) of two short names; names are cut at 63 bytes. */
/* The accepted name a misspelt one most likely meant: within two edits, or one a prefix of the other
 * ("tick_rate" for "tick_rate_hz", "velocity" for "vel"); NULL when none is close. */
static const char *nearest_name(const char *key, const char *const *names)
{
    const char *best = NULL;
    size_t best_d = 3;
    for (size_t i = 0; names[i]; i++) {
        size_t d = dg_harness__edit_distance(key, names[i]), lk = strlen(key), ln = strlen(names[i]);
        size_t m = lk < ln ? lk : ln;
        if (m >= 3 && strncmp(key, names[i], m) == 0)
            d = d < 2 ? d : 2;
        if (d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    return best;
}

static dg_status json_known_members(st_source *p, json_t *o, const char *what, const char *const *names,
                                     dg_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        bool known = false;
        for (size_t i = 0; names[i] && !known; i++)
            known = strcmp(key, names[i]) == 0;
        if (known)
            continue;
        char shown[48], hint[48] = "", list[200] = "";
        printable(key, shown, sizeof shown);
        const char *near = nearest_name(key, names);
        if (near)
            snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", near);
        for (size_t i = 0, at = 0; names[i] && at < sizeof list; i++)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "", names[i]);
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "%s: unknown member \"%s\"%s; expected one of: %s", what,
                         shown, hint, list);
    }
    return DG_OK;
}

/* What a JSON value is, for "found ..." ("0", "2.5", "a string", "an array", ...). */
static void json_found(json_t *v, char *out, size_t cap)
{
    if (json_is_integer(v))
        snprintf(out, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        snprintf(out, cap, "%.17g", json_real_value(v));
    else
        snprintf(out, cap, "%s", json_is_string(v) ? "a string" : json_is_array(v) ? "an array"
                                 : json_is_object(v) ? "an object" : json_is_true(v) ? "true"
                                 : json_is_false(v) ? "false" : "null");
}

static dg_status json_num_array(st_source *p, json_t *a, const char *what, const char *key, double *out, size_t n,
                                dg_error *err)
{
    char found[48];
    if (!json_is_array(a) || json_array_size(a) != n) {
        if (json_is_array(a))
            snprintf(found, sizeof found, "an array of %zu", json_array_size(a));
        else
            json_found(a, found, sizeof found);
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "%s \"%s\": expected an array of %zu numbers, found %s", what,
                         key, n, found);
    }
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_number(v)) {
            json_found(v, found, sizeof found);
            return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "%s \"%s\"[%zu]: expected a number, found %s", what,
                             key, i, found);
        }
        out[i] = json_number_value(v);
    }
    return DG_OK;
}

/* An optional unsigned member in min..max (dflt when absent). */
static dg_status json_uint(st_source *p, json_t *o, const char *what, const char *key, uint64_t min, uint64_t max,
                           uint64_t dflt, uint64_t *out, dg_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!v) {
        *out = dflt;
        return DG_OK;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) < min ||
        (uint64_t)json_integer_value(v) > max) {
        char found[48];
        json_found(v, found, sizeof found);
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "%s \"%s\": expected an integer in %llu..%llu, found %s", what,
                         key, (unsigned long long)min, (unsigned long long)max, found);
    }
    *out = (uint64_t)json_integer_value(v);
    return DG_OK;
}

/* An entity's members under a declared schema: the standard ones the schema has, and its declared
 * fields; anything else is an error naming the nearest accepted name. */
static dg_status json_entity_members(st_source *p, json_t *o, const char *what, dg_error *err)
{
    const char *names[8 + HARNESS_DECL_MAX_FIELDS + 1];
    size_t n = 0;
    static const uint32_t bit[] = {0, HARNESS_STD_TYPE, HARNESS_STD_FACTION, HARNESS_STD_POS, HARNESS_STD_VEL,
                                   HARNESS_STD_ROT, HARNESS_STD_HEALTH, HARNESS_STD_FLAGS};
    for (size_t i = 0; k_entity_members[i]; i++)
        if (!bit[i] || (p->decl->std_mask & bit[i]))
            names[n++] = k_entity_members[i];
    for (size_t f = 0; f < p->nx; f++)
        names[n++] = p->decl->fields[f].name;
    names[n] = NULL;
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        int k = dg_harness__decl_std_index(key, strlen(key));
        if (k >= 0 && !(p->decl->std_mask & (1u << k)))
            return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "%s: member \"%s\": %s is not a standard field of the "
                             "declared schema (add it to \"standard\")", what, key, key);
    }
    return json_known_members(p, o, what, names, err);
}

/* Every declared field of an entity (each is required) into cur_x. */
static dg_status json_extras(st_source *p, json_t *o, const char *what, dg_error *err)
{
    char msg[256], text[64], found[48];
    for (size_t f = 0; f < p->nx; f++) {
        const harness__field_decl *d = &p->decl->fields[f];
        json_t *v = json_object_get(o, d->name);
        bool ok;
        double raw;
        if (!v)
            return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "%s: the declared field \"%s\" is required", what,
                             d->name);
        raw = json_is_number(v) ? json_number_value(v) : 0;
        if (d->type == HARNESS_FT_FLOAT && json_is_number(v))
            ok = dg_harness__decl_value_f64(d, raw, &p->cur_x[f], msg, sizeof msg);
        else if (json_is_integer(v) || json_is_true(v) || json_is_false(v) || json_is_string(v)) {
            if (json_is_integer(v))
                snprintf(text, sizeof text, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
            else if (!json_is_string(v))
                snprintf(text, sizeof text, "%s", json_is_true(v) ? "true" : "false");
            else
                snprintf(text, sizeof text, "%s", json_string_value(v));
            ok = dg_harness__decl_parse_value(d, text, &p->cur_x[f], &raw, msg, sizeof msg);
        } else {
            json_found(v, found, sizeof found);
            ok = false;
            snprintf(msg, sizeof msg, "field \"%s\": expected a %s value, found %s", d->name,
                     dg_harness__decl_type_name(d->type), found);
        }
        if (!ok)
            return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "%s: %s", what, msg);
        if (p->xfloat[f] >= 0)
            p->cur_xraw[p->xfloat[f]] = raw;
    }
    return DG_OK;
}

static dg_status json_entity(st_source *p, json_t *o, uint64_t tick, size_t index, dg_entity_in *e, dg_error *err)
{
    char what[64];
    snprintf(what, sizeof what, "tick %llu, entities[%zu]", (unsigned long long)tick, index);
    if (!json_is_object(o)) {
        char found[48];
        json_found(o, found, sizeof found);
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "%s: expected an object, found %s", what, found);
    }
    if ((p->decl->declared ? json_entity_members(p, o, what, err)
                           : json_known_members(p, o, what, k_entity_members, err)) != DG_OK)
        return err->code;
    memset(e, 0, sizeof *e);
    e->rot[0] = 1.0;
    e->health = 1.0;
    uint64_t id, type, faction, flags;
    if (!json_object_get(o, "id"))
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "%s: \"id\" is required", what);
    /* (under a declared schema without pos, "pos" may be left out) */
    if (json_uint(p, o, what, "id", 1, UINT32_MAX, 0, &id, err) ||
        json_uint(p, o, what, "type", 0, 65535, 0, &type, err) ||
        json_uint(p, o, what, "faction", 0, 65535, 0, &faction, err) ||
        json_uint(p, o, what, "flags", 0, 65535, 0, &flags, err))
        return err->code;
    e->id = (uint32_t)id;
    e->type_index = (uint16_t)type;
    e->faction_index = (uint16_t)faction;
    e->flags = (uint16_t)flags;
    snprintf(what, sizeof what, "tick %llu, entity %u (entities[%zu])", (unsigned long long)tick, e->id, index);
    json_t *pos = json_object_get(o, "pos");
    bool need_pos = !p->decl->declared || (p->decl->std_mask & HARNESS_STD_POS);
    if (!pos && need_pos)
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "%s: \"pos\" is required", what);
    if (pos && json_num_array(p, pos, what, "pos", e->pos, 3, err) != DG_OK)
        return err->code;
    json_t *v;
    if ((v = json_object_get(o, "vel")) && json_num_array(p, v, what, "vel", e->vel, 3, err) != DG_OK)
        return err->code;
    if ((v = json_object_get(o, "rot")) && json_num_array(p, v, what, "rot", e->rot, 4, err) != DG_OK)
        return err->code;
    if ((v = json_object_get(o, "health"))) {
        if (!json_is_number(v)) {
            char found[48];
            json_found(v, found, sizeof found);
            return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "%s \"health\": expected a number, found %s", what, found);
        }
        e->health = json_number_value(v);
    }
    return p->nx ? json_extras(p, o, what, err) : DG_OK;
}

static int event_kind(json_t *v)
{
    static const char *const names[] = {"", "kill", "spawn", "chat", "admin", "alert"};
    if (json_is_integer(v) && json_integer_value(v) >= 1 && json_integer_value(v) <= 5)
        return (int)json_integer_value(v);
    if (json_is_string(v))
        for (int k = 1; k <= 5; k++)
            if (strcmp(json_string_value(v), names[k]) == 0)
                return k;
    return 0;
}

static dg_status json_event(st_source *p, json_t *o, uint64_t tick, size_t index, dg_error *err)
{
    char what[64], found[48];
    snprintf(what, sizeof what, "tick %llu, events[%zu]", (unsigned long long)tick, index);
    if (!json_is_object(o)) {
        json_found(o, found, sizeof found);
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "%s: expected an object, found %s", what, found);
    }
    if (json_known_members(p, o, what, k_event_members, err) != DG_OK)
        return err->code;
    json_t *kv = json_object_get(o, "kind");
    int kind = event_kind(kv);
    if (!kind) {
        if (json_is_string(kv))
            printable(json_string_value(kv), found, sizeof found);
        else if (kv)
            json_found(kv, found, sizeof found);
        else
            snprintf(found, sizeof found, "none");
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "%s \"kind\": expected 1..5 or kill/spawn/chat/admin/alert, "
                         "found %s", what, found);
    }
    uint64_t a, b, c, d;
    if (json_uint(p, o, what, "a", 0, UINT32_MAX, 0, &a, err) ||
        json_uint(p, o, what, "b", 0, UINT32_MAX, 0, &b, err) ||
        json_uint(p, o, what, "c", 0, 65535, 0, &c, err) || json_uint(p, o, what, "d", 0, 65535, 0, &d, err))
        return err->code;
    json_t *t = json_object_get(o, "text");
    if (t && !json_is_string(t)) {
        json_found(t, found, sizeof found);
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "%s \"text\": expected a string, found %s", what, found);
    }
    size_t tl = t ? json_string_length(t) : 0;
    if (tl > 65535)
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "%s \"text\": expected at most 65535 bytes, found %zu",
                         what, tl);
    if (grow((void **)&p->events, &p->cap_ev, p->nev + 1, sizeof *p->events, err) != DG_OK)
        return err->code;
    st_event *se = &p->events[p->nev];
    memset(se, 0, sizeof *se);
    if (tl) {
        se->text = malloc(tl);
        if (!se->text)
            return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, p->path, "out of memory");
        memcpy(se->text, json_string_value(t), tl);
    }
    se->ev = (dg_event){(uint8_t)kind, tick, (uint32_t)a, (uint32_t)b, (uint16_t)c, (uint16_t)d, se->text,
                        (uint16_t)tl};
    p->nev++;
    return DG_OK;
}

static const char *arena_add(st_source *p, const char *s, size_t len, dg_error *err)
{
    if (grow((void **)&p->strings, &p->strings_cap, p->strings_len + len + 1, 1, err) != DG_OK)
        return NULL;
    size_t at = p->strings_len;
    memcpy(p->strings + at, s, len);
    p->strings[at + len] = 0;
    p->strings_len += len + 1;
    return (const char *)(uintptr_t)at; /* an offset until the arena stops moving (fix_strings) */
}

/* An optional string member of a table entry ("" when absent). */
static dg_status json_str(st_source *p, json_t *o, const char *what, const char *key, const char *dflt,
                          const char **out, dg_error *err)
{
    json_t *v = json_object_get(o, key);
    *out = dflt;
    if (!v)
        return DG_OK;
    if (!json_is_string(v)) {
        char found[48];
        json_found(v, found, sizeof found);
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "%s \"%s\": expected a string, found %s", what, key, found);
    }
    *out = json_string_value(v);
    return DG_OK;
}

static const char *const k_table_names[] = {"types", "factions", "participants"};

static dg_status json_table(st_source *p, json_t *arr, int which, dg_error *err)
{
    if (!arr)
        return DG_OK;
    if (!json_is_array(arr)) {
        char found[48];
        json_found(arr, found, sizeof found);
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "header \"%s\": expected an array, found %s",
                         k_table_names[which], found);
    }
    static const char *const *const members[] = {k_type_members, k_faction_members, k_participant_members};
    size_t n = json_array_size(arr);
    void **dst = which == 0 ? (void **)&p->types : which == 1 ? (void **)&p->factions : (void **)&p->roster;
    size_t elem = which == 0 ? sizeof *p->types : which == 1 ? sizeof *p->factions : sizeof *p->roster;
    *dst = calloc(n + 1, elem);
    if (!*dst)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, p->path, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(arr, i);
        char what[48];
        snprintf(what, sizeof what, "header %s[%zu]", k_table_names[which], i);
        if (!json_is_object(o)) {
            char found[48];
            json_found(o, found, sizeof found);
            return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "%s: expected an object, found %s", what, found);
        }
        const char *ids, *names = NULL;
        if (json_known_members(p, o, what, members[which], err) ||
            json_str(p, o, what, which == 2 ? "callsign" : "id", "", &ids, err) ||
            (which != 2 && json_str(p, o, what, "name", ids, &names, err)))
            return err->code;
        names = names ? names : ids;
        size_t il = strlen(ids) > 65535 ? 65535 : strlen(ids), nl = strlen(names) > 65535 ? 65535 : strlen(names);
        const char *io = arena_add(p, ids, il, err), *no = arena_add(p, names, nl, err);
        if (err->code != DG_OK)
            return err->code;
        uint64_t idx, cat, proj, pid, eid;
        if (which == 0) {
            if (json_uint(p, o, what, "index", 0, 65535, i, &idx, err) ||
                json_uint(p, o, what, "category", 0, 5, 0, &cat, err) ||   /* the values the format defines */
                json_uint(p, o, what, "projectile", 0, 4, 0, &proj, err))
                return err->code;
            p->types[i] = (dg_flrep_type){(uint16_t)idx, {io, (uint16_t)il}, {no, (uint16_t)nl}, (uint8_t)cat,
                                          (uint8_t)proj};
            p->ntypes++;
        } else if (which == 1) {
            if (json_uint(p, o, what, "index", 0, 65535, i, &idx, err))
                return err->code;
            p->factions[i] = (dg_flrep_faction){(uint16_t)idx, {io, (uint16_t)il}, {no, (uint16_t)nl}};
            p->nfactions++;
        } else {
            if (json_uint(p, o, what, "participant_id", 0, UINT32_MAX, i + 1, &pid, err) ||
                json_uint(p, o, what, "entity_id", 0, UINT32_MAX, 0, &eid, err))
                return err->code;
            p->roster[i] = (dg_flrep_participant){(uint32_t)pid, (uint32_t)eid, {io, (uint16_t)il}};
            p->nroster++;
        }
    }
    return DG_OK;
}

static const char *const k_schema_members[] = {"standard", "position_quantum", "velocity_quantum", "fields", NULL};
static const char *const k_field_members[] = {"name", "type", "unit", "quantum", "bits", "length", "values", NULL};

/* A JSON value as the declaration's KEY = VALUE text: numbers as written back, an array of strings
 * as a comma-separated list. False when it has another shape. */
static bool json_decl_text(json_t *v, char *out, size_t cap)
{
    if (json_is_string(v))
        return snprintf(out, cap, "%s", json_string_value(v)) < (int)cap;
    if (json_is_integer(v))
        return snprintf(out, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v)), true;
    if (json_is_real(v))
        return snprintf(out, cap, "%.17g", json_real_value(v)), true;
    if (!json_is_array(v))
        return false;
    size_t at = 0, i;
    json_t *x;
    out[0] = 0;
    json_array_foreach(v, i, x) {
        if (!json_is_string(x) || strchr(json_string_value(x), ','))
            return false;
        at += (size_t)snprintf(out + at, at < cap ? cap - at : 0, "%s%s", i ? "," : "", json_string_value(x));
        if (at >= cap)
            return false;
    }
    return true;
}

/* One member of "schema" or of a field, through the declaration's rules. */
static dg_status json_decl_key(st_source *p, const char *what, const char *key, json_t *v, bool field, dg_error *err)
{
    char text[HARNESS_DECL_ENUM_MAX * (HARNESS_DECL_ENUM_NAME_MAX + 1) + 1], msg[256], found[48];
    if (!json_decl_text(v, text, sizeof text)) {
        json_found(v, found, sizeof found);
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "header %s \"%s\": expected a string, a number or an "
                         "array of strings, found %s", what, key, found);
    }
    bool ok = field ? dg_harness__decl_field_key(p->decl, key, text, msg, sizeof msg)
                    : dg_harness__decl_schema_key(p->decl, key, text, msg, sizeof msg);
    return ok ? DG_OK : st_err_at(p, err, DG_E_SYNTAX, p->lineno, "header %s: %s", what, msg);
}

/* The header's "schema": {"standard": [...], "position_quantum": q, "velocity_quantum": q,
 * "fields": [{"name", "type", "unit", "quantum", "bits", "length", "values"}, ...]}. */
static dg_status json_schema(st_source *p, json_t *o, dg_error *err)
{
    char found[48], what[64], where[HARNESS_DECL_WHERE_MAX], msg[256];
    if (!json_is_object(o)) {
        json_found(o, found, sizeof found);
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "header \"schema\": expected an object, found %s", found);
    }
    if (json_known_members(p, o, "header \"schema\"", k_schema_members, err) != DG_OK)
        return err->code;
    snprintf(where, sizeof where, "%.120s:%llu", p->path, (unsigned long long)p->lineno);
    snprintf(p->decl->where, sizeof p->decl->where, "%s", where);
    p->decl->declared = true;
    const char *key;
    json_t *v, *fields = json_object_get(o, "fields");
    json_object_foreach(o, key, v)
        if (strcmp(key, "fields") != 0 && json_decl_key(p, "\"schema\"", key, v, false, err) != DG_OK)
            return err->code;
    if (fields && !json_is_array(fields)) {
        json_found(fields, found, sizeof found);
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "header \"schema\" \"fields\": expected an array, found %s",
                         found);
    }
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f) {
        snprintf(what, sizeof what, "\"schema\" fields[%zu]", i);
        json_t *name = json_is_object(f) ? json_object_get(f, "name") : NULL;
        if (!json_is_object(f) || !json_is_string(name)) {
            json_found(json_is_object(f) ? (name ? name : f) : f, found, sizeof found);
            return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "header %s: expected an object with a string \"name\", "
                             "found %s", what, json_is_object(f) && !name ? "none" : found);
        }
        if (json_known_members(p, f, what, k_field_members, err) != DG_OK)
            return err->code;
        if (!dg_harness__decl_add_field(p->decl, json_string_value(name), where, msg, sizeof msg))
            return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "header %s: %s", what, msg);
        json_object_foreach(f, key, v)
            if (strcmp(key, "name") != 0 && json_decl_key(p, what, key, v, true, err) != DG_OK)
                return err->code;
    }
    return DG_OK;
}

static dg_status json_header(st_source *p, json_t *o, harness__source *s, dg_error *err)
{
    uint64_t version = 1, rate = 60, kf = 0;
    const char *scenario;
    if (json_known_members(p, o, "header", k_header_members, err) ||
        json_uint(p, o, "header", "detgate_states", 1, 1, 1, &version, err) ||
        json_str(p, o, "header", "scenario", NULL, &scenario, err) ||
        json_uint(p, o, "header", "tick_rate_hz", 1, 100000, 60, &rate, err) ||
        json_uint(p, o, "header", "keyframe_interval", DG_FLREP_KEYFRAME_MIN, DG_FLREP_KEYFRAME_MAX, 0, &kf, err))
        return err->code;
    if (scenario)
        dg_harness__scenario_name(scenario, p->scenario, sizeof p->scenario);
    s->hdr.tick_rate_hz = (uint32_t)rate;
    if (kf)
        s->hdr.keyframe_interval_ticks = (uint32_t)kf;
    json_t *v;
    if ((v = json_object_get(o, "planet_radius_m"))) {
        if (!json_is_number(v) || !(json_number_value(v) > 0)) {
            char found[48];
            json_found(v, found, sizeof found);
            return st_err_at(p, err, DG_E_SYNTAX, p->lineno,
                             "header \"planet_radius_m\": expected a number > 0, found %s", found);
        }
        s->hdr.planet_radius_m = json_number_value(v);
        p->planet_given = true;
    }
    if (json_table(p, json_object_get(o, "types"), 0, err) || json_table(p, json_object_get(o, "factions"), 1, err) ||
        json_table(p, json_object_get(o, "participants"), 2, err))
        return err->code;
    if ((v = json_object_get(o, "schema")) && !p->decl_read && json_schema(p, v, err) != DG_OK)
        return err->code;
    return p->decl_read ? DG_OK : decl_done(p, err);
}

/* One tick object: its members checked, its entities and events parsed. */
static dg_status json_tick_object(st_source *p, json_t *o, uint64_t *tick, dg_error *err)
{
    uint64_t t;
    if (json_known_members(p, o, "tick object", k_tick_members, err) != DG_OK)
        return err->code;
    if (!json_object_get(o, "tick"))
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "expected a \"tick\" member, found none");
    if (json_uint(p, o, "tick object", "tick", 0, UINT64_MAX >> 1, 0, &t, err) != DG_OK)
        return err->code;
    json_t *ents = json_object_get(o, "entities"), *evs = json_object_get(o, "events");
    char found[48];
    if (ents && !json_is_array(ents)) {
        json_found(ents, found, sizeof found);
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "tick %llu \"entities\": expected an array, found %s",
                         (unsigned long long)t, found);
    }
    if (evs && !json_is_array(evs)) {
        json_found(evs, found, sizeof found);
        return st_err_at(p, err, DG_E_SYNTAX, p->lineno, "tick %llu \"events\": expected an array, found %s",
                         (unsigned long long)t, found);
    }
    p->tick_line = p->lineno;
    for (size_t i = 0; ents && i < json_array_size(ents); i++) {
        dg_entity_in e;
        if (json_entity(p, json_array_get(ents, i), t, i, &e, err) != DG_OK ||
            add_entity(p, t, &e, p->lineno, (uint32_t)i, err) != DG_OK)
            return err->code;
    }
    for (size_t i = 0; evs && i < json_array_size(evs); i++)
        if (json_event(p, json_array_get(evs, i), t, i, err) != DG_OK)
            return err->code;
    *tick = t;
    return finish_tick(p, t, err);
}

/* A tick line the fast parser took: the same checks json_tick_object makes after its parse. */
static dg_status json_fast_tick(st_source *p, uint64_t *tick, dg_error *err)
{
    p->tick_line = p->lineno;
    for (size_t i = 0; i < p->fast.n; i++)
        if (add_entity(p, p->fast.tick, &p->fast.ents[i], p->lineno, (uint32_t)i, err) != DG_OK)
            return err->code;
    *tick = p->fast.tick;
    return finish_tick(p, p->fast.tick, err);
}

static int json_tick(st_source *p, harness__source *s, uint64_t *tick, dg_error *err)
{
    clear_tick(p);
    int rc;
    while ((rc = read_line(p, err)) == 1) {
        if (p->line[0] == 0)
            continue;
        /* the fast parser knows the legacy members only: a stream with declarations takes jansson */
        if (!p->decl->declared && dg_harness__jsonl_fast_tick(p->line, &p->fast))
            return json_fast_tick(p, tick, err) == DG_OK ? 1 : -1;
        json_error_t je;
        json_t *o = json_loads(p->line, JSON_REJECT_DUPLICATES, &je);
        if (!o) {
            char where[96];
            snprintf(where, sizeof where, "%s:%llu:%d", p->path, (unsigned long long)p->lineno, je.column);
            dg_error_set(err, DG_E_SYNTAX, DG_OFFSET_NONE, where, "invalid JSON: %s", je.text);
            return -1;
        }
        dg_status st;
        bool header = json_is_object(o) && json_object_get(o, "detgate_states");
        if (!header && !p->decl_read && decl_done(p, err) != DG_OK) /* no header line: the project's schema */
            return json_decref(o), -1;
        char found[48];
        json_found(o, found, sizeof found);
        if (!json_is_object(o))
            st = st_err_at(p, err, DG_E_SYNTAX, p->lineno, "expected a JSON object per line, found %s", found);
        else if (header && p->lineno != 1)
            st = st_err_at(p, err, DG_E_SYNTAX, p->lineno, "expected the header object (\"detgate_states\") on line 1 "
                           "only, found it on line %llu", (unsigned long long)p->lineno);
        else if (header)
            st = p->header_done ? DG_OK : json_header(p, o, s, err);
        else
            st = json_tick_object(p, o, tick, err);
        json_decref(o);
        if (header && st == DG_OK) {
            p->header_done = true;
            continue;
        }
        return st == DG_OK ? 1 : -1;
    }
    return rc < 0 ? -1 : 0;
}

/* ---- the source ------------------------------------------------------------------------------- */

/* A stream file that ends before its first tick (standard input's "produced no tick" is the record
 * side's). */
static dg_status no_tick_error(st_source *p, dg_error *err)
{
    if (p->lineno == 0)
        return dg_error_set(err, DG_E_SYNTAX, DG_OFFSET_NONE, p->path, "empty, expected at least one tick");
    return st_err(p, err, 1, "expected at least one tick, found the end of the stream%s%s", NULL, NULL);
}

static int st_next(harness__source *s, harness__frame *f, dg_error *err)
{
    st_source *p = s->impl;
    uint64_t tick = 0;
    int rc = p->jsonl ? json_tick(p, s, &tick, err) : csv_tick(p, &tick, err);
    if (rc < 0 && p->schema && !p->rows_checked) /* rows read before the error: a refused one is named first */
        quant_first_refused(p, err);
    if (rc == 0 && p->owns_file && !p->any_tick)
        return no_tick_error(p, err), -1;
    if (rc != 1)
        return rc;
    p->any_tick = true;
    if (grow((void **)&p->evs, &p->cap_evs, p->nev, sizeof *p->evs, err) != DG_OK)
        return -1;
    dg_hash_stream hs;
    dg_hash_raw_begin(&hs, tick);
    for (size_t i = 0; i < p->n; i++) /* declared float fields join the raw hash */
        dg_harness__raw_entity(&hs, &p->ents[i], p->nxraw ? p->xents_raw + i * p->nxraw : NULL, p->nxraw);
    for (size_t i = 0; i < p->nev; i++)
        p->evs[i] = p->events[i].ev;
    f->tick = tick;
    f->ents = p->ents;
    f->n = p->n;
    f->events = p->evs;
    f->nev = p->nev;
    f->has_raw = true;
    f->raw = dg_hash_raw_end(&hs);
    f->extras = p->nx ? p->xents : NULL;
    f->xraw = p->nxraw ? p->xents_raw : NULL;
    f->nxraw = p->nxraw;
    f->at = (harness__at){.label = p->path, .at = p->tick_line, .line = true};
    return 1;
}

/* Reads the CSV prologue (comments, declarations, the header row) from where the stream stands. */
static dg_status st_open_file(st_source *p, dg_error *err)
{
    p->pending = false;
    p->have_last_tick = false;
    clear_tick(p);
    if (p->jsonl)
        return DG_OK;
    int rc;
    while ((rc = read_line(p, err)) == 1 && (p->line[0] == '#' || p->line[0] == 0))
        if (!p->decl_read && p->line[0] == '#' && p->line[1] == '!' && csv_decl_line(p, err) != DG_OK)
            return err->code;
    if (rc < 0)
        return err->code;
    if (!p->decl_read && decl_done(p, err) != DG_OK)
        return err->code;
    if (rc == 0 && p->lineno == 0)
        return dg_error_set(err, DG_E_SYNTAX, DG_OFFSET_NONE, p->path, "empty, expected a header line "
                            "(tick,id,px,py,pz,...)");
    if (rc == 0)
        return st_err(p, err, 1, "expected a header row (tick,id,px,py,pz,...), found the end of the file%s%s",
                      NULL, NULL);
    return csv_header(p, err);
}

static dg_status st_rewind(harness__source *s, dg_error *err)
{
    st_source *p = s->impl;
    if (!p->owns_file)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, p->path, "a stream read once cannot be re-read");
    if (fseek(p->f, 0, SEEK_SET) != 0)
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, p->path, "cannot rewind: %s", strerror(errno));
    p->lineno = 0; /* the tables stay as fixed; the JSONL header line is skipped as read */
    p->unread = false;
    clearerr(p->f);
    buf_reset(p);
    return st_open_file(p, err);
}

static void st_destroy(harness__source *s)
{
    st_source *p = s->impl;
    if (!p)
        return;
    clear_tick(p);
    if (p->f && p->owns_file)
        fclose(p->f);
    free(p->path);
    free(p->buf);
    free(p->rows);
    free(p->ents);
    free(p->events);
    free(p->evs);
    free(p->types);
    free(p->factions);
    free(p->type_high);
    free(p->q);
    free(p->faction_high);
    free(p->roster);
    free(p->strings);
    free(p->xrows);
    free(p->xents);
    free(p->xrows_raw);
    free(p->xents_raw);
    dg_harness__jsonl_tick_free(&p->fast);
    free(p);
}

/* Table strings were stored as arena offsets while the arena could still move. */
static void fix_strings(st_source *p)
{
    for (size_t i = 0; i < p->ntypes; i++) {
        p->types[i].id.s = p->strings + (uintptr_t)p->types[i].id.s;
        p->types[i].name.s = p->strings + (uintptr_t)p->types[i].name.s;
    }
    for (size_t i = 0; i < p->nfactions; i++) {
        p->factions[i].id.s = p->strings + (uintptr_t)p->factions[i].id.s;
        p->factions[i].name.s = p->strings + (uintptr_t)p->factions[i].name.s;
    }
    for (size_t i = 0; i < p->nroster; i++)
        p->roster[i].callsign.s = p->strings + (uintptr_t)p->roster[i].callsign.s;
}

/* Marks the declared indices: 0..255 in low, one above in *high (allocated on the first such). */
static bool mark_declared(uint16_t idx, bool low[256], uint64_t **high)
{
    if (idx < 256) {
        low[idx] = true;
        return true;
    }
    if (!*high && !(*high = calloc(65536 / 64, sizeof **high)))
        return false;
    (*high)[idx >> 6] |= 1ull << (idx & 63);
    return true;
}

/* "type<N>" / "faction<N>" into the arena; its offset (fix_strings makes it a pointer). */
static dg_flrep_str undeclared_name(st_source *p, const char *kind, size_t i, dg_error *err)
{
    char name[24];
    int n = snprintf(name, sizeof name, "%s%zu", kind, i);
    return (dg_flrep_str){arena_add(p, name, (size_t)n, err), (uint16_t)n};
}

/* Every index 0..255 the header did not declare gets a table entry ("type<N>" when undeclared), after
 * the declared ones and in increasing order; the declared indices above 255 are marked for the
 * per-tick check. The cost is the 256 indices plus the declared rows, whatever their indices. */
static dg_status complete_tables(st_source *p, dg_error *err)
{
    bool tdecl[256] = {false}, fdecl[256] = {false};
    for (size_t k = 0; k < p->ntypes; k++)
        if (!mark_declared(p->types[k].index, tdecl, &p->type_high))
            return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, p->path, "out of memory");
    for (size_t k = 0; k < p->nfactions; k++)
        if (!mark_declared(p->factions[k].index, fdecl, &p->faction_high))
            return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, p->path, "out of memory");
    dg_flrep_type *t = realloc(p->types, (p->ntypes + 256 + 1) * sizeof *t);
    if (t)
        p->types = t;
    dg_flrep_faction *f = realloc(p->factions, (p->nfactions + 256 + 1) * sizeof *f);
    if (f)
        p->factions = f;
    if (!t || !f)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, p->path, "out of memory");
    for (size_t i = 0; i < 256 && err->code == DG_OK; i++) {
        if (!tdecl[i]) {
            dg_flrep_str n = undeclared_name(p, "type", i, err);
            p->types[p->ntypes++] = (dg_flrep_type){(uint16_t)i, n, n, 0, 0};
        }
        if (!fdecl[i]) {
            dg_flrep_str n = undeclared_name(p, "faction", i, err);
            p->factions[p->nfactions++] = (dg_flrep_faction){(uint16_t)i, n, n};
        }
    }
    return err->code;
}

static bool looks_jsonl(const char *path)
{
    size_t n = strlen(path);
    if ((n > 6 && strcmp(path + n - 6, ".jsonl") == 0) || (n > 7 && strcmp(path + n - 7, ".ndjson") == 0))
        return true;
    if (n > 4 && strcmp(path + n - 4, ".csv") == 0)
        return false;
    FILE *f = fopen(path, "rb");
    int c = EOF;
    while (f && (c = fgetc(f)) != EOF && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
    }
    if (f)
        fclose(f);
    return c == '{';
}

static dg_status st_finish_open(harness__source *s, st_source *p, uint32_t keyframe, dg_error *err)
{
    fix_strings(p);
    snprintf(s->name, sizeof s->name, "%s", p->scenario);
    s->expected_ticks = 0; /* read once: the length is not known ahead */
    s->hdr.major = DG_FLREP_MAJOR;
    s->hdr.minor = DG_FLREP_MINOR;
    s->hdr.engine_version = dg_flrep_cstr(HARNESS_VERSION " states");
    if (keyframe)
        s->hdr.keyframe_interval_ticks = keyframe;
    s->hdr.types = p->types;
    s->hdr.type_count = p->ntypes;
    s->hdr.factions = p->factions;
    s->hdr.faction_count = p->nfactions;
    s->hdr.participants = p->roster;
    s->hdr.participant_count = p->nroster;
    if (p->schema && !p->planet_given)
        s->hdr.planet_radius_m = 0; /* a declared schema assumes no planet unless the stream names one */
    return dg_harness__source_schema_ready(s, err);
}

/* The JSONL header line (if the first line is one) is read now: the tables must be known before the
 * writer opens. Indices 0..255 not declared there are named type<N> / faction<N> up front. */
static dg_status st_open_once(harness__source *s, st_source *p, dg_error *err)
{
    int c;
    while (!p->owns_file && ((c = getc(p->f)) == ' ' || c == '\t' || c == '\r' || c == '\n'))
        p->lineno += c == '\n', p->buf_base++;
    if (!p->owns_file) { /* a file's kind was told by its name or first bytes (looks_jsonl) */
        p->jsonl = c == '{';
        if (c != EOF)
            ungetc(c, p->f);
    }
    dg_status st = st_open_file(p, err);
    if (st == DG_OK && p->jsonl && read_line(p, err) == 1) {
        json_t *o = json_loads(p->line, JSON_REJECT_DUPLICATES, NULL);
        if (json_is_object(o) && json_object_get(o, "detgate_states") && p->lineno == 1) {
            st = json_header(p, o, s, err);
            p->header_done = true;
        } else {
            p->unread = true;
        }
        json_decref(o);
    }
    if (st == DG_OK && !p->decl_read)
        st = decl_done(p, err);
    if (st == DG_OK)
        st = complete_tables(p, err);
    return st;
}

/* file: the stream is a --states FILE (f is the source's: closed with it, rewound by seeking) with
 * jsonl its kind; else a pipe or stdin, its kind told by its first byte. */
static dg_status states_open(harness__source **out, FILE *f, bool file, bool jsonl, const char *label,
                             const char *name, uint32_t keyframe, dg_error *err)
{
    *out = NULL;
    harness__source *s = calloc(1, sizeof *s);
    st_source *p = calloc(1, sizeof *p);
    char *pc = strdup(label);
    if (!s || !p || !pc) {
        free(s);
        free(p);
        free(pc);
        if (file)
            fclose(f);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, label, "out of memory");
    }
    *p = (st_source){.path = pc, .f = f, .once = true, .owns_file = file, .jsonl = jsonl};
    *s = (harness__source){.impl = p, .next = st_next, .rewind = st_rewind, .destroy = st_destroy};
    dg_harness__decl_init(&s->decl);
    p->decl = &s->decl;
    s->hdr.tick_rate_hz = 60;
    s->hdr.planet_radius_m = 6371000.0;
    if (file) /* a file is named by its path unless its header names the scenario */
        dg_harness__scenario_name(name, p->scenario, sizeof p->scenario);
    else
        snprintf(p->scenario, sizeof p->scenario, "%s", name ? name : "stdin");
    dg_status st = st_open_once(s, p, err);
    if (st == DG_OK && name && !file)
        dg_harness__scenario_name(name, p->scenario, sizeof p->scenario);
    if (st == DG_OK)
        st = st_finish_open(s, p, keyframe, err);
    if (st != DG_OK) {
        dg_harness__source_free(s);
        return st;
    }
    *out = s;
    return DG_OK;
}

/* A --states FILE is read once, as standard input is: recorded as it is read, its tables fixed
 * before the first tick (so `--states F` and `--states - <F` record the same bytes). */
dg_status dg_harness__source_states(harness__source **out, const char *path, uint32_t keyframe, dg_error *err)
{
    *out = NULL;
    bool jsonl = looks_jsonl(path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "cannot open: %s", strerror(errno));
    return states_open(out, f, true, jsonl, path, path, keyframe, err);
}

dg_status dg_harness__source_states_stream(harness__source **out, FILE *f, const char *label, const char *name,
                                        uint32_t keyframe, dg_error *err)
{
    return states_open(out, f, false, false, label, name, keyframe, err);
}
