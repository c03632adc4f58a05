// sparkops top: the live view of the pool, the GPU, pressure and the workloads on the pool
// (docs/top.md). The readers are the ones behind `sample`, `ps` and the exporter.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "base/error.h"
#include "base/json_text.h"
#include "base/strings.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/top_screen.h"
#include "guard/ledger.h"
#include "host/kmsg_reader.h"
#include "report/top.h"
#include "run/live_runs.h"
#include "telemetry/job_tree.h"
#include "telemetry/sampler.h"

namespace sparkops {
namespace {

/// MemAvailable readings kept for the sparkline (at the default 2 s: the last 8 minutes).
constexpr size_t kHistory = 240;

/// Reads one frame after another; keeps what spans frames (the sparkline, CPU tick counters).
class TopCollector {
 public:
  TopCollector(const HostView& ctx, double interval_s) : ctx_(ctx), sampler_(ctx), interval_s_(interval_s) {
    if (auto z = LocalZone::Make("UTC", ctx.fs)) utc_ = std::move(*z);  // run's own times are UTC
  }

  TopFrame Collect() {
    TopFrame f;
    f.interval_s = interval_s_;
    f.sample = sampler_.Take();
    if (auto p = ReadMemoryPressure(ctx_.fs)) f.memory_psi = *p;
    if (f.sample.mem && f.sample.mem->available) {
      history_.push_back(*f.sample.mem->available);
      if (history_.size() > kHistory) history_.erase(history_.begin());
    }
    f.available_history = history_;
    const std::vector<guard::Ledger> ledgers = guard::ReadLedgers(ctx_.fs);
    for (const guard::Ledger& l : ledgers) {
      if (!guard::LedgerLive(ctx_.fs, l)) continue;
      if (!f.guard || l.min_available_bytes > f.guard->min_available_bytes)
        f.guard = TopGuardFloor{l.min_available_bytes, l.pid, l.mode};
    }
    GpuSnapshot snap;
    snap.source = f.sample.gpu_source;
    if (f.sample.gpu && f.sample.gpu->error.empty()) snap.gpus.push_back(*f.sample.gpu);
    f.scan = Workloads(snap, &f.scan_error);
    if (f.scan) f.cores = Cores(*f.scan);
    if (utc_) f.runs = ReadLiveRuns(ctx_.fs, ledgers, *utc_, &f.runs_ignored);
    f.kernel = Kernel();
    return f;
  }

 private:
  /// CPU cores each workload process used since the last frame (utime + stime from /proc/PID/stat).
  std::map<uint32_t, double> Cores(const WorkloadScan& scan) {
    auto now = std::chrono::steady_clock::now();
    const double dt = last_ ? std::chrono::duration<double>(now - *last_).count() : 0;
    static const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
    std::map<uint32_t, std::pair<uint64_t, uint64_t>> seen;
    std::map<uint32_t, double> cores;
    auto read = [&](uint32_t pid) {
      auto text = ctx_.fs.Read("/proc/" + std::to_string(pid) + "/stat");
      if (!text) return;
      auto c = ParseProcCpu(*text);
      if (!c) return;
      seen[pid] = {c->start_ticks, c->ticks};
      auto it = ticks_.find(pid);
      if (dt > 0.05 && hz > 0 && it != ticks_.end() && it->second.first == c->start_ticks &&
          c->ticks >= it->second.second)
        cores[pid] = static_cast<double>(c->ticks - it->second.second) / hz / dt;
    };
    for (const auto& w : scan.workloads) {
      read(w.main.pid);
      for (const auto& c : w.children) read(c.pid);
    }
    ticks_ = std::move(seen);
    last_ = now;
    return cores;
  }

  /// The kernel signs: the whole ring on the first frame, then what was logged since (never blocks).
  /// Absent when there is no kernel log; a log that cannot be read says why once per frame.
  std::optional<TopKernel> Kernel() {
    if (!kmsg_ && kmsg_note_.empty()) {
      auto r = KmsgReader::Open(ctx_.fs);
      if (!r && r.error().kind == Error::Kind::kNotFound) return std::nullopt;
      if (r) kmsg_.emplace(std::move(*r));
      else kmsg_note_ = r.error().message;
    }
    TopKernel k;
    k.note = kmsg_note_;
    if (kmsg_) {
      if (auto p = kmsg_->Poll(&signals_); !p) {
        kmsg_note_ = k.note = p.error().message;
        kmsg_.reset();
      }
    }
    std::copy(std::begin(signals_.counts), std::end(signals_.counts), std::begin(k.counts));
    const size_t n = std::min(kTopKernelLines, signals_.signs.size());
    k.recent.assign(signals_.signs.end() - static_cast<std::ptrdiff_t>(n), signals_.signs.end());
    return k;
  }

  /// The workloads: the whole process table is classified again every kRescan (a new server or
  /// job shows up within that); in between only the known processes' RSS (/proc/PID/status) and
  /// NVML memory are refreshed, and a process gone ends the wait. A full scan costs most of a
  /// frame's CPU on a host with hundreds of processes (docs/top.md, "Figures").
  std::optional<WorkloadScan> Workloads(const GpuSnapshot& snap, std::string* error) {
    auto now = std::chrono::steady_clock::now();
    if (scan_ && now - scanned_ < kRescan && RefreshKnown(snap)) return scan_;
    auto scan = ListWorkloads(ctx_, snap);
    if (!scan) {
      *error = scan.error().message;
      scan_.reset();
      return std::nullopt;
    }
    scan_ = std::move(*scan);
    scanned_ = now;
    return scan_;
  }

  /// False when a known process is gone (a full scan is due).
  bool RefreshKnown(const GpuSnapshot& snap) {
    const GpuMemByPid gpu = GpuMemoryByPid(snap);
    auto refresh = [&](WorkloadProcess& p) {
      auto text = ctx_.fs.Read("/proc/" + std::to_string(p.pid) + "/status");
      auto st = text ? ParseStatus(*text) : Result<ProcStatus>(std::unexpected(text.error()));
      if (!st) return false;
      p.rss_bytes = st->rss_bytes;
      auto it = gpu.find(p.pid);
      p.gpu_bytes = it != gpu.end() ? it->second : std::nullopt;
      return true;
    };
    for (auto& w : scan_->workloads) {
      if (!refresh(w.main)) return false;
      for (auto& c : w.children)
        if (!refresh(c)) return false;
    }
    return true;
  }

  static constexpr std::chrono::seconds kRescan{5};
  const HostView& ctx_;
  Sampler sampler_;
  std::optional<LocalZone> utc_;
  std::optional<KmsgReader> kmsg_;
  std::string kmsg_note_;
  KernelSignals signals_;
  std::optional<WorkloadScan> scan_;
  std::chrono::steady_clock::time_point scanned_{};
  double interval_s_;
  std::vector<uint64_t> history_;
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> ticks_;  ///< pid -> (start_ticks, utime+stime)
  std::optional<std::chrono::steady_clock::time_point> last_;
};

/// Width for --once: $COLUMNS, else the terminal's, else 80.
int OnceWidth(const Context& ctx) {
  if (auto c = ParseUint(ctx.Getenv("COLUMNS")); c && *c >= 20 && *c <= 1000) return static_cast<int>(*c);
  struct winsize ws {};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
  return 80;
}

int Interactive(Context& ctx, TopCollector& collector, double interval_s) {
  const std::string term = ctx.Getenv("TERM");
  const bool full = isatty(STDOUT_FILENO) && term != "dumb" && !term.empty();
  TopTerminal tty(STDIN_FILENO, STDOUT_FILENO, full, ctx.Getenv("NO_COLOR").empty());
  TopView view;
  view.unicode = full;
  TopFrame frame = collector.Collect();
  auto next = std::chrono::steady_clock::now() + std::chrono::duration<double>(interval_s);
  for (;;) {
    TerminalSize size = tty.Size();
    view.width = size.cols;
    view.height = full ? size.rows : 10000;
    if (!tty.Draw(RenderTopLines(frame, view))) return kExitProblem;
    for (bool redraw = false; !redraw;) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(next - std::chrono::steady_clock::now());
      int key = tty.WaitKey(static_cast<int>(std::clamp<int64_t>(left.count(), 0, 86400000)));
      switch (key) {
        case TopTerminal::kStop:
        case 'q':
        case 'Q': return kExitOk;
        case TopTerminal::kTimeout:
          if (std::chrono::steady_clock::now() < next) break;
          next = std::chrono::steady_clock::now() + std::chrono::duration<double>(interval_s);
          if (!view.paused) frame = collector.Collect();
          redraw = true;
          break;
        case 's':
          view.sort = view.sort == TopSort::kMemory ? TopSort::kCpu : TopSort::kMemory;
          redraw = true;
          break;
        case 't':
          view.trees = !view.trees;
          redraw = true;
          break;
        case 'p':
          view.paused = !view.paused;
          redraw = true;
          break;
        case TopTerminal::kResize: redraw = true; break;
        default: break;  // other keys (and escape sequences) do nothing
      }
    }
  }
}

}  // namespace

int CmdTop(Context& ctx, const std::vector<std::string>& args) {
  auto app = NewApp("top",
                    "A live view of the unified pool, the GPU, pressure (PSI) and the ML workloads on the pool "
                    "(ps's classification). Keys: q quit, s sort memory/cpu, t expand process trees, p pause.");
  double interval = 2;
  bool once = false;
  AddNumber(*app, "--interval", interval, {0.1, 3600, false, false, "seconds"}, "seconds between frames (default 2)");
  app->add_flag("--once", once, "print one frame as text and exit");
  if (auto rc = ParseFlags(*app, args, ctx)) return *rc;
  TopCollector collector(ctx, interval);
  if (ctx.json) {
    ctx.out << JsonText(TopToJson(collector.Collect())) << "\n";
    return ctx.out ? kExitOk : kExitProblem;
  }
  if (once) {
    TopView view;
    view.width = OnceWidth(ctx);
    view.height = 100000;  // every process: a bug report wants them all
    ctx.out << RenderTopText(collector.Collect(), view);
    return ctx.out ? kExitOk : kExitProblem;
  }
  return Interactive(ctx, collector, interval);
}

}  // namespace sparkops
