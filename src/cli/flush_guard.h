#pragma once
/// Is a trainer running? `flush` is a between-run reset, so it refuses without --force
/// while one is. Returns one human-readable line per running training workload, as `ps`
/// classifies it ("torchrun pid 4242 (none, uncapped)"); empty when none (or when the process
/// table cannot be read).
#include <string>
#include <vector>

#include "cli/context.h"

namespace sparkops {

std::vector<std::string> RunningTrainers(const Context& ctx);

}  // namespace sparkops
