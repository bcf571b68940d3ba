/* codec/flrep/flrep_chunk.c — chunk framing, the zstd layer and the index trailer
 * (docs/FORMAT-flrep.md §5 and §8). */
#include "flrep_internal.h"

#define XXH_INLINE_ALL
#include <xxhash.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <string.h>

/* Integrity checks can be bypassed only in a fuzzing build, so the fuzzer reaches what is behind
 * them; a production build always verifies. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define FLREP_VERIFY_CHECKS 0
#else
#define FLREP_VERIFY_CHECKS 1
#endif

void dg_flrep__chunk_where(char *buf, size_t cap, size_t chunk_no, const flrep_chunk_hdr *h)
{
    snprintf(buf, cap, "chunk %zu (ticks %llu..%llu)", chunk_no, (unsigned long long)h->first_tick,
             (unsigned long long)h->last_tick);
}

void dg_flrep__chunk_hdr_encode(uint8_t out[FLREP_CHUNK_HDR_SIZE], const flrep_chunk_hdr *h)
{
    memcpy(out, "FLCK", 4);
    dg_put_le32(out + 4, h->tick_count);
    dg_put_le64(out + 8, h->first_tick);
    dg_put_le64(out + 16, h->last_tick);
    dg_put_le32(out + 24, h->compressed_size);
    dg_put_le32(out + 28, h->decompressed_size);
    dg_put_le32(out + 32, (uint32_t)XXH3_64bits(out, 32));
}

dg_status dg_flrep__chunk_hdr_parse(const uint8_t in[FLREP_CHUNK_HDR_SIZE], uint64_t offset, uint64_t bytes_left,
                                uint32_t keyframe_interval, uint32_t cap, flrep_chunk_hdr *h, dg_error *err)
{
    const char *where = "chunk framing";
    if (memcmp(in, "FLCK", 4) != 0)
        return dg_error_set(err, DG_E_MAGIC, offset, where, "expected magic \"FLCK\", found %02X %02X %02X %02X",
                            in[0], in[1], in[2], in[3]);
    uint32_t check = dg_le32(in + 32), want = (uint32_t)XXH3_64bits(in, 32);
    if (FLREP_VERIFY_CHECKS && check != want)
        return dg_error_set(err, DG_E_CHECKSUM, offset + 32, where, "expected headerCheck %08X, found %08X", want,
                            check);
    h->tick_count = dg_le32(in + 4);
    h->first_tick = dg_le64(in + 8);
    h->last_tick = dg_le64(in + 16);
    h->compressed_size = dg_le32(in + 24);
    h->decompressed_size = dg_le32(in + 28);
    if (h->tick_count == 0)
        return dg_error_set(err, DG_E_MALFORMED, offset + 4, where, "expected tickCount >= 1, found 0");
    if (h->last_tick < h->first_tick || h->last_tick - h->first_tick >= keyframe_interval ||
        h->last_tick - h->first_tick + 1 < h->tick_count)
        return dg_error_set(err, DG_E_MALFORMED, offset + 8, where,
                            "expected %u ticks within one keyframe interval (%u) from tick %llu, found ticks %llu..%llu",
                            h->tick_count, keyframe_interval, (unsigned long long)h->first_tick,
                            (unsigned long long)h->first_tick, (unsigned long long)h->last_tick);
    if (h->compressed_size == 0 || h->compressed_size > bytes_left)
        return dg_error_set(err, DG_E_TRUNCATED, offset + 24, where,
                            "expected compressedSize in 1..%llu (the bytes left), found %u",
                            (unsigned long long)bytes_left, h->compressed_size);
    if (h->decompressed_size > cap)
        return dg_error_set(err, DG_E_LIMIT, offset + 28, where,
                            "expected decompressedSize <= the cap of %u bytes, found %u", cap, h->decompressed_size);
    if ((uint64_t)h->decompressed_size < (uint64_t)h->tick_count * FLREP_TICK_HDR_SIZE)
        return dg_error_set(err, DG_E_MALFORMED, offset + 28, where,
                            "expected decompressedSize >= %llu for %u ticks, found %u",
                            (unsigned long long)h->tick_count * FLREP_TICK_HDR_SIZE, h->tick_count,
                            h->decompressed_size);
    return DG_OK;
}

dg_status dg_flrep__chunk_decompress(void *dctx, const uint8_t *src, const flrep_chunk_hdr *h, uint8_t *out,
                                 uint64_t offset, dg_error *err)
{
    const char *where = "chunk frame";
    uint64_t frame_at = offset + FLREP_CHUNK_HDR_SIZE;
    /* Frame header per RFC 8878 §3.1.1: magic, then the descriptor whose bit 2 is the
     * Content_Checksum_flag. Parsed by hand to stay on zstd's stable API. */
    if (h->compressed_size < 6 || dg_le32(src) != 0xFD2FB528u)
        return dg_error_set(err, DG_E_COMPRESS, frame_at, where, "expected a zstd frame (magic 28 B5 2F FD), found %s",
                            h->compressed_size < 6 ? "fewer than 6 bytes" : "another magic");
    unsigned long long declared = ZSTD_getFrameContentSize(src, h->compressed_size);
    if (declared != h->decompressed_size)
        return dg_error_set(err, DG_E_MALFORMED, frame_at, where,
                            "expected the frame to declare %u content bytes, found %s%llu", h->decompressed_size,
                            declared >= ZSTD_CONTENTSIZE_ERROR ? "no usable size: " : "", declared);
    if (FLREP_VERIFY_CHECKS && !(src[4] & 0x04))
        return dg_error_set(err, DG_E_MALFORMED, frame_at + 4, where, "expected a content checksum, found none");
    size_t got = ZSTD_decompressDCtx((ZSTD_DCtx *)dctx, out, h->decompressed_size, src, h->compressed_size);
    if (ZSTD_isError(got))
        return dg_error_set(err, ZSTD_getErrorCode(got) == ZSTD_error_checksum_wrong ? DG_E_CHECKSUM : DG_E_COMPRESS,
                            frame_at, where, "expected a valid zstd frame of %u bytes, found: %s",
                            h->compressed_size, ZSTD_getErrorName(got));
    if (got != h->decompressed_size)
        return dg_error_set(err, DG_E_MALFORMED, frame_at, where, "expected %u decompressed bytes, found %zu",
                            h->decompressed_size, got);
    return DG_OK;
}

dg_status dg_flrep__chunk_validate(const uint8_t *content, const flrep_chunk_hdr *h, uint64_t offset, size_t chunk_no,
                               const flrep_tick_ctx *ctx, flrep_world *world, flrep_tick_scratch *s, dg_error *err)
{
    char where[96];
    dg_flrep__chunk_where(where, sizeof where, chunk_no, h);
    dg_cur c;
    dg_cur_init(&c, content, h->decompressed_size, 0, where, err);
    uint64_t prev = 0;
    for (uint32_t i = 0; i < h->tick_count; i++) {
        uint64_t tick;
        bool kf;
        const dg_event *ev;
        size_t nev;
        dg_status st = dg_flrep__decode_tick(&c, i, ctx, world, s, &tick, &kf, &ev, &nev, err);
        if (st != DG_OK)
            return st;
        bool order_ok = i == 0 ? tick == h->first_tick : tick > prev;
        if (!order_ok || tick > h->last_tick || (i + 1 == h->tick_count && tick != h->last_tick))
            return dg_error_set(err, DG_E_MALFORMED, DG_OFFSET_NONE, where,
                                "tick %u of %u: expected a tick index %s within %llu..%llu, found %llu", i + 1,
                                h->tick_count, i == 0 ? "equal to firstTick" : "increasing",
                                (unsigned long long)h->first_tick, (unsigned long long)h->last_tick,
                                (unsigned long long)tick);
        prev = tick;
    }
    (void)offset;
    if (c.pos != c.len)
        return dg_error_set(err, DG_E_MALFORMED, c.pos, where,
                            "expected the content to end after %u ticks, found %zu more bytes", h->tick_count,
                            c.len - c.pos);
    return DG_OK;
}

void dg_flrep__trailer_encode(dg_buf *out, const dg_flrep_chunk_info *chunks, size_t n, uint64_t table_offset)
{
    size_t start = out->len;
    uint64_t ticks = 0;
    for (size_t i = 0; i < n; i++)
        ticks += chunks[i].tick_count;
    dg_buf_put(out, "FLIX", 4);
    dg_buf_u32(out, (uint32_t)n);
    dg_buf_u64(out, n ? chunks[0].first_tick : 0);
    dg_buf_u64(out, n ? chunks[n - 1].last_tick : 0);
    dg_buf_u64(out, ticks);
    for (size_t i = 0; i < n; i++) {
        dg_buf_u64(out, chunks[i].first_tick);
        dg_buf_u64(out, chunks[i].offset);
    }
    if (out->ok)
        dg_buf_u64(out, XXH3_64bits(out->p + start, out->len - start));
    dg_buf_u64(out, table_offset);
}
