# Fake Python environments for the G1/G2/G7/G9 tests: site-packages trees whose .so files are
# really linked against fake libcudart.so.12 / .so.13 (right SONAMEs), assembled at build time
# under <build>/tests/site-packages/<name> and <build>/tests/roots/<name> from the text sources
# in tests/fixtures/site-packages/ (see its README.md).
set(PYENV_FIX ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/site-packages)
set(PYENV_LIBS ${CMAKE_CURRENT_BINARY_DIR}/pyenv-libs)

foreach(major 12 13)
  add_library(fake_cudart${major} SHARED ${PYENV_FIX}/src/fake_cudart.c)
  target_compile_definitions(fake_cudart${major} PRIVATE FAKE_CUDA_MAJOR=${major})
  set_target_properties(fake_cudart${major} PROPERTIES OUTPUT_NAME cudart SOVERSION ${major}
    LIBRARY_OUTPUT_DIRECTORY ${PYENV_LIBS}/cuda${major})
endforeach()

# name; source; cudart major ("" = none); DT_RPATH ("" = none); extra definitions
function(pyenv_ext name src major rpath)
  add_library(${name} SHARED ${PYENV_FIX}/src/${src})
  set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${PYENV_LIBS})
  target_compile_definitions(${name} PRIVATE ${ARGN})
  if(major)
    # linked by -L/-l, not as a target, so CMake adds no build-dir rpath of its own
    add_dependencies(${name} fake_cudart${major})
    target_compile_definitions(${name} PRIVATE USE_CUDART)
    target_link_libraries(${name} PRIVATE -L${PYENV_LIBS}/cuda${major} -l:libcudart.so.${major})
  endif()
  # --disable-new-dtags: DT_RPATH, as the torch CUDA wheels use (searched before LD_LIBRARY_PATH)
  target_link_options(${name} PRIVATE "LINKER:--no-as-needed" "LINKER:--disable-new-dtags")
  if(rpath)
    set_target_properties(${name} PROPERTIES BUILD_RPATH "${rpath}")
  else()
    set_target_properties(${name} PROPERTIES SKIP_BUILD_RPATH ON)
  endif()
endfunction()

pyenv_ext(ext_cu13_torch fake_ext.c 13 "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/cu13/lib:$ORIGIN")
pyenv_ext(ext_cu12_torch fake_ext.c 12 "$ORIGIN/../../nvidia/cuda_runtime/lib:$ORIGIN/../../nvidia/cublas/lib:$ORIGIN")
pyenv_ext(ext_cu13 fake_ext.c 13 "")
pyenv_ext(ext_cu12 fake_ext.c 12 "")
pyenv_ext(ext_cpu fake_ext.c "" "")
# fatbin layouts seen in real wheels: sm_121a + compressed compute_121a PTX; generic sm_120 +
# compute_120; vLLM 0.33.0's sm_120f + compressed compute_80; Hopper/datacenter-only sm_90a + sm_100f;
# sm_90 + compressed compute_90 (runs on 12.x only through the PTX JIT).
pyenv_ext(ext_fatbin_121a fake_fatbin.c 13 "" FATBIN_ARCH=121 E1_FLAGS=0x100011 E2_FLAGS=0x108011)
pyenv_ext(ext_fatbin_120 fake_fatbin.c 13 "" FATBIN_ARCH=120)
pyenv_ext(ext_fatbin_120f fake_fatbin.c 13 "" FATBIN_ARCH=120 E1_FLAGS=0x1208011 E2_ARCH=80 E2_FLAGS=0x8011)
pyenv_ext(ext_fatbin_90a fake_fatbin.c 13 "" FATBIN_ARCH=90 E1_FLAGS=0x108011 E2_KIND=2 E2_ARCH=100 E2_FLAGS=0x1208011)
pyenv_ext(ext_fatbin_90 fake_fatbin.c 13 "" FATBIN_ARCH=90 E2_FLAGS=0x8011)

# An auditwheel-vendored runtime (xformers.libs/libcudart-1a2b3c4d.so.12.3.101, SONAME with the
# hash) and an extension that NEEDs it through DT_RPATH $ORIGIN/../xformers.libs.
add_library(fake_cudart_hashed SHARED ${PYENV_FIX}/src/fake_cudart.c)
target_compile_definitions(fake_cudart_hashed PRIVATE FAKE_CUDA_MAJOR=12)
set_target_properties(fake_cudart_hashed PROPERTIES OUTPUT_NAME cudart-1a2b3c4d SUFFIX .so.12.3.101 NO_SONAME ON
  LIBRARY_OUTPUT_DIRECTORY ${PYENV_LIBS}/hashed)
target_link_options(fake_cudart_hashed PRIVATE "LINKER:-soname,libcudart-1a2b3c4d.so.12.3.101")
pyenv_ext(ext_vendored fake_ext.c "" "$ORIGIN/../xformers.libs")
add_dependencies(ext_vendored fake_cudart_hashed)
target_compile_definitions(ext_vendored PRIVATE USE_CUDART)
target_link_libraries(ext_vendored PRIVATE -L${PYENV_LIBS}/hashed -l:libcudart-1a2b3c4d.so.12.3.101)

set(PYENV_TARGETS fake_cudart12 fake_cudart13 ext_cu13_torch ext_cu12_torch ext_cu13 ext_cu12 ext_cpu
    ext_fatbin_121a ext_fatbin_120 ext_fatbin_120f ext_fatbin_90a ext_fatbin_90 fake_cudart_hashed ext_vendored)
set(PYENV_ARGS)
foreach(t ${PYENV_TARGETS})
  list(APPEND PYENV_ARGS -D${t}=$<TARGET_FILE:${t}>)
endforeach()
file(GLOB_RECURSE PYENV_SOURCES CONFIGURE_DEPENDS ${PYENV_FIX}/trees/*)
set(PYENV_STAMP ${CMAKE_CURRENT_BINARY_DIR}/pyenv-fixtures.stamp)
add_custom_command(OUTPUT ${PYENV_STAMP}
  COMMAND ${CMAKE_COMMAND} ${PYENV_ARGS} -DSRC=${PYENV_FIX} -DOUT=${CMAKE_CURRENT_BINARY_DIR}
          -DGB10=${CMAKE_CURRENT_SOURCE_DIR}/fixtures/gb10 -P ${PYENV_FIX}/assemble.cmake
  COMMAND ${CMAKE_COMMAND} -E touch ${PYENV_STAMP}
  DEPENDS ${PYENV_TARGETS} ${PYENV_SOURCES} ${PYENV_FIX}/assemble.cmake ${PYENV_FIX}/layout.txt
  COMMENT "Assembling fake site-packages trees")
add_custom_target(pyenv_fixtures DEPENDS ${PYENV_STAMP})
add_dependencies(sparkops_tests pyenv_fixtures)
# The architecture the fixture objects are built for (the target's, also in a cross build, where
# the tests run under qemu and uname reports the target's machine too).
set(PYENV_UNAME ${CMAKE_SYSTEM_PROCESSOR})
target_compile_definitions(sparkops_tests PRIVATE UNAME_MACHINE_FOR_TEST="${PYENV_UNAME}")
