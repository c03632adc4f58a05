#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_text.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "memory/bandwidth.h"
#include "memory/model_source.h"

namespace sparkops {

using namespace memory;

int CmdBandwidth(Context& ctx, const std::vector<std::string>& args) {
  auto app = NewApp("bandwidth", "G5: turn memory bandwidth into a decode tokens/s ceiling for a model.");
  std::string model, dtype = "bf16";
  bool measure = false;
  app->add_option("--model", model, "catalogue name, directory or config.json");
  app->add_option("--dtype", dtype, "weight dtype read per token: bf16|fp16|fp8|int8|nf4|mxfp4|fp32 (default bf16)");
  app->add_flag("--measure", measure, "measure this machine's read bandwidth (CPU-side, about 1 s)");
  if (auto rc = ParseFlags(*app, args, ctx)) return *rc;
  auto bpp = DecodeBytesPerParam(dtype);
  if (!bpp) {
    ctx.err << "sparkops bandwidth: " << bpp.error().message << "\n";
    return kExitUsage;
  }
  std::optional<LoadedModel> lm;
  if (!model.empty()) {
    auto r = ResolveModel(model);
    if (!r) {
      ctx.err << "sparkops bandwidth: " << r.error().message << "\n";
      return kExitUsage;
    }
    lm = *r;
  }
  auto figures = ReferenceBandwidths();
  if (measure)
    figures.push_back(
        {"this machine, measured now (CPU cores reading memory; not the GPU's figure)", MeasureReadBandwidth()});
  const double bytes = lm ? BytesPerToken(lm->spec, *bpp) : 0;
  if (ctx.json) {
    nlohmann::json j;
    if (lm) {
      j["model"] = lm->spec.name;
      j["dtype"] = dtype;
      j["bytes_per_token"] = bytes;
      j["moe_active_params"] = lm->spec.is_moe() ? nlohmann::json(CountParams(lm->spec).active()) : nlohmann::json();
    }
    j["figures"] = nlohmann::json::array();
    for (const auto& f : figures) {
      nlohmann::json e = {{"label", f.label}, {"gb_per_s", f.gb_per_s}};
      if (lm) e["tokens_per_s_ceiling"] = f.gb_per_s * 1e9 / bytes;
      j["figures"].push_back(e);
    }
    ctx.out << JsonText(j) << "\n";
    return kExitOk;
  }
  if (lm)
    ctx.out << fmt::format(
        "{} in {}: {:.2f} GB read per decoded token{} (weights only; the KV cache adds more at long "
        "context, so these are ceilings)\n",
        lm->spec.name, dtype, bytes / 1e9,
        lm->spec.is_moe() ? fmt::format(" (MoE: {} of {} experts active)", lm->spec.experts_per_token, lm->spec.experts)
                          : "");
  for (const auto& f : figures) {
    if (lm)
      ctx.out << fmt::format("  {:>7.1f} GB/s -> {:>8.1f} tokens/s  {}\n", f.gb_per_s, f.gb_per_s * 1e9 / bytes,
                             f.label);
    else ctx.out << fmt::format("  {:>7.1f} GB/s  {}\n", f.gb_per_s, f.label);
  }
  if (!lm) ctx.out << "give --model M [--dtype D] for the decode tokens/s ceiling\n";
  return kExitOk;
}

}  // namespace sparkops
