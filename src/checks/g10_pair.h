#pragma once
/// G10's Spark-pair link lines (issue 18; host/rdma_link.h): run when NCCL_IB_HCA or
/// NCCL_SOCKET_IFNAME is set in the shell or a layout spans more than one node.
#include "checks/check.h"

namespace sparkops {

/// Adds the link's lines to `r`'s evidence; a finding (endpoint left out of NCCL_IB_HCA, MTU
/// mismatch, NCCL_SOCKET_IFNAME naming a down interface, a port down) raises SKIP/PASS/INFO to
/// WARN with its line as the summary. `multi_node`: a layout read spans more than one node.
void ApplySparkPair(const HostFacts& f, bool multi_node, CheckResult& r);

}  // namespace sparkops
