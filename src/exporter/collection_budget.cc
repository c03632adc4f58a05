#include "exporter/collection_budget.h"

#include <atomic>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace sparkops {

namespace {
const ReadBudgetLimits kDefaults;
std::atomic<int64_t> budget_ns{kDefaults.time.count()};
std::atomic<uint64_t> budget_bytes{kDefaults.bytes};
}  // namespace

void SetCollectionBudget(const ReadBudgetLimits& limits) {
  budget_ns = limits.time.count();
  budget_bytes = limits.bytes;
}

ReadBudgetLimits CollectionBudget() { return {std::chrono::nanoseconds(budget_ns.load()), budget_bytes.load()}; }

void ReturnFreedMemory() {
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
}

}  // namespace sparkops
