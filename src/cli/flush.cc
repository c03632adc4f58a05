#include <fmt/format.h>

#include <nlohmann/json.hpp>

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
  auto cache = before->PageCache();
  auto avail = before->available;
  if (dry_run) {
    if (ctx.json) {
      nlohmann::json j = {{"dry_run", true}};
      j["reclaimable_page_cache_gib"] = cache ? nlohmann::json(ToGiB(*cache)) : nlohmann::json();
      j["mem_available_gib"] = avail ? nlohmann::json(ToGiB(*avail)) : nlohmann::json();
      ctx.out << JsonText(j) << "\n";
    } else {
      ctx.out << fmt::format(
          "would run: sync; echo 3 > {}\nreclaimable page cache: {} "
          "(Cached + Buffers - Shmem); MemAvailable now {}\n",
          kDropCachesPath, cache ? fmt::format("{:.2f} GiB", ToGiB(*cache)) : "not reported",
          avail ? fmt::format("{:.2f} GiB", ToGiB(*avail)) : "not reported");
    }
    return kExitOk;
  }
  if (!trainers.empty()) ctx.err << "sparkops flush: warning: flushing while a trainer runs (--force)\n";
  auto done = DropCaches(ctx.fs);
  if (!done) {
    ctx.err << "sparkops flush: " << done.error().message << "; nothing was dropped\n";
    return kExitProblem;
  }
  auto after = ReadMemInfo(ctx.fs);
  std::optional<double> freed;
  if (after && after->available && avail)
    freed = (static_cast<double>(*after->available) - static_cast<double>(*avail)) / kGiB;
  if (ctx.json) {
    nlohmann::json j = {{"dry_run", false}};
    j["freed_gib"] = freed ? nlohmann::json(*freed) : nlohmann::json();
    j["mem_available_before_gib"] = avail ? nlohmann::json(ToGiB(*avail)) : nlohmann::json();
    j["mem_available_after_gib"] =
        after && after->available ? nlohmann::json(ToGiB(*after->available)) : nlohmann::json();
    ctx.out << JsonText(j) << "\n";
  } else {
    ctx.out << fmt::format("flushed: MemAvailable {} -> {}; freed {}\n",
                           avail ? fmt::format("{:.2f} GiB", ToGiB(*avail)) : "not reported",
                           after && after->available ? fmt::format("{:.2f} GiB", ToGiB(*after->available))
                                                     : "not reported",
                           freed ? fmt::format("{:.2f} GiB", *freed) : "not reported");
  }
  return kExitOk;
}

}  // namespace sparkops
