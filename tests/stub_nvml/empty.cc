// A shared library that is not NVML: sparkops must say "no NVML: ... lacks nvmlInit_v2 / nvmlInit".
extern "C" __attribute__((visibility("default"))) int sparkops_not_nvml() { return 0; }
