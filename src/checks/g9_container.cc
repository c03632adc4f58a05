// G9: container-first (docs/checks.md, G9). Container detection under --root plus NGC environment
// variables; on bare pip, WARN with the evidence of drift (torch/triton/xformers/transformers
// versions and whether their pins agree).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/strings.h"
#include "checks/check.h"
#include "checks/python_common.h"
#include "host/container.h"
#include "host/markers.h"

namespace sparkops {

namespace {

/// Pins compared, and the marker environment of the judged machine.
struct Pins {
  MarkerEnv env;
  std::vector<std::string> agree, disagree;
};

/// Does the requirement apply on the judged machine? Markers are evaluated (PEP 508); an
/// unknown or unparsable one does not count as a pin (it could not be checked either way).
bool Applies(const Requirement& req, const MarkerEnv& env) {
  if (req.marker.empty()) return true;
  return EvaluateMarker(req.marker, env).value_or(false);
}

/// Does `pkg`'s Requires-Dist pin on `dep` agree with the installed `dep`? Adds a line to `pins`.
void CheckPin(const Inventory& inv, const Package& pkg, std::string_view dep_norm, Pins& pins) {
  std::vector<std::string>& agree = pins.agree;
  std::vector<std::string>& disagree = pins.disagree;
  const Package* dep = inv.Find(dep_norm);
  if (!dep) return;
  for (const auto& req : pkg.requires_dist) {
    if (NormalizeName(req.name) != dep_norm || req.spec.empty()) continue;
    if (!Applies(req, pins.env)) continue;  // another platform, or an optional extra
    auto ok = SatisfiesSpec(dep->version, req.spec);
    std::string line =
        fmt::format("{} requires {}{}; installed {}", PackageLabel(pkg), req.name, req.spec, dep->version);
    if (ok && !*ok) disagree.push_back(line);
    else agree.push_back(line);
  }
}

/// Every other installed distribution's exact pins (`Requires-Dist: torch==2.9.1`) on an installed
/// one; requirements for extras or whose marker does not hold on the judged machine are skipped.
void ExactPins(const Inventory& inv, Pins& pins) {
  std::set<std::string> done;
  auto covered = [](const std::string& pkg, const std::string& dep) {
    if (pkg == "torch") return dep == "triton" || dep == "pytorch-triton";
    return dep == "torch" &&
           (pkg == "xformers" || pkg == "vllm" || pkg == "flash-attn" || pkg == "torchvision" || pkg == "torchaudio");
  };
  for (const auto& p : inv.packages) {
    if (inv.Find(p.norm) != &p) continue;  // a shadowed copy is not what imports
    for (const auto& req : p.requires_dist) {
      std::string dep = NormalizeName(req.name);
      if (req.spec.find("==") == std::string::npos || covered(p.norm, dep) || !inv.Find(dep)) continue;
      if (!Applies(req, pins.env) || !done.insert(p.norm + " " + dep).second) continue;
      CheckPin(inv, p, dep, pins);  // every applicable pin of p on dep, once
    }
  }
}

/// All pins compared: torch's on triton, the torch extensions' on torch, every exact pin.
Pins ComparePins(const HostFacts& f) {
  const Inventory& inv = f.packages();
  std::string py;
  if (f.python() && !f.python()->site_dirs.empty()) py = PythonVersionFromSiteDir(f.python()->site_dirs.front());
  Pins pins{LinuxMarkerEnv(f.host_machine(), py), {}, {}};
  if (const Package* torch = inv.Find("torch")) {
    CheckPin(inv, *torch, "triton", pins);
    CheckPin(inv, *torch, "pytorch-triton", pins);
    if (inv.FindAll("torch").size() > 1)
      pins.disagree.push_back(fmt::format("{} torch installs on sys.path", inv.FindAll("torch").size()));
  }
  for (const char* n : {"xformers", "vllm", "flash-attn", "torchvision", "torchaudio"})
    if (const Package* p = inv.Find(n)) CheckPin(inv, *p, "torch", pins);
  ExactPins(inv, pins);
  return pins;
}

std::string FirstThree(const std::vector<std::string>& v) {
  std::vector<std::string> head(v.begin(), v.begin() + std::min<std::ptrdiff_t>(3, std::ssize(v)));
  return Join(head, "; ") + (v.size() > 3 ? "; ..." : "");
}

}  // namespace

CheckResult CheckG9(const HostFacts& f) {
  CheckResult r{"G9", CheckStatus::kPass, "", {}, ""};
  ContainerInfo c = DetectContainer(f.ctx());
  r.evidence = c.evidence;
  std::string ngc;
  const auto& tv = f.python() ? f.torch_version() : std::optional<Result<TorchVersion>>{};
  if (!c.ngc_release.empty()) ngc = c.ngc_release;
  else if (tv && *tv) ngc = NgcRelease((*tv)->version);
  if (!c.ngc_product.empty()) r.evidence.push_back("NVIDIA_PRODUCT_NAME=" + c.ngc_product);
  if (!c.pip_constraint.empty())
    r.evidence.push_back("PIP_CONSTRAINT=" + c.pip_constraint +
                         " (NGC pins torch/triton: pip cannot silently replace them)");
  if (c.in_container) {
    r.summary = ngc.empty() ? fmt::format("running in a container ({})", c.engine)
                            : fmt::format("running in an NGC {} {} container ({})",
                                          c.ngc_product.empty() ? "PyTorch" : c.ngc_product, ngc, c.engine);
    if (!f.python()) return r;
    // A container does not keep an extension built for another torch from being installed in it.
    Pins pins = ComparePins(f);
    r.evidence.push_back(EnvEvidence(*f.python()));
    for (const auto& a : pins.agree) r.evidence.push_back("pin agrees: " + a);
    for (const auto& d : pins.disagree) r.evidence.push_back("pin DISAGREES: " + d);
    if (!pins.disagree.empty()) {
      r.status = CheckStatus::kWarn;
      r.summary += fmt::format("; {} pin(s) disagree: {}", pins.disagree.size(), FirstThree(pins.disagree));
      r.fix =
          "install the builds made for the installed torch (or the torch they were built for); inside an NGC "
          "container keep its torch and install extensions with its PIP_CONSTRAINT";
    }
    return r;
  }
  if (!ngc.empty()) r.evidence.push_back("torch carries the NGC tag " + ngc + " but no container marker was found");
  r.evidence.push_back(
      "no container marker: no /.dockerenv, /run/.containerenv, container= or cgroup/mountinfo "
      "marker (cgroup v2 with a private namespace shows none even in Docker)");
  r.status = CheckStatus::kWarn;
  r.fix =
      "prefer an NGC container (nvcr.io/nvidia/pytorch:25.10-py3 or newer ships CUDA 13 torch, flash-attn and "
      "a pip constraint file) or Unsloth's container";
  if (!f.python()) {
    r.summary = "bare host, no container; no Python environment found to inspect for drift";
    return r;
  }
  const Inventory& inv = f.packages();
  std::vector<std::string> versions;
  for (const char* n : {"torch", "triton", "pytorch-triton", "xformers", "transformers"})
    if (const Package* p = inv.Find(n)) versions.push_back(PackageLabel(*p));
  r.evidence.push_back(EnvEvidence(*f.python()));
  Pins pins = ComparePins(f);
  const auto& agree = pins.agree;
  const auto& disagree = pins.disagree;
  for (const auto& a : agree) r.evidence.push_back("pin agrees: " + a);
  for (const auto& d : disagree) r.evidence.push_back("pin DISAGREES: " + d);
  std::string vs = versions.empty() ? "no torch stack installed" : Join(versions, ", ");
  r.summary =
      fmt::format("bare pip, no container: {}; {}", vs,
                  disagree.empty() ? (agree.empty() ? std::string("no pins to compare")
                                                    : fmt::format("{} pin(s) agree", agree.size()))
                                   : fmt::format("{} pin(s) disagree: {}", disagree.size(), FirstThree(disagree)));
  return r;
}

}  // namespace sparkops
