#include "host/pyenv.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include <unistd.h>

#include "base/strings.h"
#include "host/command.h"

namespace sparkops {

namespace fs = std::filesystem;

const char* const kPythonProbe =
    "import sys\n"
    "print(sys.prefix)\n"
    "print(getattr(sys, 'base_prefix', sys.prefix))\n"
    "print('%d.%d' % sys.version_info[:2])\n"
    "for p in sys.path: print(p)\n";

Result<PythonProbe> ParsePythonProbe(std::string_view out) {
  auto lines = SplitLines(out);
  if (lines.size() < 3) return InputError("python probe: expected prefix, base prefix and version lines");
  PythonProbe p{std::string(lines[0]), std::string(lines[1]), std::string(Trim(lines[2])), {}};
  if (p.prefix.empty() || p.version.find('.') == std::string::npos)
    return InputError("python probe: unreadable prefix or version line");
  for (size_t i = 3; i < lines.size(); ++i)
    if (!lines[i].empty()) p.sys_path.emplace_back(lines[i]);
  return p;
}

std::vector<std::string> SiteDirsFromProbe(const PythonProbe& p, const std::string& home, bool venv_includes_system) {
  std::vector<std::string> out;
  auto add = [&](const std::string& d) {
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  };
  // sys.path entries that are already site dirs (PYTHONPATH, .pth-free) come first, as Python
  // puts PYTHONPATH before site-packages.
  for (const auto& e : p.sys_path)
    if (EndsWith(e, "site-packages") || EndsWith(e, "dist-packages")) add(e);
  bool in_venv = p.prefix != p.base_prefix;
  auto prefix_dirs = [&](const std::string& pre) {
    add(pre + "/lib/python" + p.version + "/site-packages");
    add(pre + "/local/lib/python" + p.version + "/dist-packages");  // Debian: pip --user-less installs
    add(pre + "/lib/python3/dist-packages");                         // Debian: python3-* packages
  };
  if (!in_venv && !home.empty()) add(home + "/.local/lib/python" + p.version + "/site-packages");
  prefix_dirs(p.prefix);
  if (in_venv && venv_includes_system) prefix_dirs(p.base_prefix);
  return out;
}

namespace {

bool IsDir(const std::string& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

/// Existing `<prefix>/lib/python3.*/site-packages`, sorted.
std::vector<std::string> GlobSitePackages(const std::string& prefix, const char* leaf) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(prefix + "/lib", ec)) {
    std::string n = e.path().filename().string();
    if (StartsWith(n, "python3") && IsDir(e.path().string() + "/" + leaf))
      out.push_back(e.path().string() + "/" + leaf);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::string> FindOnPath(const std::string& path_var, const std::string& exe) {
  for (auto dir : Split(path_var, ':')) {
    if (dir.empty()) continue;
    std::string cand = std::string(dir) + "/" + exe;
    if (::access(cand.c_str(), X_OK) == 0 && !IsDir(cand)) return cand;
  }
  return std::nullopt;
}

/// The venv an interpreter belongs to, as Python's site module finds it: a pyvenv.cfg beside
/// the executable or one directory up; the venv's prefix is the executable's directory's parent
/// (symlinks not resolved: a venv's python3 is a link to the base interpreter). Returns
/// {prefix, pyvenv.cfg path}. Needed because `-S` skips site, which is what moves sys.prefix
/// into the venv: the probe alone reports the base prefix (seen on uv and python -m venv venvs).
std::optional<std::pair<std::string, std::string>> VenvOf(const std::string& exe) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::absolute(exe, ec).parent_path();
  if (ec) return std::nullopt;
  for (const auto& cfg : {dir / "pyvenv.cfg", dir.parent_path() / "pyvenv.cfg"})
    if (std::filesystem::is_regular_file(cfg, ec)) return std::pair{dir.parent_path().string(), cfg.string()};
  return std::nullopt;
}

/// Runs the probe with -S under a 5 s timeout and derives the site dirs that exist.
Result<std::vector<std::string>> ProbeInterpreter(const HostView& ctx, const std::string& exe) {
  CommandOptions o;
  o.env = ctx.env;
  auto r = RunCommand({exe, "-S", "-c", kPythonProbe}, o);
  if (!r) return std::unexpected(r.error());
  if (r->timed_out) return IoError(exe + ": timed out after 5 s");
  if (!r->ok()) return IoError(exe + " -S -c: exited with failure: " + std::string(Trim(r->err.substr(0, 200))));
  auto probe = ParsePythonProbe(r->out);
  if (!probe) return IoError(exe + ": " + probe.error().message);
  bool include_system = false;
  std::string cfg_path = probe->prefix + "/pyvenv.cfg";
  if (probe->prefix == probe->base_prefix)
    if (auto venv = VenvOf(exe)) {
      probe->prefix = venv->first;
      cfg_path = venv->second;
    }
  if (probe->prefix != probe->base_prefix) {
    auto cfg = ReadLocalFile(cfg_path, 1u << 16);
    if (cfg)
      for (auto line : SplitLines(*cfg)) {
        auto eq = line.find('=');
        if (eq != std::string_view::npos && Trim(line.substr(0, eq)) == "include-system-site-packages")
          include_system = ToLower(Trim(line.substr(eq + 1))) == "true";
      }
  }
  std::vector<std::string> out;
  for (auto& d : SiteDirsFromProbe(*probe, ctx.Getenv("HOME"), include_system))
    if (IsDir(d)) out.push_back(d);
  return out;
}

/// True when `dir` holds at least one *.dist-info or *.egg-info entry.
bool HasDistributions(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    if (EndsWith(n, ".dist-info") || EndsWith(n, ".egg-info")) return true;
  }
  return false;
}

/// A --site-packages argument: a site-packages dir as is; a venv root (pyvenv.cfg) or conda root
/// (conda-meta/) resolves to its lib/python3.*/site-packages. Input error naming what was looked
/// for when the result holds no distribution at all.
Result<std::vector<std::string>> ResolveSitePackagesArg(const std::string& d) {
  std::vector<std::string> dirs{d};
  const bool venv = std::filesystem::exists(d + "/pyvenv.cfg"), conda = IsDir(d + "/conda-meta");
  if (venv || conda) {
    dirs = GlobSitePackages(d, "site-packages");
    if (dirs.empty())
      return InputError("--site-packages " + d + ": a " +
                        (venv ? "venv root (pyvenv.cfg)" : "conda root (conda-meta/)") +
                        " without lib/python3.*/site-packages");
  }
  for (const auto& x : dirs)
    if (HasDistributions(x)) return dirs;
  return InputError("--site-packages " + d + ": no *.dist-info or *.egg-info directory in " + Join(dirs, ", ") +
                    " (looked for installed distributions; give <env>/lib/python3.X/site-packages, or the venv/"
                    "conda root holding pyvenv.cfg or conda-meta/)");
}

}  // namespace

Result<PythonEnv> DiscoverPython(const HostView& ctx, const std::string& python_exe,
                                 const std::vector<std::string>& site_packages) {
  PythonEnv env;
  if (!site_packages.empty()) {
    env.source = "--site-packages";
    for (const auto& d : site_packages) {
      if (!IsDir(d)) return InputError("--site-packages " + d + ": not a directory");
      auto dirs = ResolveSitePackagesArg(d);
      if (!dirs) return std::unexpected(dirs.error());
      if (dirs->size() != 1 || dirs->front() != d)
        env.notes.push_back(d + " is an environment root: using " + Join(*dirs, ", "));
      for (auto& x : *dirs) env.site_dirs.push_back(std::move(x));
    }
    return env;
  }
  if (!python_exe.empty()) {
    auto dirs = ProbeInterpreter(ctx, python_exe);
    if (!dirs)
      return InputError("--python " + python_exe + ": ran `" + python_exe +
                        " -S -c <probe printing sys.prefix, sys.version, sys.path>`: " + dirs.error().message);
    env.source = "--python " + python_exe;
    env.site_dirs = *dirs;
    return env;
  }
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    std::string pre = ctx.Getenv(var);
    if (pre.empty()) continue;
    auto dirs = GlobSitePackages(pre, "site-packages");
    if (dirs.empty()) {
      env.notes.push_back(std::string(var) + "=" + pre + ": no lib/python3.*/site-packages");
      continue;
    }
    env.source = std::string(var) + "=" + pre;
    env.site_dirs = dirs;
    return env;
  }
  if (ctx.fs.is_real_root()) {
    if (auto exe = FindOnPath(ctx.Getenv("PATH"), "python3")) {
      auto dirs = ProbeInterpreter(ctx, *exe);
      if (dirs && !dirs->empty()) {
        env.source = "python3 on PATH (" + *exe + ")";
        env.site_dirs = *dirs;
        return env;
      }
      env.notes.push_back(*exe + ": " + (dirs ? std::string("no site-packages dir exists") : dirs.error().message));
    } else {
      env.notes.push_back("no python3 on PATH");
    }
  }
  // System dirs under --root (NGC containers install into /usr/local/lib/python3.*/dist-packages).
  for (auto& d : GlobSitePackages(ctx.fs.Path("/usr/local"), "dist-packages")) env.site_dirs.push_back(d);
  if (std::string deb = ctx.fs.Path("/usr/lib/python3/dist-packages"); IsDir(deb)) env.site_dirs.push_back(deb);
  if (!env.site_dirs.empty()) {
    env.source = "system dist-packages";
    return env;
  }
  std::string tried = env.notes.empty() ? "" : " (" + Join(env.notes, "; ") + ")";
  return NotFound(
      "no Python environment found: no --site-packages/--python, VIRTUAL_ENV, CONDA_PREFIX, "
      "python3 or system dist-packages" +
      tried);
}

}  // namespace sparkops
