#include "analysis/step_series.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <set>
#include <type_traits>
#include <utility>

#include <sys/mman.h>
#include <sys/stat.h>

#include "base/strings.h"
#include "base/timefmt.h"
#include "telemetry/terminal_text.h"

namespace sparkops {

namespace {
constexpr int64_t kMaxStep = 1'000'000'000'000'000;  // keeps step differences far from overflow
/// Whether `p` has a time delta to the point before it (both timed, time not going backwards).
bool HasDelta(const StepPoint& prev, const StepPoint& p) {
  return p.t_ms != kNoTime && prev.t_ms != kNoTime && p.t_ms >= prev.t_ms;
}
/// Asks for transparent huge pages over the whole 2 MiB pages inside [p, p+bytes): millions of
/// points then fault in 2 MiB at a time instead of 4 KiB. A hint: ignored where THP is off.
void AdviseHugePages(void* p, size_t bytes) {
  constexpr uintptr_t kHuge = 2u << 20;
  const uintptr_t a = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t e = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHuge - 1);
  // NOLINTNEXTLINE(performance-no-int-to-ptr): a 2 MiB-aligned address inside the mapping
  if (e > a) ::madvise(reinterpret_cast<void*>(a), e - a, MADV_HUGEPAGE);
}
}  // namespace

bool StepSeries::has_times() const { return time_source != "none"; }

static_assert(sizeof(StepEvent) <= 48, "a step event crosses threads: keep it small");

void StepEvent::Set(const StepLine& l) {
  format = l.format;
  kind = l.kind;
  smoothed = l.step_time_smoothed;
  other_loop = l.other_loop;
  has_ = 0;
  auto put = [&](auto& dst, const auto& src, uint8_t bit) {
    if (src) dst = static_cast<std::remove_reference_t<decltype(dst)>>(*src), has_ |= bit;
  };
  put(step_, l.step, kHasStep);
  put(total_, l.total, kHasTotal);
  if (!l.total) put(total_, l.tokens_seen, kHasTokensSeen);
  put(loss_, l.loss, kHasLoss);
  direct_ = NAN;
  inverse = false;
  tokens = false;
  if (l.step_time_s && *l.step_time_s > 0) {
    direct_ = static_cast<float>(*l.step_time_s);
  } else if (l.throughput && *l.throughput > 0) {
    direct_ = static_cast<float>(1.0 / *l.throughput);
    inverse = true;
    tokens = l.throughput_is_tokens;
  }
}

bool ParseStepEvent(std::string_view text, int64_t arrival_ms, const LocalZone& zone, StepEvent* out, bool* other_rank,
                    const StepTemplate* tmpl) {
  // A job run on a terminal (run gives it a pty) or with colours forced prints escape sequences
  // inside the text: "\x1b[1mstep\x1b[0m 12", a Rich bar's "\x1b[2K" and colours. train.log keeps
  // them as printed; the parsers read the text without them (no copy when there is no ESC).
  if (text.starts_with(kAttemptMarkerPrefix)) [[unlikely]] {  // run's own line, never the job's
    *out = StepEvent{};
    out->kind = StepLine::Kind::kAttempt;
    out->t_ms = arrival_ms;
    return true;
  }
  std::string plain;
  text = StripTerminalControls(text, &plain);
  if (OtherRankPrefix(text)) {  // most lines of a multi-rank log: skipped before any parsing
    *other_rank = true;
    return false;
  }
  StepLine l = ParseStepLine(text);
  if (l.rank && *l.rank != 0) {
    *other_rank = true;
    return false;
  }
  if (tmpl) [[unlikely]] {
    StepLine t;
    t.timestamp = l.timestamp;
    t.rank = l.rank;
    if (MatchStepTemplate(*tmpl, text, t)) l = t;
  }
  if (l.kind == StepLine::Kind::kNone) return false;
  StepEvent& e = *out;
  e.Set(l);
  e.t_ms = kNoTime;
  e.own_time = false;
  if (!l.timestamp.empty()) {
    if (auto ms = zone.ParseMillis(l.timestamp)) {
      e.t_ms = *ms;
      e.own_time = true;
    }
  } else if (l.unix_time_s && std::isfinite(*l.unix_time_s) && *l.unix_time_s > 1e9 && *l.unix_time_s < 1e11) {
    e.t_ms = static_cast<int64_t>(*l.unix_time_s * 1000.0);
    e.own_time = true;
  }
  if (e.t_ms == kNoTime) e.t_ms = arrival_ms;
  return true;
}

void StepSeriesBuilder::Add(std::string_view text, int64_t arrival_ms) {
  bool other_rank = false;
  StepEvent e;
  if (ParseStepEvent(text, arrival_ms, zone_, &e, &other_rank, tmpl_)) Apply(e);
  else if (other_rank) ++s_.ignored_rank_lines;
}

void StepSeriesBuilder::Apply(const StepEvent& l) {
  const int64_t t = l.t_ms;
  if (*l.format && std::find(formats_.begin(), formats_.end(), l.format) == formats_.end())
    formats_.push_back(l.format);
  int64_t last_step = s_.points.empty() ? -1 : s_.points.back().step;
  if (auto n = l.tokens_seen(); n && t != kNoTime) s_.tokens_seen.push_back({t, *n});
  auto mark = [&](uint8_t kind) {
    pending_flags_ |= kind;
    if (!s_.markers.empty() && s_.markers.back().kind == kind && s_.markers.back().step == last_step) return;
    s_.markers.push_back(StepMarker{t, last_step, kind});
  };
  switch (l.kind) {
    case StepLine::Kind::kEval: mark(kAfterEval); return;
    case StepLine::Kind::kSave: mark(kAfterSave); return;
    case StepLine::Kind::kLoss:
      if (!s_.points.empty() && std::isnan(s_.points.back().loss) && l.loss()) s_.points.back().loss = *l.loss();
      return;
    case StepLine::Kind::kBar:
    case StepLine::Kind::kStep:
      if (l.other_loop) return;  // model loading, dataset mapping: not the training loop
      if (l.total() && std::strcmp(l.format, "tqdm") == 0) {
        // The first bar with a total is the training loop; a bar with another total is an
        // evaluation (or data-loading) loop drawn between training updates.
        if (!bar_total_) bar_total_ = l.total();
        else if (*l.total() != *bar_total_) {
          mark(kAfterEval);
          return;
        }
      }
      if (l.kind == StepLine::Kind::kBar && l.step() && *l.step() == 0) return;
      if (l.own_time) ++n_own_time_;
      else if (t != kNoTime) ++n_arrival_;
      AddPoint(l, t);
      return;
    case StepLine::Kind::kAttempt: new_attempt_ = true; return;
    case StepLine::Kind::kNone: return;
  }
}

void StepSeriesBuilder::AddPoint(const StepEvent& l, int64_t t) {
  if (!l.step() || *l.step() < 0 || *l.step() > kMaxStep) return;  // not a plausible step counter
  if (l.total() && !s_.total_steps) s_.total_steps = l.total();
  const float direct = l.direct();
  const bool inverse = l.inverse;
  const bool new_attempt = std::exchange(new_attempt_, false);
  if (new_attempt)  // the steps redone after a restart replace the earlier attempt's (step_series.h)
    while (!s_.points.empty() && s_.points.back().step >= *l.step()) s_.points.pop_back();
  if (!s_.points.empty() && *l.step() <= s_.points.back().step) {
    StepPoint& p = s_.points.back();
    if (*l.step() == p.step) {  // the same step printed by another line: fill what is missing
      if (std::isnan(p.loss) && l.loss()) p.loss = *l.loss();
      if (std::isnan(p.direct) && !std::isnan(direct)) {
        p.direct = direct;
        if (inverse) ++n_throughput_, n_tokens_ += l.tokens;
        else if (l.smoothed) ++n_smoothed_;
        else ++n_exact_;
      }
    }
    return;  // a step counter going backwards (restart, another loop): keep the first series
  }
  StepPoint p;
  p.step = *l.step();
  p.t_ms = t;
  p.direct = direct;
  if (!std::isnan(direct)) {
    if (inverse) ++n_throughput_, n_tokens_ += l.tokens;
    else if (l.smoothed) ++n_smoothed_;
    else ++n_exact_;
  }
  if (l.loss()) p.loss = *l.loss();
  // `cost` holds the time delta until Finish, which keeps it or puts `direct` there.
  if (new_attempt && !s_.points.empty()) {
    ++n_delta_;  // counted as timed: the gap between attempts is not a step time (cost stays unknown)
  } else if (!s_.points.empty() && HasDelta(s_.points.back(), p)) {
    const StepPoint& prev = s_.points.back();
    p.cost = static_cast<float>((p.t_ms - prev.t_ms) / 1000.0 / static_cast<double>(p.step - prev.step));
    ++n_delta_;
  }
  p.flags = pending_flags_;
  pending_flags_ = 0;
  s_.points.push_back(p);
}

void StepSeriesBuilder::ReservePoints(size_t n) {
  try {
    s_.points.reserve(n);
  } catch (const std::exception&) {  // bad_alloc or length_error: the vector grows as it goes
    return;
  }
  AdviseHugePages(s_.points.data(), s_.points.capacity() * sizeof(StepPoint));
}

StepSeries StepSeriesBuilder::Finish() {
  size_t n = s_.points.size();
  // Cost: an exact per-step time the log printed wins; else time deltas when most points have
  // them (tqdm's rate is a moving average that smears short pauses); else whatever was printed.
  bool use_delta = false;
  if (n_exact_ * 2 >= n && n_exact_ > 0) {
    s_.cost_unit = "s/step (printed by the log)";
  } else if (n > 1 && n_delta_ * 5 >= (n - 1) * 4) {
    use_delta = true;
    s_.cost_unit = "s/step (from timestamps)";
  } else if (n_smoothed_ > 0) {
    s_.cost_unit = "s/step (progress-bar rate)";
  } else if (n_throughput_ > 0) {
    s_.cost_unit = "1/throughput (s per item)";
    s_.cost_is_inverse_throughput = true;
  } else {
    s_.cost_unit = "none";
  }
  if (!use_delta)
    for (StepPoint& p : s_.points) p.cost = p.direct;
  s_.direct_is_s_per_token = n_tokens_ > 0 && n_tokens_ == n_throughput_ && n_exact_ == 0 && n_smoothed_ == 0;
  s_.time_source = n_own_time_ * 2 >= n && n_own_time_ > 0 ? "log timestamps"
                   : n_arrival_ > 0                        ? "arrival times (train.log)"
                                                           : "none";
  std::set<std::string> names;  // sorted and unique: the same name may come from two literals
  for (const char* name : formats_) names.insert(name);
  std::vector<std::string> f(names.begin(), names.end());
  s_.formats = Join(f, "+");
  return std::move(s_);
}

namespace {
/// Unix seconds of "YYYY-MM-DDThh:mm" at `d` (16 bytes); false when it is not a time. Kept out
/// of line: it runs once a minute of log, and inlined its string made every call save registers.
[[gnu::noinline, gnu::cold]] bool ParseMinute(const char* d, int64_t* unix_s) {
  auto t = ParseTimestamp(std::string(d, 16) + ":00", 0);
  if (!t) return false;
  *unix_s = ToUnixMillis(*t) / 1000;
  return true;
}
}  // namespace

std::string AttemptMarkerText(int attempt) {
  return std::string(kAttemptMarkerPrefix) + std::to_string(attempt) +
         " starts (SPARKOPS_ATTEMPT=" + std::to_string(attempt) + ")";
}

bool SplitRunLogRecord(std::string_view line, int64_t* arrival_ms, std::string_view* text) {
  // 2026-11-29T13:02:29.123Z\to\t...
  if (line.size() < 27 || line[24] != '\t' || line[23] != 'Z' || line[26] != '\t' ||
      (line[25] != 'o' && line[25] != 'e'))
    return false;
  // Cache the minute ("2026-11-29T13:02"): consecutive records share it; seconds are two digits.
  static thread_local char cached[16];
  static thread_local int64_t cached_min_s = 0;
  static thread_local bool have = false;
  const char* d = line.data();
  if (d[16] != ':' || d[17] < '0' || d[17] > '5' || d[18] < '0' || d[18] > '9') return false;
  uint64_t a0, a1, c0, c1;
  std::memcpy(&a0, d, 8);
  std::memcpy(&a1, d + 8, 8);
  std::memcpy(&c0, cached, 8);
  std::memcpy(&c1, cached + 8, 8);
  if (!have || a0 != c0 || a1 != c1) {
    if (!ParseMinute(d, &cached_min_s)) return false;
    std::memcpy(cached, d, 16);
    have = true;
  }
  int64_t secs = cached_min_s + int64_t{d[17] - '0'} * 10 + (d[18] - '0');
  const char* f = line.data() + 20;
  if (line[19] != '.' || f[0] < '0' || f[0] > '9' || f[1] < '0' || f[1] > '9' || f[2] < '0' || f[2] > '9') return false;
  *arrival_ms = secs * 1000 + int64_t{(f[0] - '0') * 100 + (f[1] - '0') * 10 + (f[2] - '0')};
  *text = line.substr(27);
  return true;
}

namespace {
/// The events of one segment of a log, parsed on a worker thread with its own zone copy.
class StepEventSegment : public LineSegment {
 public:
  StepEventSegment(const LocalZone& zone, const StepTemplate* tmpl) : zone_(zone), tmpl_(tmpl) { events.reserve(4096); }
  void Line(std::string_view line, bool may_have_cr) override {
    ForEachRecord(
        line,
        [&](std::string_view text, int64_t arrival) {
          if (OtherRankPrefix(text)) {  // most lines of a multi-rank log: no event to make
            ++other_rank_lines;
            return;
          }
          bool other_rank = false;
          // Parsed in place: copying a just-written event into the vector reloaded it before
          // its narrow stores had landed (a store-forwarding stall, a quarter of this function).
          StepEvent& e = events.emplace_back();
          if (!ParseStepEvent(text, arrival, zone_, &e, &other_rank, tmpl_)) {
            events.pop_back();
            if (other_rank) ++other_rank_lines;
          }
        },
        may_have_cr);
    bytes += line.size() + 1;
  }
  void Clear() override {
    events.clear();
    other_rank_lines = 0;
    bytes = 0;
  }
  std::vector<StepEvent> events;
  uint64_t other_rank_lines = 0;
  uint64_t bytes = 0;  ///< of the lines seen (about: cut lines count their head)

 private:
  LocalZone zone_;
  const StepTemplate* tmpl_;
};
}  // namespace

Result<StepSeries> ReadStepLog(const std::string& path, const LocalZone& zone, ParallelLineOptions opt,
                               const StepTemplate* tmpl) {
  StepSeriesBuilder b(zone, tmpl);
  struct stat sb {};
  const uint64_t size = ::stat(path.c_str(), &sb) == 0 && S_ISREG(sb.st_mode) ? static_cast<uint64_t>(sb.st_size) : 0;
  bool first = true;
  auto st = ForEachLineParallel(
      path, [&] { return std::make_unique<StepEventSegment>(zone, tmpl); },
      [&](LineSegment& seg) {
        auto& s = static_cast<StepEventSegment&>(seg);
        for (const StepEvent& e : s.events) b.Apply(e);
        b.CountOtherRankLines(s.other_rank_lines);
        // Room for the points the whole file will give at the first segment's density: growing
        // a vector of millions by doubling copies it and touches twice the pages (serially).
        // At most 128 M points (4 GiB); past that the vector doubles as before.
        if (first && size > s.bytes && s.bytes > 0)
          b.ReservePoints(static_cast<size_t>(std::min(
              {static_cast<double>(size) / 8, double{1 << 27},
               1.1 * static_cast<double>(b.Points()) * static_cast<double>(size) / static_cast<double>(s.bytes)})));
        first = false;
      },
      opt);
  if (!st) return std::unexpected(st.error());
  StepSeries s = b.Finish();
  s.lines = st->lines;
  s.bytes = st->bytes;
  return s;
}

StepSeries ParseStepLog(std::string_view text, const LocalZone& zone, const StepTemplate* tmpl) {
  StepSeriesBuilder b(zone, tmpl);
  uint64_t lines = 0;
  for (std::string_view line : SplitLines(text)) {
    ++lines;
    ForEachRecord(line, [&](std::string_view text, int64_t arrival) { b.Add(text, arrival); });
  }
  StepSeries s = b.Finish();
  s.lines = lines;
  s.bytes = text.size();
  return s;
}

}  // namespace sparkops
