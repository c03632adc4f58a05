#include "telemetry/loop.h"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <string>

#include "base/number_flag.h"

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
  // Range-checked by the flags; the floor of 1 ms keeps a direct caller from dividing by zero.
  const auto step = std::max<Clock::duration>(SecondsToDuration(opts.interval_s), std::chrono::milliseconds(1));
  const auto limit = SecondsToDuration(opts.duration_s);
  const auto start = Clock::now();
  auto next = start;
  long long missed = 0;  // slots skipped since the last sample: recorded on the next one
  for (long long n = 0; !stop.stopped(); ++n) {
    if (opts.count > 0 && n >= opts.count) break;
    Sample s = sampler.Take();
    s.events = detector.Update(s);
    if (missed > 0) s.events.push_back("missed_slots:" + std::to_string(missed));
    missed = 0;
    if (auto w = write(s); !w) return w;
    if (opts.count > 0 && n + 1 >= opts.count) break;
    next += step;
    auto now = Clock::now();
    if (next < now) {  // fell behind (a slow read, a suspended host): skip the missed slots, count them
      auto behind = (now - next) / step + 1;
      next += behind * step;
      missed = static_cast<long long>(behind);
    }
    if (opts.duration_s > 0 && next - start >= limit) break;
    SleepUntil(next, stop);
  }
  return {};
}

}  // namespace sparkops
