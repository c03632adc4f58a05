#pragma once
/// Checkpoint early, stop late (`run --checkpoint-signal`): when MemAvailable first falls under a
/// level above the guard's floor (default twice the floor), or memory pressure (PSI `full avg10`)
/// first reaches a level below the guard's --max-pressure (default half of it), `run` sends the
/// job's processes that catch the chosen signal (SigCgt in /proc/PID/status: a launcher that would
/// die of it, such as torchrun or `accelerate launch`, is never sent it) that signal once; the job
/// saves and acknowledges by creating the file named in SPARKOPS_CHECKPOINT_DONE. Between the
/// signal and the acknowledgement the guard's stop waits, at most the grace, while MemAvailable
/// stays above half the floor.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "guard/policy.h"

namespace sparkops::guard {

/// The signals a job may ask for: HUP INT QUIT USR1 USR2 ALRM TERM CONT WINCH URG, with or without
/// "SIG", any case. An Input error naming the accepted names otherwise.
Result<int> ParseCheckpointSignal(std::string_view name);
/// "SIGUSR1" for SIGUSR1.
std::string SignalName(int sig);

/// Whether a /proc/PID/status text says the process catches `sig` (its SigCgt mask). Pure; false
/// without a SigCgt line or on a malformed one.
bool CatchesSignal(std::string_view proc_status, int sig);

/// Seconds between tries while no process of the job catches the signal yet.
inline constexpr double kCheckpointRetryS = 5;

struct CheckpointOptions {
  int signal = 0;
  std::optional<uint64_t> at_bytes;  ///< MemAvailable level; nullopt: twice the floor
  std::optional<double> psi_pct;     ///< PSI full avg10 level, percent; nullopt: half of --max-pressure
  double grace_s = 120;              ///< longest the stop waits for the acknowledgement
  std::string done_path;             ///< the acknowledgement file (SPARKOPS_CHECKPOINT_DONE)
};

/// The level the checkpoint is asked at: `o.at_bytes`, else twice `floor`.
uint64_t CheckpointLevel(const CheckpointOptions& o, uint64_t floor);

/// The PSI level the checkpoint is asked at, percent: `o.psi_pct`, else half of `max_pressure`;
/// nullopt when neither is set (pressure does not ask for the checkpoint).
std::optional<double> CheckpointPsiLevel(const CheckpointOptions& o, std::optional<double> max_pressure);

/// What asks for the checkpoint in a reading (`checkpoint_requested`'s `trigger`).
enum class CheckpointTrigger { kNone, kMemAvailable, kPressure };
/// "mem_available", "pressure" ("" for kNone).
std::string_view ToString(CheckpointTrigger t);
/// MemAvailable under `level` bytes (checked first: it is the one that ends in a stop), else PSI
/// full avg10 at or above `psi` percent; kNone otherwise, and for pressure without a PSI reading
/// or without a level. Pure.
CheckpointTrigger CheckpointTriggerFor(const Reading& r, uint64_t level, std::optional<double> psi);

/// Whether the guard's stop waits for the job's checkpoint: asked `since_s` seconds ago and not yet
/// acknowledged, within the grace, with MemAvailable at least half the floor.
bool HoldStopForCheckpoint(double since_s, double grace_s, uint64_t available, uint64_t floor);

}  // namespace sparkops::guard
