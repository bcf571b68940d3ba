/* reports/report_write.c — the report room's front door: the public writers. Every kind is
 * rendered into memory first, so a report either reaches its FILE whole or the call fails, and
 * dg_report_write_file replaces its target atomically (temporary in the same folder + rename). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report_internal.h"

typedef void (*report__render_fn)(const dg_report *, const dg_report_opts *, dg_rsink *);

static report__render_fn report__renderer(dg_report_kind kind)
{
    switch (kind) {
    case DG_REPORT_TEXT: return dg_rep__text;
    case DG_REPORT_JSON: return dg_rep__json;
    case DG_REPORT_JUNIT: return dg_rep__junit;
    case DG_REPORT_MARKDOWN: return dg_rep__markdown;
    case DG_REPORT_HTML: return dg_rep__html;
    }
    return NULL;
}

static dg_status report__render_sink(const dg_report *r, dg_report_kind kind, const dg_report_opts *opts,
                                     dg_rsink *s, dg_error *err)
{
    static const dg_report_opts defaults = {0};
    report__render_fn fn = report__renderer(kind);
    if (!r || !fn)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "report", "no report or unknown report kind %d",
                            (int)kind);
    dg_rep__sink_init(s);
    fn(r, opts ? opts : &defaults, s);
    if (s->nomem) {
        dg_rep__sink_free(s);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, dg_report_kind_name(kind),
                            "out of memory while rendering the report");
    }
    return DG_OK;
}

dg_status dg_report_render(const dg_report *r, dg_report_kind kind, const dg_report_opts *opts, char **out,
                           size_t *len, dg_error *err)
{
    if (!out || !len)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "report", "no output pointer");
    dg_rsink s;
    dg_status st = report__render_sink(r, kind, opts, &s, err);
    if (st != DG_OK)
        return st;
    if (!s.p) { /* an empty rendering still hands back a string */
        s.p = calloc(1, 1);
        if (!s.p)
            return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "report", "out of memory");
    }
    *out = s.p;
    *len = s.len;
    return DG_OK;
}

dg_status dg_report_write(const dg_report *r, dg_report_kind kind, FILE *f, const dg_report_opts *opts,
                          dg_error *err)
{
    if (!f)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "report", "no output stream");
    dg_rsink s;
    dg_status st = report__render_sink(r, kind, opts, &s, err);
    if (st != DG_OK)
        return st;
    bool ok = fwrite(s.p ? s.p : "", 1, s.len, f) == s.len && fflush(f) == 0;
    int e = errno;
    dg_rep__sink_free(&s);
    if (!ok)
        return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, dg_report_kind_name(kind),
                            "writing the report failed: %s", strerror(e));
    return DG_OK;
}

dg_status dg_report_write_text(const dg_report *r, FILE *f, const dg_report_opts *opts, dg_error *err)
{
    return dg_report_write(r, DG_REPORT_TEXT, f, opts, err);
}

dg_status dg_report_write_json(const dg_report *r, FILE *f, const dg_report_opts *opts, dg_error *err)
{
    return dg_report_write(r, DG_REPORT_JSON, f, opts, err);
}

dg_status dg_report_write_junit(const dg_report *r, FILE *f, const dg_report_opts *opts, dg_error *err)
{
    return dg_report_write(r, DG_REPORT_JUNIT, f, opts, err);
}

dg_status dg_report_write_markdown(const dg_report *r, FILE *f, const dg_report_opts *opts, dg_error *err)
{
    return dg_report_write(r, DG_REPORT_MARKDOWN, f, opts, err);
}

dg_status dg_report_write_html(const dg_report *r, FILE *f, const dg_report_opts *opts, dg_error *err)
{
    return dg_report_write(r, DG_REPORT_HTML, f, opts, err);
}

/* ---- atomic file ------------------------------------------------------------------------------ */

static bool report__write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        p += k;
        n -= (size_t)k;
    }
    return true;
}

static dg_status report__io_fail(dg_error *err, const char *path, const char *what, int e)
{
    return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "%s: %s", what, strerror(e));
}

dg_status dg_report_write_file(const dg_report *r, dg_report_kind kind, const char *path,
                               const dg_report_opts *opts, dg_error *err)
{
    if (!path || !*path)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "report", "no output path");
    dg_rsink s;
    dg_status st = report__render_sink(r, kind, opts, &s, err);
    if (st != DG_OK)
        return st;
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp) {
        dg_rep__sink_free(&s);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory");
    }
    /* Same folder as the target, so rename() cannot cross a filesystem. */
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        st = report__io_fail(err, path, "cannot create a temporary file next to it", errno);
        goto done;
    }
    /* mkstemp makes 0600; a report is meant to be read by others (CI uploaders, web servers). */
    if (!report__write_all(fd, s.p ? s.p : "", s.len) || fchmod(fd, 0644) != 0 || fsync(fd) != 0) {
        st = report__io_fail(err, path, "writing the temporary file failed", errno);
        close(fd);
        unlink(tmp);
        goto done;
    }
    if (close(fd) != 0) {
        st = report__io_fail(err, path, "closing the temporary file failed", errno);
        unlink(tmp);
        goto done;
    }
    if (rename(tmp, path) != 0) {
        st = report__io_fail(err, path, "renaming the temporary file into place failed", errno);
        unlink(tmp);
    }
done:
    free(tmp);
    dg_rep__sink_free(&s);
    return st;
}
