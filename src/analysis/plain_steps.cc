// Hand-written loops' step lines and Rich progress bars (see plain_steps.h for the forms read).
#include "analysis/plain_steps.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "analysis/step_line_detail.h"

namespace sparkops {

namespace {
constexpr auto npos = std::string_view::npos;

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDig(char c) { return c >= '0' && c <= '9'; }
/// Case-insensitive: `s` starts with `w` (`w` lower case).
bool IStarts(std::string_view s, std::string_view w) {
  if (s.size() < w.size()) return false;
  for (size_t i = 0; i < w.size(); ++i)
    if (Lower(s[i]) != w[i]) return false;
  return true;
}
bool IEq(std::string_view s, std::string_view w) { return s.size() == w.size() && IStarts(s, w); }
bool ISuffix(std::string_view s, std::string_view w) {
  return s.size() >= w.size() && IStarts(s.substr(s.size() - w.size()), w);
}
/// Case-insensitive search for `w` (lower case) at a word start in `s`.
bool HasWordStart(std::string_view s, std::string_view w) {
  for (size_t i = 0; i + w.size() <= s.size(); ++i)
    if ((i == 0 || !IsAlpha(s[i - 1])) && IStarts(s.substr(i), w)) return true;
  return false;
}
bool IsSep(char c) {
  return c == ' ' || c == '|' || c == ',' || c == ';' || c == '\t' || c == '(' || c == ')' || c == '[' || c == ']';
}

/// A non-negative count of at most 15 digits at s[*pos]; advances *pos.
bool Count(std::string_view s, size_t* pos, int64_t* v) {
  size_t i = *pos;
  int64_t n = 0;
  while (i < s.size() && IsDig(s[i]) && i - *pos < 15) n = n * 10 + (s[i++] - '0');
  if (i == *pos || (i < s.size() && IsDig(s[i]))) return false;
  *pos = i;
  *v = n;
  return true;
}
/// "N" or "N/M" at s[*pos] (spaces around '/' allowed).
bool Counter(std::string_view s, size_t* pos, int64_t* n, std::optional<int64_t>* total) {
  if (!Count(s, pos, n)) return false;
  size_t q = *pos;
  while (q < s.size() && s[q] == ' ') ++q;
  if (q < s.size() && s[q] == '/') {
    ++q;
    while (q < s.size() && s[q] == ' ') ++q;
    int64_t m = 0;
    if (Count(s, &q, &m)) {
      *total = m;
      *pos = q;
    }
  }
  return true;
}
void SkipAny(std::string_view s, size_t* pos, std::string_view chars) {
  while (*pos < s.size() && chars.find(s[*pos]) != npos) ++*pos;
}

/// A step keyword at s[*pos] ("step", "it", "iter", "iteration", "global_step"), followed by a
/// non-letter; advances *pos past it.
bool StepKeyword(std::string_view s, size_t* pos) {
  std::string_view t = s.substr(*pos);
  for (std::string_view w : {"global_step", "iteration", "iter", "step", "it"}) {
    if (IStarts(t, w) && (t.size() == w.size() || !IsAlpha(t[w.size()]))) {
      *pos += w.size();
      return true;
    }
  }
  return false;
}

bool IsTimeKey(std::string_view k) {
  for (std::string_view w : {"time", "dt", "step_time", "iter_time", "batch_time", "time/step", "time/iter", "t_step",
                             "took", "step_dt", "time_per_step", "sec/step", "s/step", "sec/it", "s/it", "s/iter"})
    if (IEq(k, w)) return true;
  return false;
}
bool IsMsKey(std::string_view k) {
  return IEq(k, "ms") || ISuffix(k, "_ms") || IStarts(k, "ms/") || ISuffix(k, "(ms)") || IEq(k, "time_ms");
}
bool IsLossKey(std::string_view k) {
  for (std::string_view w : {"loss", "train_loss", "train/loss", "training_loss", "loss_train", "tr_loss", "avg_loss"})
    if (IEq(k, w)) return true;
  return false;
}
bool IsRateKey(std::string_view k) {
  return IEq(k, "it/s") || IEq(k, "iter/s") || IEq(k, "steps/s") || IEq(k, "step/s") || IEq(k, "its");
}
bool IsThroughputKey(std::string_view k) {
  for (std::string_view w : {"tok/s", "tokens/s", "tokens_per_sec", "tokens_per_second", "tps", "samples/s",
                             "samples_per_sec", "samples_per_second", "throughput", "img/s", "images/s"})
    if (IEq(k, w)) return true;
  return false;
}
bool IsUnit(std::string_view u) {
  for (std::string_view w : {"ms", "s", "sec", "secs", "it/s", "s/it", "ms/it", "ms/step", "s/step", "ms/iter", "tok/s",
                             "tokens/s", "samples/s"})
    if (IEq(u, w)) return true;
  return false;
}
/// A token that starts a number ("1.96", "-0.5", "3e-4", "nan", ".5" is not one).
bool StartsNumber(std::string_view t) {
  size_t i = t.size() > 1 && (t[0] == '-' || t[0] == '+') ? 1 : 0;
  return i < t.size() && (IsDig(t[i]) || IEq(t.substr(i), "nan") || IEq(t.substr(i), "inf"));
}

struct Fields {
  std::optional<double> loss, step_time_s, throughput;
  bool tokens = false;  ///< `throughput` is tokens per second
  bool lr = false, other = false;
};

/// Clears what a framework parser tried before (keeping the prefix's timestamp and rank) and sets
/// the format and the step: with an epoch and a per-epoch total N/M, epoch × M + N (M is then not
/// the run's total), else N (and the total as printed).
void Restart(StepLine& r, const char* format, int64_t n, std::optional<int64_t> total, std::optional<int64_t> epoch) {
  const std::string_view ts = r.timestamp;
  const std::optional<int> rank = r.rank;
  r = StepLine{};
  r.timestamp = ts;
  r.rank = rank;
  r.format = format;
  r.step = n;
  if (epoch && total && *total > 0 && *epoch < 1000000 && *total < 1000000000000LL && n <= *total)
    r.step = *epoch * *total + n;
  else r.total = total;
}

/// One `key value unit` field; key "" for a bare number.
void Apply(std::string_view key, double v, std::string_view unit, Fields& f) {
  const bool unit_ms = IStarts(unit, "ms");
  const bool unit_rate = IStarts(unit, "it/s") || IStarts(unit, "step/s") || IStarts(unit, "steps/s");
  const bool unit_thr = IStarts(unit, "tok") || IStarts(unit, "samples/") || IStarts(unit, "img/");
  const bool unit_s = !unit.empty() && (unit[0] == 's' || unit[0] == 'S') && !unit_rate;
  if (!unit.empty() && unit[0] == ':') return;  // a clock time ("12:30:01"), not a duration
  auto set_time = [&](double secs) {
    if (!f.step_time_s && std::isfinite(secs) && secs > 0) f.step_time_s = secs;
  };
  if (IsLossKey(key)) {
    if (!f.loss) f.loss = v;
  } else if (IEq(key, "lr") || IEq(key, "learning_rate") || IEq(key, "rate")) {
    f.lr = true;
  } else if (IsRateKey(key) || unit_rate) {
    if (v > 0) set_time(1.0 / v);
  } else if (IsThroughputKey(key) || unit_thr) {
    if (!f.throughput && std::isfinite(v) && v > 0) {
      f.throughput = v;
      f.tokens = IStarts(unit, "tok") || IEq(key, "tok/s") || IEq(key, "tokens/s") || IEq(key, "tokens_per_sec") ||
                 IEq(key, "tokens_per_second") || IEq(key, "tps");
    }
  } else if (IsMsKey(key) || (unit_ms && (key.empty() || IsTimeKey(key)))) {
    set_time(v / 1000.0);
  } else if (IsTimeKey(key) || (key.empty() && unit_s)) {
    set_time(v);
  } else {
    f.other = f.other || !key.empty();
  }
}

/// The fields after the step counter, split on separators; `key:value`, `key=value`,
/// `key value`, `value unit`.
Fields ReadFields(std::string_view rest) {
  std::array<std::string_view, 48> tok;
  size_t n = 0;
  for (size_t i = 0; i < rest.size() && n < tok.size();) {
    while (i < rest.size() && IsSep(rest[i])) ++i;
    size_t b = i;
    while (i < rest.size() && !IsSep(rest[i])) ++i;
    if (i > b) tok[n++] = rest.substr(b, i - b);
  }
  Fields f;
  for (size_t i = 0; i < n; ++i) {
    std::string_view t = tok[i], key, val;
    size_t eq = t.find_first_of(":=");
    if (eq != npos && eq > 0) {
      key = t.substr(0, eq);
      val = t.substr(eq + 1);
      if (val.empty() && i + 1 < n) val = tok[++i];
    } else if (StartsNumber(t)) {
      val = t;
    } else if (i + 1 < n && StartsNumber(tok[i + 1])) {
      key = t;
      val = tok[++i];
    } else {
      continue;  // a word ("train" of "train loss")
    }
    double v = 0;
    size_t used = 0;
    if (!ParseNumberPrefixTo(val, &v, &used)) continue;
    std::string_view unit = val.substr(used);
    // "350 ms" is a value and its unit; "2.5 tok/s 12000" is a value, then a key and its value.
    if (unit.empty() && i + 1 < n && IsUnit(tok[i + 1]) && !(i + 2 < n && StartsNumber(tok[i + 2]))) unit = tok[++i];
    Apply(key, v, unit, f);
  }
  return f;
}
}  // namespace

bool ParsePlainStep(std::string_view s, StepLine& r) {
  size_t p = 0;
  std::optional<int64_t> epoch;
  if (IStarts(s, "epoch") && s.size() > 5 && !IsAlpha(s[5])) {
    p = 5;
    SkipAny(s, &p, " :=#[");
    int64_t e = 0;
    std::optional<int64_t> epochs;
    if (!Counter(s, &p, &e, &epochs)) return false;
    epoch = e;
    SkipAny(s, &p, " |,;:-[]()");
  }
  if (!StepKeyword(s, &p)) return false;
  SkipAny(s, &p, " ");
  SkipAny(s, &p, ":=#[");
  SkipAny(s, &p, " ");
  int64_t step = 0;
  std::optional<int64_t> total;
  if (!Counter(s, &p, &step, &total)) return false;
  if (p < s.size() && !IsSep(s[p]) && s[p] != ':') return false;  // "step 3rd", "it 2x"
  std::string_view rest = s.substr(p);
  // A learning-rate schedule's announcement is not a step.
  if (HasWordStart(s, "schedul") || HasWordStart(s, "adjusting") || detail::Find(s, "->") != npos) return false;
  const bool eval = HasWordStart(rest, "eval") || HasWordStart(rest, "valid") || HasWordStart(rest, "test") ||
                    HasWordStart(rest, "val ") || HasWordStart(rest, "val_") || HasWordStart(rest, "val:") ||
                    HasWordStart(rest, "val/") || HasWordStart(rest, "val=");
  Fields f = ReadFields(rest);
  if (!eval && f.lr && !f.loss && !f.step_time_s && !f.throughput && !f.other) return false;  // only an lr
  Restart(r, "plain", step, total, epoch);
  if (eval) {
    r.kind = StepLine::Kind::kEval;
    return true;
  }
  r.loss = f.loss;
  r.step_time_s = f.step_time_s;
  r.throughput = f.throughput;
  r.throughput_is_tokens = f.tokens;
  r.kind = StepLine::Kind::kStep;
  return true;
}

namespace {
/// Length of a Rich bar glyph at s[i] ("━" U+2501, "╸" U+2578, "╺" U+257A), 0 when none.
size_t BarGlyph(std::string_view s, size_t i) {
  if (i + 3 > s.size() || static_cast<unsigned char>(s[i]) != 0xE2) return 0;
  const auto b1 = static_cast<unsigned char>(s[i + 1]), b2 = static_cast<unsigned char>(s[i + 2]);
  return (b1 == 0x94 && b2 == 0x81) || (b1 == 0x95 && (b2 == 0xB8 || b2 == 0xBA)) ? 3 : 0;
}
}  // namespace

bool ParseRichBar(std::string_view s, StepLine& r) {
  // A live redraw through a pipe starts with control sequences ("\x1b[2K", "\x1b[1A").
  while (s.size() > 2 && s[0] == '\x1b' && s[1] == '[') {
    size_t j = 2;
    while (j < s.size() && static_cast<unsigned char>(s[j]) >= 0x20 && static_cast<unsigned char>(s[j]) <= 0x3F) ++j;
    s.remove_prefix(std::min(s.size(), j + 1));
  }
  size_t g = 0;
  while (g < s.size() && !BarGlyph(s, g)) {
    const void* e2 = std::memchr(s.data() + g + 1, '\xE2', s.size() - g - 1);
    g = e2 ? static_cast<size_t>(static_cast<const char*>(e2) - s.data()) : s.size();
  }
  if (g >= s.size()) return false;
  std::string_view desc = s.substr(0, g);
  while (!desc.empty() && desc.back() == ' ') desc.remove_suffix(1);
  size_t p = g;
  while (p < s.size()) {
    if (size_t n = BarGlyph(s, p)) p += n;
    else if (s[p] == ' ') ++p;
    else break;
  }
  int64_t n = 0;
  if (!Count(s, &p, &n) || p >= s.size() || s[p] != '/') return false;
  ++p;
  int64_t m = 0;
  std::optional<int64_t> total;
  if (Count(s, &p, &m)) total = m;
  else if (s.substr(p, 2) != "--") return false;
  std::string_view tail = s.substr(p);
  std::optional<double> step_time;
  std::string_view post = tail;
  if (size_t u = detail::Find(tail, "it/s"); u != npos) {
    size_t b = u;
    while (b > 0 && (IsDig(tail[b - 1]) || tail[b - 1] == '.')) --b;
    double rate = 0;
    if (b < u && ParseNumberPrefixTo(tail.substr(b, u - b), &rate, nullptr) && rate > 0 && std::isfinite(rate))
      step_time = 1.0 / rate;
    post = tail.substr(u + 4);
  }
  std::optional<int64_t> epoch;
  if (size_t q = 6; desc.starts_with("Epoch ")) {
    int64_t e = 0;
    if (Count(desc, &q, &e)) epoch = e;
  }
  Restart(r, "rich", n, total, epoch);
  if (desc.starts_with("Validation") || desc.starts_with("Sanity Checking") || desc.starts_with("Testing")) {
    r.kind = StepLine::Kind::kEval;
    return true;
  }
  if (!desc.starts_with("Epoch ")) {
    r.other_loop = true;
    r.kind = StepLine::Kind::kBar;
    return true;
  }
  r.loss = detail::NumberAfter(post, "train_loss: ");
  if (!r.loss && (post.starts_with("loss: ") || detail::Find(post, " loss: ") != npos))
    r.loss = detail::NumberAfter(post, "loss: ");
  if (step_time) {
    r.step_time_s = step_time;
    r.step_time_smoothed = true;
  }
  r.kind = r.step_time_s ? StepLine::Kind::kStep : StepLine::Kind::kBar;
  return true;
}

}  // namespace sparkops
