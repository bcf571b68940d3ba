/* tests/codec/flrep_handbits.h — a bit packer written from docs/FORMAT-flrep.md §6.2 alone, not the
 * codec's: tests that build record blocks by hand (test_flrep_bytes, test_flrep_paths) write with
 * it, so a codec bit-order mistake cannot cancel itself out. */
#ifndef DETGATE_TESTS_FLREP_HANDBITS_H
#define DETGATE_TESTS_FLREP_HANDBITS_H

#include <stddef.h>
#include <stdint.h>

/* §6.2: bits fill each byte from bit 0 up; a k-bit field goes least significant bit first. */
typedef struct bits {
    uint8_t b[1024];
    size_t nbits;
} bits;

static inline void bput(bits *w, uint64_t v, unsigned k)
{
    for (unsigned i = 0; i < k; i++, w->nbits++)
        if ((v >> i) & 1)
            w->b[w->nbits / 8] |= (uint8_t)(1u << (w->nbits % 8));
}
static inline void beg(bits *w, uint64_t v) /* EG(v): n zeros, a one, the low n bits of v+1 */
{
    uint64_t x = v + 1;
    unsigned n = 0;
    while ((x >> (n + 1)) != 0)
        n++;
    bput(w, 0, n);
    bput(w, 1, 1);
    bput(w, x, n);
}
static inline void bseg(bits *w, int64_t v) { beg(w, v >= 0 ? (uint64_t)v * 2 : (uint64_t)(-v) * 2 - 1); }

#endif
