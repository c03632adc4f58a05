#include "memory/mechanisms.h"

#include <cmath>

#include "host/distinfo.h"

namespace sparkops::memory {

std::string ToString(LossEra e) {
  switch (e) {
    case LossEra::kModelUpcast: return "< 4.46 (model upcasts logits)";
    case LossEra::kLossShiftCopy: return "4.46-4.49 (loss upcasts, shifted copy)";
    case LossEra::kLossPadLabels: return ">= 4.50 (loss upcasts, labels padded)";
  }
  return "?";
}

std::optional<std::string_view> ReleasePart(std::string_view version) {
  // "4.46.0" of "4.46.0.dev0" or "4.46.0rc1" (the dot before a suffix dropped).
  std::string_view release = version.substr(0, version.find_first_not_of("0123456789."));
  if (release.size() < version.size() && release.ends_with('.')) release.remove_suffix(1);
  if (release.empty() || release.front() == '.' || release.back() == '.' ||
      release.find("..") != std::string_view::npos || release.find('.') == std::string_view::npos)
    return std::nullopt;
  return release;
}

std::optional<LossEra> TransformersLossEra(std::string_view version) {
  const auto release = ReleasePart(version);
  if (!release) return std::nullopt;
  const std::string_view v = *release;
  if (CompareVersions(v, "4.46") < 0) return LossEra::kModelUpcast;
  if (CompareVersions(v, "4.50") < 0) return LossEra::kLossShiftCopy;
  return LossEra::kLossPadLabels;
}

double TransformersLossBytesPerLogit(std::optional<LossEra> era, Side side) {
  if (!era) era = side == Side::kHigh ? LossEra::kModelUpcast : LossEra::kLossPadLabels;
  switch (*era) {
    // >= 4.50: ForCausalLMLoss `logits.float()` (4) beside the model's bf16 logits (2) and the
    // log-softmax (4) in forward (10); in backward the saved log-softmax, the gradient of its
    // output and of its input, all fp32 (12), the bf16 logits released with the outputs.
    case LossEra::kLossPadLabels: return kStandardLossBytesPerLogit;
    // 4.46-4.49: the same plus `logits[..., :-1, :].contiguous()`, a second fp32 copy alive
    // while cross-entropy runs: 2 + 4 + 4 + 4 in forward.
    case LossEra::kLossShiftCopy: return 14;
    // < 4.46: `logits = logits.float()` in the model, the shifted fp32 copy, the log-softmax, the
    // gradients of both and the shift's full-size fp32 gradient, then the bf16 one: 2 + 4 * 6 + 2.
    // Counted all alive at once: published peaks on these versions show 25-30 B/logit (docs).
    case LossEra::kModelUpcast: return 28;
  }
  return kStandardLossBytesPerLogit;
}

double AdamwStepLists(Optimizer o, Side /*side*/) { return o == Optimizer::kAdamW ? 1 : 0; }

double Nf4BytesPerParam(bool double_quant) { return double_quant ? 4.127 / 8 : 4.5 / 8; }

double TorchaoNf4BytesPerParam() { return (4 + 8.0 / 64 + 16.0 / (64 * 256)) / 8; }

double TorchaoQuantiseBytes(double elems, bool chunked) {
  constexpr double kChunk = 1024.0 * 1024;  // torchao CHUNK_SIZE
  return chunked ? 5 * elems + kChunk * 16 * 2 * 2 : 70 * elems;
}

std::optional<TorchtuneRelease> TorchtuneReleaseOf(std::string_view version) {
  const auto v = ReleasePart(version);
  if (!v) return std::nullopt;
  return TorchtuneRelease{CompareVersions(*v, "0.2") < 0, CompareVersions(*v, "0.3") < 0};
}

double TorchtuneLossBytesPerLogit(std::optional<TorchtuneRelease> r, Side side) {
  const bool holds = r ? r->holds_logits : side == Side::kHigh;
  return holds ? 16 : kStandardLossBytesPerLogit;
}

double DoraWeightNormBytes(double d_in, double d_out, double adapter_bytes) {
  return adapter_bytes * d_in * d_in + 6 * d_in * d_out;
}

double DoraSavedBytesPerToken(double d_out, double adapter_bytes) { return (2 + adapter_bytes) * d_out; }

double Quant4Bytes(BaseQuant q, double d_in, double d_out) {
  if (q == BaseQuant::kNone) return 2 * d_in * d_out;
  const double groups = std::ceil(d_in / kQuantGroupSize);
  const double packed = d_in * d_out / 8 * 4;  // int32, 8 codes each
  const double zeros = groups * (d_out / 8) * 4;
  const double scales = groups * d_out * 2;
  const double g_idx = q == BaseQuant::kGptq4 ? d_in * 4 : 0;
  return packed + zeros + scales + g_idx;
}

}  // namespace sparkops::memory
