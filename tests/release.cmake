# Checks on the shipped binary (build/release/sparkops, cmake/packaging.cmake): it links only glibc
# dynamically, requires no glibc symbol newer than 2.35 (Ubuntu 22.04), is stripped with its debug
# information in a debuglink'd file, and runs in a root holding nothing but glibc. Only for the
# static-dependency build without sanitizers (ASan brings its own runtime library).
if(SPARKOPS_STATIC_DEPS AND NOT SPARKOPS_SANITIZE)
  set(_check ${CMAKE_CURRENT_SOURCE_DIR}/release_check.sh)
  set(_bin ${CMAKE_BINARY_DIR}/release/sparkops)
  add_test(NAME release.needed_glibc_only COMMAND ${_check} needed ${CMAKE_OBJDUMP} ${_bin})
  add_test(NAME release.glibc_2_35 COMMAND ${_check} glibc ${CMAKE_OBJDUMP} ${_bin} 2.35)
  add_test(NAME release.stripped_with_debuglink COMMAND ${_check} debug ${CMAKE_READELF} ${_bin}
           ${CMAKE_BINARY_DIR}/release/sparkops.debug)
  add_test(NAME release.scratch_root COMMAND ${_check} scratch ${_bin} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures
           ${CMAKE_SYSTEM_PROCESSOR} ${CMAKE_CROSSCOMPILING_EMULATOR})
  set_tests_properties(release.needed_glibc_only release.glibc_2_35 release.stripped_with_debuglink
                       release.scratch_root PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
endif()
