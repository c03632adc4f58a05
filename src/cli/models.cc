#include "report/models.h"
#include "base/error.h"
#include "base/json_text.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "memory/catalogue.h"

namespace sparkops {

using namespace memory;

int CmdModels(Context& ctx, const std::vector<std::string>& args) {
  auto app = NewApp("models", "List the built-in model catalogue (architecture facts, names for `plan`).");
  if (auto rc = ParseFlags(*app, args, ctx)) return *rc;
  if (ctx.json) ctx.out << JsonText(ModelsJson(Catalogue())) << "\n";
  else ctx.out << ModelsText(Catalogue());
  return kExitOk;
}

}  // namespace sparkops
