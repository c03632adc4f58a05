#include "guard/kernel_watch.h"

namespace sparkops::guard {

bool StopsTheJob(const KernelSign& s) { return s.kind == KernelSignKind::kNvrmNoMemory; }

std::optional<KernelSign> GuardStopSign(const KernelSignals& news) {
  for (const KernelSign& s : news.signs)
    if (StopsTheJob(s)) return s;
  if (news.count(KernelSignKind::kNvrmNoMemory) == 0) return std::nullopt;
  KernelSign s;  // counted, but pushed out of the kept signs by a flood of others
  s.kind = KernelSignKind::kNvrmNoMemory;
  s.line = "NVRM: NV_ERR_NO_MEMORY (the record itself was not kept: more than 256 kernel signs in one poll)";
  return s;
}

std::optional<KernelWatch> KernelWatch::Start(const HostFs& fs, std::string* note,
                                              const std::optional<KmsgMark>& from) {
  auto r = KmsgReader::Open(fs);
  if (!r) {
    if (r.error().kind != Error::Kind::kNotFound && note) *note = "kernel log not followed: " + r.error().message;
    return std::nullopt;
  }
  // From a mark: the first Poll reads the ring from its start and keeps what came after the mark.
  if (from) return KernelWatch(std::move(*r), from->last_seq);
  KernelSignals before;  // what the ring holds now happened before the guard: skipped
  if (auto ok = r->Poll(&before); !ok) {
    if (note) *note = "kernel log not followed: " + ok.error().message;
    return std::nullopt;
  }
  return KernelWatch(std::move(*r), before.last_seq);
}

std::optional<KernelSign> KernelWatch::Poll(std::string* note) {
  if (!reader_) return std::nullopt;
  KernelSignals news;
  if (auto ok = reader_->Poll(&news, last_seq_); !ok) {
    if (note) *note = "kernel log no longer followed: " + ok.error().message;
    reader_.reset();
    return std::nullopt;
  }
  if (news.last_seq && (!last_seq_ || *news.last_seq > *last_seq_)) last_seq_ = news.last_seq;
  return GuardStopSign(news);
}

}  // namespace sparkops::guard
