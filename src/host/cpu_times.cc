#include "host/cpu_times.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"

namespace sparkops {

namespace {
/// The numbers after the `cpu`/`cpuN` word: user nice system idle iowait irq softirq steal ...
Result<CpuTimes> ParseCpuLine(std::string_view line, size_t lineno) {
  uint64_t f[8] = {};
  size_t n = 0;
  auto words = Split(line, ' ');
  for (size_t i = 1; i < words.size() && n < 8; ++i) {
    if (words[i].empty()) continue;
    auto v = ParseUint(words[i]);
    if (!v || *v > (UINT64_MAX >> 4))
      return InputError(fmt::format("stat: line {}: field {}: not a tick count: '{}'", lineno, n + 2, words[i]));
    f[n++] = *v;
  }
  if (n < 4) return InputError(fmt::format("stat: line {}: {} fields, need at least 4", lineno, n));
  CpuTimes t;  // each term is < 2^60, so eight of them cannot overflow
  t.busy = f[0] + f[1] + f[2] + f[5] + f[6];
  t.steal = f[7];
  t.total = t.busy + f[3] + f[4] + t.steal;
  return t;
}
}  // namespace

Result<StatCpus> ParseCpuTimes(std::string_view stat) {
  StatCpus s;
  bool all = false;
  size_t lineno = 0;
  for (std::string_view line : SplitLines(stat)) {
    ++lineno;
    if (!line.starts_with("cpu")) continue;
    const size_t sp = line.find(' ');
    std::string_view word = line.substr(0, sp);
    if (word == "cpu") {
      auto t = ParseCpuLine(line, lineno);
      if (!t) return std::unexpected(t.error());
      s.all = *t;
      all = true;
      continue;
    }
    auto id = ParseUint(word.substr(3));
    if (!id) continue;  // not a cpuN line
    if (*id >= kMaxCpus || s.per_cpu.size() >= kMaxCpus)
      return InputError(fmt::format("stat: line {}: cpu{} beyond {} CPUs", lineno, *id, kMaxCpus));
    auto t = ParseCpuLine(line, lineno);
    if (!t) return std::unexpected(t.error());
    s.per_cpu.emplace_back(static_cast<unsigned>(*id), *t);
  }
  if (!all) return InputError("stat: no aggregate cpu line");
  std::sort(s.per_cpu.begin(), s.per_cpu.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return s;
}

Result<std::vector<unsigned>> ParseCpuList(std::string_view list) {
  std::vector<unsigned> out;
  list = Trim(list);
  if (list.empty()) return out;
  for (std::string_view item : Split(list, ',')) {
    item = Trim(item);
    const size_t dash = item.find('-');
    auto lo = ParseUint(item.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : ParseUint(item.substr(dash + 1));
    if (!lo || !hi) return InputError(fmt::format("cpu list: '{}' is not a CPU or a range", item));
    if (*hi < *lo) return InputError(fmt::format("cpu list: '{}' is a reversed range", item));
    if (*hi >= kMaxCpus) return InputError(fmt::format("cpu list: '{}' names a CPU beyond {}", item, kMaxCpus));
    for (uint64_t c = *lo; c <= *hi; ++c) out.push_back(static_cast<unsigned>(c));
    if (out.size() > size_t{4} * kMaxCpus) return InputError("cpu list: too many items");
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<std::vector<unsigned>> ParseCpusAllowed(std::string_view status) {
  for (std::string_view line : SplitLines(status))
    if (line.starts_with("Cpus_allowed_list:")) return ParseCpuList(line.substr(18));
  return NotFound("status: no Cpus_allowed_list line");
}

Result<double> ParseUptime(std::string_view text) {
  text = Trim(text);
  auto v = ParseDouble(text.substr(0, text.find(' ')));
  if (!v || !(*v >= 0 && *v < 1e10)) return InputError("uptime: field 1: not a number of seconds");
  return *v;
}

Result<StatCpus> ReadCpuTimes(const HostFs& fs) {
  auto text = fs.Read("/proc/stat", 4u << 20);
  if (!text) return std::unexpected(text.error());
  return ParseCpuTimes(*text);
}

Result<std::vector<unsigned>> ReadCpusAllowed(const HostFs& fs, uint32_t pid) {
  auto text = fs.Read("/proc/" + std::to_string(pid) + "/status", size_t{64} * 1024);
  if (!text) return std::unexpected(text.error());
  return ParseCpusAllowed(*text);
}

Result<double> ReadUptime(const HostFs& fs) {
  auto text = fs.Read("/proc/uptime", 4096);
  if (!text) return std::unexpected(text.error());
  return ParseUptime(*text);
}

std::optional<CpuDelta> CpuDeltaOn(const StatCpus& before, const StatCpus& now, const std::vector<unsigned>& cpus,
                                   double dt_s, double hz) {
  if (!(dt_s > 0) || !(hz > 0)) return std::nullopt;
  CpuDelta d;
  uint64_t busy = 0, steal = 0, total = 0;
  auto add = [&](const CpuTimes& a, const CpuTimes& b) {
    if (b.busy < a.busy || b.steal < a.steal || b.total < a.total) return false;
    busy += b.busy - a.busy;
    steal += b.steal - a.steal;
    total += b.total - a.total;
    return true;
  };
  if (cpus.empty()) {
    if (!add(before.all, now.all)) return std::nullopt;
    d.cpus = static_cast<unsigned>(now.per_cpu.size());
  } else {
    for (const auto& [id, t] : now.per_cpu) {
      if (!std::binary_search(cpus.begin(), cpus.end(), id)) continue;
      auto it = std::lower_bound(before.per_cpu.begin(), before.per_cpu.end(), id,
                                 [](const auto& p, unsigned v) { return p.first < v; });
      if (it == before.per_cpu.end() || it->first != id) continue;
      if (!add(it->second, t)) return std::nullopt;
      ++d.cpus;
    }
  }
  d.busy_cores = static_cast<double>(busy) / hz / dt_s;
  if (total) d.steal_pct = 100.0 * static_cast<double>(steal) / static_cast<double>(total);
  return d;
}

}  // namespace sparkops
