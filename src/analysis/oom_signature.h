#pragma once
/// OOM signatures in training-log text (the texts PyTorch, the CUDA runtime,
/// bitsandbytes, the NVIDIA driver and the kernel OOM killer print; docs/analyze.md). Pure and
/// self-contained: `oom`, `analyze` and `run` all use it.
#include <optional>
#include <string>
#include <string_view>

namespace sparkops {

enum class OomKind {
  kNone,              ///< no OOM text found
  kTorchCuda,         ///< torch.OutOfMemoryError / torch.cuda.OutOfMemoryError: CUDA out of memory
  kCudaRuntime,       ///< "CUDA error: out of memory", CUBLAS_STATUS_ALLOC_FAILED (outside the allocator)
  kNvrmNoMemory,      ///< kernel log "NVRM: ... NV_ERR_NO_MEMORY" (GB10 driver allocation failure)
  kKernelOomKiller,   ///< "Out of memory: Killed process PID (name)"
  kKilled,            ///< the trainer died by SIGKILL (exit 137 / "Killed" / exitcode -9) with no other text
};
enum class OomPhase {
  kUnknown,
  kLoad,      ///< model load (from_pretrained, load_state_dict, safetensors, dispatch_model, .to()
  kDequant,   ///< bitsandbytes quantise/dequantise frames (QLoRA)
  kStep,      ///< a training step (backward, optimizer.step, training_step, after a step line)
};

struct OomSignature {
  OomKind kind = OomKind::kNone;
  OomPhase phase = OomPhase::kUnknown;
  bool bitsandbytes = false;                ///< a bitsandbytes frame or message is present
  /// Figures the message states, in GiB (MiB converted); absent when not printed.
  std::optional<double> tried_gib, total_gib, free_gib, process_in_use_gib, allocated_by_torch_gib,
      reserved_unallocated_gib;
  std::optional<long> killed_pid;           ///< kernel OOM killer
  std::optional<std::string> killed_name;
  std::optional<double> killed_anon_rss_gib;
  std::string line;                         ///< the line that identified it
};

std::string ToString(OomKind k);
std::string ToString(OomPhase p);

/// Finds the first OOM in `log_text` and classifies its phase from the surrounding frames and
/// whether a training-step line came before it.
OomSignature ParseOomSignature(std::string_view log_text);

}  // namespace sparkops
