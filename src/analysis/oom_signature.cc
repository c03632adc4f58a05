#include "analysis/oom_signature.h"

#include <optional>
#include <vector>

#include "base/strings.h"

namespace sparkops {
namespace {

std::vector<std::string_view> Lines(std::string_view t) {
  std::vector<std::string_view> v;
  size_t start = 0;
  while (start <= t.size()) {
    size_t nl = t.find('\n', start);
    if (nl == std::string_view::npos) nl = t.size();
    std::string_view l = t.substr(start, nl - start);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    v.push_back(l);
    start = nl + 1;
  }
  return v;
}

bool Has(std::string_view s, std::string_view needle) { return s.find(needle) != std::string_view::npos; }

// Hand-written matchers with the meaning of the std::regex patterns they replaced (ECMAScript as
// libstdc++ implements it, "C" locale): \d is 0-9, \s is " \t\n\v\f\r", \w is [A-Za-z0-9_], '.'
// matches anything but '\n' and '\r'. Each is linear in the line; the regexes were the fuzz target's
// bottleneck (57 exec/s on 16 kB inputs under ASan). The patterns are kept in the comments.
bool IsNumChar(char c) { return IsDigit(c) || c == '.'; }  // [\d.]
bool IsWordChar(char c) { return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool At(std::string_view s, size_t i, std::string_view lit) { return i <= s.size() && s.substr(i).starts_with(lit); }
template <class Pred>
size_t RunEnd(std::string_view s, size_t i, Pred in) {
  while (i < s.size() && in(s[i])) ++i;
  return i;
}

std::optional<double> ToGiB(std::string_view num, std::string_view unit) {
  auto v = ParseDouble(num);  // never throws: "1.2.3" or "." is simply not a figure
  if (!v) return std::nullopt;
  return unit == "MiB" ? *v / 1024 : (unit == "KiB" ? *v / (1024 * 1024) : *v);
}

/// PREFIX([\d.]+) (UNIT|...)SUFFIX: the figure of the leftmost match.
struct FigurePattern {
  std::string_view prefix;
  std::string_view units[3];  ///< tried in order; unused ones empty
  std::string_view suffix;
};
std::optional<double> Figure(std::string_view line, const FigurePattern& p) {
  for (size_t s = 0; s < line.size(); ++s) {
    if (p.prefix.empty()) {
      // A match inside a run of [\d.] ends where one at the run's start does: try run starts only.
      if (!IsNumChar(line[s]) || (s > 0 && IsNumChar(line[s - 1]))) continue;
    } else {
      s = line.find(p.prefix, s);
      if (s == std::string_view::npos) return std::nullopt;
    }
    size_t num = s + p.prefix.size(), end = RunEnd(line, num, IsNumChar);  // greedy, and ' ' is not in [\d.]
    if (end == num || !At(line, end, " ")) continue;
    for (std::string_view unit : p.units)
      if (!unit.empty() && At(line, end + 1, unit) && At(line, end + 1 + unit.size(), p.suffix))
        return ToGiB(line.substr(num, end - num), unit);
  }
  return std::nullopt;
}

/// NVRM: .*NV_ERR_NO_MEMORY  ('.' stops at '\r': look within each '\r'-free piece)
bool IsNvrmNoMemory(std::string_view l) {
  for (size_t start = 0; start <= l.size();) {
    size_t end = l.find_first_of("\r\n", start);
    if (end == std::string_view::npos) end = l.size();
    std::string_view piece = l.substr(start, end - start);
    size_t p = piece.find("NVRM: ");
    if (p != std::string_view::npos && piece.find("NV_ERR_NO_MEMORY", p + 6) != std::string_view::npos) return true;
    start = end + 1;
  }
  return false;
}

/// (?:Memory cgroup )?[Oo]ut of memory: Killed process (\d+) \(([^)]+)\)(?:.*anon-rss:(\d+)kB)?
struct KernelKill {
  std::string_view pid, name;
  std::optional<std::string_view> anon_rss_kb;
};
std::optional<KernelKill> MatchKernelKill(std::string_view l) {
  static constexpr std::string_view kCore = "ut of memory: Killed process ";
  for (size_t q = l.find(kCore, 1); q != std::string_view::npos; q = l.find(kCore, q + 1)) {
    if (l[q - 1] != 'O' && l[q - 1] != 'o') continue;
    size_t pid = q + kCore.size(), pid_end = RunEnd(l, pid, IsDigit);
    if (pid_end == pid || !At(l, pid_end, " (")) continue;
    size_t name = pid_end + 2, close = l.find(')', name);  // [^)]+ greedy: up to the next ')'
    if (close == std::string_view::npos) return std::nullopt;  // nor after any later occurrence
    if (close == name) continue;
    KernelKill k{l.substr(pid, pid_end - pid), l.substr(name, close - name), std::nullopt};
    // Optional tail: greedy '.*' takes the last "anon-rss:N kB" before a '\r'.
    size_t tail_end = l.find_first_of("\r\n", close + 1);
    std::string_view tail = l.substr(close + 1, (tail_end == std::string_view::npos ? l.size() : tail_end) - close - 1);
    for (size_t a = tail.rfind("anon-rss:"); a != std::string_view::npos;
         a = a == 0 ? std::string_view::npos : tail.rfind("anon-rss:", a - 1)) {
      size_t kb = a + 9, kb_end = RunEnd(tail, kb, IsDigit);
      if (kb_end > kb && At(tail, kb_end, "kB")) {
        k.anon_rss_kb = tail.substr(kb, kb_end - kb);
        break;
      }
    }
    return k;
  }
  return std::nullopt;
}

/// ^\s*Killed\s*$|exit (status|code) 137|exitcode\s*:?\s*-9\b
bool IsKilledLine(std::string_view l) {
  size_t k = RunEnd(l, 0, IsSpace);
  if (At(l, k, "Killed") && RunEnd(l, k + 6, IsSpace) == l.size()) return true;
  if (Has(l, "exit status 137") || Has(l, "exit code 137")) return true;
  for (size_t p = l.find("exitcode"); p != std::string_view::npos; p = l.find("exitcode", p + 1)) {
    size_t q = RunEnd(l, p + 8, IsSpace);
    if (q < l.size() && l[q] == ':') q = RunEnd(l, q + 1, IsSpace);
    if (At(l, q, "-9") && (q + 2 == l.size() || !IsWordChar(l[q + 2]))) return true;
  }
  return false;
}

/// A line showing a training step ran (tqdm bar, HF loss dict, "step N", "iter N"):
/// (\d+/\d+ \[\d+:\d+)|('loss':)|("loss":)|(\b[Ss]tep[ =:]+\d+)|(\biter \d+)
bool IsStepLine(std::string_view l) {
  if (Has(l, "'loss':") || Has(l, "\"loss\":")) return true;
  for (size_t p = l.find('/'); p != std::string_view::npos; p = l.find('/', p + 1)) {
    if (p == 0 || !IsDigit(l[p - 1])) continue;
    size_t d = RunEnd(l, p + 1, IsDigit);
    if (d == p + 1 || !At(l, d, " [")) continue;
    size_t e = RunEnd(l, d + 2, IsDigit);
    if (e > d + 2 && At(l, e, ":") && e + 1 < l.size() && IsDigit(l[e + 1])) return true;
  }
  for (size_t p = l.find("tep"); p != std::string_view::npos; p = l.find("tep", p + 1)) {
    if (p == 0 || (l[p - 1] != 'S' && l[p - 1] != 's') || (p >= 2 && IsWordChar(l[p - 2]))) continue;
    size_t e = RunEnd(l, p + 3, [](char c) { return c == ' ' || c == '=' || c == ':'; });
    if (e > p + 3 && e < l.size() && IsDigit(l[e])) return true;
  }
  for (size_t p = l.find("iter "); p != std::string_view::npos; p = l.find("iter ", p + 1))
    if ((p == 0 || !IsWordChar(l[p - 1])) && p + 5 < l.size() && IsDigit(l[p + 5])) return true;
  return false;
}

bool IsBnbFrame(std::string_view l) {
  return Has(l, "bitsandbytes/functional.py") || Has(l, "quantize_4bit") || Has(l, "dequantize_4bit") ||
         Has(l, "Params4bit") || Has(l, "MatMul4Bit") || Has(l, "bitsandbytes/nn/modules.py");
}
bool IsStepFrame(std::string_view l) {
  return Has(l, "backward") || Has(l, "optimizer.step") || Has(l, "training_step") || Has(l, "in step");
}
bool IsLoadFrame(std::string_view l) {
  return Has(l, "from_pretrained") || Has(l, "load_state_dict") || Has(l, "safetensors") ||
         Has(l, "_load_pretrained_model") || Has(l, "dispatch_model") || Has(l, ".to(") || Has(l, "load_checkpoint");
}

}  // namespace

std::string ToString(OomKind k) {
  switch (k) {
    case OomKind::kNone: return "none";
    case OomKind::kTorchCuda: return "torch_cuda_oom";
    case OomKind::kCudaRuntime: return "cuda_runtime_oom";
    case OomKind::kNvrmNoMemory: return "nvrm_no_memory";
    case OomKind::kKernelOomKiller: return "kernel_oom_killer";
    case OomKind::kKilled: return "killed_sigkill";
  }
  return "?";
}
std::string ToString(OomPhase p) {
  switch (p) {
    case OomPhase::kUnknown: return "unknown";
    case OomPhase::kLoad: return "load";
    case OomPhase::kDequant: return "dequantisation";
    case OomPhase::kStep: return "step";
  }
  return "?";
}

OomSignature ParseOomSignature(std::string_view text) {
  static const FigurePattern kTried{"CUDA out of memory. Tried to allocate ", {"GiB", "MiB", "KiB"}, ""};
  static const FigurePattern kTotal{"total capacity of ", {"GiB", "MiB"}, ""};
  static const FigurePattern kFree{"of which ", {"GiB", "MiB"}, " is free"};
  static const FigurePattern kOldTotal{"; ", {"GiB", "MiB"}, " total capac"};
  static const FigurePattern kOldFree{"; ", {"GiB", "MiB", "KiB"}, " free;"};
  static const FigurePattern kInUse{"this process has ", {"GiB", "MiB"}, " memory in use"};
  static const FigurePattern kAlloc{"", {"GiB", "MiB"}, " is allocated by PyTorch"};
  static const FigurePattern kOldAlloc{"", {"GiB", "MiB"}, " already allocated"};
  static const FigurePattern kUnalloc{"", {"GiB", "MiB"}, " is reserved by PyTorch but unallocated"};

  OomSignature sig;
  auto lines = Lines(text);
  size_t at = lines.size();
  for (size_t i = 0; i < lines.size() && at == lines.size(); ++i) {
    std::string_view l = lines[i];
    if (Has(l, "CUDA out of memory")) {
      sig.kind = OomKind::kTorchCuda;
      sig.tried_gib = Figure(l, kTried);
      sig.total_gib = Figure(l, kTotal);
      if (!sig.total_gib) sig.total_gib = Figure(l, kOldTotal);
      sig.free_gib = Figure(l, kFree);
      if (!sig.free_gib) sig.free_gib = Figure(l, kOldFree);
      sig.process_in_use_gib = Figure(l, kInUse);
      sig.allocated_by_torch_gib = Figure(l, kAlloc);
      if (!sig.allocated_by_torch_gib) sig.allocated_by_torch_gib = Figure(l, kOldAlloc);
      sig.reserved_unallocated_gib = Figure(l, kUnalloc);
    } else if (Has(l, "CUDA error: out of memory") || Has(l, "CUBLAS_STATUS_ALLOC_FAILED") ||
               Has(l, "cudaErrorMemoryAllocation")) {
      sig.kind = OomKind::kCudaRuntime;
    } else if (IsNvrmNoMemory(l)) {
      sig.kind = OomKind::kNvrmNoMemory;
    } else if (auto k = MatchKernelKill(l)) {
      sig.kind = OomKind::kKernelOomKiller;
      if (auto pid = ParseInt(k->pid)) sig.killed_pid = static_cast<long>(*pid);
      sig.killed_name = std::string(k->name);
      if (k->anon_rss_kb)
        if (auto kb = ParseDouble(*k->anon_rss_kb)) sig.killed_anon_rss_gib = *kb / (1024.0 * 1024.0);
    } else {
      continue;
    }
    sig.line = std::string(l);
    at = i;
  }
  if (sig.kind == OomKind::kNone) {  // a bare SIGKILL is the kernel OOM killer's usual trace in a log
    for (size_t i = 0; i < lines.size(); ++i) {
      if (IsKilledLine(lines[i])) {
        sig.kind = OomKind::kKilled;
        sig.line = std::string(lines[i]);
        at = i;
        break;
      }
    }
    if (sig.kind == OomKind::kNone) return sig;
  }
  // The traceback printed above the error line, and whether a step ran before it.
  size_t tb = at;
  while (tb > 0 && !Has(lines[tb], "Traceback (most recent call last)")) --tb;
  if (!Has(lines[tb], "Traceback (most recent call last)")) tb = at;
  bool step_before = false, step_frame = false, load_frame = false;
  for (size_t i = 0; i < tb; ++i) step_before = step_before || IsStepLine(lines[i]);
  for (size_t i = tb; i <= at && i < lines.size(); ++i) {
    sig.bitsandbytes = sig.bitsandbytes || IsBnbFrame(lines[i]);
    step_frame = step_frame || IsStepFrame(lines[i]);
    load_frame = load_frame || IsLoadFrame(lines[i]);
  }
  if (sig.bitsandbytes) sig.phase = OomPhase::kDequant;
  else if (step_frame || step_before) sig.phase = OomPhase::kStep;
  else if (load_frame) sig.phase = OomPhase::kLoad;
  return sig;
}

}  // namespace sparkops
