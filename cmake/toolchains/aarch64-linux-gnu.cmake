# Cross toolchain: the edge and the tools for 64-bit Arm Linux (the paper's Raspberry Pi 5, Debian
# arm64), with Debian's crossbuild-essential-arm64 and the arm64 (multiarch) -dev packages that
# scripts/install-deps.sh --arm64 installs. Binaries run here under qemu-user-static, which is
# how ctest runs the cross-built tests (scripts/test-arm64.sh).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# -L: the loader and libraries of the target, for the tests run by ctest and for the build's own
# uses of the built binary (man pages, completion).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L /usr/aarch64-linux-gnu)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)

# Multiarch: the target's libraries in /usr/lib/aarch64-linux-gnu, the headers (shared with the
# host's) in /usr/include.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# libsimdjson-dev is not co-installable for two architectures: the host's headers serve both
# (they do not depend on the architecture) and the arm64 shared library comes from libsimdjson14.
if(NOT EXISTS /usr/lib/aarch64-linux-gnu/libsimdjson.so)
  set(SIMDJSON_LIBRARY /usr/lib/aarch64-linux-gnu/libsimdjson.so.14 CACHE FILEPATH "")
endif()
