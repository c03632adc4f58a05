#include "host/markers.h"

#include <cctype>
#include <vector>

#include "base/strings.h"
#include "host/distinfo.h"

namespace sparkops {

MarkerEnv LinuxMarkerEnv(std::string_view machine, std::string_view python_version) {
  MarkerEnv e;
  e.vars = {{"platform_machine", std::string(machine)},
            {"sys_platform", "linux"},
            {"platform_system", "Linux"},
            {"os_name", "posix"},
            {"implementation_name", "cpython"},
            {"platform_python_implementation", "CPython"},
            {"extra", ""}};
  if (!python_version.empty()) {
    e.vars["python_version"] = std::string(python_version);
    e.vars["python_full_version"] = std::string(python_version) + ".0";
  }
  return e;
}

namespace {

/// Three-valued truth: 0 false, 1 true, 2 unknown.
using Tri = int;
constexpr Tri kUnknown = 2;

struct Parser {
  std::string_view s;
  const MarkerEnv& env;
  size_t pos = 0;
  int depth = 0;
  bool bad = false;

  void Skip() {
    while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos]))) ++pos;
  }
  bool Word(std::string_view w) {  // a keyword followed by a non-identifier character
    Skip();
    if (s.substr(pos, w.size()) != w) return false;
    size_t e = pos + w.size();
    if (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_')) return false;
    pos = e;
    return true;
  }
  /// A quoted string or a variable; nullopt (unknown) for an unknown variable.
  std::optional<std::string> Value(bool& is_literal) {
    Skip();
    if (pos < s.size() && (s[pos] == '"' || s[pos] == '\'')) {
      char q = s[pos];
      size_t e = s.find(q, pos + 1);
      if (e == std::string_view::npos) return bad = true, std::nullopt;
      std::string v(s.substr(pos + 1, e - pos - 1));
      pos = e + 1;
      is_literal = true;
      return v;
    }
    size_t b = pos;
    while (pos < s.size() && (std::isalnum(static_cast<unsigned char>(s[pos])) || s[pos] == '_' || s[pos] == '.'))
      ++pos;
    if (b == pos) return bad = true, std::nullopt;
    is_literal = false;
    auto it = env.vars.find(s.substr(b, pos - b));
    if (it == env.vars.end()) return std::nullopt;
    return it->second;
  }
  std::string Op() {
    Skip();
    for (std::string_view op : {"===", "==", "!=", "<=", ">=", "~=", "<", ">"})
      if (s.substr(pos, op.size()) == op) return pos += op.size(), std::string(op);
    if (Word("in")) return "in";
    if (Word("not") && Word("in")) return "not in";
    bad = true;
    return "";
  }
  Tri Compare(const std::string& l, const std::string& op, const std::string& r) {
    if (op == "in") return r.find(l) != std::string::npos;
    if (op == "not in") return r.find(l) == std::string::npos;
    if (op != "===" && !l.empty() && std::isdigit(static_cast<unsigned char>(l[0])) && !r.empty() &&
        std::isdigit(static_cast<unsigned char>(r[0]))) {
      auto v = SatisfiesSpec(l, op + r);
      if (v) return *v;
    }
    if (op == "==" || op == "===") return l == r;
    if (op == "!=") return l != r;
    if (op == "<") return l < r;
    if (op == "<=") return l <= r;
    if (op == ">") return l > r;
    if (op == ">=") return l >= r;
    return kUnknown;
  }
  Tri Atom() {
    Skip();
    if (pos < s.size() && s[pos] == '(') {
      if (++depth > 32) return bad = true, kUnknown;
      ++pos;
      Tri v = Or();
      Skip();
      if (pos >= s.size() || s[pos] != ')') return bad = true, kUnknown;
      ++pos;
      --depth;
      return v;
    }
    bool ll = false, rl = false;
    auto l = Value(ll);
    std::string op = Op();
    auto r = Value(rl);
    if (bad) return kUnknown;
    if (!l || !r) return kUnknown;
    return Compare(*l, op, *r);
  }
  Tri And() {
    Tri v = Atom();
    while (!bad && Word("and")) {
      Tri w = Atom();
      v = (v == 0 || w == 0) ? 0 : (v == kUnknown || w == kUnknown) ? kUnknown : 1;
    }
    return v;
  }
  Tri Or() {
    Tri v = And();
    while (!bad && Word("or")) {
      Tri w = And();
      v = (v == 1 || w == 1) ? 1 : (v == kUnknown || w == kUnknown) ? kUnknown : 0;
    }
    return v;
  }
};

}  // namespace

std::optional<bool> EvaluateMarker(std::string_view marker, const MarkerEnv& env) {
  Parser p{marker, env};
  Tri v = p.Or();
  p.Skip();
  if (p.bad || p.pos != marker.size() || v == kUnknown) return std::nullopt;
  return v == 1;
}

std::string PythonVersionFromSiteDir(std::string_view site_dir) {
  size_t at = site_dir.rfind("/python");
  if (at == std::string_view::npos) return "";
  std::string_view rest = site_dir.substr(at + 7);
  size_t e = 0;
  while (e < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[e])) || rest[e] == '.')) ++e;
  std::string_view v = rest.substr(0, e);
  if (v.find('.') == std::string_view::npos || (e < rest.size() && rest[e] != '/')) return "";
  return std::string(v);
}

}  // namespace sparkops
