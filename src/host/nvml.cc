#include "host/nvml.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <cstddef>
#include <cstring>
#include <vector>

namespace sparkops {
namespace {

// ---- NVML ABI, declared by hand after nvml.h 13.3.29 (docs/telemetry.md "NVML ABI") ----------
using nvmlReturn_t = int;  // enum stored as int (4 bytes)
using nvmlDevice_t = void*;

struct nvmlMemory_t {  // v1: bytes
  unsigned long long total, free, used;
};
struct nvmlMemory_v2_t {  // version must be nvmlMemory_v2
  unsigned int version;
  unsigned long long total, reserved, free, used;
};
struct nvmlProcessInfo_v1_t {  // legacy nvmlDeviceGetComputeRunningProcesses
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
struct nvmlProcessInfo_t {  // _v2 and _v3 process queries
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
};
struct nvmlTemperature_v1_t {
  unsigned int version;
  int sensorType;
  int temperature;
};
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};

static_assert(sizeof(nvmlReturn_t) == 4);
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(sizeof(nvmlMemory_v2_t) == 40 && offsetof(nvmlMemory_v2_t, total) == 8 &&
              offsetof(nvmlMemory_v2_t, used) == 32);
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16 && offsetof(nvmlProcessInfo_v1_t, usedGpuMemory) == 8);
static_assert(sizeof(nvmlProcessInfo_t) == 24 && offsetof(nvmlProcessInfo_t, computeInstanceId) == 20);
static_assert(sizeof(nvmlTemperature_v1_t) == 12 && offsetof(nvmlTemperature_v1_t, temperature) == 8);
static_assert(sizeof(nvmlUtilization_t) == 8);

constexpr unsigned kMemoryV2Version = sizeof(nvmlMemory_v2_t) | (2u << 24);          // 0x02000028
constexpr unsigned kTemperatureV1Version = sizeof(nvmlTemperature_v1_t) | (1u << 24);  // 0x0100000C
static_assert(kMemoryV2Version == 0x02000028u && kTemperatureV1Version == 0x0100000Cu);
constexpr int kTemperatureGpu = 0;   // NVML_TEMPERATURE_GPU
constexpr int kClockSm = 1;          // NVML_CLOCK_SM
constexpr unsigned long long kValueNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE (-1)
constexpr unsigned kMaxProcesses = 4096;                  // bound before allocating

}  // namespace

struct NvmlSymbols {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*handle)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*cuda_version)(int*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*cc)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*temp_v)(nvmlDevice_t, nvmlTemperature_v1_t*) = nullptr;
  nvmlReturn_t (*temp)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*limit)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*mem_v2)(nvmlDevice_t, nvmlMemory_v2_t*) = nullptr;
  nvmlReturn_t (*mem)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  /// Process queries: 24-byte elements (_v3/_v2) or the legacy 16-byte one (v1).
  nvmlReturn_t (*compute)(nvmlDevice_t, unsigned*, void*) = nullptr;
  nvmlReturn_t (*graphics)(nvmlDevice_t, unsigned*, void*) = nullptr;
  bool compute_v1 = false, graphics_v1 = false;
};

namespace {

/// dlsym the first of `names` that exists (newest version first).
template <typename Fn>
bool Load(void* lib, Fn& fn, std::initializer_list<const char*> names, bool* legacy = nullptr) {
  size_t i = 0;
  for (const char* n : names) {
    if (void* p = dlsym(lib, n)) {
      fn = reinterpret_cast<Fn>(p);
      if (legacy) *legacy = (i + 1 == names.size()) && names.size() > 1;
      return true;
    }
    ++i;
  }
  return false;
}

std::string CString(const char* buf, size_t n) { return std::string(buf, strnlen(buf, n)); }

}  // namespace

std::string NvmlReturnName(int rc) {
  switch (rc) {
    case 0: return "SUCCESS (0)";
    case 1: return "UNINITIALIZED (1)";
    case 2: return "INVALID_ARGUMENT (2)";
    case 3: return "NOT_SUPPORTED (3)";
    case 4: return "NO_PERMISSION (4)";
    case 6: return "NOT_FOUND (6)";
    case 7: return "INSUFFICIENT_SIZE (7)";
    case 9: return "DRIVER_NOT_LOADED (9)";
    case 12: return "LIBRARY_NOT_FOUND (12)";
    case 13: return "FUNCTION_NOT_FOUND (13)";
    case 15: return "GPU_IS_LOST (15)";
    case 16: return "RESET_REQUIRED (16)";
    case 18: return "LIB_RM_VERSION_MISMATCH (18)";
    case 28: return "GPU_NOT_FOUND (28)";
    case 999: return "UNKNOWN (999)";
    default: return fmt::format("error {}", rc);
  }
}

Result<std::unique_ptr<Nvml>> Nvml::Open(const std::string& path) {
  // dlopen() of a FIFO blocks forever and of a device reads it: only a regular file is a library.
  if (path.find('/') != std::string::npos) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      return NotFound(fmt::format("no NVML: {} is not a regular file (a FIFO, device or directory)", path));
  }
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    return NotFound(fmt::format("no NVML: cannot load {} ({})", path, e ? e : "dlopen failed"));
  }
  std::unique_ptr<Nvml> n(new Nvml());
  n->lib_ = lib;
  n->sym_ = std::make_unique<NvmlSymbols>();
  NvmlSymbols& s = *n->sym_;
  const char* missing = nullptr;
  if (!Load(lib, s.init, {"nvmlInit_v2", "nvmlInit"})) missing = "nvmlInit_v2 / nvmlInit";
  else if (!Load(lib, s.count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}))
    missing = "nvmlDeviceGetCount_v2 / nvmlDeviceGetCount";
  else if (!Load(lib, s.handle, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}))
    missing = "nvmlDeviceGetHandleByIndex_v2 / nvmlDeviceGetHandleByIndex";
  if (missing) {
    dlclose(lib);
    n->lib_ = nullptr;
    return NotFound(fmt::format("no NVML: {} lacks {}", path, missing));
  }
  Load(lib, s.shutdown, {"nvmlShutdown"});
  Load(lib, s.error_string, {"nvmlErrorString"});
  int rc = s.init();
  if (rc != nvml_rc::kSuccess) {
    std::string why = s.error_string ? s.error_string(rc) : "";
    dlclose(lib);
    n->lib_ = nullptr;
    return NotFound(fmt::format("no NVML: nvmlInit failed: {}{}", NvmlReturnName(rc), why.empty() ? "" : ": " + why));
  }
  Load(lib, s.driver_version, {"nvmlSystemGetDriverVersion"});
  Load(lib, s.cuda_version, {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"});
  Load(lib, s.name, {"nvmlDeviceGetName"});
  Load(lib, s.uuid, {"nvmlDeviceGetUUID"});
  Load(lib, s.cc, {"nvmlDeviceGetCudaComputeCapability"});
  Load(lib, s.temp_v, {"nvmlDeviceGetTemperatureV"});
  Load(lib, s.temp, {"nvmlDeviceGetTemperature"});
  Load(lib, s.power, {"nvmlDeviceGetPowerUsage"});
  Load(lib, s.limit, {"nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetPowerManagementLimit"});
  Load(lib, s.clock, {"nvmlDeviceGetClockInfo"});
  Load(lib, s.max_clock, {"nvmlDeviceGetMaxClockInfo"});
  Load(lib, s.util, {"nvmlDeviceGetUtilizationRates"});
  Load(lib, s.reasons, {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  Load(lib, s.energy, {"nvmlDeviceGetTotalEnergyConsumption"});
  Load(lib, s.mem_v2, {"nvmlDeviceGetMemoryInfo_v2"});
  Load(lib, s.mem, {"nvmlDeviceGetMemoryInfo"});
  Load(lib, s.compute,
       {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
        "nvmlDeviceGetComputeRunningProcesses"},
       &s.compute_v1);
  Load(lib, s.graphics,
       {"nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2",
        "nvmlDeviceGetGraphicsRunningProcesses"},
       &s.graphics_v1);

  unsigned count = 0;
  rc = s.count(&count);
  if (rc != nvml_rc::kSuccess) return NotFound("no NVML: nvmlDeviceGetCount failed: " + NvmlReturnName(rc));
  count = std::min(count, 64u);  // bound before allocating
  n->count_ = count;
  n->devices_ = std::make_unique<Device[]>(count);
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t h = nullptr;
    int hrc = s.handle(i, &h);
    if (hrc == nvml_rc::kSuccess) n->devices_[i].handle = h;
    else n->devices_[i].lost = "NVML gives no handle for this GPU: " + NvmlReturnName(hrc);
  }
  return n;
}

Nvml::~Nvml() {
  if (!lib_) return;
  if (sym_ && sym_->shutdown) sym_->shutdown();
  dlclose(lib_);
}

bool Nvml::Ok(Device& d, Query q, int rc) {
  if (rc == nvml_rc::kSuccess) return true;
  if (rc == nvml_rc::kNotSupported || rc == 13 /* FUNCTION_NOT_FOUND */) d.unsupported[q] = true;
  if ((rc == nvml_rc::kGpuIsLost || rc == nvml_rc::kResetRequired) && d.lost.empty())
    d.lost = "NVML: " + NvmlReturnName(rc);
  return false;
}

void Nvml::ReadStatic(unsigned index, GpuReading& r) {
  r.index = index;
  if (index >= count_ || !devices_[index].handle) return;
  const NvmlSymbols& s = *sym_;
  nvmlDevice_t h = devices_[index].handle;
  char buf[96] = {};
  if (s.name && s.name(h, buf, sizeof buf) == 0) r.name = CString(buf, sizeof buf);
  std::memset(buf, 0, sizeof buf);
  if (s.uuid && s.uuid(h, buf, sizeof buf) == 0) r.uuid = CString(buf, sizeof buf);
  std::memset(buf, 0, sizeof buf);
  if (s.driver_version && s.driver_version(buf, 80) == 0) r.driver_version = CString(buf, 80);
  int v = 0, major = 0, minor = 0;
  if (s.cuda_version && s.cuda_version(&v) == 0 && v > 0) r.cuda_driver_version = v;
  if (s.cc && s.cc(h, &major, &minor) == 0) r.cc_major = major, r.cc_minor = minor;
  unsigned mhz = 0;
  if (s.max_clock && s.max_clock(h, kClockSm, &mhz) == 0 && mhz > 0) r.sm_clock_max_mhz = mhz;
}

void Nvml::ReadProcesses(Device& d, Query q, GpuReading& r) {
  const NvmlSymbols& s = *sym_;
  auto fn = q == kCompute ? s.compute : s.graphics;
  bool v1 = q == kCompute ? s.compute_v1 : s.graphics_v1;
  if (!fn || d.unsupported[q]) return;
  unsigned n = 0;
  int rc = fn(d.handle, &n, nullptr);
  if (rc == nvml_rc::kSuccess) {
    r.processes_known = true;
    return;  // none running
  }
  if (rc != nvml_rc::kInsufficientSize) return void(Ok(d, q, rc));
  // Two-call pattern with a margin: processes may start between the calls.
  for (int attempt = 0; attempt < 3; ++attempt) {
    n = std::min(n + 8, kMaxProcesses);
    std::vector<nvmlProcessInfo_t> big(v1 ? 0 : n);
    std::vector<nvmlProcessInfo_v1_t> small(v1 ? n : 0);
    unsigned got = n;
    rc = fn(d.handle, &got, v1 ? static_cast<void*>(small.data()) : static_cast<void*>(big.data()));
    if (rc == nvml_rc::kInsufficientSize && n < kMaxProcesses) continue;
    if (!Ok(d, q, rc)) return;
    got = std::min(got, n);
    r.processes_known = true;
    for (unsigned i = 0; i < got; ++i) {
      unsigned pid = v1 ? small[i].pid : big[i].pid;
      unsigned long long used = v1 ? small[i].usedGpuMemory : big[i].usedGpuMemory;
      std::optional<uint64_t> bytes;
      if (used != kValueNotAvailable) bytes = used;
      bool merged = false;
      for (auto& p : r.processes)  // compute and graphics lists name the same memory once
        if (p.pid == pid) {
          if (bytes && (!p.used_bytes || *bytes > *p.used_bytes)) p.used_bytes = bytes;
          merged = true;
        }
      if (!merged) r.processes.push_back({pid, bytes});
    }
    return;
  }
}

std::string Nvml::ReadDynamic(unsigned index, GpuReading& r) {
  if (index >= count_) return "no such GPU";
  Device& d = devices_[index];
  if (!d.lost.empty()) return d.lost;
  const NvmlSymbols& s = *sym_;
  nvmlDevice_t h = d.handle;
  unsigned u = 0;
  unsigned long long ull = 0;
  if (!d.unsupported[kTemp]) {
    int rc = nvml_rc::kNotSupported;
    if (s.temp_v && !d.temp_v_bad) {  // newest first; fall back to the deprecated call
      nvmlTemperature_v1_t t{kTemperatureV1Version, kTemperatureGpu, 0};
      rc = s.temp_v(h, &t);
      if (rc == nvml_rc::kSuccess) r.temp_c = t.temperature;
      else if (rc != nvml_rc::kGpuIsLost && rc != nvml_rc::kResetRequired) d.temp_v_bad = true;
    }
    if (!r.temp_c && s.temp && rc != nvml_rc::kGpuIsLost && rc != nvml_rc::kResetRequired) {
      rc = s.temp(h, kTemperatureGpu, &u);
      if (rc == nvml_rc::kSuccess) r.temp_c = u;
    }
    if (!r.temp_c) Ok(d, kTemp, rc);
  }
  if (!d.unsupported[kPower] && s.power && Ok(d, kPower, s.power(h, &u))) r.power_w = u / 1000.0;
  if (!d.unsupported[kLimit] && s.limit && Ok(d, kLimit, s.limit(h, &u)) && u > 0) r.power_limit_w = u / 1000.0;
  if (!d.unsupported[kClock] && s.clock && Ok(d, kClock, s.clock(h, kClockSm, &u))) r.sm_clock_mhz = u;
  nvmlUtilization_t ut{};
  if (!d.unsupported[kUtil] && s.util && Ok(d, kUtil, s.util(h, &ut))) r.util_pct = ut.gpu;
  if (!d.unsupported[kReasons] && s.reasons && Ok(d, kReasons, s.reasons(h, &ull))) r.clock_event_reasons = ull;
  if (!d.unsupported[kEnergy] && s.energy && Ok(d, kEnergy, s.energy(h, &ull))) r.energy_mj = ull;
  if (!d.unsupported[kMemory]) {
    int rc = -1;  // -1: no memory symbol at all (an old library, not a fact about the GPU)
    if (s.mem_v2) {
      nvmlMemory_v2_t m{};
      m.version = kMemoryV2Version;
      rc = s.mem_v2(h, &m);
      if (rc == nvml_rc::kSuccess) r.mem_total_bytes = m.total, r.mem_used_bytes = m.used;
    }
    if (rc != nvml_rc::kSuccess && s.mem) {
      nvmlMemory_t m{};
      rc = s.mem(h, &m);
      if (rc == nvml_rc::kSuccess) r.mem_total_bytes = m.total, r.mem_used_bytes = m.used;
    }
    if (rc == -1) d.unsupported[kMemory] = true;
    else if (!Ok(d, kMemory, rc) && rc == nvml_rc::kNotSupported) d.no_device_memory = true;
    if (r.mem_total_bytes && *r.mem_total_bytes == 0) {  // SUCCESS with total 0: no memory of its own
      r.mem_total_bytes.reset(), r.mem_used_bytes.reset();
      d.unsupported[kMemory] = d.no_device_memory = true;
    }
  }
  r.unified_memory = d.no_device_memory;
  ReadProcesses(d, kCompute, r);
  ReadProcesses(d, kGraphics, r);
  if (!d.lost.empty()) {  // lost mid-read: nothing from this read is trusted
    GpuReading blank;
    blank.index = r.index, blank.name = r.name, blank.uuid = r.uuid;
    blank.cc_major = r.cc_major, blank.cc_minor = r.cc_minor, blank.sm_clock_max_mhz = r.sm_clock_max_mhz;
    blank.driver_version = r.driver_version, blank.cuda_driver_version = r.cuda_driver_version;
    r = blank;
  }
  return d.lost;
}

}  // namespace sparkops
