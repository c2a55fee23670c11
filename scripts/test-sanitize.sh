#!/usr/bin/env bash
# Builds the whole test suite with AddressSanitizer + UndefinedBehaviorSanitizer and runs it with
# ctest (`make test-sanitize`). Any sanitizer report fails the test that triggered it: UBSan does
# not recover (-fno-sanitize-recover=all) and ASan aborts on its first error.
#
#   SANITIZE_BUILD_DIR  build directory (default build-asan)
#   SANITIZE_CC / SANITIZE_CXX  compilers (default clang-14 / clang++-14; gcc works too)
#   JOBS                parallel compile jobs (default 2)
#   TEST_JOBS           parallel test processes (default 4: the tests mostly wait)
#   CTEST_ARGS          extra ctest arguments (e.g. "-R codec")
#
# vptr is off: the core and the mbedTLS backend are built without RTTI, which that check needs.
# Every test runs, including the ones that start Mosquitto, `dsekp` child processes (sanitized
# too) and the nm-based device-path checks (they pass on the instrumented libraries), except:
#   clang_format_check   checks source formatting; it runs no compiled code, and `make test`
#                        already runs it.
#   mcu.build, mcu.package, mcu.cortex-m4.*, mcu.rv32imac.*
#                        the firmware cross-builds and their runs under QEMU: compiled by
#                        arm-none-eabi / riscv64-unknown-elf gcc, which have no sanitizers. The
#                        host tests of the SDK (mcu.sdk.*) do run.
# (The linkemu.LinkMeasure.* measurements are DISABLED_ in every build.)
# docs/RELIABILITY.md, "Fuzzing and sanitizers", has the results.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${SANITIZE_BUILD_DIR:-build-asan}
cc=${SANITIZE_CC:-clang-14}
cxx=${SANITIZE_CXX:-clang++-14}
jobs=${JOBS:-2}
test_jobs=${TEST_JOBS:-4}  # the tests mostly wait (Makefile: TEST_JOBS)
# -O1 and line tables only: about half the compile time of RelWithDebInfo (-O2 -g), and still
# file:line in every report; the sanitizers do not need more.
flags="-O1 -gline-tables-only -fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=all -fno-omit-frame-pointer"
# Left out besides formatting and the MCU cross-builds: `bench scale --cluster`'s end-to-end run,
# whose C++ beyond the bench's own (the edges on AMQP and the cluster store) the RabbitMQ and
# Redis Cluster suites run here already; it would add about a minute to the RabbitMQ programs
# that run one after the other.
exclude='^(clang_format_check|bench_e2e\.scale_cluster|mcu\.(build|package|cortex-m4\..*|rv32imac\..*))$'

bash scripts/install-deps.sh
for tool in "$cc" "$cxx"; do
  if ! command -v "$tool" >/dev/null; then
    echo "test-sanitize: $tool not found (install clang-14, or set SANITIZE_CC/SANITIZE_CXX)" >&2
    exit 2
  fi
done

# A cache made with other compilers cannot be switched in place: start that directory afresh.
cache="$build_dir/CMakeCache.txt"
configured=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$cache" 2>/dev/null || true)
if [ -f "$cache" ] && [ "$configured" != "$cxx" ] && [ "$configured" != "$(command -v "$cxx")" ]; then
  echo "test-sanitize: $build_dir was configured with another compiler; reconfiguring"
  rm -rf "$cache" "$build_dir/CMakeFiles"
fi

start=$(date +%s)
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE= \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" -DDSEKP_PACKAGING=OFF >/dev/null
cmake --build "$build_dir" -j "$jobs"
built=$(date +%s)

# Symbolized stack traces in reports (Debian's llvm-14 ships only the versioned name).
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && command -v llvm-symbolizer-14 >/dev/null; then
  export ASAN_SYMBOLIZER_PATH UBSAN_SYMBOLIZER_PATH
  ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer-14)
  UBSAN_SYMBOLIZER_PATH=$ASAN_SYMBOLIZER_PATH
fi
# abort_on_error: a report ends the process with SIGABRT, which ctest shows as a failure.
# detect_leaks: LeakSanitizer runs at every test process's exit.
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
status=0
# shellcheck disable=SC2086
(cd "$build_dir" && ctest --output-on-failure -j "$test_jobs" -E "$exclude" ${CTEST_ARGS:-}) ||
  status=$?
[ "$status" -eq 0 ] || bash scripts/ctest-failure-digest.sh "$build_dir"
end=$(date +%s)
echo "test-sanitize: build $((built - start)) s, tests $((end - built)) s," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
