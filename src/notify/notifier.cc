#include "notify/notifier.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/strings.h"
#include "notify/notify_cmd.h"

namespace sparkops {

Result<void> ValidateNotifyOptions(const NotifyOptions& o) {
  for (const std::string& u : o.urls)
    if (auto p = ParseHttpUrl(u); !p) return InputError(fmt::format("--notify '{}': {}", u, p.error().message));
  for (const std::string& c : o.cmds)
    if (Trim(c).empty()) return InputError("--notify-cmd: an empty command");
  return {};
}

std::unique_ptr<Notifier> Notifier::Start(const NotifyOptions& o, NoticeContext ctx, FailureFn on_failure) {
  if (o.urls.empty() && o.cmds.empty()) return nullptr;
  return std::unique_ptr<Notifier>(new Notifier(o, std::move(ctx), std::move(on_failure)));
}

Notifier::Notifier(const NotifyOptions& o, NoticeContext ctx, FailureFn f)
    : opts_(o), ctx_(ctx), on_failure_(std::move(f)), filter_(std::move(ctx)) {
  for (const std::string& u : o.urls) {
    HttpUrl url = *ParseHttpUrl(u);
    targets_.push_back({url, "", url.Origin()});
  }
  for (size_t i = 0; i < o.cmds.size(); ++i)
    targets_.push_back({std::nullopt, o.cmds[i], fmt::format("notify-cmd #{}", i + 1)});
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

void Notifier::Offer(const nlohmann::ordered_json& record) {
  std::lock_guard lock(mu_);
  if (joined_) return;
  auto n = filter_.Select(record, std::chrono::steady_clock::now());
  if (!n) return;
  if (queue_.size() >= opts_.queue) queue_.pop_front(), ++dropped_;
  queue_.push_back(std::move(*n));
  // Started with the first notice, never before: run forks its sentinel while it has one thread.
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  cv_.notify_all();
}

std::string Notifier::Deliver(const Target& t, const Notice& n, int& tries) {
  const std::string& body = n.body;
  if (!t.url) {
    tries = 1;
    std::vector<std::pair<std::string, std::string>> env{{"SPARKOPS_EVENT", n.event}};
    if (!ctx_.run_dir.empty()) env.emplace_back("SPARKOPS_RUN_DIR", ctx_.run_dir);  // guard, sample: no run
    auto r = RunNotifyCmd(t.cmd, body + "\n", env, opts_.cmd_timeout, stop_fd_);
    return r ? "" : r.error().message;
  }
  std::string why;
  for (tries = 1;; ++tries) {
    auto r = PostJson(*t.url, body, opts_.http_timeout, stop_fd_);
    if (r && *r >= 200 && *r < 300) return "";
    why = r ? fmt::format("HTTP status {}", *r) : r.error().message;
    if (static_cast<size_t>(tries) > opts_.backoff.size() || why.find("abandoned") != std::string::npos) return why;
    pollfd p{stop_fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(opts_.backoff[static_cast<size_t>(tries) - 1].count())) > 0)
      return why + "; abandoned: run is ending";
  }
}

void Notifier::Loop() {
  for (;;) {
    std::optional<Notice> n;
    uint64_t dropped = 0;
    bool abandon = false;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return !queue_.empty() || closing_; });
      if (!queue_.empty()) n = std::move(queue_.front()), queue_.pop_front();
      dropped = std::exchange(dropped_, 0);
      busy_ = n.has_value();
      abandon = abandoned_;
    }
    if (dropped)  // outside the lock: run writes the event, and its recorder offers it back here
      on_failure_({{"target", "queue"},
                   {"dropped", dropped},
                   {"why", fmt::format("queue full ({}): the oldest {} notices were dropped", opts_.queue, dropped)}});
    if (!n) return;  // closing, and nothing is left
    for (const Target& t : targets_) {
      int tries = 0;
      std::string why = abandon ? "abandoned: run ended before its delivery" : Deliver(t, *n, tries);
      if (!why.empty()) on_failure_({{"event", n->event}, {"target", t.name}, {"why", why}, {"tries", tries}});
    }
    std::lock_guard lock(mu_);
    busy_ = false;
    cv_.notify_all();
  }
}

void Notifier::Close() {
  std::unique_lock lock(mu_);
  if (joined_) return;
  closing_ = true;
  cv_.notify_all();
  cv_.wait_for(lock, opts_.drain, [&] { return queue_.empty() && !busy_; });
  abandoned_ = joined_ = true;  // from now on Offer tells nothing
  ::eventfd_write(stop_fd_, 1);  // what is still going is abandoned
  std::thread t = std::move(thread_);
  lock.unlock();
  if (t.joinable()) t.join();
  ::close(stop_fd_);
}

}  // namespace sparkops
