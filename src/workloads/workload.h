#pragma once
/// ML workloads on the unified pool: which processes are inference servers or trainers, how they
/// group (children under their server or launcher), their memory cap parsed from flags and
/// environment (docs/checks.md, G6: caps per server), and the verdict:
///   capped        an explicit cap leaving at least half the pool: fraction <= 0.5, or bytes <= MemTotal/2
///   near-capacity a cap above that, including a server's default when no flag is given (vLLM 0.92)
///   uncapped      no cap mechanism in use (trainers, a loaded Ollama, llama.cpp without a fixed -c)
///   idle          holds no model memory (an Ollama server with no runner child)
/// One piece of code for `ps`, preflight G6 (and G10's running launchers), `run` and the exporter.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "host/gpu.h"
#include "host/host_view.h"
#include "host/proctable.h"

namespace sparkops {

enum class WorkloadKind {
  kVllm,
  kSglang,
  kOllama,
  kLlamaCpp,
  kTgi,                       // inference servers
  kTorchrun,
  kAccelerate,
  kDeepspeed,
  kTrl,
  kAxolotl,
  kUnsloth,   // trainers and launchers
  kTorchtune,
  kLlamaFactory,
  kPython,                             // kPython: a plain script holding GPU memory
  kOtherGpu,  ///< any other process NVML lists with >= 1 GiB (kOtherGpuMinBytes) of GPU memory
};
inline constexpr uint64_t kOtherGpuMinBytes = 1ull << 30;
/// "vllm", "sglang", "ollama", "llama.cpp", "tgi", "torchrun", "accelerate", "deepspeed", "trl",
/// "axolotl", "unsloth", "torchtune", "llamafactory", "python", "gpu-process".
const char* KindName(WorkloadKind k);
bool IsServerKind(WorkloadKind k);

enum class Verdict { kCapped, kNearCapacity, kUncapped, kIdle };
/// "capped", "near-capacity", "uncapped", "idle".
const char* VerdictName(Verdict v);

/// A memory cap as parsed from flags/environment.
struct Cap {
  std::optional<double> fraction;  ///< of the pool (vLLM, SGLang, TGI), 0 < f <= 1
  std::optional<uint64_t> bytes;   ///< explicit bytes, or fraction x MemTotal; absent when unknown
  bool is_default = false;         ///< no flag given: the server's own default applies
  std::string text;                ///< short, for the table: "0.50 (--gpu-memory-utilization)", "none"
};

/// One process of a workload (the main one or a grouped child).
struct WorkloadProcess {
  uint32_t pid = 0;
  std::string role;                    ///< "server", "launcher", "runner", "worker", "rank 0", ...
  std::optional<uint64_t> rss_bytes;   ///< VmRSS
  std::optional<uint64_t> gpu_bytes;   ///< NVML per-process used memory; absent when not reported
  bool gpu_listed = false;             ///< NVML lists the pid (with or without a figure)
  std::string command;                 ///< argv joined, shortened for display
};

struct Workload {
  WorkloadKind kind = WorkloadKind::kPython;
  std::string detail;   ///< what a launcher runs ("-m axolotl.cli.train", "train.py"), or ""
  std::string model;    ///< --model / positional model / --model-path ..., or ""
  bool training = false;
  WorkloadProcess main;
  std::vector<WorkloadProcess> children;
  std::vector<std::string> argv;            ///< the main process's argv (G10 reads launcher flags)
  std::map<std::string, std::string> env;   ///< the main process's environment (may be empty)
  std::map<std::string, std::string> rank_env;  ///< environment of the first child with WORLD_SIZE (a rank)
  Cap cap;
  Verdict verdict = Verdict::kUncapped;
  std::string reason;                 ///< one line: why this verdict
  std::vector<std::string> notes;     ///< allocator settings, ignored flags, Ollama residency ...

  /// Sums over main + children of the figures that are known; absent when none is.
  std::optional<uint64_t> TotalRssBytes() const;
  std::optional<uint64_t> TotalGpuBytes() const;
  /// Pool use for the exporter/run: NVML GPU memory when reported, else RSS (they overlap on UMA).
  std::optional<uint64_t> PoolBytes() const;
  /// "vllm pid 2101 (0.50 (--gpu-memory-utilization), capped)" for check lines and events.
  std::string Describe() const;
};

/// NVML's per-process figures: a pid present = listed by NVML; its value absent = not reported.
using GpuMemByPid = std::map<uint32_t, std::optional<uint64_t>>;
GpuMemByPid GpuMemoryByPid(const GpuSnapshot& gpu);

/// Pure: classifies and groups `procs` (a whole process table), sets caps and verdicts against
/// `mem_total` (bytes; absent -> no byte comparison possible, fractions still judged).
/// Workloads come out in PID order of their main process.
std::vector<Workload> ClassifyProcesses(const std::vector<ProcessInfo>& procs, const GpuMemByPid& gpu,
                                        std::optional<uint64_t> mem_total);

/// What `ps`/G6 show: the workloads plus the context to read them.
struct WorkloadScan {
  std::vector<Workload> workloads;
  size_t processes_scanned = 0;
  std::optional<uint64_t> mem_total;  ///< /proc/meminfo MemTotal
  std::string gpu_source;             ///< snapshot source, "none"
  std::string gpu_why_none;           ///< why no GPU is readable, when none
  bool unified_memory = false;        ///< a GB10-like GPU (RSS and GPU memory overlap)
};

/// Reader: the process table (and Python script heads, for Unsloth) under --root, /proc/meminfo,
/// and NVML's per-process memory from `gpu`. NotFound when /proc cannot be listed.
Result<WorkloadScan> ListWorkloads(const HostView& ctx, const GpuSnapshot& gpu);

}  // namespace sparkops
