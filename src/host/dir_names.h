#pragma once
/// The entry names of an open directory stream, "." and ".." left out, in readdir order, at most
/// `max_entries`; closes it.
/// One loop for HostFs::List and owned_read's ListOwned.
#include <dirent.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace sparkops {

inline std::vector<std::string> ReadDirNames(DIR* d, size_t max_entries = SIZE_MAX) {
  std::vector<std::string> out;
  while (out.size() < max_entries) {
    dirent* e = ::readdir(d);
    if (!e) break;
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    out.emplace_back(e->d_name);
  }
  ::closedir(d);
  return out;
}

}  // namespace sparkops
