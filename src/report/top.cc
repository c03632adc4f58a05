#include "report/top.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/json_text.h"
#include "base/strings.h"
#include "base/timefmt.h"
#include "host/meminfo.h"
#include "report/workloads.h"
#include "telemetry/reasons.h"

namespace sparkops {

namespace {

/// "62.1G", "512M" (the table's short form) or "n/r".
std::string Short(std::optional<uint64_t> b) {
  if (!b) return "n/r";
  if (*b < (1ull << 30)) return fmt::format("{:.0f}M", static_cast<double>(*b) / (1024.0 * 1024.0));
  return fmt::format("{:.1f}G", ToGiB(*b));
}
std::string Num(std::optional<double> v, const char* fmtstr) {
  return v ? fmt::format(fmt::runtime(fmtstr), *v) : "n/r";
}

/// Text from the machine (command lines, models) shown on a terminal: printable ASCII only, so a
/// process cannot move the cursor or change colours by its argv.
std::string Printable(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return out;
}

/// `line` cut to `width` columns (UTF-8 code points; every character used here is one column).
std::string Cut(const std::string& line, int width) {
  int cols = 0;
  size_t end = 0;
  for (; end < line.size(); ++end) {
    if ((static_cast<unsigned char>(line[end]) & 0xC0) == 0x80) continue;
    if (cols == width) break;
    ++cols;
  }
  std::string out = line.substr(0, end);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::vector<std::string> PoolLines(const TopFrame& f, const TopView& v) {
  std::vector<std::string> out;
  if (!f.sample.mem) return {"POOL  /proc/meminfo not readable"};
  const MemInfo& m = *f.sample.mem;
  std::string pct;
  if (m.available && m.total && *m.total > 0)
    pct = fmt::format(" ({:.0f}%)", 100.0 * static_cast<double>(*m.available) / static_cast<double>(*m.total));
  std::string swap = m.swap_total && *m.swap_total == 0 ? "none" : Short(m.SwapUsed()) + "/" + Short(m.swap_total);
  out.push_back(fmt::format("POOL  total {}  available {}{}  page cache {}  swap {}", Short(m.total),
                            Short(m.available), pct, Short(m.PageCache()), swap));
  std::string guard = "no guard running";
  if (f.guard) {
    guard = fmt::format("guard floor {} ({} pid {})", Short(f.guard->min_available_bytes), f.guard->mode, f.guard->pid);
    if (m.available) {
      int64_t margin = static_cast<int64_t>(*m.available) - static_cast<int64_t>(f.guard->min_available_bytes);
      guard += margin >= 0 ? ", " + Short(static_cast<uint64_t>(margin)) + " above"
                           : ", " + Short(static_cast<uint64_t>(-margin)) + " BELOW";
    }
  }
  out.push_back(fmt::format("      mlocked {}  shmem {}  {}", Short(m.mlocked), Short(m.shmem), guard));
  if (!f.available_history.empty()) {
    auto [lo, hi] = std::minmax_element(f.available_history.begin(), f.available_history.end());
    size_t width = static_cast<size_t>(std::max(10, v.width - 44));
    size_t n = std::min(width, f.available_history.size());
    out.push_back(fmt::format("      available {:<{}}  last {:g}s, {}..{}",
                              Sparkline(f.available_history, width, v.unicode), n,
                              static_cast<double>(n) * f.interval_s, Short(*lo), Short(*hi)));
  }
  return out;
}

std::vector<std::string> GpuLines(const TopFrame& f) {
  std::vector<std::string> out;
  const auto& g = f.sample.gpu;
  if (!g || !g->error.empty()) {
    out.push_back("GPU   " + (f.sample.gpu_note.empty() ? std::string("not readable") : Printable(f.sample.gpu_note)));
  } else {
    std::string clock = g->sm_clock_mhz ? fmt::format("{}", *g->sm_clock_mhz) : "n/r";
    clock += g->sm_clock_max_mhz ? fmt::format("/{} MHz", *g->sm_clock_max_mhz) : " MHz";
    std::string reasons = "n/r";
    if (g->clock_event_reasons) {
      auto names = DecodeReasons(*g->clock_event_reasons);
      reasons = names.empty() ? "none" : Join(names, "+");
    }
    out.push_back(fmt::format("GPU   {}  {}  {}  SM {}  util {}  clocks: {}", Printable(g->name),
                              Num(g->temp_c, "{:.0f} C"), Num(g->power_w, "{:.0f} W"), clock,
                              g->util_pct ? fmt::format("{}%", *g->util_pct) : "n/r", reasons));
  }
  if (f.sample.power) {
    const PowerReading& p = *f.sample.power;
    std::string l = "      ";
    if (p.spbm) {
      l += p.prochot ? (*p.prochot ? "PROCHOT ON  " : "PROCHOT off  ") : "PROCHOT n/r  ";
      l += p.pl_level ? fmt::format("PL level {}  ", *p.pl_level) : "";
      l += fmt::format("DC in {}  pkg {}  gpu rail {}  ", Num(p.Rail("dc_input"), "{:.0f} W"),
                       Num(p.SocPkgW(), "{:.0f} W"), Num(p.Rail("gpu"), "{:.0f} W"));
    }
    l += fmt::format("CPU {}  SoC {}", Num(p.cpu_temp_c, "{:.0f} C"), Num(p.soc_temp_c, "{:.0f} C"));
    out.push_back(l);
  }
  return out;
}

std::string PsiLine(const TopFrame& f) {
  std::string l = "PSI   avg10";
  if (const auto& h = f.sample.host) {
    if (h->source == "psi")
      l += fmt::format("  cpu some {}  io some {} full {}", Num(h->cpu_some, "{:.1f}%"), Num(h->io_some, "{:.1f}%"),
                       Num(h->io_full, "{:.1f}%"));
    else l += fmt::format("  cpu {} (runnable estimate, no PSI)", Num(h->cpu_some, "{:.1f}%"));
  } else {
    l += "  cpu/io n/r";
  }
  if (f.memory_psi) {
    auto avg = [](const std::optional<PressureLine>& p) { return p ? fmt::format("{:.1f}%", p->avg10) : "n/r"; };
    l += fmt::format("  memory some {} full {}", avg(f.memory_psi->some), avg(f.memory_psi->full));
  } else {
    l += "  memory n/r";
  }
  return l;
}

/// Signed bytes as Short, "-" before a negative one.
std::string SignedShort(int64_t b) {
  return b >= 0 ? Short(static_cast<uint64_t>(b)) : "-" + Short(static_cast<uint64_t>(-b));
}

/// MemAvailable minus the run's floor, when MemAvailable is read.
std::optional<int64_t> RunMargin(const TopFrame& f, const RunProgress& r) {
  if (!f.sample.mem || !f.sample.mem->available) return std::nullopt;
  return static_cast<int64_t>(*f.sample.mem->available) - static_cast<int64_t>(r.min_available_bytes);
}

/// "4.17 Wh since start, 0.0371 Wh/step" or "1.20 Wh last 95m, ...": the run's energy figures.
std::string RunEnergyText(const RunProgress& r) {
  auto wh = [](double v) {
    return fmt::format(fmt::runtime(v < 0.1 ? "{:.4f}" : v < 10 ? "{:.3f}" : v < 1000 ? "{:.1f}" : "{:.0f}"), v);
  };
  std::string out = wh(*r.energy_wh) + " Wh ";
  if (r.energy_from_start) out += "since start";
  else if (r.energy_span_s < 5400) out += fmt::format("last {:.0f}m", r.energy_span_s / 60);
  else out += fmt::format("last {:.1f}h", r.energy_span_s / 3600);
  if (r.wh_per_step) out += ", " + wh(*r.wh_per_step) + " Wh/step";
  if (r.wh_per_1k_tokens) out += ", " + wh(*r.wh_per_1k_tokens) + " Wh/1k tok";
  return out;
}

/// The RUNS pane: two lines per live run (a third with its energy); nothing when no run advertises itself.
std::vector<std::string> RunLines(const TopFrame& f) {
  std::vector<std::string> out;
  if (f.runs.empty() && f.runs_ignored.empty()) return out;
  std::string head = fmt::format("RUNS  {} live", f.runs.size());
  if (!f.runs_ignored.empty()) head += fmt::format("  ({} not shown: not trusted, see --json)", f.runs_ignored.size());
  out.push_back(head);
  for (const RunProgress& r : f.runs) {
    std::string step = r.step ? fmt::format("step {}", *r.step) : "step n/r";
    if (r.step && r.total_steps) step += fmt::format("/{}", *r.total_steps);
    std::string speed;
    // Seconds per step: 0.123, 2.00, 81.5, 240.
    auto secs = [](double v) { return fmt::format(fmt::runtime(v < 1 ? "{:.3f}" : v < 100 ? "{:.2f}" : "{:.0f}"), v); };
    if (r.s_per_step) speed = "  " + secs(*r.s_per_step) + " s/step";
    if (r.baseline_s) speed += " vs base " + secs(*r.baseline_s);
    out.push_back(fmt::format("{:>7}  {}{}  {}", r.pid, step, speed, Printable(r.verdict)));
    std::string margin = "guard margin n/r";
    if (auto m = RunMargin(f, r))
      margin = fmt::format("guard margin {}{}", SignedShort(*m), *m < 0 ? " BELOW floor" : "");
    std::string what = Printable(r.run_dir);
    if (!r.command.empty()) what += "  " + Printable(r.command);
    if (!r.note.empty()) what += "  (" + Printable(r.note) + ")";
    out.push_back(fmt::format("         {}  {}", margin, what));
    if (r.energy_wh) out.push_back("         energy " + RunEnergyText(r));
  }
  return out;
}

/// The KERNEL pane: counts since boot, then the last records, dmesg-style time (seconds since boot).
std::vector<std::string> KernelLines(const TopFrame& f) {
  if (!f.kernel) return {};
  const TopKernel& k = *f.kernel;
  if (!k.note.empty()) return {"KERNEL  log not read: " + Printable(k.note)};
  std::string head = "KERNEL  since boot:";
  uint64_t total = 0;
  for (const KernelSignDef& d : KernelSignTable()) {
    const uint64_t n = k.counts[static_cast<int>(d.kind)];
    total += n;
    if (n > 0) head += fmt::format("  {} {}", d.name, n);
  }
  if (total == 0) return {"KERNEL  no NVRM out-of-memory, Xid, OOM kill, hung task or lockup record since boot"};
  std::vector<std::string> out{head};
  for (const KernelSign& s : k.recent)
    out.push_back(fmt::format("  [{:>10.3f}] {:<14} {}", static_cast<double>(s.usec) / 1e6, KernelSignInfo(s.kind).name,
                              Printable(s.line)));
  return out;
}

std::vector<const Workload*> Sorted(const WorkloadScan& scan, const TopFrame& f, TopSort sort) {
  std::vector<const Workload*> ws;
  for (const auto& w : scan.workloads) ws.push_back(&w);
  auto key = [&](const Workload* w) -> double {
    if (sort == TopSort::kCpu) return WorkloadCores(*w, f.cores).value_or(-1);
    auto b = w->PoolBytes();
    return b ? static_cast<double>(*b) : -1;
  };
  std::stable_sort(ws.begin(), ws.end(), [&](const Workload* a, const Workload* b) { return key(a) > key(b); });
  return ws;
}

std::string Cores(std::optional<double> c) { return c ? fmt::format("{:.1f}", *c) : "-"; }

std::vector<std::string> ProcessLines(const TopFrame& f, const TopView& v) {
  std::vector<std::string> out;
  if (!f.scan) return {"PROCESSES  " + Printable(f.scan_error)};
  const WorkloadScan& s = *f.scan;
  out.push_back(fmt::format("PROCESSES  {} workloads among {} processes  sort: {}  trees: {}", s.workloads.size(),
                            s.processes_scanned, TopSortName(v.sort), v.trees ? "expanded" : "folded"));
  const bool wide = v.width >= 120;
  std::string head = fmt::format("{:>7}  {:<11} {:>6} {:>6} {:>5}  {:<13} {:<31}", "PID", "KIND", "RSS", "GPU", "CPU",
                                 "VERDICT", "CAP");
  if (wide) head += "  COMMAND";
  out.push_back(head);
  for (const Workload* w : Sorted(s, f, v.sort)) {
    std::string kind = KindName(w->kind);
    if (!v.trees && !w->children.empty()) kind += fmt::format(" +{}", w->children.size());
    std::string line = fmt::format("{:>7}  {:<11} {:>6} {:>6} {:>5}  {:<13} {:<31}", w->main.pid, kind,
                                   Short(w->TotalRssBytes()), Short(w->TotalGpuBytes()),
                                   Cores(WorkloadCores(*w, f.cores)), VerdictName(w->verdict), Printable(w->cap.text));
    if (wide) line += "  " + Printable(w->main.command);
    out.push_back(line);
    if (!v.trees) continue;
    for (size_t i = 0; i < w->children.size(); ++i) {
      const auto& c = w->children[i];
      auto it = f.cores.find(c.pid);
      std::string row =
          fmt::format("{:>7}  {:<11} {:>6} {:>6} {:>5}", c.pid,
                      (i + 1 == w->children.size() ? "`- " : "|- ") + Printable(c.role), Short(c.rss_bytes),
                      Short(c.gpu_bytes), Cores(it == f.cores.end() ? std::nullopt : std::optional(it->second)));
      if (wide) row += fmt::format("  {:<13} {:<31}  {}", "", "", Printable(c.command));
      out.push_back(row);
    }
  }
  if (s.workloads.empty()) out.push_back("      no ML workloads on the pool");
  return out;
}

}  // namespace

const char* TopSortName(TopSort s) { return s == TopSort::kCpu ? "cpu" : "memory"; }

std::optional<double> WorkloadCores(const Workload& w, const std::map<uint32_t, double>& cores) {
  std::optional<double> sum;
  auto add = [&](uint32_t pid) {
    if (auto it = cores.find(pid); it != cores.end()) sum = sum.value_or(0) + it->second;
  };
  add(w.main.pid);
  for (const auto& c : w.children) add(c.pid);
  return sum;
}

std::string Sparkline(const std::vector<uint64_t>& values, size_t width, bool unicode) {
  static const char* kBlocks[] = {"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
  static const char kAscii[] = " .:-=+*#";
  if (values.empty() || width == 0) return "";
  size_t first = values.size() > width ? values.size() - width : 0;
  auto [lo, hi] = std::minmax_element(values.begin() + static_cast<std::ptrdiff_t>(first), values.end());
  std::string out;
  for (size_t i = first; i < values.size(); ++i) {
    size_t level = 7;
    if (*hi > *lo)
      level =
          static_cast<size_t>(std::lround(7.0 * static_cast<double>(values[i] - *lo) / static_cast<double>(*hi - *lo)));
    out += unicode ? std::string(kBlocks[level]) : std::string(1, kAscii[level]);
  }
  return out;
}

std::vector<std::string> RenderTopLines(const TopFrame& f, const TopView& v) {
  const int width = std::max(v.width, 20);
  std::vector<std::string> lines;
  lines.push_back(fmt::format("sparkops top  {}  every {:g}s{}  q quit  s sort  t trees  p pause",
                              FormatUtcMillis(f.sample.time).substr(0, 19) + "Z", f.interval_s,
                              v.paused ? "  PAUSED" : ""));
  for (auto& l : PoolLines(f, v)) lines.push_back(std::move(l));
  for (auto& l : GpuLines(f)) lines.push_back(std::move(l));
  lines.push_back(PsiLine(f));
  for (auto& l : RunLines(f)) lines.push_back(std::move(l));
  for (auto& l : KernelLines(f)) lines.push_back(std::move(l));
  auto procs = ProcessLines(f, v);
  size_t room = v.height > static_cast<int>(lines.size()) ? static_cast<size_t>(v.height) - lines.size() : 0;
  if (procs.size() > room && room >= 1) {
    size_t more = procs.size() - (room - 1);
    procs.resize(room - 1);
    procs.push_back(fmt::format("      +{} more (a taller terminal shows them)", more));
  } else if (procs.size() > room) {
    procs.clear();
  }
  for (auto& l : procs) lines.push_back(std::move(l));
  for (auto& l : lines) l = Cut(l, width);
  return lines;
}

std::string RenderTopText(const TopFrame& frame, const TopView& view) {
  std::string out;
  for (const auto& l : RenderTopLines(frame, view)) out += l + "\n";
  return out;
}

nlohmann::ordered_json TopToJson(const TopFrame& f) {
  using J = nlohmann::ordered_json;
  J j{{"schema", kTopSchema}, {"time", FormatUtcMillis(f.sample.time)}, {"interval_s", f.interval_s}};
  J pool = J::object();
  if (const auto& m = f.sample.mem) {
    auto put = [&](const char* k, std::optional<uint64_t> v) {
      if (v) pool[k] = *v;
    };
    put("mem_total_bytes", m->total);
    put("mem_available_bytes", m->available);
    put("page_cache_bytes", m->PageCache());
    put("swap_total_bytes", m->swap_total);
    put("swap_used_bytes", m->SwapUsed());
    put("mlocked_bytes", m->mlocked);
    put("shmem_bytes", m->shmem);
  }
  pool["available_history_bytes"] = f.available_history;
  j["pool"] = pool;
  if (f.guard)
    j["guard"] =
        J{{"min_available_bytes", f.guard->min_available_bytes}, {"pid", f.guard->pid}, {"mode", f.guard->mode}};
  else j["guard"] = nullptr;
  J gpu = J::object();
  gpu["source"] = f.sample.gpu_source;
  if (!f.sample.gpu_note.empty()) gpu["note"] = f.sample.gpu_note;
  if (const auto& g = f.sample.gpu; g && g->error.empty()) {
    gpu["name"] = g->name;
    if (g->temp_c) gpu["temp_c"] = *g->temp_c;
    if (g->power_w) gpu["power_w"] = *g->power_w;
    if (g->sm_clock_mhz) gpu["sm_clock_mhz"] = *g->sm_clock_mhz;
    if (g->sm_clock_max_mhz) gpu["sm_clock_max_mhz"] = *g->sm_clock_max_mhz;
    if (g->util_pct) gpu["util_pct"] = *g->util_pct;
    if (g->clock_event_reasons) gpu["clock_event_reasons"] = DecodeReasons(*g->clock_event_reasons);
    if (g->energy_mj) gpu["energy_mj"] = *g->energy_mj;
  }
  j["gpu"] = gpu;
  J power = J::object();
  if (const auto& p = f.sample.power) {
    power["spbm"] = p->spbm;
    if (p->prochot) power["prochot"] = *p->prochot != 0;
    if (p->pl_level) power["pl_level"] = *p->pl_level;
    power["rails_w"] = p->rails_w;
    if (auto w = p->SocPkgW()) power["pkg_w"] = *w;
    if (p->cpu_temp_c) power["cpu_temp_c"] = *p->cpu_temp_c;
    if (p->soc_temp_c) power["soc_temp_c"] = *p->soc_temp_c;
  }
  j["power"] = power;
  J pressure = J::object();
  if (const auto& h = f.sample.host) {
    pressure["cpu_io_source"] = h->source;
    if (h->cpu_some) pressure["cpu_some_avg10"] = *h->cpu_some;
    if (h->io_some) pressure["io_some_avg10"] = *h->io_some;
    if (h->io_full) pressure["io_full_avg10"] = *h->io_full;
  }
  if (f.memory_psi) {
    if (f.memory_psi->some) pressure["memory_some_avg10"] = f.memory_psi->some->avg10;
    if (f.memory_psi->full) pressure["memory_full_avg10"] = f.memory_psi->full->avg10;
  }
  j["pressure"] = pressure;
  J procs = J::array();
  if (f.scan) {
    for (const auto& w : f.scan->workloads) {
      J p = WorkloadToJson(w);
      if (auto c = WorkloadCores(w, f.cores)) p["cpu_cores"] = *c;
      procs.push_back(std::move(p));
    }
  } else {
    j["processes_error"] = f.scan_error;
  }
  j["processes"] = procs;
  J runs = J::array();
  for (const RunProgress& r : f.runs) {
    J x{{"pid", r.pid}, {"uid", r.uid}, {"run_dir", r.run_dir}};
    if (!r.command.empty()) x["command"] = r.command;
    if (r.step) x["step"] = *r.step;
    if (r.total_steps) x["total_steps"] = *r.total_steps;
    if (r.s_per_step) x["s_per_step"] = *r.s_per_step;
    if (r.baseline_s) x["baseline_s"] = *r.baseline_s, x["baseline_from"] = r.baseline_from;
    if (r.ratio) x["ratio"] = *r.ratio;
    x["verdict"] = r.verdict;
    x["min_available_bytes"] = r.min_available_bytes;
    if (auto m = RunMargin(f, r)) x["margin_bytes"] = *m;
    if (!r.note.empty()) x["note"] = r.note;
    if (r.energy_wh) {
      x["energy_wh"] = *r.energy_wh, x["energy_source"] = r.energy_source;
      x["energy_span_s"] = r.energy_span_s, x["energy_from_start"] = r.energy_from_start;
    }
    if (r.wh_per_step) x["wh_per_step"] = *r.wh_per_step;
    if (r.wh_per_1k_tokens) x["wh_per_1k_tokens"] = *r.wh_per_1k_tokens;
    if (!r.energy_note.empty()) x["energy_note"] = r.energy_note;
    runs.push_back(std::move(x));
  }
  j["runs"] = runs;
  j["runs_ignored"] = f.runs_ignored;
  if (f.kernel) {
    J k = J::object();
    if (!f.kernel->note.empty()) k["note"] = f.kernel->note;
    J counts = J::object();
    for (const KernelSignDef& d : KernelSignTable()) counts[d.name] = f.kernel->counts[static_cast<int>(d.kind)];
    k["counts"] = counts;
    J recent = J::array();
    for (const KernelSign& s : f.kernel->recent) {
      J r{{"kind", KernelSignInfo(s.kind).name}, {"seq", s.seq}, {"usec", s.usec}, {"line", s.line}};
      if (s.xid) r["xid"] = *s.xid;
      if (s.pid) r["pid"] = *s.pid;
      if (!s.name.empty()) r["name"] = s.name;
      recent.push_back(std::move(r));
    }
    k["recent"] = recent;
    j["kernel"] = k;
  }
  return j;
}

}  // namespace sparkops
