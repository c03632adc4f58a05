#include "host/kmsg_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace sparkops {

namespace {

constexpr std::string_view kKmsgPath = "/dev/kmsg";
constexpr size_t kMaxFileBytes = 16u << 20;  ///< at most this much of a stand-in file per poll
constexpr size_t kRecordBuf = 16384;          ///< larger than any record the kernel returns
constexpr size_t kMaxReadsPerPoll = 1u << 20;  ///< records read by one poll of the device at most

void AddRecord(std::string_view text, KernelSignals* out, std::optional<uint64_t> after, uint64_t* bad) {
  auto r = ParseKmsgRecord(text);
  if (!r) {
    ++*bad;
    return;
  }
  if (after && r->seq <= *after) return;
  out->Add(*r);
}

}  // namespace

Result<KmsgReader> KmsgReader::Open(const HostFs& fs) {
  std::string path = fs.Path(kKmsgPath);
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT) return NotFound(path + ": not present");
    if (e == EPERM || e == EACCES)
      return IoError(path + ": not readable (" + std::strerror(e) +
                     "; reading the kernel log needs root or kernel.dmesg_restrict=0)");
    return IoError(path + ": " + std::strerror(e));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISREG(st.st_mode))) {
    ::close(fd);
    return InputError(path + ": neither the kernel log device nor a regular file");
  }
  return KmsgReader(fd, S_ISCHR(st.st_mode), path);
}

KmsgReader::KmsgReader(KmsgReader&& o) noexcept
    : fd_(o.fd_), device_(o.device_), path_(std::move(o.path_)), offset_(o.offset_), bad_(o.bad_) {
  o.fd_ = -1;
}

KmsgReader& KmsgReader::operator=(KmsgReader&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    device_ = o.device_;
    path_ = std::move(o.path_);
    offset_ = o.offset_;
    bad_ = o.bad_;
    o.fd_ = -1;
  }
  return *this;
}

KmsgReader::~KmsgReader() {
  if (fd_ >= 0) ::close(fd_);
}

Result<void> KmsgReader::Poll(KernelSignals* out, std::optional<uint64_t> after) {
  if (fd_ < 0) return IoError(path_ + ": not open");
  if (device_) {
    char buf[kRecordBuf];
    // Bounded: a kernel logging faster than we read cannot keep one poll going forever.
    for (size_t reads = 0; reads < kMaxReadsPerPoll; ++reads) {
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n > 0) {
        AddRecord(std::string_view(buf, static_cast<size_t>(n)), out, after, &bad_);
        continue;
      }
      if (n == 0) return {};
      if (errno == EINTR || errno == EPIPE) continue;  // EPIPE: records overwritten; the next read goes on
      if (errno == EAGAIN) return {};
      return IoError(path_ + ": read: " + std::strerror(errno));
    }
    return {};  // the rest on the next poll
  }
  // A regular file: read what was appended since the last poll, up to its last complete line.
  std::string text;
  char buf[65536];
  for (;;) {
    size_t want = std::min(sizeof buf, kMaxFileBytes - text.size());
    if (want == 0) break;
    ssize_t n = ::pread(fd_, buf, want, static_cast<off_t>(offset_ + text.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError(path_ + ": read: " + std::strerror(errno));
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  size_t end = text.rfind('\n');
  if (end == std::string::npos) return {};
  size_t bad = 0;
  for (const auto& r : ParseKmsgText(std::string_view(text).substr(0, end + 1), &bad)) {
    if (!after || r.seq > *after) out->Add(r);
  }
  bad_ += bad;
  offset_ += end + 1;
  return {};
}

Result<KernelSignals> ReadKernelSignals(const HostFs& fs, std::optional<uint64_t> after) {
  auto reader = KmsgReader::Open(fs);
  if (!reader) return std::unexpected(reader.error());
  KernelSignals out;
  if (auto ok = reader->Poll(&out, after); !ok) return std::unexpected(ok.error());
  return out;
}

Result<std::optional<uint64_t>> KmsgLastSeq(const HostFs& fs) {
  auto s = ReadKernelSignals(fs);
  if (!s) return std::unexpected(s.error());
  return s->last_seq;
}

Result<KmsgMark> KmsgMarkNow(const HostFs& fs) {
  auto s = KmsgLastSeq(fs);
  if (!s) return std::unexpected(s.error());
  return KmsgMark{*s};
}

}  // namespace sparkops
