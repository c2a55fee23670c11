# Cross toolchain: 32-bit RISC-V rv32imac/ilp32 (the nearest picolibc multilib to the ESP32-C3's
# rv32imc), riscv64-unknown-elf-gcc with picolibc, for the MCU builds in firmware/mcu
# (scripts/mcu/build.sh). Debian: gcc-riscv64-unknown-elf, picolibc-riscv64-unknown-elf.
#
# Debian ships no libstdc++ for riscv64-unknown-elf. The core needs only header-only parts of it
# (<span>, <array>, <string_view>, <algorithm>, <new>), which are target-independent templates:
# they are taken from libstdc++-arm-none-eabi-dev, with that package's Cortex-M bits/c++config.h
# (same 32-bit ILP32 data model; no libstdc++ or libsupc++ code is linked on this target).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-g++)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(DSEKP_MCU_TARGET rv32imac)
set(DSEKP_MCU_ARCH_FLAGS -march=rv32imac -mabi=ilp32)
# QEMU's virt board loads the ELF into RAM at 0x80000000 (-bios none); "flash" is RAM there.
set(DSEKP_MCU_LINK_DEFSYMS
  __flash=0x80000000 __flash_size=0x00400000 __ram=0x80400000 __ram_size=0x00400000)
set(DSEKP_LIBSTDCXX_HEADERS /usr/include/newlib/c++/12.2.1)
set(DSEKP_MCU_CXX_INCLUDES
  ${DSEKP_LIBSTDCXX_HEADERS} ${DSEKP_LIBSTDCXX_HEADERS}/arm-none-eabi/thumb/v7e-m/nofp)

foreach(lang C CXX ASM)
  set(CMAKE_${lang}_FLAGS_INIT "-march=rv32imac -mabi=ilp32 --specs=picolibc.specs")
endforeach()
set(CMAKE_EXE_LINKER_FLAGS_INIT "--oslib=semihost")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
