#!/usr/bin/env bash
# Runs one libFuzzer target for a fixed time with the project's options: the committed seed
# corpus (fuzz/corpus/<target>/, read only), a working corpus that keeps what the runs find
# (WORK_DIR/<target>/, outside the source tree), the frames dictionary, crash artifacts in
# WORK_DIR/artifacts/, a 10 s per-input timeout and a 2 GB memory limit. Both the ctest smoke
# runs (fuzz/CMakeLists.txt) and scripts/fuzz.sh call it, so they run the same thing.
#
# Usage: run_target.sh BINARY SECONDS MAX_LEN WORK_DIR [extra libFuzzer options...]
# Exit status: libFuzzer's (0 = no finding; a finding prints the artifact's path).
set -euo pipefail
if [ $# -lt 4 ]; then
  echo "usage: $0 BINARY SECONDS MAX_LEN WORK_DIR [libFuzzer options...]" >&2
  exit 2
fi
binary=$1 seconds=$2 max_len=$3 work=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
name=$(basename "$binary")
mkdir -p "$work/$name" "$work/artifacts"
# Symbolized stack traces in reports (Debian's llvm-14 ships only the versioned name).
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && command -v llvm-symbolizer-14 >/dev/null; then
  export ASAN_SYMBOLIZER_PATH UBSAN_SYMBOLIZER_PATH
  ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer-14)
  UBSAN_SYMBOLIZER_PATH=$ASAN_SYMBOLIZER_PATH
fi
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export DSEKP_FUZZ_STATS=1  # the scripted targets print what they reached at exit
exec "$binary" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -dict="$here/frames.dict" -artifact_prefix="$work/artifacts/$name-" \
  "$@" "$work/$name" "$here/corpus/$name"
