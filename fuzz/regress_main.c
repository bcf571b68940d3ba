/* fuzz/regress_main.c — the standalone driver: links a fuzz target without libFuzzer (gcc works)
 * and replays files and folders through it, so every seed and every crash reproducer runs in the
 * ordinary ctest suite under ASan+UBSan (zstd's regression_driver.c, SQLite's fuzzcheck habit).
 * When the target has a custom mutator, each input is also mutated a few times with fixed seeds and
 * the results replayed, which keeps the mutator itself under the sanitizers.
 * Like libFuzzer's -malloc_limit_mb, one allocation above DG_FUZZ_MALLOC_LIMIT_MB (1024; the
 * environment may say another) is a failure, reported and aborted, in every build: a parser that
 * sizes memory by a count the input only declares fails here even when the allocation would have
 * succeeded, or failed softly ("out of memory"). */
#define _GNU_SOURCE
#include "fuzz_common.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define DG_REGRESS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DG_REGRESS_ASAN 1
#endif
#endif

#define DG_REGRESS_MALLOC_LIMIT_MB 1024u

static size_t g_malloc_limit = (size_t)DG_REGRESS_MALLOC_LIMIT_MB << 20;

/* Reports the allocation of n bytes above the cap and aborts (no stdio: this runs inside malloc). */
static void over_limit(const char *fn, size_t n)
{
    char m[160];
    int len = snprintf(m, sizeof m, "==regress: %s(%zu) is above the %zu MB allocation cap (DG_FUZZ_MALLOC_LIMIT_MB)\n",
                       fn, n, g_malloc_limit >> 20);
    if (len > 0)
        (void)!write(2, m, (size_t)len < sizeof m ? (size_t)len : sizeof m - 1);
#ifdef DG_REGRESS_ASAN
    extern void __sanitizer_print_stack_trace(void);
    __sanitizer_print_stack_trace();
#endif
    abort();
}

#ifdef DG_REGRESS_ASAN
/* ASan owns malloc: its allocation hook sees every size (libFuzzer's -malloc_limit_mb does the same). */
extern int __sanitizer_install_malloc_and_free_hooks(void (*m)(const volatile void *, size_t),
                                                     void (*f)(const volatile void *));
static void malloc_hook(const volatile void *p, size_t n)
{
    (void)p;
    if (n > g_malloc_limit)
        over_limit("malloc", n);
}
static void free_hook(const volatile void *p) { (void)p; }
/* Both hooks or none: the runtime refuses a NULL one (and returns 0). */
static void install_malloc_limit(void)
{
    if (!__sanitizer_install_malloc_and_free_hooks(malloc_hook, free_hook)) {
        fprintf(stderr, "regress: cannot install the allocation cap's malloc hook\n");
        exit(1);
    }
}
#else
/* Without ASan, glibc's allocator behind a size check (free and the aligned forms stay glibc's). */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
void *malloc(size_t n)
{
    if (n > g_malloc_limit)
        over_limit("malloc", n);
    return __libc_malloc(n);
}
void *calloc(size_t n, size_t size)
{
    if (size && n > g_malloc_limit / size)
        over_limit("calloc", n * size);
    return __libc_calloc(n, size);
}
void *realloc(void *p, size_t n)
{
    if (n > g_malloc_limit)
        over_limit("realloc", n);
    return __libc_realloc(p, n);
}
static void install_malloc_limit(void) {}
#endif

/* Optional hooks of the target (weak: absent in targets that do not define them). */
extern int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
extern size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
    __attribute__((weak));

static unsigned long long g_files, g_runs;
static unsigned int g_mutations = 4;

/* A small deterministic stand-in for libFuzzer's generic mutation (byte flips, inserts, erases). */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size)
{
    static uint32_t s = 12345;
    s = s * 1103515245u + 12345u;
    uint32_t op = (s >> 16) % 3, at = s >> 4;
    if (op == 0 && size > 0) {
        data[at % size] ^= (uint8_t)(1u << (s % 8));
    } else if (op == 1 && size < max_size) {
        size_t k = size ? at % (size + 1) : 0;
        memmove(data + k + 1, data + k, size - k);
        data[k] = (uint8_t)s;
        size++;
    } else if (size > 1) {
        size_t k = at % size;
        memmove(data + k, data + k + 1, size - k - 1);
        size--;
    }
    return size;
}

static void run_one(const uint8_t *buf, size_t len)
{
    /* a fresh copy of exactly len bytes so ASan sees reads past the input */
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, buf, len);
    LLVMFuzzerTestOneInput(copy, len);
    free(copy);
    g_runs++;
    if (!LLVMFuzzerCustomMutator)
        return;
    size_t cap = len * 2 + 4096;
    uint8_t *m = malloc(cap);
    for (unsigned int i = 0; i < g_mutations; i++) {
        memcpy(m, buf, len);
        size_t n = LLVMFuzzerCustomMutator(m, len, cap, 0x9E37u * (i + 1));
        if (n > cap) {
            fprintf(stderr, "custom mutator returned %zu > capacity %zu\n", n, cap);
            abort();
        }
        uint8_t *exact = malloc(n ? n : 1);
        memcpy(exact, m, n);
        LLVMFuzzerTestOneInput(exact, n);
        free(exact);
        g_runs++;
    }
    free(m);
}

static int replay_file(const char *path)
{
    size_t len = 0;
    uint8_t *buf = dg_fuzz_slurp(path, &len);
    if (!buf) {
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    fprintf(stderr, "replay %s (%zu bytes)\n", path, len);
    run_one(buf, len);
    free(buf);
    g_files++;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int replay_path(const char *path);

static int replay_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "cannot open folder %s\n", path);
        return 1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;  /* ., .., .gitkeep and editor droppings */
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            names = realloc(names, cap * sizeof *names);
        }
        size_t l = strlen(path) + strlen(e->d_name) + 2;
        names[n] = malloc(l);
        snprintf(names[n], l, "%s/%s", path, e->d_name);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);  /* same order on every machine */
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        rc |= replay_path(names[i]);
        free(names[i]);
    }
    free(names);
    return rc;
}

static int replay_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "no such file or folder: %s\n", path);
        return 1;
    }
    return S_ISDIR(st.st_mode) ? replay_dir(path) : replay_file(path);
}

int main(int argc, char **argv)
{
    const char *lim = getenv("DG_FUZZ_MALLOC_LIMIT_MB");
    if (lim && *lim)
        g_malloc_limit = (size_t)strtoull(lim, NULL, 10) << 20;
    install_malloc_limit();
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "-mutations=", 11) == 0) {
            g_mutations = (unsigned int)strtoul(argv[i] + 11, NULL, 10);
            continue;
        }
        if (argv[i][0] == '-')
            continue;  /* libFuzzer flags are accepted and ignored */
        rc |= replay_path(argv[i]);
    }
    printf("%s: replayed %llu files (%llu runs)\n", argv[0], g_files, g_runs);
    return rc;
}
