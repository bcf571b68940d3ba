/* tests/reports/schema_check.h — the report room's inspector: a small JSON Schema (draft 2020-12)
 * validator for exactly the keywords docs/report-schema.json uses. A schema keyword it does not
 * know is itself an error, so the schema can never lean on a rule nobody checks. */
#ifndef DETGATE_TESTS_SCHEMA_CHECK_H
#define DETGATE_TESTS_SCHEMA_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* Supported: $schema $id $comment title description $defs $ref(#/$defs/...) type(string or list)
 * enum const required properties additionalProperties(false or schema) items minimum maximum
 * minLength minItems. Returns true when `doc` validates against `schema`; otherwise false with the
 * first violation ("$.scenarios[1]->checks[0]->status: not in enum") in msg. */
bool sc_validate(json_t *schema, json_t *doc, char *msg, size_t cap);

#endif
