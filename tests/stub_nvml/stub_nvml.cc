// A stand-in for libnvidia-ml.so.1 built by the tests (no GPU needed). Own declarations (no NVML
// header in Debian). GB10-like by default; values from a scenario file; see README.md here.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

constexpr int kSuccess = 0, kUninitialized = 1, kInvalidArgument = 2, kNotSupported = 3, kInsufficientSize = 7,
              kDriverNotLoaded = 9, kGpuIsLost = 15;

struct Proc {
  unsigned pid;
  unsigned long long bytes;
};

struct Step {
  double temp = 41, power_w = 4.5, limit_w = -1;  // limit < 0: not supported
  unsigned sm = 208, sm_max = 3003, util = 0;
  unsigned long long reasons = 0x1, energy_mj = 1000000;
  long long mem_total = -1, mem_used = 0;  // total < 0: memory queries NOT_SUPPORTED
  bool lost = false;
  bool gate = false;      // stay on this step until $SPARKOPS_STUB_NVML_GATE exists
  bool discrete = false;  // identity: GB10 (CC 12.1) or a discrete card (CC 8.9)
  std::vector<Proc> procs = {{4242, 12ull << 30}};
};

struct State {
  bool init = false;
  unsigned devices = 1;
  std::vector<Step> steps;
  size_t step = 0;          // advanced by each temperature read after the first (once per sample)
  bool started = false;
  unsigned long long energy_base = 0;
} g;

void ApplyKey(Step& s, const std::string& key, const std::string& val) {
  auto num = [&] { return std::strtod(val.c_str(), nullptr); };
  if (key == "temp") s.temp = num();
  else if (key == "power") s.power_w = num();
  else if (key == "limit") s.limit_w = val == "none" ? -1 : num();
  else if (key == "sm") s.sm = static_cast<unsigned>(num());
  else if (key == "sm_max") s.sm_max = static_cast<unsigned>(num());
  else if (key == "util") s.util = static_cast<unsigned>(num());
  else if (key == "reasons") s.reasons = std::strtoull(val.c_str(), nullptr, 0);
  else if (key == "energy") s.energy_mj = std::strtoull(val.c_str(), nullptr, 0);
  else if (key == "mem_total") s.mem_total = val == "none" ? -1 : std::strtoll(val.c_str(), nullptr, 0);
  else if (key == "mem_used") s.mem_used = std::strtoll(val.c_str(), nullptr, 0);
  else if (key == "lost") s.lost = val == "1";
  else if (key == "gate") s.gate = val == "1";
  else if (key == "procs") {
    s.procs.clear();
    size_t pos = 0;
    while (pos < val.size() && val != "none") {
      size_t comma = val.find(',', pos);
      std::string item = val.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      size_t colon = item.find(':');
      Proc p{static_cast<unsigned>(std::strtoul(item.c_str(), nullptr, 10)), ~0ull};
      if (colon != std::string::npos && item.substr(colon + 1) != "na")
        p.bytes = std::strtoull(item.c_str() + colon + 1, nullptr, 10);
      s.procs.push_back(p);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
}

Step Discrete() {
  Step s;
  s.temp = 52, s.power_w = 71.5, s.limit_w = 450, s.sm = 1410, s.sm_max = 2520, s.util = 35, s.reasons = 0;
  s.mem_total = 25757220864LL, s.mem_used = 6442450944LL;
  s.procs = {{5151, 6ull << 30}};
  s.discrete = true;
  return s;
}

/// Returns an NVML error code when init must fail.
int Configure() {
  const char* mode = std::getenv("SPARKOPS_STUB_NVML_MODE");
  std::string m = mode ? mode : "gb10";
  g = State{};
  Step base = m == "discrete" ? Discrete() : Step{};
  if (m == "init_fail") return kDriverNotLoaded;
  if (m == "no_gpu") g.devices = 0;
  if (const char* path = std::getenv("SPARKOPS_STUB_NVML_SCENARIO")) {
    FILE* f = std::fopen(path, "r");
    if (!f) return kUninitialized;
    char line[1024];
    Step cur = base;
    while (std::fgets(line, sizeof line, f)) {
      std::string l(line);
      while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.pop_back();
      if (l.empty() || l[0] == '#') continue;
      if (l.rfind("mode ", 0) == 0) {
        if (l.substr(5) == "discrete") cur = base = Discrete();
        continue;
      }
      // "step key=value key=value ...": keys not given keep the previous step's value.
      if (l.rfind("step", 0) != 0) continue;
      size_t pos = 4;
      cur.gate = false;  // a gate holds its own step only
      while (pos < l.size()) {
        while (pos < l.size() && l[pos] == ' ') ++pos;
        size_t end = l.find(' ', pos);
        std::string kv = l.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        size_t eq = kv.find('=');
        if (eq != std::string::npos) ApplyKey(cur, kv.substr(0, eq), kv.substr(eq + 1));
        pos = end == std::string::npos ? l.size() : end;
      }
      g.steps.push_back(cur);
    }
    std::fclose(f);
  }
  if (g.steps.empty()) g.steps.push_back(base);
  g.init = true;
  return kSuccess;
}

const Step& Cur() { return g.steps[g.step]; }
int Check(void* dev) {
  if (!g.init) return kUninitialized;
  if (dev != &g) return kInvalidArgument;
  return Cur().lost ? kGpuIsLost : kSuccess;
}
bool GateOpen() {
  const char* f = std::getenv("SPARKOPS_STUB_NVML_GATE");
  return !f || ::access(f, F_OK) == 0;
}
void Advance() {
  if (g.started && g.step + 1 < g.steps.size() && (!Cur().gate || GateOpen())) ++g.step;  // the last step repeats
  g.started = true;
}

struct ProcV1 {
  unsigned pid;
  unsigned long long used;
};
struct ProcV2 {
  unsigned pid;
  unsigned long long used;
  unsigned gi, ci;
};
template <typename P>
int Procs(void* dev, unsigned* count, P* infos) {
  if (int rc = Check(dev)) return rc;
  const auto& procs = Cur().procs;
  if (*count < procs.size()) {
    *count = static_cast<unsigned>(procs.size());
    return procs.empty() ? kSuccess : kInsufficientSize;
  }
  *count = static_cast<unsigned>(procs.size());
  for (size_t i = 0; i < procs.size(); ++i) {
    infos[i] = P{};
    infos[i].pid = procs[i].pid;
    infos[i].used = procs[i].bytes;
  }
  return kSuccess;
}

}  // namespace

#define API extern "C" __attribute__((visibility("default")))

#ifndef STUB_NO_INIT
API int nvmlInit_v2() { return Configure(); }
#endif
API int nvmlInit() { return Configure(); }
API int nvmlShutdown() { return g.init ? (g.init = false, kSuccess) : kUninitialized; }
API const char* nvmlErrorString(int rc) {
  return rc == kDriverNotLoaded ? "Driver Not Loaded" : rc == kGpuIsLost ? "GPU is lost" : "stub error";
}
API int nvmlDeviceGetCount(unsigned* n) { return g.init ? (*n = g.devices, kSuccess) : kUninitialized; }
API int nvmlDeviceGetHandleByIndex(unsigned i, void** dev) {
  if (!g.init) return kUninitialized;
  if (i >= g.devices) return kInvalidArgument;
  if (const char* np = std::getenv("SPARKOPS_STUB_NVML_NO_PERMISSION"); np && *np == '1') return 4;  // NO_PERMISSION
  *dev = &g;
  return kSuccess;
}
API int nvmlDeviceGetTemperature(void* dev, int sensor, unsigned* t) {
  if (dev == &g) Advance();
  if (int rc = Check(dev)) return rc;
  if (sensor != 0) return kInvalidArgument;
  *t = static_cast<unsigned>(Cur().temp);
  return kSuccess;
}
API int nvmlDeviceGetCurrentClocksThrottleReasons(void* dev, unsigned long long* r) {
  if (int rc = Check(dev)) return rc;
  *r = Cur().reasons;
  return kSuccess;
}
API int nvmlDeviceGetComputeRunningProcesses(void* dev, unsigned* count, ProcV1* infos) {
  return Procs(dev, count, infos);
}

#ifndef STUB_MINIMAL
API int nvmlDeviceGetCount_v2(unsigned* n) { return nvmlDeviceGetCount(n); }
API int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** dev) { return nvmlDeviceGetHandleByIndex(i, dev); }
API int nvmlSystemGetDriverVersion(char* buf, unsigned len) {
  if (!g.init) return kUninitialized;
  std::snprintf(buf, len, "%s", "580.95.05");
  return kSuccess;
}
API int nvmlSystemGetCudaDriverVersion_v2(int* v) { return g.init ? (*v = 13000, kSuccess) : kUninitialized; }
API int nvmlDeviceGetName(void* dev, char* buf, unsigned len) {
  if (dev != &g) return kInvalidArgument;
  std::snprintf(buf, len, "%s", Cur().discrete ? "NVIDIA GeForce RTX 4090" : "NVIDIA GB10");
  return kSuccess;
}
API int nvmlDeviceGetUUID(void* dev, char* buf, unsigned len) {
  if (dev != &g) return kInvalidArgument;
  std::snprintf(buf, len, "%s", "GPU-5tub0000-0000-0000-0000-000000000000");
  return kSuccess;
}
API int nvmlDeviceGetCudaComputeCapability(void* dev, int* major, int* minor) {
  if (int rc = Check(dev)) return rc;
  if (!Cur().discrete) *major = 12, *minor = 1;
  else *major = 8, *minor = 9;
  return kSuccess;
}
struct TempV1 {
  unsigned version;
  int sensor;
  int temperature;
};
API int nvmlDeviceGetTemperatureV(void* dev, TempV1* t) {
  if (t->version != (12u | (1u << 24))) return 25;  // ARGUMENT_VERSION_MISMATCH
  unsigned v = 0;
  int rc = nvmlDeviceGetTemperature(dev, t->sensor, &v);
  if (rc == kSuccess) t->temperature = static_cast<int>(v);
  return rc;
}
API int nvmlDeviceGetPowerUsage(void* dev, unsigned* mw) {
  if (int rc = Check(dev)) return rc;
  *mw = static_cast<unsigned>(Cur().power_w * 1000.0 + 0.5);
  return kSuccess;
}
API int nvmlDeviceGetEnforcedPowerLimit(void* dev, unsigned* mw) {
  if (int rc = Check(dev)) return rc;
  if (Cur().limit_w < 0) return kNotSupported;
  *mw = static_cast<unsigned>(Cur().limit_w * 1000.0 + 0.5);
  return kSuccess;
}
API int nvmlDeviceGetPowerManagementLimit(void* dev, unsigned* mw) { return nvmlDeviceGetEnforcedPowerLimit(dev, mw); }
API int nvmlDeviceGetClockInfo(void* dev, int type, unsigned* mhz) {
  if (int rc = Check(dev)) return rc;
  if (type == 2) return kNotSupported;  // memory clock: N/A on GB10
  *mhz = Cur().sm;
  return kSuccess;
}
API int nvmlDeviceGetMaxClockInfo(void* dev, int type, unsigned* mhz) {
  if (int rc = Check(dev)) return rc;
  if (type == 2) return kNotSupported;
  *mhz = Cur().sm_max;
  return kSuccess;
}
struct Util {
  unsigned gpu, memory;
};
API int nvmlDeviceGetUtilizationRates(void* dev, Util* u) {
  if (int rc = Check(dev)) return rc;
  u->gpu = Cur().util, u->memory = 0;
  return kSuccess;
}
API int nvmlDeviceGetCurrentClocksEventReasons(void* dev, unsigned long long* r) {
  return nvmlDeviceGetCurrentClocksThrottleReasons(dev, r);
}
API int nvmlDeviceGetTotalEnergyConsumption(void* dev, unsigned long long* mj) {
  if (int rc = Check(dev)) return rc;
  *mj = Cur().energy_mj;
  return kSuccess;
}
struct MemV1 {
  unsigned long long total, free, used;
};
struct MemV2 {
  unsigned version;
  unsigned long long total, reserved, free, used;
};
API int nvmlDeviceGetMemoryInfo(void* dev, MemV1* m) {
  if (int rc = Check(dev)) return rc;
  if (Cur().mem_total < 0) return kNotSupported;
  m->total = static_cast<unsigned long long>(Cur().mem_total);
  m->used = static_cast<unsigned long long>(Cur().mem_used);
  m->free = m->total - m->used;
  return kSuccess;
}
API int nvmlDeviceGetMemoryInfo_v2(void* dev, MemV2* m) {
  if (m->version != (40u | (2u << 24))) return 25;
  MemV1 v1{};
  int rc = nvmlDeviceGetMemoryInfo(dev, &v1);
  if (rc == kSuccess) m->total = v1.total, m->used = v1.used, m->free = v1.free, m->reserved = 0;
  return rc;
}
API int nvmlDeviceGetComputeRunningProcesses_v3(void* dev, unsigned* count, ProcV2* infos) {
  return Procs(dev, count, infos);
}
API int nvmlDeviceGetGraphicsRunningProcesses_v3(void* dev, unsigned* count, ProcV2*) {
  if (int rc = Check(dev)) return rc;
  *count = 0;  // no display clients in the stub
  return kSuccess;
}
#endif
