#include "cli/commands.h"
#include "base/error.h"

namespace sparkops {

// Placeholder until the command is built.
int CmdModels(Context& ctx, const std::vector<std::string>&) {
  ctx.err << "sparkops models: not implemented in this build\n";
  return kExitUsage;
}

}  // namespace sparkops
