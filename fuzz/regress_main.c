/* fuzz/regress_main.c — the standalone driver: links a fuzz target without libFuzzer (gcc works)
 * and replays files and folders through it, so every seed and every crash reproducer runs in the
 * ordinary ctest suite under ASan+UBSan (zstd's regression_driver.c, SQLite's fuzzcheck habit).
 * When the target has a custom mutator, each input is also mutated a few times with fixed seeds and
 * the results replayed, which keeps the mutator itself under the sanitizers. */
#include "fuzz_common.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
