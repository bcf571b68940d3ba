/* harness/cli_engine_host.c — `detgate engine-host LIBRARY SCENARIO` (hidden): the child process a
 * library engine runs in (docs/ENGINES.md, "The library contract"). It loads the library, checks its
 * dg_engine_api (include/detgate/engine.h), runs the scenario and writes what each step gives as the
 * binary state stream (docs/STATES-STREAM.md) on its standard output, which the parent reads as it
 * reads any process engine's. The library's own standard output is moved to standard error first, so
 * nothing it prints can corrupt the stream. */
#include "cli.h"

#include "detgate/engine.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOST_OUT_BUF (1 << 20)
#define HOST_MAX_ENTITIES (1u << 24)

/* engine-host's exit statuses (the parent reports them as the engine's, exit 125) */
enum { HOST_OK = 0, HOST_USAGE = 2, HOST_ENGINE_FAILED = 3, HOST_LOAD_FAILED = 4 };

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_f64(uint8_t *p, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    put_le(p, u, 8);
}

static bool write_entity(FILE *out, const dg_entity_in *e)
{
    uint8_t b[98];
    put_le(b, e->id, 4);
    put_le(b + 4, e->type_index, 2);
    put_le(b + 6, e->faction_index, 2);
    put_le(b + 8, e->flags, 2);
    for (int k = 0; k < 3; k++)
        put_f64(b + 10 + 8 * k, e->pos[k]);
    for (int k = 0; k < 3; k++)
        put_f64(b + 34 + 8 * k, e->vel[k]);
    for (int k = 0; k < 4; k++)
        put_f64(b + 58 + 8 * k, e->rot[k]);
    put_f64(b + 90, e->health);
    return fwrite(b, 1, sizeof b, out) == sizeof b;
}

static bool write_tick(FILE *out, const dg_engine_tick *t)
{
    uint8_t h[13];
    h[0] = 0x01;
    put_le(h + 1, t->tick, 8);
    put_le(h + 9, t->count, 4);
    bool ok = fwrite(h, 1, sizeof h, out) == sizeof h;
    for (size_t i = 0; ok && i < t->count; i++)
        ok = write_entity(out, &t->entities[i]);
    return ok;
}

/* The library and its API object, checked: NULL with a one-line reason on stderr. */
static const dg_engine_api *load_api(const char *lib)
{
    char path[CLI_PATH_CAP];
    /* a name without a slash would be searched for on the library path: it is a file here */
    snprintf(path, sizeof path, "%s%s", strchr(lib, '/') ? "" : "./", lib);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) { /* short: the parent quotes the last 85 bytes of stderr */
        const char *why = dlerror();
        why = why ? why : "dlopen failed";
        size_t pl = strlen(path);
        if (strncmp(why, path, pl) == 0 && strncmp(why + pl, ": ", 2) == 0)
            why += pl + 2; /* the path is said once */
        fprintf(stderr, "cannot load %s: %s\n", base_name(lib), why);
        return NULL;
    }
    const dg_engine_api *api = dlsym(h, DG_ENGINE_SYMBOL);
    if (!api) {
        fprintf(stderr, "library engine: %s exports no %s (include/detgate/engine.h)\n", base_name(lib),
                DG_ENGINE_SYMBOL);
        return NULL;
    }
    if (api->abi_version != DG_ENGINE_ABI_VERSION) {
        fprintf(stderr, "library engine: %s has ABI version %u; this detgate takes %u\n", base_name(lib),
                (unsigned)api->abi_version, (unsigned)DG_ENGINE_ABI_VERSION);
        return NULL;
    }
    if (api->struct_size < sizeof *api) {
        fprintf(stderr, "library engine: %s: struct_size %u, expected %zu or more\n", base_name(lib),
                (unsigned)api->struct_size, sizeof *api);
        return NULL;
    }
    const char *null_fn = !api->open ? "open" : !api->step ? "step" : !api->close ? "close" : NULL;
    if (null_fn) {
        fprintf(stderr, "library engine: %s: %s.%s is NULL\n", base_name(lib), DG_ENGINE_SYMBOL, null_fn);
        return NULL;
    }
    if (api->tick_rate_hz > 100000) {
        fprintf(stderr, "library engine: %s: tick_rate_hz %u: expected 1..100000 (0 = 60)\n", base_name(lib),
                (unsigned)api->tick_rate_hz);
        return NULL;
    }
    return api;
}

/* The engine's message, or a stand-in when it left none. */
static const char *said(const char *msg)
{
    return msg[0] ? msg : "(no message)";
}

/* Runs every step into out; the exit status. */
static int run_engine(const dg_engine_api *api, void *eng, FILE *out)
{
    char msg[512] = "";
    for (;;) {
        dg_engine_tick t = {0};
        int rc = api->step(eng, &t, msg, sizeof msg);
        msg[sizeof msg - 1] = 0;
        if (rc == 0)
            return HOST_OK;
        if (rc != 1) {
            fprintf(stderr, "library engine: step failed: %s\n", said(msg));
            return HOST_ENGINE_FAILED;
        }
        if (t.count > HOST_MAX_ENTITIES || (t.count && !t.entities)) {
            fprintf(stderr, "library engine: step of tick %llu gave %zu entities%s (at most %u)\n",
                    (unsigned long long)t.tick, t.count, t.count && !t.entities ? " and no array" : "",
                    HOST_MAX_ENTITIES);
            return HOST_ENGINE_FAILED;
        }
        /* flushed every tick: a crash or a hang later is reported after the ticks it did give */
        if (!write_tick(out, &t) || fflush(out) != 0)
            return HOST_ENGINE_FAILED; /* the parent went away */
    }
}

/* A crash in the library is the library's: the child dies of its signal, as a process engine would
 * (no sanitizer report or handler of this build stands in between), and the parent names it. */
static void default_crash_signals(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGPIPE, SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
}

int cli_engine_host(int argc, char **argv)
{
    default_crash_signals();
    if (argc != 3) {
        fprintf(stderr, "detgate engine-host: expected LIBRARY SCENARIO\n");
        return HOST_USAGE;
    }
    /* the stream keeps the real stdout; the library's printf lands on stderr */
    int fd = dup(1);
    FILE *out = fd >= 0 ? fdopen(fd, "wb") : NULL;
    char *buf = malloc(HOST_OUT_BUF);
    if (!out || !buf || dup2(2, 1) < 0 || setvbuf(out, buf, _IOFBF, HOST_OUT_BUF) != 0) {
        fprintf(stderr, "library engine: cannot set up standard output\n");
        return HOST_USAGE;
    }
    const dg_engine_api *api = load_api(argv[1]);
    if (!api)
        return HOST_LOAD_FAILED;
    char msg[512] = "";
    void *eng = api->open(argv[2], msg, sizeof msg);
    msg[sizeof msg - 1] = 0;
    if (!eng) {
        fprintf(stderr, "library engine: open failed: %s\n", said(msg));
        return HOST_ENGINE_FAILED;
    }
    uint8_t h[12] = {0x89, 'D', 'G', 'S'};
    put_le(h + 4, 1, 2);
    put_le(h + 8, api->tick_rate_hz, 4);
    int rc = fwrite(h, 1, sizeof h, out) == sizeof h ? run_engine(api, eng, out) : HOST_ENGINE_FAILED;
    api->close(eng);
    if (rc == HOST_OK && (fputc(0x00, out) == EOF || fflush(out) != 0))
        rc = HOST_ENGINE_FAILED;
    fclose(out);
    free(buf);
    return rc;
}
