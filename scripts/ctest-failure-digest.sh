#!/usr/bin/env bash
# After a failed ctest run: the lines that say why each failed test failed (gtest's failure
# messages, sanitizer reports, thrown errors), a bounded number per test, printed last. CI keeps
# only the end of a run's output, where ctest's own inline output of a failure is long gone.
#
#   scripts/ctest-failure-digest.sh BUILD_DIR
set -uo pipefail
build_dir=${1:?usage: ctest-failure-digest.sh BUILD_DIR}
failed="$build_dir/Testing/Temporary/LastTestsFailed.log"
log="$build_dir/Testing/Temporary/LastTest.log"
[ -s "$failed" ] && [ -f "$log" ] || exit 0
lines_per_test=60
tests_shown=5

echo "=== why the failed tests failed (at most $lines_per_test lines each; ctest's output above has all)"
cut -d: -f2- "$failed" | head -n "$tests_shown" | while IFS= read -r name; do
  echo "--- $name"
  # The test's own output in LastTest.log: from its "Test: NAME" line to its "<end of output>".
  awk -v name="$name" '
    $0 ~ /^[0-9]+\/[0-9]+ Test: / { sub(/^[0-9]+\/[0-9]+ Test: /, ""); inside = ($0 == name); next }
    inside && /^<end of output>/ { inside = 0 }
    inside { print }' "$log" |
    grep -E -A4 '(Failure$|^\[  FAILED  \]|ERROR: |SUMMARY: |runtime error|what\(\)|[Tt]imeout|did not)' |
    awk '!seen[$0]++' | head -n "$lines_per_test"  # a message repeated by later tests once
done
