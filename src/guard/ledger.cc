#include "guard/ledger.h"

#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "host/pidns.h"
#include "host/proctable.h"
#include "host/write_file.h"

namespace sparkops::guard {

namespace {
constexpr size_t kMaxLedgers = 256;
constexpr size_t kMaxLedgerBytes = 64u << 10;

std::optional<uint64_t> StartTicks(const HostFs& fs, uint32_t pid) {
  auto text = fs.Read("/proc/" + std::to_string(pid) + "/stat", 4096);
  if (!text) return std::nullopt;
  auto st = ParseStat(*text);
  if (!st) return std::nullopt;
  return st->start_ticks;
}
}  // namespace

std::string LedgerJson(const Ledger& l) {
  nlohmann::ordered_json j;
  j["pid"] = l.pid;
  j["start_ticks"] = l.start_ticks;
  j["mode"] = l.mode;
  j["min_available_bytes"] = l.min_available_bytes;
  if (l.max_pressure) j["max_pressure"] = *l.max_pressure;
  j["dry_run"] = l.dry_run;
  j["actions"] = nlohmann::ordered_json::array();
  for (const auto& [k, n] : l.actions)
    j["actions"].push_back({{"action", k.first}, {"reason", k.second}, {"count", n}});
  return JsonText(j, -1) + "\n";
}

Result<Ledger> ParseLedger(std::string_view text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InputError("not a JSON object");
  Ledger l;
  auto uint_field = [&](const char* k, uint64_t max) -> Result<uint64_t> {
    if (!j.contains(k) || !j[k].is_number_unsigned() || j[k].get<uint64_t>() > max)
      return InputError(std::string("field ") + k + ": not a number in range");
    return j[k].get<uint64_t>();
  };
  auto pid = uint_field("pid", UINT32_MAX);
  if (!pid) return std::unexpected(pid.error());
  auto start = uint_field("start_ticks", UINT64_MAX);
  if (!start) return std::unexpected(start.error());
  auto floor = uint_field("min_available_bytes", UINT64_MAX);
  if (!floor) return std::unexpected(floor.error());
  l.pid = static_cast<uint32_t>(*pid), l.start_ticks = *start, l.min_available_bytes = *floor;
  if (!j.contains("mode") || !j["mode"].is_string() || (j["mode"] != "host" && j["mode"] != "run"))
    return InputError("field mode: not \"host\" or \"run\"");
  l.mode = j["mode"].get<std::string>();
  if (j.contains("max_pressure")) {
    if (!j["max_pressure"].is_number() ||
        !(j["max_pressure"].get<double>() >= 0 && j["max_pressure"].get<double>() <= 100))
      return InputError("field max_pressure: not a percentage");
    l.max_pressure = j["max_pressure"].get<double>();
  }
  if (j.contains("dry_run")) {
    if (!j["dry_run"].is_boolean()) return InputError("field dry_run: not true or false");
    l.dry_run = j["dry_run"].get<bool>();
  }
  if (!j.contains("actions") || !j["actions"].is_array()) return InputError("field actions: not a list");
  for (const auto& a : j["actions"]) {
    if (!a.is_object() || !a.contains("action") || !a["action"].is_string() || !a.contains("reason") ||
        !a["reason"].is_string() || !a.contains("count") || !a["count"].is_number_unsigned())
      return InputError("field actions: an entry is not {action, reason, count}");
    const std::string action = a["action"], reason = a["reason"];
    // Only the names a guard writes: a ledger in a user's runtime directory must not mint series.
    if (action != "flush" && action != "terminate" && action != "kill" && action != "would_terminate")
      return InputError("field actions: unknown action '" + action.substr(0, 32) + "'");
    if (reason != "min_available" && reason != "pressure")
      return InputError("field actions: unknown reason '" + reason.substr(0, 32) + "'");
    l.actions[{action, reason}] = a["count"].get<uint64_t>();
  }
  return l;
}

std::string LedgerDir(uint32_t uid) {
  return uid == 0 ? "/run/sparkops/guard" : "/run/user/" + std::to_string(uid) + "/sparkops/guard";
}

std::vector<Ledger> ReadLedgers(const HostFs& fs, std::vector<std::string>* problems) {
  std::vector<std::string> dirs = {LedgerDir(0)};
  if (auto users = fs.List("/run/user"))
    for (const std::string& u : *users)
      if (!u.empty() && u.size() <= 10 && u.find_first_not_of("0123456789") == std::string::npos)
        dirs.push_back("/run/user/" + u + "/sparkops/guard");
  std::vector<Ledger> out;
  size_t seen = 0;
  for (const std::string& dir : dirs) {
    auto names = fs.List(dir);
    if (!names) continue;
    std::sort(names->begin(), names->end());
    for (const std::string& n : *names) {
      if (n.size() < 6 || n.compare(n.size() - 5, 5, ".json") != 0) continue;  // ledgers, not temporaries
      if (++seen > kMaxLedgers) {
        if (problems) problems->push_back(dir + ": more than 256 ledgers; the rest are not counted");
        return out;
      }
      const std::string path = dir + "/" + n;
      auto text = fs.Read(path, kMaxLedgerBytes);
      auto l = text ? ParseLedger(*text) : Result<Ledger>(std::unexpected(text.error()));
      if (l) out.push_back(std::move(*l));
      else if (problems) problems->push_back(path + ": " + l.error().message);
    }
  }
  return out;
}

bool LedgerLive(const HostFs& fs, const Ledger& l) {
  auto t = StartTicks(fs, l.pid);
  return t && *t == l.start_ticks;
}

std::string ResolveLedgerDir(std::string_view setting, uint32_t euid) {
  if (setting == "none") return "";
  return setting.empty() ? LedgerDir(euid) : std::string(setting);
}

LedgerWriter::LedgerWriter(const std::string& dir, Ledger initial) : l_(std::move(initial)) {
  l_.pid = PidSpace::Real().self_proc_pid();
  l_.start_ticks = StartTicks(HostFs("/"), l_.pid).value_or(0);
  if (dir.empty()) return;
  path_ = dir + "/" + std::to_string(l_.pid) + ".json";
  std::lock_guard lock(mu_);
  // mkdir -p and open once, as the run directory is (host/write_file.h: as root, root-owned only).
  auto out = OutDir::Open("ledger directory", dir, /*create=*/true);
  if (!out) {
    error_ = out.error().message;
    return;
  }
  dir_ = std::make_unique<OutDir>(std::move(*out));
  Write();
}

void LedgerWriter::Count(std::string_view action, std::string_view reason) {
  std::lock_guard lock(mu_);
  ++l_.actions[{std::string(action), std::string(reason)}];
  Write();
}

void LedgerWriter::Write() {
  if (!dir_) return;
  auto r = dir_->WriteAtomically(std::to_string(l_.pid) + ".json", LedgerJson(l_));
  if (!r && !error_) error_ = r.error().message;
}

std::optional<std::string> LedgerWriter::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

}  // namespace sparkops::guard
