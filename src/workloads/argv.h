#pragma once
/// Pure helpers over a command line (argv words), shared by the classifier (workload.cc) and the
/// G10 parallelism reader (parallelism.cc).
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparkops {

/// Value of a flag in `argv[from..]`: `--name V`, `--name=V`; long names match with '-' and '_'
/// interchangeable (`--gpu_memory_utilization` = `--gpu-memory-utilization`). The last occurrence
/// wins. `std::nullopt` when absent; "" when the flag is last with no value.
std::optional<std::string> FlagValue(const std::vector<std::string>& argv,
                                     std::initializer_list<std::string_view> names, size_t from = 0);
/// True when a boolean flag (`--use_fsdp`, `--standalone`) is present (same name matching).
bool HasFlag(const std::vector<std::string>& argv, std::initializer_list<std::string_view> names, size_t from = 0);
/// `key=value` words (torchtune overrides: `tensor_parallel_dim=2`), last wins.
std::optional<std::string> KeyValueArg(const std::vector<std::string>& argv, std::string_view key, size_t from = 0);

/// What a command line runs, with the Python interpreter and its options looked through:
/// `python3 -u -m vllm.entrypoints.openai.api_server ...` -> {module "vllm.entrypoints.openai.api_server"},
/// `python3 /venv/bin/torchrun ...` -> {program "torchrun"}, `/usr/bin/ollama serve` -> {program "ollama"}.
struct Launch {
  std::string program;  ///< basename of the executable or console script ("" for -m / -c)
  std::string module;   ///< the `-m` module, or ""
  std::string script;   ///< a `.py` script path run by the interpreter, or ""
  bool python = false;  ///< run through a Python interpreter
  size_t next = 0;      ///< index of the first word after the program/module/script
};
Launch ParseLaunch(const std::vector<std::string>& argv);

/// argv joined with spaces, cut to `max` characters with "..." (for display).
std::string ShortCommand(const std::vector<std::string>& argv, size_t max = 100);

/// Sizes such as "17179869184", "16GiB", "16G", "512MiB" -> bytes (binary units; also "GB" = 10^9).
std::optional<uint64_t> ParseByteSize(std::string_view s);

}  // namespace sparkops
