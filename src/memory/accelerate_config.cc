// `plan --from` an accelerate config (what `accelerate config` writes: ClusterConfig in
// accelerate/commands/config/config_args.py, read in the accelerate 1.16.0 wheel). It describes
// the launch, not the model: sparkops takes the precision and torch.compile, and says what it
// cannot model on one Spark.
#include <fmt/format.h>

#include <algorithm>

#include "memory/train_config_builder.h"

namespace sparkops::memory::detail {

Result<void> FromAccelerate(Builder& b) {
  const Flat& f = b.flat();
  const std::string mp = ToLower(f.Get("mixed_precision").value_or(""));
  if (mp == "bf16" || mp == "fp16") {
    b.Take("--precision", "mixed", "mixed_precision");
    b.Assume(fmt::format(
        "mixed_precision {}: autocast; planned with fp32 weights (a model loaded in fp32, the costlier case); give "
        "--precision bf16 for a model loaded in bf16",
        mp));
  } else if (mp == "fp8") {
    b.Assume("mixed_precision fp8: not modelled; planned at the plan's --precision");
  } else if (!mp.empty() && mp != "no" && mp != "null") {
    return InputError(fmt::format("{}: field 'mixed_precision': '{}' is not no, fp16, bf16 or fp8", b.file(), mp));
  }
  const std::string dynamo = ToLower(f.Get("dynamo_config.dynamo_backend").value_or("no"));
  if (dynamo != "no" && dynamo != "null") b.Take("--compile", "", "dynamo_config.dynamo_backend");

  auto count = [&](const char* key, int64_t fallback) -> Result<int64_t> {
    auto v = f.Get(key);
    if (!v || *v == "null") return fallback;
    auto n = ParseInt(Trim(*v));
    // num_processes -1: "SLURM and the user manually passes it in" (config_args.py).
    if (!n || *n < -1 || *n == 0 || *n > (1 << 20))
      return InputError(
          fmt::format("{}: field '{}': expected a whole number of at least 1, got '{}'", b.file(), key, *v));
    return *n;
  };
  auto procs = count("num_processes", 1);
  if (!procs) return std::unexpected(procs.error());
  auto machines = count("num_machines", 1);
  if (!machines) return std::unexpected(machines.error());
  const int64_t per_machine = *procs < 1 ? 1 : (*procs + *machines - 1) / std::max<int64_t>(*machines, 1);
  if (per_machine > 1)
    return InputError(fmt::format(
        "{}: field 'num_processes': {} processes on each of {} machine(s), but a DGX Spark has one GPU; sparkops "
        "plans one training process per GPU (set num_processes to num_machines, or plan each process)",
        b.file(), *procs, *machines));

  const std::string dist_raw(Trim(f.Get("distributed_type").value_or("NO")));
  const std::string dist = ToLower(dist_raw);
  const std::string zero = f.Get("deepspeed_config.zero_stage").value_or("");
  const bool shards = dist == "fsdp" || (dist == "deepspeed" && !zero.empty() && zero != "0");
  if (shards && *machines > 1)
    b.Assume(
        fmt::format("{}{} across {} machines shards states between them: not modelled; the plan is one unsharded "
                    "process, an upper bound for each machine",
                    dist_raw, dist == "deepspeed" ? " ZeRO-" + zero : "", *machines));
  else if (shards) b.Assume(fmt::format("{} on one process shards nothing: planned unsharded", dist_raw));
  else if (dist == "multi_gpu" && *machines > 1)
    b.Assume(
        fmt::format("MULTI_GPU (DDP) across {} machines: each holds a full replica, as planned; DDP's gradient "
                    "buckets are not counted",
                    *machines));
  for (const char* key : {"deepspeed_config.offload_optimizer_device", "deepspeed_config.offload_param_device"})
    if (auto v = f.Get(key); v && *v != "none" && *v != "null")
      b.Assume(fmt::format("{} {}: offloading moves bytes within the same pool on a Spark; planned as not offloaded",
                           key, *v));
  if (Bool(f.Get("fsdp_config.fsdp_offload_params").value_or("")).value_or(false))
    b.Assume(
        "fsdp_config.fsdp_offload_params: offloading moves bytes within the same pool on a Spark; planned as not "
        "offloaded");
  b.Assume(
      "an accelerate config describes the launch, not the run: method, batch and sequence length are the plan's flags");
  return {};
}

}  // namespace sparkops::memory::detail
