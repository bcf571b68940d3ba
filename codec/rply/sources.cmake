# codec/rply/sources.cmake — the RPLY v3 codec's sources, relative to codec/ (included by codec/CMakeLists.txt).
set(DG_RPLY_SOURCES
  rply/rply_read.c
  rply/rply_state.c
  rply/rply_player.c
  rply/rply_snapshot.c
  rply/rply_write.c
)
