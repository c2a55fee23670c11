/* Board support for QEMU virt (rv32imac): the instret CSR as the counter (see board.h). */
#include "board.h"

void board_counter_start(void) {}

uint32_t board_counter_read(void) {
  uint32_t v;
  /* GCC 12 with a newer assembler wants Zicsr spelled out; -march stays rv32imac so that the
   * picolibc multilib of that name is the one linked. */
  __asm__ volatile(".option push\n\t.option arch, +zicsr\n\tcsrr %0, instret\n\t.option pop"
                   : "=r"(v));
  return v;
}

uint32_t board_counter_elapsed(uint32_t start, uint32_t end) {
  return end - start;
}

const char* board_counter_unit(void) {
  return "instret";
}

uintptr_t board_stack_pointer(void) {
  uintptr_t sp;
  __asm__ volatile("mv %0, sp" : "=r"(sp));
  return sp;
}
