/* harness/cli_bisect.c — the commands that build the project elsewhere: `detgate bisect` (records a
 * scenario at the good revision, then drives `git bisect run` in a separate worktree, each step
 * built in its own folder) and `detgate matrix` (sim_stub under several compilers and flags, grouped
 * into classes that record identically). Your working tree is never touched. */
/* realpath() is XSI */
#define _XOPEN_SOURCE 700
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <signal.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PATH_CAP 4096
#define WORK_CAP 1024 /* work folders, the repository, the scenario: room for the names built on them */

/* ---- running other programs ---------------------------------------------------------------------- */

/* The signal that interrupted `bisect` (0: none). Its handler only records it: the parent then stops
 * its child, removes the worktree with git and its folder, and dies of the signal (bisect_cleanup). */
static volatile sig_atomic_t bisect_sig;
static void bisect_on_signal(int sig) { bisect_sig = sig; }
/* The TMPDIR every child gets: a folder inside the work folder, so what a killed compiler leaves
 * (its cc*.s) goes when the work folder goes. Empty until the work folder exists. */
static char bisect_child_tmp[PATH_CAP + 8];

/* Runs argv (execvp) in cwd (NULL = here) with stdout+stderr appended to log (NULL = inherited),
 * in a process group of its own, so an interrupt reaches it (and what it started: git bisect run's
 * steps, cmake, make) through the parent. Returns the exit status, or -1 when it could not run / was
 * killed; once bisect was interrupted, only cleanup commands (even_interrupted) run. */
static int run_child(char *const argv[], const char *cwd, const char *log, bool even_interrupted)
{
    if (bisect_sig && !even_interrupted)
        return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setpgid(0, 0);
        if (cwd && chdir(cwd) != 0)
            _exit(127);
        if (log) {
            int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd < 0)
                _exit(127);
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) {
            dup2(devnull, 0);
            close(devnull);
        }
        if (bisect_child_tmp[0])
            setenv("TMPDIR", bisect_child_tmp, 1);
        execvp(argv[0], argv);
        _exit(127);
    }
    setpgid(pid, pid); /* also here: the child may not have run yet when a signal comes */
    int st;
    bool forwarded = false;
    for (;;) {
        if (bisect_sig && !forwarded && !even_interrupted) {
            kill(-pid, bisect_sig);
            forwarded = true;
        }
        if (waitpid(pid, &st, 0) >= 0)
            break;
        if (errno != EINTR)
            return -1;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run(char *const argv[], const char *cwd, const char *log) { return run_child(argv, cwd, log, false); }

/* First line of `git -C repo A1 A2 A3 A4` output into out ("" on failure); trailing arguments may be
 * NULL (the list ends at the first NULL). */
static bool git_line(const char *repo, char *out, size_t cap, const char *a1, const char *a2, const char *a3,
                     const char *a4)
{
    int fds[2];
    out[0] = 0;
    if (pipe(fds) != 0)
        return false;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2);
        execlp("git", "git", "-C", repo, a1, a2, a3, a4, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t got;
    while (n + 1 < cap && (got = read(fds[0], out + n, cap - 1 - n)) > 0)
        n += (size_t)got;
    char sink[256];
    while (read(fds[0], sink, sizeof sink) > 0) {
    }
    close(fds[0]);
    out[n] = 0;
    char *nl = strchr(out, '\n');
    if (nl)
        *nl = 0;
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        out[0] = 0;
        return false;
    }
    return out[0] != 0;
}

static bool self_exe(char *out, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    if (n <= 0)
        return false;
    out[n] = 0;
    return true;
}

static bool absolute(const char *in, char *out, size_t cap)
{
    char buf[PATH_MAX];
    if (!realpath(in, buf) || strlen(buf) >= cap)
        return false;
    snprintf(out, cap, "%s", buf);
    return true;
}

/* Configures and builds the detgate target of the tree at src into bdir (log appended). */
static bool build_tree(const char *src, const char *bdir, const char *build_type, const char *cc,
                       const char *sim_flags, const char *log)
{
    char s_arg[PATH_CAP + 8], b_arg[PATH_CAP + 8], bt[80], ccarg[PATH_CAP + 24];
    snprintf(s_arg, sizeof s_arg, "-S%s", src);
    snprintf(b_arg, sizeof b_arg, "-B%s", bdir);
    snprintf(bt, sizeof bt, "-DCMAKE_BUILD_TYPE=%s", build_type);
    snprintf(ccarg, sizeof ccarg, "-DCMAKE_C_COMPILER=%s", cc ? cc : "cc");
    /* the matrix's flags have no length limit */
    size_t fl = strlen(sim_flags ? sim_flags : "") + 24;
    char *simf = malloc(fl);
    if (!simf)
        return false;
    snprintf(simf, fl, "-DDETGATE_SIM_FLAGS=%s", sim_flags ? sim_flags : "");
    char *conf[] = {"cmake", s_arg, b_arg, bt, ccarg, simf, "-DDETGATE_MODULES=codec;hash;sim_stub;reports;harness",
                    "-DDETGATE_TESTS=OFF", "-DDETGATE_BENCH=OFF", "-DDETGATE_FUZZ=OFF", "-DDETGATE_WERROR=OFF", NULL};
    int rc = run(conf, NULL, log);
    free(simf);
    if (rc != 0)
        return false;
    char *bld[] = {"cmake", "--build", (char *)bdir, "--target", "detgate", "-j2", NULL};
    return run(bld, NULL, log) == 0;
}

static bool built_binary(const char *bdir, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s/harness/detgate", bdir);
    return n > 0 && (size_t)n < cap;
}

/* One `record` run of the detgate built in bdir: --format NAME when name_format, the hash log when f's
 * record side writes one, with each entity's raw floats (--log-raw, version 3) when raw. */
static bool record_once(const char *bin, const char *scn, const char *out, const char *hash_log,
                        const harness__format *f, bool name_format, bool raw, const char *log)
{
    char *argv[12] = {(char *)bin, "record", (char *)scn, "-o", (char *)out};
    size_t n = 5;
    if (name_format) {
        argv[n++] = "--format";
        argv[n++] = (char *)f->name;
    }
    if (f->record_log) {
        argv[n++] = "--hash-log";
        argv[n++] = (char *)hash_log;
        if (raw)
            argv[n++] = "--log-raw";
    }
    argv[n] = NULL;
    return run(argv, NULL, log) == 0;
}

/* Records scenario with the detgate built in bdir, in format f (with its hash log when f's record side
 * writes one). The format is always named: without it the revision's detgate would take the `format`
 * of the project file it finds from the current folder, where bisect and matrix have already chosen
 * (the option, else the project's, else the default). With raw (bisect) the hash log carries each
 * entity's raw floats so a raw-only break is named down to entity and field. Older revisions: one
 * whose detgate predates --log-raw records the plain log (as the matrix always does: its logs are only
 * compared by hash); one that predates --format (and project files) records the default without it. */
static bool record_with(const char *bin, const char *scn, const char *out, const char *hash_log,
                        const harness__format *f, bool raw, const char *log)
{
    raw = raw && f->record_log;
    for (int named = 1; named >= 0; named--) {
        if (!named && f != dg_harness__format_default())
            return false;
        if (record_once(bin, scn, out, hash_log, f, named, raw, log) ||
            (raw && record_once(bin, scn, out, hash_log, f, named, false, log)))
            return true;
    }
    return false;
}

/* The hash log f's record side writes beside a recording: hl, or NULL when it writes none (the
 * comparison then sees no raw drift). */
static const char *own_log(const harness__format *f, const char *hl) { return f->record_log ? hl : NULL; }

/* ---- a project's own engine (kind = process): its [build] command and its [engine] run command ---- */

/* What bisect and matrix need of a project whose engine it builds; build == NULL means sim_stub
 * (cmake, as before). */
typedef struct proj_engine {
    const harness__engine *engine; /* the project's row of the engines table */
    const char *build;  /* [build] command, {src} {build} {cc} {cflags} */
    const char *run;    /* [engine] run, {scenario} */
    double time_limit;
    uint32_t keyframe;
} proj_engine;

/* Appends v to out as one shell word ('...' with every ' as '\''); false when it does not fit. */
static bool shell_word(char *out, size_t cap, size_t *o, const char *v)
{
    if (*o + 1 >= cap)
        return false;
    out[(*o)++] = '\'';
    for (const char *c = v; *c; c++) {
        if (*o + 6 >= cap)
            return false;
        if (*c == '\'') {
            memcpy(out + *o, "'\\''", 4);
            *o += 4;
        } else {
            out[(*o)++] = *c;
        }
    }
    out[(*o)++] = '\'';
    return true;
}

/* The build command with each placeholder as one shell word (docs/ENGINES.md, "Bisect and matrix of
 * your engine"). */
static char *expand_build(const char *tmpl, const char *src, const char *bdir, const char *cc, const char *cflags)
{
    static const char *const ph[] = {"{src}", "{build}", "{cc}", "{cflags}"};
    const char *val[] = {src, bdir, cc, cflags};
    size_t cap = strlen(tmpl) + 1;
    for (const char *s = tmpl; *s; s++) /* each value may grow fourfold when quoted */
        for (int k = 0; k < 4; k++)
            if (strncmp(s, ph[k], strlen(ph[k])) == 0)
                cap += 4 * strlen(val[k]) + 2;
    char *out = malloc(cap);
    size_t o = 0;
    for (const char *s = tmpl; out && *s;) {
        int k = 0;
        while (k < 4 && strncmp(s, ph[k], strlen(ph[k])) != 0)
            k++;
        if (k < 4) {
            if (!shell_word(out, cap, &o, val[k])) {
                free(out);
                return NULL;
            }
            s += strlen(ph[k]);
        } else {
            out[o++] = *s++;
        }
    }
    if (out)
        out[o] = 0;
    return out;
}

/* The values of the placeholders as environment variables too (a script splits $CFLAGS into words),
 * for the build command and for the run command after it. */
static void export_build_env(const char *src, const char *bdir, const char *cc, const char *cflags)
{
    setenv("DETGATE_SRC", src, 1);
    setenv("DETGATE_BUILD", bdir, 1);
    setenv("CC", cc, 1);
    setenv("CFLAGS", cflags, 1);
}

/* Runs the project's build command (sh -c in src, output appended to log) into bdir. */
static bool project_build(const proj_engine *e, const char *src, const char *bdir, const char *cc, const char *cflags,
                          const char *log)
{
    if (!cli_mkdirs(bdir))
        return false;
    export_build_env(src, bdir, cc, cflags);
    char *cmd = expand_build(e->build, src, bdir, cc, cflags);
    if (!cmd)
        return false;
    FILE *f = fopen(log, "a");
    if (f) {
        fprintf(f, "detgate: in %s (CC=%s CFLAGS=%s DETGATE_BUILD=%s): %s\n", src, cc, cflags, bdir, cmd);
        fclose(f);
    }
    char *argv[] = {"sh", "-c", cmd, NULL};
    int rc = run(argv, src, log);
    free(cmd);
    return rc == 0;
}

/* Records scn through the project's run command started in src (this detgate: the engine is the
 * project's, the tool is the one running); a failure goes to log and leaves no recording. */
static bool project_record(const proj_engine *e, const char *src, const char *bdir, const char *scn,
                           const char *out, const char *hash_log, const harness__format *fmt, bool raw,
                           const char *log)
{
    if (bisect_sig)
        return false;
    setenv("DETGATE_BUILD", bdir, 1);
    dg_error err;
    dg_error_clear(&err);
    harness__source *s = NULL;
    harness__stream rec = {0};
    harness__record_opts ro = {.hash_log = hash_log, .log_raw = raw && hash_log != NULL, .format_name = fmt->name,
                               .keyframe = e->keyframe,
                               .fault_self_check_tick = UINT64_MAX, .fsync = DG_FLREP_FSYNC_CLOSE, .jobs = 1};
    harness__engine_args a = {.scenario = scn, .run = e->run, .run_dir = src, .time_limit = e->time_limit,
                              .keyframe = e->keyframe};
    dg_status st = e->engine->open(&s, &a, &err);
    if (st == DG_OK)
        st = fmt->record(s, out, &ro, &rec, &err);
    dg_harness__source_free(s);
    dg_harness__stream_free(&rec);
    if (st == DG_OK)
        return true;
    char buf[900];
    dg_error_format(&err, buf, sizeof buf);
    FILE *f = fopen(log, "a");
    if (f) {
        fprintf(f, "detgate: recording %s through `%s` in %s failed: %s\n", scn, e->run, src, buf);
        fclose(f);
    }
    remove(out);
    if (hash_log)
        remove(hash_log);
    return false;
}

/* bisect's {cc} and {cflags}: the user's $CC and $CFLAGS, else cc and none (the build's own flags). */
static const char *bisect_cc(void)
{
    const char *cc = getenv("CC");
    return cc && *cc ? cc : "cc";
}

static const char *bisect_cflags(void)
{
    const char *f = getenv("CFLAGS");
    return f ? f : "";
}

/* Loads the project file for bisect / matrix into p and e: e->build stays NULL for an engine the
 * project does not build (sim_stub: the detgate tree is built) or no project. 0, or the exit code of a
 * bad project or one without the [build] command its engine needs. */
static int load_proj_engine(const char *cmd, const char *given, harness__project *p, proj_engine *e)
{
    bool have = false;
    memset(e, 0, sizeof *e);
    int rc = cli_project_load(cmd, given, p, &have);
    if (rc || !have || !p->engine->project_build)
        return rc;
    if (!p->build[0])
        return cli_usage_error(cmd, "%s: [build] command is required to %s a %s engine (it builds the engine "
                                    "at each %s: docs/ENGINES.md; an engine with nothing to build, such as a script: "
                                    "command = true)",
                               p->path, cmd, p->engine->name, strcmp(cmd, "bisect") == 0 ? "revision" : "configuration");
    *e = (proj_engine){p->engine, p->build, p->run, p->time_limit_s, p->keyframe};
    return 0;
}

/* A loaded project's format and [gate] raw into *format and *raw where the options left them (NULL:
 * given); nothing when no project was loaded (p->path empty). */
static void project_settings(const harness__project *p, const harness__format **format, cli_raw_policy *raw)
{
    if (!p->path[0])
        return;
    if (format && p->format)
        *format = p->format;
    if (raw)
        cli_raw_policy_parse(p->raw, raw);
}

/* What one revision's recording is against the good one. */
typedef struct bisect_cmp {
    bool ok;             /* compared (false: an error, in the check) */
    uint64_t first;      /* first divergent tick of the quantized state, TICK_NONE when equal */
    uint64_t first_raw;  /* first tick whose raw float hashes differ, TICK_NONE when equal or unknown */
    dg_report_status st; /* by the raw policy: FAIL is a bad step */
    char where[260];     /* a raw-only drift: ", first in entity E[, field: raw A .., B ..]" ("" unknown) */
} bisect_cmp;

/* The first tick whose raw float hashes differ between two hash logs (TICK_NONE when they agree, or
 * when a log is missing or unreadable: RPLY records keep none, and then no raw drift is seen). */
static uint64_t raw_drift(const char *good_log, const char *log)
{
    if (!good_log || !log || !cli_file_exists(good_log) || !cli_file_exists(log))
        return DG_REPORT_TICK_NONE;
    harness__stream g = {0}, s = {0};
    dg_error err;
    dg_error_clear(&err);
    uint64_t first[1], first_raw = DG_REPORT_TICK_NONE;
    size_t nf;
    if (dg_harness__load_log(good_log, &g, NULL, &err) == DG_OK && dg_harness__load_log(log, &s, NULL, &err) == DG_OK)
        dg_harness__compare_streams(NULL, &g, &s, DG_REPORT_TICK_NONE, first, 1, &nf, &first_raw);
    dg_harness__stream_free(&g);
    dg_harness__stream_free(&s);
    return first_raw;
}

/* Compares a revision's recording b (and its hash log b_log, may be NULL) with the good one into a
 * new "diff" check of a scenario of rep, judged by the raw policy. */
static bisect_cmp compare_into(dg_report *rep, const char *name, const char *a, const char *b, const char *a_log,
                               const char *b_log, const harness__format *f, cli_raw_policy raw, dg_error *err)
{
    bisect_cmp r = {false, DG_REPORT_TICK_NONE, DG_REPORT_TICK_NONE, DG_REPORT_ERROR, ""};
    dg_report_scenario *sc = dg_report_add_scenario(rep, name, f->name);
    dg_report_check *c = sc ? dg_report_add_check(sc, "diff", DG_REPORT_PASS) : NULL;
    if (!c)
        return r;
    uint64_t nd = f->compare_files(c, sc, a, b, err);
    if (nd == UINT64_MAX) {
        char buf[600];
        dg_error_format(err, buf, sizeof buf);
        c->status = DG_REPORT_ERROR;
        dg_report_check_set_message(c, "%s", buf);
        return r;
    }
    r.ok = true;
    r.first = nd ? c->first_tick : DG_REPORT_TICK_NONE;
    r.first_raw = raw_drift(a_log, b_log);
    if (r.first_raw != DG_REPORT_TICK_NONE)
        dg_report_check_set_raw_divergence(c, r.first_raw);
    r.st = nd ? DG_REPORT_FAIL : cli_raw_status(raw, DG_REPORT_TICK_NONE, r.first_raw);
    c->status = r.st;
    if (!nd && r.first_raw != DG_REPORT_TICK_NONE) { /* entity lines in both logs: which entity, which field */
        char field[200];
        uint32_t who = dg_harness__raw_locate(c, a_log, b_log, r.first_raw, field, sizeof field, NULL);
        if (who)
            snprintf(r.where, sizeof r.where, ", first in entity %u%s%s", (unsigned)who, field[0] ? ", " : "", field);
    }
    if (nd)
        dg_report_check_set_message(c, "%llu tick%s differ%s from the good recording; first at tick %llu",
                                    (unsigned long long)nd, dg_report_plural_s(nd), nd == 1 ? "s" : "",
                                    (unsigned long long)c->first_tick);
    else if (r.first_raw != DG_REPORT_TICK_NONE)
        dg_report_check_set_message(c, "quantized state identical to the good recording; raw floats differ from "
                                       "tick %llu%s (sub-quantum drift): %s",
                                    (unsigned long long)r.first_raw, r.where, cli_raw_verdict_note(raw));
    else
        dg_report_check_set_message(c, "identical to the good recording");
    return r;
}

/* ---- bisect-step (what git bisect run calls) -------------------------------------------------------- */

enum { S_WORK = 0x500, S_SCN, S_GOOD, S_REPO, S_TYPE, S_GOODREV, S_BADREV, S_KEEP, S_FORMAT, S_GOODLOG, S_SRC };

int cli_bisect_step(int argc, char **argv)
{
    static const struct option opts[] = {{"work", 1, 0, S_WORK}, {"scenario", 1, 0, S_SCN},
                                         {"good-rec", 1, 0, S_GOOD}, {"repo", 1, 0, S_REPO},
                                         {"build-type", 1, 0, S_TYPE}, {"format", 1, 0, S_FORMAT},
                                         {"good-log", 1, 0, S_GOODLOG}, {"src", 1, 0, S_SRC}, CLI_PROJECT_OPT,
                                         CLI_RAW_OPTS, {0, 0, 0, 0}};
    const char *work = NULL, *scn = NULL, *good = NULL, *good_log = NULL, *repo = ".", *type = "Release";
    const char *project = NULL, *src = NULL; /* a process project: its file, the revision's project folder */
    const harness__format *fmt = dg_harness__format_default();
    cli_raw_policy raw = cli_raw_policy_default();
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int rc = cli_raw_opt("bisect-step", c, optarg, &raw);
        if (rc > 0)
            return CLI_UNTESTED; /* git bisect run: "cannot test" */
        if (rc == 0)
            continue;
        switch (c) {
        case S_GOODLOG: good_log = optarg; break;
        case S_SRC: src = optarg; break;
        case CLI_OPT_PROJECT: project = optarg; break;
        case S_WORK: work = optarg; break;
        case S_SCN: scn = optarg; break;
        case S_GOOD: good = optarg; break;
        case S_REPO: repo = optarg; break;
        case S_TYPE: type = optarg; break;
        case S_FORMAT: /* the parent gave a name it knows; an unknown one records the default, as ever */
            fmt = dg_harness__format_find(optarg) ? dg_harness__format_find(optarg) : dg_harness__format_default();
            break;
        default: /* git bisect run: "cannot test" */
            fprintf(stderr, "detgate bisect-step: unknown option or missing value '%s'\n", argv[optind - 1]);
            return CLI_UNTESTED;
        }
    }
    if (!work || !scn || !good || (project && !src))
        return CLI_UNTESTED;
    static harness__project proj;
    proj_engine eng = {0};
    if (project && load_proj_engine("bisect-step", project, &proj, &eng) != 0)
        return CLI_UNTESTED;
    char sha[64], bdir[WORK_CAP * 2], bin[PATH_CAP], rec[PATH_CAP], hl[PATH_CAP], log[PATH_CAP], steps[PATH_CAP];
    if (!git_line(repo, sha, sizeof sha, "rev-parse", "HEAD", NULL, NULL))
        return CLI_UNTESTED;
    snprintf(bdir, sizeof bdir, "%s/build-%s", work, sha);
    snprintf(rec, sizeof rec, "%s/rec-%s%s", work, sha, fmt->ext);
    snprintf(hl, sizeof hl, "%s/rec-%s.hashlog", work, sha);
    snprintf(log, sizeof log, "%s/build-%s.log", work, sha);
    snprintf(steps, sizeof steps, "%s/steps.txt", work);
    built_binary(bdir, bin, sizeof bin);
    int verdict;
    bisect_cmp r = {false, DG_REPORT_TICK_NONE, DG_REPORT_TICK_NONE, DG_REPORT_ERROR, ""};
    bool recorded = eng.build ? project_build(&eng, src, bdir, bisect_cc(), bisect_cflags(), log) &&
                                    project_record(&eng, src, bdir, scn, rec, own_log(fmt, hl), fmt, true, log)
                              : build_tree(repo, bdir, type, NULL, NULL, log) &&
                                    record_with(bin, scn, rec, hl, fmt, true, log);
    if (!recorded) {
        verdict = CLI_UNTESTED;
    } else {
        dg_error err;
        dg_error_clear(&err);
        dg_report *rep = cli_report_new("bisect", &err);
        if (rep)
            r = compare_into(rep, "step", good, rec, good_log, own_log(fmt, hl), fmt, raw, &err);
        dg_report_free(rep);
        /* under --raw fail a raw-only drift is bad: the bisection then finds where raw floats changed */
        verdict = !r.ok ? CLI_UNTESTED : r.st == DG_REPORT_FAIL ? CLI_DIVERGED : CLI_EQUAL;
    }
    FILE *f = fopen(steps, "a");
    if (f) { /* sha, verdict, first divergent tick, first raw-drifting tick (docs/CLI.md "bisect") */
        fprintf(f, "%s %d %llu %llu\n", sha, verdict, (unsigned long long)r.first, (unsigned long long)r.first_raw);
        fclose(f);
    }
    return verdict;
}

/* ---- bisect ---------------------------------------------------------------------------------------- */

static bool make_work_dir(const char *given, char *out, size_t cap)
{
    if (given) {
        if (!cli_mkdirs(given) || !absolute(given, out, cap))
            return false;
    } else {
        const char *tmp = getenv("TMPDIR");
        int n = snprintf(out, cap, "%s/dg-bisect-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (n <= 0 || (size_t)n >= cap || mkdtemp(out) == NULL)
            return false;
    }
    int n = snprintf(bisect_child_tmp, sizeof bisect_child_tmp, "%s/tmp", out);
    if (n <= 0 || (size_t)n >= sizeof bisect_child_tmp || !cli_mkdirs(bisect_child_tmp)) {
        bisect_child_tmp[0] = 0;
        return false;
    }
    return true;
}

static void remove_tree(const char *path)
{
    char *argv[] = {"rm", "-rf", (char *)path, NULL};
    run_child(argv, NULL, NULL, true);
}

/* ---- the work folder's owner: an interrupted run cleans up, a killed one is cleaned at the next --- */

#define OWNER_FILE "owner.pid"

static void write_owner(const char *work)
{
    char path[PATH_CAP];
    snprintf(path, sizeof path, "%s/" OWNER_FILE, work);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%ld\n", (long)getpid());
        fclose(f);
    }
}

/* True when dir carries an owner file naming a process that no longer exists. */
static bool owner_dead(const char *dir)
{
    char path[PATH_CAP];
    snprintf(path, sizeof path, "%s/" OWNER_FILE, dir);
    FILE *f = fopen(path, "r");
    long pid = 0;
    if (!f)
        return false;
    bool read_ok = fscanf(f, "%ld", &pid) == 1;
    fclose(f);
    return read_ok && pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Unregisters the worktree wt (git run inside it finds its repository, whichever that is), then
 * prunes repo's list of worktrees whose folders are gone. */
static void remove_worktree(const char *repo, const char *wt)
{
    char *rm[] = {"git", "-C", (char *)wt, "worktree", "remove", "--force", (char *)wt, NULL};
    char *prune[] = {"git", "-C", (char *)repo, "worktree", "prune", NULL};
    struct stat st;
    if (stat(wt, &st) == 0)
        run_child(rm, NULL, "/dev/null", true);
    run_child(prune, NULL, "/dev/null", true);
}

/* Work folders of earlier runs that were killed before they could clean up (dg-bisect-* in TMPDIR,
 * owner dead): their worktree unregistered, the folder removed. */
static void clean_stale(const char *repo)
{
    const char *tmp = getenv("TMPDIR");
    tmp = tmp && *tmp ? tmp : "/tmp";
    DIR *d = opendir(tmp);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char dir[PATH_CAP + 260], wt[PATH_CAP + 280];
        if (strncmp(e->d_name, "dg-bisect-", 10) != 0)
            continue;
        int n = snprintf(dir, sizeof dir, "%s/%s", tmp, e->d_name);
        if (n < 0 || (size_t)n >= sizeof dir || !owner_dead(dir))
            continue;
        snprintf(wt, sizeof wt, "%s/worktree", dir);
        remove_worktree(repo, wt);
        remove_tree(dir);
        fprintf(stderr, "detgate bisect: removed the work folder of an earlier run that was killed: %s\n", dir);
    }
    if (d)
        closedir(d);
    char *prune[] = {"git", "-C", (char *)repo, "worktree", "prune", NULL};
    run_child(prune, NULL, "/dev/null", true);
}

static void catch_interrupts(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = bisect_on_signal; /* no SA_RESTART: waitpid returns to forward it */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* A failed run's log outlives the work folder: copied (temp + rename) to where the messages said. */
static void keep_log(const char *log, const char *kept)
{
    char dir[PATH_CAP], tmp[PATH_CAP];
    snprintf(dir, sizeof dir, "%s", kept);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    struct stat st;
    dg_error err;
    dg_error_clear(&err);
    tmp[0] = 0;
    bool ok = stat(log, &st) == 0 && (!slash || cli_mkdirs(dir)) &&
              dg_harness__temp_path(tmp, sizeof tmp, slash ? dir : ".", "bisect", ".log") &&
              dg_harness__copy_prefix(log, tmp, (uint64_t)st.st_size, &err) == DG_OK && rename(tmp, kept) == 0;
    if (!ok) {
        if (tmp[0])
            remove(tmp);
        fprintf(stderr, "detgate bisect: could not keep the log at %s\n", kept);
    }
}

typedef struct bisect_ctx {
    char repo[WORK_CAP], work[WORK_CAP / 2], wt[WORK_CAP], scn[WORK_CAP], self[WORK_CAP];
    char shown_log[PATH_CAP]; /* the log named in messages: where it is kept after a failure */
    char good[64], bad[64];
    const char *type;
    const harness__format *format; /* what each revision records (--format NAME) */
    cli_raw_policy raw; /* --raw / --strict-raw: is a raw-only drift a bad step */
    proj_engine eng;    /* a process project's engine (eng.build NULL: sim_stub) */
    char proj[WORK_CAP], src[WORK_CAP * 2]; /* its project file; the worktree's copy of its folder */
} bisect_ctx;

/* Builds and records one revision directly (the endpoints): checks it out in the worktree first. */
static int test_revision(const bisect_ctx *b, const char *sha, const char *good_rec, const char *good_log)
{
    char *co[] = {"git", "-C", (char *)b->wt, "checkout", "-q", "--detach", (char *)sha, NULL};
    char log[PATH_CAP];
    snprintf(log, sizeof log, "%s/git.log", b->work);
    if (run(co, NULL, log) != 0)
        return CLI_UNTESTED;
    char *step[] = {(char *)b->self, "bisect-step", "--work", (char *)b->work, "--scenario", (char *)b->scn,
                    "--good-rec", (char *)good_rec, "--repo", (char *)b->wt, "--build-type", (char *)b->type,
                    "--format", (char *)b->format->name, "--good-log", (char *)good_log,
                    "--raw", (char *)cli_raw_policy_name(b->raw), b->eng.build ? "--project" : NULL,
                    (char *)b->proj, "--src", (char *)b->src, NULL};
    return run(step, NULL, NULL);
}

/* Reads steps.txt into the report's bisect steps; returns the first tick recorded for `sha`. */
static uint64_t load_steps(dg_report *rep, const char *work, const char *sha)
{
    char path[PATH_CAP], line[256];
    snprintf(path, sizeof path, "%s/steps.txt", work);
    FILE *f = fopen(path, "r");
    uint64_t first = DG_REPORT_TICK_NONE;
    while (f && fgets(line, sizeof line, f)) {
        char s[64];
        int v;
        unsigned long long t;
        if (sscanf(line, "%63s %d %llu", s, &v, &t) != 3)
            continue;
        dg_report_bisect_add_step(rep, s, v == 0 ? DG_REPORT_GOOD : v == 125 ? DG_REPORT_SKIP : DG_REPORT_BAD, t);
        if (strcmp(s, sha) == 0)
            first = t;
    }
    if (f)
        fclose(f);
    return first;
}

static bool find_first_bad(const char *log, char *sha, size_t cap)
{
    FILE *f = fopen(log, "r");
    char line[1024];
    bool found = false;
    while (f && fgets(line, sizeof line, f)) {
        char *p = strstr(line, " is the first bad commit");
        if (p && p - line >= 40) {
            snprintf(sha, cap, "%.40s", p - 40);
            found = true;
        }
    }
    if (f)
        fclose(f);
    return found;
}

/* When skipped commits sit next to the first bad one, git names every candidate ("could be any
 * of:", one sha a line): printed, so the user sees which commits to fix the build of. */
static void print_candidates(const char *log)
{
    FILE *f = fopen(log, "r");
    char line[1024];
    bool in = false, any = false;
    while (f && fgets(line, sizeof line, f)) {
        size_t n = strspn(line, "0123456789abcdef");
        if (strstr(line, "The first bad commit could be any of:")) {
            in = true;
        } else if (in && n == 40 && (line[40] == '\n' || line[40] == 0)) {
            fprintf(stderr, "%s  %.40s", any ? "" : "detgate bisect: the first bad commit is one of (the others could "
                                                   "not be built or tested):\n", line);
            fputc('\n', stderr);
            any = true;
        } else {
            in = false;
        }
    }
    if (f)
        fclose(f);
}

/* The bad end is not bad by the policy: say whether its raw floats drifted all the same (a WARN
 * check in the report), and how to bisect that drift. */
static void bad_end_equal(const bisect_ctx *b, dg_report *rep, const char *scenario_arg, const char *good_rec,
                          const char *good_hl)
{
    char rec[PATH_CAP], hl[PATH_CAP];
    snprintf(rec, sizeof rec, "%s/rec-%s%s", b->work, b->bad, b->format->ext);
    snprintf(hl, sizeof hl, "%s/rec-%s.hashlog", b->work, b->bad);
    dg_error err;
    dg_error_clear(&err);
    bisect_cmp r = compare_into(rep, scenario_arg, good_rec, rec, good_hl, own_log(b->format, hl), b->format, b->raw,
                                &err);
    if (r.first_raw != DG_REPORT_TICK_NONE)
        fprintf(stderr, "detgate bisect: the bad revision %s records the same quantized state as the good one, but "
                        "its raw floats differ from tick %llu (sub-quantum drift, %s): nothing to bisect under "
                        "--raw %s; --raw fail bisects the drift\n",
                b->bad, (unsigned long long)r.first_raw, cli_raw_verdict_note(b->raw), cli_raw_policy_name(b->raw));
    else
        fprintf(stderr, "detgate bisect: the bad revision %s (records the same as the good one: nothing to bisect)\n",
                b->bad);
}

/* A bisect that could not be carried out (exit 125) says so in its report too: one scenario with an
 * error "bisect" check and the reason, so the headline is not a PASS over no scenario. */
static void bisect_untested(dg_report *rep, const char *name, const harness__format *f, const char *why)
{
    dg_report_scenario *sc = dg_report_add_scenario(rep, name, f->name);
    dg_report_check *c = sc ? dg_report_add_check(sc, "bisect", DG_REPORT_ERROR) : NULL;
    if (c)
        dg_report_check_set_message(c, "%s", why);
}

static int bisect_run(bisect_ctx *b, dg_report *rep, const char *scenario_arg)
{
    char good_rec[PATH_CAP], good_hl[PATH_CAP], log[PATH_CAP];
    snprintf(good_rec, sizeof good_rec, "%s/good%s", b->work, b->format->ext);
    snprintf(good_hl, sizeof good_hl, "%s/good.hashlog", b->work);
    snprintf(log, sizeof log, "%s/bisect.log", b->work);
    char *wt_add[] = {"git", "-C", b->repo, "worktree", "add", "-q", "--detach", b->wt, b->good, NULL};
    if (run(wt_add, NULL, log) != 0) {
        if (!bisect_sig)
            fprintf(stderr, "detgate bisect: cannot create a worktree of %s (see %s)\n", b->repo, b->shown_log);
        return CLI_UNTESTED;
    }
    /* 1. the good recording, once */
    char bdir[WORK_CAP * 2], bin[PATH_CAP];
    snprintf(bdir, sizeof bdir, "%s/build-good", b->work);
    built_binary(bdir, bin, sizeof bin);
    fprintf(stderr, "detgate bisect: building the good revision %.12s\n", b->good);
    bool recorded = b->eng.build ? project_build(&b->eng, b->src, bdir, bisect_cc(), bisect_cflags(), log) &&
                                       project_record(&b->eng, b->src, bdir, b->scn, good_rec,
                                                      own_log(b->format, good_hl), b->format, true, log)
                                 : build_tree(b->wt, bdir, b->type, NULL, NULL, log) &&
                                       record_with(bin, b->scn, good_rec, good_hl, b->format, true, log);
    if (!recorded) {
        if (!bisect_sig)
            fprintf(stderr, "detgate bisect: the good revision %.12s cannot be built or cannot record %s (see %s)\n",
                    b->good, scenario_arg, b->shown_log);
        bisect_untested(rep, scenario_arg, b->format, "the good revision cannot be built or cannot record the scenario");
        return CLI_UNTESTED;
    }
    /* 2. the bad end must really differ, or there is nothing to bisect */
    fprintf(stderr, "detgate bisect: testing the bad revision %.12s\n", b->bad);
    int vb = test_revision(b, b->bad, good_rec, good_hl);
    if (bisect_sig)
        return CLI_UNTESTED;
    if (vb != CLI_DIVERGED) {
        load_steps(rep, b->work, "");
        dg_report_set_bisect(rep, scenario_arg, NULL, NULL, b->good, b->bad, DG_REPORT_TICK_NONE);
        if (vb == CLI_EQUAL)
            bad_end_equal(b, rep, scenario_arg, good_rec, good_hl);
        else {
            fprintf(stderr, "detgate bisect: the bad revision %s (cannot be built or tested)\n", b->bad);
            bisect_untested(rep, scenario_arg, b->format, "the bad revision cannot be built or tested");
        }
        return vb == CLI_EQUAL ? CLI_EQUAL : CLI_UNTESTED;
    }
    /* 3. git bisect run, each step built in its own folder */
    char *start[] = {"git", "-C", b->wt, "bisect", "start", b->bad, b->good, NULL};
    char *runv[] = {"git", "-C", b->wt, "bisect", "run", b->self, "bisect-step", "--work", b->work, "--scenario",
                    b->scn, "--good-rec", good_rec, "--repo", b->wt, "--build-type", (char *)b->type,
                    "--format", (char *)b->format->name, "--good-log", good_hl,
                    "--raw", (char *)cli_raw_policy_name(b->raw), b->eng.build ? "--project" : NULL, b->proj,
                    "--src", b->src, NULL};
    char *reset[] = {"git", "-C", b->wt, "bisect", "reset", NULL}; /* takes no -q: it would read it as a commit */
    fprintf(stderr, "detgate bisect: git bisect run over %.12s..%.12s\n", b->good, b->bad);
    bool ran = run(start, NULL, log) == 0 && run(runv, NULL, log) == 0;
    char first_bad[64] = "";
    bool found = ran && find_first_bad(log, first_bad, sizeof first_bad);
    run_child(reset, NULL, log, true);
    if (bisect_sig)
        return CLI_UNTESTED;
    if (!found) {
        load_steps(rep, b->work, "");
        dg_report_set_bisect(rep, scenario_arg, NULL, NULL, b->good, b->bad, DG_REPORT_TICK_NONE);
        fprintf(stderr, "detgate bisect: git bisect did not name a first bad commit (see %s)\n", b->shown_log);
        print_candidates(log);
        bisect_untested(rep, scenario_arg, b->format,
                        "git bisect named no first bad commit: a revision next to it could not be built or "
                        "tested (the candidates are on stderr and in the bisect log)");
        return CLI_UNTESTED;
    }
    /* 4. the first bad commit, its first divergent tick and the field diff */
    char subject[300] = "";
    git_line(b->repo, subject, sizeof subject, "show", "-s", "--format=%s", first_bad);
    char rec[PATH_CAP], hl[PATH_CAP];
    snprintf(rec, sizeof rec, "%s/rec-%s%s", b->work, first_bad, b->format->ext);
    snprintf(hl, sizeof hl, "%s/rec-%s.hashlog", b->work, first_bad);
    dg_error err;
    dg_error_clear(&err);
    bisect_cmp r = compare_into(rep, scenario_arg, good_rec, rec, good_hl, own_log(b->format, hl), b->format, b->raw,
                                &err);
    load_steps(rep, b->work, first_bad);
    dg_report_set_bisect(rep, scenario_arg, first_bad, subject, b->good, b->bad, r.first);
    printf("first bad commit: %s %s\n", first_bad, subject);
    if (r.first != DG_REPORT_TICK_NONE)
        printf("first divergent tick: %llu\n", (unsigned long long)r.first);
    if (r.first_raw != DG_REPORT_TICK_NONE)
        printf("raw floats first differ at tick %llu%s%s\n", (unsigned long long)r.first_raw, r.where,
               r.first == DG_REPORT_TICK_NONE ? " (quantized state identical: a sub-quantum drift)" : "");
    return CLI_DIVERGED;
}

/* A process project: its file as an absolute path (bisect-step loads it again), and its folder
 * relative to the repository's top into b->src (the worktree is joined in front later). */
static int bisect_project_paths(bisect_ctx *b, const harness__project *p)
{
    char dir[WORK_CAP];
    if (!absolute(p->path, b->proj, sizeof b->proj) || !absolute(p->dir[0] ? p->dir : ".", dir, sizeof dir))
        return cli_usage_error("bisect", "cannot resolve the project file %s", p->path);
    size_t n = strlen(b->repo);
    if (strncmp(dir, b->repo, n) != 0 || (dir[n] != 0 && dir[n] != '/'))
        return cli_usage_error("bisect", "the project folder %s is not inside the repository %s: bisect runs the "
                                         "build and run commands in each revision's copy of it", dir, b->repo);
    snprintf(b->src, sizeof b->src, "%s", dir[n] ? dir + n + 1 : "");
    return 0;
}

/* work/scn/NAME: the scenario copied under its own file name (false when that path is too long). */
static bool scenario_copy_path(bisect_ctx *b, const char *scn_path)
{
    const char *base = strrchr(scn_path, '/');
    char dir[sizeof b->work + 8];
    snprintf(dir, sizeof dir, "%s/scn", b->work);
    int n = snprintf(b->scn, sizeof b->scn, "%s/%s", dir, base ? base + 1 : scn_path);
    return n > 0 && (size_t)n < sizeof b->scn && cli_mkdirs(dir);
}

int cli_bisect(int argc, char **argv)
{
    static const struct option opts[] = {{"good", 1, 0, S_GOODREV}, {"bad", 1, 0, S_BADREV},
                                         {"scenario", 1, 0, S_SCN}, {"repo", 1, 0, S_REPO},
                                         {"work", 1, 0, S_WORK}, {"keep", 0, 0, S_KEEP},
                                         {"build-type", 1, 0, S_TYPE}, {"format", 1, 0, S_FORMAT},
                                         CLI_PROJECT_OPT, CLI_REPORT_OPTS, CLI_RAW_OPTS, {0, 0, 0, 0}};
    const char *good = NULL, *bad = NULL, *scn = NULL, *repo = ".", *work = NULL, *project = NULL;
    bool keep = false, format_given = false, raw_given = false;
    cli_reports rp = {0};
    bisect_ctx b;
    memset(&b, 0, sizeof b);
    b.format = dg_harness__format_default();
    b.type = "Release";
    b.raw = cli_raw_policy_default();
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
        if (cli_report_opt(&rp, c, optarg))
            continue;
        int rc = cli_raw_opt("bisect", c, optarg, &b.raw);
        if (rc > 0)
            return rc;
        if (rc == 0) {
            raw_given = true;
            continue;
        }
        switch (c) {
        case S_GOODREV: good = optarg; break;
        case S_BADREV: bad = optarg; break;
        case S_SCN: scn = optarg; break;
        case S_REPO: repo = optarg; break;
        case S_WORK: work = optarg; break;
        case S_KEEP: keep = true; break;
        case S_TYPE: b.type = optarg; break;
        case CLI_OPT_PROJECT: project = optarg; break;
        case S_FORMAT:
            if (cli_parse_format("bisect", optarg, &b.format))
                return CLI_USAGE;
            format_given = true;
            break;
        default: return cli_usage_error("bisect", "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    if (!good || !bad || !scn || optind != argc)
        return cli_usage_error("bisect", "--good REV --bad REV --scenario S are required");
    char top[WORK_CAP], spec[200];
    if (!git_line(repo, top, sizeof top, "rev-parse", "--show-toplevel", NULL, NULL))
        return cli_usage_error("bisect", "%s is not inside a git repository", repo);
    snprintf(b.repo, sizeof b.repo, "%s", top);
    snprintf(spec, sizeof spec, "%s^{commit}", good);
    if (!git_line(b.repo, b.good, sizeof b.good, "rev-parse", "--verify", spec, NULL))
        return cli_usage_error("bisect", "--good: no commit '%s'", good);
    snprintf(spec, sizeof spec, "%s^{commit}", bad);
    if (!git_line(b.repo, b.bad, sizeof b.bad, "rev-parse", "--verify", spec, NULL))
        return cli_usage_error("bisect", "--bad: no commit '%s'", bad);
    static harness__project proj;
    int lrc = load_proj_engine("bisect", project, &proj, &b.eng);
    if (lrc)
        return lrc;
    project_settings(&proj, format_given ? NULL : &b.format, raw_given ? NULL : &b.raw);
    char scn_path[PATH_CAP];
    if (b.eng.build) {
        if ((lrc = bisect_project_paths(&b, &proj)) != 0 ||
            (lrc = cli_project_scenario("bisect", &proj, scn, scn_path, sizeof scn_path)) != 0)
            return lrc;
    } else if (!cli_resolve_scenario(scn, NULL, scn_path, sizeof scn_path)) {
        return cli_usage_error("bisect", "no scenario '%s'", scn);
    }
    const char *inputs[] = {scn_path};
    int prc = cli_reports_prepare(&rp, "bisect", inputs, 1);
    if (prc)
        return prc;
    clean_stale(b.repo);
    if (work && owner_dead(work)) { /* the same --work folder, left by a killed run */
        char wt[PATH_CAP + 16];
        snprintf(wt, sizeof wt, "%s/worktree", work);
        remove_worktree(b.repo, wt);
    }
    catch_interrupts(); /* from here on an interrupt is handled below, after the child has stopped */
    if (!make_work_dir(work, b.work, sizeof b.work) || !self_exe(b.self, sizeof b.self)) {
        fprintf(stderr, "detgate bisect: cannot create the work folder %s: %s\n", work ? work : "in TMPDIR",
                strerror(errno));
        return work ? CLI_USAGE : CLI_UNTESTED; /* a --work path given is checked like any output: 2 */
    }
    write_owner(b.work);
    bool drop_work = !keep && !work;
    if (!drop_work)
        snprintf(b.shown_log, sizeof b.shown_log, "%s/bisect.log", b.work);
    else if (rp.dir)
        snprintf(b.shown_log, sizeof b.shown_log, "%s/bisect.log", rp.dir);
    else
        snprintf(b.shown_log, sizeof b.shown_log, "detgate-bisect.log");
    /* every revision records the same scenario text: the one in the current tree (a process engine's
     * under its own file name: the engine may read the extension) */
    if (!b.eng.build)
        snprintf(b.scn, sizeof b.scn, "%s/scenario.scn", b.work);
    dg_error err;
    dg_error_clear(&err);
    struct stat sst;
    if (b.eng.build && !scenario_copy_path(&b, scn_path)) {
        fprintf(stderr, "detgate bisect: cannot copy %s into the work folder %s\n", scn_path, b.work);
        return CLI_UNTESTED;
    }
    if (stat(scn_path, &sst) != 0 ||
        dg_harness__copy_prefix(scn_path, b.scn, (uint64_t)sst.st_size, &err) != DG_OK) {
        cli_print_error("bisect", &err);
        return CLI_UNTESTED;
    }
    snprintf(b.wt, sizeof b.wt, "%s/worktree", b.work);
    if (b.eng.build) { /* b.src held the project folder relative to the repository's top */
        char rel[sizeof b.src];
        snprintf(rel, sizeof rel, "%s", b.src);
        int n = snprintf(b.src, sizeof b.src, "%s%s%s", b.wt, rel[0] ? "/" : "", rel);
        if (n < 0 || (size_t)n >= sizeof b.src) {
            fprintf(stderr, "detgate bisect: the project folder's path is too long\n");
            return CLI_UNTESTED;
        }
    }
    dg_report *rep = cli_report_new("bisect", &err);
    if (!rep)
        return CLI_UNTESTED;
    double t0 = dg_harness__now();
    char name[DG_HASH_LOG_NAME_MAX + 1];
    dg_harness__scenario_name(scn_path, name, sizeof name);
    int code = bisect_run(&b, rep, name);
    rep->duration_s = dg_harness__now() - t0;
    remove_worktree(b.repo, b.wt);
    if (code == CLI_UNTESTED && drop_work && !bisect_sig) {
        char log[PATH_CAP];
        snprintf(log, sizeof log, "%s/bisect.log", b.work);
        keep_log(log, b.shown_log);
    }
    if (drop_work)
        remove_tree(b.work);
    else
        fprintf(stderr, "detgate bisect: work folder kept: %s\n", b.work);
    if (bisect_sig) { /* the worktree and the work folder are gone: now die of the signal */
        int sig = bisect_sig;
        fprintf(stderr, "detgate bisect: interrupted; the worktree and the work folder were removed\n");
        dg_report_free(rep);
        cli_outs_discard(&rp.outs);
        dg_harness__temp_cleanup();
        signal(sig, SIG_DFL);
        raise(sig);
    }
    bool ok = cli_write_reports(rep, &rp, "bisect");
    dg_report_free(rep);
    return ok ? code : (code ? code : CLI_UNTESTED);
}

/* ---- matrix ---------------------------------------------------------------------------------------- */

/* One configuration: CC:FLAGS:CONTRACT (docs/CLI.md, "matrix"). */
typedef struct mconf {
    char *cc;        /* compiler, as given */
    char *flags;     /* the flags as given, words separated by single spaces ("" for none) */
    char contract[8];
    char *label;     /* "gcc -O3 -march=native off": shown and in reports */
    char file[72];   /* "03-gcc-O3-march_native-off": build folder, log and recording names */
    char log[PATH_CAP], rec[PATH_CAP];
    bool ok;
    size_t cls;      /* its class: configurations that record identically */
    size_t raw;      /* its raw group: same class and identical raw floats */
    harness__stream s;
} mconf;

typedef struct mplan {
    mconf *v;
    size_t n, cap;
} mplan;

static void mplan_free(mplan *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->v[i].cc);
        free(p->v[i].flags);
        free(p->v[i].label);
        dg_harness__stream_free(&p->v[i].s);
    }
    free(p->v);
    memset(p, 0, sizeof *p);
}

static char *dup_range(const char *s, size_t len)
{
    char *d = malloc(len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = 0;
    }
    return d;
}

/* The flags of a spec, words separated by single spaces; each word must start with '-' and carry no
 * ';' (the cmake list separator). Returns NULL and fills why[] when a word is not a flag. */
static char *matrix_words(const char *s, size_t len, char *why, size_t why_cap)
{
    char *out = malloc(len + 1);
    size_t k = 0;
    for (size_t i = 0; out && i < len;) {
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
            i++;
        size_t b = i;
        while (i < len && s[i] != ' ' && s[i] != '\t')
            i++;
        if (b == i)
            break;
        if (s[b] != '-' || memchr(s + b, ';', i - b)) {
            snprintf(why, why_cap, "expected compiler flags starting with '-' (no ';'), found '%.*s'",
                     (int)(i - b > 60 ? 60 : i - b), s + b);
            free(out);
            return NULL;
        }
        if (k)
            out[k++] = ' ';
        memcpy(out + k, s + b, i - b);
        k += i - b;
    }
    if (out)
        out[k] = 0;
    return out;
}

/* One spec CC:FLAGS:CONTRACT (FLAGS may hold ':' and spaces; CC is up to the first ':', CONTRACT after
 * the last). false with why[] filled when it is not one. */
static bool matrix_add(mplan *p, const char *s, size_t len, char *why, size_t why_cap)
{
    const char *c1 = memchr(s, ':', len), *c2 = NULL;
    for (size_t i = len; i > 0 && !c2; i--)
        c2 = s[i - 1] == ':' ? s + i - 1 : NULL;
    if (!c1 || c1 == c2) {
        snprintf(why, why_cap, "expected CC:FLAGS:off|fast, found '%.*s'", (int)(len > 80 ? 80 : len), s);
        return false;
    }
    size_t cl = (size_t)(c1 - s), tl = len - (size_t)(c2 + 1 - s);
    if (cl == 0 || memchr(s, ' ', cl) || memchr(s, '\t', cl)) {
        snprintf(why, why_cap, "expected a compiler name before the first ':', found '%.*s'",
                 (int)(cl > 60 ? 60 : cl), s);
        return false;
    }
    if (!((tl == 3 && memcmp(c2 + 1, "off", 3) == 0) || (tl == 4 && memcmp(c2 + 1, "fast", 4) == 0))) {
        snprintf(why, why_cap, "expected the contraction 'off' or 'fast' after the last ':', found '%.*s'",
                 (int)(tl > 60 ? 60 : tl), c2 + 1);
        return false;
    }
    if (!dg_grow((void **)&p->v, &p->cap, p->n + 1, sizeof *p->v))
        return snprintf(why, why_cap, "out of memory"), false;
    mconf *m = &p->v[p->n];
    memset(m, 0, sizeof *m);
    snprintf(m->contract, sizeof m->contract, "%.*s", (int)tl, c2 + 1);
    why[0] = 0;
    m->flags = matrix_words(c1 + 1, (size_t)(c2 - c1 - 1), why, why_cap);
    if (!m->flags) {
        if (!why[0])
            snprintf(why, why_cap, "out of memory");
        return false;
    }
    m->cc = dup_range(s, cl);
    size_t ll = cl + strlen(m->flags) + tl + 3;
    m->label = malloc(ll);
    if (!m->cc || !m->label) {
        snprintf(why, why_cap, "out of memory");
        free(m->cc);
        free(m->flags);
        free(m->label);
        return false;
    }
    snprintf(m->label, ll, "%s%s%s %s", m->cc, m->flags[0] ? " " : "", m->flags, m->contract);
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->v[i].label, m->label) == 0) {
            snprintf(why, why_cap, "configuration '%.100s' is given twice", m->label);
            free(m->cc);
            free(m->flags);
            free(m->label);
            return false;
        }
    /* a name for files: the index keeps it unique however the label is cut */
    int at = snprintf(m->file, sizeof m->file, "%02zu-", p->n + 1);
    for (const char *q = m->label; *q && at + 1 < (int)sizeof m->file; q++) {
        if (*q == ' ' && q[1] == '-')   /* "gcc -O2 off" -> "gcc-O2-off" */
            continue;
        char ch = *q == ' ' ? '-' : *q;
        m->file[at++] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                                ch == '-' || ch == '.' || ch == '+'
                            ? ch
                            : '_';
    }
    m->file[at] = 0;
    p->n++;
    return true;
}

static const char k_matrix_default[] = "gcc:-O0:off,gcc:-O2:off,gcc:-O3:off,gcc:-O0:fast,gcc:-O2:fast,gcc:-O3:fast,"
                                       "clang:-O0:off,clang:-O2:off,clang:-O3:off,clang:-O0:fast,clang:-O2:fast,"
                                       "clang:-O3:fast";

/* A comma-separated list of specs (an empty item is an error). */
static bool matrix_add_list(mplan *p, const char *list, char *why, size_t why_cap)
{
    for (const char *s = list;;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == 0) {
            snprintf(why, why_cap, "expected CC:FLAGS:off|fast, found an empty item in '%.80s'", list);
            return false;
        }
        if (!matrix_add(p, s, len, why, why_cap))
            return false;
        if (!e)
            return true;
        s = e + 1;
    }
}

/* -ffp-contract=fast only fuses where the target has FMA: the fast configurations also enable it
 * (-mfma) when this machine can run it, as a team moving to -march=haswell would. */
static bool cpu_has_fma(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    bool yes = false;
    while (f && !yes && fgets(line, sizeof line, f))
        yes = strncmp(line, "flags", 5) == 0 && strstr(line, " fma ");
    if (f)
        fclose(f);
    return yes;
}

/* The configuration's sim_stub flags as a cmake list ("-O3;-march=native;-ffp-contract=off"). */
static char *matrix_cmake_flags(const mconf *m, bool fma)
{
    size_t n = strlen(m->flags) + 40;
    char *out = malloc(n);
    if (!out)
        return NULL;
    int k = snprintf(out, n, "%s", m->flags);
    for (int i = 0; i < k; i++)
        out[i] = out[i] == ' ' ? ';' : out[i];
    snprintf(out + k, n - (size_t)k, "%s-ffp-contract=%s%s", k ? ";" : "", m->contract,
             strcmp(m->contract, "fast") == 0 && fma ? ";-mfma" : "");
    return out;
}

/* The same flags as one string of words for a project's build command ({cflags}, $CFLAGS). */
static char *matrix_cflags(const mconf *m, bool fma)
{
    char *f = matrix_cmake_flags(m, fma);
    for (char *q = f; q && *q; q++)
        *q = *q == ';' ? ' ' : *q;
    return f;
}

static void matrix_print_plan(const mplan *p, const char *scn, bool project)
{
    bool fma = cpu_has_fma();
    printf("detgate matrix: scenario %s, %zu configurations (dry run: nothing is built)\n", scn, p->n);
    for (size_t i = 0; i < p->n; i++) {
        char *f = project ? matrix_cflags(&p->v[i], fma) : matrix_cmake_flags(&p->v[i], fma);
        printf("%2zu  %-28s  build-%-28s  CC=%s  %s=%s\n", i + 1, p->v[i].label, p->v[i].file, p->v[i].cc,
               project ? "CFLAGS" : "DETGATE_SIM_FLAGS", f ? f : "?");
        free(f);
    }
}

/* Builds and records every configuration; a failure leaves that configuration marked !ok. */
/* The matrix compares the configurations by their hash logs: a format whose record side writes one. */
static const harness__format *const matrix_format = &dg_harness__format_flrep;

static void matrix_build_all(mplan *p, const char *src, const char *wdir, const char *scn, const proj_engine *e)
{
    bool fma = cpu_has_fma();
    for (size_t i = 0; i < p->n; i++) {
        mconf *m = &p->v[i];
        char bdir[WORK_CAP * 2], bin[PATH_CAP], hl[PATH_CAP];
        snprintf(bdir, sizeof bdir, "%s/build-%s", wdir, m->file);
        snprintf(m->log, sizeof m->log, "%s/build-%s.log", wdir, m->file);
        snprintf(m->rec, sizeof m->rec, "%s/%s%s", wdir, m->file, matrix_format->ext);
        snprintf(hl, sizeof hl, "%s/%s.hashlog", wdir, m->file);
        char *flags = e->build ? matrix_cflags(m, fma) : matrix_cmake_flags(m, fma);
        built_binary(bdir, bin, sizeof bin);
        fprintf(stderr, "detgate matrix: [%zu/%zu] %s (%s flags %s)\n", i + 1, p->n, m->label,
                e->build ? "the build command's" : "sim_stub", flags ? flags : "?");
        dg_error err;
        dg_error_clear(&err);
        bool recorded = flags && (e->build ? project_build(e, src, bdir, m->cc, flags, m->log) &&
                                                 project_record(e, src, bdir, scn, m->rec, hl, matrix_format, false,
                                                                m->log)
                                           : build_tree(src, bdir, "Release", m->cc, flags, m->log) &&
                                                 record_with(bin, scn, m->rec, hl, matrix_format, false, m->log));
        m->ok = recorded && dg_harness__load_log(hl, &m->s, NULL, &err) == DG_OK;
        free(flags);
        if (!m->ok)
            fprintf(stderr, "detgate matrix: %s could not be built or run (see %s)\n", m->label, m->log);
    }
}

/* Classes: the configurations that record identically; raw groups: those whose raw floats are
 * identical too (dg_harness__stream_classes). reps[c] is class c's first member, rreps[g] raw group g's. */
static size_t matrix_classes(mplan *p, size_t *reps, size_t *rreps)
{
    const harness__stream **s = calloc(p->n ? p->n : 1, sizeof *s);
    size_t *cls = calloc(p->n ? p->n : 1, sizeof *cls), *raw = calloc(p->n ? p->n : 1, sizeof *raw);
    size_t nc = 0;
    if (s && cls && raw) {
        for (size_t i = 0; i < p->n; i++)
            s[i] = p->v[i].ok ? &p->v[i].s : NULL;
        nc = dg_harness__stream_classes(s, p->n, false, cls, reps);
        dg_harness__stream_classes(s, p->n, true, raw, rreps);
        for (size_t i = 0; i < p->n; i++) {
            p->v[i].cls = cls[i];
            p->v[i].raw = raw[i];
        }
    } else {
        for (size_t i = 0; i < p->n; i++)
            p->v[i].ok = false;   /* out of memory: nothing can be compared */
    }
    free(s);
    free(cls);
    free(raw);
    return nc;
}

/* A growing string; on out of memory it stops growing and says so once. */
typedef struct mtext {
    char *s;
    size_t len, cap;
} mtext;

static void mtext_add(mtext *t, const char *s)
{
    size_t n = strlen(s);
    if (!dg_grow((void **)&t->s, &t->cap, t->len + n + 1, 1))
        return;
    memcpy(t->s + t->len, s, n + 1);
    t->len += n;
}

/* "{gcc -O2 off, clang -O2 off}": the members of class c (or of raw group c). */
static void matrix_class_text(const mplan *p, size_t c, bool raw, mtext *t)
{
    bool first = true;
    mtext_add(t, "{");
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i].ok && (raw ? p->v[i].raw : p->v[i].cls) == c) {
            if (!first)
                mtext_add(t, ", ");
            mtext_add(t, p->v[i].label);
            first = false;
        }
    mtext_add(t, "}");
}

/* The representative pair of two classes: state diff of their recordings (a check of its own), raw
 * drift from their hash logs, one table line. */
static void matrix_pair(dg_report_scenario *sc, const mconf *x, const mconf *y, int width)
{
    char name[128], a[40] = "identical", r[40] = "identical";
    snprintf(name, sizeof name, "matrix %.50s ~ %.50s", x->label, y->label);
    dg_report_check *ck = dg_report_add_check(sc, name, DG_REPORT_PASS);
    dg_error err;
    dg_error_clear(&err);
    uint64_t nd = ck ? dg_harness__compare_files(ck, sc, x->rec, y->rec, &err) : 0;
    uint64_t first[1], first_raw;
    size_t nf;
    dg_harness__compare_streams(NULL, &x->s, &y->s, DG_REPORT_TICK_NONE, first, 1, &nf, &first_raw);
    if (ck && nd && nd != UINT64_MAX) {
        snprintf(a, sizeof a, "%llu", (unsigned long long)ck->first_tick);
        ck->status = DG_REPORT_FAIL;
    } else if (nd == UINT64_MAX) {
        snprintf(a, sizeof a, "(diff failed)");
    }
    if (first_raw != DG_REPORT_TICK_NONE) {
        snprintf(r, sizeof r, "%llu", (unsigned long long)first_raw);
        if (ck)
            ck->first_raw_tick = first_raw;
    }
    dg_report_check_set_message(ck, "%s vs %s: first divergent tick %s; raw floats first differ %s", x->label,
                                y->label, a, r);
    printf("%-*s  %-*s  %-20s  %s\n", width, x->label, width, y->label, a, r);
}

/* Raw-float drift inside each class (same quanta, different floats): the class's raw groups, and one
 * line and check per group other than the first, against the first (a note, or a failure with
 * the raw policy's WARN/FAIL/PASS). Returns the number of such groups. */
static size_t matrix_raw_drift(dg_report_scenario *sc, const mplan *p, size_t nc, const size_t *reps,
                               const size_t *rreps, cli_raw_policy raw)
{
    size_t drifting = 0;
    for (size_t c = 0; c < nc; c++) {
        const mconf *first = &p->v[reps[c]];
        mtext groups = {0};
        size_t ng = 0;
        for (size_t i = 0; i < p->n; i++)   /* a raw group's first member in this class */
            if (p->v[i].ok && p->v[i].cls == c && rreps[p->v[i].raw] == i) {
                mtext_add(&groups, ng++ ? " " : "");
                matrix_class_text(p, p->v[i].raw, true, &groups);
            }
        if (ng > 1)
            printf("raw floats (same quanta, different floats%s): class %zu in %zu groups: %s\n",
                   raw == CLI_RAW_FAIL ? "; --raw fail: a failure" : "", c + 1, ng, groups.s ? groups.s : "");
        free(groups.s);
        for (size_t i = 0; i < p->n; i++) {
            const mconf *m = &p->v[i];
            if (!m->ok || m->cls != c || rreps[m->raw] != i || m->raw == first->raw)
                continue;
            uint64_t ft[1], first_raw;
            size_t nf;
            dg_harness__compare_streams(NULL, &first->s, &m->s, DG_REPORT_TICK_NONE, ft, 1, &nf, &first_raw);
            drifting++;
            printf("  %s ~ %s: raw floats first differ at tick %llu\n", first->label, m->label,
                   (unsigned long long)first_raw);
            char name[128];
            snprintf(name, sizeof name, "raw floats %.50s ~ %.50s", first->label, m->label);
            dg_report_check *ck = dg_report_add_check(sc, name, DG_REPORT_PASS);
            dg_report_check_set_raw_divergence(ck, first_raw);
            cli_raw_apply(ck, raw); /* a raw-only drift: WARN, FAIL or PASS by the policy */
            dg_report_check_set_message(ck, "%s vs %s: same quantized state, raw floats first differ at tick %llu%s",
                                        first->label, m->label, (unsigned long long)first_raw,
                                        raw == CLI_RAW_FAIL ? " (--raw fail)" : "");
        }
    }
    return drifting;
}

/* "2 classes: {..} {..}" on stdout and as the report's `classes` check. */
static void matrix_class_line(dg_report_scenario *sc, const mplan *p, size_t nc)
{
    size_t built = 0;
    for (size_t i = 0; i < p->n; i++)
        built += p->v[i].ok;
    mtext classes = {0};
    for (size_t c = 0; c < nc; c++) {
        if (c)
            mtext_add(&classes, " ");
        matrix_class_text(p, c, false, &classes);
    }
    const char *ctext = nc == 0 ? "(no configuration recorded)" : classes.s ? classes.s : "";
    printf("%zu class%s: %s\n", nc, nc == 1 ? "" : "es", ctext);
    dg_report_check *ck =
        dg_report_add_check(sc, "classes", nc > 1 ? DG_REPORT_FAIL : nc ? DG_REPORT_PASS : DG_REPORT_ERROR);
    dg_report_check_set_message(ck, "%zu of %zu configurations recorded, %zu class%s: %s", built, p->n, nc,
                                nc == 1 ? "" : "es", ctext);
    free(classes.s);
}

/* A `build LABEL` error per configuration that could not be built or run; returns how many. */
static size_t matrix_unbuilt(dg_report_scenario *sc, const mplan *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        if (!p->v[i].ok) {
            char name[128];
            snprintf(name, sizeof name, "build %.100s", p->v[i].label);
            dg_report_check *e = dg_report_add_check(sc, name, DG_REPORT_ERROR);
            dg_report_check_set_message(e, "%s could not be built or run (see %s)", p->v[i].label, p->v[i].log);
            printf("not built: %s (see %s)\n", p->v[i].label, p->v[i].log);
            n++;
        }
    return n;
}

/* The verdict: classes, one representative pair per pair of classes, raw drift, builds that failed. */
static int matrix_report(dg_report *rep, mplan *p, const char *scn_name, cli_raw_policy raw, double t0)
{
    dg_report_scenario *sc = dg_report_add_scenario(rep, scn_name, matrix_format->name);
    size_t *reps = calloc(p->n ? p->n : 1, sizeof *reps), *rreps = calloc(p->n ? p->n : 1, sizeof *rreps);
    if (!sc || !reps || !rreps) {
        free(reps);
        free(rreps);
        return CLI_UNTESTED;
    }
    size_t nc = matrix_classes(p, reps, rreps);
    if (nc) {   /* the scenario's size, from the first configuration that recorded it */
        sc->ticks = p->v[reps[0]].s.n;
        sc->entity_ticks = p->v[reps[0]].s.entity_ticks;
    }
    int width = 8;
    for (size_t i = 0; i < p->n; i++)
        width = (int)strlen(p->v[i].label) > width ? (int)strlen(p->v[i].label) : width;
    width = width > 40 ? 40 : width;
    matrix_class_line(sc, p, nc);
    if (nc > 1)
        printf("%-*s  %-*s  %-20s  %s\n", width, "A", width, "B", "first divergent tick", "raw floats first differ");
    for (size_t a = 0; a < nc; a++)
        for (size_t b = a + 1; b < nc; b++)
            matrix_pair(sc, &p->v[reps[a]], &p->v[reps[b]], width);
    size_t drifting = matrix_raw_drift(sc, p, nc, reps, rreps, raw);
    size_t unbuilt = matrix_unbuilt(sc, p);
    free(reps);
    free(rreps);
    rep->duration_s = dg_harness__now() - t0;
    printf("detgate matrix: scenario %s, %zu configuration%s, %zu class%s, %.1f s\n", scn_name, p->n,
           p->n == 1 ? "" : "s", nc, nc == 1 ? "" : "es", rep->duration_s);
    if (nc > 1 || (raw == CLI_RAW_FAIL && drifting))
        return CLI_DIVERGED;
    return unbuilt ? CLI_UNTESTED : CLI_EQUAL;
}

enum { S_CONFIG = 0x540, S_DRY_RUN };

int cli_matrix(int argc, char **argv)
{
    static const struct option opts[] = {{"scenario", 1, 0, S_SCN}, {"configs", 1, 0, S_GOOD},
                                         {"config", 1, 0, S_CONFIG}, {"dry-run", 0, 0, S_DRY_RUN}, {"work", 1, 0, S_WORK},
                                         {"keep", 0, 0, S_KEEP}, {"source", 1, 0, S_REPO}, CLI_PROJECT_OPT, CLI_REPORT_OPTS,
                                         CLI_RAW_OPTS, {0, 0, 0, 0}};
    const char *scn = NULL, *work = NULL, *source = NULL, *project = NULL;
    bool keep = false, dry = false, given = false, raw_given = false;
    cli_raw_policy raw = cli_raw_policy_default();
    mplan plan = {0};
    char why[200] = "";
    cli_reports rp = {0};
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
        if (cli_report_opt(&rp, c, optarg))
            continue;
        int rc = cli_raw_opt("matrix", c, optarg, &raw);
        if (rc > 0) {
            mplan_free(&plan);
            return rc;
        }
        if (rc == 0) {
            raw_given = true;
            continue;
        }
        bool parsed = true;
        switch (c) {
        case S_SCN: scn = optarg; break;
        case S_GOOD:
            parsed = matrix_add_list(&plan, optarg, why, sizeof why);
            given = true;
            break;
        case S_CONFIG:
            parsed = matrix_add(&plan, optarg, strlen(optarg), why, sizeof why);
            given = true;
            break;
        case S_DRY_RUN: dry = true; break;
        case S_WORK: work = optarg; break;
        case S_KEEP: keep = true; break;
        case S_REPO: source = optarg; break;
        case CLI_OPT_PROJECT: project = optarg; break;
        default:
            mplan_free(&plan);
            return cli_usage_error("matrix", "unknown option or missing value '%s'", argv[optind - 1]);
        }
        if (!parsed) {
            mplan_free(&plan);
            return cli_usage_error("matrix", "--config%s: %s", c == S_GOOD ? "s" : "", why);
        }
    }
    if (!scn || optind != argc) {
        mplan_free(&plan);
        return cli_usage_error("matrix", "--scenario S is required");
    }
    if (!given && !matrix_add_list(&plan, k_matrix_default, why, sizeof why)) {
        mplan_free(&plan);
        return cli_usage_error("matrix", "default configurations: %s", why);
    }
    if (cli_reports_prepare(&rp, "matrix", NULL, 0) != 0) {
        mplan_free(&plan);
        return CLI_USAGE;
    }
    static harness__project proj;
    proj_engine eng;
    int lrc = load_proj_engine("matrix", project, &proj, &eng);
    if (!lrc) /* the matrix compares hash logs: its format is its own (matrix_format) */
        project_settings(&proj, NULL, raw_given ? NULL : &raw);
    char scn_path[PATH_CAP], scn_abs[WORK_CAP], src[WORK_CAP], wdir[WORK_CAP];
    if (!lrc && eng.build)
        lrc = cli_project_scenario("matrix", &proj, scn, scn_path, sizeof scn_path);
    else if (!lrc && !cli_resolve_scenario(scn, NULL, scn_path, sizeof scn_path))
        lrc = cli_usage_error("matrix", "no scenario '%s'", scn);
    if (!lrc && !absolute(scn_path, scn_abs, sizeof scn_abs))
        lrc = cli_usage_error("matrix", "no scenario '%s'", scn);
    if (lrc) {
        mplan_free(&plan);
        return lrc;
    }
    char scn_name[DG_HASH_LOG_NAME_MAX + 1];
    dg_harness__scenario_name(scn_path, scn_name, sizeof scn_name);
    if (dry) {
        matrix_print_plan(&plan, scn_name, eng.build != NULL);
        mplan_free(&plan);
        return CLI_EQUAL;
    }
#ifdef DETGATE_SOURCE_DIR
    const char *default_src = DETGATE_SOURCE_DIR;
#else
    const char *default_src = ".";
#endif
    if (eng.build) /* a process project builds and runs in its own folder */
        default_src = proj.dir[0] ? proj.dir : ".";
    if (!absolute(source ? source : default_src, src, sizeof src) || !make_work_dir(work, wdir, sizeof wdir)) {
        mplan_free(&plan);
        fprintf(stderr, "detgate matrix: cannot find the source tree or create a work folder\n");
        return CLI_UNTESTED;
    }
    double t0 = dg_harness__now();
    matrix_build_all(&plan, src, wdir, scn_abs, &eng);
    dg_error err;
    dg_error_clear(&err);
    dg_report *rep = cli_report_new("matrix", &err);
    int code = rep ? matrix_report(rep, &plan, scn_name, raw, t0) : CLI_UNTESTED;
    fflush(stdout);
    bool failed_build = false;   /* its log is in the work folder: keep what the message points to */
    for (size_t i = 0; i < plan.n; i++)
        failed_build = failed_build || !plan.v[i].ok;
    mplan_free(&plan);
    if (!keep && !work && !failed_build)
        remove_tree(wdir);
    else if (!work)
        fprintf(stderr, "detgate matrix: work folder kept: %s\n", wdir);
    rp.no_summary = true;
    bool ok = rep && cli_write_reports(rep, &rp, "matrix");
    dg_report_free(rep);
    return ok ? code : (code ? code : CLI_UNTESTED);
}
