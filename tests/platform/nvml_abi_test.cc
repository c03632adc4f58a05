// NVML hands sparkops C structs by pointer, so their layout must be the one libnvidia-ml was built
// with — on x86-64 and on the Spark's aarch64 alike. This file is compiled by both the native and
// the cross compiler, so each static_assert is proven for both architectures at build time.
//
// The declarations below mirror nvml.h (CUDA 13.x, nvml.h:245-375 and 5984-5996; sizes/offsets and
// version words as recorded in the project's NVML research notes). The host NVML layer
// (src/host/nvml.*) declares its own copies: after the merge, point these asserts at those types
// (or move them next to the declarations) so the layer itself is what both compilers check.
#include <gtest/gtest.h>

#include <cstddef>

namespace sparkops {
namespace {

struct NvmlUtilization {
  unsigned int gpu, memory;
};
struct NvmlMemoryV1 {
  unsigned long long total, free, used;
};
struct NvmlMemoryV2 {
  unsigned int version;
  unsigned long long total, reserved, free, used;
};
struct NvmlProcessInfoV1 {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
struct NvmlProcessInfoV2 {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
};
struct NvmlTemperatureV1 {
  unsigned int version;
  int sensorType;  // nvmlTemperatureSensors_t: a C enum, 4 bytes
  int temperature;
};
using NvmlReturn = int;  // nvmlReturn_t is an enum; stored as int

/// NVML_STRUCT_VERSION(data, ver): sizeof | ver << 24.
template <typename T>
constexpr unsigned int StructVersion(unsigned int ver) {
  return static_cast<unsigned int>(sizeof(T)) | (ver << 24U);
}

static_assert(sizeof(NvmlReturn) == 4);
static_assert(sizeof(NvmlUtilization) == 8 && offsetof(NvmlUtilization, memory) == 4);
static_assert(sizeof(NvmlMemoryV1) == 24 && offsetof(NvmlMemoryV1, free) == 8 && offsetof(NvmlMemoryV1, used) == 16);
static_assert(sizeof(NvmlMemoryV2) == 40);
static_assert(offsetof(NvmlMemoryV2, total) == 8 && offsetof(NvmlMemoryV2, reserved) == 16 &&
              offsetof(NvmlMemoryV2, free) == 24 && offsetof(NvmlMemoryV2, used) == 32);
static_assert(sizeof(NvmlProcessInfoV1) == 16 && offsetof(NvmlProcessInfoV1, usedGpuMemory) == 8);
static_assert(sizeof(NvmlProcessInfoV2) == 24 && offsetof(NvmlProcessInfoV2, usedGpuMemory) == 8 &&
              offsetof(NvmlProcessInfoV2, gpuInstanceId) == 16 && offsetof(NvmlProcessInfoV2, computeInstanceId) == 20);
static_assert(sizeof(NvmlTemperatureV1) == 12 && offsetof(NvmlTemperatureV1, temperature) == 8);
static_assert(StructVersion<NvmlMemoryV2>(2) == 0x02000028u, "nvmlMemory_v2 as in nvml.h and pynvml");
static_assert(StructVersion<NvmlTemperatureV1>(1) == 0x0100000Cu, "nvmlTemperature_v1 as in nvml.h");

// The same facts at run time, so a report names the architecture the suite ran on.
TEST(NvmlAbi, ProcessArrayStrideMatchesTheDriver) {
  // nvmlDeviceGetComputeRunningProcesses_v3 fills an array of 24-byte elements; a wrong stride
  // would read garbage PIDs on one architecture only.
  NvmlProcessInfoV2 procs[2] = {};
  auto stride = reinterpret_cast<const char*>(&procs[1]) - reinterpret_cast<const char*>(&procs[0]);
  EXPECT_EQ(stride, 24);
  EXPECT_EQ(alignof(NvmlProcessInfoV2), 8u);
  EXPECT_EQ(alignof(NvmlMemoryV2), 8u);
}

}  // namespace
}  // namespace sparkops
