#include "telemetry/loop.h"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

namespace sparkops {
namespace {

using Clock = std::chrono::steady_clock;

/// Sleeps until `deadline` or a stop, in slices of at most 200 ms.
void SleepUntil(Clock::time_point deadline, const StopFlags& stop) {
  while (!stop.stopped()) {
    auto now = Clock::now();
    if (now >= deadline) return;
    auto until = std::min(deadline, now + std::chrono::milliseconds(200));
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(until.time_since_epoch()).count();
    timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);  // EINTR: re-check the flags
  }
}

}  // namespace

Result<void> SampleLoop(Sampler& sampler, EventDetector& detector, const LoopOptions& opts, StopFlags stop,
                        const std::function<Result<void>(const Sample&)>& write) {
  const auto step = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opts.interval_s));
  const auto limit = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opts.duration_s));
  const auto start = Clock::now();
  auto next = start;
  for (long long n = 0; !stop.stopped(); ++n) {
    if (opts.count > 0 && n >= opts.count) break;
    Sample s = sampler.Take();
    s.events = detector.Update(s);
    if (auto w = write(s); !w) return w;
    if (opts.count > 0 && n + 1 >= opts.count) break;
    next += step;
    auto now = Clock::now();
    if (next < now) next += ((now - next) / step + 1) * step;  // fell behind: skip missed slots
    if (opts.duration_s > 0 && next - start >= limit) break;
    SleepUntil(next, stop);
  }
  return {};
}

}  // namespace sparkops
