/* tests/harness/test_jsonl_fast.c — harness/jsonl_fast.c against jansson: every stream, valid,
 * hostile or unusual, read through the state stream source with the fast parser and again with
 * jansson alone (dg_harness__jsonl_fast_off), must give the same frames (tick, every entity field's
 * bits, raw hash) and the same end (status, where, message); and the fast parser must take the
 * common lines (or this would pass on jansson alone). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness/harness_internal.h"
#include "harness/jsonl_fast.h"

static const char k_header[] = "{\"detgate_states\":1,\"tick_rate_hz\":60}\n";

static void put_bits(char **o, size_t *cap, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (*len + (size_t)n + 1 > *cap) {
        *cap = (*len + (size_t)n + 1) * 2;
        *o = realloc(*o, *cap);
        assert_non_null(*o);
    }
    memcpy(*o + *len, tmp, (size_t)n + 1);
    *len += (size_t)n;
}

static uint64_t bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* Everything the source hands over for text[0..len), as one string. */
static char *transcript(const char *text, size_t len, bool fast)
{
    dg_harness__jsonl_fast_off = !fast;
    char *o = NULL;
    size_t cap = 0, n = 0;
    FILE *f = fmemopen((void *)text, len, "r");
    assert_non_null(f);
    harness__source *s = NULL;
    dg_error err;
    dg_error_clear(&err);
    dg_status st = dg_harness__source_states_stream(&s, f, "t.jsonl", NULL, 0, &err);
    int rc = st == DG_OK ? 1 : -1;
    harness__frame fr;
    while (st == DG_OK && (rc = s->next(s, &fr, &err)) == 1) {
        put_bits(&o, &cap, &n, "tick %llu n %zu raw %016llx\n", (unsigned long long)fr.tick, fr.n,
                 (unsigned long long)fr.raw);
        for (size_t i = 0; i < fr.n; i++) {
            const dg_entity_in *e = &fr.ents[i];
            put_bits(&o, &cap, &n, " %u %u %u %u", e->id, e->type_index, e->faction_index, e->flags);
            const double *v[4] = {e->pos, e->vel, e->rot, &e->health};
            const size_t k[4] = {3, 3, 4, 1};
            for (int a = 0; a < 4; a++)
                for (size_t j = 0; j < k[a]; j++)
                    put_bits(&o, &cap, &n, " %016llx", (unsigned long long)bits(v[a][j]));
            put_bits(&o, &cap, &n, "\n");
        }
    }
    put_bits(&o, &cap, &n, "end %d code %d where %s msg %s\n", rc, rc < 0 ? (int)err.code : 0,
             rc < 0 ? err.where : "", rc < 0 ? err.msg : "");
    dg_harness__source_free(s);
    fclose(f);
    dg_harness__jsonl_fast_off = false;
    return o;
}

static size_t g_streams;

static void same_both_ways(const char *text, size_t len)
{
    char *a = transcript(text, len, true), *b = transcript(text, len, false);
    if (strcmp(a, b) != 0)
        fail_msg("stream \"%.*s\"\nfast:    %s\njansson: %s", (int)len, text, a, b);
    free(a);
    free(b);
    g_streams++;
}

/* The header, the line, then a good tick after it (what follows a line matters too). */
static void check_line(const char *line, size_t len)
{
    static const char tail[] = "\n{\"tick\":999999,\"entities\":[{\"id\":1,\"pos\":[0,0,0]}]}\n";
    size_t hl = sizeof k_header - 1, tl = sizeof tail - 1;
    char *text = malloc(hl + len + tl);
    assert_non_null(text);
    memcpy(text, k_header, hl);
    memcpy(text + hl, line, len);
    memcpy(text + hl + len, tail, tl);
    same_both_ways(text, hl + len + tl);
    free(text);
}

static const char *const k_good[] = {
    "{\"tick\":0,\"entities\":[{\"id\":1,\"pos\":[1.5,2,-3e-2],\"vel\":[0,0,0]},{\"id\":2,\"type\":3,\"faction\":4,"
    "\"flags\":7,\"pos\":[0.1,0.2,0.3],\"rot\":[0.5,0.5,0.5,0.5],\"health\":0.25}]}",
    " { \"entities\" : [ { \"pos\" : [ 1 , 2 , 3 ] , \"id\" : 5 } ] , \"tick\" : 3 } \t\r",
    "{\"tick\":7,\"entities\":[]}",
    "{\"tick\":12,\"entities\":[{\"id\":1,\"pos\":[3.0166666666666666,9.9972750000000001,0],\"vel\":[1,-0.16350000000000001,"
    "0]},{\"id\":2,\"pos\":[6.0166666666666666,10.997275,0.0083333333333333332],\"vel\":[1,-0.16350000000000001,0.5]}]}",
    "{\"tick\":4,\"entities\":[{\"id\":9,\"pos\":[-0,-0.0,0e5],\"vel\":[1E+2,1e-2,-12.5e-0],\"rot\":[1,0,0,"
    "-0],\"health\":1e-400},{\"id\":3,\"pos\":[900719.9254740993,17976.931348623157,-2.2250738585072014e-308]}]}",
    /* valid JSON, refused by the quantizer after the parse (the same message either way) */
    "{\"tick\":5,\"entities\":[{\"id\":3,\"pos\":[9007199254740993,1.7976931348623157e308,0],\"vel\":[0,0,"
    "123456789012345678]}]}",
};

static const char *const k_hostile[] = {
    "{\"tick\":1,\"tick\":2,\"entities\":[]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"id\":2,\"pos\":[0,0,0]}]}",
    "{\"tick\":1,\"entities\":[],\"events\":[]}",
    "{\"tick\":1,\"entities\":[],\"events\":[{\"kind\":\"chat\",\"text\":\"hi\"}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[0,0,0],\"helth\":1}]}",
    "{\"tick\":1,\"entities\":[{\"\\u0069d\":1,\"pos\":[0,0,0]}]}",
    "{\"ti\\u0063k\":1,\"entities\":[]}",
    "{\"tick\":1,\"entities\":[{\"id\":0,\"pos\":[0,0,0]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":4294967295,\"pos\":[0,0,0]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":4294967296,\"pos\":[0,0,0]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":-1,\"pos\":[0,0,0]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1.0,\"pos\":[0,0,0]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1e0,\"pos\":[0,0,0]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":\"1\",\"pos\":[0,0,0]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"type\":65536,\"pos\":[0,0,0]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"type\":65535,\"faction\":65535,\"flags\":65535,\"pos\":[0,0,0]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"type\":300,\"pos\":[0,0,0]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"flags\":-0,\"pos\":[0,0,0]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[1,2]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[1,2,3,4]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1}]}",
    "{\"tick\":1,\"entities\":[{\"pos\":[1,2,3]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":null}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[1,2,\"3\"]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[1,2,[3]]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[01,2,3]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[-,2,3]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[1.,2,3]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[.5,2,3]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[1e,2,3]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[+1,2,3]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[1e400,2,3]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[-1e400,2,3]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[1e-400,2,3]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[123456789012345678901234,2,3]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[-9223372036854775808,2,3]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[9223372036854775807,2,3]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[999999999999999999,2,3]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[1e300,2,3]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[NaN,2,3]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[Infinity,2,3]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[0,0,0],\"rot\":[0,0,0,0]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[0,0,0],\"health\":\"full\"}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[0,0,0],\"health\":true}]}",
    "{\"tick\":1,\"entities\":[{\"id\":2,\"pos\":[0,0,0]},{\"id\":1,\"pos\":[0,0,0]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":2,\"pos\":[0,0,0]},{\"id\":2,\"pos\":[1,0,0]}]}",
    "{\"tick\":-1,\"entities\":[]}",
    "{\"tick\":9223372036854775807,\"entities\":[]}",
    "{\"tick\":9223372036854775808,\"entities\":[]}",
    "{\"tick\":999999999999999999,\"entities\":[]}",
    "{\"tick\":1.5,\"entities\":[]}",
    "{\"tick\":\"1\",\"entities\":[]}",
    "{\"tick\":1}",
    "{\"entities\":[]}",
    "{\"tick\":1,\"entities\":{}}",
    "{\"tick\":1,\"entities\":[1]}",
    "{\"tick\":1,\"entities\":[[]]}",
    "{\"tick\":1,\"entities\":[{}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[0,0,0]},]}",
    "{\"tick\":1,\"entities\":[,{\"id\":1,\"pos\":[0,0,0]}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[0,0,0],}]}",
    "{\"tick\":1,\"entities\":[],}",
    "{\"tick\":1,\"entities\":[]}x",
    "{\"tick\":1,\"entities\":[]}}",
    "{\"tick\":1,\"entities\":[]},",
    "{\"tick\":1,\"entities\":[]} {}",
    "{\"tick\":1 \"entities\":[]}",
    "{\"tick\" 1,\"entities\":[]}",
    "{tick:1,\"entities\":[]}",
    "{'tick':1,\"entities\":[]}",
    "\xef\xbb\xbf{\"tick\":1,\"entities\":[]}",
    "{\"tick\":1,\r\"entities\":[]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[0,0,0],\"t\xc3\xa9\":1}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[0,0,0],\"\xff\":1}]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[0,0,0],\"\":1}]}",
    "{\"detgate_states\":1}",
    "{}",
    "[]",
    "null",
    "  ",
    "{\"tick\":2,\"entities\":[]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[0,0,0]}]",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[0,0,0]}",
    "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[0,0,",
};

static void test_good_lines_fast(void **state)
{
    (void)state;
    harness__jsonl_tick t = {0};
    for (size_t i = 0; i < sizeof k_good / sizeof k_good[0]; i++) {
        assert_true(dg_harness__jsonl_fast_tick(k_good[i], &t));
        check_line(k_good[i], strlen(k_good[i]));
    }
    dg_harness__jsonl_tick_free(&t);
}

static void test_hostile_lines(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_hostile / sizeof k_hostile[0]; i++)
        check_line(k_hostile[i], strlen(k_hostile[i]));
    /* a NUL inside the line: jansson reads up to it, and so must the fast parser */
    static const char nul[] = "{\"tick\":1,\"entities\":[]}\0garbage";
    check_line(nul, sizeof nul - 1);
    static const char nul2[] = "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[0,0\0,0]}]}";
    check_line(nul2, sizeof nul2 - 1);
}

/* Several ticks in one stream: order, duplicates and the tick rule across lines. */
static void test_streams(void **state)
{
    (void)state;
    static const char *const k[] = {
        "{\"tick\":1,\"entities\":[{\"id\":1,\"pos\":[0,0,0]}]}\n{\"tick\":1,\"entities\":[]}\n",
        "{\"tick\":3,\"entities\":[{\"id\":1,\"pos\":[0,0,0]}]}\n\n{\"tick\":2,\"entities\":[]}\n",
        "{\"tick\":1,\"entities\":[]}\n{\"detgate_states\":1}\n",
        ("{\"tick\":1,\"entities\":[{\"id\":3,\"pos\":[0,0,0]},{\"id\":1,\"pos\":[1,0,0]}]}\n"
         "{\"tick\":2,\"entities\":[],\"events\":[{\"kind\":1}]}\n{\"tick\":3,\"entities\":[]}\n"),
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        size_t hl = sizeof k_header - 1, l = strlen(k[i]);
        char buf[1024];
        memcpy(buf, k_header, hl);
        memcpy(buf + hl, k[i], l);
        same_both_ways(buf, hl + l);
        same_both_ways(k[i], l); /* without a header line */
    }
}

static uint64_t g_rng = 0x2545f4914f6cdd1du;
static unsigned rnd(unsigned n)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (unsigned)(g_rng % n);
}

/* Random edits of the good lines: a byte deleted, inserted, replaced (from the bytes JSON cares
 * about and a few it does not), or a span repeated elsewhere. */
static void test_mutations(void **state)
{
    (void)state;
    static const char alphabet[] = "{}[],:\"-+.eE0123456789 \t\\uaxz_\x01\xc3\xff";
    char line[1024];
    harness__jsonl_tick t = {0};
    size_t taken = 0;
    g_streams = 0;
    for (int i = 0; i < 12000; i++) {
        const char *base = k_good[rnd(sizeof k_good / sizeof k_good[0])];
        size_t len = strlen(base);
        memcpy(line, base, len);
        int edits = 1 + (int)rnd(3);
        for (int e = 0; e < edits; e++) {
            size_t at = rnd((unsigned)len + 1);
            char c = alphabet[rnd(sizeof alphabet - 1)];
            switch (rnd(4)) {
            case 0:
                if (at < len)
                    memmove(line + at, line + at + 1, len-- - at - 1);
                break;
            case 1:
                memmove(line + at + 1, line + at, len - at);
                line[at] = c;
                len++;
                break;
            case 2:
                if (at < len)
                    line[at] = c;
                break;
            default: {
                size_t from = rnd((unsigned)len), span = 1 + rnd(12);
                if (from + span > len)
                    span = len - from;
                if (len + span < sizeof line - 1) {
                    char tmp[16];
                    memcpy(tmp, line + from, span);
                    memmove(line + at + span, line + at, len - at);
                    memcpy(line + at, tmp, span);
                    len += span;
                }
            }
            }
        }
        for (size_t k = 0; k < len; k++)
            if (line[k] == '\n')
                line[k] = ' ';
        line[len] = 0;
        taken += dg_harness__jsonl_fast_tick(line, &t);
        check_line(line, len);
    }
    dg_harness__jsonl_tick_free(&t);
    assert_int_equal(g_streams, 12000);
    /* some edits keep the line valid (a digit for a digit, a space): those the fast parser takes */
    fprintf(stderr, "fast parser took %zu of 12000 edited lines\n", taken);
    assert_true(taken > 300 && taken < 11000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_lines_fast),
        cmocka_unit_test(test_hostile_lines),
        cmocka_unit_test(test_streams),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
