#pragma once
/// The fragmentation and pinned-memory columns of the thermal CSV (issue 33), appended at the end
/// of the header: free_2mib_blocks, free_4mib_blocks (free blocks of that size in /proc/buddyinfo,
/// all zones), mlocked_gib, unevictable_gib, shmem_gib, dev_shm_gib. Empty cells when not read.
#include <string>
#include <vector>

#include "telemetry/sample.h"

namespace sparkops {

const std::vector<std::string>& UmaCsvColumns();
/// The cells of one sample, in UmaCsvColumns() order.
std::vector<std::string> UmaCsvCells(const Sample& s);

}  // namespace sparkops
