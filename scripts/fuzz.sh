#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang) and runs them (`make fuzz`).
#
#   scripts/fuzz.sh [TARGET...]   run each target (default: all) for FUZZ_SECONDS, one after the
#                                 other, then print executions, coverage and findings per target
#   scripts/fuzz.sh --smoke       the short smoke runs that `make test` uses: the ctest tests of
#                                 the fuzz build (label `fuzz`), FUZZ_SMOKE_SECONDS each, JOBS at once
#   scripts/fuzz.sh --build       build only
#   scripts/fuzz.sh --coverage    line coverage (llvm-cov) of what the corpora (the committed
#                                 seeds plus everything earlier runs kept) execute: builds the
#                                 targets once more with source-based coverage in
#                                 FUZZ_BUILD_DIR/coverage and writes report.txt there
#
#   FUZZ_SECONDS        run time per target (default 60)
#   FUZZ_SMOKE_SECONDS  run time per target of --smoke (default 20)
#   FUZZ_BUILD_DIR      build directory (default build-fuzz)
#   FUZZ_CC / FUZZ_CXX  clang (default clang-14 / clang++-14)
#   JOBS                parallel compile jobs and smoke runs (default 2)
#
# What the runs find is kept in FUZZ_BUILD_DIR/work/<target>/ (the committed seed corpora in
# fuzz/corpus/ are only read); a crash, leak, sanitizer report or property violation leaves its
# input in FUZZ_BUILD_DIR/work/artifacts/ and makes this script fail. Reproduce one with
#   FUZZ_BUILD_DIR/bin/<target> FUZZ_BUILD_DIR/work/artifacts/<target>-crash-...
set -euo pipefail
cd "$(dirname "$0")/.."

mode=run
case "${1:-}" in
  --smoke) mode=smoke; shift ;;
  --build) mode=build; shift ;;
  --coverage) mode=coverage; shift ;;
  -h | --help) sed -n '2,24p' "$0"; exit 0 ;;
esac
build_dir=${FUZZ_BUILD_DIR:-build-fuzz}
cc=${FUZZ_CC:-clang-14}
cxx=${FUZZ_CXX:-clang++-14}
jobs=${JOBS:-2}
seconds=${FUZZ_SECONDS:-60}
smoke_seconds=${FUZZ_SMOKE_SECONDS:-20}

for tool in "$cc" "$cxx"; do
  if ! command -v "$tool" >/dev/null; then
    echo "fuzz: $tool not found (apt-get install clang-14 libclang-rt-14-dev llvm-14)" >&2
    exit 2
  fi
done

cmake -S fuzz -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DDSEKP_FUZZ_SMOKE_SECONDS="$smoke_seconds" >/dev/null
cmake --build "$build_dir" -j "$jobs"

case $mode in
  build) exit 0 ;;
  smoke) cd "$build_dir" && exec ctest --output-on-failure -j "$jobs" -L fuzz ;;
  coverage)
    cov="$build_dir/coverage"
    cmake -S fuzz -B "$cov" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDSEKP_FUZZ_COVERAGE=ON \
      -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
    cmake --build "$cov" -j "$jobs"
    rm -rf "$cov/profiles"
    mkdir -p "$cov/profiles" "$build_dir/work"
    objects=()
    while read -r name _ binary; do
      mkdir -p "$build_dir/work/$name"
      # -runs=0: execute every input of both corpora once, find nothing new, write nothing.
      LLVM_PROFILE_FILE="$cov/profiles/$name.profraw" "$binary" -runs=0 \
        "$build_dir/work/$name" "fuzz/corpus/$name" >"$cov/profiles/$name.log" 2>&1
      objects+=(-object "$binary")
    done <"$cov/fuzz_targets.txt"
    llvm-profdata-14 merge -sparse "$cov"/profiles/*.profraw -o "$cov/merged.profdata"
    llvm-cov-14 report -instr-profile="$cov/merged.profdata" "${objects[@]:1}" \
      -ignore-filename-regex='(^/usr/|/fuzz/|/tests/)' | tee "$cov/report.txt"
    echo "fuzz: coverage report in $cov/report.txt"
    exit 0
    ;;
esac

work="$build_dir/work"
mkdir -p "$work/logs"
targets_file="$build_dir/fuzz_targets.txt"
for wanted in "$@"; do
  if ! grep -q "^$wanted " "$targets_file"; then
    echo "fuzz: no target $wanted (targets: $(cut -d' ' -f1 "$targets_file" | tr '\n' ' '))" >&2
    exit 2
  fi
done
selected() {
  [ $# -eq 1 ] && return 0  # no names given: every target
  local name=$1
  shift
  for wanted in "$@"; do [ "$wanted" = "$name" ] && return 0; done
  return 1
}
status=0
summary=()
while read -r name max_len binary; do
  [ -n "$name" ] || continue
  selected "$name" "$@" || continue
  log="$work/logs/$name.log"
  echo "fuzz: $name for ${seconds} s (log: $log)"
  result=ok
  if ! fuzz/run_target.sh "$binary" "$seconds" "$max_len" "$work" >"$log" 2>&1; then
    result="FINDING: $(grep -m1 -oE 'Test unit written to .*' "$log" || echo 'see the log')"
    status=1
  fi
  runs=$(grep -m1 -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')
  rate=$(grep -m1 -oE 'stat::average_exec_per_sec: +[0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' <<<"$last" | grep -oE '[0-9]+' || echo '?')
  ft=$(grep -oE 'ft: [0-9]+' <<<"$last" | grep -oE '[0-9]+' || echo '?')
  corp=$(grep -oE 'corp: [0-9]+' <<<"$last" | grep -oE '[0-9]+' || echo '?')
  summary+=("$(printf '%-22s %12s %9s %6s %7s %7s  %s' "$name" "$runs" "$rate" "$cov" "$ft" "$corp" "$result")")
  grep -E 'reached:|outcomes:|refusals:' "$log" || true
done <"$targets_file"

printf '\n%-22s %12s %9s %6s %7s %7s  %s\n' target executions exec/s cov ft corpus result
printf '%s\n' "${summary[@]}"
echo "fuzz: ${seconds} s per target; load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
