#include "host/proc_io.h"

#include <fmt/format.h>

#include "base/strings.h"

namespace sparkops {

Result<ProcIo> ParseProcIo(std::string_view text) {
  ProcIo io;
  bool have_read = false, have_write = false;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, colon);
    bool* seen = key == "read_bytes" ? &have_read : key == "write_bytes" ? &have_write : nullptr;
    if (!seen) continue;  // rchar, wchar, syscr, syscw, cancelled_write_bytes
    if (*seen) return InputError(fmt::format("io: {} given twice", key));
    auto v = ParseUint(Trim(line.substr(colon + 1)));
    if (!v) return InputError(fmt::format("io: {}: not a byte count: '{}'", key, Trim(line.substr(colon + 1))));
    (key == "read_bytes" ? io.read_bytes : io.write_bytes) = *v;
    *seen = true;
  }
  if (!have_read) return InputError("io: no read_bytes line");
  if (!have_write) return InputError("io: no write_bytes line");
  return io;
}

Result<ProcIo> ReadProcIo(const HostFs& fs, uint32_t pid) {
  auto text = fs.Read("/proc/" + std::to_string(pid) + "/io", 4096);
  if (!text) return std::unexpected(text.error());
  return ParseProcIo(*text);
}

std::optional<double> IoBytesPerSecond(const IoMark& before, const IoMark& now) {
  const double dt = std::chrono::duration<double>(now.at - before.at).count();
  if (before.start_ticks != now.start_ticks || now.bytes < before.bytes || dt < 0.1) return std::nullopt;
  return static_cast<double>(now.bytes - before.bytes) / dt;
}

}  // namespace sparkops
