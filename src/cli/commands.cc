#include "cli/commands.h"

namespace sparkops {

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"preflight", "check the known Spark failure modes G1..G11, one line each", &CmdPreflight},
      {"explain", "symptom, cause, check and fix for G1..G11 or the OOM ladder", &CmdExplain},
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
  };
  return kCommands;
}

}  // namespace sparkops
