/* Board support for QEMU mps2-an386 (Cortex-M4): SysTick as the counter (see board.h). */
#include "board.h"

#define SYST_CSR (*(volatile uint32_t*)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t*)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t*)0xE000E018u)

void board_counter_start(void) {
  SYST_CSR = 0;
  SYST_RVR = 0x00FFFFFFu; /* full 24-bit range */
  SYST_CVR = 0;           /* any write clears it; it reloads on the next tick */
  SYST_CSR = 0x5u;        /* ENABLE | CLKSOURCE = processor clock, no interrupt */
}

uint32_t board_counter_read(void) {
  return SYST_CVR;
}

uint32_t board_counter_elapsed(uint32_t start, uint32_t end) {
  return (start - end) & 0x00FFFFFFu; /* counts down */
}

const char* board_counter_unit(void) {
  return "systick";
}

uintptr_t board_stack_pointer(void) {
  uintptr_t sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  return sp;
}
