#include "cli/commands.h"
#include "base/error.h"

namespace sparkops {

// Placeholder until the command is built.
int CmdExporter(Context& ctx, const std::vector<std::string>&) {
  ctx.err << "sparkops exporter: not implemented in this build\n";
  return kExitUsage;
}

}  // namespace sparkops
