#include "host/container.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "base/strings.h"
#include "host/proctable.h"

namespace sparkops {

std::string ParseCgroupEngine(std::string_view cgroup) {
  for (auto line : SplitLines(cgroup)) {
    for (auto [marker, engine] : {std::pair{"kubepods", "kubernetes"},
                                  {"libpod", "podman"},
                                  {"docker", "docker"},
                                  {"containerd", "containerd"},
                                  {"lxc", "lxc"}})
      if (line.find(marker) != std::string_view::npos) return engine;
  }
  return "";
}

ContainerInfo DetectContainer(const HostView& ctx) {
  ContainerInfo c;
  auto mark = [&](const std::string& engine, std::string why) {
    if (!c.in_container) c.engine = engine;
    c.in_container = true;
    c.evidence.push_back(std::move(why));
  };
  if (ctx.fs.Exists("/.dockerenv")) mark("docker", "/.dockerenv exists");
  if (ctx.fs.Exists("/run/.containerenv")) mark("podman", "/run/.containerenv exists");
  if (std::string v = ctx.Getenv("container"); !v.empty()) mark(v, "env container=" + v);
  if (auto cg = ctx.fs.Read("/proc/1/cgroup", 1u << 20)) {
    if (std::string e = ParseCgroupEngine(*cg); !e.empty()) mark(e, "/proc/1/cgroup names " + e);
  }
  if (auto mi = ctx.fs.Read("/proc/self/mountinfo", 4u << 20)) {
    if (mi->find("/docker/containers/") != std::string::npos)
      mark("docker", "/proc/self/mountinfo bind-mounts from /docker/containers/");
    for (auto line : SplitLines(*mi)) {
      auto f = Split(line, ' ');
      // field 5 is the mount point; the filesystem type follows the " - " separator
      if (f.size() > 7 && f[4] == "/") {
        size_t dash = line.find(" - ");
        if (dash != std::string_view::npos && StartsWith(line.substr(dash + 3), "overlay"))
          mark("container", "/proc/self/mountinfo: / is an overlay filesystem");
        break;
      }
    }
  }
  Env env = ctx.env;
  if (env.find("NVIDIA_PRODUCT_NAME") == env.end())
    if (auto pe = ctx.fs.Read("/proc/1/environ", 1u << 20)) {
      Env pid1 = ParseEnviron(*pe);
      for (const char* k : {"NVIDIA_PRODUCT_NAME", "NVIDIA_PYTORCH_VERSION", "PIP_CONSTRAINT"})
        if (pid1.count(k)) env[k] = pid1[k];
    }
  auto get = [&](const char* k) {
    auto it = env.find(k);
    return it == env.end() ? std::string() : it->second;
  };
  c.ngc_product = get("NVIDIA_PRODUCT_NAME");
  c.ngc_release = get("NVIDIA_PYTORCH_VERSION");
  c.pip_constraint = get("PIP_CONSTRAINT");
  return c;
}

std::optional<std::string> NvidiaDriverVersionLine(const HostFs& fs) {
  auto v = fs.Read("/proc/driver/nvidia/version", 1u << 16);
  if (!v) return std::nullopt;
  auto lines = SplitLines(*v);
  return lines.empty() ? std::string() : std::string(Trim(lines[0]));
}

std::optional<std::string> ParseCudaVersionJson(std::string_view text) {
  auto j = ParseJsonOrDiscarded(text);
  if (j.is_discarded() || !j.is_object() || !j.contains("cuda") || !j["cuda"].is_object()) return std::nullopt;
  const auto& c = j["cuda"];
  if (!c.contains("version") || !c["version"].is_string()) return std::nullopt;
  return c["version"].get<std::string>();
}

std::optional<ToolkitVersion> ReadCudaToolkitVersion(const HostFs& fs) {
  if (auto j = fs.Read("/usr/local/cuda/version.json", 1u << 20))
    if (auto v = ParseCudaVersionJson(*j)) return ToolkitVersion{*v, "/usr/local/cuda/version.json"};
  if (auto t = fs.Read("/usr/local/cuda/version.txt", 1u << 16)) {
    std::string_view s = Trim(*t);
    size_t sp = s.rfind(' ');
    if (StartsWith(s, "CUDA Version ") && sp != std::string_view::npos)
      return ToolkitVersion{std::string(s.substr(sp + 1)), "/usr/local/cuda/version.txt"};
  }
  // Toolkits installed from the CUDA wheels (and some distro packages) ship neither file: the
  // versioned directory the /usr/local/cuda link points to, else the runtime's soname.
  if (auto link = fs.ReadLink("/usr/local/cuda")) {
    std::string_view leaf = *link;
    while (!leaf.empty() && leaf.back() == '/') leaf.remove_suffix(1);
    leaf = leaf.substr(leaf.rfind('/') + 1);
    if (StartsWith(leaf, "cuda-")) {
      std::string_view v = leaf.substr(5);
      size_t dot = v.find('.');
      if (dot != std::string_view::npos && ParseInt(v.substr(0, dot)) && ParseInt(v.substr(dot + 1)))
        return ToolkitVersion{std::string(v), "/usr/local/cuda -> " + *link + " (no version.json)"};
    }
  }
  for (const char* dir : {"/usr/local/cuda/lib64", "/usr/local/cuda/lib"}) {
    auto files = fs.List(dir);
    if (!files) continue;
    std::optional<int64_t> best;
    for (const auto& f : *files) {
      if (!StartsWith(f, "libcudart.so.")) continue;
      std::string_view rest = std::string_view(f).substr(13);
      if (auto m = ParseInt(rest.substr(0, rest.find('.'))); m && (!best || *m > *best)) best = *m;
    }
    if (best)
      return ToolkitVersion{std::to_string(*best), std::string(dir) + "/libcudart.so." + std::to_string(*best) +
                                                       " soname (major only; no version.json)"};
  }
  return std::nullopt;
}

std::string UnameMachine() {
  struct utsname u {};
  if (::uname(&u) != 0) return "";
  return u.machine;
}

}  // namespace sparkops
