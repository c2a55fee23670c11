# Shared definitions of the MCU scripts (sourced, not run): the targets, the Debian packages each
# needs, and a check that fails with the exact apt-get line when a tool is missing.
# shellcheck shell=bash

DSEKP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DSEKP_MCU_TARGETS=(cortex-m4 rv32imac)

mcu_die() { echo "mcu: error: $*" >&2; exit 1; }

# Debian packages behind each target's build and run.
mcu_packages() {
  case "$1" in
    cortex-m4) echo "gcc-arm-none-eabi picolibc-arm-none-eabi libstdc++-arm-none-eabi-dev qemu-system-arm" ;;
    rv32imac) echo "gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf libstdc++-arm-none-eabi-dev qemu-system-misc" ;;
    *) mcu_die "unknown target '$1' (known: ${DSEKP_MCU_TARGETS[*]})" ;;
  esac
}

mcu_toolchain_file() {
  case "$1" in
    cortex-m4) echo "$DSEKP_ROOT/cmake/toolchains/arm-cortex-m4.cmake" ;;
    rv32imac) echo "$DSEKP_ROOT/cmake/toolchains/riscv32-imac.cmake" ;;
    *) mcu_die "unknown target '$1'" ;;
  esac
}

mcu_qemu() {
  case "$1" in
    cortex-m4) echo qemu-system-arm ;;
    rv32imac) echo qemu-system-riscv32 ;;
  esac
}

# Fails (never skips) when something a target needs is absent, naming the packages to install.
mcu_require_toolchain() {
  local target=$1 missing=()
  local cc=arm-none-eabi-gcc specs=/usr/lib/picolibc/arm-none-eabi/picolibc.specs
  if [ "$target" = rv32imac ]; then
    cc=riscv64-unknown-elf-gcc
    specs=/usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs
  fi
  command -v "$cc" >/dev/null || missing+=("$cc")
  [ -f "$specs" ] || missing+=("$specs (picolibc)")
  [ -f /usr/include/newlib/c++/12.2.1/span ] || missing+=("C++ headers (libstdc++-arm-none-eabi-dev)")
  command -v "$(mcu_qemu "$target")" >/dev/null || missing+=("$(mcu_qemu "$target")")
  for tool in cmake ninja python3; do command -v "$tool" >/dev/null || missing+=("$tool"); done
  [ -f /usr/include/jsmn.h ] || missing+=("/usr/include/jsmn.h (libjsmn-dev)")
  command -v dpkg-source >/dev/null || missing+=("dpkg-source (dpkg-dev)")
  if [ ${#missing[@]} -gt 0 ]; then
    mcu_die "the $target toolchain is incomplete, missing: ${missing[*]}.
Install with: apt-get install $(mcu_packages "$target") dpkg-dev libjsmn-dev cmake ninja-build python3"
  fi
}
