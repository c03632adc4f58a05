// One parser per framework family. Samples and field meanings: docs/analyze.md
// (from each framework's formatting code or logs quoted in its issues).
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "analysis/step_line_detail.h"
#include "base/bytescan.h"
#include "base/json_parse.h"

namespace sparkops::detail {

namespace {
// A step count from a parsed number: whole, non-negative and in range, else absent (no UB on 1e30).
std::optional<int64_t> AsCount(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v) || *v < 0 || *v > 9e15) return std::nullopt;
  return static_cast<int64_t>(*v);
}
bool Contains(std::string_view s, std::string_view needle) { return Find(s, needle) != std::string_view::npos; }
bool StartsWithWord(std::string_view s, std::string_view w) { return s.substr(0, w.size()) == w; }

}  // namespace

void ParseHfDict(std::string_view s, StepLine& r) {
  r.format = "hf_dict";
  // Every key read here starts with a quote: one walk over the quotes finds the first place of
  // each (where a substring search per key would), instead of five searches over the line.
  constexpr auto npos = std::string_view::npos;
  bool eval = false, summary = false;
  size_t step = npos, loss = npos, train_loss = npos, seen = npos;  // where the number after the key starts
  auto key = [&](size_t i, std::string_view k, size_t* pos) {
    if (*pos == npos && s.compare(i, k.size(), k) == 0) *pos = i + k.size();
  };
  for (size_t i = s.find('\''); i != npos && i + 1 < s.size(); i = s.find('\'', i + 1)) {
    switch (s[i + 1]) {  // most quotes open or close other keys and values: one byte tells
      case 'e': eval = eval || s.compare(i, 6, "'eval_") == 0; break;
      case 's': key(i, "'step': ", &step); break;
      case 'l': key(i, "'loss': ", &loss); break;
      case 'n': key(i, "'num_input_tokens_seen': ", &seen); break;
      case 't':
        summary = summary || s.compare(i, 15, "'train_runtime'") == 0;
        key(i, "'train_loss': ", &train_loss);
        break;
    }
  }
  if (eval) {
    r.kind = StepLine::Kind::kEval;
    return;
  }
  // The end-of-training summary has `train_runtime` and `train_loss`; transformers 5 adds
  // `train_runtime` (and `train_tokens_per_second`, since the start) to every logging step's dict
  // when include_num_input_tokens_seen is on, and that one has its `loss`.
  if (summary && loss == npos) return;
  auto number_at = [&](size_t pos) { return pos == npos ? std::nullopt : ParseNumberPrefix(s.substr(pos)); };
  r.tokens_seen = AsCount(number_at(seen));
  r.step = AsCount(number_at(step));
  r.loss = number_at(loss);
  if (!r.loss) r.loss = number_at(train_loss);
  if (r.step) r.kind = StepLine::Kind::kStep;
  else if (r.loss) r.kind = StepLine::Kind::kLoss;
  return;
}

void ParseJsonMetrics(std::string_view s, StepLine& r) {
  auto j = ParseJsonOrDiscarded(s);
  if (!j.is_object()) return;
  r.format = "jsonl";
  auto num = [&](std::initializer_list<const char*> keys) -> std::optional<double> {
    for (const char* k : keys) {
      auto it = j.find(k);
      if (it != j.end() && it->is_number()) return it->get<double>();
    }
    return std::nullopt;
  };
  if (auto st = num({"step", "global_step", "current_steps", "iter", "iteration", "_step"})) r.step = AsCount(st);
  if (auto it = j.find("global_step/max_steps"); it != j.end() && it->is_string()) {
    const std::string& v = it->get_ref<const std::string&>();
    size_t p = 0;
    r.step = IntAt(v, &p);
    if (p < v.size() && v[p] == '/') {
      ++p;
      r.total = IntAt(v, &p);
    }
  }
  if (auto t = AsCount(num({"total_steps", "max_steps"}))) r.total = t;
  r.loss = num({"loss", "train/loss", "train_loss"});
  r.step_time_s = num({"step_time", "train_speed(s/it)"});
  for (const char* k : {"tokens_per_second", "tps", "samples_per_second", "tokens_per_second_per_gpu"})
    if (auto v = num({k})) {
      r.throughput = v;
      r.throughput_is_tokens = std::string_view(k) != "samples_per_second";
      break;
    }
  r.unix_time_s = num({"_timestamp", "timestamp", "time"});
  if (!r.unix_time_s) {
    for (const char* k : {"timestamp", "time"}) {
      auto it = j.find(k);
      if (it == j.end() || !it->is_string()) continue;
      size_t at = s.find(it->get_ref<const std::string&>());
      if (at != std::string_view::npos) r.timestamp = s.substr(at, it->get_ref<const std::string&>().size());
      break;
    }
  }
  if (j.contains("eval_loss") || j.contains("val_loss") || j.contains("eval/loss")) r.kind = StepLine::Kind::kEval;
  else if (r.step) r.kind = StepLine::Kind::kStep;
  return;
}

void ParseNanoGpt(std::string_view s, StepLine& r) {
  r.format = "nanogpt";
  size_t p = 5;
  auto n = IntAt(s, &p);
  if (!n || p >= s.size() || s[p] != ':') return ParseMarker(s, r);
  r.step = *n;
  if (StartsWithWord(s, "step ")) {  // "step N: train loss X, val loss Y" (evaluation)
    if (!Contains(s, "val loss")) {
      r = StepLine{};
      return ParseMarker(s, r);
    }
    r.kind = StepLine::Kind::kEval;
    return;
  }
  r.loss = NumberAfter(s, ": loss ");
  if (auto ms = NumberAfter(s, ", time ")) r.step_time_s = *ms / 1000.0;
  r.kind = StepLine::Kind::kStep;
  return;
}

void ParseTorchtuneStep(std::string_view s, StepLine& r) {
  r.format = "torchtune";
  size_t p = 5;
  auto n = IntAt(s, &p);
  if (!n || s.substr(p, 3) != " | ") return ParseMarker(s, r);
  r.step = *n;
  r.loss = NumberAfter(s, "loss:");
  r.throughput = NumberAfter(s, "tokens_per_second_per_gpu:");
  r.throughput_is_tokens = r.throughput.has_value();
  r.kind = StepLine::Kind::kStep;
  return;
}

void ParseTqdm(std::string_view s, size_t unit, bool per_it, StepLine& r) {
  if (unit == std::string_view::npos) return ParseMarker(s, r);
  size_t open = RFind(s, '[', unit);
  size_t bar = open == std::string_view::npos ? open : RFind(s, '|', open);
  if (bar == std::string_view::npos) return ParseMarker(s, r);
  // " N/M " between the bar's closing '|' and '['
  std::string_view counts = s.substr(bar + 1, open - bar - 1);
  size_t p = 0;
  auto n = IntAt(counts, &p);
  if (!n || p >= counts.size() || counts[p] != '/') return ParseMarker(s, r);
  ++p;
  auto m = IntAt(counts, &p);
  r.format = "tqdm";
  r.step = *n;
  if (m) r.total = *m;  // not `r.total = m`: that reloaded m whole before its flag byte had landed
  // rate: the number right before the unit ("4.56it/s", "78.12s/it", "?it/s")
  size_t comma = RFind(s, ',', unit);
  if (comma != std::string_view::npos && comma > open) {
    size_t used = 0;
    std::string_view rate_text = s.substr(comma + 1, unit - comma - 1);
    auto rate = ParseNumberPrefix(rate_text, &used);
    if (rate && *rate > 0 && std::isfinite(*rate)) {
      r.step_time_s = per_it ? *rate : 1.0 / *rate;
      r.step_time_smoothed = true;
    }
  }
  std::string_view head = s.substr(0, bar);
  // The description before "NN%": none for the HF Trainer bar (the common, fast case).
  size_t pct = RFind(head, '%');
  std::string_view desc = pct == std::string_view::npos ? head : head.substr(0, pct);
  while (!desc.empty() && (IsDigit(desc.back()) || desc.back() == ' ')) desc.remove_suffix(1);
  if (!desc.empty()) {
    if (StartsWithWord(desc, "Validation") || StartsWithWord(desc, "Testing") || Contains(desc, "Evaluating")) {
      r.kind = StepLine::Kind::kEval;
      return;
    }
    if (StartsWithWord(desc, "Epoch ")) {  // Lightning: per-epoch counter; postfix metrics
      r.format = "lightning";
      size_t q = 6;
      auto epoch = IntAt(desc, &q);
      if (epoch && m && *m > 0 && *epoch >= 0 && *epoch < 1000000 && *m < 1000000000000LL && *n >= 0 &&
          *n < 1000000000000LL)
        r.step = *epoch * *m + *n;
      std::string_view post = s.substr(unit);
      r.loss = NumberAfter(post, "train_loss=");
      if (!r.loss) r.loss = NumberAfter(post, " loss=");
    } else if (size_t tl = desc.find("|Loss: "); tl != std::string_view::npos) {  // torchtune bar
      r.format = "torchtune";
      size_t a = desc.find('|');
      size_t q = a + 1;
      if (auto gs = IntAt(desc, &q); gs && q == tl) r.step = *gs;
      r.loss = NumberAfter(desc, "|Loss: ");
    } else {
      // A described bar ("Loading checkpoint shards:", "Map:") is another loop.
      r.other_loop = true;
      r.kind = StepLine::Kind::kBar;
      return;
    }
  }
  r.kind = r.step_time_s ? StepLine::Kind::kStep : StepLine::Kind::kBar;
  return;
}

void ParseTorchtitan(std::string_view s, StepLine& r) {
  size_t p = s.find("step:");
  size_t q = p + 5;
  auto n = IntAt(s, &q);
  if (!n || !Contains(s, "loss:")) return ParseMarker(s, r);
  r.format = "torchtitan";
  r.step = *n;
  r.loss = NumberAfter(s, "loss:");
  r.throughput = GroupedNumberAfter(s, "tps:");
  r.throughput_is_tokens = r.throughput.has_value();
  r.kind = StepLine::Kind::kStep;
  return;
}

void ParseMegatron(std::string_view s, StepLine& r) {
  size_t p = s.find("iteration ");
  size_t q = p + 10;
  auto n = IntAt(s, &q);
  if (!n || q >= s.size() || s[q] != '/' || !Contains(s, "elapsed time per iteration")) return ParseMarker(s, r);
  ++q;
  r.format = "megatron";
  r.step = *n;
  r.total = IntAt(s, &q);
  if (auto ms = NumberAfter(s, "elapsed time per iteration (ms): ")) r.step_time_s = *ms / 1000.0;
  r.loss = NumberAfter(s, "lm loss: ");
  r.kind = StepLine::Kind::kStep;
  return;
}

void ParseDeepSpeed(std::string_view s, StepLine& r) {
  r.format = "deepspeed";
  if (size_t rk = Find(s, "[Rank "); rk != std::string_view::npos) {
    size_t q = rk + 6;
    if (auto v = IntAt(s, &q)) r.rank = static_cast<int>(*v);
  }
  if (auto gs = AsCount(NumberAfter(s, "global_step="))) {
    r.step = gs;
    r.throughput = NumberAfter(s, "CurrSamplesPerSec=");
  } else if (auto st = AsCount(NumberAfter(s, "] step="))) {
    r.step = st;
  } else {
    return ParseMarker(s, r);
  }
  r.kind = StepLine::Kind::kStep;
  return;
}

void ParseMarker(std::string_view s, StepLine& r) {
  constexpr auto npos = std::string_view::npos;
  // Both markers have a 'v' ("Saving", "Evaluation"), a rare letter: walk those only.
  const bool marked = FindByteWhere(s, 'v', [&](size_t i) {
                        if (i >= 1 && s.substr(i - 1, 6) == "aving ") {
                          std::string_view rest = s.substr(i + 5);
                          if (StartsWithWord(rest, "model checkpoint") || StartsWithWord(rest, "checkpoint") ||
                              StartsWithWord(rest, "model to")) {
                            r.kind = StepLine::Kind::kSave;
                            return true;
                          }
                        } else if (i >= 8 && s.substr(i, 9) == "valuation") {
                          std::string_view before = s.substr(i - 8, 8);  // "unning E" / "unning e"
                          if (before == "unning E" || before == "unning e") {
                            r.kind = StepLine::Kind::kEval;
                            return true;
                          }
                        }
                        return false;
                      }) != npos;
  if (marked) return;
  // axolotl's "[PID:n] [RANK:n]" follows its timestamp prefix; other lines need no search
  if (size_t a = r.timestamp.empty() ? npos : Find(s, "[RANK:"); a != npos) {
    size_t q = a + 6;
    if (auto v = IntAt(s, &q)) r.rank = static_cast<int>(*v);
  }
  return;
}

}  // namespace sparkops::detail
