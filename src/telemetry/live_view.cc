#include "telemetry/live_view.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace sparkops {

namespace {
constexpr size_t kPiece = 16u << 10;  ///< bytes per write(): progress is seen at least this often
int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

LiveView::LiveView(int out_fd, int err_fd, Limits limits) : fd_{out_fd, err_fd}, limits_(limits) {
  thread_ = std::thread([this] { WriterLoop(); });
}

bool LiveView::Stalled() const {
  int64_t since = writing_since_ns_.load();
  return since != 0 && NowNs() - since >= int64_t{limits_.stall_ms} * 1'000'000;
}

void LiveView::Show(int stream, std::string_view bytes) {
  if (stream < 0 || stream > 1 || fd_[stream] < 0 || bytes.empty()) return;
  std::unique_lock lock(mu_);
  while (!dead_[stream] && queued_ > 0 && queued_ + bytes.size() > limits_.max_queued) {
    if (Stalled()) {
      skipped_[stream] += bytes.size();
      skipped_total_ += bytes.size();
      return;
    }
    cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
  if (dead_[stream] || closing_) return;
  QueueNotes();
  queue_.push_back({stream, std::string(bytes)});
  queued_ += bytes.size();
  cv_.notify_all();
}

void LiveView::QueueNotes() {
  for (int s = 0; s < 2; ++s) {
    if (skipped_[s] == 0 || dead_[s]) continue;
    std::string note = "\n[sparkops run: " + std::to_string(skipped_[s]) +
                       " bytes of output not shown here while this view's reader was stopped; train.log has "
                       "every line]\n";
    queued_ += note.size();
    queue_.push_back({s, std::move(note)});
    skipped_[s] = 0;
  }
}

void LiveView::Close() {
  {
    std::lock_guard lock(mu_);
    if (closing_ && !thread_.joinable()) return;
    QueueNotes();
    closing_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

uint64_t LiveView::skipped_bytes() const {
  std::lock_guard lock(mu_);
  return skipped_total_;
}

bool LiveView::Write(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    writing_since_ns_ = NowNs();
    ssize_t w = ::write(fd, bytes.data(), std::min(bytes.size(), kPiece));
    writing_since_ns_ = 0;
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EPIPE) return false;
    if (w <= 0) return true;  // another error (EAGAIN on a non-blocking terminal ...): this chunk is lost
    bytes.remove_prefix(static_cast<size_t>(w));
  }
  return true;
}

void LiveView::WriterLoop() {
  // A reader that goes away must end the view, not the process: the SIGPIPE a write raises is
  // directed at this thread, blocked here, and discarded with it; write() returns EPIPE.
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, nullptr);
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return !queue_.empty() || closing_; });
    if (queue_.empty()) return;  // closing, and everything written
    Chunk c = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    bool alive = Write(fd_[c.stream], c.bytes);
    lock.lock();
    queued_ -= c.bytes.size();
    if (!alive) {
      dead_[c.stream] = true;
      std::erase_if(queue_, [&](const Chunk& q) {
        if (q.stream != c.stream) return false;
        queued_ -= q.bytes.size();
        return true;
      });
    }
    cv_.notify_all();
  }
}

}  // namespace sparkops
