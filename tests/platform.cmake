# aarch64/packaging helpers for the tests (included from tests/CMakeLists.txt).
# A shared object built for the target architecture; arch_test reads its ELF machine.
add_library(sparkops_arch_probe SHARED ${CMAKE_CURRENT_SOURCE_DIR}/platform/arch_probe.c)
set_target_properties(sparkops_arch_probe PROPERTIES OUTPUT_NAME arch_probe
                      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/platform)
add_dependencies(sparkops_tests sparkops_arch_probe)

# The .deb: build it with CPack, unpack it into a scratch root, run the packaged binary (through the
# emulator in a cross build), check its contents and run lintian. Not in sanitizer builds (the
# package is a release artifact; the same test runs in the native and the aarch64 stage).
if(NOT SPARKOPS_SANITIZE)
  string(REPLACE ";" "|" _emu "${CMAKE_CROSSCOMPILING_EMULATOR}")
  add_test(NAME package_deb
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/platform/package_test.sh ${CMAKE_BINARY_DIR}
                   ${CMAKE_CURRENT_SOURCE_DIR}/fixtures ${PROJECT_VERSION} ${CMAKE_SYSTEM_PROCESSOR}
                   "${_emu}")
  set_tests_properties(package_deb PROPERTIES LABELS package SKIP_RETURN_CODE 77 TIMEOUT 600)
  # The tarball: build the target, check every file it must hold, unpack it and run its binary.
  add_test(NAME package_tarball
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/platform/tarball_test.sh ${CMAKE_BINARY_DIR} ${PROJECT_VERSION}
                   ${CMAKE_SYSTEM_PROCESSOR} "${_emu}")
  set_tests_properties(package_tarball PROPERTIES LABELS package TIMEOUT 600)
endif()
# The systemd units as shipped (ExecStart pointed at the built binary): systemd-analyze verify.
add_test(NAME systemd_units
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/platform/units_test.sh ${PROJECT_SOURCE_DIR} $<TARGET_FILE:sparkops>
                 ${CMAKE_BINARY_DIR}/packaging/sparkops.1.gz)
set_tests_properties(systemd_units PROPERTIES LABELS package SKIP_RETURN_CODE 77 TIMEOUT 120)
