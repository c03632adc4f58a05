#include "telemetry/job_tree.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include <unistd.h>

#include "base/strings.h"
#include "host/pidns.h"

namespace sparkops {

Result<ProcCpu> ParseProcCpu(std::string_view stat) {
  ProcCpu p;
  const size_t open = stat.find('('), close = stat.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return InputError("stat: no (comm) field");
  auto pid = ParseUint(Trim(stat.substr(0, open)));
  if (!pid || *pid > UINT32_MAX) return InputError("stat: field 1 (pid): not a pid");
  p.pid = static_cast<uint32_t>(*pid);
  p.comm = std::string(stat.substr(open + 1, close - open - 1));
  // Fields 3.. after ") ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
  // utime stime cutime cstime priority nice threads itrealvalue starttime
  std::string_view rest = stat.substr(close + 1);
  uint64_t f[20] = {};
  size_t n = 0;
  for (size_t i = 0; i < rest.size() && n < 37;) {
    while (i < rest.size() && rest[i] == ' ') ++i;
    size_t b = i;
    while (i < rest.size() && rest[i] != ' ' && rest[i] != '\n') ++i;
    if (i == b) break;
    std::string_view w = rest.substr(b, i - b);
    if (n == 0) {  // state: a letter
      p.state = w.size() == 1 ? w[0] : '?';
      ++n;
      continue;
    }
    if (n >= 20) {  // fields 23..39: only field 39 (processor) is kept; rsslim may exceed int64
      if (n == 36)
        if (auto cpu = ParseUint(w); cpu && *cpu < kMaxCpus) p.processor = static_cast<unsigned>(*cpu);
      ++n;
      continue;
    }
    int64_t v = 0;
    auto [q, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc() || q != w.data() + w.size())
      return InputError(fmt::format("stat: field {}: not a number: '{}'", n + 3, w));
    f[n++] = static_cast<uint64_t>(v < 0 ? 0 : v);
  }
  if (n < 20) return InputError(fmt::format("stat: {} fields after comm, need 20", n));
  p.ppid = static_cast<uint32_t>(f[1]);
  if (f[11] > UINT64_MAX / 2 || f[12] > UINT64_MAX / 2) return InputError("stat: utime/stime out of range");
  p.ticks = f[11] + f[12];
  p.start_ticks = f[19];
  return p;
}

std::vector<uint32_t> TreeOf(uint32_t root, const std::vector<ProcCpu>& procs) {
  std::unordered_map<uint32_t, std::vector<uint32_t>> children;
  for (const ProcCpu& p : procs)
    if (p.pid != p.ppid) children[p.ppid].push_back(p.pid);
  std::vector<uint32_t> tree{root}, todo{root};
  while (!todo.empty()) {
    uint32_t q = todo.back();
    todo.pop_back();
    auto it = children.find(q);
    if (it == children.end()) continue;
    for (uint32_t c : it->second) {
      if (std::find(tree.begin(), tree.end(), c) != tree.end()) continue;  // a cycle in a hostile table
      tree.push_back(c);
      todo.push_back(c);
    }
  }
  std::sort(tree.begin(), tree.end());
  return tree;
}

JobCpuTracker::JobCpuTracker(uint32_t root, uint32_t self, double ticks_per_s)
    : root_(root), self_(self), hz_(ticks_per_s > 0 ? ticks_per_s : 100) {}

std::optional<CpuShare> JobCpuTracker::Update(const HostFs& fs, std::chrono::steady_clock::time_point now,
                                              size_t top_n) {
  if (!mapped_) {
    auto root = ProcPidOf(fs, root_);
    if (!root) return std::nullopt;  // not (yet) visible in /proc: nothing to attribute
    root_ = *root;
    if (self_) self_ = ProcPidOf(fs, self_).value_or(0);
    mapped_ = true;
  }
  auto dirs = fs.List("/proc");
  if (!dirs) return std::nullopt;
  std::vector<ProcCpu> table;
  table.reserve(dirs->size());
  for (const std::string& d : *dirs) {
    if (d.empty() || d.size() > 10 || !std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    auto text = fs.Read("/proc/" + d + "/stat", 4096);
    if (!text) continue;  // gone since the listing
    if (auto p = ParseProcCpu(*text)) table.push_back(std::move(*p));
  }
  // The job's CPUs (its main process's affinity; it may change) and /proc/stat, before the table
  // is folded, so that Update(table) can tell who last ran on them.
  if (auto cpus = ReadCpusAllowed(fs, root_)) allowed_ = std::move(*cpus);
  std::optional<StatCpus> stat;
  if (auto parsed = ReadCpuTimes(fs)) stat = std::move(*parsed);
  const auto last = last_;
  auto share = Update(table, now, top_n);
  if (share && stat && stat_prev_ && last) {
    const double dt = std::chrono::duration<double>(now - *last).count();
    if (auto all = CpuDeltaOn(*stat_prev_, *stat, {}, dt, hz_)) share->steal_pct = all->steal_pct;
    if (!allowed_.empty())
      if (auto on = CpuDeltaOn(*stat_prev_, *stat, allowed_, dt, hz_); on && on->cpus) {
        share->job_cpus = on->cpus;
        share->others_on_job_cpus = std::max(0.0, on->busy_cores - share->job_cores);
      }
  }
  if (stat) stat_prev_ = std::move(stat);
  if (!share) return share;
  if (auto up = ReadUptime(fs)) share->uptime_s = *up;
  std::unordered_map<uint32_t, IoMark> io_now;
  for (Consumer& c : share->top_outside) {
    const std::string dir = "/proc/" + std::to_string(c.pid);
    if (auto cmd = fs.Read(dir + "/cmdline", 4096)) {
      std::string s = *cmd;
      std::replace(s.begin(), s.end(), '\0', ' ');
      c.cmdline = std::string(Trim(s)).substr(0, 120);
    }
    auto io = ReadProcIo(fs, c.pid);  // EACCES for another user's process: no reading
    if (!io || io->write_bytes > UINT64_MAX - io->read_bytes) continue;
    c.io_bytes = io->read_bytes + io->write_bytes;
    auto it = prev_.find(c.pid);  // Update(table) left this sample's (start_ticks, ticks) there
    const IoMark mark{it != prev_.end() ? it->second.first : 0, io->read_bytes + io->write_bytes, now};
    if (auto before = io_prev_.find(c.pid); before != io_prev_.end())
      c.io_bytes_per_s = IoBytesPerSecond(before->second, mark);
    io_now[c.pid] = mark;
  }
  io_prev_ = std::move(io_now);
  return share;
}

std::optional<CpuShare> JobCpuTracker::Update(const std::vector<ProcCpu>& table,
                                              std::chrono::steady_clock::time_point now, size_t top_n) {
  std::unordered_map<uint32_t, std::pair<uint64_t, uint64_t>> cur;
  cur.reserve(table.size());
  for (const ProcCpu& p : table) cur[p.pid] = {p.start_ticks, p.ticks};
  const bool primed = last_.has_value();
  const double dt = primed ? std::chrono::duration<double>(now - *last_).count() : 0;
  if (primed && dt < 0.2) return std::nullopt;
  std::optional<CpuShare> out;
  if (primed) {
    CpuShare s;
    const std::vector<uint32_t> tree = TreeOf(root_, table);
    std::vector<Consumer> waiting;  // outside the job, in state D
    for (const ProcCpu& p : table) {
      if (p.pid == self_) continue;
      auto it = prev_.find(p.pid);
      // a process new since the last call (or a reused pid) used all its time in the interval
      const uint64_t before = it != prev_.end() && it->second.first == p.start_ticks && it->second.second <= p.ticks
                                  ? it->second.second
                                  : 0;
      const double cores = static_cast<double>(p.ticks - before) / hz_ / dt;
      if (it == prev_.end() && cores > 64) continue;  // started long before the first look: unknown
      Consumer c;
      c.pid = p.pid;
      c.comm = p.comm;
      c.cores = cores;
      c.cpu_s = static_cast<double>(p.ticks) / hz_;
      c.start_s = static_cast<double>(p.start_ticks) / hz_;
      c.state = p.state;
      c.on_job_cpus = p.processor && std::binary_search(allowed_.begin(), allowed_.end(), *p.processor);
      if (std::binary_search(tree.begin(), tree.end(), p.pid)) {
        s.job_cores += cores;
        ++s.job_procs;
        s.job_io_wait += p.state == 'D';
        if (cores >= 0.05) s.top_job.push_back(std::move(c));
      } else {
        s.other_cores += cores;
        s.other_io_wait += p.state == 'D';
        if (p.state == 'D') waiting.push_back(c);
        if (cores >= 0.05) s.top_outside.push_back(std::move(c));
      }
    }
    auto by_cores = [](const Consumer& a, const Consumer& b) { return a.cores > b.cores; };
    std::sort(s.top_job.begin(), s.top_job.end(), by_cores);
    if (s.top_job.size() > top_n) s.top_job.resize(top_n);
    // The busiest outside, then the busiest of those that last ran on the job's CPUs (a hog pinned
    // beside the job gets a share of one core, less than a parallel build's processes elsewhere).
    std::stable_sort(s.top_outside.begin(), s.top_outside.end(), by_cores);
    std::vector<Consumer> top;
    size_t on_job = 0;
    for (size_t i = 0; i < s.top_outside.size(); ++i) {
      const bool more_on_job = s.top_outside[i].on_job_cpus && on_job < top_n;
      if (i >= top_n && !more_on_job) continue;
      on_job += s.top_outside[i].on_job_cpus;
      top.push_back(s.top_outside[i]);
    }
    s.top_outside = std::move(top);
    // An I/O hog uses little CPU: two of the processes waiting on storage join the list, whatever
    // their CPU (on a busy host a dd at 0.1 cores is not among the busiest), so that their bytes
    // can be read.
    std::stable_sort(waiting.begin(), waiting.end(), by_cores);
    size_t added = 0;
    for (Consumer& w : waiting) {
      if (added == 2) break;
      if (std::any_of(s.top_outside.begin(), s.top_outside.end(), [&](const Consumer& c) { return c.pid == w.pid; }))
        continue;
      s.top_outside.push_back(std::move(w));
      ++added;
    }
    out = std::move(s);
  }
  prev_ = std::move(cur);
  last_ = now;
  return out;
}

std::optional<nlohmann::ordered_json> ContentionEvent(const HostPressure& p, const std::optional<CpuShare>& share,
                                                      std::chrono::steady_clock::time_point now,
                                                      std::optional<std::chrono::steady_clock::time_point>* last,
                                                      const ContentionWatchOptions& o, bool job_grew) {
  const bool cpu = p.cpu_some && *p.cpu_some >= o.cpu_pct;
  const bool io = p.io_some && *p.io_some >= o.io_pct;
  const bool on_job = share && share->others_on_job_cpus && *share->others_on_job_cpus >= o.others_on_job_cpus;
  if (!cpu && !io && !on_job && !(job_grew && share)) return std::nullopt;
  if (*last && std::chrono::duration<double>(now - **last).count() < o.min_gap_s) return std::nullopt;
  *last = now;
  nlohmann::ordered_json j;
  j["pressure"] = cpu && io ? "cpu+io" : cpu ? "cpu" : io ? "io" : "none";
  j["trigger"] = cpu || io ? "pressure" : on_job ? "job_cpus" : "job_tree";
  j["source"] = p.source;
  if (p.cpu_some) j["cpu_pressure_pct"] = *p.cpu_some;
  if (p.io_some) j["io_pressure_some_pct"] = *p.io_some;
  if (p.io_full) j["io_pressure_full_pct"] = *p.io_full;
  if (share) {
    j["job_cores"] = share->job_cores;
    j["other_cores"] = share->other_cores;
    j["job_procs"] = share->job_procs;
    if (share->job_cpus) j["job_cpus"] = *share->job_cpus;
    if (share->others_on_job_cpus) j["others_on_job_cpus"] = *share->others_on_job_cpus;
    if (share->steal_pct) j["cpu_steal_pct"] = *share->steal_pct;
    if (share->uptime_s) j["uptime_s"] = *share->uptime_s;
    j["io_wait"] = {{"job", share->job_io_wait}, {"others", share->other_io_wait}};
    auto list = [](const std::vector<Consumer>& v) {
      auto a = nlohmann::ordered_json::array();
      for (const Consumer& c : v) {
        nlohmann::ordered_json t = {{"pid", c.pid},
                                    {"comm", c.comm},
                                    {"cmdline", c.cmdline},
                                    {"cores", c.cores},
                                    {"cpu_s", c.cpu_s},
                                    {"start_s", c.start_s},
                                    {"state", std::string(1, c.state)}};
        if (c.on_job_cpus) t["on_job_cpus"] = true;
        if (c.io_bytes) t["io_bytes"] = *c.io_bytes;                    // absent: unreadable, not 0
        if (c.io_bytes_per_s) t["io_bytes_per_s"] = *c.io_bytes_per_s;  // absent: unreadable, not 0
        a.push_back(std::move(t));
      }
      return a;
    };
    j["top"] = list(share->top_outside);
    j["job_top"] = list(share->top_job);
  }
  return j;
}

JobContention::JobContention(uint32_t job_pid, uint32_t self_pid)
    : tracker_(job_pid, self_pid, static_cast<double>(::sysconf(_SC_CLK_TCK))) {}

std::optional<nlohmann::ordered_json> JobContention::Fill(const HostFs& fs, Sample& s) {
  const auto now = std::chrono::steady_clock::now();
  auto share = tracker_.Update(fs, now);
  bool grew = false;
  if (share) {
    s.job_cores = share->job_cores;
    s.other_cores = share->other_cores;
    s.job_procs = share->job_procs;
    s.job_cpus = share->job_cpus;
    s.others_on_job_cpus = share->others_on_job_cpus;
    s.cpu_steal_pct = share->steal_pct;
    // The tree grew: record now and then every min_gap_s for a minute, so that the new
    // processes' CPU over a slowdown that follows can be measured (issue 30).
    if (last_procs_ && share->job_procs > last_procs_) grew_at_ = now;
    grew = grew_at_ && std::chrono::duration<double>(now - *grew_at_).count() < kJobTreeWatchS;
    last_procs_ = share->job_procs;
  }
  if (!s.host) return std::nullopt;
  return ContentionEvent(*s.host, share, now, &last_event_, {}, grew);
}

}  // namespace sparkops
