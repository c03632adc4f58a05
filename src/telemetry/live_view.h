#pragma once
/// The live view of `sparkops run`: the job's output copied to run's stdout/stderr by a writer
/// thread, so a reader that stops reading (a paused pager, Ctrl-S on a terminal) cannot hold up
/// the job or the recording. A reader that is slow but still reading gets everything (the job
/// waits for it, as it would without sparkops); one stuck in a single write for `stall_ms` gets
/// the bytes that do not fit in the queue skipped, then a note saying how many (train.log has
/// them all). A reader that has gone (EPIPE) ends that stream's view.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace sparkops {

class LiveView {
 public:
  struct Limits {
    size_t max_queued = 8u << 20;  ///< bytes waiting for the reader, both streams together
    int stall_ms = 2000;           ///< a write blocked this long means the reader has stopped
  };
  /// `out_fd`/`err_fd`: where stream 0/1 go (-1: not shown). Starts the writer thread.
  LiveView(int out_fd, int err_fd, Limits limits);
  LiveView(int out_fd, int err_fd) : LiveView(out_fd, err_fd, Limits{}) {}
  ~LiveView() { Close(); }
  LiveView(const LiveView&) = delete;
  LiveView& operator=(const LiveView&) = delete;

  /// Queues `bytes` for stream 0 (stdout) or 1 (stderr). Waits for room while the reader keeps
  /// reading; skips them (counted) while it is stalled.
  void Show(int stream, std::string_view bytes);
  /// Writes out what is queued (waiting for the reader, like any program writing to a pipe) and
  /// stops the thread. Idempotent.
  void Close();
  /// Bytes skipped so far because the reader was stalled.
  uint64_t skipped_bytes() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Chunk {
    int stream;
    std::string bytes;
  };
  void WriterLoop();
  bool Write(int fd, std::string_view bytes);  ///< false when the reader has gone (EPIPE)
  bool Stalled() const;
  void QueueNotes();  ///< with mu_ held: a note per stream that had bytes skipped

  int fd_[2];
  Limits limits_;
  mutable std::mutex mu_;
  std::condition_variable cv_;  // work queued / room made / closing
  std::deque<Chunk> queue_;
  size_t queued_ = 0;
  bool closing_ = false, dead_[2] = {false, false};
  uint64_t skipped_total_ = 0, skipped_[2] = {0, 0};  ///< skipped_: not yet reported by a note
  std::atomic<int64_t> writing_since_ns_{0};         ///< steady clock, while inside write(); else 0
  std::thread thread_;
};

}  // namespace sparkops
