/* harness/rply_dump.h — the RPLY side of `detgate dump` and `detgate info`: the canonical JSON Lines
 * dump of shared/specs/rply.md and a human summary. Field names: docs/FORMAT-rply.md §"JSON dump". */
#ifndef DETGATE_HARNESS_RPLY_DUMP_H
#define DETGATE_HARNESS_RPLY_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "detgate/error.h"

/* Writes one JSON object per line to out. Without `partial` the file is validated completely
 * first and nothing is printed if it fails; with `partial` every line read before the failure is
 * printed. expected_place_version 0 accepts any. Returns 0, or the dg_status of the failure (err
 * filled); the CLI prints err to stderr and exits 2. */
int dg_rply_dump_json(const uint8_t *buf, size_t len, FILE *out, bool partial,
                      uint32_t expected_place_version, dg_error *err);

/* Header fields, string count, keyframes, op counts by opcode, tick range, duration, bytes per
 * tick and per second. The file is validated first; nothing is printed if it fails. */
int dg_rply_print_info(const uint8_t *buf, size_t len, FILE *out, dg_error *err);

#endif
