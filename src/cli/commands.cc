#include "cli/commands.h"

#include <string>

#include "checks/check.h"

namespace sparkops {

const std::vector<Command>& Commands() {
  // The check count and ids come from the check table (checks/check.h).
  static const std::string kPreflight =
      "check the " + CheckCountWord() + " known Spark failure modes " + CheckIdRange() + ", one line each";
  static const std::string kExplain = "symptom, cause, check and fix for " + CheckIdRange() + " or the OOM ladder";
  static const std::vector<Command> kCommands = {
      {"preflight", kPreflight.c_str(), &CmdPreflight},
      {"explain", kExplain.c_str(), &CmdExplain},
      {"plan", "size a fine-tune (full, LoRA, QLoRA) against the unified memory pool", &CmdPlan},
      {"models", "list the model catalogue that plan/oom/bandwidth accept", &CmdModels},
      {"oom", "walk the OOM ladder in order and say which step is next", &CmdOom},
      {"flush", "drop the page cache between runs (root)", &CmdFlush},
      {"sample", "append temperature/power/clock/memory rows to a CSV", &CmdSample},
      {"ps", "list ML processes on the pool with their memory caps", &CmdPs},
      {"run", "supervise a training command: log, thermal CSV, events, report", &CmdRun},
      {"analyze", "find step-time slowdowns in a run and say why", &CmdAnalyze},
      {"exporter", "serve Prometheus metrics on /metrics", &CmdExporter},
      {"bandwidth", "turn memory bandwidth into a decode tokens/s ceiling", &CmdBandwidth},
      {"guard", "stop the largest process before the unified memory pool runs out", &CmdGuard},
      {"top", "live view of the pool, the GPU, pressure and the workloads on the pool", &CmdTop},
  };
  return kCommands;
}

}  // namespace sparkops
