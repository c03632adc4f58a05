# Cross builds only (selected by cmake/aarch64-linux-gnu.cmake). Debian 12's libyaml-cpp-dev is not
# Multi-Arch: same, so libyaml-cpp-dev:arm64 cannot be installed next to the native one. Its
# headers are architecture-independent, and the arm64 runtime library (libyaml-cpp0.7:arm64, which
# IS co-installable) is all the linker needs: this file provides the `yaml-cpp` target from those.
set(yaml-cpp_VERSION 0.7.0)
find_path(SPARKOPS_YAML_CPP_INCLUDE yaml-cpp/yaml.h)
find_library(SPARKOPS_YAML_CPP_LIB NAMES yaml-cpp libyaml-cpp.so.0.7
             PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE} NO_DEFAULT_PATH)
if(NOT SPARKOPS_YAML_CPP_INCLUDE OR NOT SPARKOPS_YAML_CPP_LIB)
  set(yaml-cpp_FOUND FALSE)
  set(yaml-cpp_NOT_FOUND_MESSAGE
      "needs /usr/include/yaml-cpp (libyaml-cpp-dev) and libyaml-cpp0.7:${CMAKE_LIBRARY_ARCHITECTURE}")
  return()
endif()
if(NOT TARGET yaml-cpp)
  add_library(yaml-cpp SHARED IMPORTED)
  set_target_properties(yaml-cpp PROPERTIES IMPORTED_LOCATION ${SPARKOPS_YAML_CPP_LIB}
                        INTERFACE_INCLUDE_DIRECTORIES ${SPARKOPS_YAML_CPP_INCLUDE})
endif()
set(yaml-cpp_FOUND TRUE)
