#include "telemetry/uma_csv.h"

#include <fmt/format.h>

namespace sparkops {

namespace {
std::string Count(std::optional<uint64_t> v) { return v ? std::to_string(*v) : std::string(); }
std::string Gib(std::optional<uint64_t> v) { return v ? fmt::format("{:.3f}", ToGiB(*v)) : std::string(); }
}  // namespace

const std::vector<std::string>& UmaCsvColumns() {
  static const std::vector<std::string> c = {"free_2mib_blocks", "free_4mib_blocks", "mlocked_gib",
                                             "unevictable_gib",  "shmem_gib",        "dev_shm_gib"};
  return c;
}

std::vector<std::string> UmaCsvCells(const Sample& s) {
  if (!s.uma) return std::vector<std::string>(UmaCsvColumns().size());
  const UmaPressure& u = *s.uma;
  return {Count(u.free_2m), Count(u.free_4m), Gib(u.mlocked), Gib(u.unevictable), Gib(u.shmem), Gib(u.shm_size)};
}

}  // namespace sparkops
