# GPU test tools (no GPU needed): stub NVML libraries built into the build's tests dir
# (BuildArtifact("libnvidia-ml-stub.so") ...). See tests/stub_nvml/README.md.
set(_stub_src ${CMAKE_CURRENT_LIST_DIR}/stub_nvml/stub_nvml.cc)
# Full stub: GB10-like by default, discrete / init_fail / no_gpu modes, scenario files.
add_library(nvidia_ml_stub SHARED ${_stub_src})
# Old-driver stub: only the legacy unversioned entry points (nvmlInit, nvmlDeviceGetCount,
# ...ThrottleReasons, v1 processes): exercises the fall-back symbol chain.
add_library(nvidia_ml_stub_min SHARED ${_stub_src})
target_compile_definitions(nvidia_ml_stub_min PRIVATE STUB_MINIMAL STUB_NO_INIT)
# Not NVML at all: lacks every required symbol.
add_library(nvidia_ml_empty SHARED ${CMAKE_CURRENT_LIST_DIR}/stub_nvml/empty.cc)
foreach(t nvidia_ml_stub nvidia_ml_stub_min nvidia_ml_empty)
  set_target_properties(${t} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
    CXX_VISIBILITY_PRESET hidden PREFIX "lib")
endforeach()
set_target_properties(nvidia_ml_stub PROPERTIES OUTPUT_NAME nvidia-ml-stub)
set_target_properties(nvidia_ml_stub_min PROPERTIES OUTPUT_NAME nvidia-ml-stub-min)
set_target_properties(nvidia_ml_empty PROPERTIES OUTPUT_NAME nvidia-ml-empty)
add_dependencies(sparkops_tests nvidia_ml_stub nvidia_ml_stub_min nvidia_ml_empty)
