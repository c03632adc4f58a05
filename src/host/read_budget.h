#pragma once
/// A total budget for one collection's reads of other users' processes (issue 29): time since the
/// budget was made and bytes read. Installed on the current thread by a ReadBudgetScope; the
/// process-table readers (host/proctable.h: status, cmdline, stat, environ, fd probing) and
/// ReadForProcess (host/owned_read.h) charge it and stop once it is spent, so a flood of processes
/// (thousands of fds, 64 KiB argvs) costs a bounded time and memory. Outside a scope nothing is
/// charged and nothing stops (`ps`, preflight, run's job tree read as before).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sparkops {

/// The limits of one budget (both positive).
struct ReadBudgetLimits {
  std::chrono::nanoseconds time = std::chrono::seconds(2);
  uint64_t bytes = 16u << 20;
};

/// The argv kept per process while a budget is installed (the rest of a longer command line is
/// not read). Environ is not cut: its bytes count against the budget.
inline constexpr size_t kBudgetedArgvBytes = 32u << 10;

/// Why a budget ran out.
enum class BudgetReason { kTime, kBytes };
/// "time", "bytes": the `reason` label of sparkops_collection_truncated.
std::string_view BudgetReasonName(BudgetReason r);

/// One budget; its clock starts at construction. Not thread-safe: one collection, one thread.
class ReadBudget {
 public:
  explicit ReadBudget(ReadBudgetLimits limits = {});
  /// True once the time or the bytes ran out (the first reason found is kept).
  bool Spent();
  /// Counts `n` bytes read; true while the budget lasts.
  bool Charge(uint64_t n);
  /// For a file whose size is known before it is read: true when `n` more bytes fit, else the
  /// budget is spent (for bytes). Charges nothing.
  bool Fits(uint64_t n);
  std::optional<BudgetReason> reason() const { return reason_; }
  uint64_t bytes_used() const { return used_; }

 private:
  ReadBudgetLimits limits_;
  std::chrono::steady_clock::time_point start_;
  uint64_t used_ = 0;
  std::optional<BudgetReason> reason_;
};

/// Installs `budget` as this thread's current one until the scope ends, then restores the one
/// before. Scopes nest: reads inside an inner scope charge every enclosing budget too, and stop
/// when any of them is spent.
class ReadBudgetScope {
 public:
  explicit ReadBudgetScope(ReadBudget& budget);
  ~ReadBudgetScope();
  ReadBudgetScope(const ReadBudgetScope&) = delete;
  ReadBudgetScope& operator=(const ReadBudgetScope&) = delete;

 private:
  friend bool ReadBudgetSpent();
  friend bool ChargeRead(uint64_t);
  friend bool ReserveRead(uint64_t);
  friend bool InReadBudgetScope();
  ReadBudget& budget_;
  ReadBudgetScope* outer_;
};

/// For readers; outside a scope: false, true, true, false.
bool ReadBudgetSpent();             ///< any installed budget spent
bool ChargeRead(uint64_t bytes);    ///< ReadBudget::Charge on each installed budget
bool ReserveRead(
    uint64_t bytes);   ///< Fits on each installed budget, then ChargeRead; nothing charged when one is short
bool InReadBudgetScope();           ///< a budget is installed on this thread

}  // namespace sparkops
