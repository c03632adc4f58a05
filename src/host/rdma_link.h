#pragma once
/// The Spark-pair link (issue 18, G10): RDMA endpoints under `/sys/class/infiniband/*` (port
/// state, rate, link layer, netdev) and interfaces under `/sys/class/net/*` (operstate, speed,
/// MTU), checked against NCCL_IB_HCA and NCCL_SOCKET_IFNAME. On a Spark each ConnectX-7 QSFP port
/// appears as two PCIe x4 RDMA endpoints: NCCL uses only the devices NCCL_IB_HCA names, and naming
/// one of the two halves the bandwidth (98 -> 161 Gb/s measured after naming both).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/hostfs.h"

namespace sparkops {

struct RdmaPort {
  std::string device;              ///< rocep1s0f0, mlx5_0, ...
  int port = 1;
  std::string state;               ///< ACTIVE, DOWN, INIT, ... ("4: ACTIVE" -> "ACTIVE")
  std::string rate;                ///< "100 Gb/sec (2X NDR)" as the kernel prints it; "" unread
  std::string link_layer;          ///< Ethernet (RoCE) or InfiniBand
  std::vector<std::string> netdevs;  ///< `device/net/*`: the interfaces of this endpoint
};

struct NetIf {
  std::string name;
  std::string operstate;           ///< up, down, unknown, ...
  std::optional<int> speed_mbps;   ///< absent when unread or -1
  std::optional<int> mtu;
};

/// One NCCL device list (NCCL_IB_HCA or NCCL_SOCKET_IFNAME): "a,b:1", "^x" (exclude), "=a" (exact).
struct NcclList {
  bool exclude = false, exact = false;
  std::vector<std::pair<std::string, std::optional<int>>> items;  ///< name, port
  /// Whether NCCL would use `name` (port `port`, 0 = any): prefix match unless exact.
  bool Selects(std::string_view name, int port = 0) const;
};

/// Pure: parses an NCCL device list ("" gives an empty list that selects everything).
NcclList ParseNcclList(std::string_view text);
/// Pure: "4: ACTIVE" -> "ACTIVE"; anything else trimmed as is.
std::string ParseIbState(std::string_view text);

/// Reads every RDMA port (at most 64 devices x 8 ports). Empty when the class is missing.
std::vector<RdmaPort> ReadRdmaPorts(const HostFs& fs);
/// Reads every interface in /sys/class/net except `lo` (at most 256).
std::vector<NetIf> ReadNetIfs(const HostFs& fs);

enum class PairLevel { kOk, kWarn };
struct PairLine {
  PairLevel level;
  std::string text;
  bool endpoint = false;  ///< one endpoint's state line (a spare port down is normal beside an active one)
};

/// Pure: the NCCL_IB_HCA finding (an active endpoint the list leaves out); nullopt when none or unset.
std::optional<PairLine> JudgeIbHca(const std::vector<RdmaPort>& ports, const std::string& ib_hca);
/// Pure: the NCCL_SOCKET_IFNAME finding (no named interface is up); nullopt when none or unset.
std::optional<PairLine> JudgeSocketIfname(const std::vector<NetIf>& ifs, const std::string& socket_ifname);
/// Pure: the UCX_NET_DEVICES finding: the list ("mlx5_0:1,enp1s0f0np0", exact names; "all" or ""
/// is every device) names no ACTIVE endpoint port and no interface that is up.
std::optional<PairLine> JudgeUcxDevices(const std::vector<RdmaPort>& ports, const std::vector<NetIf>& ifs,
                                        const std::string& ucx_net_devices);

/// Pure: the G10 pair lines: each endpoint's state and rate, endpoints NCCL_IB_HCA leaves out,
/// an MTU mismatch among the endpoints' interfaces, NCCL_SOCKET_IFNAME naming a down or missing
/// interface. `ib_hca`/`socket_ifname` are the variables ("" when unset).
std::vector<PairLine> JudgePair(const std::vector<RdmaPort>& ports, const std::vector<NetIf>& ifs,
                                const std::string& ib_hca, const std::string& socket_ifname);

}  // namespace sparkops
