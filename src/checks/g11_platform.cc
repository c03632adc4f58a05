#include <fmt/format.h>

#include "base/strings.h"
#include "checks/g11_platform.h"
#include "host/buddyinfo.h"
#include "host/kmsg_reader.h"
#include "host/platform.h"

namespace sparkops {

namespace {

/// Raises `r`'s status to at least `s` (FAIL > WARN > INFO > PASS).
void Raise(CheckResult* r, CheckStatus s) {
  auto rank = [](CheckStatus x) {
    switch (x) {
      case CheckStatus::kFail: return 3;
      case CheckStatus::kWarn: return 2;
      case CheckStatus::kInfo: return 1;
      default: return 0;
    }
  };
  if (rank(s) > rank(r->status)) r->status = s;
}

void AddFix(CheckResult* r, const std::string& fix) { r->fix += (r->fix.empty() ? "" : "; ") + fix; }

/// The driver: the kernel module's version, NVML's where it differs, and the known-bad 590 branch.
std::string DriverPart(const HostFacts& f, CheckResult* r) {
  auto module = ReadNvidiaModuleVersion(f.ctx().fs);
  std::optional<std::string> nvml;
  if (f.gpu().any()) nvml = f.gpu().gpus.front().driver_version;
  if (!module && !nvml) return "no NVIDIA driver loaded";
  std::string v = module ? *module : *nvml;
  std::string part = "driver " + v + (module ? " (kernel module)" : " (NVML)");
  if (module && nvml && *nvml != *module) {
    Raise(r, CheckStatus::kWarn);
    part += ", NVML reports " + *nvml;
    r->evidence.push_back(fmt::format(
        "the kernel module (/proc/driver/nvidia/version) is {} but NVML reports {}: the user-space driver and "
        "the loaded module differ (an upgrade without a reboot); CUDA may fail to initialise",
        *module, *nvml));
    AddFix(r, "reboot so the loaded kernel module matches the installed driver");
  }
  if (StartsWith(v, "590.")) {
    Raise(r, CheckStatus::kWarn);
    part += " (590.x: known CUDA-graph defect)";
    r->evidence.push_back(
        "driver 590.x has a confirmed CUDA-graph defect on DGX Spark; users advise staying on 580.x "
        "(conselara: \"Stay on 580.x\")");
    AddFix(r, "stay on (or return to) the 580.x driver branch");
  }
  return part;
}

std::string KernelPart(const HostFacts& f, CheckResult* r) {
  auto rel = ReadKernelRelease(f.ctx().fs);
  if (!rel) return "kernel release not readable";
  if (StartsWith(*rel, "6.17.0-1008-")) {
    Raise(r, CheckStatus::kWarn);
    r->evidence.push_back("kernel " + *rel +
                          ": a GB10 DOE-mailbox stuck state was reported on this kernel "
                          "(parallelArchitect/dgx-forensic-collect)");
    AddFix(r, "update DGX OS to a later kernel");
  }
  return "kernel " + *rel;
}

std::string KernelLogPart(const HostFacts& f, CheckResult* r) {
  const auto k = ReadKernelSignals(f.ctx().fs);
  if (!k) {
    Raise(r, CheckStatus::kInfo);
    if (k.error().kind == Error::Kind::kNotFound) return "kernel log: /dev/kmsg not present";
    r->evidence.push_back("kernel log not read: " + k.error().message);
    return "kernel log not readable (run as root to check for NVRM/Xid/OOM-kill records)";
  }
  std::vector<std::string> found;
  for (const auto& def : KernelSignTable()) {
    uint64_t n = k->count(def.kind);
    if (n == 0) continue;
    bool nvrm = def.kind == KernelSignKind::kNvrmNoMemory;
    Raise(r, nvrm ? CheckStatus::kFail : CheckStatus::kWarn);
    found.push_back(fmt::format("{} {}", n, def.name));
    const KernelSign* last = k->Last(def.kind);
    r->evidence.push_back(fmt::format("{} x{}: {} ({}){}", def.name, n, def.meaning, def.source,
                                      last ? fmt::format("; last at {:.1f} s after boot: {}",
                                                         static_cast<double>(last->usec) / 1e6, last->line)
                                           : ""));
  }
  if (found.empty()) return "this boot's kernel log: no NVRM/Xid/OOM-kill/hung-task/lockup records";
  if (k->count(KernelSignKind::kNvrmNoMemory) > 0)
    AddFix(r,
           "the driver already failed to allocate memory this boot: reboot before a long run, and keep the job "
           "well below the pool (`sparkops plan`, the memory guard of `sparkops run`)");
  return "this boot's kernel log: " + Join(found, ", ");
}

std::string CmaPart(const HostFacts& f, CheckResult* r) {
  if (!f.options().pair) return "";
  auto cma = ReadMemInfoExtras(f.ctx().fs).cma_total;
  if (!cma) return "CmaTotal not reported";
  if (*cma == 0) {
    Raise(r, CheckStatus::kFail);
    r->evidence.push_back(
        "CmaTotal 0 kB: this kernel reserves no contiguous memory; NCCL between two Sparks fails with ENOMEM "
        "(luxingcom/aicad-nccl-optimization#1)");
    AddFix(r, "boot with a CMA reservation (e.g. cma=1G on the kernel command line) or a kernel built with CMA");
    return "CmaTotal 0 kB";
  }
  return fmt::format("CmaTotal {:.0f} MiB", static_cast<double>(*cma) / (1 << 20));
}

std::string PstorePart(const HostFacts& f, CheckResult* r) {
  auto files = ListPstore(f.ctx().fs);
  if (files.empty()) return "no pstore records";
  Raise(r, CheckStatus::kWarn);
  for (const auto& p : files) r->evidence.push_back(fmt::format("pstore: {} ({} bytes)", p.path, p.bytes));
  r->evidence.push_back(
      "pstore records are what the kernel saved as an earlier boot crashed or froze (Linux "
      "Documentation/admin-guide/ramoops.rst; systemd-pstore archives them under /var/lib/systemd/pstore)");
  AddFix(r,
         "read the pstore records (the last kernel lines before the crash), then move them away so the next "
         "crash has room");
  return fmt::format("{} pstore record(s) from a crashed boot", files.size());
}

}  // namespace

// G11: the platform under the job. PASS only when nothing known-bad is found and the kernel log
// was read; a precursor of the GB10 host wedge is never PASS/INFO.
CheckResult CheckG11(const HostFacts& f) {
  CheckResult r{"G11", CheckStatus::kPass, "", {}, ""};
  std::vector<std::string> parts;
  for (std::string p : {DriverPart(f, &r), KernelPart(f, &r), KernelLogPart(f, &r), CmaPart(f, &r), PstorePart(f, &r)})
    if (!p.empty()) parts.push_back(std::move(p));
  r.summary = Join(parts, "; ");
  return r;
}

}  // namespace sparkops
