#include "exporter/metrics_cache.h"

#include <exception>

#include "report/prometheus.h"

namespace sparkops {

MetricsCache::MetricsCache(const HostView& ctx, CacheOptions opts, std::function<Collection()> collect)
    : ctx_(ctx), opts_(opts), collect_(std::move(collect)) {
  if (!collect_) collect_ = [this] { return CollectAll(ctx_); };
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
  if (!collected_at_ || stale_ || now - *collected_at_ >= opts_.min_interval) {
    // Ask the worker and wait for it, boundedly: simultaneous scrapes share one collection.
    const uint64_t before = collections_;
    want_ = true;
    cv_.notify_all();
    auto done = [&] { return stop_ || collections_ != before; };
    if (!collected_at_) cv_.wait(lock, [&] { return stop_ || collected_at_.has_value(); });
    else cv_.wait_for(lock, opts_.fresh_wait, done);
  }
  if (!collected_at_) return body_;
  const double age = std::chrono::duration<double>(std::chrono::steady_clock::now() - *collected_at_).count();
  return body_ + CollectionAgeMetric(age);
}

void MetricsCache::CollectLoop() {
  for (;;) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return stop_ || want_; });
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
    lock.lock();
    ++collections_;
    last_gpu_ = c.gpu;
    last_mem_ = c.mem;
    have_facts_ = true;
    if (opts_.log) LogCollectorErrors(*opts_.log, c.inputs.collectors, &logged_errors_);
    body_ = std::move(body);
    collected_at_ = started;
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
        lock.unlock();
        Body();
        lock.lock();
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
