#pragma once
/// Delivers notices (notify/notice.h) to `--notify` URLs and `--notify-cmd` commands from one
/// thread, so that offering an event never waits on a delivery: the queue holds kQueue notices and
/// drops the oldest when full (counted, reported as one `notify_failed`). A delivery that fails
/// after its tries is reported through `on_failure` (run writes it as a `notify_failed` event), never
/// as an error. Bounds in docs/notify.md.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "notify/http_post.h"
#include "notify/notice.h"

namespace sparkops {

struct NotifyOptions {
  std::vector<std::string> urls;  ///< --notify
  std::vector<std::string> cmds;  ///< --notify-cmd
  size_t queue = 64;
  std::chrono::milliseconds http_timeout{5000};  ///< connect + send + the status line, per try
  std::vector<std::chrono::milliseconds> backoff{std::chrono::milliseconds(1000), std::chrono::milliseconds(2000)};
  std::chrono::milliseconds cmd_timeout{10000};
  std::chrono::milliseconds drain{10000};  ///< at Close, how long deliveries may still go on
};

/// Input error naming the flag and URL or command at fault (`run` exits 2).
Result<void> ValidateNotifyOptions(const NotifyOptions& o);

class Notifier {
 public:
  /// The fields of a `notify_failed` event: event, target, why, tries (or dropped for the queue).
  using FailureFn = std::function<void(const nlohmann::ordered_json&)>;
  /// Null when there is no target. `o` must be valid. The delivery thread starts with the first
  /// notice offered (`run` forks its sentinel while single-threaded, after the notifier is made).
  static std::unique_ptr<Notifier> Start(const NotifyOptions& o, NoticeContext ctx, FailureFn on_failure);
  ~Notifier() { Close(); }
  /// Thread-safe and non-blocking: queues `record`'s notice if it is one to tell.
  void Offer(const nlohmann::ordered_json& record);
  /// Lets queued deliveries go on for at most the drain time, then abandons the rest (each one a
  /// failure) and joins the thread. Idempotent; Offer tells nothing after it.
  void Close();

 private:
  struct Target {
    std::optional<HttpUrl> url;
    std::string cmd;
    std::string name;  ///< for notify_failed: the URL's origin, or `notify-cmd #N`
  };
  Notifier(const NotifyOptions& o, NoticeContext ctx, FailureFn f);
  void Loop();
  /// "" when delivered; else why not. `tries`: how many were made.
  std::string Deliver(const Target& t, const Notice& n, int& tries);

  NotifyOptions opts_;
  NoticeContext ctx_;
  FailureFn on_failure_;
  std::vector<Target> targets_;
  NoticeFilter filter_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Notice> queue_;
  uint64_t dropped_ = 0;
  bool busy_ = false, closing_ = false, abandoned_ = false, joined_ = false;
  int stop_fd_ = -1;  ///< an eventfd: readable once deliveries are abandoned
  std::thread thread_;
};

}  // namespace sparkops
