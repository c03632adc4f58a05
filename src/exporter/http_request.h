#pragma once
/// HTTP/1.x request heads for the exporter's server (server_loop.cc): a pure, incremental parser
/// (fuzzed: fuzz/http_request_fuzz.cc) and the reply head writer. Only what a read-only
/// /metrics endpoint needs: request line, Connection, and whether a body was announced (bodies
/// are never read: such a request is answered and its connection closed).
#include <cstddef>
#include <string>
#include <string_view>

namespace sparkops {

/// The request line and header block together may hold this many bytes (terminating blank line
/// included); a longer one is answered 400 (no line end in it: the request line is too long) or
/// 431 (the header block is) and the connection closed.
inline constexpr size_t kMaxRequestHead = 8192;

struct RequestHead {
  enum class Status {
    kNeedMore,  ///< no complete head yet, and within the cap: read more
    kComplete,  ///< a head of `consumed` bytes was parsed
    kReject,    ///< answer `reject_status`, then close (malformed, too large, unsupported)
  };
  Status status = Status::kNeedMore;
  size_t consumed = 0;  ///< bytes of the head, leading blank lines included (kComplete)
  int reject_status = 0;
  std::string_view method, path;  ///< views into the parsed buffer; `path` without its ?query
  bool http10 = false;            ///< HTTP/1.0 (keep-alive only when asked for)
  bool keep_alive = true;         ///< false on "Connection: close" (or 1.0 without keep-alive)
  bool has_body = false;          ///< Content-Length > 0 or Transfer-Encoding present
};

/// Parses the head at the start of `buf` (bytes received so far on a connection, after earlier
/// requests were removed). Lines end in CRLF or a bare LF; leading blank lines are skipped (RFC
/// 9112 2.2). Methods are upper-case tokens of the HTTP method registry (others: 400); versions
/// HTTP/1.0 and HTTP/1.1 (others: 400); obsolete line folding, a space before a header's colon,
/// control bytes, a duplicate or non-numeric Content-Length: 400.
RequestHead ParseRequestHead(std::string_view buf);

/// The status line and headers (terminating blank line included) of a reply whose body is
/// `content_length` bytes: Content-Type (when not empty), Content-Length, Allow (when not empty),
/// and "Connection: close" when `close`.
std::string ReplyHead(int status, std::string_view content_type, size_t content_length, std::string_view allow,
                      bool close);

/// Reason phrase for the statuses the exporter sends ("OK", "Not Found", ...; "Error" otherwise).
std::string_view ReasonPhrase(int status);

}  // namespace sparkops
