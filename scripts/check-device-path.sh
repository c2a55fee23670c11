#!/usr/bin/env bash
# Checks that the device-path libraries (the protocol core and the mbedTLS backend), which are
# compiled with -fno-exceptions -fno-rtti, reference no heap allocator, no exception machinery and
# no RTTI, and no libstdc++ helper that throws (std::__throw_*, e.g. from string_view::substr).
# A reference is enough to fail: on an MCU it would pull in malloc or the unwinder.
# Usage: check-device-path.sh LIB.a [LIB.a ...]
set -euo pipefail

forbidden='^(_Znwm|_Znam|_ZnwmRKSt9nothrow_t|_ZdlPv|_ZdlPvm|_ZdaPv|malloc|calloc|realloc|free|aligned_alloc|posix_memalign|__cxa_throw|__cxa_allocate_exception|__cxa_begin_catch|__cxa_rethrow|__gxx_personality_v0|__dynamic_cast|_ZTI.*|_ZTS.*|_ZSt[0-9]+__throw_.*|_ZSt9terminatev|__cxa_end_catch|__cxa_get_exception_ptr)$'
status=0
for lib in "$@"; do
  undefined=$(nm --undefined-only --format=posix "$lib" 2>/dev/null | awk '{print $1}' | sort -u)
  bad=$(grep -E "$forbidden" <<<"$undefined" || true)
  if [ -n "$bad" ]; then
    echo "FAIL $lib references:"
    sed 's/^/  /' <<<"$bad"
    status=1
  else
    echo "ok   $lib: $(wc -l <<<"$undefined") undefined symbols, none of them heap, exceptions or RTTI"
  fi
done
exit $status
