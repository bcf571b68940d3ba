/* fuzz/flrep_sections.c — target: the section list (any order, duplicates, the camera track, unknown
 * ids skipped by length, the end marker) through the public reader. The input follows a fixed valid
 * header (the fixture's), so every mutation lands in the sections. */
#include "fuzz_common.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    dg_fuzz_fixture_get();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t hl = dg_fuzz_fixture_get()->layout.header_end, len;
    uint8_t *file;
    dg_flrep_reader *r;
    dg_error err;
    dg_status st = dg_fuzz_open_behind_prefix(hl, data, size, false, &file, &len, &r, &err);
    if (st != DG_OK) {
        dg_fuzz_check_error(st, &err, len);
        FUZZ_ASSERT(r == NULL, "%s", "a failed open handed out a reader");
    } else {
        dg_fuzz_check_reader_info(r, len);
        const dg_flrep_header *h = dg_flrep_reader_header(r);
        const dg_flrep_file_info *fi = dg_flrep_reader_info(r);
        int seen[5] = {0};
        for (size_t i = 0; i < fi->section_count; i++) {
            const dg_flrep_section_info *s = &fi->sections[i];
            FUZZ_ASSERT(s->offset >= hl + 6 && s->offset + s->length <= fi->data_start, "section %zu out of place", i);
            if (s->id <= 4)
                FUZZ_ASSERT(++seen[s->id] == 1, "section 0x%04X accepted twice", s->id);
        }
        FUZZ_ASSERT(seen[1] && seen[2] && seen[3], "%s", "a required section is missing but the file opened");
        for (size_t i = 0; i < h->type_count; i++)
            FUZZ_ASSERT(dg_utf8_valid((const uint8_t *)h->types[i].id.s, h->types[i].id.len), "%s", "type id");
        dg_flrep_reader_close(r);
    }
    free(file);
    return 0;
}
