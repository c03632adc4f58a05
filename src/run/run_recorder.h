#pragma once
/// Writes a run directory (docs/run-directory.md): train.log records, events.jsonl records,
/// meta.json, thermal.csv rows. Every record is one write() to an O_APPEND descriptor, so a
/// kill -9 of sparkops can tear only the record being written, the last one (Linux ends a file
/// write between pages when SIGKILL arrives; analyze ignores such a tail); events and thermal rows
/// are also fdatasync'd, and train.log is synced once per sampling interval (a sync per output
/// line would throttle a job that prints fast).
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/timefmt.h"
#include "host/write_file.h"
#include "telemetry/appender.h"
#include "telemetry/sample.h"

namespace sparkops {

/// `<UTC ms timestamp>\t<o|e>\t<text>\n` (pure).
std::string TrainLogRecord(SysTime t, char stream, std::string_view text);
/// The events.jsonl records a sample's sampler events become (pure): `throttle_start:a+b` ->
/// {type throttle, state start, reasons, bits}; `throttle_end` -> state end; others by name, with
/// `count` for a count type of telemetry/event_schema.h and `detail` (text) for any other detail.
std::vector<nlohmann::ordered_json> SampleEventRecords(const Sample& s);

class RunRecorder {
 public:
  /// Creates `dir` (and parents) and opens it once (host/write_file.h's OutDir: as root only a
  /// directory root owns), then creates its files new (O_EXCL|O_NOFOLLOW). Input error when DIR
  /// already holds any file of a run (train.log, events.jsonl, thermal.csv, meta.json,
  /// summary.json), a link of that name included: a run directory is never overwritten nor mixed
  /// with another run.
  static Result<RunRecorder> Create(const std::string& dir);
  RunRecorder(RunRecorder&&) noexcept = default;

  const std::string& dir() const { return dir_; }
  /// train.log's and events.jsonl's descriptors (O_APPEND; train.log read-write), for the sentinel.
  int log_fd() const { return log_->fd(); }
  int events_fd() const { return events_->fd(); }
  /// One output record (thread-safe).
  Result<void> Log(SysTime t, char stream, std::string_view text);
  /// One event: `time` and `type` are put first (thread-safe, synced).
  Result<void> Event(SysTime t, const std::string& type, const nlohmann::ordered_json& fields = {});
  /// One thermal.csv row (synced) and its events; also syncs train.log.
  Result<void> Thermal(const Sample& s);
  /// One already-built record (must hold `time` and `type`).
  Result<void> EventJson(const nlohmann::ordered_json& j);
  /// Every event record written from now on is also handed to `f` (after it is written, in order,
  /// under the recorder's lock: `f` must not block nor write an event itself). `run --notify`.
  void Observe(std::function<void(const nlohmann::ordered_json&)> f) { observer_ = std::move(f); }
  /// Writes a whole file in DIR (meta.json, summary.json, report.html): OutDir::WriteAtomically.
  Result<void> WriteFile(const std::string& name, std::string_view content);

 private:
  RunRecorder() = default;
  std::string dir_;
  std::unique_ptr<OutDir> out_;
  std::optional<CsvAppender> log_, events_, thermal_;
  std::function<void(const nlohmann::ordered_json&)> observer_;
  std::unique_ptr<std::mutex> mu_ = std::make_unique<std::mutex>();
};

}  // namespace sparkops
