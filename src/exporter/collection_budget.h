#pragma once
/// The exporter's read budget per collection (issue 29; host/read_budget.h): the workloads
/// collector reads the process table within it, and the body says when it ran out
/// (sparkops_collection_truncated). Set once from `exporter --collection-budget-ms` and
/// `--collection-budget-bytes` before collection starts.
#include <cstdint>

#include "base/number_flag.h"
#include "host/read_budget.h"

namespace sparkops {

/// The flags' ranges: 1 ms .. 1 h, 64 KiB .. 1 GiB.
inline constexpr NumberRange kBudgetMsRange{1, 3600000, false, true, "milliseconds"};
inline constexpr NumberRange kBudgetBytesRange{65536, 1073741824, false, true, "bytes"};

/// The limits every later collection uses (thread-safe; defaults: 2 s, 16 MiB).
void SetCollectionBudget(const ReadBudgetLimits& limits);
ReadBudgetLimits CollectionBudget();

/// Hands the heap's free pages back to the kernel (glibc malloc_trim(0)), so the RSS a flood of
/// processes took during one collection is returned after it; a no-op without glibc.
void ReturnFreedMemory();

}  // namespace sparkops
