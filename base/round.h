/* base/round.h — the one rounding rule of every float quantizer: half away from zero, exact, without
 * libm (private to detgate: not installed as a header). The codec's schema quantizer and the
 * harness's stream decoder both round here, so a value cannot land in two different quanta.
 */
#ifndef DG_BASE_ROUND_H
#define DG_BASE_ROUND_H

#include <stdbool.h>
#include <stdint.h>

/* round(x) half away from zero into *n, for |x| <= 2^53; false (n untouched) for NaN, an infinity or
 * anything further out. Exact: below 2^52 the truncation and the fraction x - t are exact; from 2^52
 * on x is integral. */
static inline bool dg_round_half_away(double x, int64_t *n)
{
    if (!(x >= -9007199254740992.0 && x <= 9007199254740992.0))
        return false;
    double t = x;
    if (x > -4503599627370496.0 && x < 4503599627370496.0) {
        t = (double)(int64_t)x;
        double d = x - t;
        t += d >= 0.5 ? 1.0 : d <= -0.5 ? -1.0 : 0.0;
    }
    *n = (int64_t)t;
    return true;
}

#endif
