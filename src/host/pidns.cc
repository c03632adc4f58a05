#include "host/pidns.h"

#include <unistd.h>

#include "base/strings.h"
#include "host/hostfs.h"

namespace sparkops {

namespace {
constexpr size_t kMaxStatusBytes = 64u << 10;

std::optional<uint32_t> Field(std::string_view status, std::string_view key) {
  for (auto line : SplitLines(status))
    if (StartsWith(line, key) && line.size() > key.size() && line[key.size()] == ':') {
      auto v = ParseUint(Trim(line.substr(key.size() + 1)));
      if (!v || *v > UINT32_MAX) return std::nullopt;
      return static_cast<uint32_t>(*v);
    }
  return std::nullopt;
}

std::string NsLink(const HostFs& fs, const std::string& pid) {
  return fs.ReadLink("/proc/" + pid + "/ns/pid").value_or("");
}
}  // namespace

std::vector<uint32_t> ParseNsPid(std::string_view status) {
  std::vector<uint32_t> out;
  for (auto line : SplitLines(status)) {
    if (!StartsWith(line, "NSpid:")) continue;
    std::string_view rest = line.substr(6);
    for (size_t i = 0; i < rest.size();) {
      while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\t')) ++i;
      size_t b = i;
      while (i < rest.size() && rest[i] != ' ' && rest[i] != '\t') ++i;
      if (b == i) break;
      auto v = ParseUint(rest.substr(b, i - b));
      if (!v || *v == 0 || *v > UINT32_MAX || out.size() >= 64) return {};  // 32 levels is the kernel's cap
      out.push_back(static_cast<uint32_t>(*v));
    }
    return out;
  }
  return out;
}

PidSpace::PidSpace(std::string_view self_status, uint32_t self_pid, std::string self_ns)
    : self_proc_(self_pid), ns_(std::move(self_ns)) {
  if (self_status.empty()) return;
  std::vector<uint32_t> nspid = ParseNsPid(self_status);
  if (!nspid.empty()) {
    self_proc_ = nspid.front();
    depth_ = nspid.size() - 1;
    known_ = nspid.back() == self_pid;  // else /proc/self is not this process: nothing can be trusted
    return;
  }
  auto pid = Field(self_status, "Pid");
  if (pid && *pid == self_pid) return;  // an old kernel, same space
  known_ = false;
  if (pid) self_proc_ = *pid;
}

const PidSpace& PidSpace::Real() {
  static const PidSpace space = [] {
    HostFs fs("/");
    auto status = fs.Read("/proc/self/status", kMaxStatusBytes);
    return PidSpace(status ? *status : std::string(), static_cast<uint32_t>(::getpid()), NsLink(fs, "self"));
  }();
  return space;
}

bool PidSpace::Matches(uint32_t local, const std::vector<uint32_t>& nspid, std::string_view ns) const {
  // Exactly this namespace: a sibling at the same depth has another link, a nested one more entries.
  return known_ && !ns_.empty() && ns == ns_ && nspid.size() == depth_ + 1 && nspid.back() == local;
}

std::optional<uint32_t> PidSpace::Local(uint32_t proc_pid, const std::vector<uint32_t>& nspid,
                                        std::string_view ns) const {
  if (same()) return proc_pid;
  if (nspid.empty() || !Matches(nspid.back(), nspid, ns)) return std::nullopt;
  return nspid.back();
}

std::optional<uint32_t> ProcPidOf(uint32_t local) {
  const PidSpace& space = PidSpace::Real();
  if (space.same()) return local;
  if (!space.known()) return std::nullopt;
  HostFs fs("/");
  auto names = fs.List("/proc");
  if (!names) return std::nullopt;
  for (const std::string& n : *names) {
    auto pid = ParseUint(n);
    if (!pid || *pid > UINT32_MAX) continue;
    auto status = fs.Read("/proc/" + n + "/status", kMaxStatusBytes);
    if (!status) continue;
    auto nspid = ParseNsPid(*status);
    if (nspid.empty() || nspid.back() != local) continue;  // cheap test before the readlink
    if (space.Matches(local, nspid, NsLink(fs, n))) return static_cast<uint32_t>(*pid);
  }
  return std::nullopt;
}

std::optional<uint32_t> ProcPidOf(const HostFs& fs, uint32_t local) {
  return fs.is_real_root() ? ProcPidOf(local) : std::optional<uint32_t>(local);
}

std::optional<uint32_t> LocalPidOf(uint32_t proc_pid, const std::vector<uint32_t>* nspid) {
  const PidSpace& space = PidSpace::Real();
  if (space.same()) return proc_pid;
  if (!space.known()) return std::nullopt;
  HostFs fs("/");
  const std::string n = std::to_string(proc_pid);
  std::vector<uint32_t> read;
  if (!nspid) {
    auto status = fs.Read("/proc/" + n + "/status", kMaxStatusBytes);
    if (!status) return std::nullopt;
    read = ParseNsPid(*status);
    nspid = &read;
  }
  return space.Local(proc_pid, *nspid, NsLink(fs, n));
}

}  // namespace sparkops
