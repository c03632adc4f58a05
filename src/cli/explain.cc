#include "cli/commands.h"
#include "base/error.h"

namespace sparkops {

int CmdExplain(Context& ctx, const std::vector<std::string>&) {
  ctx.err << "sparkops explain: not implemented in this build\n";
  return kExitUsage;
}

}  // namespace sparkops
