#pragma once
/// Reads the kernel log (/dev/kmsg) under the HostFs root, without ever blocking. On the machine
/// /dev/kmsg is a character device that returns one record per read(), EAGAIN at the end and EPIPE
/// when records were overwritten before they were read (skipped: reading goes on). Under --root a
/// regular file of newline-separated records stands in for it. Reading needs root or
/// kernel.dmesg_restrict=0: otherwise Open() returns an error the caller reports once.
#include <cstdint>
#include <optional>
#include <string>

#include "base/error.h"
#include "host/hostfs.h"
#include "host/kmsg.h"

namespace sparkops {

class KmsgReader {
 public:
  /// Opens /dev/kmsg (O_RDONLY|O_NONBLOCK), positioned at the start of the ring. NotFound when
  /// absent; an Io error naming the reason when not readable (no permission, dmesg_restrict);
  /// an Input error when it is neither a character device nor a regular file.
  static Result<KmsgReader> Open(const HostFs& fs);

  KmsgReader(KmsgReader&& o) noexcept;
  KmsgReader& operator=(KmsgReader&& o) noexcept;
  KmsgReader(const KmsgReader&) = delete;
  KmsgReader& operator=(const KmsgReader&) = delete;
  ~KmsgReader();

  /// Adds every record available now whose sequence number is above `after` (all when absent) to
  /// `out`, then returns. A later call reads only what arrived since. Io error when a read fails
  /// for a reason other than EAGAIN/EPIPE.
  Result<void> Poll(KernelSignals* out, std::optional<uint64_t> after = std::nullopt);

  /// Records that could not be parsed (skipped).
  uint64_t bad_records() const { return bad_; }

 private:
  KmsgReader(int fd, bool device, std::string path) : fd_(fd), device_(device), path_(std::move(path)) {}
  int fd_ = -1;
  bool device_ = false;
  std::string path_;
  uint64_t offset_ = 0;  ///< regular file: bytes consumed so far
  uint64_t bad_ = 0;
};

/// One pass over the ring: every record after `after` (from the start of the ring when absent).
Result<KernelSignals> ReadKernelSignals(const HostFs& fs, std::optional<uint64_t> after = std::nullopt);

/// The sequence number of the last record now in the ring (to follow only what comes next).
Result<std::optional<uint64_t>> KmsgLastSeq(const HostFs& fs);

/// Where following the kernel log starts: every record after `last_seq` counts (every record when
/// absent: the ring was empty). Taken before something starts (`run` takes it before spawning the
/// job), so that a record logged in the job's first milliseconds is not mistaken for history.
struct KmsgMark {
  std::optional<uint64_t> last_seq;
};

/// The mark now (KmsgLastSeq); errors as KmsgReader::Open.
Result<KmsgMark> KmsgMarkNow(const HostFs& fs);

}  // namespace sparkops
