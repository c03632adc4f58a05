#include "workloads/argv.h"

#include <cmath>

#include "base/strings.h"
#include "host/proctable.h"

namespace sparkops {

namespace {
std::string Normalize(std::string_view flag) {
  std::string s(flag);
  if (StartsWith(s, "--"))
    for (size_t i = 2; i < s.size(); ++i)
      if (s[i] == '_') s[i] = '-';
  return s;
}

bool NameMatches(std::string_view word, std::initializer_list<std::string_view> names) {
  std::string w = Normalize(word);
  for (auto n : names)
    if (w == Normalize(n)) return true;
  return false;
}
}  // namespace

std::optional<std::string> FlagValue(const std::vector<std::string>& argv,
                                     std::initializer_list<std::string_view> names, size_t from) {
  std::optional<std::string> found;
  for (size_t i = from; i < argv.size(); ++i) {
    const std::string& w = argv[i];
    if (w == "--") break;
    size_t eq = w.find('=');
    if (StartsWith(w, "-") && eq != std::string::npos && NameMatches(std::string_view(w).substr(0, eq), names)) {
      found = w.substr(eq + 1);
    } else if (NameMatches(w, names)) {
      found = i + 1 < argv.size() ? argv[i + 1] : std::string();
    }
  }
  return found;
}

bool HasFlag(const std::vector<std::string>& argv, std::initializer_list<std::string_view> names, size_t from) {
  for (size_t i = from; i < argv.size(); ++i) {
    std::string_view w = argv[i];
    size_t eq = w.find('=');
    if (NameMatches(eq == std::string_view::npos ? w : w.substr(0, eq), names)) return true;
  }
  return false;
}

std::optional<std::string> KeyValueArg(const std::vector<std::string>& argv, std::string_view key, size_t from) {
  std::optional<std::string> found;
  for (size_t i = from; i < argv.size(); ++i)
    if (!StartsWith(argv[i], "-") && StartsWith(argv[i], key) && argv[i].size() > key.size() &&
        argv[i][key.size()] == '=')
      found = argv[i].substr(key.size() + 1);
  return found;
}

Launch ParseLaunch(const std::vector<std::string>& argv) {
  Launch l;
  if (argv.empty()) return l;
  if (!IsPythonInterpreter(argv[0])) {
    l.program = std::string(BaseName(argv[0]));
    l.next = 1;
    return l;
  }
  l.python = true;
  size_t i = 1;
  while (i < argv.size()) {
    const std::string& w = argv[i];
    if (w == "-m" && i + 1 < argv.size()) {
      l.module = argv[i + 1];
      l.next = i + 2;
      return l;
    }
    if (w == "-c") {  // inline program: nothing to name
      l.next = argv.size();
      return l;
    }
    if (w == "-X" || w == "-W" || w == "--check-hash-based-pycs") {
      i += 2;
      continue;
    }
    if (StartsWith(w, "-")) {
      ++i;
      continue;
    }
    if (EndsWith(w, ".py")) l.script = w;
    else l.program = std::string(BaseName(w));  // a console script: python3 /venv/bin/torchrun ...
    l.next = i + 1;
    return l;
  }
  l.next = argv.size();
  return l;
}

std::string ShortCommand(const std::vector<std::string>& argv, size_t max) {
  std::string s = Join(argv, " ");
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

std::optional<uint64_t> ParseByteSize(std::string_view s) {
  s = Trim(s);
  size_t i = 0;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
  auto num = ParseDouble(s.substr(0, i));
  if (!num || *num < 0) return std::nullopt;
  std::string unit = ToLower(Trim(s.substr(i)));
  double mult = 1;
  if (unit.empty() || unit == "b") mult = 1;
  else if (unit == "k" || unit == "kib") mult = 1024.0;
  else if (unit == "m" || unit == "mib") mult = 1024.0 * 1024;
  else if (unit == "g" || unit == "gib") mult = 1024.0 * 1024 * 1024;
  else if (unit == "t" || unit == "tib") mult = 1024.0 * 1024 * 1024 * 1024;
  else if (unit == "kb") mult = 1e3;
  else if (unit == "mb") mult = 1e6;
  else if (unit == "gb") mult = 1e9;
  else if (unit == "tb") mult = 1e12;
  else return std::nullopt;
  double v = *num * mult;
  if (v >= 1.8e19) return std::nullopt;
  return static_cast<uint64_t>(std::llround(v));
}

}  // namespace sparkops
