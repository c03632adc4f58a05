#include "report/energy.h"

#include <fmt/format.h>

namespace sparkops {

std::string EnergySentence(const AnalysisResult& r) {
  if (!r.thermal) return "";
  if (!r.energy) return "not reported (the samples hold no GPU power, energy counter or spbm system power)";
  const RunEnergy& e = *r.energy;
  const EnergyFigure* t = e.Total();
  std::string o = fmt::format("{:.2f} Wh ({}: {})", t->wh, e.system ? "system" : "GPU", t->source);
  if (e.system && e.gpu) o += fmt::format("; GPU {:.2f} Wh ({})", e.gpu->wh, e.gpu->source);
  o += fmt::format("; over {:.0f} s", e.seconds);
  if (auto ps = e.WhPerStep()) o += fmt::format("; {:.4g} Wh/step over {} steps", *ps, e.steps);
  if (auto pt = e.WhPer1kTokens())
    o += fmt::format("; {:.4g} Wh per 1k tokens ({:.0f} tokens, {})", *pt, *e.tokens, e.tokens_source);
  if (r.price_kwh) o += fmt::format("; cost {:.4g} at {:g}/kWh", t->wh / 1000.0 * *r.price_kwh, *r.price_kwh);
  return o;
}

std::string SlowdownEnergySentence(const SlowdownEvent& e) {
  if (!e.energy) return "";
  return fmt::format("{:.3g} Wh over its {} steps, {:+.3g} Wh against the baseline's {:.3g} Wh/step", e.energy->wh,
                     e.energy->steps, e.energy->ExtraWh(), e.energy->baseline_wh_per_step);
}

std::string EnergyText(const AnalysisResult& r) {
  std::string s = EnergySentence(r);
  return s.empty() ? s : "energy   " + s + "\n";
}

nlohmann::json EnergyJson(const AnalysisResult& r) {
  if (!r.energy) return nullptr;
  const RunEnergy& e = *r.energy;
  const EnergyFigure* t = e.Total();
  nlohmann::json j{{"energy_wh", t->wh}, {"scope", e.system ? "system" : "gpu"}, {"source", t->source}};
  if (e.gpu) {
    j["gpu_wh"] = e.gpu->wh;
    j["gpu_source"] = e.gpu->source;
  }
  if (e.system) {
    j["system_wh"] = e.system->wh;
    j["system_source"] = e.system->source;
  }
  j["seconds"] = e.seconds;
  j["steps"] = e.steps;
  if (auto ps = e.WhPerStep()) j["wh_per_step"] = *ps;
  if (auto pt = e.WhPer1kTokens())
    j["wh_per_1k_tokens"] = *pt, j["tokens"] = *e.tokens, j["tokens_source"] = e.tokens_source;
  if (r.price_kwh) {
    j["price_per_kwh"] = *r.price_kwh;
    j["cost"] = t->wh / 1000.0 * *r.price_kwh;
  }
  return j;
}

}  // namespace sparkops
