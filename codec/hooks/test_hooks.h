/* codec/hooks/test_hooks.h — the codec's fault hooks, for detgate's own tests and its `--replay-fault`
 * flag: not an installed header and not part of the public API (include/detgate/flrep.h). The
 * symbols are in the library because the CLI uses them; an engine has no declaration of them. */
#ifndef DETGATE_CODEC_TEST_HOOKS_H
#define DETGATE_CODEC_TEST_HOOKS_H

#include <stdint.h>

#include "detgate/flrep.h"

/* Test-only fault hook: when set, the reader applies the DELTA records of tick `tick` twice.
 * Exists so the harness's tests can prove verify catches a replay-side codec fault. */
void dg_flrep__reader_set_fault_double_delta(dg_flrep_reader *r, uint64_t tick);
/* Test-only fault hook on the writer: its self-check (each DELTA record rebuilt with the decoder's own
 * arithmetic) reports a mismatch at the first non-keyframe tick >= `tick`, as a delta the decoder
 * applies twice would make it. Exists so the harness's tests can prove a recording this build cannot
 * read back is a failure, not an untested run. In format 2.0 the self-check really applies each
 * DELTA record twice from that tick on (extra fields included), so the mismatch is reported at the
 * first DELTA record whose second application changes the state or an extra field. */
void dg_flrep__writer_set_fault_self_check(dg_flrep_writer *w, uint64_t tick);
/* Test-only fault hook on the seek path only: a seek whose target is `tick` drops the delta of
 * tick - 1 from its roll-forward, so the world it hands over (and tick's state, rebuilt on it) is one
 * delta stale. Linear playback is untouched; no effect when tick opens a chunk (a keyframe needs no
 * roll-forward). Exists so the harness's tests can prove the seek-consistency check fails. */
void dg_flrep__reader_set_fault_seek_drop_delta(dg_flrep_reader *r, uint64_t tick);

#endif
