#include "telemetry/line_splitter.h"

namespace sparkops {

void LineSplitter::Feed(std::string_view bytes, const std::function<void(std::string_view)>& emit) {
  for (char ch : bytes) {
    if (pending_cr_) {
      pending_cr_ = false;
      if (ch == '\n') continue;  // "\r\n": the record was already emitted at '\r'
    }
    if (ch == '\n' || ch == '\r') {
      emit(partial_);
      partial_.clear();
      pending_cr_ = ch == '\r';
      continue;
    }
    partial_.push_back(ch);
    if (partial_.size() >= max_line_) {
      emit(partial_);
      partial_.clear();
    }
  }
}

void LineSplitter::Finish(const std::function<void(std::string_view)>& emit) {
  if (!partial_.empty()) emit(partial_);
  partial_.clear();
  pending_cr_ = false;
}

}  // namespace sparkops
