#pragma once
/// The /metrics body, cached and collected on a worker thread. A scrape is served the last complete
/// body at once (only the very first waits, at most `first_wait`); it asks for a new collection when
/// that body is older than `min_interval` (default 1 s), so N scrapers cost one collection per
/// second. The worker also collects ahead: from the interval between the last two scrapes and the
/// last collection's duration it starts the next collection so that it ends just before the next
/// scrape is due, so a regular scraper (Prometheus every 15 s) gets readings a collection's duration
/// old, not a scrape interval old, and the HTTP loop never waits on /proc. Every body ends with
/// sparkops_collection_age_seconds, the age of its readings when served. Preflight runs in its own
/// background thread every `preflight_interval` (never per scrape).
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
  std::chrono::milliseconds fresh_wait{0};  ///< how long a scrape waits for the collection it asked for
  std::chrono::milliseconds first_wait{2000};  ///< how long the first scrape waits for the first collection
};

class MetricsCache {
 public:
  /// `collect` defaults to one Collector(ctx)'s Collect(); tests may pass their own.
  MetricsCache(const HostView& ctx, CacheOptions opts, std::function<Collection()> collect = nullptr);
  ~MetricsCache();
  MetricsCache(const MetricsCache&) = delete;
  MetricsCache& operator=(const MetricsCache&) = delete;

  /// The current body; thread-safe. The first call waits at most `first_wait` for the first
  /// collection (past it: a body of one comment saying the collection is still running); later
  /// calls at most `fresh_wait` (0 by default: a slow collection never holds a scrape).
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
  /// When the worker should start the next collection unasked (collect-ahead); nullopt: only when asked.
  std::optional<std::chrono::steady_clock::time_point> AheadDue() const;

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
  std::optional<std::chrono::steady_clock::time_point> last_scrape_;
  std::optional<std::chrono::steady_clock::duration> scrape_interval_;  ///< between the last two scrapes
  std::chrono::steady_clock::duration last_duration_{};                ///< of the last collection
  bool ahead_unseen_ = false;  ///< body_ was collected ahead (unasked) and no scrape has had it yet
  bool stop_ = false;
  std::condition_variable cv_;
  std::thread preflight_thread_;
  std::thread collect_thread_;  ///< started by the first Body()
};

}  // namespace sparkops
