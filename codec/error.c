/* codec/error.c — dg_error helpers (the one place that turns codes into text). */
#include "detgate/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *dg_status_str(dg_status code)
{
    switch (code) {
#define DG_STATUS_CASE(name, value, text) \
    case name:                             \
        return text;
        DG_STATUS_LIST(DG_STATUS_CASE)
#undef DG_STATUS_CASE
    }
    return "unknown error";
}

void dg_error_clear(dg_error *err)
{
    if (!err)
        return;
    err->code = DG_OK;
    err->offset = DG_OFFSET_NONE;
    err->where[0] = '\0';
    err->msg[0] = '\0';
}

dg_status dg_error_set(dg_error *err, dg_status code, uint64_t offset, const char *where,
                       const char *fmt, ...)
{
    if (!err || err->code != DG_OK)
        return code;
    err->code = code;
    err->offset = offset;
    snprintf(err->where, sizeof err->where, "%s", where ? where : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

void dg_error_format(const dg_error *err, char *buf, size_t cap)
{
    if (!buf || cap == 0)
        return;
    if (!err) {
        snprintf(buf, cap, "unknown error");
        return;
    }
    char off[40] = "";
    if (err->offset != DG_OFFSET_NONE)
        snprintf(off, sizeof off, " at byte %llu", (unsigned long long)err->offset);
    snprintf(buf, cap, "%s%s: %s: %s", err->where[0] ? err->where : "input", off,
             dg_status_str(err->code), err->msg);
}
