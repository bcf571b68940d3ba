/* harness/cli_run.c — the commands that run the gate's machinery on one input: `detgate record`,
 * `detgate verify` (record side vs replay side, seek, recovery) and `detgate diff A B`. */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_run_opts_init(cli_run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->fault_tick = UINT64_MAX;
    o->seek_fault_tick = UINT64_MAX;
    o->self_check_fault_tick = UINT64_MAX;
    o->seek_random = 32;
    o->jobs = 1;
    o->format = dg_harness__format_default();
    o->engine = dg_harness__engines[0];
}

bool cli_parse_jobs(const char *s, unsigned *out)
{
    uint64_t v;
    if (!cli_parse_u64(s, &v) || v > CLI_JOBS_MAX)
        return false;
    if (v == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        v = cpus < 1 ? 1 : cpus > CLI_JOBS_MAX ? CLI_JOBS_MAX : (uint64_t)cpus;
    }
    *out = (unsigned)v;
    return true;
}

dg_status cli_open_source(const char *scenario, const cli_run_opts *o, harness__source **out, dg_error *err)
{
    harness__engine_args a = {.scenario = scenario, .states = o->states, .inject = o->inject, .run = o->run,
                              .run_dir = o->run_dir, .time_limit = o->time_limit, .keyframe = o->keyframe};
    return o->engine->open(out, &a, err);
}

bool cli_bad_input(dg_status st)
{
    return st == DG_E_SYNTAX || st == DG_E_RANGE || st == DG_E_USAGE || st == DG_E_UTF8 || st == DG_E_MALFORMED ||
           st == DG_E_LIMIT; /* an input over a size limit (a 1 GiB scenario) */
}

/* The writer rebuilds each DELTA record with the decoder's own arithmetic and refuses a tick whose
 * rebuild does not match (DG_E_STATE from "writer"): this build cannot read back what it writes — a
 * failure of the build (exit 1), not a run that could not test. */
static bool writer_refused_itself(const dg_error *err)
{
    return err->code == DG_E_STATE && strcmp(err->where, "writer") == 0;
}

/* A fault hook set past the recording's last tick would test nothing: bad usage. */
static dg_status check_fault_ticks(const cli_run_opts *o, const harness__stream *rec, dg_error *err)
{
    static const char *const kind[3] = {"double-delta", "seek-drop-delta", "self-check"};
    const uint64_t at[3] = {o->fault_tick, o->seek_fault_tick, o->self_check_fault_tick};
    uint64_t last = rec->n ? rec->v[rec->n - 1].tick : 0;
    for (int k = 0; k < 3; k++)
        if (at[k] != UINT64_MAX && (rec->n == 0 || at[k] > last))
            return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "--replay-fault",
                                "%s:%llu is past the recording's last tick (%llu): it would test nothing", kind[k],
                                (unsigned long long)at[k], (unsigned long long)last);
    return DG_OK;
}

int cli_record_and_verify(dg_report *rep, harness__source *src, const char *path, const cli_run_opts *o,
                          harness__stream *rec, dg_report_scenario **sc_out, dg_error *err)
{
    dg_report_scenario *sc = dg_report_add_scenario(rep, src->name, o->format->name);
    if (sc_out)
        *sc_out = sc;
    if (!sc)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "report", "out of memory"), -1;
    cli_progress pr;
    char label[128];
    snprintf(label, sizeof label, "%s: record", src->name);
    cli_progress_init(&pr, label);
    pr.on = pr.on && !o->no_progress;
    harness__record_opts ro = {.hash_log = o->hash_log, .log_entities = o->log_entities, .log_raw = o->log_raw,
                               .raw_log = o->raw_log, .format_name = o->format->name, .keyframe = o->keyframe,
                               .progress = cli_progress_cb, .progress_user = &pr,
                               .fault_self_check = o->self_check_fault_tick != UINT64_MAX,
                               .fault_self_check_tick = o->self_check_fault_tick,
                               .fsync = o->scratch ? DG_FLREP_FSYNC_NONE : DG_FLREP_FSYNC_CLOSE, .jobs = o->jobs};
    /* with a spare core the file checks follow the recording as it is written (harness/verify_follow.c) */
    harness__follow *follow = !o->format->follow ? NULL
                              : dg_harness__follow_start(o->jobs, o->fault_tick, o->seek_fault_tick,
                                                         o->seek_max_edges == 0);
    ro.on_chunk = follow ? dg_harness__follow_chunk : NULL;
    ro.on_chunk_user = follow;
    double t0 = dg_harness__now();
    dg_status st = o->format->record(src, path, &ro, rec, err);
    cli_progress_done(&pr);
    if (st == DG_OK)
        st = check_fault_ticks(o, rec, err);
    if (st != DG_OK) {
        dg_harness__follow_free(follow);
        bool own = writer_refused_itself(err);
        dg_report_check *c = dg_report_add_check(sc, "record", own ? DG_REPORT_FAIL : DG_REPORT_ERROR);
        char buf[600];
        dg_error_format(err, buf, sizeof buf);
        if (c) {
            dg_report_check_set_message(c, own ? "the writer could not reproduce what it wrote (its self-check "
                                                 "failed: this build cannot read back its own recording): %s"
                                               : "could not record: %s", buf);
            c->duration_s = dg_harness__now() - t0;
        }
        return -1;
    }
    struct stat stt;
    sc->ticks = rec->n;
    sc->entity_ticks = rec->entity_ticks;
    sc->file_bytes = stat(path, &stt) == 0 ? (uint64_t)stt.st_size : 0;
    harness__verify_opts vo = {.fault_tick = o->fault_tick, .seek_fault_tick = o->seek_fault_tick,
                               .seek_random = o->seek_random, .seek_max_edges = o->seek_max_edges,
                               .skip_recovery = o->skip_recovery, .jobs = o->jobs, .follow = follow};
    int failed = o->format->verify(sc, src, path, rec, &vo);
    dg_harness__follow_free(follow);
    return failed;
}

/* ---- option parsing shared by record and verify ------------------------------------------------- */

enum { OPT_INJECT = 0x200, OPT_KEYFRAME, OPT_STATES, OPT_KEEP, OPT_HASHLOG, OPT_LOGENT, OPT_FAULT, OPT_SEEKS,
       OPT_EDGES, OPT_NOREC, OPT_FORMAT, OPT_CORPUS, OPT_REPEAT, OPT_LOGRAW };

/* --replay-fault KIND:TICK, a test hook: double-delta breaks linear replay at TICK, seek-drop-delta
 * breaks only a seek landing on TICK, self-check makes the writer's self-check fail at TICK. */
int cli_parse_format(const char *cmd, const char *arg, const harness__format **out)
{
    const harness__format *f = dg_harness__format_find(arg);
    if (!f)
        return cli_usage_error(cmd, "--format: expected %s, found '%s'", dg_harness__format_names(), arg);
    *out = f;
    return 0;
}

int cli_check_replay_faults(const char *cmd, const cli_run_opts *o, const char *what)
{
    if (o->format->replay_faults ||
        (o->fault_tick == UINT64_MAX && o->seek_fault_tick == UINT64_MAX && o->self_check_fault_tick == UINT64_MAX))
        return 0;
    return cli_usage_error(cmd, "--replay-fault hooks %s; it does nothing with --format %s", what, o->format->name);
}

int cli_parse_replay_fault(const char *cmd, const char *arg, cli_run_opts *o)
{
    static const char dd[] = "double-delta:", sd[] = "seek-drop-delta:", sc[] = "self-check:";
    if (strncmp(arg, dd, sizeof dd - 1) == 0 && cli_parse_u64(arg + sizeof dd - 1, &o->fault_tick))
        return 0;
    if (strncmp(arg, sd, sizeof sd - 1) == 0 && cli_parse_u64(arg + sizeof sd - 1, &o->seek_fault_tick))
        return 0;
    if (strncmp(arg, sc, sizeof sc - 1) == 0 && cli_parse_u64(arg + sizeof sc - 1, &o->self_check_fault_tick))
        return 0;
    return cli_usage_error(cmd, "--replay-fault: expected double-delta:TICK, seek-drop-delta:TICK or self-check:TICK, "
                                "found '%s'", arg);
}

static int parse_run_opt(const char *cmd, int c, cli_run_opts *o, const char **format, const char **corpus)
{
    uint64_t v;
    switch (c) {
    case OPT_INJECT: o->inject = optarg; return 0;
    case OPT_STATES:
        o->states = optarg;
        o->engine = &dg_harness__engine_stream; /* a project's engine is not started: the stream is given */
        return 0;
    case OPT_KEEP: o->keep = optarg; return 0;
    case OPT_HASHLOG: o->hash_log = optarg; return 0;
    case OPT_LOGENT: o->log_entities = true; return 0;
    case OPT_LOGRAW: o->log_raw = true; return 0;
    case OPT_NOREC: o->skip_recovery = true; return 0;
    case OPT_FORMAT:
        *format = optarg;
        return cli_parse_format(cmd, optarg, &o->format);
    case OPT_CORPUS: *corpus = optarg; return 0;
    case CLI_OPT_PROJECT: o->project = optarg; return 0;
    case OPT_KEYFRAME:
        if (!cli_parse_u64(optarg, &v) || v < DG_FLREP_KEYFRAME_MIN || v > DG_FLREP_KEYFRAME_MAX)
            return cli_usage_error(cmd, "--keyframe-interval: expected %d..%d, found '%s'", DG_FLREP_KEYFRAME_MIN,
                                   DG_FLREP_KEYFRAME_MAX, optarg);
        o->keyframe = (uint32_t)v;
        return 0;
    case OPT_FAULT:
        return cli_parse_replay_fault(cmd, optarg, o);
    case OPT_SEEKS:
        if (!cli_parse_u64(optarg, &v) || v > 1000000)
            return cli_usage_error(cmd, "--seek-samples: expected 0..1000000, found '%s'", optarg);
        o->seek_random = (size_t)v;
        return 0;
    case OPT_EDGES:
        if (!cli_parse_u64(optarg, &v) || v > 100000000)
            return cli_usage_error(cmd, "--seek-edges: expected a count (0 = all), found '%s'", optarg);
        o->seek_max_edges = (size_t)v;
        return 0;
    default: return -1;
    }
}

#define RUN_LONG_OPTS                                                                                     \
    {"inject", 1, 0, OPT_INJECT}, {"keyframe-interval", 1, 0, OPT_KEYFRAME}, {"states", 1, 0, OPT_STATES},      \
        {"keep", 1, 0, OPT_KEEP}, {"hash-log", 1, 0, OPT_HASHLOG}, {"log-entities", 0, 0, OPT_LOGENT},        \
        {"log-raw", 0, 0, OPT_LOGRAW},                                                                    \
        {"replay-fault", 1, 0, OPT_FAULT}, {"seek-samples", 1, 0, OPT_SEEKS}, {"seek-edges", 1, 0, OPT_EDGES}, \
        {"no-recovery", 0, 0, OPT_NOREC}, {"format", 1, 0, OPT_FORMAT}, {"corpus", 1, 0, OPT_CORPUS}, CLI_PROJECT_OPT

/* --log-entities or --log-raw without --hash-log would do nothing: a usage error (printed), true. */
static bool log_shape_alone(const char *cmd, const cli_run_opts *o)
{
    if (o->hash_log || !(o->log_entities || o->log_raw))
        return false;
    cli_usage_error(cmd, "%s shapes the hash log: it needs --hash-log LOG", o->log_raw ? "--log-raw" : "--log-entities");
    return true;
}

/* Resolves the scenario argument and opens the source; prints the error and returns an exit code
 * (or 0 with *src set). */
static int open_input(const char *cmd, const char *arg, const char *corpus, bool format_given, cli_run_opts *o,
                      harness__source **src, char path[CLI_PATH_CAP])
{
    path[0] = 0;
    dg_error err;
    dg_error_clear(&err);
    static harness__project proj; /* record and verify run one source: o keeps pointers into it */
    bool have = false;
    int pc = cli_project_load(cmd, o->project, &proj, &have);
    if (pc)
        return pc;
    if (have && !o->states && (pc = cli_project_apply(cmd, &proj, o, format_given)) != 0)
        return pc;
    o->proj = have ? &proj : NULL;
    if (!o->states) {
        if (!arg)
            return cli_usage_error(cmd, "expected a SCENARIO (a .scn file or a name in corpus/scenarios) or --states");
        if (have && !corpus) {
            if ((pc = cli_project_scenario(cmd, &proj, arg, path, CLI_PATH_CAP)) != 0)
                return pc;
        } else if (!cli_resolve_scenario(arg, corpus, path, CLI_PATH_CAP)) {
            fprintf(stderr, "detgate %s: no scenario '%s' (not a file, and not in %s)\n", cmd, arg,
                    corpus ? corpus : "corpus/scenarios");
            return CLI_USAGE;
        }
    } else if (arg) {
        return cli_usage_error(cmd, "give either a SCENARIO or --states, not both");
    }
    dg_status st = cli_open_source(path, o, src, &err);
    if (st != DG_OK) {
        cli_print_error(cmd, &err);
        return (cli_bad_input(st) || st == DG_E_IO) && !o->engine->own_failures ? CLI_USAGE : CLI_UNTESTED;
    }
    return 0;
}

int cli_record(int argc, char **argv)
{
    enum { OPT_FSYNC = 0x280 };
    static const struct option opts[] = {RUN_LONG_OPTS, {"output", 1, 0, 'o'}, {"fsync", 1, 0, OPT_FSYNC},
                                         {0, 0, 0, 0}};
    cli_run_opts o;
    cli_run_opts_init(&o);
    const char *out = NULL, *format = NULL, *corpus = NULL;
    dg_flrep_fsync fsync = DG_FLREP_FSYNC_CLOSE;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        if (c == 'o') {
            out = optarg;
            continue;
        }
        if (c == OPT_FSYNC) {
            if (!dg_flrep_fsync_parse(optarg, &fsync))
                return cli_usage_error("record", "--fsync: expected close, chunk or none, found '%s'", optarg);
            continue;
        }
        int rc = parse_run_opt("record", c, &o, &format, &corpus);
        if (rc > 0)
            return rc;
        if (rc < 0)
            return cli_usage_error("record", "unknown option or missing value '%s'", argv[optind - 1]);
    }
    if (!out)
        return cli_usage_error("record", "-o FILE is required");
    if (o.fault_tick != UINT64_MAX || o.seek_fault_tick != UINT64_MAX ||
        (!o.format->replay_faults && o.self_check_fault_tick != UINT64_MAX))
        return cli_usage_error("record", "--replay-fault: record takes only self-check:TICK (the .flrep writer's hook)");
    if (log_shape_alone("record", &o))
        return CLI_USAGE;
    if (!o.format->record_log && o.hash_log) /* (the log's shape flags need it: log_shape_alone) */
        return cli_usage_error("record", "--hash-log is for .flrep recordings (use `detgate hash FILE%s`)",
                               o.format->ext);
    if (optind < argc - 1)
        return cli_usage_error("record", "expected one SCENARIO");
    harness__source *src = NULL;
    char scn[CLI_PATH_CAP];
    int rc = open_input("record", optind < argc ? argv[optind] : NULL, corpus, format != NULL, &o, &src, scn);
    if (rc)
        return rc;
    /* both outputs checked before the run, written under temp names, put in place together */
    cli_outs outs = {0};
    cli_out *rec_out = cli_outs_add(&outs, "-o", out, false);
    cli_out *log_out = cli_outs_add(&outs, "--hash-log", o.hash_log, false);
    const char *inputs[] = {scn, o.states};
    if ((rc = cli_outs_prepare(&outs, "record", inputs, 2)) != 0) {
        dg_harness__source_free(src);
        return rc;
    }
    harness__stream rec = {.count_only = true}; /* only counted: nothing compares them */
    dg_error err;
    dg_error_clear(&err);
    cli_progress pr;
    cli_progress_init(&pr, "record");
    harness__record_opts ro = {.hash_log = log_out ? log_out->work : NULL, .log_entities = o.log_entities,
                               .log_raw = o.log_raw, .format_name = o.format->name, .keyframe = o.keyframe,
                               .progress = cli_progress_cb, .progress_user = &pr,
                               .fault_self_check = o.self_check_fault_tick != UINT64_MAX,
                               .fault_self_check_tick = o.self_check_fault_tick, .fsync = fsync, .jobs = 1};
    dg_status st = o.format->record(src, rec_out->work, &ro, &rec, &err);
    cli_progress_done(&pr);
    dg_harness__source_free(src);
    if (st != DG_OK) {
        cli_outs_discard(&outs);
        cli_print_error("record", &err);
        dg_harness__stream_free(&rec);
        return CLI_BAD_INPUT(&o, st) ? CLI_USAGE : writer_refused_itself(&err) ? CLI_DIVERGED : CLI_UNTESTED;
    }
    if (!cli_outs_commit(&outs, "record")) {
        dg_harness__stream_free(&rec);
        return CLI_UNTESTED;
    }
    fprintf(stderr, "detgate record: %s: %zu tick%s, %llu entity-tick%s\n", out, rec.n, dg_report_plural_s(rec.n),
            (unsigned long long)rec.entity_ticks, dg_report_plural_s(rec.entity_ticks));
    dg_harness__stream_free(&rec);
    return CLI_EQUAL;
}

int cli_verify(int argc, char **argv)
{
    static const struct option opts[] = {RUN_LONG_OPTS, CLI_REPORT_OPTS, CLI_RAW_OPTS, {"jobs", 1, 0, 'j'},
                                         {"repeat", 1, 0, OPT_REPEAT}, {0, 0, 0, 0}};
    cli_run_opts o;
    cli_run_opts_init(&o);
    cli_reports rp = {0};
    cli_raw_policy raw = cli_raw_policy_default();
    const char *format = NULL, *corpus = NULL;
    bool jobs_given = false, raw_given = false;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "qj:", opts, NULL)) != -1) {
        if (cli_report_opt(&rp, c, optarg))
            continue;
        int rc = cli_raw_opt("verify", c, optarg, &raw);
        if (rc > 0)
            return rc;
        if (rc == 0) {
            raw_given = true;
            continue;
        }
        if (c == 'j') {
            if (!cli_parse_jobs(optarg, &o.jobs))
                return cli_usage_error("verify", "--jobs: expected 0 (one per CPU) or 1..%d, found '%s'", CLI_JOBS_MAX,
                                       optarg);
            jobs_given = true;
            continue;
        }
        uint64_t n;
        if (c == OPT_REPEAT && (!cli_parse_u64(optarg, &n) || n < 2 || n > 1000))
            return cli_usage_error("verify", "--repeat: expected a run count 2..1000, found '%s'", optarg);
        if (c == OPT_REPEAT) {
            o.repeat = (unsigned)n;
            continue;
        }
        rc = parse_run_opt("verify", c, &o, &format, &corpus);
        if (rc > 0)
            return rc;
        if (rc < 0)
            return cli_usage_error("verify", "unknown option or missing value '%s'", argv[optind - 1]);
    }
    if (optind < argc - 1)
        return cli_usage_error("verify", "expected one SCENARIO");
    if (cli_check_replay_faults("verify", &o, "the .flrep reader") || log_shape_alone("verify", &o))
        return CLI_USAGE;
    harness__source *src = NULL;
    if (o.repeat && o.states)
        return cli_usage_error("verify", "--repeat runs the engine again: a --states stream is the same every time");
    char scn[CLI_PATH_CAP];
    int rc = open_input("verify", optind < argc ? argv[optind] : NULL, corpus, format != NULL, &o, &src, scn);
    if (rc)
        return rc;
    if (o.proj && !jobs_given && o.proj->jobs) /* [gate] jobs and raw, under --jobs and --raw */
        o.jobs = o.proj->jobs;
    if (o.proj && !raw_given)
        cli_raw_policy_parse(o.proj->raw, &raw);
    /* --keep is one more output, checked with the reports and put in place with them */
    cli_out *keep = cli_outs_add(&rp.outs, "--keep", o.keep, false);
    cli_out *log_out = cli_outs_add(&rp.outs, "--hash-log", o.hash_log, false);
    const char *inputs[] = {scn, o.states};
    if ((rc = cli_reports_prepare(&rp, "verify", inputs, 2)) != 0) {
        dg_harness__source_free(src);
        return rc;
    }
    if (log_out)
        o.hash_log = log_out->work;
    char path[CLI_PATH_CAP];
    bool temp = !keep;
    o.scratch = temp; /* removed below: a kept recording (--keep) is forced to disk when it closes */
    if (keep)
        snprintf(path, sizeof path, "%s", keep->work);
    else
        dg_harness__temp_path(path, sizeof path, NULL, src->name, o.format->ext);
    dg_error err;
    dg_error_clear(&err);
    dg_report *rep = cli_report_new("verify", &err);
    if (!rep) {
        cli_outs_discard(&rp.outs);
        dg_harness__source_free(src);
        cli_print_error("verify", &err);
        return CLI_UNTESTED;
    }
    double t0 = dg_harness__now();
    harness__stream rec = {0};
    dg_harness__cpu_init(o.jobs);
    dg_report_scenario *sc = NULL;
    char raw_log[CLI_PATH_CAP] = ""; /* --repeat: run 1's raw floats, to name a drift's field and values */
    if (o.repeat && o.format->record_log && dg_harness__temp_path(raw_log, sizeof raw_log, NULL, src->name, ".raw.hashlog"))
        o.raw_log = raw_log;
    int failed = cli_record_and_verify(rep, src, path, &o, &rec, &sc, &err);
    dg_harness__source_free(src); /* before another run of a process engine starts */
    src = NULL;
    if (failed >= 0 && o.repeat && sc)
        cli_verify_repeat(sc, scn, &o, path, &rec);
    rep->duration_s = dg_harness__now() - t0;
    dg_harness__stream_free(&rec);
    dg_harness__source_free(src);
    if (temp)
        remove(path);
    if (raw_log[0])
        remove(raw_log);
    bool usage = failed < 0 && CLI_BAD_INPUT(&o, err.code);
    if (usage)
        cli_print_error("verify", &err);
    cli_raw_apply_report(rep, raw);
    bool ok = usage || cli_write_reports(rep, &rp, "verify");
    int code = usage ? CLI_USAGE : cli_exit_for(rep);
    dg_report_free(rep);
    return ok ? code : (code ? code : CLI_UNTESTED);
}

/* ---- diff ---------------------------------------------------------------------------------------- */

/* A side as a hash stream: a hash log (fmt NULL) as it is, a recording of format fmt replayed and
 * hashed. */
static dg_status load_side(const char *path, const harness__format *fmt, unsigned jobs, harness__stream *out,
                           dg_error *err)
{
    if (!fmt)
        return dg_harness__load_log(path, out, NULL, err);
    harness__replay_opts ro = {UINT64_MAX, NULL, false, jobs, NULL, NULL};
    return fmt->replay_hash(path, &ro, out, err);
}

/* Hash-level comparison (at least one side is a hash log: there is no state to diff on that side). */
/* A side is a hash log (fa / fb NULL) or a recording of that format. */
static void diff_hashes(dg_report_check *c, dg_report_scenario *sc, const char *a, const harness__format *fa,
                        const char *b, const harness__format *fb, unsigned jobs, cli_raw_policy raw, dg_error *err)
{
    harness__stream sa = {0}, sb = {0};
    dg_status st = load_side(a, fa, jobs, &sa, err);
    if (st == DG_OK)
        st = load_side(b, fb, jobs, &sb, err);
    if (st != DG_OK) {
        char buf[600];
        dg_error_format(err, buf, sizeof buf);
        c->status = DG_REPORT_ERROR;
        dg_report_check_set_message(c, "%s", buf);
    } else {
        uint64_t first[1], first_raw;
        size_t nfirst;
        uint64_t nd = dg_harness__compare_streams(c, &sa, &sb, DG_REPORT_TICK_NONE, first, 1, &nfirst, &first_raw);
        if (nd)
            dg_harness__hash_views(c, a, dg_harness__format_view(fa), b, dg_harness__format_view(fb), NULL);
        sc->ticks = sb.n; /* both counts are B's, the side the scenario is named after */
        sc->entity_ticks = sb.entity_ticks;
        if (first_raw != DG_REPORT_TICK_NONE)
            dg_report_check_set_raw_divergence(c, first_raw);
        c->status = cli_raw_status(raw, nd ? c->first_tick : DG_REPORT_TICK_NONE, first_raw);
        if (nd && c->status != DG_REPORT_FAIL) /* a divergence past either end leaves first_tick unset */
            c->status = DG_REPORT_FAIL;
        char len[160];
        cli_length_note(len, sizeof len, "A", cli_stream_span(&sa), "B", cli_stream_span(&sb));
        if (nd)
            dg_report_check_set_message(c, "%s%llu tick%s differ%s (hash logs); first at tick %llu%s", len,
                                        (unsigned long long)c->divergent_ticks, dg_report_plural_s(c->divergent_ticks),
                                        c->divergent_ticks == 1 ? "s" : "", (unsigned long long)first[0],
                                        first_raw < first[0] ? "; raw floats differed earlier" : "");
        else if (first_raw != DG_REPORT_TICK_NONE) {
            char field[200] = "";
            uint32_t who = !fa && !fb ? dg_harness__raw_locate(c, a, b, first_raw, field, sizeof field, NULL) : 0;
            char ent[260] = "";
            if (who)
                snprintf(ent, sizeof ent, ", first in entity %u%s%s", (unsigned)who, field[0] ? ", " : "", field);
            dg_report_check_set_message(c, "quantized state identical; raw floats differ from tick %llu%s "
                                           "(sub-quantum): %s",
                                        (unsigned long long)first_raw, ent, cli_raw_verdict_note(raw));
        }
        else
            dg_report_check_set_message(c, "%zu tick%s, identical", sb.n, dg_report_plural_s(sb.n));
    }
    dg_harness__stream_free(&sa);
    dg_harness__stream_free(&sb);
}

/* diff A B --log-a LA --log-b LB: two recordings hold quantized state only; their hash logs
 * (record --hash-log) add the raw hashes. The logs' quantized verdict must agree with the
 * recordings' (else they are another run's: exit 2). Returns 0, or an exit code (printed). */
static int diff_raw_from_logs(dg_report_check *ck, uint64_t nd, const char *la, const char *lb, cli_raw_policy raw)
{
    harness__stream sa = {0}, sb = {0};
    dg_error err;
    dg_error_clear(&err);
    int code = 0;
    if (dg_harness__load_log(la, &sa, NULL, &err) != DG_OK || dg_harness__load_log(lb, &sb, NULL, &err) != DG_OK) {
        cli_print_error("diff", &err);
        code = CLI_USAGE;
    } else {
        uint64_t first[1], first_raw;
        size_t nf;
        uint64_t nl = dg_harness__compare_streams(NULL, &sa, &sb, DG_REPORT_TICK_NONE, first, 1, &nf, &first_raw);
        if ((nl > 0) != (nd > 0)) {
            fprintf(stderr, "detgate diff: the hash logs %s and %s %s, the recordings %s: they are not these "
                            "recordings' logs\n", la, lb, nl ? "differ" : "agree", nd ? "differ" : "agree");
            code = CLI_USAGE;
        } else if (first_raw != DG_REPORT_TICK_NONE) {
            dg_report_check_set_raw_divergence(ck, first_raw);
            if (!nd) {
                char field[200] = "", ent[260] = "";
                uint32_t who = dg_harness__raw_locate(ck, la, lb, first_raw, field, sizeof field, NULL);
                if (who)
                    snprintf(ent, sizeof ent, ", first in entity %u%s%s", (unsigned)who, field[0] ? ", " : "", field);
                ck->status = cli_raw_status(raw, DG_REPORT_TICK_NONE, first_raw);
                dg_report_check_set_message(ck, "quantized state identical; raw floats differ from tick %llu%s "
                                                "(sub-quantum, from the hash logs): %s",
                                            (unsigned long long)first_raw, ent, cli_raw_verdict_note(raw));
            }
        }
        if (code == 0 && nd) /* a one-quantum step the logs' raw values explain */
            dg_harness__raw_edges(ck, la, lb);
    }
    dg_harness__stream_free(&sa);
    dg_harness__stream_free(&sb);
    return code;
}

int cli_diff(int argc, char **argv)
{
    enum { OPT_LOG_A = 0x290, OPT_LOG_B };
    static const struct option opts[] = {CLI_REPORT_OPTS, CLI_RAW_OPTS, {"jobs", 1, 0, 'j'}, {"log-a", 1, 0, OPT_LOG_A},
                                         {"log-b", 1, 0, OPT_LOG_B}, {0, 0, 0, 0}};
    cli_reports rp = {0};
    cli_raw_policy raw = cli_raw_policy_default();
    const char *log_a = NULL, *log_b = NULL;
    unsigned jobs = 1;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "qj:", opts, NULL)) != -1) {
        if (cli_report_opt(&rp, c, optarg))
            continue;
        if (c == 'j') {
            if (!cli_parse_jobs(optarg, &jobs))
                return cli_usage_error("diff", "--jobs: expected 0 (one per CPU) or 1..%d, found '%s'", CLI_JOBS_MAX,
                                       optarg);
            continue;
        }
        if (c == OPT_LOG_A || c == OPT_LOG_B) {
            *(c == OPT_LOG_A ? &log_a : &log_b) = optarg;
            continue;
        }
        int rc = cli_raw_opt("diff", c, optarg, &raw);
        if (rc > 0)
            return rc;
        if (rc < 0)
            return cli_usage_error("diff", "unknown option or missing value '%s'", argv[optind - 1]);
    }
    dg_harness__cpu_init(jobs);
    if (optind != argc - 2)
        return cli_usage_error("diff", "expected two files A B");
    if (!log_a != !log_b)
        return cli_usage_error("diff", "--log-a and --log-b go together (the hash logs of A and of B)");
    const char *a = argv[optind], *b = argv[optind + 1];
    const char *inputs[] = {a, b};
    int rc = cli_reports_prepare(&rp, "diff", inputs, 2);
    if (rc)
        return rc;
    dg_error err;
    dg_error_clear(&err);
    cli_kind ka, kb;
    const harness__format *fa, *fb; /* NULL: a hash log */
    if (cli_detect(a, &ka, &fa, &err) < 0 || cli_detect(b, &kb, &fb, &err) < 0) {
        cli_print_error("diff", &err);
        return CLI_USAGE;
    }
    bool known_a = ka != CLI_KIND_UNKNOWN, known_b = kb != CLI_KIND_UNKNOWN;
    bool states = fa && fa == fb;
    /* two recordings of one format: state diffs; anything else (a hash log on one side): hash level
     * only; recordings of two formats hash different states: not comparable */
    if (!known_a || !known_b || (fa && fb && fa != fb)) {
        fputs("detgate diff: expected ", stderr);
        for (size_t i = 0; dg_harness__formats[i]; i++)
            fprintf(stderr, "two %s recordings, ", dg_harness__formats[i]->label);
        fprintf(stderr, "or hash logs (%s, %s)\n", a, b);
        return CLI_USAGE;
    }
    dg_report *rep = cli_report_new("diff", &err);
    char name[DG_HASH_LOG_NAME_MAX + 1];
    dg_harness__scenario_name(b, name, sizeof name);
    dg_report_scenario *sc = rep ? dg_report_add_scenario(rep, name, fb ? fb->name : "hashlog") : NULL;
    dg_report_check *ck = sc ? dg_report_add_check(sc, "diff", DG_REPORT_PASS) : NULL;
    if (!ck) {
        dg_report_free(rep);
        fprintf(stderr, "detgate diff: out of memory\n");
        return CLI_UNTESTED;
    }
    double t0 = dg_harness__now();
    int code;
    struct stat bst; /* B's size, whatever B is (a recording or a hash log) */
    sc->file_bytes = stat(b, &bst) == 0 ? (uint64_t)bst.st_size : 0;
    if (states) {
        uint64_t nd = fa->compare_files(ck, sc, a, b, &err);
        if (nd == UINT64_MAX) {
            cli_print_error("diff", &err);
            dg_report_free(rep);
            return CLI_USAGE;
        }
        ck->status = nd ? DG_REPORT_FAIL : DG_REPORT_PASS;
        char len[160];
        cli_length_note(len, sizeof len, "A", cli_file_span(a, fa), "B", cli_file_span(b, fb));
        if (nd)
            dg_report_check_set_message(ck, "%s%llu tick%s differ%s; first at tick %llu", len,
                                        (unsigned long long)ck->divergent_ticks, dg_report_plural_s(ck->divergent_ticks),
                                        ck->divergent_ticks == 1 ? "s" : "", (unsigned long long)ck->first_tick);
        else
            dg_report_check_set_message(ck, "%llu tick%s, identical", (unsigned long long)sc->ticks,
                                        dg_report_plural_s(sc->ticks));
        int lc = log_a ? diff_raw_from_logs(ck, nd, log_a, log_b, raw) : 0;
        if (lc) {
            dg_report_free(rep);
            return lc;
        }
    } else {
        if (log_a) {
            dg_report_free(rep);
            return cli_usage_error("diff", "--log-a/--log-b are for two recordings; a hash log is compared as it is");
        }
        diff_hashes(ck, sc, a, fa, b, fb, jobs, raw, &err);
        if (ck->status == DG_REPORT_ERROR) {
            cli_print_error("diff", &err);
            dg_report_free(rep);
            return CLI_USAGE;
        }
    }
    ck->duration_s = dg_harness__now() - t0;
    if (states)
        fa->compare_headers(sc, a, b); /* its own check: tables and header fields, not ticks */
    rep->duration_s = dg_harness__now() - t0;
    bool ok = cli_write_reports(rep, &rp, "diff");
    code = cli_exit_for(rep);
    dg_report_free(rep);
    return ok ? code : (code ? code : CLI_UNTESTED);
}
