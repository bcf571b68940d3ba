#!/bin/bash -eu
# .clusterfuzzlite/build.sh — ClusterFuzzLite's entry point: the in-repo script does the work
# ($CC $CFLAGS $LIB_FUZZING_ENGINE $OUT are set by the builder; zstd and xxHash are in $SRC).
"$SRC/detgate/fuzz/oss-fuzz-build.sh"
