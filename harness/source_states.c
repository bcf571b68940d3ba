/* harness/source_states.c — the harness's engine-state source: a per-tick entity state stream from
 * any engine, as CSV or JSON Lines (schema: docs/STATES-STREAM.md; JSON parsed by jansson). The
 * whole stream is validated once when it is opened, so bad input fails before anything is recorded;
 * recording then reads it again tick by tick (memory holds one tick, never the stream). */
#include "harness_internal.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define ST_MAX_COLS 16
#define ST_NAME_MAX 64

enum { COL_TICK, COL_ID, COL_TYPE, COL_FACTION, COL_PX, COL_PY, COL_PZ, COL_VX, COL_VY, COL_VZ, COL_QW, COL_QX,
       COL_QY, COL_QZ, COL_HEALTH, COL_FLAGS, COL_COUNT_ };
static const char *const k_cols[COL_COUNT_] = {"tick", "id", "type", "faction", "px", "py", "pz", "vx",
                                               "vy", "vz", "qw", "qx", "qy", "qz", "health", "flags"};

typedef struct st_event {
    dg_event ev;
    char *text;
} st_event;

typedef struct st_source {
    char *path;
    FILE *f;
    bool jsonl;
    char *line;
    size_t line_cap;
    uint64_t lineno;
    int colmap[ST_MAX_COLS]; /* CSV: column position -> COL_* */
    int ncols;
    bool pending;            /* CSV: a row read ahead belongs to the next tick */
    uint64_t pending_tick;
    dg_entity_in pending_ent;
    bool have_last_tick;
    uint64_t last_tick;
    dg_entity_in *ents;
    size_t n, cap;
    st_event *events;
    size_t nev, cap_ev;
    dg_event *evs;
    size_t cap_evs;
    bool header_done;        /* the JSONL header line is read once (tables must not move after) */
    bool once;               /* a stream read once (a pipe, stdin): tables fixed before the first tick */
    bool unread;             /* the line in `line` is handed out again by the next read_line */
    /* tables (from the JSONL header line, completed with every index the stream uses) */
    bool type_used[65536], faction_used[65536];
    dg_flrep_type *types;
    dg_flrep_faction *factions;
    dg_flrep_participant *roster;
    size_t ntypes, nfactions, nroster;
    char *strings;           /* one arena for every table string */
    size_t strings_len, strings_cap;
    char scenario[ST_NAME_MAX + 1];
} st_source;

/* ---- errors and small parsers ------------------------------------------------------------------ */

static dg_status st_err(st_source *p, dg_error *err, unsigned col, const char *fmt, const char *a, const char *b)
{
    char where[96];
    snprintf(where, sizeof where, "%s:%llu:%u", p->path, (unsigned long long)p->lineno, col);
    return dg_error_set(err, DG_E_SYNTAX, DG_OFFSET_NONE, where, fmt, a ? a : "", b ? b : "");
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
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end = NULL;
    errno = 0;
    double v = strtod(buf, &end);
    if (end != buf + len || errno == ERANGE)
        return false;
    *out = v;
    return true;
}

/* ---- growing arrays ----------------------------------------------------------------------------- */

static dg_status grow(void **arr, size_t *cap, size_t need, size_t elem, dg_error *err)
{
    if (need <= *cap)
        return DG_OK;
    size_t nc = *cap ? *cap * 2 : 64;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*arr, nc * elem);
    if (!q)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "state stream", "out of memory");
    *arr = q;
    *cap = nc;
    return DG_OK;
}

static void clear_tick(st_source *p)
{
    for (size_t i = 0; i < p->nev; i++)
        free(p->events[i].text);
    p->n = 0;
    p->nev = 0;
}

static dg_status add_entity(st_source *p, const dg_entity_in *e, dg_error *err)
{
    if (grow((void **)&p->ents, &p->cap, p->n + 1, sizeof *p->ents, err) != DG_OK)
        return err->code;
    p->ents[p->n++] = *e;
    return DG_OK;
}

static int cmp_ent(const void *a, const void *b)
{
    uint32_t x = ((const dg_entity_in *)a)->id, y = ((const dg_entity_in *)b)->id;
    return x < y ? -1 : x > y;
}

/* Sorts the tick's entities by id and rejects duplicates and id 0. */
static dg_status finish_tick(st_source *p, uint64_t tick, dg_error *err)
{
    if (p->n > 1)
        qsort(p->ents, p->n, sizeof *p->ents, cmp_ent);
    char a[32], b[32];
    for (size_t i = 0; i < p->n; i++) {
        if (p->once && (!p->type_used[p->ents[i].type_index] || !p->faction_used[p->ents[i].faction_index])) {
            snprintf(a, sizeof a, "%u", p->ents[i].id);
            snprintf(b, sizeof b, "%u/%u", p->ents[i].type_index, p->ents[i].faction_index);
            return st_err(p, err, 1, "entity %s: type/faction %s is above 255 and not declared in the header line "
                                     "(a stream read once declares its tables before its first tick)", a, b);
        }
        if (p->ents[i].id == 0) {
            snprintf(a, sizeof a, "%llu", (unsigned long long)tick);
            return st_err(p, err, 1, "tick %s: entity id 0 (ids start at 1)%s", a, NULL);
        }
        if (i > 0 && p->ents[i].id == p->ents[i - 1].id) {
            snprintf(a, sizeof a, "%llu", (unsigned long long)tick);
            snprintf(b, sizeof b, "%u", p->ents[i].id);
            return st_err(p, err, 1, "tick %s: entity %s appears twice", a, b);
        }
        p->type_used[p->ents[i].type_index] = true;
        p->faction_used[p->ents[i].faction_index] = true;
    }
    if (p->have_last_tick && tick <= p->last_tick) {
        snprintf(a, sizeof a, "%llu", (unsigned long long)p->last_tick);
        snprintf(b, sizeof b, "%llu", (unsigned long long)tick);
        return st_err(p, err, 1, "ticks must increase: expected a tick after %s, found %s", a, b);
    }
    p->have_last_tick = true;
    p->last_tick = tick;
    return DG_OK;
}

static int read_line(st_source *p, dg_error *err)
{
    if (p->unread)
        return p->unread = false, 1;
    errno = 0;
    ssize_t n = getline(&p->line, &p->line_cap, p->f);
    if (n < 0) {
        if (ferror(p->f))
            return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, p->path, "read failed: %s", strerror(errno)), -1;
        return 0;
    }
    p->lineno++;
    while (n > 0 && (p->line[n - 1] == '\n' || p->line[n - 1] == '\r'))
        p->line[--n] = 0;
    return 1;
}

/* ---- CSV --------------------------------------------------------------------------------------- */

static dg_status csv_header(st_source *p, dg_error *err)
{
    const char *s = p->line;
    int seen[COL_COUNT_] = {0};
    p->ncols = 0;
    unsigned col = 1;
    for (;;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        int k = -1;
        for (int c = 0; c < COL_COUNT_; c++)
            if (strlen(k_cols[c]) == len && memcmp(k_cols[c], s, len) == 0)
                k = c;
        char name[64];
        dg_escape_bytes(name, sizeof name, s, len);
        if (k < 0)
            return st_err(p, err, col, "expected a column name (tick,id,type,faction,px,py,pz,vx,vy,vz,qw,qx,qy,qz,"
                                       "health,flags), found \"%s\"%s", name, NULL);
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
        if (!seen[required[i]])
            return st_err(p, err, 1, "the header row lacks the required column \"%s\"%s", k_cols[required[i]], NULL);
    return DG_OK;
}

static dg_status csv_row(st_source *p, uint64_t *tick, dg_entity_in *e, dg_error *err)
{
    memset(e, 0, sizeof *e);
    e->rot[0] = 1.0;
    e->health = 1.0;
    const char *s = p->line;
    unsigned col = 1;
    for (int c = 0; c < p->ncols; c++) {
        const char *end = strchr(s, ',');
        if (!end && c + 1 < p->ncols)
            return st_err(p, err, col + (unsigned)strlen(s), "expected %s fields, found fewer%s",
                          c == 0 ? "more" : "more", NULL);
        if (end && c + 1 == p->ncols)
            return st_err(p, err, col + (unsigned)(end - s), "expected end of row, found another field%s%s", NULL, NULL);
        size_t len = end ? (size_t)(end - s) : strlen(s);
        int k = p->colmap[c];
        uint64_t u = 0;
        double d = 0;
        char found[40];
        dg_escape_bytes(found, sizeof found, s, len);
        bool ok;
        switch (k) {
        case COL_TICK: ok = parse_u64(s, len, tick); break;
        case COL_ID: ok = parse_u64(s, len, &u) && u >= 1 && u <= UINT32_MAX; e->id = (uint32_t)u; break;
        case COL_TYPE: ok = parse_u64(s, len, &u) && u <= 65535; e->type_index = (uint16_t)u; break;
        case COL_FACTION: ok = parse_u64(s, len, &u) && u <= 65535; e->faction_index = (uint16_t)u; break;
        case COL_FLAGS: ok = parse_u64(s, len, &u) && u <= 65535; e->flags = (uint16_t)u; break;
        default:
            ok = parse_f64(s, len, &d);
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
            return st_err(p, err, col, k <= COL_FACTION || k == COL_FLAGS
                                           ? "column %s: expected an unsigned integer in range, found \"%s\""
                                           : "column %s: expected a number, found \"%s\"",
                          k_cols[k], found);
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
        if (add_entity(p, &p->pending_ent, err) != DG_OK)
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
            p->pending_ent = e;
            break;
        }
        *tick = t;
        if (add_entity(p, &e, err) != DG_OK)
            return -1;
    }
    if (rc < 0)
        return -1;
    if (p->n == 0)
        return 0;
    return finish_tick(p, *tick, err) == DG_OK ? 1 : -1;
}

/* ---- JSON Lines -------------------------------------------------------------------------------- */

static dg_status json_num_array(st_source *p, json_t *a, const char *what, double *out, size_t n, dg_error *err)
{
    if (!json_is_array(a) || json_array_size(a) != n) {
        char want[8];
        snprintf(want, sizeof want, "%zu", n);
        return st_err(p, err, 1, "\"%s\": expected an array of %s numbers", what, want);
    }
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_number(v))
            return st_err(p, err, 1, "\"%s\": expected numbers only%s", what, NULL);
        out[i] = json_number_value(v);
    }
    return DG_OK;
}

static dg_status json_uint(st_source *p, json_t *o, const char *key, uint64_t max, uint64_t dflt, uint64_t *out,
                           dg_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!v) {
        *out = dflt;
        return DG_OK;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
        return st_err(p, err, 1, "\"%s\": expected an unsigned integer in range%s", key, NULL);
    *out = (uint64_t)json_integer_value(v);
    return DG_OK;
}

static dg_status json_entity(st_source *p, json_t *o, dg_entity_in *e, dg_error *err)
{
    if (!json_is_object(o))
        return st_err(p, err, 1, "\"entities\": expected objects%s%s", NULL, NULL);
    memset(e, 0, sizeof *e);
    e->rot[0] = 1.0;
    e->health = 1.0;
    uint64_t id, type, faction, flags;
    if (json_uint(p, o, "id", UINT32_MAX, 0, &id, err) != DG_OK || json_uint(p, o, "type", 65535, 0, &type, err) ||
        json_uint(p, o, "faction", 65535, 0, &faction, err) || json_uint(p, o, "flags", 65535, 0, &flags, err))
        return err->code;
    if (id == 0)
        return st_err(p, err, 1, "entity \"id\": expected an integer >= 1%s%s", NULL, NULL);
    e->id = (uint32_t)id;
    e->type_index = (uint16_t)type;
    e->faction_index = (uint16_t)faction;
    e->flags = (uint16_t)flags;
    json_t *pos = json_object_get(o, "pos");
    if (!pos)
        return st_err(p, err, 1, "entity: \"pos\" is required%s%s", NULL, NULL);
    if (json_num_array(p, pos, "pos", e->pos, 3, err) != DG_OK)
        return err->code;
    json_t *v;
    if ((v = json_object_get(o, "vel")) && json_num_array(p, v, "vel", e->vel, 3, err) != DG_OK)
        return err->code;
    if ((v = json_object_get(o, "rot")) && json_num_array(p, v, "rot", e->rot, 4, err) != DG_OK)
        return err->code;
    if ((v = json_object_get(o, "health"))) {
        if (!json_is_number(v))
            return st_err(p, err, 1, "\"health\": expected a number%s%s", NULL, NULL);
        e->health = json_number_value(v);
    }
    return DG_OK;
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

static dg_status json_event(st_source *p, json_t *o, uint64_t tick, dg_error *err)
{
    if (!json_is_object(o))
        return st_err(p, err, 1, "\"events\": expected objects%s%s", NULL, NULL);
    int kind = event_kind(json_object_get(o, "kind"));
    if (!kind)
        return st_err(p, err, 1, "event \"kind\": expected 1..5 or kill/spawn/chat/admin/alert%s%s", NULL, NULL);
    uint64_t a, b, c, d;
    if (json_uint(p, o, "a", UINT32_MAX, 0, &a, err) || json_uint(p, o, "b", UINT32_MAX, 0, &b, err) ||
        json_uint(p, o, "c", 65535, 0, &c, err) || json_uint(p, o, "d", 65535, 0, &d, err))
        return err->code;
    json_t *t = json_object_get(o, "text");
    if (t && !json_is_string(t))
        return st_err(p, err, 1, "event \"text\": expected a string%s%s", NULL, NULL);
    size_t tl = t ? json_string_length(t) : 0;
    if (tl > 65535)
        return st_err(p, err, 1, "event \"text\": longer than 65535 bytes%s%s", NULL, NULL);
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

static dg_status json_table(st_source *p, json_t *arr, int which, dg_error *err)
{
    if (!arr)
        return DG_OK;
    if (!json_is_array(arr))
        return st_err(p, err, 1, "header: expected an array for %s%s", which == 0 ? "types" : which == 1 ? "factions"
                                                                                       : "participants", NULL);
    size_t n = json_array_size(arr);
    void **dst = which == 0 ? (void **)&p->types : which == 1 ? (void **)&p->factions : (void **)&p->roster;
    size_t elem = which == 0 ? sizeof *p->types : which == 1 ? sizeof *p->factions : sizeof *p->roster;
    *dst = calloc(n + 1, elem);
    if (!*dst)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, p->path, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(arr, i);
        if (!json_is_object(o))
            return st_err(p, err, 1, "header: table entries must be objects%s%s", NULL, NULL);
        json_t *id = json_object_get(o, which == 2 ? "callsign" : "id");
        json_t *name = json_object_get(o, "name");
        const char *ids = json_is_string(id) ? json_string_value(id) : "";
        const char *names = json_is_string(name) ? json_string_value(name) : ids;
        size_t il = strlen(ids) > 65535 ? 65535 : strlen(ids), nl = strlen(names) > 65535 ? 65535 : strlen(names);
        const char *io = arena_add(p, ids, il, err), *no = arena_add(p, names, nl, err);
        if (err->code != DG_OK)
            return err->code;
        uint64_t idx, cat, proj, pid, eid;
        if (which == 0) {
            if (json_uint(p, o, "index", 65535, i, &idx, err) || json_uint(p, o, "category", 255, 0, &cat, err) ||
                json_uint(p, o, "projectile", 255, 0, &proj, err))
                return err->code;
            p->types[i] = (dg_flrep_type){(uint16_t)idx, {io, (uint16_t)il}, {no, (uint16_t)nl}, (uint8_t)cat,
                                          (uint8_t)proj};
            p->ntypes++;
        } else if (which == 1) {
            if (json_uint(p, o, "index", 65535, i, &idx, err))
                return err->code;
            p->factions[i] = (dg_flrep_faction){(uint16_t)idx, {io, (uint16_t)il}, {no, (uint16_t)nl}};
            p->nfactions++;
        } else {
            if (json_uint(p, o, "participant_id", UINT32_MAX, i + 1, &pid, err) ||
                json_uint(p, o, "entity_id", UINT32_MAX, 0, &eid, err))
                return err->code;
            p->roster[i] = (dg_flrep_participant){(uint32_t)pid, (uint32_t)eid, {io, (uint16_t)il}};
            p->nroster++;
        }
    }
    return DG_OK;
}

static dg_status json_header(st_source *p, json_t *o, harness__source *s, dg_error *err)
{
    json_t *v;
    if ((v = json_object_get(o, "scenario")) && json_is_string(v))
        harness__scenario_name(json_string_value(v), p->scenario, sizeof p->scenario);
    uint64_t rate = 60, kf = 0;
    if (json_uint(p, o, "tick_rate_hz", 100000, 60, &rate, err) ||
        json_uint(p, o, "keyframe_interval", DG_FLREP_KEYFRAME_MAX, 0, &kf, err))
        return err->code;
    s->hdr.tick_rate_hz = rate ? (uint32_t)rate : 60;
    if (kf)
        s->hdr.keyframe_interval_ticks = (uint32_t)kf;
    if ((v = json_object_get(o, "planet_radius_m"))) {
        if (!json_is_number(v) || !(json_number_value(v) > 0))
            return st_err(p, err, 1, "header: \"planet_radius_m\" must be a number > 0%s%s", NULL, NULL);
        s->hdr.planet_radius_m = json_number_value(v);
    }
    if (json_table(p, json_object_get(o, "types"), 0, err) || json_table(p, json_object_get(o, "factions"), 1, err) ||
        json_table(p, json_object_get(o, "participants"), 2, err))
        return err->code;
    return DG_OK;
}

static int json_tick(st_source *p, harness__source *s, uint64_t *tick, dg_error *err)
{
    clear_tick(p);
    int rc;
    while ((rc = read_line(p, err)) == 1) {
        if (p->line[0] == 0)
            continue;
        json_error_t je;
        json_t *o = json_loads(p->line, JSON_REJECT_DUPLICATES, &je);
        if (!o) {
            char where[96];
            snprintf(where, sizeof where, "%s:%llu:%d", p->path, (unsigned long long)p->lineno, je.column);
            dg_error_set(err, DG_E_SYNTAX, DG_OFFSET_NONE, where, "invalid JSON: %s", je.text);
            return -1;
        }
        dg_status st = DG_OK;
        if (!json_is_object(o)) {
            st = st_err(p, err, 1, "expected a JSON object per line%s%s", NULL, NULL);
        } else if (json_object_get(o, "detgate_states")) {
            if (p->lineno != 1)
                st = st_err(p, err, 1, "the header object must be the first line%s%s", NULL, NULL);
            else if (!p->header_done)
                st = json_header(p, o, s, err);
            p->header_done = true;
            json_decref(o);
            if (st != DG_OK)
                return -1;
            continue;
        } else {
            uint64_t t;
            json_t *ents = json_object_get(o, "entities"), *evs = json_object_get(o, "events");
            st = json_uint(p, o, "tick", UINT64_MAX >> 1, 0, &t, err);
            if (st == DG_OK && !json_object_get(o, "tick"))
                st = st_err(p, err, 1, "expected a \"tick\" member%s%s", NULL, NULL);
            if (st == DG_OK && ents && !json_is_array(ents))
                st = st_err(p, err, 1, "\"entities\": expected an array%s%s", NULL, NULL);
            if (st == DG_OK && evs && !json_is_array(evs))
                st = st_err(p, err, 1, "\"events\": expected an array%s%s", NULL, NULL);
            for (size_t i = 0; st == DG_OK && ents && i < json_array_size(ents); i++) {
                dg_entity_in e;
                st = json_entity(p, json_array_get(ents, i), &e, err);
                if (st == DG_OK)
                    st = add_entity(p, &e, err);
            }
            for (size_t i = 0; st == DG_OK && evs && i < json_array_size(evs); i++)
                st = json_event(p, json_array_get(evs, i), t, err);
            json_decref(o);
            if (st != DG_OK || finish_tick(p, t, err) != DG_OK)
                return -1;
            *tick = t;
            return 1;
        }
        json_decref(o);
        return -1;
    }
    return rc < 0 ? -1 : 0;
}

/* ---- the source ------------------------------------------------------------------------------- */

static int st_next(harness__source *s, harness__frame *f, dg_error *err)
{
    st_source *p = s->impl;
    uint64_t tick = 0;
    int rc = p->jsonl ? json_tick(p, s, &tick, err) : csv_tick(p, &tick, err);
    if (rc != 1)
        return rc;
    if (grow((void **)&p->evs, &p->cap_evs, p->nev, sizeof *p->evs, err) != DG_OK)
        return -1;
    dg_hash_stream hs;
    dg_hash_raw_begin(&hs, tick);
    for (size_t i = 0; i < p->n; i++) {
        const dg_entity_in *e = &p->ents[i];
        double raw[HARNESS_RAW_FIELDS] = {e->pos[0], e->pos[1], e->pos[2], e->vel[0], e->vel[1], e->vel[2],
                                          e->rot[0], e->rot[1], e->rot[2], e->rot[3], e->health};
        dg_hash_raw_entity(&hs, e->id, raw, HARNESS_RAW_FIELDS);
    }
    for (size_t i = 0; i < p->nev; i++)
        p->evs[i] = p->events[i].ev;
    f->tick = tick;
    f->ents = p->ents;
    f->n = p->n;
    f->events = p->evs;
    f->nev = p->nev;
    f->has_raw = true;
    f->raw = dg_hash_raw_end(&hs);
    return 1;
}

static dg_status st_open_file(st_source *p, dg_error *err)
{
    if (!p->once) {
        if (p->f)
            fclose(p->f);
        p->f = fopen(p->path, "rb");
        if (!p->f)
            return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, p->path, "cannot open: %s", strerror(errno));
        p->lineno = 0;
    }
    p->pending = false;
    p->have_last_tick = false;
    clear_tick(p);
    if (p->jsonl)
        return DG_OK;
    int rc;
    while ((rc = read_line(p, err)) == 1 && (p->line[0] == '#' || p->line[0] == 0)) {
    }
    if (rc < 0)
        return err->code;
    if (rc == 0)
        return st_err(p, err, 1, "expected a header row (tick,id,px,py,pz,...), found the end of the file%s%s",
                      NULL, NULL);
    return csv_header(p, err);
}

static dg_status st_rewind(harness__source *s, dg_error *err)
{
    st_source *p = s->impl;
    if (p->once)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, p->path, "a stream read once cannot be re-read");
    return st_open_file(p, err);
}

static void st_destroy(harness__source *s)
{
    st_source *p = s->impl;
    if (!p)
        return;
    clear_tick(p);
    if (p->f && !p->once)
        fclose(p->f);
    free(p->path);
    free(p->line);
    free(p->ents);
    free(p->events);
    free(p->evs);
    free(p->types);
    free(p->factions);
    free(p->roster);
    free(p->strings);
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

/* Every type / faction index the stream uses gets a table entry ("type<N>" when undeclared). */
static dg_status complete_tables(st_source *p, dg_error *err)
{
    size_t want_t = 0, want_f = 0;
    for (size_t i = 0; i < 65536; i++) {
        want_t += p->type_used[i];
        want_f += p->faction_used[i];
    }
    dg_flrep_type *t = realloc(p->types, (p->ntypes + want_t + 1) * sizeof *t);
    if (t)
        p->types = t;
    dg_flrep_faction *f = realloc(p->factions, (p->nfactions + want_f + 1) * sizeof *f);
    if (f)
        p->factions = f;
    if (!t || !f)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, p->path, "out of memory");
    for (size_t i = 0; i < 65536; i++) {
        char name[24];
        bool declared = false;
        for (size_t k = 0; p->type_used[i] && k < p->ntypes && !declared; k++)
            declared = p->types[k].index == i;
        if (p->type_used[i] && !declared) {
            int n = snprintf(name, sizeof name, "type%zu", i);
            const char *o = arena_add(p, name, (size_t)n, err);
            p->types[p->ntypes++] = (dg_flrep_type){(uint16_t)i, {o, (uint16_t)n}, {o, (uint16_t)n}, 0, 0};
        }
        declared = false;
        for (size_t k = 0; p->faction_used[i] && k < p->nfactions && !declared; k++)
            declared = p->factions[k].index == i;
        if (p->faction_used[i] && !declared) {
            int n = snprintf(name, sizeof name, "faction%zu", i);
            const char *o = arena_add(p, name, (size_t)n, err);
            p->factions[p->nfactions++] = (dg_flrep_faction){(uint16_t)i, {o, (uint16_t)n}, {o, (uint16_t)n}};
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

static dg_status st_finish_open(harness__source *s, st_source *p, uint64_t ticks, uint32_t keyframe);

dg_status harness__source_states(harness__source **out, const char *path, uint32_t keyframe, dg_error *err)
{
    *out = NULL;
    harness__source *s = calloc(1, sizeof *s);
    st_source *p = calloc(1, sizeof *p);
    size_t pl = strlen(path) + 1;
    char *pc = malloc(pl);
    if (!s || !p || !pc) {
        free(s);
        free(p);
        free(pc);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory");
    }
    memcpy(pc, path, pl);
    p->path = pc;
    s->impl = p;
    s->next = st_next;
    s->rewind = st_rewind;
    s->destroy = st_destroy;
    p->jsonl = looks_jsonl(path);
    harness__scenario_name(path, p->scenario, sizeof p->scenario);
    s->hdr.tick_rate_hz = 60;
    s->hdr.planet_radius_m = 6371000.0;
    /* Validation pass: the whole stream is read once so bad input fails before recording. */
    dg_status st = st_open_file(p, err);
    harness__frame f;
    int rc = 0;
    uint64_t ticks = 0;
    while (st == DG_OK && (rc = st_next(s, &f, err)) == 1)
        ticks++;
    if (st == DG_OK && rc < 0)
        st = err->code;
    if (st == DG_OK && ticks == 0)
        st = st_err(p, err, 1, "the stream has no tick%s%s", NULL, NULL);
    if (st == DG_OK)
        st = complete_tables(p, err);
    if (st == DG_OK)
        st = st_open_file(p, err);
    if (st != DG_OK) {
        harness__source_free(s);
        return st;
    }
    *out = s;
    return st_finish_open(s, p, ticks, keyframe);
}

static dg_status st_finish_open(harness__source *s, st_source *p, uint64_t ticks, uint32_t keyframe)
{
    fix_strings(p);
    snprintf(s->name, sizeof s->name, "%s", p->scenario);
    s->expected_ticks = ticks;
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
    return DG_OK;
}

/* The JSONL header line (if the first line is one) is read now: the tables must be known before the
 * writer opens. Indices 0..255 not declared there are named type<N> / faction<N> up front. */
static dg_status st_open_once(harness__source *s, st_source *p, dg_error *err)
{
    int c;
    while ((c = getc(p->f)) == ' ' || c == '\t' || c == '\r' || c == '\n')
        p->lineno += c == '\n';
    p->jsonl = c == '{';
    if (c != EOF)
        ungetc(c, p->f);
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
    for (size_t i = 0; i < 256; i++)
        p->type_used[i] = p->faction_used[i] = true;
    if (st == DG_OK)
        st = complete_tables(p, err);
    for (size_t k = 0; k < p->ntypes; k++)
        p->type_used[p->types[k].index] = true;
    for (size_t k = 0; k < p->nfactions; k++)
        p->faction_used[p->factions[k].index] = true;
    return st;
}

dg_status harness__source_states_stream(harness__source **out, FILE *f, const char *label, const char *name,
                                        uint32_t keyframe, dg_error *err)
{
    *out = NULL;
    harness__source *s = calloc(1, sizeof *s);
    st_source *p = calloc(1, sizeof *p);
    char *pc = strdup(label);
    if (!s || !p || !pc) {
        free(s);
        free(p);
        free(pc);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, label, "out of memory");
    }
    *p = (st_source){.path = pc, .f = f, .once = true};
    *s = (harness__source){.impl = p, .next = st_next, .rewind = st_rewind, .destroy = st_destroy};
    s->hdr.tick_rate_hz = 60;
    s->hdr.planet_radius_m = 6371000.0;
    snprintf(p->scenario, sizeof p->scenario, "%s", name ? name : "stdin");
    dg_status st = st_open_once(s, p, err);
    if (st == DG_OK && name)
        harness__scenario_name(name, p->scenario, sizeof p->scenario);
    if (st == DG_OK)
        st = st_finish_open(s, p, 0, keyframe);
    if (st != DG_OK) {
        harness__source_free(s);
        return st;
    }
    *out = s;
    return DG_OK;
}
