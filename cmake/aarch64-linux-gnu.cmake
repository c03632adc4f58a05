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

# libyaml-cpp-dev is not Multi-Arch: same in Debian 12 (only the runtime libyaml-cpp0.7:arm64 can be
# installed next to the native -dev package): fall back to a config built from those two. The
# static build links the arm64 libyaml-cpp.a that scripts/setup.sh --cross unpacks from the arm64
# -dev package into /opt/sparkops-cross (cmake/static_deps.cmake).
if(NOT EXISTS /usr/lib/aarch64-linux-gnu/cmake/yaml-cpp/yaml-cpp-config.cmake)
  set(yaml-cpp_DIR "${CMAKE_CURRENT_LIST_DIR}/cross/yaml-cpp" CACHE PATH "yaml-cpp for the cross build")
endif()

# qemu-aarch64 runs target programs. The :arm64 packages bring libc6:arm64 and its loader
# (/lib/ld-linux-aarch64.so.1), so no -L prefix is needed. Measured with qemu 7.2 here: with
# `-L /usr/aarch64-linux-gnu` a dynamically linked program that forks spins forever in the child,
# so that prefix is only the fallback when the multiarch loader is missing.
find_program(SPARKOPS_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static)
if(SPARKOPS_QEMU_AARCH64)
  if(EXISTS /lib/ld-linux-aarch64.so.1)
    set(CMAKE_CROSSCOMPILING_EMULATOR "${SPARKOPS_QEMU_AARCH64}")
  else()
    set(CMAKE_CROSSCOMPILING_EMULATOR "${SPARKOPS_QEMU_AARCH64};-L;/usr/aarch64-linux-gnu")
  endif()
endif()
