#include "guard/event.h"

#include <set>

#include "host/gpu.h"
#include "host/pidns.h"

namespace sparkops::guard {

std::set<uint32_t> ProcessTree(const std::vector<ProcessInfo>& table, uint32_t root) {
  std::set<uint32_t> tree{root};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& p : table)
      if (tree.count(p.ppid) && tree.insert(p.pid).second) grew = true;
  }
  return tree;
}

bool ProcessAlive(uint32_t pid) {
  auto in_proc = ProcPidOf(pid);
  if (!in_proc) return false;
  auto stat = HostFs("/").Read("/proc/" + std::to_string(*in_proc) + "/stat", 4096);
  if (!stat) return false;
  auto st = ParseStat(*stat);
  return st && st->state != 'Z' && st->state != 'X';
}

Footprint JobFootprint(const HostView& ctx, pid_t root) {
  Footprint f;
  // The job is a process of this machine even under --root (a fixture stands in for meminfo, NVML
  // for GPU memory): its resident memory comes from the real /proc.
  auto table = ReadProcessTable(HostFs("/"));
  auto in_proc = ProcPidOf(static_cast<uint32_t>(root));  // /proc may number processes otherwise
  if (!table || !in_proc) return f;
  std::set<uint32_t> tree = ProcessTree(*table, *in_proc);
  for (const auto& p : *table)
    if (tree.count(p.pid) && p.rss_bytes) f.rss = f.rss.value_or(0) + *p.rss_bytes;
  GpuSnapshot gpu = ReadGpuSnapshot(ctx);
  for (const GpuReading& g : gpu.gpus) {
    if (!g.processes_known) continue;
    for (const GpuProcess& p : g.processes)
      if (tree.count(p.pid) && p.used_bytes) f.gpu = f.gpu.value_or(0) + *p.used_bytes;
  }
  return f;
}

nlohmann::ordered_json GuardEventFields(const ActionRecord& a, const Footprint& f) {
  nlohmann::ordered_json j;
  j["action"] = a.action == Action::kFlush ? "flush" : a.killed ? "kill" : "terminate";
  j["reason"] = ToString(a.reason);
  if (a.action == Action::kStop) j["signal"] = a.killed ? "SIGKILL" : "SIGTERM";
  j["mem_available_bytes"] = a.reading.available;
  j["min_available_bytes"] = a.floor;
  if (a.reading.page_cache) j["page_cache_bytes"] = *a.reading.page_cache;
  if (a.reading.psi_full_avg10) j["psi_full_avg10"] = *a.reading.psi_full_avg10;
  if (a.max_pressure) j["max_pressure"] = *a.max_pressure;
  if (a.action == Action::kFlush) j["flushed"] = a.flush_ok;
  if (!a.kernel_line.empty()) j["kernel_line"] = a.kernel_line;  // the evidence of a kernel_nvrm_no_memory stop
  if (!a.buddyinfo.empty()) j["buddyinfo"] = a.buddyinfo;        // the evidence of a fragmentation stop
  if (f.rss) j["job_rss_bytes"] = *f.rss;
  if (f.gpu) j["job_gpu_bytes"] = *f.gpu;
  return j;
}

}  // namespace sparkops::guard
