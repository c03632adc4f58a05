#include "host/cudalink.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"

namespace sparkops {

std::string BitsandbytesObjectName(const std::string& torch_cuda, const std::string& bnb_cuda_version) {
  std::string v = bnb_cuda_version.empty() ? torch_cuda : bnb_cuda_version;
  std::string digits;
  for (char c : v)
    if (c >= '0' && c <= '9') digits += c;
  if (digits.empty()) return "libbitsandbytes_cpu.so";
  return "libbitsandbytes_cuda" + digits + ".so";
}

std::string RelativeToSite(const std::string& path, const std::string& site_dir) {
  if (StartsWith(path, site_dir + "/")) return path.substr(site_dir.size() + 1);
  return path;
}

namespace {
bool IsPipCudaPackage(const std::string& norm) {
  return StartsWith(norm, "nvidia-") || norm == "cuda-toolkit" || StartsWith(norm, "cuda-bindings");
}
std::string Leaf(const std::string& p) { return p.substr(p.rfind('/') + 1); }
}  // namespace

LinkReport AnalyzeCudaLinks(const Inventory& inv, const LdsoEnv& env, const std::string& torch_cuda,
                            const std::string& bnb_cuda_version,
                            const std::function<Result<ElfInfo>(const std::string&)>& read_elf) {
  LinkReport rep;
  std::map<std::string, std::string> loaded_by_torch;  // soname -> path, from torch's own objects
  // torch first: what it loads is in the process before any extension is imported.
  std::vector<const Package*> order;
  for (const auto& p : inv.packages)
    if (p.norm == "torch") order.push_back(&p);
  for (const auto& p : inv.packages)
    if (p.norm != "torch" && !IsPipCudaPackage(p.norm)) order.push_back(&p);
  std::set<std::string> seen_pkgs;
  for (const Package* p : order) {
    if (!seen_pkgs.insert(p->norm).second) continue;  // shadowed duplicate: the first on sys.path wins
    std::string label = p->name + " " + p->version;
    bool bnb = p->norm == "bitsandbytes";
    std::string bnb_pick = bnb ? BitsandbytesObjectName(torch_cuda, bnb_cuda_version) : "";
    bool bnb_found = false, bnb_any = false;
    for (const auto& obj : p->shared_objects) {
      std::string leaf = Leaf(obj);
      if (bnb && StartsWith(leaf, "libbitsandbytes_")) {
        bnb_any = true;
        if (leaf != bnb_pick) continue;  // bnb loads exactly one of its per-CUDA objects
        bnb_found = true;
      }
      auto info = read_elf(obj);
      if (!info) {
        if (info.error().kind != Error::Kind::kNotFound)
          rep.damaged.push_back(fmt::format("{}: {}", label, info.error().message));
        continue;
      }
      ++rep.objects_read;
      ObjectLink link{label, p->norm, p->name, obj, {}, {}};
      for (const auto& n : info->needed) {
        if (!IsCudaLibrary(n)) continue;
        // ld.so reuses an already-loaded library with the same soname before searching anything:
        // an extension imported after torch gets torch's copy.
        CudaNeed need;
        auto it = p->norm == "torch" ? loaded_by_torch.end() : loaded_by_torch.find(n);
        if (it != loaded_by_torch.end()) {
          need = {n, it->second, "already loaded by torch"};
        } else {
          Resolution r = ResolveNeeded(n, *info, obj, env);
          need = {n, r.path, r.via};
        }
        if (need.found && p->norm == "torch") loaded_by_torch.emplace(n, *need.found);
        if (!need.found)
          rep.unresolved.push_back(
              fmt::format("{}: {} NEEDs {} (not found by ld.so rules)", label, RelativeToSite(obj, p->site_dir), n));
        if (auto m = CudaMajorOfSoname(n)) link.majors.insert(*m);
        link.needs.push_back(std::move(need));
      }
      if (link.needs.empty()) continue;
      for (int m : link.majors) {
        auto& v = rep.majors[m];
        std::string who = fmt::format("{}: {}", label, RelativeToSite(obj, p->site_dir));
        if (std::find(v.begin(), v.end(), who) == v.end()) v.push_back(who);
      }
      rep.objects.push_back(std::move(link));
    }
    if (bnb && bnb_any) {
      if (bnb_found)
        rep.notes.push_back(fmt::format("{}: counted only {} (chosen by {})", label, bnb_pick,
                                        bnb_cuda_version.empty() ? "torch.version.cuda" : "BNB_CUDA_VERSION"));
      else if (bnb_pick != "libbitsandbytes_cpu.so")
        rep.unresolved.push_back(
            fmt::format("{}: ships no {} (bitsandbytes: \"Could not find the bitsandbytes "
                        "CUDA binary\")",
                        label, bnb_pick));
    }
  }
  return rep;
}

std::vector<PackageLink> LinksByPackage(const LinkReport& rep) {
  std::vector<PackageLink> out;
  for (const auto& o : rep.objects) {
    auto it = std::find_if(out.begin(), out.end(), [&](const PackageLink& p) { return p.label == o.package; });
    if (it == out.end()) it = out.insert(out.end(), PackageLink{o.package, o.norm, o.name, 0, {}, {}, {}});
    ++it->objects;
    for (const auto& n : o.needs) {
      it->libraries.insert(CanonicalSoname(n.soname));
      if (!n.found) it->missing.insert(n.soname);
    }
    it->majors.insert(o.majors.begin(), o.majors.end());
  }
  return out;
}

}  // namespace sparkops
