#include "run/live_runs.h"

#include <algorithm>

#include "host/owned_read.h"

namespace sparkops {

namespace {

/// The run's energy from the tail of its thermal.csv (and its header line when the tail leaves
/// it out), under the same rules as train.log; why not, in `energy_note`.
void ReadEnergy(const HostFs& fs, const guard::Ledger& l, const StepSeries& steps, const LocalZone& zone,
                RunProgress* r) {
  const std::string path = l.run_dir + "/thermal.csv";
  bool cut = false;
  auto rows = ReadTailForProcess(fs, path, l.owner_uid, kLiveRunThermalTailBytes, &cut);
  if (!rows) {
    r->energy_note = "thermal.csv not read: " + rows.error().message;
    return;
  }
  std::string header;
  if (cut) {
    auto h = ReadFirstLineForProcess(fs, path, l.owner_uid, kLiveRunThermalHeaderBytes);
    if (!h || h->empty()) {
      r->energy_note = "thermal.csv's header not read: " + (h ? std::string("empty") : h.error().message);
      return;
    }
    header = std::move(*h);
  }
  ReadLiveRunEnergy(header, *rows, steps, zone, r);
}

}  // namespace

std::vector<RunProgress> ReadLiveRuns(const HostFs& fs, const std::vector<guard::Ledger>& ledgers,
                                      const LocalZone& zone, std::vector<std::string>* ignored) {
  std::vector<RunProgress> out;
  for (const guard::Ledger& l : ledgers) {
    if (l.mode != "run" || l.run_dir.empty() || !guard::LedgerLive(fs, l)) continue;
    if (out.size() >= kMaxLiveRuns) break;
    // The directory itself: no link on the way, a directory, its owner's (or root's, or ours).
    if (auto listed = ListOwned(fs, l.run_dir, l.owner_uid); !listed) {
      if (ignored) ignored->push_back("pid " + std::to_string(l.pid) + ": " + listed.error().message);
      continue;
    }
    RunProgress r;
    r.pid = l.pid, r.uid = l.owner_uid, r.run_dir = l.run_dir, r.min_available_bytes = l.min_available_bytes;
    if (auto meta = ReadForProcess(fs, l.run_dir + "/meta.json", l.owner_uid, 64u << 10))
      r.command = LiveRunCommand(*meta);
    auto log = ReadTailForProcess(fs, l.run_dir + "/train.log", l.owner_uid, kLiveRunLogTailBytes);
    if (!log) {
      r.note = "train.log not read: " + log.error().message;
      r.verdict = "n/r";
      out.push_back(std::move(r));
      continue;
    }
    auto events = ReadTailForProcess(fs, l.run_dir + "/events.jsonl", l.owner_uid, kLiveRunEventsTailBytes);
    const StepSeries steps = ReadLiveRunSteps(*log, events ? std::string_view(*events) : std::string_view(), zone, &r);
    ReadEnergy(fs, l, steps, zone, &r);
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const RunProgress& a, const RunProgress& b) { return a.pid < b.pid; });
  return out;
}

}  // namespace sparkops
