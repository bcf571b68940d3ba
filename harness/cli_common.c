/* harness/cli_common.c — what every `detgate` subcommand shares: error and usage messages, the
 * report flags and their atomic writing, exit codes, the TTY progress line, file-kind detection. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "detgate %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see: detgate %s --help)\n", cmd);
    va_end(ap);
    return CLI_USAGE;
}

void cli_print_error(const char *cmd, const dg_error *err)
{
    char buf[600];
    dg_error_format(err, buf, sizeof buf);
    fprintf(stderr, "detgate %s: %s\n", cmd, buf);
}

/* ---- reports ------------------------------------------------------------------------------------ */

bool cli_report_opt(cli_reports *r, int opt, const char *arg)
{
    switch (opt) {
    case 0x100: r->dir = arg; return true;
    case 0x101: r->text = arg; return true;
    case 0x102: r->json = arg; return true;
    case 0x103: r->junit = arg; return true;
    case 0x104: r->markdown = arg; return true;
    case 0x105: r->html = arg; return true;
    case 0x106: r->markdown_append = arg; return true;
    case 'q': r->quiet = true; return true;
    default: return false;
    }
}

static bool add_report(cli_reports *r, const char *what, const char *path, bool append, dg_report_kind kind)
{
    size_t i = r->outs.n;
    if (!cli_outs_add(&r->outs, what, path, append))
        return path == NULL;
    r->kinds[i] = (int)kind;
    return true;
}

/* The report folder, before the run: a folder, or missing below a writable folder (it is made only
 * when the reports are written, so a refused or interrupted run leaves no empty folder). */
static int check_report_dir(const char *dir, const char *cmd, bool *later)
{
    char up[CLI_PATH_CAP];
    if (strlen(dir) >= CLI_PATH_CAP - 64) {
        fprintf(stderr, "detgate %s: --report-dir %s: the path is too long\n", cmd, dir);
        return CLI_USAGE;
    }
    snprintf(up, sizeof up, "%s", dir);
    struct stat st;
    *later = false;
    while (stat(up, &st) != 0) {
        *later = true;
        char *slash = strrchr(up, '/');
        while (slash && slash > up && slash[1] == 0) { /* "a/b/" */
            *slash = 0;
            slash = strrchr(up, '/');
        }
        if (!slash)
            snprintf(up, sizeof up, ".");
        else if (slash == up)
            snprintf(up, sizeof up, "/");
        else
            *slash = 0;
    }
    const char *why = !S_ISDIR(st.st_mode) ? "is not a folder" : access(up, W_OK | X_OK) != 0 ? "is not writable" : NULL;
    if (why) {
        fprintf(stderr, "detgate %s: --report-dir %s: %s%s%s\n", cmd, dir, *later ? up : "",
                *later ? " " : "", why);
        return CLI_USAGE;
    }
    return 0;
}

int cli_reports_prepare(cli_reports *r, const char *cmd, const char *const *inputs, size_t n_inputs)
{
    static const struct { dg_report_kind k; const char *name; } files[] = {
        {DG_REPORT_TEXT, "report.txt"}, {DG_REPORT_JSON, "report.json"}, {DG_REPORT_JUNIT, "report.xml"},
        {DG_REPORT_MARKDOWN, "report.md"}, {DG_REPORT_HTML, "report.html"}};
    static char dir_paths[5][CLI_PATH_CAP]; /* one command runs per process */
    for (size_t i = 0; i < CLI_OUTS_MAX; i++) /* the command's own outputs, added before: not reports */
        r->kinds[i] = -1;
    bool ok = true;
    if (r->dir) {
        bool later = false;
        int rc = check_report_dir(r->dir, cmd, &later);
        if (rc)
            return rc;
        for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
            snprintf(dir_paths[i], sizeof dir_paths[i], "%s/%s", r->dir, files[i].name);
            size_t k = r->outs.n;
            ok &= add_report(r, "--report-dir", dir_paths[i], false, files[i].k);
            if (k < r->outs.n)
                r->outs.o[k].folder_later = later;
        }
    }
    ok &= add_report(r, "--text", r->text, false, DG_REPORT_TEXT);
    ok &= add_report(r, "--json", r->json, false, DG_REPORT_JSON);
    ok &= add_report(r, "--junit", r->junit, false, DG_REPORT_JUNIT);
    ok &= add_report(r, "--markdown", r->markdown, false, DG_REPORT_MARKDOWN);
    ok &= add_report(r, "--html", r->html, false, DG_REPORT_HTML);
    ok &= add_report(r, "--markdown-append", r->markdown_append, true, DG_REPORT_MARKDOWN);
    if (!ok) {
        fprintf(stderr, "detgate %s: more than %d outputs\n", cmd, CLI_OUTS_MAX);
        return CLI_USAGE;
    }
    int rc = cli_outs_prepare(&r->outs, cmd, inputs, n_inputs);
    r->prepared = rc == 0;
    return rc;
}

/* Renders every report into its work file; false (and every work file removed) when one fails. */
static bool render_reports(const dg_report *rep, cli_reports *r, const char *cmd)
{
    if (r->dir && !cli_is_dir(r->dir) && !cli_mkdirs(r->dir)) {
        fprintf(stderr, "detgate %s: --report-dir %s: cannot create the report folder: %s\n", cmd, r->dir,
                strerror(errno));
        cli_outs_discard(&r->outs);
        return false;
    }
    for (size_t i = 0; i < r->outs.n; i++) {
        if (r->kinds[i] < 0)
            continue;
        dg_error err;
        dg_error_clear(&err);
        char *buf = NULL;
        size_t len = 0;
        bool ok = dg_report_render(rep, (dg_report_kind)r->kinds[i], NULL, &buf, &len, &err) == DG_OK &&
                  cli_out_write_buf(&r->outs.o[i], buf, len, &err);
        free(buf);
        if (!ok) {
            cli_print_error(cmd, &err);
            fprintf(stderr, "detgate %s: no report written\n", cmd);
            cli_outs_discard(&r->outs);
            return false;
        }
    }
    return true;
}

bool cli_write_reports(const dg_report *rep, cli_reports *r, const char *cmd)
{
    if (!r->prepared && cli_reports_prepare(r, cmd, NULL, 0) != 0)
        return false;
    bool ok = render_reports(rep, r, cmd);
    /* the summary before the files go in place: a report written through a descriptor that shares
     * stdout's file is appended after it */
    if (!r->quiet && !r->no_summary && !cli_outs_to_stdout(&r->outs)) {
        dg_report_opts ro = {0};
        ro.colour = isatty(fileno(stdout)) && !getenv("NO_COLOR");
        dg_error err;
        dg_error_clear(&err);
        dg_report_write_text(rep, stdout, &ro, &err);
        fflush(stdout);
    }
    return ok && cli_outs_commit(&r->outs, cmd);
}

dg_report *cli_report_new(const char *cmd, dg_error *err)
{
    dg_report *rep = dg_report_new(cmd, HARNESS_VERSION_NUMBER, NULL, err);
    if (rep)
        rep->started_unix = (int64_t)time(NULL);
    return rep;
}

int cli_exit_for(const dg_report *rep)
{
    bool fail = false, error = false;
    for (uint32_t i = 0; i < rep->n_scenarios; i++) {
        dg_report_status s = dg_report_scenario_status(rep->scenarios[i]);
        fail |= s == DG_REPORT_FAIL;
        error |= s == DG_REPORT_ERROR;
    }
    if (rep->bisect.present && rep->bisect.first_bad_commit)
        fail = true;
    return fail ? CLI_DIVERGED : error ? CLI_UNTESTED : CLI_EQUAL;
}

/* ---- progress ------------------------------------------------------------------------------------- */

void cli_progress_init(cli_progress *p, const char *label)
{
    p->on = isatty(fileno(stderr)) != 0;
    p->label = label;
    p->last = 0;
}

void cli_progress_cb(void *user, uint64_t tick, uint64_t total)
{
    cli_progress *p = user;
    if (!p || !p->on)
        return;
    double now = dg_harness__now();
    if (now - p->last < 0.2)
        return;
    p->last = now;
    if (total)
        fprintf(stderr, "\r%s: tick %llu/%llu (%3.0f%%)   ", p->label, (unsigned long long)tick,
                (unsigned long long)total, 100.0 * (double)(tick + 1) / (double)total);
    else
        fprintf(stderr, "\r%s: tick %llu   ", p->label, (unsigned long long)tick);
    fflush(stderr);
}

void cli_progress_done(cli_progress *p)
{
    if (p->on && p->last > 0)
        fprintf(stderr, "\r\033[K");
    p->last = 0;
}

/* ---- files ---------------------------------------------------------------------------------------- */

int cli_detect(const char *path, cli_kind *kind, const harness__format **fmt, dg_error *err)
{
    *kind = CLI_KIND_UNKNOWN;
    *fmt = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "cannot open: %s", strerror(errno));
        return -1;
    }
    unsigned char m[4] = {0};
    size_t n = fread(m, 1, 4, f);
    fclose(f);
    if ((*fmt = dg_harness__format_of_magic(m, n)) != NULL)
        *kind = CLI_KIND_RECORDING;
    else if ((n == 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd) ||
             (n >= 2 && m[0] == '#' && m[1] == ' '))
        *kind = CLI_KIND_HASHLOG;
    return 0;
}

uint8_t *cli_slurp(const char *path, size_t *len, dg_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "cannot open: %s", strerror(errno));
        return NULL;
    }
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 1 << 16;
            uint8_t *b = realloc(buf, nc);
            if (!b) {
                free(buf);
                fclose(f);
                dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory reading the file");
                return NULL;
            }
            buf = b;
            cap = nc;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad) {
        free(buf);
        dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "read failed");
        return NULL;
    }
    *len = n;
    return buf;
}

bool cli_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool cli_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool cli_mkdirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == 0) {
            char c = buf[i];
            buf[i] = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return false;
            buf[i] = c;
        }
    }
    return cli_is_dir(path);
}

bool cli_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return false;
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

bool cli_resolve_scenario(const char *arg, const char *corpus_dir, char *out, size_t cap)
{
    if (cli_file_exists(arg)) {
        snprintf(out, cap, "%s", arg);
        return true;
    }
    if (!strchr(arg, '/')) {
        snprintf(out, cap, "%s/%s.scn", corpus_dir ? corpus_dir : "corpus/scenarios", arg);
        if (cli_file_exists(out))
            return true;
#ifdef DETGATE_SOURCE_DIR
        snprintf(out, cap, "%s/corpus/scenarios/%s.scn", DETGATE_SOURCE_DIR, arg);
        if (!corpus_dir && cli_file_exists(out))
            return true;
#endif
    }
    snprintf(out, cap, "%s", arg);
    return false;
}

/* ---- lengths -------------------------------------------------------------------------------------- */

cli_span cli_file_span(const char *path, const harness__format *f)
{
    cli_span sp = {false, 0, 0};
    if (f && f->span(path, &sp.ticks, &sp.last))
        sp.known = true;
    return sp;
}

cli_span cli_stream_span(const harness__stream *s)
{
    return (cli_span){true, s->n, s->n ? s->v[s->n - 1].tick : 0};
}

void cli_length_note(char *buf, size_t cap, const char *name_a, cli_span a, const char *name_b, cli_span b)
{
    buf[0] = 0;
    if (!a.known || !b.known || (a.ticks == 0 && b.ticks == 0) || (a.ticks && b.ticks && a.last == b.last))
        return; /* the same end: any other difference is counted tick by tick */
    bool b_short = !b.ticks || (a.ticks && b.last < a.last);
    const char *sn = b_short ? name_b : name_a, *ln = b_short ? name_a : name_b;
    cli_span sh = b_short ? b : a, lo = b_short ? a : b;
    if (!sh.ticks)
        snprintf(buf, cap, "%s has no tick, %s ends at tick %llu; ", sn, ln, (unsigned long long)lo.last);
    else
        snprintf(buf, cap, "%s ends at tick %llu, %s at %llu; ", sn, (unsigned long long)sh.last, ln,
                 (unsigned long long)lo.last);
}
