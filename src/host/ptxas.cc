#include "host/ptxas.h"

#include <unistd.h>

#include "base/strings.h"
#include "host/command.h"

namespace sparkops {

std::optional<std::pair<int, int>> ParsePtxasRelease(std::string_view out) {
  size_t pos = out.find("release ");
  if (pos == std::string_view::npos) return std::nullopt;
  std::string_view rest = out.substr(pos + 8);
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  size_t end = dot + 1;
  while (end < rest.size() && rest[end] >= '0' && rest[end] <= '9') ++end;
  auto major = ParseInt(rest.substr(0, dot));
  auto minor = ParseInt(rest.substr(dot + 1, end - dot - 1));
  if (!major || !minor) return std::nullopt;
  return std::pair{static_cast<int>(*major), static_cast<int>(*minor)};
}

std::optional<PtxasInfo> TritonPtxas(const HostView& ctx, const std::string& triton_site_dir) {
  PtxasInfo info;
  std::string bin = triton_site_dir + "/triton/backends/nvidia/bin/";
  auto pick = [&](std::string path, const char* by) {
    info.path = std::move(path);
    info.chosen_by = by;
  };
  if (std::string v = ctx.Getenv("TRITON_PTXAS_BLACKWELL_PATH"); !v.empty()) pick(v, "TRITON_PTXAS_BLACKWELL_PATH");
  else if (std::string p = ctx.Getenv("TRITON_PTXAS_PATH"); !p.empty()) pick(p, "TRITON_PTXAS_PATH");
  else if (::access((bin + "ptxas-blackwell").c_str(), X_OK) == 0) pick(bin + "ptxas-blackwell", "bundled");
  else if (::access((bin + "ptxas").c_str(), X_OK) == 0) pick(bin + "ptxas", "bundled");
  else return std::nullopt;
  auto r = RunCommand({info.path, "--version"});
  if (!r) info.error = r.error().message;
  else if (!r->ok()) info.error = info.path + " --version failed" + (r->timed_out ? " (timed out)" : "");
  else {
    info.release = ParsePtxasRelease(r->out);
    if (!info.release) info.error = info.path + ": no `release X.Y` in --version";
  }
  return info;
}

}  // namespace sparkops
