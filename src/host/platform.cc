#include "host/platform.h"

#include <algorithm>
#include <filesystem>

#include "base/strings.h"
#include "host/container.h"

namespace sparkops {

namespace {
constexpr size_t kMaxPstoreFiles = 256;
constexpr size_t kMaxPstoreLines = 4096;

bool IsVersionWord(std::string_view w) {
  if (w.empty() || !IsDigit(w.front()) || !IsDigit(w.back()) || w.find('.') == std::string_view::npos) return false;
  return std::all_of(w.begin(), w.end(), [](char c) { return IsDigit(c) || c == '.'; });
}

void AddFile(const HostFs& fs, const std::string& host_path, std::vector<PstoreFile>* out) {
  if (out->size() >= kMaxPstoreFiles || fs.IsDir(host_path)) return;
  std::error_code ec;
  auto size = std::filesystem::file_size(fs.Path(host_path), ec);
  out->push_back({host_path, ec ? 0 : static_cast<uint64_t>(size)});
}
}  // namespace

std::optional<std::string> ParseNvidiaModuleVersion(std::string_view line) {
  for (std::string_view w : SplitWhitespace(line)) {
    if (IsVersionWord(w)) return std::string(w.substr(0, 32));
  }
  return std::nullopt;
}

std::optional<std::string> ReadNvidiaModuleVersion(const HostFs& fs) {
  auto line = NvidiaDriverVersionLine(fs);
  if (!line) return std::nullopt;
  return ParseNvidiaModuleVersion(*line);
}

std::optional<std::string> ReadKernelRelease(const HostFs& fs) {
  auto t = fs.Read("/proc/sys/kernel/osrelease", 4096);
  if (!t) return std::nullopt;
  std::string_view v = Trim(*t);
  if (v.empty()) return std::nullopt;
  return std::string(v.substr(0, 128));
}

std::vector<PstoreFile> ListPstore(const HostFs& fs) {
  std::vector<PstoreFile> out;
  if (auto names = fs.List("/sys/fs/pstore")) {
    std::sort(names->begin(), names->end());
    for (const auto& n : *names) AddFile(fs, "/sys/fs/pstore/" + n, &out);
  }
  if (auto dirs = fs.List("/var/lib/systemd/pstore")) {
    std::sort(dirs->begin(), dirs->end());
    for (const auto& d : *dirs) {
      std::string dir = "/var/lib/systemd/pstore/" + d;
      auto names = fs.List(dir);
      if (!names) continue;
      std::sort(names->begin(), names->end());
      for (const auto& n : *names)
        if (StartsWith(n, "dmesg-")) AddFile(fs, dir + "/" + n, &out);
    }
  }
  return out;
}

std::vector<std::string> ParsePstoreDmesg(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view line : SplitLines(text)) {
    if (out.size() >= kMaxPstoreLines) break;
    std::string_view l = line;
    if (StartsWith(l, "<")) {
      size_t gt = l.find('>');
      if (gt == std::string_view::npos || gt > 4) continue;
      l = l.substr(gt + 1);
    }
    if (!StartsWith(l, "[")) continue;
    size_t close = l.find("] ");
    if (close == std::string_view::npos) continue;
    out.emplace_back(l.substr(close + 2, 1024));
  }
  return out;
}

}  // namespace sparkops
