#include "report/flush.h"
#include "base/error.h"
#include "base/json_text.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/flush_guard.h"
#include "host/dropcaches.h"
#include "host/meminfo.h"

namespace sparkops {

int CmdFlush(Context& ctx, const std::vector<std::string>& args) {
  auto app = NewApp("flush", "OOM ladder step 1: sync, then drop the page cache (needs root; between runs).");
  bool dry_run = false, force = false;
  app->add_flag("--dry-run", dry_run, "show what would be freed; change nothing (no root needed)");
  app->add_flag("--force", force, "flush even while a trainer is running");
  if (auto rc = ParseFlags(*app, args, ctx)) return *rc;
  if (!dry_run && !IsRoot()) {
    ctx.err << "sparkops flush: needs root (it writes " << kDropCachesPath
            << "); nothing was done. "
               "Run `sudo sparkops flush`, or `sparkops flush --dry-run` to see what it would free.\n";
    return kExitProblem;
  }
  auto before = ReadMemInfo(ctx.fs);
  if (!before) {
    ctx.err << "sparkops flush: " << before.error().message << "\n";
    return kExitUsage;
  }
  auto trainers = RunningTrainers(ctx);
  if (!trainers.empty() && !force) {
    ctx.err << "sparkops flush: a trainer is running; flushing is a between-run reset, not a mid-training step. "
               "Nothing was done (use --force to flush anyway):\n";
    for (const auto& t : trainers) ctx.err << "  " << t << "\n";
    return kExitProblem;
  }
  FlushOutcome f;
  f.dry_run = dry_run;
  auto avail = before->available;
  if (auto cache = before->PageCache()) f.page_cache_gib = ToGiB(*cache);
  if (avail) f.available_before_gib = ToGiB(*avail);
  auto emit = [&] {
    if (ctx.json) ctx.out << JsonText(FlushJson(f)) << "\n";
    else ctx.out << FlushText(f, kDropCachesPath);
    return kExitOk;
  };
  if (dry_run) return emit();
  if (!trainers.empty()) ctx.err << "sparkops flush: warning: flushing while a trainer runs (--force)\n";
  auto done = DropCaches(ctx.fs);
  if (!done) {
    ctx.err << "sparkops flush: " << done.error().message << "; nothing was dropped\n";
    return kExitProblem;
  }
  auto after = ReadMemInfo(ctx.fs);
  if (after && after->available) f.available_after_gib = ToGiB(*after->available);
  if (after && after->available && avail)
    f.freed_gib = (static_cast<double>(*after->available) - static_cast<double>(*avail)) / kGiB;
  return emit();
}

}  // namespace sparkops
