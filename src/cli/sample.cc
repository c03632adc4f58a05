// sparkops sample: one CSV row per interval (docs/telemetry.md), durable, events on stderr (and to
// --notify targets).
#include <fmt/format.h>
#include <signal.h>

#include <cmath>
#include <functional>
#include <mutex>

#include "base/error.h"
#include "base/json_text.h"
#include "base/timefmt.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/notify_flags.h"
#include "run/run_recorder.h"
#include "telemetry/appender.h"
#include "telemetry/csv.h"
#include "telemetry/loop.h"

namespace sparkops {
namespace {

volatile sig_atomic_t g_stop = 0;
void OnStopSignal(int) { g_stop = 1; }

/// Installs SIGINT/SIGTERM handlers (no SA_RESTART, so a sleep is interrupted) and ignores SIGPIPE
/// (a closed pipe becomes a write error); restores the previous dispositions on destruction.
class StopSignals {
 public:
  StopSignals() {
    g_stop = 0;
    struct sigaction sa {};
    sa.sa_handler = OnStopSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old_pipe_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGPIPE, &old_pipe_, nullptr);
  }

 private:
  struct sigaction old_int_ {
  }, old_term_{}, old_pipe_{};
};

}  // namespace

int CmdSample(Context& ctx, const std::vector<std::string>& args) {
  auto app = NewApp("sample", "Append one CSV row of GPU and memory readings per interval (thermal log).");
  double interval = 30, duration = 0;
  int64_t count = 0;
  std::string out_path;
  AddNumber(*app, "--interval", interval, kIntervalRange, "seconds between rows (fractional allowed; default 30)");
  app->add_option("--out", out_path, "CSV file to append to (header only when new; default stdout)");
  AddNumber(*app, "--count", count, {1, 1e12}, "stop after N rows (default: no limit)");
  AddNumber(*app, "--duration", duration, kDurationRange, "stop after S seconds (default: no limit)");
  NotifyFlags notify_flags;
  notify_flags.Add(*app);
  if (auto rc = ParseFlags(*app, args, ctx)) return *rc;
  auto notify = notify_flags.Resolve(ctx, ctx.err, "sample");
  if (!notify) {
    ctx.err << "sparkops sample: " << notify.error().message << "\n";
    return kExitUsage;
  }

  std::optional<CsvAppender> file;
  std::function<Result<void>(const std::string&)> write;
  if (!out_path.empty() && out_path != "-") {
    auto a = CsvAppender::Open(out_path, CsvHeader());
    if (!a) {
      ctx.err << "sparkops sample: " << a.error().message << "\n";
      return a.error().kind == Error::Kind::kInput ? kExitUsage : kExitProblem;
    }
    if (a->dropped_bytes() > 0)
      ctx.err << "sparkops sample: " << out_path << " ended in a torn row (" << a->dropped_bytes()
              << " bytes, cut short by a kill or power loss): dropped before appending\n";
    file.emplace(std::move(*a));
    write = [&file](const std::string& row) { return file->Append(row); };
  } else {
    write = [&ctx](const std::string& row) -> Result<void> {
      ctx.out << row << std::flush;
      if (!ctx.out) return IoError("cannot write to standard output");
      return {};
    };
    if (auto w = write(CsvHeader()); !w) {
      ctx.err << "sparkops sample: " << w.error().message << "\n";
      return kExitProblem;
    }
  }

  StopSignals signals;
  Sampler sampler(ctx);
  if (!sampler.kernel_log_note().empty()) ctx.err << "sparkops sample: " << sampler.kernel_log_note() << "\n";
  EventDetector events;
  // Events are told as run tells them (throttle, PROCHOT, thermal signature, kernel records); a
  // failed delivery is one line on stderr, like the events themselves.
  std::mutex err_mu;
  auto notifier = Notifier::Start(*notify, {ReadHostname(ctx), "", ""}, [&](const nlohmann::ordered_json& f) {
    std::lock_guard lock(err_mu);
    ctx.err << FormatUtcMillis(std::chrono::system_clock::now()) << " event notify_failed " << JsonText(f, -1) << "\n";
  });
  std::string last_note;
  auto written = SampleLoop(sampler, events, {interval, count, duration}, {&g_stop, nullptr},
                            [&](const Sample& s) -> Result<void> {
                              std::lock_guard lock(err_mu);
                              if (s.gpu_note != last_note) {
                                if (!s.gpu_note.empty())
                                  ctx.err << "sparkops sample: " << s.gpu_note << "; GPU columns stay empty\n";
                                last_note = s.gpu_note;
                              }
                              if (auto w = write(CsvRow(s)); !w) return w;
                              for (const auto& e : s.events)
                                ctx.err << FormatUtcMillis(s.time) << " event " << e << "\n";
                              if (notifier)
                                for (const auto& j : SampleEventRecords(s)) notifier->Offer(j);
                              return {};
                            });
  if (notifier) notifier->Close();  // deliveries still queued get their bounded drain
  if (!written) {
    ctx.err << "sparkops sample: " << written.error().message << " (rows written before are intact)\n";
    return kExitProblem;
  }
  return kExitOk;
}

}  // namespace sparkops
