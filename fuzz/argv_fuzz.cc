// Command-line readers (workloads/argv.h, LayoutFromArgv/Env): argv is the NUL-split input, as
// /proc/PID/cmdline gives it; the environment is the same words read as KEY=VALUE.
#include "fuzz_util.h"
#include "host/proctable.h"
#include "workloads/argv.h"
#include "workloads/parallelism.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = AsText(data, size);
  const auto argv = sparkops::ParseCmdline(text);
  const auto env = sparkops::ParseEnviron(text);
  const auto launch = sparkops::ParseLaunch(argv);
  FUZZ_CHECK(launch.next <= argv.size());
  (void)sparkops::FlagValue(argv, {"--tensor-parallel-size", "-tp"}, launch.next);
  (void)sparkops::FlagValue(argv, {"--nnodes"}, argv.size() + 3);
  (void)sparkops::HasFlag(argv, {"--use_fsdp"}, launch.next);
  (void)sparkops::KeyValueArg(argv, "tensor_parallel_dim", launch.next);
  FUZZ_CHECK(sparkops::ShortCommand(argv, 40).size() <= 43);
  for (const auto& w : argv) (void)sparkops::ParseByteSize(w);
  (void)sparkops::ParseByteSize(text);
  if (auto l = sparkops::LayoutFromArgv(argv, env, "pid 1")) (void)sparkops::JudgeLayout(*l, std::nullopt);
  if (auto l = sparkops::LayoutFromEnv(env, "environment")) (void)sparkops::JudgeLayout(*l, 2);
  if (!argv.empty()) (void)sparkops::IsPythonInterpreter(argv[0]);
  return 0;
}
