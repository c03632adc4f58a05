#include "exporter/http_request.h"

#include <fmt/format.h>

#include <array>

#include "base/strings.h"

namespace sparkops {

namespace {

/// RFC 9110 tchar.
bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c)) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!IsTokenChar(c)) return false;
  return true;
}

/// Visible ASCII, space, tab and obs-text (0x80..0xff): what a field value or target may hold.
bool IsFieldText(std::string_view s) {
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && u != '\t') return false;
    if (u == 0x7f) return false;
  }
  return true;
}

bool IsKnownMethod(std::string_view m) {
  static constexpr std::array<std::string_view, 9> kMethods = {"GET",     "HEAD",    "POST",  "PUT",  "DELETE",
                                                               "OPTIONS", "CONNECT", "TRACE", "PATCH"};
  for (auto k : kMethods)
    if (m == k) return true;
  return false;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ToLower(a) == ToLower(b);
}

/// True when the comma-separated `list` holds `token` (case-insensitive): "Connection: keep-alive, Upgrade".
bool ListHas(std::string_view list, std::string_view token) {
  for (auto part : Split(list, ','))
    if (EqualsIgnoreCase(Trim(part), token)) return true;
  return false;
}

RequestHead Reject(int status) {
  RequestHead h;
  h.status = RequestHead::Status::kReject;
  h.reject_status = status;
  return h;
}

/// The line starting at `pos`: its text without the line end, and where the next line starts;
/// npos when no line end has arrived yet.
struct Line {
  std::string_view text;
  size_t next = std::string_view::npos;
};
Line NextLine(std::string_view buf, size_t pos) {
  size_t lf = buf.find('\n', pos);
  if (lf == std::string_view::npos) return {};
  std::string_view text = buf.substr(pos, lf - pos);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  return {text, lf + 1};
}

}  // namespace

RequestHead ParseRequestHead(std::string_view buf) {
  // Only the first kMaxRequestHead bytes can belong to an acceptable head.
  const std::string_view window = buf.substr(0, kMaxRequestHead);
  const bool capped = buf.size() >= kMaxRequestHead;
  size_t pos = 0;
  Line line = NextLine(window, pos);
  while (line.next != std::string_view::npos && line.text.empty() && pos < 4) {  // leading blank lines
    pos = line.next;
    line = NextLine(window, pos);
  }
  if (line.next == std::string_view::npos) return capped ? Reject(400) : RequestHead{};

  RequestHead h;
  // Request line: METHOD SP target SP HTTP/1.x, single spaces.
  std::string_view rl = line.text;
  size_t sp1 = rl.find(' '), sp2 = rl.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1) return Reject(400);
  h.method = rl.substr(0, sp1);
  std::string_view target = rl.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = rl.substr(sp2 + 1);
  if (!IsToken(h.method) || !IsKnownMethod(h.method)) return Reject(400);
  if (target.empty() || target.find(' ') != std::string_view::npos || !IsFieldText(target) ||
      target.find('\t') != std::string_view::npos)
    return Reject(400);
  if (version == "HTTP/1.0") h.http10 = true;
  else if (version != "HTTP/1.1") return Reject(400);
  h.path = target.substr(0, target.find('?'));
  if (h.path.empty()) return Reject(400);  // "?x": no path at all (origin-form needs one)
  h.keep_alive = !h.http10;

  bool have_length = false, connection_close = false, connection_keep = false;
  for (pos = line.next;;) {
    line = NextLine(window, pos);
    if (line.next == std::string_view::npos) return capped ? Reject(431) : RequestHead{};
    pos = line.next;
    if (line.text.empty()) break;
    std::string_view f = line.text;
    if (f.front() == ' ' || f.front() == '\t') return Reject(400);  // obs-fold
    size_t colon = f.find(':');
    if (colon == std::string_view::npos || !IsToken(f.substr(0, colon))) return Reject(400);
    std::string_view name = f.substr(0, colon), value = Trim(f.substr(colon + 1));
    if (!IsFieldText(value)) return Reject(400);
    if (EqualsIgnoreCase(name, "Content-Length")) {
      auto n = ParseUint(value);
      if (have_length || !n) return Reject(400);
      have_length = true;
      if (*n > 0) h.has_body = true;
    } else if (EqualsIgnoreCase(name, "Transfer-Encoding")) {
      h.has_body = true;
    } else if (EqualsIgnoreCase(name, "Connection")) {
      connection_close |= ListHas(value, "close");
      connection_keep |= ListHas(value, "keep-alive");
    }
  }
  if (connection_close) h.keep_alive = false;
  else if (h.http10) h.keep_alive = connection_keep;
  h.status = RequestHead::Status::kComplete;
  h.consumed = pos;
  return h;
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

std::string ReplyHead(int status, std::string_view content_type, size_t content_length, std::string_view allow,
                      bool close) {
  std::string out = fmt::format("HTTP/1.1 {} {}\r\n", status, ReasonPhrase(status));
  if (!content_type.empty()) out += fmt::format("Content-Type: {}\r\n", content_type);
  out += fmt::format("Content-Length: {}\r\n", content_length);
  if (!allow.empty()) out += fmt::format("Allow: {}\r\n", allow);
  if (close) out += "Connection: close\r\n";
  out += "\r\n";
  return out;
}

}  // namespace sparkops
