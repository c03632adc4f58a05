#pragma once
/// The sampling schedule shared by `sample` and `run`: one sample per interval on absolute
/// monotonic deadlines (no drift; missed slots are skipped, not bunched), events detected, each
/// sample handed to a writer, until a count, a duration or a stop flag.
#include <atomic>
#include <csignal>
#include <functional>

#include "base/error.h"
#include "telemetry/events.h"
#include "telemetry/sampler.h"

namespace sparkops {

struct LoopOptions {
  double interval_s = 30;  ///< seconds between samples (> 0)
  long long count = 0;     ///< stop after this many samples; 0 = no limit
  double duration_s = 0;   ///< stop after this many seconds; 0 = no limit
};

/// What stops the loop early: a flag set by a signal handler and/or by another thread. Checked
/// before each sample and at least every 200 ms while sleeping (a signal also ends the sleep).
struct StopFlags {
  const volatile std::sig_atomic_t* signal = nullptr;
  const std::atomic<bool>* thread = nullptr;
  bool stopped() const { return (signal && *signal) || (thread && thread->load()); }
};

/// Takes samples, fills `events` from `detector`, and calls `write` for each. A sample in progress
/// when a stop arrives is finished and written. Returns the first error `write` returns.
Result<void> SampleLoop(Sampler& sampler, EventDetector& detector, const LoopOptions& opts, StopFlags stop,
                        const std::function<Result<void>(const Sample&)>& write);

}  // namespace sparkops
