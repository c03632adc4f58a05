#include "host/torch_version.h"

#include <regex>

#include "base/strings.h"

namespace sparkops {

namespace {
/// Value of a quoted string starting at `s` ('x' or "x"); nullopt if `s` is not a string literal.
std::optional<std::string> Quoted(std::string_view s) {
  s = Trim(s);
  if (s.size() < 2 || (s[0] != '\'' && s[0] != '"')) return std::nullopt;
  size_t end = s.find(s[0], 1);
  if (end == std::string_view::npos) return std::nullopt;
  return std::string(s.substr(1, end - 1));
}

/// "name", "name: Optional[str]" or "name: str" followed by '=': returns the right-hand side.
std::optional<std::string_view> Assignment(std::string_view line, std::string_view name) {
  if (!StartsWith(line, name)) return std::nullopt;
  std::string_view rest = line.substr(name.size());
  size_t eq = rest.find('=');
  if (eq == std::string_view::npos) return std::nullopt;
  std::string_view lhs = Trim(rest.substr(0, eq));
  if (!lhs.empty() && lhs[0] != ':') return std::nullopt;  // e.g. "cuda_x = ..." is another name
  return Trim(rest.substr(eq + 1));
}
}  // namespace

Result<TorchVersion> ParseTorchVersionPy(std::string_view text, const std::string& name) {
  TorchVersion tv;
  bool have_version = false;
  for (auto raw : SplitLines(text)) {
    std::string_view line = raw;
    if (line.empty() || line[0] == ' ' || line[0] == '\t' || line[0] == '#') continue;  // top level only
    if (auto rhs = Assignment(line, "__version__")) {
      auto q = Quoted(*rhs);
      if (!q || q->empty()) return InputError(name + ": __version__ is not a string literal");
      tv.version = *q;
      have_version = true;
    } else if (auto rhs = Assignment(line, "cuda")) {
      tv.cuda_line_seen = true;
      if (Trim(*rhs) == "None") tv.cuda.reset();
      else if (auto q = Quoted(*rhs)) tv.cuda = *q;
      else return InputError(name + ": cuda is neither a string nor None");
    } else if (auto rhs = Assignment(line, "git_version")) {
      if (auto q = Quoted(*rhs)) tv.git_version = *q;
    }
  }
  if (!have_version) return InputError(name + ": no __version__ line");
  return tv;
}

std::optional<int> CudaMajor(std::string_view cuda) {
  size_t dot = cuda.find('.');
  auto v = ParseInt(cuda.substr(0, dot));
  if (!v || *v <= 0 || *v > 99) return std::nullopt;
  return static_cast<int>(*v);
}

std::string CudaTag(std::string_view version) {
  size_t plus = version.find('+');
  if (plus == std::string_view::npos) return "";
  std::string_view local = version.substr(plus + 1);
  if (local.size() >= 4 && StartsWith(local, "cu") &&
      std::all_of(local.begin() + 2, local.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::string(local);
  return "";
}

std::string NgcRelease(std::string_view version) {
  if (version.size() > 256) return "";  // no real version is this long; bounds std::regex's recursion
  static const std::regex re(R"(\.nv(\d{2}\.\d{1,2}))");
  std::match_results<std::string_view::const_iterator> m;
  if (std::regex_search(version.begin(), version.end(), m, re)) return m[1].str();
  return "";
}

}  // namespace sparkops
