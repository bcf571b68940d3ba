/* tests/harness/test_numparse.c — harness/numparse.c against strtod: every string, generated or
 * hand-picked, must give strtod's bits (and its accept/refuse for the CSV parser), and the fast
 * paths must actually be taken for the plain decimals engines print. */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "harness/numparse.h"

static uint64_t g_rng = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

static uint64_t bits_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static double from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static size_t g_fast, g_total;

/* One string through every entry point, each against strtod. */
static void check(const char *s)
{
    size_t len = strlen(s);
    char *end;
    errno = 0;
    double ref = strtod(s, &end);
    int ref_erange = errno == ERANGE;
    int ref_all = end == s + len;
    double d = 12345.0;
    g_total++;
    if (dg_harness__decimal_fast(s, len, &d)) {
        g_fast++;
        if (!ref_all || bits_of(d) != bits_of(ref) || ref_erange)
            fail_msg("fast path on \"%s\": %.17g (%016llx), strtod %.17g (%016llx)%s", s, d,
                     (unsigned long long)bits_of(d), ref, (unsigned long long)bits_of(ref),
                     ref_erange ? " ERANGE" : "");
    } else if (d != 12345.0) {
        fail_msg("declined \"%s\" but wrote the output", s);
    }
    /* the CSV cell scan: the same number found with a ',' and a digit after it, or declined */
    char cell[256];
    if (len + 2 <= sizeof cell) {
        memcpy(cell, s, len);
        cell[len] = ',';
        cell[len + 1] = '7';
        double fd = 0, q = 0;
        size_t used = 0;
        bool fast = dg_harness__decimal_fast(s, len, &fd);
        bool pre = dg_harness__decimal_prefix(cell, len + 2, &q, &used);
        if (fast && (!pre || used != len || bits_of(q) != bits_of(fd)))
            fail_msg("decimal_prefix on \"%s,7\": %d used %zu %.17g, decimal_fast %.17g", s, pre, used, q, fd);
        if (!fast && pre && used == len)
            fail_msg("decimal_prefix took \"%s\" (%.17g) that decimal_fast declines", s, q);
    }
    bool ok;
    int erange;
    double v = dg_harness__strtod_n(s, len, &ok, &erange);
    if ((int)ok != ref_all || erange != ref_erange || (ok && bits_of(v) != bits_of(ref)))
        fail_msg("strtod_n on \"%s\": ok %d erange %d %.17g, strtod all %d erange %d %.17g", s, ok, erange, v,
                 ref_all, ref_erange, ref);
    /* a CSV cell: no leading space; a subnormal or an underflow to 0 is a value, an overflow is not */
    bool want = len > 0 && len < 64 && ref_all && !(ref_erange && isinf(ref)) && !isspace((unsigned char)s[0]);
    double p = 0;
    bool got = dg_harness__parse_f64(s, len, &p);
    if (got != want || (got && bits_of(p) != bits_of(ref)))
        fail_msg("parse_f64 on \"%s\": %d %.17g, expected %d %.17g", s, got, p, want, ref);
}

/* Not NUL-terminated: the parser must stop at len (a digit follows in memory). */
static void check_prefix(const char *s, size_t len)
{
    char z[128];
    memcpy(z, s, len);
    z[len] = 0;
    double a = 0, b = 0;
    bool fa = dg_harness__decimal_fast(s, len, &a), fb = dg_harness__decimal_fast(z, len, &b);
    if (fa != fb || (fa && bits_of(a) != bits_of(b)))
        fail_msg("\"%.*s\" followed by more text parsed otherwise than alone", (int)len, s);
    check(z);
}

static void test_edges(void **state)
{
    (void)state;
    static const char *const k[] = {
        "0", "-0", "+0", "0.0", "-0.0", "00", "000.000", ".5", "5.", ".", "-", "+", "", "e5", "1e", "1e+",
        "1e-", "1.5e3", "1.5E3", "1.5e+3", "1.5e-3", "-1.5e-3", " 1", "1 ", "1,", "0x10", "0x1p3", "inf",
        "-inf", "nan", "infinity", "1..2", "1.2.3", "--1", "+-1", "1e5e5", "1e0000000000000000000005",
        "9007199254740992", "9007199254740993", "9007199254740994", "9007199254740995", "18014398509481985",
        "9999999999999999999", "18446744073709551615", "18446744073709551616", "99999999999999999999",
        "1e22", "1e23", "1e27", "1e28", "1e-22", "1e-23", "1e-27", "1e-28", "1e308", "1e309", "-1e309",
        "1.7976931348623157e308", "1.7976931348623159e308", "2.2250738585072014e-308",
        "2.2250738585072011e-308", "4.9406564584124654e-324", "2.4703282292062327e-324",
        "2.4703282292062328e-324", "1e-400", "0e-400", "0e400", "0.1", "0.2", "0.3", "0.30000000000000004",
        "3.1415926535897931", "2.7182818284590451", "1.0000000000000002", "0.99999999999999989",
        "0.1000000000000000055511151231257827", "123456789012345678901234567890", "1.00000000000000000000",
        "0.000000000000000000000000000001", "8.98846567431158e307", "4503599627370496.5",
        "4503599627370497.5", "2.0000000000000004440892098500626", "1.9999999999999998",
        "9.5367431640625e-07", "7.450580596923828125e-9", "1448997445238699", "5e-324", "1e-320",
        "10.000000000000002", "3.1666666666666665", "-12.345678901234567", "6.02214076e23",
        "0.000123456789012345678", "12345678901234567890e-10", "1234567890123456789e-27",
        "1234567890123456789e27", "1234567890123456789e-28"};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        check(k[i]);
    check_prefix("1.25" "7", 4);
    check_prefix("12e3" "4", 4);
    check_prefix("-0.5" "1", 4);
}

/* Every double printed as engines print it (%.17g, shorter forms, fixed, exponent). */
static void test_printed_doubles(void **state)
{
    (void)state;
    static const char *const fmt[] = {"%.17g", "%.16g", "%.15g", "%.9g", "%.6f", "%.3e", "%.19g", "%.18e"};
    char buf[80];
    g_fast = g_total = 0;
    for (int i = 0; i < 400000; i++) {
        uint64_t r = rnd();
        double d;
        switch (i % 4) {
        case 0: d = from_bits(r); break;                                          /* any bit pattern */
        case 1: d = ldexp((double)(r >> 11), -(int)(rnd() % 120)) - 1e3; break;   /* simulation-sized */
        case 2: d = (double)(int64_t)(r % 2000001) / 1024.0 - 977.0; break;       /* short binary fractions */
        default: d = (double)(r >> 11) * 1e-16 * (double)(1 + rnd() % 100000); break;
        }
        if (isnan(d) || isinf(d))
            d = 1.0 / 3.0;
        for (size_t f = 0; f < sizeof fmt / sizeof fmt[0]; f++) {
            snprintf(buf, sizeof buf, fmt[f], d);
            check(buf);
        }
    }
    /* the fast paths do the work for these (without them this test would pass on strtod alone) */
    assert_true(g_fast * 10 > g_total * 6);
}

/* Strings around the midpoints between adjacent doubles, where a second rounding can go wrong: the
 * exact midpoint (as many digits as it takes) and it cut to 16..19 significant digits, rounded both
 * ways, plus one unit in the last place either side. */
static void test_midpoints(void **state)
{
    (void)state;
    char buf[96], cut[96];
    g_fast = g_total = 0;
    size_t fast_before;
    for (int i = 0; i < 150000; i++) {
        double d = ldexp((double)(rnd() >> 11), (int)(rnd() % 200) - 120);
        if (i % 3 == 0)
            d = (double)(rnd() % 100000000) / 1000.0 + 1e-3;
        long double mid = ((long double)d + (long double)nextafter(d, INFINITY)) / 2;
        snprintf(buf, sizeof buf, "%.40Le", mid);
        check(buf);
        fast_before = g_fast;
        for (int digits = 15; digits <= 19; digits++) {
            snprintf(cut, sizeof cut, "%.*Le", digits - 1, mid);
            check(cut);
            /* the same digits without the exponent form: mantissa digits, then e-N */
            char *e = strchr(cut, 'e');
            if (!e)
                continue;
            int ex = atoi(e + 1);
            char m[40];
            size_t k = 0;
            for (const char *q = cut; q < e; q++)
                if (*q >= '0' && *q <= '9')
                    m[k++] = *q;
            m[k] = 0;
            uint64_t mv = strtoull(m, NULL, 10);
            for (int delta = -1; delta <= 1; delta++) {
                snprintf(buf, sizeof buf, "%llue%d", (unsigned long long)(mv + (uint64_t)(int64_t)delta),
                         ex - (int)(k - 1));
                check(buf);
            }
        }
        (void)fast_before;
    }
    assert_true(g_fast > g_total / 2);
}

/* Exact ties, where only round-half-to-even decides: an odd T in (2^53, 2^54) lies halfway between
 * two doubles, and so does T * 5^j written as "T*5^j e-j" (= T / 2^j; j = 0..4 while the mantissa
 * keeps to 19 digits). Each must take a fast path and give strtod's bits. */
static void test_ties(void **state)
{
    (void)state;
    char buf[64];
    g_fast = g_total = 0;
    for (int i = 0; i < 20000; i++) {
        uint64_t t = (UINT64_C(1) << 53) + ((rnd() % (UINT64_C(1) << 52)) | 1); /* odd, in (2^53, 2^54) */
        uint64_t m = t;
        for (int j = 0; j <= 4; j++, m *= 5) {
            if (m >= UINT64_C(10000000000000000000))
                break;
            snprintf(buf, sizeof buf, "%llue-%d", (unsigned long long)m, j);
            check(buf);
        }
    }
    assert_int_equal(g_fast, g_total);
}

/* Random digit strings: 1..24 digits, a point anywhere, exponents -40..40, signs, leading zeros. */
static void test_random_decimals(void **state)
{
    (void)state;
    char buf[96];
    for (int i = 0; i < 1500000; i++) {
        size_t k = 0;
        uint64_t r = rnd();
        if (r & 1)
            buf[k++] = (r & 2) ? '-' : '+';
        int nd = 1 + (int)(rnd() % 24), point = (int)(rnd() % (unsigned)(nd + 2)) - 1;
        int lead = (int)(rnd() % 4) == 0 ? (int)(rnd() % 5) : 0;
        for (int z = 0; z < lead; z++)
            buf[k++] = '0';
        for (int j = 0; j < nd; j++) {
            if (j == point)
                buf[k++] = '.';
            buf[k++] = (char)('0' + rnd() % 10);
        }
        if (rnd() % 3 == 0)
            k += (size_t)snprintf(buf + k, sizeof buf - k, "e%d", (int)(rnd() % 81) - 40);
        buf[k] = 0;
        check(buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_printed_doubles),
        cmocka_unit_test(test_midpoints),
        cmocka_unit_test(test_random_decimals),
        cmocka_unit_test(test_ties),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
