#include "analysis/step_template.h"

#include <cmath>

namespace sparkops {

namespace {
using Part = StepTemplate::Part;

bool IsNumberField(Part p) { return p != Part::kLiteral && p != Part::kSpace && p != Part::kAny; }

Result<Part> FieldPart(std::string_view name) {
  struct Name {
    std::string_view name;
    Part part;
  };
  static constexpr Name kNames[] = {{"step", Part::kStep},
                                    {"total", Part::kTotal},
                                    {"loss", Part::kLoss},
                                    {"time", Part::kTime},
                                    {"ms", Part::kMs},
                                    {"its", Part::kIts},
                                    {"throughput", Part::kThroughput},
                                    {"lr", Part::kIgnore},
                                    {"_", Part::kIgnore},
                                    {"*", Part::kAny}};
  for (const Name& n : kNames)
    if (n.name == name) return n.part;
  return InputError("--step-format: unknown field {" + std::string(name) +
                    "} (known: {step} {total} {loss} {time} {ms} {its} {throughput} {lr} {_} {*})");
}

/// A run of spaces/tabs at line[*i] (at least one); advances *i.
bool Spaces(std::string_view line, size_t* i) {
  const size_t b = *i;
  while (*i < line.size() && (line[*i] == ' ' || line[*i] == '\t')) ++*i;
  return *i > b;
}

bool MatchAt(const StepTemplate& t, std::string_view line, size_t i, StepLine& out) {
  StepLine r;
  bool have_step = false;
  const auto& ps = t.pieces;
  for (size_t k = 0; k < ps.size(); ++k) {
    const auto& pc = ps[k];
    switch (pc.part) {
      case Part::kLiteral:
        if (line.substr(i, pc.text.size()) != pc.text) return false;
        i += pc.text.size();
        break;
      case Part::kSpace:
        if (!Spaces(line, &i)) return false;
        break;
      case Part::kAny: {
        // Up to the next literal (the compiler puts one after every {*}), or the end.
        if (k + 1 == ps.size()) {
          i = line.size();
          break;
        }
        // "{*} lit": to the first `lit` with a space before it; "{*}lit": to the first `lit`.
        const bool space = ps[k + 1].part == Part::kSpace;
        if (space && (k + 2 == ps.size() || ps[k + 2].part != Part::kLiteral)) {
          size_t at = line.find_first_of(" \t", i);
          if (at == std::string_view::npos) return false;
          i = at;
          break;
        }
        const std::string& lit = ps[k + (space ? 2 : 1)].text;
        size_t at = line.find(lit, i);
        while (space && at != std::string_view::npos && (at == i || (line[at - 1] != ' ' && line[at - 1] != '\t')))
          at = line.find(lit, at + 1);
        if (at == std::string_view::npos) return false;
        i = at;
        if (space) {
          while (i > 0 && (line[i - 1] == ' ' || line[i - 1] == '\t')) --i;
        }
        break;
      }
      default: {
        double v = 0;
        size_t used = 0;
        if (i >= line.size() || line[i] == ' ' || !ParseNumberPrefixTo(line.substr(i), &v, &used)) return false;
        i += used;
        switch (pc.part) {
          case Part::kStep:
          case Part::kTotal:
            if (!std::isfinite(v) || v < 0 || v > 9e15 || v != std::floor(v)) return false;
            (pc.part == Part::kStep ? r.step : r.total) = static_cast<int64_t>(v);
            have_step = have_step || pc.part == Part::kStep;
            break;
          case Part::kLoss: r.loss = v; break;
          case Part::kTime:
            if (v > 0 && std::isfinite(v)) r.step_time_s = v;
            break;
          case Part::kMs:
            if (v > 0 && std::isfinite(v)) r.step_time_s = v / 1000.0;
            break;
          case Part::kIts:
            if (v > 0 && std::isfinite(v)) r.step_time_s = 1.0 / v;
            break;
          case Part::kThroughput:
            if (v > 0 && std::isfinite(v)) r.throughput = v;
            break;
          default: break;
        }
      }
    }
  }
  if (!have_step) return false;
  r.kind = StepLine::Kind::kStep;
  r.format = "template";
  r.timestamp = out.timestamp;
  r.rank = out.rank;
  out = r;
  return true;
}
}  // namespace

Result<StepTemplate> CompileStepTemplate(std::string_view text) {
  if (text.size() > 512) return InputError("--step-format: longer than 512 bytes");
  StepTemplate t;
  t.source = std::string(text);
  bool has_step = false;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == ' ' || c == '\t') {
      while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
      t.pieces.push_back({Part::kSpace, ""});
      continue;
    }
    if (c == '{') {
      size_t close = text.find('}', i);
      if (close == std::string_view::npos)
        return InputError("--step-format: '{' at byte " + std::to_string(i) + " is not closed");
      auto part = FieldPart(text.substr(i + 1, close - i - 1));
      if (!part) return std::unexpected(part.error());
      if (!t.pieces.empty() && (IsNumberField(t.pieces.back().part) || t.pieces.back().part == Part::kAny) &&
          (IsNumberField(*part) || *part == Part::kAny))
        return InputError("--step-format: two fields with nothing between them at byte " + std::to_string(i));
      has_step = has_step || *part == Part::kStep;
      t.pieces.push_back({*part, ""});
      i = close + 1;
      continue;
    }
    if (c == '}') return InputError("--step-format: '}' at byte " + std::to_string(i) + " without '{'");
    size_t e = i;
    while (e < text.size() && text[e] != ' ' && text[e] != '\t' && text[e] != '{' && text[e] != '}') ++e;
    t.pieces.push_back({Part::kLiteral, std::string(text.substr(i, e - i))});
    i = e;
  }
  if (!has_step) return InputError("--step-format: needs a {step} field");
  return t;
}

bool MatchStepTemplate(const StepTemplate& t, std::string_view line, StepLine& r) {
  if (t.pieces.empty()) return false;
  if (MatchAt(t, line, 0, r)) return true;
  // Prefixes before the template: retry where its first literal occurs.
  const auto& first = t.pieces.front();
  if (first.part != Part::kLiteral) {
    for (size_t i = 1; i < line.size(); ++i)
      if (line[i - 1] == ' ' && MatchAt(t, line, i, r)) return true;
    return false;
  }
  for (size_t at = line.find(first.text, 1); at != std::string_view::npos; at = line.find(first.text, at + 1))
    if (MatchAt(t, line, at, r)) return true;
  return false;
}

}  // namespace sparkops
