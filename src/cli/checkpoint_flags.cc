#include "cli/checkpoint_flags.h"

#include <fmt/format.h>

#include "cli/flags.h"
#include "host/meminfo.h"

namespace sparkops {

void CheckpointFlags::Add(CLI::App& app) {
  app.add_option("--checkpoint-signal", signal,
                 "checkpoint early: send this signal (USR1, USR2, HUP ...) once to the job's processes that catch it "
                 "when MemAvailable first falls under --checkpoint-at; the job creates $SPARKOPS_CHECKPOINT_DONE "
                 "when saved")
      ->check(NonEmpty());
  app.add_option("--checkpoint-at", at,
                 "MemAvailable level of the checkpoint request: 16G, 1024M or 12% of MemTotal (default twice the "
                 "guard's floor)")
      ->check(NonEmpty());
  AddNumber(app, "--checkpoint-psi", psi, {0, 100, true, false, "percent"},
            "memory pressure level of the checkpoint request: PSI full avg10 at or above this percent asks too, "
            "whichever comes first (default half the guard's --max-pressure; below it)");
  AddNumber(app, "--checkpoint-grace", grace_s, kGraceRange,
            "longest the guard's stop waits for the checkpoint while MemAvailable stays above half the floor "
            "(default 120)");
}

Result<std::optional<guard::CheckpointOptions>> CheckpointFlags::Resolve(const Context& ctx,
                                                                         const std::optional<guard::Config>& guard,
                                                                         const std::string& run_dir) const {
  if (signal.empty()) {
    if (!at.empty()) return InputError("--checkpoint-at needs --checkpoint-signal");
    if (psi) return InputError("--checkpoint-psi needs --checkpoint-signal");
    return std::optional<guard::CheckpointOptions>();
  }
  if (!guard) return InputError("--checkpoint-signal needs the memory guard (it is off)");
  auto sig = guard::ParseCheckpointSignal(signal);
  if (!sig) return std::unexpected(sig.error());
  guard::CheckpointOptions o;
  o.signal = *sig;
  o.grace_s = grace_s;
  o.done_path = run_dir + "/checkpoint.done";
  if (psi && guard->max_pressure && *psi >= *guard->max_pressure)
    return InputError(
        fmt::format("--checkpoint-psi {:g}: not below the guard's --max-pressure ({:g})", *psi, *guard->max_pressure));
  o.psi_pct = psi;
  if (!at.empty()) {
    auto spec = guard::ParseFloor(at);
    if (!spec) {
      std::string m = spec.error().message;
      if (m.starts_with("--min-available")) m.replace(0, 15, "--checkpoint-at");
      return InputError(m);
    }
    auto mem = ReadMemInfo(ctx.fs);
    if (!mem) return IoError("--checkpoint-at: " + mem.error().message);
    if (!mem->total) return IoError("--checkpoint-at: no MemTotal in /proc/meminfo");
    o.at_bytes = guard::ResolveFloor(*spec, *mem->total);
    if (*o.at_bytes <= guard->floor)
      return InputError(fmt::format("--checkpoint-at '{}': {:.2f} GiB is not above the guard's floor ({:.2f} GiB)", at,
                                    static_cast<double>(*o.at_bytes) / (1ull << 30),
                                    static_cast<double>(guard->floor) / (1ull << 30)));
  }
  return std::optional<guard::CheckpointOptions>(o);
}

}  // namespace sparkops
