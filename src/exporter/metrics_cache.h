#pragma once
/// The /metrics body, cached and collected on a worker thread: a scrape asks for a new collection
/// only when the cached body is older than `min_interval` (default 1 s), so N scrapers cost one
/// collection per second, and then waits at most `fresh_wait` for it; past that it gets the last
/// complete body at once. Every body ends with sparkops_collection_age_seconds, the age of its
/// readings when served. Preflight runs in its own background thread every `preflight_interval`
/// (never per scrape).
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>

#include "exporter/collectors.h"

namespace sparkops {

struct CacheOptions {
  std::chrono::milliseconds min_interval{1000};          ///< reuse a body younger than this
  std::chrono::milliseconds preflight_interval{300000};  ///< 0: preflight never runs
  std::ostream* log = nullptr;  ///< where a collector's new error is written (stderr); null: nowhere
  std::chrono::milliseconds fresh_wait{250};  ///< how long a scrape waits for the collection it asked for
};

class MetricsCache {
 public:
  /// `collect` defaults to CollectAll(ctx); tests may pass their own.
  MetricsCache(const HostView& ctx, CacheOptions opts, std::function<Collection()> collect = nullptr);
  ~MetricsCache();
  MetricsCache(const MetricsCache&) = delete;
  MetricsCache& operator=(const MetricsCache&) = delete;

  /// The current body; thread-safe. Waits for the first collection; after that at most
  /// `fresh_wait` (a slow collection never holds scrapes longer: they get the previous body).
  std::string Body();
  /// Starts the background preflight thread (no-op when preflight_interval is 0).
  void StartPreflight();
  /// Stops and joins the collection and preflight threads (work in progress finishes first).
  void Stop();
  /// Number of collections so far (for tests and the benchmark).
  uint64_t collections() const;

 private:
  void PreflightLoop();
  void CollectLoop();

  const HostView& ctx_;
  CacheOptions opts_;
  std::function<Collection()> collect_;

  mutable std::mutex mu_;  // guards everything below
  std::string body_;
  std::optional<std::chrono::steady_clock::time_point> collected_at_;  ///< when body_'s collection started
  bool stale_ = false;  ///< new preflight results: the next scrape asks for a collection
  bool want_ = false;   ///< a scrape asked the worker for a collection
  GpuSnapshot last_gpu_;
  std::optional<MemInfo> last_mem_;
  bool have_facts_ = false;
  std::optional<PreflightSnapshot> preflight_;
  std::optional<CollectorStatus> preflight_status_;
  std::map<std::string, std::string> logged_errors_;  ///< LogCollectorErrors' memory
  uint64_t collections_ = 0;
  bool stop_ = false;
  std::condition_variable cv_;
  std::thread preflight_thread_;
  std::thread collect_thread_;  ///< started by the first Body()
};

}  // namespace sparkops
