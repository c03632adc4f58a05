#pragma once
/// The `memory_guard` event (events.jsonl, and `sparkops guard`'s JSON lines): the readings that
/// decided the action and the footprint of the process it hit.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "guard/watcher.h"
#include "host/host_view.h"
#include "host/proctable.h"

namespace sparkops::guard {

/// Pure: `root` and its descendants in `table` (by PPid).
std::set<uint32_t> ProcessTree(const std::vector<ProcessInfo>& table, uint32_t root);
/// True while `pid` exists on this machine and is not a zombie.
bool ProcessAlive(uint32_t pid);

/// Reads the footprint of `root` and its descendants: RSS from this machine's /proc, GPU memory through
/// ctx's NVML/nvidia-smi (allocates: called after the signal was sent).
Footprint JobFootprint(const HostView& ctx, pid_t root);

/// Pure: the event's fields (without time/type): action flush / terminate (SIGTERM sent) / kill
/// (SIGKILL after the grace), the readings and the footprint. Bytes throughout; absent readings
/// are omitted.
nlohmann::ordered_json GuardEventFields(const ActionRecord& a, const Footprint& f);

}  // namespace sparkops::guard
