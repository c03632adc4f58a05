#pragma once
/// Is a trainer running? `flush` is a between-run reset (seed), so it refuses without --force
/// while one is. CONTRACT: returns one human-readable line per running training process
/// ("pid 4242 python train.py (trainer)"); empty when none. For now this build has no process
/// classification (src/workloads lands separately) and always returns empty; at merge it is
/// wired to the `ps` classification - nothing else in flush changes.
#include <string>
#include <vector>

#include "cli/context.h"

namespace sparkops {

std::vector<std::string> RunningTrainers(const Context& ctx);

}  // namespace sparkops
