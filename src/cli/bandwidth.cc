#include "memory/bandwidth.h"
#include "base/error.h"
#include "base/json_text.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "memory/model_source.h"
#include "report/models.h"

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
  BandwidthView v{lm ? &lm->spec : nullptr, dtype, lm ? BytesPerToken(lm->spec, *bpp) : 0, figures};
  if (ctx.json) ctx.out << JsonText(BandwidthJson(v)) << "\n";
  else ctx.out << BandwidthText(v);
  return kExitOk;
}

}  // namespace sparkops
