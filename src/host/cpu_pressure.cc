#include "host/cpu_pressure.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "host/pressure.h"

namespace sparkops {

Result<double> ParseLoadAvg(std::string_view text) {
  auto words = Split(Trim(text), ' ');
  if (words.empty() || words[0].empty()) return InputError("loadavg: empty");
  auto v = ParseDouble(words[0]);
  if (!v || !(*v >= 0 && *v < 1e7))
    return InputError(fmt::format("loadavg: field 1 (load1): not a load: '{}'", words[0]));
  return *v;
}

Result<RunnableCount> ParseRunnable(std::string_view text) {
  RunnableCount c;
  bool running = false;
  for (std::string_view line : SplitLines(text)) {
    if (line.size() > 3 && line.substr(0, 3) == "cpu" && line[3] >= '0' && line[3] <= '9') {
      ++c.cpus;
    } else if (line.starts_with("procs_running ")) {
      auto v = ParseUint(Trim(line.substr(14)));
      if (!v || *v > 1000000) return InputError(fmt::format("stat: procs_running: not a count: '{}'", line.substr(14)));
      c.running = static_cast<unsigned>(*v);
      running = true;
    }
  }
  if (!running) return InputError("stat: no procs_running line");
  if (c.cpus == 0) return InputError("stat: no cpuN lines");
  return c;
}

double RunnableWaitingPct(unsigned running, unsigned cpus) {
  if (running <= cpus || running == 0) return 0;
  return 100.0 * static_cast<double>(running - cpus) / static_cast<double>(running);
}

Result<HostPressureReading> ReadHostPressure(const HostFs& fs) {
  HostPressureReading r;
  auto read_psi = [&](const char* path) -> Result<Pressure> {
    auto text = fs.Read(path, 4096);
    if (!text) return std::unexpected(text.error());
    auto p = ParsePressure(*text);
    if (!p) return InputError(fs.Path(path) + ": " + p.error().message);
    return p;
  };
  if (auto load = fs.Read("/proc/loadavg", 4096); load)
    if (auto v = ParseLoadAvg(*load)) r.p.load1 = *v;
  std::optional<RunnableCount> runnable;
  if (auto stat = fs.Read("/proc/stat", 4u << 20); stat)
    if (auto c = ParseRunnable(*stat)) runnable = *c;
  if (runnable) {
    r.p.runnable = runnable->running;
    r.p.cpus = runnable->cpus;
  }
  auto cpu = read_psi("/proc/pressure/cpu");
  if (cpu) {
    r.p.source = "psi";
    r.p.cpu_some = cpu->some->avg10;
    r.p.cpu_some_total_s = static_cast<double>(cpu->some->total_us) / 1e6;
    if (auto io = read_psi("/proc/pressure/io"); io) {
      r.p.io_some = io->some->avg10;
      r.p.io_some_total_s = static_cast<double>(io->some->total_us) / 1e6;
      if (io->full) {
        r.p.io_full = io->full->avg10;
        r.p.io_full_total_s = static_cast<double>(io->full->total_us) / 1e6;
      }
    }
    return r;
  }
  r.note = cpu.error().kind == Error::Kind::kNotFound ? "no PSI (" + fs.Path("/proc/pressure/cpu") + " absent)"
                                                      : cpu.error().message;
  if (!runnable)
    return NotFound("host pressure: " + r.note + ", and " + fs.Path("/proc/stat") + " has no procs_running");
  r.p.source = "runnable";
  r.p.cpu_some = RunnableWaitingPct(runnable->running, runnable->cpus);
  return r;
}

}  // namespace sparkops
