#!/usr/bin/env bash
# Fails if any tracked C++ file differs from what clang-format (.clang-format) would make of it.
# Fix with `make format`.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.cpp' '*.hpp' '*.h' 2>/dev/null || true)
if [ -z "$files" ]; then
  echo "check-format: not a git checkout, nothing to check"
  exit 0
fi
bad=$(clang-format --dry-run $files 2>&1 | grep -o '^[^:]*:[0-9]*:[0-9]*: warning' | cut -d: -f1 | sort -u || true)
if [ -n "$bad" ]; then
  echo "check-format: not clang-formatted (run make format):"
  echo "$bad" | sed 's/^/  /'
  exit 1
fi
echo "check-format: $(echo "$files" | wc -l) files formatted"
