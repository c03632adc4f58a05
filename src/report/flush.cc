#include "report/flush.h"

#include <fmt/format.h>

#include "base/json_text.h"
#include "base/strings.h"

namespace sparkops {

namespace {
std::string GiB(const std::optional<double>& v) { return FixedOrNotReported(v, 2, " GiB"); }
}  // namespace

nlohmann::json FlushJson(const FlushOutcome& f) {
  nlohmann::json j = {{"dry_run", f.dry_run}};
  if (f.dry_run) {
    j["reclaimable_page_cache_gib"] = OrNull(f.page_cache_gib);
    j["mem_available_gib"] = OrNull(f.available_before_gib);
  } else {
    j["freed_gib"] = OrNull(f.freed_gib);
    j["mem_available_before_gib"] = OrNull(f.available_before_gib);
    j["mem_available_after_gib"] = OrNull(f.available_after_gib);
  }
  return j;
}

std::string FlushText(const FlushOutcome& f, const std::string& drop_caches_path) {
  if (f.dry_run)
    return fmt::format(
        "would run: sync; echo 3 > {}\nreclaimable page cache: {} (Cached + Buffers - Shmem); MemAvailable now {}\n",
        drop_caches_path, GiB(f.page_cache_gib), GiB(f.available_before_gib));
  return fmt::format("flushed: MemAvailable {} -> {}; freed {}\n", GiB(f.available_before_gib),
                     GiB(f.available_after_gib), GiB(f.freed_gib));
}

}  // namespace sparkops
