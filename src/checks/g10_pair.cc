#include "checks/g10_pair.h"

#include "host/rdma_link.h"

namespace sparkops {

void ApplySparkPair(const HostFacts& f, bool multi_node, CheckResult& r) {
  std::string hca = f.ctx().Getenv("NCCL_IB_HCA"), sock = f.ctx().Getenv("NCCL_SOCKET_IFNAME");
  if (hca.empty() && sock.empty() && !multi_node) return;
  std::vector<RdmaPort> ports = ReadRdmaPorts(f.ctx().fs);
  if (ports.empty() && sock.empty()) {
    r.evidence.push_back("pair link: no RDMA device under /sys/class/infiniband (no ConnectX link to check)");
    return;
  }
  const PairLine* first_warn = nullptr;
  std::vector<PairLine> lines = JudgePair(ports, ReadNetIfs(f.ctx().fs), hca, sock);
  bool any_up = false;
  for (const auto& p : ports) any_up |= p.state == "ACTIVE";
  for (const PairLine& l : lines) {
    // A spare port down beside an active one is normal (one cable per pair); all down is not.
    bool warn = l.level == PairLevel::kWarn && (!any_up || !l.endpoint);
    r.evidence.push_back(std::string(warn ? "WARN " : "") + "pair link: " + l.text);
    if (warn && !first_warn) first_warn = &l;
  }
  if (!first_warn) return;
  if (r.status == CheckStatus::kFail) return;  // a layout failure stays the headline
  if (r.status != CheckStatus::kWarn) r.summary = "pair link: " + first_warn->text;
  r.status = CheckStatus::kWarn;
  if (r.fix.empty())
    r.fix = "name both RDMA endpoints of the cabled port in NCCL_IB_HCA (e.g. NCCL_IB_HCA=rocep1s0f0,roceP2p1s0f0), "
            "use the same MTU on both Sparks, and point NCCL_SOCKET_IFNAME at an interface that is up";
}

}  // namespace sparkops
