#pragma once
/// The guard's ledger: what one guard process (`sparkops guard`, or the guard of one `run`) has
/// done since it started, as one small JSON file per guard under /run (a tmpfs: cleared at boot).
/// The exporter sums the ledgers into actions-since-boot counters and shows the floors in force.
/// Written atomically at start and after each action; left in place when the guard exits, so its
/// actions stay in the totals until the next boot.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"
#include "host/hostfs.h"
#include "host/write_file.h"

namespace sparkops::guard {

struct Ledger {
  uint32_t pid = 0;              ///< the guard's PID as /proc shows it
  uint64_t start_ticks = 0;      ///< its /proc/PID/stat starttime: a live guard vs a reused PID
  std::string mode;              ///< "host" (sparkops guard) or "run"
  uint64_t min_available_bytes = 0;
  std::optional<double> max_pressure;  ///< percent, PSI memory full avg10
  bool dry_run = false;
  /// (action, reason) -> count; actions "flush", "terminate", "kill", "would_terminate" (dry run),
  /// reasons: the names of Reasons() (guard/policy.h).
  std::map<std::pair<std::string, std::string>, uint64_t> actions;
  /// "run" mode only, optional (issue 37): the run directory, absolute, so `top` can show the run.
  /// At most kMaxRunDirBytes, printable ASCII, no ".." component; "" when absent.
  std::string run_dir;
  /// Not in the file: the uid ReadLedgers counted the ledger as (its directory's or file's owner).
  uint32_t owner_uid = 0;
};
inline constexpr size_t kMaxRunDirBytes = 4096;
/// Pure: `dir` may be a ledger's run_dir (absolute, printable ASCII, no "..", at most kMaxRunDirBytes).
bool RunDirOk(std::string_view dir);

std::string LedgerJson(const Ledger& l);
/// Pure. An Input error names the field.
Result<Ledger> ParseLedger(std::string_view text);

/// Where ledgers live (host paths): /run/sparkops/guard for root, /run/user/UID/sparkops/guard
/// otherwise (a user's runtime directory, which exists while the user is logged in).
std::string LedgerDir(uint32_t uid);
/// The spool where users' `run` guards leave their ledgers when it exists (created root-owned,
/// mode 1777, by packaging/sparkops.tmpfiles): readable by the exporter's DynamicUser, which
/// cannot enter /run/user/UID (0700). Each file there counts as its owner's.
inline constexpr const char* kRunLedgerSpool = "/run/sparkops/runs";

/// The directory a guard writes its ledger in: `setting` is SPARKOPS_GUARD_LEDGER ("" = the
/// default on the real machine, also under --root: the guard and its actions are real; "none" =
/// no ledger, returned as ""). The default: LedgerDir(0) for root, else kRunLedgerSpool when it is
/// a directory, else LedgerDir(euid).
std::string ResolveLedgerDir(std::string_view setting, uint32_t euid);
/// The most ledgers read from one user's directory (its junk hides only its own guards), and the
/// largest count of one action a ledger may claim.
inline constexpr size_t kMaxLedgersPerUid = 64;
inline constexpr uint64_t kMaxLedgerCount = 1000000;

/// Every ledger under `fs` that can be believed (docs/reliability.md, "Ledgers"), from root's
/// /run/sparkops/guard, each /run/user/UID/sparkops/guard (UID's) and kRunLedgerSpool (each file
/// its owner's): at most kMaxLedgersPerUid per uid, files named <pid>.json of at most 64 KiB read
/// with ReadForProcess (host/owned_read.h: no link, regular, owned by that uid or root); the pid field is the
/// name's; "host" mode only in /run/sparkops/guard; the floor at most MemTotal; a live pid runs as
/// that uid; one ledger per pid. Any other file is skipped and named in `*problems` (when given).
std::vector<Ledger> ReadLedgers(const HostFs& fs, std::vector<std::string>* problems = nullptr);
/// True while the guard that wrote `l` runs: /proc/PID exists with the same start time.
bool LedgerLive(const HostFs& fs, const Ledger& l);

/// Keeps this process's ledger file up to date. Thread-safe.
class LedgerWriter {
 public:
  /// Fills pid/start_ticks from this process and writes the first state to `dir`/<pid>.json,
  /// creating the directories. `dir` "" writes nothing. A failure is kept in error(); the guard goes
  /// on without a ledger.
  LedgerWriter(const std::string& dir, Ledger initial);
  /// Counts one action and rewrites the file.
  void Count(std::string_view action, std::string_view reason);
  const std::string& path() const { return path_; }
  /// The first write failure, if any.
  std::optional<std::string> error() const;

 private:
  void Write();  // mu_ held
  mutable std::mutex mu_;
  Ledger l_;
  std::string path_;
  std::unique_ptr<OutDir> dir_;  ///< opened once; null: no ledger
  std::optional<std::string> error_;
};

}  // namespace sparkops::guard
