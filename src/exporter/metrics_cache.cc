#include "exporter/metrics_cache.h"

#include <algorithm>
#include <exception>
#include <memory>

#include "exporter/collection_budget.h"
#include "report/prometheus.h"

namespace sparkops {

MetricsCache::MetricsCache(const HostView& ctx, CacheOptions opts, std::function<Collection()> collect)
    : ctx_(ctx), opts_(opts), collect_(std::move(collect)) {
  if (!collect_)  // one Collector for the cache's life: its event detector needs the previous sample
    collect_ = [c = std::make_shared<Collector>(ctx_)] { return c->Collect(); };
}

MetricsCache::~MetricsCache() { Stop(); }

uint64_t MetricsCache::collections() const {
  std::lock_guard<std::mutex> lock(mu_);
  return collections_;
}

std::string MetricsCache::Body() {
  std::unique_lock<std::mutex> lock(mu_);
  if (stop_) return body_;
  if (!collect_thread_.joinable()) collect_thread_ = std::thread([this] { CollectLoop(); });
  const auto now = std::chrono::steady_clock::now();
  if (last_scrape_) scrape_interval_ = now - *last_scrape_;
  last_scrape_ = now;
  const auto age = collected_at_ ? now - *collected_at_ : std::chrono::steady_clock::duration::max();
  // A body collected ahead for this scrape is fresh enough; otherwise ask for one (simultaneous
  // scrapes share it).
  const bool ahead = ahead_unseen_;
  ahead_unseen_ = false;
  if (!collected_at_ || stale_ || (age >= opts_.min_interval && !ahead)) {
    const uint64_t before = collections_;
    want_ = true;
    cv_.notify_all();
    if (!collected_at_) cv_.wait_for(lock, opts_.first_wait, [&] { return stop_ || collected_at_.has_value(); });
    else if (opts_.fresh_wait.count() > 0)
      cv_.wait_for(lock, opts_.fresh_wait, [&] { return stop_ || collections_ != before; });
  } else {
    cv_.notify_all();  // the worker re-plans its next collect-ahead from this scrape
  }
  if (!collected_at_) return "# sparkops: the first collection is still running; the next scrape gets it\n";
  const double served_age = std::chrono::duration<double>(std::chrono::steady_clock::now() - *collected_at_).count();
  return body_ + CollectionAgeMetric(served_age);
}

std::optional<std::chrono::steady_clock::time_point> MetricsCache::AheadDue() const {
  if (!last_scrape_ || !scrape_interval_ || !collected_at_) return std::nullopt;
  const auto now = std::chrono::steady_clock::now();
  // Scrapes stopped (more than two intervals without one): collect only when asked again.
  if (now - *last_scrape_ > 2 * *scrape_interval_) return std::nullopt;
  const auto lead = last_duration_ + std::chrono::milliseconds(100);
  auto due = *last_scrape_ + *scrape_interval_ - lead;
  // Never more often than min_interval, and once per scrape (AheadDue is not asked while a body
  // collected ahead waits for its scrape).
  return std::max(due, *collected_at_ + opts_.min_interval);
}

void MetricsCache::CollectLoop() {
  for (;;) {
    std::unique_lock<std::mutex> lock(mu_);
    bool asked = true;
    for (;;) {
      if (stop_ || want_) break;
      auto due = ahead_unseen_ ? std::nullopt : AheadDue();
      if (!due) {
        cv_.wait(lock);
        continue;
      }
      if (std::chrono::steady_clock::now() >= *due) {
        asked = false;
        break;
      }
      cv_.wait_until(lock, *due);
    }
    if (stop_) return;
    want_ = false;
    stale_ = false;
    std::optional<PreflightSnapshot> preflight = preflight_;
    std::optional<CollectorStatus> preflight_status = preflight_status_;
    lock.unlock();
    // Off the lock: scrapes meanwhile are served the previous body.
    const auto started = std::chrono::steady_clock::now();
    Collection c;
    try {
      c = collect_();
    } catch (const std::exception& e) {  // a library threw: a body that says so, never a dead worker
      c = Collection();
      c.inputs.collectors.push_back({"collection", false, 0, e.what()});
    }
    c.inputs.preflight = std::move(preflight);
    if (preflight_status) c.inputs.collectors.push_back(*preflight_status);
    std::string body = RenderMetrics(c.inputs);
    ReturnFreedMemory();  // what a process flood took during the collection goes back (issue 29)
    lock.lock();
    ++collections_;
    last_gpu_ = c.gpu;
    last_mem_ = c.mem;
    have_facts_ = true;
    if (opts_.log) LogCollectorErrors(*opts_.log, c.inputs.collectors, &logged_errors_);
    body_ = std::move(body);
    collected_at_ = started;
    last_duration_ = std::chrono::steady_clock::now() - started;
    ahead_unseen_ = !asked;
    cv_.notify_all();
  }
}

void MetricsCache::StartPreflight() {
  if (opts_.preflight_interval.count() <= 0 || preflight_thread_.joinable()) return;
  preflight_thread_ = std::thread([this] { PreflightLoop(); });
}

void MetricsCache::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (preflight_thread_.joinable()) preflight_thread_.join();
  if (collect_thread_.joinable()) collect_thread_.join();
}

void MetricsCache::PreflightLoop() {
  for (;;) {
    GpuSnapshot gpu;
    std::optional<MemInfo> mem;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (stop_) return;
      if (!have_facts_) {
        // Take the GPU and memory readings from a collection, so preflight never reads NVML
        // concurrently with a scrape.
        if (!collect_thread_.joinable()) collect_thread_ = std::thread([this] { CollectLoop(); });
        want_ = true;  // not a scrape: it must not count in the scrape interval
        cv_.notify_all();
        cv_.wait(lock, [this] { return stop_ || have_facts_; });
        if (stop_) return;
      }
      gpu = last_gpu_;
      mem = last_mem_;
    }
    auto t0 = std::chrono::steady_clock::now();
    CollectorStatus st;
    st.name = "preflight";
    std::optional<PreflightSnapshot> snap;
    try {
      snap = RunPreflight(ctx_, gpu, mem);
      st.success = true;
    } catch (const std::exception& e) {  // a check's library threw: keep the previous results
      st.error = e.what();
    }
    st.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::unique_lock<std::mutex> lock(mu_);
    if (snap) preflight_ = std::move(snap);
    preflight_status_ = st;
    stale_ = true;  // the next scrape asks for a collection that renders the new results
    if (cv_.wait_for(lock, opts_.preflight_interval, [this] { return stop_; })) return;
  }
}

}  // namespace sparkops
