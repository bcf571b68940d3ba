/* harness/cli_init.c — `detgate init` (writes a commented detgate.ini) and what every command does
 * with a project: find it (--project FILE, or upward from the current folder), and take from it the
 * engine, the scenarios, the goldens, the format and the keyframe interval its options leave unset. */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* The loaded project's field declarations belong to the process: the preset every stream of the
 * command follows points at them until exit, past the command's own project struct (which shares
 * them read-only). Freed at exit, or when a later load replaces them. */
static harness__decl cli_decl;
static bool cli_decl_held;
static void cli_decl_release(void) { dg_harness__decl_free(&cli_decl); }

static void cli_decl_hold(harness__project *p)
{
    if (!cli_decl_held)
        atexit(cli_decl_release);
    else
        dg_harness__decl_free(&cli_decl);
    cli_decl_held = true;
    cli_decl = p->decl; /* takes the allocations; p->decl keeps reading them */
    dg_harness__decl_preset(&cli_decl); /* every stream this command reads follows the project's fields */
}

int cli_project_load(const char *cmd, const char *given, harness__project *p, bool *have)
{
    char found[HARNESS_PROJECT_PATH_MAX];
    *have = false;
    if (!given && !dg_harness__project_find(found, sizeof found))
        return 0;
    dg_error err;
    dg_error_clear(&err);
    if (dg_harness__project_load(p, given ? given : found, &err) != DG_OK) {
        cli_print_error(cmd, &err);
        return CLI_USAGE;
    }
    *have = true;
    cli_decl_hold(p);
    return 0;
}

int cli_project_apply(const char *cmd, const harness__project *p, cli_run_opts *o, bool format_given)
{
    if (!format_given)
        o->format = p->format;
    if (!o->keyframe)
        o->keyframe = p->keyframe;
    o->engine = p->engine; /* a library engine's run is its engine-host command */
    o->run = p->run[0] ? p->run : NULL;
    o->run_dir = p->dir;
    o->time_limit = p->time_limit_s;
    if (o->inject && !o->engine->inject)
        return cli_usage_error(cmd, "--inject is sim_stub's switch; this project's engine is %s (%s)", p->engine->name,
                               p->path);
    return 0;
}

int cli_project_scenario(const char *cmd, const harness__project *p, const char *arg, char *out, size_t cap)
{
    if (cli_file_exists(arg)) {
        snprintf(out, cap, "%s", arg);
        return 0;
    }
    harness__scenario_ref *v = NULL;
    size_t n = 0;
    dg_error err;
    dg_error_clear(&err);
    if (dg_harness__project_scenarios(p, &v, &n, &err) != DG_OK) {
        cli_print_error(cmd, &err);
        return CLI_USAGE;
    }
    int code = CLI_USAGE;
    for (size_t i = 0; i < n && code; i++)
        if (strcmp(v[i].name, arg) == 0) {
            snprintf(out, cap, "%s", v[i].path);
            code = 0;
        }
    if (code)
        fprintf(stderr, "detgate %s: no scenario '%s' (not a file, and not one of %s's scenarios, %s)\n", cmd, arg,
                p->path, p->scenarios);
    dg_harness__scenario_refs_free(v, n);
    return code;
}

int cli_init(int argc, char **argv)
{
    static const struct option opts[] = {{"run", 1, 0, 'r'}, {"scenarios", 1, 0, 's'}, {"output", 1, 0, 'o'},
                                         {0, 0, 0, 0}};
    const char *run = "./build/engine --scenario {scenario} --dump-states -", *scenarios = "scenarios";
    const char *out = HARNESS_PROJECT_FILE;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        if (c == 'r')
            run = optarg;
        else if (c == 's')
            scenarios = optarg;
        else if (c == 'o')
            out = optarg;
        else
            return cli_usage_error("init", "unknown option or missing value '%s'", argv[optind - 1]);
    }
    if (optind != argc)
        return cli_usage_error("init", "unexpected argument '%s'", argv[optind]);
    if (strchr(run, '\n') || strchr(scenarios, '\n'))
        return cli_usage_error("init", "--run and --scenarios are one line each");
    dg_error err;
    dg_error_clear(&err);
    if (dg_harness__project_write_template(out, run, scenarios, &err) != DG_OK) {
        cli_print_error("init", &err);
        return err.code == DG_E_USAGE ? CLI_USAGE : CLI_UNTESTED;
    }
    harness__project p;
    if (dg_harness__project_load(&p, out, &err) != DG_OK) { /* e.g. a --run without {scenario} */
        cli_print_error("init", &err);
        remove(out);
        return CLI_USAGE;
    }
    printf("wrote %s: engine `%s`, scenarios %s, goldens in %s\n"
           "next: detgate bless --all --reason \"first goldens\" && detgate gate\n",
           out, p.run, p.scenarios, p.golden);
    dg_harness__decl_free(&p.decl);
    return CLI_EQUAL;
}
