// The exporter's request head parser (exporter/http_request.h): any bytes give NeedMore, Complete
// or Reject; a complete head lies inside the 8 KiB cap and inside the input; a reject carries an
// error status; NeedMore only below the cap.
#include "exporter/http_request.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in = AsText(data, size);
  const sparkops::RequestHead h = sparkops::ParseRequestHead(in);
  using S = sparkops::RequestHead::Status;
  switch (h.status) {
    case S::kNeedMore: FUZZ_CHECK(size < sparkops::kMaxRequestHead); break;
    case S::kComplete:
      FUZZ_CHECK(h.consumed > 0 && h.consumed <= size && h.consumed <= sparkops::kMaxRequestHead);
      FUZZ_CHECK(!h.method.empty() && !h.path.empty());
      FUZZ_CHECK(h.method.data() >= in.data() && h.path.data() + h.path.size() <= in.data() + h.consumed);
      break;
    case S::kReject: FUZZ_CHECK(h.reject_status == 400 || h.reject_status == 431); break;
  }
  return 0;
}
