#pragma once
/// Budget, verdict, fit search and anchors around the accounting (accounting.h).
#include <optional>
#include <string>
#include <vector>

#include "host/meminfo.h"
#include "memory/accounting.h"
#include "memory/train_config.h"

namespace sparkops::memory {

enum class Verdict { kFits, kTight, kNoFit };
std::string ToString(Verdict v);

/// fits: peak <= 90 % of the budget; tight: <= 100 %; no-fit above.
Verdict Judge(double peak_bytes, double budget_bytes);

struct Budget {
  double bytes = 0;                     ///< what the plan is judged against
  std::optional<double> mem_available;  ///< MemAvailable (bytes), when read
  std::optional<double> mem_free;       ///< MemFree (bytes): the `free -g` "free" column
  double reserve = 0;                   ///< subtracted for OS/driver
  std::string source;                   ///< "MemAvailable - reserve" or "--budget-gib"
};

/// Budget = MemAvailable - reserve, or `override_gib`. Input error for a negative reserve or
/// override, or when the reserve exceeds MemAvailable.
Result<Budget> MakeBudget(const Result<MemInfo>& meminfo, std::optional<double> override_gib, double reserve_gib);

struct Anchor {
  std::string name;   ///< "70B QLoRA"
  double bytes = 0;   ///< the anchor figure
  std::string source; ///< "quoted" (a published rule-of-thumb figure) or "computed"
  std::string compared;  ///< "weights" (the quoted figure is weights) or "steady peak"
  double diff = 0;    ///< this plan's compared figure minus the anchor
};

struct Plan {
  LoadedModel model;
  PlanOptions options;
  Breakdown breakdown;   ///< central: unknown inputs at their stated default
  Breakdown low, high;   ///< the range where an input is unknown or two-sided; verdicts use `high`
  std::vector<std::string> widened;  ///< why low != high (empty: they equal the central figure)
  Budget budget;
  Verdict verdict = Verdict::kNoFit;
  std::optional<uint64_t> max_seq;    ///< largest seq (at the given batch) that is not no-fit
  bool max_seq_is_model_limit = false;///< max_seq hit max_position_embeddings (or the search cap)
  std::optional<uint64_t> max_batch;  ///< largest batch (at the given seq) that is not no-fit
  Anchor anchor;
  std::optional<PlanSource> source;  ///< plan --from: what came from the user's training config
};

/// Runs the accounting (central, low, high), the verdict on the high end, the fit search and the anchor.
Result<Plan> MakePlan(const LoadedModel& model, const PlanOptions& opts, const Budget& budget);

}  // namespace sparkops::memory
