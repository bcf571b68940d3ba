/* tests/reports/schema_check.c — the report room's inspector: validates a JSON document against
 * the subset of JSON Schema 2020-12 that docs/report-schema.json is written in. */
#include <stdio.h>
#include <string.h>

#include "schema_check.h"

typedef struct sc_ctx {
    json_t *root; /* for $ref */
    char *msg;
    size_t cap;
    int depth;
} sc_ctx;

static bool sc__node(sc_ctx *c, json_t *schema, json_t *doc, const char *path);

static bool sc__fail(sc_ctx *c, const char *path, const char *what)
{
    snprintf(c->msg, c->cap, "%s: %s", path, what);
    return false;
}

static bool sc__type_is(json_t *doc, const char *t)
{
    if (strcmp(t, "object") == 0)
        return json_is_object(doc);
    if (strcmp(t, "array") == 0)
        return json_is_array(doc);
    if (strcmp(t, "string") == 0)
        return json_is_string(doc);
    if (strcmp(t, "integer") == 0)
        return json_is_integer(doc);
    if (strcmp(t, "number") == 0)
        return json_is_number(doc);
    if (strcmp(t, "boolean") == 0)
        return json_is_boolean(doc);
    if (strcmp(t, "null") == 0)
        return json_is_null(doc);
    return false;
}

static bool sc__type(sc_ctx *c, json_t *type, json_t *doc, const char *path)
{
    if (json_is_string(type)) {
        if (!sc__type_is(doc, json_string_value(type)))
            return sc__fail(c, path, "wrong type");
        return true;
    }
    size_t i;
    json_t *t;
    json_array_foreach(type, i, t) if (json_is_string(t) && sc__type_is(doc, json_string_value(t))) return true;
    return sc__fail(c, path, "wrong type");
}

static double sc__num(json_t *v)
{
    return json_is_integer(v) ? (double)json_integer_value(v) : json_real_value(v);
}

static bool sc__ref(sc_ctx *c, json_t *ref, json_t *doc, const char *path)
{
    const char *r = json_string_value(ref);
    if (!r || strncmp(r, "#/$defs/", 8) != 0)
        return sc__fail(c, path, "unsupported $ref");
    json_t *target = json_object_get(json_object_get(c->root, "$defs"), r + 8);
    if (!target)
        return sc__fail(c, path, "dangling $ref");
    return sc__node(c, target, doc, path);
}

static bool sc__object(sc_ctx *c, json_t *schema, json_t *doc, const char *path)
{
    if (!json_is_object(doc))
        return true; /* applies to objects only; 'type' decides whether others are allowed */
    json_t *req = json_object_get(schema, "required"), *props = json_object_get(schema, "properties");
    json_t *extra = json_object_get(schema, "additionalProperties");
    char sub[512];
    size_t i;
    json_t *v;
    json_array_foreach(req, i, v) {
        if (!json_object_get(doc, json_string_value(v))) {
            snprintf(sub, sizeof sub, "missing required property \"%s\"", json_string_value(v));
            return sc__fail(c, path, sub);
        }
    }
    const char *key;
    json_object_foreach(doc, key, v) {
        snprintf(sub, sizeof sub, "%s.%s", path, key);
        json_t *ps = props ? json_object_get(props, key) : NULL;
        if (ps) {
            if (!sc__node(c, ps, v, sub))
                return false;
        } else if (json_is_false(extra)) {
            return sc__fail(c, sub, "property not allowed by the schema");
        } else if (json_is_object(extra) && !sc__node(c, extra, v, sub)) {
            return false;
        }
    }
    return true;
}

static bool sc__array(sc_ctx *c, json_t *schema, json_t *doc, const char *path)
{
    if (!json_is_array(doc))
        return true;
    json_t *items = json_object_get(schema, "items"), *min = json_object_get(schema, "minItems");
    if (min && json_array_size(doc) < (size_t)json_integer_value(min))
        return sc__fail(c, path, "too few items");
    if (!items)
        return true;
    char sub[512];
    size_t i;
    json_t *v;
    json_array_foreach(doc, i, v) {
        snprintf(sub, sizeof sub, "%s[%zu]", path, i);
        if (!sc__node(c, items, v, sub))
            return false;
    }
    return true;
}

static bool sc__scalar(sc_ctx *c, json_t *schema, json_t *doc, const char *path)
{
    json_t *en = json_object_get(schema, "enum"), *cn = json_object_get(schema, "const");
    if (en) {
        bool found = false;
        size_t i;
        json_t *v;
        json_array_foreach(en, i, v) found = found || json_equal(v, doc);
        if (!found)
            return sc__fail(c, path, "not in enum");
    }
    if (cn && !json_equal(cn, doc))
        return sc__fail(c, path, "not the const value");
    json_t *mn = json_object_get(schema, "minimum"), *mx = json_object_get(schema, "maximum");
    if (json_is_number(doc) && mn && sc__num(doc) < sc__num(mn))
        return sc__fail(c, path, "below minimum");
    if (json_is_number(doc) && mx && sc__num(doc) > sc__num(mx))
        return sc__fail(c, path, "above maximum");
    json_t *ml = json_object_get(schema, "minLength");
    if (json_is_string(doc) && ml && json_string_length(doc) < (size_t)json_integer_value(ml))
        return sc__fail(c, path, "string too short");
    return true;
}

static bool sc__known_keyword(const char *k)
{
    static const char *const known[] = {"$schema", "$id", "$comment", "title", "description", "$defs", "$ref",
                                        "type", "enum", "const", "required", "properties", "additionalProperties",
                                        "items", "minimum", "maximum", "minLength", "minItems"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(k, known[i]) == 0)
            return true;
    return false;
}

static bool sc__node(sc_ctx *c, json_t *schema, json_t *doc, const char *path)
{
    if (++c->depth > 64)
        return sc__fail(c, path, "schema nesting too deep");
    bool ok = false;
    const char *key;
    json_t *v;
    if (!json_is_object(schema)) {
        ok = sc__fail(c, path, "schema node is not an object");
        goto out;
    }
    json_object_foreach(schema, key, v) {
        if (!sc__known_keyword(key)) {
            char m[128];
            snprintf(m, sizeof m, "schema uses unsupported keyword \"%s\"", key);
            ok = sc__fail(c, path, m);
            goto out;
        }
    }
    json_t *ref = json_object_get(schema, "$ref"), *type = json_object_get(schema, "type");
    ok = (!ref || sc__ref(c, ref, doc, path)) && (!type || sc__type(c, type, doc, path)) &&
         sc__scalar(c, schema, doc, path) && sc__object(c, schema, doc, path) && sc__array(c, schema, doc, path);
out:
    c->depth--;
    return ok;
}

bool sc_validate(json_t *schema, json_t *doc, char *msg, size_t cap)
{
    sc_ctx c = {schema, msg, cap, 0};
    msg[0] = '\0';
    return sc__node(&c, schema, doc, "$");
}
