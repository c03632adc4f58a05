#include "host/ldso.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "base/strings.h"

namespace sparkops {

namespace fs = std::filesystem;

namespace {
bool IsDirectory(const std::string& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}
bool FileExists(const std::string& p) {
  std::error_code ec;
  return fs::exists(p, ec) && !fs::is_directory(p, ec);
}
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f'); }
void AddUnique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}
}  // namespace

std::vector<std::string> ExpandSearchPath(std::string_view raw, std::string_view origin_dir) {
  std::vector<std::string> out;
  for (auto part : Split(raw, ':')) {
    if (part.empty()) continue;
    std::string s(part);
    for (const char* tok : {"${ORIGIN}", "$ORIGIN"}) {
      size_t pos;
      while ((pos = s.find(tok)) != std::string::npos) s.replace(pos, std::strlen(tok), origin_dir);
    }
    out.push_back(s);
  }
  return out;
}

namespace {
/// The interpreter's DT_RPATH (see LdsoEnv::exe_rpath) for site dir `site`.
void AddInterpreterRpath(const std::string& site, LdsoEnv& env) {
  const size_t at = site.rfind("/lib/python");
  if (at == std::string::npos || !EndsWith(site, "-packages")) return;
  const std::string prefix = site.substr(0, at);
  const std::string ver = site.substr(at + 11, site.find('/', at + 11) - at - 11);  // "3.12"
  for (const std::string& name : {"python" + ver, std::string("python3"), std::string("python")}) {
    std::error_code ec;
    fs::path real = fs::canonical(prefix + "/bin/" + name, ec);
    if (ec) continue;
    auto info = ReadElf(real.string());
    if (!info) return;
    env.exe = real.string();
    if (info->rpath && !info->runpath) env.exe_rpath = ExpandSearchPath(*info->rpath, real.parent_path().string());
    return;
  }
}
}  // namespace

LdsoEnv MakeLdsoEnv(const HostView& ctx, const std::vector<std::string>& site_dirs) {
  LdsoEnv env;
  if (!site_dirs.empty()) AddInterpreterRpath(site_dirs.front(), env);
  const std::string llp = ctx.Getenv("LD_LIBRARY_PATH");  // the views below point into it
  for (auto p : Split(llp, ':'))
    if (!p.empty()) env.ld_library_path.emplace_back(p);
  for (const auto& site : site_dirs) {
    std::error_code ec;
    std::vector<std::string> dirs;
    for (const auto& e : fs::directory_iterator(site + "/nvidia", ec))
      if (IsDirectory(e.path().string() + "/lib")) dirs.push_back(e.path().string() + "/lib");
    std::sort(dirs.begin(), dirs.end());
    for (auto& d : dirs) AddUnique(env.pip_nvidia_dirs, d);
  }
  // /etc/ld.so.conf.d/*.conf under --root (the dirs ld.so.cache is built from).
  if (auto files = ctx.fs.List("/etc/ld.so.conf.d")) {
    std::sort(files->begin(), files->end());
    for (const auto& f : *files) {
      if (!EndsWith(f, ".conf")) continue;  // (dirs listed there come first: conf_dirs counts them)
      if (auto text = ctx.fs.Read("/etc/ld.so.conf.d/" + f, 1u << 16))
        for (auto line : SplitLines(*text)) {
          line = Trim(line);
          if (!line.empty() && line[0] == '/') AddUnique(env.system_dirs, ctx.fs.Path(line));
        }
    }
  }
  env.conf_dirs = env.system_dirs.size();
  for (const char* d : {"/lib", "/usr/lib", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                        "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64"})
    AddUnique(env.system_dirs, ctx.fs.Path(d));
  // /usr/local/cuda/lib64 is no default dir: its libraries load only through an ld.so.conf.d entry
  // (the CUDA packages install one), LD_LIBRARY_PATH or an RPATH.
  return env;
}

Resolution ResolveNeeded(const std::string& needed, const ElfInfo& obj, const std::string& obj_path,
                         const LdsoEnv& env) {
  if (needed.find('/') != std::string::npos)  // a path NEEDED entry is used as is
    return FileExists(needed) ? Resolution{needed, "path"} : Resolution{std::nullopt, ""};
  std::string origin = fs::path(obj_path).parent_path().string();
  auto try_dirs = [&](const std::vector<std::string>& dirs, const char* via) -> std::optional<Resolution> {
    for (const auto& d : dirs) {
      std::string cand = d + "/" + needed;
      if (!FileExists(cand)) continue;
      // ld.so skips a library built for another machine and searches on
      if (auto info = ReadElf(cand); info && obj.machine != 0 && info->machine != obj.machine) continue;
      return Resolution{fs::path(cand).lexically_normal().string(), via};
    }
    return std::nullopt;
  };
  if (obj.rpath && !obj.runpath)
    if (auto r = try_dirs(ExpandSearchPath(*obj.rpath, origin), "RPATH")) return *r;
  if (!obj.runpath)
    if (auto r = try_dirs(env.exe_rpath, "interpreter RPATH")) return *r;
  if (auto r = try_dirs(env.ld_library_path, "LD_LIBRARY_PATH")) return *r;
  if (obj.runpath)
    if (auto r = try_dirs(ExpandSearchPath(*obj.runpath, origin), "RUNPATH")) return *r;
  if (auto r = try_dirs(env.pip_nvidia_dirs, "pip nvidia/*/lib")) return *r;
  if (auto r = try_dirs(env.system_dirs, "system dirs")) return *r;
  return {std::nullopt, ""};
}

std::string CanonicalSoname(std::string_view so) {
  size_t at = so.find(".so");
  while (at != std::string_view::npos && at + 3 < so.size() && so[at + 3] != '.') at = so.find(".so", at + 1);
  if (at == std::string_view::npos) return std::string(so);
  size_t h = at;
  while (h > 0 && IsHexDigit(so[h - 1])) --h;
  const size_t len = at - h;
  if (len < 8 || len > 16 || h < 2 || (so[h - 1] != '-' && so[h - 1] != '.')) return std::string(so);
  return std::string(so.substr(0, h - 1)) + std::string(so.substr(at));
}

bool IsCudaLibrary(std::string_view raw) {
  const std::string canon = CanonicalSoname(raw);
  std::string_view so = canon;
  for (std::string_view p : {"libcudart.", "libcublas.", "libcublasLt.", "libcufft.", "libcufftw.", "libcusparse.",
                             "libcusolver.", "libcurand.", "libnvrtc.", "libnvJitLink.", "libcudnn", "libcupti.",
                             "libnvToolsExt.", "libcufile.", "libnccl.", "libcusparseLt.", "libnvshmem"})
    if (StartsWith(so, p)) return true;
  return false;
}

std::optional<int> CudaMajorOfSoname(std::string_view raw) {
  const std::string canon = CanonicalSoname(raw);
  std::string_view so = canon;
  for (std::string_view p : {"libcudart.so.", "libcublas.so.", "libcublasLt.so.", "libcufft.so.", "libcusparse.so.",
                             "libcusolver.so.", "libcurand.so.", "libnvrtc.so.", "libnvJitLink.so.", "libcupti.so."}) {
    if (!StartsWith(so, p)) continue;
    std::string_view v = so.substr(p.size());
    auto major = ParseInt(v.substr(0, v.find('.')));
    // cuFFT/cuRAND/cuSPARSE sonames carry their own numbering (libcufft.so.11 ships with CUDA 12);
    // only cudart, cublas(Lt), nvrtc, nvJitLink and cupti follow the toolkit major.
    if (StartsWith(p, "libcufft") || StartsWith(p, "libcusparse") || StartsWith(p, "libcusolver") ||
        StartsWith(p, "libcurand"))
      return std::nullopt;
    if (major && *major >= 9 && *major <= 99) return static_cast<int>(*major);
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace sparkops
