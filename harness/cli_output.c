/* harness/cli_output.c — every file a command writes: checked before the command runs (folder,
 * kind, not one of its inputs), written under a registered temp name, and put in place at the end,
 * all outputs of the command together (docs/CLI.md, "Outputs"). */
/* realpath() is XSI */
#define _XOPEN_SOURCE 700
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The folder part of path ("." when it has none). */
static void out_folder(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, cap, ".");
    else if (slash == path)
        snprintf(out, cap, "/");
    else
        snprintf(out, cap, "%.*s", (int)(slash - path), path);
}

/* The last extension of path's file name (".zst", ".flrep", ...), kept on the temp name: the hash
 * log writer compresses by it. */
static const char *out_suffix(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    return dot && dot != base && strlen(dot) < 16 ? dot : "";
}

static int out_refuse(const char *cmd, const cli_out *o, const char *fmt, const char *detail)
{
    fprintf(stderr, "detgate %s: %s %s: ", cmd, o->what, o->given);
    fprintf(stderr, fmt, detail);
    fputc('\n', stderr);
    return CLI_USAGE;
}

/* A new file (or a regular one to replace) goes to a temp in the folder it will be renamed in. */
static int out_check_folder(const char *cmd, const cli_out *o)
{
    char dir[CLI_PATH_CAP];
    out_folder(o->final, dir, sizeof dir);
    struct stat st;
    if (stat(dir, &st) != 0)
        return out_refuse(cmd, o, "the folder %s does not exist", dir);
    if (!S_ISDIR(st.st_mode))
        return out_refuse(cmd, o, "%s is not a folder", dir);
    if (access(dir, W_OK | X_OK) != 0)
        return out_refuse(cmd, o, "the folder %s is not writable", dir);
    return 0;
}

/* /dev/fd/N, /dev/stdout and the like name an open descriptor, whatever file is behind it: written
 * through it, never replaced (a rename would swap the file under the shell's redirection). */
static bool out_is_descriptor(const char *path)
{
    static const char *const prefixes[] = {"/dev/fd/", "/proc/self/fd/", "/dev/stdout", "/dev/stderr"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(path, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

/* Decides how o is written: rename onto a regular file (a symbolic link's target), write in place
 * (stdout, a device, a FIFO, a descriptor), or append. Returns 0 or CLI_USAGE (printed). */
static int out_classify(const char *cmd, cli_out *o, struct stat *st, bool *exists)
{
    *exists = false;
    if (strcmp(o->given, "-") == 0 || strcmp(o->given, "/dev/stdout") == 0 || strcmp(o->given, "/dev/fd/1") == 0 ||
        strcmp(o->given, "/proc/self/fd/1") == 0) {
        o->how = o->append ? CLI_OUT_APPEND : CLI_OUT_INPLACE;
        o->to_stdout = true;
        return 0;
    }
    if (!o->given[0])
        return out_refuse(cmd, o, "%s", "an empty path");
    if (strlen(o->given) >= CLI_PATH_CAP - 64)
        return out_refuse(cmd, o, "%s", "the path is too long");
    snprintf(o->final, sizeof o->final, "%s", o->given);
    struct stat lst;
    if (lstat(o->given, &lst) != 0) {
        if (errno != ENOENT)
            return out_refuse(cmd, o, "%s", strerror(errno));
        o->how = o->append ? CLI_OUT_APPEND : CLI_OUT_RENAME;
        return o->folder_later ? 0 : out_check_folder(cmd, o);
    }
    if (stat(o->given, st) != 0)
        return out_refuse(cmd, o, "%s", "is a symbolic link to a missing file");
    *exists = true;
    if (S_ISDIR(st->st_mode))
        return out_refuse(cmd, o, "%s", "is a folder");
    if (S_ISBLK(st->st_mode) || S_ISSOCK(st->st_mode))
        return out_refuse(cmd, o, "%s", S_ISBLK(st->st_mode) ? "is a block device: refusing to write on it"
                                                             : "is a socket");
    if (!S_ISREG(st->st_mode) || out_is_descriptor(o->given)) { /* a device, a FIFO, /dev/fd/N: in place */
        o->how = o->append ? CLI_OUT_APPEND : CLI_OUT_INPLACE;
        return access(o->given, W_OK) == 0 ? 0 : out_refuse(cmd, o, "is not writable: %s", strerror(errno));
    }
    if (o->append) {
        o->how = CLI_OUT_APPEND;
        return access(o->given, W_OK) == 0 ? 0 : out_refuse(cmd, o, "is not writable: %s", strerror(errno));
    }
    o->how = CLI_OUT_RENAME;
    if (S_ISLNK(lst.st_mode)) { /* replace the target, keep the link */
        char real[PATH_MAX];
        if (!realpath(o->given, real) || strlen(real) >= sizeof o->final)
            return out_refuse(cmd, o, "cannot resolve the symbolic link: %s", strerror(errno));
        snprintf(o->final, sizeof o->final, "%s", real);
    }
    return out_check_folder(cmd, o);
}

/* Refuses an output that is one of the inputs, or the same file as an earlier output. */
static int out_check_distinct(const char *cmd, const cli_outs *s, size_t i, const struct stat *st, bool exists,
                              const char *const *inputs, size_t n_inputs)
{
    const cli_out *o = &s->o[i];
    if (o->how == CLI_OUT_INPLACE || o->to_stdout)
        return 0; /* /dev/null twice, or a FIFO, is no overwrite */
    for (size_t k = 0; exists && k < n_inputs; k++) {
        struct stat in;
        if (inputs[k] && stat(inputs[k], &in) == 0 && in.st_dev == st->st_dev && in.st_ino == st->st_ino) {
            fprintf(stderr, "detgate %s: %s %s names the input %s (the same file): refusing to overwrite it\n",
                    cmd, o->what, o->given, inputs[k]);
            return CLI_USAGE;
        }
    }
    for (size_t k = 0; k < i; k++) {
        const cli_out *p = &s->o[k];
        if (p->how == CLI_OUT_INPLACE || p->to_stdout)
            continue;
        struct stat ps;
        bool same = exists && stat(p->given, &ps) == 0 ? ps.st_dev == st->st_dev && ps.st_ino == st->st_ino
                                                      : strcmp(p->final, o->final) == 0;
        if (same) {
            fprintf(stderr, "detgate %s: %s %s and %s %s name the same file\n", cmd, p->what, p->given, o->what,
                    o->given);
            return CLI_USAGE;
        }
    }
    return 0;
}

cli_out *cli_outs_add(cli_outs *s, const char *what, const char *path, bool append)
{
    if (!path || s->n == CLI_OUTS_MAX)
        return NULL;
    cli_out *o = &s->o[s->n++];
    memset(o, 0, sizeof *o);
    o->what = what;
    o->given = path;
    o->append = append;
    return o;
}

int cli_outs_prepare(cli_outs *s, const char *cmd, const char *const *inputs, size_t n_inputs)
{
    size_t n_stdout = 0;
    for (size_t i = 0; i < s->n; i++) {
        cli_out *o = &s->o[i];
        struct stat st;
        bool exists;
        int rc = out_classify(cmd, o, &st, &exists);
        if (rc == 0)
            rc = out_check_distinct(cmd, s, i, &st, exists, inputs, n_inputs);
        if (rc == 0 && o->to_stdout && ++n_stdout > 1)
            rc = out_refuse(cmd, o, "%s", "only one output can go to standard output");
        /* the work file: beside the final name when it is renamed there, in TMPDIR when copied */
        if (rc == 0) {
            char dir[CLI_PATH_CAP];
            out_folder(o->final, dir, sizeof dir);
            bool in_folder = o->how == CLI_OUT_RENAME;
            if (!dg_harness__temp_path(o->work, sizeof o->work, in_folder ? dir : NULL, "out", out_suffix(o->given)))
                rc = out_refuse(cmd, o, "%s", "the path is too long");
        }
        if (rc) {
            cli_outs_discard(s);
            return rc;
        }
    }
    return 0;
}

bool cli_outs_to_stdout(const cli_outs *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->o[i].to_stdout)
            return true;
    return false;
}

/* Copies the finished work file to fd (stdout, a device, a FIFO, an appended file). */
static bool out_copy(const char *work, int fd)
{
    int in = open(work, O_RDONLY);
    if (in < 0)
        return false;
    char buf[1 << 16];
    ssize_t got;
    bool ok = true;
    while (ok && (got = read(in, buf, sizeof buf)) != 0) {
        if (got < 0) {
            ok = errno == EINTR;
            continue;
        }
        for (ssize_t done = 0; ok && done < got;) {
            ssize_t w = write(fd, buf + done, (size_t)(got - done));
            if (w < 0)
                ok = errno == EINTR;
            else
                done += w;
        }
    }
    close(in);
    return ok;
}

static bool out_put_in_place(cli_out *o)
{
    if (o->to_stdout) {
        fflush(stdout);
        return out_copy(o->work, STDOUT_FILENO);
    }
    /* a regular file behind a descriptor path may already hold what went through the descriptor */
    struct stat st;
    bool regular = stat(o->final, &st) == 0 && S_ISREG(st.st_mode);
    int flags = O_WRONLY | (o->how == CLI_OUT_APPEND || regular ? O_APPEND : 0) |
                (o->how == CLI_OUT_APPEND ? O_CREAT : 0);
    int fd = open(o->final, flags, 0644);
    if (fd < 0)
        return false;
    bool ok = out_copy(o->work, fd);
    if (o->how == CLI_OUT_APPEND && fsync(fd) != 0 && errno != EINVAL)
        ok = false;
    return close(fd) == 0 && ok;
}

/* Puts one finished output in place; false with a message. The work file is gone afterwards. */
static bool out_commit_one(cli_out *o, const char *cmd)
{
    bool done = o->how == CLI_OUT_RENAME ? rename(o->work, o->final) == 0 : out_put_in_place(o);
    if (!done)
        fprintf(stderr, "detgate %s: %s %s: %s failed: %s\n", cmd, o->what, o->given,
                o->how == CLI_OUT_RENAME ? "renaming the finished file into place" : "writing", strerror(errno));
    if (o->how != CLI_OUT_RENAME || !done)
        unlink(o->work);
    o->work[0] = 0;
    return done;
}

bool cli_outs_commit(cli_outs *s, const char *cmd)
{
    /* the renames with SIGINT/SIGTERM/SIGHUP held back: an interrupt lands before all or after all;
     * the copies into stdout, a device or a FIFO (which may block on a reader) stay interruptible */
    sigset_t hold, old;
    sigemptyset(&hold);
    sigaddset(&hold, SIGINT);
    sigaddset(&hold, SIGTERM);
    sigaddset(&hold, SIGHUP);
    bool ok = true;
    for (int phase = 0; phase < 2; phase++) {
        if (phase == 0)
            pthread_sigmask(SIG_BLOCK, &hold, &old);
        for (size_t i = 0; i < s->n; i++) {
            cli_out *o = &s->o[i];
            if (!o->work[0] || (o->how == CLI_OUT_RENAME) != (phase == 0))
                continue;
            if (access(o->work, F_OK) != 0) {
                o->work[0] = 0; /* its writer failed and removed it: nothing to put in place */
                continue;
            }
            ok &= out_commit_one(o, cmd);
        }
        if (phase == 0)
            pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    return ok;
}

void cli_outs_discard(cli_outs *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->o[i].work[0]) {
            unlink(s->o[i].work);
            s->o[i].work[0] = 0;
        }
}

bool cli_out_write_buf(cli_out *o, const void *p, size_t n, dg_error *err)
{
    dg_harness__temp_remember(o->work);
    int fd = open(o->work, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, o->given, "cannot create %s: %s", o->work, strerror(errno));
        return false;
    }
    const char *b = p;
    bool ok = true;
    for (size_t done = 0; ok && done < n;) {
        ssize_t w = write(fd, b + done, n - done);
        if (w < 0)
            ok = errno == EINTR;
        else
            done += (size_t)w;
    }
    /* a report renamed into place is on disk first */
    if (ok && o->how == CLI_OUT_RENAME && fsync(fd) != 0)
        ok = false;
    if (close(fd) != 0)
        ok = false;
    if (!ok) {
        dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, o->given, "writing %s failed: %s", o->work, strerror(errno));
        unlink(o->work);
    }
    return ok;
}
