/* Board support of the QEMU test programs: an instruction-exact counter and the end of a run.
 *
 * The counter reads a hardware counter that QEMU drives from its instruction count when run
 * with -icount (scripts/mcu/run-qemu.sh --icount): on RISC-V the instret CSR (one count per
 * retired instruction, icount shift 0); on Cortex-M4 the SysTick down-counter on the 25 MHz CPU
 * clock of mps2-an386 (icount shift 7: 128 ns of virtual time per instruction, so a tick is
 * 40/128 instruction and the host converts; scripts/mcu/cost_report.py). Without -icount the
 * values follow host time and mean nothing. */
#ifndef DSEKP_MCU_BOARD_H
#define DSEKP_MCU_BOARD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Starts the counter (SysTick: free-running, no interrupt). */
void board_counter_start(void);
/** Raw counter value. */
uint32_t board_counter_read(void);
/** Raw units elapsed from `start` to `end` (handles the direction and the wrap of the counter:
 *  SysTick wraps every 2^24 ticks, so a measured span must stay below that). */
uint32_t board_counter_elapsed(uint32_t start, uint32_t end);
/** Name of the counter's raw unit, printed with every measurement ("systick" or "instret"). */
const char* board_counter_unit(void);
/** Current stack pointer (for the stack high-water measurement). */
uintptr_t board_stack_pointer(void);

#ifdef __cplusplus
}
#endif

#endif /* DSEKP_MCU_BOARD_H */
