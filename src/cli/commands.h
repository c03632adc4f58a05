#pragma once
/// One function per command, one file per command in src/cli/.
#include <string>
#include <vector>

#include "cli/context.h"

namespace sparkops {

int CmdPreflight(Context& ctx, const std::vector<std::string>& args);
int CmdExplain(Context& ctx, const std::vector<std::string>& args);
int CmdPlan(Context& ctx, const std::vector<std::string>& args);
int CmdModels(Context& ctx, const std::vector<std::string>& args);
int CmdOom(Context& ctx, const std::vector<std::string>& args);
int CmdFlush(Context& ctx, const std::vector<std::string>& args);
int CmdSample(Context& ctx, const std::vector<std::string>& args);
int CmdPs(Context& ctx, const std::vector<std::string>& args);
int CmdRun(Context& ctx, const std::vector<std::string>& args);
int CmdAnalyze(Context& ctx, const std::vector<std::string>& args);
int CmdExporter(Context& ctx, const std::vector<std::string>& args);
int CmdBandwidth(Context& ctx, const std::vector<std::string>& args);
int CmdGuard(Context& ctx, const std::vector<std::string>& args);
int CmdTop(Context& ctx, const std::vector<std::string>& args);

}  // namespace sparkops
