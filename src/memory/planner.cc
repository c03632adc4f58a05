#include "memory/planner.h"

#include <fmt/format.h>

#include <cmath>

#include "memory/catalogue.h"

namespace sparkops::memory {
namespace {

constexpr uint64_t kSeqSearchCap = 1u << 20;   // 1M tokens
constexpr uint64_t kBatchSearchCap = 4096;

/// Largest v in [1, cap] with fits(v) true, assuming monotone; nullopt when fits(1) is false.
template <typename F>
std::optional<uint64_t> LargestThat(uint64_t cap, F fits) {
  if (!fits(1)) return std::nullopt;
  uint64_t lo = 1, hi = cap;
  if (fits(hi)) return hi;
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

/// Three anchors: 70B QLoRA's ~40 GB of weights is the figure quoted for DGX Spark (README,
/// background); 27B LoRA and 9B full FT have no quoted figure, so sparkops
/// computes them (gemma-2-27b LoRA, gemma-2-9b full, default options) and says so.
Anchor NearestAnchor(const Plan& p) {
  Anchor a;
  const Method m = p.options.method;
  if (m == Method::kQlora) {
    a.name = "70B QLoRA (quoted: weights near 40 GB)";
    a.bytes = 40e9;
    a.source = "quoted";
    a.compared = "weights + adapter";
    a.diff = p.breakdown.weights + p.breakdown.adapter - a.bytes;
    return a;
  }
  const char* model = m == Method::kLora ? "gemma-2-27b" : "gemma-2-9b";
  a.name =
      m == Method::kLora ? "27B LoRA (gemma-2-27b, sparkops defaults)" : "9B full FT (gemma-2-9b, sparkops defaults)";
  a.source = "computed";
  a.compared = "process peak";
  PlanOptions o;
  o.method = m;
  LoadedModel lm;
  if (const CatalogueEntry* e = FindModel(model)) {
    lm.spec = e->spec;
    lm.params = CountParams(lm.spec).total();
    if (auto b = Estimate(lm, o)) a.bytes = b->process_peak();
  }
  a.diff = p.breakdown.process_peak() - a.bytes;
  return a;
}

}  // namespace

std::string ToString(Verdict v) {
  switch (v) {
    case Verdict::kFits: return "fits";
    case Verdict::kTight: return "tight";
    case Verdict::kNoFit: return "no-fit";
  }
  return "?";
}

Verdict Judge(double peak, double budget) {
  if (budget > 0 && peak <= 0.9 * budget) return Verdict::kFits;
  if (budget > 0 && peak <= budget) return Verdict::kTight;
  return Verdict::kNoFit;
}

Result<Budget> MakeBudget(const Result<MemInfo>& mi, std::optional<double> override_gib, double reserve_gib) {
  if (!(reserve_gib >= 0) || !std::isfinite(reserve_gib)) return InputError("--reserve-gib: must be 0 or more");
  Budget b;
  b.reserve = reserve_gib * kGiB;
  if (mi) {
    if (mi->available) b.mem_available = double(*mi->available);
    if (mi->free) b.mem_free = double(*mi->free);
  }
  if (override_gib) {
    if (!(*override_gib > 0) || !std::isfinite(*override_gib)) return InputError("--budget-gib: must be more than 0");
    b.bytes = *override_gib * kGiB;
    b.source = "--budget-gib";
    return b;
  }
  if (!mi) return std::unexpected(mi.error());
  if (!b.mem_available) return InputError("meminfo has no MemAvailable field (give --budget-gib)");
  if (b.reserve >= *b.mem_available)
    return InputError(fmt::format("--reserve-gib {:.1f}: leaves no budget (MemAvailable is {:.1f} GiB)", reserve_gib,
                                  *b.mem_available / kGiB));
  b.bytes = *b.mem_available - b.reserve;
  b.source = "MemAvailable - reserve";
  return b;
}

Result<Plan> MakePlan(const LoadedModel& model, const PlanOptions& opts, const Budget& budget) {
  auto bd = Estimate(model, opts);
  if (!bd) return std::unexpected(bd.error());
  Plan p;
  p.model = model;
  p.options = opts;
  p.breakdown = *bd;
  p.low = *Estimate(model, opts, Side::kLow);
  p.high = *Estimate(model, opts, Side::kHigh);
  if (opts.method == Method::kQlora && opts.bnb_inputs == BnbInputs::kUnknown &&
      opts.framework != Framework::kTorchtune)
    p.widened.push_back(
        "bitsandbytes version unknown: the high end assumes < 0.43.2 (4-bit matmuls keep their inputs) "
        "and < 0.43.0 (fp16 quantisation state: each dequantised weight is copied to bf16)");
  if (opts.compile)
    p.widened.push_back(
        "--compile: the low and central figures assume AOTAutograd recomputes norms and act(gate); "
        "the high end is eager");
  const bool torchtune = opts.framework == Framework::kTorchtune;
  if (torchtune && p.high.loss_bytes_per_logit > p.breakdown.loss_bytes_per_logit)
    p.widened.push_back(fmt::format(
        "torchtune version unknown: the central figure assumes the current release ({:g} B/logit), the high end "
        "torchtune < 0.3 ({:g} B/logit: the recipe holds its shifted fp32 logits through backward); give "
        "--framework-version",
        p.breakdown.loss_bytes_per_logit, p.high.loss_bytes_per_logit));
  if (torchtune && p.high.load_cache > p.breakdown.load_cache)
    p.widened.push_back(
        "torchtune version unknown: the high end assumes < 0.2 (torchao 0.1's unchunked NF4 quantiser: 70 bytes per "
        "element of the largest adapted linear while loading, left reserved)");
  if (!torchtune && p.high.loss_bytes_per_logit > p.breakdown.loss_bytes_per_logit)
    p.widened.push_back(fmt::format(
        "transformers version unknown: the central figure assumes the current release ({:g} B/logit), the high "
        "end transformers < 4.46 ({:g} B/logit: the model upcasts the logits, the loss copies them again); "
        "give --framework-version",
        p.breakdown.loss_bytes_per_logit, p.high.loss_bytes_per_logit));
  if (p.high.retained > p.breakdown.retained)
    p.widened.push_back(
        "training loop unknown: the high end keeps the previous step's bf16 logits alive "
        "(a loop holding last step's outputs, as LitGPT's does)");
  if (p.high.residual_margin > 0)
    p.widened.push_back(fmt::format(
        "the planner's own error: the high end adds {:.0f}% of the larger phase (its largest under-prediction on "
        "the validation rows it was built against)",
        100 * kResidualMargin));
  p.budget = budget;
  p.verdict = Judge(p.high.peak(), budget.bytes);
  auto fits_with = [&](uint64_t seq, uint64_t batch) {
    PlanOptions o = opts;
    o.seq = seq;
    o.batch = batch;
    auto e = Estimate(model, o, Side::kHigh);
    return e && Judge(e->peak(), budget.bytes) != Verdict::kNoFit;
  };
  const uint64_t seq_cap = model.spec.max_positions.value_or(kSeqSearchCap);
  p.max_seq = LargestThat(seq_cap, [&](uint64_t s) { return fits_with(s, opts.batch); });
  p.max_seq_is_model_limit = p.max_seq && *p.max_seq == seq_cap;
  p.max_batch = LargestThat(kBatchSearchCap, [&](uint64_t b) { return fits_with(opts.seq, b); });
  p.anchor = NearestAnchor(p);
  return p;
}

}  // namespace sparkops::memory
