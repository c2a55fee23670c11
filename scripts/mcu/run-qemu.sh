#!/usr/bin/env bash
# Runs one bare-metal program of firmware/mcu under QEMU with semihosting: its output on stdout,
# QEMU's exit code = the program's exit code (it ends with exit()). A hung program is killed
# after DSEKP_QEMU_TIMEOUT seconds (default 60) and reported as exit code 124.
#
# Usage: run-qemu.sh TARGET PROGRAM.elf [--icount]
#   cortex-m4: qemu-system-arm -M mps2-an386;   rv32imac: qemu-system-riscv32 -M virt -bios none
#   --icount: deterministic instruction counting for cost.elf (board.h): shift 7 on Cortex-M4
#   (SysTick at 25 MHz then ticks 3.2 times per instruction), shift 0 on RISC-V (instret).
set -euo pipefail
source "$(dirname "$0")/common.sh"

target=${1:?usage: run-qemu.sh TARGET PROGRAM.elf [--icount]}
elf=${2:?usage: run-qemu.sh TARGET PROGRAM.elf [--icount]}
icount=()
if [ "${3:-}" = --icount ]; then
  case "$target" in
    cortex-m4) icount=(-icount shift=7) ;;
    rv32imac) icount=(-icount shift=0) ;;
  esac
fi
[ -f "$elf" ] || mcu_die "no such program: $elf (run scripts/mcu/build.sh first)"
qemu=$(mcu_qemu "$target")
command -v "$qemu" >/dev/null || mcu_die "$qemu is missing: apt-get install $(mcu_packages "$target")"

case "$target" in
  cortex-m4) machine=(-M mps2-an386) ;;
  rv32imac) machine=(-M virt -bios none) ;;
  *) mcu_die "unknown target '$target'" ;;
esac
exec timeout "${DSEKP_QEMU_TIMEOUT:-60}" "$qemu" "${machine[@]}" -display none -monitor none \
  -serial none -chardev stdio,id=semihost \
  -semihosting-config enable=on,target=native,chardev=semihost "${icount[@]}" -kernel "$elf"
