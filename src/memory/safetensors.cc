#include "memory/safetensors.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "base/checked.h"
#include "base/json_parse.h"
#include "host/hostfs.h"

namespace sparkops::memory {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// Bytes per element; packed 4-bit types are not in the safetensors spec (MXFP4 ships as U8).
std::optional<uint64_t> DtypeBytes(const std::string& d) {
  static const std::map<std::string, uint64_t> kBytes = {{"F64", 8},  {"I64", 8},     {"U64", 8},     {"F32", 4},
                                                         {"I32", 4},  {"U32", 4},     {"F16", 2},     {"BF16", 2},
                                                         {"I16", 2},  {"U16", 2},     {"I8", 1},      {"U8", 1},
                                                         {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"F8_E8M0", 1}};
  auto it = kBytes.find(d);
  if (it == kBytes.end()) return std::nullopt;
  return it->second;
}

/// `a += b`, or an Input error naming `what` when the sum passes 2^64.
Result<void> AddTo(uint64_t& a, uint64_t b, const std::string& what) {
  auto r = CheckedAdd(a, b);
  if (!r) return InputError(what + ": sizes add up past 2^64 (not a real model)");
  a = *r;
  return {};
}

Result<void> Merge(SafetensorsInfo& into, const SafetensorsInfo& add, const std::string& file) {
  for (const auto& [d, n] : add.params_by_dtype)
    if (auto r = AddTo(into.params_by_dtype[d], n, file); !r) return r;
  if (auto r = AddTo(into.tensor_bytes, add.tensor_bytes, file); !r) return r;
  if (auto r = AddTo(into.file_bytes, add.file_bytes, file); !r) return r;
  into.largest_file_bytes = std::max(into.largest_file_bytes, add.largest_file_bytes);
  into.files += add.files;
  return {};
}

}  // namespace

uint64_t SafetensorsInfo::params() const {
  uint64_t n = 0;
  for (const auto& [d, c] : params_by_dtype) n += c;
  return n;
}

Result<uint64_t> ParseHeaderLength(std::string_view first8, uint64_t file_size, const std::string& file) {
  if (first8.size() < 8) return InputError(fmt::format("{}: too short for a safetensors header (under 8 bytes)", file));
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(first8[i]);
  if (n > kMaxSafetensorsHeader)
    return InputError(fmt::format("{}: header length {} bytes is over the 100 MB limit", file, n));
  if (n + 8 > file_size)
    return InputError(
        fmt::format("{}: header length {} bytes runs beyond the end of the file ({} bytes)", file, n, file_size));
  if (n == 0) return InputError(fmt::format("{}: header length is 0", file));
  return n;
}

Result<SafetensorsInfo> ParseSafetensorsHeader(std::string_view json_text, const std::string& file,
                                               std::optional<uint64_t> data_bytes) {
  auto parsed = ParseJson(json_text);
  if (!parsed) return InputError(fmt::format("{}: header: {}", file, parsed.error().message));
  json j = std::move(*parsed);
  if (!j.is_object()) return InputError(fmt::format("{}: header is not a JSON object", file));
  SafetensorsInfo info;
  for (const auto& [name, t] : j.items()) {
    if (name == "__metadata__") continue;
    if (!t.is_object() || !t.contains("dtype") || !t["dtype"].is_string() || !t.contains("shape") ||
        !t["shape"].is_array())
      return InputError(fmt::format("{}: tensor '{}' has no dtype/shape", file, name));
    std::string dtype = t["dtype"].get<std::string>();
    auto bytes = DtypeBytes(dtype);
    if (!bytes) return InputError(fmt::format("{}: tensor '{}' has unknown dtype '{}'", file, name, dtype));
    uint64_t n = 1;
    for (const auto& d : t["shape"]) {
      if (!d.is_number_unsigned() && !(d.is_number_integer() && d.get<int64_t>() >= 0))
        return InputError(fmt::format("{}: tensor '{}' has a bad shape", file, name));
      auto m = CheckedMul(n, d.get<uint64_t>());
      if (!m || *m > (uint64_t{1} << 50))
        return InputError(fmt::format("{}: tensor '{}' shape is implausibly large (over 2^50 elements)", file, name));
      n = *m;
    }
    uint64_t size = n * *bytes;  // n <= 2^50, bytes <= 8: no wrap
    // The tensor's bytes must lie inside the file: data_offsets [begin, end) within the data section.
    if (data_bytes) {
      const auto& off = t.contains("data_offsets") ? t["data_offsets"] : json();
      if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
        return InputError(fmt::format("{}: tensor '{}' has no data_offsets [begin, end]", file, name));
      uint64_t b = off[0].get<uint64_t>(), e = off[1].get<uint64_t>();
      if (e < b || e > *data_bytes)
        return InputError(fmt::format("{}: tensor '{}' data_offsets [{}, {}] lie outside the file's {} data bytes",
                                      file, name, b, e, *data_bytes));
      if (e - b != size)
        return InputError(
            fmt::format("{}: tensor '{}' holds {} bytes but its shape and dtype need {}", file, name, e - b, size));
    }
    std::string what = fmt::format("{}: tensor '{}'", file, name);
    if (auto r = AddTo(info.params_by_dtype[dtype], n, what); !r) return std::unexpected(r.error());
    if (auto r = AddTo(info.tensor_bytes, size, what); !r) return std::unexpected(r.error());
  }
  return info;
}

Result<SafetensorsInfo> ReadSafetensorsFile(const std::string& path) {
  auto fd = OpenInput(path, InputKind::kRegular);
  if (!fd) return InputError(fd.error().message);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{*fd};
  struct stat st {};
  if (::fstat(*fd, &st) != 0) return InputError(fmt::format("{}: cannot stat", path));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  std::string first8(8, '\0');
  ssize_t got = ::pread(*fd, first8.data(), 8, 0);
  first8.resize(got > 0 ? static_cast<size_t>(got) : 0);
  auto n = ParseHeaderLength(first8, size, path);
  if (!n) return std::unexpected(n.error());
  std::string header(*n, '\0');  // bounded by kMaxSafetensorsHeader and the file size above
  uint64_t have = 0;
  while (have < *n) {
    ssize_t r = ::pread(*fd, header.data() + have, *n - have, static_cast<off_t>(8 + have));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return InputError(fmt::format("{}: header truncated", path));
    have += static_cast<uint64_t>(r);
  }
  auto info = ParseSafetensorsHeader(header, path, size - 8 - *n);
  if (!info) return info;
  info->file_bytes = size;
  info->largest_file_bytes = size;
  info->files = 1;
  return info;
}

Result<SafetensorsInfo> ReadSafetensorsDir(const std::string& dir) {
  std::set<std::string> files;
  const std::string index = (fs::path(dir) / "model.safetensors.index.json").string();
  if (fs::exists(index)) {
    auto text = ReadLocalFile(index, 64u << 20);
    if (!text) return std::unexpected(text.error());
    auto parsed = ParseJson(*text);
    if (!parsed) return InputError(fmt::format("{}: {}", index, parsed.error().message));
    json j = std::move(*parsed);
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
      return InputError(fmt::format("{}: not a safetensors index (no 'weight_map' object)", index));
    for (const auto& [tensor, f] : j["weight_map"].items()) {
      if (!f.is_string()) return InputError(fmt::format("{}: weight_map entry '{}' is not a file name", index, tensor));
      std::string name = f.get<std::string>();
      if (name.find('/') != std::string::npos || name == "..")
        return InputError(fmt::format("{}: weight_map file '{}' is outside the directory", index, name));
      files.insert(name);
    }
    for (const auto& f : files)
      if (!fs::exists(fs::path(dir) / f))
        return InputError(fmt::format("{}: lists shard '{}', which is not in {}", index, f, dir));
  } else {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".safetensors") files.insert(e.path().filename().string());
  }
  if (files.empty()) return NotFound(fmt::format("{}: no *.safetensors files", dir));
  SafetensorsInfo all;
  for (const auto& f : files) {
    std::string path = (fs::path(dir) / f).string();
    auto one = ReadSafetensorsFile(path);
    if (!one) return one;
    if (auto m = Merge(all, *one, path); !m) return std::unexpected(m.error());
  }
  return all;
}

}  // namespace sparkops::memory
