#pragma once
/// `sparkops flush`'s output: what a dry run would free, or what the flush freed. A reading the host
/// did not give is absent: "not reported" in text, null in JSON. GiB throughout.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace sparkops {

struct FlushOutcome {
  bool dry_run = false;
  std::optional<double> page_cache_gib;       ///< reclaimable page cache before (Cached + Buffers - Shmem)
  std::optional<double> available_before_gib;  ///< MemAvailable before
  std::optional<double> available_after_gib;   ///< MemAvailable after (not for a dry run)
  std::optional<double> freed_gib;             ///< after - before (not for a dry run)
};

/// Dry run: {dry_run: true, reclaimable_page_cache_gib, mem_available_gib}; otherwise
/// {dry_run: false, freed_gib, mem_available_before_gib, mem_available_after_gib}.
nlohmann::json FlushJson(const FlushOutcome& f);
/// Dry run: "would run: sync; echo 3 > PATH" and the reclaimable cache; otherwise "flushed: MemAvailable A -> B; freed
/// C".
std::string FlushText(const FlushOutcome& f, const std::string& drop_caches_path);

}  // namespace sparkops
