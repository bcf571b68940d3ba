/* harness/numparse.c — decimal text to double, bit for bit what strtod gives, without strtod for the
 * plain decimals engines print (up to 19 significant digits, a power of ten within ±27): Clinger's
 * exact fast path in double where it applies, else one rounding in long double with a check that
 * rounding that to double cannot differ from rounding the exact value; strtod for everything else. */
#include "numparse.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NP_MAX_DIGITS 19 /* below 10^19 < 2^64: the mantissa is an exact integer */
#define NP_MAX_POW 27    /* 10^27 = 5^27 * 2^27 with 5^27 < 2^64: exact in a 64-bit long double */

static const double k_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

#if LDBL_MANT_DIG >= 64
static const long double k_pow10l[NP_MAX_POW + 1] = {
    1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,  1e10L, 1e11L, 1e12L, 1e13L,
    1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};

/* Long double arithmetic as declared (an emulator such as valgrind's computes it in double): asked
 * once; without it the long double step is never taken. */
static bool long_double_works(void)
{
    static atomic_int known; /* 0 unknown, 1 yes, 2 no; racing threads compute the same answer */
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (!k) {
        volatile long double one = 1.0L, tiny = LDBL_EPSILON;
        k = one + tiny != one ? 1 : 2;
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k == 1;
}

/* m * 10^e10 (|e10| <= 27, m < 2^64) rounded once to long double, then to double; false when the
 * long double lies on a midpoint between two doubles (there the second rounding could differ from
 * the correct one; anywhere else the exact value is on the same side of every midpoint). */
static bool via_long_double(uint64_t m, int e10, double *out)
{
    if (!long_double_works())
        return false;
    long double x = (long double)m;
    x = e10 >= 0 ? x * k_pow10l[e10] : x / k_pow10l[-e10];
    double d = (double)x;
    if (!(d > DBL_MIN && d < DBL_MAX))
        return false;
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    uint64_t lo_bits = bits - 1, hi_bits = bits + 1;
    double lo, hi;
    memcpy(&lo, &lo_bits, sizeof lo);
    memcpy(&hi, &hi_bits, sizeof hi);
    long double mid_lo = ((long double)d + (long double)lo) / 2, mid_hi = ((long double)d + (long double)hi) / 2;
    if (x == mid_lo || x == mid_hi)
        return false;
    *out = d;
    return true;
}
#else
static bool via_long_double(uint64_t m, int e10, double *out)
{
    (void)m, (void)e10, (void)out;
    return false;
}
#endif

static const uint64_t k_pow10_u64[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

/* How many of the eight bytes of w (s[0] in the low byte) are ASCII digits before the first other
 * byte. A byte's carry out of the + 6 only reaches the bytes after a non-digit. */
static unsigned digit_run(uint64_t w)
{
    uint64_t other = ((w & UINT64_C(0xF0F0F0F0F0F0F0F0)) ^ UINT64_C(0x3030303030303030)) |
                     (((w + UINT64_C(0x0606060606060606)) & UINT64_C(0xF0F0F0F0F0F0F0F0)) ^ UINT64_C(0x3030303030303030));
    return other ? (unsigned)__builtin_ctzll(other) >> 3 : 8;
}

/* The value of the first n (1..8) bytes of w, all digits: they are moved to the top (zeros below
 * them read as leading zeros) and the eight summed in three multiplies. */
static uint32_t digits_value(uint64_t w, unsigned n)
{
    uint64_t v = (w - UINT64_C(0x3030303030303030)) << (8 * (8 - n)); /* digits borrow nothing */
    v = v * 10 + (v >> 8); /* pairs of digits in every other byte */
    v = ((v & UINT64_C(0x000000FF000000FF)) * UINT64_C(0x000F424000000064) +
         ((v >> 16) & UINT64_C(0x000000FF000000FF)) * UINT64_C(0x0000271000000001)) >> 32;
    return (uint32_t)v;
}

#define NP_MANT_BOUND UINT64_C(1000000000000000000) /* 10^18: one more digit would make 20 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NP_LITTLE_ENDIAN 1 /* the eight-byte loads read s[k] into the low byte */
#else
#define NP_LITTLE_ENDIAN 0
#endif

/* Digits from s[*i] into *m (leading zeros add nothing), up to eight per step while eight bytes
 * are there to load (a run's end is found without a branch per digit); *count gets how many were
 * read. False when the significant digits pass NP_MAX_DIGITS. */
static bool scan_digits(const char *s, size_t len, size_t *i, uint64_t *m, int *count)
{
    size_t k = *i;
    uint64_t v = *m;
    /* v < 10^11: v * 10^8 + eight digits < 10^19, at most 19 significant digits, no overflow */
    while (NP_LITTLE_ENDIAN && k + 8 <= len && v < UINT64_C(100000000000)) {
        uint64_t w;
        memcpy(&w, s + k, sizeof w); /* little-endian: s[k] in the low byte */
        unsigned n = digit_run(w);
        if (n)
            v = v * k_pow10_u64[n] + digits_value(w, n);
        k += n;
        if (n < 8)
            break;
    }
    for (; k < len && s[k] >= '0' && s[k] <= '9'; k++) {
        if (v >= NP_MANT_BOUND) /* v has 19 significant digits already (NP_MAX_DIGITS) */
            return false;
        v = v * 10 + (uint64_t)(s[k] - '0');
    }
    *count = (int)(k - *i);
    *i = k;
    *m = v;
    return true;
}

/* [+-]digits[.digits][(e|E)[+-]digits] with at least one digit at the start of s[0..len): the
 * mantissa's significant digits (leading zeros skipped), the power of ten and where it ends (*end).
 * False: another shape, or too many digits or too large an exponent for the fast paths (strtod
 * decides then). */
static bool scan_decimal(const char *s, size_t len, bool *neg, uint64_t *mant, int *e10, size_t *end)
{
    size_t i = 0;
    *neg = false;
    if (i < len && (s[i] == '-' || s[i] == '+'))
        *neg = s[i++] == '-';
    uint64_t m = 0;
    int digits = 0, exp = 0, frac = 0;
    if (!scan_digits(s, len, &i, &m, &digits))
        return false;
    if (i < len && s[i] == '.') {
        i++;
        if (!scan_digits(s, len, &i, &m, &frac))
            return false;
        exp = -frac;
        digits += frac;
    }
    if (digits == 0)
        return false;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < len && (s[i] == '-' || s[i] == '+'))
            eneg = s[i++] == '-';
        int ev = 0, ed = 0;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, ed++)
            if (ev < 10000)
                ev = ev * 10 + (s[i] - '0');
        if (ed == 0)
            return false;
        exp += eneg ? -ev : ev;
    }
    *mant = m;
    *e10 = exp;
    *end = i;
    return true;
}

/* The scanned number as a double, exactly (false: strtod must decide). */
static bool to_double(bool neg, uint64_t m, int e10, double *out)
{
    double d;
    if (m == 0)
        d = 0.0;
    else if (m <= (UINT64_C(1) << 53) && e10 >= -22 && e10 <= 22) /* Clinger: m and 10^|e| exact, one rounding */
        d = e10 >= 0 ? (double)m * k_pow10[e10] : (double)m / k_pow10[-e10];
    else if (e10 < -NP_MAX_POW || e10 > NP_MAX_POW || !via_long_double(m, e10, &d))
        return false;
    *out = neg ? -d : d;
    return true;
}

bool dg_harness__decimal_fast(const char *s, size_t len, double *out)
{
    bool neg;
    uint64_t m;
    int e10;
    size_t end;
    return scan_decimal(s, len, &neg, &m, &e10, &end) && end == len && to_double(neg, m, e10, out);
}

bool dg_harness__decimal_prefix(const char *s, size_t len, double *out, size_t *used)
{
    bool neg;
    uint64_t m;
    int e10;
    return scan_decimal(s, len, &neg, &m, &e10, used) && to_double(neg, m, e10, out);
}

double dg_harness__strtod_n(const char *s, size_t len, bool *ok, int *erange)
{
    double v;
    *erange = 0;
    if (dg_harness__decimal_fast(s, len, &v)) {
        *ok = true;
        return v;
    }
    char buf[64];
    char *heap = NULL, *z = buf;
    if (len >= sizeof buf && !(z = heap = malloc(len + 1))) {
        *ok = false;
        return 0;
    }
    memcpy(z, s, len);
    z[len] = 0;
    char *end = NULL;
    int saved = errno;
    errno = 0;
    v = strtod(z, &end);
    *erange = errno == ERANGE;
    errno = saved;
    *ok = end == z + len;
    free(heap);
    return v;
}

bool dg_harness__parse_f64(const char *s, size_t len, double *out)
{
    /* strtod would skip leading white space: a CSV cell holds none (a trailing one is refused too) */
    if (len == 0 || len >= 64 || isspace((unsigned char)s[0]))
        return false;
    if (dg_harness__decimal_fast(s, len, out))
        return true;
    bool ok;
    int erange;
    double v = dg_harness__strtod_n(s, len, &ok, &erange);
    /* ERANGE also flags a subnormal or underflow to zero, which %.17g prints for a tiny value: only an
     * overflow is out of the double range (as JSON Lines, jsonl_fast.c / jansson, takes it) */
    if (!ok || (erange && isinf(v)))
        return false;
    *out = v;
    return true;
}
