# The libraries sparkops links, as interface targets sparkops_fmt, sparkops_yaml_cpp.
# With SPARKOPS_STATIC_DEPS (the default) the shipped binary needs nothing but glibc at run time
# (libc.so.6, libm.so.6, the loader; NVML stays a dlopen): fmt compiled in, yaml-cpp from the
# Debian -dev package's .a file, libstdc++/libgcc linked statically
# (SPARKOPS_STATIC_LINK_OPTIONS, for the sparkops executable); fmt's compiled part is
# src/base/fmt_impl.cc. tests/release.cmake checks the result.
option(SPARKOPS_STATIC_DEPS "link fmt, yaml-cpp and libstdc++ statically (glibc-only binary)" ON)

find_package(fmt REQUIRED)
find_package(yaml-cpp REQUIRED)

# Where Debian puts the target architecture's libraries (multiarch), plus the arm64 yaml-cpp
# archive that scripts/setup.sh --cross extracts (libyaml-cpp-dev:arm64 is not co-installable with
# the native one).
set(_sparkops_libdirs /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE} /lib/${CMAKE_LIBRARY_ARCHITECTURE}
    /opt/sparkops-cross/${CMAKE_LIBRARY_ARCHITECTURE}/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE})

function(_sparkops_static_archive var name)
  find_library(${var} NAMES lib${name}.a PATHS ${_sparkops_libdirs} NO_DEFAULT_PATH)
  if(NOT ${var})
    message(FATAL_ERROR "SPARKOPS_STATIC_DEPS: lib${name}.a not found in ${_sparkops_libdirs} "
                        "(scripts/setup.sh installs it; or configure with -DSPARKOPS_STATIC_DEPS=OFF)")
  endif()
endfunction()

add_library(sparkops_fmt INTERFACE)
add_library(sparkops_yaml_cpp INTERFACE)
if(SPARKOPS_STATIC_DEPS)
  # fmt's compiled part goes into sparkops_core from src/base/fmt_impl.cc (Debian ships no libfmt.a);
  # the headers are used as they are, without fmt::fmt's FMT_SHARED.
  get_target_property(_fmt_inc fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
  if(_fmt_inc)
    target_include_directories(sparkops_fmt INTERFACE ${_fmt_inc})
  endif()
  set_source_files_properties(${CMAKE_SOURCE_DIR}/src/base/fmt_impl.cc PROPERTIES COMPILE_DEFINITIONS SPARKOPS_FMT_IMPL=1)
  # libstdc++.a would otherwise import arc4random@GLIBC_2.36 (see the file).
  set_source_files_properties(${CMAKE_SOURCE_DIR}/src/base/glibc_compat.cc PROPERTIES COMPILE_DEFINITIONS
                              SPARKOPS_GLIBC_COMPAT=1)

  _sparkops_static_archive(SPARKOPS_YAML_CPP_A yaml-cpp)
  get_target_property(_yaml_inc yaml-cpp INTERFACE_INCLUDE_DIRECTORIES)
  add_library(sparkops_yaml_cpp_static STATIC IMPORTED)
  set_target_properties(sparkops_yaml_cpp_static PROPERTIES IMPORTED_LOCATION ${SPARKOPS_YAML_CPP_A})
  if(_yaml_inc)
    set_target_properties(sparkops_yaml_cpp_static PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_yaml_inc}")
  endif()
  target_link_libraries(sparkops_yaml_cpp INTERFACE sparkops_yaml_cpp_static)

  # -u arc4random: take src/base/glibc_compat.cc's definition from sparkops_core before libstdc++.a
  # asks for it (the archive would not be searched again).
  set(SPARKOPS_STATIC_LINK_OPTIONS -static-libstdc++ -static-libgcc -Wl,-u,arc4random)
  if(SPARKOPS_SANITIZE)  # the ASan build is for finding bugs, not for shipping: its runtimes stay shared
    set(SPARKOPS_STATIC_LINK_OPTIONS)
  endif()
else()
  target_link_libraries(sparkops_fmt INTERFACE fmt::fmt)
  target_link_libraries(sparkops_yaml_cpp INTERFACE yaml-cpp)
  set(SPARKOPS_STATIC_LINK_OPTIONS)
endif()
