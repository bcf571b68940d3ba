/* fuzz/flrep_mutator.h — the structure-aware mutator for the compressed layer of .flrep inputs:
 * decompress a chunk, mutate its tick stream, recompress, fix the framing (and the trailer when
 * there is one), so the fuzzer reaches the tick parser through zstd. */
#ifndef DETGATE_FUZZ_FLREP_MUTATOR_H
#define DETGATE_FUZZ_FLREP_MUTATOR_H

#include <stddef.h>
#include <stdint.h>

/* Mutates data in place (capacity max_size) and returns the new size. With some probability, or
 * when no chunk can be decompressed, it falls back to libFuzzer's generic byte mutation. */
size_t dg_fuzz_flrep_mutate(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

#endif
