#include "cli/guard_flags.h"

#include "host/dropcaches.h"
#include "host/meminfo.h"

namespace sparkops {

void GuardFlags::Add(CLI::App& app, bool with_off) {
  app.add_option("--min-available", min_available,
                 "memory guard floor on MemAvailable: 8G, 512M or 6% of MemTotal (default the larger of 4 GiB "
                 "and 5%)")
      ->check(NonEmpty());
  AddNumber(app, "--max-pressure", max_pressure, {0, 100, false, false, "percent"},
            "memory guard: act when PSI memory 'full avg10' stays above this percent (default 40)");
  AddNumber(app, "--pressure-window", pressure_window_s, {0, 3600, false, false, "seconds"},
            "seconds the pressure must last (default 10)");
  app.add_flag("--flush-cache", flush_cache,
               "memory guard: drop the page cache first when that lifts MemAvailable above the floor (root)");
  app.add_option("--kernel-signals", kernel_signals,
                 "memory guard: an NVRM NV_ERR_NO_MEMORY kernel record stops the job as the floor does, on|off "
                 "(default on; reading /dev/kmsg needs root or kernel.dmesg_restrict=0)")
      ->check(CLI::Validator(
          [](std::string& v) { return v == "on" || v == "off" ? std::string() : "expected on|off, got '" + v + "'"; },
          "on|off", "OnOff"));
  if (with_off) app.add_flag("--no-guard", no_guard, "turn the memory guard off");
}

Result<guard::Config> GuardFlags::Resolve(const Context& ctx, std::ostream& warn) const {
  std::optional<guard::FloorSpec> spec;
  if (!min_available.empty()) {
    auto s = guard::ParseFloor(min_available);
    if (!s) return std::unexpected(s.error());
    spec = *s;
  }
  auto mem = ReadMemInfo(ctx.fs);
  if (!mem) return IoError("memory guard: " + mem.error().message);
  guard::Config c;
  c.floor = guard::ResolveFloor(spec, *mem->total);
  c.max_pressure = max_pressure;
  c.pressure_window_s = pressure_window_s;
  c.kernel_signals = kernel_signals != "off";
  // Under --root the drop_caches file is a fixture's: writing it harms nothing.
  c.may_flush = flush_cache && (IsRoot() || !ctx.fs.is_real_root());
  if (flush_cache && !c.may_flush)
    warn << "memory guard: --flush-cache needs root (it writes " << kDropCachesPath
         << "); the guard will stop the job without flushing first\n";
  return c;
}

nlohmann::ordered_json GuardConfigJson(const guard::Config& c) {
  nlohmann::ordered_json j;
  j["min_available_bytes"] = c.floor;
  if (c.max_pressure) j["max_pressure"] = *c.max_pressure;
  j["pressure_window_s"] = c.pressure_window_s;
  j["flush_cache"] = c.may_flush;
  j["kernel_signals"] = c.kernel_signals;
  return j;
}

}  // namespace sparkops
