#pragma once
/// The guard's follower of the kernel log (issue 33). An NVRM `NV_ERR_NO_MEMORY` record logged while
/// a job is guarded counts as crossing the floor: on a GB10 the host can wedge silently minutes
/// later, with no OOM kill and no panic (NVIDIA/open-gpu-kernel-modules #1358). Only records logged
/// after the guard started count (by sequence number); polling never blocks and runs at the
/// guard's own cadence. The matching is pure (GuardStopSign); the follower is a thin reader.
#include <optional>
#include <string>

#include "host/hostfs.h"
#include "host/kmsg.h"
#include "host/kmsg_reader.h"

namespace sparkops::guard {

/// Pure: true for the records the guard stops a job for (NVRM NV_ERR_NO_MEMORY, host/kmsg.h's table).
bool StopsTheJob(const KernelSign& s);

/// Pure: the first record in `news` the guard stops a job for, if any. When more signs came than
/// KernelSignals keeps, the count still says one came: a sign naming the record kind stands in.
std::optional<KernelSign> GuardStopSign(const KernelSignals& news);

/// Follows /dev/kmsg (under the HostFs root) from the moment it is started.
class KernelWatch {
 public:
  /// Opens the log and skips every record already in it, or with `from` every record up to its mark
  /// (taken earlier: what was logged since then counts on the first Poll). nullopt when there is
  /// none to follow: absent (a container, a fixture root without dev/kmsg: nothing to say) or
  /// unreadable (no root, kernel.dmesg_restrict=1; `*note` says why, for the caller to say once).
  static std::optional<KernelWatch> Start(const HostFs& fs, std::string* note,
                                          const std::optional<KmsgMark>& from = std::nullopt);

  /// Reads what was logged since the last poll (each record once) and returns the first record the
  /// guard stops a job for. A read error ends the following (said in `*note` when given).
  std::optional<KernelSign> Poll(std::string* note = nullptr);

 private:
  explicit KernelWatch(KmsgReader r, std::optional<uint64_t> last) : reader_(std::move(r)), last_seq_(last) {}
  std::optional<KmsgReader> reader_;
  std::optional<uint64_t> last_seq_;  ///< the last record seen: later polls take only what follows
};

}  // namespace sparkops::guard
