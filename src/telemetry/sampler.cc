#include "telemetry/sampler.h"

#include <chrono>

#include "host/pressure.h"

namespace sparkops {

std::optional<uint64_t> GpuAttributedBytes(const GpuReading& g) {
  if (!g.processes_known) return std::nullopt;
  uint64_t sum = 0;
  for (const auto& p : g.processes) {
    if (!p.used_bytes) return std::nullopt;  // a partial sum would pass for a reading
    sum += *p.used_bytes;
  }
  return sum;
}

namespace {

/// Runs `fn` (an error message, "" on success) and appends its status to `reads` when not null.
template <typename Fn>
void Timed(std::vector<SourceRead>* reads, const char* name, Fn&& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string error = fn();
  if (!reads) return;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  reads->push_back({name, error.empty(), std::move(error), s});
}

}  // namespace

Sampler::Sampler(const HostView& ctx, SamplerOptions opts) : ctx_(ctx), gpu_(ctx) {
  if (!opts.follow_kernel_log) return;
  // issue 33: follow only what the kernel logs from now on (preflight and the exporter count since boot).
  auto k = KmsgReader::Open(ctx.fs);
  if (!k) {  // absent (a container, a fixture root): nothing to say; unreadable: said once by the command
    if (k.error().kind != Error::Kind::kNotFound) kmsg_note_ = "kernel log not followed: " + k.error().message;
    return;
  }
  kmsg_.emplace(std::move(*k));
  if (opts.kernel_from) {  // from the caller's mark: the first Take() reads what came after it
    kmsg_after_ = opts.kernel_from->last_seq;
    return;
  }
  KernelSignals before;
  if (auto ok = kmsg_->Poll(&before); !ok) {
    kmsg_note_ = "kernel log not followed: " + ok.error().message;
    kmsg_.reset();
  }
}

Sample Sampler::Take(GpuSnapshot* all_gpus, std::vector<SourceRead>* reads) {
  Sample s;
  s.time = std::chrono::system_clock::now();
  Timed(reads, "gpu", [&]() -> std::string {
    GpuSnapshot snap = gpu_.Read();
    s.gpu_source = snap.source;
    if (!snap.any()) {
      s.gpu_note = "no GPU readable: " + snap.why_none;
      if (all_gpus) *all_gpus = snap;
      return snap.why_none.empty() ? std::string("no GPU readable") : snap.why_none;
    }
    s.gpu = snap.gpus.front();
    if (!s.gpu->error.empty())
      s.gpu_note = "GPU " + std::to_string(s.gpu->index) + " stopped answering: " + s.gpu->error;
    else s.gpu_attributed_bytes = GpuAttributedBytes(*s.gpu);
    if (all_gpus) *all_gpus = std::move(snap);
    return "";
  });
  Timed(reads, "memory", [&]() -> std::string {
    auto m = ReadMemInfo(ctx_.fs);
    if (!m) return m.error().message;
    s.mem = *m;
    return "";
  });
  Timed(reads, "pressure", [&]() -> std::string {
    auto p = ReadMemoryPressure(ctx_.fs);
    if (!p) return p.error().kind == Error::Kind::kNotFound ? "" : p.error().message;  // no PSI: nothing to read
    if (p->some) s.mem_pressure_some_avg10 = p->some->avg10;
    return "";
  });
  Timed(reads, "power", [&]() -> std::string {  // never fails: an unreadable file is a missing reading
    if (PowerReading pr = ReadPowerReading(ctx_.fs); !pr.empty()) {
      energy_.Update(pr, std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count());
      s.power = std::move(pr);
    }
    return "";
  });
  if (auto h = ReadHostPressure(ctx_.fs)) s.host = std::move(h->p);  // issue #24
  if (kmsg_) {  // issue 33
    KernelSignals news;
    if (kmsg_->Poll(&news, kmsg_after_)) s.kernel = std::move(news.signs);
  }
  if (s.mem) s.uma = ReadUmaPressure(ctx_.fs, *s.mem);
  return s;
}

}  // namespace sparkops
