/* harness/cli_gate.c — what gates a merge: `detgate gate` verifies every scenario of the corpus and
 * compares each fresh recording with its golden (NAME.flrep: state diff; NAME.hashlog.zst: hashes
 * and raw float hashes); `detgate bless` re-records goldens on purpose and appends who, what and why
 * to corpus/golden/BLESS.log, so an intended change is a reviewed diff, not a pasted constant. */
#include "cli.h"
#include "shard_plan.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NAME_CAP 256

typedef struct name_list {
    char (*v)[NAME_CAP];
    size_t n, cap;
} name_list;

static bool names_add(name_list *l, const char *s)
{
    if (!dg_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v))
        return false;
    snprintf(l->v[l->n++], NAME_CAP, "%s", s);
    return true;
}

static int cmp_name(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

/* Scenario names (file stems) of the corpus .scn files, sorted: the order shards are cut from. */
static bool list_corpus(const char *dir, name_list *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n > 4 && n < NAME_CAP && strcmp(e->d_name + n - 4, ".scn") == 0 && e->d_name[0] != '.') {
            char stem[NAME_CAP];
            snprintf(stem, sizeof stem, "%.*s", (int)(n - 4), e->d_name);
            names_add(out, stem);
        }
    }
    closedir(d);
    if (out->n) /* qsort of a NULL array is undefined even for 0 elements */
        qsort(out->v, out->n, sizeof *out->v, cmp_name);
    return true;
}

#define GATE_SHARDS_MAX 4096

/* I/N, 1-based: 1 <= I <= N <= GATE_SHARDS_MAX. */
static bool parse_shard(const char *s, uint64_t *i, uint64_t *n)
{
    const char *slash = strchr(s, '/');
    char a[32];
    if (!slash || (size_t)(slash - s) >= sizeof a)
        return false;
    snprintf(a, sizeof a, "%.*s", (int)(slash - s), s);
    return cli_parse_u64(a, i) && cli_parse_u64(slash + 1, n) && *n >= 1 && *n <= GATE_SHARDS_MAX && *i >= 1 &&
           *i <= *n;
}

/* ---- the golden comparison ------------------------------------------------------------------------ */

/* NAME + the format's extension and NAME + its log suffix: NAME.flrep + NAME.hashlog.zst, NAME.rply +
 * NAME.rply.hashlog.zst. */
static void golden_paths(const char *dir, const char *name, const harness__format *f, char *rec, char *log,
                         size_t cap)
{
    snprintf(rec, cap, "%.3900s/%s%s", dir, name, f->ext);
    snprintf(log, cap, "%.3900s/%s%s", dir, name, f->log_suffix);
}

/* Writes the record side's hash stream (with its raw float hashes) as a hash log. */
static dg_status write_stream_log(const char *path, const char *name, const char *format,
                                  const harness__stream *rec, dg_error *err)
{
    dg_hash_log_header lh = {0};
    snprintf(lh.scenario, sizeof lh.scenario, "%s", name);
    snprintf(lh.format, sizeof lh.format, "%s", format);
    lh.raw = rec->n > 0 && rec->v[0].has_raw;
    dg_hash_log_writer *w = NULL;
    dg_status st = dg_hash_log_writer_open(&w, path, &lh, err);
    for (size_t i = 0; st == DG_OK && i < rec->n; i++) {
        const harness__tickrec *t = &rec->v[i];
        dg_hash_log_tick lt = {0};
        lt.tick = t->tick;
        lt.entity_count = t->count;
        lt.state = t->state;
        lt.events = t->events;
        lt.raw = t->raw;
        lt.has_raw = lh.raw && t->has_raw;
        st = dg_hash_log_writer_write(w, &lt, err);
    }
    dg_status cst = dg_hash_log_writer_close(w, st == DG_OK ? err : NULL);
    return st == DG_OK ? cst : st;
}

static void check_error(dg_report_check *c, const dg_error *err)
{
    char buf[600];
    dg_error_format(err, buf, sizeof buf);
    c->status = DG_REPORT_ERROR;
    dg_report_check_set_message(c, "%s", buf);
}

/* Whether this build reads its fresh recording back whole (every chunk and tick decoded). */
static bool fresh_reads_back(const char *rec_path, const harness__format *f)
{
    dg_error err;
    dg_error_clear(&err);
    return f->validate(rec_path, &err) == DG_OK;
}

/* The golden comparison stopped on an error. The fresh recording unreadable is a failure of this
 * build (FAIL, exit 1); the golden unreadable (or no memory) leaves nothing to compare with (ERROR). */
static void golden_error(dg_report_check *c, const dg_error *err, const char *golden, const char *rec_path,
                         const harness__format *f)
{
    char buf[600];
    dg_error_format(err, buf, sizeof buf);
    if (err->code != DG_E_IO && err->code != DG_E_NOMEM && !fresh_reads_back(rec_path, f)) {
        c->status = DG_REPORT_FAIL;
        dg_report_check_set_message(c, "this build cannot read back its own recording: %s", buf);
    } else {
        c->status = DG_REPORT_ERROR;
        dg_report_check_set_message(c, "cannot compare with the golden %s: %s", golden, buf);
    }
}

static void check_golden(dg_report_scenario *sc, const char *golden_dir, const char *rec_path,
                         const harness__stream *rec, cli_raw_policy raw, const harness__format *f,
                         const char *fresh_raw, const harness__decl *decl)
{
    double t0 = dg_harness__now();
    char gf[4096], gl[4096];
    golden_paths(golden_dir, sc->name, f, gf, gl, sizeof gf);
    dg_report_check *c = dg_report_add_check(sc, "golden", DG_REPORT_PASS);
    if (!c)
        return;
    bool have_f = cli_file_exists(gf), have_l = cli_file_exists(gl);
    dg_error err;
    dg_error_clear(&err);
    if (!have_f && !have_l) {
        c->status = DG_REPORT_ERROR;
        char label[64] = "", option[64] = ""; /* the default format goes without saying */
        if (f != dg_harness__format_default()) {
            snprintf(label, sizeof label, " (%s)", f->label);
            snprintf(option, sizeof option, "--format %s ", f->name);
        }
        dg_report_check_set_message(c, "no golden for %s in %s%s: record one with `detgate bless %s%s --reason \"...\"`",
                                    sc->name, golden_dir, label, option, sc->name);
        return;
    }
    uint64_t nd = 0, first_raw = DG_REPORT_TICK_NONE;
    cli_span rec_span = cli_stream_span(rec), golden_span = {false, 0, 0};
    if (have_f) {
        golden_span = cli_file_span(gf, f);
        nd = f->compare_files(c, NULL, gf, rec_path, &err);
        if (nd == UINT64_MAX) {
            golden_error(c, &err, gf, rec_path, f);
            return;
        }
    }
    if (have_l) {
        harness__stream g = {0};
        if (dg_harness__load_log(gl, &g, NULL, &err) != DG_OK) {
            golden_error(c, &err, gl, rec_path, f);
            dg_harness__stream_free(&g);
            return;
        }
        if (!have_f)
            golden_span = cli_stream_span(&g);
        uint64_t first[1];
        size_t nfirst;
        /* With a .flrep golden the state diff is already in the check; the log adds the raw hashes. */
        uint64_t nl = dg_harness__compare_streams(have_f ? NULL : c, &g, rec, DG_REPORT_TICK_NONE, first, 1, &nfirst,
                                               &first_raw);
        if (!have_f)
            nd = nl;
        dg_harness__stream_free(&g);
        static const char *const sides[2] = {"the golden (A)", "the new recording (B)"};
        char ge[4096]; /* the sampled entity log bless keeps beside a hash-log-only golden */
        dg_harness__entities_log_path(ge, sizeof ge, golden_dir, sc->name);
        if (!have_f && nl > 0) /* spread and trajectory as far as the log's data allows */
            dg_harness__hash_views(c, f->entity_views && cli_file_exists(ge) ? ge : gl, HARNESS_VIEW_LOG, rec_path,
                                dg_harness__format_view(f), sides);
    }
    if (first_raw != DG_REPORT_TICK_NONE) {
        if (nd == 0)
            dg_report_check_set_raw_divergence(c, first_raw);
        else
            c->first_raw_tick = first_raw;
    }
    if (nd > 0) {
        c->status = DG_REPORT_FAIL;
        /* one count everywhere: the check's own divergent ticks, ticks past either end included */
        uint64_t n = c->divergent_ticks;
        char len[200], raw_note[96] = "";
        cli_length_note(len, sizeof len, "the new recording", rec_span, "the golden", golden_span);
        if (first_raw < c->first_tick) /* the drift that came first, by its tick */
            snprintf(raw_note, sizeof raw_note, "; raw floats already differed earlier, from tick %llu (firstRawDivergentTick)",
                     (unsigned long long)first_raw);
        dg_report_check_set_message(
            c, "%s%llu tick%s differ%s from the golden (%s); first at tick %llu%s%s", len, (unsigned long long)n,
            dg_report_plural_s(n), n == 1 ? "s" : "", have_f ? "recording" : "hash log", (unsigned long long)c->first_tick,
            raw_note,
            have_f ? "" : "; the golden is a hash log (no states): for the entity and field diff, diff a recording "
                          "made at the golden's revision (`detgate bisect` does this)");
    } else if (first_raw != DG_REPORT_TICK_NONE) {
        c->status = cli_raw_status(raw, DG_REPORT_TICK_NONE, first_raw);
        dg_harness__golden_raw_message(c, gl, fresh_raw, decl, first_raw,
                                       "a golden log recorded with `detgate record --hash-log LOG --log-raw` names "
                                       "them (or bisect from the golden's revision: `detgate bisect`)",
                                       cli_raw_verdict_note(raw), NULL);
    } else {
        dg_report_check_set_message(c, "%zu tick%s identical to the golden (%s%s%s)", rec->n,
                                    dg_report_plural_s(rec->n), have_f ? "recording" : "",
                                    have_f && have_l ? " + " : "", have_l ? "hash log with raw floats" : "");
    }
    c->duration_s = dg_harness__now() - t0;
    if (have_f) /* after the golden check is complete: adding a check moves the array */
        f->compare_headers(sc, gf, rec_path);
}

/* ---- gate ---------------------------------------------------------------------------------------- */

enum { G_CORPUS = 0x300, G_GOLDEN, G_SCENARIO, G_SHARD, G_SEEKS, G_EDGES, G_INJECT, G_FORMAT, G_JOBS,
       G_PLAN, G_FAULT };

#define GATE_JOBS_MAX 32

typedef struct gate_opts {
    const char *corpus, *golden;
    name_list only;
    uint64_t shard_i, shard_n;
    uint64_t plan;   /* --plan N: print the plan for N shards and stop (0 = run) */
    bool sharded;    /* --shard given */
    cli_raw_policy raw; /* --raw / --strict-raw, from the default */
    unsigned jobs; /* scenarios verified at once (--jobs; 0 given = one per online CPU) */
    bool jobs_given, format_given, raw_given;
    cli_reports rp;
    cli_run_opts ro;
    harness__project proj;       /* the project file, when there is one */
    harness__scenario_ref *refs; /* its scenarios (name, path), when --corpus is not given */
    size_t nrefs;
} gate_opts;

/* --jobs N: 1..GATE_JOBS_MAX, or 0 for one per online CPU (capped the same way). */
static bool parse_jobs(const char *s, unsigned *out)
{
    uint64_t v;
    if (!cli_parse_u64(s, &v) || v > GATE_JOBS_MAX)
        return false;
    if (v == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        v = cpus < 1 ? 1 : cpus > GATE_JOBS_MAX ? GATE_JOBS_MAX : (uint64_t)cpus;
    }
    *out = (unsigned)v;
    return true;
}

/* Returns 0, or the exit code of a usage error (already printed). */
static int parse_gate_args(int argc, char **argv, gate_opts *g)
{
    static const struct option opts[] = {{"corpus", 1, 0, G_CORPUS}, {"golden", 1, 0, G_GOLDEN},
                                         {"scenario", 1, 0, G_SCENARIO}, {"shard", 1, 0, G_SHARD},
                                         CLI_RAW_OPTS, {"seek-samples", 1, 0, G_SEEKS},
                                         {"seek-edges", 1, 0, G_EDGES}, {"inject", 1, 0, G_INJECT},
                                         {"format", 1, 0, G_FORMAT}, {"jobs", 1, 0, G_JOBS},
                                         {"plan", 1, 0, G_PLAN}, {"replay-fault", 1, 0, G_FAULT},
                                         CLI_REPORT_OPTS, CLI_PROJECT_OPT, {0, 0, 0, 0}};
    uint64_t v;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "qj:", opts, NULL)) != -1) {
        if (cli_report_opt(&g->rp, c, optarg))
            continue;
        int rc = cli_raw_opt("gate", c, optarg, &g->raw);
        if (rc > 0)
            return rc;
        if (rc == 0) {
            g->raw_given = true;
            continue;
        }
        switch (c) {
        case CLI_OPT_PROJECT: g->ro.project = optarg; break;
        case 'j':
        case G_JOBS:
            g->jobs_given = true;
            if (!parse_jobs(optarg, &g->jobs))
                return cli_usage_error("gate", "--jobs: expected 0 (one per CPU) or 1..%d, found '%s'", GATE_JOBS_MAX,
                                       optarg);
            break;
        case G_CORPUS: g->corpus = optarg; break;
        case G_GOLDEN: g->golden = optarg; break;
        case G_SCENARIO: names_add(&g->only, optarg); break;
        case G_INJECT: g->ro.inject = optarg; break;
        case G_FAULT:
            if (cli_parse_replay_fault("gate", optarg, &g->ro))
                return CLI_USAGE;
            break;
        case G_FORMAT:
            if (cli_parse_format("gate", optarg, &g->ro.format))
                return CLI_USAGE;
            g->format_given = true;
            break;
        case G_SHARD:
            if (!parse_shard(optarg, &g->shard_i, &g->shard_n))
                return cli_usage_error("gate", "--shard: expected I/N with 1 <= I <= N <= %d, found '%s'",
                                       GATE_SHARDS_MAX, optarg);
            g->sharded = true;
            break;
        case G_PLAN:
            if (!cli_parse_u64(optarg, &g->plan) || g->plan < 1 || g->plan > GATE_SHARDS_MAX)
                return cli_usage_error("gate", "--plan: expected a shard count 1..%d, found '%s'", GATE_SHARDS_MAX,
                                       optarg);
            break;
        case G_SEEKS:
        case G_EDGES:
            if (!cli_parse_u64(optarg, &v))
                return cli_usage_error("gate", "--seek-%s: expected a count, found '%s'",
                                       c == G_SEEKS ? "samples" : "edges", optarg);
            *(c == G_SEEKS ? &g->ro.seek_random : &g->ro.seek_max_edges) = (size_t)v;
            break;
        default: return cli_usage_error("gate", "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc)
        return cli_usage_error("gate", "unexpected argument '%s' (use --scenario NAME)", argv[optind]);
    if (g->plan && g->sharded)
        return cli_usage_error("gate", "--plan N prints the plan of every shard: give it without --shard");
    const cli_run_opts *o = &g->ro;
    if (cli_check_replay_faults("gate", o, "the .flrep reader and writer"))
        return CLI_USAGE;
    const cli_reports *r = &g->rp;
    if (!r->dir && !r->text && !r->json && !r->junit && !r->markdown && !r->html && !r->markdown_append)
        g->rp.dir = "build/reports";
    return 0;
}

/* Checks the reports before the run, against what the gate reads: the scenarios and their goldens. */
static int gate_check_outputs(gate_opts *g, const name_list *all)
{
    size_t n = all->n * 3;
    char (*paths)[CLI_PATH_CAP] = calloc(n ? n : 1, sizeof *paths);
    const char **inputs = calloc(n ? n : 1, sizeof *inputs);
    if (!paths || !inputs) {
        free(paths);
        free(inputs);
        fprintf(stderr, "detgate gate: out of memory\n");
        return CLI_UNTESTED;
    }
    for (size_t i = 0; i < all->n; i++) {
        snprintf(paths[3 * i], CLI_PATH_CAP, "%s/%s.scn", g->corpus, all->v[i]);
        golden_paths(g->golden, all->v[i], g->ro.format, paths[3 * i + 1], paths[3 * i + 2], CLI_PATH_CAP);
    }
    for (size_t i = 0; i < n; i++)
        inputs[i] = paths[i];
    int rc = cli_reports_prepare(&g->rp, "gate", inputs, n);
    free(paths);
    free(inputs);
    return rc;
}

static bool name_in(const name_list *l, const char *name)
{
    for (size_t k = 0; k < l->n; k++)
        if (strcmp(l->v[k], name) == 0)
            return true;
    return false;
}

/* ---- the shard plan: each scenario's cost from its golden, longest first ------------------------------ */

/* Entity-ticks of a scenario's golden hash log (the sum of its ticks' entity counts), known before
 * anything runs. False when it has no readable hash log (the gate itself says why, later). */
static bool golden_cost(const gate_opts *g, const char *name, uint64_t *out)
{
    char gf[4096], gl[4096];
    golden_paths(g->golden, name, g->ro.format, gf, gl, sizeof gf);
    dg_hash_log_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (!cli_file_exists(gl) || dg_hash_log_reader_open(&r, gl, &err) != DG_OK)
        return false;
    uint64_t sum = 0;
    dg_hash_log_tick t;
    int got;
    while ((got = dg_hash_log_reader_next(r, &t, &err)) == 1)
        sum += t.entity_count;
    dg_hash_log_reader_close(r);
    *out = sum;
    return got == 0;
}

/* The plan of one run: the scenarios asked for (corpus or --scenario names) in name order. */
typedef struct gate_plan {
    size_t n;
    const char **names;
    uint64_t *cost;
    bool *assumed;      /* no golden hash log: cost assumed (the mean of the others) */
    uint32_t *shard_of; /* 0-based shard of each scenario */
    uint64_t *load;     /* each shard's total cost */
    uint32_t shards;
    char corpus_id[17];
} gate_plan;

static void plan_free(gate_plan *p)
{
    free(p->names);
    free(p->cost);
    free(p->assumed);
    free(p->shard_of);
    free(p->load);
    memset(p, 0, sizeof *p);
}

/* Scenarios without a golden cost the mean of those with one (1 when none has one): a guess that
 * depends only on the corpus, so every machine guesses the same. */
static void plan_costs(gate_plan *p, const gate_opts *g)
{
    uint64_t known = 0, sum = 0;
    for (size_t i = 0; i < p->n; i++) {
        p->assumed[i] = !golden_cost(g, p->names[i], &p->cost[i]);
        if (!p->assumed[i]) {
            known++;
            sum += p->cost[i];
        }
    }
    uint64_t guess = known && sum / known ? sum / known : 1;
    for (size_t i = 0; i < p->n; i++)
        if (p->assumed[i])
            p->cost[i] = guess;
}

/* False only on out of memory. */
static bool plan_make(gate_plan *p, const gate_opts *g, const name_list *all, uint32_t shards)
{
    size_t cap = all->n ? all->n : 1;
    p->shards = shards;
    p->names = malloc(cap * sizeof *p->names);
    p->cost = calloc(cap, sizeof *p->cost);
    p->assumed = calloc(cap, sizeof *p->assumed);
    p->shard_of = calloc(cap, sizeof *p->shard_of);
    p->load = calloc(shards, sizeof *p->load);
    if (!p->names || !p->cost || !p->assumed || !p->shard_of || !p->load)
        return false;
    for (size_t i = 0; i < all->n; i++)
        if (!g->only.n || name_in(&g->only, all->v[i]))
            p->names[p->n++] = all->v[i];
    plan_costs(p, g);
    return dg_harness__shard_plan(p->cost, p->n, shards, p->shard_of, p->load) &&
           dg_harness__corpus_id(g->ro.format->name, p->names, p->cost, p->n, p->corpus_id);
}

/* `gate --plan N`: one line per shard (cost, share of the total, scenarios in name order), then the
 * longest shard against the larger of the ideal (total / N) and the largest scenario. */
static void plan_print(const gate_plan *p, FILE *f)
{
    uint64_t total = 0, largest = 0, longest = 0;
    bool any_assumed = false;
    for (size_t i = 0; i < p->n; i++) {
        total += p->cost[i];
        largest = p->cost[i] > largest ? p->cost[i] : largest;
        any_assumed |= p->assumed[i];
    }
    fprintf(f, "shard plan: %zu scenarios in %u shards, cost = entity-ticks of the golden hash log, corpus %s\n",
            p->n, p->shards, p->corpus_id);
    for (uint32_t s = 0; s < p->shards; s++) {
        longest = p->load[s] > longest ? p->load[s] : longest;
        fprintf(f, "shard %u/%u cost %llu share %.1f%%:", s + 1, p->shards, (unsigned long long)p->load[s],
                total ? 100.0 * (double)p->load[s] / (double)total : 0.0);
        for (size_t i = 0; i < p->n; i++)
            if (p->shard_of[i] == s)
                fprintf(f, " %s%s", p->names[i], p->assumed[i] ? "*" : "");
        fputc('\n', f);
    }
    double ideal = (double)total / p->shards, bound = ideal > (double)largest ? ideal : (double)largest;
    fprintf(f, "longest shard %llu = %.2fx max(ideal %.0f, largest scenario %llu)\n", (unsigned long long)longest,
            bound > 0 ? (double)longest / bound : 0.0, ideal, (unsigned long long)largest);
    if (any_assumed)
        fputs("* no golden hash log: cost assumed (the mean of the others)\n", f);
}

/* Verifies one scenario and compares it with its golden. Returns false when it did not parse; the
 * message it would print goes to errors instead (printed in corpus order once every worker is done). */
static bool gate_scenario(dg_report *rep, const gate_opts *g, const char *name, char *errors, size_t cap)
{
    char scn[4096], rec_path[4096];
    snprintf(scn, sizeof scn, "%s/%s.scn", g->corpus, name);
    for (size_t i = 0; i < g->nrefs; i++) /* a project's scenario: its own path, whatever its extension */
        if (strcmp(g->refs[i].name, name) == 0)
            snprintf(scn, sizeof scn, "%s", g->refs[i].path);
    harness__source *src = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (cli_open_source(scn, &g->ro, &src, &err) != DG_OK) {
        char buf[600];
        dg_error_format(&err, buf, sizeof buf);
        /* a scenario that does not parse is a "scenario" check; an engine that fails before its first
         * tick (exits at once, writes nothing, a stream whose fields disagree) failed to record, like
         * one that fails later: a "record" check. Either is printed too (seen under -q). */
        bool engine_failed = g->ro.engine->own_failures;
        snprintf(errors, cap, "detgate gate: %s\n", buf);
        dg_report_scenario *sc = dg_report_add_scenario(rep, name, g->ro.format->name);
        dg_report_check *ck = sc ? dg_report_add_check(sc, engine_failed ? "record" : "scenario", DG_REPORT_ERROR) : NULL;
        if (ck)
            check_error(ck, &err);
        return g->ro.engine->own_failures; /* an engine that fails to start is untested, not bad input */
    }
    dg_harness__temp_path(rec_path, sizeof rec_path, NULL, src->name, g->ro.format->ext);
    harness__stream rec = {0};
    dg_report_scenario *sc = NULL;
    cli_run_opts ro = g->ro;
    char gf[4096], gl[4096], fresh_raw[4096] = ""; /* this run's raw floats, when the golden has its own */
    golden_paths(g->golden, src->name, ro.format, gf, gl, sizeof gf); /* as check_golden names it */
    if (ro.format->record_log && dg_harness__log_has_raw_values(gl) &&
        dg_harness__temp_path(fresh_raw, sizeof fresh_raw, NULL, src->name, ".raw.hashlog"))
        ro.raw_log = fresh_raw;
    int f = cli_record_and_verify(rep, src, rec_path, &ro, &rec, &sc, &err);
    if (f >= 0 && sc)
        check_golden(sc, g->golden, rec_path, &rec, g->raw, g->ro.format, fresh_raw[0] ? fresh_raw : NULL, &src->decl);
    if (fresh_raw[0])
        remove(fresh_raw);
    bool usage = f < 0 && CLI_BAD_INPUT(&g->ro, err.code);
    if (usage) {
        char buf[600];
        dg_error_format(&err, buf, sizeof buf);
        snprintf(errors, cap, "detgate gate: %s: %s\n", name, buf);
    }
    dg_harness__stream_free(&rec);
    dg_harness__source_free(src);
    remove(rec_path);
    return !usage;
}

/* ---- running the scenarios: one worker, or several threads (--jobs) -------------------------------- */

/* One scenario of the run. Its worker fills `part`, a report of its own (the builders of one report
 * are not meant for several threads), and `errors`, what it would have printed on stderr. The main
 * thread reads both only after every worker has finished, in corpus order: the assembled report and
 * stderr are the same whatever --jobs was and whichever worker finished first. */
typedef struct gate_job {
    const char *name;
    dg_report *part;
    char errors[1024];
    bool parsed;
    uint64_t cost; /* scheduling hint only: the size of its golden hash log (about its tick count) */
    size_t index;  /* position in corpus order */
} gate_job;

typedef struct gate_pool {
    const gate_opts *g;
    gate_job **order; /* the order workers take jobs in: longest first */
    size_t n;
    pthread_mutex_t mu;
    size_t next, done; /* under mu */
    bool progress;     /* "gate: k/n scenarios" on a TTY, when several run at once */
    double last;       /* under mu */
} gate_pool;

static void gate_run_job(gate_job *j, const gate_opts *g)
{
    dg_error err;
    dg_error_clear(&err);
    j->part = cli_report_new("gate", &err);
    if (!j->part) {
        char buf[600];
        dg_error_format(&err, buf, sizeof buf);
        snprintf(j->errors, sizeof j->errors, "detgate gate: %s: %s\n", j->name, buf);
        return;
    }
    j->parsed = gate_scenario(j->part, g, j->name, j->errors, sizeof j->errors);
}

static int cmp_longest_first(const void *a, const void *b)
{
    const gate_job *x = *(gate_job *const *)a, *y = *(gate_job *const *)b;
    if (x->cost != y->cost)
        return x->cost < y->cost ? 1 : -1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* With several workers the longest scenario starts first, so it does not start last and leave the
 * others idle (long-1h is 80 % of the bundled corpus). Only the start order changes: reports are
 * assembled in corpus order whatever it is. */
static void gate_schedule(gate_job **order, gate_job *jobs, size_t n, const gate_opts *g)
{
    for (size_t i = 0; i < n; i++) {
        char gf[4096], gl[4096];
        struct stat st;
        golden_paths(g->golden, jobs[i].name, g->ro.format, gf, gl, sizeof gf);
        jobs[i].cost = stat(gl, &st) == 0 ? (uint64_t)st.st_size : 0;
        jobs[i].index = i;
        order[i] = &jobs[i];
    }
    if (g->jobs > 1)
        qsort(order, n, sizeof *order, cmp_longest_first);
}

/* Caller holds p->mu. */
static void gate_progress(gate_pool *p)
{
    double now = dg_harness__now();
    if (!p->progress || (now - p->last < 0.2 && p->done < p->n))
        return;
    p->last = now;
    fprintf(stderr, "\rgate: %zu/%zu scenarios done   ", p->done, p->n);
    if (p->done == p->n)
        fprintf(stderr, "\r\033[K");
    fflush(stderr);
}

/* Takes the next scenario (in p->order) until none is left, then gives its thread back to the
 * budget: a scenario still running (long-1h) runs its checks and replay on the threads freed. */
static void *gate_worker(void *arg)
{
    gate_pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t i = p->next < p->n ? p->next++ : p->n;
        pthread_mutex_unlock(&p->mu);
        if (i == p->n) {
            dg_harness__cpu_give(1);
            return NULL;
        }
        gate_run_job(p->order[i], p->g);
        pthread_mutex_lock(&p->mu);
        p->done++;
        gate_progress(p);
        pthread_mutex_unlock(&p->mu);
    }
}

/* The calling thread is one of the workers; with --jobs 1 it is the only one and no thread starts.
 * A thread that cannot start only means fewer workers: every scenario still runs. */
static void gate_run_workers(gate_pool *p, unsigned want)
{
    pthread_t tid[GATE_JOBS_MAX];
    size_t started = 0;
    pthread_attr_t attr;
    bool have_attr = pthread_attr_init(&attr) == 0;
    if (have_attr) /* the same stack the main thread has by default: the checks keep path buffers on it */
        pthread_attr_setstacksize(&attr, 8u << 20);
    dg_harness__cpu_init(want); /* --jobs N in all: the workers first, then threads inside a recording */
    unsigned tokens = dg_harness__cpu_take(want - 1 < p->n ? want - 1 : (unsigned)(p->n ? p->n - 1 : 0));
    for (size_t k = 0; k < tokens; k++)
        if (pthread_create(&tid[started], have_attr ? &attr : NULL, gate_worker, p) == 0)
            started++;
    dg_harness__cpu_give(tokens - (unsigned)started);
    if (have_attr)
        pthread_attr_destroy(&attr);
    if (started + 1 < want && started + 1 < p->n)
        fprintf(stderr, "detgate gate: started %zu of %u workers; the rest of the run is slower, not different\n",
                started + 1, want);
    gate_worker(p);
    for (size_t k = 0; k < started; k++)
        pthread_join(tid[k], NULL);
    dg_harness__cpu_init(1); /* every worker gave its thread back; nothing runs in parallel from here */
}

/* Runs the jobs, prints their messages and writes the reports; returns the exit code. rep receives
 * the parts' scenarios on loan (shallow copies, in corpus order) for as long as it takes to render
 * them and is handed back empty: the checks behind them stay owned by the parts. */
static int gate_run(dg_report *rep, gate_opts *g, gate_job *jobs, size_t n, size_t corpus_n, double t0)
{
    gate_job **order = malloc((n ? n : 1) * sizeof *order);
    if (!order) {
        fprintf(stderr, "detgate gate: out of memory\n");
        return CLI_UNTESTED;
    }
    gate_schedule(order, jobs, n, g);
    gate_pool pool = {.g = g, .order = order, .n = n,
                      .progress = g->jobs > 1 && isatty(fileno(stderr))};
    g->ro.no_progress = g->jobs > 1; /* one line per scenario would fight over the terminal */
    g->ro.jobs = g->jobs;
    g->ro.scratch = true; /* each scenario's recording is a temporary file, removed once checked */
    pthread_mutex_init(&pool.mu, NULL);
    gate_run_workers(&pool, g->jobs);
    pthread_mutex_destroy(&pool.mu);
    free(order);
    rep->duration_s = dg_harness__now() - t0;
    if (n == 0) /* more shards than scenarios: this machine has nothing to do, and says so */
        dg_report_set_note(rep, "shard %llu/%llu of %zu scenario%s: empty", (unsigned long long)g->shard_i,
                           (unsigned long long)g->shard_n, corpus_n, corpus_n == 1 ? "" : "s");
    if (n == 0 && g->rp.quiet)
        fprintf(stderr, "detgate gate: %s\n", rep->note ? rep->note : "empty shard");
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += jobs[i].part ? jobs[i].part->n_scenarios : 0;
    dg_report_scenario **lent = calloc(total ? total : 1, sizeof *lent);
    if (!lent) {
        fprintf(stderr, "detgate gate: out of memory\n");
        return CLI_UNTESTED;
    }
    bool bad_input = false, lost = false;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        fputs(jobs[i].errors, stderr);
        bad_input |= jobs[i].part && !jobs[i].parsed;
        lost |= !jobs[i].part;
        for (uint32_t s = 0; jobs[i].part && s < jobs[i].part->n_scenarios; s++)
            lent[k++] = jobs[i].part->scenarios[s];
        rep->nomem |= jobs[i].part && jobs[i].part->nomem;
    }
    rep->scenarios = lent;
    rep->n_scenarios = (uint32_t)k;
    bool ok = cli_write_reports(rep, &g->rp, "gate");
    int code = cli_exit_for(rep);
    rep->scenarios = NULL;
    rep->n_scenarios = 0;
    free(lent);
    if (code == CLI_EQUAL && lost) /* a scenario whose report could not even be started was not tested */
        code = CLI_UNTESTED;
    if (code == CLI_UNTESTED && bad_input) /* a scenario that does not parse is bad input */
        code = CLI_USAGE;
    return ok ? code : (code ? code : CLI_UNTESTED);
}

/* The project file's settings under the options given; its scenario list unless --corpus. 0 or an
 * exit code (printed). */
static int gate_project(gate_opts *g, name_list *all)
{
    bool have = false;
    int code = cli_project_load("gate", g->ro.project, &g->proj, &have);
    if (code == 0 && have) {
        if ((code = cli_project_apply("gate", &g->proj, &g->ro, g->format_given)) != 0)
            return code;
        if (!g->golden)
            g->golden = g->proj.golden;
        if (!g->jobs_given && g->proj.jobs)
            g->jobs = g->proj.jobs;
        if (!g->raw_given)
            cli_raw_policy_parse(g->proj.raw, &g->raw);
    }
    if (code == 0 && have && !g->corpus) {
        dg_error err;
        dg_error_clear(&err);
        if (dg_harness__project_scenarios(&g->proj, &g->refs, &g->nrefs, &err) != DG_OK) {
            cli_print_error("gate", &err);
            return CLI_USAGE;
        }
        for (size_t i = 0; i < g->nrefs; i++)
            if (!names_add(all, g->refs[i].name))
                return fprintf(stderr, "detgate gate: out of memory\n"), CLI_UNTESTED;
        g->corpus = g->proj.scenarios;
    }
    g->corpus = g->corpus ? g->corpus : "corpus/scenarios";
    g->golden = g->golden ? g->golden : "corpus/golden";
    return code;
}

/* A --scenario the shard excludes would run nothing for it and pass: refused. */
static int check_shard_holds(const gate_opts *g, const gate_plan *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->shard_of[i] != g->shard_i - 1) {
            fprintf(stderr, "detgate gate: --scenario %s is not in --shard %llu/%llu (the plan of the %zu scenario%s "
                            "given puts it in shard %u; see --plan): nothing would test it\n",
                    p->names[i], (unsigned long long)g->shard_i, (unsigned long long)g->shard_n, p->n,
                    dg_report_plural_s(p->n), p->shard_of[i] + 1);
            return CLI_USAGE;
        }
    return 0;
}

int cli_gate(int argc, char **argv)
{
    gate_opts g = {.shard_i = 1, .shard_n = 1, .jobs = 1, .raw = cli_raw_policy_default()};
    cli_run_opts_init(&g.ro);
    name_list all = {0};
    int code = parse_gate_args(argc, argv, &g);
    if (code == 0)
        code = gate_project(&g, &all);
    if (code == 0 && !g.refs && !list_corpus(g.corpus, &all)) {
        fprintf(stderr, "detgate gate: cannot read the corpus folder %s: %s (run from the repository root or "
                        "give --corpus)\n", g.corpus, strerror(errno));
        code = CLI_USAGE;
    }
    if (code == 0 && all.n == 0) { /* without the project's list, --corpus is a folder of sim_stub's *.scn */
        const char *ext = g.refs ? g.proj.engine->scenario_ext : dg_harness__engine_sim_stub.scenario_ext;
        fprintf(stderr, "detgate gate: no scenario (%s%s) in %s: nothing to test\n", ext ? "*" : "no file",
                ext ? ext : "", g.corpus);
        code = CLI_USAGE;
    }
    for (size_t i = 0; code == 0 && i < g.only.n; i++)
        if (!name_in(&all, g.only.v[i])) {
            fprintf(stderr, "detgate gate: no scenario '%s' in %s\n", g.only.v[i], g.corpus);
            code = CLI_USAGE;
        }
    gate_plan plan = {0};
    if (code == 0 && !plan_make(&plan, &g, &all, (uint32_t)(g.plan ? g.plan : g.shard_n))) {
        fprintf(stderr, "detgate gate: out of memory\n");
        code = CLI_UNTESTED;
    }
    if (code == 0 && g.only.n)
        code = check_shard_holds(&g, &plan);
    if (code == 0 && g.plan)
        plan_print(&plan, stdout);
    if (code == 0 && !g.plan)
        code = gate_check_outputs(&g, &all);
    dg_error err;
    dg_error_clear(&err);
    dg_report *rep = code == 0 && !g.plan ? cli_report_new("gate", &err) : NULL;
    if (code || !rep) {
        plan_free(&plan);
        free(g.only.v);
        free(all.v);
        dg_harness__scenario_refs_free(g.refs, g.nrefs);
        return code ? code : g.plan ? CLI_EQUAL : CLI_UNTESTED;
    }
    dg_report_set_shard(rep, (uint32_t)g.shard_i, (uint32_t)g.shard_n, plan.corpus_id);
    double t0 = dg_harness__now();
    gate_job *jobs = calloc(plan.n ? plan.n : 1, sizeof *jobs);
    size_t ran = 0;
    for (size_t i = 0; jobs && i < plan.n; i++)
        /* every machine computes the same plan, so N machines with I = 1..N cover the list exactly once */
        if (plan.shard_of[i] == g.shard_i - 1)
            jobs[ran++].name = plan.names[i];
    if (!jobs) {
        fprintf(stderr, "detgate gate: out of memory\n");
        code = CLI_UNTESTED;
    } else {
        code = gate_run(rep, &g, jobs, ran, all.n, t0);
        for (size_t i = 0; i < ran; i++)
            dg_report_free(jobs[i].part);
    }
    free(jobs);
    plan_free(&plan);
    free(g.only.v);
    free(all.v);
    dg_harness__scenario_refs_free(g.refs, g.nrefs);
    dg_report_free(rep);
    return code;
}

/* ---- bless ---------------------------------------------------------------------------------------- */

/* First line of a command's output (git user, revision), or "" when it fails. */
static void command_line(const char *cmd, char *out, size_t cap)
{
    out[0] = 0;
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    if (fgets(out, (int)cap, p)) {
        size_t n = strlen(out);
        while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r'))
            out[--n] = 0;
    }
    if (pclose(p) != 0)
        out[0] = 0;
}

static void who(char *out, size_t cap)
{
    char name[200], mail[200];
    command_line("git config user.name 2>/dev/null", name, sizeof name);
    command_line("git config user.email 2>/dev/null", mail, sizeof mail);
    if (name[0])
        snprintf(out, cap, "%s%s%s%s", name, mail[0] ? " <" : "", mail, mail[0] ? ">" : "");
    else
        snprintf(out, cap, "%s", getenv("USER") ? getenv("USER") : "unknown");
}

/* The log value spelling: double-quoted, with \" \\ and control bytes escaped (one line per entry). */
static void quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\x%02x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* First tick where the new record side differs from the old golden: the log golden if there is one,
 * else the replayed golden recording. "new" when there was no golden. */
static void first_changed(const char *gf, const char *gl, const harness__format *f, const harness__stream *rec,
                          char *out, size_t cap)
{
    harness__stream old = {0};
    dg_error err;
    dg_error_clear(&err);
    dg_status st;
    if (cli_file_exists(gl))
        st = dg_harness__load_log(gl, &old, NULL, &err);
    else if (cli_file_exists(gf))
        st = f->replay_hash(gf, &(harness__replay_opts){.fault_tick = UINT64_MAX, .jobs = 1}, &old, &err);
    else {
        snprintf(out, cap, "new");
        return;
    }
    if (st != DG_OK) {
        snprintf(out, cap, "unknown");
        dg_harness__stream_free(&old);
        return;
    }
    uint64_t first[1], first_raw;
    size_t nf;
    uint64_t nd = dg_harness__compare_streams(NULL, &old, rec, DG_REPORT_TICK_NONE, first, 1, &nf, &first_raw);
    if (nd)
        snprintf(out, cap, "%llu", (unsigned long long)first[0]);
    else if (first_raw != DG_REPORT_TICK_NONE)
        snprintf(out, cap, "none (raw floats from %llu)", (unsigned long long)first_raw);
    else
        snprintf(out, cap, "none");
    dg_harness__stream_free(&old);
}

static bool append_log(const char *golden, const char *name, const char *changed, size_t ticks, const char *reason)
{
    char path[4096], by[420], rev[64];
    snprintf(path, sizeof path, "%.4000s/BLESS.log", golden);
    who(by, sizeof by);
    command_line("git rev-parse --short HEAD 2>/dev/null", rev, sizeof rev);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char ts[32];
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    FILE *f = fopen(path, "a");
    if (!f)
        return false;
    fprintf(f, "%s scenario=%s first_changed_tick=", ts, name);
    quoted(f, changed);
    fprintf(f, " ticks=%zu by=", ticks);
    quoted(f, by);
    fprintf(f, " rev=%s reason=", rev[0] ? rev : "unknown");
    quoted(f, reason);
    fputc('\n', f);
    bool ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    return fclose(f) == 0 && ok;
}

enum { B_CORPUS = 0x400, B_GOLDEN, B_REASON, B_ALL, B_MAX, B_FORMAT };

static int bless_one(const char *name, const char *scn, const char *golden, const char *reason, uint64_t max_bytes,
                     const cli_run_opts *base, dg_report *rep)
{
    harness__source *src = NULL;
    dg_error err;
    dg_error_clear(&err);
    cli_run_opts ro = *base;
    const harness__format *fmt = ro.format;
    if (cli_open_source(scn, &ro, &src, &err) != DG_OK) {
        cli_print_error("bless", &err);
        return ro.engine->own_failures ? CLI_UNTESTED : CLI_USAGE;
    }
    char gf[4096], gl[4096], tf[4200], tl[4200];
    golden_paths(golden, name, fmt, gf, gl, sizeof gf);
    /* temp names in the golden folder itself, so the final renames stay on one file system */
    dg_harness__temp_path(tf, sizeof tf, golden, name, fmt->ext);
    dg_harness__temp_path(tl, sizeof tl, golden, name, ".hashlog.zst");
    ro.hash_log = fmt->record_log ? tl : NULL; /* else the record side writes no log itself: written below */
    harness__stream rec = {0};
    dg_report_scenario *sc = NULL;
    int f = cli_record_and_verify(rep, src, tf, &ro, &rec, &sc, &err);
    dg_harness__source_free(src);
    int code = CLI_EQUAL;
    if (f != 0) {
        fprintf(stderr, "detgate bless: %s does not verify (record vs replay, seek or recovery): not blessed\n", name);
        code = f < 0 ? CLI_UNTESTED : CLI_DIVERGED;
    } else if (!fmt->record_log && write_stream_log(tl, name, fmt->name, &rec, &err) != DG_OK) {
        cli_print_error("bless", &err);
        code = CLI_UNTESTED;
    } else {
        char changed[96];
        first_changed(gf, gl, fmt, &rec, changed, sizeof changed);
        struct stat st;
        bool keep_rec = stat(tf, &st) == 0 && (uint64_t)st.st_size <= max_bytes;
        uint64_t every = 0; /* a hash log only: entity lines every K ticks beside it (golden_entities.c) */
        bool ok = !fmt->entity_views ||
                  dg_harness__bless_entities(golden, name, tf, !keep_rec, rec.entity_ticks, &every, &err) == DG_OK;
        if (!ok)
            cli_print_error("bless", &err);
        ok = ok && rename(tl, gl) == 0;
        if (ok && keep_rec)
            ok = rename(tf, gf) == 0;
        else if (ok && cli_file_exists(gf))
            ok = remove(gf) == 0; /* a golden recording that is now too large would go stale */
        if (!ok || !append_log(golden, name, changed, rec.n, reason)) {
            fprintf(stderr, "detgate bless: %s: cannot write the golden or the log in %s: %s\n", name, golden,
                    strerror(errno));
            code = CLI_UNTESTED;
        } else {
            printf("blessed %s: %zu tick%s, first changed tick %s; %s%s%s", name, rec.n, dg_report_plural_s(rec.n),
                   changed, gl, keep_rec ? " + " : " (hash log only: recording larger than --flrep-max-bytes)",
                   keep_rec ? fmt->ext : "");
            if (every)
                printf(" + entity lines every %llu tick%s (%s.entities.hashlog.zst)", (unsigned long long)every,
                       every == 1 ? "" : "s", name);
            putchar('\n');
        }
    }
    remove(tf);
    remove(tl);
    dg_harness__stream_free(&rec);
    return code;
}

int cli_bless(int argc, char **argv)
{
    static const struct option opts[] = {{"corpus", 1, 0, B_CORPUS}, {"golden", 1, 0, B_GOLDEN},
                                         {"reason", 1, 0, B_REASON}, {"all", 0, 0, B_ALL},
                                         {"flrep-max-bytes", 1, 0, B_MAX}, {"format", 1, 0, B_FORMAT},
                                         {"jobs", 1, 0, 'j'}, CLI_PROJECT_OPT, {0, 0, 0, 0}};
    const char *corpus = NULL, *golden = NULL, *reason = NULL, *project = NULL;
    bool all = false, format_given = false, jobs_given = false;
    unsigned jobs = 1;
    const harness__format *format = dg_harness__format_default();
    uint64_t max_bytes = 2u << 20;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "j:", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            if (!cli_parse_jobs(optarg, &jobs))
                return cli_usage_error("bless", "--jobs: expected 0 (one per CPU) or 1..%d, found '%s'", CLI_JOBS_MAX,
                                       optarg);
            jobs_given = true;
            break;
        case B_CORPUS: corpus = optarg; break;
        case B_GOLDEN: golden = optarg; break;
        case B_REASON: reason = optarg; break;
        case B_ALL: all = true; break;
        case CLI_OPT_PROJECT: project = optarg; break;
        case B_FORMAT:
            format_given = true;
            if (cli_parse_format("bless", optarg, &format))
                return CLI_USAGE;
            break;
        case B_MAX:
            if (!cli_parse_u64(optarg, &max_bytes))
                return cli_usage_error("bless", "--flrep-max-bytes: expected a byte count, found '%s'", optarg);
            break;
        default: return cli_usage_error("bless", "unknown option or missing value '%s'", argv[optind - 1]);
        }
    }
    if (!reason || !reason[strspn(reason, " \t")])
        return cli_usage_error("bless", "--reason \"why\" is required: the bless log records why a golden changed");
    if (all && optind < argc)
        return cli_usage_error("bless", "--all blesses every scenario of the corpus: give it or SCENARIO..., not both "
                                        "(found '%s')", argv[optind]);
    static harness__project proj;
    bool have = false;
    int pc = cli_project_load("bless", project, &proj, &have);
    if (pc)
        return pc;
    cli_run_opts base;
    cli_run_opts_init(&base);
    base.format = format;
    if (have && (pc = cli_project_apply("bless", &proj, &base, format_given)) != 0)
        return pc;
    if (have && !jobs_given && proj.jobs) /* [gate] jobs, under --jobs: as verify takes it */
        jobs = proj.jobs;
    base.jobs = jobs; /* threads inside each scenario's recording and checks; scenarios one at a time */
    golden = golden ? golden : have ? proj.golden : "corpus/golden";
    bool by_project = have && !corpus;
    corpus = corpus ? corpus : "corpus/scenarios";
    name_list names = {0};
    if (all && by_project) {
        harness__scenario_ref *v = NULL;
        size_t n = 0;
        dg_error lerr;
        dg_error_clear(&lerr);
        if (dg_harness__project_scenarios(&proj, &v, &n, &lerr) != DG_OK) {
            cli_print_error("bless", &lerr);
            return CLI_USAGE;
        }
        for (size_t i = 0; i < n; i++)
            names_add(&names, v[i].name);
        dg_harness__scenario_refs_free(v, n);
    } else if (all) {
        if (!list_corpus(corpus, &names))
            return cli_usage_error("bless", "cannot read the corpus folder %s", corpus);
    }
    for (int i = optind; i < argc; i++)
        names_add(&names, argv[i]);
    if (names.n == 0)
        return cli_usage_error("bless", "expected SCENARIO... or --all");
    if (!cli_mkdirs(golden)) {
        free(names.v);
        fprintf(stderr, "detgate bless: cannot create %s: %s\n", golden, strerror(errno));
        return CLI_USAGE;
    }
    dg_error err;
    dg_error_clear(&err);
    dg_report *rep = cli_report_new("bless", &err);
    dg_harness__cpu_init(jobs);
    int worst = CLI_EQUAL;
    for (size_t i = 0; i < names.n && rep; i++) {
        char scn[4096], name[DG_HASH_LOG_NAME_MAX + 1];
        if (by_project) {
            if (cli_project_scenario("bless", &proj, names.v[i], scn, sizeof scn) != 0) {
                worst = CLI_USAGE;
                continue;
            }
        } else if (!cli_resolve_scenario(names.v[i], corpus, scn, sizeof scn)) {
            fprintf(stderr, "detgate bless: no scenario '%s' in %s\n", names.v[i], corpus);
            worst = CLI_USAGE;
            continue;
        }
        dg_harness__scenario_name(scn, name, sizeof name);
        int code = bless_one(name, scn, golden, reason, max_bytes, &base, rep);
        if (code > worst || (worst == CLI_EQUAL && code))
            worst = code;
    }
    free(names.v);
    dg_report_free(rep);
    return worst;
}
