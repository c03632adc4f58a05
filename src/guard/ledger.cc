#include "guard/ledger.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "base/json_text.h"
#include "guard/policy.h"
#include "host/meminfo.h"
#include "host/owned_read.h"
#include "host/pidns.h"
#include "host/proctable.h"
#include "host/write_file.h"

namespace sparkops::guard {

namespace {
constexpr size_t kMaxLedgerBytes = 64u << 10;
constexpr size_t kMaxUsers = 4096;  // /run/user/UID directories looked at

std::optional<uint64_t> StartTicks(const HostFs& fs, uint32_t pid) {
  auto text = fs.Read("/proc/" + std::to_string(pid) + "/stat", 4096);
  if (!text) return std::nullopt;
  auto st = ParseStat(*text);
  if (!st) return std::nullopt;
  return st->start_ticks;
}

/// The PID a ledger's file name gives ("4242.json"), or nullopt for any other name (temporaries).
std::optional<uint32_t> LedgerPid(const std::string& name) {
  if (name.size() < 6 || name.size() > 15 || name.compare(name.size() - 5, 5, ".json") != 0) return std::nullopt;
  const std::string digits = name.substr(0, name.size() - 5);
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits[0] == '0') return std::nullopt;
  const uint64_t v = std::stoull(digits);
  if (v > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(v);
}

/// Why `l`, read from `uid`'s directory as file `name_pid`, is not to be believed; "" when it is.
std::string Distrust(const HostFs& fs, const Ledger& l, uint32_t uid, bool host_dir, uint32_t name_pid,
                     std::optional<uint64_t> mem_total) {
  if (l.pid != name_pid) return fmt::format("field pid {} is not the file's name", l.pid);
  if (l.mode == "host" && !host_dir) return "mode \"host\" outside /run/sparkops/guard";
  if (mem_total && l.min_available_bytes > *mem_total)
    return fmt::format("field min_available_bytes {} exceeds MemTotal {}", l.min_available_bytes, *mem_total);
  if (LedgerLive(fs, l)) {  // a running guard: it must run as the directory's owner
    auto status = fs.Read("/proc/" + std::to_string(l.pid) + "/status", 64u << 10);
    auto st = status ? ParseStatus(*status) : Result<ProcStatus>(std::unexpected(status.error()));
    if (!st || !st->uid) return fmt::format("pid {}: its owner cannot be read", l.pid);
    if (*st->uid != uid) return fmt::format("pid {} runs as uid {}, not uid {}", l.pid, *st->uid, uid);
  }
  return "";
}
}  // namespace

bool RunDirOk(std::string_view dir) {
  const bool printable = std::all_of(dir.begin(), dir.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
  return !dir.empty() && dir.size() <= kMaxRunDirBytes && dir[0] == '/' && printable &&
         dir.find("/../") == std::string_view::npos && !dir.ends_with("/..");
}

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
  if (!l.run_dir.empty()) j["run_dir"] = l.run_dir;
  return JsonText(j, -1) + "\n";
}

Result<Ledger> ParseLedger(std::string_view text) {
  auto j = ParseJsonOrDiscarded(text);
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
    if (a["count"].get<uint64_t>() > kMaxLedgerCount) return InputError("field actions: a count beyond 1000000");
    // Only the names a guard writes: a ledger in a user's runtime directory must not mint series.
    if (action != "flush" && action != "terminate" && action != "kill" && action != "would_terminate")
      return InputError("field actions: unknown action '" + action.substr(0, 32) + "'");
    if (!ReasonNamed(reason)) return InputError("field actions: unknown reason '" + reason.substr(0, 32) + "'");
    l.actions[{action, reason}] = a["count"].get<uint64_t>();
  }
  if (j.contains("run_dir")) {
    if (!j["run_dir"].is_string() || l.mode != "run") return InputError("field run_dir: not a string of a run ledger");
    if (!RunDirOk(j["run_dir"].get<std::string>()))
      return InputError("field run_dir: not an absolute printable path without '..'");
    l.run_dir = j["run_dir"].get<std::string>();
  }
  return l;
}

std::string LedgerDir(uint32_t uid) {
  return uid == 0 ? "/run/sparkops/guard" : "/run/user/" + std::to_string(uid) + "/sparkops/guard";
}

std::vector<Ledger> ReadLedgers(const HostFs& fs, std::vector<std::string>* problems) {
  auto problem = [&](std::string p) {
    if (problems) problems->push_back(std::move(p));
  };
  std::optional<uint64_t> mem_total;
  if (auto mi = ReadMemInfo(fs)) mem_total = mi->total;
  std::vector<Ledger> out;
  std::set<uint32_t> pids;              // one series per guard
  std::map<uint32_t, size_t> per_uid;   // ledgers taken per owner: one user's junk hides only their own
  std::set<uint32_t> capped;
  // One ledger file, `uid`'s: read and believed, or named in the problems.
  auto take = [&](const std::string& dir, uint32_t pid, uint32_t uid) {
    if (++per_uid[uid] > kMaxLedgersPerUid) {
      if (capped.insert(uid).second)
        problem(
            fmt::format("{}: uid {} has more than {} ledgers; the rest are not counted", dir, uid, kMaxLedgersPerUid));
      return;
    }
    const std::string path = fmt::format("{}/{}.json", dir, pid);
    auto text = ReadForProcess(fs, path, uid, kMaxLedgerBytes);
    auto l = text ? ParseLedger(*text) : Result<Ledger>(std::unexpected(text.error()));
    if (!l) {
      problem(l.error().message.starts_with(path) ? l.error().message : path + ": " + l.error().message);
      return;
    }
    if (std::string why = Distrust(fs, *l, uid, dir == LedgerDir(0), pid, mem_total); !why.empty()) {
      problem(path + ": " + why + "; not counted");
      return;
    }
    l->owner_uid = uid;
    if (!pids.insert(l->pid).second) {
      problem(path + ": a second ledger for pid " + std::to_string(l->pid) + "; not counted");
      return;
    }
    out.push_back(std::move(*l));
  };
  // The <pid>.json names in `dir` (owned by `dir_uid`, root or us, reached through no link), sorted.
  auto list = [&](const std::string& dir, uint32_t dir_uid) {
    std::vector<uint32_t> files;
    auto names = ListOwned(fs, dir, dir_uid);
    if (!names) {
      if (names.error().kind != Error::Kind::kNotFound) problem(names.error().message);
      return files;
    }
    for (const std::string& n : *names)
      if (auto pid = LedgerPid(n)) files.push_back(*pid);  // ledgers, not temporaries
    std::sort(files.begin(), files.end());
    return files;
  };

  std::vector<uint32_t> uids = {0};
  if (auto users = fs.List("/run/user"))
    for (const std::string& u : *users)
      if (!u.empty() && u.size() <= 10 && u.find_first_not_of("0123456789") == std::string::npos &&
          std::stoull(u) <= UINT32_MAX && std::stoull(u) != 0 && uids.size() < kMaxUsers)
        uids.push_back(static_cast<uint32_t>(std::stoull(u)));
  std::sort(uids.begin(), uids.end());
  for (uint32_t uid : uids)
    for (uint32_t pid : list(LedgerDir(uid), uid)) take(LedgerDir(uid), pid, uid);
  // The shared spool (root's, sticky, world-writable): each file is its owner's.
  for (uint32_t pid : list(kRunLedgerSpool, 0)) {
    const std::string path = fmt::format("{}/{}.json", kRunLedgerSpool, pid);
    if (auto owner = OwnerUid(fs, path)) take(kRunLedgerSpool, pid, *owner);
  }
  return out;
}

bool LedgerLive(const HostFs& fs, const Ledger& l) {
  auto t = StartTicks(fs, l.pid);
  return t && *t == l.start_ticks;
}

std::string ResolveLedgerDir(std::string_view setting, uint32_t euid) {
  if (setting == "none") return "";
  if (!setting.empty()) return std::string(setting);
  if (euid != 0 && HostFs("/").IsDir(kRunLedgerSpool)) return kRunLedgerSpool;
  return LedgerDir(euid);
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
