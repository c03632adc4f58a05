#include "host/rdma_link.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/strings.h"

namespace sparkops {
namespace {
constexpr size_t kSmall = 256;

std::string ReadTrim(const HostFs& fs, const std::string& p) {
  auto t = fs.Read(p, kSmall);
  return t ? std::string(Trim(*t)) : std::string();
}

std::vector<std::string> Sorted(Result<std::vector<std::string>> r, size_t max) {
  std::vector<std::string> v = r ? std::move(*r) : std::vector<std::string>{};
  std::sort(v.begin(), v.end());
  if (v.size() > max) v.resize(max);
  return v;
}
}  // namespace

bool NcclList::Selects(std::string_view name, int port) const {
  if (items.empty()) return true;
  bool hit = false;
  for (const auto& [n, p] : items) {
    bool name_ok = exact ? name == n : StartsWith(name, n);
    if (name_ok && (!p || port == 0 || *p == port)) hit = true;
  }
  return exclude ? !hit : hit;
}

NcclList ParseNcclList(std::string_view text) {
  NcclList l;
  text = Trim(text);
  if (StartsWith(text, "^")) l.exclude = true, text.remove_prefix(1);
  if (StartsWith(text, "=")) l.exact = true, text.remove_prefix(1);
  for (std::string_view item : Split(text, ',')) {
    item = Trim(item);
    if (item.empty()) continue;
    std::optional<int> port;
    if (auto c = item.find(':'); c != std::string_view::npos) {
      if (auto p = ParseInt(item.substr(c + 1)); p && *p > 0 && *p < 256) port = static_cast<int>(*p);
      item = item.substr(0, c);
    }
    l.items.emplace_back(std::string(item), port);
  }
  return l;
}

std::string ParseIbState(std::string_view text) {
  text = Trim(text);
  if (auto c = text.find(": "); c != std::string_view::npos) return std::string(Trim(text.substr(c + 2)));
  return std::string(text);
}

std::vector<RdmaPort> ReadRdmaPorts(const HostFs& fs) {
  std::vector<RdmaPort> out;
  for (const std::string& dev : Sorted(fs.List("/sys/class/infiniband"), 64)) {
    std::string base = "/sys/class/infiniband/" + dev;
    std::vector<std::string> netdevs = Sorted(fs.List(base + "/device/net"), 8);
    for (const std::string& p : Sorted(fs.List(base + "/ports"), 8)) {
      auto n = ParseInt(p);
      if (!n || *n <= 0 || *n > 255) continue;
      std::string pd = base + "/ports/" + p;
      out.push_back({dev, static_cast<int>(*n), ParseIbState(ReadTrim(fs, pd + "/state")), ReadTrim(fs, pd + "/rate"),
                     ReadTrim(fs, pd + "/link_layer"), netdevs});
    }
  }
  return out;
}

std::vector<NetIf> ReadNetIfs(const HostFs& fs) {
  std::vector<NetIf> out;
  for (const std::string& n : Sorted(fs.List("/sys/class/net"), 256)) {
    if (n == "lo") continue;
    std::string d = "/sys/class/net/" + n;
    NetIf i{n, ReadTrim(fs, d + "/operstate"), std::nullopt, std::nullopt};
    if (auto s = ParseInt(ReadTrim(fs, d + "/speed")); s && *s > 0 && *s < 10'000'000)
      i.speed_mbps = static_cast<int>(*s);
    if (auto m = ParseInt(ReadTrim(fs, d + "/mtu")); m && *m > 0 && *m < 1'000'000) i.mtu = static_cast<int>(*m);
    out.push_back(std::move(i));
  }
  return out;
}

std::optional<PairLine> JudgeIbHca(const std::vector<RdmaPort>& ports, const std::string& ib_hca) {
  if (ib_hca.empty()) return std::nullopt;
  NcclList hca = ParseNcclList(ib_hca);
  std::vector<std::string> left_out;
  for (const auto& p : ports)
    if (p.state == "ACTIVE" && !hca.Selects(p.device, p.port)) left_out.push_back(p.device);
  if (left_out.empty()) return std::nullopt;
  return PairLine{
      PairLevel::kWarn,
      fmt::format("NCCL_IB_HCA={} leaves out the active endpoint{} {}: NCCL uses only the devices it names, "
                  "and each QSFP port is two PCIe x4 endpoints, so naming one of the two halves the "
                  "bandwidth (98 -> 161 Gb/s measured after naming both)",
                  ib_hca, left_out.size() > 1 ? "s" : "", Join(left_out, ", "))};
}

std::optional<PairLine> JudgeSocketIfname(const std::vector<NetIf>& ifs, const std::string& socket_ifname) {
  if (socket_ifname.empty()) return std::nullopt;
  NcclList sock = ParseNcclList(socket_ifname);
  std::vector<std::string> matched, down;
  for (const auto& i : ifs)
    if (sock.Selects(i.name)) (i.operstate == "up" ? matched : down).push_back(i.name);
  if (sock.exclude || !matched.empty()) return std::nullopt;
  return PairLine{PairLevel::kWarn,
                  fmt::format("NCCL_SOCKET_IFNAME={} names no interface that is up{}: NCCL's bootstrap cannot connect",
                              socket_ifname, down.empty() ? " (none exists)" : " (" + Join(down, ", ") + " down)")};
}

std::optional<PairLine> JudgeUcxDevices(const std::vector<RdmaPort>& ports, const std::vector<NetIf>& ifs,
                                        const std::string& ucx_net_devices) {
  std::string_view all = Trim(ucx_net_devices);
  if (all.empty() || all == "all") return std::nullopt;
  std::vector<std::string> named;
  bool any_usable = false;
  for (auto item : Split(all, ',')) {
    std::string_view it = Trim(item);
    if (it.empty()) continue;
    named.emplace_back(it);
    size_t colon = it.rfind(':');
    std::string_view dev = colon == std::string_view::npos ? it : it.substr(0, colon);
    std::optional<int64_t> port = colon == std::string_view::npos ? std::nullopt : ParseInt(it.substr(colon + 1));
    for (const auto& p : ports) any_usable |= p.device == dev && p.state == "ACTIVE" && (!port || *port == p.port);
    for (const auto& i : ifs) any_usable |= i.name == it && i.operstate == "up";
  }
  if (any_usable || named.empty()) return std::nullopt;
  return PairLine{PairLevel::kWarn,
                  fmt::format("UCX_NET_DEVICES={} names no active RDMA endpoint port and no interface that is up: "
                              "UCX will not use the ConnectX link",
                              ucx_net_devices)};
}

std::vector<PairLine> JudgePair(const std::vector<RdmaPort>& ports, const std::vector<NetIf>& ifs,
                                const std::string& ib_hca, const std::string& socket_ifname) {
  std::vector<PairLine> out;
  std::map<std::string, const NetIf*> by_name;
  for (const auto& i : ifs) by_name[i.name] = &i;
  std::set<int> mtus;
  std::vector<std::string> mtu_txt;
  for (const auto& p : ports) {
    bool up = p.state == "ACTIVE";
    std::string nets;
    for (const auto& n : p.netdevs) {
      auto it = by_name.find(n);
      nets += (nets.empty() ? " via " : ", ") + n;
      if (it != by_name.end() && it->second->mtu && it->second->operstate == "up") {
        mtus.insert(*it->second->mtu);
        mtu_txt.push_back(fmt::format("{} {}", n, *it->second->mtu));
      }
    }
    out.push_back(
        {up ? PairLevel::kOk : PairLevel::kWarn,
         fmt::format("{} port {}: {}{}{}{}", p.device, p.port, p.state.empty() ? "state not readable" : p.state,
                     p.rate.empty() ? "" : ", " + p.rate, p.link_layer.empty() ? "" : " (" + p.link_layer + ")", nets),
         true});
  }
  if (auto l = JudgeIbHca(ports, ib_hca)) out.push_back(std::move(*l));
  if (mtus.size() > 1)
    out.push_back({PairLevel::kWarn, "MTU mismatch between the link's interfaces (" + Join(mtu_txt, ", ") +
                                         "): set the same MTU (9000 measured ~19-21 GB/s all_gather) on both ends"});
  if (auto l = JudgeSocketIfname(ifs, socket_ifname)) out.push_back(std::move(*l));
  return out;
}

}  // namespace sparkops
