#pragma once
// Rebuilds a site-packages tree from tests/fixtures/real-wheels/<name> (made by extract.py from
// real wheels): metadata files are copied; each `X.regions` becomes X, a sparse file of the real
// object's size holding only the header bytes preflight reads (the rest reads as zeros).
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "test_util.h"

namespace sparkops::testing {

inline void MaterializeRegions(const std::string& regions, const std::string& dest) {
  std::ifstream in(regions);
  int fd = ::open(dest.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!in || fd < 0) throw std::runtime_error("cannot materialize " + regions);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("size ", 0) == 0) {
      if (::ftruncate(fd, std::stoll(line.substr(5))) != 0) throw std::runtime_error("ftruncate " + dest);
    } else if (line.rfind("at ", 0) == 0) {
      size_t sp = line.find(' ', 3);
      off_t off = std::stoll(line.substr(3, sp - 3));
      std::string hex = line.substr(sp + 1), bytes;
      for (size_t i = 0; i + 1 < hex.size(); i += 2)
        bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
      if (::pwrite(fd, bytes.data(), bytes.size(), off) != static_cast<ssize_t>(bytes.size()))
        throw std::runtime_error("pwrite " + dest);
    }
  }
  ::close(fd);
}

/// Copies real-wheels/<name> into `dest` (a site-packages dir), objects rebuilt from their regions.
inline void RealWheelTree(const std::string& name, const std::string& dest) {
  namespace fs = std::filesystem;
  const fs::path src = Fixture("real-wheels/" + name);
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    fs::path rel = fs::relative(e.path(), src);
    fs::path out = fs::path(dest) / rel;
    fs::create_directories(out.parent_path());
    if (out.extension() == ".regions") MaterializeRegions(e.path().string(), out.replace_extension("").string());
    else fs::copy_file(e.path(), out, fs::copy_options::overwrite_existing);
  }
}

}  // namespace sparkops::testing
