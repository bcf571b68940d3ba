/* harness/numparse.c — decimal text to double, bit for bit what strtod gives, without strtod for the
 * plain decimals engines print (up to 19 significant digits, a power of ten within ±27): Clinger's
 * exact fast path in double where it applies, else Eisel and Lemire's: the mantissa times a 128-bit
 * power of five, correctly rounded from the product's top bits (within ±27 this never needs a
 * fallback); strtod for everything else. */
#include "numparse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NP_MAX_DIGITS 19 /* below 10^19 < 2^64: the mantissa is an exact integer */
#define NP_MAX_POW 27    /* 5^27 < 2^64; within ±27 the 128-bit product always decides */

static const double k_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* ---- Eisel-Lemire (D. Lemire, "Number Parsing at a Gigabyte per Second", 2021) ------------------ */

/* gcc's and clang's 128-bit integer (every 64-bit target); without one the step is not taken */
#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 np_u128;

/* 5^q for q in -NP_MAX_POW..NP_MAX_POW scaled by a power of two into [2^127, 2^128): 5^q shifted up
 * for q >= 0 (exact), 2^e / 5^-q rounded up for q < 0 (rounded toward 1, as the algorithm's proof
 * takes it). Computed once by long division, so no table of magic numbers is pasted in. */
typedef struct np_pow5 {
    uint64_t hi, lo;
} np_pow5;
static np_pow5 k_pow5[2 * NP_MAX_POW + 1];
static pthread_once_t k_pow5_once = PTHREAD_ONCE_INIT;

static void pow5_init(void)
{
    uint64_t p = 1;
    for (int q = 0; q <= NP_MAX_POW; q++, p *= 5)
        k_pow5[NP_MAX_POW + q] = (np_pow5){p << __builtin_clzll(p), 0};
    p = 5;
    for (int k = 1; k <= NP_MAX_POW; k++, p *= 5) {
        int e = 127 + (64 - __builtin_clzll(p)); /* p in [2^(b-1), 2^b): 2^(127+b) / p in (2^127, 2^128) */
        np_u128 quo = 0;
        uint64_t rem = 0; /* < p < 2^63: rem << 1 fits */
        for (int i = e; i >= 0; i--) {
            rem = rem << 1 | (uint64_t)(i == e);
            quo <<= 1;
            if (rem >= p) {
                rem -= p;
                quo |= 1;
            }
        }
        quo += rem != 0;
        k_pow5[NP_MAX_POW - k] = (np_pow5){(uint64_t)(quo >> 64), (uint64_t)quo};
    }
}

/* The algorithm's power(q), floor(q log2(10)) + 63, as floor(217706 q / 2^16) + 63 (exact for
 * |q| < 350); the division floors for a negative q too. */
static int pow2_of(int q)
{
    int x = 217706 * q;
    return (x >= 0 ? x >> 16 : -((-x + 65535) >> 16)) + 63;
}

/* w * 10^q (w > 0, |q| <= NP_MAX_POW) correctly rounded: the top 64 bits of w times the 128-bit power
 * of five, the lower word's carry added only when it can reach the 55 bits that decide; a result
 * exactly halfway between two doubles goes to the even one. False only outside the normal range
 * (never within ±27). */
static bool via_eisel_lemire(uint64_t w, int q, double *out)
{
    pthread_once(&k_pow5_once, pow5_init);
    const np_pow5 *t = &k_pow5[NP_MAX_POW + q];
    int lz = __builtin_clzll(w);
    w <<= lz;
    np_u128 first = (np_u128)w * t->hi;
    uint64_t hi = (uint64_t)(first >> 64), lo = (uint64_t)first;
    if ((hi & 0x1FF) == 0x1FF) { /* the 9 bits below the 55 needed all ones: a carry could reach them */
        uint64_t second = (uint64_t)(((np_u128)w * t->lo) >> 64);
        lo += second;
        hi += lo < second;
    }
    int upper = (int)(hi >> 63), shift = upper + 9; /* 64 - 52 - 3 + upper */
    uint64_t mant = hi >> shift;
    int power2 = pow2_of(q) + upper - lz + 1023;
    if (power2 <= 0 || power2 >= 0x7FF)
        return false;
    /* nothing but zeros dropped, and 5^q exact (q in -4..23, where a halfway case can occur): a tie */
    if (lo <= 1 && q >= -4 && q <= 23 && (mant & 3) == 1 && (mant << shift) == hi)
        mant &= ~UINT64_C(1);
    mant += mant & 1; /* round half up, the tie made even above */
    mant >>= 1;
    if (mant >= UINT64_C(2) << 52) { /* rounding carried into a new bit */
        mant = UINT64_C(1) << 52;
        power2++;
        if (power2 >= 0x7FF)
            return false;
    }
    uint64_t bits = (mant & ~(UINT64_C(1) << 52)) | (uint64_t)power2 << 52;
    memcpy(out, &bits, sizeof bits);
    return true;
}
#else
static bool via_eisel_lemire(uint64_t w, int q, double *out)
{
    (void)w, (void)q, (void)out;
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
static inline __attribute__((always_inline)) bool scan_digits(const char *s, size_t len, size_t *i, uint64_t *m, int *count)
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
static inline __attribute__((always_inline)) bool scan_decimal(const char *s, size_t len, bool *neg, uint64_t *mant, int *e10, size_t *end)
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
    else if (e10 < -NP_MAX_POW || e10 > NP_MAX_POW || !via_eisel_lemire(m, e10, &d))
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
