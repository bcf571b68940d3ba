/* fuzz/rply_strings.c — target: the RPLY string table. Input: u16 stringCount, then the table bytes;
 * the target puts a header in front that declares that count, no keyframes and an empty op stream,
 * so the table must fill the rest exactly (dg_rply_file_open). */
#include "fuzz_common.h"
#include "rply_common.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    uint16_t count = dg_le16(data);
    size_t len = DG_RPLY_HEADER_SIZE + size - 2;
    uint8_t *file = malloc(len);
    dg_fuzz_rply_header(file, 1, count, 0, 0);
    memcpy(file + DG_RPLY_HEADER_SIZE, data + 2, size - 2);
    dg_rply_file f;
    memset(&f, 0, sizeof f);
    dg_error err;
    dg_error_clear(&err);
    dg_status st = dg_rply_file_open(&f, file, len, 0, &err);
    if (st != DG_OK) {
        dg_fuzz_check_error(st, &err, len);
        FUZZ_ASSERT(f.strings_read <= count, "%s", "more strings read than declared");
    } else {
        FUZZ_ASSERT(f.hdr.string_count == count, "%s", "string count changed");
        for (uint32_t i = 0; i < count; i++) {
            const dg_rply_str *s = &f.strings[i];
            FUZZ_ASSERT(s->len == 0 || ((const uint8_t *)s->s >= file && (const uint8_t *)s->s + s->len <= file + len),
                        "string %u points outside the file", i);
            FUZZ_ASSERT(dg_utf8_valid((const uint8_t *)s->s, s->len), "string %u is not UTF-8", i);
        }
    }
    dg_rply_file_close(&f);
    free(file);
    return 0;
}
