#include "report/workloads.h"

#include <fmt/format.h>

#include "host/meminfo.h"

namespace sparkops {

namespace {

/// "3.0 GiB", "47 MiB" under 1 GiB, or "not reported".
std::string Gib(std::optional<uint64_t> b) {
  if (!b) return "not reported";
  if (*b < (1ull << 30)) return fmt::format("{:.0f} MiB", static_cast<double>(*b) / (1024.0 * 1024.0));
  return fmt::format("{:.1f} GiB", ToGiB(*b));
}

std::string GpuText(const WorkloadProcess& p) {
  if (p.gpu_bytes) return Gib(p.gpu_bytes);
  return p.gpu_listed ? "listed, no figure" : "not reported";
}

std::vector<std::string> FooterLines(const WorkloadScan& scan) {
  std::vector<std::string> lines;
  if (scan.mem_total)
    lines.push_back(
        fmt::format("verdict: capped = an explicit cap leaving at least half the pool (fraction <= 0.5, "
                    "or <= {} of MemTotal {})",
                    Gib(*scan.mem_total / 2), Gib(scan.mem_total)));
  else lines.push_back("verdict: MemTotal not readable: byte caps cannot be judged against half the pool");
  lines.push_back(
      "  near-capacity = a cap above that or a server's default (vLLM 0.92); uncapped = no cap "
      "mechanism; idle = no model loaded");
  if (scan.gpu_source == "none") lines.push_back("GPU memory: not reported (no GPU readable)");
  else lines.push_back("GPU memory: per-process used memory from " + scan.gpu_source);
  lines.push_back(
      scan.unified_memory
          ? "RSS and GPU memory overlap here (unified memory): both come out of the same pool, do not add them"
          : "on unified memory (GB10) RSS and GPU memory overlap: both come out of the same pool, do not add them");
  return lines;
}

}  // namespace

std::string RenderWorkloadsText(const WorkloadScan& scan) {
  struct Row {
    std::string pid, kind, rss, gpu, cap, verdict;
  };
  std::vector<Row> rows{{"PID", "KIND", "RSS", "GPU MEMORY", "CAP", "VERDICT"}};
  std::vector<std::vector<std::string>> details(1);
  for (const auto& w : scan.workloads) {
    rows.push_back({std::to_string(w.main.pid), KindName(w.kind), Gib(w.main.rss_bytes), GpuText(w.main), w.cap.text,
                    VerdictName(w.verdict)});
    details.emplace_back();
    for (size_t i = 0; i < w.children.size(); ++i) {
      const auto& c = w.children[i];
      rows.push_back({fmt::format("{} {}", i + 1 == w.children.size() ? "`-" : "|-", c.pid), c.role, Gib(c.rss_bytes),
                      GpuText(c), "", ""});
      details.emplace_back();
    }
    auto& d = details.back();
    if (!w.detail.empty()) d.push_back("runs: " + w.detail);
    if (!w.model.empty()) d.push_back("model: " + w.model);
    d.push_back("why: " + w.reason);
    if (!w.children.empty())
      d.push_back(fmt::format("group: RSS {}, GPU memory {}", Gib(w.TotalRssBytes()), Gib(w.TotalGpuBytes())));
    for (const auto& n : w.notes) d.push_back("note: " + n);
  }
  std::string out;
  if (scan.workloads.empty()) {
    out += fmt::format("no ML workloads found among {} processes\n", scan.processes_scanned);
  } else {
    size_t w[5] = {0, 0, 0, 0, 0};
    for (const auto& r : rows) {
      w[0] = std::max(w[0], r.pid.size());
      w[1] = std::max(w[1], r.kind.size());
      w[2] = std::max(w[2], r.rss.size());
      w[3] = std::max(w[3], r.gpu.size());
      w[4] = std::max(w[4], r.cap.size());
    }
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      std::string line = fmt::format("{:<{}}  {:<{}}  {:>{}}  {:>{}}  {:<{}}  {}", r.pid, w[0], r.kind, w[1], r.rss,
                                     w[2], r.gpu, w[3], r.cap, w[4], r.verdict);
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
      for (const auto& d : details[i]) out += "    " + d + "\n";
    }
  }
  for (const auto& f : FooterLines(scan)) out += f + "\n";
  return out;
}

nlohmann::ordered_json WorkloadToJson(const Workload& w) {
  auto proc = [](const WorkloadProcess& p) {
    nlohmann::ordered_json j{{"pid", p.pid}, {"role", p.role}};
    if (p.rss_bytes) j["rss_bytes"] = *p.rss_bytes;
    if (p.gpu_bytes) j["gpu_bytes"] = *p.gpu_bytes;
    j["gpu_listed"] = p.gpu_listed;
    j["command"] = p.command;
    return j;
  };
  nlohmann::ordered_json j = proc(w.main);
  j["kind"] = KindName(w.kind);
  j["training"] = w.training;
  if (!w.detail.empty()) j["runs"] = w.detail;
  if (!w.model.empty()) j["model"] = w.model;
  nlohmann::ordered_json cap{{"text", w.cap.text}, {"default", w.cap.is_default}};
  if (w.cap.fraction) cap["fraction"] = *w.cap.fraction;
  if (w.cap.bytes) cap["bytes"] = *w.cap.bytes;
  j["cap"] = cap;
  j["verdict"] = VerdictName(w.verdict);
  j["reason"] = w.reason;
  if (auto r = w.TotalRssBytes()) j["group_rss_bytes"] = *r;
  if (auto g = w.TotalGpuBytes()) j["group_gpu_bytes"] = *g;
  j["notes"] = w.notes;
  nlohmann::ordered_json kids = nlohmann::ordered_json::array();
  for (const auto& c : w.children) kids.push_back(proc(c));
  j["children"] = kids;
  return j;
}

nlohmann::ordered_json WorkloadsToJson(const WorkloadScan& scan) {
  nlohmann::ordered_json j;
  if (scan.mem_total) j["mem_total_bytes"] = *scan.mem_total;
  j["processes_scanned"] = scan.processes_scanned;
  j["gpu_source"] = scan.gpu_source;
  if (!scan.gpu_why_none.empty()) j["gpu_why_none"] = scan.gpu_why_none;
  j["unified_memory"] = scan.unified_memory;
  j["notes"] = FooterLines(scan);
  nlohmann::ordered_json ws = nlohmann::ordered_json::array();
  for (const auto& w : scan.workloads) ws.push_back(WorkloadToJson(w));
  j["workloads"] = ws;
  return j;
}

}  // namespace sparkops
