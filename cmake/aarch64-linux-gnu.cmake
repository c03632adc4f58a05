# Cross build for aarch64 (DGX Spark's Grace CPU) on a Debian x86-64 host, using Debian's
# g++-aarch64-linux-gnu and multiarch :arm64 -dev packages (scripts/setup.sh --cross installs them).
#   cmake -S . -B build-aarch64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# Test programs run through qemu-aarch64 (CMAKE_CROSSCOMPILING_EMULATOR): CTest and
# gtest_discover_tests honour it, and tests/test_util.cc prefixes subprocesses with it.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Multiarch: the target's libraries live in /usr/lib/aarch64-linux-gnu of this very system, so there
# is no separate sysroot; CMAKE_LIBRARY_ARCHITECTURE keeps find_library/find_package away from the
# x86-64 copies, and pkg-config is pointed at the arm64 .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# The loader and libc of the cross toolchain (libc6-arm64-cross); qemu falls back to the real
# root for everything else, where the multiarch :arm64 libraries are.
find_program(SPARKOPS_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static)
if(SPARKOPS_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${SPARKOPS_QEMU_AARCH64};-L;/usr/aarch64-linux-gnu"
      CACHE STRING "runs aarch64 test programs on this host")
endif()
