/* harness/engines.c — the engines table's rows: sim_stub (source_scenario.c), a process engine's
 * command (source_process.c), a library engine (a shared object run by `detgate engine-host` as a
 * process: cli_engine_host.c) and a state stream file (source_states.c, source_binary.c,
 * source_zstd.c; the kind is told by its name and first bytes); the look-ups a project's `kind` goes
 * through. */
#include "engines.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "project.h"

static dg_status sim_stub_open(harness__source **out, const harness__engine_args *a, dg_error *err)
{
    return dg_harness__source_scenario(out, a->scenario, a->inject, a->keyframe, err);
}

static dg_status process_open(harness__source **out, const harness__engine_args *a, dg_error *err)
{
    return dg_harness__source_process(out, a->run, a->run_dir, a->scenario, a->time_limit, a->keyframe, err);
}

/* "-" is standard input, read once; zstd (a .zst name, or the frame magic as the first bytes) is
 * decompressed on the fly; else binary or text by its first bytes. */
static dg_status stream_open(harness__source **out, const harness__engine_args *a, dg_error *err)
{
    if (strcmp(a->states, "-") == 0 && dg_harness__zstd_ahead(stdin))
        return dg_harness__source_zstd_stream(out, stdin, "stdin", NULL, a->keyframe, err);
    if (strcmp(a->states, "-") == 0)
        return dg_harness__source_stream(out, stdin, "stdin", NULL, a->keyframe, err);
    size_t n = strlen(a->states);
    if ((n > 4 && strcmp(a->states + n - 4, ".zst") == 0) || dg_harness__is_zstd_file(a->states))
        return dg_harness__source_states_zst(out, a->states, a->keyframe, err);
    if (dg_harness__is_binary_stream(a->states))
        return dg_harness__source_binary_file(out, a->states, a->keyframe, err);
    return dg_harness__source_states(out, a->states, a->keyframe, err);
}

/* A library engine runs as a process: this detgate's engine-host loads it in a child and writes the
 * binary state stream (harness/cli_engine_host.c), so the process contract's guarantees hold for it.
 * The library path is one double-quoted shell word ($VAR expands: the project file refuses ", \ and `). */
static dg_status library_run(char *run, size_t cap, const char *library, const char *where, dg_error *err)
{
    char exe[HARNESS_PROJECT_PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    int w = -1;
    if (n > 0 && !memchr(exe, '\'', (size_t)n)) {
        exe[n] = 0;
        w = snprintf(run, cap, "exec '%s' engine-host \"%s\" {scenario}", exe, library);
    }
    if (w > 0 && (size_t)w < cap)
        return DG_OK;
    return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, where,
                        "cannot name this detgate's own executable to host the library (/proc/self/exe "
                        "unreadable, or its path holds a ')");
}

const harness__engine dg_harness__engine_sim_stub = {
    .name = "sim_stub", .own_failures = false, .inject = true, .open = sim_stub_open, .project_kind = true,
    .fixed_fields = true, .scenario_ext = ".scn", .scenarios_default = "corpus/scenarios",
    .golden_default = "corpus/golden"};
const harness__engine dg_harness__engine_process = {
    .name = "process", .own_failures = true, .open = process_open, .project_kind = true, .project_key = "run",
    .kind_from_key = true, .golden_default = "golden", .project_build = true};
const harness__engine dg_harness__engine_library = {
    .name = "library", .own_failures = true, .open = process_open, .project_kind = true, .project_key = "library",
    .golden_default = "golden", .project_build = true, .project_run = library_run};
const harness__engine dg_harness__engine_stream = {.name = "stream", .own_failures = false, .open = stream_open};

const harness__engine *const dg_harness__engines[] = {&dg_harness__engine_sim_stub, &dg_harness__engine_process,
                                                       &dg_harness__engine_library, &dg_harness__engine_stream, NULL};

const harness__engine *dg_harness__engine_find(const char *name)
{
    for (size_t i = 0; name && dg_harness__engines[i]; i++)
        if (dg_harness__engines[i]->project_kind && strcmp(dg_harness__engines[i]->name, name) == 0)
            return dg_harness__engines[i];
    return NULL;
}

/* Built once from the rows (a constant after that: threads may read it). */
static char engine_kinds[256];

static void engine_kinds_build(void)
{
    const char *names[16];
    size_t n = 0;
    for (size_t i = 0; dg_harness__engines[i] && n < 16; i++)
        if (dg_harness__engines[i]->project_kind)
            names[n++] = dg_harness__engines[i]->name;
    dg_harness__join_names(engine_kinds, sizeof engine_kinds, names, n, ", ", " or ");
}

const char *dg_harness__engine_kinds(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, engine_kinds_build);
    return engine_kinds;
}
