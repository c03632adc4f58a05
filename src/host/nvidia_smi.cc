#include "host/nvidia_smi.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "host/command.h"

namespace sparkops {
namespace {

std::vector<std::string> MakeFields(const char* reasons) {
  return {"index",           "name",       "uuid",         "driver_version", "compute_cap",
          "temperature.gpu", "power.draw", "power.limit",  "clocks.sm",      "clocks.max.sm",
          "utilization.gpu", reasons,      "memory.total", "memory.used"};
}

/// nvidia-smi's ways of saying "no value".
bool IsNoValue(std::string_view v) {
  return v.empty() || v.front() == '[' || v == "N/A" || v == "Not Supported" || v == "Unknown Error";
}

template <typename T>
Result<std::optional<T>> Number(const NvidiaSmiRow& row, std::string_view field) {
  auto it = row.find(field);
  if (it == row.end() || !it->second) return std::optional<T>();
  const std::string& v = *it->second;
  if constexpr (std::is_floating_point_v<T>) {
    if (auto d = ParseDouble(v)) return std::optional<T>(*d);
  } else {
    if (auto u = ParseUint(v)) return std::optional<T>(static_cast<T>(*u));
  }
  return InputError(fmt::format("nvidia-smi: field {}: not a number: '{}'", field, v));
}

}  // namespace

const std::vector<std::string>& NvidiaSmiFields() {
  static const std::vector<std::string> f = MakeFields("clocks_event_reasons.active");
  return f;
}
const std::vector<std::string>& NvidiaSmiLegacyFields() {
  static const std::vector<std::string> f = MakeFields("clocks_throttle_reasons.active");
  return f;
}

Result<std::vector<NvidiaSmiRow>> ParseNvidiaSmiCsv(std::string_view text, const std::vector<std::string>& fields) {
  std::vector<NvidiaSmiRow> rows;
  size_t line_no = 0;
  for (std::string_view line : SplitLines(text)) {
    ++line_no;
    if (Trim(line).empty()) continue;
    auto cells = Split(line, ',');
    if (cells.size() != fields.size())
      return InputError(fmt::format("nvidia-smi output line {}: {} values, expected {} ({})", line_no, cells.size(),
                                    fields.size(), Join(fields, ",")));
    NvidiaSmiRow row;
    for (size_t i = 0; i < fields.size(); ++i) {
      std::string_view v = Trim(cells[i]);
      row[fields[i]] = IsNoValue(v) ? std::nullopt : std::optional<std::string>(std::string(v));
    }
    rows.push_back(std::move(row));
    if (rows.size() > 64) return InputError("nvidia-smi output: more than 64 GPU lines");
  }
  return rows;
}

Result<GpuReading> NvidiaSmiRowToReading(const NvidiaSmiRow& row) {
  GpuReading r;
  auto text = [&](std::string_view f) -> std::optional<std::string> {
    auto it = row.find(f);
    return it == row.end() ? std::nullopt : it->second;
  };
  auto index = Number<unsigned>(row, "index");
  if (!index) return std::unexpected(index.error());
  r.index = index->value_or(0);
  r.name = text("name").value_or("");
  r.uuid = text("uuid").value_or("");
  r.driver_version = text("driver_version");
  if (auto cc = text("compute_cap")) {  // "12.1"
    auto parts = Split(*cc, '.');
    auto major = parts.size() == 2 ? ParseInt(parts[0]) : std::nullopt;
    auto minor = parts.size() == 2 ? ParseInt(parts[1]) : std::nullopt;
    if (!major || !minor) return InputError(fmt::format("nvidia-smi: field compute_cap: not M.m: '{}'", *cc));
    r.cc_major = static_cast<int>(*major), r.cc_minor = static_cast<int>(*minor);
  }
#define SPARKOPS_NUM(T, field, member)                                       \
  if (auto v = Number<T>(row, field); !v) return std::unexpected(v.error()); \
  else r.member = *v;
  SPARKOPS_NUM(double, "temperature.gpu", temp_c)
  SPARKOPS_NUM(double, "power.draw", power_w)
  SPARKOPS_NUM(double, "power.limit", power_limit_w)
  SPARKOPS_NUM(unsigned, "clocks.sm", sm_clock_mhz)
  SPARKOPS_NUM(unsigned, "clocks.max.sm", sm_clock_max_mhz)
  SPARKOPS_NUM(unsigned, "utilization.gpu", util_pct)
#undef SPARKOPS_NUM
  for (const char* f : {"clocks_event_reasons.active", "clocks_throttle_reasons.active"}) {
    auto v = text(f);
    if (!v) continue;
    std::string_view hex = *v;
    if (StartsWith(hex, "0x") || StartsWith(hex, "0X")) hex.remove_prefix(2);
    uint64_t mask = 0;
    bool ok = !hex.empty() && hex.size() <= 16;
    for (char c : hex) {
      int d = (c >= '0' && c <= '9')   ? c - '0'
              : (c >= 'a' && c <= 'f') ? c - 'a' + 10
              : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                       : -1;
      if (d < 0) ok = false;
      else mask = mask * 16 + static_cast<uint64_t>(d);
    }
    if (!ok) return InputError(fmt::format("nvidia-smi: field {}: not a hex mask: '{}'", f, *v));
    r.clock_event_reasons = mask;
  }
  // memory.* are MiB; absent on GB10 ([N/A]); 0 total also means "no memory of its own".
  auto total = Number<double>(row, "memory.total");
  auto used = Number<double>(row, "memory.used");
  if (!total) return std::unexpected(total.error());
  if (!used) return std::unexpected(used.error());
  // MiB -> bytes; a figure outside 0 .. 2^44 MiB (16 EiB) cannot be converted (and is no reading).
  for (const auto* mib : {&*total, &*used})
    if (*mib && !(**mib >= 0 && **mib < 17592186044416.0))
      return InputError(
          fmt::format("nvidia-smi: field memory.{}: out of range: {}", mib == &*total ? "total" : "used", **mib));
  if (*total && **total > 0) {
    r.mem_total_bytes = static_cast<uint64_t>(**total * 1048576.0);
    if (*used) r.mem_used_bytes = static_cast<uint64_t>(**used * 1048576.0);
  } else {
    r.unified_memory = true;
  }
  return r;
}

Result<std::vector<GpuReading>> QueryNvidiaSmi(const std::string& exe, std::chrono::milliseconds timeout) {
  for (const auto* fields : {&NvidiaSmiFields(), &NvidiaSmiLegacyFields()}) {
    auto res = RunCommand({exe, "--query-gpu=" + Join(*fields, ","), "--format=csv,noheader,nounits"},
                          {.timeout = timeout, .max_output = 1u << 20, .env = std::nullopt});
    if (!res) return std::unexpected(res.error());  // names the program already
    if (res->timed_out) return IoError(fmt::format("{} did not answer within {} ms (killed)", exe, timeout.count()));
    if (!res->ok()) {
      std::string said = std::string(Trim(res->out + " " + res->err));
      if (fields == &NvidiaSmiFields() && said.find("clocks_event_reasons") != std::string::npos) continue;
      if (said.size() > 200) said = said.substr(0, 200) + "...";
      return IoError(res->exit_code ? fmt::format("{} exited with status {}: {}", exe, *res->exit_code, said)
                                    : fmt::format("{} was killed by signal {}", exe, res->signal.value_or(0)));
    }
    auto rows = ParseNvidiaSmiCsv(res->out, *fields);
    if (!rows) return std::unexpected(rows.error());
    std::vector<GpuReading> out;
    for (const auto& row : *rows) {
      auto r = NvidiaSmiRowToReading(row);
      if (!r) return std::unexpected(r.error());
      out.push_back(std::move(*r));
    }
    if (out.empty()) return NotFound(exe + " listed no GPU");
    return out;
  }
  return IoError(exe + " rejected the query fields");
}

}  // namespace sparkops
