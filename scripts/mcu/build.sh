#!/usr/bin/env bash
# Cross-builds the DSEKP device path and the QEMU test programs (firmware/mcu) for each target.
# Fails with the packages to install if a toolchain is missing; fetches the mbedTLS source
# package once (fetch-mbedtls.sh) into OUT_DIR/src.
#
# Usage: build.sh OUT_DIR [TARGET...]     targets: cortex-m4 rv32imac (default: both)
# Result: OUT_DIR/<target>/{kat,golden,cost,sdk_image}.elf, their .map files, and the .su/.ci
# stack files next to the objects. DSEKP_MCU_JOBS sets the build parallelism (default 2).
set -euo pipefail
source "$(dirname "$0")/common.sh"

out=${1:?usage: build.sh OUT_DIR [TARGET...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${DSEKP_MCU_TARGETS[@]}")
for target in "${targets[@]}"; do mcu_require_toolchain "$target"; done

mkdir -p "$out"
out=$(cd "$out" && pwd)
mbedtls_src=$("$DSEKP_ROOT/scripts/mcu/fetch-mbedtls.sh" "$out/src")
# jsmn.h alone in its own directory: adding /usr/include to a cross build would pull in the
# host's C library headers.
mkdir -p "$out/jsmn"
cp -f /usr/include/jsmn.h "$out/jsmn/jsmn.h"

for target in "${targets[@]}"; do
  dir="$out/$target"
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S "$DSEKP_ROOT/firmware/mcu" -B "$dir" -G Ninja \
      -DCMAKE_TOOLCHAIN_FILE="$(mcu_toolchain_file "$target")" \
      -DDSEKP_MBEDTLS_SRC="$mbedtls_src" -DDSEKP_JSMN_INCLUDE="$out/jsmn" >"$out/$target-configure.log" 2>&1 ||
      { cat "$out/$target-configure.log" >&2; mcu_die "configuring the $target build failed"; }
  fi
  echo "mcu: building $target" >&2
  cmake --build "$dir" -j "${DSEKP_MCU_JOBS:-2}" || mcu_die "the $target build failed"
done
