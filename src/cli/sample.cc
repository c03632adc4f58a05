#include "cli/commands.h"
#include "base/error.h"

namespace sparkops {

// Placeholder until the command is built.
int CmdSample(Context& ctx, const std::vector<std::string>&) {
  ctx.err << "sparkops sample: not implemented in this build\n";
  return kExitUsage;
}

}  // namespace sparkops
