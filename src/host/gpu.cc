#include "host/gpu.h"

#include "base/strings.h"
#include "host/meminfo.h"
#include "host/nvidia_smi.h"
#include "host/nvml.h"

namespace sparkops {
namespace {

/// Fills each field `dst` lacks from `src` (nvidia-smi behind NVML). Returns how many it filled.
int FillAbsent(GpuReading& dst, const GpuReading& src) {
  int n = 0;
  auto fill = [&n](auto& d, const auto& s) {
    if (!d && s) d = s, ++n;
  };
  fill(dst.temp_c, src.temp_c);
  fill(dst.power_w, src.power_w);
  fill(dst.power_limit_w, src.power_limit_w);
  fill(dst.sm_clock_mhz, src.sm_clock_mhz);
  fill(dst.sm_clock_max_mhz, src.sm_clock_max_mhz);
  fill(dst.util_pct, src.util_pct);
  fill(dst.clock_event_reasons, src.clock_event_reasons);
  fill(dst.driver_version, src.driver_version);
  if (!dst.cc_major && src.cc_major) dst.cc_major = src.cc_major, dst.cc_minor = src.cc_minor, ++n;
  if (!dst.unified_memory && !dst.mem_total_bytes && src.mem_total_bytes)
    dst.mem_total_bytes = src.mem_total_bytes, dst.mem_used_bytes = src.mem_used_bytes, ++n;
  if (dst.name.empty()) dst.name = src.name;
  if (dst.uuid.empty()) dst.uuid = src.uuid;
  return n;
}

/// Some drivers are said to answer the memory query on GB10 with SUCCESS and the system pool as the
/// total (nvtop PR #463, btop PR #1611; unverified, contradicted by measurements on 580.173.02). A
/// GB10-class part (CC 12.1 or a GB10 name) whose "device" total is within 10 % of MemTotal is
/// reporting the shared pool, not memory of its own.
bool LooksLikeSystemPool(const GpuReading& r, uint64_t mem_total) {
  bool gb10 = r.name.find("GB10") != std::string::npos || (r.cc_major == 12 && r.cc_minor == 1);
  double ratio = static_cast<double>(*r.mem_total_bytes) / static_cast<double>(mem_total);
  return gb10 && ratio >= 0.9 && ratio <= 1.1;
}

}  // namespace

GpuReader::GpuReader(const HostView& ctx) {
  if (auto m = ReadMemInfo(ctx.fs); m && m->total) pool_bytes_ = *m->total;  // once, for LooksLikeSystemPool
  if (ctx.nvml_enabled()) {
    auto n = Nvml::Open(ctx.opts.nvml);
    if (n) {
      nvml_ = std::move(*n);
      for (unsigned i = 0; i < nvml_->device_count(); ++i) {
        GpuReading r;
        nvml_->ReadStatic(i, r);
        static_.push_back(std::move(r));
      }
    } else {
      nvml_why_ = n.error().message;
    }
  } else {
    nvml_why_ = "no NVML: disabled (--nvml none)";
  }
  if (ctx.nvidia_smi_enabled()) smi_exe_ = ctx.opts.nvidia_smi;
}

GpuReader::~GpuReader() = default;

GpuSnapshot GpuReader::Read() {
  GpuSnapshot snap;
  if (nvml_) {
    for (unsigned i = 0; i < nvml_->device_count(); ++i) {
      GpuReading r = static_[i];
      r.error = nvml_->ReadDynamic(i, r);
      snap.gpus.push_back(std::move(r));
    }
  }
  // Unified-memory parts (GB10) report no power limit through nvidia-smi either ([N/A]), so a
  // missing limit there is no reason to run it.
  bool lacks = snap.gpus.empty();
  for (const auto& g : snap.gpus)
    if (g.error.empty() && (!g.temp_c || !g.power_w || (!g.power_limit_w && !g.unified_memory) || !g.sm_clock_mhz ||
                            !g.util_pct || !g.clock_event_reasons || !g.sm_clock_max_mhz))
      lacks = true;
  std::string smi_why = smi_exe_.empty() ? "nvidia-smi disabled (--nvidia-smi none)" : smi_last_error_;
  bool smi_used = false;
  if (!smi_exe_.empty() && lacks && (!probed_ || smi_useful_)) {
    auto smi = QueryNvidiaSmi(smi_exe_);
    if (!smi) {
      smi_why = smi_last_error_ = smi.error().message;
      // NVML answers: don't keep running a failing nvidia-smi. Without NVML, keep trying a
      // nvidia-smi that runs and fails (a driver may come back), but not one that is not there.
      if (nvml_ || smi.error().kind == Error::Kind::kNotFound) smi_useful_ = false;
    } else if (smi_last_error_.clear(); snap.gpus.empty()) {
      snap.gpus = std::move(*smi);
      smi_used = true;
    } else {
      int filled = 0;
      for (auto& g : snap.gpus)
        for (const auto& s : *smi)
          if (s.index == g.index && g.error.empty()) filled += FillAbsent(g, s);
      if (!probed_) smi_useful_ = filled > 0;
      smi_used = filled > 0;
    }
  }
  probed_ = true;
  for (auto& g : snap.gpus)
    if (g.mem_total_bytes && pool_bytes_ && LooksLikeSystemPool(g, *pool_bytes_)) {
      g.mem_total_bytes.reset(), g.mem_used_bytes.reset();
      g.unified_memory = true;
    }
  if (snap.gpus.empty()) {
    snap.source = "none";
    std::vector<std::string> why;
    if (!nvml_why_.empty()) why.push_back(nvml_why_);
    else if (nvml_) why.push_back("NVML lists no GPU");
    if (!smi_why.empty()) why.push_back(smi_why);
    snap.why_none = Join(why, "; ");
  } else {
    snap.source = nvml_ ? (smi_used ? "nvml+nvidia-smi" : "nvml") : "nvidia-smi";
  }
  return snap;
}

GpuSnapshot ReadGpuSnapshot(const HostView& ctx) {
  GpuReader reader(ctx);
  return reader.Read();
}

}  // namespace sparkops
