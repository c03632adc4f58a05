#include "analysis/contention.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "analysis/culprits.h"
#include "analysis/step_line.h"

namespace sparkops {

namespace {
using Field = std::optional<double> ThermalRow::*;
/// The contention columns read back by name: the field (null for pressure_source) and whether the
/// value is a percentage (else a core count).
struct ContentionCol {
  std::string_view name;
  Field field;
  bool pct;
};
constexpr ContentionCol kCols[] = {{"cpu_pressure_pct", &ThermalRow::cpu_pressure, true},
                                   {"io_pressure_some_pct", &ThermalRow::io_pressure_some, true},
                                   {"io_pressure_full_pct", &ThermalRow::io_pressure_full, true},
                                   {"job_cores", &ThermalRow::job_cores, false},
                                   {"other_cores", &ThermalRow::other_cores, false},
                                   {"job_procs", &ThermalRow::job_procs, false},
                                   {"job_cpus", &ThermalRow::job_cpus, false},
                                   {"others_on_job_cpus", &ThermalRow::others_on_job_cpus, false},
                                   {"cpu_steal_pct", &ThermalRow::cpu_steal_pct, true},
                                   {"pressure_source", nullptr, false}};
const ContentionCol* FindCol(std::string_view name) {
  for (const auto& c : kCols)
    if (c.name == name) return &c;
  return nullptr;
}

std::optional<double> Median(const std::vector<const ThermalRow*>& rows, Field f) {
  std::vector<double> v;
  for (auto* r : rows)
    if (r->*f) v.push_back(*(r->*f));
  if (v.empty()) return std::nullopt;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

bool IsContentionColumn(std::string_view lower_name) { return FindCol(lower_name) != nullptr; }

std::string SetContentionCell(ThermalRow& r, std::string_view lower_name, std::string_view v) {
  const ContentionCol* col = FindCol(lower_name);
  if (!col) return "unknown column";
  if (!col->field) {  // pressure_source
    if (v != "psi" && v != "runnable") return "'" + std::string(v) + "' (expected psi or runnable)";
    r.pressure_source = std::string(v);
    return "";
  }
  size_t used = 0;
  auto num = ParseNumberPrefix(v, &used);
  if (!num || used != v.size() || !std::isfinite(*num) || *num < 0 || (col->pct && *num > 100) || *num > 1e6)
    return "'" + std::string(v) + "' is not a " + (col->pct ? "percentage" : "core count");
  r.*(col->field) = *num;
  return "";
}

std::vector<ContentionFinding> FindHostContention(const std::vector<const ThermalRow*>& before,
                                                  const std::vector<const ThermalRow*>& span,
                                                  const std::vector<RunEvent>& events, int64_t t0, int64_t t1,
                                                  std::vector<std::string>* ruled) {
  std::vector<ContentionFinding> out;
  std::string source;
  for (auto* r : span)
    if (!r->pressure_source.empty()) source = r->pressure_source;
  const char* what = source == "runnable" ? " (estimated from runnable tasks: no PSI)" : "";
  auto med = [&](Field f) { return std::pair{Median(before, f), Median(span, f)}; };
  // The job's share of the CPUs and the rest of the host's, before and over the span.
  auto [jb, js] = med(&ThermalRow::job_cores);
  auto [ob, os] = med(&ThermalRow::other_cores);
  auto [nb, ns] = med(&ThermalRow::others_on_job_cpus);
  auto [pb, ps] = med(&ThermalRow::job_procs);
  auto [cb, cs] = med(&ThermalRow::job_cpus);
  std::string share;
  if (jb && js)
    share += fmt::format("; the job's share went from {:.1f} to {:.1f} cores{}", *jb, *js,
                         cs ? fmt::format(" of its {:.0f} CPU{}", *cs, *cs == 1 ? "" : "s") : "");
  if (nb && ns) share += fmt::format("; others on the job's CPUs from {:.1f} to {:.1f} cores", *nb, *ns);
  if (ob && os) share += fmt::format("; the rest of the host from {:.1f} to {:.1f} cores", *ob, *os);
  // Only a job that used the CPU can lose it: an I/O-bound job's share falls while it waits.
  const bool job_fell = jb && js && *jb >= kJobCpuBound && *js <= (1 - kJobShareFall) * *jb;
  const bool saturated = jb && *jb >= kJobCpuBound && js && ns && cs && *js + *ns >= 0.9 * *cs;
  // 1. Others on the job's CPUs (the job's affinity and /proc/stat), else the host-wide split.
  std::optional<std::string> took;
  // On a busy host the job shares its CPUs before too: the others' rise is then what the job
  // lost, so half of that loss (at least 0.1 cores) is enough.
  const double need = jb && js && *jb > *js ? std::max(0.1, std::min(kCoresRise, 0.5 * (*jb - *js))) : kCoresRise;
  if (nb && ns) {
    if (*ns - *nb >= need && (job_fell || saturated))
      took = fmt::format("others took {:.1f} more cores of the job's CPUs", *ns - *nb);
  } else if (ob && os && *os - *ob >= need && job_fell) {
    took = fmt::format("the rest of the host took {:.1f} more cores while the job's share fell", *os - *ob);
  }
  // 2. The job's own new processes: its tree grew while no one else took its CPUs.
  const bool grew = pb && ps && *ps >= *pb + 1;
  // Named from a small rise (on a shared CPU a child gets a fraction of a core); without a grown
  // tree, only a new process of its own that took at least kOwnRise makes the cause.
  const auto own = RankCulprits(events, t0, t1, "job_top", CulpritKind::kCpu, kCulpritRise);
  const bool own_new = std::any_of(own.begin(), own.end(),
                                   [](const Culprit& c) { return c.before_rate < 0.05 && c.Rise() >= kOwnRise; });
  bool own_records = false;
  for (const RunEvent& e : events)
    own_records |= e.type == "host_contention" && e.t_ms >= t0 && e.t_ms <= t1 && e.record.contains("job_top");
  if (!took && (grew || own_new) && !(nb && ns && *ns - *nb >= need)) {
    ContentionFinding f{"job_processes", {}};
    f.evidence.push_back((grew ? fmt::format("the job's own processes went from {:.0f} to {:.0f}", *pb, *ps)
                               : std::string("the job's own processes took more CPU")) +
                         share);
    f.evidence.push_back(
        own.empty() && own_records
            ? fmt::format("its processes: none rose by {:.2f} cores or more in the span's records", kCulpritRise)
        : own.empty() ? "its processes: no record of them in the span (run records them when the "
                        "job's tree grows or pressure passes its threshold)"
                      : "its processes: " + CulpritText(own, CulpritKind::kCpu));
    out.push_back(std::move(f));
  } else {
    ruled->push_back(fmt::format("job_processes: {}",
                                 took ? "others took the job's CPUs"
                                 : pb && ps
                                     ? fmt::format("the job's tree went from {:.0f} to {:.0f} processes", *pb, *ps)
                                     : std::string("the job's process count not recorded")));
  }
  const bool own_found = !out.empty();
  // 3. CPU (the share above, PSI as evidence; PSI alone where the shares were not recorded) and I/O.
  auto [qb, qs] = med(&ThermalRow::cpu_pressure);
  const bool psi_rose = qs && *qs >= kPressureHighPct && *qs >= qb.value_or(0) + kPressureRisePct;
  const std::string psi = qs ? fmt::format("CPU pressure {:.0f} % over the span{}{}", *qs,
                                           qb ? fmt::format(" ({:.0f} % before)", *qb) : "", what)
                             : std::string("CPU pressure not recorded");
  // The shares judge only a job that used the CPU (and was seen: a job outside a --root fixture's
  // /proc reads 0); otherwise PSI decides, as evidence of the weaker kind.
  const bool shares_judge = jb && js && *jb >= kJobCpuBound && ((nb && ns) || (ob && os));
  if (took || (psi_rose && !own_found && !shares_judge)) {
    ContentionFinding f{"cpu_contention", {}, !took};
    f.evidence.push_back((took ? *took + "; " : std::string()) + psi + share);
    auto top = RankCulprits(events, t0, t1, "top", CulpritKind::kCpu, kCulpritRise);
    f.evidence.push_back(top.empty() ? "outside the job: no top-consumer record in the span (run records them when "
                                       "pressure passes its threshold or others use the job's CPUs; `sample` does not)"
                                     : "outside the job: " + CulpritText(top, CulpritKind::kCpu));
    out.push_back(std::move(f));
  } else {
    ruled->push_back(
        fmt::format("cpu_contention: {}{} (needs others to take ≥ {:.1f} more cores of the job's CPUs "
                    "while its share falls ≥ {:.0f} %, or, unrecorded shares, PSI ≥ {:.0f} % and +{:.0f} "
                    "points)",
                    own_found ? "the job's own processes took its CPUs; " : "", psi + share, need, 100 * kJobShareFall,
                    kPressureHighPct, kPressureRisePct));
  }
  auto [ib, is] = med(&ThermalRow::io_pressure_some);
  if (!is) {
    ruled->push_back(fmt::format("io_contention: I/O pressure not recorded over this span{}",
                                 source == "runnable" ? " (no PSI: I/O pressure cannot be estimated)" : ""));
  } else if (*is < kPressureHighPct || *is < ib.value_or(0) + kPressureRisePct) {
    ruled->push_back(
        fmt::format("io_contention: I/O pressure {:.0f} % over the span{} (io_contention needs ≥ {:.0f} % "
                    "and +{:.0f} points)",
                    *is, ib ? fmt::format(", {:.0f} % before", *ib) : "", kPressureHighPct, kPressureRisePct));
  } else {
    // The job's own stalls are not contention: who waited on storage in the span's records.
    auto wj = RecordMedian(events, t0, t1, "io_wait", "job"), wo = RecordMedian(events, t0, t1, "io_wait", "others");
    auto top = RankCulprits(events, t0, t1, "top", CulpritKind::kIo, 1e5);
    if (wj && wo && *wj > 0 && *wo == 0 && top.empty()) {
      ruled->push_back(
          fmt::format("io_contention: I/O pressure {:.0f} % but the stalls were the job's own ({:.0f} of "
                      "its processes waiting on storage, none outside)",
                      *is, *wj));
    } else {
      ContentionFinding f{"io_contention", {}};
      f.evidence.push_back(fmt::format("I/O pressure {:.0f} % over the span{}{}", *is,
                                       ib ? fmt::format(" ({:.0f} % before)", *ib) : "",
                                       wj && wo ? fmt::format("; waiting on storage: {:.0f} of the job's processes, "
                                                              "{:.0f} others",
                                                              *wj, *wo)
                                                : std::string()));
      f.evidence.push_back(top.empty() ? "outside the job: no process with readable storage I/O recorded in the span "
                                         "(another user's /proc/PID/io needs root)"
                                       : "outside the job: " + CulpritText(top, CulpritKind::kIo));
      out.push_back(std::move(f));
    }
  }
  // 4. Steal: the hypervisor ran something else on the VM's CPUs.
  auto [sb, ss] = med(&ThermalRow::cpu_steal_pct);
  if (ss && *ss >= kStealHighPct && *ss >= sb.value_or(0) + kStealRisePct)
    out.push_back({"cpu_steal",
                   {fmt::format("steal {:.1f} % of CPU time over the span{}: the hypervisor gave this machine's CPUs "
                                "to other work",
                                *ss, sb ? fmt::format(" ({:.1f} % before)", *sb) : "")}});
  else
    ruled->push_back(ss ? fmt::format("cpu_steal: steal {:.1f} % over the span (needs ≥ {:.0f} % and +{:.0f} points)",
                                      *ss, kStealHighPct, kStealRisePct)
                        : std::string("cpu_steal: steal time not recorded"));
  return out;
}

}  // namespace sparkops
