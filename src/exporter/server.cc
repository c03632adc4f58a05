#include "exporter/server.h"

#include <fmt/format.h>

#include "base/strings.h"

namespace sparkops {

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  ListenAddress a;
  std::string_view port;
  if (StartsWith(text, "[")) {
    auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return InputError(fmt::format("--listen: '{}': expected [IPV6]:PORT", text));
    a.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos || text.find(':') != colon)
      return InputError(fmt::format("--listen: '{}': expected HOST:PORT (IPv6 in brackets)", text));
    a.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
  }
  if (a.host.empty()) return InputError(fmt::format("--listen: '{}': the host is empty (use 127.0.0.1)", text));
  auto p = ParseUint(port);
  if (!p || *p > 65535) return InputError(fmt::format("--listen: '{}': port '{}' is not 0..65535", text, port));
  a.port = static_cast<int>(*p);
  return a;
}

bool IsLoopbackHost(std::string_view host) { return host == "localhost" || host == "::1" || StartsWith(host, "127."); }

HttpReply Route(std::string_view method, std::string_view path, const std::function<std::string()>& metrics) {
  HttpReply r;
  const bool known = path == "/metrics" || path == "/";
  if (!known) {
    r.status = 404;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "not found: this exporter serves /metrics\n";
    return r;
  }
  if (method != "GET" && method != "HEAD") {
    r.status = 405;
    r.allow = "GET, HEAD";
    r.content_type = "text/plain; charset=utf-8";
    r.body = "method not allowed: the exporter is read-only (GET, HEAD)\n";
    return r;
  }
  r.status = 200;
  if (path == "/metrics") {
    r.content_type = kMetricsContentType;
    r.body = metrics();
  } else {
    r.content_type = "text/html; charset=utf-8";
    r.body =
        "<!DOCTYPE html>\n<html><head><title>sparkops exporter</title></head><body>\n"
        "<h1>sparkops exporter</h1>\n"
        "<p>GPU, unified-memory, workload and preflight metrics for Prometheus.</p>\n"
        "<p><a href=\"/metrics\">/metrics</a></p>\n</body></html>\n";
  }
  return r;
}

}  // namespace sparkops
