#pragma once
/// The entry names of an open directory stream, "." and ".." left out, in readdir order; closes it.
/// One loop for HostFs::List and owned_read's ListOwned.
#include <dirent.h>

#include <cstring>
#include <string>
#include <vector>

namespace sparkops {

inline std::vector<std::string> ReadDirNames(DIR* d) {
  std::vector<std::string> out;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    out.emplace_back(e->d_name);
  }
  ::closedir(d);
  return out;
}

}  // namespace sparkops
