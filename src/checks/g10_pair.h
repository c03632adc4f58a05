#pragma once
/// G10's Spark-pair link lines (issue 18; host/rdma_link.h, host/comm_env.h): run with `--pair`,
/// when NCCL_IB_HCA, NCCL_SOCKET_IFNAME or UCX_NET_DEVICES is set in the shell, in NCCL's or
/// DeepSpeed's settings files, in a --config launch script or in a running launcher's environment,
/// or when a layout spans more than one node.
#include <vector>

#include "checks/check.h"
#include "host/comm_env.h"

namespace sparkops {

/// Adds the link's lines to `r`'s evidence; a finding (endpoint left out of NCCL_IB_HCA, MTU
/// mismatch, NCCL_SOCKET_IFNAME naming a down interface, UCX_NET_DEVICES naming nothing usable, a
/// port down) raises SKIP/PASS/INFO to WARN with its line, and where the value was set, as the
/// summary. `multi_node`: a layout read spans more than one node. `from_configs`: the NCCL/UCX
/// variables the --config launch scripts set. With --pair and nothing else read (SKIP), a link
/// without a finding is a PASS whose summary lists the active endpoints.
void ApplySparkPair(const HostFacts& f, bool multi_node, const std::vector<EnvSetting>& from_configs, CheckResult& r);

}  // namespace sparkops
