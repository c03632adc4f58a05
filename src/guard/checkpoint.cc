#include "guard/checkpoint.h"

#include <csignal>
#include <cstdlib>

#include "base/strings.h"

namespace sparkops::guard {

namespace {

struct NamedSignal {
  std::string_view name;
  int sig;
};

constexpr NamedSignal kSignals[] = {{"HUP", SIGHUP},     {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"USR1", SIGUSR1},
                                    {"USR2", SIGUSR2},   {"ALRM", SIGALRM}, {"TERM", SIGTERM}, {"CONT", SIGCONT},
                                    {"WINCH", SIGWINCH}, {"URG", SIGURG}};

}  // namespace

Result<int> ParseCheckpointSignal(std::string_view name) {
  std::string up;
  for (char c : name) up += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  std::string_view v = up;
  if (v.starts_with("SIG")) v.remove_prefix(3);
  for (const NamedSignal& s : kSignals)
    if (s.name == v) return s.sig;
  return InputError("--checkpoint-signal '" + std::string(name) +
                    "': not one of HUP INT QUIT USR1 USR2 ALRM TERM CONT WINCH URG");
}

std::string SignalName(int sig) {
  for (const NamedSignal& s : kSignals)
    if (s.sig == sig) return "SIG" + std::string(s.name);
  return "signal " + std::to_string(sig);
}

bool CatchesSignal(std::string_view proc_status, int sig) {
  if (sig < 1 || sig > 64) return false;
  for (std::string_view line : SplitLines(proc_status)) {
    if (!line.starts_with("SigCgt:")) continue;
    line.remove_prefix(7);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty() || line.size() > 16) return false;
    uint64_t mask = 0;
    for (char c : line) {
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) return false;
      mask = mask << 4 | static_cast<uint64_t>(d);
    }
    return (mask >> (sig - 1) & 1) != 0;
  }
  return false;
}

uint64_t CheckpointLevel(const CheckpointOptions& o, uint64_t floor) {
  if (o.at_bytes) return *o.at_bytes;
  return floor > UINT64_MAX / 2 ? UINT64_MAX : floor * 2;
}

std::optional<double> CheckpointPsiLevel(const CheckpointOptions& o, std::optional<double> max_pressure) {
  if (o.psi_pct) return o.psi_pct;
  if (max_pressure) return *max_pressure / 2;
  return std::nullopt;
}

std::string_view ToString(CheckpointTrigger t) {
  switch (t) {
    case CheckpointTrigger::kMemAvailable: return "mem_available";
    case CheckpointTrigger::kPressure: return "pressure";
    case CheckpointTrigger::kNone: break;
  }
  return "";
}

CheckpointTrigger CheckpointTriggerFor(const Reading& r, uint64_t level, std::optional<double> psi) {
  if (r.available < level) return CheckpointTrigger::kMemAvailable;
  if (psi && r.psi_full_avg10 && *r.psi_full_avg10 >= *psi) return CheckpointTrigger::kPressure;
  return CheckpointTrigger::kNone;
}

bool HoldStopForCheckpoint(double since_s, double grace_s, uint64_t available, uint64_t floor) {
  return since_s < grace_s && available >= floor / 2;
}

}  // namespace sparkops::guard
