#include "telemetry/sampler.h"

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

Sampler::Sampler(const HostView& ctx) : ctx_(ctx), gpu_(ctx) {
  // issue 33: follow only what the kernel logs from now on (preflight and the exporter count since boot).
  auto k = KmsgReader::Open(ctx.fs);
  if (!k) {  // absent (a container, a fixture root): nothing to say; unreadable: said once by the command
    if (k.error().kind != Error::Kind::kNotFound) kmsg_note_ = "kernel log not followed: " + k.error().message;
    return;
  }
  KernelSignals before;
  if (auto ok = k->Poll(&before); !ok) {
    kmsg_note_ = "kernel log not followed: " + ok.error().message;
    return;
  }
  kmsg_.emplace(std::move(*k));
}

Sample Sampler::Take() {
  Sample s;
  s.time = std::chrono::system_clock::now();
  GpuSnapshot snap = gpu_.Read();
  s.gpu_source = snap.source;
  if (snap.any()) {
    s.gpu = std::move(snap.gpus.front());
    if (!s.gpu->error.empty())
      s.gpu_note = "GPU " + std::to_string(s.gpu->index) + " stopped answering: " + s.gpu->error;
    else s.gpu_attributed_bytes = GpuAttributedBytes(*s.gpu);
  } else {
    s.gpu_note = "no GPU readable: " + snap.why_none;
  }
  if (auto m = ReadMemInfo(ctx_.fs)) s.mem = *m;
  if (auto p = ReadMemoryPressure(ctx_.fs); p && p->some) s.mem_pressure_some_avg10 = p->some->avg10;
  if (PowerReading pr = ReadPowerReading(ctx_.fs); !pr.empty()) {
    energy_.Update(pr, std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count());
    s.power = std::move(pr);
  }
  if (auto h = ReadHostPressure(ctx_.fs)) s.host = std::move(h->p);  // issue #24
  if (kmsg_) {  // issue 33
    KernelSignals news;
    if (kmsg_->Poll(&news)) s.kernel = std::move(news.signs);
  }
  if (s.mem) s.uma = ReadUmaPressure(ctx_.fs, *s.mem);
  return s;
}

}  // namespace sparkops
