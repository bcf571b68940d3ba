/* hash/hash_log.c — the text hash log (docs/STATE-HASH.md §7): a canonical writer, a strict reader
 * that names line:column and expected vs found, and the comparer that finds the first differing
 * tick. One accepted spelling per value, so equal runs give byte-identical logs and `diff` works. */
#include "detgate/hash.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "log_io.h"

#define LOG__MAGIC "# detgate-hashlog"
#define LOG__LINE_MAX 256  /* longest legal line of versions 1 and 2 is the header (~190 bytes) */
/* Version 3: an e line with 64 values (~1150 bytes), or a header with its values= list. */
#define LOG__LINE_MAX_V3 (128 + DG_HASH_LOG_VALUES_CAP + 17 * DG_HASH_LOG_VALUES_MAX)
#define LOG__TICK_WIDTH 10 /* ticks and ids are zero-padded to 10 digits so lines sort like numbers */
#define LOG__READ_CHUNK (64u * 1024u)

/* ---- shared helpers ------------------------------------------------------------------------------ */
static bool log__name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '+' || c == '/' || c == '-';
}

static bool log__name_valid(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!log__name_char(s[n]) || n >= DG_HASH_LOG_NAME_MAX)
            return false;
    return n > 0;
}

/* The number of names in a values= list ("a,b,c": 3), or 0 when it is not one (an empty name, a
 * character outside the name set, a name over 64 bytes, more than DG_HASH_LOG_VALUES_MAX names). */
static uint32_t log__count_values(const char *s)
{
    uint32_t n = 0;
    size_t len = 0;
    for (const char *p = s;; p++) {
        if (*p == ',' || *p == '\0') {
            if (len == 0 || len > DG_HASH_LOG_NAME_MAX || ++n > DG_HASH_LOG_VALUES_MAX)
                return 0;
            len = 0;
            if (*p == '\0')
                return n;
        } else if (!log__name_char(*p)) {
            return 0;
        } else {
            len++;
        }
    }
}

/* ================================ writer ========================================================= */
struct dg_hash_log_writer {
    hash__sink *sink;
    dg_hash_log_header h;
    uint64_t ticks;
    uint64_t last_tick;
};

static dg_status log__emit(dg_hash_log_writer *w, const char *line, int n, dg_error *err)
{
    if (n < 0 || n >= (w->h.n_values ? LOG__LINE_MAX_V3 : LOG__LINE_MAX))
        return dg_error_set(err, DG_E_LIMIT, DG_OFFSET_NONE, "hash log writer", "line too long");
    return dg_hash__sink_write(w->sink, line, (size_t)n, err);
}

static dg_status log__write_header(dg_hash_log_writer *w, dg_error *err)
{
    char line[LOG__LINE_MAX_V3];
    int version = w->h.n_values ? DG_HASH_LOG_VERSION_RAW_VALUES
                  : w->h.entity_raw ? DG_HASH_LOG_VERSION_ENTITY_RAW : DG_HASH_LOG_VERSION;
    int n = snprintf(line, sizeof line, "%s %d scenario=%s format=%s entities=%d raw=%d", LOG__MAGIC, version,
                     w->h.scenario, w->h.format, w->h.entities ? 1 : 0, w->h.raw ? 1 : 0);
    if (n > 0 && w->h.n_values) /* version 3: the names of the raw values every e line carries */
        n += snprintf(line + n, sizeof line - (size_t)n, " values=%s", w->h.values);
    if (n > 0 && (size_t)n + 1 < sizeof line)
        line[n++] = '\n';
    return log__emit(w, line, n, err);
}

static dg_status log__writer_new(dg_hash_log_writer **out, hash__sink *sink,
                                 const dg_hash_log_header *h, dg_error *err)
{
    dg_hash_log_writer *w = calloc(1, sizeof *w);
    if (!w) {
        dg_hash__sink_close(sink, NULL);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "hash log writer", "allocation");
    }
    w->sink = sink;
    w->h = *h;
    dg_status st = log__write_header(w, err);
    if (st != DG_OK) {
        dg_hash__sink_close(sink, NULL);
        free(w);
        return st;
    }
    *out = w;
    return DG_OK;
}

static dg_status log__check_header(const dg_hash_log_header *h, dg_error *err)
{
    if (!h)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "hash log writer", "header is NULL");
    if (!log__name_valid(h->scenario))
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "hash log writer",
                            "scenario \"%.64s\": expected 1..%d of [A-Za-z0-9._+/-]", h->scenario,
                            DG_HASH_LOG_NAME_MAX);
    if (!log__name_valid(h->format))
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "hash log writer",
                            "format \"%.64s\": expected 1..%d of [A-Za-z0-9._+/-]", h->format,
                            DG_HASH_LOG_NAME_MAX);
    if (h->entity_raw && (!h->entities || !h->raw))
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "hash log writer",
                            "entity_raw needs entities and raw (entities=%d raw=%d)", h->entities, h->raw);
    if (h->n_values && !h->entity_raw)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "hash log writer",
                            "raw values (n_values %u) need entity_raw", (unsigned)h->n_values);
    if (h->n_values && log__count_values(h->values) != h->n_values)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "hash log writer",
                            "values \"%.80s\": expected %u names of 1..%d [A-Za-z0-9._+/-] joined by ',' (at most %d)",
                            h->values, (unsigned)h->n_values, DG_HASH_LOG_NAME_MAX, DG_HASH_LOG_VALUES_MAX);
    return DG_OK;
}

static bool log__ends_with_zst(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && strcmp(path + n - 4, ".zst") == 0;
}

dg_status dg_hash_log_writer_open(dg_hash_log_writer **out, const char *path, const dg_hash_log_header *h,
                             dg_error *err)
{
    dg_status st = log__check_header(h, err);
    hash__sink *sink = NULL;
    if (st == DG_OK)
        st = dg_hash__sink_open_file(&sink, path, log__ends_with_zst(path), err);
    return st == DG_OK ? log__writer_new(out, sink, h, err) : st;
}

dg_status dg_hash_log_writer_open_fp(dg_hash_log_writer **out, FILE *fp, bool zstd,
                                const dg_hash_log_header *h, dg_error *err)
{
    dg_status st = log__check_header(h, err);
    hash__sink *sink = NULL;
    if (st == DG_OK)
        st = dg_hash__sink_open_fp(&sink, fp, zstd, err);
    return st == DG_OK ? log__writer_new(out, sink, h, err) : st;
}

/* Ticks: at least 10 digits, zero-padded (so byte order = numeric order up to 10^10 ticks). */
static int log__fmt_tick(char *p, size_t cap, uint64_t tick)
{
    return snprintf(p, cap, "%0*" PRIu64, LOG__TICK_WIDTH, tick);
}

static dg_status log__check_tick(const dg_hash_log_writer *w, const dg_hash_log_tick *t, dg_error *err)
{
    if (w->ticks && t->tick <= w->last_tick)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "hash log writer",
                            "tick %" PRIu64 ": expected a tick > %" PRIu64, t->tick, w->last_tick);
    if (t->has_raw != w->h.raw)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "hash log writer",
                            "tick %" PRIu64 ": header says raw=%d, tick has_raw=%d", t->tick,
                            w->h.raw, t->has_raw);
    if (w->h.n_values && t->entity_count && !t->raw_bits)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "hash log writer",
                            "tick %" PRIu64 ": header says raw values but raw_bits is NULL", t->tick);
    if (w->h.entity_raw && t->entity_count && !t->raw_hashes)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "hash log writer",
                            "tick %" PRIu64 ": header says entity raw hashes but raw_hashes is NULL", t->tick);
    if (w->h.entities && t->entity_count && (!t->ids || !t->hashes))
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "hash log writer",
                            "tick %" PRIu64 ": header says entities=1 but ids/hashes are NULL", t->tick);
    for (uint32_t i = 1; w->h.entities && i < t->entity_count; i++)
        if (t->ids[i] <= t->ids[i - 1])
            return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "hash log writer",
                                "tick %" PRIu64 " entity %u: expected id > %u, found %u", t->tick, i,
                                t->ids[i - 1], t->ids[i]);
    if (w->h.entities && t->entity_count && t->ids[0] == 0)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "hash log writer",
                            "tick %" PRIu64 " entity 0: expected id >= 1, found 0", t->tick);
    return DG_OK;
}

/* Entity lines are most of a verbose log: formatted by hand (snprintf per line was 5x slower). */
static void log__put_id10(char *p, uint32_t v)
{
    for (int i = LOG__TICK_WIDTH - 1; i >= 0; i--) {
        p[i] = (char)('0' + v % 10);
        v /= 10;
    }
}

static dg_status log__write_entities(dg_hash_log_writer *w, const dg_hash_log_tick *t, dg_error *err)
{
    char line[LOG__LINE_MAX_V3];
    int k = log__fmt_tick(line, sizeof line, t->tick); /* the "<tick> e " prefix is shared */
    memcpy(line + k, " e ", 3);
    size_t pre = (size_t)k + 3, hash_at = pre + LOG__TICK_WIDTH + 1, m = w->h.n_values;
    size_t vals_at = hash_at + 16 + (w->h.entity_raw ? 17 : 0); /* version 2: " <raw-entity-hash>" */
    size_t len = vals_at + 17 * m + 1;                          /* version 3: " <bits>" m times */
    line[pre + LOG__TICK_WIDTH] = ' ';
    line[hash_at + 16] = ' ';
    for (size_t v = 0; v < m; v++)
        line[vals_at + 17 * v] = ' ';
    line[len - 1] = '\n';
    for (uint32_t i = 0; i < t->entity_count; i++) {
        log__put_id10(line + pre, t->ids[i]);
        char hex[17];
        dg_hash_hex(t->hashes[i], hex);
        memcpy(line + hash_at, hex, 16);
        if (w->h.entity_raw) {
            dg_hash_hex(t->raw_hashes[i], hex);
            memcpy(line + hash_at + 17, hex, 16);
        }
        for (size_t v = 0; v < m; v++) {
            dg_hash_hex(t->raw_bits[(size_t)i * m + v], hex);
            memcpy(line + vals_at + 17 * v + 1, hex, 16);
        }
        dg_status st = dg_hash__sink_write(w->sink, line, len, err);
        if (st != DG_OK)
            return st;
    }
    return DG_OK;
}

dg_status dg_hash_log_writer_write(dg_hash_log_writer *w, const dg_hash_log_tick *t, dg_error *err)
{
    if (!w || !t)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "hash log writer", "NULL argument");
    dg_status st = log__check_tick(w, t, err);
    if (st != DG_OK)
        return st;
    char line[LOG__LINE_MAX], hs[17], he[17], hr[17] = "-";
    dg_hash_hex(t->state, hs);
    dg_hash_hex(t->events, he);
    if (t->has_raw)
        dg_hash_hex(t->raw, hr);
    int k = log__fmt_tick(line, sizeof line, t->tick);
    k += snprintf(line + k, sizeof line - (size_t)k, " T %u %s %s %s\n", t->entity_count, hs, he, hr);
    st = log__emit(w, line, k, err);
    if (st == DG_OK && w->h.entities)
        st = log__write_entities(w, t, err);
    if (st == DG_OK) {
        w->ticks++;
        w->last_tick = t->tick;
    }
    return st;
}

dg_status dg_hash_log_writer_close(dg_hash_log_writer *w, dg_error *err)
{
    if (!w)
        return DG_OK;
    char line[LOG__LINE_MAX];
    int n = snprintf(line, sizeof line, "# end ticks=%" PRIu64 "\n", w->ticks);
    dg_status st = log__emit(w, line, n, err);
    dg_status st2 = dg_hash__sink_close(w->sink, st == DG_OK ? err : NULL);
    free(w);
    return st != DG_OK ? st : st2;
}

/* ================================ reader ========================================================= */
struct dg_hash_log_reader {
    hash__src *src;
    char name[80];
    char *chunk;           /* LOG__READ_CHUNK decoded bytes */
    size_t chunk_len, chunk_pos;
    bool src_eof;
    char line[LOG__LINE_MAX_V3 + 1];
    size_t line_len;
    size_t line_cap;       /* LOG__LINE_MAX, or LOG__LINE_MAX_V3 for the header and a version 3 log */
    uint64_t line_no;      /* 1-based number of the line in `line` */
    uint64_t line_off;     /* decoded byte offset of its first byte */
    uint64_t next_off;
    dg_hash_log_header h;
    uint64_t ticks;
    uint64_t last_tick;
    bool done, failed;
    bool have_pending;     /* `line` holds a line read ahead (the next tick's, or the trailer) */
    uint32_t *ids;
    uint64_t *hashes;
    uint64_t *raw_hashes; /* version 2 only */
    uint64_t *raw_bits;   /* version 3 only: cap * n_values */
    size_t cap;
};

/* A cursor over one line; errors name line:column. */
typedef struct log__lc {
    dg_hash_log_reader *r;
    size_t pos;
    dg_error *err;
    dg_status st;
} log__lc;

static void log__describe(const log__lc *c, char *out, size_t cap)
{
    const dg_hash_log_reader *r = c->r;
    if (c->pos >= r->line_len) {
        snprintf(out, cap, "end of line");
        return;
    }
    size_t n = 0;
    while (c->pos + n < r->line_len && r->line[c->pos + n] != ' ' && n < 24)
        n++;
    char tok[100];
    size_t k = 0;
    for (size_t i = 0; i < (n ? n : 1) && k + 5 < sizeof tok; i++) {
        unsigned char ch = (unsigned char)r->line[c->pos + i];
        if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\')
            tok[k++] = (char)ch;
        else
            k += (size_t)snprintf(tok + k, sizeof tok - k, "\\x%02x", ch);
    }
    tok[k] = '\0';
    snprintf(out, cap, "\"%s\"", tok);
}

static dg_status log__fail_at(log__lc *c, dg_status code, const char *expected)
{
    if (c->st != DG_OK)
        return c->st;
    char where[160], found[120];
    snprintf(where, sizeof where, "%.80s:%" PRIu64 ":%zu", c->r->name, c->r->line_no, c->pos + 1);
    log__describe(c, found, sizeof found);
    c->st = dg_error_set(c->err, code, c->r->line_off + c->pos, where, "expected %s, found %s",
                         expected, found);
    c->r->failed = true;
    return c->st;
}

static bool log__lit(log__lc *c, const char *s, const char *expected)
{
    size_t n = strlen(s);
    if (c->st == DG_OK && c->pos + n <= c->r->line_len && memcmp(c->r->line + c->pos, s, n) == 0) {
        c->pos += n;
        return true;
    }
    log__fail_at(c, DG_E_SYNTAX, expected);
    return false;
}

static size_t log__digits_at(const log__lc *c)
{
    size_t n = 0;
    while (c->pos + n < c->r->line_len && c->r->line[c->pos + n] >= '0' && c->r->line[c->pos + n] <= '9')
        n++;
    return n;
}

/* Decimal in [0, max]; canonical width: exactly `width` digits when the value fits, else no leading
 * zero (width 0 = plain decimal, no leading zero unless the value is 0). */
static uint64_t log__dec(log__lc *c, unsigned width, uint64_t max, const char *expected)
{
    if (c->st != DG_OK)
        return 0;
    size_t n = log__digits_at(c);
    const char *p = c->r->line + c->pos;
    bool bad = n == 0 || n > 20 || n < width || (n > (width ? width : 1) && p[0] == '0');
    uint64_t v = 0;
    for (size_t i = 0; !bad && i < n; i++) {
        unsigned d = (unsigned)(p[i] - '0');
        bad = v > (UINT64_MAX - d) / 10;
        v = v * 10 + d;
    }
    if (bad || v > max) {
        log__fail_at(c, DG_E_SYNTAX, expected);
        return 0;
    }
    c->pos += n;
    return v;
}

static uint64_t log__hex16(log__lc *c, const char *expected)
{
    if (c->st != DG_OK)
        return 0;
    uint64_t v = 0;
    const char *p = c->r->line + c->pos;
    for (size_t i = 0; i < 16; i++) {
        char ch = c->pos + i < c->r->line_len ? p[i] : '\0';
        unsigned d = ch >= '0' && ch <= '9' ? (unsigned)(ch - '0') : ch >= 'a' && ch <= 'f' ? (unsigned)(ch - 'a' + 10) : 16u;
        if (d == 16) {
            log__fail_at(c, DG_E_SYNTAX, expected);
            return 0;
        }
        v = v << 4 | d;
    }
    c->pos += 16;
    return v;
}

static void log__expect_eol(log__lc *c)
{
    if (c->st == DG_OK && c->pos != c->r->line_len)
        log__fail_at(c, DG_E_SYNTAX, "end of line");
}

/* ---- line input -------------------------------------------------------------------------------- */
static dg_status log__fill(dg_hash_log_reader *r, dg_error *err)
{
    size_t got = 0;
    dg_status st = dg_hash__src_read(r->src, r->chunk, LOG__READ_CHUNK, &got, r->name, err);
    if (st != DG_OK) {
        r->failed = true;
        return st;
    }
    r->chunk_len = got;
    r->chunk_pos = 0;
    r->src_eof = got == 0;
    return DG_OK;
}

static dg_status log__line_error(dg_hash_log_reader *r, size_t col, const char *msg, dg_error *err)
{
    char where[160];
    snprintf(where, sizeof where, "%.80s:%" PRIu64 ":%zu", r->name, r->line_no, col);
    r->failed = true;
    return dg_error_set(err, DG_E_SYNTAX, r->line_off + col - 1, where, "%s", msg);
}

/* Reads the next '\n'-terminated line into r->line (without the '\n'); *eof at end of input. */
static dg_status log__read_line(dg_hash_log_reader *r, bool *eof, dg_error *err)
{
    r->line_len = 0;
    r->line_no++;
    r->line_off = r->next_off;
    *eof = false;
    for (;;) {
        if (r->chunk_pos == r->chunk_len) {
            dg_status st = r->src_eof ? DG_OK : log__fill(r, err);
            if (st != DG_OK)
                return st;
            if (r->src_eof) {
                if (r->line_len == 0) {
                    *eof = true;
                    return DG_OK;
                }
                return log__line_error(r, r->line_len + 1,
                                       "expected '\\n' at the end of the last line, found end of input", err);
            }
        }
        const char *start = r->chunk + r->chunk_pos;
        size_t avail = r->chunk_len - r->chunk_pos;
        const char *nl = memchr(start, '\n', avail);
        size_t take = nl ? (size_t)(nl - start) : avail;
        if (take > r->line_cap - r->line_len) {
            r->next_off += r->line_cap - r->line_len;
            r->line_len = r->line_cap;
            char msg[80];
            snprintf(msg, sizeof msg, "expected a line of at most %zu bytes, found a longer one", r->line_cap);
            return log__line_error(r, r->line_cap + 1, msg, err);
        }
        memcpy(r->line + r->line_len, start, take);
        r->line_len += take;
        r->chunk_pos += take + (nl ? 1 : 0);
        r->next_off += take + (nl ? 1 : 0);
        if (nl)
            return DG_OK;
    }
}

/* ---- header ---------------------------------------------------------------------------------------- */
static void log__name_field(log__lc *c, const char *key, char *out, const char *expected)
{
    if (!log__lit(c, key, expected))
        return;
    size_t n = 0;
    while (c->pos + n < c->r->line_len && log__name_char(c->r->line[c->pos + n]))
        n++;
    if (n == 0 || n > DG_HASH_LOG_NAME_MAX) {
        log__fail_at(c, DG_E_SYNTAX, "a name of 1..64 characters [A-Za-z0-9._+/-]");
        return;
    }
    memcpy(out, c->r->line + c->pos, n);
    out[n] = '\0';
    c->pos += n;
}

/* Version 3's " values=<name>,<name>,..." (the raw values every e line carries, in order). */
static void log__values_field(log__lc *c)
{
    if (!log__lit(c, " values=", "\" values=\" (version 3 names its raw values)"))
        return;
    size_t n = c->r->line_len - c->pos;
    char *out = c->r->h.values;
    if (n < DG_HASH_LOG_VALUES_CAP) {
        memcpy(out, c->r->line + c->pos, n);
        out[n] = '\0';
    }
    c->r->h.n_values = n < DG_HASH_LOG_VALUES_CAP ? log__count_values(out) : 0;
    if (c->r->h.n_values == 0) {
        out[0] = '\0';
        log__fail_at(c, DG_E_SYNTAX, "1..64 names of 1..64 characters [A-Za-z0-9._+/-] joined by ','");
        return;
    }
    c->pos = c->r->line_len;
}

static dg_status log__read_header(dg_hash_log_reader *r, dg_error *err)
{
    bool eof = false;
    dg_status st = log__read_line(r, &eof, err);
    if (st != DG_OK)
        return st;
    log__lc c = {r, 0, err, DG_OK};
    if (eof) {
        r->failed = true;
        return dg_error_set(err, DG_E_MAGIC, 0, r->name, "expected the header line \"" LOG__MAGIC
                            " 1 ...\", found end of input (empty log)");
    }
    static const char magic[] = LOG__MAGIC " ";
    if (r->line_len < sizeof magic - 1 || memcmp(r->line, magic, sizeof magic - 1) != 0)
        return log__fail_at(&c, DG_E_MAGIC, "\"" LOG__MAGIC " \" (not a detgate hash log)");
    c.pos = sizeof magic - 1;
    size_t ver_col = c.pos;
    uint64_t ver = log__dec(&c, 0, UINT32_MAX, "the format version");
    if (c.st == DG_OK && ver != DG_HASH_LOG_VERSION && ver != DG_HASH_LOG_VERSION_ENTITY_RAW &&
        ver != DG_HASH_LOG_VERSION_RAW_VALUES) {
        c.pos = ver_col;
        return log__fail_at(&c, DG_E_VERSION, "format version 1, 2 or 3");
    }
    if (c.st == DG_OK && ver != DG_HASH_LOG_VERSION_RAW_VALUES && r->line_len > LOG__LINE_MAX) {
        c.pos = LOG__LINE_MAX;
        return log__fail_at(&c, DG_E_SYNTAX, "a header of at most 256 bytes (versions 1 and 2)");
    }
    r->h.entity_raw = ver >= DG_HASH_LOG_VERSION_ENTITY_RAW;
    log__name_field(&c, " scenario=", r->h.scenario, "\" scenario=\"");
    log__name_field(&c, " format=", r->h.format, "\" format=\"");
    log__lit(&c, " entities=", "\" entities=\"");
    r->h.entities = log__dec(&c, 0, 1, "0 or 1") == 1;
    log__lit(&c, " raw=", "\" raw=\"");
    size_t raw_col = c.pos;
    r->h.raw = log__dec(&c, 0, 1, "0 or 1") == 1;
    if (c.st == DG_OK && r->h.entity_raw && (!r->h.entities || !r->h.raw)) {
        c.pos = raw_col;
        return log__fail_at(&c, DG_E_SYNTAX, "entities=1 raw=1 (versions 2 and 3 carry per-entity raw hashes)");
    }
    if (ver == DG_HASH_LOG_VERSION_RAW_VALUES)
        log__values_field(&c);
    log__expect_eol(&c);
    r->line_cap = ver == DG_HASH_LOG_VERSION_RAW_VALUES ? LOG__LINE_MAX_V3 : LOG__LINE_MAX;
    return c.st;
}

static dg_status log__reader_new(dg_hash_log_reader **out, hash__src *src, const char *name,
                                 dg_error *err)
{
    dg_hash_log_reader *r = calloc(1, sizeof *r);
    char *chunk = malloc(LOG__READ_CHUNK);
    if (!r || !chunk) {
        free(r);
        free(chunk);
        dg_hash__src_close(src);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, name, "reader allocation");
    }
    r->src = src;
    r->chunk = chunk;
    r->line_cap = LOG__LINE_MAX_V3; /* the header's version says which cap holds from then on */
    snprintf(r->name, sizeof r->name, "%s", name ? name : "hash log");
    dg_status st = log__read_header(r, err);
    if (st != DG_OK) {
        dg_hash_log_reader_close(r);
        return st;
    }
    *out = r;
    return DG_OK;
}

dg_status dg_hash_log_reader_open(dg_hash_log_reader **out, const char *path, dg_error *err)
{
    hash__src *src = NULL;
    dg_status st = dg_hash__src_open_file(&src, path, err);
    return st == DG_OK ? log__reader_new(out, src, path, err) : st;
}

dg_status dg_hash_log_reader_open_fp(dg_hash_log_reader **out, FILE *fp, const char *name, dg_error *err)
{
    hash__src *src = NULL;
    dg_status st = dg_hash__src_open_fp(&src, fp, err);
    return st == DG_OK ? log__reader_new(out, src, name, err) : st;
}

dg_status dg_hash_log_reader_open_mem(dg_hash_log_reader **out, const void *buf, size_t len,
                               const char *name, dg_error *err)
{
    hash__src *src = NULL;
    dg_status st = dg_hash__src_open_mem(&src, buf, len, err);
    return st == DG_OK ? log__reader_new(out, src, name, err) : st;
}

const dg_hash_log_header *dg_hash_log_reader_header(const dg_hash_log_reader *r) { return &r->h; }

void dg_hash_log_reader_close(dg_hash_log_reader *r)
{
    if (!r)
        return;
    dg_hash__src_close(r->src);
    free(r->chunk);
    free(r->ids);
    free(r->hashes);
    free(r->raw_hashes);
    free(r->raw_bits);
    free(r);
}

/* ---- ticks --------------------------------------------------------------------------------------- */
static dg_status log__grow(dg_hash_log_reader *r, size_t need, dg_error *err)
{
    if (need <= r->cap)
        return DG_OK;
    size_t cap = r->cap ? r->cap * 2 : 256;
    uint32_t *ids = realloc(r->ids, cap * sizeof *ids);
    if (ids)
        r->ids = ids;
    uint64_t *hs = ids ? realloc(r->hashes, cap * sizeof *hs) : NULL;
    if (hs)
        r->hashes = hs;
    uint64_t *rh = hs ? realloc(r->raw_hashes, cap * sizeof *rh) : NULL;
    if (rh)
        r->raw_hashes = rh;
    uint64_t *rb = rh ? realloc(r->raw_bits, cap * (r->h.n_values + 1) * sizeof *rb) : NULL;
    if (!rb) {
        r->failed = true;
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, r->name, "entity hash array (%zu)", cap);
    }
    r->raw_bits = rb;
    r->cap = cap;
    return DG_OK;
}

/* "<tick> e <id> <hash>" for the tick just read. */
static dg_status log__entity_line(dg_hash_log_reader *r, uint64_t tick, uint32_t i, dg_error *err)
{
    log__lc c = {r, 0, err, DG_OK};
    uint64_t t = log__dec(&c, LOG__TICK_WIDTH, UINT64_MAX, "a tick of at least 10 digits");
    if (c.st == DG_OK && t != tick) {
        c.pos = 0;
        char exp[64];
        snprintf(exp, sizeof exp, "tick %0*" PRIu64 " (entity line %u of that tick)", LOG__TICK_WIDTH, tick, i + 1);
        return log__fail_at(&c, DG_E_SYNTAX, exp);
    }
    log__lit(&c, " e ", "\" e \" (an entity line)");
    size_t id_col = c.pos;
    uint64_t id = log__dec(&c, LOG__TICK_WIDTH, UINT32_MAX, "an entity id of 10 digits");
    if (c.st == DG_OK && (id == 0 || (i > 0 && id <= r->ids[i - 1]))) {
        c.pos = id_col;
        return log__fail_at(&c, DG_E_SYNTAX, "an entity id > 0 and greater than the previous line's");
    }
    log__lit(&c, " ", "' '");
    uint64_t h = log__hex16(&c, "16 lowercase hex digits (entity hash)");
    uint64_t rh = 0;
    if (r->h.entity_raw) {
        log__lit(&c, " ", "' ' (version 2: the entity's raw hash follows)");
        rh = log__hex16(&c, "16 lowercase hex digits (entity raw hash)");
    }
    for (uint32_t v = 0; v < r->h.n_values; v++) { /* version 3: the raw values' bit patterns */
        log__lit(&c, " ", "' ' (version 3: the header's values= count of raw values follow)");
        r->raw_bits[(size_t)i * r->h.n_values + v] = log__hex16(&c, "16 lowercase hex digits (a raw value's bits)");
    }
    log__expect_eol(&c);
    if (c.st != DG_OK)
        return c.st;
    r->ids[i] = (uint32_t)id;
    r->hashes[i] = h;
    r->raw_hashes[i] = rh;
    return DG_OK;
}

static dg_status log__trailer(dg_hash_log_reader *r, dg_error *err)
{
    log__lc c = {r, 0, err, DG_OK};
    log__lit(&c, "# end ticks=", "a tick line or the trailer \"# end ticks=<n>\"");
    size_t col = c.pos;
    uint64_t n = log__dec(&c, 0, UINT64_MAX, "the tick count");
    if (c.st == DG_OK && n != r->ticks) {
        c.pos = col;
        char exp[64];
        snprintf(exp, sizeof exp, "ticks=%" PRIu64 " (the tick lines read)", r->ticks);
        return log__fail_at(&c, DG_E_SYNTAX, exp);
    }
    log__expect_eol(&c);
    if (c.st != DG_OK)
        return c.st;
    bool eof = false;
    dg_status st = log__read_line(r, &eof, err);
    if (st == DG_OK && !eof)
        return log__line_error(r, 1, "expected end of input after the trailer, found another line", err);
    r->done = true;
    return st;
}

static dg_status log__tick_line(dg_hash_log_reader *r, dg_hash_log_tick *t, dg_error *err)
{
    log__lc c = {r, 0, err, DG_OK};
    uint64_t tick = log__dec(&c, LOG__TICK_WIDTH, UINT64_MAX, "a tick of at least 10 digits");
    if (c.st == DG_OK && r->ticks && tick <= r->last_tick) {
        char exp[64];
        snprintf(exp, sizeof exp, "a tick > %" PRIu64 " (ticks strictly increase)", r->last_tick);
        c.pos = 0;
        return log__fail_at(&c, DG_E_SYNTAX, exp);
    }
    log__lit(&c, " T ", "\" T \" (a tick line)");
    t->tick = tick;
    t->entity_count = (uint32_t)log__dec(&c, 0, UINT32_MAX, "an entity count (decimal)");
    log__lit(&c, " ", "' '");
    t->state = log__hex16(&c, "16 lowercase hex digits (state hash)");
    log__lit(&c, " ", "' '");
    t->events = log__hex16(&c, "16 lowercase hex digits (events hash)");
    log__lit(&c, " ", "' '");
    t->has_raw = r->h.raw;
    t->raw = 0;
    if (r->h.raw)
        t->raw = log__hex16(&c, "16 lowercase hex digits (raw hash; header says raw=1)");
    else
        log__lit(&c, "-", "'-' (no raw hash; header says raw=0)");
    log__expect_eol(&c);
    return c.st;
}

static dg_status log__entities(dg_hash_log_reader *r, dg_hash_log_tick *t, dg_error *err)
{
    for (uint32_t i = 0; i < t->entity_count; i++) {
        bool eof = false;
        dg_status st = log__read_line(r, &eof, err);
        if (st == DG_OK && eof) {
            log__lc c = {r, 0, err, DG_OK};
            return log__fail_at(&c, DG_E_TRUNCATED, "an entity line (input ended)");
        }
        if (st == DG_OK)
            st = log__grow(r, (size_t)i + 1, err);
        if (st == DG_OK)
            st = log__entity_line(r, t->tick, i, err);
        if (st != DG_OK)
            return st;
    }
    t->ids = r->ids;
    t->hashes = r->hashes;
    t->raw_hashes = r->h.entity_raw ? r->raw_hashes : NULL;
    t->raw_bits = r->h.n_values ? r->raw_bits : NULL;
    return DG_OK;
}

static dg_status log__next(dg_hash_log_reader *r, dg_hash_log_tick *t, bool *eof, dg_error *err)
{
    *eof = false;
    if (r->failed)
        return dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, r->name, "reader already failed");
    if (r->done) {
        *eof = true;
        return DG_OK;
    }
    bool end = false;
    dg_status st = log__read_line(r, &end, err);
    if (st != DG_OK)
        return st;
    if (end) {
        log__lc c = {r, 0, err, DG_OK};
        return log__fail_at(&c, DG_E_TRUNCATED, "a tick line or the trailer \"# end ticks=<n>\" (input ended)");
    }
    if (r->line_len && r->line[0] == '#') {
        st = log__trailer(r, err);
        *eof = st == DG_OK;
        return st;
    }
    dg_hash_log_tick tmp = {0};
    st = log__tick_line(r, &tmp, err);
    if (st == DG_OK && r->h.entities)
        st = log__entities(r, &tmp, err);
    if (st != DG_OK)
        return st;
    r->ticks++;
    r->last_tick = tmp.tick;
    *t = tmp;
    return DG_OK;
}

int dg_hash_log_reader_next(dg_hash_log_reader *r, dg_hash_log_tick *t, dg_error *err)
{
    bool eof;
    if (log__next(r, t, &eof, err) != DG_OK)
        return -1;
    return eof ? 0 : 1;
}

/* ================================ comparer ======================================================== */
static int log__collect_id(void *user, dg_hash_diff_kind kind, uint32_t id, uint64_t ha, uint64_t hb)
{
    (void)ha;
    (void)hb;
    dg_hash_log_cmp *out = user;
    if (out->n_ids < DG_HASH_CMP_MAX_IDS) {
        out->ids[out->n_ids] = id;
        out->id_kinds[out->n_ids] = kind;
        out->n_ids++;
    }
    return 0;
}

static dg_status log__first_divergence(const dg_hash_log_tick *ta, const dg_hash_log_tick *tb,
                                       bool entities, dg_hash_log_cmp *out, dg_error *err)
{
    out->first_tick = ta->tick;
    out->first_state = ta->state != tb->state;
    out->first_events = ta->events != tb->events;
    out->first_count = ta->entity_count != tb->entity_count;
    if (!entities)
        return DG_OK;
    out->entities_known = true;
    return dg_hash_diff_entities(ta->ids, ta->hashes, ta->entity_count, tb->ids, tb->hashes,
                                 tb->entity_count, log__collect_id, out, &out->entity_counts, err);
}

static dg_status log__advance(dg_hash_log_reader *r, dg_hash_log_tick *t, bool *eof, uint64_t *n,
                              dg_error *err)
{
    dg_status st = log__next(r, t, eof, err);
    if (st == DG_OK && !*eof)
        (*n)++;
    return st;
}

static void log__one_sided(dg_hash_log_cmp *out, uint64_t tick, bool missing_a)
{
    if (out->ticks_differing++ == 0) {
        out->first_tick = tick;
        out->first_missing_a = missing_a;
        out->first_missing_b = !missing_a;
    }
}

dg_status dg_hash_log_compare(dg_hash_log_reader *a, dg_hash_log_reader *b, dg_hash_log_cmp *out,
                              dg_error *err)
{
    memset(out, 0, sizeof *out);
    bool entities = a->h.entities && b->h.entities;
    dg_hash_log_tick ta = {0}, tb = {0};
    bool ea = false, eb = false;
    dg_status st = log__advance(a, &ta, &ea, &out->ticks_a, err);
    if (st == DG_OK)
        st = log__advance(b, &tb, &eb, &out->ticks_b, err);
    while (st == DG_OK && !(ea && eb)) {
        bool only_a = eb || (!ea && ta.tick < tb.tick);
        bool only_b = ea || (!eb && tb.tick < ta.tick);
        if (only_a || only_b) {
            log__one_sided(out, only_a ? ta.tick : tb.tick, only_b);
        } else if (ta.state != tb.state || ta.events != tb.events || ta.entity_count != tb.entity_count) {
            if (out->ticks_differing++ == 0)
                st = log__first_divergence(&ta, &tb, entities, out, err);
        } else if (ta.has_raw && tb.has_raw && ta.raw != tb.raw) {
            if (out->ticks_subquantum++ == 0)
                out->first_subquantum_tick = ta.tick;
        }
        if (st == DG_OK && !only_b)
            st = log__advance(a, &ta, &ea, &out->ticks_a, err);
        if (st == DG_OK && !only_a)
            st = log__advance(b, &tb, &eb, &out->ticks_b, err);
    }
    out->verdict = out->ticks_differing ? DG_HASH_DIVERGED
                   : out->ticks_subquantum ? DG_HASH_SUBQUANTUM
                                           : DG_HASH_SAME;
    return st;
}

/* ---- summary -------------------------------------------------------------------------------------- */
typedef struct log__out {
    char *p;
    size_t cap, len;
} log__out;

static void log__say(log__out *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void log__say(log__out *o, const char *fmt, ...)
{
    if (o->len + 1 >= o->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len = o->len + (size_t)n < o->cap ? o->len + (size_t)n : o->cap - 1;
}

static void log__say_ids(log__out *o, const dg_hash_log_cmp *c, dg_hash_diff_kind kind, const char *label,
                         bool *first)
{
    bool any = false;
    for (size_t i = 0; i < c->n_ids; i++) {
        if (c->id_kinds[i] != kind)
            continue;
        if (!any)
            log__say(o, "%s%s", *first ? " " : "; ", label);
        log__say(o, " %" PRIu32, c->ids[i]);
        any = true;
        *first = false;
    }
}

static void log__say_first(log__out *o, const dg_hash_log_cmp *c)
{
    log__say(o, "diverged at tick %" PRIu64, c->first_tick);
    if (c->first_missing_a || c->first_missing_b) {
        log__say(o, " (tick only in %s)", c->first_missing_a ? "b" : "a");
        return;
    }
    log__say(o, " (%s%s%s)", c->first_state ? "state differs" : "state equal",
             c->first_events ? ", events differ" : "", c->first_count ? ", entity count differs" : "");
    if (!c->entities_known)
        return;
    log__say(o, ":");
    bool first = true;
    log__say_ids(o, c, DG_HASH_DIFF_CHANGED, "entities changed", &first);
    log__say_ids(o, c, DG_HASH_DIFF_ADDED, "added", &first);
    log__say_ids(o, c, DG_HASH_DIFF_LOST, "lost", &first);
    size_t total = c->entity_counts.changed + c->entity_counts.added + c->entity_counts.lost;
    if (total > c->n_ids)
        log__say(o, " (first %zu of %zu)", c->n_ids, total);
    if (total == 0)
        log__say(o, " no entity hash differs");
}

void dg_hash_log_cmp_summary(const dg_hash_log_cmp *c, char *buf, size_t cap)
{
    if (!buf || cap == 0)
        return;
    buf[0] = '\0';
    log__out o = {buf, cap, 0};
    uint64_t ticks = c->ticks_a > c->ticks_b ? c->ticks_a : c->ticks_b;
    if (c->verdict == DG_HASH_SAME) {
        log__say(&o, "same: %" PRIu64 " ticks, every hash equal", ticks);
        return;
    }
    if (c->verdict == DG_HASH_DIVERGED) {
        log__say_first(&o, c);
        log__say(&o, "; %" PRIu64 " of %" PRIu64 " ticks differ", c->ticks_differing, ticks);
    } else {
        log__say(&o, "sub-quantum: quantized state and events equal on all %" PRIu64 " ticks", ticks);
    }
    if (c->ticks_subquantum)
        log__say(&o, "; raw floats differ below a quantum from tick %" PRIu64 " (%" PRIu64 " ticks)",
                 c->first_subquantum_tick, c->ticks_subquantum);
}
