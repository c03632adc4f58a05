#include "exporter/power_collector.h"

#include <chrono>

namespace sparkops {

CollectorStatus CollectPower(const HostView& ctx, std::optional<PowerReading>& out) {
  auto t0 = std::chrono::steady_clock::now();
  PowerReading r = ReadPowerReading(ctx.fs);  // never fails: an unreadable file is a missing reading
  if (!r.empty()) out = std::move(r);
  CollectorStatus s;
  s.name = "power";
  s.success = true;
  s.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace sparkops
