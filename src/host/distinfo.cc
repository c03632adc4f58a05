#include "host/distinfo.h"

#include <cctype>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "base/strings.h"

namespace sparkops {

namespace {
std::string fmt_line(const std::string& file, size_t line, const char* what) {
  return file + ": line " + std::to_string(line) + ": " + what;
}
}  // namespace

Requirement ParseRequirement(std::string_view s) {
  Requirement r;
  size_t semi = s.find(';');
  if (semi != std::string_view::npos) {
    r.marker = std::string(Trim(s.substr(semi + 1)));
    s = s.substr(0, semi);
  }
  s = Trim(s);
  size_t i = 0;
  while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '-' || s[i] == '_' || s[i] == '.'))
    ++i;
  r.name = std::string(s.substr(0, i));
  std::string_view rest = Trim(s.substr(i));
  if (!rest.empty() && rest[0] == '[') {
    size_t close = rest.find(']');
    if (close != std::string_view::npos) {
      r.extras = std::string(rest.substr(1, close - 1));
      rest = Trim(rest.substr(close + 1));
    }
  }
  if (!rest.empty() && rest[0] == '(' && rest.back() == ')') rest = Trim(rest.substr(1, rest.size() - 2));
  std::string spec;
  for (char c : rest)
    if (c != ' ') spec += c;
  r.spec = spec;
  return r;
}

Result<Metadata> ParseMetadata(std::string_view text, const std::string& file) {
  Metadata md;
  for (auto line : SplitLines(text)) {
    if (Trim(line).empty()) break;  // end of headers; the description follows
    if (line[0] == ' ' || line[0] == '\t') continue;  // continuation of a folded header
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string key = ToLower(line.substr(0, colon));
    std::string_view value = Trim(line.substr(colon + 1));
    if (key == "name") md.name = std::string(value);
    else if (key == "version") md.version = std::string(value);
    else if (key == "requires-dist") md.requires_dist.push_back(ParseRequirement(value));
  }
  if (md.name.empty()) return InputError(file + ": no Name header");
  if (md.version.empty()) return InputError(file + ": no Version header");
  return md;
}

namespace {
/// CSV fields of the row starting at text[*i] (quotes, "" escapes, line breaks inside quotes);
/// moves *i past the row's '\n'. The general path, for rows with a quote or a stray '\r'.
Result<std::vector<std::string>> CsvRow(std::string_view text, size_t* i, const std::string& file, size_t lineno) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (; *i < text.size(); ++*i) {
    char c = text[*i];
    if (quoted) {
      if (c == '"' && *i + 1 < text.size() && text[*i + 1] == '"') {
        fields.back() += '"';
        ++*i;
      } else if (c == '"') quoted = false;
      else fields.back() += c;
    } else if (c == '"' && fields.back().empty()) {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '\n') {
      ++*i;
      break;
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  if (quoted) return InputError(fmt_line(file, lineno, "unterminated quote"));
  return fields;
}
}  // namespace

Result<size_t> ScanRecord(std::string_view text, const std::string& file,
                          const std::function<void(const RecordRowView&)>& row, size_t max_rows) {
  size_t lineno = 0, rows = 0, i = 0;
  // The next '"' and '\r' at or after the current line, found once and moved forward only when a
  // line passes them (one pass over the text, not two searches per line).
  size_t quote = text.find('"'), cr = text.find('\r');
  while (i < text.size()) {
    ++lineno;
    const size_t nl = text.find('\n', i);
    std::string_view line = text.substr(i, (nl == std::string_view::npos ? text.size() : nl) - i);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string_view f[3];
    size_t nf = 0;
    std::vector<std::string> owned;  // the general path's fields
    if (quote != std::string_view::npos && quote < i) quote = text.find('"', i);
    if (cr != std::string_view::npos && cr < i) cr = text.find('\r', i);
    const size_t line_end = i + line.size();
    if ((quote == std::string_view::npos || quote >= line_end) && (cr == std::string_view::npos || cr >= line_end)) {
      i = nl == std::string_view::npos ? text.size() : nl + 1;
      if (line.empty()) continue;  // blank line
      for (size_t start = 0;;) {
        const size_t comma = line.find(',', start);
        if (nf < 3)
          f[nf] = line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        ++nf;
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
    } else {
      auto fields = CsvRow(text, &i, file, lineno);
      if (!fields) return std::unexpected(fields.error());
      owned = std::move(*fields);
      if (owned.size() == 1 && owned[0].empty()) continue;  // blank line
      nf = owned.size();
      for (size_t k = 0; k < 3 && k < nf; ++k) f[k] = owned[k];
    }
    if (nf != 3) return InputError(fmt_line(file, lineno, "expected path,hash,size"));
    if (f[0].empty()) return InputError(fmt_line(file, lineno, "empty path"));
    RecordRowView v{f[0], f[1], std::nullopt};
    if (!f[2].empty()) {
      v.size = ParseUint(f[2]);
      if (!v.size) return InputError(fmt_line(file, lineno, "size is not a number"));
    }
    if (rows >= max_rows) return InputError(file + ": more than " + std::to_string(max_rows) + " rows");
    ++rows;
    row(v);
  }
  return rows;
}

Result<std::vector<RecordEntry>> ParseRecord(std::string_view text, const std::string& file, size_t max_rows) {
  std::vector<RecordEntry> rows;
  auto n = ScanRecord(
      text, file,
      [&](const RecordRowView& r) {
        rows.push_back({std::string(r.path), std::string(r.hash), r.size});
      },
      max_rows);
  if (!n) return std::unexpected(n.error());
  return rows;
}

Result<DirectUrl> ParseDirectUrl(std::string_view text, const std::string& file) {
  auto j = ParseJsonOrDiscarded(text);
  if (j.is_discarded() || !j.is_object()) return InputError(file + ": not a JSON object");
  DirectUrl d;
  if (!j.contains("url") || !j["url"].is_string()) return InputError(file + ": no \"url\" string");
  d.url = j["url"].get<std::string>();
  if (j.contains("dir_info") && j["dir_info"].is_object() && j["dir_info"].value("editable", false)) d.editable = true;
  if (j.contains("vcs_info") && j["vcs_info"].is_object() && j["vcs_info"].contains("vcs") &&
      j["vcs_info"]["vcs"].is_string())
    d.vcs = j["vcs_info"]["vcs"].get<std::string>();
  return d;
}

std::string NormalizeName(std::string_view name) {
  std::string out;
  bool sep = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      sep = true;
      continue;
    }
    if (sep && !out.empty()) out += '-';
    sep = false;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::optional<DistDirName> ParseDistDirName(std::string_view d) {
  DistDirName r;
  if (EndsWith(d, ".dist-info")) d.remove_suffix(10);
  else if (EndsWith(d, ".egg-info")) {
    d.remove_suffix(9);
    r.egg = true;
  } else return std::nullopt;
  // Names never contain '-' once escaped; the first '-' separates name and version.
  size_t dash = d.find('-');
  r.name = std::string(d.substr(0, dash));
  if (dash != std::string_view::npos) {
    std::string_view rest = d.substr(dash + 1);
    size_t next = rest.find('-');  // egg-info may carry "-py3.12" after the version
    r.version = std::string(rest.substr(0, next));
  }
  if (r.name.empty() || (!r.egg && r.version.empty())) return std::nullopt;
  return r;
}

std::string_view PublicVersion(std::string_view v) { return v.substr(0, v.find('+')); }

namespace {
struct ParsedVersion {
  std::vector<uint64_t> release;
  int pre_rank = 3;  // 0 dev, 1 a, 2 b/rc ... 3 final, 4 post
  uint64_t pre_num = 0;
  bool ok = false;
};
ParsedVersion ParseVer(std::string_view v) {
  ParsedVersion p;
  v = Trim(PublicVersion(v));
  if (!v.empty() && (v[0] == 'v' || v[0] == 'V')) v.remove_prefix(1);
  size_t i = 0;
  while (i < v.size()) {
    size_t j = i;
    while (j < v.size() && std::isdigit(static_cast<unsigned char>(v[j]))) ++j;
    if (j == i) break;
    p.release.push_back(std::strtoull(std::string(v.substr(i, j - i)).c_str(), nullptr, 10));
    i = j;
    if (i < v.size() && v[i] == '.' && i + 1 < v.size() && std::isdigit(static_cast<unsigned char>(v[i + 1]))) ++i;
    else break;
  }
  if (p.release.empty()) return p;
  std::string rest = ToLower(v.substr(i));
  while (!rest.empty() && (rest[0] == '.' || rest[0] == '-' || rest[0] == '_')) rest.erase(0, 1);
  auto num = [](std::string_view s) {
    auto n = ParseUint(s);
    return n ? *n : 0;
  };
  if (rest.empty()) p.pre_rank = 3;
  else if (StartsWith(rest, "dev")) {
    p.pre_rank = 0;
    p.pre_num = num(std::string_view(rest).substr(3));
  } else if (StartsWith(rest, "rc")) {
    p.pre_rank = 2;
    p.pre_num = num(std::string_view(rest).substr(2));
  } else if (StartsWith(rest, "post")) {
    p.pre_rank = 4;
    p.pre_num = num(std::string_view(rest).substr(4));
  } else if (rest[0] == 'a') {
    p.pre_rank = 1;
    p.pre_num = num(std::string_view(rest).substr(1));
  } else if (rest[0] == 'b') {
    p.pre_rank = 1;
    p.pre_num = 1000 + num(std::string_view(rest).substr(1));
  }
  p.ok = true;
  return p;
}
}  // namespace

int CompareVersions(std::string_view a, std::string_view b) {
  ParsedVersion x = ParseVer(a), y = ParseVer(b);
  size_t n = std::max(x.release.size(), y.release.size());
  for (size_t i = 0; i < n; ++i) {
    uint64_t u = i < x.release.size() ? x.release[i] : 0, v = i < y.release.size() ? y.release[i] : 0;
    if (u != v) return u < v ? -1 : 1;
  }
  if (x.pre_rank != y.pre_rank) return x.pre_rank < y.pre_rank ? -1 : 1;
  if (x.pre_num != y.pre_num) return x.pre_num < y.pre_num ? -1 : 1;
  return 0;
}

std::optional<bool> SatisfiesSpec(std::string_view version, std::string_view spec) {
  if (Trim(spec).empty()) return true;
  if (!ParseVer(version).ok) return std::nullopt;
  for (auto part : Split(spec, ',')) {
    part = Trim(part);
    if (part.empty()) continue;
    size_t k = 0;
    while (k < part.size() && std::string_view("<>=!~").find(part[k]) != std::string_view::npos) ++k;
    std::string op(part.substr(0, k));
    std::string_view want = Trim(part.substr(k));
    if (want.empty()) return std::nullopt;
    bool ok;
    if (EndsWith(want, ".*")) {  // "==2.9.*": prefix match on the public version
      std::string_view pre = want.substr(0, want.size() - 1);
      bool match = StartsWith(PublicVersion(version), pre);
      if (op == "==") ok = match;
      else if (op == "!=") ok = !match;
      else return std::nullopt;
    } else {
      if (!ParseVer(want).ok) return std::nullopt;
      int c = CompareVersions(version, want);
      if (op == "==" || op == "===") ok = c == 0;
      else if (op == "!=") ok = c != 0;
      else if (op == ">=" || op == "~=") ok = c >= 0;
      else if (op == "<=") ok = c <= 0;
      else if (op == ">") ok = c > 0;
      else if (op == "<") ok = c < 0;
      else return std::nullopt;
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace sparkops
