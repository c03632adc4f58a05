#include "checks/g10_pair.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "base/strings.h"
#include "host/rdma_link.h"

namespace sparkops {

namespace {

/// The distinct values of one variable, each with every place that sets it, in reading order.
using Values = std::vector<std::pair<std::string, std::vector<std::string>>>;

std::map<std::string, Values> Group(const std::vector<EnvSetting>& settings) {
  std::map<std::string, Values> out;
  for (const EnvSetting& s : settings) {
    Values& vs = out[s.name];
    auto it = std::find_if(vs.begin(), vs.end(), [&](const auto& v) { return v.first == s.value; });
    if (it == vs.end()) vs.push_back({s.value, {s.source}});
    else if (std::find(it->second.begin(), it->second.end(), s.source) == it->second.end())
      it->second.push_back(s.source);
  }
  return out;
}

/// Every NCCL/UCX setting G10 can see: the shell, NCCL's and DeepSpeed's files, the --config
/// launch scripts, the running launchers.
std::vector<EnvSetting> AllSettings(const HostFacts& f, const std::vector<EnvSetting>& from_configs,
                                    std::vector<std::string>& notes) {
  std::vector<EnvSetting> all = CommEnvOf(f.ctx().env, "shell");
  std::error_code ec;
  std::string cwd = std::filesystem::current_path(ec).string();
  for (auto& s : ReadCommEnvFiles(f.ctx(), ec ? std::string() : cwd, notes)) all.push_back(std::move(s));
  all.insert(all.end(), from_configs.begin(), from_configs.end());
  if (const auto& scan = f.workloads(); scan)
    for (const auto& w : scan->workloads)
      for (auto& s : CommEnvOf(w.env, fmt::format("pid {} environment", w.main.pid))) all.push_back(std::move(s));
  return all;
}

const Values kNone;
const Values& Of(const std::map<std::string, Values>& g, const char* name) {
  auto it = g.find(name);
  return it == g.end() ? kNone : it->second;
}

}  // namespace

void ApplySparkPair(const HostFacts& f, bool multi_node, const std::vector<EnvSetting>& from_configs, CheckResult& r) {
  std::vector<std::string> notes;
  std::vector<EnvSetting> settings = AllSettings(f, from_configs, notes);
  std::map<std::string, Values> vars = Group(settings);
  const Values &hca = Of(vars, "NCCL_IB_HCA"), &sock = Of(vars, "NCCL_SOCKET_IFNAME"),
               &ucx = Of(vars, "UCX_NET_DEVICES");
  if (hca.empty() && sock.empty() && ucx.empty() && !multi_node && !f.options().pair) return;
  const bool was_skip = r.status == CheckStatus::kSkip;

  for (const auto& [name, values] : vars) {  // where each variable is set; differing values are all checked
    std::vector<std::string> parts;
    for (const auto& [value, sources] : values)
      parts.push_back(fmt::format("{}={} ({})", name, value, Join(sources, ", ")));
    r.evidence.push_back(values.size() > 1 ? fmt::format("pair link: {} differs: {}", name, Join(parts, " vs "))
                                           : "pair link: " + parts.front());
  }
  for (const auto& n : notes) r.evidence.push_back("pair link: " + n);

  std::vector<RdmaPort> ports = ReadRdmaPorts(f.ctx().fs);
  if (ports.empty() && sock.empty()) {
    std::string line = "pair link: no RDMA device under /sys/class/infiniband (no ConnectX link to check)";
    r.evidence.push_back(line);
    if (was_skip && f.options().pair) r.summary = line;
    return;
  }
  std::vector<NetIf> ifs = ReadNetIfs(f.ctx().fs);
  std::vector<PairLine> lines = JudgePair(ports, ifs, "", "");  // endpoints and MTU
  auto add = [&](std::optional<PairLine> l, const std::vector<std::string>& sources) {
    if (l) lines.push_back({l->level, l->text + "; set in: " + Join(sources, ", ")});
  };
  for (const auto& [v, src] : hca) add(JudgeIbHca(ports, v), src);
  for (const auto& [v, src] : sock) add(JudgeSocketIfname(ifs, v), src);
  for (const auto& [v, src] : ucx) add(JudgeUcxDevices(ports, ifs, v), src);

  const PairLine* first_warn = nullptr;
  std::vector<std::string> active;
  for (const auto& p : ports)
    if (p.state == "ACTIVE") active.push_back(p.rate.empty() ? p.device : p.device + " " + p.rate);
  for (const PairLine& l : lines) {
    // A spare port down beside an active one is normal (one cable per pair); all down is not.
    bool warn = l.level == PairLevel::kWarn && (active.empty() || !l.endpoint);
    r.evidence.push_back(std::string(warn ? "WARN " : "") + "pair link: " + l.text);
    if (warn && !first_warn) first_warn = &l;
  }
  if (!first_warn) {
    if (was_skip && f.options().pair) {  // --pair asked for the link: say how it stands
      r.status = CheckStatus::kPass;
      r.summary = ports.empty() ? "pair link: no RDMA device; NCCL_SOCKET_IFNAME names an interface that is up"
                                : fmt::format("pair link: {} of {} RDMA endpoint ports active ({}), no finding",
                                              active.size(), ports.size(), Join(active, ", "));
    }
    return;
  }
  if (r.status == CheckStatus::kFail) return;  // a layout failure stays the headline
  if (r.status != CheckStatus::kWarn) r.summary = "pair link: " + first_warn->text;
  r.status = CheckStatus::kWarn;
  if (r.fix.empty())
    r.fix =
        "name both RDMA endpoints of the cabled port in NCCL_IB_HCA (e.g. NCCL_IB_HCA=rocep1s0f0,roceP2p1s0f0), "
        "use the same MTU on both Sparks, and point NCCL_SOCKET_IFNAME at an interface that is up";
}

}  // namespace sparkops
