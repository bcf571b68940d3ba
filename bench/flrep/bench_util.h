/* bench/flrep/bench_util.h — what every .flrep bench shares: a thread-CPU clock and dying on a codec
 * error with the bench's name (BENCH_NAME, defined before this header). */
#ifndef DG_BENCH_UTIL_H
#define DG_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "detgate/flrep.h"

/* CPU time of this thread, not wall: the figures are per core, and the machine is shared. */
static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void die(const dg_error *e)
{
    char buf[600];
    dg_error_format(e, buf, sizeof buf);
    fprintf(stderr, "%s: %s\n", BENCH_NAME, buf);
    exit(1);
}

#endif
