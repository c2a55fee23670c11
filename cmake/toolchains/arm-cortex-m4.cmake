# Cross toolchain: Arm Cortex-M4 (Thumb-2, no FPU use), arm-none-eabi-gcc with picolibc, for the
# MCU builds in firmware/mcu (scripts/mcu/build.sh). Debian: gcc-arm-none-eabi,
# picolibc-arm-none-eabi, libstdc++-arm-none-eabi-dev (C++ headers only; no libstdc++ is linked).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# try_compile cannot link a bare-metal executable without a board: check compilers as libraries.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(DSEKP_MCU_TARGET cortex-m4)
set(DSEKP_MCU_ARCH_FLAGS -mcpu=cortex-m4 -mthumb -mfloat-abi=soft)
# Memory map of QEMU's mps2-an386 (Cortex-M4 FPGA image): 4 MB code SRAM at 0, 4 MB data SRAM.
set(DSEKP_MCU_LINK_DEFSYMS
  __flash=0x00000000 __flash_size=0x00400000 __ram=0x20000000 __ram_size=0x00400000)
set(DSEKP_MCU_CXX_INCLUDES "")

foreach(lang C CXX ASM)
  set(CMAKE_${lang}_FLAGS_INIT "-mcpu=cortex-m4 -mthumb -mfloat-abi=soft --specs=picolibc.specs")
endforeach()
set(CMAKE_EXE_LINKER_FLAGS_INIT "--oslib=semihost")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
