#pragma once
/// The live `sparkops run`s on the host, for `top` (issue 37, docs/top.md "RUNS"). A run
/// advertises itself through its guard's ledger (guard/ledger.h: kRunLedgerSpool, or the user's
/// runtime directory), which names its run directory; only ledgers ReadLedgers believes count.
#include <string>
#include <vector>

#include "analysis/live_run.h"
#include "guard/ledger.h"
#include "host/hostfs.h"

namespace sparkops {

/// Bytes read from the end of train.log and of events.jsonl per run and frame.
inline constexpr size_t kLiveRunLogTailBytes = 256u << 10;
inline constexpr size_t kLiveRunEventsTailBytes = 64u << 10;
/// Bytes read from the end of thermal.csv (the energy figure's window: ~190 rows of `run`'s,
/// 95 min at its default 30 s interval) and, when that leaves its start out, from its first line
/// (the header, which names the columns).
inline constexpr size_t kLiveRunThermalTailBytes = 64u << 10;
inline constexpr size_t kLiveRunThermalHeaderBytes = 16u << 10;
/// Runs shown at most (the ledgers are already at most 64 per user).
inline constexpr size_t kMaxLiveRuns = 32;

/// The runs of `ledgers` (ReadLedgers' answer) that are "run" mode, name a run directory and whose
/// guard is alive (LedgerLive), sorted by PID. Each run directory is another user's path: it and
/// its files are read with host/owned_read.h (no link in the path, regular files, owned by the
/// ledger's owner, root or us), meta.json whole (at most 64 KiB), the logs' and thermal.csv's
/// tails only (thermal.csv's header line too, bounded). A run whose
/// directory is refused is left out and the reason added to `*ignored` (when given).
std::vector<RunProgress> ReadLiveRuns(const HostFs& fs, const std::vector<guard::Ledger>& ledgers,
                                      const LocalZone& zone, std::vector<std::string>* ignored = nullptr);

}  // namespace sparkops
