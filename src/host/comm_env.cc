#include "host/comm_env.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"

namespace sparkops {

namespace {

constexpr size_t kMaxFile = 64u << 10;  // a settings file is a few lines
constexpr size_t kMaxValue = 4096;

bool IsIdentifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  return true;
}

bool Printable(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

bool IsCommVar(std::string_view name) {
  return StartsWith(name, "NCCL_") || StartsWith(name, "UCX_") || name == "GLOO_SOCKET_IFNAME";
}

EnvFile ParseEnvFile(std::string_view text, const std::string& name) {
  EnvFile out;
  int lineno = 0;
  for (std::string_view raw : SplitLines(text)) {
    ++lineno;
    std::string_view line = Trim(raw);
    if (line.empty() || line[0] == '#') continue;
    size_t eq = line.find('=');
    std::string_view key = eq == std::string_view::npos ? line : Trim(line.substr(0, eq));
    std::string_view value = eq == std::string_view::npos ? std::string_view() : Trim(line.substr(eq + 1));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    if (eq == std::string_view::npos || !IsIdentifier(key) || value.size() > kMaxValue || !Printable(value)) {
      out.bad_lines.push_back(lineno);
      continue;
    }
    if (IsCommVar(key))
      out.settings.push_back({std::string(key), std::string(value), fmt::format("{} line {}", name, lineno)});
  }
  return out;
}

std::vector<EnvSetting> ReadCommEnvFiles(const HostView& host, const std::string& cwd,
                                         std::vector<std::string>& notes) {
  std::string home = host.Getenv("HOME");
  std::vector<std::string> paths;
  if (std::string conf = host.Getenv("NCCL_CONF_FILE"); !conf.empty()) paths.push_back(conf);
  else if (!home.empty()) paths.push_back(home + "/.nccl.conf");
  paths.push_back("/etc/nccl.conf");
  std::string ds = host.Getenv("DS_ENV_FILE");
  if (ds.empty()) ds = ".deepspeed_env";
  if (!home.empty()) paths.push_back(home + "/" + ds);
  if (!cwd.empty() && (home.empty() || cwd != home)) paths.push_back(cwd + "/" + ds);

  std::vector<EnvSetting> out;
  for (size_t k = 0; k < paths.size(); ++k) {
    const std::string& p = paths[k];
    if (p.empty() || p[0] != '/') continue;  // a relative NCCL_CONF_FILE is the job's working directory: unknown
    if (std::find(paths.begin(), paths.begin() + static_cast<long>(k), p) != paths.begin() + static_cast<long>(k))
      continue;
    auto text = host.fs.Read(p, kMaxFile);
    if (!text) {
      if (text.error().kind != Error::Kind::kNotFound)
        notes.push_back(fmt::format("{} not read: {}", p, text.error().message));
      continue;
    }
    EnvFile f = ParseEnvFile(*text, p);
    if (!f.bad_lines.empty())
      notes.push_back(fmt::format("{}: {} line{} not KEY=VALUE (line {}){}", p, f.bad_lines.size(),
                                  f.bad_lines.size() > 1 ? "s" : "", f.bad_lines.front(),
                                  EndsWith(p, ds) ? ": DeepSpeed's launcher stops on such a line" : ""));
    for (auto& s : f.settings) out.push_back(std::move(s));
  }
  return out;
}

std::vector<EnvSetting> CommEnvOf(const Env& env, const std::string& source) {
  std::vector<EnvSetting> out;
  for (const auto& [k, v] : env)
    if (IsCommVar(k) && v.size() <= kMaxValue && Printable(v)) out.push_back({k, v, source});
  return out;
}

}  // namespace sparkops
