#pragma once
/// The job's process tree and its share of the CPUs, for `run` (issue #24): every sample reads
/// /proc/*/stat, links processes by ppid (dataloader workers and other descendants count as the
/// job), and turns the CPU time each used since the last sample into cores. When CPU or I/O
/// pressure passes a threshold, a `host_contention` event names the top consumers outside the
/// job (at most one event per `min_gap_s`), with their storage I/O rate where /proc/PID/io is
/// readable (host/proc_io.h; read for those few only, never for every process).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "host/cpu_pressure.h"
#include "host/cpu_times.h"
#include "host/hostfs.h"
#include "host/proc_io.h"
#include "telemetry/sample.h"

namespace sparkops {

/// The /proc/PID/stat fields used here.
struct ProcCpu {
  uint32_t pid = 0, ppid = 0;
  uint64_t ticks = 0;        ///< utime + stime (fields 14 + 15), clock ticks
  uint64_t start_ticks = 0;  ///< field 22: tells a reused pid from the process seen before
  std::string comm;
  char state = '?';                  ///< field 3: R running, S sleeping, D waiting on I/O, ...
  std::optional<unsigned> processor;  ///< field 39: the CPU it last ran on (absent on short lines)
};
/// Pure: one /proc/PID/stat text. comm is found by the last ')'. Error naming the field.
Result<ProcCpu> ParseProcCpu(std::string_view stat);
/// Pure: `root` and every descendant of it by ppid links, sorted.
std::vector<uint32_t> TreeOf(uint32_t root, const std::vector<ProcCpu>& procs);

struct Consumer {
  uint32_t pid = 0;
  std::string comm, cmdline;  ///< cmdline cut to 120 bytes ("" when unreadable)
  double cores = 0;
  double cpu_s = 0;   ///< CPU time since the process started, seconds (utime + stime)
  double start_s = 0; ///< when it started, seconds after boot (/proc/PID/stat field 22)
  char state = '?';   ///< as ProcCpu::state at this reading
  bool on_job_cpus = false;  ///< it last ran on one of the job's CPUs
  std::optional<uint64_t> io_bytes;  ///< read_bytes + write_bytes since it started, when readable
  /// read_bytes + write_bytes per second since the previous Update, when that one listed this
  /// process too; nullopt when /proc/PID/io is unreadable (another user's process) or there is no
  /// such earlier reading.
  std::optional<double> io_bytes_per_s;
};
struct CpuShare {
  double job_cores = 0, other_cores = 0;  ///< CPU time used since the last call / wall time
  size_t job_procs = 0;
  /// The top_n busiest outside the job, then busier ones that last ran on the job's CPUs until
  /// top_n of the list did, then up to two waiting on I/O (state D).
  std::vector<Consumer> top_outside;
  std::vector<Consumer> top_job;          ///< the job's busiest processes, highest first
  size_t job_io_wait = 0, other_io_wait = 0;  ///< processes in state D: the job's, the others'
  // From /proc/stat and the job's affinity (host/cpu_times.h); absent when unreadable.
  std::optional<unsigned> job_cpus;            ///< CPUs the job's main process may run on
  std::optional<double> others_on_job_cpus;    ///< busy cores on those CPUs not used by the job
  std::optional<double> steal_pct;             ///< steal time of all CPUs, percent
  std::optional<double> uptime_s;              ///< /proc/uptime at this reading (for the consumers' ages)
};

class JobCpuTracker {
 public:
  /// `root`: the job's pid; `self`: sparkops' own pid (counted neither as job nor as others); both
  /// as this process knows them (fork, getpid): under the real root they are found under /proc's
  /// numbering (host/pidns.h) on the first Update.
  JobCpuTracker(uint32_t root, uint32_t self, double ticks_per_s);
  /// Reads /proc/*/stat under `fs`. The first call only primes the counters (nullopt); so does
  /// a call less than 0.2 s after the last one. `top_n` consumers outside the job are listed,
  /// each with its cmdline and I/O rate (/proc/PID/cmdline, /proc/PID/io: 2 × top_n reads).
  std::optional<CpuShare> Update(const HostFs& fs, std::chrono::steady_clock::time_point now, size_t top_n = 3);
  /// Pure core of Update: the same from an already-read table.
  std::optional<CpuShare> Update(const std::vector<ProcCpu>& table, std::chrono::steady_clock::time_point now,
                                 size_t top_n = 3);

 private:
  uint32_t root_, self_;
  bool mapped_ = false;  ///< root_/self_ are /proc's numbers
  double hz_;
  std::unordered_map<uint32_t, std::pair<uint64_t, uint64_t>> prev_;  ///< pid -> (start_ticks, ticks)
  std::optional<std::chrono::steady_clock::time_point> last_;
  std::unordered_map<uint32_t, IoMark> io_prev_;  ///< the I/O readings of the last Update's top consumers
  std::optional<StatCpus> stat_prev_;             ///< /proc/stat at the last Update
  std::vector<unsigned> allowed_;                 ///< the job's CPUs at the last Update (empty: unknown)
};

/// Decides when a sample's pressure is worth a `host_contention` event and builds it.
struct ContentionWatchOptions {
  double cpu_pct = 20.0;  ///< CPU pressure (some avg10, or the runnable estimate) at or above
  double io_pct = 20.0;   ///< I/O pressure (some avg10) at or above
  double min_gap_s = 5.0; ///< at most one event per this many seconds
  /// Also when the rest of the host used at least this many cores of the job's CPUs (a hog on
  /// them raises no PSI worth the name on an already-saturated host), or the job's tree grew.
  double others_on_job_cpus = 0.5;
};
/// The event's fields (without time/type), or nullopt when nothing passes or the last event was
/// too recent (`last` is updated when an event is made).
/// `job_grew`: the job's tree grew at this sample or less than a minute ago (JobContention).
std::optional<nlohmann::ordered_json> ContentionEvent(const HostPressure& p, const std::optional<CpuShare>& share,
                                                      std::chrono::steady_clock::time_point now,
                                                      std::optional<std::chrono::steady_clock::time_point>* last,
                                                      const ContentionWatchOptions& o = {}, bool job_grew = false);

/// What `run` adds to each sample: the job's and the others' cores, and the host_contention
/// event to record, if any. One per run (sampler thread only).
class JobContention {
 public:
  JobContention(uint32_t job_pid, uint32_t self_pid);
  /// Sets s.job_cores / s.other_cores, and the job's CPUs, the others on them, its process count
  /// and steal (from the second sample on); returns the event fields
  /// to record as `host_contention`, if the sample's pressure calls for one.
  std::optional<nlohmann::ordered_json> Fill(const HostFs& fs, Sample& s);

 private:
  JobCpuTracker tracker_;
  std::optional<std::chrono::steady_clock::time_point> last_event_;
  size_t last_procs_ = 0;
  std::optional<std::chrono::steady_clock::time_point> grew_at_;  ///< when the job's tree last grew
  static constexpr double kJobTreeWatchS = 60;  ///< records follow a growth for this long
};

}  // namespace sparkops
