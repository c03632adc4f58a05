#include "exporter/metrics_cache.h"

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
  auto now = std::chrono::steady_clock::now();
  if (collected_at_ && now - *collected_at_ < opts_.min_interval) return body_;
  // Collect under the lock: simultaneous scrapes share one collection instead of stacking up.
  Collection c = collect_();
  ++collections_;
  last_gpu_ = c.gpu;
  last_mem_ = c.mem;
  have_facts_ = true;
  c.inputs.preflight = preflight_;
  if (preflight_status_) c.inputs.collectors.push_back(*preflight_status_);
  if (opts_.log) LogCollectorErrors(*opts_.log, c.inputs.collectors, &logged_errors_);
  body_ = RenderMetrics(c.inputs);
  collected_at_ = std::chrono::steady_clock::now();
  return body_;
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
    collected_at_.reset();  // the next scrape renders the new results
    if (cv_.wait_for(lock, opts_.preflight_interval, [this] { return stop_; })) return;
  }
}

}  // namespace sparkops
