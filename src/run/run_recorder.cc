#include "run/run_recorder.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/json_text.h"
#include "base/strings.h"
#include "host/write_file.h"
#include "telemetry/csv.h"
#include "telemetry/event_schema.h"

namespace sparkops {

std::string TrainLogRecord(SysTime t, char stream, std::string_view text) {
  std::string rec = FormatUtcMillis(t);
  rec += '\t';
  rec += stream;
  rec += '\t';
  rec += text;
  rec += '\n';
  return rec;
}

std::vector<nlohmann::ordered_json> SampleEventRecords(const Sample& s) {
  std::vector<nlohmann::ordered_json> out;
  for (const std::string& e : s.events) {
    if (StartsWith(e, "kernel_")) continue;  // issue 33: written below from the records themselves
    nlohmann::ordered_json j;
    j["time"] = FormatUtcMillis(s.time);
    const SampleEvent ev = DecodeSampleEvent(e);  // telemetry/event_schema.h
    if ((ev.type == "throttle_start" && ev.has_detail) || e == "throttle_end") {
      j["type"] = "throttle";
      j["state"] = e == "throttle_end" ? "end" : "start";
      j["reasons"] = ev.detail;
      if (s.gpu && s.gpu->clock_event_reasons) j["bits"] = fmt::format("0x{:x}", *s.gpu->clock_event_reasons);
    } else if (ev.has_detail) {  // missed_slots:N, pl_level_change:1->2, a name not in the table
      j["type"] = ev.type;
      // Only a count type records its detail as a number; any other detail (an Xid code, free
      // text) is kept as the text it was.
      auto n = ParseUint(ev.detail);
      if (n && DetailOf(ev.type) == EventDetail::kCount) j["count"] = *n;
      else j["detail"] = ev.detail;
    } else {
      j["type"] = e;  // pd_degraded, thermal_signature, hot
    }
    if (s.gpu && s.gpu->temp_c) j["gpu_temp_c"] = *s.gpu->temp_c;
    if (s.gpu && s.gpu->sm_clock_mhz) j["sm_clock_mhz"] = *s.gpu->sm_clock_mhz;
    out.push_back(std::move(j));
  }
  for (const KernelSign& k : s.kernel) {  // issue 33: kernel_nvrm_no_memory, kernel_xid, kernel_oom_kill, ...
    nlohmann::ordered_json j;
    j["time"] = FormatUtcMillis(s.time);
    j["type"] = KernelSignInfo(k.kind).event;
    if (k.xid) j["code"] = *k.xid;
    if (k.pid) j["pid"] = *k.pid;
    if (!k.name.empty()) j["name"] = k.name;
    j["seq"] = k.seq;
    j["line"] = k.line;
    out.push_back(std::move(j));
  }
  return out;
}

Result<RunRecorder> RunRecorder::Create(const std::string& dir) {
  auto out = OutDir::Open("--out", dir, /*create=*/true);
  if (!out) return std::unexpected(out.error());
  // Any file of a run means another run's record: appending to it would mix two runs. A link of
  // that name (dangling or not) counts too: it is never followed.
  for (const char* f : {"train.log", "events.jsonl", "thermal.csv", "meta.json", "summary.json"})
    if (out->Has(f))
      return InputError(fmt::format("--out {}: already holds a run ({}); choose a new directory", dir, f));
  RunRecorder r;
  r.dir_ = dir;
  auto log = CsvAppender::Open(*out, "train.log", "", /*create_new=*/true);
  if (!log) return std::unexpected(log.error());
  auto events = CsvAppender::Open(*out, "events.jsonl", "", /*create_new=*/true);
  if (!events) return std::unexpected(events.error());
  auto thermal = CsvAppender::Open(*out, "thermal.csv", CsvHeader(), /*create_new=*/true);
  if (!thermal) return std::unexpected(thermal.error());
  r.out_ = std::make_unique<OutDir>(std::move(*out));
  r.log_.emplace(std::move(*log));
  r.events_.emplace(std::move(*events));
  r.thermal_.emplace(std::move(*thermal));
  return r;
}

Result<void> RunRecorder::Log(SysTime t, char stream, std::string_view text) {
  std::lock_guard lock(*mu_);
  return log_->Append(TrainLogRecord(t, stream, text), /*sync=*/false);
}

Result<void> RunRecorder::Event(SysTime t, const std::string& type, const nlohmann::ordered_json& fields) {
  nlohmann::ordered_json j;
  j["time"] = FormatUtcMillis(t);
  j["type"] = type;
  if (fields.is_object())
    for (auto it = fields.begin(); it != fields.end(); ++it) j[it.key()] = it.value();
  return EventJson(j);
}

Result<void> RunRecorder::EventJson(const nlohmann::ordered_json& j) {
  std::lock_guard lock(*mu_);
  auto w = events_->Append(JsonText(j, -1) + "\n");
  if (observer_) observer_(j);  // told even when the disk is full
  return w;
}

Result<void> RunRecorder::Thermal(const Sample& s) {
  for (const auto& j : SampleEventRecords(s))
    if (auto w = EventJson(j); !w) return w;
  std::lock_guard lock(*mu_);
  if (auto w = thermal_->Append(CsvRow(s)); !w) return w;
  return log_->Sync();
}

Result<void> RunRecorder::WriteFile(const std::string& name, std::string_view content) {
  return out_->WriteAtomically(name, content);
}

}  // namespace sparkops
