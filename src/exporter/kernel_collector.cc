#include "exporter/kernel_collector.h"

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "host/kmsg_reader.h"

namespace sparkops {

namespace {
/// One reader and running count per --root (one in the exporter; tests use several roots).
struct KernelState {
  std::optional<KmsgReader> reader;
  KernelSignals total;
};
std::mutex g_mu;
std::map<std::string, KernelState>& States() {
  static std::map<std::string, KernelState> s;
  return s;
}
}  // namespace

CollectorStatus CollectKernel(const HostView& ctx, std::optional<KernelSignals>& out) {
  auto t0 = std::chrono::steady_clock::now();
  CollectorStatus s;
  s.name = "kernel";
  std::lock_guard<std::mutex> lock(g_mu);
  KernelState& st = States()[ctx.fs.root()];
  if (!st.reader) {
    auto r = KmsgReader::Open(ctx.fs);
    if (r) {
      st.reader.emplace(std::move(*r));
    } else if (r.error().kind == Error::Kind::kNotFound) {
      s.success = true;  // no kernel log here (a container, a fixture root): nothing to count, no error
    } else {
      s.error = r.error().message;
    }
  }
  if (st.reader) {
    if (auto ok = st.reader->Poll(&st.total); ok) {
      s.success = true;
      out = st.total;
    } else {
      s.error = ok.error().message;
      st.reader.reset();  // reopened next round (from the ring start: counted again, so start over)
      st.total = KernelSignals{};
    }
  }
  s.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace sparkops
