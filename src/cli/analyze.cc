#include "cli/commands.h"
#include "base/error.h"

namespace sparkops {

// Placeholder until the command is built.
int CmdAnalyze(Context& ctx, const std::vector<std::string>&) {
  ctx.err << "sparkops analyze: not implemented in this build\n";
  return kExitUsage;
}

}  // namespace sparkops
