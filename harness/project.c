/* harness/project.c — the project file detgate.ini: read with inih (Debian's libinih), every key
 * checked (an unknown section or key is refused with file:line and the nearest known one), paths
 * joined to the file's folder; the upward search for it; its scenario list; `detgate init`'s template. */
#include "project.h"

#include "engines.h"
#include "format.h"

#include <errno.h>
#include <glob.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef enum { K_SCENARIOS, K_GOLDEN, K_FORMAT, K_KEYFRAME, K_KIND, K_RUN, K_TIME_LIMIT, K_BUILD, K_JOBS, K_RAW,
               K_LIBRARY, K_COUNT_ } key_id;

static const struct {
    const char *section, *name, *expected;
} k_keys[K_COUNT_] = {
    {"project", "scenarios", "a folder or a glob"},
    {"project", "golden", "a folder"},
    {"project", "format", NULL}, /* the formats table's names */
    {"project", "keyframe_interval", "15..3600 ticks"},
    {"engine", "kind", NULL}, /* the engines table's project kinds */
    {"engine", "run", "a command with {scenario}"},
    {"engine", "time_limit", "seconds > 0 (at most 86400)"},
    {"build", "command", "a command with {src} {build} {cc} {cflags}"},
    {"gate", "jobs", "0 (one per CPU) .. 32"},
    {"gate", "raw", "warn, fail or ignore"},
    {"engine", "library", "a shared object's path (no \", \\ or `)"},
};

typedef struct ini_ctx {
    FILE *f;
    unsigned line;     /* the line inih is on (counted by the reader) */
    bool at_line_start;
    harness__project *p;
    unsigned seen[K_COUNT_]; /* the line each key was given on, 0 = not given */
    bool has_kind;
    unsigned too_long; /* the first line longer than inih's buffer, 0 = none */
    unsigned nul_line, nul_col; /* where a NUL byte stopped the reading (0: none) */
    size_t col;        /* bytes of the current line handed to inih before this piece */
    dg_error *err;
    char field_section[HARNESS_DECL_NAME_MAX + 8]; /* the [field NAME] section being read, "" = none */
    unsigned schema_line;                          /* the first [schema] key's line, 0 = none */
} ini_ctx;

/* fgets for inih that counts lines (the Debian build's handler gets no line number) and stops at a
 * NUL byte (fgets would hand inih the line cut there, the rest of it silently dropped). */
static char *ini_read_line(char *str, int num, void *stream)
{
    ini_ctx *c = stream;
    size_t n = 0;
    int ch = 0;
    while (n + 1 < (size_t)num && (ch = getc(c->f)) != EOF) {
        str[n++] = (char)ch;
        if (ch == '\n' || ch == 0)
            break;
    }
    if (n == 0)
        return NULL;
    str[n] = 0;
    if (c->at_line_start)
        c->line++;
    if (ch == 0) { /* column: bytes into the line, this piece's and the line's pieces before it */
        c->nul_line = c->line;
        c->nul_col = (unsigned)(c->col + n);
        return NULL;
    }
    c->at_line_start = str[n - 1] == '\n';
    c->col = c->at_line_start ? 0 : c->col + n;
    if (!c->at_line_start && n + 1 == (size_t)num && !c->too_long && !feof(c->f))
        c->too_long = c->line; /* inih would cut it: refused, not read as two lines */
    return str;
}

static int fail(ini_ctx *c, const char *fmt, const char *a, const char *b, const char *d)
{
    char where[96];
    snprintf(where, sizeof where, "%.80s:%u", c->p->path, c->line);
    char ea[80], eb[80], ed[80];
    dg_escape_bytes(ea, sizeof ea, a, strlen(a));
    dg_escape_bytes(eb, sizeof eb, b, strlen(b));
    dg_escape_bytes(ed, sizeof ed, d, strlen(d));
    dg_error_set(c->err, DG_E_SYNTAX, DG_OFFSET_NONE, where, fmt, ea, eb, ed);
    return 0;
}

/* An error whose text is already safe to show (the declaration rules escape what they quote). */
static int fail_text(ini_ctx *c, const char *msg)
{
    char where[96];
    snprintf(where, sizeof where, "%.80s:%u", c->p->path, c->line);
    dg_error_set(c->err, DG_E_SYNTAX, DG_OFFSET_NONE, where, "%s", msg);
    return 0;
}

static int unknown_key(ini_ctx *c, const char *section, const char *name)
{
    bool section_known = false;
    size_t best = SIZE_MAX, bk = 0;
    for (size_t k = 0; k < K_COUNT_; k++) {
        section_known |= strcmp(k_keys[k].section, section) == 0;
        size_t d = dg_harness__edit_distance(name, k_keys[k].name) + 2 * (strcmp(k_keys[k].section, section) != 0);
        if (d < best)
            best = d, bk = k;
    }
    char near[96];
    snprintf(near, sizeof near, "[%s] %s", k_keys[bk].section, k_keys[bk].name);
    if (!section_known) {
        const char *sect[] = {"project", "engine", "build", "gate", "schema", "field NAME"};
        size_t bs = 0, bd = SIZE_MAX;
        for (size_t s = 0; s < 6; s++)
            if (dg_harness__edit_distance(section, sect[s]) < bd)
                bd = dg_harness__edit_distance(section, sect[s]), bs = s;
        return fail(c, "unknown section [%s]: expected [project], [engine], [build], [gate], [schema] or [field NAME] "
                    "(nearest: [%s])%s",
                    section, sect[bs], "");
    }
    return fail(c, "unknown key '%s' in [%s] (nearest known key: %s)", name, section, near);
}

/* The [engine] keys an engine may need (harness__engine.project_key), as the messages name them. */
static const struct {
    key_id k;
    const char *form, *what;
} k_engine_keys[] = {
    {K_RUN, "COMMAND (with {scenario})", "its command"},
    {K_LIBRARY, "PATH (a shared object)", "its shared object"},
};
#define ENGINE_KEYS (sizeof k_engine_keys / sizeof k_engine_keys[0])

static const char *engine_key_value(const harness__project *p, key_id k) { return k == K_RUN ? p->run : p->library; }

/* The k_engine_keys entry of the key called name (NULL: none), or ENGINE_KEYS. */
static size_t engine_key_index(const char *name)
{
    size_t i = 0;
    while (name && i < ENGINE_KEYS && strcmp(k_keys[k_engine_keys[i].k].name, name) != 0)
        i++;
    return name ? i : ENGINE_KEYS;
}

/* The engine a project may name that needs the key k, or NULL. */
static const harness__engine *engine_of_key(key_id k)
{
    for (size_t i = 0; dg_harness__engines[i]; i++)
        if (dg_harness__engines[i]->project_kind && dg_harness__engines[i]->project_key &&
            strcmp(dg_harness__engines[i]->project_key, k_keys[k].name) == 0)
            return dg_harness__engines[i];
    return NULL;
}

/* A template may use only the placeholders its command knows. A placeholder is {lowercase_word}; any
 * other brace (a shell's ${VAR} or { list; }, JSON) is the command's own. */
static bool placeholders_ok(const char *v, const char *const *allowed, size_t n, char *bad, size_t cap)
{
    for (const char *s = strchr(v, '{'); s; s = strchr(s + 1, '{')) {
        size_t len = 1;
        while ((s[len] >= 'a' && s[len] <= 'z') || s[len] == '_')
            len++;
        if (s[len] != '}' || len == 1 || (s > v && s[-1] == '$'))
            continue;
        len++;
        bool ok = false;
        for (size_t k = 0; k < n; k++)
            ok |= strlen(allowed[k]) == len && memcmp(allowed[k], s, len) == 0;
        if (!ok) {
            snprintf(bad, cap, "%.*s", (int)(len > 40 ? 40 : len), s);
            return false;
        }
    }
    return true;
}

/* Joins a relative path to the project's folder ("." leaves it as written). */
static bool join_dir(const harness__project *p, const char *v, char *out, size_t cap)
{
    bool as_is = v[0] == '/' || strcmp(p->dir, ".") == 0;
    size_t ld = as_is ? 0 : strlen(p->dir), lv = strlen(v);
    if (ld + 1 + lv >= cap)
        return false;
    memcpy(out, p->dir, ld);
    if (!as_is)
        out[ld++] = '/';
    memcpy(out + ld, v, lv + 1);
    return true;
}

static bool parse_number(const char *v, double lo, double hi, double *out)
{
    char *end = NULL;
    errno = 0;
    double d = strtod(v, &end);
    if (!*v || *end || errno == ERANGE || !(d >= lo && d <= hi))
        return false;
    *out = d;
    return true;
}

static int set_value(ini_ctx *c, key_id k, const char *v)
{
    harness__project *p = c->p;
    double d;
    char bad[48];
    static const char *const run_ph[] = {"{scenario}"};
    static const char *const build_ph[] = {"{src}", "{build}", "{cc}", "{cflags}"};
    const char *expected = k == K_FORMAT ? dg_harness__format_names()
                           : k == K_KIND ? dg_harness__engine_kinds()
                                         : k_keys[k].expected;
    switch (k) {
    case K_SCENARIOS:
    case K_GOLDEN:
        if (!*v || !join_dir(p, v, k == K_GOLDEN ? p->golden : p->scenarios, sizeof p->golden))
            return fail(c, "%s: expected %s, found '%s'", k_keys[k].name, expected, v);
        return 1;
    case K_FORMAT:
        if (!dg_harness__format_find(v))
            return fail(c, "%s: expected %s, found '%s'", k_keys[k].name, expected, v);
        p->format = dg_harness__format_find(v);
        return 1;
    case K_KEYFRAME:
        if (!parse_number(v, DG_FLREP_KEYFRAME_MIN, DG_FLREP_KEYFRAME_MAX, &d) || d != (double)(uint32_t)d)
            return fail(c, "%s: expected %s, found '%s'", k_keys[k].name, expected, v);
        p->keyframe = (uint32_t)d;
        return 1;
    case K_KIND:
        if (!dg_harness__engine_find(v))
            return fail(c, "%s: expected %s, found '%s'", k_keys[k].name, expected, v);
        p->engine = dg_harness__engine_find(v);
        c->has_kind = true;
        return 1;
    case K_LIBRARY: /* a double-quoted shell word in the host command: $VAR expands, nothing else */
        if (!*v || strlen(v) >= sizeof p->library || strpbrk(v, "\"\\`"))
            return fail(c, "%s: expected %s, found '%s'", k_keys[k].name, expected, v);
        snprintf(p->library, sizeof p->library, "%s", v);
        return 1;
    case K_RUN:
    case K_BUILD: {
        bool run = k == K_RUN;
        if (!*v || strlen(v) >= sizeof p->run)
            return fail(c, "%s: expected %s, found '%s'", k_keys[k].name, expected, v);
        if (!placeholders_ok(v, run ? run_ph : build_ph, run ? 1 : 4, bad, sizeof bad))
            return fail(c, "%s: unknown placeholder %s (expected %s)", k_keys[k].name, bad, expected);
        if (run && !strstr(v, "{scenario}"))
            return fail(c, "%s: expected %s, found no {scenario} in '%s'", k_keys[k].name, expected, v);
        snprintf(run ? p->run : p->build, sizeof p->run, "%s", v);
        return 1;
    }
    case K_TIME_LIMIT:
        if (!parse_number(v, 0.001, 86400, &d))
            return fail(c, "%s: expected %s, found '%s'", k_keys[k].name, expected, v);
        p->time_limit_s = d;
        return 1;
    case K_JOBS:
        if (!parse_number(v, 0, 32, &d) || d != (double)(unsigned)d)
            return fail(c, "%s: expected %s, found '%s'", k_keys[k].name, expected, v);
        p->jobs = d == 0 ? (unsigned)(sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN) : 1)
                         : (unsigned)d;
        p->jobs = p->jobs > 32 ? 32 : p->jobs;
        return 1;
    case K_RAW:
        if (strcmp(v, "warn") != 0 && strcmp(v, "fail") != 0 && strcmp(v, "ignore") != 0)
            return fail(c, "%s: expected %s, found '%s'", k_keys[k].name, expected, v);
        snprintf(p->raw, sizeof p->raw, "%s", v);
        return 1;
    default: return 0;
    }
}

/* [schema] and [field NAME]: the declared entity fields (harness/schema_decl.c has the rules). */
static int decl_key(ini_ctx *c, const char *section, const char *name, const char *value)
{
    char msg[256];
    harness__decl *d = &c->p->decl;
    bool ok;
    if (strcmp(section, "schema") == 0) {
        c->schema_line = c->schema_line ? c->schema_line : c->line;
        ok = dg_harness__decl_schema_key(d, name, value, msg, sizeof msg);
    } else {
        ok = true;
        if (strcmp(section, c->field_section) != 0) {
            char where[HARNESS_DECL_WHERE_MAX];
            snprintf(where, sizeof where, "%.120s:%u", c->p->path, c->line);
            snprintf(c->field_section, sizeof c->field_section, "%s", section);
            const char *fname = section + 6;
            ok = dg_harness__decl_add_field(d, fname, where, msg, sizeof msg);
        }
        ok = ok && dg_harness__decl_field_key(d, name, value, msg, sizeof msg);
    }
    return ok ? 1 : fail_text(c, msg);
}

static bool is_field_section(const char *section)
{
    return strncmp(section, "field ", 6) == 0 && strlen(section) < HARNESS_DECL_NAME_MAX + 8;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
    ini_ctx *c = user;
    if (c->err->code != DG_OK)
        return 0;
    if (c->too_long)
        return c->line = c->too_long,
               fail(c, "a line longer than %s bytes%s%s", "4094", "", ""), 0;
    if (strcmp(section, "schema") == 0 || is_field_section(section))
        return decl_key(c, section, name, value);
    if (!*section)
        return fail(c, "'%s' before any section: put it under [project], [engine], [build] or [gate]%s%s", name, "",
                    "");
    for (size_t k = 0; k < K_COUNT_; k++) {
        if (strcmp(k_keys[k].section, section) != 0 || strcmp(k_keys[k].name, name) != 0)
            continue;
        if (c->seen[k]) {
            char first[24];
            snprintf(first, sizeof first, "%u", c->seen[k]);
            return fail(c, "[%s] %s is given twice (first on line %s)", section, name, first);
        }
        c->seen[k] = c->line;
        return set_value(c, (key_id)k, value);
    }
    return unknown_key(c, section, name);
}

static void project_defaults(harness__project *p, const char *path)
{
    memset(p, 0, sizeof *p);
    snprintf(p->path, sizeof p->path, "%s", path);
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(p->dir, sizeof p->dir, ".");
    else if (slash == path)
        snprintf(p->dir, sizeof p->dir, "/");
    else
        snprintf(p->dir, sizeof p->dir, "%.*s", (int)(slash - path), path);
    snprintf(p->raw, sizeof p->raw, "warn");
    p->format = dg_harness__format_default();
    p->engine = dg_harness__engines[0];
    dg_harness__decl_init(&p->decl);
}

/* The declaration complete: every field's rules (a float's quantum, an enum's values, ...), at the
 * line of the field (or of [schema]) at fault. */
static dg_status project_decl_finish(harness__project *p, ini_ctx *c, dg_error *err)
{
    char msg[256];
    size_t bad;
    if (!p->decl.declared || dg_harness__decl_finish(&p->decl, &bad, msg, sizeof msg))
        return DG_OK;
    if (bad != SIZE_MAX)
        return dg_error_set(err, DG_E_SYNTAX, DG_OFFSET_NONE, p->decl.fields[bad].where, "%s", msg);
    c->line = c->schema_line ? c->schema_line : 1;
    return fail_text(c, msg), err->code;
}

/* The [engine] keys given against the engine's row: each key another engine needs is refused, the
 * one this engine needs is required, and the row may make the run command from it (a library). */
static dg_status engine_keys_complete(harness__project *p, ini_ctx *c, dg_error *err)
{
    const harness__engine *e = p->engine;
    size_t own = engine_key_index(e->project_key);
    char msg[256];
    for (size_t i = 0; i < ENGINE_KEYS; i++) {
        key_id k = k_engine_keys[i].k;
        if (!c->seen[k] || i == own)
            continue;
        const harness__engine *owner = engine_of_key(k);
        int w = snprintf(msg, sizeof msg, "[engine] %s is for kind = %s; ", k_keys[k].name, owner ? owner->name : "?");
        if (own < ENGINE_KEYS)
            snprintf(msg + w, sizeof msg - (size_t)w, "a %s engine names %s with [engine] %s", e->name,
                     k_engine_keys[own].what, e->project_key);
        else
            snprintf(msg + w, sizeof msg - (size_t)w, "this project's engine is %s", e->name);
        c->line = c->seen[k];
        return fail_text(c, msg), err->code;
    }
    if (own == ENGINE_KEYS)
        return DG_OK;
    const char *value = engine_key_value(p, k_engine_keys[own].k);
    if (!value[0]) {
        snprintf(msg, sizeof msg, "[engine] kind = %s needs %s = %s", e->name, e->project_key, k_engine_keys[own].form);
        return fail_text(c, msg), err->code;
    }
    char copy[HARNESS_PROJECT_PATH_MAX]; /* the value may be p->run itself */
    snprintf(copy, sizeof copy, "%s", value);
    return e->project_run ? e->project_run(p->run, sizeof p->run, copy, p->path, err) : DG_OK;
}

/* What the keys leave unsaid: the engine follows the key given (`run`: process), folders default by
 * engine. Every rule is read off the engine's row (engines.h). */
static dg_status project_complete(harness__project *p, ini_ctx *c, dg_error *err)
{
    for (size_t i = 0; !c->has_kind && i < ENGINE_KEYS; i++) {
        const harness__engine *e = engine_of_key(k_engine_keys[i].k);
        if (e && e->kind_from_key && c->seen[k_engine_keys[i].k])
            p->engine = e;
    }
    c->line = c->seen[K_KIND] ? c->seen[K_KIND] : 1;
    if (engine_keys_complete(p, c, err) != DG_OK)
        return err->code;
    const harness__engine *e = p->engine;
    if (e->fixed_fields && p->decl.declared && !dg_harness__decl_is_legacy(&p->decl))
        return dg_error_set(err, DG_E_SYNTAX, DG_OFFSET_NONE, p->decl.where, "[schema] / [field NAME] declare "
                            "what a process engine's stream carries; this project's engine is %s, whose "
                            "fields are fixed", e->name), err->code;
    if (!e->scenarios_default && !p->scenarios[0])
        return fail(c, "a %s engine needs [project] scenarios = FOLDER or GLOB%s%s", e->name, "", ""), err->code;
    if (!p->scenarios[0])
        join_dir(p, e->scenarios_default, p->scenarios, sizeof p->scenarios);
    if (!p->golden[0])
        join_dir(p, e->golden_default, p->golden, sizeof p->golden);
    return DG_OK;
}

dg_status dg_harness__project_load(harness__project *p, const char *path, dg_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "cannot open the project file: %s", strerror(errno));
    dg_status st = dg_harness__project_parse(p, f, path, err);
    fclose(f);
    return st;
}

static dg_status project_parse_body(harness__project *p, FILE *f, dg_error *err);

/* On error the declarations read so far are freed: a refused file leaves nothing allocated. */
dg_status dg_harness__project_parse(harness__project *p, FILE *f, const char *path, dg_error *err)
{
    project_defaults(p, path);
    dg_status st = project_parse_body(p, f, err);
    if (st != DG_OK)
        dg_harness__decl_free(&p->decl);
    return st;
}

static dg_status project_parse_body(harness__project *p, FILE *f, dg_error *err)
{
    /* values verbatim (a shell command may hold ';'), whole-line comments only, long lines allowed */
    ini_allow_inline_comments = false;
    ini_allow_multiline = false;
    ini_stop_on_first_error = true;
    ini_use_stack = false;
    ini_allow_realloc = true;
    ini_max_line = HARNESS_PROJECT_PATH_MAX;
    /* the whole buffer from the first read: ini_read_line tells a cut line by a full buffer, and
       inih's default first buffer (200 bytes) made every line over 198 bytes look cut */
    ini_initial_alloc = HARNESS_PROJECT_PATH_MAX;
    ini_ctx c = {.f = f, .at_line_start = true, .p = p, .err = err};
    int rc = ini_parse_stream(ini_read_line, &c, on_key, &c);
    if (err->code == DG_OK && c.nul_line) {
        char col[24];
        snprintf(col, sizeof col, "%u", c.nul_col);
        c.line = c.nul_line, fail(&c, "expected text, found a NUL byte (0x00) at column %s%s%s", col, "", "");
    }
    if (err->code == DG_OK && c.too_long)
        c.line = c.too_long, fail(&c, "a line longer than %s bytes%s%s", "4094", "", "");
    if (err->code != DG_OK)
        return err->code;
    if (rc != 0) {
        c.line = rc > 0 ? (unsigned)rc : c.line;
        fail(&c, "expected [section], key = value, or a comment starting with # or ;%s%s%s", "", "", "");
        return err->code;
    }
    if (project_decl_finish(p, &c, err) != DG_OK)
        return err->code;
    if (p->decl.declared && c.schema_line)
        snprintf(p->decl.where, sizeof p->decl.where, "%.120s:%u", p->path, c.schema_line);
    else if (p->decl.declared)
        snprintf(p->decl.where, sizeof p->decl.where, "%s", p->decl.fields[0].where);
    return project_complete(p, &c, err);
}

bool dg_harness__project_find(char *out, size_t cap)
{
    char prefix[HARNESS_PROJECT_PATH_MAX] = "";
    char cwd[HARNESS_PROJECT_PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return false;
    for (;;) {
        char cand[HARNESS_PROJECT_PATH_MAX + 16];
        snprintf(cand, sizeof cand, "%s%s", prefix, HARNESS_PROJECT_FILE);
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
            snprintf(out, cap, "%s", cand);
            return strlen(cand) < cap;
        }
        char *slash = strrchr(cwd, '/');
        if (!slash || slash == cwd || strlen(prefix) + 4 >= sizeof prefix)
            return false; /* the root's own file is not looked for: nothing lives there */
        *slash = 0;
        strcat(prefix, "../");
    }
}

/* ---- the scenario list -------------------------------------------------------------------------- */

static int cmp_ref(const void *a, const void *b)
{
    return strcmp(((const harness__scenario_ref *)a)->name, ((const harness__scenario_ref *)b)->name);
}

void dg_harness__scenario_refs_free(harness__scenario_ref *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i].path);
    free(v);
}

static bool wanted(const harness__project *p, const char *path)
{
    struct stat st;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (base[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    size_t n = strlen(base), ne = p->engine->scenario_ext ? strlen(p->engine->scenario_ext) : 0;
    return n > ne && strcmp(base + n - ne, p->engine->scenario_ext ? p->engine->scenario_ext : "") == 0;
}

dg_status dg_harness__project_scenarios(const harness__project *p, harness__scenario_ref **out, size_t *n,
                                     dg_error *err)
{
    *out = NULL;
    *n = 0;
    struct stat st;
    char pattern[HARNESS_PROJECT_PATH_MAX + 4];
    bool dir = stat(p->scenarios, &st) == 0 && S_ISDIR(st.st_mode);
    snprintf(pattern, sizeof pattern, dir ? "%s/*" : "%s", p->scenarios);
    glob_t g;
    int rc = glob(pattern, 0, NULL, &g);
    if (rc != 0 && rc != GLOB_NOMATCH)
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, p->path, "cannot list the scenarios %s", p->scenarios);
    harness__scenario_ref *v = calloc(rc == 0 && g.gl_pathc ? g.gl_pathc : 1, sizeof *v);
    size_t k = 0;
    for (size_t i = 0; v && rc == 0 && i < g.gl_pathc; i++) {
        if (!wanted(p, g.gl_pathv[i]))
            continue;
        dg_harness__scenario_name(g.gl_pathv[i], v[k].name, sizeof v[k].name);
        v[k].path = strdup(g.gl_pathv[i]);
        if (!v[k++].path)
            break;
    }
    if (rc == 0)
        globfree(&g);
    if (!v || (k && !v[k - 1].path)) {
        dg_harness__scenario_refs_free(v, k);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, p->path, "out of memory");
    }
    if (k)
        qsort(v, k, sizeof *v, cmp_ref);
    for (size_t i = 1; i < k; i++)
        if (strcmp(v[i].name, v[i - 1].name) == 0) {
            dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, p->path, "two scenarios are both named %s (%s and %s): "
                         "names are file names without the extension, and must differ", v[i].name, v[i - 1].path,
                         v[i].path);
            dg_harness__scenario_refs_free(v, k);
            return DG_E_USAGE;
        }
    *out = v;
    *n = k;
    return DG_OK;
}

/* ---- detgate init -------------------------------------------------------------------------------- */

dg_status dg_harness__project_write_template(const char *path, const char *run, const char *scenarios,
                                          dg_error *err)
{
    char tmp[HARNESS_PROJECT_PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    struct stat st;
    if (stat(path, &st) == 0)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, path, "already exists: not overwritten");
    FILE *f = fopen(tmp, "w");
    if (!f)
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, tmp, "cannot create: %s", strerror(errno));
    fprintf(f,
            "# detgate project file (docs/ENGINES.md). detgate finds it from the current folder upward;\n"
            "# relative paths are relative to this file's folder. Comments are whole lines (# or ;).\n"
            "\n"
            "[project]\n"
            "# what the engine takes as a scenario: a folder (every file in it) or a glob\n"
            "scenarios = %s\n"
            "# where `detgate bless` writes the goldens and BLESS.log, and `detgate gate` reads them\n"
            "golden = golden\n"
            "# recording format: flrep or rply\n"
            "format = flrep\n"
            "# ticks between keyframes (15..3600); leave out for the stream's or the format's default\n"
            "# keyframe_interval = 120\n"
            "\n"
            "[engine]\n"
            "kind = process\n"
            "# runs in this folder through /bin/sh -c; {scenario} becomes the scenario's path (quoted).\n"
            "# Its standard output is the state stream (CSV, JSON Lines or binary: docs/STATES-STREAM.md).\n"
            "run = %s\n"
            "# seconds one scenario may take before the engine is stopped (exit 125)\n"
            "time_limit = 600\n"
            "\n"
            "[build]\n"
            "# how bisect and matrix build the engine: runs in this folder of each revision (or source tree);\n"
            "# {src} {build} {cc} {cflags} are one quoted word each, also $DETGATE_SRC $DETGATE_BUILD $CC $CFLAGS.\n"
            "# The run command then starts with $DETGATE_BUILD set: run = ${DETGATE_BUILD:-./build}/engine ...\n"
            "# An engine with nothing to build (a script): command = true\n"
            "# command = cmake -S {src} -B {build} -DCMAKE_C_COMPILER={cc} -DCMAKE_C_FLAGS={cflags} && cmake --build {build}\n"
            "\n"
            "[gate]\n"
            "# scenarios verified at once (0 = one per CPU)\n"
            "jobs = 1\n"
            "# sub-quantum (raw float) drift: warn (report it, exit 0), fail (exit 1) or ignore\n"
            "raw = warn\n",
            scenarios, run);
    bool ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "cannot write: %s", strerror(errno));
    }
    return DG_OK;
}
