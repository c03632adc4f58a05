#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cmath>
#include <map>
#include <thread>

#include "base/error.h"
#include "checks/check.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "exporter/collection_budget.h"
#include "exporter/metrics_cache.h"
#include "exporter/server.h"

namespace sparkops {

namespace {

/// Blocks SIGTERM/SIGINT in every thread started from here on and turns their delivery into
/// `stop = true` from one watcher thread (sigtimedwait), so shutdown is a normal return path.
class StopOnSignals {
 public:
  explicit StopOnSignals(std::atomic<bool>& stop) : stop_(stop) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
    watcher_ = std::thread([this] {
      timespec tick{0, 100L * 1000 * 1000};
      while (!stop_.load() && !done_.load())
        if (sigtimedwait(&set_, nullptr, &tick) > 0) stop_ = true;
    });
  }
  ~StopOnSignals() {
    done_ = true;
    watcher_.join();
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  std::atomic<bool>& stop_;
  std::atomic<bool> done_{false};
  sigset_t set_, old_;
  std::thread watcher_;
};

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(seconds * 1000.0)));
}

}  // namespace

int CmdExporter(Context& ctx, const std::vector<std::string>& args) {
  auto app = NewApp("exporter",
                    "Serve GPU, unified-memory, workload and preflight metrics for Prometheus on GET /metrics.\n"
                    "Read-only; binds 127.0.0.1 unless --listen says otherwise. Stops cleanly on SIGTERM/SIGINT.");
  std::string listen = "127.0.0.1:9842";
  double preflight_interval = 300, min_interval = 1;
  bool once = false;
  ServerLimits limits;
  app->add_option("--listen", listen, "HOST:PORT to serve on (port 0 picks a free one)")->capture_default_str();
  AddNumber(*app, "--preflight-interval", preflight_interval, {0, 86400, false, false, "seconds"},
            "seconds between background preflight runs (" + CheckIdRange() + "); 0 disables; default 300");
  AddNumber(*app, "--min-interval", min_interval, {0, 3600, false, false, "seconds"},
            "seconds a collected /metrics body is reused before the next scrape re-reads the host; default 1");
  int64_t max_connections = static_cast<int64_t>(limits.max_connections),
          max_per_client = static_cast<int64_t>(limits.max_per_client);
  AddNumber(*app, "--max-connections", max_connections, {1, 65536, false, true, ""},
            "open connections in total; past it new ones are closed at once, except that a client holding "
            "none replaces the oldest idle connection; default 1024");
  AddNumber(*app, "--max-connections-per-client", max_per_client, {1, 65536, false, true, ""},
            "open connections from one address; past it new ones are closed at once; default 512");
  int64_t budget_ms = 2000, budget_bytes = 16 << 20;  // issue 29 (exporter/collection_budget.h)
  AddNumber(*app, "--collection-budget-ms", budget_ms, kBudgetMsRange,
            "milliseconds one collection may spend reading the process table; past it the remaining processes "
            "are skipped and sparkops_collection_truncated{reason=\"time\"} is 1; default 2000");
  AddNumber(*app, "--collection-budget-bytes", budget_bytes, kBudgetBytesRange,
            "bytes one collection may read from the process table (argv kept: 32 KiB per process); past it the "
            "remaining processes are skipped and sparkops_collection_truncated{reason=\"bytes\"} is 1; default 16 MiB");
  app->add_flag("--once", once, "print one /metrics body to stdout (preflight included) and exit");
  if (auto rc = ParseFlags(*app, args, ctx)) return *rc;

  if (max_per_client > max_connections) {
    ctx.err << "sparkops exporter: --max-connections-per-client " << max_per_client
            << ": must be at most --max-connections (" << max_connections << ")\n";
    return kExitUsage;
  }
  SetCollectionBudget({std::chrono::milliseconds(budget_ms), static_cast<uint64_t>(budget_bytes)});
  limits.max_connections = static_cast<size_t>(max_connections);
  limits.max_per_client = static_cast<size_t>(max_per_client);

  CacheOptions copts{Millis(min_interval), Millis(preflight_interval), &ctx.err};
  if (once) {
    Collection c = CollectAll(ctx);
    if (preflight_interval > 0) {
      auto t0 = std::chrono::steady_clock::now();
      c.inputs.preflight = RunPreflight(ctx, c.gpu, c.mem);
      c.inputs.collectors.push_back(
          {"preflight", true, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), ""});
    }
    std::map<std::string, std::string> logged;
    LogCollectorErrors(ctx.err, c.inputs.collectors, &logged);
    ctx.out << RenderMetrics(c.inputs);
    return kExitOk;
  }

  auto addr = ParseListenAddress(listen);
  if (!addr) {
    ctx.err << "sparkops exporter: " << addr.error().message << "\n";
    return kExitUsage;
  }
  if (!IsLoopbackHost(addr->host))
    ctx.err << fmt::format(
        "sparkops exporter: warning: listening on {}, not loopback: anyone who can reach this address can read "
        "the metrics (no authentication); restrict it with a firewall\n",
        listen);

  std::atomic<bool> stop{false};
  StopOnSignals signals(stop);  // before any thread starts, so all of them inherit the mask
  MetricsCache cache(ctx, copts);
  cache.StartPreflight();
  auto served = Serve(
      *addr, limits, [&cache] { return cache.Body(); }, stop,
      [&](int port) {
        std::string host = addr->host.find(':') != std::string::npos ? "[" + addr->host + "]" : addr->host;
        ctx.out << fmt::format("sparkops exporter: serving http://{}:{}/metrics\n", host, port) << std::flush;
      });
  cache.Stop();
  if (!served) {
    ctx.err << "sparkops exporter: " << served.error().message << "\n";
    return served.error().kind == Error::Kind::kInput ? kExitUsage : kExitProblem;
  }
  ctx.out << "sparkops exporter: stopped\n" << std::flush;
  return kExitOk;
}

}  // namespace sparkops
