#include "report/flush.h"

#include <fmt/format.h>

namespace sparkops {

namespace {
nlohmann::json OrNull(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }
std::string GiBOrNotReported(const std::optional<double>& v) {
  return v ? fmt::format("{:.2f} GiB", *v) : "not reported";
}
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
        drop_caches_path, GiBOrNotReported(f.page_cache_gib), GiBOrNotReported(f.available_before_gib));
  return fmt::format("flushed: MemAvailable {} -> {}; freed {}\n", GiBOrNotReported(f.available_before_gib),
                     GiBOrNotReported(f.available_after_gib), GiBOrNotReported(f.freed_gib));
}

}  // namespace sparkops
